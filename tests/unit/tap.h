/*
 * tap.h: a minimal TAP producer for the unit tests (automake's TAP driver
 * reads it).  Each check prints one "ok"/"not ok" line.
 */
#ifndef CCW_TAP_H
#define CCW_TAP_H

#include <stdint.h>

int	tap_ok(int, const char *, ...) __attribute__((format(printf, 2, 3)));
int	tap_is_int(long long, long long, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
int	tap_is_str(const char *, const char *, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
void	tap_skip(const char *);
void	tap_diag(const char *, ...) __attribute__((format(printf, 1, 2)));
int	tap_done(void);

#endif
