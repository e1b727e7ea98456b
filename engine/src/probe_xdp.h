/* Kernel feature probes for the `probe` subcommand: AF_XDP sockets and native XDP on veth. */
#ifndef VSB_PROBE_XDP_H
#define VSB_PROBE_XDP_H
#include <stddef.h>

/* 1 if socket(AF_XDP) works here; else 0 with the reason (and the fix) in reason[n]. */
int probe_afxdp_socket(char *reason, size_t n);
/* 1 if a native-mode (driver) XDP program attaches to a veth; else 0 with the reason. Runs in a
 * forked child inside a fresh anonymous network namespace, so nothing is left behind. */
int probe_native_xdp_veth(char *reason, size_t n);

#endif
