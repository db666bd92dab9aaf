// serve-page.mjs: serve-page.sh's browser half.  Drives headless Chromium
// (playwright-core) through serve's status page: the loop row, a worker's
// live progress line, pause/resume/stop by clicks (the API agrees), a
// pause made elsewhere seen through /api/events, a stale token cookie
// replaced after one 401 (a restarted serve), a hostile title shown as
// text, the running loop "driven by pid N" and a loop whose driver was
// killed -9 "interrupted", a worker killed -9 shown as the loop's last
// failure with its outcome kind, no CSP violation; the loop list of
// issue 28: iteration "N of max", times, cost, a failed loop's reason,
// buttons named with their loop, stop and delete asking first, a
// created loop started by a click, a loop created from the form,
// filters, axe-core (no serious or critical violation, when
// @axe-core/playwright is installed), a visible focus, no horizontal
// scroll at 800 px; then serve restarted on the same port (RESTART stop,
// RESTART start): a "reconnecting" status that clears by itself, the
// page working on without a reload, few 401s.  Screenshots at 1280x800
// (PNG) and 800x600 (PNG800).  One line per check: "ok DESCRIPTION" or
// "not ok DESCRIPTION: WHY"; exit 0 once all ran.
//
// Usage: node serve-page.mjs PW_DIR CHROMIUM PORT TOKEN ID XSS_ID TITLE
//        XSS_TITLE PNG WAIT_MS ORPHAN_ID MARKER MERGE_ID PNG800 RESTART
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { cspChecks } from "./page-lib.mjs";

const [pwDir, chromium, port, token, id, xid, title, xtitle, png, waitArg,
    oid, marker, mid, png800, restart] = process.argv.slice(2);
const require = createRequire(pwDir + "/");
const { chromium: browserType } = require("playwright-core");
const base = "http://127.0.0.1:" + port;
const waitMs = Number(waitArg);

function ok(cond, desc, why) {
	console.log(cond ? "ok " + desc : "not ok " + desc + ": " + why);
	return cond;
}

// The loop as the API sees it (the test's own token).
async function apiLoop(loop) {
	const r = await fetch(base + "/api/loops/v2/" + loop,
	    { headers: { Authorization: "Bearer " + token } });
	return (await r.json()).data;
}

async function apiPost(path) {
	const r = await fetch(base + path, { method: "POST",
	    headers: { Authorization: "Bearer " + token } });
	return r.status;
}

// Waits (bounded, polling the DOM) until the row shows STATUS.
async function rowStatus(page, loop, status) {
	try {
		await page.waitForFunction(([l, s]) => {
			const tr = document.querySelector(
			    "tr[data-loop=\"" + l + "\"]");
			return tr !== null && tr.dataset.status === s;
		}, [loop, status], { timeout: waitMs, polling: 50 });
		return "";
	} catch (e) {
		return "row shows " + await page.evaluate((l) => {
			const tr = document.querySelector(
			    "tr[data-loop=\"" + l + "\"]");
			return tr === null ? "no row" : tr.dataset.status;
		}, loop) + " after " + waitMs + " ms";
	}
}

// Waits (bounded, polling the DOM) until SEL's data-KEY is VALUE; then
// ["" or why not, its text or null].
async function dataText(page, sel, key, value) {
	let why = "";

	try {
		await page.waitForFunction(([q, k, v]) => {
			const e = document.querySelector(q);
			return e !== null && e.dataset[k] === v;
		}, [sel, key, value], { timeout: waitMs, polling: 50 });
	} catch (e) {
		why = String(e);
	}
	return [why, await page.evaluate((q) => {
		const e = document.querySelector(q);
		return e === null ? null : e.textContent;
	}, sel)];
}

// The fake agent holding MARKER, polled for (bounded): a worker is
// announced before its tool has started.
async function marked() {
	const end = Date.now() + waitMs;
	for (;;) {
		try {
			return execFileSync("pgrep", ["-f", "--",
			    "fake-agent --marker " + marker])
			    .toString().trim().split("\n")[0];
		} catch (e) {
			if (Date.now() > end) throw e;
		}
		await new Promise((res) => setTimeout(res, 50));
	}
}

// The hostile-title loop started, its develop worker killed -9 (the
// parent of the one fake-agent holding MARKER, never this script, whose
// argv holds it too): the row shows the failure's
// outcome kind and reason; then the loop is stopped.
async function crashShown(page) {
	const sel = "tr[data-loop=\"" + xid + "\"] .failure";
	let why = "";

	// a created loop started by a click on its named button
	await page.getByRole("button", { name: "Start loop " + xtitle,
	    exact: true }).click({ timeout: waitMs });
	let st = await rowStatus(page, xid, "running");
	ok(st === "", "click start on a created loop: the row shows running",
	    st);
	st = (await apiLoop(xid)).status;
	ok(st === "running", "click start: the API says running", st);
	try {
		await page.waitForFunction((l) => Array.from(
		    document.querySelectorAll("tr[data-loop=\"" + l +
		    "\"] li[data-agent]")).some((li) =>
		    li.textContent.includes("develop")), xid,
		    { timeout: waitMs, polling: 50 });
		const tool = await marked();
		const worker = execFileSync("ps", ["-o", "ppid=", "-p", tool])
		    .toString().trim();
		process.kill(Number(worker), "SIGKILL");
	} catch (e) {
		why = String(e);
	}
	const [w, text] = await dataText(page, sel, "kind", "crashed");
	why += w;
	ok(why === "" && /develop: crashed - worker killed by signal 9/
	    .test(text), "a worker killed -9: the row shows its kind and " +
	    "reason", why + " " + text);
	await apiPost("/api/loops/v2/" + xid + "/stop");
	why = await rowStatus(page, xid, "failed");
	ok(why === "", "the second loop stopped", why);
}

// The parallel loop of a git project (issue 27): its row lists each
// writer with its outcome, branch and diff stat, from the loop's state.
async function mergeShown(page) {
	const [why, text] = await dataText(page, "tr[data-loop=\"" + mid +
	    "\"] .merges li[data-role=\"develop\"]", "merge", "merged");
	ok(why === "" && /: merged, ccw\/[^/]+\/agent-\d+ \(1 file, \+1 -0\)$/
	    .test(text), "a parallel loop's row shows develop's branch, " +
	    "diff stat and merge", why + " " + text);
}

// The row's times, cost and step, and its buttons named with its loop
// (and no two buttons of the page named alike).
async function rowShown(page) {
	const r = await page.evaluate((l) => {
		const tr = document.querySelector("tr[data-loop=\"" + l + "\"]");
		const t = (q) => tr.querySelector(q).textContent;
		return { created: t(".created"), updated: t(".updated"),
		    took: t(".duration"), cost: t(".cost"), step: t(".step"),
		    link: tr.querySelector(".id a").getAttribute("href") };
	}, id);
	const ts = "\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d";
	ok(new RegExp("^created " + ts + "$").test(r.created) &&
	    new RegExp("^updated " + ts + "$").test(r.updated) &&
	    /^took [0-9]+s so far$/.test(r.took),
	    "its created and updated times and duration are shown",
	    JSON.stringify(r));
	ok(/^(\$[0-9.]+|cost not reported), [0-9.k]+ in \/ [0-9.k]+ out$|^-$/
	    .test(r.cost) && /steps? done$/.test(r.step),
	    "its cost and step are shown", JSON.stringify(r));
	ok(r.link === "/loops/" + id, "its id links to its loop's page",
	    r.link);
	const names = [];
	for (const v of ["start", "pause", "resume", "stop", "delete"]) {
		const n = await page.getByRole("button", { name: v[0]
		    .toUpperCase() + v.slice(1) + " loop " + title,
		    exact: true }).count();
		names.push(v + ":" + n);
	}
	ok(names.every((n) => n.endsWith(":1")),
	    "each button is named with its loop (\"Stop loop " + title +
	    "\")", names.join(" "));
	const all = await page.evaluate(() => Array.from(document
	    .querySelectorAll("button[data-verb]")).map((b) =>
	    b.getAttribute("aria-label")));
	ok(all.length > 5 && new Set(all).size === all.length,
	    "no two row buttons share a name", JSON.stringify(all));
}

// Clicks a row's button, then waits for the row and the API to agree.
async function clickTo(page, verb, status) {
	await page.click("tr[data-loop=\"" + id + "\"] button[data-verb=\"" +
	    verb + "\"]", { timeout: waitMs });
	const why = await rowStatus(page, id, status);
	ok(why === "", "click " + verb + ": the row shows " + status, why);
	const d = await apiLoop(id);
	ok(d.status === status, "click " + verb + ": the API says " + status,
	    "API says " + d.status);
	return d;
}

// The create form: title, description, max iterations, mode (the
// loop_open verb's words, as serve renders them) and root (the
// parallel loop's, not serve's first); the new loop's row appears
// (created, "0 of 7") and the API has what was typed.  Its id and root.
async function formCreate(page) {
	const ft = "Form loop";
	const root = await page.evaluate((l) => document.querySelector(
	    "tr[data-loop=\"" + l + "\"]").dataset.root, mid);
	await page.getByLabel("title", { exact: true }).fill(ft);
	await page.getByLabel("description", { exact: true })
	    .fill("made by the form");
	await page.getByLabel("max iterations", { exact: true }).fill("7");
	await page.getByLabel("mode", { exact: true }).selectOption("parallel");
	await page.locator("#c-root").fill(root || "");
	await page.getByRole("button", { name: "Create loop", exact: true })
	    .click({ timeout: waitMs });
	let fid = null, why = "";
	try {
		const h = await page.waitForFunction((t) => {
			const tr = Array.from(document.querySelectorAll(
			    "tr[data-loop]")).find((r) =>
			    r.querySelector(".title").textContent === t);
			return tr ? [tr.dataset.loop, tr.dataset.status,
			    tr.querySelector(".iteration").textContent] : null;
		}, ft, { timeout: waitMs, polling: 50 });
		const [i, st, it] = await h.jsonValue();
		fid = i;
		if (st !== "created" || it !== "0 of 7")
			why = st + " " + it;
	} catch (e) {
		why = String(e);
	}
	ok(fid !== null && why === "",
	    "a loop created from the form shows as created, 0 of 7", why);
	const d = fid !== null ? await apiLoop(fid) : {};
	const got = [d.status, d.title, d.description, d.max_iterations,
	    d.skill_state ? d.skill_state.mode : null, d.root];
	ok(typeof root === "string" && JSON.stringify(got) ===
	    JSON.stringify(["created", ft, "made by the form", 7, "parallel",
	    root]),
	    "the API has the form's title, description, max, mode and root",
	    JSON.stringify(got));
	const left = await page.getByLabel("title", { exact: true })
	    .inputValue();
	ok(left === "", "the form is cleared after creating", left);
	return [fid, root];
}

// The rows shown (not hidden by the filters).
function shown(page) {
	return page.evaluate(() => Array.from(document.querySelectorAll(
	    "tr[data-loop]")).filter((r) => !r.hidden).map((r) =>
	    [r.dataset.loop, r.dataset.status]));
}

// The search keeps the rows whose id, title or description hold it;
// the status filter those of that status, the root filter those of
// that root.
async function filters(page, fid, root) {
	await page.getByLabel("search", { exact: true }).fill("BY THE FORM");
	let v = await shown(page);
	ok(v.length === 1 && v[0][0] === fid,
	    "the search shows only the loop it matches", JSON.stringify(v));
	await page.getByLabel("search", { exact: true }).fill("");
	await page.getByLabel("status", { exact: true }).selectOption("failed");
	v = await shown(page);
	ok(v.length >= 2 && v.every((r) => r[1] === "failed") &&
	    v.some((r) => r[0] === id),
	    "the status filter shows only failed loops", JSON.stringify(v));
	await page.getByLabel("status", { exact: true }).selectOption("");
	await page.locator("#f-root").selectOption(root);
	v = await shown(page);
	ok(JSON.stringify(v.map((r) => r[0]).sort()) ===
	    JSON.stringify([fid, mid].sort()),
	    "the root filter shows only that root's loops", JSON.stringify(v));
	await page.locator("#f-root").selectOption("");
	v = await shown(page);
	ok(v.length >= 5, "all loops again without a filter",
	    JSON.stringify(v));
}

// Delete asks first, naming the loop; then the row and the loop go.
async function deleteRow(page, fid) {
	const n = dialogs.length;
	await page.getByRole("button", { name: "Delete loop Form loop",
	    exact: true }).click({ timeout: waitMs });
	let why = "";
	try {
		await page.waitForFunction((l) => document.querySelector(
		    "tr[data-loop=\"" + l + "\"]") === null, fid,
		    { timeout: waitMs, polling: 50 });
	} catch (e) {
		why = String(e);
	}
	ok(why === "" && dialogs[n] === "Delete loop Form loop?",
	    "click delete: asked first, then the row is gone",
	    why + " " + JSON.stringify(dialogs.slice(n)));
	const r = await fetch(base + "/api/loops/v2/" + fid,
	    { headers: { Authorization: "Bearer " + token } });
	ok(r.status === 404, "click delete: the API has no such loop",
	    r.status);
}

// axe-core: no serious or critical violation (SKIP without the package).
async function a11y(page, where) {
	let AxeBuilder;
	try {
		const m = require("@axe-core/playwright");
		AxeBuilder = m.default || m.AxeBuilder;
	} catch (e) {
		console.log("ok axe-core " + where + " # SKIP " +
		    "@axe-core/playwright is not installed");
		return;
	}
	const res = await new AxeBuilder({ page }).setLegacyMode(true)
	    .analyze();
	const bad = res.violations.filter((v) => v.impact === "serious" ||
	    v.impact === "critical");
	ok(bad.length === 0, "axe-core finds no serious or critical " +
	    "violation " + where + " (" + res.passes.length + " rules pass)",
	    JSON.stringify(bad.map((v) => [v.id, v.impact,
	    v.nodes.map((n) => n.target)])));
}

// Tab from the top: the first button and the first link reached show a
// focus ring (an outline of 2 px or more).
async function focusShown(page) {
	await page.click("h1");
	const seen = {};
	for (let i = 0; i < 40 && !(seen.BUTTON && seen.A); i++) {
		await page.keyboard.press("Tab");
		const f = await page.evaluate(() => {
			const e = document.activeElement;
			const cs = getComputedStyle(e);
			return [e.tagName, cs.outlineStyle,
			    parseFloat(cs.outlineWidth)];
		});
		if ((f[0] === "BUTTON" || f[0] === "A") && !seen[f[0]])
			seen[f[0]] = f;
	}
	const good = (f) => f && f[1] !== "none" && f[2] >= 2;
	ok(good(seen.BUTTON) && good(seen.A),
	    "the keyboard focus is visible on buttons and links",
	    JSON.stringify(seen));
}

// At WIDTH px: no horizontal scroll, every row's buttons within it.
async function narrow(page, width) {
	const r = await page.evaluate(() => ({ sw:
	    document.documentElement.scrollWidth, w: window.innerWidth,
	    out: Array.from(document.querySelectorAll("tr[data-loop] button"))
	    .filter((b) => b.getBoundingClientRect().right > window.innerWidth)
	    .length }));
	ok(r.sw <= r.w && r.out === 0, "at " + width + " px wide: no " +
	    "horizontal scroll, every button within reach",
	    JSON.stringify(r));
}

// serve stopped, then started anew on its port (a new token): the page
// says "reconnecting" (role=status) meanwhile, clears it by itself, and
// works on without a reload: a loop created elsewhere appears, a delete
// by click goes through; the 401s stay few.
async function restarted(page) {
	ok(await apiPost("/api/loops/v2/" + oid + "/stop") === 200,
	    "the interrupted loop is stopped before the restart", "refused");
	const n = n401, before = errors.length, nres = resumes.length;
	const conn = () => page.evaluate(() => {
		const c = document.getElementById("conn");
		return [c.getAttribute("role"), c.textContent,
		    c.offsetParent !== null];
	});
	let why = "";
	execFileSync("bash", [restart, "stop"]);
	try {
		await page.waitForFunction(() => /reconnecting/.test(
		    document.getElementById("conn").textContent), null,
		    { timeout: waitMs, polling: 50 });
	} catch (e) {
		why = String(e);
	}
	let c = await conn();
	ok(why === "" && c[0] === "status" && c[2],
	    "after the restart's stop: a visible status says reconnecting",
	    why + " " + JSON.stringify(c));
	execFileSync("bash", [restart, "start"]);
	try {
		await page.waitForFunction(() => document.getElementById(
		    "conn").textContent === "", null,
		    { timeout: waitMs, polling: 50 });
		why = "";
	} catch (e) {
		why = String(e);
	}
	c = await conn();
	ok(why === "" && !c[2], "after the restart: the status clears by " +
	    "itself", why + " " + JSON.stringify(c));
	const res = resumes.slice(nres);
	ok(res.length > 0 && res.every((v) => /^[1-9][0-9]*$/.test(v)),
	    "after the restart: the stream resumed with Last-Event-ID",
	    JSON.stringify(res));
	const tk = (await (await fetch(base + "/api/auth/token")).json()).token;
	const r = await fetch(base + "/api/loops/v2", { method: "POST",
	    headers: { Authorization: "Bearer " + tk,
	    "Content-Type": "application/json" },
	    body: JSON.stringify({ title: "After restart" }) });
	const nid = (await r.json()).data.loop_id;
	why = await rowStatus(page, nid, "created");
	ok(tk !== token && why === "", "after the restart: a loop created " +
	    "elsewhere appears (events, no reload)", why);
	await page.getByRole("button", { name: "Delete loop After restart",
	    exact: true }).click({ timeout: waitMs });
	try {
		await page.waitForFunction((l) => document.querySelector(
		    "tr[data-loop=\"" + l + "\"]") === null, nid,
		    { timeout: waitMs, polling: 50 });
		why = "";
	} catch (e) {
		why = String(e);
	}
	ok(why === "", "after the restart: a click deletes (the cookie " +
	    "taken anew)", why);
	const err = await page.evaluate(() =>
	    document.getElementById("err").textContent);
	ok(err === "", "after the restart: no error left shown", err);
	ok(n401 - n <= 3, "after the restart: " + (n401 - n) + " answers " +
	    "401 (at most 3, no storm)", "a storm");
	// the browser logs the refused connections and the 401
	errors.splice(before, errors.length - before, ...errors.slice(before)
	    .filter((e) => !/\b401\b|ERR_CONNECTION_REFUSED|Failed to fetch/
	    .test(e)));
}

const errors = [];
const dialogs = [];
let n401 = 0;
const resumes = [];	// each /api/events request's Last-Event-ID
const browser = await browserType.launch({ executablePath: chromium,
    headless: true, args: ["--no-sandbox", "--disable-gpu",
    "--disable-dev-shm-usage"] });
try {
	const ctx = await browser.newContext({ viewport:
	    { width: 1280, height: 800 } });
	const page = await ctx.newPage();
	page.on("dialog", (d) => { dialogs.push(d.message()); d.accept(); });
	page.on("response", (r) => { if (r.status() === 401) n401++; });
	page.on("request", (r) => {
		if (new URL(r.url()).pathname === "/api/events")
			resumes.push(r.headers()["last-event-id"]);
	});
	page.on("console", (m) => {
		if (m.type() === "error") errors.push(m.text());
	});
	page.on("pageerror", (e) => errors.push(String(e)));

	const resp = await page.goto(base + "/", { timeout: waitMs });
	const h = resp.headers();
	ok(resp.status() === 200 && h["content-type"] ===
	    "text/html; charset=utf-8", "GET /: 200 text/html; charset=utf-8",
	    resp.status() + " " + h["content-type"]);
	// the policy must name the inline script's and style's hashes
	cspChecks(ok, await resp.text(), h["content-security-policy"] || "",
	    "", "servepage.c");

	let why = await rowStatus(page, id, "running");
	ok(why === "", "the running loop's row appears", why);
	const cells = await page.evaluate((l) => {
		const tr = document.querySelector("tr[data-loop=\"" + l + "\"]");
		return tr === null ? null : [tr.querySelector(".title").textContent,
		    tr.querySelector(".iteration").textContent];
	}, id);
	ok(cells !== null && cells[0] === title &&
	    /^[0-9]+ of 10$/.test(cells[1]),
	    "its title and iteration of max are shown", JSON.stringify(cells));
	await rowShown(page);
	// who drives a running loop; one whose driver died drives nothing
	const stText = (l) => page.evaluate((l) => {
		const tr = document.querySelector("tr[data-loop=\"" + l + "\"]");
		return tr === null ? null : tr.querySelector(".status").textContent;
	}, l);
	const driven = await stText(id);
	ok(/^running \(driven by pid [0-9]+\)$/.test(driven),
	    "the running loop says which pid drives it", driven);
	why = await rowStatus(page, oid, "interrupted");
	const orphan = await stText(oid);
	ok(why === "" && /^interrupted: no process drives it/.test(orphan),
	    "a loop whose driver was killed shows interrupted, not running",
	    why + " " + orphan);

	const lastSel = "tr[data-loop=\"" + id + "\"] li[data-agent] .last";
	try {
		await page.waitForFunction((sel) => {
			const e = document.querySelector(sel);
			return e !== null && e.textContent.includes(
			    "compiling step 1");
		}, lastSel, { timeout: waitMs, polling: 50 });
		why = "";
	} catch (e) {
		why = "worker list: " + await page.evaluate((l) => {
			const tr = document.querySelector(
			    "tr[data-loop=\"" + l + "\"]");
			return tr === null ? "no row" : tr.cells[4].textContent;
		}, id);
	}
	ok(why === "", "a running worker's live progress line appears", why);

	// a hostile title: text in the cell, never markup
	why = await rowStatus(page, xid, "created");
	const x = await page.evaluate((l) => {
		const tr = document.querySelector("tr[data-loop=\"" + l + "\"]");
		return { text: tr === null ? null :
		    tr.querySelector(".title").textContent,
		    nodes: tr === null ? -1 :
		    tr.querySelector(".title").childElementCount,
		    scripts: document.scripts.length, pwned: window.__pwned };
	}, xid);
	ok(why === "" && x.text === xtitle && x.nodes === 0 &&
	    x.scripts === 1 && x.pwned === undefined,
	    "a title holding <script> and <img onerror> is shown as text",
	    why + " " + JSON.stringify(x));

	await clickTo(page, "pause", "paused");
	await clickTo(page, "resume", "running");
	// serve restarted: the page's cookie names a former token.  Its next
	// request is 401: it fetches the token again (a new cookie) and goes
	// on without a reload
	await page.context().addCookies([{ name: "ccw_token",
	    value: "a-token-of-a-former-serve", url: base }]);
	const before = errors.length;
	await clickTo(page, "pause", "paused");
	const ck = (await page.context().cookies(base)).find((c) =>
	    c.name === "ccw_token");
	ok(ck !== undefined && ck.value === token && ck.httpOnly &&
	    ck.sameSite === "Strict" && ck.path === "/",
	    "a stale cookie: the page took the token again (HttpOnly, " +
	    "SameSite=Strict, Path=/)", JSON.stringify(ck));
	// the browser logs the 401 it got: not an error of the page
	errors.splice(before, errors.length - before, ...errors.slice(before)
	    .filter((e) => !/\b401\b/.test(e)));
	await clickTo(page, "resume", "running");
	// changes made by another client reach the page through the stream
	ok(await apiPost("/api/loops/v2/" + id + "/pause") === 200,
	    "another client pauses the loop", "refused");
	why = await rowStatus(page, id, "paused");
	ok(why === "", "the page shows it paused (events)", why);
	ok(await apiPost("/api/loops/v2/" + id + "/resume") === 200,
	    "another client resumes it", "refused");
	why = await rowStatus(page, id, "running");
	ok(why === "", "the page shows it running again (events)", why);
	const d = await clickTo(page, "stop", "failed");
	ok(d.failure_reason === "Manually stopped by user",
	    "click stop: the API has the stop's reason", d.failure_reason);
	ok(dialogs.length === 1 && dialogs[0] === "Stop loop " + title + "?",
	    "stop asked first, naming the loop", JSON.stringify(dialogs));
	const [rw, reason] = await dataText(page, "tr[data-loop=\"" + id +
	    "\"]", "status", "failed");
	const rtext = await page.evaluate((l) => document.querySelector(
	    "tr[data-loop=\"" + l + "\"] .reason").textContent, id);
	ok(rw === "" && rtext === "Manually stopped by user" &&
	    reason.includes(rtext), "a failed loop's row shows its reason",
	    rw + " " + rtext);
	const left = await page.evaluate((l) => document.querySelectorAll(
	    "tr[data-loop=\"" + l + "\"] li[data-agent]").length, id);
	ok(left === 0, "a stopped loop lists no running worker",
	    left + " left");
	await crashShown(page);
	await mergeShown(page);
	await page.screenshot({ path: png });
	const [fid, froot] = await formCreate(page);
	await filters(page, fid, froot);
	await deleteRow(page, fid);
	await a11y(page, "at 1280 px");
	await focusShown(page);
	await narrow(page, 1280);
	await page.setViewportSize({ width: 800, height: 600 });
	await narrow(page, 800);
	await a11y(page, "at 800 px");
	await page.screenshot({ path: png800 });
	await restarted(page);
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
