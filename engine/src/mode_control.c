/* Control mode: ports stay open; each JSON line on stdin is one trial, answered by its final record.
 * Keys: cmd ("trial" | "quit"), mode ("loop" | "gen"; default loop),
 * rate, duration, count, size, burst, flows, warmup, drain, drain_quiet, interval, idle, flow_arrival and
 * flow_life (churn, churn.h: both or neither; they replace "flows"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl_parse.h"
#include "engine.h"
#include "generator.h"
#include "jout.h"
#include "modes.h"
#include "records.h"
#include "trial.h"

static void ctl_error(const char *msg)
{
	struct jout j;
	jout_begin(&j);
	jout_str(&j, "type", "error");
	jout_str(&j, "msg", msg);
	jout_end_obj(&j);
	jout_emit(&j);
}

static const char *known[] = {"cmd", "mode", "rate", "duration", "count", "size", "burst", "flows",
			      "warmup", "drain", "drain_quiet", "interval", "idle", "flow_arrival", "flow_life", NULL};

static int num(const struct ctl_msg *m, const char *k, double lo, double hi, double *out, char *err,
	       size_t n)
{
	const struct ctl_kv *kv = ctl_get(m, k);
	if (!kv)
		return 0;
	if (kv->is_str != 0 || kv->num < lo || kv->num > hi) {
		snprintf(err, n, "\"%s\" must be a number in %g..%g", k, lo, hi);
		return -1;
	}
	*out = kv->num;
	return 0;
}

/* Build trial params from a command. 0 ok, -1 with err. sizes is owned by the caller. */
static int build(struct engine *en, const struct ctl_msg *m, struct trial_params *t,
		 struct size_seq *sizes, char *err, size_t n)
{
	for (unsigned i = 0; i < m->n; i++) {
		int ok = 0;
		for (unsigned k = 0; known[k]; k++)
			ok |= !strcmp(m->kv[i].key, known[k]);
		if (!ok) {
			snprintf(err, n, "unknown key \"%s\"", m->kv[i].key);
			return -1;
		}
	}
	trial_params_from_opts(&en->o, mode_find(en->modes, "loop"), t);
	const struct ctl_kv *mode = ctl_get(m, "mode");
	if (mode) {
		const char *v = mode->str;
		if (mode->is_str != 1) {
			snprintf(err, n, "\"mode\" must be a string");
			return -1;
		}
		const struct mode_def *md = mode_find(en->modes, v);
		if (md && md->in_control)
			t->mode = md;
		else {
			snprintf(err, n, "\"mode\": %.64s is not available in control mode (loop, gen)", v);
			return -1;
		}
	}
	double burst = t->burst, flows = t->flows, count = 0;
	if (num(m, "rate", 0, 1e9, &t->rate, err, n) || num(m, "duration", 0, 1e6, &t->duration, err, n) ||
	    num(m, "count", 0, 1e15, &count, err, n) || num(m, "burst", 1, 4096, &burst, err, n) ||
	    num(m, "flows", 1, en->o.flows, &flows, err, n) || num(m, "warmup", 0, 3600, &t->warmup, err, n) ||
	    num(m, "drain", 0, 60, &t->drain, err, n) ||
	    num(m, "drain_quiet", 0, 60, &t->drain_quiet, err, n) || num(m, "interval", 0, 3600, &t->interval, err, n) ||
	    num(m, "idle", 0, 3600, &t->idle, err, n) ||
	    num(m, "flow_arrival", 0, CHURN_MAX_ARRIVAL, &t->flow_arrival, err, n) ||
	    num(m, "flow_life", 0, CHURN_MAX_LIFE, &t->flow_life, err, n))
		return -1;
	if (churn_check(t->flow_arrival, t->flow_life, UINT32_MAX, "\"flow_arrival\"", "\"flow_life\"",
			err, n))
		return -1;
	if (t->flow_arrival > 0 && flows > 1) {
		snprintf(err, n, "\"flows\" %.0f with \"flow_arrival\": churn replaces the fixed set of flows; "
			 "leave \"flows\" at 1", flows);
		return -1;
	}
	struct vsb_error ce = {0};
	if (churn_supported(en, t, &ce)) {
		snprintf(err, n, "%s", ce.msg);
		return -1;
	}
	if (t->interval > 0 && t->interval < 1e-3) {
		snprintf(err, n, "\"interval\": %g s: 0 (no interval records) or at least 0.001 s",
			 t->interval);
		return -1;
	}
	t->burst = (unsigned)burst;
	t->flows = (uint32_t)flows;
	t->count = (uint64_t)count;
	if (ctl_get(m, "count") && !ctl_get(m, "duration"))
		t->duration = 0;
	const struct ctl_kv *size = ctl_get(m, "size");
	if (size) {
		char buf[CTL_MAX_STR + 8];
		if (size->is_str == 1)
			snprintf(buf, sizeof(buf), "%s", size->str);
		else
			snprintf(buf, sizeof(buf), "%.0f", size->num);
		if (size_seq_parse(buf, sizes, err, n))
			return -1;
		struct vsb_error e = {0};
		if (engine_size_check(en, sizes, &e)) {
			snprintf(err, n, "%s", e.msg);
			return -1;
		}
		t->sizes = sizes;
	}
	return 0;
}

int control_main(struct engine *en)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	struct ctl_msg *m = malloc(sizeof(*m));
	if (!m)
		return VSB_ERR_NOMEM;
	struct jout j;
	jout_begin(&j);
	jout_str(&j, "type", "ready");
	jout_str(&j, "io", en->ops->name);
	jout_end_obj(&j);
	jout_emit(&j);
	while (!vsb_stop && (len = getline(&line, &cap, stdin)) > 0) {
		char err[256] = "";
		if (len == 1 && line[0] == '\n')
			continue;
		if (ctl_parse(line, len, m, err, sizeof(err))) {
			ctl_error(err);
			continue;
		}
		const struct ctl_kv *cmd = ctl_get(m, "cmd");
		if (!cmd || cmd->is_str != 1) {
			ctl_error("missing \"cmd\" (\"trial\" or \"quit\")");
			continue;
		}
		if (!strcmp(cmd->str, "quit"))
			break;
		if (strcmp(cmd->str, "trial")) {
			ctl_error("unknown \"cmd\" (expected \"trial\" or \"quit\")");
			continue;
		}
		struct trial_params t;
		struct size_seq sizes = {0};
		if (build(en, m, &t, &sizes, err, sizeof(err))) {
			ctl_error(err);
			size_seq_free(&sizes);
			continue;
		}
		struct trial_result r;
		memset(&r, 0, sizeof(r));
		r.trial = ++en->trials;
		t.epoch = (uint8_t)(r.trial & 0x7f);
		run_trial(en, &t, &r);
		emit_final(en, &t, &r);
		size_seq_free(&sizes);
	}
	free(line);
	free(m);
	return 0;
}
