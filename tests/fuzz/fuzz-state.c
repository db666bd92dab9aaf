/*
 * fuzz-state.c: libFuzzer target for the loop state file reader
 * (supervisor/engine/state.c state_load_at, statevalid.c): the bytes a
 * front end or a hand edit left in {id}.json, read and judged by the
 * ccw-loop workflow's rules, as every reader of a loop does.
 */
#include <config.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ccw-loop.h"
#include "state.h"
#include "xmalloc.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define FUZZ_ID	"loop-fuzz"

/* One state directory for the process, removed at exit. */
static char	fuzz_dir[64];
static int	fuzz_dirfd = -1;

/* The directory goes with the process. */
static void
fuzz_cleanup(void)
{
	unlinkat(fuzz_dirfd, FUZZ_ID ".json", 0);
	close(fuzz_dirfd);
	rmdir(fuzz_dir);
}

/* The state directory, made on the first input. */
static int
fuzz_statedir(void)
{
	const char	*tmp = getenv("TMPDIR");

	if (fuzz_dirfd >= 0)
		return fuzz_dirfd;
	snprintf(fuzz_dir, sizeof fuzz_dir, "%s/fuzz-state.XXXXXX",
	    tmp != NULL && strlen(tmp) < 40 ? tmp : "/tmp");
	if (mkdtemp(fuzz_dir) == NULL ||
	    (fuzz_dirfd = open(fuzz_dir, O_RDONLY | O_DIRECTORY)) < 0) {
		perror(fuzz_dir);
		abort();
	}
	atexit(fuzz_cleanup);
	return fuzz_dirfd;
}

/* Write the bytes as {id}.json, whole (the reader sees no writer). */
static void
fuzz_write(int dirfd, const uint8_t *data, size_t len)
{
	int	fd;

	fd = openat(dirfd, FUZZ_ID ".json", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || (len > 0 && write(fd, data, len) != (ssize_t)len)) {
		perror(FUZZ_ID ".json");
		abort();
	}
	close(fd);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct strv	 errs = { NULL, 0 };
	json_t		*st = NULL, *sk;
	char		*err = NULL;
	int		 dirfd = fuzz_statedir();

	fuzz_write(dirfd, data, len);
	switch (state_load_at(dirfd, FUZZ_ID, ".json", STATE_LOAD_NOQUARANTINE,
	    &st, NULL, &err)) {
	case STATE_OK:
		if (!json_is_object(st) || err != NULL)
			abort();
		/* Judged as a commit judges it: the file, then merged on a new one. */
		(void)state_validate(&ccw_loop_state, st, &errs);
		(void)state_owned_reverted(st, st);
		if ((sk = state_new(&ccw_loop_state, FUZZ_ID, "t", "", 10)) ==
		    NULL)
			abort();
		state_merge_patch(sk, st);
		(void)state_validate(&ccw_loop_state, sk, &errs);
		json_decref(sk);
		break;
	case STATE_EAGAIN:
		if (st != NULL || err == NULL)
			abort();
		break;
	default:
		abort();
	}
	strv_clear(&errs);
	json_decref(st);
	free(err);
	return 0;
}
