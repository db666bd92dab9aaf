/*
 * notifyconf.c: the configuration's top-level `notify` key, checked as
 * strictly as config.c's keys (every error names its key path, e.g.
 * "notify.sinks.ops.argv"); the checked object is kept whole in
 * config.notify and each host's notifier (notify.c) builds from it.
 *
 *	"notify": {
 *	  "debounce_ms": 60000, "stuck_ms": 600000, "held_ms": 600000,
 *	  "sinks": { "NAME": { "type": "command" | "webhook" | "desktop",
 *	                       ...the type's keys (notifysink.c) } },
 *	  "rules": [ { "on": ["failed", "completed"], "sink": "NAME" } ]
 *	}
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "notify.h"
#include "xmalloc.h"

/* A message naming the file first, as config.c's do; -1. */
static int
notify_conf_error(char **err, const char *file, char *msg)
{
	free(*err);
	xasprintf(err, "%s: %s", file, msg);
	free(msg);
	return -1;
}

/* notify's own keys: known ones only, the *_ms ones integers >= 0. */
static int
notify_conf_keys(const json_t *n, char **msg)
{
	static const char *const	 known[] = { "debounce_ms",
					    "stuck_ms", "held_ms", "sinks",
					    "rules", NULL };
	const char			*key;
	json_t				*v;

	if (notify_keys(n, "notify", known, msg) != 0)
		return -1;
	json_object_foreach((json_t *)n, key, v)
		if (strcmp(key, "sinks") != 0 && strcmp(key, "rules") != 0 &&
		    (!json_is_integer(v) || json_integer_value(v) < 0)) {
			xasprintf(msg, "notify.%s: expected a non-negative "
			    "integer", key);
			return -1;
		}
	return 0;
}

/* Every sink parsed by its type (then let go): a bad one is named. */
static int
notify_conf_sinks(const json_t *sinks, char **msg)
{
	const struct notify_sink_type	*t;
	const char			*name;
	json_t				*v;
	void				*s;

	if (sinks != NULL && !json_is_object(sinks)) {
		xasprintf(msg, "notify.sinks: expected an object");
		return -1;
	}
	json_object_foreach((json_t *)sinks, name, v) {
		if (notify_sink_parse(v, name, &t, &s, msg) != 0)
			return -1;
		t->free(s);
	}
	return 0;
}

/* A rule's "on": a kind's word or an array of them, each in the table. */
static int
notify_conf_on(const json_t *on, size_t r, char **msg)
{
	const json_t	*v;
	char		*l;
	size_t		 i;

	if (json_is_string(on) || !json_is_array(on) ||
	    json_array_size(on) == 0) {
		if (json_is_string(on) && notify_kind_find(
		    json_string_value(on)) != NULL)
			return 0;
		l = notify_kind_list();
		xasprintf(msg, "notify.rules[%zu].on: expected kinds (an "
		    "array of: %s)", r, l);
		free(l);
		return -1;
	}
	json_array_foreach(on, i, v) {
		if (notify_kind_find(json_string_value(v)) != NULL)
			continue;
		l = notify_kind_list();
		xasprintf(msg, "notify.rules[%zu].on[%zu]: unknown kind '%s' "
		    "(one of: %s)", r, i, json_is_string(v) ?
		    json_string_value(v) : "", l);
		free(l);
		return -1;
	}
	return 0;
}

/* Each rule: {"on": kinds, "sink": a name of notify.sinks}. */
static int
notify_conf_rules(const json_t *rules, const json_t *sinks, char **msg)
{
	static const char *const	 known[] = { "on", "sink", NULL };
	const json_t			*rule, *sink;
	char				*path;
	size_t				 i;
	int				 rc;

	if (rules != NULL && !json_is_array(rules)) {
		xasprintf(msg, "notify.rules: expected an array");
		return -1;
	}
	json_array_foreach(rules, i, rule) {
		if (!json_is_object(rule)) {
			xasprintf(msg, "notify.rules[%zu]: expected an "
			    "object", i);
			return -1;
		}
		xasprintf(&path, "notify.rules[%zu]", i);
		rc = notify_keys(rule, path, known, msg);
		free(path);
		if (rc != 0)
			return -1;
		if (notify_conf_on(json_object_get(rule, "on"), i, msg) != 0)
			return -1;
		sink = json_object_get(rule, "sink");
		if (!json_is_string(sink)) {
			xasprintf(msg, "notify.rules[%zu].sink: expected the "
			    "name of a sink (a key of notify.sinks)", i);
			return -1;
		}
		if (json_object_get(sinks,
		    json_string_value(sink)) == NULL) {
			xasprintf(msg, "notify.rules[%zu].sink: unknown sink "
			    "'%s' (not a key of notify.sinks)", i,
			    json_string_value(sink));
			return -1;
		}
	}
	return 0;
}

/*
 * The config file's root: its `notify` (absent or null: none) checked
 * and copied into *dst (replacing what was there); -1 and *err ("FILE:
 * notify.KEY...: why").
 */
int
notify_conf_apply(const char *file, const json_t *root, json_t **dst,
    char **err)
{
	const json_t	*n = json_object_get(root, "notify");
	char		*msg = NULL;

	if (n == NULL)
		return 0;
	json_decref(*dst);
	*dst = NULL;
	if (json_is_null(n))
		return 0;
	if (!json_is_object(n))
		return notify_conf_error(err, file, xstrdup("notify: expected "
		    "an object"));
	if (notify_conf_keys(n, &msg) != 0 ||
	    notify_conf_sinks(json_object_get(n, "sinks"), &msg) != 0 ||
	    notify_conf_rules(json_object_get(n, "rules"),
	    json_object_get(n, "sinks"), &msg) != 0)
		return notify_conf_error(err, file, msg);
	*dst = json_deep_copy(n);
	return 0;
}
