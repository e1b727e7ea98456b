/* The table of compiled-in I/O backends. A new backend adds one line here. */
#include <string.h>
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
