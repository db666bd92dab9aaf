/*
 * cmd-run.c: `ccw-supervisor run`: its options, creating or resuming
 * the loop's state file, the terminal side of a run (live status lines,
 * or run-lines.c's plain ones, --json events, the interactive menu and
 * questions on stdin), signals and the exit status.
 */
#include <config.h>

#include <sys/ioctl.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "chan.h"
#include "children.h"
#include "clock.h"
#include "cmdutil.h"
#include "gate.h"
#include "host.h"
#include "log.h"
#include "loop.h"
#include "loopdriver.h"
#include "notify.h"
#include "run.h"
#include "state.h"
#include "sigfd.h"
#include "stopbound.h"
#include "sup.h"
#include "xmalloc.h"

#define RUN_BATCH_MS	900000	/* parallel batch wait */
#define RUN_BATCH_NUDGE	60000	/* wait after the batch nudge */

/* What the terminal side keeps. */
struct run_ui {
	struct loop	*l;
	const struct workflow *wf;	/* the menu's roles */
	const char	*id;
	int		 json;
	enum run_view	 view;		/* chosen once at start-up */
	struct event	*tick;
	struct event	*in_ev;		/* stdin; NULL: blocking reads */
	struct evbuffer	*in;
	int		 in_eof;
	enum { UI_IDLE, UI_MENU, UI_ASK, UI_PERM } want;
	json_t		*qs, *answers;	/* questions being asked */
	json_t		*perms;		/* permission questions: [0] asked */
	int		 dirfd;		/* the state directory: their answers */
	char		 role[16];
	int		 drawn;		/* status lines on the screen */
	json_t		*seen;		/* agent id -> last line reported */
	struct event_base *base;
	struct state_store *store;	/* the loop's: a signal's why */
	int		 code;		/* hooks.done's; -1 until then */
	struct notify	*notify;	/* config.notify's; NULL: none */
	struct children	*children;	/* made here for notify's sinks */
};

/* --- the terminal */

/* Erase the status lines so that other output starts on a clean line. */
static void
run_ui_clear(struct run_ui *ui)
{
	for (; ui->drawn > 0; ui->drawn--)
		fputs("\033[1A\033[2K", stderr);
}

/* NDJSON on stdout with --json. */
static void
run_ui_emit(struct run_ui *ui, const char *name, const json_t *fields)
{
	if (ui->json)
		cmd_emit_event(name, fields);
}

/* A string field for messages, "" if absent. */
static const char *
run_s(const json_t *o, const char *k)
{
	const char	*s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : "";
}

/* --- a CLI's permission request at the terminal */

static void	run_ui_wait(struct run_ui *);

/* The permission question first in line, asked on stderr. */
static void
run_ui_perm_show(struct run_ui *ui)
{
	const json_t	*q = json_array_get(ui->perms, 0);

	run_ui_clear(ui);
	fprintf(stderr, "\n[%s] %s -- allow? [%s] ", run_s(q, "role"),
	    run_s(q, "question"), strcmp(run_s(q, "recommended"), "deny") ==
	    0 ? "y/N" : "Y/n");
	ui->want = UI_PERM;
	run_ui_wait(ui);
}

/* Nothing else asked: the next permission question waiting, if any. */
static void
run_ui_perm_next(struct run_ui *ui)
{
	if (ui->want == UI_IDLE && json_array_size(ui->perms) > 0)
		run_ui_perm_show(ui);
}

/*
 * hooks.permission: a worker waits for leave to use a tool; asked now,
 * or after what is being asked (a copy: the loop's record changes).
 */
static void
run_ui_permission(void *arg, const json_t *q)
{
	struct run_ui	*ui = arg;

	json_array_append_new(ui->perms, json_deep_copy(q));
	run_ui_perm_next(ui);
}

/*
 * The head permission question's answer into the loop's answers file,
 * as `ccw-supervisor answer` writes it (via terminal; at the end of
 * input the recommended one, via policy).  y/yes/allow, n/no/deny;
 * Enter the recommended; other words deny, the tool told them.
 */
static void
run_ui_perm_answer(struct run_ui *ui, const char *p, const char *via)
{
	static const char *const yes[] = { "y", "yes", "allow", NULL };
	static const char *const no[] = { "n", "no", "deny", NULL };
	const json_t	*q = json_array_get(ui->perms, 0);
	const char	*ans = p;
	char		*err = NULL;
	size_t		 i;

	if (*p == '\0')
		ans = run_s(q, "recommended");
	for (i = 0; yes[i] != NULL; i++)
		if (strcasecmp(p, yes[i]) == 0)
			ans = yes[2];
	for (i = 0; no[i] != NULL; i++)
		if (strcasecmp(p, no[i]) == 0)
			ans = no[2];
	if (question_file_answer(ui->dirfd, ui->id, run_s(q, "id"), ans,
	    strcmp(via, "terminal") == 0 ? getenv("USER") : NULL, via,
	    &err) != 0)
		fprintf(stderr, "(not taken: %s)\n", err);
	free(err);
	json_array_remove(ui->perms, 0);
	ui->want = UI_IDLE;
	run_ui_perm_next(ui);
}

/*
 * question_answered (elsewhere: `answer`, the API) or question_expired
 * of a permission question still asked here: the prompt withdrawn.
 */
static void
run_ui_perm_gone(struct run_ui *ui, const char *name, const json_t *o)
{
	const char	*qid = run_s(o, "question_id");
	size_t		 i;

	if (strcmp(name, "question_answered") != 0 &&
	    strcmp(name, "question_expired") != 0)
		return;
	for (i = 0; i < json_array_size(ui->perms); i++)
		if (strcmp(run_s(json_array_get(ui->perms, i), "id"), qid) == 0)
			break;
	if (i == json_array_size(ui->perms))
		return;
	json_array_remove(ui->perms, i);
	if (i > 0 || ui->want != UI_PERM)
		return;
	run_ui_clear(ui);
	if (strcmp(name, "question_answered") == 0)
		fprintf(stderr, "\n(%s answered %s via %s elsewhere: no longer "
		    "asked here)\n", qid, run_s(o, "answer"), run_s(o, "via"));
	else
		fprintf(stderr, "\n(%s expired: no longer asked here)\n", qid);
	ui->want = UI_IDLE;
	run_ui_perm_next(ui);
}

/*
 * The engine's events: NDJSON with --json; a line each (run-lines.c) on
 * a terminal, above the status lines, or in a CI log.
 */
static void
run_ui_event(void *arg, const char *name, const json_t *o)
{
	struct run_ui	*ui = arg;

	notify_feed(ui->notify, ui->id, name, o);
	run_ui_perm_gone(ui, name, o);
	/* run's own tick reports progress (once a second, on change) */
	if (strcmp(name, "worker_progress") == 0)
		return;
	run_ui_emit(ui, name, o);
	if (ui->view == RUN_VIEW_QUIET)
		return;
	run_ui_clear(ui);
	run_line_print(stderr, name, o);
}

/*
 * Once a second: a status line per running worker (role, tool, elapsed,
 * its last output line) on a terminal, worker_progress events with --json.
 */
static void
run_ui_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct run_ui	*ui = arg;
	struct winsize	 ws;
	json_t		*live = loop_live(ui->l), *w;
	const char	*aid, *old;
	char		 text[512];
	size_t		 i;
	int		 width = 80;

	(void)fd;
	(void)ev;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
		width = ws.ws_col;
	if (ui->view == RUN_VIEW_LIVE)
		run_ui_clear(ui);
	json_array_foreach(live, i, w) {
		aid = run_s(w, "agent_id");
		/* The worker's PROGRESS text reads well for every tool (a
		 * stream tool's log is JSON); the log's last line until then. */
		if (json_string_value(json_object_get(w, "last")) != NULL)
			snprintf(text, sizeof text, "%s", run_s(w, "last"));
		else
			tap_last_line(run_s(w, "log_path"), text, sizeof text);
		old = json_string_value(json_object_get(ui->seen, aid));
		if (text[0] != '\0' && (old == NULL ||
		    strcmp(old, text) != 0)) {
			json_object_set_new(ui->seen, aid, json_string(text));
			json_object_set_new(w, "text", json_string(text));
			run_ui_emit(ui, "worker_progress", w);
		}
		if (ui->view != RUN_VIEW_LIVE)
			continue;
		fprintf(stderr, "  %-8s %-8s %4llds%s  %.*s\n",
		    run_s(w, "role"), run_s(w, "tool"),
		    (long long)json_integer_value(json_object_get(w,
		    "elapsed_ms")) / 1000,
		    json_is_true(json_object_get(w, "nudged")) ? " nudged" : "",
		    width > 40 ? width - 32 : 8, text);
		ui->drawn++;
	}
	json_decref(live);
}

/*
 * The menu's answer: a role's word, letter (b for debug) or number, as
 * the workflow's table has them; exit after the roles.
 */
static const char *
run_menu_parse(const struct workflow *wf, const char *s)
{
	static const char *const exits[] = { "exit", "e", "q", "quit", NULL };
	char	num[24];
	size_t	i;
	int	role;

	if ((role = workflow_menu_role(wf, s)) >= 0)
		return wf->roles[role].name;
	snprintf(num, sizeof num, "%zu", workflow_menu_size(wf) + 1);
	for (i = 0; exits[i] != NULL; i++)
		if (strcasecmp(s, exits[i]) == 0)
			return exits[0];
	return strcmp(s, num) == 0 ? exits[0] : NULL;
}

/*
 * The menu's prompt from the table: "[develop/.../exit]" (choices) or
 * "1) develop (d)  ...  5) exit (e)" (list).  The caller frees it.
 */
static char *
run_menu_text(const struct workflow *wf, int list)
{
	size_t	 i, n = 0, len = 64;
	char	*s, *p;

	for (i = 0; i < wf->nroles; i++)
		len += strlen(wf->roles[i].name) + 32 +
		    (wf->roles[i].aliases != NULL && wf->roles[i].aliases[0] !=
		    NULL ? strlen(wf->roles[i].aliases[0]) : 0);
	p = s = xcalloc(1, len);
	if (!list)
		*p++ = '[';
	for (i = 0; i < wf->nroles; i++) {
		if ((wf->roles[i].flags & WORKFLOW_MENU) == 0)
			continue;
		n++;
		if (!list)
			p += sprintf(p, "%s/", wf->roles[i].name);
		else if (wf->roles[i].aliases != NULL &&
		    wf->roles[i].aliases[0] != NULL)
			p += sprintf(p, "%zu) %s (%s)  ", n, wf->roles[i].name,
			    wf->roles[i].aliases[0]);
		else
			p += sprintf(p, "%zu) %s  ", n, wf->roles[i].name);
	}
	if (list)
		sprintf(p, "%zu) exit (e)", n + 1);
	else
		strcpy(p, "exit]");
	return s;
}

/* The question being asked now, on stderr. */
static void
run_ui_question(struct run_ui *ui)
{
	const json_t	*q = json_array_get(ui->qs,
			    json_array_size(ui->answers));
	const json_t	*rec = json_object_get(q, "recommended");
	char		*opts;

	opts = json_dumps(json_object_get(q, "options"), JSON_COMPACT);
	fprintf(stderr, "%s [%s]: %s %s (Enter: %s): ", run_s(q, "id"),
	    run_s(q, "question_id") != NULL ? run_s(q, "question_id") : "-",
	    run_s(q, "question"), opts != NULL ? opts : "[]",
	    json_is_string(rec) ? json_string_value(rec) : "first option");
	free(opts);
	fflush(stderr);
}

/* One line typed for the menu or a question. */
static void
run_ui_line(struct run_ui *ui, char *line)
{
	const json_t	*q, *opt;
	const char	*act;
	char		*p, *end, *words;
	long		 n;

	for (p = line; isspace((unsigned char)*p); p++)
		;
	for (end = p + strlen(p); end > p && isspace((unsigned char)end[-1]);
	    end--)
		;
	*end = '\0';
	if (ui->want == UI_MENU) {
		if ((act = run_menu_parse(ui->wf, p)) == NULL) {
			words = run_menu_text(ui->wf, 0);
			fprintf(stderr, "'%s' is not an action.\nNext action "
			    "%s: ", p, words);
			free(words);
			fflush(stderr);
			return;
		}
		ui->want = UI_IDLE;
		loop_choose(ui->l, act);
	} else if (ui->want == UI_ASK) {
		q = json_array_get(ui->qs, json_array_size(ui->answers));
		n = strtol(p, &end, 10);
		opt = json_array_get(json_object_get(q, "options"), n - 1);
		if (*p == '\0')
			opt = json_is_string(json_object_get(q,
			    "recommended")) ? json_object_get(q,
			    "recommended") : json_array_get(json_object_get(q,
			    "options"), 0);
		else if (*end != '\0' || !json_is_string(opt))
			opt = NULL;
		json_array_append_new(ui->answers, opt != NULL ?
		    json_copy((json_t *)opt) : json_string(p));
		if (json_array_size(ui->answers) < json_array_size(ui->qs)) {
			run_ui_question(ui);
			return;
		}
		ui->want = UI_IDLE;
		loop_answer_via(ui->l, ui->answers, getenv("USER"), "terminal");
	} else if (ui->want == UI_PERM)
		run_ui_perm_answer(ui, p, "terminal");
}

/* End of stdin: the menu exits, open questions take the recommendations. */
static void
run_ui_eof(struct run_ui *ui)
{
	json_t	*rec;
	char	*why = NULL;

	ui->in_eof = 1;
	if (ui->want == UI_MENU) {
		ui->want = UI_IDLE;
		fputs("(end of input)\n", stderr);
		loop_choose(ui->l, "exit");
	} else if (ui->want == UI_ASK) {
		ui->want = UI_IDLE;
		rec = clarify_recommended(ui->qs, &why);
		free(why);
		loop_answer_via(ui->l, rec, NULL, "policy");
		json_decref(rec);
	}
	while (ui->want == UI_PERM)
		run_ui_perm_answer(ui, "", "policy");
}

/* Lines waiting in the buffer go to whatever is being asked. */
static void
run_ui_drain(struct run_ui *ui)
{
	char	*line;

	while (ui->want != UI_IDLE && (line = evbuffer_readln(ui->in, NULL,
	    EVBUFFER_EOL_LF)) != NULL) {
		run_ui_line(ui, line);
		free(line);
	}
	if (ui->want != UI_IDLE && ui->in_eof)
		run_ui_eof(ui);
}

/* stdin is readable (EV_READ), or a prompt wants lines (EV_TIMEOUT). */
static void
run_ui_input(evutil_socket_t fd, short what, void *arg)
{
	struct run_ui	*ui = arg;
	int		 n;

	if (what & EV_READ) {
		n = evbuffer_read(ui->in, fd, 4096);
		if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EINTR))) {
			ui->in_eof = 1;
			event_del(ui->in_ev);
		}
	}
	run_ui_drain(ui);
}

/* Something was asked: take an answer typed ahead, or read one now. */
static void
run_ui_wait(struct run_ui *ui)
{
	char	*line = NULL;
	size_t	 cap = 0;

	fflush(stderr);
	if (ui->in_ev != NULL) {
		event_active(ui->in_ev, EV_TIMEOUT, 0);
		return;
	}
	/* stdin cannot be polled (a file): nothing else runs meanwhile */
	while (ui->want != UI_IDLE) {
		if (getline(&line, &cap, stdin) < 0) {
			run_ui_eof(ui);
			break;
		}
		run_ui_line(ui, line);
	}
	free(line);
}

/* The interactive menu, between actions. */
static void
run_ui_menu(void *arg, const json_t *info)
{
	struct run_ui	*ui = arg;
	char		*list, *words;

	run_ui_clear(ui);
	fprintf(stderr, "\nLoop %s: iteration %lld of %lld, validation %s, "
	    "last action %s\n", ui->id, (long long)json_integer_value(
	    json_object_get(info, "iteration")), (long long)
	    json_integer_value(json_object_get(info, "max_iterations")),
	    json_is_true(json_object_get(info, "passed")) ? "passed" :
	    "not passed", *run_s(info, "last_action") ?
	    run_s(info, "last_action") : "none");
	if (*run_s(info, "notice"))
		fprintf(stderr, "  ! %s\n", run_s(info, "notice"));
	list = run_menu_text(ui->wf, 1);
	words = run_menu_text(ui->wf, 0);
	fprintf(stderr, "  %s\nNext action %s: ", list, words);
	free(list);
	free(words);
	ui->want = UI_MENU;
	run_ui_wait(ui);
}

/* A worker's questions, asked one by one. */
static void
run_ui_ask(void *arg, const char *role, const json_t *qs)
{
	struct run_ui	*ui = arg;

	run_ui_clear(ui);
	snprintf(ui->role, sizeof ui->role, "%s", role);
	json_decref(ui->qs);
	json_decref(ui->answers);
	ui->qs = json_deep_copy(qs);
	ui->answers = json_array();
	fprintf(stderr, "\n[%s] the worker needs answers (a number picks an "
	    "option; Enter takes the recommended one):\n", role);
	if (json_array_size(ui->qs) == 0) {
		loop_answer(ui->l, NULL);
		return;
	}
	ui->want = UI_ASK;
	run_ui_question(ui);
	run_ui_wait(ui);
}

/*
 * SIGINT, SIGTERM, SIGHUP: close every worker and stop (exit 4), within
 * the tools' grace and STOPBOUND_MS whatever the disk does.  The loop is
 * left running for a later driver, so its file records why, as serve's,
 * mcp's and acp's signals do (a loop already ended keeps none).
 */
static void
run_signal(evutil_socket_t sig, short ev, void *arg)
{
	struct run_ui	*ui = arg;
	const char	*st;
	char		 why[64];

	(void)ev;
	cmd_signal_why(why, sizeof why, "run", (int)sig);
	st = json_string_value(json_object_get(state_store_get(ui->store),
	    "status"));
	if (st != NULL && strcmp(st, "running") == 0)
		loopdriver_record(ui->store, why);
	loop_stop(ui->l, why);
	(void)stopbound_arm(SUP_STOP_GRACE_MS + STOPBOUND_MS, EXIT_STOPPED,
	    "run");
}

/* --- the command */

/* The --help text of the run command. */
static void
run_usage(FILE *fp)
{
	fprintf(fp,
"usage: ccw-supervisor run [-m auto|parallel|interactive] [-n MAX_ITER]\n"
"           [-C ROOT] [--config F] [--tool T] [--model M] [--state-dir DIR]\n"
"           [--on-clarify recommended|fail] [--pause-policy finish|interrupt|freeze]\n"
"           [--timeout-ms N] [--nudge-ms N] [--grace-ms N] [--batch-ms N]\n"
"           [--batch-nudge-ms N] [--log-max BYTES] [--json] [--quiet]\n"
"           [--loop-id ID] [--launcher WORDS [--remote-worker PATH]]\n"
"           [--containment cgroup|sweep|auto]\n"
"           [--isolation worktree|none] [--from-worktree] [--land]\n"
"           [--attempts N] [--max-cost-usd X] [--max-tokens N]\n"
"           [--max-time MS] [TASK]\n"
"\n"
"Create a loop for TASK and drive it to its end (auto: init, develop,\n"
"debug, validate, complete; parallel: init, then develop+debug+validate\n"
"at once; interactive: a menu between actions).  With --loop-id and no\n"
"TASK, resume that loop from its saved action.  One run drives a loop at\n"
"a time (ID.run.lock); a parallel step failed in every role is retried\n"
"after its roles' retry policy's wait (config roles.ROLE.retry).  A\n"
"rate-limited worker holds its tool until the provider's reset (else a\n"
"backoff) and runs again: never a failure (config tools.NAME.max_workers\n"
"caps a tool's workers alive at once).  --log-max: each worker's log cap\n"
"(K, M, G; 0: none; default 64M, config log_max_bytes).  --containment:\n"
"a cgroup v2 each worker, or the sweep of its process groups; auto (the\n"
"default, config containment) takes a cgroup where one can be made.\n"
"In a git repository a parallel step's writers each work in a git\n"
"worktree of their own (config isolation; --isolation none: one shared\n"
"checkout), merged in role order into the branch ccw/ID, which is left\n"
"for you; --land fast-forwards your branch to it at the end when your\n"
"checkout is clean.  A checkout with uncommitted changes is refused at\n"
"the start unless --from-worktree (the loop starts from them).\n"
"Interactive mode asks a CLI's permission requests (config\n"
"roles.ROLE.ask_permissions) at the terminal, \"allow? [Y/n]\" (Enter: the\n"
"recommended answer), and waits for them even with no question_timeout_ms;\n"
"one answered elsewhere first (ccw-supervisor answer) is withdrawn.\n"
"--pause-policy: what status paused (a front end's) does: the step in\n"
"flight finishes (finish, the default) or is closed (interrupt), then\n"
"exit 3; freeze holds the loop, its workers frozen (their deadlines too)\n"
"until status running again, where it was.\n"
"--attempts N (1 to 8, config roles.develop.attempts): develop's task run\n"
"N times at once, each in a worktree of its own; the check runs in each\n"
"and one is picked (tests passed, then the smallest diff, then the\n"
"fastest) and merged onto ccw/ID/loop; all N are recorded in the state.\n"
"--max-cost-usd X, --max-tokens N (input plus output), --max-time MS (the\n"
"loop's running time): the loop's budget (state \"budget\"; with --loop-id\n"
"it replaces the saved one's kinds given; a loop another process drives\n"
"gets them with status running, and run exits 0).  Warnings at 50 and\n"
"80 %%; at 100 %% the running workers are frozen and the loop is paused\n"
"with the reason (pause_reason); status running with a raised budget\n"
"goes on.\n"
"stderr: live status lines on a terminal; elsewhere (a pipe, a file, no\n"
"TERM or TERM=dumb) one plain line per worker start, end, retry and hold,\n"
"with its reason; --quiet (or --json, events on stdout): only the first\n"
"and last lines.\n"
"Exit: 0 completed, 1 failed or another process drives the loop, 2 usage,\n"
"3 paused, 4 stopped, 5 timed out, 70 internal error.  A signal's stop\n"
"takes the tools' grace (1 s at most) and 2 s more whatever the disk does.\n");
}

/* run's budget options: no letter, past cmdutil.h's shared ones. */
#define RUN_OPT_BUDGET	0x1b0	/* + enum budget_kind */

/* A positive number of iterations or milliseconds. */
static int
run_number(const char *s, long long min, long long *out)
{
	char		*end;
	long long	 v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno != 0 || v < min)
		return -1;
	*out = v;
	return 0;
}

/* One of a few words for an option, its index; -1 (said) if none. */
static int
run_word(const char *opt, const char *arg, const char *const *words)
{
	int	i;

	for (i = 0; words[i] != NULL; i++)
		if (strcmp(arg, words[i]) == 0)
			return i;
	fprintf(stderr, "ccw-supervisor run: %s %s: use %s", opt, arg,
	    words[0]);
	for (i = 1; words[i] != NULL; i++)
		fprintf(stderr, "%s%s", words[i + 1] != NULL ? ", " : " or ",
		    words[i]);
	fputc('\n', stderr);
	return -1;
}

/*
 * One option of run's own, else the common ones (cmd_opts_set): 0 or
 * more when taken, -1 when refused (said on stderr).
 */
static int
run_option(struct run_args *ra, int ch, const char *arg)
{
	static const char *const clarify[] = { "recommended", "fail", NULL };
	static const char *const policy[] = { "finish", "interrupt", "freeze",
	    NULL };
	static const char *const iso[] = { "worktree", "none", NULL };
	long long	 v;
	int		 w = 0;

	switch (ch) {
	case 'm':
		ra->mode_arg = arg;
		if ((w = run_word("-m", arg, loop_modes)) >= 0)
			ra->mode = (enum loop_mode)w;
		break;
	case 'q':
		w = run_word("--on-clarify", arg, clarify);
		ra->clarify_fail = w == 1;
		break;
	case 'p':
		w = run_word("--pause-policy", arg, policy);
		ra->interrupt = w == 1;
		ra->freeze = w == 2;
		break;
	case 'n':
	case 'B':
	case 'b':
		if ((w = run_number(arg, 1, &v)) != 0) {
			fprintf(stderr, "ccw-supervisor run: '%s' is not a "
			    "positive number\n", arg);
			break;
		}
		if (ch == 'n') {
			ra->max_iter = v;
			ra->have_max = 1;
		} else
			*(ch == 'B' ? &ra->batch_ms : &ra->batch_nudge_ms) =
			    (uint64_t)v;
		break;
	case 'M':
		ra->o.model = arg;
		break;
	case 'I':
		if ((w = run_word("--isolation", arg, iso)) >= 0)
			ra->isolation = iso[w];
		break;
	case 'W':
		ra->from_worktree = 1;
		break;
	case 'L':
		ra->land = 1;
		break;
	case 'a':
		if ((w = run_number(arg, 1, &v)) != 0 ||
		    v > CONFIG_MAX_ATTEMPTS) {
			fprintf(stderr, "ccw-supervisor run: --attempts %s: "
			    "expected a number from 1 to %d\n", arg,
			    CONFIG_MAX_ATTEMPTS);
			w = -1;
			break;
		}
		ra->attempts = (unsigned)v;
		break;
	case 'j':
		ra->json = 1;
		break;
	case RUN_OPT_BUDGET + BUDGET_COST:
	case RUN_OPT_BUDGET + BUDGET_TOKENS:
	case RUN_OPT_BUDGET + BUDGET_WALL:
		w = cmd_num("run", budget_flag(ch - RUN_OPT_BUDGET), arg,
		    1e15, &ra->budget[ch - RUN_OPT_BUDGET]);
		break;
	case 'Q':
		ra->quiet = 1;
		break;
	default:
		w = cmd_opts_set(&ra->o, ch, arg);
	}
	return w;
}

/* Parse the command line: 0, 1 for --help (printed), -1 (said) on error. */
static int
run_parse(int argc, char **argv, struct run_args *ra)
{
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "max-iterations", required_argument, NULL, 'n' },
		{ "tool", required_argument, NULL, 't' },
		{ "model", required_argument, NULL, 'M' },
		{ "config", required_argument, NULL, 'f' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "loop-id", required_argument, NULL, 'l' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "nudge-ms", required_argument, NULL, 'N' },
		{ "grace-ms", required_argument, NULL, 'G' },
		{ "batch-ms", required_argument, NULL, 'B' },
		{ "batch-nudge-ms", required_argument, NULL, 'b' },
		CMD_LOG_MAX_LONGOPT,
		CMD_LAUNCH_LONGOPTS,
		{ "on-clarify", required_argument, NULL, 'q' },
		{ "pause-policy", required_argument, NULL, 'p' },
		{ "isolation", required_argument, NULL, 'I' },
		{ "from-worktree", no_argument, NULL, 'W' },
		{ "land", no_argument, NULL, 'L' },
		{ "attempts", required_argument, NULL, 'a' },
		{ "max-cost-usd", required_argument, NULL,
		    RUN_OPT_BUDGET + BUDGET_COST },
		{ "max-tokens", required_argument, NULL,
		    RUN_OPT_BUDGET + BUDGET_TOKENS },
		{ "max-time", required_argument, NULL,
		    RUN_OPT_BUDGET + BUDGET_WALL },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'Q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int		 ch, w = 0;

	optind = 1;
	while (w >= 0 && (ch = getopt_long(argc, argv, "m:n:C:h", longopts,
	    NULL)) != -1) {
		if (ch == 'h') {
			run_usage(stdout);
			return 1;
		}
		w = run_option(ra, ch, optarg);
	}
	if (w < 0)
		return -1;
	ra->task = argc - optind == 1 ? argv[optind] : NULL;
	if (argc - optind > 1 || (ra->task != NULL && *ra->task == '\0') ||
	    (ra->task == NULL && ra->o.loop_id == NULL)) {
		fprintf(stderr, "ccw-supervisor run: %s\n", argc - optind > 1 ?
		    "one TASK only (quote it)" : ra->task != NULL ?
		    "the TASK is empty" : "need a TASK, or --loop-id to resume "
		    "a loop");
		return -1;
	}
	return 0;
}

/* The last words: on stderr, and the status line gone. */
static void
run_report(struct run_ui *ui, struct state_store *store, int code)
{
	const json_t	*st = state_store_get(store);
	const char	*wt = json_string_value(json_object_get(json_object_get(
			    json_object_get(st, "skill_state"), "worktree"),
			    "summary"));

	run_ui_clear(ui);
	if (wt != NULL)		/* where the merged work is: landed, or left */
		fprintf(stderr, "ccw-supervisor run: loop %s: %s\n", ui->id,
		    wt);
	fprintf(stderr, "ccw-supervisor run: loop %s %s%s%s (exit %d)\n",
	    ui->id, code == EXIT_OK ? "completed" : code == EXIT_PAUSED ?
	    "paused" : code == EXIT_STOPPED ? "stopped" : code ==
	    EXIT_TIMEOUT ? "failed: a worker timed out" : "failed",
	    *run_s(st, "failure_reason") && code != EXIT_OK ? ": " : "",
	    code != EXIT_OK ? run_s(st, "failure_reason") : "", code);
}

/* The loop ended: its status, and the run's event loop stops. */
static void
run_ui_done(void *arg, int code)
{
	struct run_ui	*ui = arg;

	ui->code = code;
	event_base_loopbreak(ui->base);
}

/* The loop's last notifications ended: the run goes on to its exit. */
static void
run_ui_notified(void *arg)
{
	event_base_loopbreak(((struct run_ui *)arg)->base);
}

/*
 * The config's notify (issue 29): its sinks' children on a reaper made
 * here, which the loop shares (a process has one).
 */
static void
run_notify_new(struct run_ui *ui, struct loop_cfg *cfg)
{
	char	*err = NULL;

	if (cfg->config->notify != NULL && (ui->children = cfg->children =
	    children_new(ui->base, &err)) != NULL)
		ui->notify = notify_solo(ui->base, ui->children,
		    cfg->config->notify, cfg->state_dir, &err);
	if (err != NULL)
		fprintf(stderr, "ccw-supervisor run: notify: %s\n", err);
	free(err);
}

/* The loop ended: its notifications delivered (or at their deadlines). */
static void
run_notify_wait(struct run_ui *ui)
{
	if (ui->notify != NULL && notify_wait(ui->notify, ui->id,
	    run_ui_notified, ui))
		event_base_dispatch(ui->base);
}

/* The notifier, then the reaper (it kills and reaps what is left). */
static void
run_notify_free(struct run_ui *ui, struct loop_cfg *cfg)
{
	notify_free(ui->notify);
	children_free(ui->children);
	cfg->children = NULL;
}

/* Run the engine with the terminal side around it. */
static int
run_drive(struct run_args *ra, struct event_base *base,
    struct state_store *store, struct loop_cfg *cfg)
{
	struct run_ui	 ui;
	struct timeval	 sec = { 1, 0 };
	struct event	*sigs[3];
	char		*err = NULL;
	int		 i, code;
	static const int signos[3] = { SIGINT, SIGTERM, SIGHUP };

	memset(&ui, 0, sizeof ui);
	ui.id = cfg->id;
	ui.wf = cfg->workflow;
	ui.json = ra->json;
	ui.view = run_view_pick(ra->quiet, ra->json);
	ui.seen = json_object();
	ui.in = evbuffer_new();
	ui.perms = json_array();
	ui.dirfd = cfg->dirfd;
	cfg->hooks.event = run_ui_event;
	cfg->hooks.menu = run_ui_menu;
	cfg->hooks.ask = run_ui_ask;
	cfg->hooks.permission = run_ui_permission;
	cfg->hooks.done = run_ui_done;
	cfg->hooks.arg = &ui;
	/* its own gate: a rate limit holds the tool, the action runs again */
	cfg->gate = gate_new(base, run_ui_event, &ui);
	gate_set_caps(cfg->gate, cfg->config);
	ui.base = base;
	ui.store = store;
	ui.code = -1;
	run_notify_new(&ui, cfg);
	if ((ui.l = loop_new(base, store, cfg, &err)) == NULL) {
		fprintf(stderr, "ccw-supervisor run: %s\n", err);
		free(err);
		code = EXIT_INTERNAL;
		goto out;
	}
	for (i = 0; i < 3; i++) {
		sigs[i] = evsignal_new(base, signos[i], run_signal, &ui);
		evsignal_add(sigs[i], NULL);
	}
	/* main.c deferred these signals: one sent meanwhile stops us now. */
	sigfd_release();
	if (ui.view == RUN_VIEW_LIVE || ui.json) {
		ui.tick = event_new(base, -1, EV_PERSIST, run_ui_tick, &ui);
		event_add(ui.tick, &sec);
	}
	if (cfg->mode == LOOP_INTERACTIVE) {
		ui.in_ev = event_new(base, STDIN_FILENO, EV_READ | EV_PERSIST,
		    run_ui_input, &ui);
		if (ui.in_ev != NULL && event_add(ui.in_ev, NULL) != 0) {
			event_free(ui.in_ev);
			ui.in_ev = NULL;
		}
	}
	fprintf(stderr, "ccw-supervisor run: loop %s (%s mode), state %s/%s"
	    ".json\n", cfg->id, loop_mode_name(cfg->mode), cfg->state_dir,
	    cfg->id);
	loop_start(ui.l);
	event_base_dispatch(base);
	/* the base ran dry before the loop ended: a bug, never a hang */
	code = ui.code >= 0 ? ui.code : EXIT_INTERNAL;
	run_report(&ui, store, code);
	run_notify_wait(&ui);
	for (i = 0; i < 3; i++)
		event_free(sigs[i]);
	if (ui.tick != NULL)
		event_free(ui.tick);
	if (ui.in_ev != NULL)
		event_free(ui.in_ev);
	loop_free(ui.l);
out:
	gate_free(cfg->gate);	/* after the loop: its runs leave it */
	cfg->gate = NULL;
	run_notify_free(&ui, cfg);
	evbuffer_free(ui.in);
	json_decref(ui.seen);
	json_decref(ui.qs);
	json_decref(ui.answers);
	json_decref(ui.perms);
	return code;
}

/* run: options, the loop's state file created or resumed, the run, its exit. */
int
cmd_run(int argc, char **argv)
{
	struct run_args		 ra;
	struct loop_cfg		 cfg;
	struct loop_opened	 lo;
	struct event_base	*base = NULL;
	char			*id = NULL, *err = NULL;
	int			 dirfd = -1, code;

	memset(&ra, 0, sizeof ra);
	memset(&lo, 0, sizeof lo);
	cmd_opts_init(&ra.o);
	ra.batch_ms = RUN_BATCH_MS;
	ra.batch_nudge_ms = RUN_BATCH_NUDGE;
	if ((code = run_parse(argc, argv, &ra)) != 0) {
		if (code < 0)
			run_usage(stderr);
		cmd_opts_free(&ra.o);
		return code < 0 ? EXIT_USAGE : EXIT_OK;
	}
	code = EXIT_USAGE;
	if (cmd_opts_load(&ra.o, &err) != 0 ||
	    run_check_roles(&ra, &err) != 0 ||
	    (dirfd = state_dir_open(ra.o.state_dir, 1, &err)) < 0) {
		fprintf(stderr, "ccw-supervisor run: %s\n", err);
		free(err);
		goto out;
	}
	id = ra.o.loop_id != NULL ? xstrdup(ra.o.loop_id) : state_id_generate();
	/* the precise clock: a retry's wait is never cut by a tick */
	if ((base = chan_base_new()) == NULL)
		fatalx("cannot create the event loop");
	if ((code = run_open(&ra, base, dirfd, id, &lo)) >= 0)
		goto out;
	run_loop_cfg(&ra, &lo, dirfd, &cfg);
	code = run_drive(&ra, base, lo.store, &cfg);
out:
	loopopen_close(&lo);
	if (base != NULL)
		event_base_free(base);
	if (dirfd >= 0)
		close(dirfd);
	free(id);
	cmd_opts_free(&ra.o);
	return code;
}
