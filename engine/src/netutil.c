/* Namespace, CPU pinning, interface facts and neighbour resolution. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "netutil.h"

int netns_enter(const char *name, struct vsb_error *e)
{
	char path[256];
	if (strchr(name, '/'))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "/run/netns/%s", name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return vsb_fail(e, VSB_ERR_NETNS, "--netns %s: cannot open %s: %s (create it with 'ip netns add %s')",
				name, path, strerror(errno), name);
	if (setns(fd, CLONE_NEWNET) < 0) {
		int err = errno;
		close(fd);
		return vsb_fail(e, err == EPERM ? VSB_ERR_PERM : VSB_ERR_NETNS,
				"--netns %s: setns failed: %s%s", name, strerror(err),
				err == EPERM ? " (run as root or with CAP_SYS_ADMIN)" : "");
	}
	close(fd);
	return 0;
}

int cpu_pin(int cpu, struct vsb_error *e)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		return vsb_fail(e, VSB_ERR_USAGE, "--cpu %d: cannot pin: %s (this machine has CPUs 0..%ld)",
				cpu, strerror(errno), sysconf(_SC_NPROCESSORS_ONLN) - 1);
	return 0;
}

int iface_get(const char *name, struct iface_info *out, struct vsb_error *e)
{
	memset(out, 0, sizeof(*out));
	if (strlen(name) >= IFNAMSIZ)
		return vsb_fail(e, VSB_ERR_USAGE, "--port %s: interface names have at most %d characters", name,
				IFNAMSIZ - 1);
	snprintf(out->name, sizeof(out->name), "%s", name);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return vsb_fail(e, VSB_ERR_SOCKET, "socket: %s", strerror(errno));
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFINDEX, &ifr) < 0) {
		close(fd);
		return vsb_fail(e, VSB_ERR_IFACE,
				"--port %s: no such interface in this namespace (check --netns and 'ip link')", name);
	}
	out->ifindex = ifr.ifr_ifindex;
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) == 0)
		memcpy(out->mac, ifr.ifr_hwaddr.sa_data, 6);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0)
		out->up = !!(ifr.ifr_flags & IFF_UP);
	if (ioctl(fd, SIOCGIFMTU, &ifr) == 0)
		out->mtu = ifr.ifr_mtu;
	if (ioctl(fd, SIOCGIFADDR, &ifr) == 0) {
		out->has_ip = 1;
		out->ip = ntohl(((struct sockaddr_in *)&ifr.ifr_addr)->sin_addr.s_addr);
		if (ioctl(fd, SIOCGIFNETMASK, &ifr) == 0)
			out->mask = ntohl(((struct sockaddr_in *)&ifr.ifr_netmask)->sin_addr.s_addr);
	}
	close(fd);
	return 0;
}

uint32_t iface_default_peer(const struct iface_info *i)
{
	if (!i->has_ip)
		return 0;
	if (i->mask == 0xfffffffe)
		return i->ip ^ 1;
	if (i->mask == 0xfffffffc) {
		uint32_t host = i->ip & 3;
		if (host == 1)
			return i->ip + 1;
		if (host == 2)
			return i->ip - 1;
	}
	return 0;
}

static int neigh_read(const char *ifname, uint32_t ip, uint8_t mac[6])
{
	FILE *f = fopen("/proc/net/arp", "re");
	if (!f)
		return 0;
	char line[256], ips[64], hw[64], mask[64], dev[64];
	unsigned type, flags;
	int found = 0;
	if (!fgets(line, sizeof(line), f)) { /* header */
		fclose(f);
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s 0x%x 0x%x %63s %63s %63s", ips, &type, &flags, hw, mask, dev) != 6)
			continue;
		uint32_t a;
		if (parse_ip4(ips, &a) < 0 || a != ip || strcmp(dev, ifname) != 0 || !(flags & 0x2))
			continue;
		if (parse_mac(hw, mac) == 0) {
			found = 1;
			break;
		}
	}
	fclose(f);
	return found;
}

int neigh_lookup(const char *ifname, uint32_t ip, uint8_t mac[6], int resolve)
{
	if (neigh_read(ifname, ip, mac))
		return 1;
	if (!resolve)
		return 0;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, strlen(ifname));
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(ip)};
	/* A zero-length datagram to the discard port makes the kernel resolve the address. */
	if (sendto(fd, "", 0, MSG_DONTWAIT, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return 0;
	}
	close(fd);
	for (int i = 0; i < 100; i++) {
		if (neigh_read(ifname, ip, mac))
			return 1;
		struct timespec ts = {0, 5 * 1000 * 1000};
		nanosleep(&ts, 0);
	}
	return 0;
}

int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char tail;
	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
		return -1;
	for (int i = 0; i < 6; i++) {
		if (v[i] > 255)
			return -1;
		mac[i] = v[i];
	}
	return 0;
}

int parse_ip4(const char *s, uint32_t *ip)
{
	struct in_addr a;
	if (inet_pton(AF_INET, s, &a) != 1)
		return -1;
	*ip = ntohl(a.s_addr);
	return 0;
}

void fmt_mac(const uint8_t m[6], char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

void fmt_ip4(uint32_t ip, char out[16])
{
	struct in_addr a = {.s_addr = htonl(ip)};
	inet_ntop(AF_INET, &a, out, 16);
}

double cpu_process_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double cpu_thread_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}
