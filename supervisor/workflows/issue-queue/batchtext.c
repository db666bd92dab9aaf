/*
 * batchtext.c: state.json's text without re-encoding the whole batch on
 * every save: each queue[] entry's and issues{} member's text kept until
 * the batch says it changed, the rest encoded fresh; the same bytes as
 * json_dumps(st, JSON_INDENT(2) | JSON_PRESERVE_ORDER) (issue 30: that
 * call per item change was O(n^2), 38% of a 1000-item batch's CPU).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "batchtext.h"
#include "xmalloc.h"

#define BT_FLAGS	(JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY)

/* A growing buffer. */
struct bt_buf {
	char	*p;
	size_t	 len, cap;
};

/* One kept text, and the value it is of (a value replaced is stale). */
struct bt_piece {
	const json_t	*v;
	char		*s;
	size_t		 len;
};

struct batch_text {
	struct bt_piece	*queue;		/* by index */
	size_t		 nqueue;
	json_t		*issues;	/* key -> [value as pointer, text] */
	struct bt_buf	 hist;		/* history's entries so far, joined */
	size_t		 nhist;		/* how many */
	const json_t	*hist0;		/* its first (one dropped: rebuilt) */
};

static void
bt_put(struct bt_buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = xreallocarray(b->p, b->cap, 1);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
bt_puts(struct bt_buf *b, const char *s)
{
	bt_put(b, s, strlen(s));
}

/*
 * v encoded as it is at depth levels of JSON_INDENT(2): encoded alone,
 * every line after the first indented by 2 * depth more (a string never
 * holds a raw newline: the encoder escapes it).  NULL: cannot encode.
 */
static char *
bt_encode(const json_t *v, int depth, size_t *len)
{
	struct bt_buf	 b = { NULL, 0, 0 };
	char		*s, *p, *nl;

	if ((s = json_dumps(v, BT_FLAGS)) == NULL)
		return NULL;
	for (p = s; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		bt_put(&b, p, (size_t)(nl - p) + 1);
		bt_put(&b, "                ", (size_t)(2 * depth) < 16 ?
		    (size_t)(2 * depth) : 16);
	}
	bt_puts(&b, p);
	free(s);
	*len = b.len;
	return b.p;
}

struct batch_text *
batchtext_new(void)
{
	struct batch_text	*t = xcalloc(1, sizeof *t);

	t->issues = json_object();
	return t;
}

void
batchtext_free(struct batch_text *t)
{
	size_t	i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nqueue; i++)
		free(t->queue[i].s);
	free(t->queue);
	json_decref(t->issues);
	free(t->hist.p);
	free(t);
}

/* queue[idx] changed: encoded again at the next save. */
void
batchtext_item(struct batch_text *t, size_t idx)
{
	if (t != NULL && idx < t->nqueue) {
		free(t->queue[idx].s);
		t->queue[idx].s = NULL;
	}
}

/* issues[key] changed: encoded again at the next save. */
void
batchtext_issue(struct batch_text *t, const char *key)
{
	if (t != NULL && key != NULL)
		json_object_del(t->issues, key);
}

/* queue[]'s text at depth 1: kept entries reused. */
static int
bt_queue(struct batch_text *t, const json_t *q, struct bt_buf *b)
{
	size_t		 i, n = json_array_size(q);
	struct bt_piece	*pc;

	if (n == 0)
		return bt_puts(b, "[]"), 0;
	if (n > t->nqueue) {
		t->queue = xreallocarray(t->queue, n, sizeof *t->queue);
		memset(t->queue + t->nqueue, 0, (n - t->nqueue) *
		    sizeof *t->queue);
		t->nqueue = n;
	}
	bt_puts(b, "[\n    ");
	for (i = 0; i < n; i++) {
		pc = &t->queue[i];
		if (pc->s == NULL || pc->v != json_array_get(q, i)) {
			free(pc->s);
			pc->v = json_array_get(q, i);
			if ((pc->s = bt_encode(pc->v, 2, &pc->len)) == NULL)
				return -1;
		}
		if (i > 0)
			bt_puts(b, ",\n    ");
		bt_put(b, pc->s, pc->len);
	}
	bt_puts(b, "\n  ]");
	return 0;
}

/* One issues{} member's text ("key": value) at depth 2, kept or made. */
static const char *
bt_issue(struct batch_text *t, const char *key, const json_t *v)
{
	json_t	*k = json_object_get(t->issues, key), *ks;
	char	*kt, *vt, *s;
	size_t	 n;

	if (json_is_array(k) && json_integer_value(json_array_get(k, 0)) ==
	    (json_int_t)(intptr_t)v)
		return json_string_value(json_array_get(k, 1));
	ks = json_string(key);
	kt = json_dumps(ks, JSON_ENCODE_ANY);
	json_decref(ks);
	vt = bt_encode(v, 2, &n);
	if (kt == NULL || vt == NULL) {
		free(kt);
		free(vt);
		return NULL;
	}
	xasprintf(&s, "%s: %s", kt, vt);
	json_object_set_new(t->issues, key, json_pack("[I, s]",
	    (json_int_t)(intptr_t)v, s));
	free(kt);
	free(vt);
	free(s);
	return json_string_value(json_array_get(json_object_get(t->issues,
	    key), 1));
}

/* issues{}'s text at depth 1: kept members reused. */
static int
bt_issues(struct batch_text *t, const json_t *o, struct bt_buf *b)
{
	const char	*key, *s;
	const json_t	*v;
	int		 first = 1;

	if (json_object_size(o) == 0)
		return bt_puts(b, "{}"), 0;
	bt_puts(b, "{\n    ");
	json_object_foreach((json_t *)o, key, v) {
		if ((s = bt_issue(t, key, v)) == NULL)
			return -1;
		if (!first)
			bt_puts(b, ",\n    ");
		first = 0;
		bt_puts(b, s);
	}
	bt_puts(b, "\n  }");
	return 0;
}

/*
 * The state's text, as json_dumps(st, JSON_INDENT(2) |
 * JSON_PRESERVE_ORDER) writes it; NULL when something cannot be encoded.
 */
char *
batchtext_dump(struct batch_text *t, const json_t *st)
{
	struct bt_buf	 b = { NULL, 0, 0 };
	const char	*key;
	const json_t	*v;
	json_t		*ks;
	char		*s;
	size_t		 n;
	int		 rc = 0, first = 1;

	if (!json_is_object(st) || json_object_size(st) == 0)
		return json_dumps(st, BT_FLAGS);
	bt_puts(&b, "{\n  ");
	json_object_foreach((json_t *)st, key, v) {
		if (!first)
			bt_puts(&b, ",\n  ");
		first = 0;
		ks = json_string(key);
		s = json_dumps(ks, JSON_ENCODE_ANY);
		json_decref(ks);
		if (s == NULL)
			return free(b.p), NULL;
		bt_puts(&b, s);
		bt_puts(&b, ": ");
		free(s);
		if (strcmp(key, "queue") == 0 && json_is_array(v))
			rc = bt_queue(t, v, &b);
		else if (strcmp(key, "issues") == 0 && json_is_object(v))
			rc = bt_issues(t, v, &b);
		else if ((s = bt_encode(v, 1, &n)) == NULL)
			rc = -1;
		else
			bt_put(&b, s, n), free(s);
		if (rc != 0)
			return free(b.p), NULL;
	}
	bt_puts(&b, "\n}");
	return b.p;
}

/*
 * state-history.json's text, as json_dumps(history, JSON_INDENT(2))
 * writes it: only entries appended since the last call encoded (the
 * history only grows at its end; one dropped at its start rebuilds it).
 */
char *
batchtext_history(struct batch_text *t, const json_t *hist)
{
	size_t		 n = json_array_size(hist), len;
	char		*s, *out;

	if (n == 0)
		return json_dumps(hist, JSON_INDENT(2));
	if (t->nhist > n || (t->nhist > 0 && t->hist0 != json_array_get(hist,
	    0))) {
		t->hist.len = 0;
		t->nhist = 0;
	}
	t->hist0 = json_array_get(hist, 0);
	for (; t->nhist < n; t->nhist++) {
		if ((s = bt_encode(json_array_get(hist, t->nhist), 1, &len)) ==
		    NULL)
			return NULL;
		if (t->nhist > 0)
			bt_puts(&t->hist, ",\n  ");
		bt_put(&t->hist, s, len);
		free(s);
	}
	out = xmalloc(t->hist.len + 7);
	memcpy(out, "[\n  ", 4);
	memcpy(out + 4, t->hist.p, t->hist.len);
	memcpy(out + 4 + t->hist.len, "\n]", 3);
	return out;
}
