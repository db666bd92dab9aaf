/*
 * bqint.h: what bqinput.c, bqinputq.c and bqdesc.c share: the queue
 * loader, the description builder, the checks of strings and words.
 */
#ifndef CCW_BQINT_H
#define CCW_BQINT_H

#include <sys/stat.h>

#include <jansson.h>

#include "bqfile.h"
#include "bqinput.h"

int	 bqinput_queue(struct bq_input *, json_t *, const char *,
	    const char *, char **);
int	 bqdesc_build_all(struct bq_input *, const char *, char **);
int	 bq_executor(struct bq_item *, const char *);
int	 bq_jsonl_read(const char *, json_t **, struct stat *, char **);

#endif
