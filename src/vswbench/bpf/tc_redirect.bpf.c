/* vswbench tc-bpf switch: a cls_bpf program (clsact ingress, direct-action) on a switch-side veth
 * end that sends every frame out of the path's egress interface. One object per egress port:
 * built with -DOUT_IFINDEX=N (the egress ifindex in the switch namespace), so the program needs no
 * map and no loader beyond `tc filter add ... bpf da obj FILE sec tc`. With -DVSB_LPM (function
 * l3) it routes by longest-prefix match first (lpm.h). */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#ifdef VSB_LPM
#include "lpm.h"
#endif

#ifndef OUT_IFINDEX
#error "build with -DOUT_IFINDEX=<egress ifindex>"
#endif

SEC("tc")
int vsb_tc_redirect(struct __sk_buff *skb)
{
#ifdef VSB_LPM
	if (!vsb_lpm_pass((void *)(long)skb->data, (void *)(long)skb->data_end))
		return TC_ACT_SHOT;
#endif
	return bpf_redirect(OUT_IFINDEX, 0); /* 0: to the egress of OUT_IFINDEX */
}

char _license[] SEC("license") = "GPL";
