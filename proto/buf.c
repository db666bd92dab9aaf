/*
 * buf.c: a growing text buffer, always NUL-terminated once used: the
 * one both programs build their texts in (progress files, prompts,
 * reports).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "xmalloc.h"

/* Make room for n more bytes and the NUL. */
void
sbuf_grow(struct sbuf *sb, size_t n)
{
	if (sb->len + n + 1 <= sb->cap)
		return;
	if (sb->cap == 0)
		sb->cap = 256;
	while (sb->len + n + 1 > sb->cap)
		sb->cap *= 2;
	sb->p = xreallocarray(sb->p, 1, sb->cap);
}

/* Append n bytes. */
void
sbuf_add(struct sbuf *sb, const char *s, size_t n)
{
	sbuf_grow(sb, n);
	memcpy(sb->p + sb->len, s, n);
	sb->len += n;
	sb->p[sb->len] = '\0';
}

/* Append a C string. */
void
sbuf_puts(struct sbuf *sb, const char *s)
{
	sbuf_add(sb, s, strlen(s));
}

/* Append formatted text; the headings carry numbers and timestamps. */
void
sbuf_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;
	int	 n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n == -1)
		return;
	sbuf_add(sb, s, (size_t)n);
	free(s);
}

