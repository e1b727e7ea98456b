/* Frame template, per-packet writer, receive parser, checksums and frame size specs (frame.h).
 *
 * Checksum convention: csum_partial() returns the RFC 1071 one's complement sum of the data read as
 * big-endian 16-bit words (an odd trailing byte is the high byte of a last word padded with zero),
 * folded to 16 bits and added to `sum`; only the last chunk of a chained sum may have an odd length.
 * csum_fold() folds a sum and complements it: the result is the checksum value in host order, to be
 * stored big endian. Verifying: the sum over data that includes its checksum field folds to 0xffff. */
#include "frame.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common.h"

#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_VLAN 0x8100
#define IPPROTO_UDP_ 17

/* offsets in an untagged engine frame */
#define OFF_IP ETH_HDR_LEN             /* 14 */
#define OFF_IP_TOTLEN (OFF_IP + 2)     /* 16 */
#define OFF_IP_CSUM (OFF_IP + 10)      /* 24 */
#define OFF_IP_SIP (OFF_IP + 12)       /* 26 */
#define OFF_UDP (OFF_IP + IP4_HDR_LEN) /* 34 */
#define OFF_UDP_LEN (OFF_UDP + 4)      /* 38 */
#define OFF_UDP_CSUM (OFF_UDP + 6)     /* 40 */

static const uint8_t sig_magic[3] = { 'V', 'S', 'B' };

static inline uint16_t ld16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t ld32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t ld64(const uint8_t *p) { return (uint64_t)ld32(p) << 32 | ld32(p + 4); }
/* big-endian stores: one (unaligned) store each, not byte by byte (per-frame path) */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BE16(v) __builtin_bswap16(v)
#define BE32(v) __builtin_bswap32(v)
#define BE64(v) __builtin_bswap64(v)
#else
#define BE16(v) (v)
#define BE32(v) (v)
#define BE64(v) (v)
#endif
static inline void st16(uint8_t *p, uint16_t v) { v = BE16(v); memcpy(p, &v, 2); }
static inline void st32(uint8_t *p, uint32_t v) { v = BE32(v); memcpy(p, &v, 4); }
static inline void st64(uint8_t *p, uint64_t v) { v = BE64(v); memcpy(p, &v, 8); }

/* ---- checksums ---- */

uint16_t csum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static inline uint32_t fold64(uint64_t s)
{
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint32_t)s;
}

uint32_t csum_partial(const void *data, size_t len, uint32_t sum)
{
	/* Sum native-order 32-bit words in a 64-bit accumulator; the one's complement sum is byte-order
	 * independent up to a final byte swap (RFC 1071 section 2(B)). */
	const uint8_t *p = data;
	uint64_t acc = 0;
	while (len >= 16) {
		uint32_t w[4];
		memcpy(w, p, 16);
		acc += (uint64_t)w[0] + w[1] + w[2] + w[3];
		p += 16;
		len -= 16;
	}
	while (len >= 4) {
		uint32_t w;
		memcpy(&w, p, 4);
		acc += w;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		uint16_t w;
		memcpy(&w, p, 2);
		acc += w;
		p += 2;
		len -= 2;
	}
	uint32_t s;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (len)
		acc += p[0]; /* high byte of a padded big-endian word = low byte in swapped space */
	s = fold64(acc);
	s = (uint32_t)(((s & 0xff) << 8) | (s >> 8));
#else
	if (len)
		acc += (uint32_t)p[0] << 8;
	s = fold64(acc);
#endif
	return fold64((uint64_t)s + sum);
}

/* One's complement sum of n bytes (n even, a small constant: inlined and unrolled in the per-frame
 * path) as big-endian 16-bit words, folded to 16 bits: 32-bit native loads, folded, then byte-swapped
 * (the sum is byte-order independent, RFC 1071 section 2(B)). */
static inline uint32_t sum_be(const uint8_t *p, unsigned n)
{
	uint64_t acc = 0;
	unsigned i = 0;
	for (; i + 4 <= n; i += 4) {
		uint32_t w;
		memcpy(&w, p + i, 4);
		acc += w;
	}
	if (i < n) {
		uint16_t w;
		memcpy(&w, p + i, 2);
		acc += w;
	}
	uint32_t s = fold64(acc);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	s = ((s & 0xff) << 8) | (s >> 8);
#endif
	return s;
}

/* big-endian 16-bit word sum of n words (small, inlined in the per-packet path) */
static inline uint32_t sum_words(const uint8_t *p, unsigned n)
{
	uint32_t s = 0;
	for (unsigned i = 0; i < n; i++)
		s += ld16(p + 2 * i);
	return s;
}

/* ---- template and writer ---- */

void frame_tmpl_init(struct frame_tmpl *t, const struct frame_addrs *a, uint16_t stream,
		     uint32_t flows, enum flow_field field)
{
	memset(t, 0, sizeof(*t));
	t->a = *a;
	t->epoch = 0; /* set t->epoch after init; epoch and stream are read per packet */
	t->stream = stream;
	t->flows = flows ? flows : 1;
	t->field = field;
	uint8_t *b = t->buf;
	memcpy(b, a->dmac, 6);
	memcpy(b + 6, a->smac, 6);
	st16(b + 12, ETHERTYPE_IPV4);
	uint8_t *ip = b + OFF_IP;
	ip[0] = 0x45;               /* version 4, IHL 5 */
	ip[1] = 0;                  /* DSCP/ECN */
	st16(ip + 6, 0x4000);       /* DF, fragment offset 0; id (ip+4) stays 0 */
	ip[8] = 64;                 /* TTL */
	ip[9] = IPPROTO_UDP_;
	st32(ip + 12, a->sip);
	st32(ip + 16, a->dip);
	uint8_t *udp = b + OFF_UDP;
	st16(udp, a->sport);
	st16(udp + 2, a->dport);
	memcpy(b + PAYLOAD_OFF, sig_magic, 3);
	/* lengths, checksums and the rest of the signature are written per packet; the remaining
	 * payload stays zero. */
}

static inline unsigned clamp_size(unsigned size)
{
	if (unlikely(size < FRAME_MIN))
		return FRAME_MIN;
	if (unlikely(size > FRAME_MAX))
		return FRAME_MAX;
	return size;
}

static inline void write_sig(uint8_t *s, const struct frame_tmpl *t, uint32_t seq, uint64_t tsc)
{
	/* s[0..2] = magic, copied from the template */
	s[3] = t->epoch;
	st16(s + 4, t->stream);
	st32(s + 6, seq);
	st64(s + 10, tsc);
}

/* the source MAC's low 24 bits + flow (the first three bytes, OUI and local bit, stay) */
static inline void put_smac_low(uint8_t *dst, const struct frame_tmpl *t, uint32_t flow)
{
	uint32_t m = ((uint32_t)t->a.smac[3] << 16 | (uint32_t)t->a.smac[4] << 8 | t->a.smac[5]) + flow;
	dst[9] = (uint8_t)(m >> 16);
	dst[10] = (uint8_t)(m >> 8);
	dst[11] = (uint8_t)m;
}

unsigned frame_write_l2(const struct frame_tmpl *t, uint8_t *dst, unsigned size, uint32_t flow,
			uint32_t seq, uint64_t tsc)
{
	size = clamp_size(size);
	unsigned wire = size - FCS_LEN;
	/* headers + magic + zero payload: the first 60 bytes (a 64-byte frame) as a fixed-size copy, the
	 * compiler's few vector moves, the rest (if any) after it */
	memcpy(dst, t->buf, FRAME_MIN - FCS_LEN);
	if (wire > FRAME_MIN - FCS_LEN)
		memcpy(dst + FRAME_MIN - FCS_LEN, t->buf + FRAME_MIN - FCS_LEN, wire - (FRAME_MIN - FCS_LEN));

	uint16_t ip_len = (uint16_t)(wire - ETH_HDR_LEN);
	uint16_t udp_len = (uint16_t)(wire - OFF_UDP);
	st16(dst + OFF_IP_TOTLEN, ip_len);
	st16(dst + OFF_UDP_LEN, udp_len);

	uint32_t sip = t->a.sip, dip = t->a.dip;
	uint16_t sport = t->a.sport, dport = t->a.dport;
	switch (t->field) {
	case FLOW_SPORT:
		sport = (uint16_t)(sport + flow);
		st16(dst + OFF_UDP, sport);
		break;
	case FLOW_DPORT:
		dport = (uint16_t)(dport + flow);
		st16(dst + OFF_UDP + 2, dport);
		break;
	case FLOW_SIP:
		sip += flow;
		st32(dst + OFF_IP_SIP, sip);
		break;
	case FLOW_SMAC:
		put_smac_low(dst, t, flow);
		break;
	case FLOW_SMAC_SIP:
		sip += flow;
		st32(dst + OFF_IP_SIP, sip);
		put_smac_low(dst, t, flow);
		break;
	case FLOW_DIP:
		dip += flow;
		st32(dst + OFF_IP_SIP + 4, dip);
		break;
	}
	write_sig(dst + PAYLOAD_OFF, t, seq, tsc);

	/* Checksums from the values and the (read-only) template, never by reading back the frame just
	 * written (a load spanning fresh stores of other sizes stalls store forwarding). */
	uint32_t addr = (sip >> 16) + (sip & 0xffff) + (dip >> 16) + (dip & 0xffff);

	/* IPv4 header: the template's first 12 bytes (total length and checksum 0 there) + total length
	 * + addresses */
	st16(dst + OFF_IP_CSUM, csum_fold(sum_be(t->buf + OFF_IP, 12) + ip_len + addr));

	/* UDP checksum: pseudo header (sip, dip, proto, udp length) + UDP header (sport, dport, length,
	 * checksum 0) + signature ("VS", "B"+epoch, stream, seq, tsc as 16-bit words); the zero payload
	 * beyond the signature adds nothing. The UDP length counts twice (pseudo header and UDP
	 * header). */
	uint32_t sig = ('V' << 8 | 'S') + ('B' << 8 | t->epoch) + t->stream + (seq >> 16) + (seq & 0xffff) +
		       (uint32_t)(tsc >> 48) + (uint32_t)((tsc >> 32) & 0xffff) +
		       (uint32_t)((tsc >> 16) & 0xffff) + (uint32_t)(tsc & 0xffff);
	uint32_t s = addr + sport + dport + IPPROTO_UDP_ + 2u * udp_len + sig;
	uint16_t c = csum_fold(s);
	st16(dst + OFF_UDP_CSUM, c ? c : 0xffff);
	return wire;
}

unsigned frame_write_payload(const struct frame_tmpl *t, uint8_t *dst, unsigned size, uint32_t seq,
			     uint64_t tsc)
{
	size = clamp_size(size);
	unsigned plen = frame_payload_len(size);
	memcpy(dst, t->buf + PAYLOAD_OFF, plen);
	write_sig(dst, t, seq, tsc);
	return plen;
}

int frame_flow_range_check(uint32_t sip, uint32_t flows, enum flow_field field, char *msg,
			   size_t msglen)
{
	if (flows <= 1 || (field != FLOW_SIP && field != FLOW_SMAC_SIP && field != FLOW_DIP))
		return 0;
	const char *which = field == FLOW_DIP ? "destination" : "source";
	const char *flag = field == FLOW_DIP ? "--dst-ip" : "--src-ip";
	uint64_t last = (uint64_t)sip + flows - 1;
	if (sip >= BENCH_NET && last <= BENCH_LAST)
		return 0;
	if (msg && msglen)
		snprintf(msg, msglen, "--flows %u from %s address %u.%u.%u.%u would use %u.%u.%u.%u.."
			 "%u.%u.%u.%u, outside 198.18.0.0/15 (the benchmarking range, the only one used): "
			 "use fewer flows or a lower %s", flows, which, sip >> 24, (sip >> 16) & 255,
			 (sip >> 8) & 255, sip & 255, sip >> 24, (sip >> 16) & 255, (sip >> 8) & 255,
			 sip & 255, (unsigned)(last >> 24) & 255, (unsigned)(last >> 16) & 255,
			 (unsigned)(last >> 8) & 255, (unsigned)last & 255, flag);
	return -1;
}

/* ---- parser ---- */

static enum parse_result parse_sig(const uint8_t *p, size_t len, struct sig *out)
{
	if (len < SIG_LEN || memcmp(p, sig_magic, 3) != 0)
		return PARSE_FOREIGN;
	if (out) {
		out->epoch = p[3];
		out->stream = ld16(p + 4);
		out->seq = ld32(p + 6);
		out->tx_tsc = ld64(p + 10);
	}
	return PARSE_OK;
}

enum parse_result frame_parse_payload(const uint8_t *p, size_t len, struct sig *out)
{
	if (!p)
		return PARSE_FOREIGN;
	return parse_sig(p, len, out);
}

/* Offset of the IPv4 header, or 0 if the frame is not IPv4 (-1: truncated). */
static long l3_offset(const uint8_t *p, size_t len)
{
	if (len < ETH_HDR_LEN)
		return -1;
	size_t off = 12;
	uint16_t type = ld16(p + off);
	if (type == ETHERTYPE_VLAN) {
		if (len < ETH_HDR_LEN + 4)
			return -1;
		off += 4;
		type = ld16(p + off);
	}
	if (type != ETHERTYPE_IPV4)
		return 0;
	return (long)(off + 2);
}

enum parse_result frame_parse_l2(const uint8_t *p, size_t len, struct sig *out)
{
	if (!p)
		return PARSE_MALFORMED;
	long l3 = l3_offset(p, len);
	if (l3 < 0)
		return PARSE_MALFORMED;
	if (l3 == 0)
		return PARSE_FOREIGN;
	const uint8_t *ip = p + l3;
	size_t room = len - (size_t)l3;
	if (room < IP4_HDR_LEN)
		return PARSE_MALFORMED;
	unsigned ver = ip[0] >> 4, hl = (ip[0] & 0x0f) * 4u;
	if (ver != 4 || hl < IP4_HDR_LEN || hl > room)
		return PARSE_MALFORMED;
	unsigned tot = ld16(ip + 2);
	if (tot < hl || tot > room) /* the buffer may be padded beyond the total length */
		return PARSE_MALFORMED;
	if (csum_fold(csum_partial(ip, hl, 0)) != 0)
		return PARSE_MALFORMED;
	if ((ld16(ip + 6) & 0x3fff) != 0) /* MF or fragment offset: not ours */
		return PARSE_FOREIGN;
	if (ip[9] != IPPROTO_UDP_)
		return PARSE_FOREIGN;
	const uint8_t *udp = ip + hl;
	unsigned ip_pl = tot - hl;
	if (ip_pl < UDP_HDR_LEN)
		return PARSE_MALFORMED;
	unsigned ulen = ld16(udp + 4);
	if (ulen < UDP_HDR_LEN || ulen > ip_pl)
		return PARSE_MALFORMED;
	if (ld16(udp + 6) != 0) {
		uint32_t s = sum_words(ip + 12, 4) + IPPROTO_UDP_ + ulen;
		if (csum_fold(csum_partial(udp, ulen, s)) != 0)
			return PARSE_MALFORMED;
	}
	return parse_sig(udp + UDP_HDR_LEN, ulen - UDP_HDR_LEN, out);
}

static inline void swap_bytes(uint8_t *a, uint8_t *b, size_t n)
{
	uint8_t tmp[6];
	memcpy(tmp, a, n);
	memcpy(a, b, n);
	memcpy(b, tmp, n);
}

int frame_swap_l2(uint8_t *p, size_t len)
{
	if (!p)
		return -1;
	long l3 = l3_offset(p, len);
	if (l3 <= 0)
		return -1;
	uint8_t *ip = p + l3;
	size_t room = len - (size_t)l3;
	if (room < IP4_HDR_LEN)
		return -1;
	unsigned hl = (ip[0] & 0x0f) * 4u;
	if ((ip[0] >> 4) != 4 || hl < IP4_HDR_LEN || ip[9] != IPPROTO_UDP_ ||
	    (ld16(ip + 6) & 0x1fff) != 0 || room < (size_t)hl + UDP_HDR_LEN)
		return -1;
	/* Each swap exchanges 16-bit words at even offsets inside the same checksummed region (IP
	 * header, UDP pseudo header, UDP header), so every one's complement sum is unchanged. */
	swap_bytes(p, p + 6, 6);
	swap_bytes(ip + 12, ip + 16, 4);
	swap_bytes(ip + hl, ip + hl + 2, 2);
	return 0;
}

/* ---- size specs ---- */

static int imix_letter(int c)
{
	switch (tolower(c)) {
	case 'a': return 64;
	case 'b': return 128;
	case 'c': return 256;
	case 'd': return 512;
	case 'e': return 1024;
	case 'f': return 1280;
	case 'g': return 1518;
	default: return -1;
	}
}

#define SIZE_SEQ_MAX 1024

int size_seq_parse(const char *spec, struct size_seq *out, char *msg, size_t msglen)
{
	char dummy[8];
	if (!msg || !msglen) {
		msg = dummy;
		msglen = sizeof(dummy);
	}
	msg[0] = 0;
	memset(out, 0, sizeof(*out));
	if (!spec || !*spec) {
		snprintf(msg, msglen, "--size: empty value (a size %d..%d, a list like 64,512,1518, "
			 "or imix / imix:GENOME)", FRAME_MIN, FRAME_MAX);
		return -1;
	}
	uint16_t *v = malloc(SIZE_SEQ_MAX * sizeof(*v));
	if (!v) {
		snprintf(msg, msglen, "--size %s: out of memory", spec);
		return -1;
	}
	unsigned n = 0;
	if (strncasecmp(spec, "imix", 4) == 0) {
		const char *g = "aaaaaaaddddg";
		if (spec[4] == ':')
			g = spec + 5;
		else if (spec[4] != 0)
			goto bad_imix;
		if (!*g) {
			snprintf(msg, msglen, "--size %s: empty IMIX genome (letters a=64 b=128 c=256 d=512 "
				 "e=1024 f=1280 g=1518)", spec);
			goto fail;
		}
		for (; *g; g++) {
			int s = imix_letter((unsigned char)*g);
			if (s < 0) {
				snprintf(msg, msglen, "--size %s: invalid IMIX letter '%c': valid letters are "
					 "a=64 b=128 c=256 d=512 e=1024 f=1280 g=1518 (RFC 6985)", spec,
					 isprint((unsigned char)*g) ? *g : '?');
				goto fail;
			}
			if (n >= SIZE_SEQ_MAX) {
				snprintf(msg, msglen, "--size %s: IMIX genome longer than %d letters", spec,
					 SIZE_SEQ_MAX);
				goto fail;
			}
			v[n++] = (uint16_t)s;
		}
	} else {
		const char *p = spec;
		for (;;) {
			while (*p == ' ')
				p++;
			if (!isdigit((unsigned char)*p)) {
				snprintf(msg, msglen, "--size %s: expected a frame size in bytes (%d..%d), a "
					 "comma-separated list, or imix / imix:GENOME", spec, FRAME_MIN, FRAME_MAX);
				goto fail;
			}
			errno = 0;
			char *end;
			unsigned long s = strtoul(p, &end, 10);
			if (errno || s < FRAME_MIN || s > FRAME_MAX) {
				if (strchr(spec, ','))
					snprintf(msg, msglen, "--size %s: frame size %.*s must be %d..%d bytes "
						 "(with FCS)", spec, (int)(end - p), p, FRAME_MIN, FRAME_MAX);
				else
					snprintf(msg, msglen, "--size %s: frame size must be %d..%d bytes "
						 "(with FCS)", spec, FRAME_MIN, FRAME_MAX);
				goto fail;
			}
			if (n >= SIZE_SEQ_MAX) {
				snprintf(msg, msglen, "--size: more than %d sizes in the list", SIZE_SEQ_MAX);
				goto fail;
			}
			v[n++] = (uint16_t)s;
			p = end;
			while (*p == ' ')
				p++;
			if (*p == 0)
				break;
			if (*p != ',') {
				snprintf(msg, msglen, "--size %s: unexpected '%c' (expected a size %d..%d, "
					 "a comma-separated list, or imix / imix:GENOME)", spec,
					 isprint((unsigned char)*p) ? *p : '?', FRAME_MIN, FRAME_MAX);
				goto fail;
			}
			p++;
		}
	}
	double sum = 0;
	for (unsigned i = 0; i < n; i++)
		sum += v[i];
	uint16_t *shrunk = realloc(v, n * sizeof(*v));
	out->sizes = shrunk ? shrunk : v;
	out->n = n;
	out->mean = sum / n;
	return 0;
bad_imix:
	snprintf(msg, msglen, "--size %s: expected imix or imix:GENOME with letters a=64 b=128 c=256 "
		 "d=512 e=1024 f=1280 g=1518", spec);
fail:
	free(v);
	return -1;
}

void size_seq_free(struct size_seq *s)
{
	if (!s)
		return;
	free(s->sizes);
	s->sizes = NULL;
	s->n = 0;
	s->mean = 0;
}
