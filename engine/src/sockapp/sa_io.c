/* Whole-message writes and reads on non-blocking sockets (short waits in poll on EAGAIN). */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "sa_io.h"

/* Write n bytes of buf (zeros: the payload's content does not matter); 0 or -1. */
int sa_write_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
		if (w > 0) {
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};
			if (poll(&p, 1, 1000) <= 0)
				return -1;
			continue;
		}
		return -1;
	}
	return 0;
}

/* Read what is there (at most cap bytes): >0 bytes, 0 closed, -1 error, -2 nothing yet. */
ssize_t sa_read_some(int fd, char *buf, size_t cap)
{
	for (;;) {
		ssize_t r = recv(fd, buf, cap, 0);
		if (r >= 0)
			return r;
		if (errno == EINTR)
			continue;
		return errno == EAGAIN ? -2 : -1;
	}
}
