/*
 * remote.c: a worker started behind a launcher (ssh, srun) with --stdio:
 * its channel on stdin and stdout instead of fd 3, the heartbeat it
 * answers (PING -> PONG), the silence after which it gives the
 * supervisor up, and a log of its own when the supervisor's disk is not
 * here.
 */
#include <config.h>

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "chan.h"
#include "clock.h"
#include "log.h"
#include "worker.h"
#include "xmalloc.h"

/*
 * Move the channel off stdin and stdout: the two descriptors go above 2,
 * close-on-exec (no tool may inherit the channel, as with fd 3), and
 * /dev/null takes 0 and 1, so nothing written to our stdout by mistake
 * (a library, a tool) can corrupt a frame.  *rfd and *wfd get the
 * channel's ends; -1 and *err on failure.
 */
int
remote_stdio(int *rfd, int *wfd, char **err)
{
	struct stat	sb;
	int		r, wr, nullfd;

	if (fstat(0, &sb) != 0 || fstat(1, &sb) != 0) {
		xasprintf(err, "--stdio: stdin or stdout is closed");
		return -1;
	}
	if ((r = fcntl(0, F_DUPFD_CLOEXEC, 5)) < 0 ||
	    (wr = fcntl(1, F_DUPFD_CLOEXEC, 5)) < 0) {
		xasprintf(err, "--stdio: %s", strerror(errno));
		return -1;
	}
	if ((nullfd = open("/dev/null", O_RDWR)) < 0 ||
	    dup2(nullfd, 0) < 0 || dup2(nullfd, 1) < 0) {
		xasprintf(err, "--stdio: /dev/null: %s", strerror(errno));
		return -1;
	}
	if (nullfd > 2)
		close(nullfd);
	(void)evutil_make_socket_nonblocking(r);
	(void)evutil_make_socket_nonblocking(wr);
	*rfd = r;
	*wfd = wr;
	return 0;
}

/* PING: answer at once with the same seq. */
void
remote_pong(struct worker *w, const struct msg *ping)
{
	struct msg	m;

	msg_init(&m, MSG_PONG);
	m.u.ping.seq = ping->u.ping.seq;
	worker_send(w, &m);
}

/*
 * The supervisor silent for lost_ms (no PING, no frame at all: the host
 * or the network between is gone, and a cut network shows no EOF): end
 * as if the channel had ended, sweeping the tool tree.
 */
static void
remote_lost_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct worker	*w = arg;
	uint64_t	 quiet = clock_mono_ms() - w->t_heard;

	(void)fd;
	(void)ev;
	if (quiet < w->lost_ms) {
		chan_arm_ms(w->lost_ev, w->lost_ms - quiet);
		return;
	}
	log_warnx("no frame from the supervisor for %llu ms: giving up",
	    (unsigned long long)quiet);
	worker_lost(w);
}

/* Arm the silence deadline (lost_ms 0: none, the local case). */
void
remote_watch(struct worker *w)
{
	w->t_heard = clock_mono_ms();
	if (w->lost_ms == 0)
		return;
	w->lost_ev = evtimer_new(w->base, remote_lost_cb, w);
	chan_arm_ms(w->lost_ev, w->lost_ms);
}

/*
 * The log ASSIGN named lives on the supervisor's disk; on another host
 * its directory may not exist.  Then the log goes to a directory of our
 * own (TMPDIR, else /tmp), STARTED tells the supervisor where, and the
 * tail reaches it as PROGRESS as usual.  The path is replaced in place.
 */
void
remote_log_path(struct worker *w)
{
	struct msg_assign	*a = &w->assign.u.assign;
	const char		*tmp = getenv("TMPDIR");
	char			*copy, *dir, *p;
	struct stat		 sb;

	if (a->log_path == NULL)
		return;
	copy = xstrdup(a->log_path);
	dir = dirname(copy);
	if (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		free(copy);
		return;
	}
	free(copy);
	if (tmp == NULL || *tmp != '/')
		tmp = "/tmp";
	xasprintf(&p, "%s/ccw-worker-%ld", tmp, (long)getuid());
	if (mkdir(p, 0700) != 0 && errno != EEXIST) {
		free(p);
		return;		/* the open will say what failed */
	}
	free(p);
	xasprintf(&p, "%s/ccw-worker-%ld/%s-%s-%ld.log", tmp, (long)getuid(),
	    a->loop_id != NULL ? a->loop_id : "loop",
	    a->agent_id != NULL ? a->agent_id : "agent", (long)getpid());
	log_info("log directory of %s not here: logging to %s", a->log_path,
	    p);
	free(a->log_path);
	a->log_path = p;
}
