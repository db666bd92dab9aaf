/*
 * turn.c: follow-up turns of an agent whose turn has ended.  The same
 * agent id gets a new ccw-worker that resumes the tool's session with the
 * message as its prompt, a log of its own; its result accumulates over
 * the turns (files changed, usage), the rest is the latest turn's.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapter.h"
#include "agent.h"
#include "chan.h"
#include "log.h"
#include "xmalloc.h"

/* The session id the agent's turns reported last, or NULL. */
static const char *
turn_session(const struct agent *a)
{
	if (a->result.type == MSG_RESULT && a->result.u.result.session_id)
		return a->result.u.result.session_id;
	return a->session_id;
}

/* A usage member summed into acc: numbers add, a null stays null. */
static void
turn_sum(json_t *acc, const json_t *u, const char *k)
{
	const json_t	*v = json_object_get(u, k), *was;

	if (!json_is_number(v))
		return;
	was = json_object_get(acc, k);
	json_object_set_new(acc, k, json_is_integer(v) &&
	    (was == NULL || json_is_integer(was)) ? json_integer(
	    json_integer_value(was) + json_integer_value(v)) : json_real(
	    json_number_value(was) + json_number_value(v)));
}

/* files_changed of a turn into a list, without duplicates. */
static void
turn_union(json_t *list, const struct strv *files)
{
	json_t	*f;
	size_t	 i, k;
	int	 seen;

	for (i = 0; i < files->n; i++) {
		seen = 0;
		for (k = 0; k < json_array_size(list); k++)
			if (strcmp(json_string_value(json_array_get(list, k)),
			    files->v[i]) == 0)
				seen = 1;
		if (!seen && (f = json_string(files->v[i])) != NULL)
			json_array_append_new(list, f);
	}
}

/* The ended turn into a->past: its files and usage are kept for good. */
static void
turn_fold(struct agent *a)
{
	const struct msg_result	*r = &a->result.u.result;
	json_t			*files, *usage;
	json_t			*u;

	if (a->past == NULL)
		a->past = json_pack("{s:[], s:{}}", "files_changed", "usage");
	if (a->result.type != MSG_RESULT)
		return;
	files = json_object_get(a->past, "files_changed");
	usage = json_object_get(a->past, "usage");
	/* a worker may have run several tool turns itself (queued input) */
	json_object_set_new(a->past, "turns", json_integer(
	    json_integer_value(json_object_get(a->past, "turns")) +
	    (r->turns > 0 ? (json_int_t)r->turns : 1)));
	turn_union(files, &r->files_changed);
	u = report_usage(r->usage);
	turn_sum(usage, u, "input_tokens");
	turn_sum(usage, u, "output_tokens");
	turn_sum(usage, u, "cost_usd");
	json_decref(u);
	if (r->session_id != NULL) {
		free(a->session_id);
		a->session_id = xstrdup(r->session_id);
	}
}

/* Where turn n of the agent logs ({id}.workers/agent-N.turnK.log). */
static char *
turn_log_path(const struct agent *a, unsigned n)
{
	char	*path;

	xasprintf(&path, "%s/%s.workers/%s.turn%u.log", a->sup->state_dir,
	    a->sup->loop_id, a->id, n);
	return path;
}

/*
 * The next turn's log, created empty here (O_EXCL, no link followed) as
 * loopguard_reserve does a first turn's: its worker appends to our file,
 * never to one an older agent or driver left, and never parses it.
 */
static int
turn_log_create(const struct agent *a, char **err)
{
	char	*path = turn_log_path(a, a->turns + 1);
	int	 fd;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0644);
	if (fd < 0) {
		xasprintf(err, "%s: cannot start a new turn: its log %s %s",
		    a->id, path, errno == EEXIST ? "already exists (a new "
		    "turn never appends to or reads an older log)" :
		    strerror(errno));
		free(path);
		return -1;
	}
	close(fd);
	free(path);
	return 0;
}

/*
 * The next turn, now: the ended turn folded in, the worker's part of the
 * record reset, a new worker resuming the session with the queued text.
 */
void
turn_start(struct agent *a)
{
	const char	*sid;
	char		*text = a->next_turn;

	if (agent_transition(a, AE_TURN) != 0)
		return;		/* logged; the callers checked it may */
	a->next_turn = NULL;
	turn_fold(a);
	sid = a->session_id;
	a->turns++;
	free(a->prompt);
	a->prompt = text;
	free(a->capsule);
	a->capsule = NULL;
	free(a->log_path);
	/* turn_follow_up created it empty for this turn */
	a->log_path = turn_log_path(a, a->turns);
	if (a->options == NULL)
		a->options = json_object();
	json_object_set_new(a->options, "resume_session", json_string(sid));
	msg_clear(&a->started);
	msg_clear(&a->result);
	free(a->reason);
	a->reason = NULL;
	free(a->last_progress);
	a->last_progress = NULL;
	a->chan = NULL;
	a->tool_pid = 0;
	a->wstatus = 0;
	a->timed_out = a->nudged = a->result_early = 0;
	a->nudge = NULL;
	log_info("%s: turn %u resumes session %s", a->id, a->turns, sid);
	agent_start(a);
}

/*
 * send_input to an agent whose turn has ended (or is ending): a new turn
 * on its session.  Returns 1 (no INPUT_ACK will come: the new turn is the
 * delivery) with the submission id, or -1 when there is no session to
 * resume.
 */
int
turn_follow_up(struct agent *a, const char *text, uint64_t *sub, char **err)
{
	char	*names;

	if (a->status == AS_ERRORED && agent_final(a) && turn_session(a) == NULL) {
		xasprintf(err, "%s ended errored (%s); send_input needs a "
		    "running agent or a session to resume", a->id,
		    a->reason != NULL ? a->reason : "no reason");
		return -1;
	}
	if (turn_session(a) == NULL) {
		names = adapter_list(ADAPTER_AGENT, ", ");
		xasprintf(err, "%s is %s and its tool (%s) reported no "
		    "session id: a follow-up turn needs a session to resume "
		    "(%s)", a->id, agent_final(a) ?
		    agent_status_name(a->status) : "completed", a->tool, names);
		free(names);
		return -1;
	}
	if (a->next_turn != NULL) {
		xasprintf(err, "%s: a follow-up turn is already queued", a->id);
		return -1;
	}
	if (turn_log_create(a, err) != 0)
		return -1;
	a->next_turn = xstrdup(text);
	*sub = a->sup->next_submission++;
	if (a->phase == AP_DONE)
		turn_start(a);	/* agent_start counts it live again */
	return 1;
}

/*
 * The accumulated fields of an agent's result over its turns: files
 * changed (union), usage (summed; cost_usd null unless some turn had
 * one), turns; the rest of o is the latest turn's.
 */
void
turn_report(const struct agent *a, json_t *o)
{
	json_t		*files, *usage, *cur;
	size_t		 i, k;
	int		 seen;

	json_int_t	 now;

	/* the tool turns of this worker (1 unless it resumed by itself) */
	now = json_is_integer(json_object_get(o, "turns")) ?
	    json_integer_value(json_object_get(o, "turns")) : 1;
	if (a->past == NULL) {
		json_object_set_new(o, "turns", json_integer(now));
		return;
	}
	json_object_set_new(o, "turns", json_integer(now +
	    json_integer_value(json_object_get(a->past, "turns"))));
	if (json_is_null(json_object_get(o, "session_id")) &&
	    a->session_id != NULL)
		json_object_set_new(o, "session_id",
		    json_string(a->session_id));
	files = json_deep_copy(json_object_get(a->past, "files_changed"));
	json_array_foreach(json_object_get(o, "files_changed"), i, cur) {
		seen = 0;
		for (k = 0; k < json_array_size(files); k++)
			if (json_equal(json_array_get(files, k), cur))
				seen = 1;
		if (!seen)
			json_array_append(files, cur);
	}
	json_object_set_new(o, "files_changed", files);
	usage = json_deep_copy(json_object_get(a->past, "usage"));
	cur = json_object_get(o, "usage");
	turn_sum(usage, cur, "input_tokens");
	turn_sum(usage, cur, "output_tokens");
	turn_sum(usage, cur, "cost_usd");
	if (json_object_size(usage) == 0) {
		json_decref(usage);
		return;
	}
	if (!json_is_number(json_object_get(usage, "cost_usd")))
		json_object_set_new(usage, "cost_usd", json_null());
	json_object_set_new(o, "usage", usage);
}
