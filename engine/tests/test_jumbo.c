/* Jumbo frames: a 9018-byte frame (MTU 9000) is built and parsed whole, and each I/O backend's
 * stated limit (io_ops.max_frame) and the port's MTU decide which sizes a run may send. */
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "frame.h"
#include "io.h"

static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

static void test_jumbo_frame(void)
{
	static struct frame_tmpl t;
	static uint8_t f[FRAME_MAX + 16];
	struct frame_addrs a = {.smac = {2, 0, 0, 0, 0, 1}, .dmac = {2, 0, 0, 0, 0, 2},
				.sip = 0xc6120001u, .dip = 0xc6120002u, .sport = 1024, .dport = 4000};
	frame_tmpl_init(&t, &a, 3, 1, FLOW_SPORT);
	CHECK_EQ(FRAME_MAX, 9018);
	memset(f, 0xaa, sizeof(f));
	unsigned n = frame_write_l2(&t, f, 9018, 0, 77, 1234);
	CHECK_EQ(n, 9014);
	CHECK_EQ(f[n], 0xaa);
	CHECK_EQ(be16(f + ETH_HDR_LEN + 2), 9000);                      /* IPv4 total length: the MTU */
	CHECK_EQ(be16(f + ETH_HDR_LEN + IP4_HDR_LEN + 4), 9000 - IP4_HDR_LEN); /* UDP length */
	struct sig s;
	CHECK_EQ(frame_parse_l2(f, n, &s), PARSE_OK);
	CHECK(s.seq == 77 && s.stream == 3);
	CHECK_EQ(frame_parse_l2(f, n - 1, &s), PARSE_MALFORMED); /* a truncated jumbo is not taken */
}

static void test_size_limits(void)
{
	char msg[320];
	uint16_t jumbo[] = {64, 9018}, std[] = {64, 1518};
	struct size_seq sj = {.sizes = jumbo, .n = 2, .mean = 4541}, ss = {.sizes = std, .n = 2, .mean = 791};
	const struct io_ops *afp = io_find("afpacket");
	CHECK(afp && afp->max_frame == 9018);
	CHECK_EQ(io_size_check(afp, &sj, "vsbA", 9000, msg, sizeof(msg)), 0);
	CHECK_EQ(io_size_check(afp, &ss, "vsbA", 1500, msg, sizeof(msg)), 0);
	CHECK_EQ(io_size_check(afp, &ss, "vsbA", 1400, msg, sizeof(msg)), 0); /* as before: not checked */
	CHECK_EQ(io_size_check(afp, &sj, "vsbA", 1500, msg, sizeof(msg)), -1);
	CHECK(strstr(msg, "--size 9018") && strstr(msg, "MTU 1500") && strstr(msg, "up to 1518 B") &&
	      strstr(msg, "ip link set vsbA mtu 9000"));
	for (unsigned i = 0; io_backends[i]; i++) {
		const struct io_ops *o = io_backends[i];
		CHECK(o->max_frame >= FRAME_STD_MAX && o->max_frame <= FRAME_MAX);
		if (o->max_frame >= 9018)
			continue;
		CHECK_EQ(io_size_check(o, &ss, "vsbA", 9000, msg, sizeof(msg)), 0);
		CHECK_EQ(io_size_check(o, &sj, "vsbA", 9000, msg, sizeof(msg)), -1);
		char want[128];
		snprintf(want, sizeof(want), "--io %s carries frames up to %u B; use --io afpacket for "
			 "frames above %u B", o->name, o->max_frame, o->max_frame);
		CHECK(strstr(msg, "--size 9018") && strstr(msg, want));
	}
}

int main(void)
{
	test_jumbo_frame();
	test_size_limits();
	return check_exit("test_jumbo");
}
