/* reflect and fwd (modes.h): the server side of round trips, and a minimal network function. */
#include <string.h>
#include <time.h>
#include "engine.h"
#include "modes.h"
#include "trial.h"
#include "tsc.h"

struct idle_clock {
	uint64_t start, end, idle, first, last;
};

static void idle_init(struct idle_clock *c, const struct trial_params *t)
{
	c->start = tsc_now();
	c->end = t->duration > 0 ? c->start + (uint64_t)(t->duration * tsc_hz()) : UINT64_MAX;
	c->idle = t->idle > 0 ? (uint64_t)(t->idle * tsc_hz()) : UINT64_MAX;
	c->first = c->last = 0;
}

/* 1 while the run should go on */
static int idle_tick(struct idle_clock *c, unsigned got, uint64_t now)
{
	if (got) {
		if (!c->first)
			c->first = now;
		c->last = now;
	}
	if (vsb_stop || now >= c->end)
		return 0;
	return !(c->first && now - c->last > c->idle);
}

int run_reflect(struct engine *en, const struct trial_params *t, struct trial_result *r)
{
	struct port *p = &en->ports[0];
	const struct io_ops *ops = en->ops;
	struct io_buf rb[IO_MAX_BATCH], tb[IO_MAX_BATCH];
	struct idle_clock c;
	int l2 = ops->layer == IO_L2;
	rxstats_reset(&en->rx, t->epoch);
	idle_init(&c, t);
	double cpu0 = cpu_process_s();
	uint64_t now = c.start, sent = 0, limit = t->count;
	while (idle_tick(&c, 0, now) && (!limit || sent < limit)) {
		unsigned n = ops->rx_get(p->io, rb, en->o.batch, 10000);
		now = tsc_now();
		if (!n)
			continue;
		idle_tick(&c, n, now);
		en->rx_seen += n;
		unsigned ok[IO_MAX_BATCH], k = 0;
		for (unsigned i = 0; i < n; i++) {
			struct sig s;
			enum parse_result pr = l2 ? frame_parse_l2(rb[i].data, rb[i].len, &s)
						  : frame_parse_payload(rb[i].data, rb[i].len, &s);
			if (pr == PARSE_OK)
				ok[k++] = i;
			else if (pr == PARSE_FOREIGN)
				en->rx.foreign++;
			else
				en->rx.malformed++;
		}
		unsigned nt = k ? ops->tx_get(p->io, tb, k) : 0;
		for (unsigned j = 0; j < nt; j++) {
			struct io_buf *in = &rb[ok[j]];
			memcpy(tb[j].data, in->data, in->len);
			tb[j].len = in->len;
			tb[j].priv = in->priv;
			if (l2)
				frame_swap_l2(tb[j].data, tb[j].len);
		}
		unsigned put = nt ? ops->tx_put(p->io, tb, nt) : 0;
		r->tx_dropped += k - put;   /* no buffer, or refused by the port (its ring full) */
		sent += put;
		ops->rx_put(p->io, rb, n);
	}
	r->cpu_s = cpu_process_s() - cpu0;
	r->fwd_frames[0] = sent;
	r->rx_s = c.first ? (c.last - c.first) / tsc_hz() : 0;
	r->interrupted = vsb_stop;
	return 0;
}

static unsigned fwd_burst(struct engine *en, struct port *in, struct port *out, struct trial_result *r,
			  int out_idx)
{
	const struct io_ops *ops = en->ops;
	struct io_buf rb[IO_MAX_BATCH], tb[IO_MAX_BATCH];
	unsigned n = ops->rx_get(in->io, rb, en->o.batch, 0);
	if (!n)
		return 0;
	unsigned nt = ops->tx_get(out->io, tb, n);
	for (unsigned i = 0; i < nt; i++) {
		memcpy(tb[i].data, rb[i].data, rb[i].len);
		tb[i].len = rb[i].len;
		tb[i].priv = NULL;
		if (en->o.rewrite_mac && tb[i].len >= ETH_HDR_LEN) {
			memcpy(tb[i].data, out->out_dmac, 6);
			memcpy(tb[i].data + 6, out->info.mac, 6);
		}
	}
	unsigned put = nt ? ops->tx_put(out->io, tb, nt) : 0;
	r->tx_dropped += n - put;   /* no buffer, or refused by the out port (its ring full) */
	r->fwd_frames[out_idx] += put;
	ops->rx_put(in->io, rb, n);
	return n;
}

int run_fwd(struct engine *en, const struct trial_params *t, struct trial_result *r)
{
	struct port *a = &en->ports[0], *b = &en->ports[1];
	struct idle_clock c;
	idle_init(&c, t);
	double cpu0 = cpu_process_s();
	uint64_t now = c.start;
	unsigned got = 0;
	while (idle_tick(&c, got, now) && (!t->count || r->fwd_frames[0] + r->fwd_frames[1] < t->count)) {
		got = fwd_burst(en, a, b, r, 1);
		got += fwd_burst(en, b, a, r, 0);
		en->rx_seen += got;
		now = tsc_now();
		if (!got && !en->o.busy_poll) {
			/* Not busy polling: give the core away (it may be shared with the switch). */
			struct timespec ts = {0, 20 * 1000};
			nanosleep(&ts, NULL);
			now = tsc_now();
		}
	}
	r->cpu_s = cpu_process_s() - cpu0;
	r->rx_s = c.first ? (c.last - c.first) / tsc_hz() : 0;
	r->interrupted = vsb_stop;
	return 0;
}
