/*
 * tunereq.c: requirement analysis, before any diagnosis (seed 002's
 * RequirementAnalysis): the description cut into dimensions, each matched
 * by its words to a diagnosis category, its taxonomy and fix strategies,
 * the coverage, and the ambiguities a person may settle.  Pure.
 */
#include <config.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "tuneint.h"
#include "xmalloc.h"

#define TUNEREQ_MAX_DIMS	32

/* Whether word (n bytes, lower case) is one of the list's. */
static int
tunereq_word_in(const char *w, size_t n, const char *const *list)
{
	size_t	i;

	for (i = 0; list[i] != NULL; i++)
		if (strlen(list[i]) == n && memcmp(list[i], w, n) == 0)
			return 1;
	return 0;
}

/* A clause's words against every category: hits per category. */
static void
tunereq_score(const char *clause, int *hits, json_t *kws)
{
	const char	*p = clause;
	char		 w[64];
	size_t		 n, c;
	int		 seen;

	while (*p != '\0') {
		while (*p != '\0' && !isalnum((unsigned char)*p) && *p != '_')
			p++;
		for (n = 0; (isalnum((unsigned char)*p) || *p == '_'); p++)
			if (n < sizeof w - 1)
				w[n++] = (char)tolower((unsigned char)*p);
		w[n] = '\0';
		if (n == 0)
			continue;
		for (c = 0, seen = 0; c < TUNE_NDIAG; c++)
			if (tunereq_word_in(w, n, tune_categories[c].keywords)) {
				hits[c]++;
				seen = 1;
			}
		if (seen) {
			json_t	*s = json_string(w);
			size_t	 i;
			json_t	*e;

			json_array_foreach(kws, i, e)
				if (json_equal(e, s))
					break;
			if (i == json_array_size(kws))
				json_array_append(kws, s);
			json_decref(s);
		}
	}
}

/* The string list of a NULL-ended array. */
static json_t *
tunereq_strs(const char *const *v)
{
	json_t	*a = json_array();

	for (; *v != NULL; v++)
		json_array_append_new(a, json_string(*v));
	return a;
}

/* One clause (trimmed) into a dimension, its match and ambiguity. */
static void
tunereq_clause(json_t *ra, const char *clause, int *ndim)
{
	const struct tune_category	*cat;
	json_t				*kws = json_array(), *interp;
	int				 hits[TUNE_NDIAG] = { 0 };
	int				 best = 0, total = 0, tie = 0;
	char				 id[16];
	size_t				 c;

	tunereq_score(clause, hits, kws);
	for (c = 0; c < TUNE_NDIAG; c++) {
		total += hits[c];
		if (hits[c] > hits[best])
			best = (int)c;
	}
	if (total == 0 || *ndim >= TUNEREQ_MAX_DIMS) {
		json_decref(kws);
		return;
	}
	for (c = 0; c < TUNE_NDIAG; c++)
		tie += hits[c] == hits[best];
	cat = &tune_categories[best];
	snprintf(id, sizeof id, "DIM-%03d", ++*ndim);
	json_array_append_new(json_object_get(ra, "dimensions"), json_pack(
	    "{s:s, s:s, s:o, s:s, s:f}", "id", id, "description", clause,
	    "keywords", kws, "inferred_category", cat->category, "confidence",
	    (double)(int)(100.0 * hits[best] / total + 0.5) / 100.0));
	json_array_append_new(json_object_get(ra, "spec_matches"), json_pack(
	    "{s:s, s:{s:s, s:o, s:s}, s:{s:o, s:[s]}, s:b}", "dimension_id",
	    id, "taxonomy_match", "category", cat->category, "pattern_ids",
	    tunereq_strs(cat->patterns), "severity_hint", cat->severity_hint,
	    "strategy_match", "strategies", tunereq_strs(cat->strategies),
	    "risk_levels", cat->risk, "has_fix", cat->strategies[0] != NULL));
	if (tie < 2)
		return;
	/* the first in table order is the recommended reading */
	interp = json_array();
	for (c = 0; c < TUNE_NDIAG; c++)
		if (hits[c] == hits[best])
			json_array_append_new(interp, json_string(
			    tune_categories[c].category));
	json_array_append_new(json_object_get(ra, "ambiguities"), json_pack(
	    "{s:s, s:s, s:s++, s:o, s:b}", "dimension_id", id, "type",
	    "multi_category", "description", "\"", clause,
	    "\" fits several categories equally", "possible_interpretations",
	    interp, "needs_clarification", 1));
}

/* Coverage and status once every clause was read. */
static void
tunereq_coverage(json_t *ra, int ndim)
{
	const json_t	*m, *a;
	size_t		 i;
	int		 det = 0, fix = 0, rate, open = 0;

	json_array_foreach(json_object_get(ra, "spec_matches"), i, m) {
		det += !json_is_null(json_object_get(m, "taxonomy_match"));
		fix += json_is_true(json_object_get(m, "has_fix"));
	}
	rate = ndim > 0 ? fix * 100 / ndim : 0;
	json_object_set_new(ra, "coverage", json_pack("{s:i, s:i, s:i, s:i, "
	    "s:s}", "total_dimensions", ndim, "with_detection", det,
	    "with_fix_strategy", fix, "coverage_rate", rate, "status",
	    ndim > 0 && rate >= 80 ? "satisfied" : rate >= 50 ? "partial" :
	    "unsatisfied"));
	json_array_foreach(json_object_get(ra, "ambiguities"), i, a)
		open += json_is_true(json_object_get(a,
		    "needs_clarification"));
	json_object_set_new(ra, "status", json_string(open > 0 ?
	    "needs_clarification" : "completed"));
}

/*
 * Where a clause ends: at . ; , or a new line, or before " and " or
 * " but " (two problems in one sentence are two dimensions).
 */
static const char *
tunereq_clause_end(const char *p)
{
	const char	*e = p + strcspn(p, ".;,\n"), *w;
	size_t		 i;
	static const char *const joins[] = { " and ", " but ", NULL };

	for (i = 0; joins[i] != NULL; i++)
		if ((w = strstr(p, joins[i])) != NULL && w < e)
			e = w;
	return e;
}

/*
 * The analysis of a description, clause by clause;
 * a description with no word of any category is one vague ambiguity
 * whose recommended reading is every category ("all").
 */
json_t *
tunereq_analyze(const char *desc, const char *now)
{
	json_t		*ra, *interp;
	const char	*p = desc, *e;
	char		*clause;
	size_t		 n, c;
	int		 ndim = 0;

	ra = json_pack("{s:s, s:s, s:[], s:[], s:{}, s:[]}", "status",
	    "pending", "analyzed_at", now, "dimensions", "spec_matches",
	    "coverage", "ambiguities");
	while (*p != '\0') {
		e = tunereq_clause_end(p);
		while (p < e && isspace((unsigned char)*p))
			p++;
		for (n = (size_t)(e - p); n > 0 &&
		    isspace((unsigned char)p[n - 1]); n--)
			;
		if (n > 0) {
			clause = xstrndup(p, n > 400 ? 400 : n);
			tunereq_clause(ra, clause, &ndim);
			free(clause);
		}
		p = *e != '\0' ? e + 1 : e;
	}
	if (ndim == 0) {
		interp = json_array();
		json_array_append_new(interp, json_string("all"));
		for (c = 0; c < TUNE_NDIAG; c++)
			json_array_append_new(interp, json_string(
			    tune_categories[c].category));
		json_array_append_new(json_object_get(ra, "ambiguities"),
		    json_pack("{s:s, s:s, s:s, s:o, s:b}", "dimension_id", "",
		    "type", "vague_description", "description", "the "
		    "description names no known problem area",
		    "possible_interpretations", interp,
		    "needs_clarification", 1));
	}
	tunereq_coverage(ra, ndim);
	return ra;
}

/*
 * An ambiguity settled with interpretation k (0: the recommended one):
 * a dimension takes that category.  Returns the category's role for a
 * vague description settled on one area (the run's focus), else NULL.
 */
const char *
tunereq_settle(json_t *ra, size_t amb, size_t k)
{
	json_t		*a, *d;
	const char	*pick, *type;
	size_t		 i, c;

	a = json_array_get(json_object_get(ra, "ambiguities"), amb);
	pick = json_string_value(json_array_get(json_object_get(a,
	    "possible_interpretations"), k));
	if (a == NULL || pick == NULL)
		return NULL;
	json_object_set_new(a, "needs_clarification", json_false());
	type = json_string_value(json_object_get(a, "type"));
	json_array_foreach(json_object_get(ra, "dimensions"), i, d)
		if (json_equal(json_object_get(d, "id"),
		    json_object_get(a, "dimension_id")))
			json_object_set_new(d, "inferred_category",
			    json_string(pick));
	tunereq_coverage(ra, (int)json_array_size(json_object_get(ra,
	    "dimensions")));
	if (type == NULL || strcmp(type, "vague_description") != 0)
		return NULL;
	for (c = 0; c < TUNE_NDIAG; c++)
		if (strcmp(pick, tune_categories[c].category) == 0)
			return tune_categories[c].role;
	return NULL;
}
