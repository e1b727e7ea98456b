/* vswbench-sockapp: parse, pin, run the client or the server, print one JSON object.
 * Exit status: 0 ok, 1 the run failed, 2 bad usage (as the engine's). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "jout.h"
#include "tsc.h"
#include "sockapp.h"

static volatile int stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void head(struct jout *j, const struct sa_opts *o)
{
	jout_begin(j);
	jout_str(j, "type", "result");
	jout_str(j, "role", o->role == SA_CLIENT ? "client" : "server");
	jout_str(j, "mode", sa_mode_name(o->mode));
	jout_str(j, "proto", o->proto == SA_TCP ? "tcp" : "udp");
	jout_u64(j, "flows", o->flows);
	jout_u64(j, "size", o->size);
	jout_i64(j, "cpu", o->cpu);
}

static double per_s(uint64_t n, double s)
{
	return s > 0 ? (double)n / s : 0.0;
}

static void print_client(const struct sa_opts *o, const struct sa_result *r)
{
	struct jout j = {0};
	double t = r->elapsed_s;
	head(&j, o);
	jout_dbl(&j, "duration_s", t);
	jout_u64(&j, "bytes_sent", r->bytes_sent);
	jout_u64(&j, "bytes_acked", r->bytes_acked);
	jout_u64(&j, "bytes_received", r->bytes_received);
	jout_u64(&j, "datagrams_sent", r->datagrams_sent);
	jout_u64(&j, "send_errors", r->send_errors);
	jout_dbl(&j, "rate_bps", o->rate_bps);         /* 0: unpaced */
	jout_u64(&j, "send_waits", r->send_waits);
	/* TCP stream: what the peer acknowledged; UDP stream: what was sent (the server counts
	 * what arrived) */
	uint64_t good = o->proto == SA_TCP ? r->bytes_acked : r->bytes_sent;
	jout_dbl(&j, "goodput_gbps", o->mode == SA_STREAM ? per_s(good, t) * 8 / 1e9 : 0.0);
	jout_u64(&j, "retransmits", r->retransmits);
	jout_u64(&j, "transactions", r->transactions);
	jout_dbl(&j, "transactions_per_s", per_s(r->transactions, t));
	jout_u64(&j, "timeouts", r->timeouts);
	jout_u64(&j, "connections", r->connections);
	jout_dbl(&j, "connections_per_s", o->mode == SA_CRR ? per_s(r->connections, t) : 0.0);
	jout_u64(&j, "connect_errors", r->connect_errors);
	jout_dbl(&j, "cpu_s", r->cpu_s);
	jout_dbl(&j, "tsc_hz", tsc_hz());   /* cycles = CPU seconds x this, as the engine counts */
	jout_latency(&j, "latency_us", &r->lat);
	if (o->hist)
		jout_hist(&j, "hist", &r->lat);
	jout_emit(&j);
}

static void print_server(const struct sa_opts *o, const struct sa_server_result *r)
{
	struct jout j = {0};
	head(&j, o);
	jout_dbl(&j, "duration_s", r->elapsed_s);
	jout_u64(&j, "bytes_received", r->bytes_received);
	jout_u64(&j, "datagrams_received", r->datagrams_received);
	jout_u64(&j, "replies", r->replies);
	jout_u64(&j, "accepted", r->accepted);
	jout_dbl(&j, "goodput_gbps", per_s(r->bytes_received, r->elapsed_s) * 8 / 1e9);
	jout_dbl(&j, "cpu_s", r->cpu_s);
	jout_emit(&j);
}

int main(int argc, char **argv)
{
	static struct sa_opts o;
	static struct sa_result r;
	static struct sa_server_result sr;
	char err[256];
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: vswbench-sockapp client|server --addr IP [--mode stream|rr|crr] "
		       "[--proto tcp|udp] [--port P] [--flows N] [--size BYTES] [--duration S] "
		       "[--cpu N] [--hist] [--read-size BYTES (server)] "
		       "[--rate BITS_PER_S (client, UDP stream)]\n");
		return 0;
	}
	if (sa_parse(argc, argv, &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "vswbench-sockapp: %s\n", err);
		return 2;
	}
	if (sa_pin(o.cpu) < 0) {
		fprintf(stderr, "vswbench-sockapp: cannot pin to CPU %d\n", o.cpu);
		return 2;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	int rc = o.role == SA_CLIENT ? sa_client(&o, &r, &stop, err, sizeof(err))
				     : sa_server(&o, &sr, &stop, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "vswbench-sockapp: %s\n", err);
		return 1;
	}
	if (o.role == SA_CLIENT)
		print_client(&o, &r);
	else
		print_server(&o, &sr);
	return 0;
}
