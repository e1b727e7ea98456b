/* xdplive BPF programs: vsb_gen (run by BPF_PROG_RUN with live frames: stamps each frame, XDP_TX)
 * and vsb_sink (attached to a receive port: accounts engine frames in maps, XDP_DROP). Layouts and
 * the per-frame accounting are in xdplive_acct.h. Built with clang -target bpf and embedded in
 * the engine (io_xdplive.c). */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "xdplive_acct.h"

char _license[] SEC("license") = "GPL";

/* ---- generator ---- */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vsb_gen_cfg);
} vsb_gcfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct vsb_gen_state);
} vsb_gstate SEC(".maps");

#define OFF_IP 14
#define OFF_UDP 34
#define OFF_SIG 42

SEC("xdp")
int vsb_gen(struct xdp_md *ctx)
{
	__u32 k = 0;
	struct vsb_gen_cfg *c = bpf_map_lookup_elem(&vsb_gcfg, &k);
	struct vsb_gen_state *st = bpf_map_lookup_elem(&vsb_gstate, &k);
	if (!c || !st)
		return XDP_ABORTED;
	__u64 now = bpf_ktime_get_ns();
	if (!vsb_gen_due(c, st, now)) {
		st->idle++;
		return XDP_DROP; /* the page goes straight back to the run's pool */
	}
	__u32 si = st->sidx;
	if (si >= VSB_KMAX_SIZES)
		si = 0;
	__u32 wire = c->wire[si];
	/* live frames keep their length from the last run of this page: grow or shrink to size */
	int cur = (int)(ctx->data_end - ctx->data);
	if (cur != (int)wire && bpf_xdp_adjust_tail(ctx, (int)wire - cur)) {
		st->errors++;
		return XDP_DROP;
	}
	__u8 *p = (void *)(long)ctx->data;
	if (p + VSB_HDR_LEN > (__u8 *)(long)ctx->data_end) {
		st->errors++;
		return XDP_DROP;
	}
	__builtin_memcpy(p, c->hdr, VSB_HDR_LEN);

	__u32 flow = st->flow, seq = st->seq;
	__u32 sip = c->sip, dip = c->dip;
	__u16 sport = c->sport, dport = c->dport;
	__u32 m;
	switch (c->field) {
	case VSB_F_SPORT:
		sport += flow;
		*(__be16 *)(p + OFF_UDP) = bpf_htons(sport);
		break;
	case VSB_F_DPORT:
		dport += flow;
		*(__be16 *)(p + OFF_UDP + 2) = bpf_htons(dport);
		break;
	case VSB_F_DIP:
		dip += flow;
		*(__be32 *)(p + OFF_IP + 16) = bpf_htonl(dip);
		break;
	case VSB_F_SMAC_SIP:
	case VSB_F_SIP:
		sip += flow;
		*(__be32 *)(p + OFF_IP + 12) = bpf_htonl(sip);
		if (c->field == VSB_F_SIP)
			break;
		/* fall through: smac+sip also varies the MAC */
	case VSB_F_SMAC:
		m = c->smac24 + flow;
		p[9] = (__u8)(m >> 16);
		p[10] = (__u8)(m >> 8);
		p[11] = (__u8)m;
		break;
	}
	__u16 ip_len = (__u16)(wire - 14), udp_len = (__u16)(wire - 34);
	*(__be16 *)(p + OFF_IP + 2) = bpf_htons(ip_len);
	*(__be16 *)(p + OFF_UDP + 4) = bpf_htons(udp_len);

	__u64 ts = now | VSB_TS_MONO;
	p[OFF_SIG + 3] = c->epoch;
	*(__be16 *)(p + OFF_SIG + 4) = bpf_htons(c->stream);
	*(__be32 *)(p + OFF_SIG + 6) = bpf_htonl(seq);
	*(__be32 *)(p + OFF_SIG + 10) = bpf_htonl((__u32)(ts >> 32));
	*(__be32 *)(p + OFF_SIG + 14) = bpf_htonl((__u32)ts);

	/* checksums from the values, as frame_write_l2 computes them: the payload beyond the
	 * signature is the template's zeros (live frames are initialised from it) */
	__u32 addr = (sip >> 16) + (sip & 0xffff) + (dip >> 16) + (dip & 0xffff);
	*(__be16 *)(p + OFF_IP + 10) = bpf_htons(vsb_csum_fold(c->ip_sum + ip_len + addr));
	__u32 sig = ('V' << 8 | 'S') + ('B' << 8 | c->epoch) + c->stream + (seq >> 16) + (seq & 0xffff) +
		    (__u32)(ts >> 48) + (__u32)((ts >> 32) & 0xffff) + (__u32)((ts >> 16) & 0xffff) +
		    (__u32)(ts & 0xffff);
	__u16 uc = vsb_csum_fold(addr + sport + dport + IPPROTO_UDP + 2u * udp_len + sig);
	*(__be16 *)(p + OFF_UDP + 6) = bpf_htons(uc ? uc : 0xffff);

	st->seq = seq + 1;
	if (++flow >= c->flows)
		flow = 0;
	st->flow = flow;
	if (++si >= c->nsizes)
		si = 0;
	st->sidx = si;
	st->frames++;
	st->bytes += wire + 4;
	st->last_ns = now;
	return XDP_TX;
}

/* ---- sink ---- */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct vsb_sink_cfg);
} vsb_scfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct vsb_sink_sum);
} vsb_ssum SEC(".maps");

struct { /* stream id -> slot + 1 (0: none yet) */
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u32);
} vsb_sids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VSB_KMAX_STREAMS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct vsb_kstream);
} vsb_streams SEC(".maps");

/* Checksum scratch: a frame's UDP datagram (or IPv4 header with options) copied out of the packet
 * with bpf_xdp_load_bytes, so the sum is a few helper calls with bounded sizes (a loop over packet
 * bytes of variable length makes the verifier walk every length). */
#define SCRATCH 1536
struct scratch { __u8 b[SCRATCH + 4]; };
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} vsb_scratch SEC(".maps");

/* Native-endian one's complement sum of len bytes at offset off of the packet, zero padded to a
 * multiple of 4, added to seed; -1 (as a flag in *ok = 0) if it cannot be read. */
static __always_inline __u32 pkt_sum(struct xdp_md *ctx, __u32 off, __u32 len, __u32 seed, int *ok)
{
	__u32 k = 0;
	struct scratch *sc = bpf_map_lookup_elem(&vsb_scratch, &k);
	*ok = 0;
	if (!sc || len < 1 || len > SCRATCH)
		return 0;
	__u32 pad = len & ~3u;
	if (pad > SCRATCH - 4)
		pad = SCRATCH - 4;
	*(__u32 *)&sc->b[pad] = 0; /* the padding of a length that is not a multiple of 4 */
	if (bpf_xdp_load_bytes(ctx, off, sc->b, len))
		return 0;
	__u32 len4 = (len + 3) & ~3u, sum = seed;
	for (__u32 c = 0; c < SCRATCH / 512; c++) {
		__u32 from = c * 512;
		if (len4 <= from)
			break;
		__u32 n = len4 - from;
		if (n > 512)
			n = 512;
		sum = (__u32)bpf_csum_diff(0, 0, (__be32 *)&sc->b[from], n, sum);
	}
	*ok = 1;
	return sum;
}

/* fold a native-endian 32-bit one's complement sum: 0xffff if the data (with its checksum) verify */
static __always_inline __u32 fold_native(__u64 s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u32)s;
}

static __always_inline void count(__u64 *v)
{
	__sync_fetch_and_add(v, 1);
}

SEC("xdp")
int vsb_sink(struct xdp_md *ctx)
{
	__u8 *p = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 k = 0;
	struct vsb_sink_sum *sum = bpf_map_lookup_elem(&vsb_ssum, &k);
	struct vsb_sink_cfg *c = bpf_map_lookup_elem(&vsb_scfg, &k);
	if (!sum || !c)
		return XDP_PASS;
	__u32 l3 = 14;
	if (p + 14 > end)
		goto malformed;
	__u16 type = *(__be16 *)(p + 12);
	if (type == bpf_htons(ETH_P_8021Q)) {
		if (p + 18 > end)
			goto malformed;
		type = *(__be16 *)(p + 16);
		l3 = 18;
	}
	if (type != bpf_htons(ETH_P_IP))
		goto foreign;
	__u8 *ip = p + l3;
	if (ip + 20 > end)
		goto malformed;
	__u32 hl = (ip[0] & 0x0f) * 4u;
	if ((ip[0] >> 4) != 4 || hl < 20 || ip + hl > end)
		goto malformed;
	__u32 room = (__u32)(end - ip);
	__u32 tot = bpf_ntohs(*(__be16 *)(ip + 2));
	if (tot < hl || tot > room)
		goto malformed;
	if (hl == 20) {
		__u32 isum = 0;
		for (int i = 0; i < 10; i++)
			isum += (__u32)ip[2 * i] << 8 | ip[2 * i + 1];
		if (vsb_csum_fold(isum) != 0)
			goto malformed;
	} else {
		int ok;
		__u32 isum = pkt_sum(ctx, l3, hl, 0, &ok);
		if (!ok || fold_native(isum) != 0xffff)
			goto malformed;
	}
	if ((bpf_ntohs(*(__be16 *)(ip + 6)) & 0x3fff) != 0 || ip[9] != IPPROTO_UDP)
		goto foreign;
	hl &= 0x3f;
	__u8 *udp = ip + hl;
	if (tot - hl < 8 || udp + 8 > end)
		goto malformed;
	__u32 ulen = bpf_ntohs(*(__be16 *)(udp + 4));
	if (ulen < 8 || ulen > tot - hl)
		goto malformed;
	if (*(__be16 *)(udp + 6) && c->check_udp) {
		/* pseudo header in native words: addresses as loaded, protocol and length swapped */
		__u64 ps = (__u64)*(__u32 *)(ip + 12) + *(__u32 *)(ip + 16) + bpf_htons(IPPROTO_UDP) +
			   bpf_htons((__u16)ulen);
		ps = (ps & 0xffffffff) + (ps >> 32);
		ps = (ps & 0xffffffff) + (ps >> 32);
		int ok;
		__u32 us = pkt_sum(ctx, l3 + hl, ulen, (__u32)ps, &ok);
		if (ok && fold_native(us) != 0xffff)
			goto malformed; /* (a datagram too long for the scratch is not checked) */
	}
	__u8 *s = udp + 8;
	if (ulen < 8 + 18 || s + 18 > end || s[0] != 'V' || s[1] != 'S' || s[2] != 'B')
		goto foreign;
	__u8 epoch = s[3];
	if (epoch != c->epoch) {
		count(&sum->stale);
		return XDP_DROP;
	}
	__u32 sid = bpf_ntohs(*(__be16 *)(s + 4));
	__u32 seq = bpf_ntohl(*(__be32 *)(s + 6));
	__u64 ts = (__u64)bpf_ntohl(*(__be32 *)(s + 10)) << 32 | bpf_ntohl(*(__be32 *)(s + 14));
	__u32 bytes = (__u32)(end - p) + 4;
	__u64 now = bpf_ktime_get_ns();

	__u32 *slotp = bpf_map_lookup_elem(&vsb_sids, &sid);
	if (!slotp)
		return XDP_DROP;
	__u32 slot = *slotp;
	if (!slot) {
		__u64 n = __sync_fetch_and_add(&sum->nstreams, 1);
		if (n >= VSB_KMAX_STREAMS) {
			count(&sum->overflow_streams);
			return XDP_DROP;
		}
		slot = (__u32)n + 1;
		*slotp = slot;
	}
	__u32 idx = slot - 1;
	struct vsb_kstream *st = bpf_map_lookup_elem(&vsb_streams, &idx);
	if (!st)
		return XDP_DROP;
	if (!st->used) {
		st->used = 1;
		st->stream = sid;
	}
	__u64 tx_ns = 0;
	int have_ts;
	if (ts & VSB_TS_MONO) {
		tx_ns = ts & ~VSB_TS_MONO;
		have_ts = 1;
	} else {
		have_ts = vsb_tsc_to_mono(c, ts, &tx_ns);
	}
	int cls = vsb_kacct(st, seq, tx_ns, have_ts, now, bytes);
	count(&sum->frames);
	if (cls == VSB_K_INORDER || cls == VSB_K_REORDERED)
		count(&sum->unique);
	return XDP_DROP;

malformed:
	count(&sum->malformed);
	return XDP_PASS;
foreign:
	count(&sum->foreign);
	return XDP_PASS;
}
