/* Kernel feature probes for the `probe` subcommand: AF_XDP sockets and native XDP on veth. */
#ifndef VSB_PROBE_XDP_H
#define VSB_PROBE_XDP_H
#include <stddef.h>

/* 1 if socket(AF_XDP) works here; else 0 with the reason (and the fix) in reason[n]. */
int probe_afxdp_socket(char *reason, size_t n);
/* 1 if a native-mode (driver) XDP program attaches to a veth; else 0 with the reason. Runs in a
 * forked child inside a fresh anonymous network namespace, so nothing is left behind. */
int probe_native_xdp_veth(char *reason, size_t n);

#ifdef VSB_HAVE_AFXDP
/* An experiment: 1 if it worked, else 0 with the reason in msg[n]. `ip` is iproute2's path. */
typedef int (*probe_fn)(const char *ip, char *msg, size_t n);
/* Run fn in a forked child inside a fresh anonymous network namespace (gone when it exits), with a
 * 5 s limit. 1 if fn said so, else 0 with the reason. */
int probe_in_netns(probe_fn fn, char *reason, size_t n);
/* iproute2's ip (/usr/sbin, /sbin, ...), or NULL. */
const char *probe_ip_path(void);
/* `ip ARGS...` (argv[0] = "ip"): 0 on success, else -1 with its stderr in msg. */
int probe_run_ip(const char *ip, char *const argv[], char *msg, size_t n);
#endif

#endif
