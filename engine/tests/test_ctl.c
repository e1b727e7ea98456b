/* Unit tests: control-line JSON parser (and the JSON writer, read back with the parser). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_parse.h"
#include "jout.h"
#include "check.h"

static struct ctl_msg m;
static char msg[256];

/* parse from a heap buffer of exactly len bytes (no NUL), so an overread is caught by ASan */
static int parse_n(const char *s, size_t len)
{
	char *b = malloc(len ? len : 1);
	memcpy(b, s, len);
	int r = ctl_parse(b, len, &m, msg, sizeof(msg));
	free(b);
	return r;
}
static int parse(const char *s) { return parse_n(s, strlen(s)); }

static void expect_bad(const char *s, const char *why)
{
	msg[0] = 0;
	int r = parse(s);
	if (r != -1)
		fprintf(stderr, "accepted bad line: %s\n", s);
	CHECK_EQ_SIGNED(r, -1);
	CHECK(msg[0] != 0);
	if (why && !strstr(msg, why))
		fprintf(stderr, "line %s: message '%s' lacks '%s'\n", s, msg, why);
	CHECK(!why || strstr(msg, why));
}

static const char *valid[] = {
	("{\"cmd\":\"trial\",\"mode\":\"loop\",\"rate\":100000,\"duration\":2,\"size\":\"64\",\"burst\":1,"
	 "\"flows\":1,\"warmup\":0.5}"),
	"{\"cmd\":\"quit\"}",
	"  { \"a\" : -1.5e3 , \"b\":true,\"c\" :false, \"d\": null ,\"e\":\"x\\\"y\\\\z\\/\\b\\f\\n\\r\\t\\u0041\"}  \r\n",
	"{}",
	"{\"\":0}",
	"{\"n\":-0,\"m\":0.25,\"k\":1E+2,\"j\":7e-1}",
};

static void test_valid(void)
{
	CHECK_EQ_SIGNED(parse(valid[0]), 0);
	CHECK_EQ_SIGNED(m.n, 8);
	const struct ctl_kv *kv = ctl_get(&m, "cmd");
	CHECK(kv && kv->is_str == 1 && strcmp(kv->str, "trial") == 0);
	kv = ctl_get(&m, "rate");
	CHECK(kv && kv->is_str == 0 && kv->num == 100000);
	kv = ctl_get(&m, "warmup");
	CHECK(kv && kv->is_str == 0 && kv->num == 0.5);
	kv = ctl_get(&m, "size");
	CHECK(kv && kv->is_str == 1 && strcmp(kv->str, "64") == 0);
	CHECK(ctl_get(&m, "nope") == NULL);

	CHECK_EQ_SIGNED(parse(valid[1]), 0);
	CHECK_EQ_SIGNED(m.n, 1);

	CHECK_EQ_SIGNED(parse(valid[2]), 0);
	CHECK_EQ_SIGNED(m.n, 5);
	kv = ctl_get(&m, "a");
	CHECK(kv && kv->is_str == 0 && kv->num == -1500);
	kv = ctl_get(&m, "b");
	CHECK(kv && kv->is_str == 2 && kv->num == 1);
	kv = ctl_get(&m, "c");
	CHECK(kv && kv->is_str == 2 && kv->num == 0);
	kv = ctl_get(&m, "d");
	CHECK(kv && kv->is_str == 3);
	kv = ctl_get(&m, "e");
	CHECK(kv && kv->is_str == 1 && strcmp(kv->str, "x\"y\\z/\b\f\n\r\tA") == 0);

	CHECK_EQ_SIGNED(parse(valid[3]), 0);
	CHECK_EQ_SIGNED(m.n, 0);
	CHECK_EQ_SIGNED(parse(valid[5]), 0);
	CHECK(ctl_get(&m, "n")->num == 0 && ctl_get(&m, "m")->num == 0.25);
	CHECK(ctl_get(&m, "k")->num == 100 && ctl_get(&m, "j")->num == 0.7);

	/* limits: key of 31 bytes ok, 32 not; string of 255 ok, 256 not; 32 keys ok, 33 not */
	char line[4096];
	snprintf(line, sizeof(line), "{\"%s\":1}", "0123456789012345678901234567890");
	CHECK_EQ_SIGNED(parse(line), 0);
	snprintf(line, sizeof(line), "{\"%s\":1}", "01234567890123456789012345678901");
	expect_bad(line, "key too long");
	char s255[300];
	memset(s255, 'x', 255);
	s255[255] = 0;
	snprintf(line, sizeof(line), "{\"s\":\"%s\"}", s255);
	CHECK_EQ_SIGNED(parse(line), 0);
	CHECK_EQ_SIGNED(strlen(ctl_get(&m, "s")->str), 255);
	snprintf(line, sizeof(line), "{\"s\":\"%sy\"}", s255);
	expect_bad(line, "too long");
	size_t n = 0;
	n += (size_t)sprintf(line + n, "{");
	for (int i = 0; i < 32; i++)
		n += (size_t)sprintf(line + n, "%s\"k%d\":%d", i ? "," : "", i, i);
	sprintf(line + n, "}");
	CHECK_EQ_SIGNED(parse(line), 0);
	CHECK_EQ_SIGNED(m.n, 32);
	CHECK(ctl_get(&m, "k31")->num == 31);
	sprintf(line + n, ",\"k32\":1}");
	expect_bad(line, "too many keys");

	/* not NUL-terminated: only len bytes count */
	const char *withtail = "{\"a\":1}garbage";
	CHECK_EQ_SIGNED(parse_n(withtail, 7), 0);
	CHECK_EQ_SIGNED(parse_n("{\"a\":1}}", 6), -1);
	CHECK_EQ_SIGNED(parse_n("{\"a\":\"xy\"}", 7), -1);
	CHECK_EQ_SIGNED(parse_n("{\"a\":tru", 7), -1);
	CHECK_EQ_SIGNED(parse_n("{\"a\":123456", 7), -1);
	CHECK_EQ_SIGNED(ctl_parse(NULL, 0, &m, msg, sizeof(msg)), -1);
	CHECK_EQ_SIGNED(ctl_parse("{}", 2, &m, NULL, 0), 0);
}

static void test_invalid(void)
{
	expect_bad("", "empty");
	expect_bad("   \n", "empty");
	expect_bad("[]", "object");
	expect_bad("\"x\"", "object");
	expect_bad("1", "object");
	expect_bad("{", "end of line");
	expect_bad("{\"a\"}", "':'");
	expect_bad("{\"a\":}", "value");
	expect_bad("{\"a\":1,}", "key");
	expect_bad("{,}", "key");
	expect_bad("{\"a\":1}x", "trailing");
	expect_bad("{\"a\":1}{}", "trailing");
	expect_bad("{\"a\":1 \"b\":2}", "','");
	expect_bad("{\"a\":truex}", "','");
	expect_bad("{\"a\":tru}", "value");
	expect_bad("{\"a\":True}", "value");
	expect_bad("{'a':1}", "key");
	expect_bad("{a:1}", "key");
	expect_bad("{\"a\":1,\"a\":2}", "duplicate key \"a\"");
	expect_bad("{\"a\":{}}", "nested");
	expect_bad("{\"a\":[1]}", "nested");
	expect_bad("{\"a\":\"x\\q\"}", "unknown escape \\q");
	expect_bad("{\"a\":\"x\\x41\"}", "unknown escape");
	expect_bad("{\"a\":\"x\\u00e9\"}", "ASCII");
	expect_bad("{\"a\":\"x\\u0000\"}", "ASCII");
	expect_bad("{\"a\":\"x\\ud83d\\ude00\"}", "ASCII");
	expect_bad("{\"a\":\"x\\u12\"}", NULL);
	expect_bad("{\"a\":\"x\\u12g4\"}", "hex");
	expect_bad("{\"a\":\"x\\", "escape");
	expect_bad("{\"a\":\"x", "unterminated");
	expect_bad("{\"a\":\"x\ty\"}", "control character");
	expect_bad("{\"a\":01}", NULL);
	expect_bad("{\"a\":1.}", "digit");
	expect_bad("{\"a\":.5}", "value");
	expect_bad("{\"a\":+1}", "value");
	expect_bad("{\"a\":1e}", "exponent");
	expect_bad("{\"a\":-}", "number");
	expect_bad("{\"a\":--1}", "number");
	expect_bad("{\"a\":1e999}", "range");
	expect_bad("{\"a\":NaN}", "value");
	expect_bad("{\"a\":Infinity}", "value");
	expect_bad("{\"a\":0x10}", "','");
	/* a NUL byte inside the line */
	CHECK_EQ_SIGNED(parse_n("{\"a\":\"x\0y\"}", 11), -1);
	CHECK_EQ_SIGNED(parse_n("{\"a\":1}\0", 8), -1);
	char longnum[100];
	memset(longnum, '1', sizeof(longnum));
	memcpy(longnum, "{\"a\":", 5);
	memcpy(longnum + 90, "}", 2);
	expect_bad(longnum, "too long");
}

/* every prefix of a valid line fails, unless it already holds the whole object; the result is the
 * same when parsed twice and never crashes */
static void test_truncation(void)
{
	for (unsigned k = 0; k < sizeof(valid) / sizeof(valid[0]); k++) {
		const char *s = valid[k];
		size_t len = strlen(s);
		size_t end = (size_t)(strrchr(s, '}') - s) + 1;
		for (size_t n = 0; n <= len; n++) {
			int r = parse_n(s, n);
			CHECK_EQ_SIGNED(r, n >= end ? 0 : -1);
			CHECK_EQ_SIGNED(parse_n(s, n), r);
			if (r == 0) {
				unsigned keys = m.n;
				CHECK_EQ_SIGNED(parse_n(s, len), 0);
				CHECK_EQ_SIGNED(m.n, keys);
			}
		}
		/* every single-byte corruption: no crash, deterministic */
		char *c = malloc(len + 1);
		for (size_t i = 0; i < len; i++) {
			const char repl[] = { '"', '\\', '{', '}', '[', ',', ':', 0, 'u', '0', '\n' };
			for (size_t j = 0; j < sizeof(repl); j++) {
				memcpy(c, s, len);
				c[i] = repl[j];
				int r = parse_n(c, len);
				CHECK_EQ_SIGNED(parse_n(c, len), r);
			}
		}
		free(c);
	}
}

/* jout: a flat record reads back through ctl_parse; nested parts by string inspection */
static void test_jout(void)
{
	char path[] = "/tmp/test_ctl_jout_XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	fflush(stdout);
	int saved = dup(1);
	dup2(fd, 1);
	struct jout j;
	jout_begin(&j);
	jout_str(&j, "type", "final");
	jout_str(&j, "esc", "q\"b\\n\n\t\x01\x7f");
	jout_str(&j, "utf8", "caf\xc3\xa9");
	jout_str(&j, "nul", NULL);
	jout_u64(&j, "u", UINT64_MAX);
	jout_i64(&j, "i", -42);
	jout_dbl(&j, "d", 1234567.25);
	jout_dbl(&j, "hz", 2899999000.0);
	jout_dbl(&j, "third", 1.0 / 3);
	jout_dbl(&j, "inf", INFINITY);
	jout_dbl(&j, "nan", NAN);
	jout_bool(&j, "t", 1);
	jout_bool(&j, "f", 0);
	jout_null(&j, "z");
	jout_emit(&j);
	static struct hist h;
	hist_reset(&h);
	for (int i = 1; i <= 1000; i++)
		hist_record(&h, (uint64_t)i * 1000);
	jout_begin(&j);
	jout_latency(&j, "latency_us", &h);
	jout_str(&j, "bad", "x\xff\xc3");
	jout_hist(&j, "hist", &h);
	jout_key_arr(&j, "a");
	jout_obj(&j);
	jout_u64(&j, "x", 1);
	jout_end_obj(&j);
	jout_arr(&j);
	jout_u64(&j, NULL, 2);
	jout_str(&j, NULL, "s");
	jout_end_arr(&j);
	jout_end_arr(&j);
	hist_reset(&h);
	jout_latency(&j, "empty", &h);
	jout_emit(&j);
	jout_begin(&j);
	jout_u64(&j, "closed", 1);
	jout_end_obj(&j);
	jout_emit(&j);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	char buf[65536];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	unlink(path);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = 0;
	char *nl = strchr(buf, '\n');
	CHECK(nl != NULL);
	if (!nl)
		return;
	CHECK_EQ_SIGNED(parse_n(buf, (size_t)(nl - buf)), 0);
	if (failures)
		fprintf(stderr, "line: %.*s\nmsg: %s\n", (int)(nl - buf), buf, msg);
	CHECK(strcmp(ctl_get(&m, "esc")->str, "q\"b\\n\n\t\x01\x7f") == 0);
	CHECK(strcmp(ctl_get(&m, "utf8")->str, "caf\xc3\xa9") == 0);
	CHECK(strstr(nl, "\"bad\":\"x\\ufffd\\ufffd\""));
	CHECK(ctl_get(&m, "nul")->is_str == 3);
	CHECK(ctl_get(&m, "u")->num == 18446744073709551615.0);
	CHECK(strstr(buf, "\"u\":18446744073709551615,"));
	CHECK(ctl_get(&m, "i")->num == -42);
	CHECK(ctl_get(&m, "d")->num == 1234567.25);
	CHECK(strstr(buf, "\"hz\":2899999000,\"third\":0.333333333,"));
	CHECK(ctl_get(&m, "inf")->is_str == 3 && ctl_get(&m, "nan")->is_str == 3);
	CHECK(ctl_get(&m, "t")->is_str == 2 && ctl_get(&m, "t")->num == 1);
	CHECK(ctl_get(&m, "f")->num == 0 && ctl_get(&m, "z")->is_str == 3);
	char *l2 = nl + 1;
	CHECK(strncmp(l2, "{\"latency_us\":{\"min\":1.000,\"p50\":", 33) == 0);
	CHECK(strstr(l2, "\"max\":1000.000,\"mean\":500.500,\"stddev\":288.675,\"count\":1000}"));
	CHECK(strstr(l2, "\"hist\":[[1000,1003,1],"));
	CHECK(strstr(l2, "[999424,1003519,1]]"));
	CHECK(strstr(l2, ",\"a\":[{\"x\":1},[2,\"s\"]],"));
	CHECK(strstr(l2, "\"empty\":{\"min\":null,\"p50\":null,\"p90\":null,\"p99\":null,\"p999\":null,"
			 "\"p9999\":null,\"max\":null,\"mean\":null,\"stddev\":null,\"count\":0}}\n"));
	char *l3 = strchr(l2, '\n');
	CHECK(l3 && strcmp(l3 + 1, "{\"closed\":1}\n") == 0);
	if (failures)
		fprintf(stderr, "%s", l2);
}

int main(void)
{
	test_valid();
	test_invalid();
	test_truncation();
	test_jout();
	return check_exit("test_ctl");
}
