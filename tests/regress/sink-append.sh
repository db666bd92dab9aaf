#!/bin/sh
# sink-append.sh FILE: the notify command sink of the notify tests
# (attention.sh, notify-command.sh): the body on stdin appended to FILE,
# a line of its own.
cat >>"$1"
echo >>"$1"
