/* vswbench-sockapp server: one epoll loop on one core. TCP: one listening socket, every
 * connection read; in rr and crr modes each --size bytes received are answered with --size bytes.
 * UDP: one socket per flow (port + i); rr answers each datagram with one of the same size. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "sa_io.h"
#include "sockapp.h"

#define TAG_SOCKETS 1024   /* tags below: the listening or UDP sockets; above: a struct conn */

struct conn {
	int fd;
	uint64_t got;      /* bytes of the request being received */
};

struct server {
	const struct sa_opts *o;
	struct sa_server_result *r;
	char *buf;
	uint64_t first_ns, last_ns;
	volatile int *stop;     /* set by SIGTERM or SIGINT */
};

static void received(struct server *s, uint64_t n)
{
	uint64_t now = sa_now_ns();
	if (!s->first_ns)
		s->first_ns = now;
	s->last_ns = now;
	s->r->bytes_received += n;
}

static int listen_on(const struct sa_opts *o, int type, uint16_t port)
{
	struct sockaddr_in sin;
	int one = 1, fd = socket(AF_INET, type, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa_addr(o->addr, port, &sin);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 4096) < 0) || sa_nonblock(fd) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void accept_all(struct server *s, int ep, int lfd)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
		if (fd < 0)
			return;
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		struct conn *c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		if (sa_epoll_add(ep, fd, EPOLLIN, (uint64_t)(uintptr_t)c) < 0) {
			close(fd);
			free(c);
			continue;
		}
		s->r->accepted++;
	}
}

/* Read what the connection has; answer whole requests; 1 when it is done (closed, failed).
 * A stream is read --read-size bytes per recv (default 1 MiB: what is there). iperf3's server
 * reads its block size (128 KiB); the smaller the reads, the more CPU the receiver spends per
 * byte, and on a path whose receive side shares a core with the switch's napi thread that sets
 * whether the receiver's window or the path's drops limit the sender (README, What
 * applications see). */
static int serve_tcp(struct server *s, struct conn *c)
{
	size_t cap = s->o->mode == SA_STREAM ? s->o->read_size : SA_BUF;
	for (unsigned k = 0; k < SA_READ_BURST && !*s->stop; k++) {
		ssize_t n = sa_read_some(c->fd, s->buf, cap);
		if (n == -2)
			return 0;
		if (n <= 0)
			return 1;
		received(s, (uint64_t)n);
		if (s->o->mode == SA_STREAM)
			continue;
		c->got += (uint64_t)n;
		while (c->got >= s->o->size) {
			c->got -= s->o->size;
			memset(s->buf, 0, s->o->size);
			if (sa_write_all(c->fd, s->buf, s->o->size) < 0)
				return 1;
			s->r->replies++;
		}
	}
	return 0;       /* more may be waiting: epoll says so again */
}

static void serve_udp(struct server *s, int fd)
{
	for (unsigned k = 0; k < SA_READ_BURST && !*s->stop; k++) {
		struct sockaddr_in from;
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(fd, s->buf, SA_BUF, 0, (struct sockaddr *)&from, &flen);
		if (n < 0)
			return;
		received(s, (uint64_t)n);
		s->r->datagrams_received++;
		if (s->o->mode == SA_RR &&
		    sendto(fd, s->buf, (size_t)n, 0, (struct sockaddr *)&from, flen) == n)
			s->r->replies++;
	}
}

int sa_server(const struct sa_opts *o, struct sa_server_result *r, volatile int *stop,
	      char *err, unsigned errlen)
{
	struct server s = {.o = o, .r = r, .buf = calloc(1, SA_BUF), .stop = stop};
	int socks[SA_MAX_FLOWS], nsocks = o->proto == SA_TCP ? 1 : (int)o->flows;
	int ep = epoll_create1(0);
	if (!s.buf || ep < 0) {
		snprintf(err, errlen, "server: out of memory or epoll: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < nsocks; i++) {
		socks[i] = listen_on(o, o->proto == SA_TCP ? SOCK_STREAM : SOCK_DGRAM,
				     (uint16_t)(o->port + i));
		if (socks[i] < 0 || sa_epoll_add(ep, socks[i], EPOLLIN, (uint64_t)i) < 0) {
			snprintf(err, errlen, "server: cannot listen on %s port %u: %s", o->addr,
				 o->port + i, strerror(errno));
			return -1;
		}
	}
	printf("{\"type\":\"ready\",\"role\":\"server\"}\n");
	fflush(stdout);
	double cpu0 = sa_cpu_s();
	struct epoll_event evs[64];
	while (!*stop) {
		int n = epoll_wait(ep, evs, 64, 100);
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;
			if (tag < TAG_SOCKETS && o->proto == SA_TCP) {
				accept_all(&s, ep, socks[tag]);
			} else if (tag < TAG_SOCKETS) {
				serve_udp(&s, socks[tag]);
			} else {
				struct conn *c = (struct conn *)(uintptr_t)tag;
				if (serve_tcp(&s, c)) {
					close(c->fd);   /* closing removes it from the epoll set */
					free(c);
				}
			}
		}
	}
	r->cpu_s = sa_cpu_s() - cpu0;
	r->elapsed_s = s.first_ns ? (double)(s.last_ns - s.first_ns) / 1e9 : 0.0;
	return 0;
}
