/*
 * replay.c: runs the fuzz target over files named on the command line, so
 * the target is built and exercised by every ordinary `make check`.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>

#include "proto.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
main(int argc, char **argv)
{
	FILE	*fp;
	uint8_t	*buf;
	long	 len;
	int	 i, n = 0;

	for (i = 1; i < argc; i++) {
		if ((fp = fopen(argv[i], "rb")) == NULL) {
			perror(argv[i]);
			return 1;
		}
		fseek(fp, 0, SEEK_END);
		len = ftell(fp);
		rewind(fp);
		buf = malloc(len > 0 ? (size_t)len : 1);
		if (fread(buf, 1, (size_t)len, fp) != (size_t)len) {
			perror(argv[i]);
			return 1;
		}
		fclose(fp);
		LLVMFuzzerTestOneInput(buf, (size_t)len);
		free(buf);
		n++;
	}
	printf("replayed %d inputs\n", n);
	return 0;
}
