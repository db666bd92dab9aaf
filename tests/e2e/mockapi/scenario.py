"""scenario.py: what the stand-in model "says", independent of any wire format.

Scenario.decide(convo, has_tools) looks at the conversation a provider
module parsed (a list of (kind, text), kind "user" | "assistant" |
"tool_result") and returns the next turn:
    {"kind": "tool", "command": str, "id": str}   run one shell command
    {"kind": "write", "path": str, "content": str, "id": str}
                                                  the CLI's own file-writing
                                                  tool (write_file, Write,
                                                  apply_patch ...)
    {"kind": "text", "text": str}                 the final answer
Directives in the LAST user message win: each line `MOCK-RUN: cmd` (a
shell command) or `MOCK-WRITE: PATH :: TEXT` (write TEXT, \\n for a newline,
to the file PATH with the write tool) is one tool call, in order;
`MOCK-ANSWER: text` (\\n for a newline, {output} for the last tool output)
is the answer after them.  A call is made whether or not the CLI offers
that tool (a read-only CLI may withhold it): the provider then names
the tool the CLI has when it may write.  Otherwise the role (from "You
are the ROLE worker" in a user message) picks its script: a command,
then an answer (answer_failed when failed_if matches the tool output).
A role's "ask" (a --script key) is its answer to a conversation with no
assistant turn yet (a CLARIFICATION_NEEDED block): only the session
resumed with the answer, which carries that turn, goes on to the script.
"""
import itertools
import json
import os
import re
import threading

ROLE_RE = re.compile(r"You are the (init|develop|debug|validate|complete) worker")
# skill-tune's prompts (supervisor/workflows/skill-tune/tunerun.c): a
# diagnosis role names its category, the fix role its job
TUNE_DIAG_RE = re.compile(r"You diagnose the Claude Code skill in .*? for (\w+) problems only")
TUNE_FIX_RE = re.compile(r"You propose fixes for the Claude Code skill")

RESULT = ("WORKER_RESULT:\n- action: {action}\n- status: {status}\n"
          "- summary: {summary}\n- files_changed: {files}\n"
          "- next_suggestion: {next}\n- loop_back_to: {back}\n"
          "DETAILED_OUTPUT:\n{detail}\n")


def block(action, status, summary, files="[]", nxt="null", back="null", detail=""):
    """A WORKER_RESULT block as the supervisor's prompts ask for it."""
    return RESULT.format(action=action, status=status, summary=summary,
                         files=files, next=nxt, back=back, detail=detail)


# The built-in script fits the e2e test project (examples/calc copied into
# a git repository): develop really fixes the subtraction, validate runs
# the real suite once and hands its TAP back in DETAILED_OUTPUT.  In a
# parallel step validate works in its own clean tree of the base (issue
# 27), so it must not wait for develop's edit: it sees it only once the
# merge queue has merged it, in the next iteration.
VALIDATE_CMD = "sh tests/run.sh"
DEFAULT_SCRIPT = {
    "init": {
        "command": "ls; sh tests/run.sh",
        "answer": "I looked at the project: calc.sh and its TAP suite tests/run.sh.\n\n"
                  + block("init", "success", "calc.sh has a failing subtraction test",
                          nxt="develop",
                          detail="1. Fix the '-' branch of calc.sh (it computes b - a)\n"
                                 "2. Run sh tests/run.sh"),
    },
    "develop": {
        "command": ("sed \"s/expr='b - a'/expr='a - b'/\" calc.sh >calc.sh.new && "
                    "chmod 755 calc.sh.new && mv calc.sh.new calc.sh && "
                    "grep -n \"expr='a - b'\" calc.sh"),
        "answer": "I fixed the subtraction in calc.sh.\n\n"
                  + block("develop", "success", "fixed subtraction in calc.sh (it computed b - a)",
                          files='["calc.sh"]', nxt="validate",
                          detail="The '-' branch swapped its operands; it now computes a - b."),
        "answer_failed": "I could not change calc.sh.\n\n"
                         + block("develop", "failed", "could not fix calc.sh", nxt="debug",
                                 detail="{output}"),
        "failed_if": r"No such file|cannot|denied|[Rr]ejected|not allowed|approval",
    },
    "debug": {
        "command": "sh calc.sh 5 - 3; grep -n 'expr=' calc.sh",
        "answer": "The subtraction swaps its operands.\n\n"
                  + block("debug", "success", "H1 confirmed: subtraction swaps its operands",
                          nxt="develop",
                          detail='[{"description": "subtraction swaps its operands", '
                                 '"testable_condition": "calc.sh 5 - 3 prints -2", '
                                 '"logging_point": "calc.sh, the - branch", '
                                 '"evidence_criteria": {"confirm": "5 - 3 gives -2", '
                                 '"reject": "5 - 3 gives 2"}, "likelihood": 1, '
                                 '"status": "confirmed"}]'),
    },
    "validate": {
        "command": VALIDATE_CMD,
        "failed_if": r"(?m)^not ok",
        "answer": "All tests pass.\n\n"
                  + block("validate", "success", "all tests pass", nxt="complete",
                          detail="{output}"),
        "answer_failed": "Some tests fail.\n\n"
                         + block("validate", "failed", "tests fail", nxt="develop",
                                 back="develop", detail="{output}"),
    },
    "complete": {
        "command": "sh tests/run.sh >/dev/null && echo the suite passes",
        "answer": "The loop is done.\n\n"
                  + block("complete", "success", "calculator fixed; the suite passes",
                          detail="develop fixed the '-' branch of calc.sh; validate ran the suite."),
    },
    "agent": {
        "command": "pwd; ls",
        "answer": "Done: {output}",
    },
    # skill-tune on the e2e skill (skill/ in the project): context looks
    # for the inlining line for real; "answer_failed" is its finding
    "tune-context_explosion": {
        "command": "grep -n 'cat src' skill/phases/*.md || echo no inlining",
        "failed_if": r"cat src",
        "answer": "Nothing inlines files.\n\n"
                  + block("context", "success", "no context problem", detail=(
                      '{"status": "completed", "issues_found": 0, "severity": "none", '
                      '"execution_time_ms": 5, "details": {"patterns_checked": ["CTX-001"], '
                      '"patterns_matched": [], "evidence": [], "recommendations": []}, '
                      '"issues": []}')),
        "answer_failed": "A phase pastes whole files into prompts.\n\n"
                  + block("context", "success", "one context problem", detail=(
                      '{"status": "completed", "issues_found": 1, "severity": "high", '
                      '"execution_time_ms": 5, "details": {"patterns_checked": ["CTX-001"], '
                      '"patterns_matched": ["CTX-001"], "evidence": [{"file": '
                      '"phases/01-a.md", "line": 1, "pattern": "CTX-001", "context": '
                      '"paste $(cat src/*) into every prompt", "severity": "high"}], '
                      '"recommendations": ["pass paths"]}, "issues": [{"type": '
                      '"context_explosion", "severity": "high", "location": {"file": '
                      '"phases/01-a.md", "line_start": 1}, "description": '
                      '"a phase inlines whole files (CTX-001)"}]}')),
    },
    "tune-fix": {
        "command": "ls skill/phases",
        "answer": "One fix.\n\n"
                  + block("fix", "success", "one fix proposed", detail=(
                      '{"fixes": [{"id": "FIX-001", "issue_ids": ["ISS-001"], '
                      '"strategy": "lazy_loading", "description": "pass paths", '
                      '"rationale": "files in prompts explode the context", '
                      '"changes": [{"file": "phases/01-a.md", "action": "modify", '
                      '"old_content": "paste $(cat src/*) into every prompt", '
                      '"new_content": "pass the paths of src/ files"}], "risk": "low", '
                      '"estimated_impact": "smaller prompts", '
                      '"verification_steps": ["diagnose context again"]}]}')),
    },
}

_ids = itertools.count(1)
_ids_lock = threading.Lock()


def next_id():
    """A tool-call id unique in this server's life (CLIs key results by it)."""
    with _ids_lock:
        n = next(_ids)
    return "call_mock_%d_%d" % (os.getpid(), n)


def role_of(convo):
    """The role named by the first user message that names one, else agent."""
    for kind, text in convo:
        if kind == "user" and text:
            m = ROLE_RE.search(text)
            if m:
                return m.group(1)
            m = TUNE_DIAG_RE.search(text)
            if m:
                return "tune-" + m.group(1)
            if TUNE_FIX_RE.search(text):
                return "tune-fix"
    return "agent"


def directives(text):
    """The tool calls (MOCK-RUN, MOCK-WRITE, as turns without an id) and
    the MOCK-ANSWER text of one user message."""
    runs, answer = [], None
    for line in (text or "").splitlines():
        s = line.strip()
        if s.startswith("MOCK-RUN:"):
            runs.append({"kind": "tool", "command": s[len("MOCK-RUN:"):].strip()})
        elif s.startswith("MOCK-WRITE:"):
            path, _, content = s[len("MOCK-WRITE:"):].partition("::")
            runs.append({"kind": "write", "path": path.strip(),
                         "content": content.strip().replace("\\n", "\n")})
        elif s.startswith("MOCK-ANSWER:"):
            answer = s[len("MOCK-ANSWER:"):].strip().replace("\\n", "\n")
    return runs, answer


def fill(answer, output):
    """Put the last tool output into an answer ({output}); no other braces
    are touched, so JSON in an answer stays as it is."""
    return answer.replace("{output}", (output or "").rstrip("\n"))


class Scenario:
    def __init__(self, script_path=None):
        self.script = dict(DEFAULT_SCRIPT)
        if script_path:
            with open(script_path) as f:
                for role, spec in json.load(f).items():
                    merged = dict(self.script.get(role, {}))
                    merged.update(spec)
                    self.script[role] = merged

    def decide(self, convo, has_tools):
        """The next turn for this conversation (see the module comment)."""
        last_user = None
        for i in range(len(convo) - 1, -1, -1):
            if convo[i][0] == "user":
                last_user = i
                break
        if last_user is None:
            return {"kind": "text", "text": "Hello from the stand-in model."}
        after = convo[last_user + 1:]
        results = [t for k, t in after if k == "tool_result"]
        output = results[-1] if results else ""
        runs, answer = directives(convo[last_user][1])
        if not has_tools:
            # Title generation, summaries, quota probes: a short text.
            return {"kind": "text", "text": answer if answer and not runs else "Mock session"}
        if runs or answer is not None:
            if len(results) < len(runs):
                return dict(runs[len(results)], id=next_id())
            return {"kind": "text", "text": fill(answer if answer is not None
                                                 else "Done.\n{output}", output)}
        spec = self.script.get(role_of(convo)) or self.script["agent"]
        if "ask" in spec and not any(k == "assistant" for k, _ in convo[:last_user]):
            # the role's first turn asks (a clarification); its answer,
            # a later user turn of the same conversation, goes on below
            return {"kind": "text", "text": spec["ask"]}
        if not results:
            return {"kind": "tool", "command": spec["command"], "id": next_id()}
        text = spec.get("answer", "Done.")
        rx = spec.get("failed_if")
        if rx and "answer_failed" in spec and re.search(rx, output):
            text = spec["answer_failed"]
        return {"kind": "text", "text": fill(text, output)}


# The file-writing tools of the CLIs and where each takes the path:
# opencode write(filePath), qwen and gemini write_file(file_path), claude
# Write(file_path).  codex has apply_patch (prov_responses.py).
PATH_KEYS = ("file_path", "filePath", "absolute_path", "path")


def write_args(name, schema, path, content):
    """Arguments for a write tool: the path under the key its schema has
    (or the CLI's own when the tool was not offered), and the content."""
    props = (schema or {}).get("properties") or {}
    key = next((k for k in PATH_KEYS if k in props),
               "filePath" if name == "write" else "file_path")
    args = {key: path, "content": content}
    if "description" in props:
        args["description"] = "Write the requested file"
    return args
