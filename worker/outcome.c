/*
 * outcome.c: what the worker reports in RESULT.  A run may span several
 * turns (resumed sessions): their files, tokens and cost add up here, and
 * the final status follows the in-stream final event when there is one,
 * with fallbacks for answers that state less than the contract asks.
 */
#include <config.h>

#include <sys/wait.h>

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "result.h"
#include "clock.h"
#include "worker.h"
#include "xmalloc.h"

#define DETAIL_MAX		(1024u * 1024)

/* Keep the first reason the run failed. */
void
outcome_reason(struct worker *w, const char *fmt, ...)
{
	va_list	ap;

	if (w->reason != NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(&w->reason, fmt, ap) < 0)
		w->reason = NULL;
	va_end(ap);
}

/* Add paths to the union of files changed so far. */
static void
outcome_union(struct strv *acc, const struct strv *add)
{
	size_t	i, j;

	for (i = 0; i < add->n; i++) {
		for (j = 0; j < acc->n; j++)
			if (strcmp(acc->v[j], add->v[i]) == 0)
				break;
		if (j == acc->n)
			strv_push(acc, add->v[i]);
	}
}

/*
 * A turn ended: its block's files, its tokens and cost join the totals
 * (idempotent: what was added is zeroed in the stream state).
 */
void
outcome_fold(struct worker *w)
{
	struct wresult	wr;
	struct tool_stream *ts = &w->ts;

	if (ts->final_text != NULL) {
		memset(&wr, 0, sizeof wr);
		if (result_parse(ts->final_text, strlen(ts->final_text), &wr))
			outcome_union(&w->files_acc, &wr.files_changed);
		result_clear(&wr);
	}
	w->acc_in += ts->tokens_in;
	w->acc_out += ts->tokens_out;
	w->acc_cost += ts->cost;
	w->acc_cost_seen |= ts->cost_seen;
	ts->tokens_in = ts->tokens_out = 0;
	ts->cost = 0;
	ts->cost_seen = 0;
	if (ts->session_id != NULL) {
		free(w->prev_session);
		w->prev_session = xstrdup(ts->session_id);
	}
}

/* Start a resumed turn's stream state afresh (totals were folded). */
void
outcome_next_turn(struct worker *w)
{
	struct tool_stream *ts = &w->ts;

	outcome_fold(w);
	adapter_set(&ts->session_id, NULL);
	adapter_set(&ts->final_text, NULL);
	adapter_set(&ts->error, NULL);
	adapter_set(&ts->retry, NULL);
	ts->error_kind = OUTCOME_NONE;
	ts->retry_after_ms = 0;
	ts->final_seen = ts->final_failed = 0;
}

/*
 * The CLI's own error text: its final word, or the last retry it
 * reported when it then ended by itself.  A retry cut short by a CLOSE
 * (the role's deadline, a cancel) is not why the run ended: the
 * supervisor says why, so it is no reason here.
 */
static const char *
outcome_cli_error(const struct worker *w)
{
	if (w->ts.final_seen || !w->closing)
		return w->ts.error;
	return NULL;
}

/*
 * The status when the answer has no WORKER_RESULT block.  The in-stream
 * final event decides (a CLI killed after a good final event did not
 * fail); without one, a non-zero exit fails.
 */
static int
outcome_failed(const struct worker *w)
{
	int	st = w->tool_status;

	if (w->ts.final_seen)
		return w->ts.final_failed;
	return w->tool_waited && WIFEXITED(st) && WEXITSTATUS(st) != 0;
}

/*
 * files_changed is what the worker observed (git's diff of the work tree,
 * else an mtime walk); the answers' own lists are kept as files_claimed.
 */
static void
outcome_files(struct worker *w, struct msg_result *r)
{
	const char	*src;
	char		*err;

	outcome_union(&r->files_claimed, &w->files_acc);
	if (w->wt.path != NULL) {
		if ((err = wtassign_finish(w, r)) != NULL) {
			outcome_reason(w, "the worktree's commit failed: %s",
			    err);
			free(err);
		}
		return;
	}
	src = scanfiles_changed(&w->git_before, w->assign.u.assign.log_path,
	    &r->files_changed);
	if (src != NULL)
		r->files_source = xstrdup(src);
}

/*
 * The kind of a failed run: the stream's (its final event's, else its
 * last retry's) unless the worker itself failed it, else the reason's
 * words.  A rate limit or quota takes the wait the CLI or API named
 * (else perhaps stderr names one), and a quota with a reset is a rate
 * limit to wait out (fallback_settle).
 */
static enum outcome_kind
outcome_kind_of(const struct worker *w, struct msg_result *r)
{
	enum outcome_kind k = w->ts.error_kind;

	if (k == OUTCOME_NONE || w->reason != NULL || outcome_cli_error(w) ==
	    NULL)
		k = fallback_kind(r->reason);
	if (k != OUTCOME_RATE_LIMITED && k != OUTCOME_QUOTA_EXHAUSTED)
		return k;
	r->retry_after_ms = w->ts.retry_after_ms;
	if (r->retry_after_ms == 0)
		r->retry_after_ms = retryafter_parse(r->reason, 0);
	if (r->retry_after_ms == 0)
		r->retry_after_ms = retryafter_parse(r->stderr_tail, 0);
	return fallback_settle(k, r->retry_after_ms);
}

/* Why a failed run failed: ours, the CLI's own message, or its stderr. */
static void
outcome_why(struct worker *w, struct msg_result *r, int found)
{
	int	st = w->tool_status;
	char	*line;

	if (w->reason != NULL)
		r->reason = xstrdup(w->reason);
	else if (r->status == NULL || strcmp(r->status, "failed") != 0 || found)
		return;
	else if (outcome_cli_error(w) != NULL)
		r->reason = xstrdup(outcome_cli_error(w));
	else if ((line = fallback_reason(r->stderr_tail)) != NULL)
		r->reason = line;
	else if (w->tool_waited && WIFEXITED(st) && WEXITSTATUS(st) != 0 &&
	    r->summary == NULL)
		/* Not a reason (that marks the agent errored): a summary. */
		xasprintf(&r->summary, "%s exited with status %d",
		    w->ad->name, WEXITSTATUS(st));
	if (found || r->reason == NULL)
		return;
	/* A worktree that could not be made or set up: no CLI's words. */
	r->error_kind = xstrdup(outcome_name(w->wt.failed ?
	    OUTCOME_TOOL_ERROR : outcome_kind_of(w, r)));
}

/* Usage over all turns; cost_usd null unless the CLI reported one. */
static json_t *
outcome_usage(const struct worker *w)
{
	json_t	*u;

	if (w->acc_in == 0 && w->acc_out == 0 && !w->acc_cost_seen)
		return NULL;
	u = json_pack("{s:I, s:I}", "input_tokens", (json_int_t)w->acc_in,
	    "output_tokens", (json_int_t)w->acc_out);
	json_object_set_new(u, "cost_usd", w->acc_cost_seen ?
	    json_real(w->acc_cost) : json_null());
	return u;
}

/* Fill RESULT from the parsed answer, the tool's exit and all turns. */
void
outcome_fill(struct worker *w, struct msg *m)
{
	struct msg_result	*r = &m->u.result;
	struct wresult		 wr;
	char			*text;
	int			 st = w->tool_status, found, stream;
	size_t			 i;

	outcome_fold(w);
	memset(&wr, 0, sizeof wr);
	stream = w->ad != NULL && w->ad->line != NULL;
	if (stream && w->ts.final_text != NULL)
		text = xstrdup(w->ts.final_text);
	else if (stream)
		text = xstrdup("");
	else
		text = follow_tail(&w->fol, FOLLOW_TAIL);
	found = result_parse(text, strlen(text), &wr);

	r->status = wr.status;
	wr.status = NULL;
	if (!found && outcome_failed(w)) {
		free(r->status);
		r->status = xstrdup("failed");
	}
	r->action = wr.action != NULL ? wr.action : xstrdup(w->role);
	if (wr.summary != NULL)
		r->summary = wr.summary;
	else if (strcmp(r->status, "failed") == 0 &&
	    outcome_cli_error(w) != NULL)
		r->summary = xstrdup(outcome_cli_error(w));
	else if (stream)
		r->summary = fallback_summary(text);
	free(text);
	r->files_claimed = wr.files_changed;
	r->next_suggestion = wr.next_suggestion;
	r->loop_back_to = wr.loop_back_to;
	r->detailed_output = wr.detailed_output;
	if (r->detailed_output != NULL && strlen(r->detailed_output) > DETAIL_MAX) {
		r->detailed_output[DETAIL_MAX] = '\0';
		utf8_sanitize(r->detailed_output, DETAIL_MAX);
	}
	r->questions = wr.questions;
	memset(&wr, 0, sizeof wr);
	outcome_files(w, r);

	r->exit_code = -1;
	r->signal = 0;
	if (w->tool_waited && WIFEXITED(st))
		r->exit_code = WEXITSTATUS(st);
	else if (w->tool_waited && WIFSIGNALED(st)) {
		r->signal = WTERMSIG(st);
		if (!w->we_killed && !w->closing)
			outcome_reason(w, "tool killed by signal %d (SIG%s)",
			    WTERMSIG(st), sigabbrev_np(WTERMSIG(st)) ?
			    sigabbrev_np(WTERMSIG(st)) : "?");
	}
	r->duration_ms = clock_mono_ms() - w->t_start;
	if (w->ts.session_id != NULL)
		r->session_id = xstrdup(w->ts.session_id);
	else if (w->prev_session != NULL)
		r->session_id = xstrdup(w->prev_session);
	r->usage = outcome_usage(w);
	if (w->reason != NULL && !found) {
		free(r->status);
		r->status = xstrdup("failed");
	}
	r->stderr_tail = errtail_text(&w->err, STDERR_TAIL);
	outcome_why(w, r, found);
	if (r->stderr_tail[0] == '\0') {
		free(r->stderr_tail);
		r->stderr_tail = NULL;
	}
	r->turns = w->turns;
	/* behind a launcher the log is on this host only: its tail travels */
	if (w->remote && w->fol.tail_len > 0)
		r->log_tail = follow_tail(&w->fol, FOLLOW_TAIL);
	r->tool_pid = (uint64_t)(w->tool_pid > 0 ? w->tool_pid : 0);
	for (i = 0; i < w->argv.n; i++) {
		strv_push(&r->argv, w->argv.v[i]);
		utf8_sanitize(r->argv.v[i], strlen(r->argv.v[i]));
	}
}
