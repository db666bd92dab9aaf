#!/bin/sh
# install.sh SRCDIR DESTDIR: install the five agent CLIs the e2e suite runs
# (tests/e2e/package.json, pinned) with npm into DESTDIR, in the build
# tree.  Never fails the build: when the CLIs cannot be installed it writes
# the reason to DESTDIR/SKIP, and every e2e test then reports SKIP.
# CCW_E2E_CLI_DIR=PREFIX uses the CLIs under PREFIX/node_modules/.bin.
src=$1
dest=$2
clis="codex claude gemini qwen opencode"
mkdir -p "$dest" || exit 1
rm -f "$dest/SKIP"

# skip REASON: record why the suite cannot run, and succeed.
skip() {
	echo "install.sh: e2e suite will be skipped: $1" >&2
	printf '%s\n' "$1" >"$dest/SKIP"
	exit 0
}

# have_all PREFIX: every CLI is installed under PREFIX.
have_all() {
	for c in $clis; do
		[ -x "$1/node_modules/.bin/$c" ] || return 1
	done
}

if [ -n "${CCW_E2E_CLI_DIR:-}" ]; then
	have_all "$CCW_E2E_CLI_DIR" ||
	    skip "CCW_E2E_CLI_DIR=$CCW_E2E_CLI_DIR lacks one of: $clis"
	exit 0
fi
# Already installed from this very package.json: nothing to do.
if have_all "$dest" && cmp -s "$src/package.json" "$dest/package.json" &&
    [ -f "$dest/installed" ]; then
	exit 0
fi
command -v npm >/dev/null 2>&1 || skip "npm is not installed"
command -v node >/dev/null 2>&1 || skip "node is not installed"
cp "$src/package.json" "$src/package-lock.json" "$dest/" || exit 1
chmod u+w "$dest/package.json" "$dest/package-lock.json"
rm -f "$dest/installed"
echo "install.sh: npm install of the agent CLIs into $dest" >&2
if ! (cd "$dest" && timeout 900 npm install --no-audit --no-fund \
    --no-update-notifier --loglevel=error >install.log 2>&1); then
	skip "npm install failed (no registry access?): $(tail -n 3 "$dest/install.log" | tr '\n' ' ')"
fi
have_all "$dest" || skip "npm install did not provide all of: $clis"
date >"$dest/installed"
