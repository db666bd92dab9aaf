/*
 * launch.c: launchers.  Parses one from the configuration or the command
 * line, builds the argv that starts ccw-worker --stdio behind it, and
 * says how long a remote agent may stay silent (agent.c's heartbeat: a
 * PING every ping_ms, the agent lost after misses of them).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "log.h"
#include "xmalloc.h"

/*
 * A launcher written as one string: words split at blanks.  Quotes are
 * refused rather than half-understood: a word with a blank in it needs
 * the configuration's array form.  "local" (or nothing) is no launcher.
 */
int
launch_parse_string(const char *s, struct strv *argv, char **err)
{
	char	*copy, *word, *save = NULL;

	strv_clear(argv);
	if (strpbrk(s, "'\"\\") != NULL) {
		xasprintf(err, "launcher '%s': quotes and backslashes are not "
		    "understood here; give the configuration's \"launcher\" "
		    "as an array of words", s);
		return -1;
	}
	copy = xstrdup(s);
	for (word = strtok_r(copy, " \t\n", &save); word != NULL;
	    word = strtok_r(NULL, " \t\n", &save))
		strv_push(argv, word);
	free(copy);
	if (argv->n == 1 && strcmp(argv->v[0], "local") == 0)
		strv_clear(argv);
	return 0;
}

/* A whole number of milliseconds (or misses), at least 1. */
static int
launch_num(const json_t *o, const char *key, const char *where,
    uint64_t *dst, char **err)
{
	const json_t	*v = json_object_get(o, key);

	if (v == NULL)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 1) {
		xasprintf(err, "%s.%s: expected a whole number above 0", where,
		    key);
		return -1;
	}
	*dst = (uint64_t)json_integer_value(v);
	return 0;
}

/* The argv part: a string (split) or an array of non-empty strings. */
static int
launch_words(const json_t *v, const char *where, struct strv *argv,
    char **err)
{
	const json_t	*w;
	size_t		 i;

	if (json_is_string(v))
		return launch_parse_string(json_string_value(v), argv, err);
	if (!json_is_array(v)) {
		xasprintf(err, "%s: expected a string, an array of strings or "
		    "an object", where);
		return -1;
	}
	strv_clear(argv);
	json_array_foreach(v, i, w) {
		if (!json_is_string(w) || json_string_length(w) == 0) {
			xasprintf(err, "%s[%zu]: expected a non-empty string",
			    where, i);
			strv_clear(argv);
			return -1;
		}
		strv_push(argv, json_string_value(w));
	}
	return 0;
}

/*
 * "launcher" in the configuration (top level or a role's): a string, an
 * array of words, or {"argv": ..., "remote_worker": PATH, "ping_ms": N,
 * "misses": N, "start_ms": N}.  cfg is replaced only on success.
 */
int
launch_parse_json(const json_t *v, const char *where, struct launch_cfg *cfg,
    char **err)
{
	static const char *const known[] = { "argv", "remote_worker",
	    "ping_ms", "misses", "start_ms", NULL };
	struct launch_cfg	 n;
	const char		*key;
	const json_t		*x;
	uint64_t		 misses = 0;
	char			*w;
	size_t			 i;

	memset(&n, 0, sizeof n);
	if (!json_is_object(v)) {
		if (launch_words(v, where, &n.argv, err) != 0)
			return -1;
		launch_clear(cfg);
		*cfg = n;
		cfg->set = 1;
		return 0;
	}
	json_object_foreach((json_t *)v, key, x) {
		for (i = 0; known[i] != NULL && strcmp(known[i], key) != 0; i++)
			;
		if (known[i] == NULL) {
			xasprintf(err, "%s: unknown key '%s'", where, key);
			return -1;
		}
	}
	xasprintf(&w, "%s.argv", where);
	if ((x = json_object_get(v, "argv")) == NULL) {
		xasprintf(err, "%s: no argv", where);
		free(w);
		return -1;
	}
	if (launch_words(x, w, &n.argv, err) != 0) {
		free(w);
		return -1;
	}
	free(w);
	if ((x = json_object_get(v, "remote_worker")) != NULL) {
		if (!json_is_string(x) || json_string_value(x)[0] == '\0' ||
		    strpbrk(json_string_value(x), " \t\n'\"\\$;&|<>`") != NULL) {
			xasprintf(err, "%s.remote_worker: expected a path "
			    "without blanks or shell characters", where);
			goto fail;
		}
		n.remote_worker = xstrdup(json_string_value(x));
	}
	if (launch_num(v, "ping_ms", where, &n.ping_ms, err) != 0 ||
	    launch_num(v, "misses", where, &misses, err) != 0 ||
	    launch_num(v, "start_ms", where, &n.start_ms, err) != 0)
		goto fail;
	n.misses = misses > 1000 ? 1000 : (unsigned)misses;
	launch_clear(cfg);
	*cfg = n;
	cfg->set = 1;
	return 0;
fail:
	launch_clear(&n);
	return -1;
}

/* A deep copy (the agent keeps its own past the configuration). */
void
launch_copy(struct launch_cfg *dst, const struct launch_cfg *src)
{
	size_t	i;

	memset(dst, 0, sizeof *dst);
	if (src == NULL)
		return;
	for (i = 0; i < src->argv.n; i++)
		strv_push(&dst->argv, src->argv.v[i]);
	if (src->remote_worker != NULL)
		dst->remote_worker = xstrdup(src->remote_worker);
	dst->ping_ms = src->ping_ms;
	dst->misses = src->misses;
	dst->start_ms = src->start_ms;
	dst->set = src->set;
}

void
launch_clear(struct launch_cfg *cfg)
{
	strv_clear(&cfg->argv);
	free(cfg->remote_worker);
	memset(cfg, 0, sizeof *cfg);
}

/* How long a remote channel may stay silent. */
uint64_t
launch_lost_ms(const struct launch_cfg *cfg)
{
	return (cfg->ping_ms != 0 ? cfg->ping_ms : LAUNCH_PING_MS) *
	    (cfg->misses != 0 ? cfg->misses : LAUNCH_MISSES);
}

/* The launcher as words for a message: "ssh -T host". */
char *
launch_describe(const struct launch_cfg *cfg)
{
	char	*s = xstrdup(""), *t;
	size_t	 i;

	for (i = 0; i < cfg->argv.n; i++) {
		xasprintf(&t, "%s%s%s", s, i > 0 ? " " : "", cfg->argv.v[i]);
		free(s);
		s = t;
	}
	return s;
}

/*
 * The whole argv: the prefix, then ccw-worker --stdio -H LOST -R ROLE -I
 * INDEX (the worker gives us up after the same silence).  NULL-ended; the
 * strings are new, freed with the array by the caller.
 */
char **
launch_argv(const struct launch_cfg *cfg, const char *local_worker,
    const char *role, unsigned index)
{
	char	**v;
	size_t	  i, n = cfg->argv.n;

	v = xcalloc(n + 9, sizeof *v);
	for (i = 0; i < n; i++)
		v[i] = xstrdup(cfg->argv.v[i]);
	v[n++] = xstrdup(cfg->remote_worker != NULL ? cfg->remote_worker :
	    local_worker);
	v[n++] = xstrdup("--stdio");
	v[n++] = xstrdup("-H");
	xasprintf(&v[n++], "%llu", (unsigned long long)launch_lost_ms(cfg));
	v[n++] = xstrdup("-R");
	v[n++] = xstrdup(role);
	v[n++] = xstrdup("-I");
	xasprintf(&v[n++], "%u", index);
	v[n] = NULL;
	return v;
}
