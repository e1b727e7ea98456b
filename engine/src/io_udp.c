/* UDP socket backend: sendmmsg/recvmmsg on kernel UDP sockets (the socket path of Ara et al.).
 * Moves UDP payloads; the kernel builds the headers. One socket per source port (flow); the receive
 * socket is bound to the destination port. A round-trip client receives the replies on its TX
 * sockets; a reflector replies through its receive socket to each datagram's sender. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "io.h"
#include "tsc.h"

#define UDP_BUF 2048       /* bytes per datagram buffer: payloads of MTU up to 2076 */
#define UDP_BUF_JUMBO 9216 /* for a larger MTU: payloads of frames to 9018 B (MTU 9000) */
#define UDP_MAX_SOCKS 4096

struct io_port {
	struct io_config cfg;
	int *tx_fds;
	unsigned ntx;
	int rx_fd;
	int *rx_fds;            /* sockets polled for receiving */
	unsigned nrx, rx_next;
	struct sockaddr_in dst;
	uint8_t *txbuf, *rxbuf;
	unsigned buf;           /* bytes per datagram buffer (UDP_BUF or UDP_BUF_JUMBO) */
	struct mmsghdr tx_msgs[IO_MAX_BATCH], rx_msgs[IO_MAX_BATCH];
	struct iovec tx_iov[IO_MAX_BATCH], rx_iov[IO_MAX_BATCH];
	struct sockaddr_in rx_from[IO_MAX_BATCH];
	char rx_ctl[IO_MAX_BATCH][CMSG_SPACE(sizeof(uint32_t))];
	uint64_t rx_dropped, tx_errors;
	uint32_t ovfl_last;
};

static int udp_available(struct vsb_error *e)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return vsb_fail(e, VSB_ERR_UNSUPPORTED, "UDP socket: %s", strerror(errno));
	close(fd);
	return 0;
}

static int make_sock(struct io_port *p, uint32_t ip, uint16_t port, struct vsb_error *e)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -vsb_fail(e, VSB_ERR_SOCKET, "UDP socket: %s", strerror(errno));
	int one = 1, buf = 8 << 20;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, p->cfg.ifname, strlen(p->cfg.ifname)) < 0) {
		close(fd);
		return -vsb_fail(e, VSB_ERR_IFACE, "UDP SO_BINDTODEVICE %s: %s", p->cfg.ifname, strerror(errno));
	}
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(ip)};
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;
		close(fd);
		char ips[16];
		inet_ntop(AF_INET, &sa.sin_addr, ips, sizeof(ips));
		return -vsb_fail(e, VSB_ERR_SOCKET,
				 "UDP bind %s:%u on %s: %s (the udp backend needs the port's own IPv4 address "
				 "and a free UDP port)", ips, port, p->cfg.ifname, strerror(err));
	}
	return fd;
}

static void udp_close(struct io_port *p)
{
	if (!p)
		return;
	for (unsigned i = 0; i < p->ntx; i++)
		if (p->tx_fds[i] >= 0)
			close(p->tx_fds[i]);
	if (p->rx_fd >= 0)
		close(p->rx_fd);
	free(p->tx_fds);
	free(p->rx_fds);
	free(p->txbuf);
	free(p->rxbuf);
	free(p);
}

static int udp_open(const struct io_config *cfg, struct io_port **out, struct vsb_error *e)
{
	struct io_port *p = calloc(1, sizeof(*p));
	if (!p)
		return vsb_fail(e, VSB_ERR_NOMEM, "out of memory");
	p->cfg = *cfg;
	p->rx_fd = -1;
	p->buf = cfg->mtu > UDP_BUF + IP4_HDR_LEN + UDP_HDR_LEN ? UDP_BUF_JUMBO : UDP_BUF;
	p->txbuf = malloc((size_t)IO_MAX_BATCH * p->buf);
	p->rxbuf = malloc((size_t)IO_MAX_BATCH * p->buf);
	unsigned nflows = cfg->nsports ? cfg->nsports : 1;
	if (nflows > UDP_MAX_SOCKS) {
		udp_close(p);
		return vsb_fail(e, VSB_ERR_USAGE, "--flows %u: the udp backend opens one socket per flow, "
				"at most %u", nflows, UDP_MAX_SOCKS);
	}
	p->tx_fds = calloc(nflows, sizeof(int));
	p->rx_fds = calloc(nflows + 1, sizeof(int));
	if (!p->txbuf || !p->rxbuf || !p->tx_fds || !p->rx_fds) {
		udp_close(p);
		return vsb_fail(e, VSB_ERR_NOMEM, "out of memory");
	}
	p->dst = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(cfg->dport),
				      .sin_addr.s_addr = htonl(cfg->dip)};
	if (cfg->want_tx && !cfg->rt_client && cfg->want_rx) {
		/* reflector: replies go out of the receive socket */
	} else if (cfg->want_tx) {
		for (unsigned i = 0; i < nflows; i++) {
			int fd = make_sock(p, cfg->sip, cfg->sport + i, e);
			if (fd < 0) {
				udp_close(p);
				return e->code;
			}
			/* Connected: the route is looked up once, not per datagram (as iperf3 does). */
			if (connect(fd, (struct sockaddr *)&p->dst, sizeof(p->dst)) < 0) {
				close(fd);
				udp_close(p);
				return vsb_fail(e, VSB_ERR_SOCKET, "UDP connect to the destination on %s: %s "
						"(check --dst-ip and the port's routes)", cfg->ifname, strerror(errno));
			}
			p->tx_fds[p->ntx++] = fd;
		}
	}
	if (cfg->want_rx && cfg->rt_client) {
		memcpy(p->rx_fds, p->tx_fds, p->ntx * sizeof(int));
		p->nrx = p->ntx;
	} else if (cfg->want_rx) {
		p->rx_fd = make_sock(p, cfg->sip, cfg->dport, e);
		if (p->rx_fd < 0) {
			p->rx_fd = -1;
			udp_close(p);
			return e->code;
		}
		p->rx_fds[p->nrx++] = p->rx_fd;
	}
	for (unsigned i = 0; i < IO_MAX_BATCH; i++) {
		p->tx_iov[i].iov_base = p->txbuf + (size_t)i * p->buf;
		p->rx_iov[i] = (struct iovec){p->rxbuf + (size_t)i * p->buf, p->buf};
	}
	*out = p;
	return 0;
}

static unsigned udp_tx_get(struct io_port *p, struct io_buf *b, unsigned n)
{
	n = VSB_MIN(n, IO_MAX_BATCH);
	for (unsigned i = 0; i < n; i++) {
		b[i].data = p->tx_iov[i].iov_base;
		b[i].cap = p->buf;
		b[i].handle = i;
		b[i].priv = NULL;
		b[i].flow = 0;
	}
	return n;
}

static unsigned send_run(struct io_port *p, int fd, unsigned first, unsigned n)
{
	unsigned done = 0;
	while (done < n) {
		int r = sendmmsg(fd, p->tx_msgs + first + done, n - done, 0);
		if (r < 0) {
			if (errno == EINTR && !vsb_stop)
				continue;
			p->tx_errors += n - done;
			break;
		}
		done += r;
	}
	return done;
}

/* Frames go out of the socket of their flow (source port), in order: consecutive frames of one flow
 * share a sendmmsg call, so --flows N > 1 costs a syscall per flow change. A reflector replies
 * through its receive socket to each datagram's sender (priv). */
static unsigned udp_tx_put(struct io_port *p, struct io_buf *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct msghdr *m = &p->tx_msgs[i].msg_hdr;
		memset(m, 0, sizeof(*m));
		p->tx_iov[b[i].handle].iov_len = b[i].len;
		m->msg_iov = &p->tx_iov[b[i].handle];
		m->msg_iovlen = 1;
		m->msg_name = b[i].priv; /* reflect: the datagram's sender; gen: NULL (connected) */
		m->msg_namelen = b[i].priv ? sizeof(struct sockaddr_in) : 0;
	}
	if (!p->ntx) {
		send_run(p, p->rx_fd, 0, n);
		return n;
	}
	unsigned start = 0;
	while (start < n) {
		unsigned flow = b[start].flow % p->ntx, end = start + 1;
		while (end < n && b[end].flow % p->ntx == flow)
			end++;
		send_run(p, p->tx_fds[flow], start, end - start);
		start = end;
	}
	return n;
}

static unsigned recv_once(struct io_port *p, struct io_buf *b, unsigned n)
{
	for (unsigned k = 0; k < p->nrx; k++) {
		int fd = p->rx_fds[p->rx_next];
		p->rx_next = (p->rx_next + 1) % p->nrx;
		for (unsigned i = 0; i < n; i++) {
			struct msghdr *m = &p->rx_msgs[i].msg_hdr;
			m->msg_iov = &p->rx_iov[i];
			m->msg_iovlen = 1;
			m->msg_name = &p->rx_from[i];
			m->msg_namelen = sizeof(p->rx_from[i]);
			m->msg_control = p->rx_ctl[i];
			m->msg_controllen = sizeof(p->rx_ctl[i]);
			m->msg_flags = 0;
		}
		int r = recvmmsg(fd, p->rx_msgs, n, MSG_DONTWAIT, NULL);
		if (r <= 0)
			continue;
		for (int i = 0; i < r; i++) {
			b[i].data = p->rx_iov[i].iov_base;
			b[i].len = p->rx_msgs[i].msg_len;
			b[i].priv = &p->rx_from[i];
			b[i].handle = i;
		}
		/* SO_RXQ_OVFL: the socket's cumulative drop counter rides on each datagram. */
		struct msghdr *last = &p->rx_msgs[r - 1].msg_hdr;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(last); c; c = CMSG_NXTHDR(last, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL)
				memcpy(&p->ovfl_last, CMSG_DATA(c), sizeof(uint32_t));
		return r;
	}
	return 0;
}

static unsigned udp_rx_get(struct io_port *p, struct io_buf *b, unsigned n, int timeout_us)
{
	n = VSB_MIN(n, IO_MAX_BATCH);
	unsigned got = recv_once(p, b, n);
	if (got || timeout_us <= 0 || !p->nrx)
		return got;
	if (p->cfg.busy_poll) {
		uint64_t end = tsc_now() + (uint64_t)(tsc_hz() * timeout_us * 1e-6);
		while (!got && tsc_now() < end && !vsb_stop)
			got = recv_once(p, b, n);
		return got;
	}
	struct pollfd pfd[64];
	unsigned np = VSB_MIN(p->nrx, 64u);
	for (unsigned i = 0; i < np; i++)
		pfd[i] = (struct pollfd){.fd = p->rx_fds[i], .events = POLLIN};
	if (poll(pfd, np, (timeout_us + 999) / 1000) > 0)
		got = recv_once(p, b, n);
	return got;
}

static void udp_rx_put(struct io_port *p, struct io_buf *b, unsigned n) {}

static void udp_stats(struct io_port *p, struct io_port_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->rx_dropped = p->ovfl_last;
	s->tx_errors = p->tx_errors;
}

const struct io_ops io_udp_ops = {
	.name = "udp",
	.layer = IO_L4,
	.max_frame = FRAME_MAX, /* buffers sized for the port's MTU */
	.available = udp_available,
	.open = udp_open,
	.close = udp_close,
	.tx_get = udp_tx_get,
	.tx_put = udp_tx_put,
	.rx_get = udp_rx_get,
	.rx_put = udp_rx_put,
	.stats = udp_stats,
	.tx_flush = NULL,
};
