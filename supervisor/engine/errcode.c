/*
 * errcode.c: the table of error kinds: one row per kind, one column per
 * front end.  Front ends map a kind here and nowhere else; none reads
 * an error's text.  Adding a kind is one enum line and one row.
 */
#include <config.h>

#include <stddef.h>
#include <string.h>

#include "errcode.h"
#include "sup.h"

struct err_row {
	enum err_code	 code;
	const char	*name;
	int		 http;		/* CCW answers 400 to all but a 404 */
	int		 http_own;	/* our own routes: each kind its own */
	int		 jsonrpc;	/* -32602 bad params; -320xx ours */
	int		 exit;		/* EXIT_* */
};

/* Rows in enum order (err_row checks it). */
static const struct err_row err_table[] = {
	{ ERR_NONE,		"ok",		200, 200,	0,	EXIT_OK },
	{ ERR_NOT_FOUND,	"not_found",	404, 404,	-32001,	EXIT_FAILED },
	{ ERR_INVALID,		"invalid_argument", 400, 400,	-32602,	EXIT_USAGE },
	{ ERR_CONFLICT,		"conflict",	400, 409,	-32002,	EXIT_FAILED },
	{ ERR_BUSY,		"busy",		400, 409,	-32003,	EXIT_FAILED },
	{ ERR_UNAVAILABLE,	"unavailable",	400, 503,	-32004,	EXIT_FAILED },
	{ ERR_INTERNAL,		"internal",	400, 500,	-32603,	EXIT_INTERNAL },
};
#define ERR_NROWS	(sizeof err_table / sizeof err_table[0])

/* A code's row; an out-of-range code is internal (never a success). */
static const struct err_row *
err_row(enum err_code c)
{
	if ((size_t)c < ERR_NROWS && err_table[c].code == c)
		return &err_table[c];
	return &err_table[ERR_INTERNAL];
}

/* The stable name a reply carries: front ends and clients key on it. */
const char *
err_code_name(enum err_code c)
{
	return err_row(c)->name;
}

/*
 * A reply's "code" back to the kind: a front end reading the api's reply
 * maps this, never the message.  No code is no error.
 */
enum err_code
err_code_parse(const char *name)
{
	size_t	i;

	if (name == NULL)
		return ERR_NONE;
	for (i = 0; i < ERR_NROWS; i++)
		if (strcmp(err_table[i].name, name) == 0)
			return err_table[i].code;
	return ERR_INTERNAL;
}

/* serve's HTTP status for a kind. */
int
err_code_http(enum err_code c)
{
	return err_row(c)->http;
}

/*
 * The HTTP status of a route of our own (not one of CCW's, which keep
 * CCW's 400): a conflict is 409, a busy host 409, unavailable 503.
 */
int
err_code_http_own(enum err_code c)
{
	return err_row(c)->http_own;
}

/* The JSON-RPC error code acp answers a failed verb with. */
int
err_code_jsonrpc(enum err_code c)
{
	return err_row(c)->jsonrpc;
}

/* The exit status a CLI command ends with for a kind. */
int
err_code_exit(enum err_code c)
{
	return err_row(c)->exit;
}
