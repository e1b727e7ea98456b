/* stallmon: options, CPU lists and the per-CPU tally (see stallmon.h). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "stallmon.h"

void stallmon_usage(FILE *f)
{
	fprintf(f,
		"usage: vswbench-engine stallmon --cpus LIST [--period-us N] [--threshold-us N]\n"
		"         [--watch-pid PID]... [--watch-comm PREFIX]... [--duration S]\n"
		"  reports every stall of the listed CPUs as a JSON line: a late per-CPU timer (kind vcpu),\n"
		"  a watched thread kept runnable but not running (kind runq), the hypervisor's stolen\n"
		"  time (kind steal) or NAPI polling stopped with frames waiting (kind napi); a final\n"
		"  record on exit\n");
}

int stallmon_parse_cpus(const char *s, int *cpus, unsigned *n, unsigned max)
{
	*n = 0;
	if (!s || !*s)
		return -1;
	const char *p = s;
	while (*p) {
		char *end;
		errno = 0;
		long a = strtol(p, &end, 10), b;
		if (end == p || errno || a < 0 || a > 4095)
			return -1;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || errno || b < a || b > 4095)
				return -1;
		}
		for (long c = a; c <= b; c++) {
			for (unsigned i = 0; i < *n; i++)
				if (cpus[i] == c)
					return -1;
			if (*n >= max)
				return -1;
			cpus[(*n)++] = (int)c;
		}
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			return -1;
		p = end;
	}
	return 0;
}

int stallmon_cpu_index(const struct stallmon_opts *o, int cpu)
{
	for (unsigned i = 0; i < o->n_cpus; i++)
		if (o->cpus[i] == cpu)
			return (int)i;
	return -1;
}

void stallmon_sum_add(struct stallmon_cpu_sum *s, unsigned kind, uint64_t len_ns)
{
	if (kind >= sizeof(s->stalls) / sizeof(s->stalls[0]))
		return;
	s->stalls[kind]++;
	s->total_ns[kind] += len_ns;
	if (len_ns > s->max_ns[kind])
		s->max_ns[kind] = len_ns;
}

static int parse_ulong(const char *a, unsigned long lo, unsigned long hi, unsigned long *v)
{
	char *end;
	errno = 0;
	unsigned long u = strtoul(a, &end, 10);
	if (!*a || *end || errno || u < lo || u > hi || a[0] == '-')
		return -1;
	*v = u;
	return 0;
}

int stallmon_parse(int argc, char **argv, struct stallmon_opts *o, struct vsb_error *e)
{
	enum { O_CPUS = 1, O_PERIOD, O_THRESH, O_PID, O_COMM, O_DUR, O_HELP };
	static const struct option lo[] = {
		{"cpus", 1, 0, O_CPUS}, {"period-us", 1, 0, O_PERIOD}, {"threshold-us", 1, 0, O_THRESH},
		{"watch-pid", 1, 0, O_PID}, {"watch-comm", 1, 0, O_COMM}, {"duration", 1, 0, O_DUR},
		{"help", 0, 0, O_HELP}, {0, 0, 0, 0}};
	memset(o, 0, sizeof(*o));
	o->period_ns = 500000;
	o->threshold_ns = 100000;
	optind = 1;
	opterr = 0;
	int c;
	unsigned long u;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		const char *a = optarg;
		switch (c) {
		case O_CPUS:
			if (stallmon_parse_cpus(a, o->cpus, &o->n_cpus, STALLMON_MAX_CPUS))
				return vsb_fail(e, VSB_ERR_USAGE, "--cpus %s: expected CPU numbers like 0,1 or "
						"0-3 (each once, at most %d)", a, STALLMON_MAX_CPUS);
			break;
		case O_PERIOD:
			if (parse_ulong(a, 20, 100000, &u))
				return vsb_fail(e, VSB_ERR_USAGE, "--period-us %s: expected 20..100000", a);
			o->period_ns = u * 1000;
			break;
		case O_THRESH:
			if (parse_ulong(a, 10, 10000000, &u))
				return vsb_fail(e, VSB_ERR_USAGE, "--threshold-us %s: expected 10..10000000", a);
			o->threshold_ns = u * 1000;
			break;
		case O_PID:
			if (parse_ulong(a, 1, 4194304, &u))
				return vsb_fail(e, VSB_ERR_USAGE, "--watch-pid %s: expected a thread id", a);
			if (o->n_pids >= STALLMON_MAX_PIDS)
				return vsb_fail(e, VSB_ERR_USAGE, "--watch-pid: at most %d", STALLMON_MAX_PIDS);
			o->pids[o->n_pids++] = (uint32_t)u;
			break;
		case O_COMM:
			if (!*a || strlen(a) > 15)
				return vsb_fail(e, VSB_ERR_USAGE, "--watch-comm '%s': expected 1..15 characters "
						"(a thread name prefix, e.g. napi/vsb1a2b)", a);
			if (o->n_prefixes >= STALLMON_MAX_PREFIXES)
				return vsb_fail(e, VSB_ERR_USAGE, "--watch-comm: at most %d",
						STALLMON_MAX_PREFIXES);
			strcpy(o->prefixes[o->n_prefixes++], a);
			break;
		case O_DUR: {
			char *end;
			double d = strtod(a, &end);
			if (!*a || *end || !(d >= 0) || d > 7 * 86400.0)
				return vsb_fail(e, VSB_ERR_USAGE, "--duration %s: expected seconds >= 0", a);
			o->duration_s = d;
			break;
		}
		case O_HELP:
			stallmon_usage(stdout);
			exit(0);
		default:
			return vsb_fail(e, VSB_ERR_USAGE, "stallmon: unknown or incomplete option '%s' (see "
					"vswbench-engine stallmon --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return vsb_fail(e, VSB_ERR_USAGE, "stallmon: unexpected argument '%s'", argv[optind]);
	if (!o->n_cpus)
		return vsb_fail(e, VSB_ERR_USAGE, "stallmon: --cpus is required (the CPUs of the path, "
				"e.g. --cpus 0,1)");
	return 0;
}
