"""prov_responses.py: the OpenAI Responses API (POST .../responses, SSE, and
.../responses/compact) as codex 0.169 speaks it.  The model list (GET
/v1/models) is prov_anthropic.py's.  Turns come from the scenario; this
module only shapes them."""

import json
import os
import time

# Names codex gives its shell tool, best first; the request's list decides.
SHELL_NAMES = ("shell", "shell_command", "exec_command", "local_shell",
               "container.exec")
# User items codex adds itself (environment, AGENTS.md, instructions).
CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>",
                    "# AGENTS.md instructions", "<permissions instructions>",
                    "<INSTRUCTIONS>")


def match(method, path):
    """The Responses routes codex calls."""
    p = path.rstrip("/")
    return p.endswith("/responses") or p.endswith("/responses/compact")


def _text_of(content):
    """Input content is a string or a list of input_text/output_text parts."""
    if isinstance(content, str):
        return content
    out = []
    for part in content or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(part["text"])
    return "\n".join(out)


def _is_context(text):
    """codex sends its environment and AGENTS.md as user messages; the
    scenario must see only what the caller typed."""
    return text.lstrip().startswith(CONTEXT_PREFIXES)


def conversation(body):
    """The user, assistant and tool_result items of input, in order."""
    conv = []
    if not isinstance(body, dict):
        return conv
    items = body.get("input")
    if isinstance(items, str):
        return [("user", items)]
    for it in items or []:
        if not isinstance(it, dict):
            continue
        typ = it.get("type", "message")
        if typ == "message":
            role = it.get("role")
            text = _text_of(it.get("content"))
            if role == "user" and not _is_context(text):
                conv.append(("user", text))
            elif role == "assistant":
                conv.append(("assistant", text))
        elif typ in ("function_call_output", "custom_tool_call_output",
                     "local_shell_call_output"):
            out = it.get("output")
            if isinstance(out, dict):
                out = out.get("content") or json.dumps(out)
            elif isinstance(out, list):
                out = _text_of(out)
            conv.append(("tool_result", out if isinstance(out, str) else
                         json.dumps(out)))
    return conv


def has_tools(body):
    """A shell-like tool is on offer."""
    return _shell_tool(body) is not None


def apply_patch_command(path, content):
    """codex's own file-writing tool as a model without apply_patch in its
    tool list calls it (mock-model has no metadata, so codex offers none):
    an apply_patch heredoc through the shell tool, which codex takes out
    of the shell and applies itself, under its sandbox policy."""
    lines = "".join("+%s\n" % l for l in content.split("\n"))
    return ("apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: %s\n%s"
            "*** End Patch\nEOF\n" % (path, lines))


def _tool_name(t):
    if t.get("type") == "local_shell":
        return "local_shell"
    return t.get("name") or (t.get("function") or {}).get("name")


def _shell_tool(body):
    """The tool of the request that runs a command, as (name, tool dict)."""
    if not isinstance(body, dict):
        return None
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    byname = {}
    for t in tools:
        n = _tool_name(t)
        if n:
            byname.setdefault(n, t)
    return next(((n, byname[n]) for n in SHELL_NAMES if n in byname), None)


def _schema(tool):
    p = tool.get("parameters")
    if p is None:
        p = (tool.get("function") or {}).get("parameters")
    return p if isinstance(p, dict) else {}


def _shell_args(tool, command):
    """Arguments as this tool's JSON schema wants them: command as an argv
    array (shell) or a string (shell_command), or cmd (exec_command)."""
    props = _schema(tool).get("properties") or {}
    args = {}
    if "cmd" in props and "command" not in props:
        args["cmd"] = command
    else:
        typ = (props.get("command") or {}).get("type")
        if typ == "array":
            args["command"] = ["bash", "-lc", command]
        else:
            args["command"] = command
    if "timeout_ms" in props:
        args["timeout_ms"] = 60000
    if "yield_time_ms" in props:    # a long command is waited for
        args["yield_time_ms"] = 300000
    return args


def _usage(body, out_text):
    inp = len(json.dumps(body.get("input") or "")) // 4 + 1
    out = len(out_text) // 4 + 1
    return {"input_tokens": inp,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": out,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": inp + out}


def reply(req, turn):
    """One streamed response: a shell call or the final text."""
    body = req.body if isinstance(req.body, dict) else {}
    path = req.path.rstrip("/")
    if path.endswith("/compact"):
        req.send_json(200, {"output": []})
        return
    model = body.get("model") or "mock-model"
    rid = "resp_mock_%d" % int(time.time() * 1000)
    if turn.get("kind") == "write":
        turn = dict(turn, kind="tool",
                    command=apply_patch_command(turn["path"], turn["content"]))
    if turn.get("kind") == "tool" and _shell_tool(body) is not None:
        name, tool = _shell_tool(body)
        # Unique even across stand-in restarts: a resumed thread keeps the
        # call ids of earlier turns.
        cid = "%s_%s" % (turn.get("id") or "call", os.urandom(4).hex())
        if name == "local_shell":
            item = {"type": "local_shell_call", "id": "lsh_" + cid,
                    "call_id": cid, "status": "completed",
                    "action": {"type": "exec",
                               "command": ["bash", "-lc", turn["command"]]}}
        else:
            item = {"type": "function_call", "id": "fc_" + cid,
                    "call_id": cid, "name": name, "status": "completed",
                    "arguments": json.dumps(_shell_args(tool,
                                                        turn["command"]))}
        out_text = item.get("arguments", "")
    else:
        text = turn.get("text") or ""
        item = {"type": "message", "id": "msg_" + rid, "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text,
                             "annotations": []}]}
        out_text = text
    resp = {"id": rid, "object": "response", "created_at": int(time.time()),
            "status": "in_progress", "model": model, "output": []}
    if body.get("stream") is False:
        resp.update(status="completed", output=[item],
                    usage=_usage(body, out_text))
        req.send_json(200, resp)
        return
    req.start_sse()
    req.sse({"type": "response.created", "response": resp},
            event="response.created")
    req.sse({"type": "response.in_progress", "response": resp},
            event="response.in_progress")
    added = dict(item, status="in_progress")
    if item["type"] == "message":
        added["content"] = []
    elif item["type"] == "function_call":
        added["arguments"] = ""
    req.sse({"type": "response.output_item.added", "output_index": 0,
             "item": added}, event="response.output_item.added")
    if item["type"] == "message":
        part = {"type": "output_text", "text": "", "annotations": []}
        req.sse({"type": "response.content_part.added", "item_id": item["id"],
                 "output_index": 0, "content_index": 0, "part": part},
                event="response.content_part.added")
        for chunk in _chunks(out_text):
            req.sse({"type": "response.output_text.delta",
                     "item_id": item["id"], "output_index": 0,
                     "content_index": 0, "delta": chunk},
                    event="response.output_text.delta")
        req.sse({"type": "response.output_text.done", "item_id": item["id"],
                 "output_index": 0, "content_index": 0, "text": out_text},
                event="response.output_text.done")
        req.sse({"type": "response.content_part.done",
                 "item_id": item["id"], "output_index": 0,
                 "content_index": 0, "part": dict(part, text=out_text)},
                event="response.content_part.done")
    elif item["type"] == "function_call":
        req.sse({"type": "response.function_call_arguments.delta",
                 "item_id": item["id"], "output_index": 0,
                 "delta": item["arguments"]},
                event="response.function_call_arguments.delta")
        req.sse({"type": "response.function_call_arguments.done",
                 "item_id": item["id"], "output_index": 0,
                 "arguments": item["arguments"]},
                event="response.function_call_arguments.done")
    req.sse({"type": "response.output_item.done", "output_index": 0,
             "item": item}, event="response.output_item.done")
    done = dict(resp, status="completed", output=[item],
                usage=_usage(body, out_text))
    req.sse({"type": "response.completed", "response": done},
            event="response.completed")
    req.end()


def _chunks(text, n=24):
    """Several deltas, as a real stream has, so a parser joining them is
    exercised."""
    return [text[i:i + n] for i in range(0, len(text), n)] or [""]


_ERR = {401: ("invalid_request_error", "invalid_api_key"),
        403: ("invalid_request_error", "unsupported_country_region_territory"),
        404: ("invalid_request_error", "model_not_found"),
        429: ("requests", "rate_limit_exceeded"),
        500: ("server_error", None),
        503: ("server_error", None)}


def error(req, status, message, retry_after, quota=False):
    """An error body as api.openai.com shapes it; quota: 429 with type
    insufficient_quota (no Retry-After unless --retry-after says)."""
    if quota:
        headers = {"x-request-id": "req_mock"}
        if retry_after is not None:
            headers["retry-after"] = str(retry_after)
        req.send_json(429, {"error": {
            "message": "You exceeded your current quota, please check your plan and billing details.",
            "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}}, headers)
        return
    typ, code = _ERR.get(status, ("server_error", None))
    if status == 401 and not message:
        message = "Incorrect API key provided."
    if status == 404 and not message:
        message = "The model `%s` does not exist or you do not have access " \
            "to it." % ((req.body or {}).get("model") or "?")
    headers = {"x-request-id": "req_mock"}
    if retry_after is not None:
        headers["retry-after"] = str(retry_after)
        headers["retry-after-ms"] = str(int(float(retry_after) * 1000))
        headers["x-ratelimit-reset-requests"] = "%ss" % retry_after
    req.send_json(status, {"error": {"message": message, "type": typ,
                                     "param": None, "code": code}}, headers)


def tool_names(body):
    """The names of the tools the CLI offered (for the log)."""
    return [_tool_name(t) or t.get("type") for t in (body or {}).get("tools") or []
            if isinstance(t, dict)]
