/*
 * cmd-answer.c: `ccw-supervisor answer LOOP QID TEXT`: a person answers
 * a loop's open question from the shell.  The answer goes to the loop's
 * answers file (host.h's question_file_answer, via "cli"), which the
 * process driving the loop takes now, or the loop when it resumes; this
 * file owns the options, the checks and the messages.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host.h"
#include "state.h"
#include "sup.h"
#include "xmalloc.h"

/* The --help text of the answer command. */
static void
answer_usage(FILE *fp)
{
	fprintf(fp,
"usage: ccw-supervisor answer LOOP QID TEXT [-C ROOT] [--state-dir DIR]\n"
"           [--by NAME]\n"
"Answers question QID (as `GET /api/questions` or list_questions show it)\n"
"of loop LOOP with TEXT: the process driving the loop (run, serve) takes\n"
"it at once, a loop not running when it resumes.  --by names who answers\n"
"(default: the login name); the loop's history records it, via \"cli\".\n"
"Exit: 0 answered, 1 no such loop or no such open question, 2 usage.\n");
}

/* A failure's message; the exit status for it. */
static int
answer_fail(int code, const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "ccw-supervisor answer: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	return code;
}

/* Who answers when --by is absent: the login name, or nobody. */
static const char *
answer_who(void)
{
	const struct passwd	*pw;
	const char		*u = getenv("USER");

	if (u != NULL && *u != '\0')
		return u;
	pw = getpwuid(getuid());
	return pw != NULL ? pw->pw_name : NULL;
}

/*
 * The answer to the loop's answers file once its state shows the
 * question open: EXIT_OK, or the message said and its status (no such
 * loop or open question 1, an answer refused 2).
 */
static int
answer_write(int dirfd, const char *loop, const char *qid, const char *text,
    const char *by)
{
	char	 name[STATE_ID_MAX + 8], *err = NULL;
	int	 rc;

	snprintf(name, sizeof name, "%s.json", loop);
	if (faccessat(dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) != 0)
		return answer_fail(EXIT_FAILED, "no loop %s%s", loop,
		    " in this state directory");
	if ((rc = question_file_answer(dirfd, loop, qid, text, by, "cli",
	    &err)) == 0)
		return EXIT_OK;
	rc = answer_fail(rc == -ERR_INVALID ? EXIT_USAGE : EXIT_FAILED,
	    "%s%s", err != NULL ? err : "the answer was not written",
	    rc == -ERR_CONFLICT ? " (answered or expired already)" : "");
	free(err);
	return rc;
}

int
cmd_answer(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "state-dir", required_argument, NULL, 's' },
		{ "by", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*root = NULL, *sdir = NULL, *by = NULL, *loop, *qid;
	char		 cwd[PATH_MAX], *dir, *err = NULL;
	int		 ch, dirfd, rc;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "C:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'C': root = optarg; break;
		case 's': sdir = optarg; break;
		case 'b': by = optarg; break;
		case 'h':
			answer_usage(stdout);
			return EXIT_OK;
		default:
			answer_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 3 || *argv[optind + 2] == '\0') {
		answer_usage(stderr);
		return EXIT_USAGE;
	}
	loop = argv[optind];
	qid = argv[optind + 1];
	if (!state_id_valid(loop))
		return answer_fail(EXIT_USAGE, "invalid loop id '%s'%s", loop,
		    ": use [A-Za-z0-9][A-Za-z0-9._-]{0,127}, no '..'");
	if (root == NULL && sdir == NULL) {
		if (getcwd(cwd, sizeof cwd) == NULL)
			return answer_fail(EXIT_FAILED, "getcwd: %s%s",
			    strerror(errno), "");
		root = cwd;
	}
	dir = sdir != NULL ? xstrdup(sdir) : state_dir_for(root, loop);
	if ((dirfd = state_dir_open(dir, 0, &err)) < 0) {
		rc = answer_fail(EXIT_FAILED, "no loop %s: %s", loop, err);
		free(err);
		free(dir);
		return rc;
	}
	free(dir);
	rc = answer_write(dirfd, loop, qid, argv[optind + 2], by != NULL ?
	    by : answer_who());
	close(dirfd);
	if (rc == EXIT_OK)
		printf("answered %s of loop %s\n", qid, loop);
	return rc;
}
