/*
 * hammer.h: what state-hammer's files share: the careless front end of
 * hammer-fe.c (flip) and the file handshake that orders two processes'
 * last writes.
 */
#ifndef CCW_HAMMER_H
#define CCW_HAMMER_H

void	hammer_await(const char *);
void	hammer_signal(const char *);
int	hammer_flip(const char *, const char *, int, char **);

#endif
