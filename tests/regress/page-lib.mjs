// page-lib.mjs: what the browser tests of serve's pages share (serve-page,
// serve-loop-page, replay): the check that a page's Content-Security-
// Policy names its one inline script and style by their SHA-256 and
// allows nothing else.
import { createHash } from "node:crypto";

// cspChecks(ok, html, policy, what, file): ok() once per inline tag and
// once for the rest; a failure prints the hash FILE's policy needs.
export function cspChecks(ok, html, policy, what, file) {
	for (const tag of ["script", "style"]) {
		const m = html.match(new RegExp("<" + tag + ">([^]*?)</" + tag +
		    ">"));
		const want = "'sha256-" + createHash("sha256").update(m ? m[1] :
		    "").digest("base64") + "'";
		ok(policy.includes(tag + "-src " + want), what + "the CSP allows " +
		    "the inline " + tag + " by its hash", file + "'s policy " +
		    "needs " + tag + "-src " + want);
	}
	ok(/default-src 'none'/.test(policy) && !/unsafe/.test(policy),
	    what + "the CSP allows nothing else", policy);
}
