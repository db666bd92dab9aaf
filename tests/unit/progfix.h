/*
 * progfix.h: the fixture test-progress.c and test-progress-rebuild.c
 * share: a private state directory (pf_sdir, open as pf_sfd) and exact
 * bytes in and out of its files.
 */
#ifndef CCW_PROGFIX_H
#define CCW_PROGFIX_H

#include "state.h"

#define ID	"loop-v2-20260122T100000-abcd1234"

extern char	*pf_top;	/* the test's private directory */
extern char	*pf_sdir;	/* pf_top/state: the state directory */
extern int	 pf_sfd;

int	 pf_setup(void);
void	 pf_teardown(void);
char	*pf_read(const char *);
char	*pf_slurp(const char *);
void	 pf_spew(const char *, const char *);
int	 pf_has(const struct strv *, const char *);

#endif
