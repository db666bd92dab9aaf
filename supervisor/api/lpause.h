/*
 * lpause.h: the back-off of a listener whose accept(2) fails (out of
 * descriptors: EMFILE, ENFILE): accepting paused instead of spinning on
 * a socket that stays readable, one message per period.  serve's HTTP
 * listener and the control socket share it.
 */
#ifndef CCW_LPAUSE_H
#define CCW_LPAUSE_H

#include <stdint.h>

struct event_base;
struct evconnlistener;
struct lpause;

#define LPAUSE_FIRST_MS	100	/* the first pause of a run of failures */
#define LPAUSE_MAX_MS	1000	/* each next one doubles, up to this */
#define LPAUSE_LOG_MS	10000	/* at most one message per this period */

struct lpause	*lpause_new(struct event_base *, struct evconnlistener *,
		    const char *);
void		 lpause_failed(struct lpause *, int);
void		 lpause_accepted(struct lpause *);
void		 lpause_wake(struct lpause *);
void		 lpause_free(struct lpause *);

#endif
