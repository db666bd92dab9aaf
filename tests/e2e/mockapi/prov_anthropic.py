"""prov_anthropic.py: the Anthropic Messages API (POST /v1/messages, SSE when
stream is true) as Claude Code 2.1 speaks it, plus its side routes
(count_tokens, model listing).  Turns come from the scenario."""

import json
import os
import time

import scenario

SHELL_NAMES = ("Bash", "bash", "Shell")


def match(method, path):
    """The Messages API and the routes Claude Code calls next to it."""
    p = path.rstrip("/")
    return p.endswith("/v1/messages") or p.endswith("/messages/count_tokens") \
        or p.endswith("/v1/models") or "/v1/models/" in p


def _blocks(content):
    """Content is a string or a list of typed blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _is_context(text):
    """Claude Code adds reminders and command echoes as user text blocks;
    the scenario must see only what the caller typed."""
    return text.lstrip().startswith(("<system-reminder>", "<command-name>",
                                     "<local-command", "Caveat: "))


def _result_text(c):
    if isinstance(c, str):
        return c
    return "\n".join(b.get("text", "") for b in _blocks(c)
                     if b.get("type") == "text")


def conversation(body):
    """user text, assistant text and tool_result blocks, in order."""
    conv = []
    if not isinstance(body, dict):
        return conv
    for msg in body.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        texts = []
        for b in _blocks(msg.get("content")):
            typ = b.get("type")
            if typ == "text" and isinstance(b.get("text"), str):
                if role == "user" and _is_context(b["text"]):
                    continue
                texts.append(b["text"])
            elif typ == "tool_result":
                if texts:
                    conv.append((role, "\n".join(texts)))
                    texts = []
                conv.append(("tool_result", _result_text(b.get("content"))))
        if texts and role in ("user", "assistant"):
            conv.append((role, "\n".join(texts)))
    return conv


def _tools(body):
    if not isinstance(body, dict):
        return {}
    return {t.get("name"): t for t in body.get("tools") or []
            if isinstance(t, dict)}


def _shell_tool(body):
    """The Bash tool of the request; when the request has tools but not
    Bash (a read-only mode may withhold it), Claude Code's own Bash."""
    tools = _tools(body)
    if not tools:
        return None
    return next((tools[n] for n in SHELL_NAMES if n in tools),
                {"name": "Bash", "input_schema": {"properties": {
                    "command": {}, "description": {}}}})


def _write_tool(body):
    """The Write tool of the request, or Claude Code's own (see above)."""
    return _tools(body).get("Write") or {"name": "Write", "input_schema": {}}


def has_tools(body):
    return bool(_tools(body))


def _shell_input(tool, command):
    """Input as the tool's input_schema wants it (Bash: command)."""
    props = (tool.get("input_schema") or {}).get("properties") or {}
    inp = {"command": command}
    if "cmd" in props and "command" not in props:
        inp = {"cmd": command}
    if "description" in props:
        inp["description"] = "Run the requested command"
    return inp


def _usage(body, out):
    inp = len(json.dumps(body.get("messages") or [])) // 4 + 1
    return {"input_tokens": inp, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0, "output_tokens": out}


def _side(req):
    """Routes that are not a turn: token counting, model listing.
    Returns True when it answered."""
    p = req.path.rstrip("/")
    body = req.body if isinstance(req.body, dict) else {}
    if p.endswith("/count_tokens"):
        n = len(json.dumps(body.get("messages") or [])) // 4 + 1
        req.send_json(200, {"input_tokens": n})
        return True
    if "/v1/models" in p:
        # This module sorts first, so its listing serves every CLI: the
        # Anthropic fields, OpenAI's (object, created, owned_by) and the
        # "models" key codex reads.
        ids = ("claude-mock", "mock-model")
        data = [{"type": "model", "object": "model", "id": i,
                 "display_name": i, "created_at": "2025-01-01T00:00:00Z",
                 "created": 1735689600, "owned_by": "mock"} for i in ids]
        if p.endswith("/v1/models"):
            req.send_json(200, {"object": "list", "data": data,
                                "has_more": False, "first_id": ids[0],
                                "last_id": ids[-1], "models": []})
        else:
            req.send_json(200, dict(data[0], id=p.rsplit("/", 1)[1],
                                    display_name=p.rsplit("/", 1)[1]))
        return True
    return False


def _fill_schema(schema):
    """A small value valid for a JSON schema: Claude Code's side queries
    (the session title) ask for structured output and parse it."""
    typ = schema.get("type")
    if "enum" in schema:
        return schema["enum"][0]
    if typ == "object":
        return {k: _fill_schema(v) for k, v in
                (schema.get("properties") or {}).items()}
    if typ == "array":
        return []
    if typ in ("integer", "number"):
        return 0
    if typ == "boolean":
        return False
    return "Mock session"


def reply(req, turn):
    """One message, streamed when asked: a Bash tool_use or final text."""
    if _side(req):
        return
    body = req.body if isinstance(req.body, dict) else {}
    fmt = (body.get("output_config") or {}).get("format") or {}
    if fmt.get("type") == "json_schema" and turn.get("kind") not in ("tool", "write"):
        turn = {"kind": "text",
                "text": json.dumps(_fill_schema(fmt.get("schema") or {}))}
    model = body.get("model") or "claude-mock"
    mid = "msg_mock_%d" % int(time.time() * 1000)
    tool = _shell_tool(body)
    if turn.get("kind") in ("tool", "write") and tool is not None:
        # A resumed session keeps old ids: a repeat would make Claude Code
        # pair the result with the old call ("[Tool use interrupted]").
        uniq = "%s_%s" % (turn.get("id") or "call", os.urandom(4).hex())
        if turn["kind"] == "write":
            tool = _write_tool(body)
            inp = scenario.write_args(tool["name"], tool.get("input_schema"),
                                      turn["path"], turn["content"])
        else:
            inp = _shell_input(tool, turn["command"])
        block = {"type": "tool_use", "id": "toolu_" + uniq,
                 "name": tool["name"], "input": inp}
        stop = "tool_use"
        out = len(json.dumps(block["input"])) // 4 + 1
    else:
        block = {"type": "text", "text": turn.get("text") or ""}
        stop = "end_turn"
        out = len(block["text"]) // 4 + 1
    usage = _usage(body, out)
    msg = {"id": mid, "type": "message", "role": "assistant", "model": model,
           "content": [block], "stop_reason": stop, "stop_sequence": None,
           "usage": usage}
    headers = {"request-id": "req_" + mid, "anthropic-organization-id": "mock"}
    if not body.get("stream"):
        req.send_json(200, msg, headers)
        return
    req.start_sse(200, headers)
    start = dict(msg, content=[], stop_reason=None,
                 usage=dict(usage, output_tokens=1))
    req.sse({"type": "message_start", "message": start}, event="message_start")
    if block["type"] == "text":
        req.sse({"type": "content_block_start", "index": 0,
                 "content_block": {"type": "text", "text": ""}},
                event="content_block_start")
        req.sse({"type": "ping"}, event="ping")
        text = block["text"]
        for i in range(0, max(len(text), 1), 24):
            req.sse({"type": "content_block_delta", "index": 0,
                     "delta": {"type": "text_delta", "text": text[i:i + 24]}},
                    event="content_block_delta")
    else:
        req.sse({"type": "content_block_start", "index": 0,
                 "content_block": dict(block, input={})},
                event="content_block_start")
        js = json.dumps(block["input"])
        half = len(js) // 2
        for part in (js[:half], js[half:]):
            req.sse({"type": "content_block_delta", "index": 0,
                     "delta": {"type": "input_json_delta",
                               "partial_json": part}},
                    event="content_block_delta")
    req.sse({"type": "content_block_stop", "index": 0},
            event="content_block_stop")
    req.sse({"type": "message_delta",
             "delta": {"stop_reason": stop, "stop_sequence": None},
             "usage": {"output_tokens": out}}, event="message_delta")
    req.sse({"type": "message_stop"}, event="message_stop")
    req.end()


_ERR = {400: "invalid_request_error", 401: "authentication_error",
        403: "permission_error", 404: "not_found_error",
        413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
        529: "overloaded_error"}


def error(req, status, message, retry_after, quota=False):
    """An error body as api.anthropic.com shapes it.  quota: a plan's
    usage limit, told by the unified rate-limit headers (status rejected,
    the reset as a Unix epoch, the limit that was hit)."""
    if quota:
        reset = int(time.time()) + (retry_after or 3600)
        headers = {"request-id": "req_mock_error",
                   "anthropic-ratelimit-unified-status": "rejected",
                   "anthropic-ratelimit-unified-reset": str(reset),
                   "anthropic-ratelimit-unified-representative-claim": "five_hour",
                   "anthropic-ratelimit-unified-5h-utilization": "1.0",
                   "anthropic-ratelimit-unified-5h-reset": str(reset)}
        if retry_after is not None:
            headers["retry-after"] = str(retry_after)
        req.send_json(429, {"type": "error",
                            "error": {"type": "rate_limit_error",
                                      "message": "mock usage limit reached for this plan"},
                            "request_id": "req_mock_error"}, headers)
        return
    if status == 401 and not message:
        message = "invalid x-api-key"
    if status == 404 and not message:
        message = "model: %s" % ((req.body or {}).get("model") or "?")
    # No x-should-retry: the SDK would obey it over Claude Code's own policy.
    headers = {"request-id": "req_mock_error"}
    if retry_after is not None:
        headers["retry-after"] = str(retry_after)
        headers["anthropic-ratelimit-requests-remaining"] = "0"
    req.send_json(status, {"type": "error",
                           "error": {"type": _ERR.get(status, "api_error"),
                                     "message": message},
                           "request_id": "req_mock_error"}, headers)


def tool_names(body):
    """The names of the tools the CLI offered (for the log)."""
    return [t.get("name") for t in (body or {}).get("tools") or []
            if isinstance(t, dict)]
