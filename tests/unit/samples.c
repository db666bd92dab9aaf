/*
 * samples.c: builds sample messages with every field set, including text
 * outside ASCII and JSON of every type, so round trips cover the table.
 */
#include <config.h>

#include "samples.h"
#include "xmalloc.h"

/* Fill m (which the caller clears) with a sample of the given type. */
void
sample_msg(enum msg_type type, struct msg *m)
{
	msg_init(m, type);
	switch (type) {
	case MSG_HELLO:
		m->u.hello.pid = 4242;
		m->u.hello.index = 7;
		m->u.hello.role = xstrdup("develop");
		m->u.hello.version = xstrdup("0.1.0");
		break;
	case MSG_ASSIGN:
		m->u.assign.loop_id = xstrdup("loop-v2-20261121T101010-0badcafe");
		m->u.assign.agent_id = xstrdup("agent-3");
		m->u.assign.role = xstrdup("validate");
		m->u.assign.prompt = xstrdup("Run the tests.\n\u2713 caf\u00e9 \U0001F600");
		m->u.assign.tool = xstrdup("bash");
		m->u.assign.model = xstrdup("gpt-5");
		m->u.assign.command = xstrdup("make check");
		m->u.assign.cwd = xstrdup("/tmp/project");
		m->u.assign.log_path = xstrdup(".loop/x.workers/agent-3.log");
		m->u.assign.capsule = xstrdup("## Resume\nphase: develop");
		m->u.assign.timeout_ms = 600000;
		m->u.assign.idle_ms = 0;
		m->u.assign.options = json_pack("{s:b, s:i, s:f, s:n, s:[s, i]}",
		    "live_input", 1, "max_tokens", 4096, "temperature", 0.5,
		    "extra", "argv", "--foo", 3);
		break;
	case MSG_STARTED:
		m->u.started.tool_pid = 99;
		strv_push(&m->u.started.argv, "bash");
		strv_push(&m->u.started.argv, "-c");
		strv_push(&m->u.started.argv, "echo hi");
		m->u.started.cwd = xstrdup("/tmp/project");
		m->u.started.log_path = xstrdup(".loop/x.workers/agent-3.log");
		m->u.started.session_id = xstrdup("0199a213-81c0-7800-8aa1-bbab2a035a53");
		break;
	case MSG_PROGRESS:
		m->u.progress.kind = xstrdup("output");
		m->u.progress.text = xstrdup("compiling 3 files");
		m->u.progress.tokens_in = 1200;
		m->u.progress.tokens_out = 345;
		m->u.progress.cost = 0.0125;
		break;
	case MSG_INPUT:
		m->u.input.submission_id = 12;
		m->u.input.message = xstrdup("## TIMEOUT\nPlease converge.");
		m->u.input.interrupt = 1;
		break;
	case MSG_INPUT_ACK:
		m->u.input_ack.submission_id = 12;
		m->u.input_ack.delivery = xstrdup("stdin");
		m->u.input_ack.error = xstrdup("none");
		break;
	case MSG_RESULT:
		m->u.result.status = xstrdup("success");
		m->u.result.action = xstrdup("develop");
		m->u.result.summary = xstrdup("added the parser");
		strv_push(&m->u.result.files_changed, "src/a.c");
		strv_push(&m->u.result.files_changed, "src/b.c");
		m->u.result.next_suggestion = xstrdup("validate");
		m->u.result.loop_back_to = xstrdup("develop");
		m->u.result.detailed_output = xstrdup("line 1\nline 2\n");
		m->u.result.questions = json_pack("[{s:s, s:[s, s], s:s}]",
		    "question", "Which API?", "options", "A", "B",
		    "recommended", "A");
		m->u.result.exit_code = -1;
		m->u.result.signal = 9;
		m->u.result.duration_ms = 1234;
		m->u.result.session_id = xstrdup("sess-1");
		m->u.result.usage = json_pack("{s:i, s:i, s:f}", "input_tokens",
		    10, "output_tokens", 20, "cost_usd", 0.25);
		m->u.result.reason = xstrdup("signal 9");
		m->u.result.stderr_tail = xstrdup("Killed");
		m->u.result.log_tail = xstrdup("1..1\nok 1 - far away\n");
		strv_push(&m->u.result.files_claimed, "add.sh");
		m->u.result.worktree = json_pack("{s:s, s:s, s:[{s:s, s:s, "
		    "s:s}], s:{s:i, s:i, s:i}}", "path", "/r/.loop/l-1/wt/a-1",
		    "branch", "ccw/l-1/a-1", "files", "status", "R", "path",
		    "src/b.c", "from", "src/a.c", "stat", "files", 1,
		    "insertions", 2, "deletions", 0);
		break;
	case MSG_CLOSE:
		m->u.close.grace_ms = 5000;
		m->u.close.reason = xstrdup("timeout");
		break;
	case MSG_BYE:
		m->u.bye.reason = xstrdup("closed");
		break;
	case MSG_ERROR:
		m->u.error.code = xstrdup("E_TOOL");
		m->u.error.message = xstrdup("tool 'codex' not found on PATH");
		break;
	case MSG_REQUEST:
		m->u.call.body = json_pack("{s:i, s:s, s:[s], s:i}", "id", 7,
		    "verb", "wait", "targets", "agent-1", "timeout_ms", 5000);
		break;
	case MSG_REPLY:
		m->u.call.body = json_pack("{s:b, s:s, s:n}", "ok", 0, "error",
		    "no agent 'caf\u00e9'", "id");
		break;
	case MSG_EVENT:
		m->u.event.seq = 42;
		m->u.event.type = xstrdup("LOOP_STATE_UPDATE");
		m->u.event.data = json_pack("{s:s, s:i}", "loop_id", "l-1",
		    "iteration", 3);
		break;
	case MSG_PING:
	case MSG_PONG:
		m->u.ping.seq = 0xfffffffffULL;
		break;
	case MSG_PERM_ASK:
		m->u.perm_ask.id = 3;
		m->u.perm_ask.tool_name = xstrdup("Bash");
		m->u.perm_ask.input = json_pack("{s:s}", "command",
		    "touch made.txt");
		m->u.perm_ask.tool_use_id = xstrdup("toolu_01");
		break;
	case MSG_PERM_REPLY:
		m->u.perm_reply.id = 3;
		m->u.perm_reply.allow = 0;
		m->u.perm_reply.message = xstrdup("denied by the operator");
		break;
	default:
		break;
	}
}
