/* xdplive: system plumbing. The generator's pin in the XDP dispatcher, and interface counters. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>

#include "probe_xdp.h"
#include "xdplive.h"

/* Interface counters of this network namespace (/proc/net/dev follows the caller's namespace). */
int xdplive_if_counters(const char *ifname, struct xdplive_ifc *ifc)
{
	FILE *f = fopen("/proc/net/dev", "r");
	if (!f)
		return -1;
	char line[512];
	int found = -1;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');
		if (!c)
			continue;
		*c = 0;
		char *name = line + strspn(line, " ");
		if (strcmp(name, ifname))
			continue;
		unsigned long long v[16];
		if (sscanf(c + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu "
			   "%llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10],
			   &v[11], &v[12], &v[13], &v[14], &v[15]) == 16) {
			ifc->rx_dropped = v[3];
			ifc->tx_packets = v[9];
			ifc->tx_dropped = v[11];
			found = 0;
		}
		break;
	}
	fclose(f);
	return found;
}

/* A test run with repeat > 1 puts its program into the XDP dispatcher and takes it out again at
 * the end, two synchronize_rcu() of about 12 ms each here: every BPF_PROG_RUN call took 16-40 ms
 * whatever its size. A program the dispatcher already holds is not swapped, and calls take about
 * 12 us. So vsb_gen is also attached (native mode) to a veth pair that is never up, inside a
 * private network namespace that only a file descriptor keeps alive: when the process ends, however
 * it ends, the namespace, the pair and the attachment go with it. */
int xdplive_pin(int prog_fd, int *link, int *ns, char *why, size_t n)
{
	const char *ip = probe_ip_path();
	int home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (!ip || home < 0) {
		snprintf(why, n, "%s", ip ? strerror(errno) : "iproute2's ip not found");
		if (home >= 0)
			close(home);
		return -1;
	}
	int rc = -1;
	if (unshare(CLONE_NEWNET)) {
		snprintf(why, n, "unshare(CLONE_NEWNET): %s", strerror(errno));
		close(home);
		return -1;
	}
	char out[160];
	char *add[] = {"ip", "link", "add", "vsbpin0", "type", "veth", "peer", "name", "vsbpin1", NULL};
	if (probe_run_ip(ip, add, out, sizeof(out))) {
		snprintf(why, n, "veth: %s", out);
	} else {
		LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = XDP_FLAGS_DRV_MODE);
		*link = bpf_link_create(prog_fd, (int)if_nametoindex("vsbpin0"), BPF_XDP, &lo);
		if (*link < 0)
			snprintf(why, n, "native XDP attach: %s", strerror(errno));
		else if ((*ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) >= 0)
			rc = 0;
	}
	if (setns(home, CLONE_NEWNET)) { /* cannot happen: we were there a moment ago */
		perror("vswbench-engine: setns back");
		abort();
	}
	close(home);
	return rc;
}

