/* The generator: template + rate mode + per-packet fields (TRex's stream), userspace or in-kernel
 * (io_kern_ops); flow churn (churn.h). generator.c. */
#ifndef VSB_GENERATOR_H
#define VSB_GENERATOR_H
#include <stdint.h>
#include "churn.h"
#include "common.h"
#include "frame.h"
#include "io.h"

struct engine;
struct port;
struct trial_params;
struct trial_result;

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
	/* tester gaps (opts.h VSB_GAP_US): departures skipped because the generator did not run */
	uint64_t gap_ticks, gap_ns;      /* 0: a late generator catches up */
	uint64_t skipped, gaps, gap_max_ticks;
	int64_t late;                    /* ticks behind the schedule after the last step */
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
/* The same on port io with template tmpl (another generator of the port: gen_workers.h). */
int txgen_init_on(struct txgen *g, struct engine *en, struct io_port *io, const struct frame_tmpl *tmpl,
		  const struct trial_params *t, struct vsb_error *e);
/* Generator i of n sharing one port: 1/n of the rate and of the frame count (the remainder to the
 * first ones). */
void txgen_share(struct txgen *g, unsigned i, unsigned n);
void txgen_start(struct txgen *g, uint64_t now);
/* After a run: the churn's distinct flows into r and the next run's fresh tuples into en. */
void txgen_churn_done(const struct txgen *g, struct engine *en, struct trial_result *r);
/* 0 if this engine can churn with t's arrival and life, else an error code with e filled. */
int churn_supported(const struct engine *en, const struct trial_params *t, struct vsb_error *e);
unsigned txgen_step(struct txgen *g, uint64_t now);
/* TSC of the next departure (now if unpaced or behind); skipped departures count as gone. */
uint64_t txgen_next_due(const struct txgen *g);
/* Sleep (coarsely) and spin (finely) until `when`, or until stop. */
void wait_until(uint64_t when);
#endif
