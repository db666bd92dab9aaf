/*
 * retire.h: finished agents retired from a table's memory past a
 * retention (config keep_agents), their reports kept on disk for
 * `result` (retire.c).
 */
#ifndef CCW_RETIRE_H
#define CCW_RETIRE_H

#include <jansson.h>

struct sup;
struct retire;

#define RETIRE_KEEP_DEFAULT	64	/* config keep_agents unset */
#define RETIRE_LOGS_KEEP	256	/* agents' files kept in a workers dir */

struct retire	*retire_new(struct sup *, unsigned);
void		 retire_soon(struct retire *);
void		 retire_free(struct retire *);
json_t		*retire_read(const struct sup *, const char *);
size_t		 retire_logs(const struct sup *);

#endif
