/*
 * progress.h: the side files of a loop, next to its state file:
 * {id}.progress/{role}.md in CCW's progress formats, the NDJSON logs the
 * workflow names in {id}.progress/ (its table's logs), {id}.tasks.jsonl
 * (also read from {id}/tasks.jsonl), {id}.workers/{role}.output.json and
 * {id}.history.jsonl; and rebuilding skill_state from them.
 */
#ifndef CCW_PROGRESS_H
#define CCW_PROGRESS_H

#include <stdatomic.h>
#include <time.h>

#include <jansson.h>

#include "buf.h"
#include "proto.h"

/*
 * Every function takes the state directory as an open descriptor and the
 * loop id, sets *err to NULL first, and returns 0, or -1 with a malloc'd
 * one-line reason in *err.  progress_tasks_read and progress_rebuild may
 * also return 0 with *err set: a warning (malformed lines skipped, an
 * unreadable worker output) for the caller to log and free.
 * The appenders block on the file's flock, or, given a stopping flag
 * (the store's, on its side thread), poll it and give up once it is set.
 */
struct workflow_state;
int	 progress_append_md(const struct workflow_state *, int, const char *,
	    const char *, const json_t *, const atomic_int *, char **);
	    /* the workflow's formats, dirfd, id, role, skill_state section */
int	 progress_log(const struct workflow_state *, int, const char *,
	    const char *, const json_t *, const atomic_int *,
	    char **);	/* one of the workflow's logs, one object */
int	 progress_tasks_read(int, const char *, json_t **, char **);	/* array of task objects */
int	 progress_tasks_append(int, const char *, const json_t *, char **);
int	 progress_tasks_write(int, const char *, const json_t *, char **);	/* the whole list, atomically */
int	 progress_output_save(int, const char *, const char *, const json_t *, char **);	/* role, worker output */
int	 progress_replace(int, const char *, const char *, const char *,
	    size_t, char **);	/* name, label, data: temp, fsync, rename, fsync dir */
int	 progress_history_append(int, const char *, const json_t *,
	    const atomic_int *, char **);
/* skill_state rebuilt from the side files; unrecovered names the fields it could not recover. */
int	 progress_rebuild(const struct workflow_state *, int, const char *,
	    json_t **, struct strv *, char **);
/* For a workflow's rebuilt hook (rebuild.c): the list of unrecovered names. */
enum { PROGRESS_UN_ADD, PROGRESS_UN_HAS, PROGRESS_UN_DEL };
int	 progress_unrec(struct strv *, const char *, const char *, int);	/* a.b: add, has, delete */

/* --- shared by progress.c, progressmd.c and rebuild.c (all engine) */
int	 progress_name_valid(const char *);	/* [A-Za-z0-9][A-Za-z0-9._-]{0,127}, no ".." */
int	 progress_check_id(const char *, char **);
int	 progress_open_dir(int, const char *, int, int *, char **);	/* 0, 1 absent, -1 */
int	 progress_read_file(int, const char *, const char *, char **, size_t *,
	    struct timespec *, char **);	/* 0, 1 absent, -1 */
const char *progress_md_last(const char *, size_t, int *);	/* last "### Iteration ", count */
int	 progress_open_file(int, const char *, const char *, int, int *, char **);
int	 progress_read_fd(int, const char *, char **, size_t *, char **);
int	 progress_append_fd(int, const char *, const char *, size_t,
	    const atomic_int *, char **);

/* How one value of a skill_state section is written in Markdown and read back. */
enum progress_kind {
	PK_STR,		/* string; an empty cell reads back as "" */
	PK_NSTR,	/* string or null; an empty cell is null */
	PK_OSTR,	/* optional string; an empty cell is absent */
	PK_TS,		/* ISO 8601 timestamp or null; an empty cell is null */
	PK_OTS,		/* optional ISO 8601 timestamp */
	PK_INT,		/* a count: integer >= 0 */
	PK_NUM,		/* integer or real */
	PK_PCT,		/* number from 0 to 100 */
	PK_BOOL,	/* true / false */
	PK_LIST,	/* array of strings, ", "-separated, "," escaped */
	PK_OBJ,		/* JSON object, compact; an empty cell is null */
};
struct progress_field {
	const char		*label;	/* bullet label or column header */
	const char		*key;	/* member of the object */
	const char		*sub;	/* member of that member (evidence_criteria.confirm), or NULL */
	enum progress_kind	 kind;
	const char		*values;	/* "a|b|c": the only values read back; a
						   missing or other one reads as a */
};
struct progress_format {
	const char			*role;	/* develop, debug, validate */
	const char			*title;	/* the "# ..." line written once */
	const char			*timeline;	/* the "## ..." line under it */
	const struct progress_field	*bullets;	/* scalars of the section */
	const char			*table;	/* "#### ..." title of the table */
	const char			*table_key;	/* the array it holds */
	const struct progress_field	*columns;
	const char			*list;	/* "#### ..." title of a string list, or NULL */
	const char			*list_key;
};
const struct progress_format *progress_format(const struct workflow_state *,
	    const char *);	/* the workflow's, by role; NULL if none */
void	 progress_fix_row(json_t *, const struct progress_format *,
	    const char *, struct strv *);	/* rebuild.c: a row into the seed's shape; path, unrec */

/* progressmd.c's parser: the last section of a Markdown file. */
/* What the last section of one Markdown file holds, still escaped. */
struct progress_mdsec {
	json_t	*bullets;	/* label -> text */
	json_t	*tables;	/* subsection title -> [ {header: cell} ] */
	json_t	*lists;		/* subsection title -> [ text ] */
};
void	 progress_md_parse(const char *, size_t, struct progress_mdsec *);
void	 progress_md_free(struct progress_mdsec *);
char	*progress_md_trim(const char *, size_t);
char	*progress_md_unbold(char *);
char	*progress_md_unescape(const char *, size_t);
json_t	*progress_md_jstr(const char *);
json_t	*progress_md_split(const char *, size_t, char, int);

#endif
