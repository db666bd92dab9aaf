/*
 * mkcorpus.c: writes one valid frame of every message type into a
 * directory, the seed corpus for the fuzzer.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>

#include <event2/buffer.h>

#include "proto.h"
#include "../unit/samples.h"

int
main(int argc, char **argv)
{
	struct evbuffer	*b;
	struct msg	 m;
	char		 path[4096];
	FILE		*fp;
	int		 t;

	if (argc != 2) {
		fprintf(stderr, "usage: mkcorpus DIR\n");
		return 2;
	}
	for (t = MSG_HELLO; t < MSG__MAX; t++) {
		b = evbuffer_new();
		sample_msg(t, &m);
		frame_write(b, &m, PROTO_MAX_BODY);
		msg_clear(&m);
		snprintf(path, sizeof path, "%s/%s.frame", argv[1], msg_name(t));
		if ((fp = fopen(path, "wb")) == NULL) {
			perror(path);
			return 1;
		}
		fwrite(evbuffer_pullup(b, -1), 1, evbuffer_get_length(b), fp);
		fclose(fp);
		evbuffer_free(b);
	}
	return 0;
}
