/*
 * stopbound.h: the bound on a host's stop.  A command that got SIGTERM or
 * SIGINT arms it; if the process has not exited by the deadline (commits
 * waiting for a slow disk), it exits then, leaving those commits behind.
 */
#ifndef CCW_STOPBOUND_H
#define CCW_STOPBOUND_H

#define STOPBOUND_MS	2000	/* after the tools' grace: the last commits */

int	 stopbound_arm(unsigned, int, const char *);

#endif
