/* Flow churn: besides the fixed round-robin set of --flows, flows that arrive at A new flows per
 * second and live D seconds each (--flow-arrival A --flow-life D).
 *
 * Schedule. Flow k (k = 1, 2, ...) is active in generator time t (seconds from the generator's
 * start) while k/A - D <= t < k/A, that is for A*t < k <= A*(t + D): the run starts in the steady
 * state (about A*D flows already active, as if traffic had been running for ever), one flow leaves
 * and one arrives every 1/A seconds, and at any time floor(A*D) or ceil(A*D) flows are active.
 * Frames take turns over the active flows (a cursor moves through them and wraps), so each active
 * flow carries about rate/(A*D) frames per second.
 *
 * Tuples. Flow k varies the --flow-field like flow index (base + k) mod S of the round-robin set:
 * S ("space") is every value the field can take from the template's address up (sport: ports up to
 * 65535, sip and smac+sip: addresses up to 198.19.255.255, dport: ports, smac: 2^24). A tuple comes
 * back only after S flows, S/A seconds later; the check below requires S > A*D, so no tuple is used
 * by two live flows, and `base` carries on from one run (warm-up, trial) to the next in a process,
 * so a new trial does not start with the tuples of the last one either.
 *
 * Per frame the generator pays an increment and two compares (churn_next); the window moves once per
 * batch (churn_window_at). */
#ifndef VSB_CHURN_H
#define VSB_CHURN_H
#include <stddef.h>
#include <stdint.h>
#include "frame.h"

#define CHURN_MAX_ARRIVAL 1e7  /* new flows per second */
#define CHURN_MAX_LIFE 86400.0 /* seconds */

struct churn {
	double arrival, life;    /* A (flows/s), D (s); arrival 0 = churn off */
	uint32_t space;          /* S: distinct tuples before one comes back */
	uint64_t base;           /* flow id offset of this run (tuples continue from earlier runs) */
	double hz;               /* clock ticks per second (TSC) */
	uint64_t start;          /* clock of the generator's start */
	uint64_t lo, hi;         /* active flow ids [lo, hi] at the current batch */
	uint64_t cur;            /* flow id of the next frame */
	uint32_t cur_idx;        /* (base + cur) mod space */
	uint32_t lo_idx;         /* (base + lo) mod space */
	uint64_t top;            /* highest flow id that carried a frame (0 = none) */
	uint64_t started;        /* distinct flows that carried a frame */
};

/* Distinct values of the flow field from the template's address up (the tuple space S). */
uint32_t churn_space(enum flow_field field, uint32_t ip, uint16_t sport, uint16_t dport);

/* 0 if (arrival, life) is a valid churn for space S (both 0: off), else VSB_ERR_USAGE with a
 * message naming the options (`opt_a`, `opt_l`: "--flow-arrival" or "\"flow_arrival\"") and the fix. */
int churn_check(double arrival, double life, uint32_t space, const char *opt_a, const char *opt_l,
		char *msg, size_t msglen);

/* Start a schedule at clock `start` (ticks of `hz` per second). */
void churn_init(struct churn *c, double arrival, double life, uint32_t space, uint64_t base,
		double hz, uint64_t start);

/* Active flow ids at t seconds: lo = floor(A t) + 1, hi = floor(A (t + D)). */
void churn_window_at(double arrival, double life, double t, uint64_t *lo, uint64_t *hi);

/* Move the window to clock `now` (once per batch). */
void churn_advance(struct churn *c, uint64_t now);

/* Flow index (tuple) of the next frame; the cursor moves on, wrapping inside [lo, hi]. */
static inline uint32_t churn_next(struct churn *c)
{
	uint32_t idx = c->cur_idx;
	if (c->cur > c->top) {
		c->top = c->cur;
		c->started++;
	}
	if (++c->cur > c->hi) {
		c->cur = c->lo;
		c->cur_idx = c->lo_idx;
	} else if (++c->cur_idx == c->space) {
		c->cur_idx = 0;
	}
	return idx;
}

/* Flow id offset for the next run, so it starts with tuples none of this run's flows used. */
static inline uint64_t churn_next_base(const struct churn *c) { return c->base + c->top + 1; }

#endif
