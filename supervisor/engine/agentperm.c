/*
 * agentperm.c: a worker's permission request (PERM_ASK, issue 29) raised
 * to the agent's owner through sup.perm, and the owner's decision sent
 * back down as PERM_REPLY.  An owner that takes none denies at once: a
 * tool never waits on nobody.
 */
#include <config.h>

#include <stdlib.h>

#include "chan.h"
#include "log.h"
#include "sup.h"

/* A PERM_ASK from a's worker: the owner decides, or it is denied now. */
void
agent_perm_ask(struct agent *a, const struct msg_perm_ask *ask)
{
	log_debug("%s: permission asked for %s (%llu)", a->id,
	    ask->tool_name, (unsigned long long)ask->id);
	if (a->sup->perm == NULL || a->sup->perm(a, ask,
	    a->sup->perm_arg) != 0)
		agent_perm_reply(a, ask->id, 0, "no one here answers "
		    "permission requests");
}

/*
 * The decision on request id of a's worker (message: a denial's reason
 * for the model).  -1 when the worker is gone: its relay has denied.
 */
int
agent_perm_reply(struct agent *a, uint64_t id, int allow, const char *message)
{
	struct msg	m;
	enum proto_err	e;

	if (a->chan == NULL || a->phase != AP_RUNNING)
		return -1;
	msg_init(&m, MSG_PERM_REPLY);
	m.u.perm_reply.id = id;
	m.u.perm_reply.allow = allow;
	m.u.perm_reply.message = (char *)message;
	e = chan_send(a->chan, &m);
	return e == PROTO_OK ? 0 : -1;
}
