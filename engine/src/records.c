/* The JSON-lines records (records.h): start, interval, warning, final. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"
#include "jout.h"
#include "modes.h"
#include "records.h"
#include "trial.h"
#include "tsc.h"

static void addr_fields(struct jout *j, const struct frame_addrs *a)
{
	char mac[18], ip[16];
	jout_key_obj(j, "addrs");
	fmt_mac(a->smac, mac);
	jout_str(j, "src_mac", mac);
	fmt_mac(a->dmac, mac);
	jout_str(j, "dst_mac", mac);
	fmt_ip4(a->sip, ip);
	jout_str(j, "src_ip", ip);
	fmt_ip4(a->dip, ip);
	jout_str(j, "dst_ip", ip);
	jout_u64(j, "src_port", a->sport);
	jout_u64(j, "dst_port", a->dport);
	jout_end_obj(j);
}

static void common_fields(struct jout *j, const struct engine *en, const struct trial_params *t)
{
	jout_str(j, "mode", t->mode->name);
	jout_str(j, "io", en->ops->name);
	jout_key_arr(j, "ports");
	for (int i = 0; i < en->nports; i++)
		jout_str(j, NULL, en->ports[i].name);
	jout_end_arr(j);
}

void emit_start(const struct engine *en, const struct trial_params *t)
{
	struct jout j;
	const struct tsc_info *ti = tsc_info();
	jout_begin(&j);
	jout_str(&j, "type", "start");
	jout_str(&j, "version", VSB_VERSION);
	common_fields(&j, en, t);
	if (en->o.netns)
		jout_str(&j, "netns", en->o.netns);
	jout_i64(&j, "cpu", en->o.cpu);
	jout_dbl(&j, "requested_pps", t->rate);
	jout_u64(&j, "burst", t->burst);
	jout_u64(&j, "flows", t->flows);
	jout_str(&j, "size", en->o.size_spec);
	if (t->flow_arrival > 0) {
		jout_dbl(&j, "flow_arrival", t->flow_arrival);
		jout_dbl(&j, "flow_life", t->flow_life);
	}
	jout_dbl(&j, "mean_frame_size", t->sizes->mean);
	jout_dbl(&j, "tsc_hz", ti->hz);
	jout_bool(&j, "tsc_invariant", ti->invariant);
	jout_u64(&j, "stream_id", t->stream);
	addr_fields(&j, &en->tmpl->a);
	jout_end_obj(&j);
	jout_emit(&j);
}

void emit_interval(double t_s, uint64_t tx, uint64_t rx, double dt, uint64_t dtx, uint64_t drx)
{
	struct jout j;
	jout_begin(&j);
	jout_str(&j, "type", "interval");
	jout_dbl(&j, "t", t_s);
	jout_u64(&j, "tx_frames", tx);
	jout_u64(&j, "rx_frames", rx);
	jout_dbl(&j, "tx_pps", dt > 0 ? dtx / dt : 0);
	jout_dbl(&j, "rx_pps", dt > 0 ? drx / dt : 0);
	jout_end_obj(&j);
	jout_emit(&j);
}

void emit_warning(const char *msg)
{
	struct jout j;
	fprintf(stderr, "vswbench-engine: warning: %s\n", msg);
	jout_begin(&j);
	jout_str(&j, "type", "warning");
	jout_str(&j, "msg", msg);
	jout_end_obj(&j);
	jout_emit(&j);
}

static void ipdv_fields(struct jout *j, const struct rxstats *rx)
{
	static const struct { const char *k; double q; } qs[] = {
		{"min", 0}, {"p1", 0.01}, {"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p999", 0.999}, {"max", 1}};
	jout_key_obj(j, "ipdv_us");
	for (unsigned i = 0; i < VSB_ARRAY_SIZE(qs); i++)
		jout_dbl(j, qs[i].k, rxstats_ipdv_quantile(rx, qs[i].q) / 1000.0);
	jout_end_obj(j);
}

static void stream_list(struct jout *j, const struct rxstats *rx)
{
	jout_key_arr(j, "streams");
	for (unsigned i = 0; i < RX_MAX_STREAMS; i++) {
		const struct stream_stats *s = &rx->s[i];
		if (!s->used)
			continue;
		jout_obj(j);
		jout_u64(j, "stream", s->stream);
		jout_u64(j, "rx_frames", s->rx);
		jout_u64(j, "unique", s->unique);
		jout_u64(j, "lost", stream_lost(s));
		jout_u64(j, "duplicated", s->duplicated);
		jout_u64(j, "reordered", s->reordered);
		jout_dbl(j, "jitter_us", s->jitter_ns / 1000.0);
		jout_latency(j, "latency_us", &s->lat);
		jout_end_obj(j);
	}
	jout_end_arr(j);
}

void emit_final(struct engine *en, const struct trial_params *t, struct trial_result *r)
{
	struct jout j;
	struct rx_totals tot;
	struct hist *lat = calloc(1, sizeof(*lat));
	double hz = tsc_hz();
	rxstats_totals(&en->rx, &tot);
	if (lat)
		rxstats_latency(&en->rx, lat);
	for (int i = 0; i < en->nports; i++)
		en->ops->stats(en->ports[i].io, &r->pstats[i]);

	uint64_t fwd = r->fwd_frames[0] + r->fwd_frames[1];
	uint64_t work = 0;
	double achieved = 0, rx_pps = 0, period = 0;
	uint64_t lost = tot.lost;
	switch (t->mode->counts) {
	case COUNT_SENT:
		work = r->tx_frames;
		period = r->tx_s;
		achieved = period > 0 ? r->tx_frames / period : 0;
		break;
	case COUNT_SENT_RECEIVED:
		work = r->tx_frames;
		period = r->tx_s;
		achieved = period > 0 ? r->tx_frames / period : 0;
		rx_pps = period > 0 ? tot.unique / period : 0;
		lost = r->tx_frames > tot.unique ? r->tx_frames - tot.unique : 0;
		break;
	case COUNT_RECEIVED:
		work = tot.rx;
		period = r->rx_s;
		rx_pps = period > 0 && tot.rx > 1 ? (tot.rx - 1) / period : 0;
		achieved = rx_pps;
		break;
	default: /* COUNT_RELAYED: reflect, fwd */
		work = fwd;
		period = r->rx_s;
		achieved = rx_pps = period > 0 && fwd > 1 ? (fwd - 1) / period : 0;
		break;
	}
	uint64_t sent_ref = t->mode->counts == COUNT_SENT_RECEIVED ? r->tx_frames : tot.unique + lost;

	jout_begin(&j);
	jout_str(&j, "type", "final");
	if (r->trial >= 0)
		jout_i64(&j, "trial", r->trial);
	common_fields(&j, en, t);
	jout_dbl(&j, "duration_s", period);
	jout_dbl(&j, "requested_pps", t->rate);
	jout_dbl(&j, "achieved_pps", achieved);
	jout_dbl(&j, "rx_pps", rx_pps);
	jout_u64(&j, "tx_frames", r->tx_frames);
	jout_u64(&j, "tx_skipped", r->tx_skipped);
	jout_u64(&j, "tx_gaps", r->tx_gaps);
	jout_dbl(&j, "tx_gap_max_us", r->tx_gap_max_s * 1e6);
	if (t->mode->counts == COUNT_SENT || t->mode->counts == COUNT_SENT_RECEIVED) {
		/* tx_frames = tx_accepted + tx_refused: what the port took apart from what its peer
		 * refused (io_port_stats.tx_refused); achieved_pps counts both, accepted_pps the first */
		uint64_t refused = VSB_MIN(r->pstats[0].tx_refused, r->tx_frames);
		jout_u64(&j, "tx_accepted", r->tx_frames - refused);
		jout_u64(&j, "tx_refused", refused);
		jout_dbl(&j, "accepted_pps", period > 0 ? (r->tx_frames - refused) / period : 0);
	}
	if (r->ngen > 1) {
		jout_key_arr(&j, "generators");
		for (unsigned i = 0; i < r->ngen; i++) {
			jout_obj(&j);
			jout_u64(&j, "stream", r->gens[i].stream);
			if (r->gens[i].cpu >= 0)
				jout_i64(&j, "cpu", r->gens[i].cpu);
			else
				jout_null(&j, "cpu");
			jout_u64(&j, "tx_frames", r->gens[i].tx_frames);
			jout_end_obj(&j);
		}
		jout_end_arr(&j);
	}
	jout_u64(&j, "tx_bytes", r->tx_bytes);
	jout_dbl(&j, "tx_gbps_wire", period > 0 ? (r->tx_bytes + 20.0 * r->tx_frames) * 8 / period / 1e9 : 0);
	jout_u64(&j, "rx_frames", tot.rx);
	jout_u64(&j, "rx_unique", tot.unique);
	jout_u64(&j, "rx_bytes", tot.bytes);
	jout_u64(&j, "lost", lost);
	jout_dbl(&j, "loss_ratio", sent_ref ? (double)lost / sent_ref : 0);
	jout_u64(&j, "duplicated", tot.duplicated);
	jout_u64(&j, "reordered", tot.reordered);
	jout_u64(&j, "stale", en->rx.stale);
	jout_u64(&j, "foreign", en->rx.foreign);
	jout_u64(&j, "malformed", en->rx.malformed);
	if (t->flow_arrival > 0) {
		jout_dbl(&j, "flow_arrival", t->flow_arrival);
		jout_dbl(&j, "flow_life", t->flow_life);
		jout_dbl(&j, "churn_active", t->flow_arrival * t->flow_life);
		jout_u64(&j, "churn_flows", r->churn_flows);
		jout_u64(&j, "churn_space", r->churn_space);
	}
	if (t->mode->counts == COUNT_RELAYED) {
		jout_u64(&j, "forwarded", fwd);
		jout_u64(&j, "fwd_dropped", r->tx_dropped);
	}
	jout_key_arr(&j, "port_stats");
	for (int i = 0; i < en->nports; i++) {
		jout_obj(&j);
		jout_str(&j, "port", en->ports[i].name);
		jout_u64(&j, "rx_dropped", r->pstats[i].rx_dropped);
		jout_u64(&j, "tx_errors", r->pstats[i].tx_errors);
		jout_end_obj(&j);
	}
	jout_end_arr(&j);
	static const char *kinds[] = {NULL, "one-way", "round-trip"};
	if (r->latency_kind && tot.unique)
		jout_str(&j, "latency_kind", kinds[r->latency_kind]);
	else
		jout_null(&j, "latency_kind");
	if (lat)
		jout_latency(&j, "latency_us", lat);
	jout_dbl(&j, "jitter_us", tot.jitter_ns / 1000.0);
	ipdv_fields(&j, &en->rx);
	jout_dbl(&j, "cpu_s", r->cpu_s);
	jout_dbl(&j, "cycles_per_packet", work ? r->cpu_s * hz / work : 0);
	jout_dbl(&j, "tsc_hz", hz);
	jout_bool(&j, "interrupted", r->interrupted);
	jout_key_arr(&j, "warnings");
	for (int i = 0; i < r->nwarn; i++)
		jout_str(&j, NULL, r->warnings[i]);
	jout_end_arr(&j);
	stream_list(&j, &en->rx);
	if (en->o.hist && lat)
		jout_hist(&j, "hist", lat);
	jout_end_obj(&j);
	jout_emit(&j);
	free(lat);
}
