/* The receive side when the kernel accounts the frames (io_kern_ops, --io xdplive): sink mode and
 * the loop's drain and collection (kern_rx.c). */
#ifndef VSB_KERN_RX_H
#define VSB_KERN_RX_H
#include <stdint.h>

struct engine;
struct port;
struct trial_params;
struct trial_result;

/* sink mode with a kernel-accounting backend. */
int run_sink_kern(struct engine *en, const struct trial_params *t, struct trial_result *r);
/* Wait (at most drain_s, or until nothing arrived for quiet_s when > 0) until the kernel sink has
 * `sent` distinct frames; then collect them. */
void kern_rx_finish(struct engine *en, struct port *rxp, uint64_t sent, double drain_s, double quiet_s,
		    double *rx_s);
/* Frames the receive port has seen so far (kernel or userspace accounting). */
uint64_t rx_seen_now(struct engine *en, struct port *rxp);
#endif
