"""prov_chat.py: OpenAI Chat Completions for the stand-in (qwen through
OPENAI_BASE_URL, opencode through an @ai-sdk/openai-compatible provider).
Streaming (SSE chunks, then [DONE]) and plain JSON, with tool_calls."""
import json
import time

import scenario

SHELL_TOOLS = ("run_shell_command", "bash", "shell", "Bash", "exec_command")
WRITE_TOOLS = ("write_file", "write")


def match(method, path):
    return method == "POST" and path.rstrip("/").endswith("/chat/completions")


def _text(content):
    """The text of a message content: a string or a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    out = []
    for part in content:
        if isinstance(part, dict):
            if isinstance(part.get("text"), str):
                out.append(part["text"])
        elif isinstance(part, str):
            out.append(part)
    return "\n".join(out)


def conversation(body):
    convo = []
    for m in (body or {}).get("messages") or []:
        role = m.get("role")
        if role == "user":
            convo.append(("user", _text(m.get("content"))))
        elif role == "assistant":
            text = _text(m.get("content"))
            for tc in m.get("tool_calls") or []:
                text += "\n[tool %s %s]" % (tc.get("function", {}).get("name"),
                                            tc.get("function", {}).get("arguments"))
            convo.append(("assistant", text))
        elif role == "tool":
            convo.append(("tool_result", _text(m.get("content"))))
    return convo


def has_tools(body):
    return bool((body or {}).get("tools"))


def _qwen_like(by_name):
    """qwen (gemini's tool names) rather than opencode: picks the name of
    a tool the CLI did not offer."""
    return any(n in by_name for n in ("run_shell_command", "read_file",
                                      "list_directory"))


def _shell_tool(body):
    """The shell tool the CLI offered: (name, JSON schema of its args);
    when none was, the one the CLI has when it may run commands."""
    tools = [t.get("function", t) for t in (body or {}).get("tools") or []]
    by_name = {t.get("name"): t for t in tools}
    for name in SHELL_TOOLS:
        if name in by_name:
            return name, by_name[name].get("parameters") or {}
    for t in tools:
        n = (t.get("name") or "").lower()
        if "shell" in n or "bash" in n:
            return t.get("name"), t.get("parameters") or {}
    if _qwen_like(by_name):
        return "run_shell_command", {}
    return "bash", {"properties": {"command": {}, "description": {}}}


def _write_tool(body):
    """The file-writing tool: (name, schema), offered or not (see above)."""
    tools = [t.get("function", t) for t in (body or {}).get("tools") or []]
    by_name = {t.get("name"): t for t in tools}
    for name in WRITE_TOOLS:
        if name in by_name:
            return name, by_name[name].get("parameters") or {}
    return ("write_file" if _qwen_like(by_name) else "write"), {}


def shell_args(schema, command):
    """Arguments for the shell tool, filled from its schema: the command
    goes in command (or cmd), other required fields get harmless values."""
    props = schema.get("properties") or {}
    args = {}
    key = "command" if "command" in props or not props else ("cmd" if "cmd" in props else "command")
    args[key] = command
    for name in schema.get("required") or []:
        if name in args:
            continue
        t = (props.get(name) or {}).get("type")
        if t == "boolean":
            args[name] = False
        elif t in ("integer", "number"):
            args[name] = 120000
        elif t == "array":
            args[name] = ["bash", "-lc", command]
        else:
            args[name] = "Run a shell command for the task"
    if "description" in props and "description" not in args:
        args["description"] = "Run a shell command for the task"
    return args


def _usage():
    return {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}


def reply(req, turn):
    body = req.body or {}
    model = body.get("model") or "mock-model"
    cid = "chatcmpl-mock-%d" % int(time.time() * 1000)
    base = {"id": cid, "created": int(time.time()), "model": model}
    if turn["kind"] in ("tool", "write"):
        if turn["kind"] == "tool":
            name, schema = _shell_tool(body)
            args = shell_args(schema, turn["command"])
        else:
            name, schema = _write_tool(body)
            args = scenario.write_args(name, schema, turn["path"], turn["content"])
        call = {"id": turn["id"], "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": turn["text"]}
        finish = "stop"
    if not body.get("stream"):
        obj = dict(base, object="chat.completion",
                   choices=[{"index": 0, "message": message, "finish_reason": finish}],
                   usage=_usage())
        req.send_json(200, obj)
        return
    req.start_sse()
    chunk = dict(base, object="chat.completion.chunk")
    if turn["kind"] in ("tool", "write"):
        tc = dict(call, index=0)
        req.sse(dict(chunk, choices=[{"index": 0, "delta": {"role": "assistant", "content": None,
                                                             "tool_calls": [tc]},
                                      "finish_reason": None}]))
    else:
        text = turn["text"]
        req.sse(dict(chunk, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""},
                                      "finish_reason": None}]))
        step = max(1, len(text) // 3)
        for i in range(0, len(text), step):
            req.sse(dict(chunk, choices=[{"index": 0, "delta": {"content": text[i:i + step]},
                                          "finish_reason": None}]))
    req.sse(dict(chunk, choices=[{"index": 0, "delta": {}, "finish_reason": finish}]))
    req.sse(dict(chunk, choices=[], usage=_usage()))
    req.sse("[DONE]")
    req.end()


def error(req, status, message, retry_after, quota=False):
    if quota:  # OpenAI's "out of credit": 429, type insufficient_quota
        headers = {"retry-after": str(retry_after)} if retry_after else None
        req.send_json(429, {"error": {
            "message": "You exceeded your current quota, please check your plan and billing details.",
            "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}}, headers)
        return
    kind = {401: "invalid_request_error", 404: "invalid_request_error",
            429: "rate_limit_exceeded", 500: "server_error"}.get(status, "api_error")
    code = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}.get(status)
    headers = {"retry-after": str(retry_after)} if retry_after else None
    req.send_json(status, {"error": {"message": message, "type": kind, "param": None, "code": code}},
                  headers)


def tool_names(body):
    """The names of the tools the CLI offered (for the log)."""
    return [t.get("function", t).get("name") for t in (body or {}).get("tools") or []
            if isinstance(t, dict)]
