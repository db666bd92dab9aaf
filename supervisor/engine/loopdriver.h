/*
 * loopdriver.h: who drives a loop (its run lock's live holder), the
 * reader's view of it (driver_pid, interrupted) and the reason a host
 * records in the loop when it leaves it running with nobody driving it.
 */
#ifndef CCW_LOOPDRIVER_H
#define CCW_LOOPDRIVER_H

#include <jansson.h>

struct state_store;

int	 loopdriver_probe(int, const char *, long *);	/* 1 held (pid), 0 */
void	 loopdriver_view(int, const char *, json_t *);
char	*loopdriver_status(const json_t *);	/* for a person; free it */
void	 loopdriver_record(struct state_store *, const char *);
void	 loopdriver_clear(struct state_store *);

#endif
