"""prov_chat.py: OpenAI Chat Completions for the stand-in (qwen through
OPENAI_BASE_URL, opencode through an @ai-sdk/openai-compatible provider).
Streaming (SSE chunks, then [DONE]) and plain JSON, with tool_calls."""
import json
import time

SHELL_TOOLS = ("run_shell_command", "bash", "shell", "Bash", "exec_command")


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


def _shell_tool(body):
    """The shell tool the CLI offered: (name, JSON schema of its args)."""
    tools = [t.get("function", t) for t in (body or {}).get("tools") or []]
    by_name = {t.get("name"): t for t in tools}
    for name in SHELL_TOOLS:
        if name in by_name:
            return name, by_name[name].get("parameters") or {}
    for t in tools:
        n = (t.get("name") or "").lower()
        if "shell" in n or "bash" in n:
            return t.get("name"), t.get("parameters") or {}
    return "bash", {}


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
    if turn["kind"] == "tool":
        name, schema = _shell_tool(body)
        call = {"id": turn["id"], "type": "function",
                "function": {"name": name, "arguments": json.dumps(shell_args(schema, turn["command"]))}}
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
    if turn["kind"] == "tool":
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
