/* Engine lifecycle: namespace, pinning, ports, addresses; the paced generator. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "run.h"
#include "tsc.h"
#include "xdplive_acct.h"

#define DEFAULT_SIP 0xc6120001u /* 198.18.0.1 */
#define DEFAULT_DIP 0xc6130001u /* 198.19.0.1 */

void trial_warn(struct trial_result *r, const char *fmt, ...)
{
	if (r->nwarn >= MAX_WARNINGS)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->warnings[r->nwarn], sizeof(r->warnings[0]), fmt, ap);
	va_end(ap);
	emit_warning(r->warnings[r->nwarn]);
	r->nwarn++;
}

static int ports_needed(enum mode m, int n, struct vsb_error *e)
{
	switch (m) {
	case MODE_GEN: case MODE_SINK: case MODE_REFLECT:
		if (n != 1)
			return vsb_fail(e, VSB_ERR_USAGE, "%s needs exactly one --port (got %d)", mode_name(m), n);
		return 0;
	case MODE_FWD:
		if (n != 2)
			return vsb_fail(e, VSB_ERR_USAGE, "fwd needs two --port options, A and B (got %d)", n);
		return 0;
	case MODE_LOOP: case MODE_CONTROL:
		if (n < 1)
			return vsb_fail(e, VSB_ERR_USAGE, "%s needs --port TX [--port RX] (one port = round trip)",
					mode_name(m));
		return 0;
	default:
		return 0;
	}
}

static void port_config(const struct engine *en, int i, struct io_config *c)
{
	const struct opts *o = &en->o;
	enum mode m = o->mode;
	int two = en->nports == 2;
	memset(c, 0, sizeof(*c));
	c->ifname = en->ports[i].name;
	c->batch = o->batch;
	c->xdp_mode = o->xdp_mode;
	c->sip = en->tmpl->a.sip;
	c->dip = en->tmpl->a.dip;
	c->sport = o->sport;
	c->dport = o->dport;
	c->nsports = o->flows;
	switch (m) {
	case MODE_GEN: c->want_tx = 1; break;
	case MODE_SINK: c->want_rx = 1; break;
	case MODE_REFLECT: case MODE_FWD: c->want_tx = c->want_rx = 1; break;
	case MODE_LOOP: case MODE_CONTROL:
		if (two) {
			c->want_tx = i == 0;
			c->want_rx = i == 1;
		} else {
			c->want_tx = c->want_rx = 1;
			c->rt_client = 1;
		}
		break;
	default: break;
	}
	if (i == 1 && two && c->want_rx && !c->want_tx) {
		/* loop's receive port listens on its own address */
		c->sip = en->ports[1].info.has_ip ? en->ports[1].info.ip : c->dip;
	}
	int busy_default = m == MODE_LOOP || m == MODE_REFLECT || m == MODE_FWD || m == MODE_CONTROL;
	c->busy_poll = o->busy_poll >= 0 ? o->busy_poll : busy_default;
	c->rx_ring_v3 = o->rx_ring ? o->rx_ring == 3 : m == MODE_SINK;
	if (m == MODE_SINK)
		c->ring_size = 8192; /* a sleeping sink rides out wake-up delays of tens of ms */
	if (o->ring)
		c->ring_size = o->ring;
}

/* Only a mode that originates frames asks the kernel to resolve its destination: a sink, a
 * reflector or a forwarder must not put ARP requests on the wire (they would skew counters). */
static int sends_first(enum mode m) { return m == MODE_GEN || m == MODE_LOOP || m == MODE_CONTROL; }

static void set_addresses(struct engine *en, struct frame_addrs *a)
{
	const struct opts *o = &en->o;
	struct port *p0 = &en->ports[0], *p1 = en->nports > 1 ? &en->ports[1] : NULL;
	memcpy(a->smac, o->have_smac ? o->smac : p0->info.mac, 6);
	a->sip = o->have_sip ? o->sip : p0->info.has_ip ? p0->info.ip : DEFAULT_SIP;
	a->sport = o->sport;
	a->dport = o->dport;
	int loop2 = (o->mode == MODE_LOOP || o->mode == MODE_CONTROL) && p1;
	if (o->have_dip)
		a->dip = o->dip;
	else if (loop2 && p1->info.has_ip)
		a->dip = p1->info.ip;
	else if (iface_default_peer(&p0->info))
		a->dip = iface_default_peer(&p0->info);
	else
		a->dip = DEFAULT_DIP;
	if (o->ndmac)
		memcpy(a->dmac, o->dmac[0], 6);
	else if (loop2)
		memcpy(a->dmac, p1->info.mac, 6);
	else if (!neigh_lookup(p0->name, a->dip, a->dmac, p0->info.has_ip && sends_first(o->mode)))
		memset(a->dmac, 0xff, 6);
}

int engine_setup(struct engine *en, struct vsb_error *e)
{
	struct opts *o = &en->o;
	if (ports_needed(o->mode, o->nports, e))
		return e->code;
	en->ops = io_find(o->io);
	if (!en->ops) {
		if (!strcmp(o->io, "afxdp"))
			return vsb_fail(e, VSB_ERR_UNSUPPORTED, "--io afxdp: this engine was built without libxdp "
					"(install libxdp-dev and libbpf-dev, then rebuild with make -C engine)");
		if (!strcmp(o->io, "xdplive"))
			return vsb_fail(e, VSB_ERR_UNSUPPORTED, "--io xdplive: this engine was built without libbpf "
					"or without a clang that targets BPF (install libbpf-dev, libxdp-dev and "
					"clang, then rebuild with make -C engine)");
		if (!strcmp(o->io, "dpdk"))
			return vsb_fail(e, VSB_ERR_UNSUPPORTED, "--io dpdk: this engine was built without DPDK "
					"(install dpdk-dev, then rebuild with make -C engine)");
		char list[128] = "";
		for (int i = 0; io_backends[i]; i++) {
			strcat(list, i ? ", " : "");
			strcat(list, io_backends[i]->name);
		}
		return vsb_fail(e, VSB_ERR_USAGE, "--io %s: unknown backend (compiled in: %s)", o->io, list);
	}
	if (o->netns && netns_enter(o->netns, e))
		return e->code;
	if (o->cpu >= 0 && cpu_pin(o->cpu, e))
		return e->code;
	tsc_info();
	if (en->ops->available(e))
		return e->code;
	en->nports = o->nports;
	for (int i = 0; i < en->nports; i++) {
		en->ports[i].name = o->ports[i];
		if (en->ops->port_info) { /* not a kernel interface (dpdk vdev) */
			if (en->ops->port_info(o, i, &en->ports[i].info, e))
				return e->code;
			continue;
		}
		if (iface_get(o->ports[i], &en->ports[i].info, e))
			return e->code;
		if (!en->ports[i].info.up)
			return vsb_fail(e, VSB_ERR_IFACE, "--port %s is down (ip link set %s up)", o->ports[i],
					o->ports[i]);
	}
	if (en->ops->kern && (o->mode == MODE_REFLECT || o->mode == MODE_FWD))
		return vsb_fail(e, VSB_ERR_UNSUPPORTED, "--io %s cannot %s: its frames never reach the engine "
				"(gen, sink, loop and control only); use --io afxdp or afpacket", en->ops->name,
				o->mode == MODE_FWD ? "forward" : "reflect");
	if (en->ops->kern && o->sizes.n > VSB_KMAX_SIZES)
		return vsb_fail(e, VSB_ERR_UNSUPPORTED, "--io %s: a size list of %u frames is longer than the "
				"%u the BPF generator holds; use a shorter list", en->ops->name, o->sizes.n,
				VSB_KMAX_SIZES);
	if (en->ops->layer == IO_L4) {
		if (!en->ports[0].info.has_ip)
			return vsb_fail(e, VSB_ERR_IFACE, "--io udp: port %s has no IPv4 address (add one from "
					"198.18.0.0/15, or use --io afpacket)", o->ports[0]);
		if (o->mode == MODE_FWD)
			return vsb_fail(e, VSB_ERR_UNSUPPORTED, "--io udp cannot forward frames (fwd needs an L2 "
					"backend: afpacket or afxdp)");
		if (o->flow_field != FLOW_SPORT && o->flows > 1)
			return vsb_fail(e, VSB_ERR_UNSUPPORTED, "--io udp varies flows by source port only "
					"(--flow-field sport)");
		if (en->nports == 2)
			return vsb_fail(e, VSB_ERR_UNSUPPORTED, "--io udp loop with two ports in one namespace "
					"would be delivered locally by the kernel; use gen and sink in two namespaces");
	}
	en->tmpl = calloc(1, sizeof(*en->tmpl));
	if (!en->tmpl)
		return vsb_fail(e, VSB_ERR_NOMEM, "out of memory");
	struct frame_addrs a;
	memset(&a, 0, sizeof(a));
	set_addresses(en, &a);
	char range[256];
	if (frame_flow_range_check(o->flow_field == FLOW_DIP ? a.dip : a.sip, o->flows, o->flow_field, range, sizeof(range)))
		return vsb_fail(e, VSB_ERR_USAGE, "%s", range);
	frame_tmpl_init(en->tmpl, &a, o->stream_id, o->flows, o->flow_field);
	if (o->flow_arrival > 0) {
		struct trial_params tp;
		trial_params_from_opts(o, &tp);
		if (churn_supported(en, &tp, e))
			return e->code;
	}
	if (o->mode == MODE_FWD) {
		for (int i = 0; i < 2; i++) {
			if (o->rewrite_mac && o->ndmac != 2)
				return vsb_fail(e, VSB_ERR_USAGE, "--rewrite-mac needs --dst-mac twice: the next hop's MAC "
						"behind port A, then behind port B");
			memcpy(en->ports[i].out_dmac, o->dmac[i], 6);
		}
	}
	for (int i = 0; i < en->nports; i++) {
		struct io_config c;
		port_config(en, i, &c);
		if (en->ops->open(&c, &en->ports[i].io, e))
			return e->code;
	}
	if (rxstats_init(&en->rx, 0))
		return vsb_fail(e, VSB_ERR_NOMEM, "out of memory");
	return 0;
}

void engine_teardown(struct engine *en)
{
	for (int i = 0; i < en->nports; i++)
		if (en->ports[i].io) {
			en->ops->close(en->ports[i].io);
			en->ports[i].io = NULL;
		}
	rxstats_free(&en->rx);
	free(en->tmpl);
	en->tmpl = NULL;
}

void trial_params_from_opts(const struct opts *o, struct trial_params *t)
{
	memset(t, 0, sizeof(*t));
	t->mode = o->mode;
	t->rate = o->rate;
	t->burst = o->burst;
	t->flows = o->flows;
	t->flow_arrival = o->flow_arrival;
	t->flow_life = o->flow_life;
	t->sizes = &o->sizes;
	t->duration = o->duration;
	t->count = o->count;
	t->warmup = o->warmup;
	t->drain = o->drain;
	t->drain_quiet = o->drain_quiet;
	t->interval = o->interval;
	t->idle = o->idle;
	t->epoch = 0;
	t->stream = o->stream_id;
}

/* ---- the generator ---- */

int txgen_init(struct txgen *g, struct engine *en, struct port *p, const struct trial_params *t,
	       struct vsb_error *e)
{
	memset(g, 0, sizeof(*g));
	g->ops = en->ops;
	g->port = p->io;
	g->tmpl = en->tmpl;
	g->sizes = t->sizes;
	g->rate = t->rate;
	g->burst = t->burst ? t->burst : 1;
	g->batch = en->o.batch;
	g->limit = t->count;
	g->flows = t->flows ? t->flows : 1;
	if (g->rate > 0)
		g->ticks_per_burst = tsc_hz() * g->burst / g->rate;
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
		g->batch = kern_chunk();
		return g->kern->gen_prepare(g->port, g->tmpl, g->sizes, g->flows, e);
	}
	return 0;
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
	uint64_t departures = g->sent / g->burst;
	return g->start_tsc + (uint64_t)(departures * g->ticks_per_burst);
}

unsigned txgen_step(struct txgen *g, uint64_t now)
{
	uint64_t due;
	if (g->rate > 0) {
		if (now < g->start_tsc)
			return 0;
		uint64_t departures = (uint64_t)((now - g->start_tsc) / g->ticks_per_burst) + 1;
		due = departures * g->burst;
	} else {
		due = g->sent + g->batch;
	}
	if (g->limit && due > g->limit)
		due = g->limit;
	if (due <= g->sent)
		return 0;
	unsigned n = (unsigned)VSB_MIN(due - g->sent, (uint64_t)g->batch);
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

void rx_account_batch(struct engine *en, struct io_buf *b, unsigned n, uint64_t now)
{
	int l2 = en->ops->layer == IO_L2;
	unsigned extra = l2 ? FCS_LEN : L2_OVERHEAD + FCS_LEN;
	uint64_t mono_now = 0;
	en->rx_seen += n;
	for (unsigned i = 0; i < n; i++) {
		struct sig s;
		enum parse_result pr = l2 ? frame_parse_l2(b[i].data, b[i].len, &s)
					  : frame_parse_payload(b[i].data, b[i].len, &s);
		if (unlikely(pr == PARSE_OK && (s.tx_tsc & SIG_TS_MONO))) {
			/* stamped by the xdplive generator in CLOCK_MONOTONIC ns: to TSC ticks */
			if (!mono_now)
				mono_now = mono_ns_now();
			s.tx_tsc = tsc_from_mono(s.tx_tsc & ~SIG_TS_MONO, now, mono_now);
		}
		if (pr == PARSE_OK)
			rxstats_account(&en->rx, &s, now, b[i].len + extra);
		else if (pr == PARSE_FOREIGN)
			en->rx.foreign++;
		else
			en->rx.malformed++;
	}
}
