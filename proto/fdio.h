/*
 * fdio.h: whole writes to a descriptor, through EINTR and short writes:
 * the one loop every file writer of both programs uses.
 */
#ifndef CCW_FDIO_H
#define CCW_FDIO_H

#include <stddef.h>

int	fd_write_all(int, const void *, size_t);	/* 0, or -1 with errno */

#endif
