/*
 * httphead.h: the HTTP/1.1 request head (request line and header fields)
 * as serve reads it: parsed from bytes by a pure function with hard
 * limits, so that every refusal has a status code and a reason.
 */
#ifndef CCW_HTTPHEAD_H
#define CCW_HTTPHEAD_H

#include <stddef.h>
#include <stdint.h>

#define HTTP_FIELDS_MAX		100	/* header fields in one request */
#define HTTP_METHOD_MAX		16

enum http_method {
	HTTP_GET,
	HTTP_HEAD,
	HTTP_POST,
	HTTP_PUT,
	HTTP_PATCH,
	HTTP_DELETE,
	HTTP_OPTIONS,
	HTTP_OTHER		/* a token we do not serve: 405 or 501 */
};

struct http_field {
	char	*name;		/* lower case */
	char	*value;		/* leading and trailing blanks trimmed */
};

/* One parsed head; every string is owned by it (http_head_clear). */
struct http_head {
	enum http_method	 method;
	char			 method_name[HTTP_METHOD_MAX + 1];
	char			*path;		/* percent-decoded, no query */
	char			*query;		/* raw, without '?'; "" if none */
	int			 minor;		/* HTTP/1.minor */
	struct http_field	*fields;
	size_t			 nfields;
	uint64_t		 content_length;
	int			 keep_alive;	/* by version and Connection */
};

/* What http_head_parse found. */
enum http_head_status {
	HTTP_HEAD_MORE,		/* no end of head yet, within the limit */
	HTTP_HEAD_DONE,		/* *used bytes were the head */
	HTTP_HEAD_BAD		/* *code and *why say what to answer */
};

enum http_head_status	 http_head_parse(const char *, size_t, size_t,
			    struct http_head *, size_t *, int *,
			    const char **);
void			 http_head_clear(struct http_head *);
const char		*http_head_field(const struct http_head *,
			    const char *);
int			 http_head_cookies(const struct http_head *,
			    const char *, int (*)(const char *, size_t,
			    void *), void *);
const char		*http_method_name(enum http_method);
int			 http_query_get(const char *, const char *, char *,
			    size_t);

#endif
