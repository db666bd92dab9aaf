// acp-client.mjs: `ccw-supervisor acp` driven by the official ACP SDK
// (@agentclientprotocol/sdk) as an editor drives it: the SDK's client
// over ndJsonStream on a spawned agent.  One scenario a run; it prints
// one JSON line of what it saw for tests/regress/acp.sh to judge.
//   node acp-client.mjs SUP turn|cancel|ask|maxiter CWD
//   node acp-client.mjs SUP load CWD GOFILE   (kill -9, then a second agent)
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [sup, scenario, cwd, goFile] = process.argv.slice(2);

// One agent process and the SDK's client on its stdio; updates counted,
// permission requests answered by pick (null: cancelled).
function start(pick) {
  const child = spawn(sup, ["acp"], { stdio: ["pipe", "pipe", "inherit"] });
  const seen = { updates: [], kinds: {}, permissions: [], waiters: [] };
  const app = acp.client({ name: "acp-client.mjs" });
  app.onNotification(acp.methods.client.session.update, (ctx) => {
    const u = ctx.params.update;
    seen.updates.push(u);
    seen.kinds[u.sessionUpdate] = (seen.kinds[u.sessionUpdate] || 0) + 1;
    for (const w of seen.waiters.splice(0)) w(u);
  });
  app.onRequest(acp.methods.client.session.requestPermission, (ctx) => {
    seen.permissions.push(ctx.params);
    const opt = pick ? pick(ctx.params) : null;
    return opt
      ? { outcome: { outcome: "selected", optionId: opt.optionId } }
      : { outcome: { outcome: "cancelled" } };
  });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin),
    Readable.toWeb(child.stdout));
  const conn = app.connect(stream);
  return { child, conn, agent: conn.agent, seen };
}

// The next update that matches, from now on.
function waitUpdate(seen, match) {
  return new Promise((resolve) => {
    const w = (u) => (match(u) ? resolve(u) : seen.waiters.push(w));
    seen.waiters.push(w);
  });
}

async function handshake(a) {
  const init = await a.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } },
  });
  return init;
}

// The agent's exit: code or signal (EOF on its stdin ends it).
function exited(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode });
    else child.on("exit", (code, signal) => resolve({ code, signal }));
  });
}

async function close(a) {
  a.child.stdin.end();
  const ex = await exited(a.child);
  a.conn.close();
  return ex;
}

const text = (u) => (u.content && u.content.text) || "";
const out = { scenario };

async function main() {
  if (scenario === "load") {
    // a turn under way, the agent killed -9, a second one loads the loop
    const a = start(null);
    await handshake(a);
    const s = await a.agent.request(acp.methods.agent.session.new,
      { cwd, mcpServers: [] });
    out.sessionId = s.sessionId;
    const dev = waitUpdate(a.seen, (u) => u.sessionUpdate === "tool_call" &&
      /^develop/.test(u.title));
    const turn = a.agent.request(acp.methods.agent.session.prompt,
      { sessionId: s.sessionId, prompt: [{ type: "text", text: "Survive a crash" }] });
    turn.catch(() => {});
    await dev;
    a.child.kill("SIGKILL");
    out.killed = await exited(a.child);
    a.conn.close();
    writeFileSync(goFile, "go\n");
    const b = start(null);
    out.init2 = await handshake(b);
    await b.agent.request(acp.methods.agent.session.load,
      { sessionId: s.sessionId, cwd, mcpServers: [] });
    out.replayed = { ...b.seen.kinds };
    out.replayText = b.seen.updates.map(text).filter((t) => t).join("\n");
    const r = await b.agent.request(acp.methods.agent.session.prompt,
      { sessionId: s.sessionId, prompt: [{ type: "text", text: "go on" }] });
    out.stopReason = r.stopReason;
    out.kinds = b.seen.kinds;
    out.exit = await close(b);
  } else {
    const pick = scenario === "ask"
      ? (p) => p.options.find((o) => o.name === "postgres") : null;
    const a = start(pick);
    out.init = await handshake(a);
    const meta = scenario === "maxiter" ? { max_iterations: 1 } : undefined;
    const s = await a.agent.request(acp.methods.agent.session.new,
      { cwd, mcpServers: [], _meta: meta });
    out.sessionId = s.sessionId;
    if (scenario === "cancel") {
      waitUpdate(a.seen, (u) => u.sessionUpdate === "tool_call" &&
        /^develop/.test(u.title)).then(() => {
        out.cancelAt = Date.now();
        a.agent.notify(acp.methods.agent.session.cancel,
          { sessionId: s.sessionId });
      });
    }
    const r = await a.agent.request(acp.methods.agent.session.prompt,
      { sessionId: s.sessionId, prompt: [{ type: "text", text: "Store the users" }] });
    if (out.cancelAt) out.cancelMs = Date.now() - out.cancelAt;
    out.stopReason = r.stopReason;
    out.kinds = a.seen.kinds;
    out.permissions = a.seen.permissions;
    out.last = text(a.seen.updates.filter(
      (u) => u.sessionUpdate === "agent_message_chunk").pop() || {});
    out.toolCalls = a.seen.updates.filter((u) => u.sessionUpdate === "tool_call")
      .map((u) => u.title);
    out.results = a.seen.updates.filter((u) => u.sessionUpdate ===
      "tool_call_update" && u.status).map((u) => u.status);
    out.plan = (a.seen.updates.filter((u) => u.sessionUpdate === "plan").pop() ||
      { entries: [] }).entries.map((e) => e.status);
    // an unknown method: -32601, and the agent still answers
    try {
      await a.agent.request("session/frobnicate", {});
      out.unknown = "accepted";
    } catch (e) {
      out.unknown = e.code;
    }
    out.exit = await close(a);
  }
  console.log(JSON.stringify(out));
}

const timer = setTimeout(() => {
  console.log(JSON.stringify({ ...out, error: "timed out" }));
  process.exit(1);
}, Number(process.env.ACP_CLIENT_TIMEOUT_MS || 120000));
main().then(() => clearTimeout(timer), (e) => {
  console.log(JSON.stringify({ ...out, error: String(e && e.stack || e) }));
  process.exit(1);
});
