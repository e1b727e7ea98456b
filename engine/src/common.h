/* Shared definitions for vswbench-engine: error codes, small helpers. */
#ifndef VSB_COMMON_H
#define VSB_COMMON_H

#include <stddef.h>
#include <stdint.h>

#define VSB_VERSION "0.1.0"

/* Numbered errors, each with a message (vsb_strerror). Exit status follows vsb_exit_code(). */
enum vsb_err {
	VSB_OK = 0,
	VSB_ERR_USAGE = 1,       /* bad option or value: exit 2 */
	VSB_ERR_UNSUPPORTED = 2, /* backend/feature not usable here: exit 3 */
	VSB_ERR_NETNS = 3,       /* cannot enter namespace */
	VSB_ERR_IFACE = 4,       /* interface missing or unusable */
	VSB_ERR_SOCKET = 5,      /* socket/ring setup failed */
	VSB_ERR_PERM = 6,        /* needs root / capability */
	VSB_ERR_NOMEM = 7,
	VSB_ERR_IO = 8,          /* runtime send/receive failure */
	VSB_ERR_CONTROL = 9,     /* malformed control command */
	VSB_ERR__COUNT
};

const char *vsb_strerror(int err);
int vsb_exit_code(int err); /* 0 ok, 2 usage, 3 unsupported, 1 otherwise */

/* Error detail buffer filled by setup code; printed on stderr by main. */
struct vsb_error {
	int code;
	char msg[512];
};
int vsb_fail(struct vsb_error *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define VSB_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define VSB_MIN(a, b) ((a) < (b) ? (a) : (b))
#define VSB_MAX(a, b) ((a) > (b) ? (a) : (b))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* fn(args[i]) for i in 0..n-1 at once: n - 1 threads and the caller, all done when it returns (a
 * call whose thread cannot start runs in the caller). For releases that each wait on the kernel:
 * concurrent waits for an RCU grace period share one. */
void vsb_at_once(void (*fn)(void *), void *const *args, int n);

/* Set by SIGINT/SIGTERM handler; every loop checks it. */
extern volatile int vsb_stop;

#endif
