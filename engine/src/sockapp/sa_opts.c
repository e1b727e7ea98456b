/* vswbench-sockapp's command line. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "sockapp.h"

const char *sa_mode_name(enum sa_mode m)
{
	return m == SA_STREAM ? "stream" : m == SA_RR ? "rr" : "crr";
}

static int bad(char *err, unsigned errlen, const char *what, const char *value)
{
	snprintf(err, errlen, "%s %s", what, value ? value : "");
	return -1;
}

static int number(const char *s, double lo, double hi, double *out)
{
	char *end;
	if (!s || !*s || strspn(s, "0123456789.") != strlen(s))
		return -1;
	double v = strtod(s, &end);
	if (*end || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int sa_parse(int argc, char **argv, struct sa_opts *o, char *err, unsigned errlen)
{
	static const struct option longs[] = {
		{"mode", required_argument, 0, 'm'}, {"proto", required_argument, 0, 'P'},
		{"addr", required_argument, 0, 'a'}, {"port", required_argument, 0, 'p'},
		{"flows", required_argument, 0, 'f'}, {"size", required_argument, 0, 's'},
		{"duration", required_argument, 0, 'd'}, {"cpu", required_argument, 0, 'c'},
		{"read-size", required_argument, 0, 'r'}, {"hist", no_argument, 0, 'H'},
		{"rate", required_argument, 0, 'R'},
		{0, 0, 0, 0}};
	double v;
	memset(o, 0, sizeof(*o));
	o->port = 18000;
	o->flows = 1;
	o->size = 16384;
	o->read_size = SA_MAX_SIZE;
	o->duration = 5.0;
	o->cpu = -1;
	if (argc < 2)
		return bad(err, errlen, "usage: vswbench-sockapp client|server [options]", NULL);
	if (!strcmp(argv[1], "client"))
		o->role = SA_CLIENT;
	else if (!strcmp(argv[1], "server"))
		o->role = SA_SERVER;
	else
		return bad(err, errlen, "unknown role (expected client or server):", argv[1]);
	optind = 2;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!strcmp(optarg, "stream"))
				o->mode = SA_STREAM;
			else if (!strcmp(optarg, "rr"))
				o->mode = SA_RR;
			else if (!strcmp(optarg, "crr"))
				o->mode = SA_CRR;
			else
				return bad(err, errlen, "--mode: expected stream, rr or crr, not", optarg);
			break;
		case 'P':
			if (!strcmp(optarg, "tcp"))
				o->proto = SA_TCP;
			else if (!strcmp(optarg, "udp"))
				o->proto = SA_UDP;
			else
				return bad(err, errlen, "--proto: expected tcp or udp, not", optarg);
			break;
		case 'a':
			if (strlen(optarg) >= sizeof(o->addr) || sa_addr(optarg, 0, NULL) < 0)
				return bad(err, errlen, "--addr: expected an IPv4 address, not", optarg);
			strcpy(o->addr, optarg);
			break;
		case 'p':
			if (number(optarg, 1024, 65535, &v) < 0 || v != floor(v))
				return bad(err, errlen, "--port: expected 1024..65535, not", optarg);
			o->port = (uint16_t)v;
			break;
		case 'f':
			if (number(optarg, 1, SA_MAX_FLOWS, &v) < 0 || v != floor(v))
				return bad(err, errlen, "--flows: expected 1..256, not", optarg);
			o->flows = (unsigned)v;
			break;
		case 's':
			if (number(optarg, 1, SA_MAX_SIZE, &v) < 0 || v != floor(v))
				return bad(err, errlen, "--size: expected 1..1048576 bytes, not", optarg);
			o->size = (unsigned)v;
			break;
		case 'r':
			if (number(optarg, 1, SA_MAX_SIZE, &v) < 0 || v != floor(v))
				return bad(err, errlen, "--read-size: expected 1..1048576 bytes, not",
					   optarg);
			o->read_size = (unsigned)v;
			break;
		case 'd':
			if (number(optarg, 0.01, SA_MAX_DURATION, &v) < 0)
				return bad(err, errlen, "--duration: expected 0.01..86400 seconds, not", optarg);
			o->duration = v;
			break;
		case 'c':
			if (number(optarg, 0, 4095, &v) < 0 || v != floor(v))
				return bad(err, errlen, "--cpu: expected a CPU number, not", optarg);
			o->cpu = (int)v;
			break;
		case 'H':
			o->hist = 1;
			break;
		case 'R':
			if (number(optarg, 1000, 1e12, &v) < 0)
				return bad(err, errlen, "--rate: expected 1000..1e12 bits/s, not", optarg);
			o->rate_bps = v;
			break;
		default:
			return bad(err, errlen, "unknown or incomplete option:", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return bad(err, errlen, "unexpected argument:", argv[optind]);
	if (!o->addr[0])
		return bad(err, errlen, "--addr is required", NULL);
	if (o->proto == SA_UDP && o->mode == SA_CRR)
		return bad(err, errlen, "--mode crr needs --proto tcp (UDP has no connections)", NULL);
	if (o->proto == SA_UDP && o->size > SA_UDP_MAX)
		return bad(err, errlen, "--size: a UDP datagram carries at most 65507 bytes", NULL);
	if (o->rate_bps > 0 && (o->role != SA_CLIENT || o->mode != SA_STREAM || o->proto != SA_UDP))
		return bad(err, errlen, "--rate paces a UDP stream's client (TCP paces itself)", NULL);
	if ((unsigned)o->port + o->flows - 1 > 65535)
		return bad(err, errlen, "--port + --flows: ports past 65535", NULL);
	return 0;
}
