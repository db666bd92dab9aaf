/*
 * loopdriver.c: who drives a loop, as a reader sees it: the holder of
 * its run lock (loopguard.c) probed without waiting, the pid it wrote
 * there; the reader's view of a loop (driver_pid, interrupted); and the
 * "interrupted" member a host that leaves a loop running writes, why.
 */
#include <config.h>

#include <sys/file.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "loopdriver.h"
#include "state.h"
#include "xmalloc.h"

/*
 * Is ID's run lock held now?  A shared lock tried and let go at once:
 * a kill -9'd driver holds nothing, so no cleanup is ever needed (a
 * driver that meets our probe retries, loopguard.c).  1 with the pid
 * the holder wrote (0 if unreadable), 0 nobody (no lock file either).
 */
int
loopdriver_probe(int dirfd, const char *id, long *pid)
{
	char	*name, buf[32];
	ssize_t	 n;
	int	 fd, held = 0;

	*pid = 0;
	xasprintf(&name, "%s.run.lock", id);
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	free(name);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_SH | LOCK_NB) == 0)
		(void)flock(fd, LOCK_UN);
	else if (errno == EWOULDBLOCK) {
		held = 1;
		n = pread(fd, buf, sizeof buf - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		*pid = strtol(buf, NULL, 10);
		if (*pid < 0)
			*pid = 0;
	}
	close(fd);
	return held;
}

/*
 * The reader's view of loop ST (state list, the api): driver_pid, the
 * run lock's holder or null; interrupted, non-null only for a running
 * loop nobody drives: the reason its last host recorded, or (a driver
 * killed or crashed, which records nothing) that none was given.
 */
void
loopdriver_view(int dirfd, const char *id, json_t *st)
{
	const char	*status;
	json_t		*was;
	long		 pid;
	int		 held;

	if (!json_is_object(st))
		return;
	held = loopdriver_probe(dirfd, id, &pid);
	json_object_set_new(st, "driver_pid", held && pid > 0 ?
	    json_integer(pid) : json_null());
	status = json_string_value(json_object_get(st, "status"));
	if (held || status == NULL || strcmp(status, "running") != 0) {
		json_object_set_new(st, "interrupted", json_null());
		return;
	}
	was = json_object_get(st, "interrupted");
	if (json_is_object(was) &&
	    json_is_string(json_object_get(was, "reason")))
		return;
	json_object_set_new(st, "interrupted", json_pack("{s:s}", "reason",
	    "no process drives it and its last driver recorded no reason "
	    "(killed or crashed)"));
}

/*
 * The status as a person reads it: "running (driven by pid N)",
 * "interrupted: REASON", or the status itself (a view, loopdriver_view).
 */
char *
loopdriver_status(const json_t *st)
{
	const char	*status, *why;
	json_int_t	 pid;
	char		*s;

	status = json_string_value(json_object_get(st, "status"));
	why = json_string_value(json_object_get(json_object_get(st,
	    "interrupted"), "reason"));
	pid = json_integer_value(json_object_get(st, "driver_pid"));
	if (status != NULL && strcmp(status, "running") == 0 && why != NULL)
		xasprintf(&s, "interrupted: %s", why);
	else if (status != NULL && strcmp(status, "running") == 0 && pid > 0)
		xasprintf(&s, "running (driven by pid %lld)", (long long)pid);
	else
		s = xstrdup(status != NULL ? status : "-");
	return s;
}

/*
 * A host leaves the loop running for a later driver (serve resumes it):
 * why, by whom and when, committed with the loop's last commit.
 */
void
loopdriver_record(struct state_store *store, const char *why)
{
	json_t	*patch;
	char	 now[40];

	clock_iso(NULL, 1, now, sizeof now);
	patch = json_pack("{s:{s:s, s:I, s:s}}", "interrupted", "reason", why,
	    "pid", (json_int_t)getpid(), "at", now);
	state_store_update(store, patch);
	json_decref(patch);
}

/* A driver takes the loop: an earlier host's reason is no longer true. */
void
loopdriver_clear(struct state_store *store)
{
	json_t	*patch;

	if (json_object_get(state_store_get(store), "interrupted") == NULL ||
	    json_is_null(json_object_get(state_store_get(store),
	    "interrupted")))
		return;
	patch = json_pack("{s:n}", "interrupted");
	state_store_update(store, patch);
	json_decref(patch);
}
