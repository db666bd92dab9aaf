#!/usr/bin/env python3
# relay.py: a launcher as ssh behaves, for tests that need no sshd: it
# starts CMD in a session of its own (the "remote host": nothing the
# supervisor signals reaches it) with pipes for stdin and stdout, and
# relays bytes both ways.  Killed, it leaves CMD with EOF on stdin only,
# as sshd does; CMD's exit status becomes its own.  Marked by argv[1]
# (a test's marker) so a test can find and kill it.
import os
import select
import sys


def main():
    if len(sys.argv) < 3:
        sys.stderr.write("usage: relay.py MARKER CMD...\n")
        return 2
    cmd = sys.argv[2:]
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        os.dup2(in_r, 0)
        os.dup2(out_w, 1)
        for fd in (in_r, in_w, out_r, out_w):
            os.close(fd)
        try:
            os.execvp(cmd[0], cmd)
        except OSError as e:
            sys.stderr.write("relay.py: %s: %s\n" % (cmd[0], e.strerror))
            os._exit(127)
    os.close(in_r)
    os.close(out_w)
    src = {0: in_w, out_r: 1}
    while src:
        ready, _, _ = select.select(list(src), [], [])
        for fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            if not data:
                if src[fd] == in_w:
                    os.close(in_w)
                del src[fd]
                if fd == out_r:
                    src.clear()     # CMD is done with us (as ssh: its
                continue            # exit, not our stdin, ends the session)
            try:
                while data:
                    data = data[os.write(src[fd], data):]
            except OSError:
                del src[fd]
    _, st = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(st) & 0xff


if __name__ == "__main__":
    sys.exit(main())
