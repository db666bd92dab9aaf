#!/bin/bash
# mcp-clis.sh: the real agent CLIs as MCP clients of `ccw-supervisor mcp`:
# claude, gemini and qwen (from npm, tests/e2e/install.sh) each register
# it as a stdio server with their own `mcp add` in a fresh HOME and
# connect to it with `mcp list` (their own MCP client: initialize, then
# the tools), which must say Connected; a server that cannot start must
# not, so the check can fail.  No model API is involved: nothing is
# prompted.  No ccw-supervisor process is left behind.
. "$(dirname "$0")/lib.sh"

e2e_begin claude 120
P=$T_TMP/proj
mkdir -p "$P"
P=$(cd "$P" && pwd -P)
t_marker M mcpcli
# the server as the CLIs start it: the marker finds it afterwards
cat >"$T_TMP/ccw-mcp" <<SHEOF
#!/bin/sh
exec $WRAP "$SUP" mcp -C "$P" --state-dir "$P/.loop" # $M
SHEOF
chmod +x "$T_TMP/ccw-mcp"
cd "$P" || exit 1

# mcp_check CLI ADD_ARGS...: register ccw and a broken server, list them.
mcp_check() {
	local cli=$1 out
	shift
	if [ ! -x "$E2E_CLI_DIR/node_modules/.bin/$cli" ]; then
		t_skip "$cli is not installed"
		t_skip "$cli: a broken server is not connected"
		return
	fi
	export HOME=$T_TMP/home-$cli
	mkdir -p "$HOME"
	# gemini and qwen hide a project's servers in a folder not trusted
	mkdir -p "$HOME/.gemini" "$HOME/.qwen"
	printf '{"%s": "TRUST_FOLDER"}\n' "$P" >"$HOME/.gemini/trustedFolders.json"
	cp "$HOME/.gemini/trustedFolders.json" "$HOME/.qwen/trustedFolders.json"
	timeout 60 "$cli" mcp add "$@" ccw "$T_TMP/ccw-mcp" \
	    >"$T_TMP/$cli.add" 2>&1
	timeout 60 "$cli" mcp add "$@" broken /bin/false \
	    >>"$T_TMP/$cli.add" 2>&1
	out=$(timeout 90 "$cli" mcp list 2>&1 | sed 's/\x1b\[[0-9;]*m//g')
	printf '%s\n' "$out" | grep -q "ccw: .*Connected"
	ok $? "$cli connects to ccw-supervisor mcp" ||
	    { printf '%s\n' "$out"; cat "$T_TMP/$cli.add"; } | sed 's/^/#   /'
	printf '%s\n' "$out" | grep "broken: " | grep -qv "Connected"
	ok $? "$cli: a broken server is not connected"
}

mcp_check claude
mcp_check gemini
mcp_check qwen
t_wait_gone "$M" "$(t_ms 10000)"
ok $? "no ccw-supervisor mcp is left after the clients"
t_done
