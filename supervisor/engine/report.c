/*
 * report.c: an agent as the JSON object that `agent` prints and
 * `control`'s result verb returns.
 */
#include <config.h>

#include <sys/wait.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "agent.h"
#include "xmalloc.h"

/* A JSON string or null. */
static json_t *
report_str(const char *s)
{
	json_t	*j;

	if (s == NULL)
		return json_null();
	j = json_string(s);
	return j != NULL ? j : json_string("(invalid text)");
}

/* A list of strings as a JSON array. */
static json_t *
report_strv(const struct strv *sv)
{
	json_t	*a = json_array();
	size_t	 i;

	for (i = 0; i < sv->n; i++)
		json_array_append_new(a, report_str(sv->v[i]));
	return a;
}

/*
 * A turn's usage as reported: cost_usd is null unless the tool reported
 * a cost (a worker that had none sends 0.0, which no paid turn costs).
 */
json_t *
report_usage(const json_t *usage)
{
	json_t	*u, *c;

	if (!json_is_object(usage))
		return json_null();
	u = json_deep_copy(usage);
	c = json_object_get(u, "cost_usd");
	if (!json_is_number(c) || json_number_value(c) <= 0)
		json_object_set_new(u, "cost_usd", json_null());
	return u;
}

/*
 * The agent's outcome kind: the supervisor's verdict when it gave one (a
 * deadline, silence, a lost host, a crash, a close: the worker could not
 * say), else the worker's from its RESULT; a worker that errored with no
 * word at all crashed.
 */
enum outcome_kind
report_kind(const struct agent *a)
{
	enum outcome_kind	k = OUTCOME_NONE;

	if (a->kind != OUTCOME_NONE)
		return a->kind;
	if (a->result.type == MSG_RESULT)
		k = outcome_find(a->result.u.result.error_kind);
	if (k == OUTCOME_NONE && a->status == AS_ERRORED &&
	    a->result.type != MSG_RESULT)
		k = a->launch.argv.n > 0 ? OUTCOME_LOST : OUTCOME_CRASHED;
	return k;
}

/*
 * status, summary, error_kind and reason: the RESULT's where the worker
 * gave one; what the supervisor decided otherwise.  A timed-out agent
 * gets the synthesized failure DESIGN.md prescribes ("Worker timeout"),
 * an idle one says so; one without a RESULT is summarized by its reason,
 * so that no failure reads as null.
 */
static void
report_outcome(json_t *o, const struct agent *a)
{
	const struct msg_result	*r = &a->result.u.result;
	int			 have = a->result.type == MSG_RESULT;
	enum outcome_kind	 k = report_kind(a);
	const char		*why = a->kind_reason != NULL ?
				    a->kind_reason : a->reason;
	char			*sum = NULL;

	if (a->timed_out) {
		json_object_set_new(o, "status", json_string("failed"));
		if (k == OUTCOME_IDLE)
			xasprintf(&sum, "Worker idle: %s", why != NULL ? why :
			    "no output");
		json_object_set_new(o, "summary", json_string(sum != NULL ?
		    sum : "Worker timeout"));
		free(sum);
	} else {
		json_object_set_new(o, "status", json_string(have ?
		    r->status : a->status == AS_ERRORED ? "failed" : "unknown"));
		json_object_set_new(o, "summary", report_str(have &&
		    r->summary != NULL ? r->summary : k != OUTCOME_NONE ?
		    why : NULL));
	}
	json_object_set_new(o, "error_kind", k != OUTCOME_NONE ?
	    json_string(outcome_name(k)) : json_null());
	json_object_set_new(o, "reason", report_str(why));
}

/* The rest of the result fields come from the worker's RESULT. */
static void
report_result(json_t *o, const struct agent *a)
{
	const struct msg_result	*r = &a->result.u.result;
	int			 have = a->result.type == MSG_RESULT;
	struct strv		 none = { NULL, 0 };

	report_outcome(o, a);
	json_object_set_new(o, "action", report_str(have && r->action ?
	    r->action : a->role));
	json_object_set_new(o, "files_changed",
	    report_strv(have ? &r->files_changed : &none));
	json_object_set_new(o, "files_claimed",
	    report_strv(have ? &r->files_claimed : &none));
	json_object_set_new(o, "next_suggestion",
	    report_str(have ? r->next_suggestion : NULL));
	json_object_set_new(o, "loop_back_to",
	    report_str(have ? r->loop_back_to : NULL));
	json_object_set_new(o, "detailed_output",
	    report_str(have ? r->detailed_output : NULL));
	json_object_set_new(o, "questions", have && r->questions ?
	    json_incref(r->questions) : json_null());
	json_object_set_new(o, "exit_code", have && r->exit_code >= 0 ?
	    json_integer(r->exit_code) : json_null());
	json_object_set_new(o, "signal", have && r->signal > 0 ?
	    json_integer(r->signal) : json_null());
	json_object_set_new(o, "session_id",
	    report_str(have ? r->session_id : NULL));
	json_object_set_new(o, "usage", have ? report_usage(r->usage) :
	    json_null());
	json_object_set_new(o, "stderr_tail",
	    report_str(have ? r->stderr_tail : NULL));
	json_object_set_new(o, "retry_after_ms", have && r->retry_after_ms > 0 ?
	    json_integer((json_int_t)r->retry_after_ms) : json_null());
	json_object_set_new(o, "files_source",
	    report_str(have ? r->files_source : NULL));
	json_object_set_new(o, "turns", have && r->turns > 0 ?
	    json_integer((json_int_t)r->turns) : json_null());
	/* a worker in its own git worktree: branch, head, files, stat */
	if (have && json_is_object(r->worktree))
		json_object_set_new(o, "worktree", json_deep_copy(r->worktree));
}

/*
 * A usage member summed into acc: numbers add, a null stays null (a
 * turn folded into the past, the past into the report).
 */
void
report_usage_add(json_t *acc, const json_t *u, const char *k)
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

/* o's list k after the past turns' list k (a union, in order). */
static void
report_union(const json_t *past, json_t *o, const char *k)
{
	json_t		*files, *cur;
	size_t		 i, j;
	int		 seen;

	files = json_deep_copy(json_object_get(past, k));
	if (!json_is_array(files)) {
		json_decref(files);
		files = json_array();
	}
	json_array_foreach(json_object_get(o, k), i, cur) {
		seen = 0;
		for (j = 0; j < json_array_size(files); j++)
			if (json_equal(json_array_get(files, j), cur))
				seen = 1;
		if (!seen)
			json_array_append(files, cur);
	}
	json_object_set_new(o, k, files);
}

/*
 * The accumulated fields of an agent's result over its turns: files
 * changed and claimed (unions), usage (summed; cost_usd null unless some
 * turn had one), turns; the rest of o is the latest turn's.
 */
static void
report_turns(const struct agent *a, json_t *o)
{
	json_t		*usage, *cur;
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
	report_union(a->past, o, "files_changed");
	report_union(a->past, o, "files_claimed");
	usage = json_deep_copy(json_object_get(a->past, "usage"));
	cur = json_object_get(o, "usage");
	report_usage_add(usage, cur, "input_tokens");
	report_usage_add(usage, cur, "output_tokens");
	report_usage_add(usage, cur, "cost_usd");
	if (json_object_size(usage) == 0) {
		json_decref(usage);
		return;
	}
	if (!json_is_number(json_object_get(usage, "cost_usd")))
		json_object_set_new(usage, "cost_usd", json_null());
	json_object_set_new(o, "usage", usage);
}

/*
 * What the worker's cgroup measured (cgroup mode, once the turn's
 * worker ended), beside the tool's own usage (CCW's tokens and cost,
 * which the loop sums into its state): "resources", the CPU seconds of
 * the worker and all its tool started, and their peak memory where the
 * memory controller gives it (else null).  Absent without a cgroup.
 */
static void
report_cgroup(const struct agent *a, json_t *o)
{
	if (!a->cg_usage.ok)
		return;
	json_object_set_new(o, "resources", json_pack("{s:f, s:o}", "cpu_s",
	    (double)a->cg_usage.cpu_usec / 1e6, "memory_peak_bytes",
	    a->cg_usage.mem_peak > 0 ? json_integer((json_int_t)
	    a->cg_usage.mem_peak) : json_null()));
}

/* Everything known about one agent. */
json_t *
report_agent(const struct agent *a)
{
	const struct msg_started	*st = &a->started.u.started;
	const struct msg_result		*res = a->result.type == MSG_RESULT ?
	    &a->result.u.result : NULL;
	int				 started = a->started.type == MSG_STARTED;
	struct strv			 none = { NULL, 0 };
	uint64_t			 end;
	json_t				*o = json_object();

	end = agent_final(a) ? a->t_end : clock_mono_ms();
	json_object_set_new(o, "agent_id", json_string(a->id));
	json_object_set_new(o, "role", report_str(a->role));
	json_object_set_new(o, "tool", report_str(a->tool));
	json_object_set_new(o, "permission", report_str(json_string_value(
	    json_object_get(a->options, "permission"))));
	json_object_set_new(o, "agent_status",
	    json_string(agent_status_name(a->status)));
	json_object_set_new(o, "reason", json_null());	/* its place */
	report_result(o, a);
	json_object_set_new(o, "duration_ms",
	    json_integer((json_int_t)(end - a->t_start)));
	/* A resumed turn's argv and pid (RESULT) supersede the first's. */
	if (res != NULL && res->argv.n > 0)
		json_object_set_new(o, "argv", report_strv(&res->argv));
	else
		json_object_set_new(o, "argv", report_strv(started ?
		    &st->argv : &none));
	json_object_set_new(o, "cwd", report_str(started ? st->cwd : a->cwd));
	if (res != NULL && res->tool_pid > 0)
		json_object_set_new(o, "pid",
		    json_integer((json_int_t)res->tool_pid));
	else
		json_object_set_new(o, "pid", started ?
		    json_integer((json_int_t)st->tool_pid) : json_null());
	json_object_set_new(o, "worker_pid", a->pid != 0 ?
	    json_integer(a->pid < 0 ? -a->pid : a->pid) : json_null());
	/* behind a launcher the log is on the worker's host, where it said */
	json_object_set_new(o, "log_path", report_str(a->launch.argv.n > 0 &&
	    started && st->log_path != NULL ? st->log_path : a->log_path));
	if (a->launch.argv.n > 0) {
		char	*how = launch_describe(&a->launch);

		json_object_set_new(o, "launcher", json_string(how));
		free(how);
	} else
		json_object_set_new(o, "launcher", json_null());
	json_object_set_new(o, "timed_out", json_boolean(a->timed_out));
	json_object_set_new(o, "nudged", json_boolean(a->nudged));
	json_object_set_new(o, "nudge", report_str(a->nudge));
	report_turns(a, o);
	report_cgroup(a, o);
	return o;
}
