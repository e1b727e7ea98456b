/* xdplive: conversions between the BPF maps' layouts (xdplive_acct.h) and the engine's structures. */
#ifndef VSB_XDPLIVE_RX_H
#define VSB_XDPLIVE_RX_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct vsb_khist;
struct vsb_kstream;
struct vsb_sink_sum;
struct vsb_gen_cfg;
struct hist;
struct stream_stats;
struct rxstats;
struct frame_tmpl;
struct size_seq;

void xdplive_hist_import(const struct vsb_khist *k, struct hist *h);
void xdplive_stream_import(const struct vsb_kstream *k, struct stream_stats *s);
/* Replace rx's streams and counters (its epoch stays) with the n kernel records and totals.
 * Returns first-to-last receive time in s. */
double xdplive_import(const struct vsb_kstream *ks, unsigned n, const struct vsb_sink_sum *sum,
		      struct rxstats *rx);
/* The generator program's config for template t, sizes s, flows. 0, or -1 with msg. */
int xdplive_gen_config(const struct frame_tmpl *t, const struct size_seq *s, uint32_t flows,
		       struct vsb_gen_cfg *c, char *msg, size_t n);

#endif
