/*
 * bqforecast.h: the conflict forecast (bqforecast.c): the files batch
 * items name, and which pairs of items overlap on them (never at once).
 */
#ifndef CCW_BQFORECAST_H
#define CCW_BQFORECAST_H

#include <stddef.h>

#include <jansson.h>

#define BQ_HINTS_MAX	1000		/* file hints of one item */

struct bq_input;
struct bq_item;

int	 bqforecast_jsonl(struct bq_item *, const json_t *, const char *,
	    char **);
void	 bqforecast_task(struct bq_item *, const json_t *);
json_t	*bqforecast_shared(const struct bq_item *, const struct bq_item *);
json_t	*bqforecast_make(const struct bq_input *, size_t ***, size_t **);

#endif
