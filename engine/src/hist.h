/* Log-linear latency histogram (HdrHistogram-style), values in nanoseconds.
 * Values below 256 are exact; above, each power-of-two range holds 128 linear sub-buckets, so a
 * bucket's width is at most 1/128 of its lower edge: the reported (midpoint) value is within 0.4 %,
 * always within 1 %, over 100 ns .. 10 s and beyond (up to 2^40 ns). Exact min, max, mean and stddev
 * are kept beside the buckets (Welford). */
#ifndef VSB_HIST_H
#define VSB_HIST_H
#include <stdint.h>
#include <stdio.h>

#define HIST_SUB_BITS 7
#define HIST_SUB (1u << HIST_SUB_BITS)           /* 128 */
#define HIST_MAX_EXP 34                          /* covers values < 2^41 ns */
#define HIST_BUCKETS (2 * HIST_SUB + HIST_MAX_EXP * HIST_SUB)

struct hist {
	uint64_t count;
	uint64_t min, max;
	double mean, m2;      /* Welford running mean and sum of squares of differences */
	uint64_t overflow;    /* values clamped into the top bucket */
	uint64_t b[HIST_BUCKETS];
};

void hist_reset(struct hist *h);
void hist_record(struct hist *h, uint64_t v_ns);
/* Merge src into dst. */
void hist_merge(struct hist *dst, const struct hist *src);
/* Value at quantile q in [0,1] (bucket midpoint, clamped to [min,max]); 0 if empty. */
uint64_t hist_quantile(const struct hist *h, double q);
double hist_stddev(const struct hist *h);
/* bucket index <-> value range, exposed for tests */
unsigned hist_index(uint64_t v);
uint64_t hist_bucket_low(unsigned idx);
uint64_t hist_bucket_high(unsigned idx); /* inclusive */

#endif
