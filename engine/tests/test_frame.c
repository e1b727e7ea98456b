/* Unit tests: frame template/writer, parser, checksums, swap, size specs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frame.h"
#include "check.h"

static unsigned be16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }
static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* independent, naive RFC 1071 reference */
static uint16_t ref_csum(const uint8_t *p, size_t n, uint32_t pre)
{
	uint64_t s = pre;
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (unsigned)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (unsigned)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* verify IPv4 header and UDP checksums of an untagged frame with a 20-byte IP header */
static int ref_valid(const uint8_t *f, size_t len)
{
	const uint8_t *ip = f + 14;
	if (ref_csum(ip, 20, 0) != 0)
		return 0;
	unsigned ulen = be16(ip + 20 + 4);
	uint32_t pseudo = be16(ip + 12) + be16(ip + 14) + be16(ip + 16) + be16(ip + 18) + 17 + ulen;
	if (34 + ulen > len)
		return 0;
	if (be16(ip + 26) == 0)
		return 0; /* the engine always fills it */
	return ref_csum(ip + 20, ulen, pseudo) == 0;
}

static const struct frame_addrs addrs = {
	.smac = { 0x02, 0x00, 0x00, 0xff, 0xff, 0xfe },
	.dmac = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 },
	.sip = 0xc6120001, /* 198.18.0.1 */
	.dip = 0xc6130001, /* 198.19.0.1 */
	.sport = 1024,
	.dport = 4000,
};

static void test_csum(void)
{
	/* RFC 1071 section 3 example: sum ddf2, checksum 220d */
	const uint8_t ex[8] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	CHECK_EQ(csum_partial(ex, 8, 0), 0xddf2);
	CHECK_EQ(csum_fold(csum_partial(ex, 8, 0)), 0x220d);
	/* a known IPv4 header (checksum b861) */
	uint8_t ip[20] = { 0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
			   0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7 };
	CHECK_EQ(csum_fold(csum_partial(ip, 20, 0)), 0xb861);
	ip[10] = 0xb8;
	ip[11] = 0x61;
	CHECK_EQ(csum_fold(csum_partial(ip, 20, 0)), 0);
	/* odd length: last byte is the high byte */
	const uint8_t odd[3] = { 1, 2, 3 };
	CHECK_EQ(csum_partial(odd, 3, 0), 0x0402);
	/* against the reference at every length and alignment, and chained */
	uint8_t buf[300];
	srand(1);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rand();
	for (size_t off = 0; off < 4; off++)
		for (size_t n = 0; n + off <= 290; n++) {
			CHECK_EQ(csum_fold(csum_partial(buf + off, n, 0)), ref_csum(buf + off, n, 0));
			size_t h = (n / 2) & ~(size_t)1;
			uint32_t s = csum_partial(buf + off, h, 0);
			CHECK_EQ(csum_fold(csum_partial(buf + off + h, n - h, s)), ref_csum(buf + off, n, 0));
		}
	memset(buf, 0xff, sizeof(buf));
	CHECK_EQ(csum_fold(csum_partial(buf, 290, 0)), ref_csum(buf, 290, 0));
}

static void test_write_parse(void)
{
	static struct frame_tmpl t;
	uint8_t f[FRAME_MAX + 64];
	frame_tmpl_init(&t, &addrs, 7, 1, FLOW_SPORT);
	t.epoch = 3;
	for (unsigned size = FRAME_MIN; size <= FRAME_MAX; size++) {
		memset(f, 0xaa, sizeof(f));
		uint32_t seq = size * 2654435761u;
		uint64_t tsc = 0x0123456789abcdefull + size;
		unsigned n = frame_write_l2(&t, f, size, 0, seq, tsc);
		CHECK_EQ(n, size - 4);
		CHECK_EQ(f[n], 0xaa); /* nothing written beyond */
		CHECK(memcmp(f, addrs.dmac, 6) == 0 && memcmp(f + 6, addrs.smac, 6) == 0);
		CHECK_EQ(be16(f + 12), 0x0800);
		CHECK_EQ(f[14], 0x45);
		CHECK_EQ(be16(f + 16), n - 14);
		CHECK_EQ(be16(f + 18), 0);      /* id */
		CHECK_EQ(be16(f + 20), 0x4000); /* DF */
		CHECK_EQ(f[22], 64);
		CHECK_EQ(f[23], 17);
		CHECK_EQ(be32(f + 26), addrs.sip);
		CHECK_EQ(be32(f + 30), addrs.dip);
		CHECK_EQ(be16(f + 34), 1024);
		CHECK_EQ(be16(f + 36), 4000);
		CHECK_EQ(be16(f + 38), n - 34);
		CHECK(memcmp(f + 42, "VSB", 3) == 0);
		for (unsigned i = 42 + SIG_LEN; i < n; i++)
			if (f[i]) {
				CHECK_EQ(f[i], 0);
				break;
			}
		CHECK(ref_valid(f, n));
		struct sig s;
		memset(&s, 0, sizeof(s));
		CHECK_EQ(frame_parse_l2(f, n, &s), PARSE_OK);
		CHECK_EQ(s.epoch, 3);
		CHECK_EQ(s.stream, 7);
		CHECK_EQ(s.seq, seq);
		CHECK_EQ(s.tx_tsc, tsc);
		/* padded beyond the IP total length: still OK */
		CHECK_EQ(frame_parse_l2(f, n + 20, &s), PARSE_OK);
		/* payload-only writer */
		uint8_t pl[FRAME_MAX];
		unsigned pn = frame_write_payload(&t, pl, size, seq, tsc);
		CHECK_EQ(pn, size - 46);
		CHECK(memcmp(pl, f + 42, pn) == 0);
		memset(&s, 0, sizeof(s));
		CHECK_EQ(frame_parse_payload(pl, pn, &s), PARSE_OK);
		CHECK_EQ(s.seq, seq);
		CHECK_EQ(s.tx_tsc, tsc);
		CHECK_EQ(s.stream, 7);
		CHECK_EQ(frame_parse_payload(pl, SIG_LEN - 1, &s), PARSE_FOREIGN);
	}
	/* checksum value 0 is sent as ffff: search seqs until the computed checksum would be 0 */
	int seen_ffff = 0;
	for (uint32_t seq = 0; seq < 200000 && !seen_ffff; seq++) {
		unsigned n = frame_write_l2(&t, f, 64, 0, seq, 0);
		if (be16(f + 40) == 0xffff) {
			seen_ffff = 1;
			CHECK(ref_valid(f, n));
			CHECK_EQ(frame_parse_l2(f, n, NULL), PARSE_OK);
		}
		CHECK(be16(f + 40) != 0);
	}
	CHECK(seen_ffff);
}

static void test_flows(void)
{
	static struct frame_tmpl t;
	uint8_t f[FRAME_MAX], base[FRAME_MAX];
	const enum flow_field fields[] = { FLOW_SPORT, FLOW_SIP, FLOW_SMAC, FLOW_DPORT, FLOW_SMAC_SIP,
					   FLOW_DIP };
	for (unsigned k = 0; k < 6; k++) {
		frame_tmpl_init(&t, &addrs, 1, 100000, fields[k]);
		unsigned n = frame_write_l2(&t, base, 128, 0, 5, 9);
		for (uint32_t flow = 0; flow < 100000; flow += (flow < 300 ? 1 : 997)) {
			unsigned m = frame_write_l2(&t, f, 128, flow, 5, 9);
			CHECK_EQ(m, n);
			CHECK(ref_valid(f, m));
			CHECK_EQ(frame_parse_l2(f, m, NULL), PARSE_OK);
			switch (fields[k]) {
			case FLOW_SPORT:
				CHECK_EQ(be16(f + 34), (1024 + flow) & 0xffff);
				CHECK(memcmp(f, base, 34) == 0);
				CHECK_EQ(be16(f + 36), 4000);
				break;
			case FLOW_DPORT:
				CHECK_EQ(be16(f + 36), (4000 + flow) & 0xffff);
				CHECK_EQ(be16(f + 34), 1024);
				CHECK(memcmp(f, base, 34) == 0);
				break;
			case FLOW_DIP:
				CHECK_EQ(be32(f + 30), addrs.dip + flow);
				CHECK_EQ(be32(f + 26), addrs.sip);
				CHECK(memcmp(f, base, 24) == 0);
				CHECK(memcmp(f + 34, base + 34, 6) == 0);
				break;
			case FLOW_SIP:
				CHECK_EQ(be32(f + 26), addrs.sip + flow);
				CHECK(memcmp(f, base, 24) == 0);
				CHECK(memcmp(f + 30, base + 30, 10) == 0);
				break;
			case FLOW_SMAC: {
				uint32_t low = (0xfffffeu + flow) & 0xffffff;
				CHECK_EQ(f[9], low >> 16);
				CHECK_EQ(f[10], (low >> 8) & 0xff);
				CHECK_EQ(f[11], low & 0xff);
				CHECK(memcmp(f, base, 9) == 0); /* first 3 bytes of the source MAC untouched */
				CHECK(memcmp(f + 12, base + 12, m - 12) == 0);
				break;
			}
			case FLOW_SMAC_SIP: {
				/* both vary by the same flow index; the rest is the base frame */
				uint32_t low = (0xfffffeu + flow) & 0xffffff;
				CHECK_EQ((unsigned)f[9] << 16 | (unsigned)f[10] << 8 | f[11], low);
				CHECK_EQ(be32(f + 26), addrs.sip + flow);
				CHECK(memcmp(f, base, 9) == 0);
				CHECK(memcmp(f + 12, base + 12, 12) == 0);
				CHECK(memcmp(f + 30, base + 30, 10) == 0);
				break;
			}
			}
			if (fields[k] != FLOW_SMAC && fields[k] != FLOW_SMAC_SIP)
				CHECK(memcmp(f, base, 12) == 0);
		}
	}
}

/* varied source addresses stay inside 198.18.0.0/15 */
static void test_flow_range(void)
{
	char msg[256] = "";
	const uint32_t tester = 0xc6120101; /* 198.18.1.1, the p2p tester's first port */
	CHECK_EQ(frame_flow_range_check(tester, 100000, FLOW_SMAC_SIP, msg, sizeof(msg)), 0);
	CHECK_EQ(frame_flow_range_check(tester, 100000, FLOW_SIP, msg, sizeof(msg)), 0);
	/* destinations: 198.19.0.0 + 65,536 flows ends at 198.19.255.255; one more leaves the range */
	CHECK_EQ(frame_flow_range_check(0xc6130000, 65536, FLOW_DIP, msg, sizeof(msg)), 0);
	CHECK_EQ(frame_flow_range_check(0xc6130000, 65537, FLOW_DIP, msg, sizeof(msg)), -1);
	CHECK(strstr(msg, "destination") != NULL);
	/* the last usable count from 198.18.1.1 ends at 198.19.255.255 */
	CHECK_EQ(frame_flow_range_check(tester, 0xc613ffffu - tester + 1, FLOW_SIP, msg, sizeof(msg)), 0);
	CHECK_EQ(frame_flow_range_check(tester, 0xc613ffffu - tester + 2, FLOW_SIP, msg, sizeof(msg)), -1);
	CHECK(strstr(msg, "198.18.1.1..198.20.0.0") != NULL);
	CHECK(strstr(msg, "outside 198.18.0.0/15") != NULL);
	/* fields that leave the address alone, and a single flow, are never refused */
	CHECK_EQ(frame_flow_range_check(0x0a000001, 1u << 24, FLOW_SPORT, msg, sizeof(msg)), 0);
	CHECK_EQ(frame_flow_range_check(0x0a000001, 1u << 24, FLOW_SMAC, msg, sizeof(msg)), 0);
	CHECK_EQ(frame_flow_range_check(0x0a000001, 1, FLOW_SMAC_SIP, msg, sizeof(msg)), 0);
	/* a base outside the range: refused as soon as it varies */
	CHECK_EQ(frame_flow_range_check(0x0a000001, 2, FLOW_SMAC_SIP, NULL, 0), -1);
	CHECK_EQ(frame_flow_range_check(0xc611ffffu, 2, FLOW_SIP, NULL, 0), -1);
	CHECK_EQ(frame_flow_range_check(0xc613ffffu, 1u << 24, FLOW_SIP, NULL, 0), -1);
}

/* recompute both checksums of an untagged or tagged frame with IP header at l3 */
static void fix_csums(uint8_t *f, size_t l3)
{
	uint8_t *ip = f + l3;
	unsigned hl = (ip[0] & 15) * 4;
	ip[10] = ip[11] = 0;
	uint16_t c = ref_csum(ip, hl, 0);
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
	uint8_t *u = ip + hl;
	unsigned ulen = be16(u + 4);
	u[6] = u[7] = 0;
	c = ref_csum(u, ulen, be16(ip + 12) + be16(ip + 14) + be16(ip + 16) + be16(ip + 18) + 17 + ulen);
	if (!c)
		c = 0xffff;
	u[6] = (uint8_t)(c >> 8);
	u[7] = (uint8_t)c;
}

static void test_truncation_and_variants(void)
{
	static struct frame_tmpl t;
	uint8_t f[FRAME_MAX + 16], g[FRAME_MAX + 16];
	frame_tmpl_init(&t, &addrs, 2, 1, FLOW_SPORT);
	const unsigned sizes[] = { 64, 65, 100, 1518 };
	for (unsigned k = 0; k < 4; k++) {
		unsigned n = frame_write_l2(&t, f, sizes[k], 0, 42, 43);
		/* VLAN-tagged copy */
		memcpy(g, f, 12);
		g[12] = 0x81; g[13] = 0x00; g[14] = 0x20; g[15] = 0x05;
		memcpy(g + 16, f + 12, n - 12);
		struct sig s;
		CHECK_EQ(frame_parse_l2(g, n + 4, &s), PARSE_OK);
		CHECK_EQ(s.seq, 42);
		for (unsigned len = 0; len < n; len++) {
			/* heap copy of exactly len bytes so ASan would catch an overread */
			uint8_t *c = malloc(len ? len : 1);
			memcpy(c, f, len);
			enum parse_result r = frame_parse_l2(c, len, &s);
			CHECK(r == PARSE_MALFORMED || r == PARSE_FOREIGN);
			CHECK(frame_parse_l2(c, len, NULL) == r);
			uint8_t *d = malloc(len + 4);
			memcpy(d, g, len + 4);
			r = frame_parse_l2(d, len + 4, &s);
			CHECK(r == PARSE_MALFORMED || r == PARSE_FOREIGN);
			if (len < 60)
				frame_swap_l2(c, len);
			free(c);
			free(d);
		}
		/* single bit flips beyond the Ethernet header never give OK (checksums), except a flip
		 * that turns the UDP checksum into 0 (= not computed) */
		for (unsigned i = 14; i < n && i < 80; i++)
			for (int b = 0; b < 8; b++) {
				memcpy(g, f, n);
				g[i] ^= (uint8_t)(1 << b);
				enum parse_result r = frame_parse_l2(g, n, &s);
				if (r == PARSE_OK)
					CHECK(i >= 40 && i <= 41 && be16(g + 40) == 0);
			}
	}
	unsigned n = frame_write_l2(&t, f, 100, 0, 42, 43);
	struct sig s;
	/* UDP checksum 0 = not computed: accepted */
	memcpy(g, f, n);
	g[40] = g[41] = 0;
	CHECK_EQ(frame_parse_l2(g, n, &s), PARSE_OK);
	/* wrong UDP checksum / IP checksum: malformed */
	memcpy(g, f, n);
	g[41] ^= 1;
	CHECK_EQ(frame_parse_l2(g, n, &s), PARSE_MALFORMED);
	memcpy(g, f, n);
	g[25] ^= 1;
	CHECK_EQ(frame_parse_l2(g, n, &s), PARSE_MALFORMED);
	/* other ethertype (ARP), QinQ: foreign */
	memcpy(g, f, n);
	g[12] = 0x08; g[13] = 0x06;
	CHECK_EQ(frame_parse_l2(g, n, &s), PARSE_FOREIGN);
	CHECK_EQ(frame_swap_l2(g, n), -1);
	CHECK(memcmp(g + 14, f + 14, n - 14) == 0 && memcmp(g, f, 12) == 0);
	g[12] = 0x88; g[13] = 0xa8;
	CHECK_EQ(frame_parse_l2(g, n, &s), PARSE_FOREIGN);
	/* TCP: foreign */
	memcpy(g, f, n);
	g[23] = 6;
	fix_csums(g, 14);
	CHECK_EQ(frame_parse_l2(g, n, &s), PARSE_FOREIGN);
	CHECK_EQ(frame_swap_l2(g, n), -1);
	/* fragments: foreign */
	memcpy(g, f, n);
	g[20] = 0x20; /* MF */
	fix_csums(g, 14);
	CHECK_EQ(frame_parse_l2(g, n, &s), PARSE_FOREIGN);
	memcpy(g, f, n);
	g[21] = 0x10; /* offset */
	fix_csums(g, 14);
	CHECK_EQ(frame_parse_l2(g, n, &s), PARSE_FOREIGN);
	/* no magic: foreign */
	memcpy(g, f, n);
	g[42] = 'X';
	fix_csums(g, 14);
	CHECK_EQ(frame_parse_l2(g, n, &s), PARSE_FOREIGN);
	/* UDP payload shorter than the signature: foreign (IP/UDP lengths shrunk, frame padded) */
	memcpy(g, f, n);
	g[16] = 0; g[17] = 20 + 8 + 17;
	g[38] = 0; g[39] = 8 + 17;
	fix_csums(g, 14);
	CHECK_EQ(frame_parse_l2(g, n, &s), PARSE_FOREIGN);
	/* UDP length larger than the IP payload, IP total length beyond the buffer, IHL < 5,
	 * version 6: malformed */
	memcpy(g, f, n);
	g[39] += 1;
	fix_csums(g, 14);
	CHECK_EQ(frame_parse_l2(g, n, &s), PARSE_MALFORMED);
	memcpy(g, f, n);
	g[17] += 1;
	fix_csums(g, 14);
	CHECK_EQ(frame_parse_l2(g, n, &s), PARSE_MALFORMED);
	memcpy(g, f, n);
	g[14] = 0x44;
	CHECK_EQ(frame_parse_l2(g, n, &s), PARSE_MALFORMED);
	memcpy(g, f, n);
	g[14] = 0x65;
	CHECK_EQ(frame_parse_l2(g, n, &s), PARSE_MALFORMED);
	/* IPv4 options (IHL 6, 4 NOPs) */
	memcpy(g, f, 34);
	g[34] = g[35] = g[36] = g[37] = 1;
	memcpy(g + 38, f + 34, n - 34);
	g[14] = 0x46;
	g[17] += 4;
	fix_csums(g, 14);
	CHECK_EQ(frame_parse_l2(g, n + 4, &s), PARSE_OK);
	CHECK_EQ(s.seq, 42);
	for (unsigned len = 0; len < n + 4; len++)
		CHECK(frame_parse_l2(g, len, &s) != PARSE_OK);
	uint8_t h[FRAME_MAX + 16];
	memcpy(h, g, n + 4);
	CHECK_EQ(frame_swap_l2(h, n + 4), 0);
	CHECK_EQ(be16(h + 38), 4000);
	CHECK_EQ(be16(h + 40), 1024);
	CHECK_EQ(frame_parse_l2(h, n + 4, &s), PARSE_OK);
}

static void test_swap(void)
{
	static struct frame_tmpl t;
	uint8_t f[FRAME_MAX], g[FRAME_MAX + 4];
	frame_tmpl_init(&t, &addrs, 2, 1, FLOW_SPORT);
	for (unsigned size = 64; size <= 1518; size += 37) {
		unsigned n = frame_write_l2(&t, f, size, 0, size, size);
		memcpy(g, f, n);
		CHECK_EQ(frame_swap_l2(g, n), 0);
		CHECK(memcmp(g, f + 6, 6) == 0 && memcmp(g + 6, f, 6) == 0);
		CHECK_EQ(be32(g + 26), addrs.dip);
		CHECK_EQ(be32(g + 30), addrs.sip);
		CHECK_EQ(be16(g + 34), 4000);
		CHECK_EQ(be16(g + 36), 1024);
		CHECK(ref_valid(g, n));
		CHECK_EQ(frame_parse_l2(g, n, NULL), PARSE_OK);
		CHECK_EQ(frame_swap_l2(g, n), 0);
		CHECK(memcmp(f, g, n) == 0);
		/* tagged */
		memcpy(g, f, 12);
		g[12] = 0x81; g[13] = 0; g[14] = 0; g[15] = 9;
		memcpy(g + 16, f + 12, n - 12);
		CHECK_EQ(frame_swap_l2(g, n + 4), 0);
		CHECK_EQ(be16(g + 38), 4000);
		CHECK_EQ(frame_parse_l2(g, n + 4, NULL), PARSE_OK);
	}
	CHECK_EQ(frame_swap_l2(f, 20), -1);
}

static void test_sizes(void)
{
	struct size_seq s;
	char msg[256];
	CHECK_EQ(size_seq_parse("64", &s, msg, sizeof(msg)), 0);
	CHECK(s.n == 1 && s.sizes[0] == 64 && s.mean == 64);
	size_seq_free(&s);
	CHECK_EQ(size_seq_parse("64,512,1518", &s, msg, sizeof(msg)), 0);
	CHECK(s.n == 3 && s.sizes[0] == 64 && s.sizes[1] == 512 && s.sizes[2] == 1518);
	CHECK(s.mean == (64 + 512 + 1518) / 3.0);
	size_seq_free(&s);
	CHECK_EQ(size_seq_parse("imix", &s, msg, sizeof(msg)), 0);
	CHECK_EQ(s.n, 12);
	CHECK(s.mean == (7 * 64 + 4 * 512 + 1518) / 12.0);
	unsigned c64 = 0, c512 = 0, c1518 = 0;
	for (unsigned i = 0; i < s.n; i++)
		c64 += s.sizes[i] == 64, c512 += s.sizes[i] == 512, c1518 += s.sizes[i] == 1518;
	CHECK(c64 == 7 && c512 == 4 && c1518 == 1);
	size_seq_free(&s);
	CHECK_EQ(size_seq_parse("imix:abcdefg", &s, msg, sizeof(msg)), 0);
	const unsigned want[] = { 64, 128, 256, 512, 1024, 1280, 1518 };
	CHECK_EQ(s.n, 7);
	for (unsigned i = 0; i < 7 && i < s.n; i++)
		CHECK_EQ(s.sizes[i], want[i]);
	CHECK(s.mean == (64 + 128 + 256 + 512 + 1024 + 1280 + 1518) / 7.0);
	size_seq_free(&s);
	for (unsigned v = 64; v <= 1518; v++) {
		char spec[16];
		snprintf(spec, sizeof(spec), "%u", v);
		CHECK_EQ(size_seq_parse(spec, &s, msg, sizeof(msg)), 0);
		CHECK(s.n == 1 && s.sizes[0] == v);
		size_seq_free(&s);
	}
	size_seq_parse("20", &s, msg, sizeof(msg));
	CHECK(strcmp(msg, "--size 20: frame size must be 64..9018 bytes (with FCS)") == 0);
	const char *bad[] = { "", "20", "63", "9019", "65536", "99999999999999999999", "-64", "+64",
			      "64,", ",64", "64,,512", "abc", "64x", "64.5", "imixx", "imix:", "imix:h",
			      "imix:z", "imix:abq", "imix: a", "64,20", "0x40" };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		msg[0] = 0;
		int r = size_seq_parse(bad[i], &s, msg, sizeof(msg));
		if (r != -1)
			fprintf(stderr, "accepted bad size spec '%s'\n", bad[i]);
		CHECK_EQ(r, -1);
		CHECK(msg[0] != 0);
		CHECK(s.sizes == NULL);
	}
	size_seq_parse("9019", &s, msg, sizeof(msg));
	CHECK(strstr(msg, "64..9018") != NULL);
	size_seq_parse("imix:ah", &s, msg, sizeof(msg));
	CHECK(strstr(msg, "a=64") && strstr(msg, "g=1518") && strstr(msg, "'h'"));
	size_seq_parse("64,20", &s, msg, sizeof(msg));
	CHECK(strstr(msg, "20") && strstr(msg, "64..9018"));
	/* at most 1024 entries */
	char big[8 * 1100];
	big[0] = 0;
	for (unsigned i = 0; i < 1024; i++)
		strcat(big, i ? ",64" : "64");
	CHECK_EQ(size_seq_parse(big, &s, msg, sizeof(msg)), 0);
	CHECK_EQ(s.n, 1024);
	size_seq_free(&s);
	strcat(big, ",64");
	CHECK_EQ(size_seq_parse(big, &s, msg, sizeof(msg)), -1);
	char genome[1100];
	memset(genome, 'a', sizeof(genome));
	memcpy(genome, "imix:", 5);
	genome[5 + 1024] = 0;
	CHECK_EQ(size_seq_parse(genome, &s, msg, sizeof(msg)), 0);
	size_seq_free(&s);
	genome[5 + 1024] = 'a';
	genome[5 + 1025] = 0;
	CHECK_EQ(size_seq_parse(genome, &s, msg, sizeof(msg)), -1);
	/* NULL msg buffer is tolerated */
	CHECK_EQ(size_seq_parse("5", &s, NULL, 0), -1);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_speed(void)
{
	static struct frame_tmpl t;
	static uint8_t f[FRAME_MAX];
	frame_tmpl_init(&t, &addrs, 1, 64, FLOW_SPORT);
	const unsigned N = 5000000;
	unsigned sizes[] = { 64, 1518 };
	for (unsigned k = 0; k < 2; k++) {
		double t0 = now_s();
		uint64_t x = 0;
		for (unsigned i = 0; i < N; i++) {
			frame_write_l2(&t, f, sizes[k], i & 63, i, i);
			x += f[40];
		}
		double w = (now_s() - t0) / N * 1e9;
		t0 = now_s();
		struct sig s;
		for (unsigned i = 0; i < N; i++)
			x += frame_parse_l2(f, sizes[k] - 4, &s) + s.seq;
		double p = (now_s() - t0) / N * 1e9;
		printf("  size %u: write %.1f ns/frame, parse %.1f ns/frame (%llu)\n", sizes[k], w, p,
		       (unsigned long long)(x & 1));
		CHECK(w < 1000); /* ~1 Mpps on one core needs far less than 1 us */
		CHECK(p < 1000);
	}
}

int main(void)
{
	test_csum();
	test_write_parse();
	test_flows();
	test_flow_range();
	test_truncation_and_variants();
	test_swap();
	test_sizes();
	test_speed();
	return check_exit("test_frame");
}
