/*
 * bestof.h: best-of-N's one rule (bestof.c), for every layer that runs
 * attempts: ccw-loop's steps (attempts.c) and the front ends' spawn
 * with "attempts" (api/apiattempts.c).
 */
#ifndef CCW_BESTOF_H
#define CCW_BESTOF_H

#include <stddef.h>

#include <jansson.h>

size_t	bestof_pick(const json_t *const *, const int *, size_t,
	    const json_t *, json_t **, size_t *);

#endif
