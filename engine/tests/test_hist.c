/* Unit tests: log-linear histogram. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "check.h"

static struct hist h, h2, h3;

static void test_layout(void)
{
	/* buckets tile the value range without gaps or overlaps; each value maps into its bucket */
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		uint64_t lo = hist_bucket_low(i), hi = hist_bucket_high(i);
		CHECK(lo <= hi);
		CHECK_EQ(hist_index(lo), i);
		CHECK_EQ(hist_index(hi), i);
		CHECK_EQ(hist_index(lo + (hi - lo) / 2), i);
		if (i + 1 < HIST_BUCKETS)
			CHECK_EQ(hist_bucket_low(i + 1), hi + 1);
		if (i >= 256)
			CHECK((double)(hi - lo + 1) / (double)lo <= 1.0 / 128 + 1e-12);
		else
			CHECK(lo == i && hi == i);
		if (failures)
			return;
	}
	/* the last bucket ends at 2^42 - 1: covers everything below 2^41 (and below 2^42) */
	CHECK_EQ(hist_bucket_high(HIST_BUCKETS - 1), (1ull << 42) - 1);
	CHECK(hist_index((1ull << 41) - 1) < HIST_BUCKETS - 1);
	CHECK_EQ(hist_index(UINT64_MAX), HIST_BUCKETS - 1);
	CHECK_EQ(hist_index(256), 256);
	CHECK_EQ(hist_index(511), 383);
	CHECK_EQ(hist_index(512), 384);
}

static void test_accuracy(void)
{
	/* geometric sweep 100 ns .. 10 s: bucket midpoint within 1 % (in fact 0.4 %) */
	double worst = 0;
	for (double x = 100; x <= 1e10; x *= 1.0007) {
		uint64_t v = (uint64_t)x;
		hist_reset(&h);
		hist_record(&h, v);
		CHECK_EQ(hist_quantile(&h, 0.5), v); /* single value: clamped to [min, max] */
		CHECK_EQ(hist_quantile(&h, 0), v);
		CHECK_EQ(hist_quantile(&h, 1), v);
		/* unclamped midpoint: put extreme values around it */
		hist_record(&h, 1);
		hist_record(&h, 1ull << 40);
		uint64_t m = hist_quantile(&h, 0.5);
		double err = fabs((double)m - (double)v) / (double)v;
		if (err > worst)
			worst = err;
		CHECK(err <= 0.01);
		unsigned i = hist_index(v);
		CHECK((double)(hist_bucket_high(i) - hist_bucket_low(i) + 1) / (double)hist_bucket_low(i) <= 0.01);
		if (failures)
			return;
	}
	printf("  worst relative error of a bucket midpoint over 100 ns..10 s: %.4f %%\n", worst * 100);
	CHECK(worst <= 1.0 / 256 + 1e-9);
}

static void test_uniform(void)
{
	hist_reset(&h);
	const uint64_t N = 1000000;
	for (uint64_t i = 1; i <= N; i++)
		hist_record(&h, i * 10); /* uniform 10 ns .. 10 ms */
	CHECK_EQ(h.count, N);
	CHECK_EQ(h.min, 10);
	CHECK_EQ(h.max, N * 10);
	CHECK_EQ(hist_quantile(&h, 0), 10);
	CHECK_EQ(hist_quantile(&h, 1), N * 10);
	const double qs[] = { 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999 };
	for (unsigned k = 0; k < sizeof(qs) / sizeof(qs[0]); k++)
		CHECK_NEAR_REL(hist_quantile(&h, qs[k]), qs[k] * N * 10, 0.01);
	CHECK_NEAR_REL(h.mean, (N + 1) * 5.0, 1e-9);
	/* population stddev of 10*{1..N} = 10 * sqrt((N^2 - 1) / 12) */
	CHECK_NEAR_REL(hist_stddev(&h), 10 * sqrt(((double)N * N - 1) / 12), 1e-9);
	CHECK_EQ(h.overflow, 0);
}

static void test_exact(void)
{
	hist_reset(&h);
	CHECK_EQ(hist_quantile(&h, 0.5), 0);
	CHECK(hist_stddev(&h) == 0);
	CHECK(h.min == 0 && h.max == 0 && h.count == 0);
	const uint64_t v[] = { 100, 200, 300, 400 };
	for (unsigned i = 0; i < 4; i++)
		hist_record(&h, v[i]);
	CHECK_EQ(h.min, 100);
	CHECK_EQ(h.max, 400);
	CHECK(h.mean == 250);
	CHECK_NEAR_REL(hist_stddev(&h), sqrt(12500.0), 1e-12);
	CHECK_EQ(hist_quantile(&h, 0.25), 100);
	CHECK_EQ(hist_quantile(&h, 0.5), 200);
	CHECK_NEAR_REL(hist_quantile(&h, 0.75), 300, 1.0 / 256); /* bucket [300, 301] */
	CHECK_EQ(hist_quantile(&h, 1), 400);
	/* large offset: Welford stays exact */
	hist_reset(&h);
	for (uint64_t i = 0; i < 1000; i++)
		hist_record(&h, 1000000000000ull + i);
	CHECK_NEAR_REL(h.mean, 1000000000000.0 + 499.5, 1e-15);
	CHECK_NEAR_REL(hist_stddev(&h), sqrt((1000.0 * 1000 - 1) / 12), 1e-6);
	/* overflow beyond the top bucket */
	hist_reset(&h);
	hist_record(&h, 1ull << 50);
	hist_record(&h, 5);
	CHECK_EQ(h.overflow, 1);
	CHECK_EQ(h.b[HIST_BUCKETS - 1], 1);
	CHECK_EQ(h.max, 1ull << 50);
	CHECK_EQ(hist_quantile(&h, 1), 1ull << 50);
	CHECK_EQ(hist_quantile(&h, 0.5), 5);
	CHECK_EQ(hist_quantile(&h, 0.51), hist_bucket_low(HIST_BUCKETS - 1) + (1ull << 33)); /* top midpoint */
	hist_record(&h, 0);
	CHECK_EQ(h.min, 0);
	CHECK_EQ(hist_quantile(&h, 0), 0);
	CHECK_EQ(hist_quantile(&h, -1), 0);
	CHECK_EQ(hist_quantile(&h, NAN), 0);
}

static void test_merge(void)
{
	hist_reset(&h);
	hist_reset(&h2);
	hist_reset(&h3);
	srand(7);
	for (int i = 0; i < 100000; i++) {
		uint64_t v = (uint64_t)rand() % 1000000 + (i & 1 ? 5000000 : 0);
		hist_record(&h3, v);
		hist_record(i % 3 ? &h : &h2, v);
	}
	hist_merge(&h, &h2);
	CHECK_EQ(h.count, h3.count);
	CHECK_EQ(h.min, h3.min);
	CHECK_EQ(h.max, h3.max);
	CHECK(memcmp(h.b, h3.b, sizeof(h.b)) == 0);
	CHECK_NEAR_REL(h.mean, h3.mean, 1e-12);
	CHECK_NEAR_REL(hist_stddev(&h), hist_stddev(&h3), 1e-9);
	/* merging into / from empty */
	hist_reset(&h2);
	hist_merge(&h2, &h3);
	CHECK(memcmp(&h2, &h3, sizeof(h2)) == 0);
	hist_reset(&h);
	hist_merge(&h2, &h);
	CHECK(memcmp(&h2, &h3, sizeof(h2)) == 0);
}

int main(void)
{
	test_layout();
	test_accuracy();
	test_uniform();
	test_exact();
	test_merge();
	printf("  HIST_BUCKETS %u, top bucket ends at %llu ns\n", (unsigned)HIST_BUCKETS,
	       (unsigned long long)hist_bucket_high(HIST_BUCKETS - 1));
	return check_exit("test_hist");
}
