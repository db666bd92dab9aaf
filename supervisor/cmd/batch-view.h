/*
 * batch-view.h: a batch on a terminal (live lines redrawn in place, a
 * line per ended item) and the summary table at its end.  Every call
 * but the summary takes a NULL view (not a terminal) and does nothing.
 */
#ifndef CCW_BATCH_VIEW_H
#define CCW_BATCH_VIEW_H

#include <stdio.h>

#include <jansson.h>

struct batch;
struct batch_view;
struct event_base;

struct batch_view *batch_view_new(struct event_base *, FILE *);
void	 batch_view_attach(struct batch_view *, struct batch *);
void	 batch_view_event(struct batch_view *, const char *, const json_t *);
void	 batch_view_end(struct batch_view *);
void	 batch_view_free(struct batch_view *);
void	 batch_view_summary(FILE *, const json_t *);

#endif
