/* vswbench-engine: subcommand dispatch, signals, exit codes. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "opts.h"
#include "run.h"
#include "stallmon.h"

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

static int parse_mode(const char *s, enum mode *m)
{
	static const struct { const char *n; enum mode m; } t[] = {
		{"probe", MODE_PROBE}, {"gen", MODE_GEN}, {"sink", MODE_SINK}, {"loop", MODE_LOOP},
		{"reflect", MODE_REFLECT}, {"fwd", MODE_FWD}, {"control", MODE_CONTROL}};
	for (unsigned i = 0; i < VSB_ARRAY_SIZE(t); i++)
		if (!strcmp(s, t[i].n)) {
			*m = t[i].m;
			return 0;
		}
	return -1;
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
	enum mode mode;
	if (parse_mode(argv[1], &mode)) {
		fprintf(stderr, "vswbench-engine: error: unknown command '%s' (expected probe, gen, sink, loop, "
			"reflect, fwd, control or stallmon)\n", argv[1]);
		return 2;
	}
	if (opts_parse(argc - 1, argv + 1, &en.o, &e))
		return fail(&e);
	en.o.mode = mode;
	install_signals();
	if (mode == MODE_PROBE)
		return probe_main(&en.o);
	if (engine_setup(&en, &e)) {
		engine_teardown(&en);
		return fail(&e);
	}
	int rc;
	if (mode == MODE_CONTROL) {
		rc = control_main(&en);
	} else {
		struct trial_params t;
		struct trial_result r;
		memset(&r, 0, sizeof(r));
		r.trial = -1;
		trial_params_from_opts(&en.o, &t);
		emit_start(&en, &t);
		rc = run_trial(&en, &t, &r);
		emit_final(&en, &t, &r);
	}
	engine_teardown(&en);
	size_seq_free(&en.o.sizes);
	return vsb_exit_code(rc);
}
