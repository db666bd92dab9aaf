"""prov_gemini.py: the Gemini API (models/M:generateContent, and
:streamGenerateContent?alt=sse) as gemini-cli 0.61 speaks it through
@google/genai, plus countTokens, embedContent and model listing.
Turns come from the scenario; this module only shapes them."""

import json
import os
import re

import scenario

SHELL_NAMES = ("run_shell_command", "shell")
_METHOD = re.compile(r"/models/([^/:]+):([A-Za-z]+)$")


def match(method, path):
    """Any /v1*/models route: the calls and the listing."""
    return _METHOD.search(path) is not None or \
        re.search(r"/v1[a-z0-9]*/models/?$", path) is not None


def _text(parts):
    return "\n".join(p["text"] for p in parts or []
                     if isinstance(p, dict) and isinstance(p.get("text"), str)
                     and not p.get("thought"))


def _is_context(text):
    """gemini-cli sends its environment ("This is the Gemini CLI. We are
    setting up the context ...") as a first user turn; the scenario must see
    only what the caller typed."""
    return text.lstrip().startswith(("<session_context>", "<system-reminder>",
                                     "This is the Gemini CLI. We are "
                                     "setting up"))


def conversation(body):
    """user text, model text and functionResponse parts, in order."""
    conv = []
    if not isinstance(body, dict):
        return conv
    for c in body.get("contents") or []:
        if not isinstance(c, dict):
            continue
        role = "assistant" if c.get("role") == "model" else "user"
        texts = []
        for p in c.get("parts") or []:
            if not isinstance(p, dict):
                continue
            if isinstance(p.get("text"), str) and not p.get("thought"):
                if not (role == "user" and _is_context(p["text"])):
                    texts.append(p["text"])
            elif isinstance(p.get("functionResponse"), dict):
                if texts:
                    conv.append((role, "\n".join(texts)))
                    texts = []
                r = p["functionResponse"].get("response")
                out = r.get("output", r) if isinstance(r, dict) else r
                if isinstance(out, dict) and "error" in out and len(out) == 1:
                    out = out["error"]
                conv.append(("tool_result", out if isinstance(out, str)
                             else json.dumps(out)))
        if texts:
            conv.append((role, "\n".join(texts)))
    return conv


def _decls(body):
    for t in (body or {}).get("tools") or []:
        if isinstance(t, dict):
            for d in t.get("functionDeclarations") or []:
                if isinstance(d, dict):
                    yield d


def _shell_tool(body):
    """run_shell_command as declared; when the request declares tools but
    not that one (a read-only mode may withhold it), gemini's own."""
    if not isinstance(body, dict):
        return None
    byname = {d.get("name"): d for d in _decls(body)}
    if not byname:
        return None
    return next((byname[n] for n in SHELL_NAMES if n in byname),
                {"name": "run_shell_command"})


def _write_tool(body):
    """write_file as declared, or gemini's own (see above)."""
    byname = {d.get("name"): d for d in _decls(body)}
    return byname.get("write_file") or {"name": "write_file"}


def has_tools(body):
    return _shell_tool(body) is not None


def _shell_args(decl, command):
    """Arguments as the declaration's schema names them."""
    schema = decl.get("parametersJsonSchema") or decl.get("parameters") or {}
    props = schema.get("properties") or {}
    args = {"command": command}
    if "description" in props:
        args["description"] = "Run the requested command"
    return args


def _side_json(body):
    """gemini-cli's side queries ask for JSON (responseMimeType or a
    responseJsonSchema): the model router, the next-speaker check, loop
    detection.  Answer each so the turn ends without another call."""
    gc = body.get("generationConfig") or {}
    schema = gc.get("responseJsonSchema") or gc.get("responseSchema")
    if gc.get("responseMimeType") != "application/json" and not schema:
        return None
    props = (schema or {}).get("properties") or {}
    out = {}
    for k, v in props.items():
        typ = str((v or {}).get("type", "string")).lower()
        enum = (v or {}).get("enum")
        if k == "next_speaker":
            out[k] = "user"
        elif k == "model_choice":
            out[k] = enum[0] if enum else "flash"
        elif enum:
            out[k] = enum[0]
        elif typ in ("number", "integer"):
            out[k] = 0
        elif typ == "boolean":
            out[k] = False
        elif typ == "array":
            out[k] = []
        elif typ == "object":
            out[k] = {}
        else:
            out[k] = "mock"
    return json.dumps(out)


def _usage(body, out):
    inp = len(json.dumps(body.get("contents") or [])) // 4 + 1
    return {"promptTokenCount": inp, "candidatesTokenCount": out,
            "totalTokenCount": inp + out, "thoughtsTokenCount": 0,
            "cachedContentTokenCount": 0}


def _route(req):
    """(model, method) of a call path, or (None, None) for the listing."""
    m = _METHOD.search(req.path)
    return (m.group(1), m.group(2)) if m else (None, None)


def _side(req, model, method):
    """Routes that are not turns. True when answered."""
    body = req.body if isinstance(req.body, dict) else {}
    if model is None:
        req.send_json(200, {"models": [{
            "name": "models/gemini-2.5-flash", "displayName": "mock",
            "supportedGenerationMethods": ["generateContent",
                                           "streamGenerateContent",
                                           "countTokens"]}]})
        return True
    if method == "countTokens":
        n = len(json.dumps(body)) // 4 + 1
        req.send_json(200, {"totalTokens": n})
        return True
    if method in ("embedContent", "batchEmbedContents"):
        vec = {"values": [0.0] * 8}
        if method == "embedContent":
            req.send_json(200, {"embedding": vec})
        else:
            req.send_json(200, {"embeddings": [vec for _ in
                                               body.get("requests") or [1]]})
        return True
    return False


def reply(req, turn):
    """A candidate with one functionCall or the final text; SSE chunks for
    streamGenerateContent."""
    model, method = _route(req)
    if _side(req, model, method):
        return
    body = req.body if isinstance(req.body, dict) else {}
    side = _side_json(body)
    decl = _shell_tool(body)
    if side is not None and turn.get("kind") not in ("tool", "write"):
        parts_list = [[{"text": side}]]
    elif turn.get("kind") in ("tool", "write") and decl is not None:
        if turn["kind"] == "write":
            decl = _write_tool(body)
            args = scenario.write_args(
                decl["name"], decl.get("parametersJsonSchema") or
                decl.get("parameters"), turn["path"], turn["content"])
        else:
            args = _shell_args(decl, turn["command"])
        call = {"name": decl["name"], "args": args,
                # gemini-cli uses the id to pair the response with the call.
                "id": "%s_%s" % (turn.get("id") or "call",
                                 os.urandom(4).hex())}
        parts_list = [[{"functionCall": call}]]
    else:
        text = turn.get("text") or ""
        parts_list = [[{"text": text[i:i + 24]}]
                      for i in range(0, max(len(text), 1), 24)]
    out = sum(len(json.dumps(p)) for p in parts_list) // 4 + 1
    if method != "streamGenerateContent":
        parts = [p for chunk in parts_list for p in chunk]
        if parts and all("text" in p for p in parts):
            parts = [{"text": "".join(p["text"] for p in parts)}]
        req.send_json(200, _chunk(model, parts, "STOP", _usage(body, out)))
        return
    req.start_sse()
    for i, parts in enumerate(parts_list):
        last = i == len(parts_list) - 1
        req.sse(_chunk(model, parts, "STOP" if last else None,
                       _usage(body, out) if last else None))
    req.end()


def _chunk(model, parts, finish, usage):
    cand = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        cand["finishReason"] = finish
    resp = {"candidates": [cand], "modelVersion": model,
            "responseId": "mock-%s" % os.urandom(4).hex()}
    if usage:
        resp["usageMetadata"] = usage
    return resp


_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED",
           403: "PERMISSION_DENIED", 404: "NOT_FOUND",
           429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def error(req, status, message, retry_after, quota=False):
    """A google.rpc.Status body as generativelanguage.googleapis.com
    shapes it; 429 carries a RetryInfo detail and a retry-after header.
    quota: the free tier's per-day quota, RESOURCE_EXHAUSTED."""
    model, _ = _route(req)
    if quota:
        message = "You exceeded your current quota, please check your plan " \
            "and billing details. Quota exceeded for metric: " \
            "generativelanguage.googleapis.com/generate_content_free_tier_requests, " \
            "limit: 50"
    if status == 404 and not message:
        message = "models/%s is not found for API version v1beta, or is " \
            "not supported for generateContent." % (model or "?")
    err = {"code": status, "message": message,
           "status": _STATUS.get(status, "UNKNOWN")}
    headers = {}
    if status == 401:
        err["details"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                           "reason": "API_KEY_INVALID",
                           "domain": "googleapis.com"}]
    if retry_after is not None:
        headers["retry-after"] = str(retry_after)
        err["details"] = [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure",
             "violations": [{"quotaMetric": "generativelanguage.googleapis"
                             ".com/generate_content_free_tier_requests",
                             "quotaId": "GenerateRequests%sPerProject"
                             "PerModel-FreeTier" % ("PerDay" if quota else "PerMinute")}]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo",
             "retryDelay": "%ss" % retry_after}]
    # The API answers a failed stream call with a JSON array of errors.
    obj = {"error": err}
    if req.path.endswith(":streamGenerateContent"):
        obj = [obj]
    req.send_json(status, obj, headers)


def tool_names(body):
    """The names of the tools the CLI offered (for the log)."""
    return [d.get("name") for d in _decls(body)]
