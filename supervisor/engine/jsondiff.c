/*
 * jsondiff.c: the difference of two JSON values as the paths that
 * changed: an object member or array element on one side only is one
 * entry (its whole value), a leaf on both sides one entry if unequal;
 * an array that lost its head (a log kept at its newest N) is told so.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsondiff.h"
#include "xmalloc.h"

#define JSON_DIFF_SHIFT_MAX 8	/* head elements a shifted array may lose */

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
 * How many elements a bounded log (an array kept at its newest N, as
 * skill_state.errors) lost at its head: the k (at most
 * JSON_DIFF_SHIFT_MAX) for which b starts with a without its first k;
 * 0 if none.  Without it one new entry would be N changed elements.
 */
static size_t
json_diff_shift(const json_t *a, const json_t *b)
{
	size_t	na = json_array_size(a), nb = json_array_size(b), k, i;

	/* k 0 first: an array that only grew is no shift */
	for (k = 0; k <= JSON_DIFF_SHIFT_MAX && k < na; k++) {
		if (na - k > nb)
			continue;
		for (i = 0; i < na - k; i++)
			if (!json_equal(json_array_get(a, i + k),
			    json_array_get(b, i)))
				break;
		if (i == na - k)
			return k;
	}
	return 0;
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
	const char	*key;
	const json_t	*v;
	char		*sub;
	size_t		 i, n, k;

	if (json_array_size(out) > max || json_equal((json_t *)a, (json_t *)b))
		return;
	if (json_array_size(out) == max) {
		json_array_append_new(out, json_pack("{s:s, s:b}", "path",
		    "...", "more", 1));
		return;
	}
	if (json_is_object(a) && json_is_object(b)) {
		json_object_foreach((json_t *)a, key, v) {
			xasprintf(&sub, "%s%s%s", path, *path ? "." : "", key);
			json_diff_at(v, json_object_get(b, key), sub, out, max);
			free(sub);
		}
		json_object_foreach((json_t *)b, key, v)
			if (json_object_get(a, key) == NULL) {
				xasprintf(&sub, "%s%s%s", path, *path ? "." :
				    "", key);
				json_diff_at(NULL, v, sub, out, max);
				free(sub);
			}
	} else if (json_is_array(a) && json_is_array(b)) {
		k = json_diff_shift(a, b);
		for (i = 0; i < k; i++) {
			xasprintf(&sub, "%s[%zu]", path, i);
			json_diff_at(json_array_get(a, i), NULL, sub, out, max);
			free(sub);
		}
		n = json_array_size(a) - k > json_array_size(b) ?
		    json_array_size(a) - k : json_array_size(b);
		for (i = 0; i < n; i++) {
			xasprintf(&sub, "%s[%zu]", path, i);
			json_diff_at(json_array_get(a, i + k),
			    json_array_get(b, i), sub, out, max);
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
