/* Unit tests: the flow churn schedule (churn.c) and its checks, driven by a simulated clock
 * (1 tick = 1 ns): active-set size, arrivals over a time window, no tuple shared by two live flows,
 * fresh tuples from one run to the next, and the options' validation (opts.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "churn.h"
#include "common.h"
#include "opts.h"
#include "check.h"

#define HZ 1e9

/* Window sizes: floor(A*D) or ceil(A*D) flows at any time; lo and hi never go back. */
static void test_window(double a, double d)
{
	uint64_t plo = 0, phi = 0;
	double ad = a * d;
	for (int i = 0; i <= 20000; i++) {
		double t = i * 1e-4 * (1 + d);
		uint64_t lo, hi;
		churn_window_at(a, d, t, &lo, &hi);
		uint64_t n = hi - lo + 1;
		if (!(n >= (uint64_t)floor(ad) && n <= (uint64_t)ceil(ad)))
			fprintf(stderr, "A=%g D=%g t=%g: %llu active\n", a, d, t, (unsigned long long)n);
		CHECK(n >= (uint64_t)floor(ad) && n <= (uint64_t)ceil(ad));
		CHECK(lo >= plo && hi >= phi);
		plo = lo, phi = hi;
	}
	/* arrivals in [t1, t2): hi(t2) - hi(t1) = A*(t2 - t1) within one */
	for (double t1 = 0; t1 < 3; t1 += 0.37) {
		uint64_t lo1, hi1, lo2, hi2;
		double w = 1.25;
		churn_window_at(a, d, t1, &lo1, &hi1);
		churn_window_at(a, d, t1 + w, &lo2, &hi2);
		CHECK_NEAR((double)(hi2 - hi1), a * w, 1.0);
		CHECK_NEAR((double)(lo2 - lo1), a * w, 1.0); /* departures alike */
	}
}

/* Drive the generator's per-frame picks with a simulated clock: `pps` frames per second in batches
 * of `batch`, for `secs`. Check that every frame's flow is live, that no tuple is carried by two
 * flows live at the same time, and count distinct flows. Returns the distinct flow count. */
static uint64_t drive(double a, double d, uint32_t space, uint64_t base, double pps, unsigned batch,
		      double secs, struct churn *c)
{
	churn_init(c, a, d, space, base, HZ, 1000);
	uint32_t *owner_lo = calloc(space, sizeof(uint32_t)); /* tuple -> flow id (low 32 bits) + 1 */
	uint64_t frames = (uint64_t)(pps * secs), bad_live = 0, bad_share = 0;
	for (uint64_t f = 0; f < frames; f += batch) {
		uint64_t now = 1000 + (uint64_t)(f / pps * HZ);
		churn_advance(c, now);
		for (unsigned i = 0; i < batch; i++) {
			uint64_t id = c->cur;
			uint32_t idx = churn_next(c);
			if (id < c->lo || id > c->hi)
				bad_live++;
			CHECK_EQ(idx, (base + id) % space);
			/* a tuple's owner is the last flow that used it; another owner must have left */
			uint32_t prev = owner_lo[idx];
			if (prev && prev - 1 != (uint32_t)id && (uint64_t)(prev - 1) >= c->lo)
				bad_share++;
			owner_lo[idx] = (uint32_t)id + 1;
		}
	}
	CHECK_EQ(bad_live, 0);
	CHECK_EQ(bad_share, 0);
	free(owner_lo);
	return c->started;
}

static void test_drive(void)
{
	struct churn c;
	/* 1000 flows/s x 0.5 s = 500 active, 100 kpps: every flow carries ~100 frames per second */
	double a = 1000, d = 0.5, secs = 3;
	uint64_t n = drive(a, d, 64512, 0, 100e3, 64, secs, &c);
	/* flows that were live at some time in [0, secs): ids 1 .. floor(A (secs + D)) */
	CHECK_NEAR((double)n, a * (secs + d), 2 + a * 64 / 100e3);
	CHECK_EQ(c.top, n);
	/* the same over a small space that wraps several times: S = 600 > A*D = 500 */
	n = drive(a, d, 600, 0, 100e3, 32, secs, &c);
	CHECK_NEAR((double)n, a * (secs + d), 2 + a * 32 / 100e3);
	/* next run: fresh tuples (base continues) */
	uint64_t base = churn_next_base(&c) % 600;
	CHECK_EQ(base, (c.top + 1) % 600);
	n = drive(a, d, 600, base, 100e3, 32, 1, &c);
	CHECK(n > 0);
	/* slow traffic (rate below arrivals): flows without frames are skipped, none reused */
	n = drive(2000, 0.25, 1000, 7, 1000, 8, 2, &c);
	CHECK(n > 0 && n <= 2000 * 2.25 + 1);
}

/* Per-active-flow share: over a window, every flow live for the whole window got frames. */
static void test_fair(void)
{
	struct churn c;
	double a = 100, d = 1;  /* 100 active */
	churn_init(&c, a, d, 1000, 0, HZ, 0);
	uint64_t count[1000] = {0};
	double pps = 100e3;
	for (uint64_t f = 0; f < (uint64_t)(pps * 0.5); f += 16) {
		churn_advance(&c, (uint64_t)(f / pps * HZ));
		for (int i = 0; i < 16; i++)
			count[churn_next(&c)]++;
	}
	/* flows 51..100 lived for the whole 0.5 s: each ~ 1000 frames/s x 0.5 s */
	for (int k = 51; k <= 100; k++)
		CHECK_NEAR_REL((double)count[k], 500.0, 0.05);
}

static int expect_check(double a, double d, uint32_t space, int want)
{
	char msg[512] = "";
	int r = churn_check(a, d, space, "--flow-arrival", "--flow-life", msg, sizeof(msg));
	CHECK_EQ(r, want);
	if (want)
		CHECK(strstr(msg, "--flow-") != NULL);
	return r;
}

static void test_check(void)
{
	expect_check(0, 0, 100, 0);
	expect_check(1000, 1, 64512, 0);
	expect_check(1000, 0, 100, VSB_ERR_USAGE);      /* one without the other */
	expect_check(0, 1, 100, VSB_ERR_USAGE);
	expect_check(-1, 1, 100, VSB_ERR_USAGE);
	expect_check(NAN, 1, 100, VSB_ERR_USAGE);
	expect_check(10, 0.05, 100, VSB_ERR_USAGE);     /* 0.5 active */
	expect_check(100000, 1, 64512, VSB_ERR_USAGE);  /* 100k active > sport space */
	expect_check(100, 1, 100, VSB_ERR_USAGE);       /* 100 active in 100 tuples: no spare */
	expect_check(99, 1, 100, 0);
	expect_check(99.5, 1, 100, VSB_ERR_USAGE);      /* 100 active at times */
	expect_check(2e7, 1, UINT32_MAX, VSB_ERR_USAGE);
	expect_check(10, 1e6, UINT32_MAX, VSB_ERR_USAGE);
	CHECK_EQ(churn_space(FLOW_SPORT, 0, 1024, 4000), 64512);
	CHECK_EQ(churn_space(FLOW_DPORT, 0, 1024, 4000), 61536);
	CHECK_EQ(churn_space(FLOW_SIP, 0xc6120001u, 0, 0), 131071);
	CHECK_EQ(churn_space(FLOW_SMAC_SIP, 0xc6130000u, 0, 0), 65536);
	CHECK_EQ(churn_space(FLOW_SIP, 0x0a000001u, 0, 0), 1); /* outside 198.18.0.0/15 */
	CHECK_EQ(churn_space(FLOW_SMAC, 0, 0, 0), 1u << 24);
	CHECK_EQ(churn_space(FLOW_DIP, 0xc6130000u, 0, 0), 65536); /* dip: the destination */
}

static int parse(const char *const *args, struct opts *o, struct vsb_error *e)
{
	char *argv[16];
	int n = 0;
	argv[n++] = (char *)"gen";
	for (; *args; args++)
		argv[n++] = (char *)*args;
	memset(e, 0, sizeof(*e));
	return opts_parse(n, argv, o, e);
}

static void test_opts(void)
{
	struct opts o;
	struct vsb_error e;
	const char *ok[] = {"--port", "x", "--flow-arrival", "10k", "--flow-life", "0.5", NULL};
	CHECK_EQ(parse(ok, &o, &e), 0);
	CHECK_NEAR(o.flow_arrival, 10000, 0);
	CHECK_NEAR(o.flow_life, 0.5, 0);
	const char *lone[] = {"--port", "x", "--flow-arrival", "100", NULL};
	CHECK_EQ(parse(lone, &o, &e), VSB_ERR_USAGE);
	CHECK(strstr(e.msg, "--flow-life") != NULL);
	const char *both[] = {"--port", "x", "--flow-arrival", "100", "--flow-life", "1", "--flows", "8", NULL};
	CHECK_EQ(parse(both, &o, &e), VSB_ERR_USAGE);
	CHECK(strstr(e.msg, "--flows") != NULL);
	const char *junk[] = {"--port", "x", "--flow-arrival", "lots", "--flow-life", "1", NULL};
	CHECK_EQ(parse(junk, &o, &e), VSB_ERR_USAGE);
	const char *neg[] = {"--port", "x", "--flow-arrival", "100", "--flow-life", "-1", NULL};
	CHECK_EQ(parse(neg, &o, &e), VSB_ERR_USAGE);
}

int main(void)
{
	test_window(1000, 0.5);
	test_window(3, 0.4);      /* 1.2 active */
	test_window(12345, 2.5);
	test_window(1, 1);
	test_drive();
	test_fair();
	test_check();
	test_opts();
	return check_exit("test_churn");
}
