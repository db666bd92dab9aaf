#!/bin/bash
# serve-log.sh: GET /api/loops/v2/:id/logs/:agent?offset=N (servelog.c),
# the loop page's worker log, at its limits: 64 KiB of the log per
# answer and the offset to go on from; a character cut by that bound
# left for the next read, bytes that are not UTF-8 as U+FFFD; an offset
# past the end reads nothing, a bad one is 400; only agent-N names a log
# (../, agent-01, agent-1.turn1: 404); a log or a workers directory that
# is a symlink, and a FIFO, are not read; an unknown loop or agent is
# 404, no token 401.  Also GET /api/loops/v2/:id/workers: the logs by
# agent number with each agent's output.  The logs are made by hand: no
# worker runs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"

t_watchdog 60

R=$T_TMP/proj
mkdir -p "$R/.loop"
srv_start "$T_TMP/srv" -C "$R"
ok $? "serve listens ($SRV_PORT)"
req POST /api/loops/v2 '{"title": "Logs"}'
ID=$(jr 'd["body"]["data"]["loop_id"]')
is "$(jr 'd["status"]')" 200 "a loop"
W=$R/.loop/$ID.workers
L=/api/loops/v2/$ID/logs

req GET "$L/agent-1"
is "$(jr '[d["status"], d["body"]["error"]]')" '[404,"Log not found"]' \
    "no workers directory yet: 404"

mkdir -p "$W"
# agent-1: 70000 bytes, a 3-byte character across the 64 KiB bound, a
# stray byte, then a line
python3 - "$W/agent-1.log" <<'PYEOF'
import sys
b = b"a" * 65535 + "\u20ac".encode() + b"x\xffy\n" + b"b" * (70000 - 65542)
assert len(b) == 70000
open(sys.argv[1], "wb").write(b)
PYEOF
noauth GET "$L/agent-1"
is "$(jr 'd["status"]')" 401 "no token: 401"
req GET "$L/agent-1"
is "$(jr '[d["status"], d["body"]["success"], d["body"]["data"]["agent"], d["body"]["data"]["offset"], d["body"]["data"]["next"], d["body"]["data"]["size"], d["body"]["data"]["truncated"], len(d["body"]["data"]["text"])]')" \
    '[200,true,"agent-1",0,65535,70000,true,65535]' \
    "offset 0: the first 64 KiB less the character cut by the bound, truncated"
req GET "$L/agent-1?offset=65535"
is "$(jr '[ord(c) for c in d["body"]["data"]["text"][:5]]')" \
    "[8364,120,65533,121,10]" \
    "from next: the whole character, a stray byte as U+FFFD"
is "$(jr '[d["body"]["data"]["next"], d["body"]["data"]["truncated"]]')" \
    '[70000,false]' "... to the end, not truncated"
req GET "$L/agent-1?offset=70000"
is "$(jr '[d["status"], d["body"]["data"]["text"], d["body"]["data"]["next"]]')" \
    '[200,"",70000]' "at the end: nothing"
req GET "$L/agent-1?offset=999999999999999999"
is "$(jr '[d["status"], d["body"]["data"]["offset"], d["body"]["data"]["text"], d["body"]["data"]["next"], d["body"]["data"]["truncated"]]')" \
    '[200,70000,"",70000,false]' "an offset far past the end: nothing, from the end"
for q in 'offset=9999999999999999999999' 'offset=-1' 'offset=1e3' \
    'offset=' 'offset=0x10'; do
	req GET "$L/agent-1?$q"
	is "$(jr '[d["status"], d["body"]["error"]]')" '[400,"bad offset"]' \
	    "?$q: 400"
done

# names that are not agent-N reach no file
echo secret >"$W/agent-01.log"
echo secret >"$W/agent-1.turn1.log"
echo secret >"$R/.loop/outside.log"
for a in agent-01 agent-1.turn1 ..%2foutside ..%2F..%2F..%2Fetc%2Fpasswd \
    %2e%2e agent-9999999999 AGENT-1 agent- agent-2; do
	req GET "$L/$a"
	st=$(jr 'd["status"]')
	case $st in 404) ok 0 "agent '$a': 404" ;;
	*) ok 1 "agent '$a': 404 (got $st: $(jr 'd["body"]'))" ;; esac
done

req GET "$L/agent-1%00"
is "$(jr 'd["status"]')" 400 "agent 'agent-1%00': 400 (the path's NUL refused)"

# a log that is a symlink, a FIFO; a workers directory that is a symlink
ln -s /etc/passwd "$W/agent-3.log"
req GET "$L/agent-3"
is "$(jr '[d["status"], "root:" in str(d["body"])]')" '[404,false]' \
    "a log that is a symlink (to /etc/passwd): 404, nothing of it"
mkfifo "$W/agent-4.log"
req GET "$L/agent-4"
is "$(jr 'd["status"]')" 404 "a log that is a FIFO: 404, without blocking"
req POST /api/loops/v2 '{"title": "Linked"}'
ID2=$(jr 'd["body"]["data"]["loop_id"]')
ln -s "$W" "$R/.loop/$ID2.workers"
req GET "/api/loops/v2/$ID2/logs/agent-1"
is "$(jr 'd["status"]')" 404 "a workers directory that is a symlink: 404"

# unknown or bad loops
req GET /api/loops/v2/no-such-loop/logs/agent-1
is "$(jr '[d["status"], d["body"]["error"]]')" '[404,"Loop not found"]' \
    "a missing loop: 404"
req GET /api/loops/v2/..%2f..%2fetc/logs/agent-1
is "$(jr 'd["status"]')" 404 "a loop id holding ../: 404"
req GET "/api/loops/v2/.hidden/logs/agent-1"
is "$(jr 'd["status"]')" 400 "a bad loop id: 400"

# the workers' list: by number (agent-10 after agent-2), with outputs
printf 'two\n' >"$W/agent-2.log"
printf 'ten\n' >"$W/agent-10.log"
echo '{"agent_id": "agent-10", "role": "develop", "error_kind": "crashed", "reason": "worker killed by signal 9"}' >"$W/develop.output.json"
req GET "/api/loops/v2/$ID/workers"
is "$(jr '[w["agent"] for w in d["body"]["data"]["workers"]]')" \
    '["agent-1","agent-2","agent-10"]' \
    "workers: each agent-N log by number (no link, no FIFO, no other name)"
is "$(jr '[d["body"]["data"]["workers"][2]["output"]["reason"], d["body"]["data"]["workers"][0]["output"], d["body"]["data"]["workers"][1]["size"]]')" \
    '["worker killed by signal 9",null,4]' "... each with its output and size"
req GET /api/loops/v2/no-such-loop/workers
is "$(jr 'd["status"]')" 404 "workers of a missing loop: 404"

kill -TERM "$SRV_PID"
t_wait_pid "$SRV_PID" 10000
is "$T_RC" 4 "serve exits 4 on SIGTERM (no leak, no error under a wrapper)"
t_done
