/* Several generators feeding one port (gen_workers.h). Each worker owns an xdplive port opened for
 * sending on the engine's port 0 (its own BPF object: configuration, state and sequence counter),
 * a copy of the template with stream id --stream-id + i, and a txgen with 1/N of the trial's rate
 * and count. The kernel's counters of the shared interface are read once, by the engine's own port,
 * told how many frames the others sent (io_kern_ops.gen_shared). */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"
#include "netutil.h"
#include "gen_workers.h"
#include "trial.h"

static void *worker_main(void *arg)
{
	struct gen_worker *w = arg;
	if (w->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	int go;
	while (!(go = __atomic_load_n(&w->set->go, __ATOMIC_ACQUIRE)))
		sched_yield();
	if (go > 0)
		w->end = w->set->phase(&w->g, w->set->seconds);
	return NULL;
}

static void undo(struct gen_workers *s, struct engine *en)
{
	for (unsigned i = 0; i + 1 < s->n; i++) {
		struct gen_worker *w = &s->w[i];
		if (w->io)
			en->ops->close(w->io);
		free(w->tmpl);
		memset(w, 0, sizeof(*w));
	}
	s->n = 1;
}

int gen_workers_start(struct gen_workers *s, struct engine *en, const struct trial_params *t,
		      struct txgen *main, gen_phase_fn phase, struct vsb_error *e)
{
	const struct opts *o = &en->o;
	memset(s, 0, sizeof(*s));
	s->n = o->generators ? o->generators : 1;
	s->phase = phase;
	s->seconds = t->duration;
	s->cpu0 = o->cpu;
	if (s->n == 1)
		return 0;
	if (!en->ops->kern || !en->ops->kern->gen_shared)
		return vsb_fail(e, VSB_ERR_UNSUPPORTED, "--generators %u needs --io xdplive", s->n);
	if (t->count && t->count < s->n)
		return vsb_fail(e, VSB_ERR_USAGE, "--count %llu is below --generators %u: each generator "
				"needs a frame", (unsigned long long)t->count, s->n);
	struct io_config c;
	memset(&c, 0, sizeof(c));
	c.ifname = en->ports[0].name;
	c.want_tx = 1;
	c.batch = o->batch;
	c.xdp_mode = o->xdp_mode;
	for (unsigned i = 1; i < s->n; i++) {
		struct gen_worker *w = &s->w[i - 1];
		w->set = s;
		w->cpu = o->n_gen_cpus ? o->gen_cpus[i] : -1;
		w->tmpl = malloc(sizeof(*w->tmpl));
		if (!w->tmpl) {
			undo(s, en);
			return vsb_fail(e, VSB_ERR_NOMEM, "out of memory");
		}
		memcpy(w->tmpl, en->tmpl, sizeof(*w->tmpl));
		w->tmpl->stream = (uint16_t)(en->tmpl->stream + i);
		int rc = en->ops->open(&c, &w->io, e);
		if (!rc)
			rc = txgen_init_on(&w->g, en, w->io, w->tmpl, t, e);
		if (rc) {
			undo(s, en);
			return rc;
		}
		txgen_share(&w->g, i, s->n);
	}
	txgen_share(main, 0, s->n);
	for (unsigned i = 0; i + 1 < s->n; i++) {
		if (pthread_create(&s->w[i].th, NULL, worker_main, &s->w[i])) {
			__atomic_store_n(&s->go, -1, __ATOMIC_RELEASE); /* those started return at once */
			for (unsigned j = 0; j < i; j++)
				pthread_join(s->w[j].th, NULL);
			undo(s, en);
			return vsb_fail(e, VSB_ERR_NOMEM, "cannot start generator thread %u", i + 1);
		}
		s->w[i].started = 1;
	}
	if (o->n_gen_cpus && cpu_pin(o->gen_cpus[0], e)) { /* the engine's own generator */
		__atomic_store_n(&s->go, -1, __ATOMIC_RELEASE);
		for (unsigned i = 0; i + 1 < s->n; i++)
			pthread_join(s->w[i].th, NULL);
		undo(s, en);
		return e->code;
	}
	s->cpu0 = o->n_gen_cpus ? o->gen_cpus[0] : o->cpu;
	return 0;
}

void gen_workers_go(struct gen_workers *s)
{
	if (s->n > 1)
		__atomic_store_n(&s->go, 1, __ATOMIC_RELEASE);
}

void gen_workers_finish(struct gen_workers *s, const struct txgen *main, struct trial_result *r,
			uint64_t *sent, uint64_t *bytes, int *kern_err)
{
	r->ngen = s->n;
	r->gens[0].stream = main->tmpl->stream;
	r->gens[0].tx_frames = main->sent;
	r->gens[0].cpu = s->cpu0;
	if (s->n == 1)
		return;
	uint64_t others = 0;
	for (unsigned i = 0; i + 1 < s->n; i++) {
		struct gen_worker *w = &s->w[i];
		if (w->started)
			pthread_join(w->th, NULL);
		*sent += w->g.sent;
		*bytes += w->g.bytes;
		others += w->g.sent;
		if (w->g.kern_err && !*kern_err)
			*kern_err = w->g.kern_err;
		r->gens[i + 1].stream = w->tmpl->stream;
		r->gens[i + 1].tx_frames = w->g.sent;
		r->gens[i + 1].cpu = w->cpu;
	}
	main->kern->gen_shared(main->port, others);
	for (unsigned i = 0; i + 1 < s->n; i++) {
		main->ops->close(s->w[i].io);
		free(s->w[i].tmpl);
	}
}
