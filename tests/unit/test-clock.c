/*
 * test-clock.c: ISO 8601 timestamps as the state file writes them, the
 * validator on what front ends write and on near misses, and the
 * monotonic clock moving forward.
 */
#include <config.h>

#include <string.h>
#include <time.h>

#include "clock.h"
#include "tap.h"

int
main(void)
{
	static const char *const good[] = {
		"2026-01-22T10:00:00Z", "2026-01-22T10:00:00.123Z",
		"2026-12-31T23:59:60.5+05:30", "2026-01-01T00:00:00-08:00",
	};
	static const char *const bad[] = {
		"", "2026-01-22", "2026-13-01T00:00:00Z",
		"2026-00-10T00:00:00Z", "2026-01-32T00:00:00Z",
		"2026-01-22T24:00:00Z", "2026-01-22T10:60:00Z",
		"2026-01-22 10:00:00Z", "2026-01-22T10:00:00",
		"2026-01-22T10:00:00.Z", "2026-01-22T10:00:00+5:30",
		"2026-01-22T10:00:00+05:60", "2026-01-22T10:00:00+24:00",
		"2026-01-22T10:00:00Zjunk", "2026-01-22T10:00:00+05:30x",
	};
	struct timespec	ts = { 1769076000, 123456789 };	/* 2026-01-22T10:00:00.123 */
	char		buf[40], tiny[8];
	uint64_t	a, b;
	size_t		i;

	clock_iso(&ts, 1, buf, sizeof buf);
	tap_is_str(buf, "2026-01-22T10:00:00.123Z", "milliseconds");
	clock_iso(&ts, 0, buf, sizeof buf);
	tap_is_str(buf, "2026-01-22T10:00:00Z", "seconds");
	clock_iso(NULL, 1, buf, sizeof buf);
	tap_ok(clock_iso_valid(buf) && strlen(buf) == 24, "now: %s", buf);
	memset(tiny, 'x', sizeof tiny);
	clock_iso(&ts, 1, tiny, sizeof tiny);
	tap_ok(tiny[sizeof tiny - 1] == '\0', "a short buffer is cut, ended");
	for (i = 0; i < sizeof good / sizeof good[0]; i++)
		tap_ok(clock_iso_valid(good[i]), "valid: %s", good[i]);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		tap_ok(!clock_iso_valid(bad[i]), "invalid: \"%s\"", bad[i]);
	tap_ok(!clock_iso_valid(NULL), "invalid: NULL");
	a = clock_mono_ms();
	do
		b = clock_mono_ms();
	while (b == a);
	tap_ok(b > a, "the monotonic clock moves forward");
	return tap_done();
}
