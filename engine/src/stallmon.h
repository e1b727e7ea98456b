/* stallmon: the host-stall monitor (`vswbench-engine stallmon`). Options and the per-CPU summary
 * live in stallmon_opts.c (no BPF: unit-tested), the BPF side in stallmon.c. */
#ifndef VSB_STALLMON_H
#define VSB_STALLMON_H
#include <stdint.h>
#include <stdio.h>
#include "common.h"

#define STALLMON_MAX_CPUS 64
#define STALLMON_MAX_PIDS 256
#define STALLMON_MAX_PREFIXES 4

struct stallmon_opts {
	int cpus[STALLMON_MAX_CPUS];
	unsigned n_cpus;
	uint64_t period_ns, threshold_ns;
	double duration_s;                 /* 0 = until SIGINT/SIGTERM */
	uint32_t pids[STALLMON_MAX_PIDS];
	unsigned n_pids;
	char prefixes[STALLMON_MAX_PREFIXES][16];
	unsigned n_prefixes;
};

/* per-CPU tally of the stalls reported */
struct stallmon_cpu_sum {
	uint64_t stalls[5];                /* by kind: [1] vcpu, [2] runq, [3] steal, [4] napi */
	uint64_t total_ns[5];
	uint64_t max_ns[5];
};

int stallmon_parse(int argc, char **argv, struct stallmon_opts *o, struct vsb_error *e);
/* "0,2-3" -> cpus; 0 ok, -1 malformed/out of range/duplicate/too many */
int stallmon_parse_cpus(const char *s, int *cpus, unsigned *n, unsigned max);
int stallmon_cpu_index(const struct stallmon_opts *o, int cpu);   /* -1 if not monitored */
void stallmon_sum_add(struct stallmon_cpu_sum *s, unsigned kind, uint64_t len_ns);
void stallmon_usage(FILE *f);
int stallmon_main(int argc, char **argv);   /* returns the exit status */

#endif
