/* Control mode: parse one command line, a flat JSON object of string/number/bool values, e.g.
 *   {"cmd":"trial","rate":100000,"duration":2.5,"size":"64","burst":1,"flows":1,"warmup":0.5}
 *   {"cmd":"quit"}
 * Unknown keys are an error (named in msg). Nested objects/arrays are rejected. */
#ifndef VSB_CTL_PARSE_H
#define VSB_CTL_PARSE_H
#include <stddef.h>

#define CTL_MAX_KEYS 32
#define CTL_MAX_STR 256

struct ctl_kv {
	char key[32];
	int is_str;          /* 1 string, 0 number, 2 bool, 3 null */
	char str[CTL_MAX_STR];
	double num;
};

struct ctl_msg {
	unsigned n;
	struct ctl_kv kv[CTL_MAX_KEYS];
};

/* 0 ok; -1 malformed (msg says where and why). Never reads beyond len. */
int ctl_parse(const char *line, size_t len, struct ctl_msg *out, char *msg, size_t msglen);
const struct ctl_kv *ctl_get(const struct ctl_msg *m, const char *key);

#endif
