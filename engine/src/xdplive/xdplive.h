/* xdplive backend: the kernel checks and plumbing (xdplive_sys.c), the probe's live-frame test
 * (xdplive_probe.c). */
#ifndef VSB_XDPLIVE_H
#define VSB_XDPLIVE_H
#include <stddef.h>
#include <stdint.h>

struct io_ops;
struct jout;

/* 0 if this kernel runs XDP programs with live frames here (Linux >= 5.18, root, a real one-frame
 * BPF_PROG_RUN on lo returning XDP_DROP); else -1 with the reason and the fix in why. */
int xdplive_check_kernel(char *why, size_t n);
/* probe: a tiny live-frame run over a veth pair in a throwaway namespace, sink counting. */
void xdplive_probe_extra(const struct io_ops *self, struct jout *j);
/* Counters of ifname in the caller's network namespace (/proc/net/dev); 0 or -1. */
struct xdplive_ifc { uint64_t rx_dropped, tx_packets, tx_dropped; };
int xdplive_if_counters(const char *ifname, struct xdplive_ifc *c);

/* Keep prog_fd in the kernel's XDP dispatcher for as long as the process lives (xdplive_sys.c):
 * 0 with *link and *ns (fds to close at the end) set, or -1 with the reason. */
int xdplive_pin(int prog_fd, int *link, int *ns, char *why, size_t n);

#endif
