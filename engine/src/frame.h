/* Frame template, per-packet fields and the receive parser.
 *
 * Wire format: Ethernet II / IPv4 (no options) / UDP / payload. Frame size counts the 4-byte FCS as
 * RFC 2544 does: a 64-byte frame is 60 bytes handed to the kernel. The first 18 payload bytes are the
 * engine's signature (all multi-byte fields big endian):
 *   magic[3] = "VSB", epoch u8, stream u16, seq u32, tx_tsc u64
 * tx_tsc is TSC ticks, or CLOCK_MONOTONIC ns with bit 63 set (SIG_TS_MONO: frames built by the
 * xdplive backend's BPF program, which has no TSC).
 * A 64-byte frame has exactly 18 payload bytes. */
#ifndef VSB_FRAME_H
#define VSB_FRAME_H
#include <stdint.h>
#include <stddef.h>

#define ETH_HDR_LEN 14
#define IP4_HDR_LEN 20
#define UDP_HDR_LEN 8
#define L2_OVERHEAD (ETH_HDR_LEN + IP4_HDR_LEN + UDP_HDR_LEN) /* 42 */
#define FCS_LEN 4
#define SIG_LEN 18
#define FRAME_MIN 64
#define FRAME_MAX 9018 /* MTU 9000 + Ethernet header + FCS (jumbo frames) */
#define FRAME_STD_MAX 1518 /* the largest frame of a 1500-byte MTU */
#define PAYLOAD_OFF L2_OVERHEAD

/* frame size (with FCS) -> bytes handed to the kernel */
static inline unsigned frame_wire_len(unsigned size) { return size - FCS_LEN; }
/* frame size (with FCS) -> UDP payload bytes */
static inline unsigned frame_payload_len(unsigned size) { return size - FCS_LEN - L2_OVERHEAD; }

/* Timestamp with bit 63 set: CLOCK_MONOTONIC ns (the xdplive generator), else TSC ticks. */
#define SIG_TS_MONO (1ull << 63)

struct sig {
	uint8_t epoch;
	uint16_t stream;
	uint32_t seq;
	uint64_t tx_tsc;
};

/* Which header field varies across flows. FLOW_SMAC_SIP varies the source MAC (its low 24 bits)
 * and the source IPv4 address together: every flow looks like a host of its own, at L2 and L3
 * (a software switch hashing the IP 5-tuple, as OVS's userspace datapath does without NIC RSS,
 * then sees distinct hashes too). */
enum flow_field { FLOW_SPORT = 0, FLOW_SIP, FLOW_SMAC, FLOW_DPORT, FLOW_SMAC_SIP, FLOW_DIP };
/* FLOW_DIP varies the destination IPv4 address (dip + flow): routers and filters with a table of
 * prefixes see the flows spread over it (--function l3/acl in vswbench). */

/* The RFC 2544 benchmarking range 198.18.0.0/15, the only addresses the project puts on the wire. */
#define BENCH_NET 0xc6120000u
#define BENCH_LAST 0xc613ffffu

/* Addresses varied across `flows` flows from `sip` (fields sip and smac+sip) or from the destination
 * (field dip: pass the destination address) must all lie in 198.18.0.0/15: 0 if they do (or the
 * field leaves the address alone, or flows <= 1), else -1 and a message naming the range. */
int frame_flow_range_check(uint32_t sip, uint32_t flows, enum flow_field field, char *msg,
			   size_t msglen);

struct frame_addrs {
	uint8_t smac[6], dmac[6];
	uint32_t sip, dip; /* host byte order */
	uint16_t sport, dport;
};

/* A stream: template frame + per-packet field program (flow field, size list, signature). */
struct frame_tmpl {
	struct frame_addrs a;
	uint8_t epoch;
	uint16_t stream;
	uint32_t flows;           /* >= 1 */
	enum flow_field field;
	uint8_t buf[FRAME_MAX];   /* template at max size; headers patched per packet */
};

void frame_tmpl_init(struct frame_tmpl *t, const struct frame_addrs *a, uint16_t stream,
		     uint32_t flows, enum flow_field field);

/* Write a complete frame (headers with valid IP and UDP checksums, signature) for frame size `size`
 * (with FCS), flow index `flow`, sequence `seq`, timestamp `tsc` into dst (capacity >= size-4).
 * Returns the number of bytes written (size - 4). */
unsigned frame_write_l2(const struct frame_tmpl *t, uint8_t *dst, unsigned size, uint32_t flow,
			uint32_t seq, uint64_t tsc);
/* Same for socket backends: only the UDP payload (size - 46 bytes, at least SIG_LEN). */
unsigned frame_write_payload(const struct frame_tmpl *t, uint8_t *dst, unsigned size, uint32_t seq,
			     uint64_t tsc);

/* Parse results. */
enum parse_result {
	PARSE_OK = 0,      /* engine frame, sig filled */
	PARSE_FOREIGN,     /* well-formed but not ours (other protocol, no signature) */
	PARSE_MALFORMED,   /* truncated / bad lengths / bad checksum */
};
/* Parse a full L2 frame of `len` bytes. Never reads outside [p, p+len). */
enum parse_result frame_parse_l2(const uint8_t *p, size_t len, struct sig *out);
/* Parse a UDP payload. */
enum parse_result frame_parse_payload(const uint8_t *p, size_t len, struct sig *out);

/* Swap Ethernet src/dst, IPv4 src/dst, UDP ports in place (checksums stay valid). For reflect.
 * Returns 0, or -1 if the frame is not Ethernet/IPv4/UDP (left untouched). */
int frame_swap_l2(uint8_t *p, size_t len);

/* RFC 1071 checksum helpers */
uint16_t csum_fold(uint32_t sum);
uint32_t csum_partial(const void *data, size_t len, uint32_t sum);

/* Sizes: a list or an IMIX genome (RFC 6985 letters a=64 b=128 c=256 d=512 e=1024 f=1280 g=1518
 * h=2048(invalid here) z=MTU). */
struct size_seq {
	uint16_t *sizes; /* cycled per packet */
	unsigned n;
	double mean;     /* mean frame size (with FCS) */
};
/* Parse "64", "64,512,1518" or "imix" / "imix:GENOME". 0 ok, -1 bad (msg filled). */
int size_seq_parse(const char *spec, struct size_seq *out, char *msg, size_t msglen);
void size_seq_free(struct size_seq *s);

#endif
