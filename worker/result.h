/*
 * result.h: parsing an agent's final answer: the WORKER_RESULT block and
 * CLARIFICATION_NEEDED questions (DESIGN.md section 5).
 */
#ifndef CCW_RESULT_H
#define CCW_RESULT_H

#include <stdint.h>

#include <jansson.h>

#include "outcome.h"

#include "proto.h"

/* Everything owned; result_clear() frees it. */
struct wresult {
	char		*status;	/* success|failed|needs_input|partial|unknown */
	char		*action;
	char		*summary;
	struct strv	 files_changed;
	char		*next_suggestion;	/* NULL for null/absent */
	char		*loop_back_to;		/* NULL for null/absent */
	char		*detailed_output;
	json_t		*questions;	/* array of {id, question, options[], recommended} or NULL */
};

int	result_parse(const char *, size_t, struct wresult *);
void	result_clear(struct wresult *);

/* worker/fallback.c: results the agent did not state (all owned/static). */
char		*fallback_reason(const char *);
char		*fallback_summary(const char *);
enum outcome_kind fallback_kind(const char *);
enum outcome_kind fallback_kind_status(long, const char *);
enum outcome_kind fallback_settle(enum outcome_kind, uint64_t);

#endif
