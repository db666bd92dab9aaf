/*
 * xmalloc.c: the never-NULL allocators.  Sizes are checked for overflow
 * here so callers can multiply freely.
 */
#include <config.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"

/* malloc that aborts on failure; a zero size still returns a pointer. */
void *
xmalloc(size_t size)
{
	void	*p;

	p = malloc(size == 0 ? 1 : size);
	if (p == NULL)
		fatalx("out of memory allocating %zu bytes", size);
	return p;
}

/* calloc that aborts on failure. */
void *
xcalloc(size_t n, size_t size)
{
	void	*p;

	if (n == 0 || size == 0)
		n = size = 1;
	p = calloc(n, size);
	if (p == NULL)
		fatalx("out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

/* realloc of n items, refusing a product that overflows. */
void *
xreallocarray(void *old, size_t n, size_t size)
{
	void	*p;

	if (size != 0 && n > SIZE_MAX / size)
		fatalx("allocation overflow: %zu x %zu", n, size);
	p = realloc(old, n * size == 0 ? 1 : n * size);
	if (p == NULL)
		fatalx("out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

/* strdup that aborts on failure. */
char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

/* Copy at most len bytes and terminate. */
char *
xstrndup(const char *s, size_t len)
{
	char	*p;

	p = xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

/* asprintf that aborts on failure; returns the length. */
int
xasprintf(char **out, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vasprintf(out, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatalx("out of memory formatting a string");
	return n;
}
