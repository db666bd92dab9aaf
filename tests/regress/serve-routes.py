#!/usr/bin/env python3
# serve-routes.py PORT TOKEN SERVE_C: every row of serve's route table
# (read from serve.c, as rebind-probe.py reads it) requested with our
# Host and the token: the router finds each (never its own 404 "no route
# for", never 405), and a row serving one of several ops (SOP_*) reaches
# the verb its op names.  Prints "ok 1 DESC" or "ok 0 DESC" lines
# (t_probe_out).
import http.client
import json
import re
import sys

PORT, TOKEN, SERVE_C = int(sys.argv[1]), sys.argv[2], sys.argv[3]
ROW = re.compile(r'\{\s*HTTP_([A-Z]+),\s*"([^"]+)",\s*(\w+),\s*(\w+),'
                 r'\s*(SOP_\w+)\s*\}')
# what the verb an agent op names says of an empty request on agent "x"
AGENT_SAYS = {"SOP_LIST": '"agents"', "SOP_SPAWN": "spawn needs",
              "SOP_WAIT": "wait needs", "SOP_RESULT": "unknown agent 'x'",
              "SOP_INPUT": "send_input needs", "SOP_CLOSE": "unknown agent 'x'"}


def ask(method, path, body):
    """One request; (status, text); a stream is cut after its head."""
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=20)
    hdr = {"Authorization": "Bearer " + TOKEN}
    if body is not None:
        hdr["Content-Type"] = "application/json"
    if path == "/mcp":
        hdr["Accept"] = "application/json, text/event-stream"
    c.request(method, path, body=body, headers=hdr)
    r = c.getresponse()
    if "event-stream" in (r.getheader("Content-Type") or ""):
        c.close()
        return r.status, ""
    text = r.read().decode("utf-8", "replace")
    c.close()
    return r.status, text


def say(cond, desc):
    """One check for t_probe_out: "ok 1 DESC" passed, "ok 0 DESC" failed."""
    print("ok %d %s" % (1 if cond else 0, desc))
    sys.stdout.flush()


rows = ROW.findall(open(SERVE_C).read())
say(len(rows) >= 30, "serve.c's table read: %d rows" % len(rows))
for method, pat, fn, flags, op in rows:
    path = re.sub(r":[A-Za-z]+", "x", pat)
    body = "{}" if method in ("POST", "PUT", "PATCH") else None
    st, text = ask(method, path, body)
    say(st != 405 and not (st == 404 and "no route for" in text),
        "%s %s reaches %s (%d)" % (method, pat, fn, st))
    if op in AGENT_SAYS:
        say(AGENT_SAYS[op] in text, "%s %s: op %s calls its verb (%s)" % (
            method, pat, op, text.strip()[:80]))
