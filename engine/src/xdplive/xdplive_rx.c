/* xdplive: the kernel sink's per-stream records (xdplive_acct.h) -> the engine's rxstats, and the
 * generator's config from a frame template. Pure code (no libbpf): unit-tested in tests/. */
#include <math.h>
#include <string.h>

#include "frame.h"
#include "hist.h"
#include "rxstats.h"
#include "xdplive_acct.h"
#include "xdplive_rx.h"

_Static_assert(VSB_KHIST_BUCKETS == HIST_BUCKETS, "kernel and userspace histograms differ");
_Static_assert(VSB_KWIN == RX_WINDOW, "kernel and userspace windows differ");
_Static_assert(VSB_KWIN_WORDS == RX_WINDOW / 64 + 1, "window words");
_Static_assert(VSB_KMAX_STREAMS == RX_MAX_STREAMS, "stream slots differ");
_Static_assert((int)VSB_F_SMAC_SIP == (int)FLOW_SMAC_SIP && (int)VSB_F_DPORT == (int)FLOW_DPORT,
	       "flow fields differ");

/* Kernel histogram -> struct hist: buckets, count, min, max exact; mean exact (sum / count); the
 * sum of squares from the bucket midpoints around that mean (stddev within the bucket width). */
void xdplive_hist_import(const struct vsb_khist *k, struct hist *h)
{
	hist_reset(h);
	if (!k->count)
		return;
	memcpy(h->b, k->b, sizeof(h->b));
	h->count = k->count;
	h->min = k->min;
	h->max = k->max;
	h->overflow = k->overflow;
	h->mean = (double)k->sum / (double)k->count;
	double m2 = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		if (!k->b[i])
			continue;
		uint64_t lo = hist_bucket_low(i), hi = hist_bucket_high(i);
		double mid = i < 2 * HIST_SUB ? (double)lo : (lo + hi + 1) / 2.0;
		if (mid < (double)k->min)
			mid = (double)k->min;
		if (mid > (double)k->max)
			mid = (double)k->max;
		double d = mid - h->mean;
		m2 += (double)k->b[i] * d * d;
	}
	h->m2 = m2;
}

void xdplive_stream_import(const struct vsb_kstream *k, struct stream_stats *s)
{
	memset(s, 0, offsetof(struct stream_stats, lat));
	s->stream = (uint16_t)k->stream;
	s->used = 1;
	s->rx = k->rx;
	s->unique = k->unique;
	s->duplicated = k->duplicated;
	s->reordered = k->reordered;
	s->bytes = k->bytes;
	s->max_seq_ext = k->max_seq_ext;
	s->last_seq32 = (uint32_t)(k->max_seq_ext ? k->max_seq_ext - 1 : 0);
	s->jitter_ns = (double)k->jitter16 / 16.0;
	xdplive_hist_import(&k->lat, &s->lat);
	xdplive_hist_import(&k->ipdv_pos, &s->ipdv_pos);
	xdplive_hist_import(&k->ipdv_neg, &s->ipdv_neg);
	memset(s->window, 0, sizeof(s->window));
	s->first_rx_tsc = s->last_rx_tsc = 0; /* the kernel keeps ns: see xdplive_import */
}

double xdplive_import(const struct vsb_kstream *ks, unsigned n, const struct vsb_sink_sum *sum,
		      struct rxstats *rx)
{
	uint8_t epoch = rx->epoch;
	rxstats_reset(rx, epoch);
	uint64_t first = UINT64_MAX, last = 0;
	if (n > RX_MAX_STREAMS)
		n = RX_MAX_STREAMS;
	for (unsigned i = 0; i < n; i++) {
		if (!ks[i].used)
			continue;
		xdplive_stream_import(&ks[i], &rx->s[rx->nstreams++]);
		if (ks[i].rx) {
			first = ks[i].first_rx_ns < first ? ks[i].first_rx_ns : first;
			last = ks[i].last_rx_ns > last ? ks[i].last_rx_ns : last;
		}
	}
	rx->stale = sum->stale;
	rx->foreign = sum->foreign;
	rx->malformed = sum->malformed;
	rx->overflow_streams = sum->overflow_streams;
	return last > first ? (last - first) / 1e9 : 0;
}

static uint32_t be16_sum(const uint8_t *p, unsigned n)
{
	uint32_t s = 0;
	for (unsigned i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	return s;
}

int xdplive_gen_config(const struct frame_tmpl *t, const struct size_seq *s, uint32_t flows,
		       struct vsb_gen_cfg *c, char *msg, size_t n)
{
	memset(c, 0, sizeof(*c));
	if (s->n > VSB_KMAX_SIZES) {
		snprintf(msg, n, "--io xdplive: a size list of %u frames is longer than the %u the BPF "
			 "generator holds; use a shorter list", s->n, VSB_KMAX_SIZES);
		return -1;
	}
	memcpy(c->hdr, t->buf, VSB_HDR_LEN);
	c->sip = t->a.sip;
	c->dip = t->a.dip;
	c->smac24 = (uint32_t)t->a.smac[3] << 16 | (uint32_t)t->a.smac[4] << 8 | t->a.smac[5];
	c->ip_sum = be16_sum(t->buf + ETH_HDR_LEN, 12);
	c->flows = flows ? flows : 1;
	c->nsizes = s->n;
	c->sport = t->a.sport;
	c->dport = t->a.dport;
	c->stream = t->stream;
	c->field = (uint8_t)t->field;
	c->epoch = t->epoch;
	for (unsigned i = 0; i < s->n; i++) {
		unsigned size = s->sizes[i] < FRAME_MIN ? FRAME_MIN : s->sizes[i] > FRAME_MAX ? FRAME_MAX
											    : s->sizes[i];
		c->wire[i] = (uint16_t)(size - FCS_LEN);
	}
	return 0;
}
