/*
 * bqfile.h: the file chores of the batch's inputs and reports: a whole
 * file read under a size cap, a file replaced crash-safely (temp, fsync,
 * rename, fsync of the directory), and JSON written the way CCW's
 * JSON.stringify(v, null, 2) writes it.
 */
#ifndef CCW_BQFILE_H
#define CCW_BQFILE_H

#include <stddef.h>
#include <sys/stat.h>

#include <jansson.h>

/* the largest batch FILE, queue or issues file read */
#define BQ_FILE_MAX	(16u * 1024 * 1024)

int	 bqfile_read(const char *, size_t, char **, size_t *, struct stat *,
	    char **);
int	 bqfile_read_fd(int, const char *, size_t, char **, size_t *, char **);
int	 bqfile_write_atomic(const char *, const char *, size_t,
	    const struct stat *, char **);
/* edit(path, exists, st, arg, &text, err): 0 text, 1 nothing, -1 error */
typedef int (*bqfile_edit_fn)(const char *, int, struct stat *, void *,
	    char **, char **);
#define BQFILE_ROUNDS	8	/* re-reads when another writer got in first */

int	 bqfile_edit(const char *, bqfile_edit_fn, void *, char **);
char	*bqfile_json_text(const json_t *);
char	*bqfile_json_line(const json_t *);
int	 bqfile_lock(const char *, char **);
void	 bqfile_iso_now(char *, size_t);
int	 bq_word(const char *);		/* [A-Za-z0-9._-]{1,128} */
char	*bq_dirname(const char *);	/* "/" for "/x", "." for "x" */

#endif
