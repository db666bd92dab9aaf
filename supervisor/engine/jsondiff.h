/*
 * jsondiff.h: what changed between two JSON values, as a list of
 * {path, from, to} (jsondiff.c); a loop's history keeps it per action.
 */
#ifndef CCW_JSONDIFF_H
#define CCW_JSONDIFF_H

#include <stddef.h>

#include <jansson.h>

json_t	*json_diff(const json_t *, const json_t *, size_t);	/* before, after, most entries */

#endif
