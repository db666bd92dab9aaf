/*
 * fuzz-answers.c: libFuzzer target for a loop's answers file
 * (supervisor/engine/question.c question_answers_read): the lines front
 * ends in other processes append to {id}.answers.jsonl, read from the
 * start and from the middle, as a driving loop reads them.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>

#include "fuzzdir.h"
#include "question.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define FUZZ_ID	"loop-fuzz"

/* A read from off: objects only, and off moved within the file. */
static void
fuzz_read(int dirfd, off_t off, size_t len)
{
	json_t	*got, *o;
	size_t	 i, junk, lines = 0;
	off_t	 at = off;

	got = question_answers_read(dirfd, FUZZ_ID, &at, &junk);
	if (!json_is_array(got) || at < 0 || (size_t)at > len ||
	    (at < off && off <= (off_t)len))
		abort();
	json_array_foreach(got, i, o)
		if (!json_is_object(o))
			abort();
	lines = json_array_size(got) + junk;
	/* each line taken or counted ended at a newline, or was too long */
	if (lines > len + 1)
		abort();
	json_decref(got);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	int	dirfd = fuzzdir_open();

	fuzzdir_write(dirfd, FUZZ_ID ".answers.jsonl", data, len);
	fuzz_read(dirfd, 0, len);
	fuzz_read(dirfd, (off_t)(len / 2), len);
	fuzz_read(dirfd, (off_t)len + 7, len);	/* the file shrank: from 0 */
	return 0;
}
