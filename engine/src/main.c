/* vswbench-engine: subcommand dispatch (the table of modes, modes.c), signals, exit codes. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "engine.h"
#include "modes.h"
#include "opts.h"
#include "records.h"
#include "stallmon.h"
#include "trial.h"

static void on_signal(int sig) { vsb_stop = 1; }

static void install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: blocking calls return EINTR and loops see vsb_stop */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* --go-on-stdin: the ports are open and the start record is out; the traffic waits for a line on
 * stdin (its orchestrator asks the switch first whether it polls them yet). 0 on EOF or a signal:
 * no traffic then (one_trial: a final record; EOF is exit 2, a signal exit 0). */
static int wait_for_go(void)
{
	char line[16];
	return fgets(line, sizeof(line), stdin) != NULL && !vsb_stop;
}

/* A trial mode's command: one trial from the options, with its start and final records. */
static int one_trial(struct engine *en)
{
	struct trial_params t;
	struct trial_result r;
	memset(&r, 0, sizeof(r));
	r.trial = -1;
	trial_params_from_opts(&en->o, en->mode, &t);
	emit_start(en, &t);
	if (en->o.go_on_stdin && !wait_for_go()) {
		emit_final(en, &t, &r);
		if (vsb_stop)
			return 0;
		fprintf(stderr, "vswbench-engine: error: --go-on-stdin: stdin ended before its go line "
			"(write a line to start the traffic)\n");
		return VSB_ERR_USAGE;
	}
	int rc = run_trial(en, &t, &r);
	emit_final(en, &t, &r);
	return rc;
}

static int fail(const struct vsb_error *e)
{
	fprintf(stderr, "vswbench-engine: error: %s\n", e->msg[0] ? e->msg : vsb_strerror(e->code));
	return vsb_exit_code(e->code);
}

int main(int argc, char **argv)
{
	static struct engine en;
	struct vsb_error e = {0};
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("vswbench-engine %s\n", VSB_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "stallmon")) {
#ifdef VSB_HAVE_STALLMON
		install_signals();
		return stallmon_main(argc - 1, argv + 1);
#else
		fprintf(stderr, "vswbench-engine: error: stallmon is not compiled in (needs libbpf and a "
			"clang that targets BPF at build time)\n");
		return 3;
#endif
	}
	const struct mode_def *mode = mode_find(vsb_modes, argv[1]);
	if (!mode) {
		fprintf(stderr, "vswbench-engine: error: unknown command '%s' (expected probe, gen, sink, loop, "
			"reflect, fwd, control or stallmon)\n", argv[1]);
		return 2;
	}
	if (opts_parse(argc - 1, argv + 1, &en.o, &e))
		return fail(&e);
	en.mode = mode;
	en.modes = vsb_modes;
	install_signals();
	if (mode->ports == PORTS_NONE) /* probe: opens nothing */
		return mode->command(&en);
	if (engine_setup(&en, &e)) {
		engine_teardown(&en);
		return fail(&e);
	}
	int rc = mode->command ? mode->command(&en) : one_trial(&en);
	engine_teardown(&en);
	size_seq_free(&en.o.sizes);
	return vsb_exit_code(rc);
}
