#!/bin/bash
. "$(dirname "$0")/lib.sh"
t_skip "not yet"
t_done
