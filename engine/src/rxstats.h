/* Per-stream receive accounting: loss by sequence, duplicates, reordering (RFC 4737), latency
 * histogram, RFC 3550 interarrival jitter and RFC 3393 IPDV. */
#ifndef VSB_RXSTATS_H
#define VSB_RXSTATS_H
#include <stdint.h>
#include "hist.h"

struct sig; /* frame.h */

#define RX_WINDOW_BITS 16                       /* duplicate detection window: 65536 sequences */
#define RX_WINDOW (1u << RX_WINDOW_BITS)
#define RX_MAX_STREAMS 64

struct stream_stats {
	uint16_t stream;
	int used;
	uint64_t rx;            /* frames received (including duplicates) */
	uint64_t unique;        /* distinct sequence numbers received */
	uint64_t duplicated;
	uint64_t reordered;     /* RFC 4737: seq < next expected */
	uint64_t bytes;
	uint64_t max_seq_ext;   /* highest extended (64-bit) sequence seen + 1 = next expected */
	uint32_t last_seq32;
	int have_prev;
	uint64_t prev_tx_tsc, prev_rx_tsc; /* of the previous in-order packet (for jitter/IPDV) */
	double jitter_ns;       /* RFC 3550 J */
	struct hist lat;        /* latency (one-way or round trip), ns */
	struct hist ipdv_pos;   /* IPDV >= 0, ns */
	struct hist ipdv_neg;   /* -IPDV for IPDV < 0, ns */
	uint64_t window[RX_WINDOW / 64]; /* seen-bitmap of sequences, indexed seq % RX_WINDOW */
	uint64_t first_rx_tsc, last_rx_tsc;
};

struct rxstats {
	uint8_t epoch;          /* frames with another epoch are counted as stale, not accounted */
	uint64_t stale;
	uint64_t foreign;       /* not ours (well-formed) */
	uint64_t malformed;
	uint64_t overflow_streams; /* frames of streams beyond RX_MAX_STREAMS */
	unsigned nstreams;
	struct stream_stats *s; /* array of RX_MAX_STREAMS, heap allocated */
};

int rxstats_init(struct rxstats *r, uint8_t epoch);   /* 0 or -1 (nomem) */
void rxstats_reset(struct rxstats *r, uint8_t epoch);
void rxstats_free(struct rxstats *r);
/* Account one engine frame received at rx_tsc. latency = rx_tsc - sig->tx_tsc converted to ns
 * (negative/absurd values are clamped to 0 and not recorded). */
void rxstats_account(struct rxstats *r, const struct sig *sig, uint64_t rx_tsc, unsigned bytes);
/* lost = (highest seq + 1) - unique, summed or per stream */
uint64_t stream_lost(const struct stream_stats *s);

/* Totals across streams. */
struct rx_totals {
	uint64_t rx, unique, duplicated, reordered, lost, bytes;
	double jitter_ns;       /* max across streams */
};
void rxstats_totals(const struct rxstats *r, struct rx_totals *t);
/* Merged latency histogram across streams (caller provides storage). */
void rxstats_latency(const struct rxstats *r, struct hist *out);
/* IPDV quantile across streams, signed ns */
double rxstats_ipdv_quantile(const struct rxstats *r, double q);

#endif
