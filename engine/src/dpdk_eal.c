/* The dpdk backend's pure logic: vdev string checks, file prefix, EAL argv (dpdk_eal.h). */
#include "dpdk_eal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define VDEV_EXAMPLES "e.g. net_memif0,role=client,socket=/run/vsbXXXX/memif.sock or " \
	"virtio_user0,path=/run/vsbXXXX/vhost.sock"

/* Virtual device drivers the engine knows, by name prefix (DPDK matches a vdev to its driver by the
 * prefix of the name), with the devarg each one cannot do without. */
static const struct vdrv {
	const char *prefix;
	const char *need;  /* required key, or NULL */
	const char *hint;  /* what the key is */
} drivers[] = {
	{"net_memif", "socket", "socket=PATH: the memif control socket (the default /run/memif.sock "
				"is shared by every memif user; give a path under a vsb* directory)"},
	{"net_virtio_user", "path", "path=PATH: the vhost-user socket to connect to"},
	{"virtio_user", "path", "path=PATH: the vhost-user socket to connect to"},
	{"net_vhost", "iface", "iface=PATH: the vhost-user socket to create"},
	{"eth_vhost", "iface", "iface=PATH: the vhost-user socket to create"},
	{"net_af_packet", "iface", "iface=IF: the kernel interface"},
	{"eth_af_packet", "iface", "iface=IF: the kernel interface"},
	{"net_af_xdp", "iface", "iface=IF: the kernel interface"},
	{"net_ring", NULL, NULL},
	{"net_null", NULL, NULL},
	{"net_tap", NULL, NULL},
	{"net_pcap", NULL, NULL},
	{"eth_pcap", NULL, NULL},
};

static int fail(char *msg, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *msg, size_t n, const char *fmt, ...)
{
	if (msg && n) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int name_char(int c) { return isalnum(c) || c == '_'; }

int dpdk_vdev_check(const char *vdev, char *name, size_t name_len, char *msg, size_t msg_len)
{
	if (!vdev || !*vdev)
		return fail(msg, msg_len, "--port '': empty; a DPDK port is a vdev string "
			    "DRIVER[N][,key=value...], " VDEV_EXAMPLES);
	size_t len = strlen(vdev);
	if (len > DPDK_VDEV_MAX)
		return fail(msg, msg_len, "--port '%.40s...': %zu chars, a vdev string may have at most %d",
			    vdev, len, DPDK_VDEV_MAX);
	for (size_t i = 0; i < len; i++)
		if (!isgraph((unsigned char)vdev[i]))
			return fail(msg, msg_len, "--port '%s': character %zu is a space or control "
				    "character; a vdev string is DRIVER[N][,key=value...] without spaces", vdev,
				    i + 1);
	size_t nl = strcspn(vdev, ",");
	if (!isalpha((unsigned char)vdev[0]))
		return fail(msg, msg_len, "--port '%s': the device name must start with a letter (the "
			    "driver, e.g. net_memif0, virtio_user0, net_vhost0); " VDEV_EXAMPLES, vdev);
	for (size_t i = 0; i < nl; i++)
		if (!name_char((unsigned char)vdev[i]))
			return fail(msg, msg_len, "--port '%s': '%c' in the device name '%.*s' (letters, digits "
				    "and _ only; the name ends at the first comma)", vdev, vdev[i], (int)nl,
				    vdev);
	if (nl > DPDK_NAME_MAX)
		return fail(msg, msg_len, "--port '%.*s...': device name longer than %d chars", 40, vdev,
			    DPDK_NAME_MAX);
	const struct vdrv *d = NULL;
	for (size_t k = 0; k < sizeof(drivers) / sizeof(drivers[0]); k++)
		if (!strncmp(vdev, drivers[k].prefix, strlen(drivers[k].prefix))) {
			d = &drivers[k];
			break;
		}
	if (!d)
		return fail(msg, msg_len, "--port '%s': '%.*s' names no DPDK virtual device driver the engine "
			    "knows (net_memif, virtio_user, net_vhost, net_af_packet, net_af_xdp, net_ring, "
			    "net_null, net_tap, net_pcap: the name is the driver plus a number, "
			    "e.g. net_memif0)", vdev, (int)nl, vdev);
	/* key=value list; values may hold [..] lists with commas */
	const char *p = vdev + nl;
	int have_need = d->need == NULL;
	while (*p == ',') {
		p++;
		const char *k = p;
		while (name_char((unsigned char)*p) || *p == '-') /* keys like socket-abstract */
			p++;
		size_t kl = (size_t)(p - k);
		if (!kl)
			return fail(msg, msg_len, "--port '%s': empty or invalid key at '%.20s' (expected "
				    "key=value after each comma)", vdev, k);
		if (*p != '=')
			return fail(msg, msg_len, "--port '%s': '%.*s' has no value (expected %.*s=VALUE)", vdev,
				    (int)kl, k, (int)kl, k);
		p++;
		const char *v = p;
		int depth = 0;
		while (*p && (*p != ',' || depth)) {
			if (*p == '[')
				depth++;
			else if (*p == ']' && depth)
				depth--;
			p++;
		}
		size_t vl = (size_t)(p - v);
		if (!vl)
			return fail(msg, msg_len, "--port '%s': '%.*s=' has an empty value", vdev, (int)kl, k);
		if (depth)
			return fail(msg, msg_len, "--port '%s': '[' without ']' in the value of '%.*s'", vdev,
				    (int)kl, k);
		if (d->need && kl == strlen(d->need) && !strncmp(k, d->need, kl))
			have_need = 1;
		if (!strncmp(d->prefix, "net_memif", 9) && kl == 4 && !strncmp(k, "role", 4) &&
		    !((vl == 6 && !strncmp(v, "server", 6)) || (vl == 6 && !strncmp(v, "client", 6))))
			return fail(msg, msg_len, "--port '%s': memif role '%.*s': expected role=server or "
				    "role=client", vdev, (int)vl, v);
	}
	if (*p)
		return fail(msg, msg_len, "--port '%s': unexpected '%c' (expected ,key=value)", vdev, *p);
	if (!have_need)
		return fail(msg, msg_len, "--port '%s': %s needs %s", vdev, d->prefix, d->hint);
	if (name && name_len) {
		if (nl >= name_len)
			return fail(msg, msg_len, "--port '%s': device name too long", vdev);
		memcpy(name, vdev, nl);
		name[nl] = 0;
	}
	return 0;
}

int dpdk_vdev_arg(const char *vdev, const char *key, char *out, size_t out_len)
{
	size_t kl = strlen(key);
	const char *p = strchr(vdev, ',');
	while (p) {
		p++;
		if (!strncmp(p, key, kl) && p[kl] == '=') {
			const char *v = p + kl + 1;
			size_t vl = strcspn(v, ",");
			if (out && out_len) {
				if (vl >= out_len)
					vl = out_len - 1;
				memcpy(out, v, vl);
				out[vl] = 0;
			}
			return 1;
		}
		p = strchr(p, ',');
	}
	return 0;
}

static int prefix_ok(const char *s, char *msg, size_t msg_len, const char *what)
{
	size_t n = strlen(s);
	if (strncmp(s, "vsb", 3) != 0)
		return fail(msg, msg_len, "%s '%s': an EAL file prefix must start with 'vsb' (every object "
			    "vswbench creates carries it)", what, s);
	if (n > DPDK_PREFIX_MAX)
		return fail(msg, msg_len, "%s '%.20s...': longer than %d chars", what, s, DPDK_PREFIX_MAX);
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_.-", s[i]))
			return fail(msg, msg_len, "%s '%s': only letters, digits, '_', '.' and '-' are allowed",
				    what, s);
	return 0;
}

int dpdk_prefix(const char *env, long pid, char *out, size_t out_len, char *msg, size_t msg_len)
{
	char tmp[DPDK_PREFIX_MAX + 32];
	if (env && *env) {
		if (prefix_ok(env, msg, msg_len, "VSB_DPDK_PREFIX"))
			return -1;
		snprintf(tmp, sizeof(tmp), "%s", env);
	} else {
		snprintf(tmp, sizeof(tmp), "vsbdpdk%ld", pid);
	}
	if (strlen(tmp) >= out_len)
		return fail(msg, msg_len, "file prefix '%s' too long", tmp);
	snprintf(out, out_len, "%s", tmp);
	return 0;
}

int dpdk_cpulist(const unsigned char *bits, unsigned ncpu, char *out, size_t out_len)
{
	size_t len = 0;
	int any = 0;
	if (!out_len)
		return -1;
	out[0] = 0;
	for (unsigned c = 0; c < ncpu;) {
		if (!(bits[c / 8] & (1u << (c % 8)))) {
			c++;
			continue;
		}
		unsigned e = c;
		while (e + 1 < ncpu && (bits[(e + 1) / 8] & (1u << ((e + 1) % 8))))
			e++;
		int w = e > c ? snprintf(out + len, out_len - len, "%s%u-%u", any ? "," : "", c, e)
			      : snprintf(out + len, out_len - len, "%s%u", any ? "," : "", c);
		if (w < 0 || (size_t)w >= out_len - len)
			return -1;
		len += (size_t)w;
		any = 1;
		c = e + 1;
	}
	return any ? 0 : -1;
}

/* ---- argv ---- */

struct builder {
	struct dpdk_argv *a;
	size_t used;
	int overflow;
};

static void push(struct builder *b, const char *s)
{
	struct dpdk_argv *a = b->a;
	size_t n = strlen(s) + 1;
	if (a->argc >= DPDK_MAX_ARGS || b->used + n > sizeof(a->buf)) {
		b->overflow = 1;
		return;
	}
	memcpy(a->buf + b->used, s, n);
	a->argv[a->argc++] = a->buf + b->used;
	a->argv[a->argc] = NULL;
	b->used += n;
}

static void pushf(struct builder *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pushf(struct builder *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= sizeof(tmp)) {
		b->overflow = 1;
		return;
	}
	push(b, tmp);
}

#define MAX_EXTRA 48

/* Split on blanks into tok (pointers into store). -1 if too many. */
static int split(const char *s, char *store, size_t store_len, char **tok, int max)
{
	int n = 0;
	snprintf(store, store_len, "%s", s ? s : "");
	for (char *p = store; *p;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			*p++ = 0;
		if (!*p)
			break;
		if (n == max)
			return -1;
		tok[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
	}
	return n;
}

static int opt_is(const char *t, const char *opt)
{
	size_t n = strlen(opt);
	return !strncmp(t, opt, n) && (t[n] == 0 || t[n] == '=');
}

static const char *const mem_opts[] = {"--no-huge", "--socket-mem", "--in-memory", "--huge-dir",
				       "--legacy-mem", "--single-file-segments", "--huge-unlink",
				       "--socket-limit", NULL};

int dpdk_eal_argv(const struct dpdk_eal_cfg *cfg, struct dpdk_argv *out, char *msg, size_t msg_len)
{
	memset(out, 0, sizeof(*out));
	char store[2048];
	char *tok[MAX_EXTRA];
	if (cfg->extra && strlen(cfg->extra) >= sizeof(store))
		return fail(msg, msg_len, "extra EAL args: longer than %zu chars", sizeof(store) - 1);
	int ntok = split(cfg->extra, store, sizeof(store), tok, MAX_EXTRA);
	if (ntok < 0)
		return fail(msg, msg_len, "extra EAL args: more than %d words", MAX_EXTRA);
	const char *prefix = cfg->prefix;
	for (int i = 0; i < ntok; i++) {
		const char *t = tok[i];
		if (opt_is(t, "--lcores") || opt_is(t, "--main-lcore") || opt_is(t, "--master-lcore") ||
		    !strncmp(t, "-l", 2) || !strncmp(t, "-c", 2))
			return fail(msg, msg_len, "extra EAL args: '%s': the engine sets the lcore itself (lcore 0 "
				    "on the --cpu given); drop it and use --cpu N", t);
		if (opt_is(t, "--vdev"))
			return fail(msg, msg_len, "extra EAL args: '%s': ports are given with --port VDEV (one "
				    "--vdev per --port)", t);
		if (opt_is(t, "--file-prefix")) {
			const char *v = strchr(t, '=');
			if (v)
				v++;
			else if (i + 1 < ntok)
				v = tok[++i];
			else
				return fail(msg, msg_len, "extra EAL args: --file-prefix needs a value");
			if (prefix_ok(v, msg, msg_len, "--file-prefix"))
				return -1;
			prefix = v;
			continue;
		}
		if (!strncmp(t, "-m", 2) && (t[2] == 0 || isdigit((unsigned char)t[2])))
			out->user_mem = 1;
		for (int k = 0; mem_opts[k]; k++)
			if (opt_is(t, mem_opts[k]))
				out->user_mem = 1;
	}
	if (!prefix || !*prefix)
		return fail(msg, msg_len, "no EAL file prefix");
	if (prefix_ok(prefix, msg, msg_len, "file prefix"))
		return -1;
	snprintf(out->prefix, sizeof(out->prefix), "%s", prefix);

	struct builder b = {out, 0, 0};
	push(&b, "vswbench-engine");
	push(&b, "--no-pci");
	push(&b, "--no-telemetry");
	push(&b, "--file-prefix");
	push(&b, prefix);
	pushf(&b, "--log-level=%d", cfg->debug ? 8 : 4);
	push(&b, "--lcores");
	if (cfg->cpu >= 0)
		pushf(&b, "0@%d", cfg->cpu);
	else if (cfg->cpulist && *cfg->cpulist)
		pushf(&b, "0@(%s)", cfg->cpulist);
	else
		return fail(msg, msg_len, "no CPU for the EAL lcore (the process's CPU set is empty?)");
	if (!out->user_mem) {
		unsigned mb = cfg->mem_mb ? cfg->mem_mb : DPDK_MEM_MIN_MB;
		if (cfg->hugepages) {
			/* dynamic memory (no -m: pages are taken as the pool needs them), each file unlinked
			 * right after creation: nothing stays in hugetlbfs, even after a SIGKILL, and the fds
			 * stay open for vhost-user. (DPDK 22.11 refuses --single-file-segments with
			 * --huge-unlink, and -m with --huge-unlink=always breaks virtio-user.) */
			push(&b, "--huge-unlink=always");
			out->hugepages = 1;
		} else {
			push(&b, "--no-huge"); /* memfd-backed: shareable with vhost-user */
			push(&b, "-m");
			pushf(&b, "%u", mb);
		}
	}
	for (int i = 0; i < cfg->nvdev; i++) {
		push(&b, "--vdev");
		push(&b, cfg->vdevs[i]);
	}
	for (int i = 0; i < ntok; i++) {
		if (opt_is(tok[i], "--file-prefix")) {
			if (!strchr(tok[i], '='))
				i++;
			continue;
		}
		push(&b, tok[i]);
	}
	if (b.overflow)
		return fail(msg, msg_len, "EAL args: too many or too long (at most %d words, %d bytes)",
			    DPDK_MAX_ARGS, DPDK_ARGBUF);
	return 0;
}

void dpdk_argv_str(const struct dpdk_argv *a, char *out, size_t out_len)
{
	size_t len = 0;
	if (!out_len)
		return;
	out[0] = 0;
	for (int i = 1; i < a->argc; i++) {
		int w = snprintf(out + len, out_len - len, "%s%s", i > 1 ? " " : "", a->argv[i]);
		if (w < 0 || (size_t)w >= out_len - len)
			return;
		len += (size_t)w;
	}
}

unsigned dpdk_pool_size(unsigned nports, unsigned ring)
{
	if (!nports)
		nports = 1;
	if (!ring)
		ring = 1024;
	/* each port: an RX ring full of mbufs, a TX ring in flight, a batch being built; plus the
	 * per-lcore cache and headroom for the peer's copies */
	unsigned long need = (unsigned long)nports * (2ul * ring + 2 * 256) + 1024;
	unsigned long n = 1;
	while (n - 1 < need && n < (1ul << 20))
		n <<= 1;
	return (unsigned)(n - 1);
}

unsigned dpdk_mem_mb(unsigned pool_mbufs)
{
	/* an mbuf: 2176 bytes of buffer + 128 header + mempool object header, rounded up to 2.5 KiB;
	 * EAL and the drivers' rings and memzones need a few tens of MB besides (a pool of 8191 mbufs,
	 * 20 MB, was created in 40 MB and not in 32, --no-huge, 2026-12-02; memif's regions, by their
	 * size: 4 MB a port of 1024-frame rings). Every MB is zeroed by each vhost-user backend that
	 * maps it. */
	unsigned long mb = (unsigned long)pool_mbufs * 2560ul / (1024 * 1024) + 64;
	if (mb < DPDK_MEM_MIN_MB)
		mb = DPDK_MEM_MIN_MB;
	return (unsigned)mb;
}
