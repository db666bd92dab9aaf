/*
 * statefix.h: the fixture test-state.c and test-committer.c share: a
 * private state directory (t_dirfd) and helpers over it; each helper
 * keeps its last error in t_err (owned here, freed by t_clear).
 */
#ifndef CCW_STATEFIX_H
#define CCW_STATEFIX_H

#include <stddef.h>

#include <jansson.h>

#include "state.h"

extern char	 t_top[64];
extern char	 t_path[128];
extern int	 t_dirfd;
extern char	*t_err;

void		 t_setup(void);
void		 t_teardown(void);
const char	*t_e(void);
void		 t_clear(void);
void		 t_write(const char *, const char *, size_t);
char		*t_read(int, const char *);
void		 t_age(const char *);
void		 t_fixture(const char *, const char *);
char		*t_listing(const char *);
int		 t_has(const struct strv *, const char *);
json_t		*t_load(const char *);
void		 t_fe_set(const char *, const char *, json_t *);
const char	*t_status(const char *);
json_t		*t_ss(const json_t *, const char *);
json_t		*t_hammer(int);
int		 t_commit(const char *, json_t *, const char *, const char *, json_t **);
int		 t_store_commit(struct state_store *, int);
int		 t_create(const char *);

#endif
