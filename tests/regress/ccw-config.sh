#!/bin/bash
# ccw-config.sh: CCW's cli-tools.json and cli-settings.json read as CCW
# reads them: a malformed file is one warning and CCW's defaults (never
# exit 2); codex disabled picks CCW's default tool; "enabled": "false"
# disables; envFile reaches the tool's environment, settingsFile and
# effort claude's argv; $CCW_DATA_DIR/.claude is read first; in a file
# CCW wrote (version 3.4.0) a tool it leaves out is disabled (doctor).
. "$(dirname "$0")/lib.sh"
t_watchdog 60

export HOME=$T_TMP/home
unset CCW_DATA_DIR
R=$T_TMP/root
mkdir -p "$HOME/.claude" "$HOME/.gemini" "$R" "$T_TMP/bin"

# A stand-in for gemini and claude: it records argv and the environment's
# CCWTEST_* variables, then speaks gemini's stream-json.
cat >"$T_TMP/bin/fake" <<FAKE
#!/bin/sh
printf '%s\n' "\$0 \$*" >>"$T_TMP/argv"
env | grep '^CCWTEST_' | sort >>"$T_TMP/env"
cat >/dev/null
echo '{"type":"init","session_id":"s-1","model":"m"}'
echo '{"type":"message","role":"assistant","content":"done\\\\nWORKER_RESULT:\\\\n- status: success\\\\n- summary: ok\\\\n","delta":true}'
echo '{"type":"result","status":"success","stats":{}}'
FAKE
chmod +x "$T_TMP/bin/fake"
ln -s fake "$T_TMP/bin/gemini"
ln -s fake "$T_TMP/bin/claude"
ln -s fake "$T_TMP/bin/qwen"
PATH=$T_TMP/bin:$PATH

sup() {
	timeout -k 2 30 $WRAP "$SUP" "$@" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
}

# --- a malformed cli-tools.json: a warning naming it, every tool enabled
echo '{"tools": {"codex": ' >"$HOME/.claude/cli-tools.json"
sup agent -C "$R" --tool bash --command true develop "do it"
is "$rc" 0 "malformed cli-tools.json: agent still runs (exit $rc)"
like "$(cat "$T_TMP/err")" "warning: $HOME/.claude/cli-tools.json: line [0-9]+" \
    "a warning naming the file and the parse error"
is "$(grep -c warning "$T_TMP/err")" 1 "one warning"
sup doctor -C "$R" --json
like "$(jget "$T_TMP/out" "d['warnings']")" 'cli-tools.json' \
    "doctor reports the malformed file"
is "$(jget "$T_TMP/out" "d['default_tool']['name']")" gemini \
    "doctor: CCW's default tool (gemini) with CCW's files"

# --- codex disabled, no other configuration: gemini, CCW's default
echo '{"tools": {"codex": {"enabled": false}, "gemini": {"enabled": true, "envFile": "~/.gemini/.env"}}}' \
    >"$HOME/.claude/cli-tools.json"
printf '# a comment\nexport CCWTEST_A=one\nCCWTEST_B="two words"\n' \
    >"$HOME/.gemini/.env"
sup agent -C "$R" develop "do it"
is "$rc" 0 "codex disabled: agent runs CCW's default tool (exit $rc)"
like "$(cat "$T_TMP/argv" 2>/dev/null)" '/gemini ' "the tool run is gemini"
is "$(cat "$T_TMP/env" 2>/dev/null | tr '\n' ' ')" \
    "CCWTEST_A=one CCWTEST_B=two words " "envFile loaded into gemini's environment"
rm -f "$T_TMP/argv" "$T_TMP/env"

# --- "enabled": "false" disables; cli-settings.json's defaultTool
echo '{"tools": {"codex": {"enabled": false}, "gemini": {"enabled": "false"}, "claude": {"enabled": true, "settingsFile": "~/cs.json", "effort": "high"}}}' \
    >"$HOME/.claude/cli-tools.json"
sup agent -C "$R" --tool gemini develop "do it"
is "$rc" 2 "enabled \"false\" (a string) disables gemini (exit 2)"
like "$(cat "$T_TMP/err")" "disabled" "and says so"
echo '{"defaultTool": "claude"}' >"$HOME/.claude/cli-settings.json"
sup doctor -C "$R" --json
is "$(jget "$T_TMP/out" "d['default_tool']['name']")" claude \
    "defaultTool of cli-settings.json is the default"
like "$(jget "$T_TMP/out" "d['default_tool']['reason']")" 'cli-settings.json' \
    "and doctor says why"
sup agent -C "$R" develop "do it"
like "$(cat "$T_TMP/argv" 2>/dev/null)" "/claude .*--settings $HOME/cs.json --effort high" \
    "settingsFile and effort reach claude's argv"
rm -f "$T_TMP/argv" "$T_TMP/env" "$HOME/.claude/cli-settings.json"

# --- $CCW_DATA_DIR/.claude/cli-tools.json before ~/.claude
mkdir -p "$T_TMP/data/.claude"
echo '{"tools": {"codex": {"enabled": false}, "gemini": {"enabled": false}, "claude": {"enabled": false}}}' \
    >"$T_TMP/data/.claude/cli-tools.json"
CCW_DATA_DIR=$T_TMP/data sup agent -C "$R" develop "do it"
is "$rc" 0 "CCW_DATA_DIR: agent runs (exit $rc)"
like "$(cat "$T_TMP/argv" 2>/dev/null)" '/qwen ' \
    "CCW_DATA_DIR's file read: the first enabled tool, qwen"

# --- a file CCW wrote (version 3.4.0): only what it lists enabled is
echo '{"version": "3.4.0", "tools": {"gemini": {"enabled": true}}}' \
    >"$HOME/.claude/cli-tools.json"
sup doctor -C "$R" --json
is "$(jget "$T_TMP/out" "[t['enabled'] for t in d['tools'] if t['name'] in ('claude', 'gemini', 'bash')]")" \
    '[true,false,true]' "doctor: claude, absent from a 3.4.0 file, is disabled"
sup doctor -C "$R"
like "$(cat "$T_TMP/out")" 'claude +no ' "doctor's table says claude: no"
rm -f "$T_TMP/argv"	# doctor ran each tool's --version
sup agent -C "$R" --tool claude develop "do it"
is "$rc" 2 "agent --tool claude refused (exit $rc)"
like "$(cat "$T_TMP/err")" "disabled" "and says so"
is "$(cat "$T_TMP/argv" 2>/dev/null)" "" "claude never ran"

t_done
