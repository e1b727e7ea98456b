/* The table of compiled-in I/O backends. A new backend adds one line here. */
#include <string.h>
#include <stdio.h>
#include "io.h"

const struct io_ops *const io_backends[] = {
	&io_afpacket_ops,
	&io_udp_ops,
#ifdef VSB_HAVE_AFXDP
	&io_afxdp_ops,
#endif
#ifdef VSB_HAVE_DPDK
	&io_dpdk_ops,
#endif
#ifdef VSB_HAVE_XDPLIVE
	&io_xdplive_ops,
#endif
	NULL,
};

const struct io_ops *io_find(const char *name)
{
	for (unsigned i = 0; io_backends[i]; i++)
		if (strcmp(io_backends[i]->name, name) == 0)
			return io_backends[i];
	return NULL;
}

int io_size_check(const struct io_ops *ops, const struct size_seq *s, const char *port, int mtu,
		  char *msg, size_t msglen)
{
	unsigned max = 0;
	for (unsigned i = 0; i < s->n; i++)
		max = s->sizes[i] > max ? s->sizes[i] : max;
	if (max > ops->max_frame) {
		snprintf(msg, msglen, "--size %u: --io %s carries frames up to %u B; use --io afpacket for "
			 "frames above %u B", max, ops->name, ops->max_frame, ops->max_frame);
		return -1;
	}
	/* Frames up to 1518 B are left to the port as ever; a larger one needs an MTU to match. */
	if (max > FRAME_STD_MAX && mtu > 0 && max > (unsigned)mtu + ETH_HDR_LEN + FCS_LEN) {
		snprintf(msg, msglen, "--size %u: port %s has MTU %d, which carries frames up to %d B; "
			 "raise its MTU to at least %u (ip link set %s mtu 9000)", max, port, mtu,
			 mtu + ETH_HDR_LEN + FCS_LEN, max - ETH_HDR_LEN - FCS_LEN, port);
		return -1;
	}
	return 0;
}
