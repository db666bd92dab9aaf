/*
 * clock.c: monotonic milliseconds, ISO 8601 timestamps as CCW writes
 * them (UTC, optional milliseconds, "Z") and their validation.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"

/* Durations and deadlines never follow the wall clock's jumps. */
uint64_t
clock_mono_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The state file's times carry milliseconds; progress headings do not.
 * A time gmtime cannot break down prints as the epoch, never garbage.
 */
void
clock_iso(const struct timespec *ts, int ms, char *buf, size_t len)
{
	struct timespec	now;
	struct tm	tm;

	if (len == 0)
		return;
	if (ts == NULL) {
		clock_gettime(CLOCK_REALTIME, &now);
		ts = &now;
	}
	if (gmtime_r(&ts->tv_sec, &tm) == NULL) {
		snprintf(buf, len, ms ? "1970-01-01T00:00:00.000Z" :
		    "1970-01-01T00:00:00Z");
		return;
	}
	if (ms)
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
		    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		    tm.tm_min, tm.tm_sec, (long)(ts->tv_nsec / 1000000) % 1000);
	else
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02dZ",
		    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		    tm.tm_min, tm.tm_sec);
}

/* Two digits at s, their value in *v. */
static int
clock_two(const char *s, int *v)
{
	if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9')
		return 0;
	*v = (s[0] - '0') * 10 + (s[1] - '0');
	return 1;
}

/*
 * What JavaScript's Date and CCW write, and what a person would: the
 * date and time to the second, an optional fraction, then Z or an
 * offset.  Ranges are checked, calendars are not (Feb 31 passes).
 */
int
clock_iso_valid(const char *s)
{
	static const char	pat[] = "dddd-dd-ddTdd:dd:dd";
	int			mo = 0, d = 0, h = 0, mi = 0, sec = 0, oh, om;
	size_t			i;

	if (s == NULL)
		return 0;
	for (i = 0; pat[i] != '\0'; i++)
		if (pat[i] == 'd' ? s[i] < '0' || s[i] > '9' : s[i] != pat[i])
			return 0;
	clock_two(s + 5, &mo);
	clock_two(s + 8, &d);
	clock_two(s + 11, &h);
	clock_two(s + 14, &mi);
	clock_two(s + 17, &sec);
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    sec > 60)
		return 0;
	s += 19;
	if (s[0] == '.' && s[1] >= '0' && s[1] <= '9')
		for (s++; *s >= '0' && *s <= '9'; s++)
			;
	if (strcmp(s, "Z") == 0)
		return 1;
	return (s[0] == '+' || s[0] == '-') && clock_two(s + 1, &oh) &&
	    s[3] == ':' && clock_two(s + 4, &om) && s[6] == '\0' &&
	    oh <= 23 && om <= 59;
}
