/*
 * fdio.c: whole writes to a descriptor.  A write that makes no progress
 * is an error (EIO), never a busy loop.
 */
#include "config.h"

#include <errno.h>
#include <unistd.h>

#include "fdio.h"

/* Every byte, or -1 with errno saying why. */
int
fd_write_all(int fd, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
