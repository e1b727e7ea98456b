/* xdplive: system plumbing. The kernel checks (is the backend usable here?), the generator's pin in
 * the XDP dispatcher, and interface counters. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/utsname.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>

#include "probe_xdp.h"
#include "xdplive.h"

int xdplive_check_kernel(char *why, size_t n)
{
	struct utsname u;
	unsigned maj = 0, min = 0;
	if (uname(&u) == 0 && sscanf(u.release, "%u.%u", &maj, &min) == 2 &&
	    (maj < 5 || (maj == 5 && min < 18))) {
		snprintf(why, n, "kernel %s is too old: BPF_PROG_RUN with live frames needs Linux 5.18 or "
			 "later (use --io afxdp)", u.release);
		return -1;
	}
	if (geteuid() != 0) {
		snprintf(why, n, "needs root (CAP_BPF, CAP_NET_ADMIN)");
		return -1;
	}
	struct bpf_insn drop[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_DROP},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "vsb_live_probe", "GPL", drop, 2, NULL);
	if (fd < 0) {
		snprintf(why, n, "cannot load an XDP program: %s (XDP unavailable)", strerror(-fd));
		return -1;
	}
	unsigned char frame[60] = {0};
	memset(frame, 0xff, 6);
	frame[12] = 0x08;
	struct xdp_md ctx = {.data_end = sizeof(frame), .ingress_ifindex = if_nametoindex("lo")};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = sizeof(frame), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1, .flags = BPF_F_TEST_XDP_LIVE_FRAMES);
	int err = ctx.ingress_ifindex ? bpf_prog_test_run_opts(fd, &o) : -ENODEV;
	if (err)
		err = errno ? -errno : err;
	close(fd);
	if (err) {
		snprintf(why, n, "BPF_PROG_RUN with live frames (BPF_F_TEST_XDP_LIVE_FRAMES) refused: %s "
			 "(needs Linux 5.18+ with BPF syscall support for XDP test runs)", strerror(-err));
		return -1;
	}
	return 0;
}

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

