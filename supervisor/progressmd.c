/*
 * progressmd.c: the progress Markdown files ({id}.progress/develop.md,
 * debug.md, validate.md): the format tables that rebuild.c reads back,
 * and the writer that appends one "### Iteration" section per action.
 */
#include <config.h>

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"
#include "xmalloc.h"

/* The Markdown formats; rebuild.c reads back exactly what these write. */
static const struct progress_field develop_bullets[] = {
	{ "Total", "total", NULL, PK_INT, NULL },
	{ "Completed", "completed", NULL, PK_INT, NULL },
	{ "Current Task", "current_task", NULL, PK_NSTR, NULL },
	{ "Last Progress At", "last_progress_at", NULL, PK_TS, NULL },
	{ NULL, NULL, NULL, 0, NULL }
};
static const struct progress_field develop_columns[] = {
	{ "ID", "id", NULL, PK_STR, NULL },
	{ "Description", "description", NULL, PK_STR, NULL },
	{ "Tool", "tool", NULL, PK_OSTR, NULL },
	{ "Mode", "mode", NULL, PK_OSTR, NULL },
	{ "Status", "status", NULL, PK_STR,
	    "pending|in_progress|completed|failed" },
	{ "Files Changed", "files_changed", NULL, PK_LIST, NULL },
	{ "Created At", "created_at", NULL, PK_OTS, NULL },
	{ "Completed At", "completed_at", NULL, PK_TS, NULL },
	{ NULL, NULL, NULL, 0, NULL }
};
static const struct progress_field debug_bullets[] = {
	{ "Active Bug", "active_bug", NULL, PK_NSTR, NULL },
	{ "Iteration", "iteration", NULL, PK_INT, NULL },
	{ "Hypotheses Count", "hypotheses_count", NULL, PK_INT, NULL },
	{ "Confirmed Hypothesis", "confirmed_hypothesis", NULL, PK_NSTR, NULL },
	{ "Last Analysis At", "last_analysis_at", NULL, PK_TS, NULL },
	{ NULL, NULL, NULL, 0, NULL }
};
static const struct progress_field debug_columns[] = {
	{ "ID", "id", NULL, PK_STR, NULL },
	{ "Description", "description", NULL, PK_STR, NULL },
	{ "Status", "status", NULL, PK_STR,
	    "pending|confirmed|rejected|inconclusive" },
	{ "Likelihood", "likelihood", NULL, PK_NUM, NULL },
	{ "Testable Condition", "testable_condition", NULL, PK_STR, NULL },
	{ "Logging Point", "logging_point", NULL, PK_STR, NULL },
	{ "Confirm If", "evidence_criteria", "confirm", PK_STR, NULL },
	{ "Reject If", "evidence_criteria", "reject", PK_STR, NULL },
	{ "Evidence", "evidence", NULL, PK_OBJ, NULL },
	{ "Verdict Reason", "verdict_reason", NULL, PK_NSTR, NULL },
	{ NULL, NULL, NULL, 0, NULL }
};
static const struct progress_field validate_bullets[] = {
	{ "Pass Rate", "pass_rate", NULL, PK_PCT, NULL },
	{ "Coverage", "coverage", NULL, PK_PCT, NULL },
	{ "Passed", "passed", NULL, PK_BOOL, NULL },
	{ "Last Run At", "last_run_at", NULL, PK_TS, NULL },
	{ NULL, NULL, NULL, 0, NULL }
};
static const struct progress_field validate_columns[] = {
	{ "Name", "test_name", NULL, PK_STR, NULL },
	{ "Suite", "suite", NULL, PK_STR, NULL },
	{ "Status", "status", NULL, PK_STR, "skipped|passed|failed" },
	{ "Duration (ms)", "duration_ms", NULL, PK_NUM, NULL },
	{ "Error", "error_message", NULL, PK_NSTR, NULL },
	{ "Stack Trace", "stack_trace", NULL, PK_NSTR, NULL },
	{ NULL, NULL, NULL, 0, NULL }
};
static const struct progress_format progress_formats[] = {
	{ "develop", "Development Progress", "Progress Timeline",
	    develop_bullets, "Tasks", "tasks", develop_columns, NULL, NULL },
	{ "debug", "Understanding Document", "Exploration Timeline",
	    debug_bullets, "Hypotheses", "hypotheses", debug_columns,
	    NULL, NULL },
	{ "validate", "Validation Report", "Validation Runs",
	    validate_bullets, "Test Results", "test_results",
	    validate_columns, "Failed Tests", "failed_tests" },
};

/* The format table is the one place rebuild.c learns the layout from. */
const struct progress_format *
progress_format(const char *role)
{
	size_t	i;

	if (role == NULL)
		return NULL;
	for (i = 0; i < sizeof progress_formats / sizeof progress_formats[0];
	    i++)
		if (strcmp(progress_formats[i].role, role) == 0)
			return &progress_formats[i];
	return NULL;
}

/* A value on one line: "\\", "|", CR and LF escaped, and "," in lists. */
static void
md_text(struct sbuf *sb, const char *s, int list)
{
	static const char	 from[] = "\\|\n\r,";
	static const char *const to[] = { "\\\\", "\\|", "\\n", "\\r", "\\," };
	const char		*q;

	for (; *s != '\0'; s++) {
		if ((q = strchr(from, *s)) != NULL && (*s != ',' || list))
			progress_sb_puts(sb, to[q - from]);
		else
			progress_sb_add(sb, s, 1);
	}
}

/* A JSON value of any type as compact text, escaped. */
static void
md_json(struct sbuf *sb, const json_t *v, int list)
{
	char	*s;

	if ((s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY)) == NULL)
		return;
	md_text(sb, s, list);
	free(s);
}

/* A field's value in a bullet or a cell; absent and null are empty. */
static void
md_value(struct sbuf *sb, const json_t *v, enum progress_kind kind)
{
	size_t	i;

	if (v == NULL || json_is_null(v))
		return;
	if (kind == PK_OBJ)
		md_json(sb, v, 0);
	else if (json_is_string(v))
		md_text(sb, json_string_value(v), kind == PK_LIST);
	else if (json_is_array(v) && kind == PK_LIST) {
		for (i = 0; i < json_array_size(v); i++) {
			if (i > 0)
				progress_sb_puts(sb, ", ");
			if (json_is_string(json_array_get(v, i)))
				md_text(sb, json_string_value(
				    json_array_get(v, i)), 1);
			else
				md_json(sb, json_array_get(v, i), 1);
		}
	} else
		md_json(sb, v, kind == PK_LIST);
}

/* The member a field names, through evidence_criteria.confirm if need be. */
static const json_t *
md_field(const json_t *obj, const struct progress_field *f)
{
	const json_t	*v;

	v = json_object_get(obj, f->key);
	if (f->sub != NULL)
		v = json_is_object(v) ? json_object_get(v, f->sub) : NULL;
	return v;
}

/* One "### Iteration N - time" section: bullets, the table, the list. */
static void
md_section(struct sbuf *sb, const struct progress_format *fm,
    const json_t *sec, int n, const char *ts)
{
	const struct progress_field	*f;
	const json_t			*rows, *row, *v;
	struct sbuf			 cell = { NULL, 0, 0 };
	size_t				 i;

	progress_sb_printf(sb, "### Iteration %d - %s\n\n", n, ts);
	for (f = fm->bullets; f->label != NULL; f++) {
		cell.len = 0;
		md_value(&cell, md_field(sec, f), f->kind);
		progress_sb_printf(sb, "- **%s**:%s%s\n", f->label,
		    cell.len > 0 ? " " : "", cell.len > 0 ? cell.p : "");
	}
	progress_sb_printf(sb, "\n#### %s\n\n|", fm->table);
	for (f = fm->columns; f->label != NULL; f++)
		progress_sb_printf(sb, " %s |", f->label);
	progress_sb_puts(sb, "\n|");
	for (f = fm->columns; f->label != NULL; f++)
		progress_sb_puts(sb, " --- |");
	progress_sb_puts(sb, "\n");
	rows = json_object_get(sec, fm->table_key);
	for (i = 0; i < json_array_size(rows); i++) {
		if (!json_is_object(row = json_array_get(rows, i)))
			continue;
		progress_sb_puts(sb, "|");
		for (f = fm->columns; f->label != NULL; f++) {
			progress_sb_puts(sb, " ");
			md_value(sb, md_field(row, f), f->kind);
			progress_sb_puts(sb, " |");
		}
		progress_sb_puts(sb, "\n");
	}
	if (fm->list != NULL) {
		progress_sb_printf(sb, "\n#### %s\n\n", fm->list);
		rows = json_object_get(sec, fm->list_key);
		for (i = 0; i < json_array_size(rows); i++) {
			v = json_array_get(rows, i);
			progress_sb_puts(sb, "- ");
			md_value(sb, v, PK_STR);
			progress_sb_puts(sb, "\n");
		}
		if (json_array_size(rows) == 0)
			progress_sb_puts(sb, "_None_\n");
	}
	progress_sb_puts(sb, "\n---\n\n");
	free(cell.p);
}

/* Writers number sections, readers want the latest: the last one, and count. */
const char *
progress_md_last(const char *buf, size_t len, int *count)
{
	const char	*p = buf, *end = buf + len, *nl, *last = NULL;

	for (*count = 0; p < end; p = nl + 1) {
		if ((size_t)(end - p) > 14 && strncmp(p, "### Iteration ",
		    14) == 0) {
			last = p;
			(*count)++;
		}
		if ((nl = memchr(p, '\n', end - p)) == NULL)
			break;
	}
	return last;
}

/* One "### Iteration" section per call; the heading comes with the first. */
int
progress_append_md(int dfd, const char *id, const char *role,
    const json_t *section, char **err)
{
	const struct progress_format	*fm;
	struct sbuf			 sb = { NULL, 0, 0 };
	char				*dir, *name, *label, *old = NULL;
	char				 ts[32];
	size_t				 len = 0;
	int				 pfd = -1, fd = -1, rc = -1, n;

	*err = NULL;
	if (progress_check_id(id, err) == -1)
		return -1;
	if ((fm = progress_format(role)) == NULL) {
		xasprintf(err, "unknown progress role: must be develop, debug "
		    "or validate");
		return -1;
	}
	if (!json_is_object(section)) {
		xasprintf(err, "%s section: must be a JSON object", role);
		return -1;
	}
	xasprintf(&dir, "%s.progress", id);
	xasprintf(&name, "%s.md", role);
	xasprintf(&label, "%s/%s", dir, name);
	if (progress_open_dir(dfd, dir, 1, &pfd, err) == -1 ||
	    progress_open_file(pfd, name, label, O_RDWR | O_APPEND | O_CREAT,
	    &fd, err) != 0 ||
	    progress_read_fd(fd, label, &old, &len, err) == -1)
		goto out;
	progress_iso8601(NULL, ts, sizeof ts);
	if (len == 0)
		progress_sb_printf(&sb, "# %s\n\n**Loop ID**: %s\n**Started**: %s\n\n"
		    "---\n\n## %s\n\n", fm->title, id, ts, fm->timeline);
	progress_md_last(old, len, &n);
	md_section(&sb, fm, section, n + 1, ts);
	rc = progress_append_fd(fd, label, sb.p, sb.len, err);
out:
	if (fd != -1)
		close(fd);
	if (pfd != -1)
		close(pfd);
	free(sb.p);
	free(old);
	free(label);
	free(name);
	free(dir);
	return rc;
}
