/*
 * state.h: the unified loop state file .loop/{loopId}.json (seed 000's
 * LoopState) and what sits next to it.  The supervisor is the only writer
 * of its own fields; a front end writes the file too, so every commit is
 * lock, re-read, merge by field ownership, validate, atomic replace.
 * All paths are relative to an open state directory (dirfd); no link is
 * ever followed.
 */
#ifndef CCW_STATE_H
#define CCW_STATE_H

#include <dirent.h>
#include <stdatomic.h>
#include <stdint.h>

#include <jansson.h>

#include "proto.h"

struct event_base;
struct event;
struct stat;
struct workflow_state;		/* flowdef.h: a workflow's sections and rules */

#define STATE_ID_MAX	128
#define STATE_MAX_SIZE	(64 << 20)	/* a larger state file is corrupt */

/* --- ids and the directory (state.c) */
int	 state_id_valid(const char *);		/* [A-Za-z0-9][A-Za-z0-9._-]{0,127}, no ".." */
char	*state_id_generate(void);		/* loop-v2-YYYYMMDDTHHMMSS-xxxxxxxx */
char	*state_id_make(const char *);	/* PREFIX-YYYYMMDDTHHMMSS-xxxxxxxx */
int	 state_dir_open(const char *, int, char **);	/* O_DIRECTORY fd; create if asked */
typedef int	(*state_each_fn)(void *, int, const char *);
DIR	*state_opendir(int);	/* its own descriptor: dirfd's offset kept */
void	 state_dir_each(int, state_each_fn, void *);	/* each {id}.json's id */
void	 state_dir_made(const char *);	/* a new one: .gitignore in a git tree */
char	*state_dir_default(const char *);	/* new loops: ROOT/.workflow/.loop in a CCW project, else ROOT/.loop */
char	*state_dir_find(const char *, const char *);	/* the dir holding ID.json (.workflow/.loop, .loop) or NULL */
char	*state_dir_for(const char *, const char *);	/* find, else default */

/* --- reading, checking, creating (state.c) */
enum state_load_rc {
	STATE_OK = 0,
	STATE_ENOENT,		/* no such loop */
	STATE_EAGAIN,		/* not parseable yet (a writer mid-write): retry */
	STATE_CORRUPT,		/* quarantined as {id}.json.corrupt-<time> */
	STATE_EIO,		/* unreadable, a link, not a regular file */
	STATE_EINVAL,		/* invalid id: nothing was opened */
};
enum state_load_rc state_load(int, const char *, json_t **, char **);
/* The reader under state_load: file {id}{suffix}, flags below, its stat. */
#define STATE_LOAD_NOQUARANTINE	0x1	/* never move aside: unparseable is EAGAIN */
#define STATE_LOAD_FORCE	0x2	/* unparseable is corrupt even if just written */
enum state_load_rc state_load_at(int, const char *, const char *, int,
	    json_t **, struct stat *, char **);
int	 state_validate(const struct workflow_state *, const json_t *,
	    struct strv *);	/* statevalid.c: number of errors (0: valid); each appended as "path: message" */
int	 state_json_int(const json_t *, long long *);	/* an integer, or a real without fraction */
json_t	*state_new(const struct workflow_state *, const char *, const char *,
	    const char *, int64_t);	/* id, title, description, max_iterations; NULL if invalid */
json_t	*state_skeleton(const struct workflow_state *);	/* skill_state before the first action */
/* skill_state.errors keeps its newest STATE_ERRORS_MAX; the rest are counted in errors_dropped */
#define STATE_ERRORS_MAX	50
void	 state_error_push(json_t *, json_t *);	/* skill_state, an entry (stolen) */

/* --- a workflow's rules (flowdef.h workflow_state), checked by statevalid.c */
enum state_vtype { V_STR, V_INT, V_NUM, V_PCT, V_BOOL, V_TS, V_ENUM, V_OBJ,
    V_LIST, V_STRS };
#define V_REQ	0x1	/* must be present */
#define V_NULL	0x2	/* may be null */
/* One member of an object: its type, presence, and what is inside. */
struct state_vrule {
	const char			*key;
	int				 type;
	int				 fl;
	const char *const		*names;	/* V_ENUM */
	const struct state_vrule	*sub;	/* V_OBJ, V_LIST elements */
	long long			 min;	/* V_INT */
};
#define STATE_R(k, t, f)		{ k, t, f, NULL, NULL, 0 }
#define STATE_R_INT(k, f, m)		{ k, V_INT, f, NULL, NULL, m }
#define STATE_R_ENUM(k, f, n)		{ k, V_ENUM, f, n, NULL, 0 }
#define STATE_R_SUB(k, t, f, s)		{ k, t, f, NULL, s, 0 }
#define STATE_R_END			{ NULL, 0, 0, NULL, NULL, 0 }
struct state_vctx;	/* the errors found so far */
int	 state_check_rules(const json_t *, const struct state_vrule *,
	    struct strv *);	/* any object against rules: number of errors */
void	 state_verr(struct state_vctx *, const char *, const char *, ...)
	    __attribute__((format(printf, 3, 4)));	/* path, message */

/* --- committing (statecommit.c) */
#define STATE_COMMIT_NTO	3

/* Did a store write the file (unchanged since), and whose is its status? */
enum state_mark {
	STATE_MARK_NONE = 0,	/* not ours: the other side's write */
	STATE_MARK_STALE,	/* ours, replaced at once: built on an outdated read */
	STATE_MARK_KEPT,	/* ours; the status is the other side's, as read */
	STATE_MARK_OURS,	/* ours; the status is our transition's */
};
/* The files one store's commits wrote (thread-safe; owned by the store). */
struct state_marks;
struct state_marks *state_marks_new(void);
void	 state_marks_free(struct state_marks *);
void	 state_marks_add(struct state_marks *, const struct stat *, enum state_mark);	/* NULL: nothing */
enum state_mark state_marks_find(struct state_marks *, const struct stat *);
int	 state_owned_reverted(const json_t *, const json_t *);	/* (disk, our last): a foreign write undid our fields? */

/* One commit's request: state_commit and the store fill it in. */
struct state_commit_req {
	const json_t	*last;		/* our last commit: our fields come from it (NULL: from disk) */
	const json_t	*patch;		/* our fields to change: skill_state, current_iteration, pause_reason */
	const json_t	*front;		/* a front end's commit: its fields to set (title, description, max_iterations, tags, priority, notes, budget) */
	const char	*to[STATE_COMMIT_NTO];	/* transitions, applied in order when */
	const char	*reason[STATE_COMMIT_NTO];	/* the status on disk is their source */
	int		 nto;
	int		 create;	/* `last` is a whole new state; {id}.json must not exist */
	struct state_marks *marks;	/* where the files written are marked, or NULL */
	const struct workflow_state *ws;	/* the sections' rules; NULL: the engine's only */
	const atomic_int *nowait;	/* NULL: block on the lock; else poll, give up once set */
	uint64_t	*displaced;	/* counts front-end writes displaced and merged again, or NULL */
	int		 if_reverted;	/* with no patch: write only if state_owned_reverted(disk, last) */
};
int	 state_commit_run(int, const char *, const struct state_commit_req *,
	    json_t **, unsigned *, char **);	/* merged (new ref), fsyncs added */
/* One synchronous locked merge-and-replace with at most one transition. */
int	 state_commit(const struct workflow_state *, int, const char *,
	    const json_t *, const char *, const char *,
	    json_t **, unsigned *, char **);
/* A new state file, {id}.json must not exist; same lock and durable write. */
int	 state_create(const struct workflow_state *, int, const char *,
	    const json_t *, unsigned *, char **);
void	 state_clean_temps(int, const char *);	/* remove {id}.json.tmp left by a crash, and dead writers' NAME.PID.tmp (state_clean_stale); NULL id: every loop's */
void	 state_merge_patch(json_t *, const json_t *);	/* objects deep-merged; arrays, scalars, null replace */
const char *state_transition_source(const char *);	/* "running" -> "created", ..., "resume" -> "paused" (or failed); NULL: not the supervisor's */
int	 state_transition_allowed(const char *, const char *);	/* may transition `to` start from status st? */
const char *state_transition_target(const char *);	/* the status it leaves: "pause" -> "paused", "stop" -> "failed", "unpause" -> "running" */

/* --- the event loop's side: the store (statestore.c), the watch (statewatch.c) */
/*
 * Supervisor-owned changes waiting for the next commit: skill_state
 * (deep-merged), current_iteration, and up to 3 status transitions
 * (created->running, running->completed|failed) with completed_at or
 * failure_reason.  updated_at is set by the commit itself.  Updates made
 * in one event-loop turn become one commit at the end of the turn; with
 * a NULL event base, only state_store_flush commits.  A failed commit
 * consumes what was pending and is reported, never retried silently.
 *
 * With an event base the commit runs on the store's committer thread
 * (the lock wait, the writes and fsyncs never block the loop): one at a
 * time, in order; what piles up while one runs becomes the next one.
 * state_store_get stays the last commit that landed.
 */
struct state_store;
/* A commit asked for by state_store_commit landed (rc 0) or failed (error). */
typedef void (*state_store_cb)(struct state_store *, int, const char *, void *);

struct state_store *state_store_new(struct event_base *,
	    const struct workflow_state *, int, const char *);	/* NULL: invalid id */
void	 state_store_attach(struct state_store *, struct event_base *);	/* a store made without a base (off the loop's thread) onto it: on the loop's thread only */
struct committer_pool;
struct state_dirwatch;
void	 state_store_attach_in(struct state_store *, struct event_base *,
	    struct committer_pool *, struct state_dirwatch *);	/* the same, its committers on a shared pool's threads, its watch on a shared inotify */
struct state_dirwatch *state_store_dirwatch(const struct state_store *);	/* borrowed, or NULL */
struct state_dirwatch *state_dirwatch_new(struct event_base *, int, char **);	/* one inotify on a state directory for many watches */
void	 state_dirwatch_free(struct state_dirwatch *);	/* watches still on it keep it */
void	 state_store_free(struct state_store *);	/* flushes first; pending callbacks are dropped, not called */
void	 state_store_update(struct state_store *, const json_t *);	/* patch of our fields; commit later this turn */
int	 state_store_transition(struct state_store *, const char *, const char *);	/* to status, reason */
void	 state_store_commit(struct state_store *, state_store_cb, void *);	/* callback (on the loop, never before return) once what is pending now landed */
int	 state_store_flush(struct state_store *, char **);	/* synchronous: wait for commits in flight, commit now what is pending */
void	 state_store_nowait(struct state_store *);	/* stopping: commits give up at once while another program holds the lock */
/* Side files: jobs run off the loop in order, done on the loop (it frees). */
void	 state_store_side(struct state_store *, void (*)(void *),
	    void (*)(void *), void *);	/* run, done, arg */
void	 state_store_side_wait(struct state_store *, void (*)(void *), void *);	/* cb once the side jobs given so far ran */
const atomic_int *state_store_stopping(const struct state_store *);	/* for a side job's lock waits */
const json_t *state_store_get(const struct state_store *);	/* last committed (borrowed) */
const char *state_store_error(const struct state_store *);	/* why the last commit failed, or NULL */
uint64_t state_store_commits(const struct state_store *);
uint64_t state_store_fsyncs(const struct state_store *);
uint64_t state_store_displaced(const struct state_store *);	/* front-end writes our replace displaced and merged again */
void	 state_store_defend(struct state_store *, const json_t *);	/* a foreign write (disk): commit our fields again if it reverted them */
void	 state_store_settle(struct state_store *, state_store_cb, void *);	/* the end: cb once the file holds our last values (written again if reverted) */
uint64_t state_store_restores(const struct state_store *);	/* commits made to restore our fields */
enum state_mark state_store_written(const struct state_store *, const struct stat *);	/* a file this store wrote? */
int	 state_store_dirfd(const struct state_store *);	/* borrowed */
const char *state_store_id(const struct state_store *);

/* a deleted loop's side files, directories and locks (stateremove.c) */
int	 state_remove_files(int, const char *, char **);
void	 state_clean_stale(int, const char *);	/* recovery: NAME.PID.tmp of dead pids; NULL id: every loop's */

/* watching for a front end's writes */
/* status, state (borrowed for the call); status and state NULL: the file
 * was deleted (told once, after it stayed away 100 ms); the callback must
 * not free the watch */
typedef void (*state_watch_cb)(const char *, const json_t *, void *);
struct state_watch;
/* POLL: a stat every 25 ms instead of inotify (NFS); also the fallback */
enum state_watch_how { STATE_WATCH_INOTIFY, STATE_WATCH_POLL };
/* The watch reads the store's file and marks; it must not outlive the store. */
struct state_watch *state_watch_new(struct event_base *, struct state_store *,
	    enum state_watch_how, state_watch_cb, void *, char **);
void	 state_watch_on_front(struct state_watch *, state_watch_cb);	/* a front end's write, the status unchanged */
void	 state_watch_free(struct state_watch *);
int	 state_watch_polling(const struct state_watch *);	/* 1 polling, 0 inotify */
int	 state_watch_drain(int, const char *, int *);	/* an inotify queue drained: 1 if NAME (or an overflow) was in it; *gone: the directory went */

#endif
