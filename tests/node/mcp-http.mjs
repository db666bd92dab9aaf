// mcp-http.mjs URL TOKEN: the official MCP TypeScript SDK's client over
// Streamable HTTP (StreamableHTTPClientTransport) against serve's /mcp,
// for serve-mcp.sh: initialize, tools/list, list_agents, spawn_agent of a
// bash agent and wait_agent with progress, a bad argument (an isError
// result), the session ended with DELETE.  Prints "ok 1|0 DESCRIPTION"
// lines for the shell test; exit 0 unless it crashed.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from
    '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, token] = process.argv.slice(2);

function say(good, desc) {
	console.log(`ok ${good ? 1 : 0} ${desc.replace(/\n/g, ' ')}`);
}

// A tool result's JSON: structuredContent, else its first text parsed.
function payload(res) {
	if (res.structuredContent)
		return res.structuredContent;
	try {
		return JSON.parse(res.content?.[0]?.text ?? 'null');
	} catch {
		return null;
	}
}

const transport = new StreamableHTTPClientTransport(new URL(url), {
	requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: 'mcp-http-test', version: '1.0.0' });
const errors = [];
client.onerror = (e) => errors.push(String(e));

await client.connect(transport);
say(typeof transport.sessionId === 'string' && transport.sessionId.length > 0,
    `initialize over HTTP: session ${transport.sessionId}`);
const info = client.getServerVersion();
say(info?.name !== undefined, `serverInfo: ${JSON.stringify(info)}`);
say(typeof transport.protocolVersion === 'string',
    `protocol version negotiated: ${transport.protocolVersion}`);

const tools = (await client.listTools()).tools.map((t) => t.name);
const want = ['spawn_agent', 'wait_agent', 'send_input', 'close_agent',
    'list_agents'];
say(want.every((n) => tools.includes(n)), `tools/list: ${tools.join(' ')}`);

let res = await client.callTool({ name: 'list_agents', arguments: {} });
say(!res.isError, `list_agents: ${JSON.stringify(payload(res)).slice(0, 200)}`);

res = await client.callTool({ name: 'spawn_agent', arguments: {
	role: 'develop', tool: 'bash', command: 'sleep 1; echo done-here' } });
const spawned = payload(res);
const id = spawned?.agent_id;
say(!res.isError && typeof id === 'string', `spawn_agent: agent ${id}`);

const progress = [];
res = await client.callTool({ name: 'wait_agent', arguments: {
	targets: [id], timeout_ms: 30000 } }, undefined, {
	onprogress: (p) => progress.push(p), timeout: 60000 });
const waited = payload(res);
say(!res.isError && JSON.stringify(waited).includes(id),
    `wait_agent names the agent: ${JSON.stringify(waited).slice(0, 300)}`);
say(JSON.stringify(waited).includes('completed'),
    'wait_agent: the agent completed');
console.log(`# progress notifications during the wait: ${progress.length}`);

res = await client.callTool({ name: 'wait_agent', arguments: {
	targets: 'not-an-array' } });
say(res.isError === true, `a bad argument: an isError result ` +
    `(${JSON.stringify(res.content).slice(0, 150)})`);

await transport.terminateSession();
say(transport.sessionId === undefined, 'DELETE ended the session');
await client.close();
say(errors.length === 0, `no transport error (${errors.join('; ')})`);
