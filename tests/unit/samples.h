/*
 * samples.h: one fully populated message of every type, shared by the
 * round-trip tests and the fuzz corpus generator.
 */
#ifndef CCW_SAMPLES_H
#define CCW_SAMPLES_H

#include "proto.h"

void	sample_msg(enum msg_type, struct msg *);

#endif
