/* Several generators feeding one port (--generators N): the engine's own generator (number 0) plus
 * N - 1 threads, each with its own in-kernel generator (its own xdplive port on the same interface,
 * so its own BPF maps and sequence counter), its own stream id (--stream-id + i: a sequence space of
 * its own, which the sink accounts apart) and 1/N of the rate and the frame count, pinned to
 * --gen-cpus. They start together (a flag they wait on) and are joined after the send phase. gen_workers.c. */
#ifndef VSB_GEN_WORKERS_H
#define VSB_GEN_WORKERS_H
#include <pthread.h>
#include <stdint.h>
#include "common.h"
#include "generator.h"
#include "opts.h"

struct engine;
struct trial_params;
struct trial_result;

/* The send phase a worker runs (the mode's, handed in: no symbol circle): end TSC. */
typedef uint64_t (*gen_phase_fn)(struct txgen *g, double seconds);

struct gen_worker {
	pthread_t th;
	int started, cpu;
	struct io_port *io;
	struct frame_tmpl *tmpl;
	struct txgen g;
	uint64_t end;
	struct gen_workers *set;
};

struct gen_workers {
	unsigned n;                      /* generators in all, the engine's own included */
	struct gen_worker w[MAX_GENERATORS - 1];
	int go;                          /* 0 wait, 1 send, -1 give up (atomic) */
	int cpu0;                        /* the engine's own generator's CPU, -1 not pinned */
	gen_phase_fn phase;
	double seconds;
};

/* Prepare generators 1..N-1 of the trial (ports opened, programs configured, threads waiting) and
 * share main's rate and count (main is generator 0). Nothing to do when --generators is 1. 0, or an
 * error code with e filled (everything undone). */
int gen_workers_start(struct gen_workers *s, struct engine *en, const struct trial_params *t,
		      struct txgen *main, gen_phase_fn phase, struct vsb_error *e);
/* Release the workers (call right before the engine's own send phase). */
void gen_workers_go(struct gen_workers *s);
/* Join them; their frames and bytes into *sent and *bytes, their -errno (if any) into *kern_err,
 * each generator's figures into r (r->gens). Closes their ports. */
void gen_workers_finish(struct gen_workers *s, const struct txgen *main, struct trial_result *r,
			uint64_t *sent, uint64_t *bytes, int *kern_err);
#endif
