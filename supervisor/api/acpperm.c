/*
 * acpperm.c: a CLI's permission request (a question of kind permission,
 * ccw-loop's permask.c) as ACP's session/request_permission: one call
 * per request, several at once, the client's choice answered via "acp"
 * through the loop's answers file; all forgotten when the loop ends.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "acpint.h"
#include "errcode.h"
#include "host.h"
#include "jsonrpc.h"
#include "log.h"
#include "xmalloc.h"

/* One request of the session's out with the client. */
struct acp_perm {
	TAILQ_ENTRY(acp_perm)	 entry;
	struct acp_session	*s;
	char			*qid;
};

/* A request done with: out of its session's list. */
static void
acpperm_free(struct acp_perm *p)
{
	TAILQ_REMOVE(&p->s->perms, p, entry);
	free(p->qid);
	free(p);
}

/*
 * The client's choice: allow only when it selected allow; rejected,
 * cancelled or an error is a deny.  Answered elsewhere first (or by its
 * deadline's policy), the answers file refuses it: that is no fault.
 */
static void
acpperm_reply(void *arg, const json_t *result, const json_t *error)
{
	struct acp_perm	*p = arg;
	const json_t	*out = json_object_get(result, "outcome");
	const char	*kind, *oid, *answer;
	char		*err = NULL;
	int		 rc;

	if (result == NULL && error == NULL) {
		acpperm_free(p);	/* dropped: the client left */
		return;
	}
	kind = json_string_value(json_object_get(out, "outcome"));
	oid = json_string_value(json_object_get(out, "optionId"));
	answer = error == NULL && kind != NULL && strcmp(kind,
	    "selected") == 0 && oid != NULL && strcmp(oid, "allow") == 0 ?
	    "allow" : "deny";
	rc = host_question_answer(p->s->proj.host, p->qid, answer, NULL, "acp",
	    &err);
	if (rc == -ERR_CONFLICT || rc == -ERR_NOT_FOUND)
		log_debug("acp: session %s: %s answered before the client "
		    "(its %s ignored): %s", p->s->id, p->qid, answer, err);
	else if (rc != 0)
		log_info("acp: session %s: %s: %s", p->s->id, p->qid, err);
	free(err);
	acpperm_free(p);
}

/* A string member of the record, or NULL. */
static const char *
acpperm_s(const json_t *q, const char *key)
{
	return json_string_value(json_object_get(q, key));
}

/* What the request is about: the text after "... asks to use TOOL: ". */
static char *
acpperm_title(const char *role, const char *tool, const char *text)
{
	char	*key, *title;
	const char *d;

	xasprintf(&key, " asks to use %s: ", tool);
	d = text != NULL ? strstr(text, key) : NULL;
	d = d != NULL ? d + strlen(key) : text != NULL ? text : "?";
	xasprintf(&title, "%s asks to use %s: %s", role, tool, d);
	free(key);
	return title;
}

/*
 * question_asked of kind permission while the session's loop runs: a
 * session/request_permission on its own tool call (the record's id),
 * allow once or reject once, the recommended one marked.  A record with
 * no deadline was answered at once by its policy: nothing to ask.
 */
void
acpperm_event(struct acp_session *s, const char *name, const json_t *f)
{
	const json_t	*q = json_object_get(f, "question");
	const char	*qid = acpperm_s(q, "id"), *kind = acpperm_s(q, "kind");
	const char	*role = acpperm_s(q, "role");
	const char	*tool = acpperm_s(q, "tool_name");
	const char	*rec = acpperm_s(q, "recommended");
	struct acp_perm	*p;
	char		*title;
	json_t		*opts;

	if (strcmp(name, "question_asked") != 0 || s->hl == NULL ||
	    qid == NULL || kind == NULL || strcmp(kind, "permission") != 0 ||
	    json_object_get(q, "deadline") == NULL)
		return;
	p = xcalloc(1, sizeof *p);
	p->s = s;
	p->qid = xstrdup(qid);
	TAILQ_INSERT_TAIL(&s->perms, p, entry);
	opts = json_pack("[{s:s, s:s, s:s, s:{s:b}}, {s:s, s:s, s:s, s:{s:b}}]",
	    "optionId", "allow", "name", "Allow", "kind", "allow_once", "_meta",
	    "recommended", rec != NULL && strcmp(rec, "allow") == 0,
	    "optionId", "deny", "name", "Deny", "kind", "reject_once", "_meta",
	    "recommended", rec != NULL && strcmp(rec, "deny") == 0);
	title = acpperm_title(role != NULL ? role : "?", tool != NULL ? tool :
	    "?", acpperm_s(q, "question"));
	acp_send(s->acp, jsonrpc_calls_request(s->acp->calls,
	    "session/request_permission", json_pack("{s:s, s:{s:s, s:s, s:s, "
	    "s:s, s:O?}, s:o, s:{s:O}}", "sessionId", s->id, "toolCall",
	    "toolCallId", qid, "title", title, "kind", "execute", "status",
	    "pending", "rawInput", json_object_get(q, "input"), "options", opts,
	    "_meta", "question", q), acpperm_reply, p));
	free(title);
}

/* The loop ended: its requests are moot, a late reply finds no call. */
void
acpperm_drop(struct acp_session *s)
{
	struct acp_perm	*p;

	while ((p = TAILQ_FIRST(&s->perms)) != NULL) {
		jsonrpc_calls_drop(s->acp->calls, p);
		acpperm_free(p);
	}
}
