// serve-page.mjs: serve-page.sh's browser half.  Drives headless Chromium
// (playwright-core) through serve's status page: the loop row, a worker's
// live progress line, pause/resume/stop by clicks (the API agrees), a
// pause made elsewhere seen through /api/events, a stale token cookie
// replaced after one 401 (a restarted serve), a hostile title shown as
// text, the running loop "driven by pid N" and a loop whose driver was
// killed -9 "interrupted", a worker killed -9 shown as the loop's last
// failure with its outcome kind, no CSP violation; a screenshot kept.
// One line per check: "ok DESCRIPTION" or "not ok DESCRIPTION: WHY";
// exit 0 once all ran.
//
// Usage: node serve-page.mjs PW_DIR CHROMIUM PORT TOKEN ID XSS_ID TITLE
//        XSS_TITLE PNG WAIT_MS ORPHAN_ID MARKER MERGE_ID
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { createHash } from "node:crypto";

const [pwDir, chromium, port, token, id, xid, title, xtitle, png, waitArg,
    oid, marker, mid] = process.argv.slice(2);
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

// The hostile-title loop started, its develop worker killed -9 (the
// parent of the one fake-agent holding MARKER, never this script, whose
// argv holds it too): the row shows the failure's
// outcome kind and reason; then the loop is stopped.
async function crashShown(page) {
	const sel = "tr[data-loop=\"" + xid + "\"] .failure";
	let why = "";

	ok(await apiPost("/api/loops/v2/" + xid + "/start") === 200,
	    "the second loop starts", "refused");
	try {
		await page.waitForFunction((l) => Array.from(
		    document.querySelectorAll("tr[data-loop=\"" + l +
		    "\"] li[data-agent]")).some((li) =>
		    li.textContent.includes("develop")), xid,
		    { timeout: waitMs, polling: 50 });
		const tool = execFileSync("pgrep", ["-f", "--",
		    "fake-agent --marker " + marker])
		    .toString().trim().split("\n")[0];
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

const errors = [];
const browser = await browserType.launch({ executablePath: chromium,
    headless: true, args: ["--no-sandbox", "--disable-gpu",
    "--disable-dev-shm-usage"] });
try {
	const page = await browser.newPage({ viewport:
	    { width: 1100, height: 500 } });
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
	const html = await resp.text();
	const csp = h["content-security-policy"] || "";
	for (const tag of ["script", "style"]) {
		const m = html.match(new RegExp("<" + tag + ">([^]*?)</" +
		    tag + ">"));
		const want = "'sha256-" + createHash("sha256").update(m ? m[1] :
		    "").digest("base64") + "'";
		ok(csp.includes(tag + "-src " + want),
		    "the CSP allows the inline " + tag + " by its hash",
		    "servepage.c's policy needs " + tag + "-src " + want);
	}
	ok(/default-src 'none'/.test(csp) && !/unsafe/.test(csp),
	    "the CSP allows nothing else", csp);

	let why = await rowStatus(page, id, "running");
	ok(why === "", "the running loop's row appears", why);
	const cells = await page.evaluate((l) => {
		const tr = document.querySelector("tr[data-loop=\"" + l + "\"]");
		return tr === null ? null : [tr.querySelector(".title").textContent,
		    tr.querySelector(".iteration").textContent];
	}, id);
	ok(cells !== null && cells[0] === title && /^[0-9]+$/.test(cells[1]),
	    "its title and iteration are shown", JSON.stringify(cells));
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
	await page.screenshot({ path: png, fullPage: true });
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
	const left = await page.evaluate((l) => document.querySelectorAll(
	    "tr[data-loop=\"" + l + "\"] li[data-agent]").length, id);
	ok(left === 0, "a stopped loop lists no running worker",
	    left + " left");
	await crashShown(page);
	await mergeShown(page);
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
