/* Log-linear latency histogram (hist.h).
 *
 * Index math: v < 256 -> index v (exact). Otherwise e = floor(log2 v) - 7, so v >> e is in
 * [128, 256), and index = 256 + (e - 1) * 128 + ((v >> e) - 128). Bucket idx >= 256 covers
 * [m << e, ((m + 1) << e) - 1] with e = (idx - 256) / 128 + 1, m = 128 + (idx - 256) % 128: its
 * width 2^e is at most 1/128 of its lower edge. With HIST_BUCKETS = 2*128 + 34*128 the last exponent
 * is e = 34, i.e. values below 2^42 ns (about 73 minutes) have their own bucket; larger values go
 * into the top bucket and are counted in `overflow` (min, max, mean, stddev stay exact).
 *
 * An empty histogram has count = min = max = 0. stddev is the population standard deviation. */
#include "hist.h"

#include <math.h>
#include <string.h>

#include "common.h"

void hist_reset(struct hist *h)
{
	memset(h, 0, sizeof(*h));
}

static inline unsigned index_raw(uint64_t v)
{
	if (v < 2 * HIST_SUB)
		return (unsigned)v;
	unsigned e = (unsigned)(63 - __builtin_clzll(v)) - HIST_SUB_BITS;
	return 2 * HIST_SUB + (e - 1) * HIST_SUB + (unsigned)((v >> e) - HIST_SUB);
}

unsigned hist_index(uint64_t v)
{
	unsigned i = index_raw(v);
	return i < HIST_BUCKETS ? i : HIST_BUCKETS - 1;
}

uint64_t hist_bucket_low(unsigned idx)
{
	if (idx >= HIST_BUCKETS)
		idx = HIST_BUCKETS - 1;
	if (idx < 2 * HIST_SUB)
		return idx;
	unsigned k = idx - 2 * HIST_SUB;
	unsigned e = k / HIST_SUB + 1;
	uint64_t m = HIST_SUB + k % HIST_SUB;
	return m << e;
}

uint64_t hist_bucket_high(unsigned idx)
{
	if (idx >= HIST_BUCKETS)
		idx = HIST_BUCKETS - 1;
	if (idx < 2 * HIST_SUB)
		return idx;
	unsigned e = (idx - 2 * HIST_SUB) / HIST_SUB + 1;
	return hist_bucket_low(idx) + ((uint64_t)1 << e) - 1;
}

void hist_record(struct hist *h, uint64_t v)
{
	unsigned i = index_raw(v);
	if (unlikely(i >= HIST_BUCKETS)) {
		i = HIST_BUCKETS - 1;
		h->overflow++;
	}
	h->b[i]++;
	if (h->count == 0) {
		h->min = h->max = v;
	} else {
		if (v < h->min)
			h->min = v;
		if (v > h->max)
			h->max = v;
	}
	h->count++;
	double d = (double)v - h->mean;
	h->mean += d / (double)h->count;
	h->m2 += d * ((double)v - h->mean);
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	if (src->count == 0)
		return;
	if (dst->count == 0) {
		memcpy(dst, src, sizeof(*dst));
		return;
	}
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
	double na = (double)dst->count, nb = (double)src->count, n = na + nb;
	double d = src->mean - dst->mean;
	dst->mean += d * nb / n;
	dst->m2 += src->m2 + d * d * na * nb / n;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	dst->overflow += src->overflow;
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	if (h->count == 0)
		return 0;
	if (!(q > 0)) /* also NaN */
		return h->min;
	if (q >= 1)
		return h->max;
	double r = ceil(q * (double)h->count);
	uint64_t rank = r < 1 ? 1 : (r > (double)h->count ? h->count : (uint64_t)r);
	uint64_t cum = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		cum += h->b[i];
		if (cum >= rank) {
			uint64_t lo = hist_bucket_low(i), hi = hist_bucket_high(i);
			uint64_t mid = lo + (hi - lo + 1) / 2; /* centre of [lo, hi + 1) */
			if (mid < h->min)
				mid = h->min;
			if (mid > h->max)
				mid = h->max;
			return mid;
		}
	}
	return h->max;
}

double hist_stddev(const struct hist *h)
{
	if (h->count < 2 || !(h->m2 > 0))
		return 0;
	return sqrt(h->m2 / (double)h->count);
}
