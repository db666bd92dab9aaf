/*
 * tuneapply.c: skill-tune's fix steps: the next pending fix backed up,
 * recorded, applied; its verification (the roles that report its issues
 * run again); kept, or rolled back from its backup; the round's end.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "tunedrv.h"
#include "xmalloc.h"

/* After a fix's fate: the next one, or the round ends and another starts. */
static void
tune_after_fix(struct tune *t, int over)
{
	free(t->fix);
	t->fix = NULL;
	if (over)
		tune_enter(t, TP_DONE);
	else if (json_array_size(json_object_get(t->st, "pending_fixes")) > 0)
		tune_enter(t, TP_APPLY);
	else {
		json_object_set_new(t->st, "iteration_count", json_integer(
		    json_integer_value(json_object_get(t->st,
		    "iteration_count")) + 1));
		if (tune_save(t) == 0)
			tune_enter(t, TP_DIAGNOSE);
	}
}

/* The fix's files as they were; its applied entry says so. */
void
tune_rollback(struct tune *t, json_t *ap)
{
	char	*err = NULL;

	if (tunefix_rollback(t->sfd, json_string_value(json_object_get(t->st,
	    "backup_dir")), t->fix, &err) != 0) {
		(void)tune_error(t, "action-rollback", err);
		free(err);
		return;
	}
	json_object_set_new(ap, "verification_result", json_string("fail"));
	json_object_set_new(ap, "rollback_available", json_false());
	tune_emit(t, "fix_rolled_back", json_pack("{s:s}", "fix_id", t->fix));
}

/*
 * The next pending fix: backed up, then recorded (write-ahead: a kill
 * from here on finds it and rolls it back), then applied.
 */
void
tune_apply(struct tune *t)
{
	json_t	*pend = json_object_get(t->st, "pending_fixes"), *fix, *ap;
	char	*action, *err = NULL, *bpath, now[40];
	int	 over;

	free(t->fix);
	t->fix = xstrdup(json_string_value(json_array_get(pend, 0)));
	json_array_remove(pend, 0);
	fix = tune_fix(t, t->fix);
	xasprintf(&action, "action-apply-%s", t->fix);
	tune_begin(t, action);
	if (tunefix_backup(t->sfd, json_string_value(json_object_get(t->st,
	    "backup_dir")), fix, &err) != 0) {
		over = tune_error(t, action, err);
		free(err);
		tune_end(t, action, "failure", NULL);
		free(action);
		if (tune_save(t) == 0)
			tune_after_fix(t, over);
		return;
	}
	xasprintf(&bpath, "%s/%s", json_string_value(json_object_get(t->st,
	    "backup_dir")), t->fix);
	ap = json_pack("{s:s, s:s, s:b, s:s, s:s, s:b}", "fix_id", t->fix,
	    "applied_at", tune_now(now), "success", 0, "backup_path", bpath,
	    "verification_result", "pending", "rollback_available", 1);
	free(bpath);
	json_array_append_new(json_object_get(t->st, "applied_fixes"), ap);
	if (tune_save(t) != 0) {
		free(action);
		return;
	}
	if (tunefix_apply(t->sfd, fix, &err) != 0) {
		over = tune_error(t, action, err);
		free(err);
		tune_rollback(t, ap);
		tune_end(t, action, "failure", NULL);
		free(action);
		if (tune_save(t) == 0)
			tune_after_fix(t, over);
		return;
	}
	json_object_set_new(ap, "success", json_true());
	tune_end(t, action, "success", NULL);
	tune_emit(t, "fix_applied", json_pack("{s:s}", "fix_id", t->fix));
	free(action);
	if (tune_save(t) == 0)
		tune_enter(t, TP_VERIFY);
}

/* The diagnosis roles that report the fix's issues, again. */
void
tune_verify(struct tune *t)
{
	const json_t	*fix = tune_fix(t, t->fix), *iid, *is;
	int		 roles[TUNE_NDIAG], got[4], seen[TUNE_NDIAG] = { 0 };
	size_t		 i, j, n = 0;
	int		 k, m;
	char		*action;

	xasprintf(&action, "action-verify-%s", t->fix);
	tune_begin(t, action);
	free(action);
	json_array_foreach(json_object_get(fix, "issue_ids"), i, iid)
		json_array_foreach(json_object_get(t->st, "issues"), j, is) {
			if (!json_equal(json_object_get(is, "id"), iid))
				continue;
			m = tune_roles_of_type(json_string_value(
			    json_object_get(is, "type")), got, 4);
			for (k = 0; k < m; k++)
				if (!seen[got[k]]++)
					roles[n++] = got[k];
		}
	tunerun_step(t, roles, n, NULL, NULL);
}

/* The keys of a role's issues in a diagnosis object. */
static void
tune_keys(const json_t *diag, const char *role, json_t *out)
{
	const json_t	*e;
	char		*k;
	size_t		 i;

	json_array_foreach(json_object_get(json_object_get(diag, role),
	    "issues"), i, e) {
		k = tunemerge_key(e);
		json_array_append_new(out, json_string(k));
		free(k);
	}
}

/* The verdict: the fix stays, or its files are put back. */
void
tune_verified(struct tune *t)
{
	json_t		*scratch = json_pack("{s:{}}", "diagnosis");
	json_t		*before = json_array(), *after = json_array();
	json_t		*addressed = json_array(), *ap, *d;
	const json_t	*iid, *is;
	struct tune_run	*r;
	char		*why = NULL, *e, *action;
	size_t		 i, j;
	int		 pass = 1, over = 0;

	for (i = 0; i < t->nruns && pass; i++) {
		r = &t->runs[i];
		if ((d = tunerun_detail(r, &why)) != NULL) {
			tune_timed(d, r);
			if (tunemerge_diagnosis(scratch, tune_categories[
			    r->role].role, d, &e) != 0) {
				xasprintf(&why, "%s: %s", r->a->role, e);
				free(e);
			}
			json_decref(d);
		}
		if (why != NULL) {
			over |= tune_error(t, "action-verify", why);
			pass = 0;
			break;
		}
		tune_keys(json_object_get(t->st, "diagnosis"),
		    tune_categories[r->role].role, before);
		tune_keys(json_object_get(scratch, "diagnosis"),
		    tune_categories[r->role].role, after);
	}
	json_array_foreach(json_object_get(tune_fix(t, t->fix), "issue_ids"),
	    i, iid)
		json_array_foreach(json_object_get(t->st, "issues"), j, is)
			if (json_equal(json_object_get(is, "id"), iid)) {
				e = tunemerge_key(is);
				json_array_append_new(addressed,
				    json_string(e));
				free(e);
			}
	free(why);
	why = NULL;
	if (pass && t->nruns == 0)
		why = xstrdup("no diagnosis role reports its issues");
	else if (pass)
		pass = tunemerge_verdict(addressed, before, after, &why);
	ap = tune_applied(t, t->fix);
	xasprintf(&action, "action-verify-%s", t->fix);
	if (pass && why == NULL) {
		json_object_set_new(ap, "verification_result",
		    json_string("pass"));
		tune_end(t, action, "success", NULL);
		tune_emit(t, "fix_verified", json_pack("{s:s}", "fix_id",
		    t->fix));
	} else {
		if (why != NULL)
			tune_emit(t, "fix_failed", json_pack("{s:s, s:s}",
			    "fix_id", t->fix, "why", why));
		tune_rollback(t, ap);
		tune_end(t, action, "failure", NULL);
	}
	free(action);
	free(why);
	json_decref(scratch);
	json_decref(before);
	json_decref(after);
	json_decref(addressed);
	if (tune_save(t) == 0)
		tune_after_fix(t, over || tunestate_over_budget(t->st));
}

