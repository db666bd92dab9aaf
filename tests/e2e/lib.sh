# lib.sh: sourced by the e2e tests (tests/e2e/cli-*.sh).  Runs the real
# agent CLIs, installed by install.sh, through ccw-supervisor against the
# stand-in model API (mockapi/server.py) on loopback: one fresh HOME per
# test whose config points the CLI at the stand-in and nowhere else, a
# small git project with a real bug, and the cases every CLI must pass.
# Builds on tests/regress/lib.sh (temp dir, watchdog, TAP, process checks).
. "$(cd "$(dirname "$0")/../regress" && pwd)/lib.sh"

srcdir=$(cd "$srcdir" && pwd)
top_builddir=$(cd "$top_builddir" && pwd)
SUP=$top_builddir/ccw-supervisor
WRK=$top_builddir/ccw-worker
E2E_SRC=$srcdir/tests/e2e
# The interpreter itself, not a version manager's shim (pyenv's costs
# seconds a call on a loaded machine); jget and the stand-in use it.
E2E_PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
if [ -x "$E2E_PY" ]; then
	python3() { "$E2E_PY" "$@"; }
else
	E2E_PY=python3
fi
E2E_CLI_DIR=${CCW_E2E_CLI_DIR:-$top_builddir/tests/e2e/cli}
E2E_PORT=
E2E_MOCK_PID=

# e2e_begin CLI WATCHDOG_S: check the CLI is installed (else the whole test
# is one SKIP and exits), then set up HOME, PATH and the test project.
e2e_begin() {
	E2E_CLI=$1
	local why=
	if [ -z "${CCW_E2E_CLI_DIR:-}" ] && [ -f "$top_builddir/tests/e2e/cli/SKIP" ]; then
		why=$(cat "$top_builddir/tests/e2e/cli/SKIP")
	elif [ ! -x "$E2E_CLI_DIR/node_modules/.bin/$1" ]; then
		why="$1 is not installed under $E2E_CLI_DIR (see tests/e2e/README.md)"
	elif ! command -v python3 >/dev/null 2>&1; then
		why="python3 is needed for the stand-in model API"
	fi
	if [ -n "$why" ]; then
		echo "1..0 # SKIP $why"
		exit 0
	fi
	t_watchdog "${2:-900}"
	t_slack
	# no case runs, no worker starts: nothing for valgrind to check
	[ "${E2E_CASES:-}" = none ] || t_valgrind_worker
	E2E_T0=$(t_now_ms)
	export PATH="$E2E_CLI_DIR/node_modules/.bin:$PATH"
	e2e_quiet_env
	# A CLI that works where it was started instead of in -C (issue 9
	# item 1) must not touch the build tree: start everything elsewhere.
	mkdir -p "$T_TMP/elsewhere" && cd "$T_TMP/elsewhere" || exit 1
}

# e2e_quiet_env: nothing the CLIs start may reach the internet: no update
# checks, telemetry, error reports or model lists.
e2e_quiet_env() {
	export DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1
	export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_BUG_COMMAND=1
	export NO_UPDATE_NOTIFIER=1 npm_config_update_notifier=false
	export OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1
	export OPENCODE_DISABLE_LSP_DOWNLOAD=1 OPENCODE_DISABLE_SHARE=1
	export OPENCODE_DISABLE_DEFAULT_PLUGINS=1 OPENCODE_DISABLE_CLAUDE_CODE=1
	export GEMINI_CLI_NO_RELAUNCH=1 QWEN_CODE_NO_RELAUNCH=1
	export CODEX_DISABLE_UPDATE_CHECK=1 NO_COLOR=1 CI=1
	unset OPENAI_API_KEY ANTHROPIC_API_KEY GEMINI_API_KEY GOOGLE_API_KEY \
	    OPENAI_BASE_URL ANTHROPIC_BASE_URL GOOGLE_GEMINI_BASE_URL \
	    OPENAI_MODEL CODEX_HOME XDG_CONFIG_HOME XDG_DATA_HOME \
	    XDG_STATE_HOME XDG_CACHE_HOME 2>/dev/null
}

# mock_start [server.py ARGS]: (re)start the stand-in, wait for its port,
# and write the CLI's config for that port into a fresh HOME.
mock_start() {
	mock_stop
	E2E_N=$(( ${E2E_N:-0} + 1 ))
	E2E_LOG=$T_TMP/mock-$E2E_N.jsonl
	local pf=$T_TMP/mock-$E2E_N.port end
	"$E2E_PY" "$E2E_SRC/mockapi/server.py" --port-file "$pf" --log "$E2E_LOG" \
	    "$@" 2>"$T_TMP/mock-$E2E_N.err" &
	E2E_MOCK_PID=$!
	end=$(( $(t_now_ms) + 15000 ))
	while [ ! -s "$pf" ]; do
		if [ "$(t_now_ms)" -ge "$end" ] ||
		    ! kill -0 "$E2E_MOCK_PID" 2>/dev/null; then
			echo "# stand-in did not start: $(cat "$T_TMP/mock-$E2E_N.err")"
			return 1
		fi
		sleep 0.05
	done
	E2E_PORT=$(cat "$pf")
	: >"$E2E_LOG"
	e2e_home
}

# mock_stop: SIGTERM the stand-in and reap it.
mock_stop() {
	[ -n "$E2E_MOCK_PID" ] || return 0
	kill -TERM "$E2E_MOCK_PID" 2>/dev/null
	t_wait_pid "$E2E_MOCK_PID" 5000
	E2E_MOCK_PID=
}

# e2e_home: a fresh HOME holding the config that sends the CLI to the
# stand-in at $E2E_PORT, with a key that is obviously fake.
e2e_home() {
	local url="http://127.0.0.1:$E2E_PORT"
	export HOME=$T_TMP/home-$E2E_N
	mkdir -p "$HOME"
	case $E2E_CLI in
	codex)
		export CODEX_HOME=$HOME/.codex MOCK_API_KEY=sk-mock-e2e
		mkdir -p "$CODEX_HOME"
		cat >"$CODEX_HOME/config.toml" <<CFGEOF
model = "mock-model"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "$url/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 3
stream_max_retries = 2
stream_idle_timeout_ms = 300000

[analytics]
enabled = false
CFGEOF
		;;
	claude)
		export ANTHROPIC_BASE_URL=$url ANTHROPIC_API_KEY=sk-ant-mock-e2e
		export ANTHROPIC_MODEL=claude-mock IS_SANDBOX=1
		;;
	gemini)
		export GOOGLE_GEMINI_BASE_URL=$url GEMINI_API_KEY=mock-e2e-key
		mkdir -p "$HOME/.gemini"
		cat >"$HOME/.gemini/settings.json" <<CFGEOF
{"security": {"auth": {"selectedType": "gemini-api-key"}},
 "privacy": {"usageStatisticsEnabled": false},
 "telemetry": {"enabled": false},
 "general": {"disableAutoUpdate": true, "disableUpdateNag": true}}
CFGEOF
		;;
	qwen)
		export OPENAI_BASE_URL=$url/v1 OPENAI_API_KEY=sk-mock-e2e
		export OPENAI_MODEL=mock-model
		mkdir -p "$HOME/.qwen"
		cat >"$HOME/.qwen/settings.json" <<CFGEOF
{"security": {"auth": {"selectedType": "openai"}},
 "model": {"name": "mock-model"},
 "privacy": {"usageStatisticsEnabled": false},
 "telemetry": {"enabled": false},
 "general": {"disableAutoUpdate": true, "disableUpdateNag": true}}
CFGEOF
		;;
	opencode)
		export XDG_CONFIG_HOME=$HOME/.config XDG_DATA_HOME=$HOME/.local/share
		export XDG_STATE_HOME=$HOME/.local/state XDG_CACHE_HOME=$HOME/.cache
		mkdir -p "$XDG_CONFIG_HOME/opencode"
		cat >"$XDG_CONFIG_HOME/opencode/opencode.json" <<CFGEOF
{"\$schema": "https://opencode.ai/config.json",
 "autoupdate": false, "share": "disabled",
 "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
   "options": {"baseURL": "$url/v1", "apiKey": "sk-mock-e2e"},
   "models": {"mock-model": {"name": "Mock model"}}}},
 "model": "mock/mock-model", "small_model": "mock/mock-model"}
CFGEOF
		;;
	esac
}

# e2e_project DIR: the test project, a copy of examples/calc's calculator
# (subtraction computes b - a) and its TAP suite, committed in a new git
# repository.
e2e_project() {
	mkdir -p "$1/tests"
	cp "$srcdir/examples/calc/calc.sh" "$1/calc.sh"
	cp "$srcdir/examples/calc/tests/run.sh" "$1/tests/run.sh"
	chmod u+w "$1/calc.sh" "$1/tests/run.sh"
	(cd "$1" && git init -q && git add calc.sh tests/run.sh &&
	    git -c user.name=e2e -c user.email=e2e@localhost \
	        commit -q -m "calculator with a bug") || return 1
}

# e2e_fixed DIR: the subtraction is fixed and the suite passes.
e2e_fixed() {
	grep -q "expr='a - b'" "$1/calc.sh" && sh "$1/tests/run.sh" >/dev/null 2>&1
}

# mock_count JQ_LIKE_PY: how many logged requests satisfy the Python
# expression over the record r.
mock_count() {
	python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if eval(sys.argv[2], {"r": r}):
        n += 1
print(n)' "$E2E_LOG" "$1"
}

# mock_wait PYEXPR MS: wait until a logged request satisfies PYEXPR.
mock_wait() {
	local end
	end=$(( $(t_now_ms) + $2 ))
	while [ "$(mock_count "$1")" -lt 1 ]; do
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.1
	done
}

# e2e_agent OUT [ARGS...]: `ccw-supervisor -v -v agent --json --tool CLI`,
# stdout to OUT, stderr (with the PROGRESS lines) to OUT.err; at most
# 300 s.  $E2E_MS is its wall time.
e2e_agent() {
	local out=$1 t0 rc
	shift
	t0=$(t_now_ms)
	timeout -k 5 300 $WRAP "$SUP" -v -v agent --json --tool "$E2E_CLI" "$@" \
	    >"$out" 2>"$out.err"
	rc=$?
	E2E_MS=$(( $(t_now_ms) - t0 ))
	return $rc
}

# e2e_tree_marked MARK: live processes whose environment holds
# CCW_E2E_MARK=MARK: the supervisor, its workers, the CLIs and whatever
# they started (a tool's own process group included).
e2e_tree_marked() {
	python3 - "$1" "$$" <<'PYEOF'
import os, sys
want = ("CCW_E2E_MARK=" + sys.argv[1]).encode()
for p in os.listdir("/proc"):
    if not p.isdigit() or p == sys.argv[2] or int(p) == os.getpid():
        continue
    try:
        env = open("/proc/%s/environ" % p, "rb").read().split(b"\0")
        state = [l for l in open("/proc/%s/status" % p) if l.startswith("State:")]
    except OSError:
        continue
    if want in env and state and state[0].split()[1] != "Z":
        print(p)
PYEOF
}

# e2e_kill_marked MARK: the exit path for a failed case.
e2e_kill_marked() {
	local p
	for p in $(e2e_tree_marked "$1"); do
		kill -KILL "$p" 2>/dev/null
	done
}

. "$E2E_SRC/cases.sh"

# e2e_end: stop the stand-in, print the time taken and the TAP plan.
e2e_end() {
	mock_stop
	echo "# $E2E_CLI: $(( ($(t_now_ms) - E2E_T0) / 1000 )) s in all"
	t_done
}
