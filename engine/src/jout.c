/* JSON-lines writer (jout.h). One growable buffer per record; jout_emit() writes it with a single
 * fwrite and frees it. Strings are escaped per RFC 8259; bytes that are not valid UTF-8 are written
 * as \ufffd so the line is always valid JSON. Doubles: integral values below 1e15 exactly, others
 * with %.9g; non-finite -> null. jout_emit() closes whatever objects are still open (callers may
 * or may not close the top-level object themselves; arrays must be closed by the caller). */
#include "jout.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void grow(struct jout *j, size_t need)
{
	if (j->len + need + 1 <= j->cap)
		return;
	size_t cap = j->cap ? j->cap : 1024;
	while (cap < j->len + need + 1)
		cap *= 2;
	char *b = realloc(j->buf, cap);
	if (!b) {
		fputs("vswbench-engine: out of memory writing a JSON record\n", stderr);
		abort();
	}
	j->buf = b;
	j->cap = cap;
}

static void put(struct jout *j, const char *s, size_t n)
{
	grow(j, n);
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = 0;
}

static void putc_(struct jout *j, char ch) { put(j, &ch, 1); }

__attribute__((format(printf, 2, 3))) static void putf(struct jout *j, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(tmp)) {
		put(j, tmp, (size_t)n);
		return;
	}
	grow(j, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(j->buf + j->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	j->len += (size_t)n;
}

/* length of a valid UTF-8 sequence at s (1..4), 0 if invalid */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0))
			return 0; /* overlong / surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

static void put_string(struct jout *j, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	putc_(j, '"');
	while (*p) {
		unsigned char c = *p;
		const char *esc = NULL;
		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		default: break;
		}
		if (esc) {
			put(j, esc, 2);
			p++;
		} else if (c < 0x20) {
			putf(j, "\\u%04x", c);
			p++;
		} else if (c < 0x80) {
			putc_(j, (char)c);
			p++;
		} else {
			/* utf8_len reads at most up to the first byte that is not a continuation byte,
			 * so it never passes the terminating NUL */
			size_t n = utf8_len(p);
			if (n) {
				put(j, (const char *)p, n);
				p += n;
			} else {
				put(j, "\\ufffd", 6);
				p++;
			}
		}
	}
	putc_(j, '"');
}

/* comma and key before a value or an opening bracket */
static void prefix(struct jout *j, const char *key)
{
	if (j->need_comma)
		putc_(j, ',');
	if (key) {
		put_string(j, key);
		putc_(j, ':');
	}
	j->need_comma = 1;
}

static void open_(struct jout *j, const char *key, char ch)
{
	prefix(j, key);
	putc_(j, ch);
	j->need_comma = 0;
	j->depth++;
}

static void close_(struct jout *j, char ch)
{
	putc_(j, ch);
	if (j->depth > 0)
		j->depth--;
	j->need_comma = 1;
}

void jout_begin(struct jout *j)
{
	j->buf = NULL;
	j->len = j->cap = 0;
	j->need_comma = 0;
	j->depth = 0;
	open_(j, NULL, '{');
}

void jout_key_obj(struct jout *j, const char *key) { open_(j, key, '{'); }
void jout_key_arr(struct jout *j, const char *key) { open_(j, key, '['); }
void jout_obj(struct jout *j) { open_(j, NULL, '{'); }
void jout_arr(struct jout *j) { open_(j, NULL, '['); }
void jout_end_obj(struct jout *j) { close_(j, '}'); }
void jout_end_arr(struct jout *j) { close_(j, ']'); }

void jout_str(struct jout *j, const char *key, const char *v)
{
	prefix(j, key);
	if (v)
		put_string(j, v);
	else
		put(j, "null", 4);
}

void jout_u64(struct jout *j, const char *key, uint64_t v)
{
	prefix(j, key);
	putf(j, "%llu", (unsigned long long)v);
}

void jout_i64(struct jout *j, const char *key, int64_t v)
{
	prefix(j, key);
	putf(j, "%lld", (long long)v);
}

void jout_dbl(struct jout *j, const char *key, double v)
{
	prefix(j, key);
	if (!isfinite(v))
		put(j, "null", 4);
	else if (v == floor(v) && fabs(v) < 1e15)
		putf(j, "%.0f", v); /* integral values (counts, Hz) exactly, without an exponent */
	else
		putf(j, "%.9g", v);
}

void jout_bool(struct jout *j, const char *key, int v)
{
	prefix(j, key);
	if (v)
		put(j, "true", 4);
	else
		put(j, "false", 5);
}

void jout_null(struct jout *j, const char *key)
{
	prefix(j, key);
	put(j, "null", 4);
}

/* ns -> us with 3 decimals */
static void us3(struct jout *j, const char *key, double ns, int valid)
{
	prefix(j, key);
	if (!valid || !isfinite(ns))
		put(j, "null", 4);
	else
		putf(j, "%.3f", ns / 1000.0);
}

void jout_latency(struct jout *j, const char *key, const struct hist *h)
{
	int ok = h && h->count > 0;
	jout_key_obj(j, key);
	us3(j, "min", ok ? (double)h->min : 0, ok);
	us3(j, "p50", ok ? (double)hist_quantile(h, 0.50) : 0, ok);
	us3(j, "p90", ok ? (double)hist_quantile(h, 0.90) : 0, ok);
	us3(j, "p99", ok ? (double)hist_quantile(h, 0.99) : 0, ok);
	us3(j, "p999", ok ? (double)hist_quantile(h, 0.999) : 0, ok);
	us3(j, "p9999", ok ? (double)hist_quantile(h, 0.9999) : 0, ok);
	us3(j, "max", ok ? (double)h->max : 0, ok);
	us3(j, "mean", ok ? h->mean : 0, ok);
	us3(j, "stddev", ok ? hist_stddev(h) : 0, ok);
	jout_u64(j, "count", h ? h->count : 0);
	jout_end_obj(j);
}

void jout_hist(struct jout *j, const char *key, const struct hist *h)
{
	jout_key_arr(j, key);
	for (unsigned i = 0; h && i < HIST_BUCKETS; i++) {
		if (!h->b[i])
			continue;
		prefix(j, NULL);
		putf(j, "[%llu,%llu,%llu]", (unsigned long long)hist_bucket_low(i),
		     (unsigned long long)hist_bucket_high(i), (unsigned long long)h->b[i]);
	}
	jout_end_arr(j);
}

void jout_emit_batched(struct jout *j)
{
	/* close the top-level object (and anything left open: callers close their arrays) */
	while (j->depth > 0)
		close_(j, '}');
	putc_(j, '\n');
	fwrite(j->buf, 1, j->len, stdout);
	free(j->buf);
	j->buf = NULL;
	j->len = j->cap = 0;
	j->need_comma = 0;
}

void jout_emit(struct jout *j)
{
	jout_emit_batched(j);
	fflush(stdout);
}
