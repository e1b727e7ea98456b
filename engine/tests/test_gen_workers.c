/* Several generators on one port (gen_workers.h): the options --generators and --gen-cpus, and
 * how txgen_share splits one trial's rate and frame count over them (every frame sent once). */
#include <string.h>
#include "check.h"
#include "generator.h"
#include "opts.h"
#include "tsc.h"

static int parse(const char *const *args, struct opts *o, struct vsb_error *e)
{
	char *argv[16];
	int n = 0;
	argv[n++] = (char *)"gen";
	for (; *args; args++)
		argv[n++] = (char *)*args;
	memset(e, 0, sizeof(*e));
	return opts_parse(n, argv, o, e);
}

static void test_opts(void)
{
	struct opts o;
	struct vsb_error e;
	const char *ok[] = {"--port", "x", "--io", "xdplive", "--generators", "3", "--gen-cpus", "2,0,5", NULL};
	CHECK_EQ(parse(ok, &o, &e), 0);
	CHECK_EQ(o.generators, 3);
	CHECK_EQ(o.n_gen_cpus, 3);
	CHECK_EQ(o.gen_cpus[0], 2);
	CHECK_EQ(o.gen_cpus[2], 5);
	const char *dflt[] = {"--port", "x", NULL};
	CHECK_EQ(parse(dflt, &o, &e), 0);
	CHECK_EQ(o.generators, 1);
	CHECK_EQ(o.n_gen_cpus, 0);
	const char *io[] = {"--port", "x", "--generators", "2", NULL};
	CHECK_EQ(parse(io, &o, &e), VSB_ERR_USAGE);
	CHECK(strstr(e.msg, "--io xdplive") != NULL);
	const char *count[] = {"--port", "x", "--io", "xdplive", "--generators", "2", "--gen-cpus", "1", NULL};
	CHECK_EQ(parse(count, &o, &e), VSB_ERR_USAGE);
	CHECK(strstr(e.msg, "one CPU per generator") != NULL);
	const char *bad[][9] = {
		{"--port", "x", "--io", "xdplive", "--generators", "0", NULL},
		{"--port", "x", "--io", "xdplive", "--generators", "17", NULL},
		{"--port", "x", "--io", "xdplive", "--generators", "2", "--gen-cpus", "1,1", NULL},
		{"--port", "x", "--io", "xdplive", "--generators", "2", "--gen-cpus", "1,", NULL},
		{"--port", "x", "--io", "xdplive", "--generators", "2", "--gen-cpus", "a,b", NULL},
		{"--port", "x", "--io", "xdplive", "--generators", "2", "--stream-id", "65535", NULL},
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ(parse(bad[i], &o, &e), VSB_ERR_USAGE);
}

static void test_share(void)
{
	for (uint64_t count = 3; count < 40; count += 7) {
		for (unsigned n = 1; n <= 5; n++) {
			uint64_t total = 0;
			double rate = 0;
			for (unsigned i = 0; i < n; i++) {
				struct txgen g;
				memset(&g, 0, sizeof(g));
				g.rate = 1e6;
				g.burst = 1;
				g.limit = count;
				txgen_share(&g, i, n);
				total += g.limit;
				rate += g.rate;
				CHECK(g.limit == count / n || g.limit == count / n + 1);
			}
			CHECK_EQ(total, count);
			CHECK_NEAR(rate, 1e6, 1e-6);
		}
	}
}

int main(void)
{
	tsc_info();
	test_opts();
	test_share();
	return check_exit("test_gen_workers");
}
