/*
 * tap.c: counts checks and failures and prints the plan at the end, so a
 * test that dies half-way is reported as a failure by the driver.
 */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"

static int	tap_n, tap_failed;

/* Print one result line with a formatted description. */
static int
tap_vreport(int pass, const char *fmt, va_list ap)
{
	tap_n++;
	if (!pass)
		tap_failed++;
	printf("%sok %d - ", pass ? "" : "not ", tap_n);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	return pass;
}

/* A check that cannot be judged here: counted, never failed. */
void
tap_skip(const char *why)
{
	tap_n++;
	printf("ok %d # SKIP %s\n", tap_n, why);
	fflush(stdout);
}

/* One boolean check. */
int
tap_ok(int pass, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	tap_vreport(pass, fmt, ap);
	va_end(ap);
	return pass;
}

/* Integer equality, with both values shown on failure. */
int
tap_is_int(long long got, long long want, const char *fmt, ...)
{
	va_list	ap;
	int	pass = got == want;

	va_start(ap, fmt);
	tap_vreport(pass, fmt, ap);
	va_end(ap);
	if (!pass)
		printf("#   got %lld, want %lld\n", got, want);
	return pass;
}

/* String equality; NULL equals only NULL. */
int
tap_is_str(const char *got, const char *want, const char *fmt, ...)
{
	va_list	ap;
	int	pass;

	pass = (got == NULL || want == NULL) ? got == want :
	    strcmp(got, want) == 0;
	va_start(ap, fmt);
	tap_vreport(pass, fmt, ap);
	va_end(ap);
	if (!pass)
		printf("#   got '%s', want '%s'\n", got ? got : "(null)",
		    want ? want : "(null)");
	return pass;
}

/* A comment line. */
void
tap_diag(const char *fmt, ...)
{
	va_list	ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* Print the plan; the exit code is non-zero when anything failed. */
int
tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed == 0 ? 0 : 1;
}
