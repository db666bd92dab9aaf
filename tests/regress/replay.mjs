// replay.mjs: replay.sh's browser half.  Headless Chromium (playwright-
// core) opens a finished loop's exported replay from file:// and steps
// through it by clicks and keys, asserting on the DOM: each action's
// prompt, result, state change, time and cost; hostile data stays text;
// the CSP meta tag names the inline script and style by hash and nothing
// is refused; serve's GET /loops/:id/replay shows the same; axe-core
// (when @axe-core/playwright is installed) finds no serious or critical
// violation on either.  One line per check: "ok DESCRIPTION" or
// "not ok DESCRIPTION: WHY"; exit 0 once all ran.
//
// Screenshots of the file's step 2 at 1280x800 and 800x600 are kept as
// PNG-1280x800.png and PNG-800x600.png (artifacts).
//
// Usage: node replay.mjs PW_DIR CHROMIUM FILE OLD_FILE PORT ID NSTEPS
//        SUMMARY TITLE WAIT_MS PNG
import { createRequire } from "node:module";
import { cspChecks } from "./page-lib.mjs";
import { readFileSync } from "node:fs";

const [pwDir, chromium, file, oldFile, port, id, nArg, summary, title,
    waitArg, png] = process.argv.slice(2);
const require = createRequire(pwDir + "/");
const { chromium: browserType } = require("playwright-core");
const base = "http://127.0.0.1:" + port;
const nsteps = Number(nArg);
const waitMs = Number(waitArg);
const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
let AxeBuilder = null;
try {
	AxeBuilder = require("@axe-core/playwright").default;
} catch (e) {
	AxeBuilder = null;
}

function ok(cond, desc, why) {
	console.log(cond ? "ok " + desc : "not ok " + desc + ": " + why);
	return cond;
}

// What the step shown says: its fields by data-field, its heading.
async function shown(page) {
	return page.evaluate(() => {
		const o = { pos: document.getElementById("pos").textContent };
		const h = document.querySelector("#step h2");
		o.head = h ? h.textContent : "";
		document.querySelectorAll("#step [data-field]").forEach((e) => {
			o[e.dataset.field] = e.textContent;
		});
		o.prevOff = document.getElementById("prev").disabled;
		o.nextOff = document.getElementById("next").disabled;
		return o;
	});
}

async function axe(page, what) {
	if (AxeBuilder === null) {
		console.log("ok axe on " + what + " # SKIP @axe-core/playwright " +
		    "is not installed");
		return;
	}
	const r = await new AxeBuilder({ page }).analyze();
	const bad = r.violations.filter((v) => v.impact === "serious" ||
	    v.impact === "critical");
	ok(bad.length === 0, "axe: no serious or critical violation on " +
	    what, bad.map((v) => v.id + " (" + v.impact + ")").join(", "));
}

// The policy names the inline script's and style's hashes.
function hashes(html, csp, what) {
	cspChecks(ok, html, csp, what + ": ", "replay.c");
}

const errors = [];
const browser = await browserType.launch({ executablePath: chromium,
    headless: true, args: ["--no-sandbox", "--disable-gpu",
    "--disable-dev-shm-usage"] });
try {
	const ctx = await browser.newContext({ viewport:
	    { width: 800, height: 600 } });
	const page = await ctx.newPage();
	page.on("console", (m) => {
		// the browser's own ask for /favicon.ico (404) is no page error
		if (m.type() === "error" &&
		    !/\/favicon\.ico$/.test(m.location().url || ""))
			errors.push(m.text() + " " + (m.location().url || ""));
	});
	page.on("pageerror", (e) => errors.push(String(e)));

	// --- the exported file, from file://, no server
	const html = readFileSync(file, "utf8");
	const meta = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]*)">/);
	hashes(html, meta ? meta[1] : "", "the file");
	await page.goto("file://" + file, { timeout: waitMs });
	let s = await shown(page);
	ok(s.pos === "Step 1 of " + nsteps, "file: it opens on step 1 of " +
	    nsteps, s.pos);
	ok(/init/.test(s.head) && s.prevOff && !s.nextOff,
	    "file: step 1 is init; previous disabled", JSON.stringify(s));
	ok(iso.test(s.started) && iso.test(s.ended) && /^\d+(\.\d)? m?s$/.test(
	    s.duration), "file: its start, end and duration are shown",
	    [s.started, s.ended, s.duration].join(" | "));
	ok(s.cost === "no usage reported", "file: a tool with no usage says so",
	    s.cost);
	await page.click("#next");
	s = await shown(page);
	ok(s.pos === "Step 2 of " + nsteps && /develop/.test(s.head),
	    "file: next shows step 2, develop", s.pos + " " + s.head);
	ok(s.prompt.includes("You are the develop worker of loop " + id) &&
	    s.prompt.includes(title), "file: the prompt the worker got " +
	    "(the task in it as text)", s.prompt.slice(0, 200));
	ok(s.result === summary, "file: its result, as text", s.result);
	ok(s.change.includes("~ develop.tasks[0].status: \"pending\" -> " +
	    "\"completed\"") && s.change.includes("+ develop.tasks[0]." +
	    "files_changed[0]: \"x.txt\""), "file: the state change it " +
	    "caused (skill_state before -> after)", s.change);
	ok(s.files === "x.txt", "file: the file it changed", s.files);
	await page.keyboard.press("ArrowRight");
	s = await shown(page);
	ok(s.pos === "Step 3 of " + nsteps && /debug/.test(s.head),
	    "file: ArrowRight shows step 3", s.pos + " " + s.head);
	await page.keyboard.press("End");
	s = await shown(page);
	ok(s.pos === "Step " + nsteps + " of " + nsteps && s.nextOff &&
	    /complete/.test(s.head), "file: End shows the last step; next " +
	    "disabled", s.pos + " " + s.head);
	await page.keyboard.press("ArrowLeft");
	await page.keyboard.press("k");
	s = await shown(page);
	ok(s.pos === "Step " + (nsteps - 2) + " of " + nsteps,
	    "file: ArrowLeft and k go back", s.pos);
	await page.keyboard.press("Home");
	await page.click("#steps li:nth-child(2) button");
	s = await shown(page);
	ok(s.pos === "Step 2 of " + nsteps, "file: a step's own button shows it",
	    s.pos);
	const loopInfo = await page.evaluate(() => [
	    document.getElementById("title").textContent,
	    document.querySelector("#loop [data-field=status]").textContent,
	    document.querySelector("#loop [data-field=iterations]").textContent,
	    document.title, window.__pwned,
	    document.querySelectorAll("img").length,
	    document.querySelectorAll("script").length]);
	ok(loopInfo[0].includes(title) && loopInfo[3].includes(title),
	    "file: the hostile title is shown as text", loopInfo[0]);
	ok(loopInfo[1] === "completed" && /^3 of \d+$/.test(loopInfo[2]),
	    "file: the loop's status and iteration of max", loopInfo.join(" | "));
	ok(loopInfo[4] === undefined && loopInfo[5] === 0 && loopInfo[6] === 2,
	    "file: no markup from the data ran or was parsed (no img, " +
	    "2 scripts)", loopInfo.slice(4).join(" "));
	// usable at 800 px: nothing wider than the window; the focus shows
	const wide = await page.evaluate(() =>
	    document.documentElement.scrollWidth);
	ok(wide <= 800, "file: no horizontal scrolling at 800 px", wide + " px");
	await page.keyboard.press("Tab");
	const ring = await page.evaluate(() => {
		const e = document.activeElement;
		const st = getComputedStyle(e);
		return [e.tagName, st.outlineStyle, st.outlineWidth];
	});
	ok(ring[0] !== "BODY" && ring[1] !== "none" && ring[2] !== "0px",
	    "file: the focused control shows its focus", ring.join(" "));
	await page.screenshot({ path: png + "-800x600.png", fullPage: false });
	await page.setViewportSize({ width: 1280, height: 800 });
	await page.screenshot({ path: png + "-1280x800.png", fullPage: false });
	await page.setViewportSize({ width: 800, height: 600 });
	await axe(page, "the exported file");

	// --- a history from before replay, with a worker's usage
	await page.goto("file://" + oldFile, { timeout: waitMs });
	s = await shown(page);
	ok(s.cost === "$0.0123, 1000 tokens in, 200 tokens out" &&
	    /not recorded/.test(s.prompt) && /not recorded/.test(s.change),
	    "old history: its cost; prompt and change said not recorded",
	    JSON.stringify(s));
	const total = await page.evaluate(() => document.querySelector(
	    "#loop [data-field=total-cost]").textContent);
	ok(total === "$0.0123", "old history: the loop's total cost", total);

	// --- the same document served, the cookie from /api/auth/token
	await page.goto(base + "/api/auth/token", { timeout: waitMs });
	const resp = await page.goto(base + "/loops/" + id + "/replay",
	    { timeout: waitMs });
	const h = resp.headers();
	ok(resp.status() === 200 && h["content-type"] ===
	    "text/html; charset=utf-8", "served: 200 text/html",
	    resp.status() + " " + h["content-type"]);
	hashes(await resp.text(), h["content-security-policy"] || "",
	    "served");
	await page.keyboard.press("j");
	s = await shown(page);
	ok(s.pos === "Step 2 of " + nsteps && s.result === summary,
	    "served: j shows step 2 and its result", s.pos + " " + s.result);
	await axe(page, "the served page");
	ok(errors.length === 0, "no console error or CSP violation",
	    errors.join(" | "));
	console.log("ok all steps ran");
} catch (e) {
	ok(false, "the browser steps", String(e && e.stack || e));
} finally {
	await browser.close();
}
