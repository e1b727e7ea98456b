/* Command-line parsing. Every bad value gets a message naming the option and what is allowed. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "churn.h"
#include "dpdk_eal.h"
#include "netutil.h"
#include "opts.h"

void usage(FILE *f)
{
	fprintf(f,
		"usage: vswbench-engine COMMAND [options]\n"
		"commands: probe gen sink loop reflect fwd control (see engine/README.md)\n"
		"  --netns NAME  --cpu N  --port IF (repeatable)  --io afpacket|udp|afxdp|dpdk|xdplive\n"
		"  --io dpdk: --port VDEV (e.g. net_memif0,role=client,socket=PATH)  --eal-args \"ARGS\"\n"
		"  --size 64|64,512,1518|imix[:GENOME]  --rate PPS[k|M] (0 = max)  --burst B\n"
		"  --flows N  --flow-field sport|sip|smac|smac+sip|dport|dip  --duration S  --count N\n"
		"  --flow-arrival A --flow-life D (churn: A new flows/s, each living D s)\n"
		"  --interval S  --idle S  --warmup S  --drain S  --drain-quiet S  --stream-id N  --batch N\n"
		"  --gap-us U (paced: departures due while the tester did not run for more than U us are\n"
		"    skipped and counted, not sent at once afterwards; 0: catch up) [0]\n"
		"  --src-mac M --dst-mac M (per port) --src-ip A --dst-ip A --src-port P --dst-port P\n"
		"  --busy-poll|--no-busy-poll  --xdp-mode auto|native|generic  --rx-ring v2|v3\n"
		"  --rewrite-mac  --no-hist  --ring N (frames per ring)\n"
		"  --go-on-stdin (after the start record, ports open, wait for a line on stdin before the\n"
		"    traffic: a switch that enables a port late is asked first; EOF ends the run)\n"
		"  --generators N --gen-cpus LIST (xdplive: N generator threads feeding one port)\n");
}

int parse_rate(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v < 0)
		return -1;
	if (*end == 'k' || *end == 'K')
		v *= 1e3, end++;
	else if (*end == 'M' || *end == 'm')
		v *= 1e6, end++;
	else if (*end == 'G' || *end == 'g')
		v *= 1e9, end++;
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	errno = 0;
	if (*s == '-')
		return -1;
	unsigned long long v = strtoull(s, &end, 0);
	if (end == s || *end || errno || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* "0,1,3": distinct CPU numbers, at most max */
static int parse_cpu_list(const char *s, int *cpus, unsigned *n, unsigned max)
{
	*n = 0;
	while (*s) {
		char *end;
		errno = 0;
		long c = strtol(s, &end, 10);
		if (end == s || errno || c < 0 || c > 4095 || *n >= max || (*end && *end != ','))
			return -1;
		for (unsigned i = 0; i < *n; i++)
			if (cpus[i] == c)
				return -1;
		cpus[(*n)++] = (int)c;
		s = *end ? end + 1 : end;
		if (*end && !*s)
			return -1;
	}
	return *n ? 0 : -1;
}

static int parse_secs(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || v < 0 || v > 1e7)
		return -1;
	*out = v;
	return 0;
}

enum {
	O_NETNS = 256, O_CPU, O_PORT, O_IO, O_SIZE, O_RATE, O_BURST, O_FLOWS, O_FIELD, O_DURATION,
	O_COUNT, O_INTERVAL, O_IDLE, O_WARMUP, O_DRAIN, O_STREAM, O_BATCH, O_SMAC, O_DMAC, O_SIP, O_DIP,
	O_SPORT, O_DPORT, O_BUSY, O_NOBUSY, O_XDPMODE, O_RXRING, O_REWRITE, O_NOHIST, O_HELP, O_RING, O_EALARGS,
	O_ARRIVAL, O_LIFE, O_QUIET, O_GAP, O_GENS, O_GENCPUS, O_GO,
};

static const struct option longopts[] = {
	{"netns", 1, 0, O_NETNS}, {"cpu", 1, 0, O_CPU}, {"port", 1, 0, O_PORT}, {"io", 1, 0, O_IO},
	{"size", 1, 0, O_SIZE}, {"rate", 1, 0, O_RATE}, {"burst", 1, 0, O_BURST},
	{"flows", 1, 0, O_FLOWS}, {"flow-field", 1, 0, O_FIELD}, {"duration", 1, 0, O_DURATION},
	{"count", 1, 0, O_COUNT}, {"interval", 1, 0, O_INTERVAL}, {"idle", 1, 0, O_IDLE},
	{"warmup", 1, 0, O_WARMUP}, {"drain", 1, 0, O_DRAIN}, {"drain-quiet", 1, 0, O_QUIET}, {"gap-us", 1, 0, O_GAP}, {"stream-id", 1, 0, O_STREAM},
	{"batch", 1, 0, O_BATCH}, {"src-mac", 1, 0, O_SMAC}, {"dst-mac", 1, 0, O_DMAC},
	{"src-ip", 1, 0, O_SIP}, {"dst-ip", 1, 0, O_DIP}, {"src-port", 1, 0, O_SPORT},
	{"dst-port", 1, 0, O_DPORT}, {"busy-poll", 0, 0, O_BUSY}, {"no-busy-poll", 0, 0, O_NOBUSY},
	{"xdp-mode", 1, 0, O_XDPMODE}, {"rx-ring", 1, 0, O_RXRING}, {"rewrite-mac", 0, 0, O_REWRITE},
	{"no-hist", 0, 0, O_NOHIST}, {"ring", 1, 0, O_RING}, {"eal-args", 1, 0, O_EALARGS},
	{"flow-arrival", 1, 0, O_ARRIVAL}, {"flow-life", 1, 0, O_LIFE}, {"generators", 1, 0, O_GENS}, {"gen-cpus", 1, 0, O_GENCPUS},
	{"go-on-stdin", 0, 0, O_GO}, {"help", 0, 0, O_HELP}, {0, 0, 0, 0},
};

#define BAD(...) return vsb_fail(e, VSB_ERR_USAGE, __VA_ARGS__)

int opts_parse(int argc, char **argv, struct opts *o, struct vsb_error *e)
{
	memset(o, 0, sizeof(*o));
	o->cpu = -1;
	o->io = "afpacket";
	o->size_spec = "64";
	o->burst = 1;
	o->flows = 1;
	o->duration = 10;
	o->drain = 0.5;
	o->stream_id = 1;
	o->batch = 64;
	o->gap_us = VSB_GAP_US;
	o->busy_poll = -1;
	o->hist = 1;
	o->sport = 1024;
	o->dport = 4000;
	o->generators = 1;
	int have_duration = 0, have_batch = 0;
	uint64_t u;
	char msg[512];
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		const char *a = optarg;
		switch (c) {
		case O_NETNS: o->netns = a; break;
		case O_CPU:
			if (parse_u64(a, 0, 4095, &u)) BAD("--cpu %s: expected a CPU number", a);
			o->cpu = u;
			break;
		case O_PORT:
			if (o->nports == MAX_PORTS) BAD("--port: at most %d ports", MAX_PORTS);
			if (!*a || strlen(a) > DPDK_VDEV_MAX)
				BAD("--port '%.40s': expected an interface name (1..15 chars) or, with --io dpdk, a "
				    "vdev string (1..%d chars)", a, DPDK_VDEV_MAX);
			o->ports[o->nports++] = a;
			break;
		case O_IO: o->io = a; break;
		case O_SIZE: o->size_spec = a; break;
		case O_RATE:
			if (parse_rate(a, &o->rate)) BAD("--rate %s: expected packets/s, e.g. 100000, 100k, 1.5M, 0 (max)", a);
			break;
		case O_BURST:
			if (parse_u64(a, 1, 4096, &u)) BAD("--burst %s: expected 1..4096 frames", a);
			o->burst = u;
			break;
		case O_FLOWS:
			if (parse_u64(a, 1, 1u << 24, &u)) BAD("--flows %s: expected 1..16777216", a);
			o->flows = u;
			break;
		case O_FIELD:
			if (!strcmp(a, "sport")) o->flow_field = FLOW_SPORT;
			else if (!strcmp(a, "sip")) o->flow_field = FLOW_SIP;
			else if (!strcmp(a, "smac")) o->flow_field = FLOW_SMAC;
			else if (!strcmp(a, "dport")) o->flow_field = FLOW_DPORT;
			else if (!strcmp(a, "smac+sip")) o->flow_field = FLOW_SMAC_SIP;
			else if (!strcmp(a, "dip")) o->flow_field = FLOW_DIP;
			else BAD("--flow-field %s: expected sport, sip, smac, smac+sip, dport or dip", a);
			break;
		case O_DURATION:
			if (parse_secs(a, &o->duration)) BAD("--duration %s: expected seconds >= 0", a);
			have_duration = 1;
			break;
		case O_COUNT:
			if (parse_u64(a, 1, UINT64_MAX, &u)) BAD("--count %s: expected a positive frame count", a);
			o->count = u;
			break;
		case O_INTERVAL:
			if (parse_secs(a, &o->interval)) BAD("--interval %s: expected seconds >= 0", a);
			if (o->interval > 0 && o->interval < 1e-3)
				BAD("--interval %s: 0 (no interval records) or at least 0.001 s", a);
			break;
		case O_IDLE:
			if (parse_secs(a, &o->idle)) BAD("--idle %s: expected seconds >= 0", a);
			break;
		case O_WARMUP:
			if (parse_secs(a, &o->warmup)) BAD("--warmup %s: expected seconds >= 0", a);
			break;
		case O_DRAIN:
			if (parse_secs(a, &o->drain)) BAD("--drain %s: expected seconds >= 0", a);
			break;
		case O_QUIET:
			if (parse_secs(a, &o->drain_quiet))
				BAD("--drain-quiet %s: expected seconds >= 0 (0: wait the whole --drain)", a);
			break;
		case O_STREAM:
			if (parse_u64(a, 0, 65535, &u)) BAD("--stream-id %s: expected 0..65535", a);
			o->stream_id = u;
			break;
		case O_GAP:
			if (parse_secs(a, &o->gap_us))
				BAD("--gap-us %s: expected microseconds >= 0 (0: a late generator catches up)", a);
			break;
		case O_BATCH:
			if (parse_u64(a, 1, 256, &u)) BAD("--batch %s: expected 1..256", a);
			o->batch = u;
			have_batch = 1;
			break;
		case O_SMAC:
			if (parse_mac(a, o->smac)) BAD("--src-mac %s: expected xx:xx:xx:xx:xx:xx", a);
			o->have_smac = 1;
			break;
		case O_DMAC:
			if (o->ndmac == MAX_PORTS) BAD("--dst-mac: at most one per port (%d)", MAX_PORTS);
			if (parse_mac(a, o->dmac[o->ndmac])) BAD("--dst-mac %s: expected xx:xx:xx:xx:xx:xx", a);
			o->ndmac++;
			break;
		case O_SIP:
			if (parse_ip4(a, &o->sip)) BAD("--src-ip %s: expected an IPv4 address", a);
			o->have_sip = 1;
			break;
		case O_DIP:
			if (parse_ip4(a, &o->dip)) BAD("--dst-ip %s: expected an IPv4 address", a);
			o->have_dip = 1;
			break;
		case O_SPORT:
			if (parse_u64(a, 1, 65535, &u)) BAD("--src-port %s: expected 1..65535", a);
			o->sport = u;
			break;
		case O_DPORT:
			if (parse_u64(a, 1, 65535, &u)) BAD("--dst-port %s: expected 1..65535", a);
			o->dport = u;
			break;
		case O_BUSY: o->busy_poll = 1; break;
		case O_NOBUSY: o->busy_poll = 0; break;
		case O_GO: o->go_on_stdin = 1; break;
		case O_XDPMODE:
			if (!strcmp(a, "auto")) o->xdp_mode = 0;
			else if (!strcmp(a, "native")) o->xdp_mode = 1;
			else if (!strcmp(a, "generic")) o->xdp_mode = 2;
			else BAD("--xdp-mode %s: expected auto, native or generic", a);
			break;
		case O_RXRING:
			if (!strcmp(a, "v2")) o->rx_ring = 2;
			else if (!strcmp(a, "v3")) o->rx_ring = 3;
			else BAD("--rx-ring %s: expected v2 or v3", a);
			break;
		case O_REWRITE: o->rewrite_mac = 1; break;
		case O_NOHIST: o->hist = 0; break;
		case O_RING:
			if (parse_u64(a, 64, 65536, &u) || (u & (u - 1)))
				BAD("--ring %s: expected a power of two, 64..65536 frames", a);
			o->ring = u;
			break;
		case O_EALARGS: o->eal_args = a; break;
		case O_ARRIVAL:
			if (parse_rate(a, &o->flow_arrival))
				BAD("--flow-arrival %s: expected new flows per second, e.g. 1000, 10k", a);
			break;
		case O_LIFE:
			if (parse_secs(a, &o->flow_life)) BAD("--flow-life %s: expected seconds >= 0", a);
			break;
		case O_GENS:
			if (parse_u64(a, 1, MAX_GENERATORS, &u))
				BAD("--generators %s: expected 1..%d generator threads", a, MAX_GENERATORS);
			o->generators = (unsigned)u;
			break;
		case O_GENCPUS:
			if (parse_cpu_list(a, o->gen_cpus, &o->n_gen_cpus, MAX_GENERATORS))
				BAD("--gen-cpus %s: expected distinct CPU numbers like 0,1 (at most %d)", a,
				    MAX_GENERATORS);
			break;
		case O_HELP: usage(stdout); exit(0);
		default:
			if (optopt && optopt < 256)
				BAD("unknown option -%c (try --help)", optopt);
			if (optopt >= 256)
				BAD("%s: this option needs a value", argv[optind - 1]);
			BAD("unknown option %s (try --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		BAD("unexpected argument '%s' (options start with --)", argv[optind]);
	int dpdk = !strcmp(o->io, "dpdk");
	if (dpdk && !have_batch)
		o->batch = 32; /* DPDK's customary burst: measured faster than 64 over memif and vhost-user */
	for (int i = 0; i < o->nports; i++) {
		if (!dpdk && strlen(o->ports[i]) > 15)
			BAD("--port '%.40s': expected an interface name (1..15 chars); a longer port is a DPDK "
			    "vdev string, which needs --io dpdk", o->ports[i]);
#ifdef VSB_HAVE_DPDK
		/* (an engine built without DPDK leaves --io dpdk to engine_setup: exit 3, not built) */
		char name[DPDK_NAME_MAX + 1], other[DPDK_NAME_MAX + 1];
		if (dpdk && dpdk_vdev_check(o->ports[i], name, sizeof(name), msg, sizeof(msg)))
			BAD("%s", msg);
		if (dpdk && i == 1 && !dpdk_vdev_check(o->ports[0], other, sizeof(other), NULL, 0) &&
		    !strcmp(name, other))
			BAD("--port: both ports are named %s; give each vdev its own name (e.g. net_memif0 and "
			    "net_memif1)", name);
#endif
	}
	if (o->eal_args && !dpdk)
		BAD("--eal-args applies to --io dpdk only");
	if (o->count && !have_duration)
		o->duration = 0;
	if (o->flows > 1 && o->flow_field == FLOW_SPORT && (uint32_t)o->sport + o->flows - 1 > 65535)
		BAD("--flows %u from --src-port %u exceeds port 65535", o->flows, o->sport);
	if (size_seq_parse(o->size_spec, &o->sizes, msg, sizeof(msg)))
		BAD("%s", msg);
	if (churn_check(o->flow_arrival, o->flow_life, UINT32_MAX, "--flow-arrival", "--flow-life", msg,
			sizeof(msg)))
		BAD("%s", msg); /* the tuple space is checked once the addresses are known (engine_setup) */
	if (o->flow_arrival > 0 && o->flows > 1)
		BAD("--flows %u with --flow-arrival: churn replaces the fixed set of flows; leave --flows at 1",
		    o->flows);
	if (o->rate > 0 && o->rate < 1)
		BAD("--rate %g: below 1 packet/s; use 0 for maximum rate", o->rate);
	if (o->n_gen_cpus && o->n_gen_cpus != o->generators)
		BAD("--gen-cpus lists %u CPUs for --generators %u: give one CPU per generator", o->n_gen_cpus,
		    o->generators);
	if (o->generators > 1 && strcmp(o->io, "xdplive"))
		BAD("--generators %u: several generator threads on one port need --io xdplive (each its own "
		    "in-kernel generator and stream id); use --io xdplive or --generators 1", o->generators);
	if (o->generators > 1 && o->flow_arrival > 0)
		BAD("--generators with --flow-arrival: churn runs in one userspace generator; drop one");
	if ((uint32_t)o->stream_id + o->generators - 1 > 65535)
		BAD("--stream-id %u with --generators %u: the generators' stream ids pass 65535", o->stream_id,
		    o->generators);
	return 0;
}
