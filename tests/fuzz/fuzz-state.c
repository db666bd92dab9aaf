/*
 * fuzz-state.c: libFuzzer target for the loop state file reader
 * (supervisor/engine/state.c state_load_at, statevalid.c): the bytes a
 * front end or a hand edit left in {id}.json, read and judged by the
 * ccw-loop workflow's rules, as every reader of a loop does.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>

#include "ccw-loop.h"
#include "fuzzdir.h"
#include "state.h"
#include "xmalloc.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define FUZZ_ID	"loop-fuzz"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct strv	 errs = { NULL, 0 };
	json_t		*st = NULL, *sk;
	char		*err = NULL;
	int		 dirfd = fuzzdir_open();

	fuzzdir_write(dirfd, FUZZ_ID ".json", data, len);
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
