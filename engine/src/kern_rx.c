/* The receive side when the kernel accounts the frames (io_kern_ops, --io xdplive): sink mode, the
 * loop's drain and collection. The process only watches counters; the frames never reach it. */
#include <time.h>
#include "engine.h"
#include "kern_rx.h"
#include "records.h"
#include "trial.h"
#include "tsc.h"

uint64_t rx_seen_now(struct engine *en, struct port *rxp)
{
	if (!rxp || !en->ops->kern)
		return en->rx_seen;
	uint64_t frames = 0;
	en->ops->kern->rx_poll(rxp->io, &frames, NULL);
	return frames;
}

static void nap(double s)
{
	struct timespec ts = {0, (long)(s * 1e9)};
	nanosleep(&ts, NULL);
}

void kern_rx_finish(struct engine *en, struct port *rxp, uint64_t sent, double drain_s, double quiet_s,
		    double *rx_s)
{
	const struct io_kern_ops *k = en->ops->kern;
	uint64_t now = tsc_now(), end = now + (uint64_t)(drain_s * tsc_hz());
	uint64_t quiet = quiet_s > 0 ? (uint64_t)(quiet_s * tsc_hz()) : UINT64_MAX, changed = now;
	uint64_t frames, unique = 0, seen = UINT64_MAX;
	for (;;) {
		k->rx_poll(rxp->io, &frames, &unique);
		now = tsc_now();
		if (frames != seen) {
			seen = frames;
			changed = now;
		}
		if (unique >= sent || vsb_stop || now >= end || now - changed > quiet)
			break;
		nap(200e-6);
	}
	k->rx_collect(rxp->io, &en->rx, rx_s);
}

int run_sink_kern(struct engine *en, const struct trial_params *t, struct trial_result *r)
{
	const struct io_kern_ops *k = en->ops->kern;
	struct port *p = &en->ports[0];
	struct vsb_error e = {0};
	rxstats_reset(&en->rx, t->epoch);
	if (k->rx_reset(p->io, t->epoch, &e)) {
		trial_warn(r, "%s", e.msg);
		return e.code;
	}
	uint64_t start = tsc_now(), now = start, last_change = 0, frames = 0, prev = 0;
	uint64_t end = t->duration > 0 ? start + (uint64_t)(t->duration * tsc_hz()) : UINT64_MAX;
	uint64_t idle = t->idle > 0 ? (uint64_t)(t->idle * tsc_hz()) : UINT64_MAX;
	uint64_t tick = t->interval > 0 ? (uint64_t)(t->interval * tsc_hz()) : UINT64_MAX;
	uint64_t next_tick = tick == UINT64_MAX ? UINT64_MAX : start + tick, tick_last = start, tick_n = 0;
	double cpu0 = cpu_process_s();
	while (!vsb_stop && now < end && (!t->count || frames < t->count)) {
		nap(1e-3);
		now = tsc_now();
		k->rx_poll(p->io, &frames, NULL);
		if (frames != prev) {
			prev = frames;
			last_change = now;
		} else if (last_change && now - last_change > idle) {
			break;
		}
		if (now >= next_tick) {
			double dt = (now - tick_last) / tsc_hz();
			emit_interval((now - start) / tsc_hz(), 0, frames, dt, 0, frames - tick_n);
			tick_last = now;
			tick_n = frames;
			next_tick += tick;
			if (next_tick < now)
				next_tick = now + tick;
		}
	}
	r->cpu_s = cpu_process_s() - cpu0;
	k->rx_collect(p->io, &en->rx, &r->rx_s);
	r->interrupted = vsb_stop;
	r->latency_kind = 1;
	return 0;
}
