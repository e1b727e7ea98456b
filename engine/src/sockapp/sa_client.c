/* vswbench-sockapp client: N flows in one epoll loop on one core, for --duration seconds.
 *   stream  TCP: write --size bytes while the socket takes them; goodput from TCP_INFO's
 *           bytes acked. UDP: datagrams of --size bytes, flow i to port + i (the server counts),
 *           as fast as the sockets take them or paced at --rate bits/s (sa_pace.c).
 *   rr      one request of --size bytes outstanding per flow, answered by as many bytes; the
 *           latency of each transaction into the histogram (UDP: unanswered after 200 ms: lost).
 *   crr     TCP: connect, request, response, close, per transaction; latency from connect(). */
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

struct flow {
	int fd;
	int connecting;
	uint64_t t0;      /* when the transaction (crr: the connection) started */
	uint64_t got;     /* bytes of the response received */
};

struct client {
	const struct sa_opts *o;
	struct sa_result *r;
	struct flow f[SA_MAX_FLOWS];
	char *buf;
	int ep;
	volatile int *stop;     /* set by SIGTERM or SIGINT */
};

static int open_flow(struct client *c, unsigned i, int blocking)
{
	const struct sa_opts *o = c->o;
	struct sockaddr_in sin;
	int one = 1;
	int fd = socket(AF_INET, (o->proto == SA_TCP ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (o->proto == SA_TCP && o->mode != SA_STREAM)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	sa_addr(o->addr, (uint16_t)(o->port + (o->proto == SA_UDP ? i : 0)), &sin);
	int rc = connect(fd, (struct sockaddr *)&sin, sizeof(sin));
	if (rc < 0 && errno == EINPROGRESS && blocking) {
		struct epoll_event ev;
		int ep = epoll_create1(0);
		sa_epoll_add(ep, fd, EPOLLOUT, 0);
		int n = epoll_wait(ep, &ev, 1, 5000);
		close(ep);
		int soerr = 0;
		socklen_t len = sizeof(soerr);
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
		rc = n == 1 && !soerr ? 0 : -1;
		errno = soerr ? soerr : ETIMEDOUT;
	} else if (rc < 0 && errno == EINPROGRESS) {
		c->f[i].connecting = 1;
		rc = 0;
	}
	if (rc < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	c->f[i].fd = fd;
	return 0;
}

static int send_request(struct client *c, struct flow *f)
{
	f->got = 0;
	if (c->o->proto == SA_UDP) {
		ssize_t w = send(f->fd, c->buf, c->o->size, 0);
		if (w != (ssize_t)c->o->size)
			c->r->send_errors++;
		return 0;
	}
	return sa_write_all(f->fd, c->buf, c->o->size);
}

static void done_transaction(struct client *c, struct flow *f, uint64_t now)
{
	hist_record(&c->r->lat, now - f->t0);
	c->r->transactions++;
}

/* crr: close the flow's connection and open the next; 0 or -1 (no connection possible). */
static int next_connection(struct client *c, unsigned i, uint64_t now)
{
	struct flow *f = &c->f[i];
	if (f->fd >= 0) {
		c->r->retransmits += sa_tcp_retrans(f->fd);
		close(f->fd);
	}
	f->fd = -1;
	for (int tries = 0; tries < 1000; tries++) {
		f->t0 = sa_now_ns();
		if (open_flow(c, i, 0) == 0)
			return sa_epoll_add(c->ep, f->fd, EPOLLOUT, i);
		c->r->connect_errors++;
		if (errno != EADDRNOTAVAIL && errno != EAGAIN)
			return -1;
	}
	(void)now;
	return -1;
}

/* An event on flow i; -1 on a failure that ends the run. */
static int on_event(struct client *c, unsigned i, uint32_t ev, uint64_t now)
{
	struct flow *f = &c->f[i];
	const struct sa_opts *o = c->o;
	if (o->mode == SA_STREAM) {
		if (o->proto == SA_UDP) {
			for (int k = 0; k < 64; k++) {
				if (send(f->fd, c->buf, o->size, 0) != (ssize_t)o->size) {
					if (errno != EAGAIN)
						c->r->send_errors++;
					break;
				}
				c->r->datagrams_sent++;
				c->r->bytes_sent += o->size;
			}
			return 0;
		}
		for (int k = 0; k < 64; k++) {   /* then back to the loop, which keeps the time */
			ssize_t w = send(f->fd, c->buf, o->size, MSG_NOSIGNAL);
			if (w <= 0)
				return w < 0 && (errno == EAGAIN || errno == EINTR) ? 0 : -1;
			c->r->bytes_sent += (uint64_t)w;
		}
		return 0;
	}
	if (f->connecting) {
		int soerr = 0;
		socklen_t len = sizeof(soerr);
		getsockopt(f->fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
		if (soerr || !(ev & EPOLLOUT)) {
			c->r->connect_errors++;
			f->connecting = 0;
			return next_connection(c, i, now);
		}
		f->connecting = 0;
		struct epoll_event mod = {.events = EPOLLIN, .data.u64 = i};
		epoll_ctl(c->ep, EPOLL_CTL_MOD, f->fd, &mod);
		return send_request(c, f);
	}
	for (unsigned k = 0; k < SA_READ_BURST && !*c->stop; k++) {
		ssize_t n = sa_read_some(f->fd, c->buf, SA_BUF);
		if (n == -2)
			return 0;
		if (n <= 0)
			return o->mode == SA_CRR ? next_connection(c, i, now) : -1;
		c->r->bytes_received += (uint64_t)n;
		f->got += (uint64_t)n;
		if (f->got < o->size)
			continue;
		now = sa_now_ns();
		done_transaction(c, f, now);
		if (o->mode == SA_CRR) {
			c->r->connections++;
			return next_connection(c, i, now);
		}
		f->t0 = now;
		if (send_request(c, f) < 0)
			return -1;
		if (o->proto == SA_UDP)
			return 0;
	}
	return 0;       /* more may be waiting: epoll says so again */
}

static void udp_timeouts(struct client *c, uint64_t now)
{
	for (unsigned i = 0; i < c->o->flows; i++) {
		struct flow *f = &c->f[i];
		if (now > f->t0 && now - f->t0 > SA_RR_TIMEOUT_NS) {
			c->r->timeouts++;
			f->t0 = now;
			send_request(c, f);
		}
	}
}

static int start_flows(struct client *c, char *err, unsigned errlen)
{
	const struct sa_opts *o = c->o;
	for (unsigned i = 0; i < o->flows; i++) {
		struct flow *f = &c->f[i];
		f->fd = -1;
		f->t0 = sa_now_ns();
		if (o->mode == SA_CRR) {
			if (next_connection(c, i, f->t0) < 0)
				goto fail;
			continue;
		}
		if (open_flow(c, i, 1) < 0 ||
		    sa_epoll_add(c->ep, f->fd, o->mode == SA_STREAM ? EPOLLOUT : EPOLLIN, i) < 0)
			goto fail;
		if (o->mode == SA_RR && send_request(c, f) < 0)
			goto fail;
		continue;
fail:
		snprintf(err, errlen, "client: cannot reach %s port %u (flow %u): %s", o->addr,
			 o->port + (o->proto == SA_UDP ? i : 0), i + 1, strerror(errno));
		return -1;
	}
	return 0;
}

int sa_client(const struct sa_opts *o, struct sa_result *r, volatile int *stop, char *err,
	      unsigned errlen)
{
	static struct client c;
	memset(&c, 0, sizeof(c));
	c.o = o;
	c.r = r;
	c.buf = calloc(1, SA_BUF);
	c.ep = epoll_create1(0);
	c.stop = stop;
	hist_reset(&r->lat);
	if (!c.buf || c.ep < 0) {
		snprintf(err, errlen, "client: out of memory or epoll: %s", strerror(errno));
		return -1;
	}
	double cpu0 = sa_cpu_s();
	uint64_t start = sa_now_ns(), end = start + (uint64_t)(o->duration * 1e9), now = start;
	if (start_flows(&c, err, errlen) < 0)
		return -1;
	struct epoll_event evs[SA_MAX_FLOWS];
	if (o->mode == SA_STREAM && o->proto == SA_UDP && o->rate_bps > 0) {
		int fds[SA_MAX_FLOWS];
		for (unsigned i = 0; i < o->flows; i++)
			fds[i] = c.f[i].fd;
		sa_paced_udp(o, fds, c.buf, start, end, r, stop);
		now = sa_now_ns();
	}
	while (!*stop && (now = sa_now_ns()) < end) {   /* SIGTERM: stop early, still report */
		int n = epoll_wait(c.ep, evs, SA_MAX_FLOWS, 10);
		now = sa_now_ns();
		for (int k = 0; k < n; k++) {
			if (on_event(&c, (unsigned)evs[k].data.u64, evs[k].events, now) < 0) {
				snprintf(err, errlen, "client: flow %llu failed: %s",
					 (unsigned long long)evs[k].data.u64 + 1, strerror(errno));
				return -1;
			}
		}
		if (o->proto == SA_UDP && o->mode == SA_RR)
			udp_timeouts(&c, now);
	}
	r->elapsed_s = (double)(now - start) / 1e9;
	for (unsigned i = 0; i < o->flows; i++) {
		if (c.f[i].fd < 0)
			continue;
		if (o->proto == SA_TCP) {
			r->retransmits += sa_tcp_retrans(c.f[i].fd);
			r->bytes_acked += sa_tcp_acked(c.f[i].fd);
		}
		close(c.f[i].fd);
	}
	if (o->mode != SA_CRR)
		r->connections = o->proto == SA_TCP ? o->flows : 0;
	r->cpu_s = sa_cpu_s() - cpu0;
	free(c.buf);
	close(c.ep);
	return 0;
}
