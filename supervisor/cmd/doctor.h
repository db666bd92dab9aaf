/*
 * doctor.h: what `ccw-supervisor doctor` finds out about one tool: its
 * `--version` run under a hard deadline, and which credential sources and
 * base-URL overrides are present (names only, never values).
 */
#ifndef CCW_DOCTOR_H
#define CCW_DOCTOR_H

#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

struct adapter;

#define DOCTOR_VERSION_MS	20000	/* default deadline of BIN --version:
					   gemini 0.61 relaunches itself and
					   takes 7 s alone on a busy 2-core
					   machine, over 10 s beside the others */
#define DOCTOR_OUTPUT_MAX	(256u << 10)	/* more output is refused */

/* How a `BIN --version` run ended. */
enum doctor_run_end {
	DR_EXITED,		/* exited; see status */
	DR_SIGNALED,		/* killed by a signal it did not get from us */
	DR_TIMEOUT,		/* our deadline; its group was killed */
	DR_TOO_BIG,		/* over DOCTOR_OUTPUT_MAX; its group was killed */
	DR_EXEC_FAILED,		/* fork or exec failed; see error */
};

struct doctor_run {
	enum doctor_run_end	 end;
	int			 status;	/* exit status or signal */
	int			 error;		/* errno for DR_EXEC_FAILED */
	uint64_t		 ms;		/* wall time of the run */
	size_t			 bytes;		/* output bytes read */
	char			*first_line;	/* owned; printable, may be NULL */
	/* while it runs */
	pid_t			 pid;
	int			 fd, pidfd;
	uint64_t		 start;
	int			 done, eof, line_done;
};

void	 doctor_run_start(struct doctor_run *, const char *, const char *,
	    const char *);
void	 doctor_run_wait(struct doctor_run *, size_t, uint64_t);
void	 doctor_run_free(struct doctor_run *);
int	 doctor_run_ok(const struct doctor_run *);
char	*doctor_run_describe(const struct doctor_run *);

json_t	*doctor_credentials(const struct adapter *, const char *,
	    const char *);
json_t	*doctor_base_urls(const struct adapter *);

void	 doctor_print(json_t *, FILE *);
int	 cmd_doctor(int, char **);

#endif
