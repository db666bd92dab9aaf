/*
 * notify.h: notifications (issue 29): the config's `notify` rules map
 * event kinds (notifykind.c, the one table of kinds) to sinks (the sink
 * types table, notifysink.c: command, webhook, desktop).  A host's
 * notifier (notify.c) observes its bus, debounces per (loop, kind),
 * delivers without ever blocking the base, and writes a failed delivery
 * to the dead-letter log, the bus (notify_failed) and the meter.
 */
#ifndef CCW_NOTIFY_H
#define CCW_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct bus;
struct children;
struct event_base;
struct meter;
struct notify;

#define NOTIFY_DEBOUNCE_MS	60000	/* the config's defaults */
#define NOTIFY_STUCK_MS		600000
#define NOTIFY_HELD_MS		600000
#define NOTIFY_TIMEOUT_MS	10000	/* a command sink's deadline */
#define NOTIFY_DEAD_FILE	"notify.dead.jsonl"

/* A delivery's end: ok 1, or 0 and why; attempts made (webhook retries). */
typedef void (*notify_done_fn)(void *arg, int ok, const char *error,
    unsigned attempts);

/* A sink type: one row of notifysink.c's table (the contract's). */
struct notify_sink_type {
	const char	*type;	/* "command", "webhook", "desktop" */
	/* conf: the sink's object; *sink: its parsed form; -1 and *err naming the key */
	int	(*parse)(const json_t *conf, const char *name, void **sink,
		    char **err);
	/* one delivery, never blocking: done is called exactly once, later, on base */
	void	(*send)(void *sink, struct event_base *base, const char *body,
		    size_t len, notify_done_fn done, void *arg);
	/* cancels what is in flight (no done after it) and frees */
	void	(*free)(void *sink);
	/* optional (NULL: none needed): the process's one reaper, for a
	   sink that runs a child (command, desktop); before any send */
	void	(*attach)(void *sink, struct children *);
};

/* One kind: a row of notifykind.c's table. */
struct notify_kind {
	const char	*name;		/* the config's word */
	const char	*event;		/* the bus event; NULL: a timer's */
	const char	*final_status;	/* LOOP_COMPLETED's, else NULL */
	const char	*says;		/* the text's words: "failed" */
};

/* What a host hands its notifier (borrowed for its life). */
struct notify_env {
	struct event_base	*base;
	struct children		*children;	/* command, desktop children */
	struct bus		*bus;		/* observed; notify_failed */
	struct meter		*meter;		/* counts; NULL: none */
	const char		*state_dir;	/* the dead-letter log's */
	/* is this loop one of the host's? NULL: every loop is */
	int			(*mine)(void *, const char *);
	void			*arg;
	int			 lead;	/* takes events of no loop (batch,
					   provider holds) on a shared bus */
};

/* notifykind.c */
const struct notify_kind *notify_kind_find(const char *);
const struct notify_kind *notify_kind_of(const char *, const json_t *);
const struct notify_kind *notify_kind_at(size_t);
size_t		 notify_kind_count(void);
char		*notify_kind_list(void);
char		*notify_join(const char *(*)(size_t), size_t);
char		*notify_kind_text(const struct notify_kind *, const char *,
		    const json_t *);

/* notifysink.c */
const struct notify_sink_type *notify_sink_find(const char *);
char		*notify_sink_list(void);
int		 notify_keys(const json_t *, const char *, const char *const *,
		    char **);
int		 notify_sink_parse(const json_t *, const char *,
		    const struct notify_sink_type **, void **, char **);

/* notifyconf.c: the config's `notify` checked; *dst its copy (or NULL) */
int		 notify_conf_apply(const char *, const json_t *, json_t **,
		    char **);

/* notify.c */
struct notify	*notify_new(const struct notify_env *, const json_t *,
		    char **);
void		 notify_free(struct notify *);
struct notify	*notify_solo(struct event_base *, struct children *,
		    const json_t *, const char *, char **);
void		 notify_feed(struct notify *, const char *, const char *,
		    const json_t *);
int		 notify_wait(struct notify *, const char *, void (*)(void *),
		    void *);

#endif
