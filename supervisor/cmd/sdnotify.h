/*
 * sdnotify.h: systemd's notification protocol (sd_notify(3)) by hand,
 * for `serve` under a Type=notify unit: READY=1, RELOADING=1, STOPPING=1
 * as datagrams to $NOTIFY_SOCKET, without libsystemd.
 */
#ifndef CCW_SDNOTIFY_H
#define CCW_SDNOTIFY_H

char	*sdnotify_take(void);
int	 sdnotify_send(const char *, const char *);
int	 sdnotify_reloading(const char *);

#endif
