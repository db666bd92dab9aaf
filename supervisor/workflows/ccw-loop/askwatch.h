/*
 * askwatch.h: inotify on a loop's answers file while it waits for
 * answers (askwatch.c).
 */
#ifndef CCW_ASKWATCH_H
#define CCW_ASKWATCH_H

struct askwatch;
struct event_base;

struct askwatch	*askwatch_new(struct event_base *, int, const char *,
		    void (*)(void *), void *);
void		 askwatch_free(struct askwatch *);

#endif
