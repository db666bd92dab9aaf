/*
 * xmalloc.h: allocators that never return NULL.  Running out of memory
 * is not an event this program can report usefully, so they abort.
 */
#ifndef CCW_XMALLOC_H
#define CCW_XMALLOC_H

#include <stddef.h>

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);
int	 xasprintf(char **, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

#endif
