/* One trial: its parameters from the command line, its warnings, its run by its mode's entry point. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "engine.h"
#include "modes.h"
#include "records.h"
#include "rxstats.h"
#include "trial.h"

void trial_warn(struct trial_result *r, const char *fmt, ...)
{
	if (r->nwarn >= MAX_WARNINGS)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->warnings[r->nwarn], sizeof(r->warnings[0]), fmt, ap);
	va_end(ap);
	emit_warning(r->warnings[r->nwarn]);
	r->nwarn++;
}

void trial_params_from_opts(const struct opts *o, const struct mode_def *m, struct trial_params *t)
{
	memset(t, 0, sizeof(*t));
	t->mode = m;
	t->rate = o->rate;
	t->burst = o->burst;
	t->flows = o->flows;
	t->flow_arrival = o->flow_arrival;
	t->flow_life = o->flow_life;
	t->sizes = &o->sizes;
	t->duration = o->duration;
	t->count = o->count;
	t->warmup = o->warmup;
	t->drain = o->drain;
	t->drain_quiet = o->drain_quiet;
	t->interval = o->interval;
	t->idle = o->idle;
	t->epoch = 0;
	t->stream = o->stream_id;
}

int run_trial(struct engine *en, const struct trial_params *t, struct trial_result *r)
{
	rxstats_reset(&en->rx, t->epoch);
	en->rx_seen = 0;
	if (!t->mode->trial)
		return VSB_ERR_USAGE;
	return t->mode->trial(en, t, r);
}
