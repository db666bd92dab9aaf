// mcp-stdio.mjs SUP ROOT: the official MCP TypeScript SDK's client
// against `SUP mcp -C ROOT` over stdio (run by tests/regress/mcp-stdio.sh,
// which writes ROOT's configuration: fake agents as every role, and a
// fake claude for follow-up turns).  Prints TAP lines; exits 1 on a
// failed check.  CCW_FAKE: the fake agent; CCW_MCP_MARKER: its marker.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [sup, root] = process.argv.slice(2);
const fake = process.env.CCW_FAKE;
const marker = process.env.CCW_MCP_MARKER;
let n = 0, failed = 0;

function ok(cond, what) {
	n++;
	if (cond)
		console.log(`ok ${n} - ${what}`);
	else {
		console.log(`not ok ${n} - ${what}`);
		failed++;
	}
}

function is(got, want, what) {
	const g = JSON.stringify(got), w = JSON.stringify(want);
	ok(g === w, what);
	if (g !== w)
		console.log(`#   got ${g}, want ${w}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const transport = new StdioClientTransport({
	command: sup, args: ['mcp', '-C', root], stderr: 'inherit',
});
const client = new Client({ name: 'ccw-test', version: '1.0.0' });
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema,
    (m) => logs.push(m.params));
const call = (name, args, opts) =>
    client.callTool({ name, arguments: args }, undefined,
    { timeout: 60000, ...opts });

try {
	await client.connect(transport);
	is(client.getServerVersion()?.name, 'ccw-supervisor',
	    'initialize: the server names itself');
	ok(client.getServerCapabilities()?.tools !== undefined &&
	    client.getServerCapabilities()?.logging !== undefined,
	    'initialize: tools and logging capabilities');

	const { tools } = await client.listTools();
	is(tools.map((t) => t.name).sort(), ['agent_result', 'answer_question',
	    'close_agent', 'list_agents', 'list_questions', 'loop_control',
	    'loop_start', 'loop_status', 'send_input', 'spawn_agent',
	    'wait_agent'], 'tools/list: the eleven tools');
	ok(tools.every((t) => t.inputSchema?.type === 'object' &&
	    t.description.length > 40), 'each with an object inputSchema and '
	    + 'a description');
	is(Object.keys(tools.find((t) => t.name === 'spawn_agent')
	    .inputSchema.properties).sort(), ['attempts', 'check', 'command',
	    'cwd', 'message', 'model', 'role', 'tool'], 'spawn_agent takes the spawn verb\'s '
	    + 'fields');

	await client.setLoggingLevel('info');

	// spawn, wait with progress
	let r = await call('spawn_agent', { role: 'develop', tool: 'bash',
	    command: `exec '${fake}' --marker ${marker} print step-one `
	    + 'sleep 1500 result success done-one' });
	const a1 = r.structuredContent?.agent_id;
	ok(!r.isError && /^agent-\d+$/.test(a1), `spawn_agent: ${a1}`);
	is(JSON.parse(r.content[0].text).agent_id, a1,
	    'the text content is the reply\'s JSON');
	const progress = [];
	r = await call('wait_agent', { targets: [a1], timeout_ms: 30000 },
	    { onprogress: (p) => progress.push(p) });
	is([r.isError, r.structuredContent?.status?.[a1],
	    r.structuredContent?.timed_out], [false, 'completed', false],
	    'wait_agent: completed');
	is(r.structuredContent?.agent_ids, [a1], 'wait_agent names the agent');
	ok(progress.length >= 1 && progress.every((p, i) => i === 0 ||
	    p.progress > progress[i - 1].progress),
	    `progress notifications, increasing (${progress.length})`);
	ok(progress.some((p) => p.message?.includes(a1)),
	    'a progress message names the agent');
	r = await call('agent_result', { target: a1 });
	ok(!r.isError && r.structuredContent?.agent_id === a1 &&
	    JSON.stringify(r.structuredContent?.result).includes('done-one'),
	    'agent_result: the agent\'s report, naming it');

	// send_input: a follow-up turn of a (fake) claude agent
	r = await call('spawn_agent', { role: 'develop', tool: 'claude',
	    message: 'first' });
	const a2 = r.structuredContent?.agent_id;
	r = await call('wait_agent', { targets: [a2], timeout_ms: 30000 });
	is(r.structuredContent?.status?.[a2], 'completed', 'claude: turn 1');
	r = await call('send_input', { target: a2, message: 'more please' });
	is([r.isError, r.structuredContent?.agent_id], [false, a2],
	    'send_input: accepted, naming the agent');
	r = await call('wait_agent', { targets: [a2], mode: 'all',
	    timeout_ms: 30000 });
	is(r.structuredContent?.status?.[a2], 'completed', 'claude: turn 2');

	// close a hanging agent
	r = await call('spawn_agent', { role: 'develop', tool: 'bash',
	    command: `exec '${fake}' --marker ${marker} hang` });
	const a3 = r.structuredContent?.agent_id;
	r = await call('close_agent', { target: a3, grace_ms: 500 });
	is([r.isError, r.structuredContent?.agent_id], [false, a3],
	    'close_agent: closed, naming the agent');
	r = await call('list_agents', {});
	ok([a1, a2, a3].every((a) => a in (r.structuredContent?.agents ?? {})),
	    'list_agents lists them');

	// a cancelled wait (AbortSignal: notifications/cancelled) kills nothing
	r = await call('spawn_agent', { role: 'develop', tool: 'bash',
	    command: `exec '${fake}' --marker ${marker} hang` });
	const a4 = r.structuredContent?.agent_id;
	const ac = new AbortController();
	const w = call('wait_agent', { targets: [a4] }, { signal: ac.signal });
	await sleep(200);
	ac.abort('test');
	ok(await w.then(() => false, () => true), 'a cancelled wait rejects');
	r = await call('list_agents', {});
	is(r.structuredContent?.agents?.[a4], 'running',
	    'the cancelled wait killed nothing');
	await call('close_agent', { target: a4, grace_ms: 500 });

	// bad arguments: isError results, not protocol errors
	r = await call('spawn_agent', {});
	ok(r.isError && /role/.test(r.content[0].text),
	    'spawn_agent without role: isError naming it');
	r = await call('wait_agent', { targets: 'x' });
	ok(r.isError, 'wait_agent with a string for targets: isError');
	r = await call('spawn_agent', { role: 'develop', bogus: 1 });
	ok(r.isError && /bogus/.test(r.content[0].text),
	    'an argument no tool takes: isError naming it');
	r = await call('spawn_agent', { role: 'develop', cwd: 'relative' });
	ok(r.isError && /absolute/.test(r.content[0].text),
	    'a relative cwd: isError');
	r = await call('loop_control', { loop_id: 'nope', action: 'jump' });
	ok(r.isError && /action/.test(r.content[0].text),
	    'loop_control with a bad action: isError');
	r = await call('send_input', { target: 'agent-99', message: 'x' });
	is([r.isError, r.structuredContent?.agent_id], [true, 'agent-99'],
	    'send_input to an unknown agent: isError naming it');
	let code = null;
	try {
		await call('no_such_tool', {});
	} catch (e) {
		code = e.code;
	}
	is(code, -32602, 'an unknown tool: a -32602 protocol error');

	// a loop, started and followed to completion
	r = await call('loop_start', { task: 'Build it', max_iterations: 5 });
	const loop = r.structuredContent?.loop_id;
	is([r.isError, r.structuredContent?.status], [false, 'running'],
	    `loop_start: ${loop} running`);
	let st, t0 = Date.now();
	do {
		await sleep(200);
		r = await call('loop_status', { loop_id: loop });
		st = r.structuredContent?.status;
	} while (st === 'running' && Date.now() - t0 < 60000);
	is(st, 'completed', 'loop_status follows it to completed');
	ok(r.structuredContent?.loop?.skill_state?.completed_actions
	    ?.includes('develop'), 'the loop\'s state names its develop');
	r = await call('loop_control', { loop_id: loop, action: 'pause' });
	ok(r.isError && /completed/.test(r.content[0].text),
	    'loop_control pause of a completed loop: isError saying why');
	// the queue of questions (questions-front.sh answers one)
	r = await call('list_questions', { loop_id: loop });
	is([r.isError, r.structuredContent?.questions], [false, []],
	    'list_questions: the completed loop waits on no question');
	r = await call('answer_question', { question_id: 'q-000000000000',
	    answer: 'sqlite' });
	is([r.isError, r.structuredContent?.code], [true, 'not_found'],
	    'answer_question of an unknown question: isError, not_found');
	ok(logs.some((l) => l.level === 'info' && l.data?.loop_id === loop),
	    `the loop's events as log messages (${logs.length})`);
	await client.ping();
	ok(true, 'ping');
} catch (e) {
	ok(false, `unexpected: ${e?.stack ?? e}`);
}
await client.close();
console.log(`1..${n}`);
process.exit(failed ? 1 : 0);
