/* One trial: what it does (trial_params, from options or a control command), what it found
 * (trial_result), its warnings; run_trial runs it with its mode's entry point (trial.c). */
#ifndef VSB_TRIAL_H
#define VSB_TRIAL_H
#include <stdint.h>
#include "frame.h"
#include "io.h"
#include "opts.h"

struct engine;
struct mode_def;

/* What one trial does. Control mode builds these from commands; the CLI from options. */
struct trial_params {
	const struct mode_def *mode;     /* gen, sink, loop, reflect or fwd (modes.h) */
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
	uint64_t tx_dropped;             /* fwd/reflect: frames that found no TX buffer, or that the port refused */
	double tx_s;                     /* sending period, s */
	uint64_t tx_skipped, tx_gaps;    /* departures skipped in the tester's gaps (opts.h VSB_GAP_US) */
	double tx_gap_max_s;             /* the longest gap */
	double rx_s;                     /* receive period, s */
	double cpu_s;
	int latency_kind;                /* 0 none, 1 one-way, 2 round-trip */
	struct io_port_stats pstats[MAX_PORTS];
	char warnings[MAX_WARNINGS][160];
	int nwarn;
	int interrupted;
	uint64_t churn_flows;            /* churn: distinct flows that carried a frame (measured phase) */
	uint32_t churn_space;            /* churn: distinct tuples before one comes back */
	unsigned ngen;                   /* generators that fed port 0 (gen_workers.h); 0: none ran */
	struct { uint16_t stream; int cpu; uint64_t tx_frames; } gens[MAX_GENERATORS];
};

/* The trial's parameters from the command line, for mode m. */
void trial_params_from_opts(const struct opts *o, const struct mode_def *m, struct trial_params *t);
/* Add a warning to r (at most MAX_WARNINGS) and emit its record. */
void trial_warn(struct trial_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Run t with its mode's entry point; rx accounting lands in en->rx, the rest in r. */
int run_trial(struct engine *en, const struct trial_params *t, struct trial_result *r);
#endif
