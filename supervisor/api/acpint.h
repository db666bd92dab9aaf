/*
 * acpint.h: the insides of the ACP agent shared by acp.c (the protocol:
 * methods, sessions, turns, questions) and acpupdate.c (a
 * loop's events and its state file as session/update notifications)
 * and acpperm.c (a CLI's permission requests as request_permission).
 */
#ifndef CCW_ACPINT_H
#define CCW_ACPINT_H

#include <sys/queue.h>

#include "acp.h"

struct acp_perm;
struct host_loop;
struct jsonrpc_calls;

/*
 * A session's turn: IDLE (no prompt), UPDATING (the prompt's task going
 * into the state file through the verb table), RUNNING (its loop on the
 * host, opening or running; a permission request may be out meanwhile).
 */
enum acp_turn { AT_IDLE, AT_UPDATING, AT_RUNNING };

struct acp_session {
	TAILQ_ENTRY(acp_session) entry;
	struct acp		*acp;
	char			*id;		/* = the loop id */
	char			*cwd;
	struct acp_project	 proj;
	char			*mode;		/* _meta.mode; NULL: the loop's */
	enum acp_turn		 turn;
	json_t			*prompt_id;	/* the turn's request id */
	int			 cancelled;	/* session/cancel in this turn */
	struct host_loop	*hl;		/* while its loop runs */
	json_t			*plan;		/* entries, one per role */
	json_t			*asker;		/* role -> agent id that asked */
	json_t			*questions;	/* the open ask's, or NULL */
	json_t			*answers;	/* given so far */
	char			*ask_role;	/* the open ask's */
	json_t			*end;		/* LOOP_COMPLETED's fields */
	json_t			*usage;		/* the last usage sent */
	char			*last_summary;	/* the last worker's */
	TAILQ_HEAD(acp_perms, acp_perm) perms;	/* permission requests out */
};
TAILQ_HEAD(acp_sessions, acp_session);

struct acp {
	struct acp_cfg		 cfg;
	struct jsonrpc_calls	*calls;		/* our permission requests */
	struct acp_sessions	 sessions;
	size_t			 nsessions;	/* in sessions */
	size_t			 opening;	/* new, load, resume in flight */
	size_t			 running;	/* loops on a host now */
};

/* acp.c */
void	acp_send(struct acp *, json_t *);
void	acp_update(struct acp_session *, json_t *);
json_t	*acp_text(const char *);

/* acpupdate.c */
void	acpupdate_plan_new(struct acp_session *, const json_t *);
void	acpupdate_plan_send(struct acp_session *);
void	acpupdate_event(struct acp_session *, const char *, const json_t *);
void	acpupdate_replay(struct acp_session *, const json_t *);
char	*acpupdate_summary(const struct acp_session *, int);
int	acpupdate_max_turns(const struct acp_session *);

/* acpperm.c */
void	acpperm_event(struct acp_session *, const char *, const json_t *);
void	acpperm_drop(struct acp_session *);

#endif
