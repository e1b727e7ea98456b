/* AF_XDP backend (libxdp xsk API): whole L2 frames through a umem shared with the kernel.
 *
 * One socket per port, bound to one queue. The umem is split in two: the first `ring` frames are
 * the TX partition (a free stack, refilled lazily from the completion ring), the next `ring` frames
 * the RX partition (kept in the fill ring). Copy mode (XDP_COPY) by default; cfg->zerocopy tries
 * zero copy first (veth has none).
 *
 * Receiving needs an XDP program that redirects to the socket. First choice: the backend's own
 * 6-instruction program with an XSKMAP, attached through a BPF link (so the kernel detaches it even
 * if the process dies), else via netlink (bpf_xdp_attach, detached in close()); if that fails,
 * libxdp's default program. A TX-only port attaches no program: the
 * kernel binds a socket without one, and XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD keeps libxdp from
 * loading its own. libxdp attaches its program by netlink, so a SIGKILLed process leaves it on the
 * interface (close() removes it); VSB_AFXDP_PROG=libxdp skips the builtin program.
 * VSB_AFXDP_DEBUG=1 prints the libxdp/libbpf log on stderr. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include "io.h"
#include "io_afxdp.h"
#include "tsc.h" /* cpu_relax() */

#ifndef SOL_XDP
#define SOL_XDP 283
#endif
#ifndef XDP_MAX_TX_SKB_BUDGET
#define XDP_MAX_TX_SKB_BUDGET 9 /* Linux 6.17+: descriptors one copy-mode sendto() may send */
#endif

#define FRAME_SIZE 2048u
#define AFXDP_RX_HEADROOM 256u /* XDP_PACKET_HEADROOM: what the kernel keeps before a received frame */
#define RING_DEFAULT 4096u /* TX completions wait for the peer to free the skb: keep many in flight */
#define FLUSH_NS 100000000LL /* tx_flush gives up after 100 ms */

enum prog_kind { PROG_NONE, PROG_LIBXDP, PROG_BUILTIN };
static const char *const prog_names[] = { "none", "libxdp", "builtin" };

struct io_port {
	char ifname[IF_NAMESIZE];
	int ifindex, want_tx, want_rx, busy_poll, zc;
	unsigned queue, ring;
	uint8_t *area;
	size_t area_len;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	int fd;
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq, rx;
	enum prog_kind prog;
	uint32_t xdp_flags;              /* XDP_FLAGS_DRV_MODE / SKB_MODE of the program, 0 = none */
	int map_fd, prog_fd, link_fd, nl_attached; /* builtin program */
	uint64_t *tx_free;               /* TX partition: free stack; [tx_nfree, +tx_reserved) reserved */
	uint32_t tx_nfree, tx_reserved, tx_inflight;
	uint64_t *rx_stash;              /* RX frames released by the caller, not yet in the fill ring */
	uint32_t rx_nstash, rx_held;
	uint64_t tx_errors, tx_ring_empty; /* tx_ring_empty: tx_get found fewer free frames than asked */
};

/* ---- library log capture: keep the last warning for error messages ---- */
static char lib_msg[200];
static int lib_debug;

static void keep_msg(const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	if (lib_debug)
		vfprintf(stderr, fmt, ap);
	vsnprintf(lib_msg, sizeof(lib_msg), fmt, aq);
	va_end(aq);
	lib_msg[strcspn(lib_msg, "\n")] = 0;
}
static int xdp_log(enum libxdp_print_level lvl, const char *fmt, va_list ap)
{
	if (lvl == LIBXDP_WARN || lib_debug)
		keep_msg(fmt, ap);
	return 0;
}
static int bpf_log(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	if (lvl == LIBBPF_WARN || lib_debug)
		keep_msg(fmt, ap);
	return 0;
}

/* Route libxdp/libbpf logging into lib_msg while we call them; restore afterwards. */
static libxdp_print_fn_t saved_xdp_log;
static libbpf_print_fn_t saved_bpf_log;
static int quiet_depth;
static void lib_quiet(int on)
{
	if (on && quiet_depth++ == 0) {
		lib_debug = getenv("VSB_AFXDP_DEBUG") != NULL;
		saved_xdp_log = libxdp_set_print(xdp_log);
		saved_bpf_log = libbpf_set_print(bpf_log);
	} else if (!on && --quiet_depth == 0) {
		libxdp_set_print(saved_xdp_log);
		libbpf_set_print(saved_bpf_log);
	}
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- the builtin redirect program ----
 *   r2 = ctx->rx_queue_index; r1 = &xsks_map; r3 = XDP_PASS (action when the slot is empty)
 *   return bpf_redirect_map(r1, r2, r3) */
#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

static int builtin_attach(struct io_port *p)
{
	int err;
	p->map_fd = bpf_map_create(BPF_MAP_TYPE_XSKMAP, "vsb_xsks", 4, 4, p->queue + 1, NULL);
	if (p->map_fd < 0)
		return p->map_fd;
	struct bpf_insn insns[] = {
		INSN(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_2, BPF_REG_1,
		     offsetof(struct xdp_md, rx_queue_index), 0),
		INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, p->map_fd),
		INSN(0, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, XDP_PASS),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect_map),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	LIBBPF_OPTS(bpf_prog_load_opts, po, .expected_attach_type = BPF_XDP);
	p->prog_fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "vsb_xsk_redir", "GPL", insns,
				   VSB_ARRAY_SIZE(insns), &po);
	if (p->prog_fd < 0)
		return p->prog_fd;
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = p->xdp_flags);
	p->link_fd = bpf_link_create(p->prog_fd, p->ifindex, BPF_XDP, &lo);
	if (p->link_fd < 0) {
		p->link_fd = -1;
		err = bpf_xdp_attach(p->ifindex, p->prog_fd, p->xdp_flags | XDP_FLAGS_UPDATE_IF_NOEXIST,
				     NULL);
		if (err)
			return err;
		p->nl_attached = 1;
	}
	uint32_t key = p->queue;
	err = bpf_map_update_elem(p->map_fd, &key, &p->fd, 0);
	return err ? -errno : 0;
}

/* Undo everything try_open() set up (safe on a half-built port). */
static void teardown(struct io_port *p)
{
	if (p->link_fd >= 0)
		close(p->link_fd); /* last reference: the kernel detaches the program */
	if (p->nl_attached) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, ao, .old_prog_fd = p->prog_fd);
		/* with REPLACE, only if it is still ours */
		bpf_xdp_attach(p->ifindex, -1, p->xdp_flags | XDP_FLAGS_REPLACE, &ao);
	}
	if (p->prog_fd >= 0)
		close(p->prog_fd);
	if (p->map_fd >= 0)
		close(p->map_fd);
	p->link_fd = p->prog_fd = p->map_fd = -1;
	p->nl_attached = 0;
	lib_quiet(1); /* libxdp complains about the missing bpffs on delete too */
	if (p->xsk)
		xsk_socket__delete(p->xsk); /* libxdp detaches its program with the last socket */
	if (p->umem)
		xsk_umem__delete(p->umem);
	lib_quiet(0);
	p->xsk = NULL;
	p->umem = NULL;
	p->fd = -1;
}

/* One attempt with a given bind mode, XDP mode and program. 0 or -errno; cleans up on failure. */
static int try_open(struct io_port *p, uint16_t bind_flags, uint32_t xdp_flags, enum prog_kind prog)
{
	struct xsk_umem_config uc = {
		.fill_size = p->ring, .comp_size = p->ring, .frame_size = FRAME_SIZE,
		.frame_headroom = 0, .flags = 0,
	};
	struct xsk_socket_config sc = {
		.rx_size = p->ring, .tx_size = p->ring, .xdp_flags = xdp_flags, .bind_flags = bind_flags,
		.libxdp_flags = prog == PROG_LIBXDP ? 0 : XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
	};
	p->prog = prog;
	p->xdp_flags = xdp_flags;
	int err = xsk_umem__create(&p->umem, p->area, p->area_len, &p->fq, &p->cq, &uc);
	if (err) {
		p->umem = NULL;
		return err;
	}
	err = xsk_socket__create(&p->xsk, p->ifname, p->queue, p->umem, p->want_rx ? &p->rx : NULL,
				 p->want_tx ? &p->tx : NULL, &sc);
	if (err) {
		p->xsk = NULL;
		goto fail;
	}
	p->fd = xsk_socket__fd(p->xsk);
	{ /* copy mode charges each frame in flight to the send buffer until the peer frees it */
		int sndbuf = 64 << 20;
		if (setsockopt(p->fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)) < 0)
			setsockopt(p->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	}
	if (prog == PROG_BUILTIN && (err = builtin_attach(p)))
		goto fail;
	return 0;
fail:
	teardown(p);
	return err < 0 ? err : -EINVAL;
}

/* Id of the XDP program attached to ifindex (any mode), 0 if none. */
static uint32_t attached_prog(int ifindex)
{
	uint32_t id = 0;
	bpf_xdp_query_id(ifindex, 0, &id);
	return id;
}

static const char *hint(int err)
{
	switch (err) {
	case EPERM: case EACCES: return "run as root (needs CAP_NET_ADMIN, CAP_NET_RAW and CAP_BPF)";
	case ENODEV: case ENXIO: return "check --port and --netns: the interface is gone";
	case EINVAL: return "check the queue id (--queue) exists on the interface and the ring size";
	case EBUSY: case EEXIST: return "another AF_XDP socket is bound to this queue: stop it";
	case EOPNOTSUPP: return "the driver lacks this XDP mode: use --xdp-mode generic";
	case ENOMEM: case ENOBUFS:
		return "cannot pin the umem: raise the memlock limit (ulimit -l unlimited)";
	case EAFNOSUPPORT: return "the kernel has no AF_XDP (CONFIG_XDP_SOCKETS)";
	default: return "run with VSB_AFXDP_DEBUG=1 for libxdp/libbpf messages";
	}
}

static int open_fail(struct vsb_error *e, struct io_port *p, int err, const char *tried)
{
	int code = (err == EPERM || err == EACCES) ? VSB_ERR_PERM
		 : (err == ENODEV || err == ENXIO) ? VSB_ERR_IFACE
		 : err == EOPNOTSUPP ? VSB_ERR_UNSUPPORTED : VSB_ERR_SOCKET;
	char h[224];
	uint32_t id = p->want_rx ? attached_prog(p->ifindex) : 0;
	if (id && (err == EBUSY || err == EEXIST))
		snprintf(h, sizeof(h), "XDP program id %u is already attached to %s (another process's, "
			 "or left by a killed run): remove it with 'ip link set dev %s xdp off'",
			 id, p->ifname, p->ifname);
	else
		snprintf(h, sizeof(h), "%s", hint(err));
	vsb_fail(e, code, "AF_XDP socket on %s queue %u: %s: %s (tried %s%s%s)", p->ifname, p->queue,
		 strerror(err), h, tried, lib_msg[0] ? "; last library message: " : "", lib_msg);
	return code;
}

static void afxdp_close(struct io_port *p);

static int afxdp_open(const struct io_config *cfg, struct io_port **out, struct vsb_error *e)
{
	*out = NULL;
	if (!cfg->ifname || !*cfg->ifname || strlen(cfg->ifname) >= IF_NAMESIZE)
		return vsb_fail(e, VSB_ERR_USAGE, "afxdp: need an interface name (--port IF)");
	if (!cfg->want_tx && !cfg->want_rx)
		return vsb_fail(e, VSB_ERR_USAGE, "afxdp: port %s opened for neither TX nor RX",
				cfg->ifname);
	unsigned ring = cfg->ring_size ? cfg->ring_size : RING_DEFAULT;
	if (ring < 64 || ring > 32768)
		return vsb_fail(e, VSB_ERR_USAGE, "afxdp: ring size %u out of range 64..32768", ring);
	while (ring & (ring - 1))
		ring += ring & -ring; /* round up to a power of two */

	struct io_port *p = calloc(1, sizeof(*p));
	if (!p)
		return vsb_fail(e, VSB_ERR_NOMEM, "afxdp: out of memory");
	snprintf(p->ifname, sizeof(p->ifname), "%s", cfg->ifname);
	p->want_tx = !!cfg->want_tx;
	p->want_rx = !!cfg->want_rx;
	p->busy_poll = cfg->busy_poll;
	p->queue = cfg->queue;
	p->ring = ring;
	p->fd = p->map_fd = p->prog_fd = p->link_fd = -1;
	p->ifindex = (int)if_nametoindex(p->ifname);
	if (!p->ifindex) {
		int err = errno;
		free(p);
		return vsb_fail(e, VSB_ERR_IFACE, "afxdp: interface %s: %s: check --port and --netns",
				cfg->ifname, strerror(err));
	}
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	setrlimit(RLIMIT_MEMLOCK, &rl); /* kernels >= 5.11 charge memcg instead; failure is harmless */

	uint32_t ntx = p->want_tx ? ring : 0, nrx = p->want_rx ? ring : 0;
	p->area_len = (size_t)(ntx + nrx) * FRAME_SIZE;
	p->area = mmap(NULL, p->area_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	p->tx_free = calloc(ntx + 1, sizeof(uint64_t));
	p->rx_stash = calloc(nrx + 1, sizeof(uint64_t));
	if (p->area == MAP_FAILED || !p->tx_free || !p->rx_stash) {
		size_t len = p->area_len;
		if (p->area == MAP_FAILED)
			p->area = NULL;
		afxdp_close(p);
		return vsb_fail(e, VSB_ERR_NOMEM, "afxdp: cannot allocate a %zu-byte umem", len);
	}

	/* Attempts, in order: bind mode x XDP mode x program. */
	uint16_t binds[2] = { XDP_COPY | XDP_USE_NEED_WAKEUP, 0 };
	int nbind = 1;
	if (cfg->zerocopy) {
		binds[0] = XDP_ZEROCOPY | XDP_USE_NEED_WAKEUP;
		binds[1] = XDP_COPY | XDP_USE_NEED_WAKEUP;
		nbind = 2;
	}
	uint32_t modes[2] = { XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE };
	int m0 = cfg->xdp_mode == 2 ? 1 : 0, m1 = cfg->xdp_mode == 1 ? 1 : 2;
	/* The builtin program first: its BPF link dies with the process, so even a SIGKILLed run
	 * leaves no program behind. libxdp's (netlink-attached) program is the fallback. */
	enum prog_kind progs[2] = { PROG_BUILTIN, PROG_LIBXDP };
	int g0 = 0, nprog = 2;
	const char *force = getenv("VSB_AFXDP_PROG");
	if (force && !strcmp(force, "libxdp"))
		g0 = 1;
	if (!p->want_rx) { /* TX only: no program, XDP mode irrelevant */
		modes[0] = 0;
		m0 = 0, m1 = 1;
		progs[0] = PROG_NONE;
		nprog = 1;
	}

	lib_msg[0] = 0;
	int64_t busy_until = now_ns() + 1000000000LL;
	char tried[256] = "";
	size_t tl = 0;
	int err = 0;
	for (int b = 0; b < nbind; b++)
		for (int m = m0; m < m1; m++)
			for (int g = g0; g < nprog; g++) {
				/* EBUSY right after a close: the kernel frees a socket's queue binding
				 * in deferred work (tens of ms). Retry for up to a second in all, unless a
				 * foreign XDP program is what is in the way. */
				for (;;) {
					lib_quiet(1);
					err = -try_open(p, binds[b], modes[m], progs[g]);
					lib_quiet(0);
					if (err != EBUSY || now_ns() > busy_until ||
					    (progs[g] == PROG_BUILTIN && attached_prog(p->ifindex)))
						break;
					struct timespec ts = { 0, 20000000 };
					nanosleep(&ts, NULL);
				}
				if (!err)
					goto opened;
				if (tl < sizeof(tried))
					tl += snprintf(tried + tl, sizeof(tried) - tl, "%s%s/%s/%s: %s",
						       tl ? ", " : "", binds[b] & XDP_ZEROCOPY ? "zerocopy" : "copy",
						       modes[m] == XDP_FLAGS_DRV_MODE ? "native" :
						       modes[m] ? "generic" : "no-prog",
						       prog_names[progs[g]], strerror(err));
				if (err == EPERM || err == EACCES || err == ENODEV || err == ENXIO)
					goto failed; /* no other combination will do better */
			}
failed:
	open_fail(e, p, err, tried);
	afxdp_close(p);
	return e->code;

opened:;
	struct xdp_options opt = { 0 };
	socklen_t ol = sizeof(opt);
	if (getsockopt(p->fd, SOL_XDP, XDP_OPTIONS, &opt, &ol) == 0)
		p->zc = !!(opt.flags & XDP_OPTIONS_ZEROCOPY);
	if (p->want_tx) {
		unsigned budget = VSB_MIN(ring, IO_MAX_BATCH); /* one kick sends a whole batch */
		/* older kernels lack the option and send 32 per kick: tx_kick() then repeats */
		setsockopt(p->fd, SOL_XDP, XDP_MAX_TX_SKB_BUDGET, &budget, sizeof(budget));
		for (uint32_t i = 0; i < ntx; i++)
			p->tx_free[i] = (uint64_t)(ntx - 1 - i) * FRAME_SIZE; /* pops in address order */
		p->tx_nfree = ntx;
	}
	if (p->want_rx) {
		for (uint32_t i = 0; i < nrx; i++)
			p->rx_stash[i] = (uint64_t)(ntx + i) * FRAME_SIZE;
		p->rx_nstash = nrx;
		uint32_t idx;
		if (xsk_ring_prod__reserve(&p->fq, nrx, &idx) != nrx) {
			afxdp_close(p);
			return vsb_fail(e, VSB_ERR_SOCKET, "afxdp: cannot fill the fill ring of %s",
					cfg->ifname);
		}
		for (uint32_t i = 0; i < nrx; i++)
			*xsk_ring_prod__fill_addr(&p->fq, idx + i) = p->rx_stash[--p->rx_nstash];
		xsk_ring_prod__submit(&p->fq, nrx);
	}
	*out = p;
	return 0;
}

static void afxdp_close(struct io_port *p)
{
	if (!p)
		return;
	teardown(p);
	if (p->area)
		munmap(p->area, p->area_len);
	free(p->tx_free);
	free(p->rx_stash);
	free(p);
}

static int afxdp_available(struct vsb_error *e)
{
	int fd = socket(AF_XDP, SOCK_RAW, 0);
	if (fd < 0) {
		int err = errno;
		return vsb_fail(e, VSB_ERR_UNSUPPORTED, "AF_XDP socket: %s: %s", strerror(err),
				err == EAFNOSUPPORT ? "the kernel has no AF_XDP (CONFIG_XDP_SOCKETS=y needed)"
				: (err == EPERM || err == EACCES) ? "run as root (CAP_NET_RAW)"
				: "AF_XDP unusable here");
	}
	close(fd);
	return 0;
}

/* ---- TX ---- */

/* Kick the kernel to send what is in the TX ring. Copy mode always needs it. */
static void tx_kick(struct io_port *p)
{
	if (p->zc && !xsk_ring_prod__needs_wakeup(&p->tx))
		return;
	for (int tries = 0; tries < 8; tries++) {
		if (sendto(p->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
			return;
		int err = errno;
		if (err == EBUSY)
			p->tx_errors++; /* a frame was completed without being sent */
		if (err != EAGAIN && err != EBUSY && err != ENOBUFS && err != EINTR) {
			p->tx_errors++; /* ENETDOWN, ENXIO...: the device is not sending */
			return;
		}
		if (xsk_prod_nb_free(&p->tx, p->ring) >= p->ring)
			return; /* the kernel took everything */
	}
}

static void tx_reclaim(struct io_port *p)
{
	uint32_t idx, n = xsk_ring_cons__peek(&p->cq, p->ring, &idx);
	for (uint32_t i = 0; i < n; i++)
		p->tx_free[p->tx_nfree++] = *xsk_ring_cons__comp_addr(&p->cq, idx + i);
	if (n) {
		xsk_ring_cons__release(&p->cq, n);
		p->tx_inflight -= n;
	}
}

static unsigned afxdp_tx_get(struct io_port *p, struct io_buf *b, unsigned n)
{
	if (!p->want_tx)
		return 0;
	p->tx_nfree += p->tx_reserved; /* an unsubmitted earlier reservation goes back */
	p->tx_reserved = 0;
	if (p->tx_nfree < n) {
		tx_reclaim(p);
		if (p->tx_nfree < n && p->tx_inflight) {
			tx_kick(p); /* frames may still sit in the TX ring */
			tx_reclaim(p);
		}
	}
	if (p->tx_nfree < n) {
		p->tx_ring_empty++;
		n = p->tx_nfree;
	}
	p->tx_nfree -= n;
	for (unsigned i = 0; i < n; i++) {
		uint64_t a = p->tx_free[p->tx_nfree + i];
		b[i].data = p->area + a;
		b[i].len = 0;
		b[i].cap = FRAME_SIZE;
		b[i].priv = NULL;
		b[i].handle = a;
	}
	p->tx_reserved = n;
	return n;
}

static unsigned afxdp_tx_put(struct io_port *p, struct io_buf *b, unsigned n)
{
	uint32_t base = p->tx_nfree, res = p->tx_reserved, idx;
	n = VSB_MIN(n, res);
	p->tx_reserved = 0;
	/* The TX partition has as many frames as the ring has slots, so this cannot fail. */
	if (n && xsk_ring_prod__reserve(&p->tx, n, &idx) != n) {
		p->tx_errors += n;
		n = 0;
	}
	for (unsigned i = 0; i < n; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&p->tx, idx + i);
		d->addr = p->tx_free[base + i];
		d->len = VSB_MIN(b[i].len, FRAME_SIZE);
		d->options = 0;
	}
	for (uint32_t i = n; i < res; i++) /* unsubmitted: back on the free stack */
		p->tx_free[p->tx_nfree++] = p->tx_free[base + i];
	if (n) {
		xsk_ring_prod__submit(&p->tx, n);
		p->tx_inflight += n;
		tx_kick(p);
	}
	return n;
}

static void afxdp_tx_flush(struct io_port *p)
{
	if (!p->want_tx)
		return;
	p->tx_nfree += p->tx_reserved;
	p->tx_reserved = 0;
	int64_t end = now_ns() + FLUSH_NS;
	for (;;) {
		tx_reclaim(p);
		if (!p->tx_inflight || now_ns() > end)
			return;
		tx_kick(p);
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	}
}

/* ---- RX ---- */

static void rx_refill(struct io_port *p)
{
	uint32_t idx, n = VSB_MIN(xsk_prod_nb_free(&p->fq, p->rx_nstash), p->rx_nstash);
	if (!n || xsk_ring_prod__reserve(&p->fq, n, &idx) != n)
		return;
	for (uint32_t i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&p->fq, idx + i) = p->rx_stash[--p->rx_nstash];
	xsk_ring_prod__submit(&p->fq, n);
}

static unsigned afxdp_rx_get(struct io_port *p, struct io_buf *b, unsigned n, int timeout_us)
{
	uint32_t idx, got;
	if (!p->want_rx)
		return 0;
	if (xsk_ring_prod__needs_wakeup(&p->fq))
		recvfrom(p->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	got = xsk_ring_cons__peek(&p->rx, n, &idx);
	if (!got && timeout_us > 0) {
		if (p->busy_poll) {
			int64_t end = now_ns() + (int64_t)timeout_us * 1000;
			for (unsigned spin = 1; !(got = xsk_ring_cons__peek(&p->rx, n, &idx)); spin++) {
				if (!(spin & 63) && now_ns() > end)
					break;
				cpu_relax();
			}
		} else {
			struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
			struct timespec ts = { timeout_us / 1000000, (timeout_us % 1000000) * 1000L };
			if (ppoll(&pfd, 1, &ts, NULL) > 0)
				got = xsk_ring_cons__peek(&p->rx, n, &idx);
		}
	}
	for (uint32_t i = 0; i < got; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&p->rx, idx + i);
		b[i].data = p->area + d->addr;
		b[i].len = d->len;
		b[i].cap = FRAME_SIZE - (uint32_t)(d->addr & (FRAME_SIZE - 1));
		b[i].priv = NULL;
		b[i].handle = d->addr;
	}
	p->rx_held += got;
	return got;
}

static void afxdp_rx_put(struct io_port *p, struct io_buf *b, unsigned n)
{
	n = VSB_MIN(n, p->rx_held);
	if (!n)
		return;
	for (unsigned i = 0; i < n; i++)
		p->rx_stash[p->rx_nstash++] = b[i].handle & ~(uint64_t)(FRAME_SIZE - 1);
	xsk_ring_cons__release(&p->rx, n);
	p->rx_held -= n;
	rx_refill(p);
}

static void afxdp_stats(struct io_port *p, struct io_port_stats *s)
{
	struct xdp_statistics st = { 0 };
	socklen_t len = sizeof(st);
	memset(s, 0, sizeof(*s));
	if (getsockopt(p->fd, SOL_XDP, XDP_STATISTICS, &st, &len) != 0)
		memset(&st, 0, sizeof(st));
	s->rx_dropped = st.rx_dropped + st.rx_ring_full + st.rx_invalid_descs;
	s->rx_ring_full = st.rx_ring_full;
	s->tx_errors = p->tx_errors + st.tx_invalid_descs;
	s->tx_ring_empty = p->tx_ring_empty;
}

const char *io_afxdp_mode_used(struct io_port *p)
{
	if (!p || p->prog == PROG_NONE)
		return "none";
	return p->xdp_flags & XDP_FLAGS_DRV_MODE ? "native" : "generic";
}

const char *io_afxdp_prog_used(struct io_port *p) { return p ? prog_names[p->prog] : "none"; }

const char *io_afxdp_bind_used(struct io_port *p) { return p && p->zc ? "zerocopy" : "copy"; }

const struct io_ops io_afxdp_ops = {
	.name = "afxdp",
	.layer = IO_L2,
	/* a UMEM frame of 2048 B without multi-buffer, less the kernel's receive headroom (256 B,
	 * XDP_PACKET_HEADROOM): measured on veth at MTU 9000, 1796 B arrive and 1797 B are dropped */
	.max_frame = FRAME_SIZE - AFXDP_RX_HEADROOM + FCS_LEN,
	.available = afxdp_available,
	.open = afxdp_open,
	.close = afxdp_close,
	.tx_get = afxdp_tx_get,
	.tx_put = afxdp_tx_put,
	.rx_get = afxdp_rx_get,
	.rx_put = afxdp_rx_put,
	.stats = afxdp_stats,
	.tx_flush = afxdp_tx_flush,
};
