/*
 * fake-agent.c: a scriptable stand-in for an AI coding agent, run by the
 * regression tests as the tool of a bash agent.  Owns the little command
 * language (print, result, hang, flood, crash ...) that lets a test make
 * a tool misbehave in exactly one way, on cue.
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EX_USAGE_FAKE	64
#define MAX_WORDS	256
#define MAX_DEPTH	8
#define FLOOD_LINE	64

static const char *marker = "none";
static const char *self_path;

static int	run_list(int, char **, int);

/* Every command a script may name; an optional argument never is one. */
static const char *const commands[] = {
	"print", "stderr", "result", "sleep", "hang", "wait-file",
	"read-line", "on-input-result", "echo-stdin", "crash", "exit",
	"flood", "fork-grandchild", "ignore-term", "bad-block", "clarify",
	"replay", "script", NULL
};

/* A usage error must be told apart from any exit status a test asks for. */
static void __attribute__((noreturn, format(printf, 1, 0)))
die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "fake-agent: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(EX_USAGE_FAKE);
}

/* Optional arguments are taken only when they are not the next command. */
static int
is_command(const char *word)
{
	size_t i;

	for (i = 0; commands[i] != NULL; i++)
		if (strcmp(word, commands[i]) == 0)
			return 1;
	return 0;
}

/* Tests read the output as it comes, so nothing may sit in a buffer. */
static void
flush_all(void)
{
	fflush(stdout);
	fflush(stderr);
}

/* Sleeps must survive signals the test sends only to wake other parts. */
static void
sleep_ms(long ms)
{
	struct timespec ts, rem;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &rem) == -1 && errno == EINTR)
		ts = rem;
}

/* Numbers come from the command line and must be whole and in range. */
static long
parse_num(const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 0 || v > max)
		die_usage("bad number '%s'", s);
	return v;
}

/* The canonical block the worker's parser is written against. */
static void
print_result(const char *status, const char *summary, const char *files)
{
	printf("WORKER_RESULT:\n"
	    "- action: develop\n"
	    "- status: %s\n"
	    "- summary: %s\n"
	    "- files_changed: %s\n"
	    "- next_suggestion: validate\n"
	    "- loop_back_to: null\n"
	    "DETAILED_OUTPUT:\n"
	    "fake output\n", status, summary, files);
}

/* A parser must survive a block that is wrong in every line. */
static void
print_bad_block(void)
{
	printf("WORKER_RESULT:\n"
	    "- action develop\n"
	    "- status: \x01?!garbage{{\n"
	    "summary without a dash\n"
	    "- : \n"
	    "- files_changed: [\"a.c\", \"b.c\n"
	    "- next_suggestion\n"
	    "DETAILED_OUTPUT\n");
}

/* The clarification block that must turn into needs_input. */
static void
print_clarify(void)
{
	printf("CLARIFICATION_NEEDED:\n"
	    "Q1: Which database? | Options: [sqlite, postgres] | "
	    "Recommended: [sqlite]\n");
}

/* One stdin line without its newline; 0 at end of input. */
static int
read_line(char *buf, size_t len)
{
	size_t n;

	if (fgets(buf, (int)len, stdin) == NULL)
		return 0;
	n = strlen(buf);
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (n > 0 && buf[n - 1] == '\r')
		buf[--n] = '\0';
	return 1;
}

/* The nudge is the only input that makes a stuck agent converge. */
static void
on_input_result(const char *status)
{
	char buf[8192];

	while (read_line(buf, sizeof(buf))) {
		printf("input: %s\n", buf);
		fflush(stdout);
		if (strstr(buf, "TIMEOUT") != NULL) {
			print_result(status, "converged after nudge", "[]");
			return;
		}
	}
	fprintf(stderr, "fake-agent: stdin closed before TIMEOUT\n");
	flush_all();
	exit(66);
}

/* Large writes with write(2): the reader, not this program, must be slow. */
static void
flood(long mib)
{
	static char buf[1024 * 1024];
	unsigned long line = 0;
	size_t off, fill;
	ssize_t n;
	long chunk;

	flush_all();
	for (chunk = 0; chunk < mib; chunk++) {
		for (fill = 0; fill < sizeof(buf); fill += FLOOD_LINE) {
			line++;
			snprintf(buf + fill, FLOOD_LINE + 1, "flood %010lu %-*s",
			    line, FLOOD_LINE - 18, "lorem ipsum dolor sit amet");
			buf[fill + FLOOD_LINE - 1] = '\n';
		}
		for (off = 0; off < sizeof(buf); off += (size_t)n) {
			n = write(STDOUT_FILENO, buf + off, sizeof(buf) - off);
			if (n == -1 && errno == EINTR) {
				n = 0;
				continue;
			}
			if (n <= 0) {
				perror("fake-agent: flood");
				exit(74);
			}
		}
	}
}

/* A grandchild in its own session is what leaks past a naive killpg. */
static void
fork_grandchild(void)
{
	pid_t pid;

	flush_all();
	pid = fork();
	if (pid == -1) {
		perror("fake-agent: fork");
		exit(71);
	}
	if (pid == 0) {
		setsid();
		execl(self_path, self_path, "--marker", marker, "hang",
		    (char *)NULL);
		perror("fake-agent: exec");
		_exit(71);
	}
	printf("grandchild: %ld\n", (long)pid);
}

/* Print a file as if the agent had written it (recorded transcripts). */
static void
replay(const char *path)
{
	char buf[65536];
	FILE *fp;
	size_t n;

	if ((fp = fopen(path, "r")) == NULL)
		die_usage("cannot open '%s'", path);
	while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
		fwrite(buf, 1, n, stdout);
	fclose(fp);
}

/* Split a script line on spaces, except that print keeps the rest. */
static int
split_line(char *line, char **words)
{
	int n = 0;
	char *p = line;

	while (n < MAX_WORDS - 1) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		words[n++] = p;
		if (n == 2 && (strcmp(words[0], "print") == 0 ||
		    strcmp(words[0], "stderr") == 0))
			break;
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
		if (*p != '\0')
			*p++ = '\0';
	}
	words[n] = NULL;
	return n;
}

/* Long scenarios read better as a file than as one long command line. */
static void
script(const char *path, int depth)
{
	char line[8192], *words[MAX_WORDS];
	FILE *fp;
	size_t len;
	int n;

	if (depth >= MAX_DEPTH)
		die_usage("scripts nested too deep at '%s'", path);
	if ((fp = fopen(path, "r")) == NULL)
		die_usage("cannot open '%s'", path);
	while (fgets(line, sizeof(line), fp) != NULL) {
		len = strlen(line);
		while (len > 0 && (line[len - 1] == '\n' ||
		    line[len - 1] == '\r'))
			line[--len] = '\0';
		if (line[0] == '#')
			continue;
		n = split_line(line, words);
		if (n > 0)
			run_list(n, words, depth + 1);
	}
	fclose(fp);
}

/* The argument a command cannot do without. */
static const char *
need(int argc, char **argv, int i)
{
	if (i >= argc)
		die_usage("'%s' needs an argument", argv[i - 1]);
	return argv[i];
}

/* Run one command at argv[i]; returns the index of the next one. */
static int
run_one(int argc, char **argv, int i, int depth)
{
	const char *cmd = argv[i++], *status, *summary, *files;
	char buf[8192];

	if (strcmp(cmd, "print") == 0) {
		printf("%s\n", need(argc, argv, i++));
	} else if (strcmp(cmd, "stderr") == 0) {
		fprintf(stderr, "%s\n", need(argc, argv, i++));
	} else if (strcmp(cmd, "result") == 0) {
		status = need(argc, argv, i++);
		summary = "fake agent done";
		files = "[]";
		if (i < argc && !is_command(argv[i]))
			summary = argv[i++];
		if (i < argc && !is_command(argv[i]))
			files = argv[i++];
		print_result(status, summary, files);
	} else if (strcmp(cmd, "sleep") == 0) {
		sleep_ms(parse_num(need(argc, argv, i++), LONG_MAX / 2));
	} else if (strcmp(cmd, "hang") == 0) {
		flush_all();
		for (;;)
			pause();
	} else if (strcmp(cmd, "wait-file") == 0) {
		while (access(need(argc, argv, i), F_OK) == -1)
			sleep_ms(5);
		i++;
	} else if (strcmp(cmd, "read-line") == 0) {
		if (read_line(buf, sizeof(buf)))
			printf("got: %s\n", buf);
		else
			printf("got EOF\n");
	} else if (strcmp(cmd, "on-input-result") == 0) {
		on_input_result(need(argc, argv, i++));
	} else if (strcmp(cmd, "echo-stdin") == 0) {
		while (read_line(buf, sizeof(buf))) {
			printf("%s\n", buf);
			fflush(stdout);
		}
	} else if (strcmp(cmd, "crash") == 0) {
		flush_all();
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
		_exit(70);
	} else if (strcmp(cmd, "exit") == 0) {
		flush_all();
		exit((int)parse_num(need(argc, argv, i), 255));
	} else if (strcmp(cmd, "flood") == 0) {
		flood(parse_num(need(argc, argv, i++), 1024 * 1024));
	} else if (strcmp(cmd, "fork-grandchild") == 0) {
		fork_grandchild();
	} else if (strcmp(cmd, "ignore-term") == 0) {
		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
	} else if (strcmp(cmd, "bad-block") == 0) {
		print_bad_block();
	} else if (strcmp(cmd, "clarify") == 0) {
		print_clarify();
	} else if (strcmp(cmd, "replay") == 0) {
		replay(need(argc, argv, i++));
	} else if (strcmp(cmd, "script") == 0) {
		script(need(argc, argv, i++), depth);
	} else {
		die_usage("unknown command '%s'", cmd);
	}
	flush_all();
	return i;
}

/* Commands run in order; the first one that ends the process ends it. */
static int
run_list(int argc, char **argv, int depth)
{
	int i = 0;

	while (i < argc)
		i = run_one(argc, argv, i, depth);
	return 0;
}

/* The path to re-exec: the real binary, whatever argv[0] says. */
static const char *
find_self(const char *argv0)
{
	static char buf[PATH_MAX];
	ssize_t n;

	n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return argv0;
	buf[n] = '\0';
	return buf;
}

/* Take the optional marker, then run the command list. */
int
main(int argc, char **argv)
{
	struct rlimit rl = { 0, 0 };
	int i = 1;

	/* A test crashes this program on purpose; it must leave no core. */
	setrlimit(RLIMIT_CORE, &rl);
	self_path = find_self(argv[0]);
	if (argc > 2 && strcmp(argv[1], "--marker") == 0) {
		marker = argv[2];
		i = 3;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: fake-agent [--marker M] CMD [ARGS]..."
		    " [CMD [ARGS]...]...\n");
		return EX_USAGE_FAKE;
	}
	return run_list(argc - i, argv + i, 0);
}
