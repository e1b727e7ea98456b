/* Whole-message writes and partial reads on non-blocking sockets (vswbench-sockapp). */
#ifndef VSB_SA_IO_H
#define VSB_SA_IO_H
#include <stddef.h>
#include <sys/types.h>

#define SA_BUF (1u << 20)   /* every read and write buffer: 1 MiB */

int sa_write_all(int fd, const char *buf, size_t n);
ssize_t sa_read_some(int fd, char *buf, size_t cap);

#endif
