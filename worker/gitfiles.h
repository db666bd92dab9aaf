/*
 * gitfiles.h: snapshots of a git work tree's status, and the files that
 * changed between two of them (gitfiles.c).
 */
#ifndef CCW_GITFILES_H
#define CCW_GITFILES_H

#include "proto.h"

struct gitent {
	char		*path;		/* relative to the top */
	char		 xy[2];		/* porcelain status letters */
	long long	 size;		/* -1: absent */
	long long	 mtime_ns;
};

struct gitsnap {
	int		 valid;		/* dir is inside a work tree */
	char		*top;		/* the work tree's root */
	char		*head;		/* NULL: no commit yet */
	struct gitent	*v;
	size_t		 n;
};

void	gitfiles_snap(const char *, struct gitsnap *);
int	gitfiles_diff(const struct gitsnap *, const struct gitsnap *,
	    struct strv *);
void	gitfiles_clear(struct gitsnap *);

#endif
