/* AF_XDP backend extras: what an opened port ended up using. */
#ifndef VSB_IO_AFXDP_H
#define VSB_IO_AFXDP_H
#include "io.h"

/* XDP attach mode of the redirect program: "native", "generic", or "none" (TX-only port: no
 * program attached). */
const char *io_afxdp_mode_used(struct io_port *p);
/* Which redirect program: "libxdp" (libxdp's default program), "builtin" (the backend's own
 * XSKMAP program), or "none". */
const char *io_afxdp_prog_used(struct io_port *p);
/* Socket bind mode: "copy" or "zerocopy". */
const char *io_afxdp_bind_used(struct io_port *p);

#endif
