// serve-loop-page.mjs: serve-loop-page.sh's browser half.  Drives
// headless Chromium (playwright-core) through serve's page of one loop
// (/loops/ID): the CSP by hash, the running loop's summary ("N of 3"),
// its tasks (markup shown as text), a task added, edited and moved up
// from the page (the API agrees), its develop worker's log lines
// arriving live (the second written after a stale token cookie: the page
// takes the token again); then a finished parallel loop: a crashed
// worker's outcome kind and reason, develop's branch and diff, the merge
// record, the capsule, the raw state, the replay link, a 300 KiB log
// shown as its last 256 KiB, an open question's form answered; axe-core on that page, the fuller one (no
// serious or critical violation; SKIP without @axe-core/playwright),
// nothing wider than 800 px; screenshots at
// 1280x800 and 800x600.  One line per check: "ok DESCRIPTION" or
// "not ok DESCRIPTION: WHY"; exit 0 once all ran.
//
// Usage: node serve-loop-page.mjs PW_DIR CHROMIUM PORT TOKEN ID MERGE_ID
//        GO_FILE PNG_PREFIX WAIT_MS
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cspChecks } from "./page-lib.mjs";

const [pwDir, chromium, port, token, id, mid, goFile, png, waitArg] =
    process.argv.slice(2);
const require = createRequire(pwDir + "/");
const { chromium: browserType } = require("playwright-core");
let AxeBuilder = null;
try {
	AxeBuilder = require("@axe-core/playwright").AxeBuilder;
} catch (e) {
	AxeBuilder = null;
}
const base = "http://127.0.0.1:" + port;
const waitMs = Number(waitArg);

function ok(cond, desc, why) {
	console.log(cond ? "ok " + desc : "not ok " + desc + ": " + why);
	return cond;
}

async function apiGet(path) {
	const r = await fetch(base + path,
	    { headers: { Authorization: "Bearer " + token } });
	return (await r.json()).data;
}

// Waits (bounded, polling the DOM) until fn(arg) is true in the page;
// "" or why not (what show(arg) gives then).
async function until(page, fn, arg, show) {
	try {
		await page.waitForFunction(fn, arg,
		    { timeout: waitMs, polling: 50 });
		return "";
	} catch (e) {
		return String(e).split("\n")[0] + ": " +
		    JSON.stringify(await page.evaluate(show, arg));
	}
}

const taskTexts = () => Array.from(document.querySelectorAll(
    "#tasks li[data-task] .desc")).map((e) => e.textContent);

// The policy must name the inline script's and style's hashes.
async function csp(page, path) {
	const resp = await page.goto(base + path, { timeout: waitMs });
	const h = resp.headers();
	ok(resp.status() === 200 && h["content-type"] ===
	    "text/html; charset=utf-8", "GET " + path + ": 200 text/html",
	    resp.status() + " " + h["content-type"]);
	cspChecks(ok, await resp.text(), h["content-security-policy"] || "",
	    "", "servepageloop.c");
}

// axe-core: no serious or critical violation.
async function axe(page, what) {
	if (AxeBuilder === null) {
		console.log("ok axe on " + what + " # SKIP @axe-core/playwright " +
		    "is not installed");
		return;
	}
	// violations only: the passes cost seconds on a loaded machine
	const res = await new AxeBuilder({ page })
	    .options({ resultTypes: ["violations"] }).analyze();
	const bad = res.violations.filter((v) => v.impact === "serious" ||
	    v.impact === "critical");
	ok(bad.length === 0, "axe on " + what + ": no serious or critical " +
	    "violation (" + res.violations.length + " minor)",
	    JSON.stringify(bad.map((v) => [v.id, v.impact,
	    v.nodes.map((n) => n.target.join(" ")).slice(0, 3)])));
}

// The running loop's tasks: shown, then one added, edited, moved.
async function tasks(page) {
	let why = await until(page, () => document.querySelectorAll(
	    "#tasks li[data-task]").length === 2, null, taskTexts);
	const shown = await page.evaluate(taskTexts);
	ok(why === "" && shown[0] === "First task" && shown[1] ===
	    "<img src=x onerror=\"window.__pwned=1\">Second task",
	    "its two tasks are shown in order, markup as text",
	    why + " " + JSON.stringify(shown));
	ok(await page.evaluate(() => window.__pwned === undefined &&
	    document.querySelector("#tasks img") === null),
	    "a task's markup never runs", "it ran");

	await page.click("#task-add summary");
	await page.fill("#t-desc", "Third task");
	await page.click("#task-form button[type=submit]");
	why = await until(page, () => document.querySelectorAll(
	    "#tasks li[data-task]").length === 3, null, taskTexts);
	let api = (await apiGet("/api/loops/v2/" + id + "/tasks"))
	    .map((t) => t.description);
	ok(why === "" && api[2] === "Third task",
	    "a task added from the page: shown, and the API has it",
	    why + " " + JSON.stringify(api));

	await page.click("#tasks li[data-task]:nth-child(1) " +
	    "button[data-act=edit]");
	await page.fill("#tasks li:nth-child(1) textarea", "First task, edited");
	await page.click("#tasks li:nth-child(1) button[type=submit]");
	why = await until(page, () => {
		const d = document.querySelector("#tasks li[data-task] .desc");
		return d !== null && d.textContent === "First task, edited";
	}, null, taskTexts);
	api = (await apiGet("/api/loops/v2/" + id + "/tasks"))
	    .map((t) => t.description);
	ok(why === "" && api[0] === "First task, edited",
	    "a task edited from the page: shown, and the API has it",
	    why + " " + JSON.stringify(api));

	// the button is named with its task
	await page.getByRole("button", { name: "Move task Third task up" })
	    .click({ timeout: waitMs });
	why = await until(page, () => {
		const t = Array.from(document.querySelectorAll(
		    "#tasks li[data-task] .desc")).map((e) => e.textContent);
		return t[1] === "Third task";
	}, null, taskTexts);
	api = (await apiGet("/api/loops/v2/" + id + "/tasks"))
	    .map((t) => t.description);
	ok(why === "" && api[1] === "Third task" && api[2].endsWith(
	    "Second task"), "a task moved up from the page: shown, and " +
	    "the API has the new order", why + " " + JSON.stringify(api));
}

// The develop worker's log, live: line one, then (after a stale cookie)
// line two written now.
async function liveLog(page) {
	const logOf = (t) => Array.from(document.querySelectorAll(
	    "#logs section[data-agent] pre")).some((p) =>
	    p.textContent.includes(t));
	const logs = () => Array.from(document.querySelectorAll(
	    "#logs section[data-agent]")).map((s) => s.textContent);
	let why = await until(page, logOf, "dev: line one", logs);
	ok(why === "", "the develop worker's first log line is shown", why);
	why = await until(page, () => Array.from(document.querySelectorAll(
	    "#workers tr[data-agent]")).some((tr) =>
	    tr.cells[1].textContent === "develop" &&
	    tr.cells[2].textContent === "bash" &&
	    tr.cells[3].textContent === "running"), null, () =>
	    document.getElementById("workers").textContent);
	ok(why === "", "its row: role develop, tool bash, running", why);
	// serve restarted: the page's cookie names a former token
	await page.context().addCookies([{ name: "ccw_token",
	    value: "a-token-of-a-former-serve", url: base }]);
	const t0 = Date.now();
	writeFileSync(goFile, "go\n");
	why = await until(page, logOf, "dev: line two", logs);
	ok(why === "", "a line the worker writes now arrives live (across " +
	    "a stale token cookie)", why);
	console.log("# the line appeared " + (Date.now() - t0) +
	    " ms after the go (a figure, not a check)");
	const ck = (await page.context().cookies(base)).find((c) =>
	    c.name === "ccw_token");
	ok(ck !== undefined && ck.value === token,
	    "the page took the token again", JSON.stringify(ck));
	const sum = await page.evaluate(() => [
	    document.getElementById("title").textContent,
	    document.querySelector("dd[data-field=status]").textContent,
	    document.querySelector("dd[data-field=iteration]").textContent]);
	ok(sum[0] === "Live loop" && sum[1] === "running" &&
	    / of 3$/.test(sum[2]), "the summary: title, status, \"N of 3\"",
	    JSON.stringify(sum));
}

// The finished parallel loop.
async function finished(page) {
	const rowOf = (agent) => {
		const tr = document.querySelector("#workers tr[data-agent=\"" +
		    agent + "\"]");
		return tr === null ? null : Array.from(tr.cells)
		    .map((c) => c.textContent);
	};
	const out = await apiGet("/api/loops/v2/" + mid + "/workers");
	const dbg = out.workers.find((w) => w.output &&
	    w.output.role === "debug").agent;
	let why = await until(page, (a) => {
		const tr = document.querySelector("#workers tr[data-agent=\"" +
		    a + "\"]");
		return tr !== null && tr.cells[5].textContent !== "";
	}, dbg, rowOf);
	const d = await page.evaluate(rowOf, dbg);
	ok(why === "" && d[1] === "debug" && d[4] === "tool_error" &&
	    /killed by signal 11/.test(d[5]) && /\d/.test(d[6]),
	    "a crashed worker's row: role, outcome kind, reason, duration",
	    why + " " + JSON.stringify(d));
	const dev = out.workers.find((w) => w.output &&
	    w.output.role === "develop").agent;
	const v = await page.evaluate(rowOf, dev);
	ok(v !== null && /^ccw\/[^/]+\/agent-\d+ \(1 file, \+1 -0\)/.test(v[8]),
	    "develop's row: its branch and diff stat", JSON.stringify(v));
	const m = await page.evaluate(() => [
	    Array.from(document.querySelectorAll("#merges li")).map((e) =>
	    e.dataset.role + "=" + e.dataset.merge),
	    document.getElementById("capsule").textContent.length,
	    document.getElementById("raw").textContent,
	    document.getElementById("replay").hidden,
	    document.getElementById("replay-link").getAttribute("href")]);
	ok(m[0].includes("develop=merged"), "the merge record: develop merged",
	    JSON.stringify(m[0]));
	ok(m[1] > 0, "the capsule is shown", "empty");
	let raw = null;
	try { raw = JSON.parse(m[2]); } catch (e) { raw = null; }
	ok(raw !== null && raw.loop_id === mid, "the raw state JSON is shown",
	    m[2].slice(0, 80));
	ok(m[3] === false && m[4] === "/loops/" + mid + "/replay",
	    "a finished loop links to its replay", JSON.stringify(m.slice(3)));
	why = await until(page, () => {
		const p = document.querySelector(
		    "#logs section[data-agent=\"agent-9\"] pre");
		return p !== null && p.textContent.endsWith(
		    "the last line of the big log\n");
	}, null, () => null);
	const big = await page.evaluate(() => document.querySelector(
	    "#logs section[data-agent=\"agent-9\"] pre").textContent.length);
	ok(why === "" && big <= 256 * 1024 && big > 200 * 1024,
	    "a 300 KiB log: its last 256 KiB shown", why + " " + big);
}

// An open question of the finished loop (the shell put it in its file):
// a form with its options, the recommended one chosen; answered from
// the page (POST /api/questions/ID/answer, via page).
async function question(page) {
	const why = await until(page, () => document.querySelector(
	    "#questions form[data-question]") !== null, null, () =>
	    document.getElementById("questions").textContent);
	const f = await page.evaluate(() => {
		const f = document.querySelector("#questions form");
		return [f.dataset.question, f.querySelector("legend").textContent,
		    Array.from(f.querySelectorAll("input[type=radio]")).map((r) =>
		    r.value + (r.checked ? "*" : "") + "=" +
		    document.querySelector("label[for=\"" + r.id + "\"]")
		    .textContent)];
	});
	ok(why === "" && /^Which database\?/.test(f[1]) &&
	    JSON.stringify(f[2]) === JSON.stringify(["sqlite*=sqlite " +
	    "(recommended)", "postgres=postgres"]),
	    "an open question: its options, the recommended one chosen",
	    why + " " + JSON.stringify(f));
	const [resp] = await Promise.all([
	    page.waitForResponse((r) => r.request().method() === "POST" &&
	    r.url().includes("/api/questions/"), { timeout: waitMs }),
	    page.click("#questions form button[type=submit]")]);
	const b = await resp.json();
	ok(resp.status() === 200 && b.data.id === f[0] &&
	    b.data.answer === "sqlite" && b.data.via === "page",
	    "answered from the page: the recommended option, via page",
	    resp.status() + " " + JSON.stringify(b));
}

const errors = [];
const browser = await browserType.launch({ executablePath: chromium,
    headless: true, args: ["--no-sandbox", "--disable-gpu",
    "--disable-dev-shm-usage"] });
try {
	// a context of its own: axe-core's builder asks for one
	const ctx = await browser.newContext({ viewport:
	    { width: 1280, height: 800 } });
	const page = await ctx.newPage();
	page.on("console", (m) => {
		// the browser logs the 401 a stale cookie gets: not the page's
		if (m.type() === "error" && !/\b401\b/.test(m.text()))
			errors.push(m.text());
	});
	page.on("pageerror", (e) => errors.push(String(e)));

	await csp(page, "/loops/" + id);
	await tasks(page);
	await liveLog(page);

	await page.goto(base + "/loops/" + mid, { timeout: waitMs });
	await finished(page);
	await question(page);
	await axe(page, "a finished loop's page");
	await page.screenshot({ path: png + "-1280.png" });
	await page.setViewportSize({ width: 800, height: 600 });
	const wide = await page.evaluate(() =>
	    document.documentElement.scrollWidth);
	ok(wide <= 800, "usable at 800 px: nothing wider than the window",
	    wide + " px");
	await page.screenshot({ path: png + "-800.png" });
	const err = await page.evaluate(() =>
	    document.getElementById("err").textContent);
	ok(err === "", "the page reported no error", err);
} catch (e) {
	ok(false, "the browser session", String(e));
} finally {
	await browser.close();
}
ok(errors.length === 0, "no console error or CSP violation",
    errors.join(" | "));
