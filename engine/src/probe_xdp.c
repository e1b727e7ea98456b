/* Kernel feature probes: AF_XDP sockets, and native XDP on veth.
 *
 * The veth probe changes nothing on the host: a forked child moves into a new anonymous network
 * namespace (unshare), creates vsbprobe0/vsbprobe1 there with iproute2 (fork + execve, no shell),
 * attaches a two-instruction XDP_PASS program in driver mode, and reports through a pipe. The
 * namespace, the veth pair and the program all vanish when the child exits. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <net/if.h>

#include "probe_xdp.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

int probe_afxdp_socket(char *reason, size_t n)
{
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int err = errno;
		snprintf(reason, n, "socket(AF_XDP): %s: %s", strerror(err),
			 err == EAFNOSUPPORT ? "the kernel lacks AF_XDP (CONFIG_XDP_SOCKETS=y)"
			 : (err == EPERM || err == EACCES) ? "run as root (CAP_NET_RAW)" : "AF_XDP unusable");
		return 0;
	}
	close(fd);
	if (n)
		reason[0] = 0;
	return 1;
}

#ifndef VSB_HAVE_AFXDP

int probe_native_xdp_veth(char *reason, size_t n)
{
	snprintf(reason, n, "built without libbpf: install libbpf-dev and libxdp-dev and rebuild");
	return 0;
}

#else

#include <linux/bpf.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define PROBE_TIMEOUT_MS 5000

const char *probe_ip_path(void)
{
	static const char *const cands[] = { "/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip" };
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
		if (access(cands[i], X_OK) == 0)
			return cands[i];
	return NULL;
}

/* Run `ip ARGS...` (argv[0] = "ip"), stdout discarded, stderr captured into msg. 0 on success. */
int probe_run_ip(const char *ip, char *const argv[], char *msg, size_t n)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		snprintf(msg, n, "pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(msg, n, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		static char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL };
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
		}
		dup2(pfd[1], 2);
		execve(ip, argv, envp);
		_exit(127);
	}
	close(pfd[1]);
	size_t got = 0;
	ssize_t r;
	while (got + 1 < n && (r = read(pfd[0], msg + got, n - 1 - got)) > 0)
		got += (size_t)r;
	close(pfd[0]);
	if (n)
		msg[got] = 0;
	msg[strcspn(msg, "\n")] = 0;
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (!got)
		snprintf(msg, n, WIFEXITED(st) && WEXITSTATUS(st) == 127 ? "cannot execute %s" : "%s failed", ip);
	return -1;
}

static char bpf_msg[160];
static int keep_bpf_msg(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	if (lvl == LIBBPF_WARN) {
		vsnprintf(bpf_msg, sizeof(bpf_msg), fmt, ap);
		bpf_msg[strcspn(bpf_msg, "\n")] = 0;
	}
	return 0;
}

/* The experiment, run in the child: 1 if native XDP attached to a fresh veth, else 0 + msg. */
static int try_native(const char *ip, char *msg, size_t n)
{
	char out[160];
	char *add[] = { "ip", "link", "add", "vsbprobe0", "type", "veth", "peer", "name", "vsbprobe1",
			NULL };
	char *up0[] = { "ip", "link", "set", "vsbprobe0", "up", NULL };
	char *up1[] = { "ip", "link", "set", "vsbprobe1", "up", NULL };
	struct bpf_insn pass[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	if (probe_run_ip(ip, add, out, sizeof(out))) {
		snprintf(msg, n, "cannot create a veth pair (%s): is the veth module available?", out);
		return 0;
	}
	if (probe_run_ip(ip, up0, out, sizeof(out)) || probe_run_ip(ip, up1, out, sizeof(out))) {
		snprintf(msg, n, "cannot bring the probe veth up: %s", out);
		return 0;
	}
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "vsb_probe_pass", "GPL", pass, 2, NULL);
	if (fd < 0) {
		snprintf(msg, n, "cannot load an XDP program: %s: run as root with BPF enabled",
			 strerror(-fd));
		return 0;
	}
	int ifindex = (int)if_nametoindex("vsbprobe0");
	int err = bpf_xdp_attach(ifindex, fd, XDP_FLAGS_DRV_MODE, NULL);
	if (err)
		snprintf(msg, n, "native (driver mode) XDP attach on veth failed: %s%s%s: use generic XDP "
			 "(--xdp-mode generic)", strerror(-err), bpf_msg[0] ? ": " : "", bpf_msg);
	else
		bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL);
	close(fd);
	return !err;
}

/* The child: runs the experiment, writes "1" or "0<reason>" to wfd, exits. */
static void __attribute__((noreturn)) probe_child(int wfd, const char *ip, probe_fn fn)
{
	char buf[260];
	int ok = 0;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	libbpf_set_print(keep_bpf_msg);
	if (unshare(CLONE_NEWNET) != 0)
		snprintf(buf + 1, sizeof(buf) - 1, "unshare(CLONE_NEWNET): %s: run as root", strerror(errno));
	else
		ok = fn(ip, buf + 1, sizeof(buf) - 1);
	buf[0] = ok ? '1' : '0';
	if (ok)
		buf[1] = 0;
	if (write(wfd, buf, strlen(buf)) < 0)
		_exit(1);
	_exit(0); /* the namespace, its veth pair and the program go with us */
}

int probe_native_xdp_veth(char *reason, size_t n)
{
	return probe_in_netns(try_native, reason, n);
}

int probe_in_netns(probe_fn fn, char *reason, size_t n)
{
	if (n)
		reason[0] = 0;
	const char *ip = probe_ip_path();
	if (!ip) {
		snprintf(reason, n, "iproute2's ip not found in /usr/sbin or /sbin: install iproute2");
		return 0;
	}
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		snprintf(reason, n, "pipe: %s", strerror(errno));
		return 0;
	}
	fflush(NULL); /* nothing buffered may be written twice by the child */
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(reason, n, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return 0;
	}
	if (pid == 0) {
		close(pfd[0]);
		probe_child(pfd[1], ip, fn);
	}
	close(pfd[1]);
	char buf[260];
	size_t got = 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		long left = PROBE_TIMEOUT_MS - ((t.tv_sec - t0.tv_sec) * 1000 +
						(t.tv_nsec - t0.tv_nsec) / 1000000);
		struct pollfd pf = { .fd = pfd[0], .events = POLLIN };
		if (left <= 0 || got + 1 >= sizeof(buf)) {
			if (left <= 0)
				kill(pid, SIGKILL); /* our own child, by pid */
			break;
		}
		int r = poll(&pf, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue; /* timeout is handled at the top */
		ssize_t k = read(pfd[0], buf + got, sizeof(buf) - 1 - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break; /* EOF: the child is done */
		got += (size_t)k;
	}
	close(pfd[0]);
	buf[got] = 0;
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (got && buf[0] == '1')
		return 1;
	if (got > 1)
		snprintf(reason, n, "%s", buf + 1);
	else
		snprintf(reason, n, "probe child ended without an answer (timed out or crashed after %d ms)",
			 PROBE_TIMEOUT_MS);
	return 0;
}

#endif
