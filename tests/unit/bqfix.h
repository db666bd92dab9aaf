/*
 * bqfix.h: what test-bqinput and test-bqqueue share: a scratch copy of
 * tests/fixtures/queue, files written whole, JSON read back.
 */
#ifndef CCW_BQFIX_H
#define CCW_BQFIX_H

#include <jansson.h>

#define QUE_REL	".workflow/issues/queues/QUE-20260110-093000.json"

char	*bqfix_project(void);
void	 bqfix_rm(const char *);
void	 bqfix_put(const char *, const char *, const char *);
void	 bqfix_put_json(const char *, const char *, const json_t *);
json_t	*bqfix_load(const char *, const char *);
json_t	*bqfix_J(const char *);

#endif
