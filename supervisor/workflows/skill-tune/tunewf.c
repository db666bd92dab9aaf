/*
 * tunewf.c: skill-tune's table (DESIGN.md section 7, seed 002): its seven
 * roles (six diagnoses run as one parallel group, then fix), their
 * defaults, and what each diagnosis stands for: the requirement
 * analysis' category, keywords, taxonomy patterns and fix strategies.
 */
#include <config.h>

#include <string.h>

#include "tuneint.h"

/* Diagnoses only read the skill; fix only proposes (the engine applies). */
static const struct workflow_role tune_roles[TUNE_NROLES] = {
	{ "context", NULL, 300000, "read-only", "context", 0 },
	{ "memory", NULL, 300000, "read-only", "memory", 0 },
	{ "dataflow", NULL, 300000, "read-only", "dataflow", 0 },
	{ "agent", NULL, 300000, "read-only", "agent", 0 },
	{ "docs", NULL, 300000, "read-only", "docs", 0 },
	{ "token_consumption", NULL, 300000, "read-only",
	  "token_consumption", 0 },
	{ "fix", NULL, 600000, "read-only", "fix", WORKFLOW_ITER },
};

static const int tune_group_roles[TUNE_NDIAG] = {
	TUNE_CONTEXT, TUNE_MEMORY, TUNE_DATAFLOW, TUNE_AGENT, TUNE_DOCS,
	TUNE_TOKEN,
};
static const struct workflow_group tune_group = {
	"diagnosis", tune_group_roles, TUNE_NDIAG
};

const struct workflow skill_tune_workflow = {
	.name = "skill-tune",
	.roles = tune_roles,
	.nroles = TUNE_NROLES,
	.parallel = &tune_group,
	.config_file = ".tune/config.json",
	.config_home_file = "tune.json",
};

const char *const tune_issue_types[] = {
	"context_explosion", "memory_loss", "dataflow_break", "agent_failure",
	"token_consumption", NULL
};
const char *const tune_strategies[] = {
	"context_summarization", "sliding_window", "structured_state",
	"constraint_injection", "checkpoint_restore", "schema_enforcement",
	"orchestrator_refactor", "state_centralization", "prompt_compression",
	"lazy_loading", "output_minimization", "state_field_reduction",
	"custom", NULL
};
const char *const tune_severities[] = {
	"critical", "high", "medium", "low", NULL
};

static const char *const kw_context[] = { "context", "prompt", "context_explosion", "prompts",
	"huge", "large", "long", "inline", "inlines", "explosion", "window",
	"slow", NULL };
static const char *const kw_memory[] = { "forget", "forgets", "forgot",
	"memory", "lost", "loses", "remember", "constraint", "constraints",
	"conversation", NULL };
static const char *const kw_dataflow[] = { "data", "flow", "schema",
	"format", "mismatch", "field", "fields", "inconsistent", "passing",
	NULL };
static const char *const kw_agent[] = { "agent", "agents", "agent_failure", "subagent",
	"coordination", "parse", "output", "returns", "crash", "fails", NULL };
static const char *const kw_docs[] = { "doc", "docs", "documentation",
	"spec", "specs", "duplicate", "duplicated", "redundant", "conflict",
	"conflicting", "contradict", NULL };
static const char *const kw_token[] = { "token", "tokens", "cost",
	"costly", "expensive", "verbose", "consumption", "waste", "budget",
	NULL };

static const char *const pt_context[] = { "CTX-001", "CTX-002", "CTX-003",
	NULL };
static const char *const pt_memory[] = { "MEM-001", "MEM-002", NULL };
static const char *const pt_dataflow[] = { "DF-001", "DF-002", NULL };
static const char *const pt_agent[] = { "AGT-001", "AGT-002", NULL };
static const char *const pt_docs[] = { "DOC-RED-001", "DOC-CON-001", NULL };
static const char *const pt_token[] = { "TKN-001", "TKN-002", NULL };

static const char *const st_context[] = { "lazy_loading",
	"context_summarization", "sliding_window", NULL };
static const char *const st_memory[] = { "structured_state",
	"constraint_injection", "checkpoint_restore", NULL };
static const char *const st_dataflow[] = { "schema_enforcement",
	"state_centralization", NULL };
static const char *const st_agent[] = { "orchestrator_refactor",
	"output_minimization", NULL };
static const char *const st_docs[] = { "schema_enforcement", "custom",
	NULL };
static const char *const st_token[] = { "prompt_compression",
	"output_minimization", "state_field_reduction", NULL };

const struct tune_category tune_categories[TUNE_NDIAG] = {
	{ "context", "context_explosion", "context_explosion", kw_context,
	  pt_context, st_context, "high", "low" },
	{ "memory", "memory_loss", "memory_loss", kw_memory, pt_memory,
	  st_memory, "high", "medium" },
	{ "dataflow", "dataflow_break", "dataflow_break", kw_dataflow,
	  pt_dataflow, st_dataflow, "medium", "medium" },
	{ "agent", "agent_failure", "agent_failure", kw_agent, pt_agent,
	  st_agent, "medium", "medium" },
	{ "docs", "documentation", "dataflow_break", kw_docs, pt_docs,
	  st_docs, "medium", "low" },
	{ "token_consumption", "token_consumption", "token_consumption",
	  kw_token, pt_token, st_token, "low", "low" },
};

/*
 * The diagnosis roles that report an issue type: a fix's verification
 * re-runs these.  docs reports conflicts as dataflow breaks and
 * redundancies as token waste (seed 002's Issue.type has no docs kind),
 * so both of those types name two roles.
 */
int
tune_roles_of_type(const char *type, int *roles, size_t max)
{
	static const struct { const char *type; int role; } map[] = {
		{ "context_explosion", TUNE_CONTEXT },
		{ "memory_loss", TUNE_MEMORY },
		{ "dataflow_break", TUNE_DATAFLOW },
		{ "dataflow_break", TUNE_DOCS },
		{ "agent_failure", TUNE_AGENT },
		{ "token_consumption", TUNE_TOKEN },
		{ "token_consumption", TUNE_DOCS },
	};
	size_t	i;
	int	n = 0;

	for (i = 0; type != NULL && i < sizeof map / sizeof map[0]; i++)
		if (strcmp(map[i].type, type) == 0 && (size_t)n < max)
			roles[n++] = map[i].role;
	return n;
}

/* Severities in order, for the worst of a list and the gate. */
int
tune_severity_rank(const char *s)
{
	int	i;

	for (i = 0; s != NULL && tune_severities[i] != NULL; i++)
		if (strcmp(s, tune_severities[i]) == 0)
			return i;
	return s != NULL && strcmp(s, "none") == 0 ? 4 : -1;
}
