/* afxdp_harness: standalone check of the AF_XDP backend (io_afxdp.c) used by test_afxdp.sh.
 *
 *   afxdp_harness tx --netns NS --if IF [--count N | --seconds S] [--rate PPS] [--cpu C]
 *                    [--dst-mac MAC] [--src-mac MAC] [--batch B] [--xdp-mode auto|native|generic]
 *                    [--zerocopy]
 *   afxdp_harness rx --netns NS --if IF [--expect N] [--seconds S] [--idle S] [--cpu C] [--busy]
 *                    [--xdp-mode M] [--zerocopy]
 *
 * tx sends 60-byte Ethernet/IPv4/UDP frames (198.18.0.1:1024 -> 198.18.0.2:4000) whose payload
 * starts with "VSBT" and a big-endian sequence number; rx counts them (unique, dup, foreign).
 * Results are key=value lines on stdout. Links only io_afxdp.c and libxdp/libbpf: vsb_fail() and
 * vsb_stop are weak stand-ins here, so linking the engine's common.c does not clash. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/libbpf.h>

#include "io.h"
#include "io_afxdp.h"

__attribute__((weak)) volatile int vsb_stop;

__attribute__((weak)) int vsb_fail(struct vsb_error *e, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	e->code = code;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

#define MAX_SEQ (1u << 24)

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; vsb_stop = 1; }

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "afxdp_harness: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void parse_mac(const char *s, uint8_t *m)
{
	unsigned v[6];
	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
		die("bad MAC %s", s);
	for (int i = 0; i < 6; i++)
		m[i] = (uint8_t)v[i];
}

static void build_frame(uint8_t *f, const uint8_t *dmac, const uint8_t *smac)
{
	static const uint8_t ip_udp[28] = {
		0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 17, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2, /* IPv4 */
		0x04, 0x00, 0x0f, 0xa0, 0, 26, 0, 0,                                      /* UDP, no csum */
	};
	memset(f, 0, 60);
	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x08;
	memcpy(f + 14, ip_udp, sizeof(ip_udp));
	uint32_t sum = 0;
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)f[14 + i] << 8 | f[15 + i];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	f[24] = (uint8_t)(~sum >> 8);
	f[25] = (uint8_t)~sum;
	memcpy(f + 42, "VSBT", 4);
}

static void enter_netns(const char *ns)
{
	char path[256];
	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET) != 0)
		die("enter namespace %s: %s", path, strerror(errno));
	close(fd);
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		die("pin to CPU %d: %s", cpu, strerror(errno));
}

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "tx") && strcmp(argv[1], "rx")))
		die("usage: afxdp_harness tx|rx --netns NS --if IF [options] (see the source)");
	int is_tx = !strcmp(argv[1], "tx");
	const char *ns = NULL, *ifname = NULL;
	uint64_t count = 0, expect = 0;
	double seconds = 0, rate = 0, idle = 2;
	int cpu = -1, busy = 0, xdp_mode = 0, zerocopy = 0;
	unsigned batch = 64;
	uint8_t dmac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, smac[6] = { 0x02, 0, 0, 0, 0, 1 };
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--busy")) { busy = 1; continue; }
		if (!strcmp(a, "--zerocopy")) { zerocopy = 1; continue; }
		if (!v)
			die("%s needs a value", a);
		i++;
		if (!strcmp(a, "--netns")) ns = v;
		else if (!strcmp(a, "--if")) ifname = v;
		else if (!strcmp(a, "--count")) count = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--expect")) expect = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--seconds")) seconds = atof(v);
		else if (!strcmp(a, "--idle")) idle = atof(v);
		else if (!strcmp(a, "--rate")) rate = atof(v);
		else if (!strcmp(a, "--cpu")) cpu = atoi(v);
		else if (!strcmp(a, "--batch")) batch = (unsigned)atoi(v);
		else if (!strcmp(a, "--dst-mac")) parse_mac(v, dmac);
		else if (!strcmp(a, "--src-mac")) parse_mac(v, smac);
		else if (!strcmp(a, "--xdp-mode"))
			xdp_mode = !strcmp(v, "native") ? 1 : !strcmp(v, "generic") ? 2 : 0;
		else die("unknown option %s", a);
	}
	if (!ifname)
		die("--if is required");
	if (batch < 1 || batch > IO_MAX_BATCH)
		die("--batch must be 1..%d", IO_MAX_BATCH);
	if (is_tx && !count && seconds <= 0)
		seconds = 2;
	if (count > MAX_SEQ)
		die("--count at most %u", MAX_SEQ);
	if (ns)
		enter_netns(ns);
	if (cpu >= 0)
		pin(cpu);
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	const struct io_ops *io = &io_afxdp_ops;
	struct vsb_error e = { 0 };
	if (io->available(&e))
		die("%s", e.msg);
	struct io_config cfg = { .ifname = ifname, .want_tx = is_tx, .want_rx = !is_tx, .batch = batch,
				 .busy_poll = busy, .xdp_mode = xdp_mode, .zerocopy = zerocopy };
	struct io_port *p;
	if (io->open(&cfg, &p, &e))
		die("%s", e.msg);
	uint32_t prog_id = 0;
	bpf_xdp_query_id((int)if_nametoindex(ifname), 0, &prog_id);
	printf("ready mode=%s prog=%s bind=%s xdp_prog_id=%u\n", io_afxdp_mode_used(p),
	       io_afxdp_prog_used(p), io_afxdp_bind_used(p), prog_id);
	fflush(stdout);

	struct io_buf b[IO_MAX_BATCH];
	struct io_port_stats st;
	if (is_tx) {
		uint8_t tmpl[60];
		build_frame(tmpl, dmac, smac);
		uint64_t sent = 0;
		double t0 = now_s(), t = t0, end = t0 + seconds;
		while (!stop && (count ? sent < count : t < end)) {
			unsigned want = batch;
			if (count && count - sent < want)
				want = (unsigned)(count - sent);
			if (rate > 0) { /* pace: never ahead of sent/rate */
				while (!stop && (t = now_s()) < t0 + sent / rate)
					;
				uint64_t due = (uint64_t)((t - t0) * rate) + 1;
				if (due - sent < want)
					want = (unsigned)(due - sent);
			}
			unsigned n = io->tx_get(p, b, want);
			for (unsigned i = 0; i < n; i++) {
				uint32_t seq = (uint32_t)(sent + i);
				memcpy(b[i].data, tmpl, sizeof(tmpl));
				b[i].data[46] = (uint8_t)(seq >> 24);
				b[i].data[47] = (uint8_t)(seq >> 16);
				b[i].data[48] = (uint8_t)(seq >> 8);
				b[i].data[49] = (uint8_t)seq;
				b[i].len = sizeof(tmpl);
			}
			if (n)
				sent += io->tx_put(p, b, n);
			t = now_s();
		}
		double el = now_s() - t0;
		io->tx_flush(p);
		io->stats(p, &st);
		printf("tx_frames=%llu seconds=%.3f kpps=%.1f tx_errors=%llu tx_ring_empty=%llu\n",
		       (unsigned long long)sent, el, el > 0 ? sent / el / 1e3 : 0.0,
		       (unsigned long long)st.tx_errors, (unsigned long long)st.tx_ring_empty);
	} else {
		uint8_t *seen = calloc(MAX_SEQ / 8, 1);
		if (!seen)
			die("out of memory");
		uint64_t frames = 0, uniq = 0, dup = 0, foreign = 0;
		double t0 = now_s(), last = t0, first = 0;
		while (!stop && (!expect || uniq < expect)) {
			unsigned n = io->rx_get(p, b, batch, 100000);
			double t = now_s();
			for (unsigned i = 0; i < n; i++) {
				const uint8_t *f = b[i].data;
				if (b[i].len < 50 || memcmp(f + 42, "VSBT", 4)) {
					foreign++;
					continue;
				}
				uint32_t seq = (uint32_t)f[46] << 24 | f[47] << 16 | f[48] << 8 | f[49];
				frames++;
				if (seq >= MAX_SEQ || (seen[seq / 8] & (1u << (seq % 8)))) {
					dup++;
				} else {
					seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
					uniq++;
				}
			}
			if (n) {
				io->rx_put(p, b, n);
				if (!first)
					first = t;
				last = t;
			}
			if ((seconds > 0 && t - t0 > seconds) || (first && idle > 0 && t - last > idle))
				break;
		}
		io->stats(p, &st);
		printf("rx_frames=%llu unique=%llu dup=%llu foreign=%llu rx_dropped=%llu rx_ring_full=%llu\n",
		       (unsigned long long)frames, (unsigned long long)uniq, (unsigned long long)dup,
		       (unsigned long long)foreign, (unsigned long long)st.rx_dropped,
		       (unsigned long long)st.rx_ring_full);
		free(seen);
	}
	io->close(p);
	fflush(stdout);
	return stop ? 130 : 0;
}
