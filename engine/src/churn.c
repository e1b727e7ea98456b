/* Flow churn schedule and its checks (churn.h). */
#include "churn.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

uint32_t churn_space(enum flow_field field, uint32_t ip, uint16_t sport, uint16_t dport)
{
	switch (field) {
	case FLOW_SPORT: return 65536u - sport;
	case FLOW_DPORT: return 65536u - dport;
	case FLOW_SMAC: return 1u << 24;
	case FLOW_SIP: case FLOW_SMAC_SIP: case FLOW_DIP: { /* ip: the varied address */
		if (ip < BENCH_NET || ip > BENCH_LAST)
			return 1; /* a varied address outside the range: no room (churn_check says so) */
		uint32_t n = BENCH_LAST - ip + 1;
		return n > (1u << 24) ? 1u << 24 : n;
	}
	}
	return 1;
}

int churn_check(double arrival, double life, uint32_t space, const char *opt_a, const char *opt_l,
		char *msg, size_t msglen)
{
#define BAD(...) do { if (msg && msglen) snprintf(msg, msglen, __VA_ARGS__); return VSB_ERR_USAGE; } while (0)
	if (!isfinite(arrival) || !isfinite(life) || arrival < 0 || life < 0)
		BAD("%s %g / %s %g: expected non-negative numbers", opt_a, arrival, opt_l, life);
	if (arrival == 0 && life == 0)
		return 0;
	if (arrival == 0 || life == 0)
		BAD("%s and %s go together (new flows per second and seconds each flow lives); give both, "
		    "or neither for the fixed round-robin set of --flows", opt_a, opt_l);
	if (arrival > CHURN_MAX_ARRIVAL)
		BAD("%s %g: at most %g new flows per second", opt_a, arrival, CHURN_MAX_ARRIVAL);
	if (life > CHURN_MAX_LIFE)
		BAD("%s %g: at most %g seconds", opt_l, life, CHURN_MAX_LIFE);
	double active = arrival * life;
	if (active < 1)
		BAD("%s %g x %s %g = %g flows active on average: at least 1 is needed (longer lives or "
		    "more arrivals)", opt_a, arrival, opt_l, life, active);
	if (ceil(active) >= (double)space)
		BAD("%s %g x %s %g = %.0f flows active, but the flow field has only %u distinct values "
		    "from the template's address up: live flows would share a 5-tuple; use fewer or "
		    "shorter flows, or --flow-field sip / smac+sip (addresses from a low --src-ip)",
		    opt_a, arrival, opt_l, life, ceil(active), space);
	return 0;
#undef BAD
}

void churn_window_at(double arrival, double life, double t, uint64_t *lo, uint64_t *hi)
{
	if (t < 0)
		t = 0;
	/* hi = floor(A t + A D) as floor(A t) + floor(frac + A D): the count hi - lo + 1 stays
	 * floor(A D) or ceil(A D) whatever the rounding of A t */
	double x = arrival * t, fl = floor(x);
	*lo = (uint64_t)fl + 1;
	double ad = arrival * life, n = floor((x - fl) + ad);
	if (n < floor(ad)) /* (x - fl) + ad may round up to the next integer: keep n in range */
		n = floor(ad);
	if (n > ceil(ad))
		n = ceil(ad);
	*hi = (uint64_t)fl + (uint64_t)n;
	if (*hi < *lo) /* A*D >= 1 keeps one flow active; guard rounding anyway */
		*hi = *lo;
}

static inline uint32_t idx_of(const struct churn *c, uint64_t id)
{
	return (uint32_t)((c->base + id) % c->space);
}

void churn_init(struct churn *c, double arrival, double life, uint32_t space, uint64_t base,
		double hz, uint64_t start)
{
	memset(c, 0, sizeof(*c));
	c->arrival = arrival;
	c->life = life;
	c->space = space ? space : 1;
	c->base = base;
	c->hz = hz;
	c->start = start;
	churn_window_at(arrival, life, 0, &c->lo, &c->hi);
	c->lo_idx = idx_of(c, c->lo);
	c->cur = c->lo;
	c->cur_idx = c->lo_idx;
}

void churn_advance(struct churn *c, uint64_t now)
{
	double t = now > c->start ? (now - c->start) / c->hz : 0;
	uint64_t lo, hi;
	churn_window_at(c->arrival, c->life, t, &lo, &hi);
	if (lo != c->lo) {
		c->lo = lo;
		c->lo_idx = idx_of(c, lo);
	}
	c->hi = hi;
	if (c->cur < lo || c->cur > hi) { /* the cursor's flow has ended: on to the oldest live one */
		c->cur = lo;
		c->cur_idx = c->lo_idx;
	}
}
