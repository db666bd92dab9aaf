/*
 * errcode.h: the one table of error kinds the engine and the api verbs
 * return beside their message, and what each front end makes of one:
 * its stable name (the api's "code"), HTTP status, JSON-RPC code, exit.
 */
#ifndef CCW_ERRCODE_H
#define CCW_ERRCODE_H

/* ERR_NONE is 0, so `if (f(...) != 0)` still reads "it failed". */
enum err_code {
	ERR_NONE = 0,
	ERR_NOT_FOUND,		/* no such agent, loop, task, session */
	ERR_INVALID,		/* a bad argument: the request is wrong */
	ERR_CONFLICT,		/* not in this state: an invalid transition */
	ERR_BUSY,		/* another driver holds it, or at a cap */
	ERR_UNAVAILABLE,	/* this front end or host cannot do it */
	ERR_INTERNAL,		/* the system failed: write, lock, memory */
};

const char	*err_code_name(enum err_code);	/* "not_found"; never NULL */
enum err_code	 err_code_parse(const char *);	/* a name: ERR_INTERNAL if unknown, NULL: ERR_NONE */
int		 err_code_http(enum err_code);	/* serve's status */
int		 err_code_http_own(enum err_code);	/* our routes' */
int		 err_code_jsonrpc(enum err_code); /* acp's error code */
int		 err_code_exit(enum err_code);	/* the CLI's EXIT_* */

#endif
