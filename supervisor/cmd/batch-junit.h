/*
 * batch-junit.h: batch's --junit report: one JUnit XML testsuite, one
 * testcase per item, written crash-safely.
 */
#ifndef CCW_BATCH_JUNIT_H
#define CCW_BATCH_JUNIT_H

#include <jansson.h>

int	junit_write(const char *, const char *, const json_t *, char **);
char	*junit_text(const char *, const json_t *, char **);

#endif
