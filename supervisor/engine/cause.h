/*
 * cause.h: why a worker failed, in one line, from its report (the JSON of
 * report_agent): the outcome kind's word and the CLI's own words.  Every
 * workflow's error message about a failed worker says it through here.
 */
#ifndef CCW_CAUSE_H
#define CCW_CAUSE_H

#include <jansson.h>

#define CAUSE_REASON_MAX	240	/* bytes of the reason kept */

char	*cause_of(const json_t *);	/* "KIND: REASON"; the caller frees */
char	*cause_line(const char *, const json_t *); /* "WHO: failed (...)" */
int	 cause_failed(const json_t *);	/* 1: the report is a failure */

#endif
