/*
 * tuneint.h: the skill-tune workflow's private parts: its role table
 * and categories (tunewf.c), the TuningState document (tunestate.c),
 * requirement analysis (tunereq.c), the merge of diagnoses and the gate
 * (tunemerge.c), fixes on disk (tunefix.c) and the report (tunereport.c).
 */
#ifndef CCW_TUNEINT_H
#define CCW_TUNEINT_H

#include <stddef.h>

#include <jansson.h>

#include "flowdef.h"

/* Role indices in skill_tune_workflow's table. */
enum tune_role {
	TUNE_CONTEXT,
	TUNE_MEMORY,
	TUNE_DATAFLOW,
	TUNE_AGENT,
	TUNE_DOCS,
	TUNE_TOKEN,
	TUNE_FIX,
	TUNE_NROLES,
};
#define TUNE_NDIAG	TUNE_FIX	/* the diagnosis roles come first */

extern const struct workflow skill_tune_workflow;

/* --- tunewf.c: what each diagnosis role looks for */
struct tune_category {
	const char		*role;		/* diagnosis role */
	const char		*category;	/* requirement analysis' name */
	const char		*issue_type;	/* its Issue.type (docs: a conflict's) */
	const char *const	*keywords;	/* words of a description */
	const char *const	*patterns;	/* taxonomy pattern ids */
	const char *const	*strategies;	/* FixStrategy values */
	const char		*severity_hint;
	const char		*risk;
};
extern const struct tune_category tune_categories[TUNE_NDIAG];
extern const char *const tune_issue_types[];	/* Issue.type values */
extern const char *const tune_strategies[];	/* FixStrategy values */
extern const char *const tune_severities[];	/* critical .. low */
int	 tune_roles_of_type(const char *, int *, size_t);	/* roles that report it */
int	 tune_severity_rank(const char *);	/* critical 0 .. low 3, none 4, -1 */

/* --- tunestate.c: the document */
json_t	*tunestate_new(const char *, const char *, const char *,
	    const char *const *, size_t, long long, long long, const char *);
	    /* skill dir, description, work dir, focus, n, max_iter, max_err, now */
int	 tunestate_check(const json_t *, char **);	/* 0, or -1 and every error */
int	 tunestate_check_diag(const json_t *, int, char **);	/* docs? */
int	 tunestate_check_fix(const json_t *, char **);
int	 tunestate_save(int, const json_t *, char **);	/* dirfd of the work dir */
int	 tunestate_load(int, json_t **, char **);
void	 tunestate_touch(json_t *, const char *);	/* updated_at */
void	 tunestate_action_begin(json_t *, const char *, const char *);
void	 tunestate_action_end(json_t *, const char *, const char *,
	    const char *, const char *, const json_t *);
	    /* action, result, started, now, output files */
void	 tunestate_error(json_t *, const char *, const char *, int,
	    const char *);	/* action, message, recoverable, now */
int	 tunestate_over_budget(const json_t *);	/* error_count >= max_errors */
int	 tunestate_target(json_t *, const char *, char **);	/* target_skill from the folder */

/* --- tunereq.c: requirement analysis (pure) */
json_t	*tunereq_analyze(const char *, const char *);	/* description, now */
const char *tunereq_settle(json_t *, size_t, size_t);
	    /* ambiguity, interpretation: the focus role it implies or NULL */

/* --- tunemerge.c: diagnoses into issues, the gate (pure) */
json_t	*tunemerge_detail(const char *, char **);	/* JSON object of a detail */
int	 tunemerge_diagnosis(json_t *, const char *, const json_t *,
	    char **);	/* state, role, its detail: into diagnosis.ROLE */
void	 tunemerge_issues(json_t *);	/* issues[] from diagnosis */
void	 tunemerge_gate(json_t *);	/* quality_score, quality_gate */
void	 tunemerge_checked(const json_t *, int *, int *); /* failed, completed */
char	*tunemerge_key(const json_t *);	/* an issue across runs */
int	 tunemerge_fixes(json_t *, const json_t *, const char *, char **);
	    /* state, the fix role's detail, now: new proposals, pending */
int	 tunemerge_verdict(const json_t *, const json_t *, const json_t *,
	    char **);	/* fix, keys before, keys after: 1 pass, 0 fail */

/* --- tunefix.c: a fix on disk */
int	 tunefix_backup(int, const char *, const json_t *, char **);
	    /* skill dirfd, backup dir path, fix */
int	 tunefix_apply(int, const json_t *, char **);
int	 tunefix_rollback(int, const char *, const char *, char **);
	    /* skill dirfd, backup dir, fix id */

/* --- tunereport.c */
char	*tunereport_render(const json_t *);	/* the final Markdown */

#endif
