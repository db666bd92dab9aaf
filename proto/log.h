/*
 * log.h: diagnostics for both programs.  fatal() and fatalx() are for
 * start-up only; everything after start-up returns an error instead.
 */
#ifndef CCW_LOG_H
#define CCW_LOG_H

#include <stdarg.h>

void	log_init(const char *, int);
int	log_verbosity(void);
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif
