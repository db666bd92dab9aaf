/*
 * workflow.c: look-ups in a workflow's table (flowdef.h): a role by its
 * name or menu word, the list of role names that error texts show.  The
 * engine asks these instead of knowing any role.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "flowdef.h"
#include "xmalloc.h"

/* Role names come from the command line, a config file or a state file. */
int
workflow_role_index(const struct workflow *wf, const char *name)
{
	size_t	i;

	for (i = 0; name != NULL && i < wf->nroles; i++)
		if (strcmp(name, wf->roles[i].name) == 0)
			return (int)i;
	return -1;
}

/* An action's name for events and records; NULL past the table. */
const char *
workflow_role_name(const struct workflow *wf, int role)
{
	if (role < 0 || (size_t)role >= wf->nroles)
		return NULL;
	return wf->roles[role].name;
}

/* Whether a role runs in the group (a step of the parallel mode). */
int
workflow_in_group(const struct workflow_group *g, int role)
{
	size_t	i;

	for (i = 0; g != NULL && i < g->nroles; i++)
		if (g->roles[i] == role)
			return 1;
	return 0;
}

/*
 * "a, b, c": the roles in order for error texts; last (", " or " or ")
 * goes before the last name.  The caller frees it.
 */
char *
workflow_role_list(const struct workflow *wf, const char *last)
{
	size_t	 i, len = 1;
	char	*s;

	for (i = 0; i < wf->nroles; i++)
		len += strlen(wf->roles[i].name) + strlen(last) + 2;
	s = xcalloc(1, len);
	for (i = 0; i < wf->nroles; i++) {
		if (i > 0)
			strcat(s, i + 1 == wf->nroles ? last : ", ");
		strcat(s, wf->roles[i].name);
	}
	return s;
}

/* The text of "no such role", built from the table; the caller frees it. */
char *
workflow_role_unknown(const struct workflow *wf, const char *name)
{
	char	*list = workflow_role_list(wf, ", "), *s;

	xasprintf(&s, "unknown role '%s' (%s)", name != NULL ? name : "",
	    list);
	free(list);
	return s;
}

/* How many roles the menu offers: its exit word comes after them. */
size_t
workflow_menu_size(const struct workflow *wf)
{
	size_t	i, n = 0;

	for (i = 0; i < wf->nroles; i++)
		n += (wf->roles[i].flags & WORKFLOW_MENU) != 0;
	return n;
}

/*
 * A word typed at the menu: a role's name, one of its aliases or its
 * number among the roles offered (from 1); any case.  -1: none.
 */
int
workflow_menu_role(const struct workflow *wf, const char *word)
{
	const char *const	*a;
	size_t			 i, n = 0;
	char			 num[24];

	for (i = 0; word != NULL && i < wf->nroles; i++) {
		if ((wf->roles[i].flags & WORKFLOW_MENU) == 0)
			continue;
		snprintf(num, sizeof num, "%zu", ++n);
		if (strcasecmp(word, wf->roles[i].name) == 0 ||
		    strcmp(word, num) == 0)
			return (int)i;
		for (a = wf->roles[i].aliases; a != NULL && *a != NULL; a++)
			if (strcasecmp(word, *a) == 0)
				return (int)i;
	}
	return -1;
}
