/* vswbench-sockapp: a paced UDP stream (client --rate). Datagram k of the run is due at
 * start + k x size x 8 / rate, round robin over the flows; the client sleeps until the next is
 * due (timer slack 1 ns, not the default 50 us; no spinning, whose CPU would count in the
 * stream's cost per GB) and sends what is due by then, so the server sees the rate asked for,
 * not the burst a socket buffer takes (unpaced, a stream of 1400 B datagrams through the bridge
 * lost 96 % at the server's socket; paced at 500 Mbit/s, 0.5 %). A departure a full socket
 * buffer refuses waits for room (send_waits) and the schedule goes on: the datagrams it falls
 * behind by are sent back to back, at most PACE_BURST per wake-up, so the sent rate says what
 * was offered. */
#include <errno.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include "sockapp.h"

#define PACE_BURST 64

static void wait_until(uint64_t due, volatile int *stop)
{
	uint64_t now;
	while (!*stop && (now = sa_now_ns()) < due) {
		uint64_t ns = due - now;
		struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
		nanosleep(&ts, NULL);   /* a signal ends it early: the loop looks at stop */
	}
}

void sa_paced_udp(const struct sa_opts *o, const int *fds, const char *buf, uint64_t start,
		  uint64_t end, struct sa_result *r, volatile int *stop)
{
	double ns_per = (double)o->size * 8.0 * 1e9 / o->rate_bps;
	uint64_t k = 0;
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	while (!*stop) {
		uint64_t due = start + (uint64_t)((double)k * ns_per);
		if (due >= end)
			break;
		wait_until(due, stop);
		for (unsigned n = 0; n < PACE_BURST && !*stop; n++) {
			int fd = fds[k % o->flows];
			if (send(fd, buf, o->size, 0) == (ssize_t)o->size) {
				r->datagrams_sent++;
				r->bytes_sent += o->size;
			} else if (errno == EAGAIN || errno == ENOBUFS) {
				r->send_waits++;
				struct pollfd p = {.fd = fd, .events = POLLOUT};
				poll(&p, 1, 1);
				continue;    /* the same departure again */
			} else {
				r->send_errors++;
			}
			k++;
			due = start + (uint64_t)((double)k * ns_per);
			if (due > sa_now_ns() || due >= end)
				break;
		}
	}
	wait_until(end, stop);   /* the run lasts its duration: the rates divide by it */
}
