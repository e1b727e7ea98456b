/* xdplive: map layouts and per-frame accounting shared by the BPF programs (xdplive.bpf.c) and
 * userspace (io_xdplive.c, the unit tests). Pure inline code: no helpers, no libc.
 *
 * Clock scheme: the generator program stamps the signature's 64-bit timestamp with
 * bpf_ktime_get_ns() (CLOCK_MONOTONIC, ns) with bit 63 set (VSB_TS_MONO); TSC stamps of the other
 * backends never reach bit 63. The sink program takes latency as its own bpf_ktime_get_ns() minus
 * the stamp; a TSC stamp (another backend's generator) is turned into CLOCK_MONOTONIC ns with the
 * anchor and scale the sink's userspace refreshes in the config map. Userspace receivers turn a
 * marked stamp back into TSC ticks (frame_sig_mono_to_tsc, tsc.c).
 *
 * Loss/duplicates/reordering follow rxstats.c exactly (same 65536-sequence window, same rules); the
 * seen-bitmap is kept lazily: each 64-bit word carries the word number (seq >> 6) it holds, and 1025
 * words (one more than the window spans at most) make every in-window sequence's word distinct, so
 * nothing has to be cleared when the highest sequence jumps. Latency histograms use hist.c's
 * buckets (values < 256 exact, then 128 linear sub-buckets per power of two). */
#ifndef VSB_XDPLIVE_ACCT_H
#define VSB_XDPLIVE_ACCT_H
#include <linux/types.h>

#ifdef __bpf__
#define VSB_INLINE static __always_inline
#define VSB_BARRIER_VAR(v) __asm__ __volatile__("" : "+r"(v))
#else
#define VSB_INLINE static inline __attribute__((unused))
#define VSB_BARRIER_VAR(v) ((void)0)
#endif

#define VSB_TS_MONO (1ull << 63)           /* timestamp is CLOCK_MONOTONIC ns, not TSC */
#define VSB_KMAX_SIZES 256                 /* generator: size list entries */
#define VSB_KMAX_STREAMS 64                /* = RX_MAX_STREAMS */
#define VSB_KWIN 65536ull                  /* = RX_WINDOW */
#define VSB_KWIN_WORDS 1025u               /* VSB_KWIN / 64 + 1 */
#define VSB_KHIST_BUCKETS 4608u            /* = HIST_BUCKETS (2 * 128 + 34 * 128) */
#define VSB_KLAT_MAX_NS 100000000000ull    /* = RX_LAT_MAX_S: larger values are absurd */
#define VSB_HDR_LEN 60                     /* Ethernet + IPv4 + UDP + 18-byte signature */

/* ---- generator ---- */
enum { VSB_F_SPORT = 0, VSB_F_SIP, VSB_F_SMAC, VSB_F_DPORT, VSB_F_SMAC_SIP, VSB_F_DIP }; /* = enum flow_field */

struct vsb_gen_cfg {
	__u8 hdr[64];          /* template's first 60 bytes (headers + signature magic), rest 0 */
	__u32 sip, dip;        /* host order */
	__u32 smac24;          /* low 24 bits of the source MAC */
	__u32 ip_sum;          /* big-endian word sum of the template's first 12 IPv4 header bytes */
	__u32 flows;           /* >= 1 */
	__u32 nsizes;          /* 1..VSB_KMAX_SIZES */
	__u16 sport, dport;
	__u16 stream;
	__u8 field, epoch;
	__u16 wire[VSB_KMAX_SIZES]; /* frame lengths without FCS, cycled per frame */
	/* schedule, set per run: departures of `burst` frames every period_fp / 1024 ns from the
	 * state's next_fp; period_fp 0 = every iteration sends. Nothing is sent from end_ns on (0:
	 * no end) nor beyond `limit` frames (0: none): those iterations only drop. */
	__u64 period_fp, end_ns, limit;
	__u64 gap_ns;          /* a gap longer than this between two iterations skips (0: catch up) */
	__u32 burst, pad2;
};

struct vsb_gen_state {         /* written by the program only (one runner: the engine's thread) */
	__u64 frames;          /* frames given XDP_TX: the exact TX count */
	__u64 bytes;           /* with FCS */
	__u64 errors;          /* frames not sent (tail adjustment failed) */
	__u32 sidx, flow;      /* next size index, next flow */
	__u32 seq;             /* next sequence number */
	__u32 in_burst;        /* frames of the current departure already sent */
	__u64 next_fp;         /* next departure, CLOCK_MONOTONIC ns x 1024 */
	__u64 idle;            /* iterations that sent nothing (early, or past the end) */
	__u64 last_ns;         /* when the last frame was sent */
	__u64 iter_ns;         /* when the last iteration ran (0: none yet in this call) */
	__u64 skipped;         /* departures skipped in gaps, frames */
	__u64 gaps, gap_max_ns;
};

/* A gap: more than gap_ns since the last iteration (the CPU did not run the program: a stall of
 * the tester). The whole departures due in it are skipped and counted (the schedule moves on), so
 * they are not sent back to back afterwards into the peer's ring. Lateness from before the gap is
 * kept (caught up as before). */
VSB_INLINE void vsb_gen_gap(const struct vsb_gen_cfg *c, struct vsb_gen_state *st, __u64 now_ns)
{
	__u64 last = st->iter_ns;
	st->iter_ns = now_ns;
	if (!c->gap_ns || !c->period_fp || !last || now_ns <= last + c->gap_ns || st->in_burst)
		return;
	__u64 gap = now_ns - last, now_fp = now_ns << 10;
	if (now_fp <= st->next_fp)
		return;
	__u64 behind = now_fp - st->next_fp, gap_fp = gap << 10;
	if (behind > gap_fp)
		behind = gap_fp;
	__u64 departures = behind / c->period_fp;
	if (!departures)
		return;
	st->next_fp += departures * c->period_fp;
	st->skipped += departures * c->burst;
	st->gaps++;
	if (gap > st->gap_max_ns)
		st->gap_max_ns = gap;
}

/* The generator's pacing decision for one iteration at time now_ns: 1 = send a frame (and the
 * schedule advances), 0 = drop the iteration. A late departure is sent at once, frame after frame,
 * until the schedule is caught up (as the userspace generator does), unless a gap made it late
 * (vsb_gen_gap: skipped). The limit counts frames sent and skipped. */
VSB_INLINE int vsb_gen_due(const struct vsb_gen_cfg *c, struct vsb_gen_state *st, __u64 now_ns)
{
	vsb_gen_gap(c, st, now_ns);
	if ((c->end_ns && now_ns >= c->end_ns) || (c->limit && st->frames + st->skipped >= c->limit))
		return 0;
	if (!c->period_fp)
		return 1;
	if (st->in_burst == 0 && (now_ns << 10) < st->next_fp)
		return 0;
	if (++st->in_burst >= c->burst) {
		st->in_burst = 0;
		st->next_fp += c->period_fp;
	}
	return 1;
}

/* ---- sink ---- */
struct vsb_sink_cfg {
	__u64 tsc0, ns0;       /* anchor: TSC tsc0 was CLOCK_MONOTONIC ns0 */
	__u64 mult;            /* ns per TSC tick << 32 (0: TSC stamps get no latency) */
	__u8 epoch, check_udp, pad[6];
};

struct vsb_sink_sum {          /* totals, updated atomically */
	__u64 frames;          /* engine frames of this epoch */
	__u64 unique;
	__u64 stale, foreign, malformed, overflow_streams;
	__u64 nstreams;        /* stream slots in use */
};

struct vsb_khist {
	__u64 count, min, max, sum, overflow;
	__u64 b[VSB_KHIST_BUCKETS];
};

struct vsb_kword { __u64 tag, bits; };

struct vsb_kstream {
	__u64 rx, unique, duplicated, reordered, bytes;
	__u64 max_seq_ext;     /* highest extended sequence + 1 */
	__u64 have_prev, prev_tx_ns, prev_rx_ns;
	__u64 jitter16;        /* 16 x RFC 3550 J, ns */
	__u64 first_rx_ns, last_rx_ns;
	__u64 no_ts;           /* frames whose stamp could not be converted (no latency) */
	__u32 stream, used;
	struct vsb_khist lat, ipdv_pos, ipdv_neg;
	struct vsb_kword win[VSB_KWIN_WORDS];
};

/* ---- shared helpers ---- */

/* hist.c's bucket index without count-leading-zeros (BPF has none). */
VSB_INLINE __u32 vsb_hist_index(__u64 v, int *ovf)
{
	if (v < 256)
		return (__u32)v;
	__u64 t = v;
	__u32 m = 0;
	if (t >> 32) { t >>= 32; m += 32; }
	if (t >> 16) { t >>= 16; m += 16; }
	if (t >> 8) { t >>= 8; m += 8; }
	if (t >> 4) { t >>= 4; m += 4; }
	if (t >> 2) { t >>= 2; m += 2; }
	if (t >> 1) { m += 1; }
	__u32 e = m - 7;
	__u64 idx = 256 + (__u64)(e - 1) * 128 + ((v >> e) - 128);
	if (idx >= VSB_KHIST_BUCKETS) {
		*ovf = 1;
		return VSB_KHIST_BUCKETS - 1;
	}
	return (__u32)idx;
}

VSB_INLINE void vsb_khist_record(struct vsb_khist *h, __u64 v)
{
	int ovf = 0;
	__u32 i = vsb_hist_index(v, &ovf);
	VSB_BARRIER_VAR(i);
	if (i >= VSB_KHIST_BUCKETS)
		return;
	h->b[i]++;
	h->overflow += ovf;
	if (h->count == 0 || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->count++;
	h->sum += v;
}

VSB_INLINE __u32 vsb_win_slot(__u64 x)
{
	__u32 slot = (__u32)((x >> 6) % VSB_KWIN_WORDS);
	VSB_BARRIER_VAR(slot);
	return slot;
}

/* 1 if x is marked seen (x inside the window), 0 if not; -1 only on an impossible slot. */
VSB_INLINE int vsb_win_test(const struct vsb_kstream *s, __u64 x)
{
	__u32 slot = vsb_win_slot(x);
	if (slot >= VSB_KWIN_WORDS)
		return -1;
	const struct vsb_kword *w = &s->win[slot];
	return w->tag == (x >> 6) && ((w->bits >> (x & 63)) & 1);
}

VSB_INLINE void vsb_win_set(struct vsb_kstream *s, __u64 x)
{
	__u32 slot = vsb_win_slot(x);
	if (slot >= VSB_KWIN_WORDS)
		return;
	struct vsb_kword *w = &s->win[slot];
	if (w->tag != (x >> 6)) {
		w->tag = x >> 6;
		w->bits = 0;
	}
	w->bits |= 1ull << (x & 63);
}

enum { VSB_K_INORDER = 0, VSB_K_REORDERED, VSB_K_DUPLICATE, VSB_K_OLD };

/* Account one engine frame of this epoch: sequence seq, stamp tx_ns (CLOCK_MONOTONIC ns; have_ts 0
 * if the stamp could not be read as one), received at rx_ns with `bytes` bytes (with FCS). Returns
 * the class; the frame counts as unique for VSB_K_INORDER and VSB_K_REORDERED. Mirrors
 * rxstats_account() rule for rule (see rxstats.c). */
VSB_INLINE int vsb_kacct(struct vsb_kstream *s, __u32 seq, __u64 tx_ns, int have_ts, __u64 rx_ns,
			 __u32 bytes)
{
	s->rx++;
	s->bytes += bytes;
	if (s->rx == 1)
		s->first_rx_ns = rx_ns;
	s->last_rx_ns = rx_ns;
	if (have_ts && rx_ns >= tx_ns && rx_ns - tx_ns < VSB_KLAT_MAX_NS)
		vsb_khist_record(&s->lat, rx_ns - tx_ns);
	if (!have_ts)
		s->no_ts++;

	__u64 x;
	int in_order;
	if (s->unique == 0 && s->max_seq_ext == 0) {
		x = seq;
		in_order = 1;
	} else {
		__u64 hi = s->max_seq_ext - 1;
		__s32 delta = (__s32)(seq - (__u32)hi);
		if (delta < 0 && (__u64)(-(__s64)delta) > hi) {
			s->reordered++;
			return VSB_K_OLD;
		}
		x = hi + (__u64)(__s64)delta;
		in_order = x >= s->max_seq_ext;
	}
	if (in_order) {
		vsb_win_set(s, x);
		s->max_seq_ext = x + 1;
		s->unique++;
		if (s->have_prev && have_ts) {
			__s64 d = (__s64)((rx_ns - s->prev_rx_ns) - (tx_ns - s->prev_tx_ns));
			__u64 a = d < 0 ? (__u64)0 - (__u64)d : (__u64)d;
			if (a < VSB_KLAT_MAX_NS) {
				/* J += (|D| - J) / 16, kept as 16 J */
				s->jitter16 = s->jitter16 + a - s->jitter16 / 16;
				if (d >= 0)
					vsb_khist_record(&s->ipdv_pos, a);
				else
					vsb_khist_record(&s->ipdv_neg, a);
			}
		}
		s->have_prev = have_ts;
		s->prev_tx_ns = tx_ns;
		s->prev_rx_ns = rx_ns;
		return VSB_K_INORDER;
	}
	if (s->max_seq_ext - x > VSB_KWIN) {
		s->reordered++;
		return VSB_K_OLD;
	}
	if (vsb_win_test(s, x)) {
		s->duplicated++;
		return VSB_K_DUPLICATE;
	}
	vsb_win_set(s, x);
	s->unique++;
	s->reordered++;
	return VSB_K_REORDERED;
}

/* A TSC stamp -> CLOCK_MONOTONIC ns with the sink's anchor; 0 if it cannot be converted. */
VSB_INLINE int vsb_tsc_to_mono(const struct vsb_sink_cfg *c, __u64 tsc, __u64 *ns)
{
	if (!c->mult)
		return 0;
	__s64 d = (__s64)(tsc - c->tsc0);
	__u64 a = d < 0 ? (__u64)0 - (__u64)d : (__u64)d;
	if (a >= (1ull << 31))             /* about 0.8 s from the anchor (refreshed every 20 ms) */
		return 0;
	__u64 dn = (a * c->mult) >> 32;
	*ns = d < 0 ? c->ns0 - dn : c->ns0 + dn;
	return 1;
}

/* One's complement helpers (big-endian word sums, host order), as frame.c writes them. */
VSB_INLINE __u16 vsb_csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

#endif
