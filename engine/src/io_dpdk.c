/* DPDK backend: whole L2 frames through DPDK virtual devices (memif, vhost-user / virtio-user,
 * af_packet, af_xdp, ...), one RX and one TX queue per port, all polled from the main lcore (the
 * engine is single-threaded; no worker lcores).
 *
 * A port is a vdev string (--port net_memif0,role=client,socket=/run/vsbXXXX/memif.sock). The EAL is
 * initialised once, when engine.c asks for the first port's facts (port_info), with every port as a
 * --vdev; the argument list is built by dpdk_eal.c: --no-pci --no-telemetry --file-prefix PREFIX
 * --log-level --lcores 0@CPU, memory (--no-huge -m N: memfd-backed, shareable with vhost-user, works
 * with memif; or free hugepages unlinked at creation), then VSB_DPDK_EAL_ARGS and --eal-args.
 * DPDK's log goes to a capture buffer (its tail is quoted in error messages; VSB_DPDK_DEBUG=1 copies
 * it to stderr at debug level).
 *
 * TX hands out mbuf data pointers (rte_pktmbuf_alloc_bulk), tx_put sets the lengths and calls
 * rte_eth_tx_burst, frees what the device did not take and counts it in tx_errors. RX returns mbuf
 * data, rx_put frees the mbufs. Ports are started in open(); once the last port of the run is open
 * the backend waits (VSB_DPDK_LINK_WAIT seconds, default 10; 0: not at all) for every link to come up: a memif
 * needs its peer on the socket, a vhost-user port its virtio-user driver.
 *
 * At the end of the run, before the first port is closed, the backend lingers (VSB_DPDK_LINGER
 * seconds, default 1.5) until every memif joined to another process has lost its peer: see
 * linger_for_peers.
 *
 * At process end (atexit, also after SIGINT/SIGTERM: main returns normally) open ports are stopped
 * and closed, rte_eal_cleanup() runs and the runtime directory /var/run/dpdk/PREFIX and any hugepage
 * file named PREFIX* are removed. A memif is the exception: it is left for the exit to free, and
 * with it the EAL (close_port says why); its socket file and those directories are still removed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_version.h>

#include "dpdk_eal.h"
#include "io.h"
#include "jout.h"
#include "opts.h"
#include "tsc.h"

#define RING_DEFAULT 1024u
#define MBUF_CACHE 256u
#define LINK_WAIT_S 10.0
#define LINGER_S 1.5
#define MEMIF_DEFAULT_SOCKET "/run/memif.sock"
#define LOG_TAIL 2048
#define TX_ROOM (RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM)

struct io_port {
	uint16_t port_id;
	char name[DPDK_NAME_MAX + 1];
	int busy_poll, started;
	uint16_t nb_rxd, nb_txd;
	unsigned nres;                      /* mbufs handed out by tx_get, not yet put */
	struct rte_mbuf *res[IO_MAX_BATCH];
	uint64_t tx_errors, tx_ring_empty;
	unsigned idle_polls;                /* empty rx bursts since the last link check */
	int was_up, gone;                   /* the link was seen up / went down after that */
	char memif_socket[PATH_MAX];        /* a memif port's socket ("": not a memif) */
	int memif_socket_file;              /* ... a file this server created (socket-abstract=no) */
	int memif_client;                   /* ... role=client: its server must be running first */
};

/* A peer that leaves (memif client exiting, virtio driver closing) tears its rings down in
 * DPDK's control thread while this lcore may still poll them: DPDK 22.11's memif unmaps the
 * regions without waiting for the datapath, and a poll in that window was seen to end in SIGSEGV
 * (fwd between two memif servers, its clients exiting). So every LINK_CHECK_POLLS empty bursts
 * the link is read; a port whose link went down after it was up is not polled again. */
#define LINK_CHECK_POLLS 64u
static int peer_gone(struct io_port *p)
{
	if (p->gone)
		return 1;
	if (++p->idle_polls < LINK_CHECK_POLLS)
		return 0;
	p->idle_polls = 0;
	struct rte_eth_link l;
	memset(&l, 0, sizeof(l));
	if (rte_eth_link_get_nowait(p->port_id, &l) != 0)
		return 0;
	if (l.link_status == RTE_ETH_LINK_UP)
		p->was_up = 1;
	else if (p->was_up)
		p->gone = 1;
	return p->gone;
}

static struct {
	int tried, ok;                      /* EAL init attempted / succeeded */
	int atexit_set;
	char prefix[DPDK_PREFIX_MAX + 1];
	char rundir[PATH_MAX];
	struct rte_mempool *pool;
	int nexpected, nopen;               /* ports in this run / opened so far */
	struct io_port *open[MAX_PORTS];
	int busy_opt;                       /* --busy-poll (1), --no-busy-poll (0), default (-1) */
	int lingered;                       /* linger_for_peers ran */
	int memif_left;                     /* a memif is left open for the exit (close_port) */
	int debug;
	uint64_t retry_ticks;               /* tx_put: retry a full ring this long (0: never) */
	uint64_t retry_gap;                 /* ... every 1 us */
	char eal_args[1024];
	/* log capture */
	char tail[LOG_TAIL];
	size_t tail_len;
	FILE *log;
} D;

/* ---- DPDK log capture ---- */

static ssize_t log_write(void *cookie, const char *buf, size_t n)
{
	if (D.debug)
		fwrite(buf, 1, n, stderr);
	if (n >= LOG_TAIL) {
		buf += n - (LOG_TAIL - 1);
		n = LOG_TAIL - 1;
	}
	if (D.tail_len + n >= LOG_TAIL) {
		size_t drop = D.tail_len + n - (LOG_TAIL - 1);
		memmove(D.tail, D.tail + drop, D.tail_len - drop);
		D.tail_len -= drop;
	}
	memcpy(D.tail + D.tail_len, buf, n);
	D.tail_len += n;
	D.tail[D.tail_len] = 0;
	return (ssize_t)n;
}

/* The last lines DPDK logged, on one line (for error messages), then forgotten. */
static const char *log_tail(void)
{
	static char out[300];
	if (D.log) {
		fflush(D.log);
		flockfile(D.log); /* the EAL's threads log too; log_write runs under this lock */
	}
	char *s = D.tail;
	size_t n = D.tail_len;
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		n--;
	size_t start = n > sizeof(out) - 1 ? n - (sizeof(out) - 1) : 0;
	/* start at a line boundary if one is near */
	for (size_t i = start; i < n && i < start + 120; i++)
		if (s[i] == '\n') {
			start = i + 1;
			break;
		}
	size_t k = 0;
	for (size_t i = start; i < n && k < sizeof(out) - 1; i++)
		out[k++] = s[i] == '\n' ? ';' : s[i] == '\t' ? ' ' : s[i];
	out[k] = 0;
	D.tail_len = 0;
	D.tail[0] = 0;
	if (D.log)
		funlockfile(D.log);
	return k ? out : "(DPDK logged nothing; VSB_DPDK_DEBUG=1 shows its log)";
}

/* Seconds from the environment variable `name`, else `def` (a malformed value is ignored). */
static double env_seconds(const char *name, double def)
{
	const char *env = getenv(name);
	if (env && *env) {
		char *end;
		double v = strtod(env, &end);
		if (end != env && !*end && v >= 0)
			return v;
	}
	return def;
}

/* ---- cleanup ---- */

static void remove_dir_files(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	char path[PATH_MAX + 256];
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* Hugepage files DPDK names PREFIXmap_N (or PREFIXmap_N with --single-file-segments) in each
 * hugetlbfs mount. */
static void remove_hugepage_files(const char *prefix)
{
	FILE *f = fopen("/proc/mounts", "re");
	if (!f)
		return;
	char line[1024], dev[256], dir[512], type[64];
	size_t pl = strlen(prefix);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%255s %511s %63s", dev, dir, type) != 3 || strcmp(type, "hugetlbfs"))
			continue;
		DIR *d = opendir(dir);
		if (!d)
			continue;
		struct dirent *de;
		char path[PATH_MAX];
		while ((de = readdir(d)))
			if (!strncmp(de->d_name, prefix, pl) && !strncmp(de->d_name + pl, "map_", 4)) {
				snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
				unlink(path);
			}
		closedir(d);
	}
	fclose(f);
}

static void runtime_dir_guess(const char *prefix, char *out, size_t n)
{
	/* as EAL computes it (eal_create_runtime_dir) */
	const char *base = "/var/run";
	if (getuid() != 0) {
		const char *xdg = getenv("XDG_RUNTIME_DIR");
		base = xdg && *xdg ? xdg : "/tmp";
	}
	snprintf(out, n, "%s/dpdk/%s", base, prefix);
}

static int is_virtio_user(const struct io_port *p)
{
	return !strncmp(p->name, "virtio_user", 11);
}

/* A virtio-user port whose vhost-user backend is another process, with the link up: the frames
 * still in its ring are lost if it closes now. The backend stops dequeuing once the driver is
 * gone, so a generator that sent its last frames just before the backend's vCPU stalled lost
 * them (gen to sink at 100 kpps: 83 of 200,000 frames, about 1 ms of traffic, in one of the
 * integration runs of 2026-12-02). */
static int vhost_remote_up(const struct io_port *p)
{
	if (!is_virtio_user(p))
		return 0;
	for (int i = 0; i < MAX_PORTS; i++) /* its backend in this process: nothing left to drain */
		if (D.open[i] && !strncmp(D.open[i]->name, "net_vhost", 9))
			return 0;
	struct rte_eth_link l;
	memset(&l, 0, sizeof(l));
	return rte_eth_link_get_nowait(p->port_id, &l) == 0 && l.link_status == RTE_ETH_LINK_UP;
}

/* A memif whose peer is another process, with the link up: closing it now would tear the rings
 * down under a peer that may still be polling them (peer_gone narrows that window on the polling
 * side; it cannot close it). A virtio-user port likewise (vhost_remote_up). */
static int memif_remote_up(const struct io_port *p)
{
	if (!p->memif_socket[0])
		return vhost_remote_up(p);
	for (int i = 0; i < MAX_PORTS; i++) /* both ends in this process: no one polls at close */
		if (D.open[i] && D.open[i] != p && !strcmp(D.open[i]->memif_socket, p->memif_socket))
			return 0;
	struct rte_eth_link l;
	memset(&l, 0, sizeof(l));
	return rte_eth_link_get_nowait(p->port_id, &l) == 0 && l.link_status == RTE_ETH_LINK_UP;
}

/* The other half of the race peer_gone guards: the side that leaves. This process has stopped
 * polling; before it closes a memif (or a virtio-user port) joined to another process it waits, up to LINGER_S
 * (VSB_DPDK_LINGER seconds), for that peer to leave first. Two engines that both do this never
 * close a memif under a polling peer, unless one polls on for longer than LINGER_S after the other
 * ends (e.g. a --duration far beyond the peer's run). Measured without it: a fwd between two memif
 * servers died of SIGSEGV in rx_burst in 3 of 42 runs, when its clients left during its --idle. */
static void linger_for_peers(void)
{
	if (D.lingered)
		return;
	D.lingered = 1;
	double limit = env_seconds("VSB_DPDK_LINGER", LINGER_S), t0 = monotonic_s();
	for (;;) {
		int waiting = 0;
		for (int i = 0; i < MAX_PORTS && !waiting; i++)
			waiting = D.open[i] && memif_remote_up(D.open[i]);
		if (!waiting || monotonic_s() - t0 >= limit)
			break;
		struct timespec ts = {0, 2 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	if (D.debug)
		fprintf(stderr, "vswbench-engine: dpdk: lingered %.3f s for memif and vhost-user peers to leave\n",
			monotonic_s() - t0);
}

static void port_stop_close(struct io_port *p)
{
	if (p->nres) {
		rte_pktmbuf_free_bulk(p->res, p->nres);
		p->nres = 0;
	}
	if (p->started)
		rte_eth_dev_stop(p->port_id);
	p->started = 0;
	rte_eth_dev_close(p->port_id);
}

/* A memif is never closed: the process's exit frees it. DPDK 22.11's memif cannot be closed
 * safely beside its own interrupt thread, which disconnects it when its peer leaves (frees its
 * regions, then, by an alarm, its control channel), and the peers here leave at about the same
 * time. Closed from this thread, a fwd between two memif servers died of SIGSEGV in
 * memif_free_regions, in its interrupt thread, in 3 of 40 runs with both CPUs loaded (its
 * clients left as it closed); closed from inside that thread (an alarm), in half the runs (its
 * loop still held the sources the close freed); closed after waiting for that thread to finish
 * what it was running (two alarms), in half of them too (rte_intr_fd_get on a freed source, the
 * listener the close removed). Exiting takes the rings and sockets down at once, and the peer's
 * side sees its socket close as a peer leaving. What the close did and exiting does not: a
 * server's socket file (socket-abstract=no) is unlinked here. */
static void close_port(struct io_port *p)
{
	if (!p->memif_socket[0]) {
		port_stop_close(p);
		return;
	}
	D.memif_left = 1;
	if (p->memif_socket_file)
		unlink(p->memif_socket);
}

static void dpdk_atexit(void)
{
	if (D.ok) {
		linger_for_peers();
		for (int i = 0; i < MAX_PORTS; i++)
			if (D.open[i]) {
				close_port(D.open[i]);
				free(D.open[i]);
				D.open[i] = NULL;
			}
		if (D.memif_left)
			goto files;   /* EAL's own cleanup would close the memif (close_port) */
		/* ports never opened (setup failed half-way) still hold their vdev: close them too */
		uint16_t pid;
		RTE_ETH_FOREACH_DEV(pid)
			rte_eth_dev_close(pid);
		if (D.pool) {
			rte_mempool_free(D.pool);
			D.pool = NULL;
		}
		rte_eal_cleanup();
		D.ok = 0;
	}
files:;
	/* only ever our own prefix's directory */
	const char *slash = strrchr(D.rundir, '/');
	if (D.prefix[0] && !strncmp(D.prefix, "vsb", 3) && slash && !strcmp(slash + 1, D.prefix))
		remove_dir_files(D.rundir);
	if (D.prefix[0] && !strncmp(D.prefix, "vsb", 3))
		remove_hugepage_files(D.prefix);
	if (D.log && !D.memif_left) { /* the interrupt thread may still log */
		rte_openlog_stream(NULL);
		fclose(D.log);
		D.log = NULL;
	}
}

/* ---- EAL ---- */

static unsigned hugepages_free_mb(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	if (!f)
		return 0;
	char line[256];
	unsigned long pages = 0, kb = 0;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "HugePages_Free: %lu", &pages);
		sscanf(line, "Hugepagesize: %lu kB", &kb);
	}
	fclose(f);
	if (!pages || !kb)
		return 0;
	f = fopen("/proc/mounts", "re");
	if (!f)
		return 0;
	int mounted = 0;
	char dev[256], dir[512], type[64];
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%255s %511s %63s", dev, dir, type) == 3 && !strcmp(type, "hugetlbfs"))
			mounted = 1;
	fclose(f);
	return mounted ? (unsigned)(pages * kb / 1024) : 0;
}

static int eal_setup(const struct opts *o, unsigned ring, struct vsb_error *e)
{
	char msg[512];
	D.tried = 1;
	D.debug = getenv("VSB_DPDK_DEBUG") && strcmp(getenv("VSB_DPDK_DEBUG"), "0");
	D.busy_opt = o->busy_poll;
	D.nexpected = o->nports;
	/* VSB_DPDK_TX_RETRY_US > 0: a process with one port offers what a full TX ring refused again, every
	 * 1 us for up to that long, before it drops (with two ports, loop or fwd, the ring may wait for
	 * this very thread to receive: never). Default 0, as testpmd: drop at once; measured here,
	 * retrying slowed the vhost-user peer's dequeue. */
	double retry_us = 0;
	const char *rt = getenv("VSB_DPDK_TX_RETRY_US");
	if (rt && *rt) {
		char *end;
		double v = strtod(rt, &end);
		if (end != rt && !*end && v >= 0 && v <= 1e6)
			retry_us = v;
	}
	D.retry_ticks = o->nports == 1 ? (uint64_t)(retry_us * tsc_hz() / 1e6) : 0;
	D.retry_gap = (uint64_t)(tsc_hz() / 1e6);
	char prefix[DPDK_PREFIX_MAX + 1];
	if (dpdk_prefix(getenv("VSB_DPDK_PREFIX"), (long)getpid(), prefix, sizeof(prefix), msg, sizeof(msg)))
		return vsb_fail(e, VSB_ERR_USAGE, "%s", msg);
	char extra[1024];
	const char *env = getenv("VSB_DPDK_EAL_ARGS");
	snprintf(extra, sizeof(extra), "%s %s", env ? env : "", o->eal_args ? o->eal_args : "");

	char cpulist[256] = "";
	if (o->cpu < 0) {
		cpu_set_t set;
		unsigned char bits[CPU_SETSIZE / 8];
		memset(bits, 0, sizeof(bits));
		if (sched_getaffinity(0, sizeof(set), &set) == 0)
			for (unsigned c = 0; c < CPU_SETSIZE; c++)
				if (CPU_ISSET(c, &set))
					bits[c / 8] |= (unsigned char)(1u << (c % 8));
		if (dpdk_cpulist(bits, CPU_SETSIZE, cpulist, sizeof(cpulist)))
			snprintf(cpulist, sizeof(cpulist), "0");
	}
	/* the memory of the pool dpdk_open will create, for the ring it will open the ports with: a
	 * pool sized for 8192-frame rings, 288 MB, cost every vhost-user backend that maps the engine's
	 * memory seconds of zeroing it (testpmd's vhost-events populating the mapping), where 1024-frame
	 * rings need 83 MB */
	unsigned mem = dpdk_mem_mb(dpdk_pool_size(o->nports, ring ? ring : RING_DEFAULT));
	struct dpdk_eal_cfg cfg = {
		.prefix = prefix, .cpu = o->cpu, .cpulist = cpulist, .vdevs = o->ports, .nvdev = o->nports,
		.mem_mb = mem, .hugepages = hugepages_free_mb() >= mem, .extra = extra, .debug = D.debug,
	};
	static struct dpdk_argv a;
	if (dpdk_eal_argv(&cfg, &a, msg, sizeof(msg)))
		return vsb_fail(e, VSB_ERR_USAGE, "%s", msg);
	snprintf(D.prefix, sizeof(D.prefix), "%s", a.prefix);
	runtime_dir_guess(D.prefix, D.rundir, sizeof(D.rundir));
	dpdk_argv_str(&a, D.eal_args, sizeof(D.eal_args));
	if (D.debug)
		fprintf(stderr, "vswbench-engine: dpdk: EAL args: %s\n", D.eal_args);

	static cookie_io_functions_t fns = {.write = log_write};
	D.log = fopencookie(NULL, "w", fns);
	if (D.log) {
		setvbuf(D.log, NULL, _IOLBF, 0);
		rte_openlog_stream(D.log);
	}
	if (!D.atexit_set) {
		atexit(dpdk_atexit); /* also removes what a failed init left behind */
		D.atexit_set = 1;
	}
	/* rte_eal_init permutes argv: give it a copy of the pointers */
	static char *argv[DPDK_MAX_ARGS + 1];
	memcpy(argv, a.argv, sizeof(argv));
	/* EAL prints its usage text with printf on a bad argument: keep stdout for JSON records */
	fflush(stdout);
	int saved = dup(STDOUT_FILENO);
	int quiet = D.debug ? dup(STDERR_FILENO) : open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (saved >= 0 && quiet >= 0)
		dup2(quiet, STDOUT_FILENO);
	int rc = rte_eal_init(a.argc, argv);
	fflush(stdout);
	if (saved >= 0 && quiet >= 0)
		dup2(saved, STDOUT_FILENO);
	if (saved >= 0)
		close(saved);
	if (quiet >= 0)
		close(quiet);
	if (rc < 0) {
		int err = rte_errno;
		/* EINVAL: the argument list (--eal-args) was refused */
		return vsb_fail(e, err == EINVAL ? VSB_ERR_USAGE : err == EALREADY ? VSB_ERR_UNSUPPORTED
										: VSB_ERR_SOCKET,
				"DPDK EAL init failed (%s): %s [EAL args: %s]", rte_strerror(err), log_tail(),
				D.eal_args);
	}
	D.ok = 1;
	const char *rd = rte_eal_get_runtime_dir();
	if (rd && *rd)
		snprintf(D.rundir, sizeof(D.rundir), "%s", rd);
	return 0;
}

static int find_port(const char *vdev, uint16_t *pid, char *name, size_t name_len, struct vsb_error *e)
{
	char msg[512];
	if (dpdk_vdev_check(vdev, name, name_len, msg, sizeof(msg)))
		return vsb_fail(e, VSB_ERR_USAGE, "%s", msg);
	if (rte_eth_dev_get_port_by_name(name, pid) != 0)
		return vsb_fail(e, VSB_ERR_IFACE, "--port %s: DPDK did not create the port: %s", vdev,
				log_tail());
	return 0;
}

static int dpdk_port_info(const struct opts *o, unsigned ring, int i, struct iface_info *info,
			  struct vsb_error *e)
{
	if (!D.tried && eal_setup(o, ring, e))
		return e->code;
	if (!D.ok)
		return vsb_fail(e, VSB_ERR_SOCKET, "DPDK EAL is not initialised");
	uint16_t pid;
	char name[DPDK_NAME_MAX + 1];
	if (find_port(o->ports[i], &pid, name, sizeof(name), e))
		return e->code;
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "%.15s", name);
	struct rte_ether_addr mac;
	if (rte_eth_macaddr_get(pid, &mac) == 0)
		memcpy(info->mac, mac.addr_bytes, 6);
	info->up = 1;
	info->mtu = 1500;
	return 0;
}

/* ---- backend ---- */

static int dpdk_available(struct vsb_error *e)
{
	struct stat st;
	if (stat(RTE_EAL_PMD_PATH, &st) != 0 || !S_ISDIR(st.st_mode))
		return vsb_fail(e, VSB_ERR_UNSUPPORTED, "DPDK drivers missing (%s): install dpdk-dev "
				"(Debian ships the PMDs in it)", RTE_EAL_PMD_PATH);
	return 0;
}

static const char *const pmds[][2] = {
	{"memif", "librte_net_memif.so"}, {"vhost", "librte_net_vhost.so"},
	{"virtio_user", "librte_net_virtio.so"}, {"af_packet", "librte_net_af_packet.so"},
	{"af_xdp", "librte_net_af_xdp.so"}, {"ring", "librte_net_ring.so"}, {"null", "librte_net_null.so"},
};

static void dpdk_probe_extra(const struct io_ops *self, struct jout *j)
{
	jout_str(j, "dpdk_version", rte_version());
	jout_key_arr(j, "vdev_drivers");
	for (unsigned i = 0; i < sizeof(pmds) / sizeof(pmds[0]); i++) {
		char path[PATH_MAX];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", RTE_EAL_PMD_PATH, pmds[i][1]);
		if (stat(path, &st) == 0)
			jout_str(j, NULL, pmds[i][0]);
	}
	jout_end_arr(j);
	unsigned huge = hugepages_free_mb();
	jout_u64(j, "hugepages_free_mb", huge);
	jout_str(j, "memory", huge >= DPDK_MEM_MIN_MB ? "hugepages (--huge-unlink=always)"
						     : "no hugepages: --no-huge -m N (memfd)");
}

/* A memif's server-to-client ring starts with no free slot: the client hands them out as its
 * receive polls (DPDK 22.11: the refill at the end of eth_memif_rx). A frame the server sends
 * before the client's first poll is refused. The loop sends, then polls: a fwd between its two
 * memifs that forwarded the first frame in between lost it (fwd_dropped 1, in 2 of 4 runs with
 * rsize=14, 1 of 60 with the default ring and both CPUs loaded, once in CI). So once the links
 * are up, every memif polls its receive ring for no frame: the refill alone. A process told not to
 * wait for its links (VSB_DPDK_LINK_WAIT=0) has no link to prime yet: its loop's first poll does it. */
static void prime_memif_rx(void)
{
	struct rte_mbuf *none[1];
	for (int i = 0; i < MAX_PORTS; i++)
		if (D.open[i] && D.open[i]->memif_socket[0])
			rte_eth_rx_burst(D.open[i]->port_id, 0, none, 0);
}

static int wait_links(struct vsb_error *e)
{
	double limit = env_seconds("VSB_DPDK_LINK_WAIT", LINK_WAIT_S);
	if (limit == 0) /* do not wait: a process that must report ready before its peers start */
		return 0;
	double t0 = monotonic_s();
	for (;;) {
		int down = -1;
		for (int i = 0; i < MAX_PORTS && down < 0; i++) {
			struct io_port *p = D.open[i];
			if (!p)
				continue;
			struct rte_eth_link l;
			memset(&l, 0, sizeof(l));
			if (rte_eth_link_get_nowait(p->port_id, &l) == 0 && l.link_status != RTE_ETH_LINK_UP)
				down = i;
		}
		if (down < 0 || vsb_stop) { /* a signal: the run ends at once with its final record */
			prime_memif_rx();
			if (D.debug)
				fprintf(stderr, "vswbench-engine: dpdk: links up after %.3f s (t=%.6f)\n",
					monotonic_s() - t0, monotonic_s());
			return 0;
		}
		if (monotonic_s() - t0 > limit)
			return vsb_fail(e, VSB_ERR_IFACE, "--port %s: link still down after %g s: no peer (a memif "
					"needs its server or client on the same socket; a vhost-user port its "
					"virtio-user; start the peer, or set VSB_DPDK_LINK_WAIT=SECONDS)",
					D.open[down]->name, limit);
		struct timespec ts = {0, 5 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

static int dpdk_open(const struct io_config *cfg, struct io_port **out, struct vsb_error *e)
{
	if (!D.ok)
		return vsb_fail(e, VSB_ERR_SOCKET, "DPDK EAL is not initialised");
	struct io_port *p = calloc(1, sizeof(*p));
	if (!p)
		return vsb_fail(e, VSB_ERR_NOMEM, "out of memory");
	if (find_port(cfg->ifname, &p->port_id, p->name, sizeof(p->name), e))
		goto fail;
	p->busy_poll = D.busy_opt >= 0 ? D.busy_opt : 1; /* poll mode unless told --no-busy-poll */
	if (!strncmp(p->name, "net_memif", 9) &&
	    !dpdk_vdev_arg(cfg->ifname, "socket", p->memif_socket, sizeof(p->memif_socket)))
		snprintf(p->memif_socket, sizeof(p->memif_socket), "%s", MEMIF_DEFAULT_SOCKET);
	if (p->memif_socket[0]) { /* DPDK 22.11's defaults: role=server, socket-abstract=yes */
		char role[16] = "", abstract[8] = "";
		dpdk_vdev_arg(cfg->ifname, "role", role, sizeof(role));
		dpdk_vdev_arg(cfg->ifname, "socket-abstract", abstract, sizeof(abstract));
		p->memif_client = !strcmp(role, "client");
		p->memif_socket_file = !p->memif_client && !strcmp(abstract, "no");
	}
	unsigned ring = cfg->ring_size ? cfg->ring_size : RING_DEFAULT;
	if (ring > 32768)
		ring = 32768;
	if (!D.pool) {
		unsigned n = dpdk_pool_size((unsigned)D.nexpected, ring);
		D.pool = rte_pktmbuf_pool_create("vsb_mbufs", n, MBUF_CACHE, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
						 (int)rte_socket_id());
		if (!D.pool) {
			vsb_fail(e, VSB_ERR_NOMEM, "DPDK: cannot create a pool of %u mbufs (%s): %s; give more "
				 "memory with --eal-args \"-m MB --no-huge\"", n, rte_strerror(rte_errno), log_tail());
			goto fail;
		}
	}
	struct rte_eth_dev_info info;
	int rc = rte_eth_dev_info_get(p->port_id, &info);
	if (rc) {
		vsb_fail(e, VSB_ERR_SOCKET, "--port %s: no device info (%s)", p->name, rte_strerror(-rc));
		goto fail;
	}
	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure(p->port_id, 1, 1, &conf);
	if (rc) {
		vsb_fail(e, VSB_ERR_SOCKET, "--port %s: configure failed (%s): %s", p->name, rte_strerror(-rc),
			 log_tail());
		goto fail;
	}
	p->nb_rxd = p->nb_txd = (uint16_t)ring;
	rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &p->nb_rxd, &p->nb_txd);
	int sock = rte_eth_dev_socket_id(p->port_id);
	if (sock < 0)
		sock = (int)rte_socket_id();
	rc = rte_eth_rx_queue_setup(p->port_id, 0, p->nb_rxd, (unsigned)sock, NULL, D.pool);
	if (!rc)
		rc = rte_eth_tx_queue_setup(p->port_id, 0, p->nb_txd, (unsigned)sock, NULL);
	if (rc) {
		vsb_fail(e, VSB_ERR_SOCKET, "--port %s: queue setup failed (%s): %s", p->name,
			 rte_strerror(-rc), log_tail());
		goto fail;
	}
	rc = rte_eth_dev_start(p->port_id);
	if (rc) {
		vsb_fail(e, VSB_ERR_SOCKET, "--port %s: start failed (%s): %s%s", p->name, rte_strerror(-rc),
			 log_tail(), p->memif_client ? " (a memif client needs its server running on that socket "
			 "first)" : "");
		goto fail;
	}
	p->started = 1;
	rte_eth_promiscuous_enable(p->port_id); /* not supported by every vdev: ignored */
	rte_eth_stats_reset(p->port_id);
	for (int i = 0; i < MAX_PORTS; i++)
		if (!D.open[i]) {
			D.open[i] = p;
			break;
		}
	D.nopen++;
	*out = p;
	if (D.nopen >= D.nexpected && wait_links(e))
		return e->code; /* p is registered: teardown closes it */
	return 0;
fail:
	free(p);
	return e->code;
}

static void dpdk_close(struct io_port *p)
{
	if (!p)
		return;
	linger_for_peers();
	close_port(p);
	for (int i = 0; i < MAX_PORTS; i++)
		if (D.open[i] == p)
			D.open[i] = NULL;
	D.nopen--;
	free(p);
}

static unsigned dpdk_tx_get(struct io_port *p, struct io_buf *b, unsigned n)
{
	if (unlikely(p->nres)) { /* reserved earlier and never put */
		rte_pktmbuf_free_bulk(p->res, p->nres);
		p->nres = 0;
	}
	if (unlikely(rte_pktmbuf_alloc_bulk(D.pool, p->res, n) != 0)) {
		p->tx_ring_empty++;
		return 0;
	}
	/* alloc_bulk reset each mbuf: data_off is the headroom, the room is the pool's */
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = p->res[i];
		b[i].data = (uint8_t *)m->buf_addr + RTE_PKTMBUF_HEADROOM;
		b[i].cap = TX_ROOM;
		b[i].handle = (uintptr_t)m;
	}
	p->nres = n;
	return n;
}

/* Submit n built mbufs: a burst, the refused rest offered again for up to retry_ticks (one-port
 * processes), then freed and counted. Returns frames accepted. */
static inline unsigned tx_submit(struct io_port *p, struct rte_mbuf **m, unsigned n)
{
	if (unlikely(p->gone)) { /* its peer left: no ring to write to (see peer_gone) */
		rte_pktmbuf_free_bulk(m, n);
		p->tx_errors += n;
		return 0;
	}
	unsigned sent = rte_eth_tx_burst(p->port_id, 0, m, (uint16_t)n);
	if (unlikely(sent < n) && D.retry_ticks) {
		/* ring full: the peer frees slots at its pace; offer the rest again for a moment rather
		 * than drop frames that were built already */
		uint64_t now = tsc_now(), deadline = now + D.retry_ticks;
		do {
			/* 1 us between attempts: polling the ring flat out would keep pulling its cache lines
			 * away from the peer that is draining it */
			uint64_t next = now + D.retry_gap;
			while ((now = tsc_now()) < next)
				cpu_relax();
			sent += rte_eth_tx_burst(p->port_id, 0, m + sent, (uint16_t)(n - sent));
		} while (sent < n && now < deadline && !vsb_stop);
	}
	if (unlikely(sent < n)) {
		rte_pktmbuf_free_bulk(m + sent, n - sent);
		p->tx_errors += n - sent;
	}
	return sent;
}

static unsigned dpdk_tx_put(struct io_port *p, struct io_buf *b, unsigned n)
{
	struct rte_mbuf **m = p->res;
	if (unlikely(n > p->nres))
		n = p->nres;
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *x = (struct rte_mbuf *)(uintptr_t)b[i].handle;
		x->data_len = (uint16_t)b[i].len;
		x->pkt_len = b[i].len;
		m[i] = x;
	}
	if (unlikely(n < p->nres)) /* reserved but not submitted */
		rte_pktmbuf_free_bulk(m + n, p->nres - n);
	p->nres = 0;
	return n ? tx_submit(p, m, n) : 0;
}

static unsigned dpdk_rx_get(struct io_port *p, struct io_buf *b, unsigned n, int timeout_us)
{
	struct rte_mbuf *m[IO_MAX_BATCH];
	if (unlikely(p->gone))
		return 0;
	unsigned got = rte_eth_rx_burst(p->port_id, 0, m, (uint16_t)n);
	if (!got && peer_gone(p))
		return 0;
	if (!got && timeout_us > 0) {
		static double ticks_per_us;
		if (!ticks_per_us)
			ticks_per_us = tsc_hz() / 1e6;
		uint64_t end = tsc_now() + (uint64_t)(timeout_us * ticks_per_us);
		while (!vsb_stop) {
			if (p->busy_poll) {
				cpu_relax();
			} else {
				struct timespec ts = {0, 20 * 1000};
				nanosleep(&ts, NULL);
			}
			if (peer_gone(p))
				return 0;
			got = rte_eth_rx_burst(p->port_id, 0, m, (uint16_t)n);
			if (got || tsc_now() >= end)
				break;
		}
	}
	for (unsigned i = 0; i < got; i++) {
		struct rte_mbuf *x = m[i];
		if (unlikely(x->nb_segs > 1))
			rte_pktmbuf_linearize(x); /* fails only if it does not fit: then the parser sees a part */
		b[i].data = rte_pktmbuf_mtod(x, uint8_t *);
		b[i].len = x->data_len;
		b[i].cap = x->data_len;
		b[i].handle = (uintptr_t)x;
		b[i].priv = NULL;
	}
	return got;
}

static void dpdk_rx_put(struct io_port *p, struct io_buf *b, unsigned n)
{
	struct rte_mbuf *m[IO_MAX_BATCH];
	for (unsigned i = 0; i < n; i++)
		m[i] = (struct rte_mbuf *)(uintptr_t)b[i].handle;
	if (n)
		rte_pktmbuf_free_bulk(m, n);
}

static void dpdk_stats(struct io_port *p, struct io_port_stats *s)
{
	memset(s, 0, sizeof(*s));
	struct rte_eth_stats st;
	if (rte_eth_stats_get(p->port_id, &st) == 0) {
		s->rx_dropped = st.imissed + st.rx_nombuf;
		s->rx_ring_full = st.imissed;
	}
	s->tx_errors = p->tx_errors;
	s->tx_ring_empty = p->tx_ring_empty;
}

const struct io_ops io_dpdk_ops = {
	.name = "dpdk",
	.layer = IO_L2,
	/* ports keep the default MTU (1500) and mbufs of 2048 B without scatter */
	.max_frame = FRAME_STD_MAX,
	.available = dpdk_available,
	.open = dpdk_open,
	.close = dpdk_close,
	.tx_get = dpdk_tx_get,
	.tx_put = dpdk_tx_put,
	.rx_get = dpdk_rx_get,
	.rx_put = dpdk_rx_put,
	.stats = dpdk_stats,
	.tx_flush = NULL,
	.port_info = dpdk_port_info,
	.probe_extra = dpdk_probe_extra,
};
