/*
 * attempts.h: best-of-N (attempts.c): how many attempts a role's step
 * runs, and the one rule that picks the attempt whose work is merged.
 */
#ifndef CCW_ATTEMPTS_H
#define CCW_ATTEMPTS_H

#include <stddef.h>

#include <jansson.h>

struct config;
struct plan_overrides;

unsigned	attempts_count(const struct config *,
		    const struct plan_overrides *, const char *);
unsigned	attempts_most(const struct config *,
		    const struct plan_overrides *);
size_t		attempts_pick(json_t *, const char *, const json_t *const *,
		    const int *, size_t, const json_t *);

#endif
