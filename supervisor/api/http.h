/*
 * http.h: serve's HTTP/1.1 server on the caller's event base: listening,
 * one connection object per client with hard limits (head and body size,
 * an absolute deadline per request, an idle deadline, a connection cap),
 * requests handed to one handler, replies and streams (SSE) written back.
 */
#ifndef CCW_HTTP_H
#define CCW_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "httphead.h"

struct event_base;
struct http_server;
struct http_req;

struct http_limits {
	size_t		 head_max;	/* request line + fields: 431 beyond */
	size_t		 body_max;	/* Content-Length: 413 beyond */
	uint64_t	 request_ms;	/* first byte -> whole request: 408 */
	uint64_t	 idle_ms;	/* no request on an open connection */
	unsigned	 conns_max;	/* beyond: 503 and closed at once */
	size_t		 stream_max;	/* unsent stream bytes: closed beyond */
};
#define HTTP_LIMITS_DEFAULT { 16384, 1u << 20, 10000, 60000, 4096, 4u << 20 }

/*
 * Called once per complete request.  The request belongs to the server:
 * answer it with http_reply* or http_stream_begin, now or later; one that
 * answers later must set an on_close with http_req_on_close and forget
 * the request there (the client went away; the request is freed after).
 */
typedef void	(*http_handler_fn)(struct http_req *, void *);
typedef void	(*http_close_fn)(struct http_req *, void *);
typedef json_t	*(*http_shape_fn)(struct http_req *, int, const json_t *,
		    char **, void *);
/* An upgraded stream's input: returns the bytes it used (the rest kept). */
typedef size_t	(*http_data_fn)(struct http_req *, const void *, size_t,
		    void *);

/* Counters for /metrics. */
struct http_stats {
	uint64_t	 accepted, refused, requests, open, streams;
	uint64_t	 by_class[6];	/* replies by status / 100 (1xx-5xx) */
};

struct http_server	*http_server_new(struct event_base *,
			    const struct http_limits *, http_handler_fn,
			    void *);
int			 http_server_listen(struct http_server *,
			    const char *, char **);
int			 http_server_port(const struct http_server *);
int			 http_server_loopback(const struct http_server *);
void			 http_server_stats(const struct http_server *,
			    struct http_stats *);
void			 http_server_free(struct http_server *);

const struct http_head	*http_req_head(const struct http_req *);
const char		*http_req_body(const struct http_req *, size_t *);
const char		*http_req_peer(const struct http_req *);
void			 http_req_on_close(struct http_req *, http_close_fn,
			    void *);
void			 http_req_shape(struct http_req *, http_shape_fn,
			    void *);

void	http_reply(struct http_req *, int, const char *, const char *,
	    const void *, size_t);
void	http_reply_json(struct http_req *, int, const json_t *);
void	http_reply_error(struct http_req *, int, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
int	http_stream_begin(struct http_req *, const char *);
int	http_stream_write(struct http_req *, const void *, size_t);
int	http_upgrade(struct http_req *, const char *, http_data_fn, void *);
void	http_stream_end(struct http_req *);
size_t	http_stream_queued(const struct http_req *);
const char	*http_status_text(int);

#endif
