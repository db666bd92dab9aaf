#!/bin/bash
# doctor.sh: `ccw-supervisor doctor` against fake tools on PATH: found or
# not, versions, a hung or flooding `--version` bounded and its process
# group killed, exit 0/1 from the default tool, secrets never printed, a
# malformed configuration a warning, --json parses, usage errors exit 2.
. "$(dirname "$0")/lib.sh"
t_watchdog 240
t_slack

t_marker M doctor
BIN="$T_TMP/$M/bin"
export HOME="$T_TMP/home"
P="$T_TMP/proj"
mkdir -p "$BIN" "$HOME" "$P"
export PATH="$BIN:/usr/bin:/bin"
for v in $(env | sed -n 's/^\([A-Z_]*\(KEY\|TOKEN\|BASE_URL\|VERTEX\|VERTEXAI\|BEDROCK\|_GCA\|CREDENTIALS\|_HOME\|CONFIG_DIR\)\)=.*/\1/p'); do
	unset "$v"
done

# codex prints a version; claude hangs (with a child that must die too);
# gemini floods 10 MB; qwen exits 1; opencode is not there.
cat >"$BIN/codex" <<'EOF'
#!/bin/sh
echo "codex-cli 9.9.9"
EOF
cat >"$BIN/claude" <<EOF
#!/bin/sh
trap '' TERM
sh -c 'echo \$\$ >"$T_TMP/hang-child.pid"; exec sleep 1000' &
sleep 1000
EOF
cat >"$BIN/gemini" <<'EOF'
#!/bin/sh
head -c 10485760 /dev/zero | tr '\0' x
EOF
cat >"$BIN/qwen" <<'EOF'
#!/bin/sh
echo "qwen: broken install" >&2
exit 1
EOF
chmod +x "$BIN"/*

gone() {	# gone PID MS: poll until PID is dead (or a zombie)
	local end=$(( $(t_now_ms) + $2 )) st
	while :; do
		st=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' \
		    "/proc/$1/status" 2>/dev/null)
		[ -z "$st" ] || [ "$st" = Z ] && return 0
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.02
	done
}
cfg() {	# cfg DEFAULT_TOOL [EXTRA_JSON]: a config file with that default
	printf '{"default_tool": "%s"%s}\n' "$1" "${2:-}" >"$T_TMP/cfg.json"
}
doc() {	# doc ARGS...: run doctor, stdout to $T_TMP/out, status in $rc
	$WRAP "$SUP" doctor -C "$P" --probe-ms 1500 "$@" >"$T_TMP/out" \
	    2>"$T_TMP/err"
	rc=$?
}
tool() {	# tool NAME EXPR: EXPR over that tool's JSON object t
	jget "$T_TMP/out" "[t for t in d['tools'] if t['name'] == '$1'][0]$2"
}

# --- the default tool runs: exit 0; every tool's outcome in JSON
cfg codex
start=$(t_now_ms)
doc --config "$T_TMP/cfg.json" --json
took=$(( $(t_now_ms) - start ))
is "$rc" 0 "default tool codex prints a version: exit 0"
python3 -m json.tool "$T_TMP/out" >/dev/null
ok $? "--json output parses"
is "$(tool codex "['version']")" "codex-cli 9.9.9" "codex version read"
is "$(tool codex "['path']")" "$BIN/codex" "codex resolved on PATH"
is "$(tool opencode "['path']")" null "opencode: not found"
like "$(tool opencode "['problem']")" 'not found' "opencode: says not found"
is "$(tool claude "['runnable']")" false "hung claude is not runnable"
like "$(tool claude "['problem']")" 'timed out after [0-9]+ ms' \
    "hung claude: timed out"
ms=$(tool claude "['version_ms']")
ok $(( ms < 1500 )) "the hang lasts --probe-ms ($ms ms)"
t_within "$ms" 2500 "the hang is bounded by --probe-ms ($ms ms)"
t_within "$took" $((8000 + 2 * SLACK)) "doctor took $took ms in all"
if [ -s "$T_TMP/hang-child.pid" ]; then
	gone "$(cat "$T_TMP/hang-child.pid")" 3000
	ok $? "the hung tool's child was killed with its group"
else
	ok 1 "the hung tool started its child"
fi
t_wait_gone "$M" 3000
ok $? "nothing of the fake tools is left"
like "$(tool gemini "['problem']")" 'over 256 KiB' "10 MB --version refused"
ok $(( $(stat -c %s "$T_TMP/out") > 65536 )) "and not copied into the report"
like "$(tool qwen "['problem']")" 'exited 1' "qwen: --version exited 1"
is "$(tool qwen "['version']")" null "qwen: no version when it failed"
is "$(jget "$T_TMP/out" "d['default_tool']['name']")" codex "default tool named"
like "$(jget "$T_TMP/out" "d['default_tool']['reason']")" "default_tool in $T_TMP/cfg.json" \
    "and why: the config file"
is "$(jget "$T_TMP/out" "d['exit']")" 0 "exit recorded in the report"

# --- the default tool cannot run: exit 1 for each way
for t in claude gemini qwen opencode; do
	cfg "$t"
	doc --config "$T_TMP/cfg.json"
	is "$rc" 1 "default tool $t cannot run: exit 1"
	like "$(cat "$T_TMP/out")" "default tool: $t .*CANNOT RUN" \
	    "human output says $t cannot run"
	[ "$t" = claude ] || continue
	# The hang is proven now (bounded, its group killed, the default
	# tool refused): from here on claude answers at once, so that each
	# run below is not the probe's 1.5 s deadline waited out again (16
	# runs, 24 s)
	cat >"$BIN/claude" <<'EOF'
#!/bin/sh
echo "9.9.9 (Claude Code)"
EOF
done
cfg codex ', "tools": {"codex": {"enabled": false}}'
doc --config "$T_TMP/cfg.json" --json
is "$rc" 1 "default tool disabled: exit 1"
like "$(jget "$T_TMP/out" "d['default_tool']['problem']")" disabled \
    "the problem is named"

# --- human output: a table, the roles, the argv
cfg codex ', "roles": {"validate": {"tool": "bash", "command": "make check"}}'
doc --config "$T_TMP/cfg.json"
out=$(cat "$T_TMP/out")
like "$out" '^TOOL +ENABLED +PATH +VERSION +CREDENTIALS' "tool table header"
like "$out" "^codex +yes +$BIN/codex +codex-cli 9.9.9 +none found" "codex row aligned"
like "$out" '^opencode +yes +not found' "opencode row: not found"
like "$out" '^validate +bash +' "validate runs bash"
like "$out" "validate: bash -c 'make check'" "validate argv shown"
like "$out" 'develop: codex exec .* < PROMPT' "develop argv shown"
like "$out" '^develop +codex +\(tool default\) +workspace-write +600s +300s +5s +off' \
    "develop deadlines shown"
if [ "$(id -u)" = 0 ]; then
	like "$out" 'claude: running as root: .*IS_SANDBOX=1' "root note for claude"
else
	t_skip "root note (not running as root)"
fi

# --- each role's permission: the safe defaults, and an override
cfg codex ', "roles": {"complete": {"permission": "full"}}'
doc --config "$T_TMP/cfg.json" --json
is "$(jget "$T_TMP/out" "[r.get('permission') for r in d['roles']]")" \
    '["read-only","workspace-write","workspace-write","workspace-write","full"]' \
    "each role's permission: defaults and the configured one"

# --- a role that cannot run: named, with the warning that run refuses
cfg codex ', "roles": {"init": {"tool": "bash", "timeout_ms": 1500}}'
doc --config "$T_TMP/cfg.json" --json
is "$(jget "$T_TMP/out" "d['roles'][0]['timeout_ms']")" 1500 \
    "a role that cannot run still shows its deadlines"
like "$(jget "$T_TMP/out" "d['roles'][0]['problem']")" 'needs --command' \
    "bash without a command: the role's problem"
like "$(jget "$T_TMP/out" "d['warnings']")" 'run refuses to start a loop here: role init' \
    "and a warning that run would refuse"

# --- secrets: only the names of the sources, never a value
SECRET=sk-doctortest-0123456789abcdef
export OPENAI_API_KEY=$SECRET ANTHROPIC_AUTH_TOKEN=$SECRET
export ANTHROPIC_BASE_URL="http://user:$SECRET@127.0.0.1:9/v1?key=$SECRET"
mkdir -p "$HOME/.codex" "$HOME/.gemini" "$HOME/.claude"
echo "{\"OPENAI_API_KEY\": \"$SECRET\"}" >"$HOME/.codex/auth.json"
echo "GEMINI_API_KEY=$SECRET" >"$HOME/.gemini/.env"
echo "{\"tools\": {\"gemini\": {\"enabled\": true, \"envFile\": \"~/.gemini/.env\"}, \"mytool\": {\"enabled\": true}}}" \
    >"$HOME/.claude/cli-tools.json"
cfg codex
doc --config "$T_TMP/cfg.json"
human=$(cat "$T_TMP/out" "$T_TMP/err")
doc --config "$T_TMP/cfg.json" --json
json=$(cat "$T_TMP/out" "$T_TMP/err")
for form in human json; do
	case "${!form}" in
	*sk-doc*|*0123456789abcdef*) ok 1 "$form output holds no secret" ;;
	*) ok 0 "$form output holds no secret" ;;
	esac
done
like "$human" "codex .*env OPENAI_API_KEY, file $HOME/.codex/auth.json" \
    "codex: env and file sources named"
like "$human" 'claude .*env ANTHROPIC_AUTH_TOKEN' "claude: token source named"
like "$human" 'claude: ANTHROPIC_BASE_URL=http://127.0.0.1:9/v1 \(not the vendor' \
    "base URL shown without user, password or query"
is "$(tool gemini "['credentials']['sources'][0]['vars']")" '["GEMINI_API_KEY"]' \
    "a .env file: the variable's name only"
is "$(tool mytool "['adapter']")" false "CCW's extra tool listed, no adapter"
is "$(tool gemini "['credentials']['configured']")" true "gemini credentials found"
unset OPENAI_API_KEY ANTHROPIC_AUTH_TOKEN ANTHROPIC_BASE_URL

# --- malformed configuration files: a warning and a report, not a crash
echo '{"default_tool": "codex", ' >"$T_TMP/bad.json"
doc --config "$T_TMP/bad.json"
is "$rc" 1 "malformed --config: exit 1 (run would refuse to start)"
like "$(cat "$T_TMP/out")" "warning: .*$T_TMP/bad.json" "malformed config: a warning naming it"
like "$(cat "$T_TMP/out")" 'TOOL +ENABLED' "and the report is still printed"
echo '{"tools": ' >"$HOME/.claude/cli-tools.json"
doc --json
ok $(( rc > 1 )) "malformed cli-tools.json: no crash (exit $rc)"
like "$(jget "$T_TMP/out" "d['warnings']")" 'cli-tools.json' \
    "malformed cli-tools.json: a warning"
is "$(jget "$T_TMP/out" "[f['status'] for f in d['config']['files'] if f['what'] == 'ccw tools'][0]")" \
    malformed "its status is malformed"
rm -f "$HOME/.claude/cli-tools.json"

# --- the state directory: .loop, CCW's .workflow/.loop, --state-dir
doc --json
is "$(jget "$T_TMP/out" "d['state_dir']['kind']")" .loop "state dir .loop by default"
mkdir -p "$P/.workflow/.loop"
doc --json
is "$(jget "$T_TMP/out" "d['state_dir']['path']")" "$P/.workflow/.loop" \
    "only .workflow/.loop exists: it is used"
doc --json --state-dir "$T_TMP/sd"
is "$(jget "$T_TMP/out" "d['state_dir']['kind']")" --state-dir "--state-dir wins"

# --- usage
$WRAP "$SUP" doctor --help >"$T_TMP/out" 2>&1
is $? 0 "--help exits 0"
like "$(cat "$T_TMP/out")" 'usage: ccw-supervisor doctor' "--help prints usage"
$WRAP "$SUP" doctor --bogus >/dev/null 2>&1; is $? 2 "unknown option: exit 2"
$WRAP "$SUP" doctor extra >/dev/null 2>&1; is $? 2 "extra argument: exit 2"
$WRAP "$SUP" doctor -C "$T_TMP/nonexistent" >/dev/null 2>&1
is $? 2 "-C not a directory: exit 2"
$WRAP "$SUP" doctor --probe-ms 0 >/dev/null 2>&1; is $? 2 "--probe-ms 0: exit 2"
$WRAP "$SUP" doctor --probe-ms x >/dev/null 2>&1; is $? 2 "--probe-ms x: exit 2"

t_done
