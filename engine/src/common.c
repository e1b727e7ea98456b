/* Error codes and messages, exit status mapping, the stop flag (common.h). */
#include "common.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

volatile int vsb_stop;

static const char *const err_msg[VSB_ERR__COUNT] = {
	[VSB_OK] = "success",
	[VSB_ERR_USAGE] = "bad usage",
	[VSB_ERR_UNSUPPORTED] = "not supported here",
	[VSB_ERR_NETNS] = "cannot enter the network namespace",
	[VSB_ERR_IFACE] = "interface missing or unusable",
	[VSB_ERR_SOCKET] = "socket or ring setup failed",
	[VSB_ERR_PERM] = "permission denied (needs root or CAP_NET_RAW/CAP_NET_ADMIN)",
	[VSB_ERR_NOMEM] = "out of memory",
	[VSB_ERR_IO] = "send/receive failure",
	[VSB_ERR_CONTROL] = "malformed control command",
};

const char *vsb_strerror(int err)
{
	if (err < 0 || err >= VSB_ERR__COUNT || !err_msg[err])
		return "unknown error";
	return err_msg[err];
}

int vsb_exit_code(int err)
{
	switch (err) {
	case VSB_OK:
		return 0;
	case VSB_ERR_USAGE:
	case VSB_ERR_CONTROL:
	case VSB_ERR_NETNS: /* a namespace or interface that does not exist is bad input */
	case VSB_ERR_IFACE:
		return 2;
	case VSB_ERR_UNSUPPORTED:
	case VSB_ERR_PERM:
		return 3;
	default:
		return 1;
	}
}

int vsb_fail(struct vsb_error *e, int code, const char *fmt, ...)
{
	if (e) {
		e->code = code;
		e->msg[0] = 0;
		if (fmt) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
			va_end(ap);
		}
	}
	return code;
}

struct at_once_call {
	void (*fn)(void *);
	void *arg;
};

static void *at_once_main(void *call)
{
	struct at_once_call *c = call;
	c->fn(c->arg);
	return NULL;
}

void vsb_at_once(void (*fn)(void *), void *const *args, int n)
{
	enum { MAX_AT_ONCE = 64 };
	pthread_t th[MAX_AT_ONCE];
	struct at_once_call calls[MAX_AT_ONCE];
	int started[MAX_AT_ONCE] = {0};
	int i;
	for (i = 0; i < n; i++) {
		int threaded = i < n - 1 && i < MAX_AT_ONCE;
		if (threaded) {
			calls[i] = (struct at_once_call){fn, args[i]};
			started[i] = !pthread_create(&th[i], NULL, at_once_main, &calls[i]);
		}
		if (!threaded || !started[i])
			fn(args[i]);
	}
	for (i = 0; i < n && i < MAX_AT_ONCE; i++)
		if (started[i])
			pthread_join(th[i], NULL);
}
