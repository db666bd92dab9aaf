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

/* files_changed (or claimed) of a turn into a list, without duplicates. */
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
		a->past = json_pack("{s:[], s:[], s:{}}", "files_changed",
		    "files_claimed", "usage");
	if (a->result.type != MSG_RESULT)
		return;
	files = json_object_get(a->past, "files_changed");
	usage = json_object_get(a->past, "usage");
	/* a worker may have run several tool turns itself (queued input) */
	json_object_set_new(a->past, "turns", json_integer(
	    json_integer_value(json_object_get(a->past, "turns")) +
	    (r->turns > 0 ? (json_int_t)r->turns : 1)));
	turn_union(files, &r->files_changed);
	turn_union(json_object_get(a->past, "files_claimed"),
	    &r->files_claimed);
	u = report_usage(r->usage);
	report_usage_add(usage, u, "input_tokens");
	report_usage_add(usage, u, "output_tokens");
	report_usage_add(usage, u, "cost_usd");
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
 * The next turn's record: the ended turn folded in, the worker's part of
 * the record reset, the queued text as the prompt resuming the session.
 * 0, then the caller (agent.c) starts its worker; -1 when the phase
 * refuses it (logged; the callers checked it may).
 */
int
turn_next(struct agent *a)
{
	const char	*sid;
	char		*text = a->next_turn;

	if (agent_transition(a, AE_TURN) != 0)
		return -1;
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
	free(a->kind_reason);
	a->kind_reason = NULL;
	a->kind = OUTCOME_NONE;
	free(a->last_progress);
	a->last_progress = NULL;
	free(a->last_retry);
	a->last_retry = NULL;
	a->chan = NULL;
	a->tool_pid = 0;
	a->wstatus = 0;
	a->timed_out = a->nudged = a->result_early = 0;
	a->nudge = NULL;
	log_info("%s: turn %u resumes session %s", a->id, a->turns, sid);
	return 0;
}

/*
 * send_input to an agent whose turn has ended (or is ending): a new turn
 * on its session, queued (agent.c starts it now if the agent is DONE,
 * else when the ending turn completes).  Returns 1 (no INPUT_ACK will
 * come: the new turn is the delivery) with the submission id, or -1 when
 * there is no session to resume.
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
	return 1;
}
