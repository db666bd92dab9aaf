/*
 * serveccw.c: CCW's own dashboard SPA as a front end of serve: its
 * /api/switch-path, /api/csrf-token with CCW's CSRF check, and the v1
 * /api/loops routes, answered by serveloop.c's v2 functions, reshaped.
 */
#include <config.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "api.h"
#include "clock.h"
#include "serveint.h"
#include "xmalloc.h"

#define CCW_SLOTS	64		/* CSRF tokens outstanding, all sessions */
#define CCW_TTL_MS	(15u * 60 * 1000) /* a token's life (CCW's) */
#define CCW_COUNT_MAX	10		/* ?count= at most (CCW's) */
#define CCW_TOK_HEX	64		/* 32 random bytes (CCW's) */
#define CCW_SESS_HEX	32		/* 16 random bytes (CCW's) */
#define CCW_TITLE_MAX	80		/* a v1 prompt's first line as title */
#define CCW_SESSION	"ccw_session_id"
#define CCW_XSRF	"XSRF-TOKEN"

/* One CSRF token: single use, for one session, until a time. */
struct ccw_token {
	char		 tok[CCW_TOK_HEX + 1];	/* "": a free slot */
	char		 sess[CCW_SESS_HEX + 1];
	uint64_t	 until;			/* clock_mono_ms */
};

/* The tokens handed out and not yet used (per server, never global). */
struct serveccw {
	struct ccw_token	 t[CCW_SLOTS];
};

/*
 * A v1 Loop (CCW's frontend/src/lib/api.ts, interface Loop) from a v2
 * loop: its member, and the v2 member it comes from.
 */
static const struct ccw_member {
	const char	*v1;
	const char	*v2;
} ccw_members[] = {
	{ "id", "loop_id" },
	{ "name", "title" },
	{ "status", "status" },
	{ "currentStep", "current_iteration" },
	{ "totalSteps", "max_iterations" },
	{ "createdAt", "created_at" },
	{ "updatedAt", "updated_at" },
	{ "completedAt", "completed_at" },
	{ "error", "failure_reason" },
	{ "prompt", "description" },
};
#define CCW_NMEMBERS	(sizeof ccw_members / sizeof ccw_members[0])

/* Every server has its own token store. */
struct serveccw *
serveccw_new(void)
{
	return xcalloc(1, sizeof(struct serveccw));
}

/* The store goes with its server. */
void
serveccw_free(struct serveccw *cc)
{
	free(cc);
}

/*
 * n random bytes as 2n hex digits into out (2n + 1 bytes): 0, or -1
 * when the system gives no randomness (a token must never be guessable).
 */
static int
ccw_random_hex(char *out, size_t n)
{
	unsigned char	 b[32];
	size_t		 i;
	int		 fd, ok;

	if (n > sizeof b || (fd = open("/dev/urandom", O_RDONLY |
	    O_CLOEXEC)) < 0)
		return -1;
	ok = read(fd, b, n) == (ssize_t)n;
	close(fd);
	if (!ok)
		return -1;
	for (i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	return 0;
}

/* Are a and b (NUL-ended) the same?  No early exit on a difference. */
static int
ccw_same(const char *a, const char *b, size_t blen)
{
	unsigned	 diff = 0;
	size_t		 i;

	if (strlen(a) != blen)
		return 0;
	for (i = 0; i < blen; i++)
		diff |= (unsigned)(a[i] ^ b[i]);
	return diff == 0;
}

/* Where a cookie's value goes (ccw_cookie_copy). */
struct ccw_out {
	char	*out;
	size_t	 n;
};

/* The first cookie of its name: copied if it fits, else refused. */
static int
ccw_cookie_copy(const char *v, size_t len, void *arg)
{
	struct ccw_out	*o = arg;

	if (len + 1 > o->n)
		return -1;
	memcpy(o->out, v, len);
	o->out[len] = '\0';
	return 1;
}

/*
 * The value of cookie NAME in the request's Cookie fields into out (size
 * n): 1 found and fitting, else 0.  Values are hex here: no decoding.
 */
static int
ccw_cookie(const struct http_head *h, const char *name, char *out, size_t n)
{
	struct ccw_out	 o = { out, n };

	return http_head_cookies(h, name, ccw_cookie_copy, &o) == 1;
}

/* Is s exactly n lowercase hex digits (what we hand out)? */
static int
ccw_is_hex(const char *s, size_t n)
{
	return strlen(s) == n && strspn(s, "0123456789abcdef") == n;
}

/*
 * A new token for session sess into tok: a free or expired slot, else
 * the one nearest its end (a client that hoards tokens loses its oldest).
 */
static int
ccw_issue(struct serveccw *cc, const char *sess, char *tok)
{
	struct ccw_token	*t, *use = &cc->t[0];
	uint64_t		 now = clock_mono_ms();
	size_t			 i;

	if (ccw_random_hex(tok, CCW_TOK_HEX / 2) != 0)
		return -1;
	for (i = 0; i < CCW_SLOTS; i++) {
		t = &cc->t[i];
		if (t->tok[0] == '\0' || t->until <= now) {
			use = t;
			break;
		}
		if (t->until < use->until)
			use = t;
	}
	memcpy(use->tok, tok, sizeof use->tok);
	memcpy(use->sess, sess, sizeof use->sess);
	use->until = now + CCW_TTL_MS;
	return 0;
}

/* Spend token tok of session sess: 1 it was valid (now used), else 0. */
static int
ccw_take(struct serveccw *cc, const char *sess, const char *tok)
{
	struct ccw_token	*t;
	uint64_t		 now = clock_mono_ms();
	size_t			 i;
	int			 hit = 0;

	for (i = 0; i < CCW_SLOTS; i++) {
		t = &cc->t[i];
		if (t->tok[0] == '\0' || !ccw_same(t->tok, tok, strlen(tok)))
			continue;
		hit = t->until > now && strcmp(t->sess, sess) == 0;
		memset(t, 0, sizeof *t);	/* used or stale: gone */
	}
	return hit;
}

/* The header lines of a token handed out: CCW's header and cookie. */
static char *
ccw_token_lines(const char *tok, const char *new_sess)
{
	char	*s;

	xasprintf(&s, "%s%s%s%sX-CSRF-Token: %s\r\nSet-Cookie: " CCW_XSRF
	    "=%s; Path=/; SameSite=Strict; Max-Age=%u\r\n",
	    new_sess != NULL ? "Set-Cookie: " CCW_SESSION "=" : "",
	    new_sess != NULL ? new_sess : "",
	    new_sess != NULL ? "; Path=/; HttpOnly; SameSite=Strict; "
	    "Max-Age=86400" : "", new_sess != NULL ? "\r\n" : "", tok, tok,
	    CCW_TTL_MS / 1000);
	return s;
}

/*
 * GET /api/csrf-token[?count=N]: the caller's session (a new one as an
 * HttpOnly cookie), then 1 token {csrfToken} or N (at most 10) {tokens,
 * expiresIn}; the first also as X-CSRF-Token and the XSRF-TOKEN cookie.
 */
void
serveccw_csrf_token(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	const struct http_head	*h = http_req_head(r);
	char			 sess[CCW_SESS_HEX + 1], num[8], *end, *extra;
	char			 tok[CCW_TOK_HEX + 1], first[CCW_TOK_HEX + 1];
	json_t			*toks = json_array(), *j;
	long			 n = 1, i;
	int			 fresh = 0;

	(void)m;
	if (http_query_get(h->query, "count", num, sizeof num) == 1 &&
	    (n = strtol(num, &end, 10)) < 1)
		n = 1;
	n = n > CCW_COUNT_MAX ? CCW_COUNT_MAX : n;
	if (!ccw_cookie(h, CCW_SESSION, sess, sizeof sess) ||
	    !ccw_is_hex(sess, CCW_SESS_HEX))
		fresh = ccw_random_hex(sess, CCW_SESS_HEX / 2) == 0 ? 1 : -1;
	for (i = 0; fresh >= 0 && i < n; i++) {
		if (ccw_issue(s->ccw, sess, tok) != 0)
			break;
		if (i == 0)
			memcpy(first, tok, sizeof first);
		json_array_append_new(toks, json_string(tok));
	}
	if (fresh < 0 || i < n) {
		json_decref(toks);
		serve_ccw_error(r, 500, 1, "no randomness for a CSRF token");
		return;
	}
	j = n == 1 ? json_pack("{s:s}", "csrfToken", first) : json_pack(
	    "{s:O,s:i}", "tokens", toks, "expiresIn", (int)(CCW_TTL_MS / 1000));
	extra = ccw_token_lines(first, fresh ? sess : NULL);
	end = json_dumps(j, JSON_COMPACT);
	http_reply(r, 200, "application/json", extra, end, strlen(end));
	free(end);
	free(extra);
	json_decref(j);
	json_decref(toks);
}

/*
 * Did the request authorize itself with the Bearer token?  Then CSRF
 * does not apply (CCW's rule: no browser sends that header by itself).
 */
static int
ccw_bearer(const struct serve *s, const struct http_head *h)
{
	const char	*v = http_head_field(h, "authorization");

	if (v == NULL || strncasecmp(v, "Bearer ", 7) != 0)
		return 0;
	v += 7;
	v += strspn(v, " ");
	return ccw_same(s->cfg.token, v, strlen(v));
}

/*
 * CCW's CSRF check of a write: a Bearer request passes; else the session
 * cookie and one of its unused tokens, from X-CSRF-Token or else the
 * XSRF-TOKEN cookie (spent either way).  0 passed; -1 refused, 403 sent.
 */
static int
ccw_csrf_check(struct serve *s, struct http_req *r)
{
	const struct http_head	*h = http_req_head(r);
	const char		*hv = http_head_field(h, "x-csrf-token");
	char			 sess[CCW_SESS_HEX + 1], ck[CCW_TOK_HEX + 1];
	int			 ok = 0;

	if (ccw_bearer(s, h))
		return 0;
	if (ccw_cookie(h, CCW_SESSION, sess, sizeof sess) &&
	    ccw_is_hex(sess, CCW_SESS_HEX)) {
		if (hv != NULL)
			ok = ccw_take(s->ccw, sess, hv);
		if (!ok && ccw_cookie(h, CCW_XSRF, ck, sizeof ck) &&
		    (hv == NULL || strcmp(ck, hv) != 0))
			ok = ccw_take(s->ccw, sess, ck);
	}
	if (ok)
		return 0;
	serve_ccw_error(r, 403, 1, "CSRF validation failed");
	return -1;
}

/*
 * After a write passed CCW's check by cookie: the next token, as CCW's
 * server sends it (header and cookie); NULL for a Bearer request.
 */
static char *
ccw_renew(struct serve *s, struct http_req *r)
{
	const struct http_head	*h = http_req_head(r);
	char			 sess[CCW_SESS_HEX + 1], tok[CCW_TOK_HEX + 1];

	if (ccw_bearer(s, h) || !ccw_cookie(h, CCW_SESSION, sess,
	    sizeof sess) || !ccw_is_hex(sess, CCW_SESS_HEX) ||
	    ccw_issue(s->ccw, sess, tok) != 0)
		return NULL;
	return ccw_token_lines(tok, NULL);
}

/* A v2 loop as CCW's v1 Loop (ccw_members), into out. */
static void
ccw_loop_v1(const json_t *loop, json_t *out)
{
	json_t	*v;
	size_t	 i;

	for (i = 0; i < CCW_NMEMBERS; i++)
		if ((v = json_object_get(loop, ccw_members[i].v2)) != NULL &&
		    !json_is_null(v))
			json_object_set(out, ccw_members[i].v1, v);
}

/*
 * The v2 list's reply as the SPA reads it: {success, loops: [Loop],
 * total} (CCW's own server says {success, data}, which the SPA never
 * reads).  An error passes as it is.
 */
static json_t *
ccw_shape_list(struct http_req *r, int code, const json_t *j, char **extra,
    void *arg)
{
	json_t	*loops, *l, *one;
	size_t	 i;

	(void)r;
	(void)extra;
	(void)arg;
	if (code != 200)
		return NULL;
	loops = json_array();
	json_array_foreach(json_object_get(j, "data"), i, l) {
		one = json_object();
		ccw_loop_v1(l, one);
		json_array_append_new(loops, one);
	}
	return json_pack("{s:b,s:o,s:O?}", "success", 1, "loops", loops,
	    "total", json_object_get(j, "total"));
}

/*
 * A v2 action's reply {success, message, data: loop} as CCW's v1 one
 * {success, message} with the Loop the SPA's type wants at its top;
 * a create's also {data: {loopId}} (CCW's).  The next CSRF token rides
 * along, error or not (the check spent one).
 */
static json_t *
ccw_shape_loop(struct http_req *r, int code, const json_t *j, char **extra,
    void *arg)
{
	const json_t	*loop = json_object_get(j, "data");
	json_t		*out;

	*extra = ccw_renew(arg, r);
	if (code != 200)
		return NULL;
	out = json_pack("{s:b,s:O?}", "success", 1, "message",
	    json_object_get(j, "message"));
	ccw_loop_v1(loop, out);
	if (http_req_head(r)->method == HTTP_POST &&
	    strcmp(http_req_head(r)->path, "/api/loops") == 0)
		json_object_set_new(out, "data", json_pack("{s:O?}", "loopId",
		    json_object_get(loop, "loop_id")));
	return out;
}

/* GET /api/loops[?path=ROOT]: the v2 list (every root's), reshaped. */
void
serveccw_loops_list(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	http_req_shape(r, ccw_shape_list, s);
	serve_loops_list(s, r, m);
}

/* POST /api/loops/:id/{pause,resume,stop}: the v2 action, reshaped. */
void
serveccw_loops_action(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	if (ccw_csrf_check(s, r) != 0)
		return;
	http_req_shape(r, ccw_shape_loop, s);
	serve_loops_action(s, r, m);
}

/* create's reply: the new loop started as v2's start does it. */
static void
ccw_created(struct serve_call *c, json_t *reply)
{
	const char	*id = json_string_value(json_object_get(
			    json_object_get(reply, "loop"), "loop_id"));

	const char	*e = json_string_value(json_object_get(reply,
			    "error"));

	if (!json_is_true(json_object_get(reply, "ok")) || id == NULL) {
		serve_ccw_error(c->r, err_code_http(api_reply_code(reply)), 1,
		    e != NULL ? e : "cannot create the loop");
		serve_call_end(c);
		return;
	}
	c->id = xstrdup(id);
	c->s->writes++;
	serve_loop_dispatch(c, SOP_START);
}

/*
 * The title of a v1 loop: its prompt's first line, at most
 * CCW_TITLE_MAX bytes, never cut inside a UTF-8 character.
 */
static char *
ccw_title(const char *prompt)
{
	size_t	 n;

	prompt += strspn(prompt, " \t\r\n");
	n = strcspn(prompt, "\r\n");
	if (n > CCW_TITLE_MAX) {
		n = CCW_TITLE_MAX;
		while (n > 0 && ((unsigned char)prompt[n] & 0xC0) == 0x80)
			n--;
	}
	return xstrndup(prompt, n);
}

/*
 * POST /api/loops {prompt, tool?, mode?}: CCW's v1 create-and-start
 * (the SPA sends no taskId, which CCW's own server wants): the loop made
 * by the loop_open verb as v2's create, then v2's start.
 */
void
serveccw_loops_create(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	json_t		*b, *req;
	const char	*p;
	char		*title;

	(void)m;
	if (ccw_csrf_check(s, r) != 0)
		return;
	http_req_shape(r, ccw_shape_loop, s);
	if ((b = serve_body(r, 0)) == NULL)
		return;
	p = json_string_value(json_object_get(b, "prompt"));
	if (p == NULL || p[strspn(p, " \t\r\n")] == '\0') {
		serve_ccw_error(r, 400, 1, "prompt is required");
		json_decref(b);
		return;
	}
	title = ccw_title(p);
	req = json_pack("{s:s,s:s,s:s}", "verb", "loop_open", "title", title,
	    "description", p);
	serve_call_api(serve_call_new(s, r, &s->cfg.roots[0], NULL), req,
	    ccw_created);
	free(title);
	json_decref(b);
}

/*
 * GET /api/switch-path?path=P: CCW's workspace switch, to one of serve's
 * roots only: {success, projectPath, recentPaths (the roots),
 * activeSessions, archivedSessions}.  400 without a path, 404 for a
 * path that is not a root here (CCW: one that does not exist).
 */
void
serveccw_switch_path(struct serve *s, struct http_req *r,
    const struct serve_match *m)
{
	char		 want[PATH_MAX], *real, *rr;
	json_t		*roots = json_array(), *hit = NULL;
	size_t		 i;

	(void)m;
	if (http_query_get(http_req_head(r)->query, "path", want,
	    sizeof want) != 1 || *want == '\0') {
		json_decref(roots);
		serve_ccw_error(r, 400, 1, "Path is required");
		return;
	}
	real = realpath(want, NULL);
	for (i = 0; i < s->cfg.nroots; i++) {
		rr = realpath(s->cfg.roots[i].root, NULL);
		json_array_append_new(roots, json_string(rr != NULL ? rr :
		    s->cfg.roots[i].root));
		if (hit == NULL && real != NULL && rr != NULL &&
		    strcmp(real, rr) == 0)
			hit = json_array_get(roots, i);
		free(rr);
	}
	free(real);
	if (hit == NULL)
		serve_ccw_error(r, 404, 1, "Path is not a root of this server");
	else
		serve_ok(r, json_pack("{s:O,s:O,s:[],s:[]}", "projectPath",
		    hit, "recentPaths", roots, "activeSessions",
		    "archivedSessions"));
	json_decref(roots);
}
