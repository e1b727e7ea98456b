/* Engine lifecycle (engine.h): namespace, pinning, ports and what each is opened for, addresses;
 * the receive accounting of frames that reach the engine. */
#include <stdlib.h>
#include <string.h>
#include "engine.h"
#include "generator.h"
#include "modes.h"
#include "trial.h"
#include "tsc.h"

#define DEFAULT_SIP 0xc6120001u /* 198.18.0.1 */
#define DEFAULT_DIP 0xc6130001u /* 198.19.0.1 */

static int ports_needed(const struct mode_def *m, int n, struct vsb_error *e)
{
	switch (m->ports) {
	case PORTS_TX: case PORTS_RX: case PORTS_TXRX:
		if (n != 1)
			return vsb_fail(e, VSB_ERR_USAGE, "%s needs exactly one --port (got %d)", m->name, n);
		return 0;
	case PORTS_AB:
		if (n != 2)
			return vsb_fail(e, VSB_ERR_USAGE, "%s needs two --port options, A and B (got %d)", m->name,
					n);
		return 0;
	case PORTS_LOOP:
		if (n < 1)
			return vsb_fail(e, VSB_ERR_USAGE, "%s needs --port TX [--port RX] (one port = round trip)",
					m->name);
		return 0;
	default:
		return 0;
	}
}

static void port_config(const struct engine *en, int i, struct io_config *c)
{
	const struct opts *o = &en->o;
	const struct mode_def *m = en->mode;
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
	switch (m->ports) {
	case PORTS_TX: c->want_tx = 1; break;
	case PORTS_RX: c->want_rx = 1; break;
	case PORTS_TXRX: case PORTS_AB: c->want_tx = c->want_rx = 1; break;
	case PORTS_LOOP:
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
	c->busy_poll = o->busy_poll >= 0 ? o->busy_poll : m->busy_poll;
	c->rx_ring_v3 = o->rx_ring ? o->rx_ring == 3 : m->rx_ring_v3;
	c->mtu = en->ports[i].info.mtu;
	c->ring_size = m->ring;
	if (o->ring)
		c->ring_size = o->ring;
}

static void set_addresses(struct engine *en, struct frame_addrs *a)
{
	const struct opts *o = &en->o;
	struct port *p0 = &en->ports[0], *p1 = en->nports > 1 ? &en->ports[1] : NULL;
	memcpy(a->smac, o->have_smac ? o->smac : p0->info.mac, 6);
	a->sip = o->have_sip ? o->sip : p0->info.has_ip ? p0->info.ip : DEFAULT_SIP;
	a->sport = o->sport;
	a->dport = o->dport;
	int loop2 = en->mode->ports == PORTS_LOOP && p1;
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
	/* only a mode that originates frames asks the kernel to resolve its destination: a sink, a
	 * reflector or a forwarder must not put ARP requests on the wire (they would skew counters) */
	else if (!neigh_lookup(p0->name, a->dip, a->dmac, p0->info.has_ip && en->mode->sends_first))
		memset(a->dmac, 0xff, 6);
}

int engine_size_check(const struct engine *en, const struct size_seq *s, struct vsb_error *e)
{
	char msg[320];
	for (int i = 0; i < en->nports; i++)
		if (io_size_check(en->ops, s, en->ports[i].name, en->ports[i].info.mtu, msg, sizeof(msg)))
			return vsb_fail(e, VSB_ERR_USAGE, "%s", msg);
	return 0;
}

int engine_setup(struct engine *en, struct vsb_error *e)
{
	struct opts *o = &en->o;
	const struct mode_def *m = en->mode;
	if (ports_needed(m, o->nports, e))
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
			if (en->ops->port_info(o, o->ring ? o->ring : m->ring, i, &en->ports[i].info, e))
				return e->code;
			continue;
		}
		if (iface_get(o->ports[i], &en->ports[i].info, e))
			return e->code;
		if (!en->ports[i].info.up)
			return vsb_fail(e, VSB_ERR_IFACE, "--port %s is down (ip link set %s up)", o->ports[i],
					o->ports[i]);
	}
	if (en->ops->kern && m->relays)
		return vsb_fail(e, VSB_ERR_UNSUPPORTED, "--io %s cannot %s: its frames never reach the engine "
				"(gen, sink, loop and control only); use --io afxdp or afpacket", en->ops->name,
				m->relays);
	if (engine_size_check(en, &o->sizes, e))
		return e->code;
	if (en->ops->kern && o->sizes.n > en->ops->kern->max_sizes)
		return vsb_fail(e, VSB_ERR_UNSUPPORTED, "--io %s: a size list of %u frames is longer than the "
				"%u the BPF generator holds; use a shorter list", en->ops->name, o->sizes.n,
				en->ops->kern->max_sizes);
	if (en->ops->layer == IO_L4) {
		if (!en->ports[0].info.has_ip)
			return vsb_fail(e, VSB_ERR_IFACE, "--io udp: port %s has no IPv4 address (add one from "
					"198.18.0.0/15, or use --io afpacket)", o->ports[0]);
		if (m->id == MODE_FWD)
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
		trial_params_from_opts(o, m, &tp);
		if (churn_supported(en, &tp, e))
			return e->code;
	}
	if (m->id == MODE_FWD) {
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

static const struct io_ops *closing_ops;

static void close_port_io(void *io)
{
	closing_ops->close(io);
}

void engine_teardown(struct engine *en)
{
	void *open_ios[MAX_PORTS];
	int n = 0;
	for (int i = 0; i < en->nports; i++)
		if (en->ports[i].io) {
			open_ios[n++] = en->ports[i].io;
			en->ports[i].io = NULL;
		}
	closing_ops = en->ops;
	if (en->ops && en->ops->closes_at_once)
		vsb_at_once(close_port_io, open_ios, n);
	else
		for (int i = 0; i < n; i++)
			close_port_io(open_ios[i]);
	rxstats_free(&en->rx);
	free(en->tmpl);
	en->tmpl = NULL;
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
