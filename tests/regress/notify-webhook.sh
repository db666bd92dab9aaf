#!/bin/bash
# notify-webhook.sh: the webhook sink (supervisor/engine/notifyweb.c)
# against a real HTTP receiver on loopback (hook-recv.py), driven by
# tests/unit/test-notifyweb: the signature the receiver verifies with
# python's hmac, the same delivery id on every retry, retries on 500,
# 429 (its Retry-After) and a hang (the deadline), none on 400, a
# connect failure, descriptors exhausted at the send, the sink freed
# mid-flight, and the config's refusals.
. "$(dirname "$0")/lib.sh"
t_watchdog 40
t_slack
DRV=$top_builddir/tests/unit/test-notifyweb
RECV=$srcdir/tests/regress/hook-recv.py
D=$T_TMP/recv
mkdir -p "$D"
printf 'the secret\n' >"$T_TMP/secret"
chmod 600 "$T_TMP/secret"
python3 "$RECV" "$D" "$T_TMP/secret" 2>"$T_TMP/recv.err" &
RPID=$!
trap 'kill $RPID 2>/dev/null; t_cleanup' EXIT
t_wait_file "$D/port" "$(t_ms 10000)" || { echo "not ok - receiver"; exit 1; }
PORT=$(cat "$D/port")
URL=http://127.0.0.1:$PORT
TMO=$(t_ms 1000)

# drive CASE SINK-JSON [DRIVER-OPTIONS]: the driver's output in $OUT (its
# lines joined by "; "), its exit status in $RC, the body {"case": CASE}.
drive() {
	local c=$1 conf=$2
	shift 2
	OUT=$(timeout -k 2 60 $WRAP "$DRV" "$@" "$conf" "{\"case\":\"$c\"}" \
	    2>"$T_TMP/drv.err")
	RC=$?
	OUT=${OUT//$'\n'/; }
}
# field CASE EXPR: a python expression over rs, the receiver's records of
# the case's body
field() {
	python3 -c 'import json,sys
rs = [r for r in map(json.loads, open(sys.argv[1]))
      if json.loads(r["body"]).get("case") == sys.argv[2]]
print(eval(sys.argv[3]))' "$D/log.jsonl" "$1" "$2"
}

# signed, first try
drive signed "{\"url\":\"$URL/ok\",\"secret_file\":\"$T_TMP/secret\",\"timeout_ms\":$TMO}"
is "$RC/$OUT" "0/sent 1; done ok=1 attempts=1 error=-" "a 200 is a delivery, in one attempt"
is "$(field signed '[r["sig_ok"] for r in rs]')" "[True]" \
    "the receiver verifies X-CCW-Signature (HMAC-SHA256 of the body)"
like "$(field signed 'rs[0]["ua"] + " " + rs[0]["ct"]')" \
    '^ccw-supervisor/[0-9.]+ application/json$' "User-Agent, Content-Type"
like "$(field signed 'rs[0]["delivery"]')" '^[0-9a-f]{16}$' "X-CCW-Delivery"

# no secret: no signature header
drive unsigned "{\"url\":\"$URL/ok\",\"timeout_ms\":$TMO}"
is "$RC/$(field unsigned '[r["sig"] for r in rs]')" "0/[None]" \
    "without secret_file, no X-CCW-Signature"

# two 500s, then a 200: three attempts, one delivery id, each signed
drive twofail "{\"url\":\"$URL/fail/2\",\"secret_file\":\"$T_TMP/secret\",\"backoff_ms\":10,\"timeout_ms\":$TMO}"
is "$RC/$OUT" "0/sent 1; done ok=1 attempts=3 error=-" "2 failures then ok: attempts 3"
is "$(field twofail 'len(rs), len(set(r["delivery"] for r in rs)), all(r["sig_ok"] for r in rs)')" \
    "(3, 1, True)" "every retry carries the same delivery id and signature"

# always 500: retries + 1 attempts, then failed
drive always500 "{\"url\":\"$URL/fail/99\",\"retries\":2,\"backoff_ms\":10,\"timeout_ms\":$TMO}"
like "$RC/$OUT" '^1/sent 1; done ok=0 attempts=3 error=HTTP 500: receiver says 500 x+$' \
    "always 500: failed after retries+1 attempts, the body's start in the error"
is "$(field always500 'len(rs)')" 3 "the receiver saw 3 tries"

# 400 is the receiver's final word
drive bad400 "{\"url\":\"$URL/status/400\",\"backoff_ms\":10,\"timeout_ms\":$TMO}"
like "$RC/$OUT" '^1/sent 1; done ok=0 attempts=1 error=HTTP 400: ' "400: failed, no retry"
is "$(field bad400 'len(rs)')" 1 "the receiver saw 1 try"

# a hang: the deadline ends the attempt, the retry gets through
drive hang "{\"url\":\"$URL/hang/1\",\"timeout_ms\":$(t_ms 500),\"backoff_ms\":10}"
is "$RC/$OUT" "0/sent 1; done ok=1 attempts=2 error=-" "a hung receiver: timeout, then a retry"

# a hang on every try: failed with the deadline's message
drive hangall "{\"url\":\"$URL/hang/9\",\"timeout_ms\":300,\"retries\":1,\"backoff_ms\":10}"
is "$RC/$OUT" "1/sent 1; done ok=0 attempts=2 error=timeout after 300 ms" "always hung: timeout"

# 429 with Retry-After: 1 waits at least that second
drive r429 "{\"url\":\"$URL/r429/1\",\"timeout_ms\":$TMO,\"backoff_ms\":10}"
is "$RC/$OUT" "0/sent 1; done ok=1 attempts=2 error=-" "429 is retried"
gap=$(field r429 'rs[1]["at_ms"] - rs[0]["at_ms"]')
ok $(( gap < 1000 )) "429's Retry-After: 1 honoured (the retry came ${gap} ms later)"

# nobody listening: connect failures are retried, then failed
FREE=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
drive refused "{\"url\":\"http://127.0.0.1:$FREE/x\",\"retries\":1,\"backoff_ms\":10,\"timeout_ms\":$TMO}"
like "$RC/$OUT" '^1/sent 1; done ok=0 attempts=2 error=connection' "connect failure: retried, then failed"

# descriptors exhausted at the send (the driver's -F): the attempt
# fails without a socket, the retry after they are given back delivers;
# never given back, the delivery fails after its retries, no crash
drive emfile "{\"url\":\"$URL/ok\",\"backoff_ms\":1000,\"timeout_ms\":$TMO}" -F 150
is "$RC/$OUT" "0/filled to EMFILE; sent 1; released; done ok=1 attempts=2 error=-" \
    "descriptors exhausted: the attempt fails, the retry after they are back delivers"
is "$(field emfile 'len(rs)')" 1 "the receiver saw the one delivery"
drive emfile2 "{\"url\":\"$URL/ok\",\"retries\":1,\"backoff_ms\":10,\"timeout_ms\":$TMO}" -F -1
like "$RC/$OUT" '^1/filled to EMFILE; sent 1; done ok=0 attempts=2 error=.+; released$' \
    "descriptors never back: failed after its retries"
is "$(field emfile2 'len(rs)')" 0 "the receiver saw nothing"

# two deliveries at once, each its own id
drive two "{\"url\":\"$URL/ok\",\"timeout_ms\":$TMO}" -n 2
is "$RC/$(field two 'len(set(r["delivery"] for r in rs))')" "0/2" \
    "two deliveries in flight at once, two ids"

# free while in flight: no done after it, nothing left on the loop
drive freed "{\"url\":\"$URL/hang/9\",\"timeout_ms\":$(t_ms 20000)}" -c 300
is "$RC/$OUT" "3/sent 1; freed" "freed mid-flight: no done, the loop runs dry"

# the config's refusals, each naming its key
drive x '{"url":"https://127.0.0.1/x"}'
like "$RC/$OUT" '^2/parse error: notify\.sinks\.hook\.url: https is not supported' \
    "https is refused"
drive x '{"url":"ftp://h/x"}'
like "$RC/$OUT" '^2/parse error: notify\.sinks\.hook\.url: ' "ftp is refused"
drive x "{\"url\":\"$URL/ok\",\"retry\":3}"
like "$RC/$OUT" '^2/parse error: notify\.sinks\.hook\.retry: unknown key' \
    "an unknown key is refused"
drive x "{\"url\":\"$URL/ok\",\"timeout_ms\":-1}"
like "$RC/$OUT" '^2/parse error: notify\.sinks\.hook\.timeout_ms: ' \
    "a negative timeout is refused"
cp "$T_TMP/secret" "$T_TMP/open"
chmod 640 "$T_TMP/open"
drive x "{\"url\":\"$URL/ok\",\"secret_file\":\"$T_TMP/open\"}"
like "$RC/$OUT" '^2/parse error: notify\.sinks\.hook\.secret_file: .*mode 0600' \
    "a secret file of mode 0640 is refused"
ln -s "$T_TMP/secret" "$T_TMP/link"
drive x "{\"url\":\"$URL/ok\",\"secret_file\":\"$T_TMP/link\"}"
like "$RC/$OUT" '^2/parse error: notify\.sinks\.hook\.secret_file: .*symlink' \
    "a symlink to the secret is refused"
mkdir "$T_TMP/dir"
chmod 600 "$T_TMP/dir"
drive x "{\"url\":\"$URL/ok\",\"secret_file\":\"$T_TMP/dir\"}"
like "$RC/$OUT" '^2/parse error: notify\.sinks\.hook\.secret_file: ' \
    "a directory is refused"
drive x "{\"url\":\"$URL/ok\",\"secret_file\":\"$T_TMP/none\"}"
like "$RC/$OUT" '^2/parse error: notify\.sinks\.hook\.secret_file: .*No such' \
    "a missing secret file is refused"

t_done
