/* vswbench xdp switch: a native XDP program on a switch-side veth end that redirects every frame
 * to the path's egress interface (ndo_xdp_xmit of that veth, i.e. into its peer, the host end:
 * which needs GRO on or an XDP program of its own, else the frames are dropped).
 * One object per egress port: built with -DOUT_IFINDEX=N (ifindex in the switch namespace),
 * attached with `ip link set dev IF xdpdrv obj FILE sec xdp`. With -DVSB_LPM (function l3) it
 * routes by longest-prefix match first (lpm.h). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#ifdef VSB_LPM
#include "lpm.h"
#endif

#ifndef OUT_IFINDEX
#error "build with -DOUT_IFINDEX=<egress ifindex>"
#endif

SEC("xdp")
int vsb_xdp_redirect(struct xdp_md *ctx)
{
#ifdef VSB_LPM
	if (!vsb_lpm_pass((void *)(long)ctx->data, (void *)(long)ctx->data_end))
		return XDP_DROP;
#endif
	return bpf_redirect(OUT_IFINDEX, 0);
}

char _license[] SEC("license") = "GPL";
