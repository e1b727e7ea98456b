/* The dpdk backend's pure logic (no DPDK headers, always compiled, unit-tested by
 * tests/test_dpdk_args.c): vdev string checks, the EAL file prefix, the EAL argument list.
 * The backend itself (EAL, ports, mbufs) is io_dpdk.c. */
#ifndef VSB_DPDK_EAL_H
#define VSB_DPDK_EAL_H
#include <stddef.h>

#define DPDK_VDEV_MAX 255      /* longest --port vdev string */
#define DPDK_NAME_MAX 63       /* RTE_DEV_NAME_MAX_LEN - 1 */
#define DPDK_PREFIX_MAX 48
#define DPDK_MAX_ARGS 96
#define DPDK_ARGBUF 4096
#define DPDK_MEM_MIN_MB 64     /* least -m when the engine chooses the memory size */

/* Check a vdev string "DRIVER[N][,key=value...]" (e.g. "net_memif0,role=client,socket=/run/vsb1/m.sock").
 * On success copies the device name (the part before the first comma) into name and returns 0;
 * else -1 with msg naming the problem and the fix. */
int dpdk_vdev_check(const char *vdev, char *name, size_t name_len, char *msg, size_t msg_len);

/* The value of key in a vdev string (copied into out), 1 found, 0 not. */
int dpdk_vdev_arg(const char *vdev, const char *key, char *out, size_t out_len);

/* EAL --file-prefix: env (VSB_DPDK_PREFIX) if set and non-empty, else "vsbdpdk<pid>". A prefix must
 * start with "vsb" and hold only [A-Za-z0-9_.-] (at most DPDK_PREFIX_MAX chars). 0 ok, -1 msg. */
int dpdk_prefix(const char *env, long pid, char *out, size_t out_len, char *msg, size_t msg_len);

/* Format a CPU set (bitmap of ncpu bits) as an EAL cpu list "0-3,6". 0 ok, -1 empty or no room. */
int dpdk_cpulist(const unsigned char *bits, unsigned ncpu, char *out, size_t out_len);

struct dpdk_eal_cfg {
	const char *prefix;         /* from dpdk_prefix() */
	int cpu;                    /* --cpu N, or -1: lcore 0 floats over `cpulist` */
	const char *cpulist;        /* the process's allowed CPUs (dpdk_cpulist), used when cpu < 0 */
	const char *const *vdevs;   /* one --vdev per port */
	int nvdev;
	unsigned mem_mb;            /* -m (with --no-huge) */
	int hugepages;              /* 1: free hugepages and a hugetlbfs mount: use them */
	const char *extra;          /* extra EAL args, split on spaces (env VSB_DPDK_EAL_ARGS, --eal-args) */
	int debug;                  /* 1: log level debug */
};

struct dpdk_argv {
	int argc;
	char *argv[DPDK_MAX_ARGS + 1];
	char prefix[DPDK_PREFIX_MAX + 1]; /* the file prefix in effect (cfg's or --file-prefix in extra) */
	int user_mem;               /* extra args chose the memory mode; the engine added none */
	int hugepages;              /* the engine chose hugepages */
	char buf[DPDK_ARGBUF];
};

/* Build the EAL argv: argv[0], --no-pci, --no-telemetry, --file-prefix, --log-level, --lcores,
 * memory (--no-huge -m N; with cfg->hugepages --huge-unlink=always and dynamic memory; none if extra
 * names a memory option), --vdev per port, then the extra args. Extra args may not set lcores
 * (-l, -c, --lcores, --main-lcore: use --cpu) or vdevs (--vdev: use --port); --file-prefix in extra
 * must follow the prefix rule and replaces cfg->prefix. 0 ok, -1 with msg. */
int dpdk_eal_argv(const struct dpdk_eal_cfg *cfg, struct dpdk_argv *out, char *msg, size_t msg_len);

/* The args as one line for messages ("--no-pci --file-prefix ..."), without argv[0]. */
void dpdk_argv_str(const struct dpdk_argv *a, char *out, size_t out_len);

/* Memory size in MB for pool_mbufs mbufs (with EAL's own overhead), at least DPDK_MEM_MIN_MB. */
unsigned dpdk_mem_mb(unsigned pool_mbufs);

/* mbufs in the pool for nports ports of `ring` descriptors each (RX and TX): 2^k - 1. */
unsigned dpdk_pool_size(unsigned nports, unsigned ring);

#endif
