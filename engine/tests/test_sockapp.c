/* vswbench-sockapp's pure parts: the command line (defaults, every refusal), the socket
 * address helper, and the UDP pacer's schedule (over local datagram socket pairs: no network).
 * The sockets themselves are exercised across namespaces by the integration tests
 * (tests/integration/test_sockets.py). */
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "check.h"
#include "sockapp/sockapp.h"

static int parse(struct sa_opts *o, char *err, int n, ...)
{
	char *argv[32];
	__builtin_va_list ap;
	__builtin_va_start(ap, n);
	for (int i = 0; i < n; i++)
		argv[i] = __builtin_va_arg(ap, char *);
	__builtin_va_end(ap);
	argv[n] = NULL;
	return sa_parse(n, argv, o, err, 256);
}

/* The pacer sends exactly the datagrams due before the end (k x size x 8 / rate), round robin
 * over the flows, and returns at the end, not before. */
static void test_pacer(void)
{
	struct sa_opts o;
	char err[256];
	CHECK_EQ(parse(&o, err, 12, "x", "client", "--addr", "198.18.1.2", "--proto", "udp",
		       "--size", "100", "--flows", "2", "--rate", "40000"), 0);
	int a[2], b[2];
	CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, a), 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, b), 0);
	sa_nonblock(a[0]);
	sa_nonblock(b[0]);
	int fds[2] = {a[0], b[0]};
	char buf[100] = {0};
	struct sa_result r;
	memset(&r, 0, sizeof(r));
	volatile int stop = 0;
	uint64_t start = sa_now_ns(), end = start + 100000000ull;   /* 0.1 s at 50 datagrams/s */
	sa_paced_udp(&o, fds, buf, start, end, &r, &stop);
	CHECK(sa_now_ns() >= end);
	CHECK_EQ(r.datagrams_sent, 5);
	CHECK_EQ(r.bytes_sent, 500);
	CHECK_EQ(r.send_errors, 0);
	char in[200];
	int got_a = 0, got_b = 0;
	while (recv(a[1], in, sizeof(in), MSG_DONTWAIT) == 100)
		got_a++;
	while (recv(b[1], in, sizeof(in), MSG_DONTWAIT) == 100)
		got_b++;
	CHECK_EQ(got_a, 3);
	CHECK_EQ(got_b, 2);
	close(a[0]), close(a[1]), close(b[0]), close(b[1]);
}

int main(void)
{
	struct sa_opts o;
	char err[256];
	CHECK_EQ(parse(&o, err, 4, "x", "client", "--addr", "198.18.1.2"), 0);
	CHECK_EQ(o.role, SA_CLIENT);
	CHECK_EQ(o.mode, SA_STREAM);
	CHECK_EQ(o.proto, SA_TCP);
	CHECK_EQ(o.flows, 1);
	CHECK_EQ(o.size, 16384);
	CHECK_EQ(o.port, 18000);
	CHECK_EQ(o.cpu, -1);
	CHECK(o.duration == 5.0);
	CHECK_EQ(o.read_size, SA_MAX_SIZE);
	CHECK_EQ(parse(&o, err, 16, "x", "server", "--addr", "198.18.1.2", "--mode", "rr", "--proto",
		       "udp", "--flows", "16", "--size", "64", "--cpu", "1", "--duration", "0.5"), 0);
	CHECK_EQ(o.role, SA_SERVER);
	CHECK_EQ(o.mode, SA_RR);
	CHECK_EQ(o.proto, SA_UDP);
	CHECK_EQ(o.flows, 16);
	CHECK_EQ(o.size, 64);
	CHECK_EQ(o.cpu, 1);
	CHECK(o.duration == 0.5);
	CHECK(!strcmp(sa_mode_name(SA_CRR), "crr"));
	CHECK_EQ(parse(&o, err, 6, "x", "server", "--addr", "198.18.1.2", "--read-size", "131072"), 0);
	CHECK_EQ(o.read_size, 131072);
	CHECK_EQ(parse(&o, err, 6, "x", "server", "--addr", "198.18.1.2", "--read-size", "0"), -1);
	CHECK(strstr(err, "--read-size") != NULL);
	CHECK_EQ(parse(&o, err, 6, "x", "server", "--addr", "198.18.1.2", "--read-size", "1048577"),
		 -1);
	/* refusals, each with its reason */
	CHECK_EQ(parse(&o, err, 2, "x", "client"), -1);
	CHECK(strstr(err, "--addr") != NULL);
	CHECK_EQ(parse(&o, err, 4, "x", "both", "--addr", "198.18.1.2"), -1);
	CHECK_EQ(parse(&o, err, 4, "x", "client", "--addr", "host"), -1);
	CHECK_EQ(parse(&o, err, 6, "x", "client", "--addr", "198.18.1.2", "--flows", "0"), -1);
	CHECK_EQ(parse(&o, err, 6, "x", "client", "--addr", "198.18.1.2", "--flows", "257"), -1);
	CHECK_EQ(parse(&o, err, 6, "x", "client", "--addr", "198.18.1.2", "--size", "1.5"), -1);
	CHECK_EQ(parse(&o, err, 6, "x", "client", "--addr", "198.18.1.2", "--size", "-1"), -1);
	CHECK_EQ(parse(&o, err, 6, "x", "client", "--addr", "198.18.1.2", "--duration", "nan"), -1);
	CHECK_EQ(parse(&o, err, 6, "x", "client", "--addr", "198.18.1.2", "--port", "80"), -1);
	CHECK_EQ(parse(&o, err, 8, "x", "client", "--addr", "198.18.1.2", "--port", "65535",
		       "--flows", "2"), -1);
	CHECK_EQ(parse(&o, err, 8, "x", "client", "--addr", "198.18.1.2", "--proto", "udp",
		       "--mode", "crr"), -1);
	CHECK(strstr(err, "tcp") != NULL);
	CHECK_EQ(parse(&o, err, 8, "x", "client", "--addr", "198.18.1.2", "--proto", "udp",
		       "--size", "65508"), -1);
	CHECK_EQ(parse(&o, err, 5, "x", "client", "--addr", "198.18.1.2", "extra"), -1);
	CHECK_EQ(parse(&o, err, 5, "x", "client", "--addr", "198.18.1.2", "--bogus"), -1);
	/* --rate: a UDP stream's client only, 1000..1e12 bits/s */
	CHECK_EQ(parse(&o, err, 10, "x", "client", "--addr", "198.18.1.2", "--proto", "udp",
		       "--rate", "1e9", "--size", "1400"), -1);   /* digits and a point only */
	CHECK_EQ(parse(&o, err, 8, "x", "client", "--addr", "198.18.1.2", "--proto", "udp",
		       "--rate", "1000000000"), 0);
	CHECK(o.rate_bps == 1e9);
	CHECK_EQ(parse(&o, err, 8, "x", "client", "--addr", "198.18.1.2", "--proto", "udp",
		       "--rate", "999"), -1);
	CHECK_EQ(parse(&o, err, 6, "x", "client", "--addr", "198.18.1.2", "--rate", "1000000"), -1);
	CHECK(strstr(err, "UDP stream") != NULL);
	CHECK_EQ(parse(&o, err, 8, "x", "server", "--addr", "198.18.1.2", "--proto", "udp",
		       "--rate", "1000000"), -1);
	CHECK_EQ(parse(&o, err, 10, "x", "client", "--addr", "198.18.1.2", "--proto", "udp",
		       "--mode", "rr", "--rate", "1000000"), -1);
	test_pacer();
	/* the address helper */
	struct sockaddr_in sin;
	CHECK_EQ(sa_addr("198.18.3.2", 18001, &sin), 0);
	CHECK_EQ(ntohs(sin.sin_port), 18001);
	CHECK_EQ(ntohl(sin.sin_addr.s_addr), 0xc6120302u);
	CHECK_EQ(sa_addr("198.18.3", 1, NULL), -1);
	if (!failures)
		printf("test_sockapp: ok\n");
	return failures ? 1 : 0;
}
