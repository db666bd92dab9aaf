/*
 * hammer-fe.c: state-hammer's careless front end (flip: read-modify-writes
 * of a loop's state file without the lock, in place and by rename) and
 * the file handshake that orders its last write against a committer's.
 */
#include <config.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "hammer.h"
#include "xmalloc.h"

/*
 * Waits up to 60 s for a file another process creates: the handshake that
 * orders a committer's last write against a front end's (an unlocked
 * read-modify-write in flight reverts whatever was committed under it).
 */
void
hammer_await(const char *path)
{
	int	k;

	for (k = 0; path != NULL && k < 60000 && access(path, F_OK) != 0; k++)
		usleep(1000);
}

/* Creates the file hammer_await waits for. */
void
hammer_signal(const char *path)
{
	int	fd;

	if (path != NULL && (fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC,
	    0644)) >= 0)
		close(fd);
}

/* Read and parse the file as a front end would: no lock, a few tries. */
static json_t *
hammer_fe_read(const char *name)
{
	json_t	*j;
	int	 i;

	for (i = 0; i < 2000; i++) {
		if ((j = json_load_file(name, 0, NULL)) != NULL &&
		    json_is_object(j))
			return j;
		json_decref(j);
		usleep(1000);
	}
	return NULL;
}

/* flip N [-a FILE] [-r FILE] [-p US]: see the top of the file. */
int
hammer_flip(const char *dir, const char *id, int argc, char **argv)
{
	const char	*after = NULL, *ready = NULL;
	char		*name, *tmp, *text;
	json_t		*j;
	long long	 n, i, lost = 0, pace = 2000, notes;
	size_t		 len;
	int		 fd, k, w;

	if (argc < 1)
		return 2;
	n = strtoll(argv[0], NULL, 10);
	for (k = 1; k + 1 < argc; k += 2) {
		if (strcmp(argv[k], "-a") == 0)
			after = argv[k + 1];
		else if (strcmp(argv[k], "-r") == 0)
			ready = argv[k + 1];
		else if (strcmp(argv[k], "-p") == 0)
			pace = strtoll(argv[k + 1], NULL, 10);
		else
			return 2;
	}
	xasprintf(&name, "%s/%s.json", dir, id);
	xasprintf(&tmp, "%s/%s.json.fe-tmp", dir, id);
	for (i = 1; i <= n; i++) {
		if (i == n) {
			hammer_signal(ready);
			hammer_await(after);
		}
		if ((j = hammer_fe_read(name)) == NULL) {
			fprintf(stderr, "state-hammer: flip: %s unreadable\n", name);
			break;
		}
		notes = json_integer_value(json_object_get(j, "notes"));
		if (i > 1 && notes != i - 1)
			lost++;
		json_object_set_new(j, "status", json_string(i % 2 == 1 ||
		    i == n ? "paused" : "running"));
		json_object_set_new(j, "notes", json_integer(i));
		text = json_dumps(j, JSON_INDENT(2));
		json_decref(j);
		len = strlen(text);
		if (i % 2 == 0) {
			fd = open(name, O_WRONLY | O_TRUNC | O_CLOEXEC);
			w = fd >= 0 && write(fd, text, len / 2) == (ssize_t)(len / 2);
			usleep(200);
			w = w && write(fd, text + len / 2, len - len / 2) ==
			    (ssize_t)(len - len / 2);
		} else {
			fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			w = fd >= 0 && write(fd, text, len) == (ssize_t)len;
		}
		if (fd >= 0)
			close(fd);
		if (w && i % 2 == 1)
			w = rename(tmp, name) == 0;
		free(text);
		if (!w) {
			fprintf(stderr, "state-hammer: flip %lld: write failed\n", i);
			break;
		}
		if (pace > 0 && i < n)
			usleep((useconds_t)pace);
	}
	free(name);
	free(tmp);
	if (i <= n)
		return 1;
	printf("flips %lld lost %lld\n", n, lost);
	fflush(stdout);
	return 0;
}

