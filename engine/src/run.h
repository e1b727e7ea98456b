/* One run (or one control-mode trial): ports, the generator, the receive accounting, the result. */
#ifndef VSB_RUN_H
#define VSB_RUN_H
#include <stdint.h>
#include "churn.h"
#include "frame.h"
#include "io.h"
#include "netutil.h"
#include "opts.h"
#include "rxstats.h"

struct port {
	const char *name;
	struct iface_info info;
	struct io_port *io;
	uint8_t out_dmac[6];   /* fwd --rewrite-mac: destination MAC for frames leaving this port */
};

/* What one trial does. Control mode builds these from commands; the CLI from options. */
struct trial_params {
	enum mode mode;
	double rate;
	unsigned burst;
	uint32_t flows;
	double flow_arrival, flow_life;  /* churn (churn.h): new flows/s, seconds each; 0 = off */
	const struct size_seq *sizes;
	double duration;
	uint64_t count;
	double warmup, drain, interval, idle;
	double drain_quiet;              /* end the drain once nothing arrived for this long; 0 = off */
	uint8_t epoch;
	uint16_t stream;
};

#define MAX_WARNINGS 8

struct trial_result {
	int trial;                       /* control mode: trial number, else -1 */
	uint64_t tx_frames, tx_bytes;    /* bytes with FCS */
	uint64_t fwd_frames[MAX_PORTS];  /* reflect/fwd: frames sent out of port i */
	uint64_t tx_dropped;             /* fwd/reflect: frames that found no TX slot */
	double tx_s;                     /* sending period, s */
	double rx_s;                     /* receive period, s */
	double cpu_s;
	int latency_kind;                /* 0 none, 1 one-way, 2 round-trip */
	struct io_port_stats pstats[MAX_PORTS];
	char warnings[MAX_WARNINGS][160];
	int nwarn;
	int interrupted;
	uint64_t churn_flows;            /* churn: distinct flows that carried a frame (measured phase) */
	uint32_t churn_space;            /* churn: distinct tuples before one comes back */
};

struct engine {
	struct opts o;
	const struct io_ops *ops;
	struct port ports[MAX_PORTS];
	int nports;
	struct frame_tmpl *tmpl;
	struct rxstats rx;
	int trials;                      /* control mode counter */
	uint64_t rx_seen;                /* frames received (any kind), for interval records */
	uint64_t churn_base;             /* churn: flow id offset of the next run (fresh tuples) */
};

/* Generator: template + rate mode + per-packet fields (TRex's stream). */
struct txgen {
	const struct io_ops *ops;
	struct io_port *port;
	const struct frame_tmpl *tmpl;
	const struct size_seq *sizes;
	double rate;
	unsigned burst, batch;
	uint64_t limit;                  /* 0 = none */
	uint64_t start_tsc;
	double ticks_per_burst;
	uint64_t sent, bytes;
	unsigned size_idx;
	uint32_t flow, flows;
	const struct io_kern_ops *kern;  /* in-kernel generator (xdplive): batch = frames per call */
	int kern_err;                    /* -errno of the last failed kernel send, 0 */
	int churning;                    /* flow churn on: flows come from `churn`, not flow/flows */
	struct churn churn;
};

/* 0, or an error code with e filled (a kernel generator that refused the trial's frames). */
int txgen_init(struct txgen *g, struct engine *en, struct port *p, const struct trial_params *t,
	       struct vsb_error *e);
void txgen_start(struct txgen *g, uint64_t now);
/* After a run: the churn's distinct flows into r and the next run's fresh tuples into en. */
void txgen_churn_done(const struct txgen *g, struct engine *en, struct trial_result *r);
/* 0 if this engine can churn with t's arrival and life, else an error code with e filled. */
int churn_supported(const struct engine *en, const struct trial_params *t, struct vsb_error *e);
unsigned txgen_step(struct txgen *g, uint64_t now);
/* TSC of the next departure (now if unpaced or behind). */
uint64_t txgen_next_due(const struct txgen *g);
/* Sleep (coarsely) and spin (finely) until `when`, or until stop. */
void wait_until(uint64_t when);

void trial_warn(struct trial_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Engine lifecycle (run.c) */
int engine_setup(struct engine *en, struct vsb_error *e); /* enter netns, pin, open ports, template */
void engine_teardown(struct engine *en);
void trial_params_from_opts(const struct opts *o, struct trial_params *t);

/* Modes (mode_*.c). Each fills r; rx accounting lands in en->rx. */
int run_gen(struct engine *en, const struct trial_params *t, struct trial_result *r);
int run_sink(struct engine *en, const struct trial_params *t, struct trial_result *r);
int run_loop(struct engine *en, const struct trial_params *t, struct trial_result *r);
int run_reflect(struct engine *en, const struct trial_params *t, struct trial_result *r);
int run_fwd(struct engine *en, const struct trial_params *t, struct trial_result *r);
int run_trial(struct engine *en, const struct trial_params *t, struct trial_result *r);

/* Records (report.c) */
void emit_start(const struct engine *en, const struct trial_params *t);
void emit_interval(double t_s, uint64_t tx, uint64_t rx, double dt, uint64_t dtx, uint64_t drx);
void emit_warning(const char *msg);
void emit_final(struct engine *en, const struct trial_params *t, struct trial_result *r);

int probe_main(struct opts *o);
int control_main(struct engine *en);



/* In-kernel receive side (mode_kern.c): sink mode, and the loop's receive port. */
int run_sink_kern(struct engine *en, const struct trial_params *t, struct trial_result *r);
/* Wait (at most drain_s, or until nothing arrived for quiet_s when > 0) until the kernel sink has
 * `sent` distinct frames; then collect them. */
void kern_rx_finish(struct engine *en, struct port *rxp, uint64_t sent, double drain_s, double quiet_s,
		    double *rx_s);
/* Frames the receive port has seen so far (kernel or userspace accounting). */
uint64_t rx_seen_now(struct engine *en, struct port *rxp);
/* Frames per BPF_PROG_RUN call of an unpaced kernel generator (VSB_XDPLIVE_CHUNK). */
unsigned kern_chunk(void);

/* Parse and account a batch of received frames (run.c). */
void rx_account_batch(struct engine *en, struct io_buf *b, unsigned n, uint64_t now);
#endif
