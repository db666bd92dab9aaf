/*
 * fuzzdir.h: a fuzz target's state directory (fuzzdir.c): made on the
 * first input, emptied and removed at exit, and a file in it written
 * whole, for the targets whose decoder reads a file (state, answers).
 */
#ifndef CCW_FUZZDIR_H
#define CCW_FUZZDIR_H

#include <stddef.h>
#include <stdint.h>

int	fuzzdir_open(void);
void	fuzzdir_write(int, const char *, const uint8_t *, size_t);

#endif
