/*
 * progressmd.c: the progress Markdown files ({id}.progress/ROLE.md) in
 * the formats a workflow's state table gives (ccw-loop's: develop.md,
 * debug.md, validate.md): the writer that appends one "### Iteration"
 * section per action, and the parser rebuild.c reads the last one with.
 */
#include <config.h>

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "flowdef.h"
#include "progress.h"
#include "rotate.h"
#include "xmalloc.h"

/* A workflow's format of ROLE.md (its state table's progress list). */
const struct progress_format *
progress_format(const struct workflow_state *ws, const char *role)
{
	const struct progress_format	*fm;

	if (role == NULL || ws == NULL || ws->progress == NULL)
		return NULL;
	for (fm = ws->progress; fm->role != NULL; fm++)
		if (strcmp(fm->role, role) == 0)
			return fm;
	return NULL;
}

/* "develop, debug or validate": the roles with a Markdown file, for errors. */
static char *
md_roles(const struct workflow_state *ws)
{
	const struct progress_format	*fm;
	struct sbuf			 sb = { NULL, 0, 0 };

	for (fm = ws != NULL ? ws->progress : NULL; fm != NULL &&
	    fm->role != NULL; fm++)
		sbuf_printf(&sb, "%s%s", fm == ws->progress ? "" :
		    fm[1].role == NULL ? " or " : ", ", fm->role);
	return sb.p != NULL ? sb.p : xstrdup("none");
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
			sbuf_puts(sb, to[q - from]);
		else
			sbuf_add(sb, s, 1);
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
				sbuf_puts(sb, ", ");
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

	sbuf_printf(sb, "### Iteration %d - %s\n\n", n, ts);
	for (f = fm->bullets; f->label != NULL; f++) {
		cell.len = 0;
		md_value(&cell, md_field(sec, f), f->kind);
		sbuf_printf(sb, "- **%s**:%s%s\n", f->label,
		    cell.len > 0 ? " " : "", cell.len > 0 ? cell.p : "");
	}
	sbuf_printf(sb, "\n#### %s\n\n|", fm->table);
	for (f = fm->columns; f->label != NULL; f++)
		sbuf_printf(sb, " %s |", f->label);
	sbuf_puts(sb, "\n|");
	for (f = fm->columns; f->label != NULL; f++)
		sbuf_puts(sb, " --- |");
	sbuf_puts(sb, "\n");
	rows = json_object_get(sec, fm->table_key);
	for (i = 0; i < json_array_size(rows); i++) {
		if (!json_is_object(row = json_array_get(rows, i)))
			continue;
		sbuf_puts(sb, "|");
		for (f = fm->columns; f->label != NULL; f++) {
			sbuf_puts(sb, " ");
			md_value(sb, md_field(row, f), f->kind);
			sbuf_puts(sb, " |");
		}
		sbuf_puts(sb, "\n");
	}
	if (fm->list != NULL) {
		sbuf_printf(sb, "\n#### %s\n\n", fm->list);
		rows = json_object_get(sec, fm->list_key);
		for (i = 0; i < json_array_size(rows); i++) {
			v = json_array_get(rows, i);
			sbuf_puts(sb, "- ");
			md_value(sb, v, PK_STR);
			sbuf_puts(sb, "\n");
		}
		if (json_array_size(rows) == 0)
			sbuf_puts(sb, "_None_\n");
	}
	sbuf_puts(sb, "\n---\n\n");
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
progress_append_md(const struct workflow_state *ws, int dfd, const char *id,
    const char *role, const json_t *section, const atomic_int *stopping,
    char **err)
{
	const struct progress_format	*fm;
	struct sbuf			 sb = { NULL, 0, 0 };
	char				*dir, *name, *label, *old = NULL, *rl;
	char				 ts[32];
	size_t				 len = 0;
	int				 pfd = -1, fd = -1, rc = -1, n;

	*err = NULL;
	if (progress_check_id(id, err) == -1)
		return -1;
	if ((fm = progress_format(ws, role)) == NULL) {
		rl = md_roles(ws);
		xasprintf(err, "unknown progress role: must be %s", rl);
		free(rl);
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
	clock_iso(NULL, 0, ts, sizeof ts);
	if (len == 0)
		sbuf_printf(&sb, "# %s\n\n**Loop ID**: %s\n**Started**: %s\n\n"
		    "---\n\n## %s\n\n", fm->title, id, ts, fm->timeline);
	progress_md_last(old, len, &n);
	md_section(&sb, fm, section, n + 1, ts);
	rc = progress_append_fd(fd, label, sb.p, sb.len, stopping, err);
	/* read whole at every append: past its size it starts again */
	if (rc == 0)
		(void)rotate_maybe(pfd, name, fd);
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

/* Blanks around a value are layout, not content. */
char *
progress_md_trim(const char *p, size_t n)
{
	while (n > 0 && (*p == ' ' || *p == '\t'))
		p++, n--;
	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' ||
	    p[n - 1] == '\r'))
		n--;
	return xstrndup(p, n);
}

/* "**Pass Rate**" as a human (or CCW) writes it is "Pass Rate". */
char *
progress_md_unbold(char *s)
{
	size_t	n = strlen(s);

	if (n >= 4 && strncmp(s, "**", 2) == 0 &&
	    strcmp(s + n - 2, "**") == 0) {
		memmove(s, s + 2, n - 4);
		s[n - 4] = '\0';
	}
	return s;
}

/* Undo progress.c's escaping; an unknown escape is kept as written. */
char *
progress_md_unescape(const char *s, size_t n)
{
	static const char	 from[] = "nr\\|,", to[] = "\n\r\\|,";
	const char		*q;
	char			*o = xmalloc(n + 1);
	size_t			 i, j = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n && s[i + 1] != '\0' &&
		    (q = strchr(from, s[i + 1])) != NULL)
			o[j++] = to[q - from], i++;
		else
			o[j++] = s[i];
	}
	o[j] = '\0';
	return o;
}

/* Text that is not UTF-8 cannot be a JSON string: it reads as "". */
json_t *
progress_md_jstr(const char *s)
{
	json_t	*j;

	return (j = json_string(s)) != NULL ? j : json_string("");
}

/* Split on an unescaped separator; pieces trimmed, unescaped if asked. */
json_t *
progress_md_split(const char *s, size_t n, char sep, int unesc)
{
	json_t	*a = json_array();
	size_t	 i, start = 0;
	char	*t, *u;

	for (i = 0; i <= n; i++) {
		if (i + 1 < n && s[i] == '\\') {
			i++;
			continue;
		}
		if (i < n && s[i] != sep)
			continue;
		t = progress_md_trim(s + start, i - start);
		u = unesc ? progress_md_unescape(t, strlen(t)) : NULL;
		json_array_append_new(a, progress_md_jstr(u != NULL ? u : t));
		free(u);
		free(t);
		start = i + 1;
	}
	return a;
}

/* One table row: the cells between the pipes. */
static json_t *
split_row(const char *line, size_t n)
{
	json_t	*cells = progress_md_split(line + 1, n - 1, '|', 0);
	size_t	 last = json_array_size(cells) - 1;

	if (*json_string_value(json_array_get(cells, last)) == '\0')
		json_array_remove(cells, last);
	return cells;
}

/* "| --- | :-: |" only separates the header from the rows. */
static int
is_separator(const json_t *cells)
{
	const char	*s;
	size_t		 i;

	for (i = 0; i < json_array_size(cells); i++) {
		s = json_string_value(json_array_get(cells, i));
		if (s == NULL || *s == '\0' || strspn(s, "-: ") != strlen(s))
			return 0;
	}
	return json_array_size(cells) > 0;
}

/* A row becomes {header: cell}; CCW's Metric | Value tables become bullets. */
static void
md_row(struct progress_mdsec *ms, json_t *rows, const json_t *hdr, const json_t *cells)
{
	json_t	*row = json_object();
	char	*k, *v;
	size_t	 i;

	if (json_array_size(hdr) == 2 && json_array_size(cells) == 2 &&
	    strcasecmp(json_string_value(json_array_get(hdr, 0)),
	    "Metric") == 0) {
		k = progress_md_unbold(xstrdup(json_string_value(
		    json_array_get(cells, 0))));
		v = progress_md_unbold(xstrdup(json_string_value(
		    json_array_get(cells, 1))));
		json_object_set_new(ms->bullets, k, progress_md_jstr(v));
		free(k);
		free(v);
	}
	for (i = 0; i < json_array_size(hdr) && i < json_array_size(cells); i++)
		json_object_set(row, json_string_value(json_array_get(hdr, i)),
		    json_array_get(cells, i));
	json_array_append_new(rows, row);
}

/*
 * One line outside a table: a heading, a "**Label**: value" bullet (only
 * above the first "####": below, "- **x**: y" is a list item) or an item.
 */
static void
md_line(struct progress_mdsec *ms, char **title, int *sub, const char *p, size_t n)
{
	const char	*colon;
	char		*k, *v;
	json_t		*list;
	size_t		 skip;

	if (n > 4 && (strncmp(p, "### ", 4) == 0 ||
	    strncmp(p, "#### ", 5) == 0)) {
		skip = p[3] == '#' ? 5 : 4;
		*sub = skip == 5;
		free(*title);
		*title = progress_md_trim(p + skip, n - skip);
		if ((list = json_string(*title)) == NULL) {
			free(*title);		/* a key must be UTF-8 */
			*title = xstrdup("?");
		}
		json_decref(list);
		return;
	}
	skip = (n > 2 && strncmp(p, "- ", 2) == 0) ? 2 : 0;
	if (!*sub && n > skip + 2 && strncmp(p + skip, "**", 2) == 0 &&
	    (colon = memmem(p + skip + 2, n - skip - 2, "**:", 3)) != NULL) {
		k = progress_md_trim(p + skip + 2, colon - (p + skip + 2));
		v = progress_md_trim(colon + 3, (p + n) - (colon + 3));
		json_object_set_new(ms->bullets, k, progress_md_jstr(v));
		free(k);
		free(v);
	} else if (skip == 2 || (n == 6 && strncmp(p, "_None_", 6) == 0)) {
		/* "_None_" under a heading: the list is there, and empty */
		if ((list = json_object_get(ms->lists, *title)) == NULL) {
			list = json_array();
			json_object_set_new(ms->lists, *title, list);
		}
		if (skip == 2) {
			v = progress_md_trim(p + 2, n - 2);
			json_array_append_new(list, progress_md_jstr(v));
			free(v);
		}
	}
}

/*
 * Parse the last "### Iteration " section (the latest snapshot), or the
 * whole file if it has none (a report CCW rewrote in place).
 */
void
progress_md_parse(const char *buf, size_t len, struct progress_mdsec *ms)
{
	const char	*p, *end = buf + len, *nl, *from;
	json_t		*hdr = NULL, *cells, *rows = NULL;
	char		*title = xstrdup("");
	size_t		 n;
	int		 count, sub = 0, sep = 0;

	if ((from = progress_md_last(buf, len, &count)) == NULL)
		from = buf;
	ms->bullets = json_object();
	ms->tables = json_object();
	ms->lists = json_object();
	for (p = from; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', end - p)) == NULL)
			nl = end;
		n = nl - p;
		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (n > 0 && *p == '|') {
			cells = split_row(p, n);
			if (hdr == NULL) {
				hdr = cells;
				rows = json_array();
				json_object_set_new(ms->tables, title, rows);
				sep = 1;
				continue;
			}
			if (!sep || !is_separator(cells))
				md_row(ms, rows, hdr, cells);
			sep = 0;
			json_decref(cells);
			continue;
		}
		json_decref(hdr);
		hdr = NULL;
		md_line(ms, &title, &sub, p, n);
	}
	json_decref(hdr);
	free(title);
}

/* Release what md_parse built. */
void
progress_md_free(struct progress_mdsec *ms)
{
	json_decref(ms->bullets);
	json_decref(ms->tables);
	json_decref(ms->lists);
}
