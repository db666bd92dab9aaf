/*
 * rotate.h: append-only side files rotated by size, a few old ones kept
 * (rotate.c).
 */
#ifndef CCW_ROTATE_H
#define CCW_ROTATE_H

#define ROTATE_BYTES	(8LL * 1024 * 1024)	/* NAME past this: NAME.1 */
#define ROTATE_KEEP	3			/* NAME.1 .. NAME.3 kept */

int		rotate_maybe(int, const char *, int);
long long	rotate_env(const char *, long long);

#endif
