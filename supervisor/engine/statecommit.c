/*
 * statecommit.c: every write of a state file.  Lock, re-read, merge by
 * field ownership (the front end's fields from disk, ours from us),
 * validate, write a temp file, fsync, swap it in, fsync the directory.
 * Synchronous: the store (statestore.c) runs it on its committer thread.
 */
#include <config.h>

#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fdio.h"
#include "log.h"
#include "state.h"
#include "xmalloc.h"

#define COMMIT_ROUNDS	16	/* merges again after concurrent front-end writes */
#define COMMIT_WAIT_MS	200	/* how long a half-written file is waited for */

/* How commit_publish went. */
enum { PUB_DONE, PUB_DISPLACED, PUB_REREAD, PUB_ERROR };
/* How commit_publish must put the file in place. */
enum { PUB_REPLACE, PUB_CREATE, PUB_RECREATE };

#define LOCK_POLL_MAX_MS	10	/* lock polling backoff when it may give up */

/* Two stats name the same file with the same contents (as far as we can see). */
static int
commit_same(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	    a->st_size == b->st_size &&
	    a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	    a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Sleep a few milliseconds (backoff while a writer finishes). */
static void
commit_sleep_ms(int ms)
{
	struct timespec	ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * Wait for the lock.  With a nowait flag, poll instead of blocking, and
 * give up as soon as the flag is set (the process is stopping).
 */
static int
commit_lock_wait(int fd, const atomic_int *nowait)
{
	int	ms = 1;

	if (nowait == NULL)
		return flock(fd, LOCK_EX);
	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if (atomic_load(nowait)) {
			errno = EWOULDBLOCK;
			return -1;
		}
		commit_sleep_ms(ms);
		if (ms < LOCK_POLL_MAX_MS)
			ms *= 2;
	}
	return 0;
}

/* Our writers take turns through {id}.lock; a front end may ignore it. */
static int
commit_lock(int dirfd, const char *id, const atomic_int *nowait, char **err)
{
	struct stat	 sb;
	char		*name;
	int		 fd;

	xasprintf(&name, "%s.lock", id);
	fd = openat(dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC, 0644);
	if (fd < 0) {
		xasprintf(err, "%s: %s", name, errno == ELOOP ?
		    "a symbolic link, refused" : strerror(errno));
		free(name);
		return -1;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		xasprintf(err, "%s: not a regular file", name);
		goto fail;
	}
	while (commit_lock_wait(fd, nowait) != 0) {
		if (errno == EWOULDBLOCK) {
			xasprintf(err, "%s is held by another program; gave up "
			    "waiting (stopping)", name);
			goto fail;
		}
		if (errno != EINTR) {
			xasprintf(err, "flock %s: %s", name, strerror(errno));
			goto fail;
		}
	}
	free(name);
	return fd;
fail:
	close(fd);
	free(name);
	return -1;
}

/*
 * The file as it is now.  A writer caught half-way gets ~200 ms to
 * finish; after that {id}.json is quarantined (never a temp file).
 */
static enum state_load_rc
commit_read(int dirfd, const char *id, const char *suffix, json_t **out,
    struct stat *st, char **err)
{
	enum state_load_rc	 rc;
	int			 delay = 5, waited = 0, flags;

	flags = strcmp(suffix, ".json") == 0 ? 0 : STATE_LOAD_NOQUARANTINE;
	for (;;) {
		rc = state_load_at(dirfd, id, suffix, flags, out, st, err);
		if (rc != STATE_EAGAIN || waited >= COMMIT_WAIT_MS)
			return rc;
		free(*err);
		*err = NULL;
		if (delay > COMMIT_WAIT_MS - waited)
			delay = COMMIT_WAIT_MS - waited;
		commit_sleep_ms(delay);
		waited += delay;
		delay *= 2;
		if (waited >= COMMIT_WAIT_MS && flags == 0)
			flags = STATE_LOAD_FORCE;
	}
}

/* Objects merge member by member; arrays and scalars (null too) replace. */
void
state_merge_patch(json_t *dst, const json_t *src)
{
	const char	*k;
	json_t		*v, *d;

	json_object_foreach((json_t *)src, k, v) {
		d = json_object_get(dst, k);
		if (json_is_object(v) && json_is_object(d))
			state_merge_patch(d, v);
		else
			json_object_set_new(dst, k, json_deep_copy(v));
	}
}

/*
 * src with the patch merged into a copy that shares every member the
 * patch does not touch (only the objects on a patched path are copied):
 * a commit used to deep-copy the whole file and skill_state for a
 * one-field patch (issue 30).  Nothing merged is changed in place after,
 * so sharing is safe.  Returns a new reference.
 */
static json_t *
commit_patch_shared(const json_t *src, const json_t *patch)
{
	const char	*k;
	json_t		*dst, *v, *d;

	dst = json_copy((json_t *)src);
	json_object_foreach((json_t *)patch, k, v) {
		d = json_object_get(dst, k);
		if (json_is_object(v) && json_is_object(d))
			json_object_set_new(dst, k, commit_patch_shared(d, v));
		else
			json_object_set_new(dst, k, json_deep_copy(v));
	}
	return dst;
}

/* The status a transition to `to` must start from; NULL: not ours to make. */
const char *
state_transition_source(const char *to)
{
	if (to == NULL)
		return NULL;
	if (strcmp(to, "running") == 0)
		return "created";
	if (strcmp(to, "completed") == 0 || strcmp(to, "failed") == 0 ||
	    strcmp(to, "pause") == 0 || strcmp(to, "stop") == 0)
		return "running";
	if (strcmp(to, "resume") == 0 || strcmp(to, "unpause") == 0)
		return "paused";
	return NULL;
}

/*
 * May `to` start from status st?  "resume" is the person's explicit
 * `run --loop-id`: it takes a paused or a stopped (failed) loop back to
 * running; nothing else the supervisor does can leave those.  The front
 * end's verbs (supervisor/api): "pause" from running, "unpause" from
 * paused only, "stop" from anything not yet ended (CCW's stop route).
 */
int
state_transition_allowed(const char *to, const char *st)
{
	if (st == NULL || state_transition_source(to) == NULL)
		return 0;
	if (strcmp(to, "resume") == 0)
		return strcmp(st, "paused") == 0 || strcmp(st, "failed") == 0;
	if (strcmp(to, "stop") == 0)
		return strcmp(st, "running") == 0 ||
		    strcmp(st, "paused") == 0 || strcmp(st, "created") == 0;
	return strcmp(st, state_transition_source(to)) == 0;
}

/* The status a transition leaves (its name, but for the verbs). */
const char *
state_transition_target(const char *to)
{
	if (to == NULL)
		return NULL;
	if (strcmp(to, "pause") == 0)
		return "paused";
	if (strcmp(to, "stop") == 0)
		return "failed";
	if (strcmp(to, "resume") == 0 || strcmp(to, "unpause") == 0)
		return "running";
	return to;
}

/* The fields a front end's own commit may set (DESIGN.md section 6). */
static int
commit_front_field(const char *k)
{
	static const char *const front[] = { "title", "description",
	    "max_iterations", "tags", "priority", "notes", "budget", NULL };
	size_t	i;

	for (i = 0; front[i] != NULL; i++)
		if (strcmp(k, front[i]) == 0)
			return 1;
	return 0;
}

/* A patch may only touch what the supervisor owns; front, the front end's. */
static int
commit_check_req(const struct state_commit_req *req, char **err)
{
	const char	*k;
	json_t		*v;
	int		 i;

	for (i = 0; i < req->nto; i++) {
		if (state_transition_source(req->to[i]) == NULL) {
			xasprintf(err, "status: the supervisor cannot set '%s' "
			    "(only running, completed, failed, resume, pause, "
			    "unpause, stop)", req->to[i] != NULL ?
			    req->to[i] : "(null)");
			return -1;
		}
	}
	json_object_foreach((json_t *)req->front, k, v) {
		if (!commit_front_field(k)) {
			xasprintf(err, "%s: not a field the front end owns", k);
			return -1;
		}
	}
	if (req->patch == NULL)
		return 0;
	if (!json_is_object(req->patch)) {
		xasprintf(err, "the patch is not a JSON object");
		return -1;
	}
	json_object_foreach((json_t *)req->patch, k, v) {
		if (strcmp(k, "skill_state") == 0 && !json_is_object(v)) {
			xasprintf(err, "skill_state: the patch must be an object");
			return -1;
		}
		/* interrupted: a host's why it left the loop (loopdriver.c) */
		/* pause_reason: why the engine paused it (a budget) */
		if (strcmp(k, "skill_state") != 0 &&
		    strcmp(k, "current_iteration") != 0 &&
		    strcmp(k, "interrupted") != 0 &&
		    strcmp(k, "pause_reason") != 0) {
			xasprintf(err, "%s: not a field the supervisor owns", k);
			return -1;
		}
	}
	return 0;
}

/*
 * The merge by ownership: everything from disk (the front end's fields,
 * unknown ones included, exactly as they are), then ours: skill_state
 * and current_iteration from our last commit plus the patch, a patch's
 * interrupted (a host's reason, loopdriver.c), then the
 * transitions that start from the status on disk, a patch's
 * pause_reason (kept only while paused), then updated_at.
 */
static json_t *
commit_merge(const json_t *disk, const struct state_commit_req *req)
{
	const json_t	*src = req->last != NULL ? req->last : disk;
	const json_t	*pss, *j;
	json_t		*m, *ss;
	const char	*st;
	char		 now[40];
	int		 i;

	/* shallow: members are replaced, never changed in place */
	m = json_copy((json_t *)disk);
	if (req->front != NULL)
		json_object_update(m, (json_t *)req->front);
	pss = json_object_get(req->patch, "skill_state");
	ss = json_object_get(src, "skill_state");
	if (json_is_object(ss) || pss != NULL) {
		if (!json_is_object(ss)) {
			ss = state_skeleton(req->ws);
			if (pss != NULL)
				state_merge_patch(ss, pss);
		} else
			ss = pss != NULL ? commit_patch_shared(ss, pss) :
			    json_incref(ss);
		json_object_set_new(m, "skill_state", ss);
	}
	if ((j = json_object_get(req->patch, "current_iteration")) == NULL &&
	    req->last != NULL)
		j = json_object_get(req->last, "current_iteration");
	if (j != NULL)
		json_object_set_new(m, "current_iteration", json_deep_copy(j));
	if ((j = json_object_get(req->patch, "interrupted")) != NULL)
		json_object_set_new(m, "interrupted", json_deep_copy(j));
	clock_iso(NULL, 1, now, sizeof now);
	for (i = 0; i < req->nto; i++) {
		st = json_string_value(json_object_get(m, "status"));
		if (!state_transition_allowed(req->to[i], st)) {
			if (st == NULL || strcmp(st, req->to[i]) != 0)
				log_debug("state: %s -> %s not applied: the "
				    "status on disk is %s", state_transition_source(
				    req->to[i]), req->to[i], st ? st : "none");
			continue;
		}
		if (strcmp(req->to[i], "resume") == 0 ||
		    strcmp(req->to[i], "unpause") == 0) {
			json_object_set_new(m, "status", json_string("running"));
			json_object_del(m, "completed_at");
			json_object_del(m, "failure_reason");
			continue;
		}
		json_object_set_new(m, "status",
		    json_string(state_transition_target(req->to[i])));
		if (strcmp(req->to[i], "completed") == 0) {
			json_object_set_new(m, "completed_at", json_string(now));
			json_object_del(m, "failure_reason");
		} else if (strcmp(req->to[i], "failed") == 0 ||
		    strcmp(req->to[i], "stop") == 0) {
			/* a failed loop has ended too: CCW's stop writes it */
			json_object_set_new(m, "completed_at", json_string(now));
			if (req->reason[i] != NULL)
				json_object_set_new(m, "failure_reason",
				    json_string(req->reason[i]));
		}
	}
	if ((j = json_object_get(req->patch, "pause_reason")) != NULL)
		json_object_set_new(m, "pause_reason", json_deep_copy(j));
	/* a reason to be paused only while it is (a resume ends it) */
	st = json_string_value(json_object_get(m, "status"));
	if (st == NULL || strcmp(st, "paused") != 0 ||
	    json_is_null(json_object_get(m, "pause_reason")))
		json_object_del(m, "pause_reason");
	json_object_set_new(m, "updated_at", json_string(now));
	return m;
}

/* The path of a validation error ("path: message"). */
static size_t
commit_err_path(const char *e)
{
	const char	*p = strstr(e, ": ");

	return p != NULL ? (size_t)(p - e) : strlen(e);
}

/*
 * Errors the merge introduced are ours and refuse the commit; errors at
 * a path that was already wrong on disk belong to the other side and
 * are kept (a commit must not fail because a front end wrote badly).
 */
static int
commit_judge(const struct workflow_state *ws, const char *id,
    const json_t *disk, const json_t *m, char **err)
{
	struct strv	 before = { NULL, 0 }, after = { NULL, 0 };
	char		*msg = NULL, *t;
	size_t		 i, k, len;
	int		 rc = 0, kept = 0, old;

	/* the file on disk is only looked at when ours has errors */
	if (state_validate(ws, m, &after) == 0)
		return 0;
	if (disk != NULL)
		state_validate(ws, disk, &before);
	for (i = 0; i < after.n; i++) {
		len = commit_err_path(after.v[i]);
		for (old = 0, k = 0; k < before.n && !old; k++)
			old = commit_err_path(before.v[k]) == len &&
			    strncmp(before.v[k], after.v[i], len) == 0;
		if (old) {
			kept++;
			continue;
		}
		xasprintf(&t, "%s%s%s", msg != NULL ? msg : "",
		    msg != NULL ? "; " : "", after.v[i]);
		free(msg);
		msg = t;
		rc = -1;
	}
	if (rc != 0)
		xasprintf(err, "commit refused, the result would be invalid: %s",
		    msg);
	else if (kept > 0)
		log_warnx("state %s: keeping %d invalid field(s) the other side "
		    "wrote, e.g. %s", id, kept, after.v[0]);
	free(msg);
	strv_clear(&before);
	strv_clear(&after);
	return rc;
}

/*
 * Our bytes in a fresh {id}.json.tmp, on disk before anyone sees them.
 * A failure removes the temp file and fails the commit.
 */
static int
commit_write_tmp(int dirfd, const char *tmp, const json_t *m, struct stat *st,
    unsigned *nfsync, char **err)
{
	char	*text;
	size_t	 len;
	int	 fd;

	if ((text = json_dumps(m, JSON_INDENT(2))) == NULL) {
		xasprintf(err, "the state cannot be serialised");
		return -1;
	}
	len = strlen(text);
	text = xreallocarray(text, len + 2, 1);
	text[len++] = '\n';
	text[len] = '\0';
	/* A fresh inode: nobody holds the old one open for writing. */
	if (unlinkat(dirfd, tmp, 0) != 0 && errno != ENOENT)
		log_debug("state: unlink %s: %s", tmp, strerror(errno));
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644);
	if (fd < 0) {
		xasprintf(err, "%s: %s", tmp, strerror(errno));
		free(text);
		return -1;
	}
	if (fd_write_all(fd, text, len) != 0) {
		xasprintf(err, "write %s: %s", tmp, strerror(errno));
		goto fail;
	}
	if (fsync(fd) != 0) {
		xasprintf(err, "fsync %s: %s", tmp, strerror(errno));
		goto fail;
	}
	(*nfsync)++;
	if (fstat(fd, st) != 0) {
		xasprintf(err, "fstat %s: %s", tmp, strerror(errno));
		goto fail;
	}
	if (close(fd) != 0) {
		fd = -1;
		xasprintf(err, "close %s: %s", tmp, strerror(errno));
		goto fail;
	}
	free(text);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	free(text);
	return -1;
}

/*
 * Put our file in place.  If the file changed since we read it, read it
 * again (the caller merges again).  That check and the rename are not
 * one step, so RENAME_EXCHANGE leaves the file we replaced under the
 * temp name: when it is not the one we read, a front end wrote in the
 * gap and its write is merged again rather than lost.
 */
static int
commit_publish(int dirfd, const char *name, const char *tmp,
    const struct stat *read_st, int how, int precheck, char **err)
{
	struct stat	sb;
	int		rc;

	if (how != PUB_REPLACE) {
		rc = renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE);
		if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
			if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0)
				errno = EEXIST;
			else
				rc = renameat(dirfd, tmp, dirfd, name);
		}
		if (rc == 0)
			return PUB_DONE;
		if (errno == EEXIST && how == PUB_RECREATE)
			return PUB_REREAD;
		xasprintf(err, "%s: %s", name, errno == EEXIST ?
		    "already exists" : strerror(errno));
		return PUB_ERROR;
	}
	if (precheck && (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
	    !commit_same(&sb, read_st)))
		return PUB_REREAD;
	if (renameat2(dirfd, tmp, dirfd, name, RENAME_EXCHANGE) == 0) {
		if (fstatat(dirfd, tmp, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    commit_same(&sb, read_st)) {
			unlinkat(dirfd, tmp, 0);
			return PUB_DONE;
		}
		return PUB_DISPLACED;
	}
	if (errno == ENOENT) {
		xasprintf(err, "%s disappeared (the loop was deleted?)", name);
		return PUB_ERROR;
	}
	if (errno != EINVAL && errno != ENOSYS) {
		xasprintf(err, "rename %s: %s", name, strerror(errno));
		return PUB_ERROR;
	}
	if (!precheck && (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
	    !commit_same(&sb, read_st)))
		log_warnx("state: %s changed under us; replacing it anyway", name);
	if (renameat(dirfd, tmp, dirfd, name) != 0) {
		xasprintf(err, "rename %s: %s", name, strerror(errno));
		return PUB_ERROR;
	}
	return PUB_DONE;
}

/* The disk state to merge over; quarantine falls back on our last one. */
static int
commit_base(int dirfd, const char *id, const struct state_commit_req *req,
    json_t **disk, struct stat *st, int *how, char **err)
{
	enum state_load_rc	 rc;
	char			*e = NULL;

	*disk = NULL;
	*how = PUB_REPLACE;
	if (req->create) {
		*how = PUB_CREATE;
		return 0;
	}
	rc = commit_read(dirfd, id, ".json", disk, st, &e);
	if (rc == STATE_OK)
		return 0;
	if (rc == STATE_CORRUPT && req->last != NULL) {
		log_warnx("state %s: %s; writing our last state again", id, e);
		*disk = json_deep_copy(req->last);
		*how = PUB_RECREATE;
		free(e);
		return 0;
	}
	if (rc == STATE_ENOENT) {
		xasprintf(err, "no such loop: %s", id);
		free(e);
	} else
		*err = e != NULL ? e : xstrdup("unreadable");
	return -1;
}

/*
 * A publish displaced a concurrent write of the other side (ours is in
 * place, theirs under tmp): theirs becomes the base of the next round,
 * 0; or 1 when it cannot be (the last round, unreadable), warned, ours
 * stays.
 */
static int
commit_take_theirs(int dirfd, const char *id, const struct state_commit_req *req,
    const char *tmp, int last, const struct stat *our_st, json_t **disk,
    struct stat *read_st)
{
	json_t	*dj;
	char	*e = NULL;

	if (req->displaced != NULL)
		(*req->displaced)++;
	if (last || commit_read(dirfd, id, ".json.tmp", &dj, NULL, &e) !=
	    STATE_OK) {
		log_warnx("state %s: a concurrent write of the other side "
		    "was replaced and could not be merged: %s", id,
		    e != NULL ? e : "too many rounds");
		free(e);
		unlinkat(dirfd, tmp, 0);
		return 1;
	}
	unlinkat(dirfd, tmp, 0);
	state_marks_add(req->marks, our_st, STATE_MARK_STALE);
	json_decref(*disk);
	*disk = dj;
	*read_st = *our_st;
	return 0;
}

/*
 * The merge, judge, write and publish rounds of one commit: every round
 * but the last checks the file just before replacing it, and one whose
 * file changed under it merges again (*disk, *read_st and how follow
 * the file).  0 with the merged document in *mp; -1 and *err.
 */
static int
commit_rounds(int dirfd, const char *id, const struct state_commit_req *req,
    json_t **disk, struct stat *read_st, int how, json_t **mp,
    unsigned *nfsync, char **err)
{
	struct stat	 our_st;
	char		*name, *tmp;
	int		 round, pub, rc = -1;

	xasprintf(&name, "%s.json", id);
	xasprintf(&tmp, "%s.json.tmp", id);
	for (round = 1; ; round++) {
		json_decref(*mp);
		*mp = req->create ? json_deep_copy(req->last) :
		    commit_merge(*disk, req);
		if (commit_judge(req->ws, id, how == PUB_CREATE ? NULL : *disk,
		    *mp, err) != 0 ||
		    commit_write_tmp(dirfd, tmp, *mp, &our_st, nfsync, err) != 0)
			break;
		/* marked before the rename: the watch may look at once */
		state_marks_add(req->marks, &our_st, *disk != NULL &&
		    json_equal(json_object_get(*disk, "status"),
		    json_object_get(*mp, "status")) ? STATE_MARK_KEPT :
		    STATE_MARK_OURS);
		pub = commit_publish(dirfd, name, tmp, read_st, how,
		    round < COMMIT_ROUNDS, err);
		if (pub == PUB_DONE) {
			rc = 0;
			break;
		}
		if (pub == PUB_ERROR) {
			unlinkat(dirfd, tmp, 0);
			break;
		}
		if (pub == PUB_REREAD) {
			if (round >= COMMIT_ROUNDS)
				xasprintf(err, "%s keeps changing under us",
				    name);
			json_decref(*disk);
			*disk = NULL;
			if (round >= COMMIT_ROUNDS || commit_base(dirfd, id, req,
			    disk, read_st, &how, err) != 0) {
				unlinkat(dirfd, tmp, 0);
				break;
			}
			continue;
		}
		if (commit_take_theirs(dirfd, id, req, tmp,
		    round >= COMMIT_ROUNDS, &our_st, disk, read_st) != 0) {
			rc = 0;
			break;
		}
	}
	free(name);
	free(tmp);
	return rc;
}

/* The whole commit, under the lock.  See the top of the file. */
int
state_commit_run(int dirfd, const char *id, const struct state_commit_req *req,
    json_t **mergedp, unsigned *nfsyncp, char **err)
{
	struct stat	 read_st;
	json_t		*disk = NULL, *m = NULL;
	unsigned	 nfsync = 0;
	int		 lockfd, how, rc = -1;

	if (mergedp != NULL)
		*mergedp = NULL;
	if (!state_id_valid(id)) {
		xasprintf(err, "invalid loop id");
		return -1;
	}
	if (commit_check_req(req, err) != 0)
		return -1;
	if ((lockfd = commit_lock(dirfd, id, req->nowait, err)) < 0)
		return -1;
	if (commit_base(dirfd, id, req, &disk, &read_st, &how, err) != 0)
		goto out;
	/* a check only (the end): our fields are there, nothing to write */
	if (req->if_reverted && json_object_size(req->patch) == 0 &&
	    how == PUB_REPLACE && !state_owned_reverted(disk, req->last)) {
		if (mergedp != NULL)
			*mergedp = json_incref(disk);
		rc = 0;
		goto out;
	}
	if (commit_rounds(dirfd, id, req, &disk, &read_st, how, &m, &nfsync,
	    err) != 0)
		goto out;
	if (fsync(dirfd) != 0) {
		xasprintf(err, "fsync of the state directory: %s", strerror(errno));
		goto out;
	}
	nfsync++;
	if (mergedp != NULL) {
		*mergedp = m;
		m = NULL;
	}
	rc = 0;
out:
	if (nfsyncp != NULL)
		*nfsyncp += nfsync;
	json_decref(m);
	json_decref(disk);
	close(lockfd);
	return rc;
}

/* One synchronous commit of our fields and at most one transition. */
int
state_commit(const struct workflow_state *ws, int dirfd, const char *id,
    const json_t *ours, const char *to, const char *reason, json_t **merged,
    unsigned *nfsync, char **err)
{
	struct state_commit_req	req;

	memset(&req, 0, sizeof req);
	req.ws = ws;
	req.patch = ours;
	if (to != NULL) {
		req.to[0] = to;
		req.reason[0] = reason;
		req.nto = 1;
	}
	return state_commit_run(dirfd, id, &req, merged, nfsync, err);
}

/* A new loop's file: the same durable path, refused if it exists. */
int
state_create(const struct workflow_state *ws, int dirfd, const char *id,
    const json_t *st, unsigned *nfsync, char **err)
{
	struct state_commit_req	 req;
	const char		*lid;

	lid = json_string_value(json_object_get(st, "loop_id"));
	if (!json_is_object(st) || lid == NULL || id == NULL ||
	    strcmp(lid, id) != 0) {
		xasprintf(err, "loop_id: must be the loop's id");
		return -1;
	}
	memset(&req, 0, sizeof req);
	req.ws = ws;
	req.last = st;
	req.create = 1;
	return state_commit_run(dirfd, id, &req, NULL, nfsync, err);
}

/* One loop's leftover temp file, under the lock so a live commit keeps its own. */
static void
commit_clean_one(int dirfd, const char *id)
{
	char	*tmp, *e = NULL;
	int	 lockfd;

	if (!state_id_valid(id))
		return;
	if ((lockfd = commit_lock(dirfd, id, NULL, &e)) < 0) {
		log_debug("state: %s", e);
		free(e);
		return;
	}
	xasprintf(&tmp, "%s.json.tmp", id);
	if (unlinkat(dirfd, tmp, 0) == 0)
		log_info("state: removed %s left by an interrupted commit", tmp);
	free(tmp);
	close(lockfd);
}

/* At start-up: a crash between write and rename leaves a temp file. */
void
state_clean_temps(int dirfd, const char *id)
{
	DIR		*d;
	struct dirent	*de;
	size_t		 len;
	char		*lid;

	state_clean_stale(dirfd, id);	/* the side files' temps */
	if (id != NULL) {
		commit_clean_one(dirfd, id);
		return;
	}
	if ((d = state_opendir(dirfd)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len <= 9 || strcmp(de->d_name + len - 9, ".json.tmp") != 0)
			continue;
		lid = xstrndup(de->d_name, len - 9);
		commit_clean_one(dirfd, lid);
		free(lid);
	}
	closedir(d);
}
