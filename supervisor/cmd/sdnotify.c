/*
 * sdnotify.c: systemd's notification protocol written by hand: one
 * AF_UNIX datagram per state to the socket $NOTIFY_SOCKET names (a path,
 * or '@' for an abstract name), so that serve needs no libsystemd.
 */
#include <config.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "sdnotify.h"
#include "xmalloc.h"

/*
 * $NOTIFY_SOCKET taken out of the environment (NULL: not under a notify
 * unit): the agents serve starts must not speak for it to systemd.
 */
char *
sdnotify_take(void)
{
	const char	*v = getenv("NOTIFY_SOCKET");
	char		*s;

	if (v == NULL || *v == '\0')
		return NULL;
	s = xstrdup(v);
	unsetenv("NOTIFY_SOCKET");
	return s;
}

/*
 * Send MSG ("READY=1", ...) to the socket named by SOCK, as systemd's
 * sd_notify does: a path, or '@' for the abstract namespace.  Nothing to
 * do without one; a failure is logged, never fatal (systemd then gives
 * up on the unit, which says why).  0, or -1.
 */
int
sdnotify_send(const char *sock, const char *msg)
{
	struct sockaddr_un	 sun;
	socklen_t		 len;
	size_t			 n;
	int			 fd, rc = -1;

	if (sock == NULL)
		return 0;
	n = strlen(sock);
	if ((sock[0] != '/' && sock[0] != '@') || n < 2 ||
	    n > sizeof sun.sun_path) {
		log_warnx("NOTIFY_SOCKET %s: not an absolute path or "
		    "@abstract name", sock);
		return -1;
	}
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, sock, n);
	if (sock[0] == '@')
		sun.sun_path[0] = '\0';
	/* an abstract name is exactly its bytes: no trailing NUL counted */
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
	    (sock[0] == '@' ? 0 : 1));
	if (n == sizeof sun.sun_path && sock[0] == '/')
		len--;
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0) {
		log_warn("NOTIFY_SOCKET: socket");
		return -1;
	}
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL,
	    (struct sockaddr *)&sun, len) >= 0)
		rc = 0;
	else
		log_warn("NOTIFY_SOCKET %s: %s", sock, msg);
	close(fd);
	return rc;
}

/*
 * RELOADING=1 with the monotonic clock in microseconds, as systemd 253's
 * Type=notify-reload wants it (older ones ignore the field).
 */
int
sdnotify_reloading(const char *sock)
{
	struct timespec	 ts;
	char		 msg[80];

	if (sock == NULL)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(msg, sizeof msg, "RELOADING=1\nMONOTONIC_USEC=%llu",
	    (unsigned long long)ts.tv_sec * 1000000ULL +
	    (unsigned long long)ts.tv_nsec / 1000ULL);
	return sdnotify_send(sock, msg);
}
