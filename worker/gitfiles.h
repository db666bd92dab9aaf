/*
 * gitfiles.h: snapshots of a work tree, as git's status (gitfiles.c) or,
 * outside git, as a bounded scan of sizes and mtimes (scanfiles.c), and
 * the files that changed between two of them.
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
	int		 valid;		/* a snapshot was taken */
	int		 scan;		/* 1: scanfiles' walk, not git's status */
	int		 truncated;	/* the scan stopped at SCAN_MAX entries */
	long long	 t0_ns;		/* realtime when the scan began */
	char		*top;		/* the work tree's root (scan: the dir) */
	char		*head;		/* NULL: no commit yet (or a scan) */
	struct gitent	*v;		/* sorted by path */
	size_t		 n;
};

/* The most entries a scan outside git records (scanfiles.c). */
#define SCAN_MAX	20000

void	gitfiles_snap(const char *, struct gitsnap *);
void	gitfiles_add(struct gitsnap *, const char *, const char *);
void	gitfiles_sort(struct gitsnap *);
int	gitfiles_diff(const struct gitsnap *, const struct gitsnap *,
	    struct strv *);
void	gitfiles_clear(struct gitsnap *);
void	scanfiles_snap(const char *, struct gitsnap *);
void	scanfiles_observe(const char *, struct gitsnap *);
const char *scanfiles_changed(const struct gitsnap *, const char *,
	    struct strv *);

#endif
