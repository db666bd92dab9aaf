/*
 * test-rounds.c: two ccw-loop loops hosted on one event base in one
 * process whose workers exit at the same instant, round after round
 * (issue 10): no completion is lost, none is delivered twice or to the
 * wrong loop, and both loops then complete with valid state files.
 *
 * A round is one validate worker per loop: the tool (this program, as
 * the bash adapter's binary: rounds_tool) reads its loop and iteration
 * from the prompt, then blocks on a shared flock of that round's gate
 * file, which the test holds.  Once /proc/locks shows both tools
 * waiting, the test releases the gate: the kernel wakes both at once,
 * they print their result and exit together, and so do their workers.
 * The tool answers loop_back_to validate until the last round, so
 * ccw-loop itself (unchanged) runs the next round.  validate, not
 * develop: develop's task list and timeline grow with every iteration
 * (its develop.md by the whole table each time), validate's do not.
 *
 * A round forks and execs two ccw-workers and two tools, and a fork and
 * exec costs 10-14 ms of CPU on this paravirtualized VM: about 80 ms of
 * CPU a round (28 in this process, most of it fork and the copy-on-write
 * faults after it; 55 in the workers and tools), printed at the end.
 * bash and flock as the tool cost three execs where this is one.  Since
 * the worker is spawned with vfork (spawn.c) a round costs 40-50 ms at a
 * load of 2, and the 1000 rounds of make check about 50 s; this process
 * grows by about 30 KiB a round (agent.c keeps every agent of a loop
 * until the loop ends, so that `list` can name them).
 * Under valgrind ROUNDS_WRAPPED, under the sanitizers ROUNDS_SANITIZED.
 */
#include <config.h>

#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "ccw-loop.h"
#include "chan.h"
#include "clock.h"
#include "hostfix.h"
#include "log.h"
#include "state.h"
#include "sup.h"
#include "tap.h"
#include "xmalloc.h"

#define ROUNDS			1000
#define ROUNDS_WRAPPED		50	/* valgrind: ~450 ms a round at load 5 */
#define ROUNDS_SANITIZED	50
#define POLL_MS			1
#define NDIAG			10	/* wrong completions told in full */

/*
 * Every role's tool is this program, run by the worker as its bash
 * (`PATH -c N`, N the rounds): validate (iteration 3 on: init is none,
 * develop and debug are 1 and 2) waits at its round's gate, prints a
 * passing TAP and asks for validate again until the last round; the
 * others just succeed.  One small exec where bash and flock were three.
 */
static int
rounds_tool(const char *nstr)
{
	char		 line[4096], role[32], id[32];
	const char	*p, *back = "null";
	int		 n = atoi(nstr), it = -1, fd, r;

	role[0] = id[0] = '\0';
	while (fgets(line, sizeof line, stdin) != NULL)
		if (sscanf(line, "You are the %31s worker of loop %31s (", role,
		    id) == 2 && (p = strstr(line, "iteration ")) != NULL &&
		    sscanf(p, "iteration %d of", &it) == 1)
			break;
	if (it < 0)
		return 2;
	if (strcmp(role, "validate") == 0) {
		r = it - 2;
		snprintf(line, sizeof line, "gate.%d", r);
		/* the test holds it: both rounds' tools wake on its close */
		if ((fd = open(line, O_RDONLY | O_CLOEXEC)) < 0 ||
		    flock(fd, LOCK_SH) != 0)
			return 3;
		printf("1..1\nok 1 - round %d\n", r);
		if (r < n)
			back = "validate";
		it = r;
	}
	printf("WORKER_RESULT:\n- action: %s\n- status: success\n"
	    "- summary: round %d of %s\n- files_changed: []\n"
	    "- loop_back_to: %s\nDETAILED_OUTPUT:\nok\n", role, it, id, back);
	return fflush(stdout) == 0 ? 0 : 4;
}

struct rounds;

/* One loop; the hostfix part first (the event callback gets it). */
struct side {
	struct hostfix_loop	 x;
	struct rounds		*R;
	int			 got;		/* the last round delivered */
	int			 others;	/* results of the other roles */
	uint64_t		 t;		/* when it was delivered */
};

/* The rounds under way. */
struct rounds {
	struct hostfix	 h;
	struct side	 s[2];
	int		 n;		/* rounds to run */
	int		 r;		/* the round under way; n + 1: all done */
	int		 released;	/* its gate is open */
	int		 gate;		/* the held lock on gate.r, or -1 */
	int		 next;		/* the held lock on gate.r+1, or -1 */
	int		 lost;		/* the round whose deadline passed */
	int		 wrong;		/* completions out of turn, or twice */
	uint64_t	 round_ms, skew_max, skew_sum;
	struct event	*poll, *deadline;
};

/* Create gate.r and hold its lock: round r's tools will wait on it. */
static int
gate_hold(struct rounds *R, int r)
{
	char	*path;
	int	 fd;

	xasprintf(&path, "%s/gate.%d", R->h.dir, r);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	free(path);
	if (fd < 0 || flock(fd, LOCK_EX) != 0)
		fatal("gate %d", r);
	return fd;
}

/*
 * Remove gate.r once both its tools are done: the workers observe the
 * loops' directory (a walk of mtimes), which must not grow by a file a
 * round.
 */
static void
gate_drop(struct rounds *R, int r)
{
	char	*path;

	xasprintf(&path, "%s/gate.%d", R->h.dir, r);
	(void)unlink(path);
	free(path);
}

/* How many processes wait for a lock on fd's file (/proc/locks "->"). */
static int
gate_waiters(int fd)
{
	struct stat	 sb;
	FILE		*fp;
	char		 line[256], key[64];
	int		 n = 0;

	if (fstat(fd, &sb) != 0 || (fp = fopen("/proc/locks", "r")) == NULL)
		return -1;
	snprintf(key, sizeof key, " %02x:%02x:%lu ", major(sb.st_dev),
	    minor(sb.st_dev), (unsigned long)sb.st_ino);
	while (fgets(line, sizeof line, fp) != NULL)
		if (strstr(line, "->") != NULL && strstr(line, key) != NULL)
			n++;
	fclose(fp);
	return n;
}

/* Both tools of the round wait at the gate: open it for both at once. */
static void
rounds_poll(evutil_socket_t fd, short ev, void *arg)
{
	struct rounds	*R = arg;

	(void)fd;
	(void)ev;
	if (R->r > R->n || R->released || gate_waiters(R->gate) < 2)
		return;
	R->next = R->r < R->n ? gate_hold(R, R->r + 1) : -1;
	close(R->gate);		/* both shared waiters wake together */
	R->gate = -1;
	R->released = 1;
}

/* A round took far too long: a completion was lost. */
static void
rounds_deadline(evutil_socket_t fd, short ev, void *arg)
{
	struct rounds	*R = arg;

	(void)fd;
	(void)ev;
	R->lost = R->r;
	tap_diag("round %d: no completion after %llu ms (gate %s; %s at %d, "
	    "%s at %d)", R->r, (unsigned long long)R->round_ms,
	    R->released ? "open" : "held", R->s[0].x.id, R->s[0].got,
	    R->s[1].x.id, R->s[1].got);
	event_base_loopbreak(R->h.base);
}

/* One validate completion: of the round under way, once per loop. */
static void
rounds_done(struct side *s, const json_t *f)
{
	struct rounds	*R = s->R;
	const char	*sum = json_string_value(json_object_get(f, "summary"));
	char		 id[32];
	int		 k = -1;
	uint64_t	 skew;

	if (sum == NULL || sscanf(sum, "round %d of %31s", &k, id) != 2 ||
	    strcmp(id, s->x.id) != 0 || k != R->r || !R->released ||
	    s->got == k) {
		if (R->wrong++ < NDIAG)
			tap_diag("%s: completion '%s' in round %d (gate %s, "
			    "last %d)", s->x.id, sum != NULL ? sum : "?",
			    R->r, R->released ? "open" : "held", s->got);
		return;
	}
	s->got = k;
	s->t = clock_mono_ms();
	if (R->s[0].got != k || R->s[1].got != k)
		return;
	skew = R->s[0].t > R->s[1].t ? R->s[0].t - R->s[1].t :
	    R->s[1].t - R->s[0].t;
	R->skew_sum += skew;
	if (skew > R->skew_max)
		R->skew_max = skew;
	gate_drop(R, R->r);
	R->r++;
	R->released = 0;
	R->gate = R->next;
	R->next = -1;
	if (R->r > R->n)
		evtimer_del(R->deadline);
	else
		chan_arm_ms(R->deadline, R->round_ms);
}

/* Each loop's events: the validate results are the rounds' completions. */
static void
rounds_event(struct hostfix_loop *x, const char *name, const json_t *f)
{
	struct side	*s = (struct side *)x;
	const char	*role;

	if (strcmp(name, "worker_result") != 0)
		return;
	role = json_string_value(json_object_get(f, "role"));
	if (role != NULL && strcmp(role, "validate") == 0)
		rounds_done(s, f);
	else
		s->others++;
}

/* The loop's file: completed, valid, every round an iteration. */
static int
rounds_state(struct rounds *R, const char *id)
{
	json_t		*st = NULL;
	char		*err = NULL;
	const char	*status;
	long long	 it;
	int		 good;

	if (state_load(R->h.dirfd, id, &st, &err) != STATE_OK) {
		tap_diag("%s: %s", id, err);
		free(err);
		return 0;
	}
	status = json_string_value(json_object_get(st, "status"));
	it = json_integer_value(json_object_get(st, "current_iteration"));
	/* develop, debug, then validate n times */
	good = status != NULL && strcmp(status, "completed") == 0 &&
	    it == R->n + 2 && state_validate(&ccw_loop_state, st, NULL) == 0;
	if (!good)
		tap_diag("%s: status %s, iteration %lld of %d + 2", id,
		    status != NULL ? status : "?", it, R->n);
	json_decref(st);
	return good;
}

/* The number of rounds: argv[1], else fewer under a slow wrapper. */
static int
rounds_count(int argc, char **argv)
{
	const char	*w = getenv("TESTS_WRAPPER"), *s;

	if (argc > 1 && atoi(argv[1]) > 0)
		return atoi(argv[1]);
	if (w != NULL && *w != '\0')
		return ROUNDS_WRAPPED;
	if ((s = getenv("CCW_SANITIZERS")) != NULL && strcmp(s, "yes") == 0)
		return ROUNDS_SANITIZED;
	return ROUNDS;
}

/* CPU time, user and system, of this process or its reaped children. */
static uint64_t
rounds_cpu_ms(int who)
{
	struct rusage	ru;

	if (getrusage(who, &ru) != 0)
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
	    (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
}

/* The bash tool of the host's configuration is this program (rounds_tool). */
static int
rounds_self(struct hostfix *h)
{
	char		 self[PATH_MAX];
	ssize_t		 len;
	size_t		 i;

	if ((len = readlink("/proc/self/exe", self, sizeof self - 1)) <= 0) {
		tap_ok(0, "readlink /proc/self/exe");
		return -1;
	}
	self[len] = '\0';
	for (i = 0; i < h->cfg.ntools; i++)
		if (strcmp(h->cfg.tools[i].name, "bash") == 0) {
			free(h->cfg.tools[i].path);
			h->cfg.tools[i].path = xstrdup(self);
			return 0;
		}
	tap_ok(0, "the configuration has a bash tool");
	return -1;
}

int
main(int argc, char **argv)
{
	struct rounds	 R;
	struct rusage	 ru;
	char		*tool;
	uint64_t	 t0, el;
	int		 i, done;

	if (argc == 3 && strcmp(argv[1], "-c") == 0)
		return rounds_tool(argv[2]);
	memset(&R, 0, sizeof R);
	R.n = rounds_count(argc, argv);
	xasprintf(&tool, "%d", R.n);
	if (hostfix_init_cmd(&R.h, "rounds", 0, 0, tool) != 0) {
		free(tool);
		return 0;
	}
	free(tool);
	if (rounds_self(&R.h) != 0) {
		hostfix_free(&R.h);
		return tap_done();
	}
	R.h.max_iter = R.n + 5;
	R.h.n = 2;
	R.r = 1;
	R.next = -1;
	R.round_ms = 10000 + 2 * hostfix_slack();
	R.gate = gate_hold(&R, 1);
	R.poll = event_new(R.h.base, -1, EV_PERSIST, rounds_poll, &R);
	R.deadline = evtimer_new(R.h.base, rounds_deadline, &R);
	chan_arm_ms(R.poll, POLL_MS);
	chan_arm_ms(R.deadline, R.round_ms);
	t0 = clock_mono_ms();
	for (i = 0; i < 2; i++) {
		R.s[i].R = &R;
		if (hostfix_open(&R.h, &R.s[i].x, i == 0 ? "rounds-a" :
		    "rounds-b", LOOP_AUTO, rounds_event) != 0)
			break;
	}
	tap_ok(i == 2, "two loops opened on one host");
	if (i == 2)
		event_base_dispatch(R.h.base);
	el = clock_mono_ms() - t0;

	tap_ok(R.lost == 0 && R.r == R.n + 1, "%d rounds of two workers "
	    "exiting at once: every completion delivered (reached round %d)",
	    R.n, R.r > R.n ? R.n : R.r);
	tap_ok(R.wrong == 0, "no completion out of turn, twice or to the "
	    "other loop (%d)", R.wrong);
	tap_ok(R.h.ndone == 2 && R.s[0].x.code == EXIT_OK &&
	    R.s[1].x.code == EXIT_OK, "both loops reported their end once, "
	    "exit 0 (%d, %d)", R.s[0].x.code, R.s[1].x.code);
	tap_ok(R.s[0].others == 4 && R.s[1].others == 4, "init, develop, "
	    "debug and complete ran once in each (%d, %d)", R.s[0].others,
	    R.s[1].others);
	tap_ok(R.lost == 0 && rounds_state(&R, "rounds-a") &&
	    rounds_state(&R, "rounds-b"), "both state files completed and "
	    "valid after %d iterations", R.n + 2);
	done = R.r - 1;
	getrusage(RUSAGE_SELF, &ru);
	tap_diag("CPU: %llu ms in this process, %llu ms in the workers and "
	    "tools; this process's peak RSS %ld KiB",
	    (unsigned long long)rounds_cpu_ms(RUSAGE_SELF),
	    (unsigned long long)rounds_cpu_ms(RUSAGE_CHILDREN), ru.ru_maxrss);
	tap_diag("%d rounds in %llu ms (%.1f ms a round); completions of a "
	    "round %llu ms apart at most, %.2f ms on average", done,
	    (unsigned long long)el, (double)el / (done > 0 ? done : 1),
	    (unsigned long long)R.skew_max,
	    (double)R.skew_sum / (done > 0 ? done : 1));

	event_free(R.poll);
	event_free(R.deadline);
	if (R.gate >= 0)
		close(R.gate);
	if (R.next >= 0)
		close(R.next);
	hostfix_free(&R.h);
	return tap_done();
}
