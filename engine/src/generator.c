/* The generator (generator.h): paced or unpaced departures of the template, one frame size and flow
 * after the other, or flow churn; an in-kernel generator (io_kern_ops) builds and sends them itself. */
#include <string.h>
#include <time.h>
#include "engine.h"
#include "generator.h"
#include "trial.h"
#include "tsc.h"

int txgen_init(struct txgen *g, struct engine *en, struct port *p, const struct trial_params *t,
	       struct vsb_error *e)
{
	return txgen_init_on(g, en, p->io, en->tmpl, t, e);
}

int txgen_init_on(struct txgen *g, struct engine *en, struct io_port *io, const struct frame_tmpl *tmpl,
		  const struct trial_params *t, struct vsb_error *e)
{
	memset(g, 0, sizeof(*g));
	g->ops = en->ops;
	g->port = io;
	g->tmpl = tmpl;
	g->sizes = t->sizes;
	g->rate = t->rate;
	g->burst = t->burst ? t->burst : 1;
	g->batch = en->o.batch;
	g->limit = t->count;
	g->flows = t->flows ? t->flows : 1;
	if (g->rate > 0)
		g->ticks_per_burst = tsc_hz() * g->burst / g->rate;
	if (g->rate > 0 && en->o.gap_us > 0) {
		g->gap_ticks = (uint64_t)(en->o.gap_us * 1e-6 * tsc_hz());
		g->gap_ns = (uint64_t)(en->o.gap_us * 1e3);
	}
	g->kern = en->ops->kern;
	if (t->flow_arrival > 0) {
		if (churn_supported(en, t, e))
			return e->code;
		const struct frame_addrs *a = &en->tmpl->a;
		g->churning = 1;
		churn_init(&g->churn, t->flow_arrival, t->flow_life,
			   churn_space(en->tmpl->field, en->tmpl->field == FLOW_DIP ? a->dip : a->sip, a->sport, a->dport), en->churn_base, tsc_hz(), 0);
	}
	if (g->kern) {
		g->batch = g->kern->gen_chunk();
		return g->kern->gen_prepare(g->port, g->tmpl, g->sizes, g->flows, e);
	}
	return 0;
}

void txgen_share(struct txgen *g, unsigned i, unsigned n)
{
	if (n <= 1)
		return;
	g->rate /= n;
	if (g->rate > 0)
		g->ticks_per_burst = tsc_hz() * g->burst / g->rate;
	if (g->limit)
		g->limit = g->limit / n + (i < g->limit % n);
}

void txgen_start(struct txgen *g, uint64_t now)
{
	g->start_tsc = now;
	if (g->churning)
		churn_init(&g->churn, g->churn.arrival, g->churn.life, g->churn.space, g->churn.base,
			   g->churn.hz, now);
}

int churn_supported(const struct engine *en, const struct trial_params *t, struct vsb_error *e)
{
	if (t->flow_arrival <= 0)
		return 0;
	if (en->ops->kern)
		return vsb_fail(e, VSB_ERR_UNSUPPORTED, "--io %s: the in-kernel generator sends a fixed "
				"round-robin set of flows; flow churn (--flow-arrival/--flow-life) needs a "
				"userspace L2 backend: --io afpacket, afxdp or dpdk", en->ops->name);
	if (en->ops->layer != IO_L2)
		return vsb_fail(e, VSB_ERR_UNSUPPORTED, "--io %s opens one socket per flow and cannot churn "
				"flows (--flow-arrival/--flow-life); use --io afpacket, afxdp or dpdk",
				en->ops->name);
	char msg[512];
	const struct frame_addrs *a = &en->tmpl->a;
	uint32_t space = churn_space(en->tmpl->field, en->tmpl->field == FLOW_DIP ? a->dip : a->sip, a->sport, a->dport);
	if (churn_check(t->flow_arrival, t->flow_life, space, "--flow-arrival", "--flow-life", msg,
			sizeof(msg)))
		return vsb_fail(e, VSB_ERR_USAGE, "%s", msg);
	return 0;
}

void txgen_churn_done(const struct txgen *g, struct engine *en, struct trial_result *r)
{
	if (!g->churning)
		return;
	if (r) {
		r->churn_flows = g->churn.started;
		r->churn_space = g->churn.space;
	}
	en->churn_base = churn_next_base(&g->churn) % g->churn.space;
}

uint64_t txgen_next_due(const struct txgen *g)
{
	if (g->rate <= 0)
		return 0;
	uint64_t departures = (g->sent + g->skipped) / g->burst;
	return g->start_tsc + (uint64_t)(departures * g->ticks_per_burst);
}

/* A gap: the generator fell behind its schedule by more than gap_ticks since its last step (the
 * thread did not run: a stall of the tester's CPU; a slow generator falls behind a little at each
 * step, and a deliberate sleep until a departure makes no lateness). The whole departures due in
 * the gap are skipped, counted, and not sent back to back afterwards. */
static void skip_gap(struct txgen *g, uint64_t now)
{
	if (!g->gap_ticks)
		return;
	uint64_t next = txgen_next_due(g);
	int64_t late = now > next ? (int64_t)(now - next) : 0;
	int64_t grew = late - (g->late > 0 ? g->late : 0);
	if (grew > (int64_t)g->gap_ticks) {
		uint64_t departures = (uint64_t)(grew / g->ticks_per_burst);
		g->skipped += departures * g->burst;
		g->gaps++;
		if ((uint64_t)grew > g->gap_max_ticks)
			g->gap_max_ticks = (uint64_t)grew;
		next = txgen_next_due(g);
		late = now > next ? (int64_t)(now - next) : 0;
	}
	g->late = late;
}

unsigned txgen_step(struct txgen *g, uint64_t now)
{
	uint64_t due;
	if (g->rate > 0) {
		if (now < g->start_tsc)
			return 0;
		skip_gap(g, now);
		uint64_t departures = (uint64_t)((now - g->start_tsc) / g->ticks_per_burst) + 1;
		due = departures * g->burst;
	} else {
		due = g->sent + g->batch;
	}
	uint64_t pos = g->sent + g->skipped;  /* departures sent or skipped */
	if (g->limit && due > g->limit)
		due = g->limit;
	if (due <= pos)
		return 0;
	unsigned n = (unsigned)VSB_MIN(due - pos, (uint64_t)g->batch);
	if (g->kern) { /* the kernel builds, stamps and sends them; the totals are its counters */
		uint64_t before = g->sent;
		int err = g->kern->gen_send(g->port, n, &g->sent, &g->bytes);
		if (err)
			g->kern_err = err;
		return (unsigned)(g->sent - before);
	}
	struct io_buf b[IO_MAX_BATCH];
	n = g->ops->tx_get(g->port, b, n);
	if (!n)
		return 0;
	const struct frame_tmpl *t = g->tmpl;
	int l2 = g->ops->layer == IO_L2;
	uint64_t ts = tsc_now();
	/* churn (L2 backends only, churn_supported): a local copy of the schedule, so the frame
	 * writes cannot alias it; one call site of the (inlined) frame writer for both kinds of flows */
	int churning = g->churning;
	struct churn c;
	if (churning) {
		/* the schedule's time of this batch's first frame (now, unpaced): a generator that fell
		 * behind and catches up sends the frames to the flows they were due to, so which flows
		 * exist and what each carries does not depend on the scheduler's hiccups */
		c = g->churn;
		churn_advance(&c, g->rate > 0 ? txgen_next_due(g) : ts);
	}
	for (unsigned i = 0; i < n; i++) {
		unsigned size = g->sizes->sizes[g->size_idx];
		if (++g->size_idx == g->sizes->n)
			g->size_idx = 0;
		uint32_t seq = (uint32_t)(g->sent + i);
		uint32_t flow = g->flow;
		if (churning)
			flow = churn_next(&c);
		else if (++g->flow == g->flows)
			g->flow = 0;
		b[i].len = l2 ? frame_write_l2(t, b[i].data, size, flow, seq, ts)
			      : frame_write_payload(t, b[i].data, size, seq, ts);
		b[i].flow = flow;
		g->bytes += size;
	}
	if (churning)
		g->churn = c;
	n = g->ops->tx_put(g->port, b, n);
	g->sent += n;
	return n;
}

void wait_until(uint64_t when)
{
	uint64_t now = tsc_now();
	if (when <= now)
		return;
	double gap = (when - now) / tsc_hz();
	if (gap > 300e-6) {
		struct timespec ts = {0, (long)((gap - 200e-6) * 1e9)};
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec = ts.tv_nsec / 1000000000;
			ts.tv_nsec %= 1000000000;
		}
		nanosleep(&ts, NULL);
	}
	while (tsc_now() < when && !vsb_stop)
		cpu_relax();
}
