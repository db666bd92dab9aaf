/*
 * stopbound.h: the bound on a host's stop.  A command that got SIGTERM or
 * SIGINT arms it; if the command has not ended by the deadline (commits
 * waiting for a slow disk), the process exits then, leaving them behind.
 */
#ifndef CCW_STOPBOUND_H
#define CCW_STOPBOUND_H

#define STOPBOUND_MS	2000	/* after the tools' grace: the last commits */

int	 stopbound_arm(unsigned, int, const char *);
void	 stopbound_end(void);

#endif
