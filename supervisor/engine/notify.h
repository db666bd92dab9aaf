/*
 * notify.h: the notification sink interface (issue 29's contract).
 * Placeholder on the webhook branch until helper NOTIFY's own notify.h
 * lands; the coordinator keeps NOTIFY's file.
 */
#ifndef CCW_NOTIFY_H
#define CCW_NOTIFY_H

#include <stddef.h>

#include <jansson.h>

struct event_base;

typedef void (*notify_done_fn)(void *arg, int ok, const char *error, unsigned attempts);
struct notify_sink_type {
	const char	*type;	/* "command", "webhook", "desktop" */
	/* conf: the sink's object; *sink: its parsed form; -1 and *err naming the key */
	int	(*parse)(const json_t *conf, const char *name, void **sink, char **err);
	/* one delivery, never blocking: done is called exactly once, later, on base */
	void	(*send)(void *sink, struct event_base *base, const char *body, size_t len,
		    notify_done_fn done, void *arg);
	/* cancels what is in flight (no done after it) and frees */
	void	(*free)(void *sink);
};

#endif
