/* Per-stream receive accounting (rxstats.h).
 *
 * Sequence numbers: 32 bits on the wire, extended to 64 bits by taking the extension nearest to the
 * highest sequence seen so far (|distance| < 2^31). Every stream is assumed to start at sequence 0
 * in each epoch, so frames missing before the first received one count as lost.
 *
 * Classification of a frame with extended sequence x, with H the highest sequence seen so far and
 * NextExp = H + 1 (= max_seq_ext):
 *   - x >= NextExp: in order (a jump leaves a gap, i.e. loss). Counted unique; the seen-bitmap
 *     slots of the sequences leaving the window are cleared; jitter and IPDV are updated against
 *     the previous in-order frame.
 *   - NextExp - RX_WINDOW <= x < NextExp (inside the window):
 *       bit already set -> duplicated;
 *       otherwise       -> unique and reordered (RFC 4737: x < NextExp); it fills a gap, so the
 *                          loss shrinks by one.
 *   - x < NextExp - RX_WINDOW (older than the window; also any x that would be negative): duplicate
 *     and late frame cannot be told apart. Rule: counted as reordered, NOT as unique (so it still
 *     counts as lost) and not as duplicated.
 * lost = NextExp - unique, which never underflows since unique counts distinct sequences <= H.
 *
 * Latency = rx_tsc - tx_tsc in ns (tsc_to_ns); not recorded if rx_tsc < tx_tsc or if it exceeds
 * RX_LAT_MAX_S seconds (absurd). Jitter (RFC 3550) and IPDV (RFC 3393) use consecutive in-order
 * frames: D = (Rj - Ri) - (Sj - Si); J += (|D| - J) / 16; D >= 0 goes to ipdv_pos, D < 0 to
 * ipdv_neg as -D. */
#include "rxstats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "frame.h"
#include "tsc.h"

#define RX_LAT_MAX_S 100.0

/* Exclusive limit in ticks beyond which a latency or a transit-time difference is absurd (not
 * recorded). Set in rxstats_init() (which calibrates the TSC once), read-only per packet; 0 (nothing
 * recorded) if the TSC frequency is unknown. */
static uint64_t lim_ticks;
static int lim_set;

static void set_lim_ticks(void)
{
	double hz = tsc_hz();
	if (!(hz > 0)) {
		lim_ticks = 0;
	} else {
		double t = hz * RX_LAT_MAX_S;
		lim_ticks = t < 1e18 ? (uint64_t)t : (uint64_t)1e18;
	}
	lim_set = 1;
}

int rxstats_init(struct rxstats *r, uint8_t epoch)
{
	memset(r, 0, sizeof(*r));
	r->epoch = epoch;
	r->s = calloc(RX_MAX_STREAMS, sizeof(*r->s));
	if (!r->s)
		return -1;
	if (!lim_set)
		set_lim_ticks();
	return 0;
}

void rxstats_reset(struct rxstats *r, uint8_t epoch)
{
	/* stream slots are (re)initialised when first used */
	struct stream_stats *s = r->s;
	unsigned n = r->nstreams;
	for (unsigned i = 0; i < n && s; i++)
		s[i].used = 0;
	memset(r, 0, sizeof(*r));
	r->s = s;
	r->epoch = epoch;
}

void rxstats_free(struct rxstats *r)
{
	free(r->s);
	r->s = NULL;
	r->nstreams = 0;
}

static struct stream_stats *stream_new(struct rxstats *r, uint16_t id)
{
	struct stream_stats *s = &r->s[r->nstreams++];
	memset(s, 0, offsetof(struct stream_stats, lat));
	hist_reset(&s->lat);
	hist_reset(&s->ipdv_pos);
	hist_reset(&s->ipdv_neg);
	memset(s->window, 0, sizeof(s->window));
	s->first_rx_tsc = s->last_rx_tsc = 0;
	s->stream = id;
	s->used = 1;
	return s;
}

static inline struct stream_stats *stream_find(struct rxstats *r, uint16_t id)
{
	struct stream_stats *s = r->s;
	for (unsigned i = 0, n = r->nstreams; i < n; i++)
		if (likely(s[i].stream == id))
			return &s[i];
	if (unlikely(r->nstreams >= RX_MAX_STREAMS || !r->s))
		return NULL;
	return stream_new(r, id);
}

#define WIN_MASK (RX_WINDOW - 1)

static inline int win_test(const uint64_t *w, uint64_t x)
{
	uint32_t i = (uint32_t)(x & WIN_MASK);
	return (int)((w[i >> 6] >> (i & 63)) & 1);
}
static inline void win_set(uint64_t *w, uint64_t x)
{
	uint32_t i = (uint32_t)(x & WIN_MASK);
	w[i >> 6] |= 1ull << (i & 63);
}

/* Clear the slots of sequences [from, from + n), n < RX_WINDOW. */
static void win_clear(uint64_t *w, uint64_t from, uint64_t n)
{
	uint32_t i = (uint32_t)(from & WIN_MASK);
	while (n) {
		uint32_t bit = i & 63;
		uint64_t take = 64 - bit;
		if (take > n)
			take = n;
		uint64_t mask = take == 64 ? ~0ull : (((1ull << take) - 1) << bit);
		w[i >> 6] &= ~mask;
		n -= take;
		i = (uint32_t)((i + take) & WIN_MASK);
	}
}

/* signed transit-time difference in ticks -> ns; returns 0 if absurd */
static inline int diff_ns(int64_t d, int64_t *out)
{
	uint64_t a = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
	if (unlikely(a >= lim_ticks))
		return 0;
	uint64_t ns = tsc_to_ns(a);
	*out = d < 0 ? -(int64_t)ns : (int64_t)ns;
	return 1;
}

void rxstats_account(struct rxstats *r, const struct sig *sig, uint64_t rx_tsc, unsigned bytes)
{
	if (unlikely(sig->epoch != r->epoch)) {
		r->stale++;
		return;
	}
	struct stream_stats *s = stream_find(r, sig->stream);
	if (unlikely(!s)) {
		r->overflow_streams++;
		return;
	}
	s->rx++;
	s->bytes += bytes;
	if (unlikely(s->rx == 1))
		s->first_rx_tsc = rx_tsc;
	s->last_rx_tsc = rx_tsc;

	if (rx_tsc >= sig->tx_tsc && rx_tsc - sig->tx_tsc < lim_ticks)
		hist_record(&s->lat, tsc_to_ns(rx_tsc - sig->tx_tsc));

	uint64_t x;
	int in_order;
	if (unlikely(s->unique == 0 && s->max_seq_ext == 0)) {
		x = sig->seq;
		in_order = 1;
	} else {
		uint64_t hi = s->max_seq_ext - 1;
		int32_t delta = (int32_t)(sig->seq - (uint32_t)hi);
		if (delta < 0 && (uint64_t)(-(int64_t)delta) > hi) {
			s->reordered++; /* would be negative: older than anything we can track */
			return;
		}
		x = hi + (uint64_t)(int64_t)delta;
		in_order = x >= s->max_seq_ext;
	}
	s->last_seq32 = sig->seq;

	if (likely(in_order)) {
		uint64_t start = s->max_seq_ext; /* first slot to recycle */
		uint64_t n = x + 1 - start;
		if (unlikely(n >= RX_WINDOW))
			memset(s->window, 0, sizeof(s->window));
		else if (n > 1)
			win_clear(s->window, start, n - 1);
		/* the slot of x itself: clear (it held x - RX_WINDOW) then set */
		win_set(s->window, x);
		s->max_seq_ext = x + 1;
		s->unique++;
		if (likely(s->have_prev)) {
			/* modular arithmetic, then signed: |D| stays tiny for sane inputs */
			int64_t d = (int64_t)((rx_tsc - s->prev_rx_tsc) - (sig->tx_tsc - s->prev_tx_tsc));
			int64_t dns;
			if (diff_ns(d, &dns)) {
				double ad = dns < 0 ? -(double)dns : (double)dns;
				s->jitter_ns += (ad - s->jitter_ns) / 16.0;
				if (dns >= 0)
					hist_record(&s->ipdv_pos, (uint64_t)dns);
				else
					hist_record(&s->ipdv_neg, (uint64_t)-dns);
			}
		}
		s->have_prev = 1;
		s->prev_tx_tsc = sig->tx_tsc;
		s->prev_rx_tsc = rx_tsc;
		return;
	}
	if (s->max_seq_ext - x > RX_WINDOW) {
		s->reordered++; /* older than the window: see the rule above */
		return;
	}
	if (win_test(s->window, x)) {
		s->duplicated++;
		return;
	}
	win_set(s->window, x);
	s->unique++;
	s->reordered++;
}

uint64_t stream_lost(const struct stream_stats *s)
{
	return s->max_seq_ext > s->unique ? s->max_seq_ext - s->unique : 0;
}

void rxstats_totals(const struct rxstats *r, struct rx_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (unsigned i = 0; i < r->nstreams; i++) {
		const struct stream_stats *s = &r->s[i];
		t->rx += s->rx;
		t->unique += s->unique;
		t->duplicated += s->duplicated;
		t->reordered += s->reordered;
		t->lost += stream_lost(s);
		t->bytes += s->bytes;
		if (s->jitter_ns > t->jitter_ns)
			t->jitter_ns = s->jitter_ns;
	}
}

void rxstats_latency(const struct rxstats *r, struct hist *out)
{
	hist_reset(out);
	for (unsigned i = 0; i < r->nstreams; i++)
		hist_merge(out, &r->s[i].lat);
}

/* Value of rank `rank` (1-based, ascending) in the union of one histogram per stream, bucket
 * midpoint clamped into [lo, hi]. */
static double rank_value(const struct rxstats *r, size_t hoff, uint64_t rank, uint64_t lo, uint64_t hi)
{
	uint64_t cum = 0;
	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		for (unsigned i = 0; i < r->nstreams; i++) {
			const struct hist *h = (const struct hist *)((const char *)&r->s[i] + hoff);
			cum += h->b[b];
		}
		if (cum >= rank) {
			uint64_t l = hist_bucket_low(b), u = hist_bucket_high(b);
			uint64_t mid = l + (u - l + 1) / 2;
			if (mid < lo)
				mid = lo;
			if (mid > hi)
				mid = hi;
			return (double)mid;
		}
	}
	return (double)hi;
}

double rxstats_ipdv_quantile(const struct rxstats *r, double q)
{
	uint64_t nneg = 0, npos = 0;
	uint64_t nmin = UINT64_MAX, nmax = 0, pmin = UINT64_MAX, pmax = 0;
	for (unsigned i = 0; i < r->nstreams; i++) {
		const struct hist *p = &r->s[i].ipdv_pos, *n = &r->s[i].ipdv_neg;
		if (p->count) {
			npos += p->count;
			pmin = VSB_MIN(pmin, p->min);
			pmax = VSB_MAX(pmax, p->max);
		}
		if (n->count) {
			nneg += n->count;
			nmin = VSB_MIN(nmin, n->min);
			nmax = VSB_MAX(nmax, n->max);
		}
	}
	uint64_t total = nneg + npos;
	if (total == 0)
		return 0;
	/* signed ascending order: negatives by decreasing magnitude, then positives ascending */
	if (!(q > 0))
		return nneg ? -(double)nmax : (double)pmin;
	if (q >= 1)
		return npos ? (double)pmax : -(double)nmin;
	double rq = ceil(q * (double)total);
	uint64_t rank = rq < 1 ? 1 : (rq > (double)total ? total : (uint64_t)rq);
	if (rank <= nneg)
		return -rank_value(r, offsetof(struct stream_stats, ipdv_neg), nneg - rank + 1, nmin, nmax);
	return rank_value(r, offsetof(struct stream_stats, ipdv_pos), rank - nneg, pmin, pmax);
}
