/*
 * log.c: one line per message on stderr, prefixed by the program name.
 * The _warn/fatal variants append strerror(errno) as err(3) does.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static const char	*log_prog = "ccw";
static int		 log_level;

/* Remember the program name and how chatty to be (0 quiet, 2 debug). */
void
log_init(const char *prog, int level)
{
	const char	*slash;

	if (prog != NULL) {
		slash = strrchr(prog, '/');
		log_prog = slash != NULL ? slash + 1 : prog;
	}
	log_level = level;
}

/* Expose the level so callers can skip building expensive messages. */
int
log_verbosity(void)
{
	return log_level;
}

/* Format one line; errno_val < 0 means "no strerror suffix". */
static void
log_vemit(int errno_val, const char *fmt, va_list ap)
{
	char	buf[1024];

	vsnprintf(buf, sizeof buf, fmt, ap);
	if (errno_val >= 0)
		fprintf(stderr, "%s: %s: %s\n", log_prog, buf,
		    strerror(errno_val));
	else
		fprintf(stderr, "%s: %s\n", log_prog, buf);
}

/* A warning about a failed system call: errno is appended. */
void
log_warn(const char *fmt, ...)
{
	va_list	ap;
	int	saved = errno;

	va_start(ap, fmt);
	log_vemit(saved, fmt, ap);
	va_end(ap);
	errno = saved;
}

/* A warning with no errno. */
void
log_warnx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vemit(-1, fmt, ap);
	va_end(ap);
}

/* Progress a user asked for with -v. */
void
log_info(const char *fmt, ...)
{
	va_list	ap;

	if (log_level < 1)
		return;
	va_start(ap, fmt);
	log_vemit(-1, fmt, ap);
	va_end(ap);
}

/* Developer detail with -vv. */
void
log_debug(const char *fmt, ...)
{
	va_list	ap;

	if (log_level < 2)
		return;
	va_start(ap, fmt);
	log_vemit(-1, fmt, ap);
	va_end(ap);
}

/* Start-up failure of a system call: report and exit 70 (EX_SOFTWARE). */
void
fatal(const char *fmt, ...)
{
	va_list	ap;
	int	saved = errno;

	va_start(ap, fmt);
	log_vemit(saved, fmt, ap);
	va_end(ap);
	exit(70);
}

/* Start-up failure without errno. */
void
fatalx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vemit(-1, fmt, ap);
	va_end(ap);
	exit(70);
}
