/*
 * filewatch.h: inotify on one file of a directory, a callback on its
 * writes (filewatch.c): a loop's answers file, a batch's state.json.
 */
#ifndef CCW_FILEWATCH_H
#define CCW_FILEWATCH_H

struct filewatch;
struct event_base;

/* Which writes are news. */
enum filewatch_what {
	FILEWATCH_WRITES,	/* every write: appends to a file kept open */
	FILEWATCH_WHOLE,	/* a file closed after writing, or renamed in */
};

struct filewatch *filewatch_new(struct event_base *, int, const char *,
		    enum filewatch_what, void (*)(void *), void *, char **);
void		 filewatch_free(struct filewatch *);

#endif
