/* stallmon's options, CPU lists and per-CPU tally (stallmon_opts.c); the BPF side is tested from
 * Python (tests/integration/test_stallmon.py). */
#include <string.h>
#include "check.h"
#include "stallmon.h"

static int parse(const char *line, struct stallmon_opts *o, struct vsb_error *e)
{
	char buf[512], *argv[32];
	int argc = 0;
	strcpy(buf, line);
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	memset(e, 0, sizeof(*e));
	return stallmon_parse(argc, argv, o, e);
}

int main(void)
{
	int cpus[8];
	unsigned n;
	CHECK(stallmon_parse_cpus("0,1", cpus, &n, 8) == 0);
	CHECK_EQ(n, 2);
	CHECK_EQ(cpus[1], 1);
	CHECK(stallmon_parse_cpus("2-4,7", cpus, &n, 8) == 0);
	CHECK_EQ(n, 4);
	CHECK_EQ(cpus[2], 4);
	CHECK_EQ(cpus[3], 7);
	const char *bad[] = {"", "a", "1,", ",1", "1,1", "3-2", "0-8", "-1", "1;2", "5000"};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(stallmon_parse_cpus(bad[i], cpus, &n, 8) != 0);

	struct stallmon_opts o;
	struct vsb_error e;
	CHECK(parse("stallmon --cpus 1 --period-us 50 --threshold-us 200 --watch-pid 42 "
		    "--watch-comm napi/vsb1a2b --duration 1.5", &o, &e) == 0);
	CHECK_EQ(o.period_ns, 50000);
	CHECK_EQ(o.threshold_ns, 200000);
	CHECK_EQ(o.n_pids, 1);
	CHECK_EQ(o.pids[0], 42);
	CHECK(!strcmp(o.prefixes[0], "napi/vsb1a2b"));
	CHECK(o.duration_s == 1.5);
	CHECK_EQ(stallmon_cpu_index(&o, 1), 0);
	CHECK(stallmon_cpu_index(&o, 0) == -1);
	CHECK(parse("stallmon", &o, &e) != 0 && strstr(e.msg, "--cpus is required"));
	CHECK(parse("stallmon --cpus 0 --period-us 5", &o, &e) != 0 && e.code == VSB_ERR_USAGE);
	CHECK(parse("stallmon --cpus 0 --watch-comm 0123456789abcdef", &o, &e) != 0);
	CHECK(parse("stallmon --cpus 0 --bogus", &o, &e) != 0 && strstr(e.msg, "--bogus"));
	CHECK(parse("stallmon --cpus 0 extra", &o, &e) != 0);

	struct stallmon_cpu_sum s;
	memset(&s, 0, sizeof(s));
	stallmon_sum_add(&s, 1, 300);
	stallmon_sum_add(&s, 1, 100);
	stallmon_sum_add(&s, 2, 50);
	stallmon_sum_add(&s, 9, 50);   /* unknown kind: ignored */
	CHECK_EQ(s.stalls[1], 2);
	CHECK_EQ(s.total_ns[1], 400);
	CHECK_EQ(s.max_ns[1], 300);
	CHECK_EQ(s.stalls[2], 1);
	return failures ? 1 : 0;
}
