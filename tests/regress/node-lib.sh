# node-lib.sh: sourced (after lib.sh) by the tests whose client is an
# official SDK from npm (MCP's, ACP's): the SDKs installed once into the
# build tree (tests/node-npm, never committed; CCW_NODE_NPM_DIR elsewhere,
# as CI keeps one across its builds), a client script from tests/node run
# beside them, and the supervisor as the client starts it (under the
# test's wrapper: valgrind, or the sanitized build, is driven too).
# Without node or the npm registry the whole test is one SKIP.

NODE_NPM=${CCW_NODE_NPM_DIR:-$top_builddir/tests/node-npm}
# the versions the tests were written against; bump them together
NODE_PKGS="@modelcontextprotocol/sdk@1.32.2 @agentclientprotocol/sdk@2.4.0
    @modelcontextprotocol/conformance@0.1.16"

# t_node_skip WHY: the whole test is one SKIP (automake counts it so).
t_node_skip() {
	echo "1..0 # SKIP $1"
	exit 0
}

# t_node_sdk: every package of NODE_PKGS installed in $NODE_NPM, or the
# test skipped.  Under a lock: the MCP and ACP tests start together.
t_node_sdk() {
	local p want missing=
	command -v node >/dev/null 2>&1 || t_node_skip "node is not installed"
	mkdir -p "$NODE_NPM" || t_node_skip "cannot create $NODE_NPM"
	exec {NODE_LOCK}>"$NODE_NPM/.lock"
	flock "$NODE_LOCK"
	for p in $NODE_PKGS; do
		want=${p##*@}
		[ "$(jget "$NODE_NPM/node_modules/${p%@*}/package.json" \
		    'd["version"]' 2>/dev/null)" = "$want" ] || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		command -v npm >/dev/null 2>&1 || t_node_skip "npm is not installed"
		[ -f "$NODE_NPM/package.json" ] ||
		    echo '{"private": true, "type": "module"}' >"$NODE_NPM/package.json"
		(cd "$NODE_NPM" && timeout 600 npm install --no-audit --no-fund \
		    --no-update-notifier --loglevel=error $NODE_PKGS \
		    >install.log 2>&1) ||
		    t_node_skip "npm install of the SDKs failed (no registry access?): $(tail -n 2 "$NODE_NPM/install.log" | tr '\n' ' ')"
	fi
	exec {NODE_LOCK}>&-
	# the supervisor as a client spawns it: one path, the wrapper inside
	cat >"$T_TMP/sup" <<SUPEOF
#!/bin/sh
exec $WRAP "$SUP" "\$@"
SUPEOF
	chmod +x "$T_TMP/sup"
	NODE_SUP=$T_TMP/sup
}

# t_node SCRIPT ARGS...: run tests/node/SCRIPT with node beside the SDKs
# (copied there, so its imports resolve in $NODE_NPM/node_modules).
t_node() {
	local s=$1
	shift
	cp "$srcdir/tests/node/$s" "$NODE_NPM/$s" || return 1
	node "$NODE_NPM/$s" "$@"
}
