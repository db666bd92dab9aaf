/*
 * adapters.c: THE table of tools, and reading it: lookup by name, rows
 * by position or by flag, and the lists of names every "one of: ..."
 * message and schema is built from.  Each row is defined in its own
 * worker/tool-NAME.c; this file only lists them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "adapter.h"

extern const struct adapter	adapter_bash;
extern const struct adapter	adapter_codex;
extern const struct adapter	adapter_claude;
extern const struct adapter	adapter_gemini;
extern const struct adapter	adapter_qwen;
extern const struct adapter	adapter_opencode;
#ifdef CCW_RECIPE_TOOL
extern const struct adapter	adapter_echo_agent;
#endif

/*
 * The command tool first, then the agent CLIs in CCW's cli-tools order:
 * the order config, doctor and every list of names follow, and the order
 * a disabled default tool falls back in.
 */
static const struct adapter *const adapter_table[] = {
	&adapter_bash,
	&adapter_codex,
	&adapter_claude,
	&adapter_gemini,
	&adapter_qwen,
	&adapter_opencode,
#ifdef CCW_RECIPE_TOOL
	/* tests/recipe: a test build's extra row (HACKING.md, the recipe) */
	&adapter_echo_agent,
#endif
};
#define ADAPTER_COUNT	(sizeof adapter_table / sizeof adapter_table[0])

/* The ASSIGN message names a tool; an unknown name is the caller's error. */
const struct adapter *
adapter_find(const char *name)
{
	size_t	i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < ADAPTER_COUNT; i++) {
		if (strcmp(adapter_table[i]->name, name) == 0)
			return adapter_table[i];
	}
	return NULL;
}

/* How many rows: callers walk the table with adapter_at, never a copy. */
size_t
adapter_count(void)
{
	return ADAPTER_COUNT;
}

/* Row i in the table's order; NULL past the end. */
const struct adapter *
adapter_at(size_t i)
{
	return i < ADAPTER_COUNT ? adapter_table[i] : NULL;
}

/* The first row carrying FLAG (the default tool, CCW's, ...); NULL none. */
const struct adapter *
adapter_flagged(unsigned flag)
{
	size_t	i;

	for (i = 0; i < ADAPTER_COUNT; i++) {
		if ((adapter_table[i]->flags & flag) == flag)
			return adapter_table[i];
	}
	return NULL;
}

/* Is NAME an agent CLI of the table (a session, a prompt), not bash? */
int
adapter_is_agent(const char *name)
{
	const struct adapter	*a = adapter_find(name);

	return a != NULL && (a->flags & ADAPTER_AGENT) != 0;
}

/*
 * The names of the rows carrying every bit of NEED (0: all), joined by
 * ", " and LAST before the final one (" or ", ", "): for "one of: ..."
 * messages, so they never go stale.  The caller frees it.
 */
char *
adapter_list(unsigned need, const char *last)
{
	const char	*names[ADAPTER_COUNT];
	size_t		 i, n = 0, len = 1;
	char		*s;

	for (i = 0; i < ADAPTER_COUNT; i++) {
		if ((adapter_table[i]->flags & need) == need) {
			names[n++] = adapter_table[i]->name;
			len += strlen(adapter_table[i]->name) + strlen(last) + 2;
		}
	}
	s = xmalloc(len);
	s[0] = '\0';
	for (i = 0; i < n; i++) {
		if (i > 0)
			strcat(s, i + 1 == n ? last : ", ");
		strcat(s, names[i]);
	}
	return s;
}
