/*
 * rebuild.c: skill_state reconstructed from what a loop left next to its
 * state file, for when the state file is lost or corrupt: the last
 * section of each progress Markdown file, the worker outputs and the
 * tasks file(s).  Whatever cannot be recovered is named, never guessed.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "flowdef.h"
#include "progress.h"
#include "state.h"
#include "xmalloc.h"


/* One worker output found in {id}.workers/. */
struct wout {
	const char	*role;
	size_t		 idx;		/* in the workflow's roles: ties */
	struct timespec	 mtime;
	json_t		*obj;
};

/* LoopState fields the API owns: no side file holds them. */
static const char *const rebuild_api_fields[] = {
	"title", "description", "max_iterations", "status",
	"current_iteration", "created_at", "updated_at", "completed_at",
	"failure_reason"
};
#define REBUILD_NAPI	\
	(sizeof rebuild_api_fields / sizeof rebuild_api_fields[0])

/*
 * The list of unrecovered names: PROGRESS_UN_ADD puts a.b on it once,
 * PROGRESS_UN_HAS says whether it is there, PROGRESS_UN_DEL takes off
 * one recovered another way.
 */
int
progress_unrec(struct strv *sv, const char *a, const char *b, int op)
{
	char	*s;
	size_t	 i;

	xasprintf(&s, "%s%s%s", a, b != NULL ? "." : "", b != NULL ? b : "");
	for (i = 0; i < sv->n && strcmp(sv->v[i], s) != 0; i++)
		;
	if (i == sv->n && op == PROGRESS_UN_ADD)
		strv_push(sv, s);
	free(s);
	if (i == sv->n || op != PROGRESS_UN_DEL)
		return i < sv->n;
	free(sv->v[i]);
	memmove(sv->v + i, sv->v + i + 1, (sv->n - i - 1) * sizeof *sv->v);
	sv->n--;
	return 1;
}

/* Headings and labels are matched without regard to case. */
static json_t *
obj_get_ci(const json_t *obj, const char *key)
{
	const char	*k;
	json_t		*v;

	json_object_foreach((json_t *)obj, k, v)
		if (strcasecmp(k, key) == 0)
			return v;
	return NULL;
}


/* A number as written: "95.5", "95.5%", "**95.5%**". */
static json_t *
conv_num(char *s, int integer_only)
{
	char		*end;
	long long	 ll;
	double		 d;
	size_t		 n;

	progress_md_unbold(s);
	n = strlen(s);
	if (!integer_only && n > 0 && s[n - 1] == '%')
		s[--n] = '\0';
	if (n == 0)
		return NULL;
	errno = 0;
	ll = strtoll(s, &end, 10);
	if (*end == '\0' && errno == 0)
		return json_integer(ll);
	if (integer_only)
		return NULL;
	d = strtod(s, &end);
	if (*end != '\0' || !isfinite(d))
		return NULL;
	return json_real(d);
}

/* Whether s is one of "a|b|c". */
static int
in_values(const char *s, const char *values)
{
	size_t	n;

	for (; s != NULL && *values != '\0'; values += n + (values[n] == '|')) {
		n = strcspn(values, "|");
		if (strlen(s) == n && strncmp(s, values, n) == 0)
			return 1;
	}
	return 0;
}

/* Whether a value has the field's kind (and is among its values). */
static int
kind_ok(const json_t *v, const struct progress_field *f)
{
	size_t	i;

	if (f->values != NULL)
		return in_values(json_string_value(v), f->values);
	switch (f->kind) {
	case PK_STR:
	case PK_OSTR:
		return json_is_string(v);
	case PK_NSTR:
		return json_is_string(v) || json_is_null(v);
	case PK_TS:
		return json_is_null(v) || clock_iso_valid(json_string_value(v));
	case PK_OTS:
		return clock_iso_valid(json_string_value(v));
	case PK_INT:
		return json_is_integer(v) && json_integer_value(v) >= 0;
	case PK_NUM:
		return json_is_number(v);
	case PK_PCT:
		return json_is_number(v) && json_number_value(v) >= 0 &&
		    json_number_value(v) <= 100;
	case PK_BOOL:
		return json_is_boolean(v);
	case PK_LIST:
		for (i = 0; i < json_array_size(v); i++)
			if (!json_is_string(json_array_get(v, i)))
				return 0;
		return json_is_array(v);
	default:
		return json_is_object(v) || json_is_null(v);
	}
}

/*
 * Text back to a value of the field's kind: 0 with *out set (NULL if the
 * text says "absent"), -1 if the text is not of that kind.
 */
static int
conv(const char *raw, const struct progress_field *f, json_t **out)
{
	char	*s;

	*out = NULL;
	if (f->kind == PK_LIST)
		*out = *raw == '\0' ? json_array() :
		    progress_md_split(raw, strlen(raw), ',', 1);
	else if (*raw == '\0') {
		if (f->kind == PK_NSTR || f->kind == PK_TS || f->kind == PK_OBJ)
			*out = json_null();
		else if (f->kind == PK_STR)
			*out = json_string("");
		return 0;
	} else {
		s = progress_md_unescape(raw, strlen(raw));
		if (f->kind == PK_INT || f->kind == PK_NUM || f->kind == PK_PCT)
			*out = conv_num(s, f->kind == PK_INT);
		else if (f->kind == PK_BOOL &&
		    strcasecmp(progress_md_unbold(s), "true") == 0)
			*out = json_true();
		else if (f->kind == PK_BOOL && strcasecmp(s, "false") == 0)
			*out = json_false();
		else if (f->kind == PK_OBJ)
			*out = json_loads(s, 0, NULL);
		else if (f->kind != PK_BOOL)
			*out = json_string(s);
		free(s);
	}
	if (*out != NULL && kind_ok(*out, f))
		return 0;
	json_decref(*out);
	*out = NULL;
	return -1;
}

/* obj.key, or obj.key.sub. */
static json_t *
get_field(const json_t *obj, const struct progress_field *f)
{
	json_t	*v = json_object_get(obj, f->key);

	if (f->sub != NULL)
		v = json_is_object(v) ? json_object_get(v, f->sub) : NULL;
	return v;
}

/* Set obj.key, or obj.key.sub, creating the inner object. */
static void
set_field(json_t *obj, const struct progress_field *f, json_t *v)
{
	json_t	*in;

	if (f->sub == NULL) {
		json_object_set_new(obj, f->key, v);
		return;
	}
	if (!json_is_object(in = json_object_get(obj, f->key))) {
		in = json_object();
		json_object_set_new(obj, f->key, in);
	}
	json_object_set_new(in, f->sub, v);
}

/* "skill_state.develop.tasks[].status" goes on the list. */
static void
unrec_col(struct strv *unrec, const char *path,
    const struct progress_format *fm, const struct progress_field *f)
{
	char	*what;

	xasprintf(&what, "%s.%s[].%s%s%s", path, fm->table_key, f->key,
	    f->sub ? "." : "", f->sub ? f->sub : "");
	progress_unrec(unrec, what, NULL, PROGRESS_UN_ADD);
	free(what);
}

/*
 * A row (from the table or the tasks file) in the seed's shape: a value
 * of the wrong kind is dropped and named, the first column (id, name) is
 * always there, a status outside its values becomes the first of them.
 */
void
progress_fix_row(json_t *o, const struct progress_format *fm,
    const char *path, struct strv *unrec)
{
	const struct progress_field	*f;
	json_t				*v;

	for (f = fm->columns; f->label != NULL; f++) {
		if ((v = get_field(o, f)) != NULL && !kind_ok(v, f)) {
			unrec_col(unrec, path, fm, f);
			json_object_del(f->sub ? json_object_get(o, f->key) : o,
			    f->sub ? f->sub : f->key);
		}
		if (f->values != NULL && get_field(o, f) == NULL)
			set_field(o, f, json_stringn(f->values,
			    strcspn(f->values, "|")));
	}
	if (get_field(o, fm->columns) == NULL)
		set_field(o, fm->columns, json_string(""));
}

/* The table's rows as objects, by the columns the writer uses. */
static json_t *
rb_rows(const struct progress_format *fm, const json_t *rows,
    const char *path, struct strv *unrec)
{
	const struct progress_field	*f;
	json_t				*out = json_array(), *o, *v;
	const char			*raw;
	size_t				 i;

	for (i = 0; i < json_array_size(rows); i++) {
		o = json_object();
		for (f = fm->columns; f->label != NULL; f++) {
			raw = json_string_value(obj_get_ci(json_array_get(rows,
			    i), f->label));
			if (raw == NULL)
				continue;
			if (conv(raw, f, &v) == -1)
				unrec_col(unrec, path, fm, f);
			else if (v != NULL)
				set_field(o, f, v);
		}
		progress_fix_row(o, fm, path, unrec);
		json_array_append_new(out, o);
	}
	return out;
}

/*
 * Fill one skill_state section from its Markdown file; each field the
 * file does not give (or gives unreadably) is named in unrec.
 */
static void
rb_section(const struct progress_format *fm, const struct progress_mdsec *ms,
    json_t *sec, const char *path, struct strv *unrec)
{
	const struct progress_field	*f;
	const char			*raw;
	json_t				*v, *rows, *a;
	size_t				 i;
	char				*u;

	for (f = fm->bullets; f->label != NULL; f++) {
		raw = ms == NULL ? NULL :
		    json_string_value(obj_get_ci(ms->bullets, f->label));
		if (raw == NULL || conv(raw, f, &v) == -1 || v == NULL)
			progress_unrec(unrec, path, f->key, PROGRESS_UN_ADD);
		else
			json_object_set_new(sec, f->key, v);
	}
	rows = ms == NULL ? NULL : obj_get_ci(ms->tables, fm->table);
	if (rows == NULL)
		progress_unrec(unrec, path, fm->table_key, PROGRESS_UN_ADD);
	else
		json_object_set_new(sec, fm->table_key,
		    rb_rows(fm, rows, path, unrec));
	if (fm->list == NULL)
		return;
	rows = ms == NULL ? NULL : obj_get_ci(ms->lists, fm->list);
	if (rows == NULL) {
		progress_unrec(unrec, path, fm->list_key, PROGRESS_UN_ADD);
		return;
	}
	a = json_array();
	for (i = 0; i < json_array_size(rows); i++) {
		raw = json_string_value(json_array_get(rows, i));
		u = progress_md_unescape(raw, strlen(raw));
		json_array_append_new(a, progress_md_jstr(u));
		free(u);
	}
	json_object_set_new(sec, fm->list_key, a);
}

/* One progress file into its section; -1 only on a refused file. */
static int
rb_md(int pfd, const char *id, const struct progress_format *fm,
    json_t *ss, struct strv *unrec, char **err)
{
	const char			*role = fm->role;
	struct progress_mdsec			 ms;
	char				*name, *label, *buf = NULL, *path;
	size_t				 len;
	int				 rc = 1;

	xasprintf(&name, "%s.md", role);
	xasprintf(&label, "%s.progress/%s", id, name);
	xasprintf(&path, "skill_state.%s", role);
	if (pfd != -1)
		rc = progress_read_file(pfd, name, label, &buf, &len, NULL,
		    err);
	if (rc == 0) {
		progress_md_parse(buf, len, &ms);
		rb_section(fm, &ms, json_object_get(ss, role), path, unrec);
		progress_md_free(&ms);
	} else if (rc == 1)
		rb_section(fm, NULL, json_object_get(ss, role), path, unrec);
	free(buf);
	free(path);
	free(label);
	free(name);
	return rc == -1 ? -1 : 0;
}

/* Outputs oldest first; within one clock tick, in the roles' order. */
static int
rb_cmp(const void *a, const void *b)
{
	const struct wout	*x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* A warning joins the others; rebuilding goes on. */
static void
rb_warn(char **warn, char *msg)
{
	char	*s;

	if (*warn == NULL) {
		*warn = msg;
		return;
	}
	xasprintf(&s, "%s; %s", *warn, msg);
	free(*warn);
	free(msg);
	*warn = s;
}

/* Read every {role}.output.json there is; an unreadable one is a warning. */
static int
rb_outputs(int dfd, const char *id, const char *const *roles, struct wout *w,
    size_t *nw, char **warn, char **err)
{
	json_error_t	 jerr;
	char		*dir, *name, *label, *buf, *e;
	size_t		 i, len;
	int		 wfd, rc;

	*nw = 0;
	xasprintf(&dir, "%s.workers", id);
	rc = progress_open_dir(dfd, dir, 0, &wfd, err);
	free(dir);
	if (rc != 0)
		return rc == 1 ? 0 : -1;
	for (i = 0; roles != NULL && roles[i] != NULL; i++) {
		xasprintf(&name, "%s.output.json", roles[i]);
		xasprintf(&label, "%s.workers/%s", id, name);
		e = NULL;
		rc = progress_read_file(wfd, name, label, &buf, &len,
		    &w[*nw].mtime, &e);
		if (rc == 0) {
			w[*nw].obj = json_loadb(buf, len, 0, &jerr);
			w[*nw].idx = i;
			if (json_is_object(w[*nw].obj))
				w[(*nw)++].role = roles[i];
			else {
				json_decref(w[*nw].obj);
				xasprintf(&e, "%s: not a JSON object", label);
			}
		}
		if (e != NULL)
			rb_warn(warn, e);
		free(buf);
		free(label);
		free(name);
	}
	close(wfd);
	return 0;
}

/*
 * The worker outputs give the actions: current and last = the newest
 * output, completed = the roles whose last output succeeded, oldest
 * first; a failed one becomes an error entry; worker_results keeps each
 * role's last status and summary.
 */
static void
rb_actions(json_t *ss, struct wout *w, size_t nw, struct strv *unrec)
{
	json_t		*done, *res, *r, *errs;
	const char	*st, *sum;
	char		 ts[32];
	size_t		 i;

	if (nw == 0) {
		progress_unrec(unrec, "skill_state", "current_action",
		    PROGRESS_UN_ADD);
		progress_unrec(unrec, "skill_state", "last_action",
		    PROGRESS_UN_ADD);
		progress_unrec(unrec, "skill_state", "completed_actions",
		    PROGRESS_UN_ADD);
		return;
	}
	qsort(w, nw, sizeof *w, rb_cmp);
	done = json_object_get(ss, "completed_actions");
	errs = json_object_get(ss, "errors");
	res = json_object();
	for (i = 0; i < nw; i++) {
		st = json_string_value(json_object_get(w[i].obj, "status"));
		sum = json_string_value(json_object_get(w[i].obj, "summary"));
		clock_iso(&w[i].mtime, 0, ts, sizeof ts);
		r = json_pack("{s:s?, s:s?, s:s}", "status", st, "summary", sum,
		    "saved_at", ts);
		json_object_set_new(res, w[i].role, r);
		if (st != NULL && strcmp(st, "success") == 0)
			json_array_append_new(done, json_string(w[i].role));
		if (st != NULL && strcmp(st, "failed") == 0)
			json_array_append_new(errs, json_pack("{s:s, s:s, s:s}",
			    "action", w[i].role, "message", sum != NULL ? sum :
			    "failed", "timestamp", ts));
	}
	json_object_set_new(ss, "current_action", json_string(w[nw - 1].role));
	json_object_set_new(ss, "last_action", json_string(w[nw - 1].role));
	json_object_set_new(ss, "worker_results", res);
}

/*
 * skill_state from the side files, in the shape action-init gives it.
 * unrec gets every field that could not be recovered: the API's fields
 * always, "skill_state.mode" and "skill_state.errors" always (the
 * history of errors is in no side file), and whatever was missing.
 */
int
progress_rebuild(const struct workflow_state *ws, int dfd, const char *id,
    json_t **out, struct strv *unrec, char **err)
{
	const char *const	*roles = ws != NULL ? ws->roles : NULL;
	const struct progress_format	*fm;
	struct wout		*w;
	json_t			*ss, *tasks = NULL;
	char			*dir, *warn = NULL, *e = NULL;
	size_t			 i, nw = 0;
	int			 pfd = -1, rc;

	*err = NULL;
	*out = NULL;
	if (progress_check_id(id, err) == -1)
		return -1;
	xasprintf(&dir, "%s.progress", id);
	rc = progress_open_dir(dfd, dir, 0, &pfd, err);
	free(dir);
	if (rc == -1)
		return -1;
	for (i = 0; roles != NULL && roles[i] != NULL; i++)
		;
	w = xcalloc(i + 1, sizeof *w);
	ss = state_skeleton(ws);
	for (i = 0; i < REBUILD_NAPI; i++)
		progress_unrec(unrec, rebuild_api_fields[i], NULL,
		    PROGRESS_UN_ADD);
	progress_unrec(unrec, "skill_state", "mode", PROGRESS_UN_ADD);
	progress_unrec(unrec, "skill_state", "errors", PROGRESS_UN_ADD);
	rc = 0;
	for (fm = ws != NULL ? ws->progress : NULL; fm != NULL &&
	    fm->role != NULL && rc == 0; fm++)
		rc = rb_md(pfd, id, fm, ss, unrec, err);
	if (rc == -1 || progress_tasks_read(dfd, id, &tasks, &e) == -1 ||
	    rb_outputs(dfd, id, roles, w, &nw, &warn, err) == -1) {
		if (e != NULL) {
			free(*err);
			*err = e;
		}
		rc = -1;
		goto out;
	}
	if (e != NULL)
		rb_warn(&warn, e);
	if (ws != NULL && ws->rebuilt != NULL)
		ws->rebuilt(ss, tasks, unrec);
	rb_actions(ss, w, nw, unrec);
	rc = 0;
out:
	for (i = 0; i < nw; i++)
		json_decref(w[i].obj);
	free(w);
	json_decref(tasks);
	if (pfd != -1)
		close(pfd);
	if (rc == -1) {
		json_decref(ss);
		free(warn);
		return -1;
	}
	*out = ss;
	*err = warn;
	return 0;
}
