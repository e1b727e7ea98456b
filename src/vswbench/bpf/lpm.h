/* vswbench function l3 for the BPF switches (switches/functions.py, bpfmap.py): with -DVSB_LPM the
 * program looks the destination IPv4 address up in an LPM trie of the routing table's prefixes and
 * drops frames that match none (or a prefix whose value is 0, a blackhole); vswbench fills the map
 * through the bpf() syscall after the program is attached. Non-IPv4 frames pass as before. */
#ifndef VSB_LPM_H
#define VSB_LPM_H
#include <linux/if_ether.h>
#include <linux/ip.h>

#define VSB_LPM_MAX 70000

struct vsb_lpm_key {
	__u32 prefixlen;
	__u32 addr; /* network byte order */
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct vsb_lpm_key);
	__type(value, __u32);
	__uint(max_entries, VSB_LPM_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} vsb_lpm SEC(".maps");

/* 1: forward, 0: drop (map values: 0 a blackhole, anything else forwards) */
static __always_inline int vsb_lpm_pass(void *data, void *data_end)
{
	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > data_end)
		return 0;
	if (eth->h_proto != __builtin_bswap16(ETH_P_IP))
		return 1;
	struct iphdr *iph = (void *)(eth + 1);
	if ((void *)(iph + 1) > data_end)
		return 0;
	struct vsb_lpm_key key = { 32, iph->daddr };
	__u32 *v = bpf_map_lookup_elem(&vsb_lpm, &key);
	return v && *v;
}
#endif
