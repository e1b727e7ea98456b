/* gen, sink and loop (modes.h): the tester's sending and receiving sides. */
#include <string.h>
#include <stdio.h>
#include "engine.h"
#include "gen_workers.h"
#include "generator.h"
#include "kern_rx.h"
#include "modes.h"
#include "records.h"
#include "trial.h"
#include "tsc.h"

struct ticker { /* periodic interval records */
	double every;
	uint64_t next, last, period;
	uint64_t last_tx, last_rx;
};

static void ticker_init(struct ticker *k, double every, uint64_t now)
{
	memset(k, 0, sizeof(*k));
	k->every = every;
	k->period = (uint64_t)(every * tsc_hz());
	k->last = now;
	k->next = every > 0 ? now + k->period : UINT64_MAX;
}

static void ticker_maybe(struct ticker *k, uint64_t now, uint64_t start, uint64_t tx, uint64_t rx)
{
	if (now < k->next)
		return;
	double dt = (now - k->last) / tsc_hz();
	emit_interval((now - start) / tsc_hz(), tx, rx, dt, tx - k->last_tx, rx - k->last_rx);
	k->last = now;
	k->last_tx = tx;
	k->last_rx = rx;
	k->next += k->period;
	if (k->next < now)
		k->next = now + k->period;
}

/* The kernel generator keeps the schedule itself (xdplive) when departures come faster than 1000/s,
 * or as fast as possible: one BPF_PROG_RUN call then covers about 10 ms, and the program sends each
 * frame at its departure time (iterations before it only drop). Slower schedules are kept here, one
 * call per departure. Either way at most a few hundred calls a second: every call registers an XDP
 * memory model whose id (65534 for the whole system) stays taken for about a second when its frames
 * are still in flight at the end; a call per departure at 100 kpps ran the kernel out of them
 * (BPF_PROG_RUN and AF_XDP binds failed with ENOSPC/EBUSY). */
static int kern_paced(const struct txgen *g) { return g->kern && (g->rate <= 0 || g->rate / g->burst >= 1000); }

static uint64_t kern_send_phase(struct engine *en, struct txgen *g, struct port *rxp, double seconds,
				struct ticker *k)
{
	uint64_t start = tsc_now(), start_ns = mono_ns_now();
	uint64_t end = seconds > 0 ? start + (uint64_t)(seconds * tsc_hz()) : UINT64_MAX;
	uint64_t end_ns = seconds > 0 ? start_ns + (uint64_t)(seconds * 1e9) : 0;
	double period_ns = g->rate > 0 ? 1e9 * g->burst / g->rate : 0;
	/* the generator's own gap limit (txgen_init_on): a worker thread runs this without `en` */
	int err = g->kern->gen_schedule(g->port, start_ns, period_ns, g->burst, end_ns, g->limit,
					g->gap_ns);
	if (err) {
		g->kern_err = err;
		return start;
	}
	txgen_start(g, start);
	uint64_t now = start, iters = g->rate > 0 ? 16384 : g->batch;
	while (!vsb_stop && now < end && (!g->limit || g->sent + g->skipped < g->limit) && !g->kern_err) {
		uint64_t t0 = now;
		uint32_t n = (uint32_t)iters;
		if (g->rate <= 0 && g->limit && g->limit - g->sent < n)
			n = (uint32_t)(g->limit - g->sent);
		err = g->kern->gen_send(g->port, n, &g->sent, &g->bytes);
		if (err)
			g->kern_err = err;
		uint64_t max_ns;
		g->kern->gen_gaps(g->port, &g->skipped, &g->gaps, &max_ns);
		g->gap_max_ticks = (uint64_t)(max_ns * 1e-9 * tsc_hz());
		now = tsc_now();
		if (g->rate > 0 && now > t0) { /* about 10 ms per call */
			double per_s = n / ((now - t0) / tsc_hz());
			iters = (uint64_t)VSB_MAX(256.0, VSB_MIN(per_s * 0.01, (double)(1u << 22)));
		}
		if (k)
			ticker_maybe(k, now, start, g->sent, rx_seen_now(en, rxp));
		else if (rxp)
			rx_seen_now(en, rxp);
	}
	/* the kernel sent nothing from end_ns on: the sending period is exactly `seconds`; a run that
	 * reached its frame count ended with its last departure (the call's remaining iterations only
	 * dropped) */
	if (now >= end && end != UINT64_MAX)
		return end;
	if (g->limit && g->sent + g->skipped >= g->limit) {
		uint64_t last = g->kern->gen_last_ns(g->port);
		double s = last > start_ns ? (last - start_ns + period_ns) / 1e9 : 0;
		return start + (uint64_t)(s * tsc_hz());
	}
	return now;
}

/* Send (and optionally receive on rxp) for `seconds` or `count` frames. Returns the end TSC. */
static uint64_t send_phase(struct engine *en, struct txgen *g, struct port *rxp, double seconds,
			   struct ticker *k)
{
	if (kern_paced(g))
		return kern_send_phase(en, g, rxp, seconds, k);
	if (g->kern) /* the schedule is kept here: the kernel sends what each call asks for */
		g->kern->gen_schedule(g->port, 0, 0, 1, 0, g->limit, 0);
	uint64_t start = tsc_now();
	uint64_t end = seconds > 0 ? start + (uint64_t)(seconds * tsc_hz()) : UINT64_MAX;
	struct io_buf b[IO_MAX_BATCH];
	int krx = rxp && en->ops->kern; /* the kernel accounts what arrives: nothing to poll here */
	txgen_start(g, start);
	uint64_t now = start;
	while (!vsb_stop && now < end && (!g->limit || g->sent + g->skipped < g->limit) &&
	       !g->kern_err) {
		txgen_step(g, now);
		if (rxp && !krx) {
			unsigned n = en->ops->rx_get(rxp->io, b, en->o.batch, 0);
			if (n) {
				rx_account_batch(en, b, n, tsc_now());
				en->ops->rx_put(rxp->io, b, n);
			}
		} else if (g->rate > 0) {
			uint64_t due = txgen_next_due(g);
			uint64_t until = VSB_MIN(due, VSB_MIN(end, k ? k->next : UINT64_MAX));
			if (krx) /* the kernel sink's clock anchor is refreshed from rx_poll: wake for it */
				until = VSB_MIN(until, tsc_now() + (uint64_t)(0.01 * tsc_hz()));
			wait_until(until);
		}
		now = tsc_now();
		if (k)
			ticker_maybe(k, now, start, g->sent, rx_seen_now(en, rxp));
		else if (krx)
			rx_seen_now(en, rxp);
	}
	return now;
}

/* The send phase of generators 1..N-1 (gen_workers.h): no receive port, no interval records. */
static uint64_t worker_phase(struct txgen *g, double seconds) { return send_phase(NULL, g, NULL, seconds, NULL); }

static double tx_period(const struct txgen *g, uint64_t end)
{
	double s = (end - g->start_tsc) / tsc_hz();
	if (g->rate > 0 && g->limit && g->sent + g->skipped >= g->limit) {
		double sched = (double)(g->sent + g->skipped) / g->rate;
		if (sched > s)
			s = sched;
	}
	return s;
}

static void tx_gaps(const struct txgen *g, struct trial_result *r)
{
	r->tx_skipped = g->skipped;
	r->tx_gaps = g->gaps;
	r->tx_gap_max_s = g->gap_max_ticks / tsc_hz();
}

static void check_rate(const struct trial_params *t, struct trial_result *r)
{
	if (t->flow_arrival > 0 && t->rate > 0 && t->rate < t->flow_arrival)
		trial_warn(r, "--rate %.0f pps is below --flow-arrival %.0f flows/s: some flows of the churn "
			   "carried no frame", t->rate, t->flow_arrival);
	if (t->rate <= 0 || r->tx_s <= 0)
		return;
	double achieved = (r->tx_frames + r->tx_skipped) / r->tx_s; /* skipped: the tester's gaps */
	if (achieved < 0.99 * t->rate)
		trial_warn(r, "requested %.0f pps but achieved only %.0f pps (%.1f %%): the generator is the "
			   "bottleneck at this rate", t->rate, achieved, 100.0 * achieved / t->rate);
}

static int warmup(struct engine *en, const struct trial_params *t, struct port *rxp,
		  struct trial_result *r)
{
	if (t->warmup <= 0)
		return 0;
	struct txgen g;
	struct vsb_error e = {0};
	en->tmpl->epoch = t->epoch ^ 0x80;
	if (txgen_init(&g, en, &en->ports[0], t, &e)) {
		trial_warn(r, "%s", e.msg);
		return e.code;
	}
	g.limit = 0;
	send_phase(en, &g, rxp, t->warmup, NULL);
	txgen_churn_done(&g, en, NULL);
	en->tmpl->epoch = t->epoch;
	return 0;
}

/* After a kernel generator's run: its errors and the frames its port's peer refused (of all the
 * port's generators: sent and kern_err are their totals). */
static int kern_tx_check(struct engine *en, struct txgen *g, uint64_t sent, int kern_err,
			 struct trial_result *r)
{
	if (!g->kern)
		return 0;
	struct io_port_stats ps;
	en->ops->stats(en->ports[0].io, &ps);
	if (ps.tx_errors)
		trial_warn(r, "%s: %llu of %llu frames did not reach the veth peer (ring full, or no NAPI: "
			   "give it XDP or GRO, set once it is up)", en->ports[0].name,
			   (unsigned long long)ps.tx_errors, (unsigned long long)sent);
	if (kern_err) {
		trial_warn(r, "BPF_PROG_RUN with live frames failed: %s", strerror(-kern_err));
		return VSB_ERR_IO;
	}
	return 0;
}

int run_gen(struct engine *en, const struct trial_params *t, struct trial_result *r)
{
	struct txgen g;
	struct ticker k;
	struct vsb_error e = {0};
	int rc = warmup(en, t, NULL, r);
	if (rc)
		return rc;
	en->tmpl->epoch = t->epoch;
	if (txgen_init(&g, en, &en->ports[0], t, &e)) {
		trial_warn(r, "%s", e.msg);
		return e.code;
	}
	struct gen_workers gw;
	if (gen_workers_start(&gw, en, t, &g, worker_phase, &e)) {
		trial_warn(r, "%s", e.msg);
		return e.code;
	}
	ticker_init(&k, t->interval, tsc_now());
	double cpu0 = cpu_process_s();
	gen_workers_go(&gw);
	uint64_t end = send_phase(en, &g, NULL, t->duration, &k);
	if (en->ops->tx_flush)
		en->ops->tx_flush(en->ports[0].io);
	uint64_t sent = g.sent, bytes = g.bytes;
	int kern_err = g.kern_err;
	gen_workers_finish(&gw, &g, r, &sent, &bytes, &kern_err);
	r->cpu_s = cpu_process_s() - cpu0;
	txgen_churn_done(&g, en, r);
	r->tx_frames = sent;
	r->tx_bytes = bytes;
	tx_gaps(&g, r);
	r->tx_s = tx_period(&g, end);
	r->interrupted = vsb_stop;
	check_rate(t, r);
	return kern_tx_check(en, &g, sent, kern_err, r);
}

int run_sink(struct engine *en, const struct trial_params *t, struct trial_result *r)
{
	struct io_buf b[IO_MAX_BATCH];
	struct ticker k;
	if (en->ops->kern)
		return run_sink_kern(en, t, r);
	rxstats_reset(&en->rx, t->epoch);
	uint64_t start = tsc_now(), now = start, first = 0, last = 0;
	uint64_t end = t->duration > 0 ? start + (uint64_t)(t->duration * tsc_hz()) : UINT64_MAX;
	uint64_t idle = t->idle > 0 ? (uint64_t)(t->idle * tsc_hz()) : UINT64_MAX;
	uint64_t got = 0;
	ticker_init(&k, t->interval, start);
	double cpu0 = cpu_process_s();
	while (!vsb_stop && now < end && (!t->count || got < t->count)) {
		unsigned n = en->ops->rx_get(en->ports[0].io, b, en->o.batch, 10000);
		now = tsc_now();
		if (n) {
			if (!first)
				first = now;
			last = now;
			got += n;
			rx_account_batch(en, b, n, now);
			en->ops->rx_put(en->ports[0].io, b, n);
		} else if (first && now - last > idle) {
			break;
		}
		ticker_maybe(&k, now, start, 0, got);
	}
	r->cpu_s = cpu_process_s() - cpu0;
	r->rx_s = first ? (last - first) / tsc_hz() : 0;
	r->interrupted = vsb_stop;
	r->latency_kind = 1;
	return 0;
}

int run_loop(struct engine *en, const struct trial_params *t, struct trial_result *r)
{
	struct io_buf b[IO_MAX_BATCH];
	struct txgen g;
	struct ticker k;
	struct port *rxp = en->nports == 2 ? &en->ports[1] : &en->ports[0];
	struct vsb_error e = {0};
	const struct io_kern_ops *kern = en->ops->kern;
	int rc = warmup(en, t, rxp, r);
	if (rc)
		return rc;
	rxstats_reset(&en->rx, t->epoch);
	if (kern && kern->rx_reset(rxp->io, t->epoch, &e)) {
		trial_warn(r, "%s", e.msg);
		return e.code;
	}
	en->tmpl->epoch = t->epoch;
	if (txgen_init(&g, en, &en->ports[0], t, &e)) {
		trial_warn(r, "%s", e.msg);
		return e.code;
	}
	struct gen_workers gw;
	if (gen_workers_start(&gw, en, t, &g, worker_phase, &e)) {
		trial_warn(r, "%s", e.msg);
		return e.code;
	}
	ticker_init(&k, t->interval, tsc_now());
	double cpu0 = cpu_process_s();
	gen_workers_go(&gw);
	uint64_t end = send_phase(en, &g, rxp, t->duration, &k);
	if (en->ops->tx_flush)
		en->ops->tx_flush(en->ports[0].io);
	uint64_t sent = g.sent, bytes = g.bytes;
	int kern_err = g.kern_err;
	gen_workers_finish(&gw, &g, r, &sent, &bytes, &kern_err);
	double krx_s = 0;
	if (kern) /* drain and collect in the kernel sink */
		kern_rx_finish(en, rxp, sent, t->drain, t->drain_quiet, &krx_s);
	/* Drain: frames still in flight, until all arrived, the drain time is over, or (drain_quiet)
	 * nothing arrived for that long: the path is empty unless it holds frames that long. */
	uint64_t last_rx = tsc_now(), drain_end = last_rx + (uint64_t)(t->drain * tsc_hz());
	uint64_t quiet = t->drain_quiet > 0 ? (uint64_t)(t->drain_quiet * tsc_hz()) : UINT64_MAX;
	while (!kern && !vsb_stop && tsc_now() < drain_end) {
		struct rx_totals tot;
		rxstats_totals(&en->rx, &tot);
		if (tot.unique >= sent)
			break;
		unsigned n = en->ops->rx_get(rxp->io, b, en->o.batch, 1000);
		if (n) {
			last_rx = tsc_now();
			rx_account_batch(en, b, n, last_rx);
			en->ops->rx_put(rxp->io, b, n);
		} else if (tsc_now() - last_rx > quiet) { /* polled after the gap: nothing came */
			break;
		}
	}
	r->cpu_s = cpu_process_s() - cpu0;
	txgen_churn_done(&g, en, r);
	r->tx_frames = sent;
	r->tx_bytes = bytes;
	tx_gaps(&g, r);
	r->tx_s = tx_period(&g, end);
	r->rx_s = r->tx_s;
	r->interrupted = vsb_stop;
	r->latency_kind = en->nports == 2 ? 1 : 2;
	check_rate(t, r);
	return kern_tx_check(en, &g, sent, kern_err, r);
}
