/*
 * jsondiff.c: the difference of two JSON values as the paths that
 * changed: an object member or array element on one side only is one
 * entry (its whole value), a leaf on both sides one entry if unequal.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsondiff.h"
#include "xmalloc.h"

/* One change: {"path", "from"?, "to"?}; an absent side is left out. */
static void
json_diff_put(json_t *out, const char *path, const json_t *a, const json_t *b)
{
	json_t	*e = json_pack("{s:s}", "path", *path ? path : "(all)");

	if (a != NULL)
		json_object_set(e, "from", (json_t *)a);
	if (b != NULL)
		json_object_set(e, "to", (json_t *)b);
	json_array_append_new(out, e);
}

/*
 * a and b at PATH into out, at most max entries; one past that is the
 * entry {"path": "...", "more": true}: the rest left out.  Objects are
 * walked by member (a's, then b's new ones), arrays by index.
 */
static void
json_diff_at(const json_t *a, const json_t *b, const char *path, json_t *out,
    size_t max)
{
	const char	*k;
	const json_t	*v;
	char		*sub;
	size_t		 i, n;

	if (json_array_size(out) > max || json_equal((json_t *)a, (json_t *)b))
		return;
	if (json_array_size(out) == max) {
		json_array_append_new(out, json_pack("{s:s, s:b}", "path",
		    "...", "more", 1));
		return;
	}
	if (json_is_object(a) && json_is_object(b)) {
		json_object_foreach((json_t *)a, k, v) {
			xasprintf(&sub, "%s%s%s", path, *path ? "." : "", k);
			json_diff_at(v, json_object_get(b, k), sub, out, max);
			free(sub);
		}
		json_object_foreach((json_t *)b, k, v)
			if (json_object_get(a, k) == NULL) {
				xasprintf(&sub, "%s%s%s", path, *path ? "." :
				    "", k);
				json_diff_at(NULL, v, sub, out, max);
				free(sub);
			}
	} else if (json_is_array(a) && json_is_array(b)) {
		n = json_array_size(a) > json_array_size(b) ?
		    json_array_size(a) : json_array_size(b);
		for (i = 0; i < n; i++) {
			xasprintf(&sub, "%s[%zu]", path, i);
			json_diff_at(json_array_get(a, i), json_array_get(b, i),
			    sub, out, max);
			free(sub);
		}
	} else
		json_diff_put(out, path, a, b);
}

/*
 * What changed from before to after (either may be NULL: absent), as a
 * new array of {path, from, to}, at most max of them and a last
 * {"path": "...", "more": true} when there were more.
 */
json_t *
json_diff(const json_t *before, const json_t *after, size_t max)
{
	json_t	*out = json_array();

	json_diff_at(before, after, "", out, max);
	return out;
}
