#!/usr/bin/env python3
# forge.py: a fake ccw-worker that says what a real one never would, so
# agent-contain.sh can see the supervisor refuse to believe it.  It speaks
# the frame protocol on fd 3 (ccw-proto(7)); $CCW_FORGE names the lie:
#   tool-pid     STARTED names $CCW_FORGE_TOOL_PID (another group, or 1),
#                then garbage ends the channel: the supervisor kills "the
#                tool"; then it hangs, marked $CCW_FORGE_MARKER
#   orphan-fd3   forks a child in a new session that keeps fd 3 open and
#                hangs (marked), reports it as the tool, sends a success
#                RESULT and BYE, and exits: the channel never reaches EOF
import os
import struct
import sys


def pack(v):
    """The little msgpack the protocol needs: maps, arrays, str, ints."""
    if v is None:
        return b"\xc0"
    if v is True or v is False:
        return b"\xc3" if v else b"\xc2"
    if isinstance(v, int):
        if 0 <= v < 0x80:
            return bytes([v])
        if v >= 0:
            return b"\xcf" + struct.pack(">Q", v)
        return b"\xd3" + struct.pack(">q", v)
    if isinstance(v, str):
        b = v.encode()
        return b"\xdb" + struct.pack(">I", len(b)) + b
    if isinstance(v, list):
        return b"\xdd" + struct.pack(">I", len(v)) + b"".join(map(pack, v))
    if isinstance(v, dict):
        return b"\xdf" + struct.pack(">I", len(v)) + b"".join(
            pack(k) + pack(x) for k, x in v.items())
    raise TypeError(type(v))


def send(kind, body):
    """One frame: magic CW, version 2, flags 0, type, length, body."""
    data = pack(body)
    os.write(3, b"CW\x02\x00" + struct.pack(">HI", kind, len(data)) + data)


HELLO, STARTED, RESULT, BYE = 1, 3, 7, 9


def hang(marker):
    """Become the marked fake agent that hangs, so the test can find us."""
    os.execv(os.environ["CCW_FAKE_AGENT"],
             ["fake-agent", "--marker", marker, "hang"])


def started(tool_pid):
    send(STARTED, {"tool_pid": tool_pid, "argv": ["forged"],
                   "cwd": os.getcwd(), "log_path": "/dev/null"})


def main():
    args = sys.argv[1:]
    index = int(args[args.index("-I") + 1]) if "-I" in args else 1
    role = args[args.index("-R") + 1] if "-R" in args else "develop"
    marker = os.environ["CCW_FORGE_MARKER"]
    send(HELLO, {"pid": os.getpid(), "index": index, "role": role,
                 "version": "0.1.0"})
    kind = os.environ["CCW_FORGE"]
    if kind == "tool-pid":
        started(int(os.environ["CCW_FORGE_TOOL_PID"]))
        os.write(3, b"this is no frame")
        hang(marker)
    elif kind == "orphan-fd3":
        # the child is in its own session before we exit: a descendant
        # still in ours would be ended by the supervisor's sweep at our
        # death (issue 26), one in a session of its own cannot be proven
        # ours and stays (the case this forgery is about)
        rd, wr = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rd)
            os.setsid()
            os.close(wr)
            hang(marker)
        os.close(wr)
        os.read(rd, 1)
        os.close(rd)
        started(pid)
        send(RESULT, {"status": "success", "summary": "forged",
                      "files_changed": [], "exit_code": 0, "signal": 0,
                      "duration_ms": 1})
        send(BYE, {})
        os._exit(0)
    sys.exit("forge.py: unknown CCW_FORGE " + kind)


main()
