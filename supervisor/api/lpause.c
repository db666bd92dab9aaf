/*
 * lpause.c: a listener's pause after a failed accept(2): disabled for a
 * back-off that doubles while accepts keep failing (LPAUSE_FIRST_MS to
 * LPAUSE_MAX_MS), enabled again early when one of our own connections
 * closes, the failures told once per LPAUSE_LOG_MS with the count (and
 * the end of a run of failures that was told).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "chan.h"
#include "clock.h"
#include "log.h"
#include "lpause.h"
#include "xmalloc.h"

struct lpause {
	struct evconnlistener	*lev;		/* borrowed */
	struct event		*ev;		/* the end of a pause */
	const char		*what;		/* "http", "control socket" */
	uint64_t		 delay_ms;	/* 0: accepts succeed */
	uint64_t		 failures;	/* of this run */
	uint64_t		 unsaid;	/* failures since the last message */
	uint64_t		 said_ms;	/* when the last message went */
	int			 said;		/* a message went, ever */
	int			 run_said;	/* ... in this run of failures */
};

/* The pause is over: accept again (a failure pauses anew, longer). */
static void
lpause_end(evutil_socket_t fd, short what, void *arg)
{
	struct lpause	*p = arg;

	(void)fd;
	(void)what;
	evconnlistener_enable(p->lev);
}

/* Pause lev on accept's failures; what names it in messages (borrowed). */
struct lpause *
lpause_new(struct event_base *base, struct evconnlistener *lev,
    const char *what)
{
	struct lpause	*p = xcalloc(1, sizeof *p);

	p->lev = lev;
	p->what = what;
	p->ev = evtimer_new(base, lpause_end, p);
	return p;
}

/*
 * From the listener's error callback (err: accept's errno).  Without a
 * pause the listening socket stays readable and every loop turn fails
 * again; libevent's own warning per failure is what the callback's
 * presence silences.  At most one message per period, even when runs
 * of failures come and go faster (a client churning at the limit).
 */
void
lpause_failed(struct lpause *p, int err)
{
	uint64_t	now = clock_mono_ms();

	p->delay_ms = p->delay_ms == 0 ? LPAUSE_FIRST_MS :
	    p->delay_ms * 2 > LPAUSE_MAX_MS ? LPAUSE_MAX_MS : p->delay_ms * 2;
	p->failures++;
	p->unsaid++;
	evconnlistener_disable(p->lev);
	chan_arm_ms(p->ev, p->delay_ms);
	if (p->said && now - p->said_ms < LPAUSE_LOG_MS)
		return;
	log_warnx("%s: accept: %s; paused accepting for %llu ms (%llu "
	    "failure(s) since the last message)", p->what, strerror(err),
	    (unsigned long long)p->delay_ms, (unsigned long long)p->unsaid);
	p->said_ms = now;
	p->said = 1;
	p->run_said = 1;
	p->unsaid = 0;
}

/*
 * A connection came in: a run of failures, if any, is over; told if its
 * start was (the failures not told stay counted for the next message).
 */
void
lpause_accepted(struct lpause *p)
{
	if (p->delay_ms == 0)
		return;
	if (p->run_said)
		log_warnx("%s: accepting again after %llu failed accept(s)",
		    p->what, (unsigned long long)p->failures);
	p->delay_ms = 0;
	p->failures = 0;
	p->run_said = 0;
}

/*
 * One of our descriptors was closed: a pause for want of descriptors can
 * end now rather than at its timer (NULL: nothing listens any more).
 */
void
lpause_wake(struct lpause *p)
{
	/* paused: the pause's timer runs */
	if (p == NULL || !evtimer_pending(p->ev, NULL))
		return;
	event_del(p->ev);
	lpause_end(-1, 0, p);
}

/* Before the listener is freed. */
void
lpause_free(struct lpause *p)
{
	if (p == NULL)
		return;
	event_free(p->ev);
	free(p);
}
