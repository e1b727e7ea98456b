/* vswbench xdp switch: a native XDP program on a switch-side veth end that redirects every frame
 * to the path's egress interface (ndo_xdp_xmit of that veth, i.e. into its peer, the host end:
 * which needs GRO on or an XDP program of its own, else the frames are dropped).
 * One object per egress port: built with -DOUT_IFINDEX=N (ifindex in the switch namespace),
 * attached with `ip link set dev IF xdpdrv obj FILE sec xdp`. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#ifndef OUT_IFINDEX
#error "build with -DOUT_IFINDEX=<egress ifindex>"
#endif

SEC("xdp")
int vsb_xdp_redirect(struct xdp_md *ctx)
{
	return bpf_redirect(OUT_IFINDEX, 0);
}

char _license[] SEC("license") = "GPL";
