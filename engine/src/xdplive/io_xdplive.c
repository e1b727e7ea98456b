/* xdplive backend: frames generated in the kernel by BPF_PROG_RUN with live frames (XDP_TX out of
 * the port) and accounted in the kernel by an XDP program on the receive port (io_kern_ops).
 *
 * The BPF object (xdplive.bpf.c, built by clang at build time) is embedded in the binary.
 * Generator port: the template frame at the largest size of the list goes to BPF_PROG_RUN with
 * BPF_F_TEST_XDP_LIVE_FRAMES, ctx ingress_ifindex = the port, `repeat` = frames of this departure
 * (or a chunk when unpaced), kernel batch_size = --batch; vsb_gen stamps each frame and returns
 * XDP_TX, which the kernel turns into a redirect out of the port. Counts are read back from
 * vsb_gstate (mmap). Receive port: vsb_sink attached through a BPF link (the kernel detaches it
 * when the process exits, however it exits), native mode first; maps mmapped for polling and
 * collection. Clock scheme: see xdplive_acct.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/mman.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "io.h"
#include "rxstats.h"
#include "tsc.h"
#include "xdplive.h"
#include "xdplive_acct.h"
#include "xdplive_rx.h"

__asm__(".pushsection .rodata\n"
	".balign 8\n"
	".hidden vsb_xdplive_obj\n.global vsb_xdplive_obj\nvsb_xdplive_obj:\n"
	".incbin \"" VSB_XDPLIVE_OBJ "\"\n"
	".hidden vsb_xdplive_obj_end\n.global vsb_xdplive_obj_end\nvsb_xdplive_obj_end:\n"
	".popsection\n");
extern const unsigned char vsb_xdplive_obj[], vsb_xdplive_obj_end[];

struct io_port {
	char ifname[IF_NAMESIZE];
	int ifindex, want_tx, want_rx;
	unsigned batch;
	uint32_t xdp_flags;
	struct bpf_object *obj;
	int gen_fd, link_fd;
	int pin_link, pin_ns;            /* vsb_gen held in the XDP dispatcher (see pin_gen) */
	int gcfg_fd, scfg_fd;
	struct vsb_gen_state *gst;       /* mmapped */
	struct vsb_sink_cfg *scfg;       /* mmapped */
	struct vsb_sink_sum *ssum;       /* mmapped */
	uint32_t *sids;                  /* mmapped, 65536 */
	struct vsb_kstream *streams;     /* mmapped, VSB_KMAX_STREAMS */
	size_t gst_len, scfg_len, ssum_len, sids_len, streams_len;
	uint8_t *tmpl;                   /* data_in for BPF_PROG_RUN */
	unsigned tmpl_len;
	struct xdplive_ifc c0;            /* the port's counters when the run began */
	/* TSC <-> CLOCK_MONOTONIC anchors for TSC-stamped frames at the sink */
	uint64_t a_tsc, a_ns, next_anchor;
	uint64_t others;                 /* frames other generators sent out of this interface */
};

static char lib_msg[256];
static int keep_msg(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	if (getenv("VSB_XDPLIVE_DEBUG"))
		vfprintf(stderr, fmt, ap);
	else if (lvl == LIBBPF_WARN) {
		vsnprintf(lib_msg, sizeof(lib_msg), fmt, ap);
		lib_msg[strcspn(lib_msg, "\n")] = 0;
	}
	return 0;
}

static void *map_mmap(struct bpf_object *o, const char *name, int *fd, size_t *len)
{
	struct bpf_map *m = bpf_object__find_map_by_name(o, name);
	if (!m)
		return NULL;
	*fd = bpf_map__fd(m);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t sz = (size_t)bpf_map__value_size(m) * bpf_map__max_entries(m);
	*len = (sz + pg - 1) / pg * pg;
	void *p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void port_free(struct io_port *p)
{
	if (p->pin_link >= 0)
		close(p->pin_link);
	if (p->pin_ns >= 0)
		close(p->pin_ns); /* the private namespace and its veth pair go */
	if (p->link_fd >= 0)
		close(p->link_fd); /* the last reference: the kernel detaches vsb_sink */
	if (p->gst) munmap(p->gst, p->gst_len);
	if (p->scfg) munmap(p->scfg, p->scfg_len);
	if (p->ssum) munmap(p->ssum, p->ssum_len);
	if (p->sids) munmap(p->sids, p->sids_len);
	if (p->streams) munmap(p->streams, p->streams_len);
	if (p->obj)
		bpf_object__close(p->obj); /* programs and maps go with their last fd */
	free(p->tmpl);
	free(p);
}

static void take_anchor(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 3; i++) {
		struct timespec ts;
		uint64_t t1 = tsc_now();
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t t2 = tsc_now();
		if (t2 - t1 < best) {
			best = t2 - t1;
			*tsc = t1 + (t2 - t1) / 2;
			*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		}
	}
}

/* New anchor for the sink's TSC -> ns conversion. Written into the live config: the anchor first,
 * the scale last; a frame seeing a half-written anchor is off for one 20 ms step only if its TSC
 * stamp straddles it, and all-engine setups stamp CLOCK_MONOTONIC anyway (xdplive_acct.h). */
static void refresh_anchor(struct io_port *p, uint64_t now)
{
	uint64_t tsc = 0, ns = 0;
	take_anchor(&tsc, &ns);
	double per_tick = 1e9 / tsc_hz();
	if (p->a_tsc && tsc - p->a_tsc > (uint64_t)(0.2 * tsc_hz()))
		per_tick = (double)(ns - p->a_ns) / (double)(tsc - p->a_tsc);
	if (!p->a_tsc) {
		p->a_tsc = tsc;
		p->a_ns = ns;
	}
	p->scfg->mult = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	p->scfg->tsc0 = tsc;
	p->scfg->ns0 = ns;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	p->scfg->mult = (uint64_t)(per_tick * 4294967296.0);
	p->next_anchor = now + (uint64_t)(0.02 * tsc_hz());
}

static int xl_available(struct vsb_error *e)
{
	static int done, rc;
	static struct vsb_error saved;
	if (!done) {
		char why[400];
		rc = xdplive_check_kernel(why, sizeof(why));
		if (rc)
			vsb_fail(&saved, VSB_ERR_UNSUPPORTED, "--io xdplive: %s", why);
		done = 1;
	}
	if (rc && e)
		*e = saved;
	return rc ? VSB_ERR_UNSUPPORTED : 0;
}

static int xl_open(const struct io_config *cfg, struct io_port **out, struct vsb_error *e)
{
	struct io_port *p = calloc(1, sizeof(*p));
	if (!p)
		return vsb_fail(e, VSB_ERR_NOMEM, "out of memory");
	p->link_fd = p->pin_link = p->pin_ns = -1;
	snprintf(p->ifname, sizeof(p->ifname), "%s", cfg->ifname);
	p->ifindex = (int)if_nametoindex(cfg->ifname);
	p->want_tx = cfg->want_tx;
	p->want_rx = cfg->want_rx;
	p->batch = cfg->batch ? cfg->batch : 64;
	if (!p->ifindex) {
		port_free(p);
		return vsb_fail(e, VSB_ERR_IFACE, "--port %s: no such interface", cfg->ifname);
	}
	libbpf_set_print(keep_msg);
	lib_msg[0] = 0;
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "vsb_xdplive");
	p->obj = bpf_object__open_mem(vsb_xdplive_obj, (size_t)(vsb_xdplive_obj_end - vsb_xdplive_obj), &oo);
	if (!p->obj) {
		int err = errno;
		free(p);
		return vsb_fail(e, VSB_ERR_UNSUPPORTED, "--io xdplive: cannot open the embedded BPF object: "
				"%s %s", strerror(err), lib_msg);
	}
	static const char *gen_maps[] = {"vsb_gcfg", "vsb_gstate"};
	static const char *sink_maps[] = {"vsb_scfg", "vsb_ssum", "vsb_sids", "vsb_streams"};
	bpf_program__set_autoload(bpf_object__find_program_by_name(p->obj, "vsb_gen"), p->want_tx);
	bpf_program__set_autoload(bpf_object__find_program_by_name(p->obj, "vsb_sink"), p->want_rx);
	for (unsigned i = 0; i < 2; i++)
		bpf_map__set_autocreate(bpf_object__find_map_by_name(p->obj, gen_maps[i]), p->want_tx);
	for (unsigned i = 0; i < 4; i++)
		bpf_map__set_autocreate(bpf_object__find_map_by_name(p->obj, sink_maps[i]), p->want_rx);
	int err = bpf_object__load(p->obj);
	if (err) {
		port_free(p);
		return vsb_fail(e, VSB_ERR_UNSUPPORTED, "--io xdplive: the kernel refused the BPF programs: "
				"%s: %s (VSB_XDPLIVE_DEBUG=1 prints the verifier log)", strerror(-err), lib_msg);
	}
	int fd;
	if (p->want_tx) {
		p->gen_fd = bpf_program__fd(bpf_object__find_program_by_name(p->obj, "vsb_gen"));
		p->gst = map_mmap(p->obj, "vsb_gstate", &fd, &p->gst_len);
		p->gcfg_fd = bpf_map__fd(bpf_object__find_map_by_name(p->obj, "vsb_gcfg"));
		if (!p->gst) {
			port_free(p);
			return vsb_fail(e, VSB_ERR_SOCKET, "--io xdplive: mmap of the generator's counters: %s",
					strerror(errno));
		}
		char why[200];
		if (!getenv("VSB_XDPLIVE_NO_PIN") && xdplive_pin(p->gen_fd, &p->pin_link, &p->pin_ns, why, sizeof(why)))
			fprintf(stderr, "vswbench-engine: warning: --io xdplive: cannot keep the generator in the "
				"XDP dispatcher (%s): every BPF_PROG_RUN call pays two RCU grace periods "
				"(tens of ms), so pacing is coarse\n", why);
	}
	if (p->want_rx) {
		p->scfg = map_mmap(p->obj, "vsb_scfg", &p->scfg_fd, &p->scfg_len);
		p->ssum = map_mmap(p->obj, "vsb_ssum", &fd, &p->ssum_len);
		p->sids = map_mmap(p->obj, "vsb_sids", &fd, &p->sids_len);
		p->streams = map_mmap(p->obj, "vsb_streams", &fd, &p->streams_len);
		if (!p->scfg || !p->ssum || !p->sids || !p->streams) {
			port_free(p);
			return vsb_fail(e, VSB_ERR_SOCKET, "--io xdplive: mmap of the sink's maps: %s",
					strerror(errno));
		}
		p->scfg->check_udp = !getenv("VSB_XDPLIVE_NO_UDP_CSUM");
		refresh_anchor(p, tsc_now());
		int sink_fd = bpf_program__fd(bpf_object__find_program_by_name(p->obj, "vsb_sink"));
		uint32_t modes[2] = {XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE};
		int first = cfg->xdp_mode == 2 ? 1 : 0, last = cfg->xdp_mode == 1 ? 0 : 1;
		for (int m = first; m <= last && p->link_fd < 0; m++) {
			LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = modes[m]);
			p->link_fd = bpf_link_create(sink_fd, p->ifindex, BPF_XDP, &lo);
			err = p->link_fd < 0 ? -errno : 0;
			p->xdp_flags = modes[m];
		}
		if (p->link_fd < 0) {
			uint32_t id = 0;
			bpf_xdp_query_id(p->ifindex, 0, &id);
			port_free(p);
			if (id)
				return vsb_fail(e, VSB_ERR_IFACE, "--port %s: XDP program id %u is already attached "
						"(another process's, or a switch's): the xdplive sink needs the port's "
						"XDP hook; use --io afpacket there", cfg->ifname, id);
			return vsb_fail(e, VSB_ERR_UNSUPPORTED, "--io xdplive: cannot attach the sink program to "
					"%s: %s (XDP unavailable here)", cfg->ifname, strerror(-err));
		}
	}
	xdplive_if_counters(p->ifname, &p->c0);
	*out = p;
	return 0;
}

static void xl_close(struct io_port *p) { port_free(p); }

static unsigned xl_none(struct io_port *p, struct io_buf *b, unsigned n) { return 0; }
static unsigned xl_rx_none(struct io_port *p, struct io_buf *b, unsigned n, int t) { return 0; }
static void xl_rx_put(struct io_port *p, struct io_buf *b, unsigned n) {}

/* A generator port's tx_errors: frames its veth peer refused (tx_dropped: its ring was full) plus
 * frames that vanished without a count. A veth peer without NAPI (no XDP program, GRO off, or GRO
 * turned on while it was down) loses XDP_TX'd frames silently: the sender's tx_packets, which
 * counts what the peer took, then stays below what the program sent. Other traffic on the port
 * (ARP) can hide a few such frames, never a run's worth. Waits up to 50 ms for the peer's ring. */
static void xl_stats(struct io_port *p, struct io_port_stats *s)
{
	struct xdplive_ifc c;
	memset(s, 0, sizeof(*s));
	uint64_t sent = p->gst ? p->gst->frames + p->others : 0;
	for (int i = 0; i < 50; i++) {
		if (xdplive_if_counters(p->ifname, &c))
			return;
		if (!p->want_tx || !p->gst ||
		    c.tx_packets - p->c0.tx_packets + c.tx_dropped - p->c0.tx_dropped >= sent)
			break;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	if (p->want_tx && p->gst) {
		uint64_t seen = c.tx_packets - p->c0.tx_packets + c.tx_dropped - p->c0.tx_dropped;
		s->tx_errors = c.tx_dropped - p->c0.tx_dropped;
		if (seen < sent)
			s->tx_errors += sent - seen;
		s->tx_refused = s->tx_errors; /* every one of them was counted in tx_frames */
	}
	if (p->want_rx)
		s->rx_dropped = c.rx_dropped - p->c0.rx_dropped;
}

static int gen_prepare(struct io_port *p, const struct frame_tmpl *t, const struct size_seq *s,
		       uint32_t flows, struct vsb_error *e)
{
	struct vsb_gen_cfg c;
	char msg[256];
	if (xdplive_gen_config(t, s, flows, &c, msg, sizeof(msg)))
		return vsb_fail(e, VSB_ERR_UNSUPPORTED, "%s", msg);
	unsigned max = 0;
	for (unsigned i = 0; i < c.nsizes; i++)
		max = c.wire[i] > max ? c.wire[i] : max;
	free(p->tmpl);
	p->tmpl = calloc(1, FRAME_MAX);
	if (!p->tmpl)
		return vsb_fail(e, VSB_ERR_NOMEM, "out of memory");
	p->tmpl_len = frame_write_l2(t, p->tmpl, max + FCS_LEN, 0, 0, 0);
	uint32_t k = 0;
	if (bpf_map_update_elem(p->gcfg_fd, &k, &c, 0))
		return vsb_fail(e, VSB_ERR_SOCKET, "--io xdplive: cannot set the generator's config: %s",
				strerror(errno));
	memset(p->gst, 0, sizeof(*p->gst));
	p->others = 0;
	xdplive_if_counters(p->ifname, &p->c0);
	return 0;
}

static int gen_send(struct io_port *p, uint32_t n, uint64_t *frames, uint64_t *bytes)
{
	int rc = 0;
	/* gaps are those inside a call (the program not run: vsb_gen_gap); the few microseconds
	 * between two calls are the generator's own overhead, caught up as before */
	p->gst->iter_ns = 0;
	if (n) {
		struct xdp_md ctx = {.data_end = p->tmpl_len, .ingress_ifindex = (uint32_t)p->ifindex};
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = p->tmpl, .data_size_in = p->tmpl_len,
			    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = (int)n,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = p->batch);
		if (bpf_prog_test_run_opts(p->gen_fd, &o) && errno != EINTR)
			rc = -errno;
	}
	*frames = __atomic_load_n(&p->gst->frames, __ATOMIC_RELAXED);
	*bytes = __atomic_load_n(&p->gst->bytes, __ATOMIC_RELAXED);
	return rc;
}

static int gen_schedule(struct io_port *p, uint64_t start_ns, double period_ns, unsigned burst,
			uint64_t end_ns, uint64_t limit, uint64_t gap_ns)
{
	struct vsb_gen_cfg c;
	uint32_t k = 0;
	if (bpf_map_lookup_elem(p->gcfg_fd, &k, &c))
		return -errno;
	c.period_fp = (uint64_t)(period_ns * 1024.0 + 0.5);
	c.burst = burst ? burst : 1;
	c.end_ns = end_ns;
	c.limit = limit;
	c.gap_ns = gap_ns;
	p->gst->in_burst = 0;
	p->gst->iter_ns = 0;
	p->gst->skipped = p->gst->gaps = p->gst->gap_max_ns = 0;
	p->gst->next_fp = start_ns << 10;
	return bpf_map_update_elem(p->gcfg_fd, &k, &c, 0) ? -errno : 0;
}

static void gen_gaps(struct io_port *p, uint64_t *skipped, uint64_t *gaps, uint64_t *max_ns)
{
	*skipped = __atomic_load_n(&p->gst->skipped, __ATOMIC_RELAXED);
	*gaps = __atomic_load_n(&p->gst->gaps, __ATOMIC_RELAXED);
	*max_ns = __atomic_load_n(&p->gst->gap_max_ns, __ATOMIC_RELAXED);
}
static void gen_shared(struct io_port *p, uint64_t others) { p->others = others; }

static uint64_t gen_last_ns(struct io_port *p) { return __atomic_load_n(&p->gst->last_ns, __ATOMIC_RELAXED); }

static int rx_reset(struct io_port *p, uint8_t epoch, struct vsb_error *e)
{
	p->scfg->epoch = epoch; /* from here, earlier trials' frames count as stale */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	unsigned n = (unsigned)VSB_MIN(p->ssum->nstreams, (uint64_t)VSB_KMAX_STREAMS);
	memset(p->sids, 0, p->sids_len);
	memset(p->streams, 0, n * sizeof(*p->streams));
	memset(p->ssum, 0, sizeof(*p->ssum));
	return 0;
}

static void rx_poll(struct io_port *p, uint64_t *frames, uint64_t *unique)
{
	uint64_t now = tsc_now();
	if (now >= p->next_anchor)
		refresh_anchor(p, now);
	*frames = __atomic_load_n(&p->ssum->frames, __ATOMIC_RELAXED);
	if (unique)
		*unique = __atomic_load_n(&p->ssum->unique, __ATOMIC_RELAXED);
}

static int rx_collect(struct io_port *p, struct rxstats *rx, double *rx_s)
{
	struct vsb_sink_sum sum;
	memcpy(&sum, p->ssum, sizeof(sum));
	unsigned n = (unsigned)VSB_MIN(sum.nstreams, (uint64_t)VSB_KMAX_STREAMS);
	*rx_s = xdplive_import(p->streams, n, &sum, rx);
	return 0;
}

static unsigned gen_chunk(void)
{
	/* unpaced: frames per BPF_PROG_RUN call; about 12 ms at 5 Mpps, so a run stops on time */
	const char *s = getenv("VSB_XDPLIVE_CHUNK");
	long v = s ? strtol(s, NULL, 0) : 0;
	return v >= 1 && v <= (1l << 30) ? (unsigned)v : 65536;
}

static const struct io_kern_ops kern_ops = {
	.gen_prepare = gen_prepare, .gen_schedule = gen_schedule, .gen_send = gen_send,
	.gen_gaps = gen_gaps,
	.gen_last_ns = gen_last_ns, .gen_shared = gen_shared, .gen_chunk = gen_chunk, .max_sizes = VSB_KMAX_SIZES,
	.rx_reset = rx_reset, .rx_poll = rx_poll, .rx_collect = rx_collect,
};

const struct io_ops io_xdplive_ops = {
	.name = "xdplive",
	.layer = IO_L2,
	/* BPF_PROG_RUN live frames are one page less headroom and skb_shared_info (measured: 3000 B
	 * sent, 3600 B refused with EINVAL), and the receive side's XDP program has no frags, so on
	 * veth above an MTU of about 3.5 KiB it runs in generic mode, without NAPI: at MTU 9000 (what
	 * frames above 1518 B get) no frame arrives, measured. Standard frames only. */
	.max_frame = FRAME_STD_MAX,
	.available = xl_available,
	.open = xl_open,
	.close = xl_close,
	.tx_get = xl_none,
	.tx_put = xl_none,
	.rx_get = xl_rx_none,
	.rx_put = xl_rx_put,
	.stats = xl_stats,
	.probe_extra = xdplive_probe_extra,
	.kern = &kern_ops,
};
