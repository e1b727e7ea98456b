/* AF_PACKET backend: PACKET_TX_RING (TPACKET_V2) with PACKET_QDISC_BYPASS for sending; an RX ring,
 * TPACKET_V3 blocks (throughput: sink) or TPACKET_V2 frames (latency: loop, reflect, fwd), since a V3
 * block reaches user space only when full or when its retire timer (>= 1 ms) fires. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include "io.h"
#include "tsc.h"

#define AFP_FRAME 2048        /* a V2 slot: header and a frame of MTU up to 1934 */
#define AFP_FRAME_JUMBO 9216  /* a V2 slot for larger MTUs: frames to 9018 B (and a VLAN tag) */
#define AFP_SLOT_HDR 96       /* room a slot keeps before the frame (tpacket2_hdr, sockaddr_ll, align) */
#define AFP_BLOCK (4096 * 16)  /* V2 block of standard slots (32) */
#define AFP_BLOCK_JUMBO (AFP_FRAME_JUMBO * 4) /* of jumbo slots: 9 pages, slots back to back */
_Static_assert(AFP_BLOCK_JUMBO % 4096 == 0 && AFP_FRAME_JUMBO % TPACKET_ALIGNMENT == 0,
	       "a V2 block is whole pages of whole, aligned slots");
#define AFP_V3_BLOCK (1u << 20)
#define AFP_V3_BLOCKS 16

struct ring {
	int fd;
	uint8_t *map;
	size_t map_len;
	unsigned nframes, head;     /* V2: frame slots */
	unsigned slot;              /* V2: bytes per slot (AFP_FRAME, or AFP_FRAME_JUMBO above MTU 1934) */
	unsigned nblocks, blk;      /* V3: blocks */
	/* V3 iteration state inside the current block */
	struct tpacket3_hdr *v3_pkt;
	unsigned v3_left;
	int v3_block_open;
};

struct io_port {
	struct io_config cfg;
	int ifindex;
	struct ring tx, rx;
	int rx_v3;
	uint64_t tx_errors, tx_ring_empty;
	uint64_t rx_drops_seen;
};

/* Closing an AF_PACKET socket waits for an RCU grace period (packet_release: 12-15 ms on this
 * VM), and so does binding one that was created with a protocol (its hook is unregistered first):
 * each engine paid both before its start record. The socket that tells whether AF_PACKET is usable
 * is kept for the first port's TX side, and the RX socket is created without a protocol and gets
 * ETH_P_ALL at bind, after its ring is set. */
static int spare_fd = -1;

static int afp_socket(const char *what, struct vsb_error *e)
{
	int fd = spare_fd;
	spare_fd = -1;
	if (fd < 0)
		fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int err = errno;
		vsb_fail(e, err == EPERM ? VSB_ERR_PERM : VSB_ERR_SOCKET, "AF_PACKET %s: %s%s", what,
			 strerror(err), err == EPERM ? " (run as root or with CAP_NET_RAW)" : "");
	}
	return fd;
}

static int afp_available(struct vsb_error *e)
{
	if (spare_fd >= 0)
		return 0;
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return vsb_fail(e, errno == EPERM ? VSB_ERR_PERM : VSB_ERR_UNSUPPORTED,
				"AF_PACKET socket: %s%s", strerror(errno),
				errno == EPERM ? " (run as root or with CAP_NET_RAW)" : "");
	spare_fd = fd;
	return 0;
}

static int setopt(int fd, int opt, const void *v, socklen_t l, const char *what, struct vsb_error *e)
{
	if (setsockopt(fd, SOL_PACKET, opt, v, l) < 0)
		return vsb_fail(e, VSB_ERR_SOCKET, "AF_PACKET %s: %s", what, strerror(errno));
	return 0;
}

static int bind_if(int fd, int ifindex, int proto, struct vsb_error *e)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_ifindex = ifindex, .sll_protocol = proto};
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		return vsb_fail(e, VSB_ERR_SOCKET, "AF_PACKET bind: %s", strerror(errno));
	return 0;
}

/* V2 slot size for the port's MTU: the standard slot holds a frame of any MTU it can (1500 and a
 * little more, as ever); a larger MTU gets slots of AFP_FRAME_JUMBO (a V2 ring truncates, and its
 * TX refuses, a frame longer than its slot: 66 B of header before a received frame, 32 B before
 * a sent one). */
static unsigned afp_slot(int mtu)
{
	unsigned need = (unsigned)(mtu > 0 ? mtu : 0) + ETH_HDR_LEN + 4 + AFP_SLOT_HDR;
	return need <= AFP_FRAME ? AFP_FRAME : AFP_FRAME_JUMBO;
}

/* A V2 block: a whole number of pages holding a whole number of slots, so that slot i lies at
 * i * slot in the mapping (v2_slot). */
static unsigned afp_block(unsigned slot)
{
	return slot == AFP_FRAME ? AFP_BLOCK : AFP_BLOCK_JUMBO;
}

static int open_tx(struct io_port *p, struct vsb_error *e)
{
	int fd = afp_socket("TX socket", e);
	if (fd < 0)
		return e->code;
	p->tx.fd = fd;
	int v = TPACKET_V2, one = 1;
	/* Shallow on purpose: the socket's default send buffer already bounds the frames in flight
	 * (each is charged until the peer frees it), and a small ring keeps the skbs, the slots and
	 * the receiver's queue in cache (measured: 8192 slots and a 64 MiB buffer were slower). */
	unsigned n = p->cfg.ring_size ? p->cfg.ring_size : 1024;
	unsigned slot = p->tx.slot = afp_slot(p->cfg.mtu);
	struct tpacket_req req = {.tp_block_size = afp_block(slot), .tp_frame_size = slot};
	req.tp_block_nr = (n * slot + req.tp_block_size - 1) / req.tp_block_size;
	req.tp_frame_nr = req.tp_block_nr * (req.tp_block_size / slot);
	if (setopt(fd, PACKET_VERSION, &v, sizeof(v), "PACKET_VERSION", e) ||
	    setopt(fd, PACKET_QDISC_BYPASS, &one, sizeof(one), "PACKET_QDISC_BYPASS", e) ||
	    setopt(fd, PACKET_TX_RING, &req, sizeof(req), "PACKET_TX_RING", e))
		return e->code;
	p->tx.nframes = req.tp_frame_nr;
	p->tx.map_len = (size_t)req.tp_block_nr * req.tp_block_size;
	p->tx.map = mmap(NULL, p->tx.map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (p->tx.map == MAP_FAILED) {
		p->tx.map = NULL;
		return vsb_fail(e, VSB_ERR_SOCKET, "AF_PACKET TX ring mmap: %s", strerror(errno));
	}
	return bind_if(fd, p->ifindex, 0, e);
}

static int open_rx(struct io_port *p, struct vsb_error *e)
{
	int fd = afp_socket("RX socket", e);
	if (fd < 0)
		return e->code;
	p->rx.fd = fd;
	int one = 1;
	/* Frames this host sends are not ours to receive. */
	setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	int v = p->rx_v3 ? TPACKET_V3 : TPACKET_V2;
	if (setopt(fd, PACKET_VERSION, &v, sizeof(v), "PACKET_VERSION", e))
		return e->code;
	if (p->rx_v3) {
		struct tpacket_req3 req = {.tp_block_size = AFP_V3_BLOCK, .tp_block_nr = AFP_V3_BLOCKS,
					   .tp_frame_size = AFP_FRAME, .tp_retire_blk_tov = 1};
		req.tp_frame_nr = AFP_V3_BLOCK / AFP_FRAME * AFP_V3_BLOCKS;
		if (setopt(fd, PACKET_RX_RING, &req, sizeof(req), "PACKET_RX_RING (V3)", e))
			return e->code;
		p->rx.nblocks = req.tp_block_nr;
		p->rx.map_len = (size_t)req.tp_block_size * req.tp_block_nr;
	} else {
		unsigned n = p->cfg.ring_size ? p->cfg.ring_size : 4096;
		unsigned slot = p->rx.slot = afp_slot(p->cfg.mtu);
		struct tpacket_req req = {.tp_block_size = afp_block(slot), .tp_frame_size = slot};
		req.tp_block_nr = (n * slot + req.tp_block_size - 1) / req.tp_block_size;
		req.tp_frame_nr = req.tp_block_nr * (req.tp_block_size / slot);
		if (setopt(fd, PACKET_RX_RING, &req, sizeof(req), "PACKET_RX_RING (V2)", e))
			return e->code;
		p->rx.nframes = req.tp_frame_nr;
		p->rx.map_len = (size_t)req.tp_block_nr * req.tp_block_size;
	}
	p->rx.map = mmap(NULL, p->rx.map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (p->rx.map == MAP_FAILED) {
		p->rx.map = NULL;
		return vsb_fail(e, VSB_ERR_SOCKET, "AF_PACKET RX ring mmap: %s", strerror(errno));
	}
	return bind_if(fd, p->ifindex, htons(ETH_P_ALL), e);
}

static void close_fd(void *fd)
{
	close(*(int *)fd);
}

static void afp_close(struct io_port *p)
{
	if (!p)
		return;
	if (p->tx.map)
		munmap(p->tx.map, p->tx.map_len);
	if (p->rx.map)
		munmap(p->rx.map, p->rx.map_len);
	void *fds[2];
	int n = 0;
	if (p->tx.fd >= 0)
		fds[n++] = &p->tx.fd;
	if (p->rx.fd >= 0)
		fds[n++] = &p->rx.fd;
	vsb_at_once(close_fd, fds, n); /* each release waits for RCU grace periods: shared at once */
	free(p);
}

static int afp_open(const struct io_config *cfg, struct io_port **out, struct vsb_error *e)
{
	struct io_port *p = calloc(1, sizeof(*p));
	if (!p)
		return vsb_fail(e, VSB_ERR_NOMEM, "out of memory");
	p->cfg = *cfg;
	p->tx.fd = p->rx.fd = -1;
	p->rx_v3 = cfg->rx_ring_v3;
	p->ifindex = if_nametoindex(cfg->ifname);
	if (!p->ifindex) {
		free(p);
		return vsb_fail(e, VSB_ERR_IFACE, "--port %s: no such interface in this namespace", cfg->ifname);
	}
	if ((cfg->want_tx && open_tx(p, e)) || (cfg->want_rx && open_rx(p, e))) {
		afp_close(p);
		return e->code;
	}
	*out = p;
	return 0;
}

static inline struct tpacket2_hdr *v2_slot(struct ring *r, unsigned i)
{
	return (struct tpacket2_hdr *)(r->map + (size_t)i * r->slot);
}

#define V2_DATA_OFF (TPACKET2_HDRLEN - sizeof(struct sockaddr_ll))

static unsigned afp_tx_get(struct io_port *p, struct io_buf *b, unsigned n)
{
	struct ring *r = &p->tx;
	unsigned i;
	for (i = 0; i < n; i++) {
		unsigned idx = (r->head + i) % r->nframes;
		struct tpacket2_hdr *h = v2_slot(r, idx);
		uint32_t st = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
		if (st == TP_STATUS_WRONG_FORMAT) {
			p->tx_errors++;
			__atomic_store_n(&h->tp_status, TP_STATUS_AVAILABLE, __ATOMIC_RELEASE);
		} else if (st != TP_STATUS_AVAILABLE) {
			break;
		}
		b[i].data = (uint8_t *)h + V2_DATA_OFF;
		b[i].cap = r->slot - V2_DATA_OFF;
		b[i].handle = idx;
		b[i].priv = NULL;
	}
	if (i < n)
		p->tx_ring_empty++;
	return i;
}

static unsigned afp_tx_put(struct io_port *p, struct io_buf *b, unsigned n)
{
	struct ring *r = &p->tx;
	for (unsigned i = 0; i < n; i++) {
		struct tpacket2_hdr *h = v2_slot(r, b[i].handle);
		h->tp_len = b[i].len;
		__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
	}
	r->head = (r->head + n) % r->nframes;
	for (int tries = 0; n && tries < 4; tries++) {
		if (send(r->fd, NULL, 0, MSG_DONTWAIT) >= 0)
			break;
		if (errno != EAGAIN && errno != ENOBUFS && errno != EINTR) {
			p->tx_errors++;
			break;
		}
	}
	return n;
}

static void afp_tx_flush(struct io_port *p)
{
	if (!p->tx.map)
		return;
	uint64_t end = tsc_now() + (uint64_t)(tsc_hz() * 0.2);
	for (;;) {
		int pending = 0;
		for (unsigned i = 0; i < p->tx.nframes; i++) {
			uint32_t st = __atomic_load_n(&v2_slot(&p->tx, i)->tp_status, __ATOMIC_ACQUIRE);
			if (st == TP_STATUS_SEND_REQUEST || st == TP_STATUS_SENDING) {
				pending = 1;
				break;
			}
		}
		if (!pending || tsc_now() > end)
			return;
		send(p->tx.fd, NULL, 0, MSG_DONTWAIT);
		cpu_relax();
	}
}

static int wait_rx(struct io_port *p, int timeout_us)
{
	if (timeout_us <= 0)
		return 0;
	if (p->cfg.busy_poll)
		return 1; /* caller spins */
	struct pollfd pfd = {.fd = p->rx.fd, .events = POLLIN};
	int ms = (timeout_us + 999) / 1000;
	return poll(&pfd, 1, ms) > 0;
}

static unsigned rx_v2(struct io_port *p, struct io_buf *b, unsigned n)
{
	struct ring *r = &p->rx;
	unsigned got = 0, idx = r->head;
	while (got < n) {
		struct tpacket2_hdr *h = v2_slot(r, idx);
		if (!(__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER))
			break;
		b[got].data = (uint8_t *)h + h->tp_mac;
		b[got].len = h->tp_snaplen;
		b[got].handle = idx;
		b[got].priv = NULL;
		got++;
		idx = (idx + 1) % r->nframes;
	}
	r->head = idx;
	return got;
}

static inline struct tpacket_block_desc *v3_block(struct ring *r, unsigned i)
{
	return (struct tpacket_block_desc *)(r->map + (size_t)i * AFP_V3_BLOCK);
}

/* V3: frames are handed out of the current block; the block goes back to the kernel in rx_put
 * once all its frames were consumed. */
static unsigned rx_v3(struct io_port *p, struct io_buf *b, unsigned n)
{
	struct ring *r = &p->rx;
	unsigned got = 0;
	if (r->v3_block_open && r->v3_left == 0)
		return 0; /* caller must rx_put before the next block */
	if (!r->v3_block_open) {
		struct tpacket_block_desc *bd = v3_block(r, r->blk);
		if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER))
			return 0;
		r->v3_block_open = 1;
		r->v3_left = bd->hdr.bh1.num_pkts;
		r->v3_pkt = (struct tpacket3_hdr *)((uint8_t *)bd + bd->hdr.bh1.offset_to_first_pkt);
	}
	while (got < n && r->v3_left) {
		struct tpacket3_hdr *h = r->v3_pkt;
		b[got].data = (uint8_t *)h + h->tp_mac;
		b[got].len = h->tp_snaplen;
		b[got].handle = r->v3_left == 1; /* last frame of the block releases it */
		b[got].priv = NULL;
		got++;
		r->v3_left--;
		r->v3_pkt = (struct tpacket3_hdr *)((uint8_t *)h + h->tp_next_offset);
	}
	return got;
}

static unsigned afp_rx_get(struct io_port *p, struct io_buf *b, unsigned n, int timeout_us)
{
	unsigned got = p->rx_v3 ? rx_v3(p, b, n) : rx_v2(p, b, n);
	if (got || timeout_us <= 0)
		return got;
	if (p->cfg.busy_poll) {
		uint64_t end = tsc_now() + (uint64_t)(tsc_hz() * timeout_us * 1e-6);
		while (!got && tsc_now() < end && !vsb_stop) {
			cpu_relax();
			got = p->rx_v3 ? rx_v3(p, b, n) : rx_v2(p, b, n);
		}
		return got;
	}
	if (wait_rx(p, timeout_us))
		got = p->rx_v3 ? rx_v3(p, b, n) : rx_v2(p, b, n);
	return got;
}

static void afp_rx_put(struct io_port *p, struct io_buf *b, unsigned n)
{
	struct ring *r = &p->rx;
	if (!p->rx_v3) {
		for (unsigned i = 0; i < n; i++)
			__atomic_store_n(&v2_slot(r, b[i].handle)->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		return;
	}
	if (r->v3_block_open && r->v3_left == 0) {
		__atomic_store_n(&v3_block(r, r->blk)->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		r->v3_block_open = 0;
		r->blk = (r->blk + 1) % r->nblocks;
	}
}

static void afp_stats(struct io_port *p, struct io_port_stats *s)
{
	memset(s, 0, sizeof(*s));
	if (p->rx.fd >= 0) {
		struct tpacket_stats_v3 st;
		socklen_t l = sizeof(st);
		/* PACKET_STATISTICS resets the kernel's counters on read: accumulate. */
		if (getsockopt(p->rx.fd, SOL_PACKET, PACKET_STATISTICS, &st, &l) == 0)
			p->rx_drops_seen += st.tp_drops;
	}
	s->rx_dropped = p->rx_drops_seen;
	s->tx_errors = p->tx_errors;
	s->tx_ring_empty = p->tx_ring_empty;
}

const struct io_ops io_afpacket_ops = {
	.name = "afpacket",
	.layer = IO_L2,
	.max_frame = FRAME_MAX, /* V2 slots sized for the port's MTU, V3 blocks of 1 MiB */
	.available = afp_available,
	.open = afp_open,
	.close = afp_close,
	.closes_at_once = 1,
	.tx_get = afp_tx_get,
	.tx_put = afp_tx_put,
	.rx_get = afp_rx_get,
	.rx_put = afp_rx_put,
	.stats = afp_stats,
	.tx_flush = afp_tx_flush,
};
