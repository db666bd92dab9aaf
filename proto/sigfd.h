/*
 * sigfd.h: what a process does to its descriptors and signals around
 * fork and exec (both programs): a child sheds every inherited
 * descriptor above its floor and every signal setting before exec, and a
 * command defers the terminating signals until its handlers are in place.
 */
#ifndef CCW_SIGFD_H
#define CCW_SIGFD_H

void	sigfd_close_from(int, int);
void	sigfd_child_reset(void);
void	sigfd_defer(void);
void	sigfd_release(void);

#endif
