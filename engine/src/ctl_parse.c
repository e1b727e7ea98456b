/* Strict parser for one flat JSON object per control line (ctl_parse.h).
 *
 * Accepted: whitespace (space, tab, CR, LF) around tokens; string values with the escapes
 * \" \\ \/ \b \f \n \r \t and \uXXXX for U+0001..U+007F (other code points are rejected); raw bytes
 * >= 0x80 are copied as they are; numbers in JSON syntax (converted with strtod, must be finite);
 * true, false, null. Rejected: nesting, duplicate keys, keys of 32 bytes or more, strings of
 * CTL_MAX_STR bytes or more, more than CTL_MAX_KEYS keys, control characters inside strings, and
 * anything but whitespace after the closing brace. The input is never read beyond len (it need not
 * be NUL-terminated). Which keys are allowed is up to the caller. */
#include "ctl_parse.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cur {
	const char *s;
	size_t len, i;
	char *msg;
	size_t msglen;
};

__attribute__((format(printf, 2, 3))) static int fail(struct cur *c, const char *fmt, ...)
{
	if (c->msg && c->msglen) {
		int n = snprintf(c->msg, c->msglen, "control line, offset %zu: ", c->i);
		if (n < 0)
			n = 0;
		if ((size_t)n < c->msglen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(c->msg + n, c->msglen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return -1;
}

static void skip_ws(struct cur *c)
{
	while (c->i < c->len) {
		char ch = c->s[c->i];
		if (ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n')
			break;
		c->i++;
	}
}

static int peek(const struct cur *c) { return c->i < c->len ? (unsigned char)c->s[c->i] : -1; }

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* String starting at the opening quote; result (NUL-terminated) into out[cap]. */
static int parse_string(struct cur *c, char *out, size_t cap, const char *what)
{
	size_t n = 0;
	c->i++; /* opening quote */
	for (;;) {
		if (c->i >= c->len)
			return fail(c, "unterminated string");
		unsigned char ch = (unsigned char)c->s[c->i];
		if (ch == '"') {
			c->i++;
			break;
		}
		if (ch < 0x20)
			return fail(c, "control character 0x%02x inside a string (escape it)", ch);
		if (ch == '\\') {
			if (c->i + 1 >= c->len)
				return fail(c, "unterminated escape");
			char e = c->s[c->i + 1];
			switch (e) {
			case '"': ch = '"'; break;
			case '\\': ch = '\\'; break;
			case '/': ch = '/'; break;
			case 'b': ch = '\b'; break;
			case 'f': ch = '\f'; break;
			case 'n': ch = '\n'; break;
			case 'r': ch = '\r'; break;
			case 't': ch = '\t'; break;
			case 'u': {
				if (c->len - c->i < 6)
					return fail(c, "truncated \\u escape");
				unsigned v = 0;
				for (int k = 0; k < 4; k++) {
					int h = hexval((unsigned char)c->s[c->i + 2 + k]);
					if (h < 0)
						return fail(c, "bad \\u escape (4 hex digits expected)");
					v = v << 4 | (unsigned)h;
				}
				if (v == 0 || v > 0x7f)
					return fail(c, "\\u%04x: only \\u0001..\\u007f (ASCII) are supported", v);
				ch = (unsigned char)v;
				c->i += 4;
				break;
			}
			default:
				if ((unsigned char)e >= 0x20 && (unsigned char)e < 0x7f)
					return fail(c, "unknown escape \\%c (valid: \\\" \\\\ \\/ \\b \\f \\n \\r "
						    "\\t \\uXXXX)", e);
				return fail(c, "unknown escape (valid: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
			}
			c->i += 2;
		} else {
			c->i++;
		}
		if (n + 1 >= cap)
			return fail(c, "%s too long (at most %zu bytes)", what, cap - 1);
		out[n++] = (char)ch;
	}
	out[n] = 0;
	return 0;
}

static int is_digit(int ch) { return ch >= '0' && ch <= '9'; }

static int parse_number(struct cur *c, double *out)
{
	size_t st = c->i;
	if (peek(c) == '-')
		c->i++;
	if (peek(c) == '0') {
		c->i++;
	} else if (is_digit(peek(c))) {
		while (is_digit(peek(c)))
			c->i++;
	} else {
		return fail(c, "bad number");
	}
	if (peek(c) == '.') {
		c->i++;
		if (!is_digit(peek(c)))
			return fail(c, "bad number: digit expected after '.'");
		while (is_digit(peek(c)))
			c->i++;
	}
	if (peek(c) == 'e' || peek(c) == 'E') {
		c->i++;
		if (peek(c) == '+' || peek(c) == '-')
			c->i++;
		if (!is_digit(peek(c)))
			return fail(c, "bad number: digit expected in exponent");
		while (is_digit(peek(c)))
			c->i++;
	}
	char buf[64];
	size_t n = c->i - st;
	if (n >= sizeof(buf)) {
		c->i = st;
		return fail(c, "number too long");
	}
	memcpy(buf, c->s + st, n);
	buf[n] = 0;
	errno = 0;
	char *end;
	double v = strtod(buf, &end);
	if (end != buf + n || !isfinite(v) || (errno == ERANGE && fabs(v) > 1)) {
		c->i = st;
		return fail(c, "number out of range");
	}
	*out = v;
	return 0;
}

static int match_word(struct cur *c, const char *w)
{
	size_t n = strlen(w);
	if (c->len - c->i < n || memcmp(c->s + c->i, w, n) != 0)
		return 0;
	c->i += n;
	return 1;
}

int ctl_parse(const char *line, size_t len, struct ctl_msg *out, char *msg, size_t msglen)
{
	struct cur c = { line, line ? len : 0, 0, msg, msglen };
	if (msg && msglen)
		msg[0] = 0;
	out->n = 0;
	skip_ws(&c);
	if (peek(&c) != '{')
		return fail(&c, "%s", c.i >= c.len ? "empty line (a JSON object expected)"
					     : "a JSON object ({...}) expected");
	c.i++;
	skip_ws(&c);
	if (peek(&c) == '}') {
		c.i++;
		goto tail;
	}
	for (;;) {
		skip_ws(&c);
		if (peek(&c) != '"')
			return fail(&c, "%s", c.i >= c.len ? "unexpected end of line (a key expected)"
						     : "a key (\"...\") expected");
		if (out->n >= CTL_MAX_KEYS)
			return fail(&c, "too many keys (at most %d)", CTL_MAX_KEYS);
		struct ctl_kv *kv = &out->kv[out->n];
		memset(kv, 0, sizeof(*kv));
		size_t key_at = c.i;
		if (parse_string(&c, kv->key, sizeof(kv->key), "key") < 0)
			return -1;
		for (unsigned k = 0; k < out->n; k++)
			if (strcmp(out->kv[k].key, kv->key) == 0) {
				c.i = key_at;
				return fail(&c, "duplicate key \"%s\"", kv->key);
			}
		skip_ws(&c);
		if (peek(&c) != ':')
			return fail(&c, "':' expected after key \"%s\"", kv->key);
		c.i++;
		skip_ws(&c);
		int ch = peek(&c);
		if (ch == '"') {
			kv->is_str = 1;
			if (parse_string(&c, kv->str, sizeof(kv->str), "string value") < 0)
				return -1;
		} else if (ch == '-' || is_digit(ch)) {
			kv->is_str = 0;
			if (parse_number(&c, &kv->num) < 0)
				return -1;
		} else if (match_word(&c, "true")) {
			kv->is_str = 2;
			kv->num = 1;
		} else if (match_word(&c, "false")) {
			kv->is_str = 2;
			kv->num = 0;
		} else if (match_word(&c, "null")) {
			kv->is_str = 3;
		} else if (ch == '{' || ch == '[') {
			return fail(&c, "value of \"%s\": nested objects and arrays are not supported",
				    kv->key);
		} else if (ch < 0) {
			return fail(&c, "unexpected end of line (a value for \"%s\" expected)", kv->key);
		} else {
			return fail(&c, "value of \"%s\": string, number, true, false or null expected",
				    kv->key);
		}
		/* a word must not run on: "truex" */
		ch = peek(&c);
		if (ch >= 0 && ch != ',' && ch != '}' && ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n')
			return fail(&c, "',' or '}' expected after the value of \"%s\"", kv->key);
		out->n++;
		skip_ws(&c);
		ch = peek(&c);
		if (ch == ',') {
			c.i++;
			continue;
		}
		if (ch == '}') {
			c.i++;
			break;
		}
		return fail(&c, "%s", ch < 0 ? "unexpected end of line ('}' missing)"
				       : "',' or '}' expected");
	}
tail:
	skip_ws(&c);
	if (c.i < c.len)
		return fail(&c, "trailing characters after the object");
	return 0;
}

const struct ctl_kv *ctl_get(const struct ctl_msg *m, const char *key)
{
	for (unsigned i = 0; i < m->n && i < CTL_MAX_KEYS; i++)
		if (strcmp(m->kv[i].key, key) == 0)
			return &m->kv[i];
	return NULL;
}
