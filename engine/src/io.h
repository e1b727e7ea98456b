/* I/O backend function table. One C file per backend (io_afpacket.c, io_udp.c, io_afxdp.c,
 * io_dpdk.c, xdplive/io_xdplive.c). A backend moves either whole L2 frames (afpacket, afxdp, dpdk) or UDP
 * payloads (udp); or (xdplive) builds, sends and accounts frames in the kernel (io_kern_ops). */
#ifndef VSB_IO_H
#define VSB_IO_H
#include <stdint.h>
#include <stddef.h>
#include "common.h"
#include "frame.h"
#include "netutil.h"

struct opts;
struct jout;

enum io_layer { IO_L2 = 0, IO_L4 = 1 };

struct io_buf {
	uint8_t *data;    /* frame (L2) or payload (L4) */
	uint32_t len;     /* bytes valid (rx) / to send (tx) */
	uint32_t cap;     /* capacity (tx) */
	void *priv;       /* backend cookie: udp keeps the peer address here (reflect replies to it) */
	uint64_t handle;  /* backend cookie: ring slot / umem address */
	uint32_t flow;    /* tx: flow index of the frame (udp picks the socket of that source port) */
};

/* What a port is opened for. */
struct io_config {
	const char *ifname;
	int want_tx, want_rx;
	unsigned ring_size;     /* frames per ring (0 = backend default) */
	unsigned batch;         /* max frames per tx/rx call (<= 256) */
	int busy_poll;          /* rx: spin instead of blocking */
	/* L4 (udp) addressing; L2 backends ignore these */
	uint32_t sip, dip;      /* host order */
	uint16_t sport, dport;
	uint32_t nsports;       /* udp: number of source ports (flows) -> sockets */
	int xdp_mode;           /* afxdp: 0 auto, 1 native (drv), 2 generic (skb) */
	int zerocopy;           /* afxdp: 1 try zero copy */
	unsigned queue;         /* afxdp: queue id */
	int rt_client;          /* udp: a round-trip client receives the replies on its TX sockets */
	int rx_ring_v3;         /* afpacket: TPACKET_V3 block ring (throughput) instead of V2 (latency) */
	int mtu;                /* the interface's MTU (0 = unknown): afpacket and udp size their buffers
	                         * for it (frames above 1518 B need an MTU above 1500) */
};

struct io_port_stats {
	uint64_t rx_dropped;    /* dropped by the backend's receive ring (tp_drops, xsk rx_dropped...) */
	uint64_t rx_ring_full;
	uint64_t tx_errors;     /* send failures / frames rejected */
	uint64_t tx_ring_empty;
	/* Frames counted as sent (tx_frames) that the port did not take: an in-kernel generator counts
	 * each frame its program sends; the veth peer's full ring (or a peer without NAPI) then refuses
	 * some. Userspace backends count only what the kernel took (their refusals are tx_errors, not in
	 * tx_frames): 0. */
	uint64_t tx_refused;
};

struct io_port; /* backend private */
struct rxstats;

/* Backends whose frames never reach userspace (xdplive): the kernel generates and accounts them.
 * The modes call these instead of tx_get/tx_put and rx_get/rx_put. */
struct io_kern_ops {
	/* New generator run: template t (its epoch), sizes s, flows; the sequence restarts at 0. */
	int (*gen_prepare)(struct io_port *p, const struct frame_tmpl *t, const struct size_seq *s,
			   uint32_t flows, struct vsb_error *e);
	/* The run's schedule, kept by the kernel: departures of `burst` frames every period_ns from
	 * start_ns (CLOCK_MONOTONIC; period_ns 0 = as fast as possible), nothing from end_ns on (0 = no
	 * end), at most `limit` frames (0 = no limit), sent or skipped: departures due while the
	 * program did not run for more than gap_ns (a stall of the tester's CPU) are skipped and
	 * counted, not sent back to back afterwards (0: caught up). */
	int (*gen_schedule)(struct io_port *p, uint64_t start_ns, double period_ns, unsigned burst,
			    uint64_t end_ns, uint64_t limit, uint64_t gap_ns);
	/* One run of n iterations now: each sends a frame if the schedule says so. *frames and *bytes:
	 * exact totals since gen_prepare (read back from the kernel, not assumed). 0, or -errno (a
	 * signal ending the call early is not an error). */
	int (*gen_send)(struct io_port *p, uint32_t n, uint64_t *frames, uint64_t *bytes);
	/* The run's skipped departures (frames), gaps and longest gap (ns) so far. */
	void (*gen_gaps)(struct io_port *p, uint64_t *skipped, uint64_t *gaps, uint64_t *max_ns);
	/* CLOCK_MONOTONIC ns of the last frame sent. */
	uint64_t (*gen_last_ns)(struct io_port *p);
	/* Frames per gen_send call of an unpaced run: a run stops on time. */
	unsigned (*gen_chunk)(void);
	/* Other generators (gen_workers.h) sent `others` frames out of this port's interface since its
	 * gen_prepare: its interface counters (stats: tx_refused) then account for them too. */
	void (*gen_shared)(struct io_port *p, uint64_t others);
	/* Longest size list (--size) the generator holds. */
	unsigned max_sizes;
	/* Receive side: start accounting epoch `epoch` afresh. */
	int (*rx_reset)(struct io_port *p, uint8_t epoch, struct vsb_error *e);
	/* Live totals (engine frames of this epoch, distinct sequences); cheap, call often. */
	void (*rx_poll)(struct io_port *p, uint64_t *frames, uint64_t *unique);
	/* Copy the kernel's accounting into rx; *rx_s = first to last frame received, s. */
	int (*rx_collect)(struct io_port *p, struct rxstats *rx, double *rx_s);
};

struct io_ops {
	const char *name;
	enum io_layer layer;
	/* The largest frame (bytes, FCS included) the backend carries; the engine refuses larger
	 * sizes (exit 2) naming this limit. */
	unsigned max_frame;
	/* Is the backend usable here? 0 = yes; else VSB_ERR_UNSUPPORTED with reason in e. */
	int (*available)(struct vsb_error *e);
	int (*open)(const struct io_config *cfg, struct io_port **out, struct vsb_error *e);
	void (*close)(struct io_port *p);
	/* 1: close() may run for several ports at once (engine_teardown does: each AF_PACKET socket's
	 * release waits for two RCU grace periods, ~17 ms each here; an NF's four sockets closed one
	 * after the other kept its exit 140 ms after its final record). */
	int closes_at_once;
	/* TX: reserve up to n writable buffers (data/cap set); returns how many. */
	unsigned (*tx_get)(struct io_port *p, struct io_buf *b, unsigned n);
	/* TX: submit the first n reserved buffers (len set; for L4, priv may name the destination) and
	 * kick the kernel. Returns frames accepted (< n means the rest were dropped and counted). */
	unsigned (*tx_put)(struct io_port *p, struct io_buf *b, unsigned n);
	/* RX: up to n frames. timeout_us: 0 = poll once, >0 = wait at most that long. */
	unsigned (*rx_get)(struct io_port *p, struct io_buf *b, unsigned n, int timeout_us);
	/* RX: give the n buffers returned by rx_get back to the ring. */
	void (*rx_put)(struct io_port *p, struct io_buf *b, unsigned n);
	void (*stats)(struct io_port *p, struct io_port_stats *s);
	/* Wait until transmitted frames have left (ring drained); may be NULL. */
	void (*tx_flush)(struct io_port *p);
	/* Ports that are not kernel interfaces (dpdk vdevs): describe port i of o (MAC, up) instead of
	 * iface_get(); called for i = 0, 1, ... before any open(). `ring`: the frames per ring the ports
	 * will be opened with (io_config.ring_size; 0 = the backend's default). NULL = kernel
	 * interfaces. */
	int (*port_info)(const struct opts *o, unsigned ring, int i, struct iface_info *info,
			 struct vsb_error *e);
	/* Extra fields for this backend's entry in `probe` (self: this table); may be NULL. */
	void (*probe_extra)(const struct io_ops *self, struct jout *j);
	/* In-kernel generation and accounting; NULL for backends that move frames to userspace. */
	const struct io_kern_ops *kern;
};

extern const struct io_ops io_afpacket_ops;
extern const struct io_ops io_udp_ops;
#ifdef VSB_HAVE_AFXDP
extern const struct io_ops io_afxdp_ops;
#endif
#ifdef VSB_HAVE_DPDK
extern const struct io_ops io_dpdk_ops;
#endif
#ifdef VSB_HAVE_XDPLIVE
extern const struct io_ops io_xdplive_ops;
#endif

/* All compiled-in backends, NULL terminated. */
extern const struct io_ops *const io_backends[];
const struct io_ops *io_find(const char *name);
/* Can ops carry every size of s through a port of MTU mtu (0 = unknown / not a kernel interface)?
 * 0 if so, else -1 with msg naming the size, the limit and the fix. */
int io_size_check(const struct io_ops *ops, const struct size_seq *s, const char *port, int mtu,
		  char *msg, size_t msglen);

#define IO_MAX_BATCH 256

#endif
