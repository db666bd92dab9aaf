# page-npm.sh: sourced by the browser tests (serve-page.sh,
# serve-loop-page.sh, replay.sh, serve-ws.sh) after lib.sh: playwright-core and
# @axe-core/playwright, pinned, in one node_modules ($PW_DIR: the build
# tree's tests/page-npm, or CCW_PAGE_NPM_DIR).  Both are installed by one
# npm command (npm drops what an install of the other left out), under a
# lock: two tests of a parallel `make check` never install at once.
PW_DIR=${CCW_PAGE_NPM_DIR:-$top_builddir/tests/page-npm}
PW_VERSION=1.65.1
AXE_VERSION=4.14.0

# page_npm_has NAME VERSION: node_modules holds NAME at VERSION.
page_npm_has() {
	[ -f "$PW_DIR/node_modules/$1/package.json" ] &&
	    [ "$(jget "$PW_DIR/node_modules/$1/package.json" \
	    'd["version"]')" = "$2" ]
}

# page_npm: both there (installed if need be); else 1 and $PAGE_NPM_WHY.
# Without the registry axe may be missing alone: the caller's axe
# checks SKIP then.
page_npm() {
	PAGE_NPM_WHY=
	page_npm_has playwright-core "$PW_VERSION" &&
	    page_npm_has @axe-core/playwright "$AXE_VERSION" && return 0
	if ! command -v npm >/dev/null 2>&1; then
		PAGE_NPM_WHY="npm is not installed"
		page_npm_has playwright-core "$PW_VERSION"
		return
	fi
	mkdir -p "$PW_DIR" || return 1
	(
		flock -w 600 9 || exit 1
		page_npm_has playwright-core "$PW_VERSION" &&
		    page_npm_has @axe-core/playwright "$AXE_VERSION" && exit 0
		[ -f "$PW_DIR/package.json" ] ||
		    echo '{"private": true}' >"$PW_DIR/package.json"
		cd "$PW_DIR" && timeout 300 npm install --no-audit --no-fund \
		    --no-update-notifier --no-save --loglevel=error \
		    "playwright-core@$PW_VERSION" \
		    "@axe-core/playwright@$AXE_VERSION" >install.log 2>&1
	) 9>"$PW_DIR/.install.lock"
	page_npm_has playwright-core "$PW_VERSION" && return 0
	PAGE_NPM_WHY="npm install playwright-core failed (no registry access?): $(tail -n 2 "$PW_DIR/install.log" 2>/dev/null | tr '\n' ' ')"
	return 1
}

# page_browser: $CHROMIUM, node and both packages (installed if need
# be), or the whole test is one SKIP (automake counts it as such).
page_browser() {
	CHROMIUM=${CCW_CHROMIUM:-$(command -v chromium || true)}
	command -v node >/dev/null 2>&1 || page_skip "node is not installed"
	[ -n "$CHROMIUM" ] && [ -x "$CHROMIUM" ] ||
	    page_skip "chromium is not installed (apt-get install chromium)"
	command -v flock >/dev/null 2>&1 || page_skip "flock is not installed"
	page_npm || page_skip "$PAGE_NPM_WHY"
}

# page_skip WHY: the whole test, one SKIP.
page_skip() {
	echo "1..0 # SKIP $1"
	exit 0
}
