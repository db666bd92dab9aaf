/*
 * capsule.h: the resume capsule (seed 004's CompactCapsule) built from a
 * loop's state: what a re-spawned worker must know to continue where the
 * loop stopped, validated and rendered as text for its prompt.
 */
#ifndef CCW_CAPSULE_H
#define CCW_CAPSULE_H

#include <jansson.h>

#include "proto.h"

json_t	*capsule_build(const json_t *, const char *);	/* state, state dir (for file hashes; may be NULL) */
/* Same, with the project root named (NULL: derived from the state dir). */
json_t	*capsule_build_root(const json_t *, const char *, const char *);
int	 capsule_validate(const json_t *, struct strv *, struct strv *);	/* missing, warnings; 0 valid */
char	*capsule_render(const json_t *);		/* prompt text (owned) */
int	 capsule_needed(const json_t *);		/* the loop has history: put a capsule in prompts */

#endif
