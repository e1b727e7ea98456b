/* Socket helpers of vswbench-sockapp: pinning, non-blocking sockets, epoll, TCP_INFO, CPU time. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <linux/tcp.h>   /* tcp_info with tcpi_bytes_acked (glibc's is older) */
#include <sched.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include "sockapp.h"

int sa_pin(int cpu)
{
	cpu_set_t set;
	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

int sa_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int sa_addr(const char *addr, uint16_t port, void *out)
{
	struct sockaddr_in sin;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		return -1;
	if (out)
		memcpy(out, &sin, sizeof(sin));
	return 0;
}

int sa_epoll_add(int ep, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev = {.events = events, .data.u64 = tag};
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static int tcp_info(int fd, struct tcp_info *ti)
{
	socklen_t len = sizeof(*ti);
	memset(ti, 0, sizeof(*ti));
	return getsockopt(fd, IPPROTO_TCP, TCP_INFO, ti, &len);
}

uint64_t sa_tcp_retrans(int fd)
{
	struct tcp_info ti;
	return tcp_info(fd, &ti) < 0 ? 0 : ti.tcpi_total_retrans;
}

uint64_t sa_tcp_acked(int fd)
{
	struct tcp_info ti;
	return tcp_info(fd, &ti) < 0 ? 0 : ti.tcpi_bytes_acked;
}

double sa_cpu_s(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

uint64_t sa_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
