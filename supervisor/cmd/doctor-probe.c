/*
 * doctor-probe.c: the probes of `ccw-supervisor doctor`: `BIN --version`
 * runs (argv only, each in its own process group, all at once, bounded in
 * time and in output), and the credential sources and base-URL overrides
 * of a tool, reported by name only: a secret's value never enters this
 * process's output.
 */
#include <config.h>

#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "adapter.h"
#include "agent.h"
#include "doctor.h"
#include "reap.h"
#include "sigfd.h"
#include "xmalloc.h"

#define DOCTOR_LINE_MAX	120	/* bytes of the first line kept */

/*
 * The child: its own process group so a timeout kills everything it
 * started, stdin from /dev/null, stdout and stderr into the pipe, no
 * shell.  CLAUDECODE is removed as the worker does, so claude answers as
 * it would in a loop.
 */
static void
doctor_child(const char *path, const char *arg, const char *dir, int out,
    int ep)
{
	char	*argv[3];
	int	 nul, e;

	(void)setpgid(0, 0);
	/* Our ignored SIGPIPE and SIGXFSZ would survive exec. */
	sigfd_child_reset();
	if ((nul = open("/dev/null", O_RDONLY)) == -1 ||
	    dup2(nul, 0) == -1 || dup2(out, 1) == -1 || dup2(out, 2) == -1)
		goto fail;
	if (dir != NULL && chdir(dir) == 0)
		(void)setenv("PWD", dir, 1);
	(void)unsetenv("CLAUDECODE");
	argv[0] = (char *)path;
	argv[1] = (char *)arg;
	argv[2] = NULL;
	execv(path, argv);
fail:
	e = errno;
	(void)write(ep, &e, sizeof e);
	_exit(127);
}

/* Keep the first line of output, printable ASCII only, bounded. */
static void
doctor_keep_line(struct doctor_run *r, const char *buf, size_t n)
{
	size_t	len, i;
	char	*p;

	if (r->line_done)
		return;
	len = r->first_line != NULL ? strlen(r->first_line) : 0;
	p = xreallocarray(r->first_line, 1, DOCTOR_LINE_MAX + 1);
	r->first_line = p;
	for (i = 0; i < n && len < DOCTOR_LINE_MAX; i++) {
		if (buf[i] == '\n') {
			if (len > 0) {
				r->line_done = 1;
				break;
			}
			continue;
		}
		if (buf[i] == '\r')
			continue;
		p[len++] = (buf[i] >= 0x20 && buf[i] < 0x7f) ? buf[i] : '?';
	}
	if (len >= DOCTOR_LINE_MAX)
		r->line_done = 1;
	p[len] = '\0';
}

/* A pidfd lets poll() see the exit; without one we look every 10 ms. */
static int
doctor_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

/*
 * Has the child exited?  WNOWAIT leaves it a zombie, so its group id
 * cannot be reused before doctor_finish kills the group.
 */
static int
doctor_exited(pid_t pid)
{
	siginfo_t	si;

	memset(&si, 0, sizeof si);
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
		return 1;
	return si.si_pid == pid;
}

/*
 * Start PATH ARG (the row's version_arg: --version) in DIR.  A failed fork or exec ends the run at
 * once (done, DR_EXEC_FAILED); otherwise doctor_run_wait follows it.
 */
void
doctor_run_start(struct doctor_run *r, const char *path, const char *arg,
    const char *dir)
{
	int	op[2], ep[2], e;

	memset(r, 0, sizeof *r);
	r->fd = r->pidfd = -1;
	r->start = clock_mono_ms();
	r->end = DR_EXEC_FAILED;
	r->done = 1;
	if (pipe2(op, O_CLOEXEC) == -1) {
		r->error = errno;
		return;
	}
	if (pipe2(ep, O_CLOEXEC) == -1) {
		r->error = errno;
		close(op[0]);
		close(op[1]);
		return;
	}
	if ((r->pid = fork()) == -1) {
		r->error = errno;
		close(op[0]);
		close(op[1]);
		close(ep[0]);
		close(ep[1]);
		return;
	}
	if (r->pid == 0)
		doctor_child(path, arg, dir, op[1], ep[1]);
	(void)setpgid(r->pid, r->pid);	/* no race with the child's own */
	close(op[1]);
	close(ep[1]);
	if ((e = reap_exec_status(ep[0], r->pid)) != 0) {
		close(op[0]);
		r->error = e;
		r->ms = clock_mono_ms() - r->start;
		return;
	}
	(void)fcntl(op[0], F_SETFL, fcntl(op[0], F_GETFL) | O_NONBLOCK);
	r->fd = op[0];
	r->pidfd = doctor_pidfd(r->pid);
	r->done = 0;
}

/*
 * The end of a started run: its whole process group is killed before the
 * child is reaped, so nothing it started outlives doctor.
 */
static void
doctor_finish(struct doctor_run *r, enum doctor_run_end end)
{
	int	st;

	if (r->fd != -1)
		close(r->fd);
	if (r->pidfd != -1)
		close(r->pidfd);
	r->fd = r->pidfd = -1;
	r->done = 1;
	if (r->pid <= 0) {	/* never kill(0) or kill(-1): not ours */
		r->end = DR_EXEC_FAILED;
		return;
	}
	(void)kill(-r->pid, SIGKILL);
	while (waitpid(r->pid, &st, 0) == -1 && errno == EINTR)
		;
	r->ms = clock_mono_ms() - r->start;
	r->end = end;
	r->done = 1;
	if (end == DR_EXITED && WIFSIGNALED(st)) {
		r->end = DR_SIGNALED;
		r->status = WTERMSIG(st);
	} else if (end == DR_EXITED)
		r->status = WEXITSTATUS(st);
}

/*
 * Read what is there.  Once the child exited, what is buffered is all we
 * take: a descendant that kept the pipe open is killed with the group.
 */
static void
doctor_read(struct doctor_run *r)
{
	char	buf[8192];
	ssize_t	n;
	int	exited = doctor_exited(r->pid);

	for (;;) {
		n = read(r->fd, buf, sizeof buf);
		if (n > 0) {
			r->bytes += (size_t)n;
			doctor_keep_line(r, buf, (size_t)n);
			if (r->bytes > DOCTOR_OUTPUT_MAX) {
				doctor_finish(r, DR_TOO_BIG);
				return;
			}
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == 0 || exited || errno != EAGAIN)
			r->eof = 1;
		break;
	}
	if (r->eof && (exited || doctor_exited(r->pid)))
		doctor_finish(r, DR_EXITED);
}

/*
 * Follow every started run at once until each has ended or passed its
 * deadline (its start + timeout_ms); the late ones end as DR_TIMEOUT.
 * All run in parallel, so doctor takes the slowest tool's time, not the
 * sum.
 */
void
doctor_run_wait(struct doctor_run *runs, size_t n, uint64_t timeout_ms)
{
	struct pollfd	*pfd;
	uint64_t	 now, next;
	size_t		 i, np;
	int		 wait_ms;

	pfd = xcalloc(2 * n + 1, sizeof *pfd);
	for (;;) {
		np = 0;
		next = UINT64_MAX;
		now = clock_mono_ms();
		wait_ms = -1;
		for (i = 0; i < n; i++) {
			if (!runs[i].done && now >= runs[i].start + timeout_ms)
				doctor_finish(&runs[i], DR_TIMEOUT);
			if (runs[i].done)
				continue;
			if (runs[i].start + timeout_ms < next)
				next = runs[i].start + timeout_ms;
			if (!runs[i].eof) {
				pfd[np].fd = runs[i].fd;
				pfd[np++].events = POLLIN;
			}
			if (runs[i].pidfd != -1) {
				pfd[np].fd = runs[i].pidfd;
				pfd[np++].events = POLLIN;
			} else
				wait_ms = 10;
		}
		if (next == UINT64_MAX)
			break;
		if (wait_ms == -1 || (uint64_t)wait_ms > next - now)
			wait_ms = (int)(next - now);
		(void)poll(pfd, np, wait_ms);	/* deadlines bound EINTR */
		for (i = 0; i < n; i++) {
			if (!runs[i].done)
				doctor_read(&runs[i]);
		}
	}
	free(pfd);
}

/* One owner of first_line. */
void
doctor_run_free(struct doctor_run *r)
{
	free(r->first_line);
	r->first_line = NULL;
}

/* "Runnable" means: started, answered, exited 0 within the deadline. */
int
doctor_run_ok(const struct doctor_run *r)
{
	return r->end == DR_EXITED && r->status == 0;
}

/* Why a run is not ok, in words; NULL when it is. */
char *
doctor_run_describe(const struct doctor_run *r)
{
	char	*s = NULL;

	switch (r->end) {
	case DR_EXITED:
		if (r->status != 0)
			xasprintf(&s, "--version exited %d", r->status);
		break;
	case DR_SIGNALED:
		xasprintf(&s, "--version killed by signal %d", r->status);
		break;
	case DR_TIMEOUT:
		xasprintf(&s, "--version timed out after %llu ms (killed)",
		    (unsigned long long)r->ms);
		break;
	case DR_TOO_BIG:
		xasprintf(&s, "--version printed over %u KiB (killed)",
		    DOCTOR_OUTPUT_MAX >> 10);
		break;
	case DR_EXEC_FAILED:
		xasprintf(&s, "cannot run: %s", strerror(r->error));
		break;
	}
	return s;
}

/* --- credentials: names of sources, never their contents */

/*
 * Where each CLI looks for credentials is its row's creds (the tool
 * table, worker/tool-NAME.c), found by grepping each CLI's bundle; the
 * man page lists them.
 */

/* An environment variable counts when it is set to something. */
static int
doctor_env_set(const char *name)
{
	const char	*v = getenv(name);

	return v != NULL && *v != '\0';
}

/* A credential file counts when it is a non-empty regular file. */
static int
doctor_file_present(const char *path)
{
	struct stat	sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0;
}

/* The file a table row names, or NULL without a home to put it under. */
static char *
doctor_cred_path(const struct adapter_cred *c, const char *home)
{
	const char	*d = c->dir_env != NULL ? getenv(c->dir_env) : NULL;
	char		*p = NULL;

	if (d != NULL && *d != '\0')
		xasprintf(&p, "%s/%s", d, c->file);
	else if (home != NULL)
		xasprintf(&p, "%s/%s/%s", home, c->dir_home, c->file);
	return p;
}

/*
 * Does a .env file assign one of this tool's variables?  Only the names
 * on the left of '=' are looked at; the line is dropped right after.
 */
static void
doctor_env_file_names(const struct adapter *ad, const char *path,
    json_t *names)
{
	const struct adapter_cred	*c;
	char				 line[4096], *p, *eq;
	FILE				*fp;
	size_t				 n;

	if ((fp = fopen(path, "r")) == NULL)
		return;
	while (fgets(line, sizeof line, fp) != NULL) {
		p = line + strspn(line, " \t");
		if (strncmp(p, "export ", 7) == 0)
			p += 7 + strspn(p + 7, " \t");
		if ((eq = strchr(p, '=')) == NULL)
			continue;
		n = strcspn(p, " \t=");
		for (c = ad->creds; c != NULL && (c->env != NULL ||
		    c->file != NULL); c++) {
			if (c->env != NULL && strlen(c->env) == n &&
			    strncmp(p, c->env, n) == 0 &&
			    eq[1] != '\0' && eq[1] != '\n')
				json_array_append_new(names,
				    json_string(c->env));
		}
	}
	explicit_bzero(line, sizeof line);
	fclose(fp);
}

/* A source found: {"kind": ..., "name": ...}, plus detail if any. */
static void
doctor_add_source(json_t *srcs, const char *kind, const char *name,
    json_t *detail)
{
	json_t	*o = json_pack("{s:s, s:s}", "kind", kind, "name", name);

	if (detail != NULL)
		json_object_set_new(o, "vars", detail);
	json_array_append_new(srcs, o);
}

/*
 * Which credential sources this tool would find: set variables, present
 * files, and CCW's envFile for the tool if cli-tools.json names one.
 * {"needed": bool, "configured": bool, "sources": [...]}; values are
 * never read into the result.
 */
json_t *
doctor_credentials(const struct adapter *ad, const char *home,
    const char *env_file)
{
	const struct adapter_cred	*c;
	json_t				*srcs, *names;
	char				*p;
	int				 known = 0;

	srcs = json_array();
	for (c = ad->creds; c != NULL && (c->env != NULL || c->file != NULL);
	    c++) {
		known = 1;
		if (c->env != NULL) {
			if (doctor_env_set(c->env))
				doctor_add_source(srcs, "env", c->env, NULL);
			continue;
		}
		if ((p = doctor_cred_path(c, home)) == NULL)
			continue;
		if (doctor_file_present(p)) {
			names = NULL;
			if (strcmp(c->file, ".env") == 0) {
				names = json_array();
				doctor_env_file_names(ad, p, names);
			}
			doctor_add_source(srcs, "file", p, names);
		}
		free(p);
	}
	if (env_file != NULL && doctor_file_present(env_file)) {
		names = json_array();
		doctor_env_file_names(ad, env_file, names);
		doctor_add_source(srcs, "ccw-envFile", env_file, names);
	}
	return json_pack("{s:b, s:b, s:o}", "needed", known, "configured",
	    json_array_size(srcs) > 0, "sources", srcs);
}

/* --- base URLs: each row's base_urls (the tool table) */

/*
 * A URL without what could carry a secret: user:password@ and the query
 * and fragment are cut.  Returns the host start and length through
 * *host and *hlen.
 */
static char *
doctor_url_clean(const char *url, const char **host, size_t *hlen)
{
	const char	*s, *auth_end, *end;
	char		*out;
	size_t		 scheme = 0, alen;

	if ((s = strstr(url, "://")) != NULL)
		scheme = (size_t)(s - url) + 3;
	s = url + scheme;
	alen = strcspn(s, "/?#");
	auth_end = memchr(s, '@', alen) != NULL ?
	    (const char *)memrchr(s, '@', alen) + 1 : s;
	end = auth_end + strcspn(auth_end, "?#");
	xasprintf(&out, "%.*s%.*s", (int)scheme, url, (int)(end - auth_end),
	    auth_end);
	*host = out + scheme;
	*hlen = strcspn(*host, ":/");
	return out;
}

/* Overrides that send the tool's requests elsewhere, shown so a user
 * sees where a loop would talk to. */
json_t *
doctor_base_urls(const struct adapter *ad)
{
	const struct adapter_base_url	*b;
	const char			*v, *host;
	json_t				*arr = json_array();
	char				*clean;
	size_t				 hlen;
	int				 vendor;

	for (b = ad->base_urls; b != NULL && b->env != NULL; b++) {
		if ((v = getenv(b->env)) == NULL || *v == '\0')
			continue;
		clean = doctor_url_clean(v, &host, &hlen);
		vendor = hlen == strlen(b->vendor_host) &&
		    strncmp(host, b->vendor_host, hlen) == 0;
		json_array_append_new(arr, json_pack("{s:s, s:s, s:b}",
		    "env", b->env, "url", clean, "vendor", vendor));
		free(clean);
	}
	return arr;
}
