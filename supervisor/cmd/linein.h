/*
 * linein.h: JSON request lines read from a descriptor on an event base:
 * `control`'s stdin, and `control --connect`'s before it relays them.
 */
#ifndef CCW_LINEIN_H
#define CCW_LINEIN_H

#include <stddef.h>

#include <jansson.h>

struct event_base;
struct linein;

#define LINEIN_MAX	(16u * 1024 * 1024)	/* a longer line is ignored */

/*
 * One line (its number, its bytes without the LF; NULL when it was over
 * LINEIN_MAX and is ignored), or the end of the input (line_fn not
 * called again).
 */
typedef void	(*linein_line_fn)(void *, unsigned long, const char *, size_t);
typedef void	(*linein_eof_fn)(void *);

struct linein	*linein_new(struct event_base *, int, linein_line_fn,
		    linein_eof_fn, void *);
void		 linein_stop(struct linein *);
void		 linein_free(struct linein *);
json_t		*linein_request(unsigned long, const char *, size_t,
		    json_t **);

#endif
