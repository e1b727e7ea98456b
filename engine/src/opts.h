/* Command-line options of vswbench-engine. */
#ifndef VSB_OPTS_H
#define VSB_OPTS_H
#include <stdint.h>
#include <stdio.h>
#include "common.h"
#include "frame.h"

#define MAX_PORTS 2
#define MAX_GENERATORS 16   /* --generators: kernel generator threads feeding port 0 */

/* --gap-us: a paced generator that did not run for longer than this (a host stall of the tester's
 * CPU) skips the departures due in that gap instead of sending them back to back afterwards: a
 * catch-up burst at the generator's peak rate overflows the switch port's ring (veth: 256 frames)
 * and is counted as the switch's loss. The skipped departures are reported (tx_skipped). Off by
 * default (exact frame counts): vswbench turns it on where the tester's CPU carries none of the
 * switch's work, so a gap there cannot be the switch's own cost. */
#define VSB_GAP_US 0.0

struct opts {
	const char *netns;
	int cpu;                     /* -1: not pinned */
	const char *ports[MAX_PORTS];
	int nports;
	const char *io;
	const char *size_spec;
	struct size_seq sizes;
	double rate;                 /* pps, 0 = max */
	unsigned burst;
	uint32_t flows;
	enum flow_field flow_field;
	double flow_arrival, flow_life; /* churn: new flows/s, s each lives (0, 0 = off; churn.h) */
	double duration;             /* s; 0 = until count/signal */
	uint64_t count;              /* frames; 0 = unlimited */
	double interval, idle, warmup, drain, drain_quiet;
	uint16_t stream_id;
	unsigned batch;
	double gap_us;               /* paced: a tester gap longer than this skips its departures (0: catch up) */
	unsigned ring;               /* frames per ring, 0 = backend default */
	int busy_poll;               /* -1 = mode default */
	int xdp_mode;
	int rx_ring;                 /* 0 = mode default, 2 = V2, 3 = V3 */
	int rewrite_mac;
	int go_on_stdin;              /* wait for a line on stdin between the start record and the traffic */
	int hist;
	int have_smac, have_sip, have_dip;
	int ndmac;
	uint8_t smac[6], dmac[MAX_PORTS][6];
	uint32_t sip, dip;
	uint16_t sport, dport;
	const char *eal_args;        /* --io dpdk: extra EAL arguments, split on spaces */
	unsigned generators;         /* generators feeding port 0 (gen_workers.h); 1 = the engine alone */
	int gen_cpus[MAX_GENERATORS]; /* --gen-cpus: generator i's CPU; n_gen_cpus 0 = not pinned */
	unsigned n_gen_cpus;
};

/* Parse argv (after the subcommand). 0 ok; VSB_ERR_USAGE with message in e. */
int opts_parse(int argc, char **argv, struct opts *o, struct vsb_error *e);
/* Parse a rate like "100k", "1.5M", "0". -1 on error. */
int parse_rate(const char *s, double *out);
void usage(FILE *f);

#endif
