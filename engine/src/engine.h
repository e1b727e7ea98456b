/* The engine: its ports, its backend, the frame template and the receive accounting, from
 * engine_setup to engine_teardown (engine.c). What one trial does is trial.h; the modes, modes.h. */
#ifndef VSB_ENGINE_H
#define VSB_ENGINE_H
#include <stdint.h>
#include "frame.h"
#include "io.h"
#include "netutil.h"
#include "opts.h"
#include "rxstats.h"

struct mode_def;

struct port {
	const char *name;
	struct iface_info info;
	struct io_port *io;
	uint8_t out_dmac[6];   /* fwd --rewrite-mac: destination MAC for frames leaving this port */
};

struct engine {
	struct opts o;
	const struct mode_def *mode;     /* the command being run (modes.h) */
	const struct mode_def *modes;    /* the table of modes (control mode looks its trials up here) */
	const struct io_ops *ops;
	struct port ports[MAX_PORTS];
	int nports;
	struct frame_tmpl *tmpl;
	struct rxstats rx;
	int trials;                      /* control mode counter */
	uint64_t rx_seen;                /* frames received (any kind), for interval records */
	uint64_t churn_base;             /* churn: flow id offset of the next run (fresh tuples) */
};

/* Enter the netns, pin, open the ports of en->mode, build the template. 0, or an error code with e
 * filled. */
int engine_setup(struct engine *en, struct vsb_error *e);
/* Can the backend and every port (its MTU) carry the sizes of s? 0, or VSB_ERR_USAGE with e naming
 * the size, the limit and the fix. */
int engine_size_check(const struct engine *en, const struct size_seq *s, struct vsb_error *e);
void engine_teardown(struct engine *en);

/* Parse and account a batch of received frames into en->rx. */
void rx_account_batch(struct engine *en, struct io_buf *b, unsigned n, uint64_t now);
#endif
