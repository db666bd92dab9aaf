/*
 * loopitem.c: the raw baseline of the batch figure's loop items (issue
 * 30): what one item's loop does at the least, as one process GNU
 * parallel starts per item: five `bash -c CMD` run one after another,
 * each followed by a durable commit of a state-sized file (write, fsync,
 * rename, fsync of the directory).  No protocol, no log, no events.
 */
#include <sys/wait.h>

#include <err.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOOPITEM_WORKERS	5

extern char **environ;

/*
 * One worker: bash -c CMD (posix_spawn, the cheapest start there is; its
 * output goes where ours does, to parallel as the loop reads its worker).
 */
static void
run(const char *cmd)
{
	char	*argv[] = { "bash", "-c", (char *)cmd, NULL };
	pid_t	 pid;
	int	 st, rc;

	if ((rc = posix_spawn(&pid, "/bin/bash", NULL, NULL, argv,
	    environ)) != 0)
		errx(1, "posix_spawn: %s", strerror(rc));
	if (waitpid(pid, &st, 0) == -1)
		err(1, "waitpid");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		errx(1, "the worker failed");
}

/* The state committed as the supervisor commits one. */
static void
commit(int dirfd, const char *name, const char *buf, size_t len)
{
	char	tmp[512];
	int	fd;

	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", name, (long)getpid());
	if ((fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC |
	    O_CLOEXEC, 0644)) == -1)
		err(1, "%s", tmp);
	if (write(fd, buf, len) != (ssize_t)len || fsync(fd) == -1)
		err(1, "write");
	close(fd);
	if (renameat(dirfd, tmp, dirfd, name) == -1 || fsync(dirfd) == -1)
		err(1, "rename");
}

/* loopitem DIR ID SIZE CMD */
int
main(int argc, char **argv)
{
	char	 name[256], *buf;
	size_t	 len;
	int	 dirfd, i;

	if (argc != 5) {
		fprintf(stderr, "usage: loopitem DIR ID SIZE CMD\n");
		return 2;
	}
	len = strtoul(argv[3], NULL, 10);
	if ((buf = malloc(len + 1)) == NULL)
		err(1, "malloc");
	if ((dirfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		err(1, "%s", argv[1]);
	snprintf(name, sizeof name, "item-%s.json", argv[2]);
	for (i = 0; i < LOOPITEM_WORKERS; i++) {
		run(argv[4]);
		memset(buf, 'a' + i, len);
		commit(dirfd, name, buf, len);
	}
	free(buf);
	close(dirfd);
	return 0;
}
