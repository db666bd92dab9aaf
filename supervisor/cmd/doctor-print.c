/*
 * doctor-print.c: the human form of the doctor report: aligned tables
 * for tools and roles and a list of notes, rendered from the same JSON
 * object --json prints, so both always carry the same facts.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "xmalloc.h"

#define DT_COLS		8	/* widest table */
#define DT_CELL_MAX	48	/* a cut column's cells end with "..." there */

/* A table of owned cells, printed with its columns aligned. */
struct dtable {
	size_t	  ncol, nrow;
	size_t	  cut;		/* 1 + the column cut at DT_CELL_MAX, or 0 */
	char	**cells;	/* nrow * ncol */
};

/* Append one row; cells beyond ncol are ignored, missing ones empty. */
static void
dtable_row(struct dtable *t, const char *const *cells)
{
	size_t	i;

	t->cells = xreallocarray(t->cells, (t->nrow + 1) * t->ncol,
	    sizeof *t->cells);
	for (i = 0; i < t->ncol; i++)
		t->cells[t->nrow * t->ncol + i] = xstrdup(cells[i] != NULL ?
		    cells[i] : "");
	t->nrow++;
}

/*
 * Print and free: each column as wide as its widest cell, the last one
 * unpadded.  Paths are never cut: a person copies them.
 */
static void
dtable_print(struct dtable *t, FILE *fp)
{
	size_t	w[DT_COLS] = { 0 }, r, c, n;
	char	*s;

	for (r = 0; r < t->nrow; r++) {
		for (c = 0; c < t->ncol; c++) {
			s = t->cells[r * t->ncol + c];
			if (c + 1 == t->cut && strlen(s) > DT_CELL_MAX)
				memcpy(s + DT_CELL_MAX - 3, "...", 4);
			if ((n = strlen(s)) > w[c])
				w[c] = n;
		}
	}
	for (r = 0; r < t->nrow; r++) {
		for (n = t->ncol; n > 1 && t->cells[r * t->ncol + n - 1][0] ==
		    '\0'; n--)
			;	/* no trailing blanks after the last cell */
		for (c = 0; c < t->ncol; c++) {
			s = t->cells[r * t->ncol + c];
			if (c + 1 < n)
				fprintf(fp, "%-*s  ", (int)w[c], s);
			else if (c + 1 == n)
				fprintf(fp, "%s\n", s);
			free(s);
		}
	}
	free(t->cells);
	t->cells = NULL;
	t->nrow = 0;
}

/* A string member, or a stand-in when it is absent or null. */
static const char *
dstr(const json_t *o, const char *key, const char *dflt)
{
	const char	*s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : dflt;
}

/* Milliseconds as a person reads deadlines: 600s, 5s, 250ms, off. */
static void
dms(const json_t *o, const char *key, char *buf, size_t len)
{
	json_int_t	v = json_integer_value(json_object_get(o, key));

	if (v == 0)
		snprintf(buf, len, "off");
	else if (v % 1000 == 0)
		snprintf(buf, len, "%llds", (long long)(v / 1000));
	else
		snprintf(buf, len, "%lldms", (long long)v);
}

/* "env A, file B" from a credentials object; names only. */
static char *
dcreds(const json_t *cr)
{
	const json_t	*s;
	char		*out = NULL, *next;
	size_t		 i;

	if (!json_is_true(json_object_get(cr, "needed")))
		return xstrdup("not needed");
	json_array_foreach(json_object_get(cr, "sources"), i, s) {
		xasprintf(&next, "%s%s%s %s", out != NULL ? out : "",
		    out != NULL ? ", " : "", dstr(s, "kind", "?"),
		    dstr(s, "name", "?"));
		free(out);
		out = next;
	}
	return out != NULL ? out : xstrdup("none found");
}

/*
 * The controllers the v2 hierarchy enables below us: what per-role
 * limits and memory.peak need; on a hybrid host (v1 controllers) none.
 */
static void
dprint_controllers(const json_t *c, struct dtable *t)
{
	const char	*row[3], *ctl = dstr(c, "controllers", NULL);

	if (dstr(c, "cgroup_v2", NULL) == NULL)
		return;
	row[0] = "cgroup v2";
	row[1] = dstr(c, "cgroup_v2", "?");
	row[2] = ctl != NULL && *ctl != '\0' ? ctl : "no controllers enabled "
	    "below us: no memory.peak, no limits";
	dtable_row(t, row);
}

/* The configuration files, state directory and worker, one per line. */
static void
dprint_setup(json_t *rep, FILE *fp)
{
	struct dtable	 t = { 3, 0, 0, NULL };
	const json_t	*cfg = json_object_get(rep, "config"), *f, *sd;
	const char	*row[3];
	char		*line;
	size_t		 i;

	fprintf(fp, "ccw-supervisor doctor %s: %s%s\n\n", dstr(rep, "version",
	    "?"), dstr(rep, "root", "?"), json_integer_value(json_object_get(
	    rep, "euid")) == 0 ? " (running as root)" : "");
	json_array_foreach(json_object_get(cfg, "files"), i, f) {
		row[0] = dstr(f, "what", "?");
		row[1] = dstr(f, "path", "?");
		row[2] = dstr(f, "status", "?");
		dtable_row(&t, row);
	}
	row[0] = "in effect";
	row[1] = dstr(cfg, "source", "?");
	row[2] = json_object_get(cfg, "error") != NULL ?
	    "(fallback: the configuration does not load)" : "";
	dtable_row(&t, row);
	if (json_is_string(json_object_get(cfg, "ccw_default_tool"))) {
		row[0] = "ccw default";
		row[1] = dstr(cfg, "ccw_default_tool", "?");
		row[2] = "(CCW's own default; not used by ccw-supervisor)";
		dtable_row(&t, row);
	}
	sd = json_object_get(rep, "state_dir");
	xasprintf(&line, "%s, %s", dstr(sd, "kind", "?"), json_is_true(
	    json_object_get(sd, "exists")) ? "exists" : "created by the "
	    "first loop");
	row[0] = "state dir";
	row[1] = dstr(sd, "path", "?");
	row[2] = line;
	dtable_row(&t, row);
	row[0] = "containment";
	row[1] = dstr(json_object_get(rep, "containment"), "mode", "?");
	row[2] = dstr(json_object_get(rep, "containment"), "why", "");
	dtable_row(&t, row);
	dprint_controllers(json_object_get(rep, "containment"), &t);
	row[0] = "worker";
	row[1] = dstr(json_object_get(rep, "worker"), "path", "?");
	row[2] = json_is_true(json_object_get(json_object_get(rep, "worker"),
	    "found")) ? "found" : "NOT FOUND";
	dtable_row(&t, row);
	dtable_print(&t, fp);
	free(line);
}

/* The tool table, then what needs words: problems, URLs, notes. */
static void
dprint_tools(json_t *rep, FILE *fp)
{
	struct dtable	 t = { 5, 0, 4, NULL };	/* cut VERSION */
	const json_t	*tool, *u, *n;
	const char	*row[5] = { "TOOL", "ENABLED", "PATH", "VERSION",
			    "CREDENTIALS" };
	char		*cr;
	size_t		 i, k;

	fputc('\n', fp);
	dtable_row(&t, row);
	json_array_foreach(json_object_get(rep, "tools"), i, tool) {
		cr = dcreds(json_object_get(tool, "credentials"));
		row[0] = dstr(tool, "name", "?");
		row[1] = json_is_true(json_object_get(tool, "enabled")) ?
		    "yes" : "no";
		row[2] = dstr(tool, "path", "not found");
		row[3] = dstr(tool, "version", "-");
		row[4] = json_is_true(json_object_get(tool, "adapter")) ?
		    cr : "-";
		dtable_row(&t, row);
		free(cr);
	}
	dtable_print(&t, fp);
	json_array_foreach(json_object_get(rep, "tools"), i, tool) {
		if (json_is_string(json_object_get(tool, "problem")))
			fprintf(fp, "  %s: %s\n", dstr(tool, "name", "?"),
			    dstr(tool, "problem", ""));
		json_array_foreach(json_object_get(tool, "base_urls"), k, u)
			fprintf(fp, "  %s: %s=%s%s\n", dstr(tool, "name", "?"),
			    dstr(u, "env", "?"), dstr(u, "url", "?"),
			    json_is_true(json_object_get(u, "vendor")) ? "" :
			    " (not the vendor's API)");
		json_array_foreach(json_object_get(tool, "notes"), k, n)
			fprintf(fp, "  %s: %s\n", dstr(tool, "name", "?"),
			    json_string_value(n));
	}
}

/* One argv word as a shell would need it, for reading only. */
static char *
dquote(const char *w)
{
	const char	*p;
	char		*out, *next;

	if (*w != '\0' && w[strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789_./:=,@%+-")] == '\0')
		return xstrdup(w);
	out = xstrdup("'");
	for (p = w; *p != '\0'; p++) {
		xasprintf(&next, "%s%s", out, *p == '\'' ? "'\\''" :
		    (char[]){ *p, '\0' });
		free(out);
		out = next;
	}
	xasprintf(&next, "%s'", out);
	free(out);
	return next;
}

/* The role table and each role's argv, as the worker would exec it. */
static void
dprint_roles(json_t *rep, FILE *fp)
{
	struct dtable	 t = { 8, 0, 0, NULL };
	const json_t	*r, *a;
	const char	*row[8] = { "ROLE", "TOOL", "MODEL", "PERMISSION",
			    "TIMEOUT", "NUDGE", "GRACE", "IDLE" };
	char		 b[4][24], *line, *next, *q;
	size_t		 i, k;

	fputc('\n', fp);
	dtable_row(&t, row);
	json_array_foreach(json_object_get(rep, "roles"), i, r) {
		dms(r, "timeout_ms", b[0], sizeof b[0]);
		dms(r, "nudge_ms", b[1], sizeof b[1]);
		dms(r, "grace_ms", b[2], sizeof b[2]);
		dms(r, "idle_ms", b[3], sizeof b[3]);
		row[0] = dstr(r, "role", "?");
		row[1] = dstr(r, "tool", "?");
		row[2] = json_object_get(r, "problem") != NULL ? "-" :
		    dstr(r, "model", "(tool default)");
		row[3] = dstr(r, "permission", "-");
		row[4] = b[0];
		row[5] = b[1];
		row[6] = b[2];
		row[7] = b[3];
		dtable_row(&t, row);
	}
	dtable_print(&t, fp);
	json_array_foreach(json_object_get(rep, "roles"), i, r) {
		if (json_is_string(json_object_get(r, "problem"))) {
			fprintf(fp, "  %s: cannot run: %s\n", dstr(r, "role",
			    "?"), dstr(r, "problem", ""));
			continue;
		}
		line = NULL;
		json_array_foreach(json_object_get(r, "argv"), k, a) {
			q = dquote(json_string_value(a));
			xasprintf(&next, "%s%s%s", line != NULL ? line : "",
			    line != NULL ? " " : "", q);
			free(q);
			free(line);
			line = next;
		}
		fprintf(fp, "  %s: %s%s\n", dstr(r, "role", "?"),
		    line != NULL ? line : "?", strcmp(dstr(r, "prompt_via",
		    ""), "stdin") == 0 ? " < PROMPT" : "");
		free(line);
	}
}

/* The whole report for a person at a terminal. */
void
doctor_print(json_t *rep, FILE *fp)
{
	const json_t	*dt = json_object_get(rep, "default_tool"), *w;
	size_t		 i;

	dprint_setup(rep, fp);
	dprint_tools(rep, fp);
	dprint_roles(rep, fp);
	fprintf(fp, "\ndefault tool: %s (%s): %s%s\n", dstr(dt, "name", "?"),
	    dstr(dt, "reason", "?"), json_is_true(json_object_get(dt,
	    "runnable")) ? "can run" : "CANNOT RUN: ",
	    dstr(dt, "problem", ""));
	json_array_foreach(json_object_get(rep, "warnings"), i, w)
		fprintf(fp, "warning: %s\n", json_string_value(w));
	fflush(fp);
}
