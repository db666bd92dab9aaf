/*
 * buf.h: a growing text buffer (buf.c); p is NUL-terminated once used,
 * and the caller frees it.
 */
#ifndef CCW_BUF_H
#define CCW_BUF_H

#include <stddef.h>

struct sbuf {
	char	*p;
	size_t	 len, cap;
};

void	sbuf_grow(struct sbuf *, size_t);
void	sbuf_add(struct sbuf *, const char *, size_t);
void	sbuf_puts(struct sbuf *, const char *);
void	sbuf_printf(struct sbuf *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

#endif
