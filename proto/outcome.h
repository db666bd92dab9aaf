/*
 * outcome.h: THE table of worker outcome kinds (a failed worker's
 * error_kind): one word each, carried as that word in RESULT, events, the
 * state's errors, agent's JSON, MCP/ACP results and metrics.
 */
#ifndef CCW_OUTCOME_H
#define CCW_OUTCOME_H

/* The kinds, in the table's order (outcome.c); OUTCOME_NONE is success. */
enum outcome_kind {
	OUTCOME_NONE = 0,
	OUTCOME_AUTH,
	OUTCOME_MODEL,
	OUTCOME_RATE_LIMITED,
	OUTCOME_QUOTA_EXHAUSTED,
	OUTCOME_OVERLOADED,
	OUTCOME_SERVER_ERROR,
	OUTCOME_NETWORK,
	OUTCOME_TIMEOUT,
	OUTCOME_IDLE,
	OUTCOME_LOST,
	OUTCOME_CRASHED,
	OUTCOME_PROTOCOL,
	OUTCOME_TOOL_ERROR,
	OUTCOME_CANCELLED,
	OUTCOME__COUNT
};

/* outcome_def.flags */
#define OUTCOME_PROVIDER	0x01	/* the model provider said so: the
					   CLI's own words are the reason */
#define OUTCOME_GIVE_UP		0x02	/* once the CLI reports it as final,
					   the turn ends at once: waiting for
					   the deadline would learn nothing */
#define OUTCOME_GATED		0x04	/* waits for its provider's gate
					   (gate.h); never a retry policy's */
#define OUTCOME_SUPERVISOR	0x08	/* decided by the supervisor or the
					   worker, not read from a stream */

struct outcome_def {
	const char	*name;		/* the wire word; "" for OUTCOME_NONE */
	unsigned	 flags;		/* OUTCOME_* */
	const char	*what;		/* for people: man page, --help */
};

const struct outcome_def *outcome_at(enum outcome_kind);  /* NULL: out of range */
enum outcome_kind	 outcome_find(const char *);	/* OUTCOME_NONE: unknown */
const char		*outcome_name(enum outcome_kind); /* never NULL */
int			 outcome_is(const char *, enum outcome_kind);

#endif
