/*
 * serve-config.c: one root's configuration under `serve`, kept live:
 * read again (its file, CCW's cli-tools.json, ...) as a loop starts and
 * on SIGHUP; the one replaced lives on while a loop still runs on it.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bus.h"
#include "host.h"
#include "log.h"
#include "serve-config.h"
#include "toolconfig.h"
#include "xmalloc.h"

/* The configuration serve started with (the caller's, never freed here). */
void
servecfg_init(struct serve_config *sc, const struct config *start)
{
	sc->now = start;
	sc->own = NULL;
	sc->old = NULL;
	sc->nold = 0;
}

/*
 * A warning about the root's configuration, for whoever watches: a log
 * line and CONFIG_WARNING {root, message} on the bus (/api/events).
 */
static void
servecfg_warn(struct serve_config *sc, const char *msg)
{
	log_warnx("%s: configuration: %s", sc->root, msg);
	if (sc->bus != NULL)
		bus_publish(sc->bus, "CONFIG_WARNING", json_pack("{s:s, s:s}",
		    "root", sc->root, "message", msg));
}

/* Was W said by the configuration in force?  Then it is not news. */
static int
servecfg_said(const struct config *c, const char *w)
{
	size_t	i;

	for (i = 0; c != NULL && i < c->nwarnings; i++)
		if (strcmp(c->warnings[i], w) == 0)
			return 1;
	return 0;
}

/* Free the replaced configurations no loop of the host runs on now. */
void
servecfg_collect(struct serve_config *sc)
{
	size_t	i = 0;

	while (i < sc->nold) {
		if (sc->host != NULL && host_config_used(sc->host,
		    sc->old[i])) {
			i++;
			continue;
		}
		config_free(sc->old[i]);
		free(sc->old[i]);
		sc->old[i] = sc->old[--sc->nold];
	}
}

/*
 * Read the root's configuration again, as `run` reads it at a loop's
 * start (WHY says when, for the log).  1: a new one is in force (the
 * host's too; the caller points its other users at sc->now); -1: it
 * does not load, the one in force stays, said on the bus and the log.
 * What it warns of that the previous one did not is said the same way.
 */
int
servecfg_reload(struct serve_config *sc, const char *why)
{
	struct config	*c = xcalloc(1, sizeof *c);
	char		*err = NULL, *msg;
	size_t		 i;

	servecfg_collect(sc);
	if (config_load(sc->now->wf, sc->file, sc->root, NULL, c,
	    &err) != 0) {
		xasprintf(&msg, "%s (%s); the configuration in force (%s) "
		    "stays", err != NULL ? err : "cannot be read", why,
		    sc->now->source);
		servecfg_warn(sc, msg);
		free(msg);
		free(err);
		free(c);
		return -1;
	}
	for (i = 0; i < c->nwarnings; i++)
		if (!servecfg_said(sc->now, c->warnings[i]))
			servecfg_warn(sc, c->warnings[i]);
	log_debug("%s: configuration read from %s (%s)", sc->root, c->source,
	    why);
	if (sc->own != NULL) {
		sc->old = xreallocarray(sc->old, sc->nold + 1,
		    sizeof *sc->old);
		sc->old[sc->nold++] = sc->own;
	}
	sc->own = c;
	sc->now = c;
	if (sc->host != NULL)
		host_set_config(sc->host, c);
	servecfg_collect(sc);
	return 1;
}

/* Every configuration read here (the host, whose loops used them, gone). */
void
servecfg_free(struct serve_config *sc)
{
	sc->host = NULL;
	servecfg_collect(sc);
	free(sc->old);
	if (sc->own != NULL) {
		config_free(sc->own);
		free(sc->own);
	}
	memset(sc, 0, sizeof *sc);
}
