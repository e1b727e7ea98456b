/* vswbench-sockapp: the project's socket client/server (TCP/UDP stream, request/response, one
 * connection per transaction), epoll, pinned to one CPU, N parallel flows. The client prints one
 * JSON object (goodput, TCP_INFO retransmissions, transactions/s, the latency histogram,
 * connections/s); the server prints one when it gets SIGTERM or SIGINT (what it received). */
#ifndef VSB_SOCKAPP_H
#define VSB_SOCKAPP_H
#include <stdint.h>
#include "hist.h"

#define SA_MAX_FLOWS 256
#define SA_MAX_SIZE (1u << 20)         /* message size: 1 B .. 1 MiB */
#define SA_MAX_DURATION 86400.0
#define SA_UDP_MAX 65507u              /* largest UDP payload on IPv4 */
#define SA_RR_TIMEOUT_NS 200000000ull  /* UDP rr: a request unanswered for 200 ms is lost */
/* Reads of one socket per epoll event, at most: its epoll is level-triggered, so what is left is
 * reported again. Unbounded, a reader that a sender keeps fed never got back to its loop to see
 * SIGTERM (a stream's server took 2-10 s to stop, up to its SIGKILL) nor served other flows. */
#define SA_READ_BURST 64

enum sa_role { SA_CLIENT, SA_SERVER };
enum sa_mode { SA_STREAM, SA_RR, SA_CRR };
enum sa_proto { SA_TCP, SA_UDP };

struct sa_opts {
	enum sa_role role;
	enum sa_mode mode;
	enum sa_proto proto;
	char addr[64];       /* client: server address to reach; server: address to bind */
	uint16_t port;       /* first port; flow i of UDP uses port + i */
	unsigned flows;
	unsigned size;       /* message (stream: write) size in bytes */
	unsigned read_size;  /* server, TCP stream: bytes asked of each recv (default SA_MAX_SIZE) */
	double duration;     /* client: seconds of load */
	double rate_bps;     /* client, UDP stream: payload bits per second over all flows (0: as
	                      * fast as the sockets take them) */
	int cpu;             /* -1: not pinned */
	int hist;            /* client: print the histogram's buckets */
};

/* Totals of one client run. */
struct sa_result {
	double elapsed_s;
	uint64_t bytes_sent, bytes_acked, bytes_received;
	uint64_t datagrams_sent, send_errors;
	uint64_t send_waits;               /* paced UDP: departures a full socket buffer held up */
	uint64_t transactions, timeouts;
	uint64_t connections, connect_errors;
	uint64_t retransmits;              /* TCP_INFO tcpi_total_retrans, summed over flows */
	double cpu_s;                      /* the process's user + system time */
	struct hist lat;                   /* transaction latency, ns */
};

/* Totals of one server run. */
struct sa_server_result {
	double elapsed_s;                  /* first byte to last byte received */
	uint64_t bytes_received, datagrams_received, replies, accepted;
	double cpu_s;
};

/* sa_opts.c: parse argv into o; 0 or -1 with a one-line message in err. */
int sa_parse(int argc, char **argv, struct sa_opts *o, char *err, unsigned errlen);
const char *sa_mode_name(enum sa_mode m);

/* sa_net.c */
int sa_pin(int cpu);
int sa_nonblock(int fd);
int sa_addr(const char *addr, uint16_t port, void *sin);   /* struct sockaddr_in */
int sa_epoll_add(int ep, int fd, uint32_t events, uint64_t tag);
uint64_t sa_tcp_retrans(int fd);
uint64_t sa_tcp_acked(int fd);
double sa_cpu_s(void);
uint64_t sa_now_ns(void);

/* sa_pace.c: a UDP stream at o->rate_bps, datagrams round robin over the flows' connected
 * sockets fds[0..o->flows), until `end` (sa_now_ns) or a signal. */
void sa_paced_udp(const struct sa_opts *o, const int *fds, const char *buf, uint64_t start,
		  uint64_t end, struct sa_result *r, volatile int *stop);

/* sa_client.c / sa_server.c: 0 or -1 with a message in err. stop: set by a signal. */
int sa_client(const struct sa_opts *o, struct sa_result *r, volatile int *stop, char *err,
	      unsigned errlen);
int sa_server(const struct sa_opts *o, struct sa_server_result *r, volatile int *stop,
	      char *err, unsigned errlen);

#endif
