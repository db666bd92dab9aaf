/*
 * clock.h: the clocks both programs read: monotonic milliseconds for
 * durations and deadlines, wall-clock ISO 8601 for what is written down,
 * and the one check of an ISO 8601 string a front end wrote.
 */
#ifndef CCW_CLOCK_H
#define CCW_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

uint64_t clock_mono_ms(void);
/* "2026-01-22T10:00:00.000Z" (ms) or "...:00Z" (no ms); ts NULL: now */
void	 clock_iso(const struct timespec *, int, char *, size_t);
int	 clock_iso_valid(const char *);	/* date, time, fraction, Z or +hh:mm */

#endif
