/* Unit tests: the xdplive accounting shared with the BPF sink (xdplive/xdplive_acct.h) against the
 * userspace reference (rxstats.c, hist.c): same loss/duplicate/reorder counts on random and
 * adversarial sequences, same histogram buckets; the import into rxstats; the generator config;
 * the clock conversions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "hist.h"
#include "rxstats.h"
#include "tsc.h"
#include "xdplive/xdplive_acct.h"
#include "xdplive/xdplive_rx.h"
#include "check.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t xr(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_hist_index(void)
{
	static const uint64_t fixed[] = {0, 1, 255, 256, 257, 511, 512, 1000, 65535, 65536, 1ull << 40,
					 (1ull << 41) - 1, 1ull << 41, 1ull << 42, 1ull << 50, UINT64_MAX};
	for (unsigned i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		int ovf = 0;
		CHECK_EQ(vsb_hist_index(fixed[i], &ovf), hist_index(fixed[i]));
	}
	for (int i = 0; i < 200000; i++) {
		uint64_t v = xr() >> (xr() % 64);
		int ovf = 0;
		CHECK_EQ(vsb_hist_index(v, &ovf), hist_index(v));
	}
}

/* Feed the same frames to rxstats and to vsb_kacct; compare every counter. */
static struct rxstats ref;
static struct vsb_kstream *ks;

static void both(uint32_t seq)
{
	struct sig s = {.epoch = 1, .stream = 7, .seq = seq, .tx_tsc = 1000};
	rxstats_account(&ref, &s, 2000, 64);
	vsb_kacct(ks, seq, 1000, 1, 2000, 64);
}

static void compare(const char *what)
{
	struct stream_stats *r = &ref.s[0];
	if (r->rx != ks->rx || r->unique != ks->unique || r->duplicated != ks->duplicated ||
	    r->reordered != ks->reordered || r->max_seq_ext != ks->max_seq_ext)
		fprintf(stderr, "%s: ref rx %llu uniq %llu dup %llu reord %llu max %llu | bpf %llu %llu %llu "
			"%llu %llu\n", what, (unsigned long long)r->rx, (unsigned long long)r->unique,
			(unsigned long long)r->duplicated, (unsigned long long)r->reordered,
			(unsigned long long)r->max_seq_ext, (unsigned long long)ks->rx,
			(unsigned long long)ks->unique, (unsigned long long)ks->duplicated,
			(unsigned long long)ks->reordered, (unsigned long long)ks->max_seq_ext);
	CHECK_EQ(ks->rx, r->rx);
	CHECK_EQ(ks->unique, r->unique);
	CHECK_EQ(ks->duplicated, r->duplicated);
	CHECK_EQ(ks->reordered, r->reordered);
	CHECK_EQ(ks->max_seq_ext, r->max_seq_ext);
	CHECK_EQ(ks->bytes, r->bytes);
}

static void fresh(uint32_t first)
{
	rxstats_reset(&ref, 1);
	memset(ks, 0, sizeof(*ks));
	(void)first;
}

static void test_window_differential(void)
{
	/* random walk: mostly in order, with loss, duplicates, reordering near and far, big jumps */
	for (int round = 0; round < 40; round++) {
		fresh(0);
		uint32_t seq = round & 1 ? 0xfffff000u : 0; /* half the rounds cross the 32-bit wrap */
		for (int i = 0; i < 60000; i++) {
			uint64_t r = xr() % 1000;
			uint32_t s = seq;
			if (r < 700)
				s = seq++;
			else if (r < 800)
				s = (seq += 1 + (uint32_t)(xr() % 5)); /* loss */
			else if (r < 880)
				s = seq - (uint32_t)(xr() % 64); /* duplicate or late */
			else if (r < 940)
				s = seq - (uint32_t)(xr() % 70000); /* around the window's edge */
			else if (r < 990)
				s = seq - 65536 + (uint32_t)(xr() % 128) - 64;
			else
				s = (seq += (uint32_t)(xr() % 200000)); /* a big jump */
			both(s);
		}
		compare("random walk");
	}
	/* exactly the window edge: every sequence of a full window, then each again */
	fresh(0);
	for (uint32_t i = 0; i < 70000; i++)
		both(i);
	for (uint32_t i = 70000 - 65536 - 2; i < 70000; i++)
		both(i);
	compare("window edge");
	/* unaligned window start: the oldest and newest words share a slot modulo 1024 */
	fresh(0);
	for (uint32_t i = 0; i < 65536 + 37; i++)
		both(i);
	both(37);
	both(36);
	both(38);
	compare("unaligned edge");
}

static void test_latency_and_import(void)
{
	memset(ks, 0, sizeof(*ks));
	struct hist *h = calloc(1, sizeof(*h));
	hist_reset(h);
	for (uint32_t i = 0; i < 10000; i++) {
		uint64_t lat = 1000 + xr() % 50000;
		vsb_kacct(ks, i, 1000000 + i * 1000ull, 1, 1000000 + i * 1000ull + lat, 64);
		hist_record(h, lat);
	}
	struct hist *imp = calloc(1, sizeof(*imp));
	xdplive_hist_import(&ks->lat, imp);
	CHECK_EQ(imp->count, h->count);
	CHECK_EQ(imp->min, h->min);
	CHECK_EQ(imp->max, h->max);
	CHECK(fabs(imp->mean - h->mean) < 1e-6 * h->mean);
	CHECK(fabs(hist_stddev(imp) - hist_stddev(h)) < 0.01 * hist_stddev(h));
	for (double q = 0.1; q < 1; q += 0.1)
		CHECK_EQ(hist_quantile(imp, q), hist_quantile(h, q));
	CHECK(ks->jitter16 > 0);
	CHECK_EQ(ks->ipdv_pos.count + ks->ipdv_neg.count, 9999);
	/* frames without a usable stamp: counted, no latency */
	vsb_kacct(ks, 10000, 0, 0, 1000000 + 10000 * 1000ull + 99, 64);
	CHECK_EQ(ks->no_ts, 1);
	CHECK_EQ(ks->lat.count, 10000);

	struct vsb_sink_sum sum = {.stale = 3, .foreign = 2, .malformed = 1};
	struct rxstats rx;
	rxstats_init(&rx, 5);
	ks->used = 1;
	ks->stream = 9;
	double s = xdplive_import(ks, 1, &sum, &rx);
	CHECK_EQ(rx.nstreams, 1);
	CHECK_EQ(rx.epoch, 5);
	CHECK_EQ(rx.s[0].stream, 9);
	CHECK_EQ(rx.s[0].rx, 10001);
	CHECK_EQ(rx.stale, 3);
	CHECK_EQ(rx.foreign, 2);
	CHECK_EQ(rx.malformed, 1);
	CHECK(s > 0);
	struct rx_totals t;
	rxstats_totals(&rx, &t);
	CHECK_EQ(t.unique, 10001);
	CHECK_EQ(t.lost, 0);
	rxstats_free(&rx);
	free(h);
	free(imp);
}

static void test_gen_config(void)
{
	struct frame_tmpl t;
	struct frame_addrs a = {.smac = {2, 0, 0, 0xaa, 0xbb, 0xcc}, .dmac = {2, 0, 0, 0, 0, 2},
				.sip = 0xc6120001u, .dip = 0xc6120002u, .sport = 1024, .dport = 4000};
	frame_tmpl_init(&t, &a, 3, 4, FLOW_SMAC_SIP);
	t.epoch = 9;
	struct size_seq s;
	char msg[256];
	CHECK(size_seq_parse("imix", &s, msg, sizeof(msg)) == 0);
	struct vsb_gen_cfg *c = calloc(1, sizeof(*c));
	CHECK(xdplive_gen_config(&t, &s, 4, c, msg, sizeof(msg)) == 0);
	CHECK_EQ(c->nsizes, s.n);
	CHECK_EQ(c->wire[0], 60);
	CHECK_EQ(c->wire[s.n - 1], 1514);
	CHECK_EQ(c->smac24, 0xaabbcc);
	CHECK_EQ(c->epoch, 9);
	CHECK_EQ(c->stream, 3);
	CHECK_EQ(c->field, VSB_F_SMAC_SIP);
	CHECK(memcmp(c->hdr, t.buf, VSB_HDR_LEN) == 0);
	/* the IP checksum the program computes from ip_sum matches frame_write_l2's */
	uint8_t f[FRAME_MAX];
	frame_write_l2(&t, f, 64, 0, 0, 0);
	uint32_t addr = (a.sip >> 16) + (a.sip & 0xffff) + (a.dip >> 16) + (a.dip & 0xffff);
	CHECK_EQ(vsb_csum_fold(c->ip_sum + 46 + addr), (uint32_t)f[24] << 8 | f[25]);
	size_seq_free(&s);
	CHECK(size_seq_parse("64", &s, msg, sizeof(msg)) == 0);
	s.n = VSB_KMAX_SIZES + 1; /* too long a list is refused with a message */
	uint16_t *big = calloc(s.n, sizeof(uint16_t));
	uint16_t *keep = s.sizes;
	s.sizes = big;
	CHECK(xdplive_gen_config(&t, &s, 1, c, msg, sizeof(msg)) == -1);
	CHECK(strstr(msg, "shorter list") != NULL);
	s.sizes = keep;
	s.n = 1;
	free(big);
	size_seq_free(&s);
	free(c);
}

static void test_clocks(void)
{
	/* a CLOCK_MONOTONIC stamp 10 us before now maps to about 10 us of TSC ticks before now */
	uint64_t now_tsc = 1ull << 44, now_ns = 5000000000ull;
	uint64_t t = tsc_from_mono(now_ns - 10000, now_tsc, now_ns);
	double us = (double)(now_tsc - t) / tsc_hz() * 1e6;
	CHECK(us > 9.99 && us < 10.01);
	CHECK(tsc_from_mono(now_ns + 1000, now_tsc, now_ns) > now_tsc);
	/* the sink's TSC -> ns anchor */
	struct vsb_sink_cfg c = {.tsc0 = 1000000, .ns0 = 777, .mult = (uint64_t)(4294967296.0 / 2.5)};
	__u64 ns = 0;
	CHECK(vsb_tsc_to_mono(&c, 1000000 + 2500, &ns) == 1);
	CHECK(ns >= 777 + 999 && ns <= 777 + 1000);
	CHECK(vsb_tsc_to_mono(&c, 1000000 - 2500, &ns) == 1);
	CHECK(ns + 1000 >= 777 && ns + 999 <= 777);
	CHECK(vsb_tsc_to_mono(&c, 1000000 + (1ull << 32), &ns) == 0);
	c.mult = 0;
	CHECK(vsb_tsc_to_mono(&c, 1000000, &ns) == 0);
}

/* The generator's in-kernel schedule: iterations every 7 ns (a fast loop) against departures of
 * `burst` frames every period; late starts catch up; nothing at or after the end; the count limit. */
static void test_gen_schedule(void)
{
	struct vsb_gen_cfg c = {.period_fp = 1000 * 1024, .burst = 2};
	struct vsb_gen_state st = {.next_fp = 5000ull << 10};
	uint64_t sent = 0;
	for (uint64_t t = 0; t < 1000000; t += 7)
		if (vsb_gen_due(&c, &st, t)) {
			sent++;
			st.frames++;
		}
	/* departures at 5000, 6000, ..., 999000: 995 of 2 frames */
	CHECK_EQ(sent, 995 * 2);
	/* behind schedule by 100 departures: the next 200 iterations all send */
	memset(&st, 0, sizeof(st));
	st.next_fp = 0;
	unsigned burst_run = 0;
	while (vsb_gen_due(&c, &st, 100000 - 1))
		burst_run++;
	CHECK_EQ(burst_run, 100 * 2);
	/* end and limit */
	c.end_ns = 50000;
	memset(&st, 0, sizeof(st));
	sent = 0;
	for (uint64_t t = 0; t < 100000; t += 7)
		sent += vsb_gen_due(&c, &st, t);
	CHECK_EQ(sent, 50 * 2);
	c.end_ns = 0;
	c.limit = 7;
	memset(&st, 0, sizeof(st));
	for (uint64_t t = 0; t < 100000; t += 7)
		if (vsb_gen_due(&c, &st, t))
			st.frames++;
	CHECK_EQ(st.frames, 7);
	/* a gap of the program (a tester stall): the departures due in it are skipped, counted, and
	 * not sent back to back; the limit counts them; without gap_ns the old catch-up */
	struct vsb_gen_cfg gc = {.period_fp = 1000 * 1024, .burst = 1, .gap_ns = 100000, .limit = 500};
	memset(&st, 0, sizeof(st));
	unsigned run = 0, after = 0;
	for (uint64_t t = 0; t < 100000; t += 7)  /* 100 departures on time */
		if (vsb_gen_due(&gc, &st, t))
			st.frames++;
	CHECK_EQ(st.frames, 100);
	CHECK_EQ(st.skipped, 0);
	uint64_t t = 100000 + 300000;  /* a 300 us gap: 300 departures missed */
	while (vsb_gen_due(&gc, &st, t)) {
		st.frames++;
		run++;
	}
	CHECK(run <= 2);               /* at most the departure due now, not 300 back to back */
	CHECK(st.skipped >= 299 && st.skipped <= 300);
	CHECK_EQ(st.gaps, 1);
	CHECK(st.gap_max_ns >= 300000 && st.gap_max_ns < 300010);
	for (t += 7; t < 2000000; t += 7)
		if (vsb_gen_due(&gc, &st, t)) {
			st.frames++;
			after++;
		}
	CHECK_EQ(st.frames + st.skipped, 500);
	/* a gap shorter than gap_ns is caught up, as before */
	memset(&st, 0, sizeof(st));
	st.frames = 0;
	for (t = 0; t < 10000; t += 7)
		if (vsb_gen_due(&gc, &st, t))
			st.frames++;
	run = 0;
	while (vsb_gen_due(&gc, &st, 10000 + 50000)) {
		st.frames++;
		run++;
	}
	CHECK(run >= 50 && run <= 51);
	CHECK_EQ(st.skipped, 0);
	(void)after;
	/* unpaced: every iteration */
	struct vsb_gen_cfg u = {.burst = 1};
	memset(&st, 0, sizeof(st));
	CHECK(vsb_gen_due(&u, &st, 0) && vsb_gen_due(&u, &st, 0));
}

int main(void)
{
	ks = calloc(1, sizeof(*ks));
	if (rxstats_init(&ref, 1) || !ks)
		return 1;
	test_hist_index();
	test_window_differential();
	test_latency_and_import();
	test_gen_config();
	test_clocks();
	test_gen_schedule();
	rxstats_free(&ref);
	free(ks);
	if (failures)
		return 1;
	printf("test_xdplive: ok\n");
	return 0;
}
