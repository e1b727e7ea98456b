/* The engine's modes (vswbench-engine COMMAND): one table, in modes.c, one row per mode: its name,
 * its ports, its defaults and its entry point. Everything that differs by mode reads its row.
 *
 * Only main.c names the table (vsb_modes); the rest of the engine reaches it through the engine
 * (en->mode, en->modes) and a trial (t->mode). modes.c names every mode's entry point, so a file
 * that used its symbols would depend on every mode, control mode included, which runs trials. */
#ifndef VSB_MODES_H
#define VSB_MODES_H
#include <string.h>

struct engine;
struct trial_params;
struct trial_result;

enum mode { MODE_PROBE, MODE_GEN, MODE_SINK, MODE_LOOP, MODE_REFLECT, MODE_FWD, MODE_CONTROL };

/* How many --port a mode takes and what each is opened for. */
enum mode_ports {
	PORTS_NONE,     /* opens none (probe) */
	PORTS_TX,       /* exactly one, sending */
	PORTS_RX,       /* exactly one, receiving */
	PORTS_TXRX,     /* exactly one, receiving and sending back */
	PORTS_AB,       /* two, A and B, each receiving and sending */
	PORTS_LOOP,     /* TX [RX]: two = port 0 sends, port 1 receives; one = round trip on it */
};

/* What a mode's final record counts as its work, its period and its rates. */
enum mode_counts {
	COUNT_NONE,     /* no final record of its own (probe, control: their trials have one) */
	COUNT_SENT,     /* frames sent over the sending period */
	COUNT_RECEIVED, /* frames received, first to last */
	COUNT_SENT_RECEIVED, /* frames sent, and of them those that came back (loss = sent - unique) */
	COUNT_RELAYED,  /* frames sent on (reflected or forwarded), first to last received */
};

typedef int (*trial_fn)(struct engine *en, const struct trial_params *t, struct trial_result *r);

struct mode_def {
	enum mode id;
	const char *name;
	enum mode_ports ports;
	/* defaults of the options left unset */
	int busy_poll;          /* --busy-poll / --no-busy-poll */
	int rx_ring_v3;         /* afpacket: --rx-ring v3 (throughput) rather than v2 (latency) */
	unsigned ring;          /* --ring: frames per ring; 0 = the backend's default */
	/* what it does with frames */
	int sends_first;        /* originates frames: may ask the kernel to resolve the destination */
	const char *relays;     /* frames pass through the engine ("reflect", "forward"), else NULL */
	enum mode_counts counts;
	int in_control;         /* a control-mode trial may run it (its "mode" key) */
	/* entry point: one trial (run_trial), or, for probe and control, the whole command */
	trial_fn trial;
	int (*command)(struct engine *en);
};

/* The table, ended by a row with a NULL name (modes.c). */
extern const struct mode_def vsb_modes[];

/* The row of `name` in table (vsb_modes or en->modes), or NULL. */
static inline const struct mode_def *mode_find(const struct mode_def *table, const char *name)
{
	for (const struct mode_def *m = table; m->name; m++)
		if (!strcmp(m->name, name))
			return m;
	return NULL;
}

/* Entry points: mode_gen_sink_loop.c, mode_reflect_fwd.c, mode_probe.c, mode_control.c. */
int run_gen(struct engine *en, const struct trial_params *t, struct trial_result *r);
int run_sink(struct engine *en, const struct trial_params *t, struct trial_result *r);
int run_loop(struct engine *en, const struct trial_params *t, struct trial_result *r);
int run_reflect(struct engine *en, const struct trial_params *t, struct trial_result *r);
int run_fwd(struct engine *en, const struct trial_params *t, struct trial_result *r);
int probe_main(struct engine *en);   /* before engine_setup: reads en->o only */
int control_main(struct engine *en);
#endif
