/* tc (clsact, direct-action) program for the loss tests. Built in one of two variants:
 *   -DDROP_SPORT=P                    drop IPv4/UDP frames with source port P
 *   -DDROP_SEQ_MOD=M -DDROP_SEQ_REM=R drop engine frames whose sequence number % M == R
 * Every other frame continues to the next filter (TC_ACT_UNSPEC). The kernel counts the drops in
 * the clsact qdisc's statistics. Headers are read with bpf_skb_load_bytes, not direct packet
 * access: frames sent from an AF_PACKET TX ring arrive with only the Ethernet header linear. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/* engine signature at the start of the UDP payload: "VSB", epoch u8, stream u16, seq u32 (BE) */
struct vsb_sig {
	__u8 magic[3];
	__u8 epoch;
	__be16 stream;
	__be32 seq;
} __attribute__((packed));

#define L4_OFF (sizeof(struct ethhdr) + sizeof(struct iphdr))

SEC("tc")
int vsb_drop(struct __sk_buff *skb)
{
	struct ethhdr eth;
	struct iphdr ip;
	struct udphdr udp;
	if (bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)) || eth.h_proto != bpf_htons(ETH_P_IP))
		return TC_ACT_UNSPEC;
	if (bpf_skb_load_bytes(skb, sizeof(eth), &ip, sizeof(ip)) || ip.protocol != IPPROTO_UDP ||
	    ip.ihl != 5)
		return TC_ACT_UNSPEC;
	if (bpf_skb_load_bytes(skb, L4_OFF, &udp, sizeof(udp)))
		return TC_ACT_UNSPEC;
#ifdef DROP_SPORT
	return udp.source == bpf_htons(DROP_SPORT) ? TC_ACT_SHOT : TC_ACT_UNSPEC;
#else
	struct vsb_sig sig;
	if (bpf_skb_load_bytes(skb, L4_OFF + sizeof(udp), &sig, sizeof(sig)))
		return TC_ACT_UNSPEC;
	if (sig.magic[0] != 'V' || sig.magic[1] != 'S' || sig.magic[2] != 'B')
		return TC_ACT_UNSPEC;
	return bpf_ntohl(sig.seq) % DROP_SEQ_MOD == DROP_SEQ_REM ? TC_ACT_SHOT : TC_ACT_UNSPEC;
#endif
}

char _license[] SEC("license") = "GPL";
