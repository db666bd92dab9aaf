/*
 * result.c: reads an agent's final answer: the last WORKER_RESULT block,
 * its DETAILED_OUTPUT and any CLARIFICATION_NEEDED questions.  The text is
 * untrusted and not NUL-terminated; every string handed out is valid UTF-8.
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"
#include "xmalloc.h"

/* Spaces and the markdown decoration agents put around headers and keys. */
#define WS		" \t\v\f\r"
#define DECOR_LEAD	" \t\v\f\r#>-*+`_"
#define DECOR_TRAIL	" \t\v\f\r*`_"

/* A borrowed piece of the text. */
struct span {
	const char	*p;
	size_t		 n;
};

/* A growable byte buffer. */
struct rbuf {
	char	*p;
	size_t	 n;
	size_t	 cap;
};

enum rmode { M_FIELDS, M_FILES, M_FILESJSON, M_DETAIL, M_TAIL };

/* Where pass one found a section. */
struct rpos {
	int	have;
	size_t	off;
	int	fenced;		/* inside a ``` fence */
};

/* Parsing state of the block's body. */
struct rstate {
	struct wresult	*out;
	enum rmode	 mode;
	unsigned	 seen;		/* keys seen: the first value wins */
	struct rbuf	 detail;
	struct rbuf	 files;		/* a JSON array spread over lines */
};

enum rkey {
	K_ACTION, K_STATUS, K_SUMMARY, K_FILES, K_NEXT, K_LOOP, K_DETAIL,
	K_UNKNOWN
};

static const struct {
	const char	*name;
	enum rkey	 key;
} result_keys[] = {
	{ "action", K_ACTION },
	{ "status", K_STATUS },
	{ "summary", K_SUMMARY },
	{ "files_changed", K_FILES },
	{ "files", K_FILES },
	{ "next_suggestion", K_NEXT },
	{ "next", K_NEXT },
	{ "loop_back_to", K_LOOP },
	{ "detailed_output", K_DETAIL },
};

/* Amortised growth keeps a 10 MiB detailed output linear. */
static void
rbuf_add(struct rbuf *b, const char *p, size_t n)
{
	size_t	want;

	if (n == 0)
		return;
	if (b->cap - b->n < n + 1) {
		want = b->cap == 0 ? 256 : b->cap;
		while (want - b->n < n + 1)
			want *= 2;
		b->p = xreallocarray(b->p, want, 1);
		b->cap = want;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
	b->p[b->n] = '\0';
}

/* Both buffers are reused per call; one place owns their release. */
static void
rbuf_free(struct rbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

/* The C library's ctype follows the locale; the format is ASCII. */
static int
result_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* Keys and headers are matched without regard to case. */
static int
result_caseeq(const char *p, size_t n, const char *word)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (word[i] == '\0' ||
		    result_lower((unsigned char)p[i]) != result_lower(word[i]))
			return 0;
	}
	return word[n] == '\0';
}

/* Decoration is a set of bytes, not a pattern: strip any run of them. */
static void
result_lstrip(struct span *s, const char *set)
{
	while (s->n > 0 && s->p[0] != '\0' && strchr(set, s->p[0]) != NULL) {
		s->p++;
		s->n--;
	}
}

/* The trailing half of result_lstrip. */
static void
result_rstrip(struct span *s, const char *set)
{
	while (s->n > 0 && s->p[s->n - 1] != '\0' &&
	    strchr(set, s->p[s->n - 1]) != NULL)
		s->n--;
}

/* Most comparisons want the value without surrounding blanks. */
static void
result_trim(struct span *s)
{
	result_lstrip(s, WS);
	result_rstrip(s, WS);
}

/* Agents quote values in backticks or quotes; one matching pair goes. */
static void
result_unquote(struct span *s)
{
	char	c;

	if (s->n < 2)
		return;
	c = s->p[0];
	if ((c == '"' || c == '\'' || c == '`') && s->p[s->n - 1] == c) {
		s->p++;
		s->n -= 2;
		result_trim(s);
	}
}

/* Lines end at '\n'; a '\r' before it belongs to the ending, not the text. */
static int
result_line(const char *text, size_t len, size_t *off, struct span *l)
{
	const char	*s, *nl;

	if (*off >= len)
		return 0;
	s = text + *off;
	nl = memchr(s, '\n', len - *off);
	if (nl == NULL) {
		l->n = len - *off;
		*off = len;
	} else {
		l->n = (size_t)(nl - s);
		*off += l->n + 1;
	}
	l->p = s;
	if (l->n > 0 && s[l->n - 1] == '\r')
		l->n--;
	return 1;
}

/* A fenced block ends at the next fence, so fences are tracked. */
static int
result_is_fence(struct span l)
{
	result_lstrip(&l, WS ">");
	return l.n >= 3 && (memcmp(l.p, "```", 3) == 0 ||
	    memcmp(l.p, "~~~", 3) == 0);
}

/*
 * Agents decorate section headers with markdown (bold, headings, list
 * markers, backticks), so compare the bare word; *rest gets what follows
 * its colon, and bare says whether nothing does.
 */
static int
result_header(struct span l, const char *name, struct span *rest)
{
	struct span	r;

	result_lstrip(&l, DECOR_LEAD);
	if (l.n < strlen(name) || !result_caseeq(l.p, strlen(name), name))
		return 0;
	l.p += strlen(name);
	l.n -= strlen(name);
	result_lstrip(&l, DECOR_TRAIL);
	if (l.n > 0 && l.p[0] != ':')
		return 0;
	r = l;
	if (r.n > 0) {
		r.p++;
		r.n--;
	}
	result_lstrip(&r, DECOR_TRAIL);
	result_rstrip(&r, WS);
	if (rest != NULL)
		*rest = r;
	return 1;
}

/* The WORKER_RESULT header stands alone; prose that names it is not one. */
static int
result_is_wr(struct span l)
{
	struct span	rest;

	return result_header(l, "WORKER_RESULT", &rest) && rest.n == 0;
}

/* null, none and nothing all mean "absent" in the block. */
static int
result_is_null(struct span s)
{
	return s.n == 0 || result_caseeq(s.p, s.n, "null") ||
	    result_caseeq(s.p, s.n, "none");
}

/* "CLARIFICATION_NEEDED: none" is an agent saying it has no question. */
static int
result_is_cl(struct span l, struct span *rest)
{
	struct span	r;

	if (!result_header(l, "CLARIFICATION_NEEDED", &r))
		return 0;
	result_rstrip(&r, ".");
	if ((r.n > 0 && result_is_null(r)) || result_caseeq(r.p, r.n, "no") ||
	    result_caseeq(r.p, r.n, "false") || result_caseeq(r.p, r.n, "n/a"))
		return 0;
	if (rest != NULL)
		*rest = r;
	return 1;
}

/*
 * Fields leave this module as C strings, JSON and protocol text, so
 * invalid UTF-8 (overlong, surrogate, out of range, cut short) and NUL
 * become U+FFFD here.
 */
static char *
result_utf8(const char *p, size_t n)
{
	struct rbuf	 b = { NULL, 0, 0 };
	size_t		 i = 0, k, need, run;
	uint32_t	 cp, min;
	unsigned char	 c;

	b.p = xmalloc(n + 1);
	b.cap = n + 1;
	b.p[0] = '\0';
	while (i < n) {
		for (run = i; run < n && (unsigned char)p[run] >= 0x01 &&
		    (unsigned char)p[run] < 0x80; run++)
			;
		rbuf_add(&b, p + i, run - i);
		if ((i = run) >= n)
			break;
		c = (unsigned char)p[i];
		need = c >= 0xf0 && c <= 0xf4 ? 3 : c >= 0xe0 && c <= 0xef ? 2 :
		    c >= 0xc2 && c <= 0xdf ? 1 : 0;
		cp = c & (0x3fu >> need);
		min = need == 3 ? 0x10000 : need == 2 ? 0x800 : 0x80;
		for (k = 1; need > 0 && k <= need; k++) {
			if (i + k >= n ||
			    ((unsigned char)p[i + k] & 0xc0) != 0x80)
				break;
			cp = cp << 6 | ((unsigned char)p[i + k] & 0x3f);
		}
		if (need == 0 || k <= need || cp < min || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff)) {
			rbuf_add(&b, "\xef\xbf\xbd", 3);
			i++;
			continue;
		}
		rbuf_add(&b, p + i, need + 1);
		i += need + 1;
	}
	return b.p;
}

/* A scalar value: unquoted, NULL when absent, sanitised otherwise. */
static char *
result_scalar(struct span v)
{
	result_trim(&v);
	result_unquote(&v);
	if (result_is_null(v))
		return NULL;
	return result_utf8(v.p, v.n);
}

/*
 * A status outside the four known ones must not pass as one, but the
 * spelling agents use varies ("Needs-Input", `success`, "**partial**").
 */
static char *
result_status(struct span v)
{
	char	buf[32];
	size_t	i;

	result_trim(&v);
	result_lstrip(&v, "*`'\"_ \t");
	result_rstrip(&v, "*`'\"_. \t");
	if (v.n == 0 || v.n >= sizeof buf)
		return xstrdup("unknown");
	for (i = 0; i < v.n; i++) {
		buf[i] = (char)result_lower((unsigned char)v.p[i]);
		if (buf[i] == '-' || buf[i] == ' ')
			buf[i] = '_';
	}
	buf[v.n] = '\0';
	if (strcmp(buf, "success") == 0 || strcmp(buf, "failed") == 0 ||
	    strcmp(buf, "needs_input") == 0 || strcmp(buf, "partial") == 0)
		return xstrdup(buf);
	return xstrdup("unknown");
}

/* One item of a bare list; quotes and absent markers are dropped. */
static void
result_list_item(struct span s, struct strv *sv)
{
	char	*t;

	result_trim(&s);
	result_unquote(&s);
	if (result_is_null(s))
		return;
	t = result_utf8(s.p, s.n);
	strv_push(sv, t);
	free(t);
}

/*
 * Lists arrive as JSON arrays, as JSON-looking arrays of bare words, or
 * as comma-separated words; all three end up as owned strings.
 */
static void
result_list(struct span v, struct strv *sv)
{
	json_t		*a, *e;
	json_error_t	 jerr;
	const char	*comma;
	size_t		 i;

	result_trim(&v);
	if (v.n > 0 && v.p[0] == '[') {
		a = json_loadb(v.p, v.n, JSON_DECODE_ANY, &jerr);
		if (json_is_array(a)) {
			json_array_foreach(a, i, e) {
				if (json_is_string(e))
					result_list_item((struct span){
					    json_string_value(e),
					    json_string_length(e) }, sv);
			}
			json_decref(a);
			return;
		}
		json_decref(a);
		v.p++;
		v.n--;
		if (v.n > 0 && v.p[v.n - 1] == ']')
			v.n--;
	}
	while (v.n > 0) {
		comma = memchr(v.p, ',', v.n);
		i = comma != NULL ? (size_t)(comma - v.p) + 1 : v.n;
		result_list_item((struct span){ v.p, comma ? i - 1 : i }, sv);
		v.p += i;
		v.n -= i;
	}
}

/* A bullet ("- ", "* ", "+ ") introduces fields and list items alike. */
static int
result_unbullet(struct span *s)
{
	if (s->n >= 2 && (s->p[0] == '-' || s->p[0] == '*' || s->p[0] == '+') &&
	    (s->p[1] == ' ' || s->p[1] == '\t')) {
		s->p += 2;
		s->n -= 2;
		result_trim(s);
		return 1;
	}
	return 0;
}

/*
 * Split "key: value" with the decoration agents add ("**status**:",
 * "`files_changed`:", "**summary:** text"); keys are words only.
 */
static enum rkey
result_keyval(struct span l, struct span *val)
{
	struct span	 k;
	const char	*colon;
	char		 buf[32];
	size_t		 i, j;
	int		 bold;

	result_trim(&l);
	result_unbullet(&l);
	bold = l.n > 0 && l.p[0] == '*';
	result_lstrip(&l, "*`");
	colon = memchr(l.p, ':', l.n);
	if (colon == NULL)
		return K_UNKNOWN;
	k.p = l.p;
	k.n = (size_t)(colon - l.p);
	result_rstrip(&k, DECOR_TRAIL);
	if (k.n == 0 || k.n >= sizeof buf)
		return K_UNKNOWN;
	for (i = 0; i < k.n; i++) {
		buf[i] = (char)result_lower((unsigned char)k.p[i]);
		if (buf[i] == ' ' || buf[i] == '-')
			buf[i] = '_';
		if (!((buf[i] >= 'a' && buf[i] <= 'z') || buf[i] == '_'))
			return K_UNKNOWN;
	}
	buf[k.n] = '\0';
	val->p = colon + 1;
	val->n = (size_t)(l.p + l.n - val->p);
	result_trim(val);
	if (bold) {
		result_lstrip(val, "*");
		result_trim(val);
	}
	for (j = 0; j < sizeof result_keys / sizeof result_keys[0]; j++) {
		if (strcmp(buf, result_keys[j].name) == 0)
			return result_keys[j].key;
	}
	return K_UNKNOWN;
}

/* A finished multi-line JSON array of files is parsed in one go. */
static void
result_files_flush(struct rstate *st)
{
	if (st->mode != M_FILESJSON)
		return;
	if (st->files.n > 0)
		result_list((struct span){ st->files.p, st->files.n },
		    &st->out->files_changed);
	st->files.n = 0;
	st->mode = M_FIELDS;
}

/* Detailed output keeps the agent's lines but not leading blank ones. */
static void
result_detail_line(struct rstate *st, struct span l)
{
	struct span	t = l;

	result_trim(&t);
	if (st->detail.n == 0 && t.n == 0)
		return;
	rbuf_add(&st->detail, l.p, l.n);
	rbuf_add(&st->detail, "\n", 1);
}

/* Store one field; a field given twice keeps its first value. */
static void
result_field(struct rstate *st, struct span l)
{
	struct wresult	*out = st->out;
	struct span	 v;
	enum rkey	 k;

	k = result_keyval(l, &v);
	if (k == K_UNKNOWN || (st->seen & (1u << k)))
		return;
	st->seen |= 1u << k;
	switch (k) {
	case K_ACTION:
		out->action = result_scalar(v);
		break;
	case K_STATUS:
		free(out->status);
		out->status = result_status(v);
		break;
	case K_SUMMARY:
		out->summary = result_scalar(v);
		break;
	case K_NEXT:
		out->next_suggestion = result_scalar(v);
		break;
	case K_LOOP:
		out->loop_back_to = result_scalar(v);
		break;
	case K_FILES:
		if (v.n == 0)
			st->mode = M_FILES;
		else if (v.p[0] == '[' && memchr(v.p, ']', v.n) == NULL) {
			st->mode = M_FILESJSON;
			rbuf_add(&st->files, v.p, v.n);
		} else
			result_list(v, &out->files_changed);
		break;
	case K_DETAIL:
		st->mode = M_DETAIL;
		if (v.n > 0)
			result_detail_line(st, v);
		break;
	case K_UNKNOWN:
		break;
	}
}

/* One line of a files list written as bullets under "files_changed:". */
static int
result_files_line(struct rstate *st, struct span l)
{
	struct span	t = l, v;

	result_trim(&t);
	if (!result_unbullet(&t) || result_keyval(l, &v) != K_UNKNOWN)
		return 0;
	result_rstrip(&t, "," WS);
	result_list_item(t, &st->out->files_changed);
	return 1;
}

/*
 * The body of the last WORKER_RESULT block: fields, then DETAILED_OUTPUT
 * up to a CLARIFICATION_NEEDED header, the end of the text, or the
 * closing fence when the block sits in a fence.
 */
static void
result_block(const char *text, size_t len, size_t off, int fenced,
    struct wresult *out)
{
	struct rstate	 st = { .out = out, .mode = M_FIELDS };
	struct span	 l, rest;

	while (result_line(text, len, &off, &l)) {
		if (result_is_fence(l)) {
			if (st.mode == M_DETAIL && !fenced)
				result_detail_line(&st, l);
			else if (fenced) {
				result_files_flush(&st);
				if (st.mode == M_DETAIL)
					break;
				st.mode = M_TAIL;
				fenced = 0;
			}
			continue;
		}
		if (result_is_cl(l, NULL))
			break;
		if (st.mode != M_DETAIL &&
		    result_header(l, "DETAILED_OUTPUT", &rest)) {
			result_files_flush(&st);
			st.mode = M_DETAIL;
			if (rest.n > 0)
				result_detail_line(&st, rest);
			continue;
		}
		switch (st.mode) {
		case M_DETAIL:
			result_detail_line(&st, l);
			continue;
		case M_TAIL:
			continue;
		case M_FILESJSON:
			rbuf_add(&st.files, " ", 1);
			rbuf_add(&st.files, l.p, l.n);
			if (memchr(l.p, ']', l.n) != NULL)
				result_files_flush(&st);
			continue;
		case M_FILES:
			if (result_files_line(&st, l))
				continue;
			st.mode = M_FIELDS;
			break;
		case M_FIELDS:
			break;
		}
		result_field(&st, l);
	}
	result_files_flush(&st);
	l = (struct span){ st.detail.p, st.detail.n };
	result_rstrip(&l, WS "\n");
	if (l.n > 0)
		out->detailed_output = result_utf8(l.p, l.n);
	rbuf_free(&st.detail);
	rbuf_free(&st.files);
}

/* Options are written "[A, B]" or plain; a recommendation is one of them. */
static json_t *
result_options(struct span v, int one)
{
	struct strv	 sv = { NULL, 0 };
	json_t		*a;
	size_t		 i;

	result_list(v, &sv);
	if (one)
		a = sv.n > 0 ? json_string(sv.v[0]) : json_null();
	else {
		a = json_array();
		for (i = 0; i < sv.n; i++)
			json_array_append_new(a, json_string(sv.v[i]));
	}
	strv_clear(&sv);
	return a;
}

/*
 * "Q1: text | Options: [A, B] | Recommended: [A]" becomes one object;
 * a '|' that does not start a known part stays in the question text.
 */
static void
result_question(struct span t, json_t *qs)
{
	struct span	 seg, val;
	struct rbuf	 q = { NULL, 0, 0 };
	json_t		*opts = NULL, *rec = NULL, *o;
	char		 id[24], *text;
	const char	*bar;
	size_t		 i;

	result_trim(&t);
	result_unbullet(&t);
	result_lstrip(&t, "*_`");
	if (t.n == 0)		/* a blank line; t.n - i below must not wrap */
		return;
	for (i = 1; i < t.n && i < sizeof id - 2 && t.p[i] >= '0' &&
	    t.p[i] <= '9'; i++)
		;
	seg = (struct span){ t.p + i, t.n - i };
	result_lstrip(&seg, DECOR_TRAIL);
	if (i > 1 && (t.p[0] == 'Q' || t.p[0] == 'q') && seg.n > 0 &&
	    strchr(":.)", seg.p[0]) != NULL) {
		(void)snprintf(id, sizeof id, "Q%.*s", (int)(i - 1), t.p + 1);
		t = (struct span){ seg.p + 1, seg.n - 1 };
	} else if ((bar = memchr(t.p, '|', t.n)) != NULL &&
	    result_header((struct span){ bar + 1,
	    (size_t)(t.p + t.n - bar - 1) }, "options", &val))
		(void)snprintf(id, sizeof id, "Q%zu", json_array_size(qs) + 1);
	else
		return;
	for (i = 0;; i++) {
		bar = memchr(t.p, '|', t.n);
		seg = (struct span){ t.p, bar ? (size_t)(bar - t.p) : t.n };
		if (i > 0 && result_header(seg, "options", &val)) {
			json_decref(opts);
			opts = result_options(val, 0);
		} else if (i > 0 && result_header(seg, "recommended", &val)) {
			json_decref(rec);
			rec = result_options(val, 1);
		} else {
			result_trim(&seg);
			if (q.n > 0 && seg.n > 0)
				rbuf_add(&q, " | ", 3);
			rbuf_add(&q, seg.p, seg.n);
		}
		if (bar == NULL)
			break;
		t.n -= (size_t)(bar - t.p) + 1;
		t.p = bar + 1;
	}
	seg = (struct span){ q.p != NULL ? q.p : "", q.n };
	result_lstrip(&seg, DECOR_TRAIL);
	result_rstrip(&seg, DECOR_TRAIL);
	text = result_utf8(seg.p, seg.n);
	o = json_object();
	json_object_set_new(o, "id", json_string(id));
	json_object_set_new(o, "question", json_string(text));
	json_object_set_new(o, "options", opts != NULL ? opts : json_array());
	json_object_set_new(o, "recommended", rec != NULL ? rec : json_null());
	json_array_append_new(qs, o);
	free(text);
	rbuf_free(&q);
}

/*
 * The questions of one CLARIFICATION_NEEDED block, which runs to the end
 * of the text, the next section header, or its closing fence.
 */
static void
result_clarify(const char *text, size_t len, size_t off, int fenced,
    struct wresult *out)
{
	struct span	l, rest;

	json_decref(out->questions);
	out->questions = json_array();
	free(out->status);
	out->status = xstrdup("needs_input");
	if (!result_line(text, len, &off, &l))
		return;
	if (result_is_cl(l, &rest) && rest.n > 0)
		result_question(rest, out->questions);
	while (result_line(text, len, &off, &l)) {
		if (result_is_fence(l)) {
			if (fenced)
				break;
			continue;
		}
		if (result_is_wr(l) ||
		    result_header(l, "DETAILED_OUTPUT", NULL))
			break;
		result_question(l, out->questions);
	}
}

/* Pass one: where the last block and the clarifications are. */
static void
result_scan(const char *text, size_t len, struct rpos *wr,
    struct rpos *cl_after, struct rpos *cl_last)
{
	struct span	l;
	size_t		off = 0, start;
	int		in_fence = 0;

	for (;;) {
		start = off;
		if (!result_line(text, len, &off, &l))
			break;
		if (result_is_fence(l))
			in_fence = !in_fence;
		else if (result_is_wr(l)) {
			*wr = (struct rpos){ 1, off, in_fence };
			cl_after->have = 0;
		} else if (result_is_cl(l, NULL)) {
			if (!cl_after->have)
				*cl_after = (struct rpos){ 1, start, in_fence };
			*cl_last = (struct rpos){ 1, start, in_fence };
		}
	}
}

/*
 * The last block wins because agents echo their prompt, which holds a
 * template block; only a clarification after it (or, with no block at
 * all, the last one) counts, and it forces needs_input.
 */
int
result_parse(const char *text, size_t len, struct wresult *out)
{
	struct rpos	wr = { 0, 0, 0 }, cl_after = wr, cl_last = wr;

	memset(out, 0, sizeof *out);
	out->status = xstrdup("unknown");
	if (text == NULL || len == 0)
		return 0;
	result_scan(text, len, &wr, &cl_after, &cl_last);
	if (wr.have) {
		result_block(text, len, wr.off, wr.fenced, out);
		if (cl_after.have)
			result_clarify(text, len, cl_after.off,
			    cl_after.fenced, out);
		return 1;
	}
	if (cl_last.have)
		result_clarify(text, len, cl_last.off, cl_last.fenced, out);
	return cl_last.have;
}

/* One free path for everything result_parse allocates. */
void
result_clear(struct wresult *r)
{
	free(r->status);
	free(r->action);
	free(r->summary);
	strv_clear(&r->files_changed);
	free(r->next_suggestion);
	free(r->loop_back_to);
	free(r->detailed_output);
	json_decref(r->questions);
	memset(r, 0, sizeof *r);
}
