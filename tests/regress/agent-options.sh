#!/bin/bash
# agent-options.sh: what `agent` tells a tool and reports back (issue 9):
# a nudge counts only once delivered; cost_usd is null when the tool
# reported none; a state directory made inside a git work tree ignores
# itself; each role's permission reaches the worker; the result contract
# is appended to the message unless --raw.
. "$(dirname "$0")/lib.sh"
t_watchdog 60
t_marker M options
S=$T_TMP/state
R=$T_TMP/r

# -- a nudge the tool cannot take now (no live input) is queued for a
# resumed turn; the tool never ends its turn, so it was never delivered
cat >"$T_TMP/codex-mute" <<FAKEEOF
#!/bin/bash
cat >/dev/null
exec '$FAKE' --marker $M hang
FAKEEOF
chmod +x "$T_TMP/codex-mute"
printf '{"tools":{"codex":{"path":"%s"}}}\n' "$T_TMP/codex-mute" \
    >"$T_TMP/cfg-mute.json"
agent "$R" develop --tool codex --config "$T_TMP/cfg-mute.json" \
    --state-dir "$S" --timeout-ms 300 --nudge-ms 300 --grace-ms 300 "go"
is "$?" 5 "undeliverable nudge: timed out (exit 5)"
is "$(jget "$R" '[d["timed_out"], d["nudged"], d["nudge"]]')" \
    '[true,false,"queued"]' "undeliverable nudge: nudged false, nudge queued"
t_wait_gone "$M" 2000

# -- a stream with tokens and no cost: cost_usd null, not 0.0
printf '#!/bin/bash\ncat >/dev/null\nexec %s replay %s\n' "$FAKE" \
    "$srcdir/tests/streams/codex-success.jsonl" >"$T_TMP/codex"
chmod +x "$T_TMP/codex"
printf '{"tools":{"codex":{"path":"%s"}}}\n' "$T_TMP/codex" >"$T_TMP/cfg.json"
agent "$R" develop --tool codex --config "$T_TMP/cfg.json" --state-dir "$S" \
    "go"
is "$(jget "$R" '[d["usage"]["input_tokens"] > 0, d["usage"]["cost_usd"]]')" \
    '[true,null]' "no cost reported: cost_usd null"

# -- a state directory created in a git work tree ignores itself
mkdir -p "$T_TMP/repo/sub" "$T_TMP/plain"
git -C "$T_TMP/repo" init -q
agent "$R" develop --tool bash -C "$T_TMP/repo/sub" --command true "go"
is "$(cat "$T_TMP/repo/sub/.loop/.gitignore" 2>/dev/null)" '*' \
    "git work tree: .loop/.gitignore is *"
is "$(git -C "$T_TMP/repo" status --porcelain --untracked-files=all)" "" \
    "git work tree: git sees nothing of the loop's files"
mkdir -p "$T_TMP/repo/.workflow/.loop"
echo keep >"$T_TMP/repo/.workflow/.loop/.gitignore"
agent "$R" develop --tool bash -C "$T_TMP/repo" --command true "go"
is "$(cat "$T_TMP/repo/.workflow/.loop/.gitignore")" keep \
    "git work tree: an existing .gitignore is left alone"
agent "$R" develop --tool bash -C "$T_TMP/plain" --command true "go"
ok $([ -d "$T_TMP/plain/.loop" ] && [ ! -e "$T_TMP/plain/.loop/.gitignore" ]; echo $?) \
    "no git work tree: no .gitignore"

# -- each role's permission goes to the worker (options.permission)
for role in init develop debug validate complete; do
	agent "$R" $role --tool bash --state-dir "$S" --command true "go"
	printf '%s=%s ' $role "$(jget "$R" 'd["permission"]')"
done >"$T_TMP/perms"
is "$(cat "$T_TMP/perms")" \
    "init=read-only develop=workspace-write debug=workspace-write validate=workspace-write complete=read-only " \
    "permission: safe defaults per role"
printf '{"roles":{"init":{"permission":"full"}}}\n' >"$T_TMP/cfg-perm.json"
agent "$R" init --tool bash --state-dir "$S" --config "$T_TMP/cfg-perm.json" \
    --command true "go"
is "$(jget "$R" 'd["permission"]')" full "permission: roles.init.permission"

# -- the result contract follows the message, unless --raw
cat >"$T_TMP/codex-cat" <<FAKEEOF
#!/bin/bash
cat >"$T_TMP/prompt"
exec '$FAKE' replay '$srcdir/tests/streams/codex-success.jsonl'
FAKEEOF
chmod +x "$T_TMP/codex-cat"
printf '{"tools":{"codex":{"path":"%s"}}}\n' "$T_TMP/codex-cat" \
    >"$T_TMP/cfg-cat.json"
agent "$R" develop --tool codex --config "$T_TMP/cfg-cat.json" \
    --state-dir "$S" "fix the bug"
p=$(cat "$T_TMP/prompt")
is "$(head -n 1 "$T_TMP/prompt")" "fix the bug" "contract: the message first"
like "$p" '^WORKER_RESULT:$' "contract: the WORKER_RESULT block follows"
like "$p" '^- action: develop$' "contract: in the role's name"
agent "$R" develop --tool codex --config "$T_TMP/cfg-cat.json" \
    --state-dir "$S" --raw "fix the bug"
is "$(cat "$T_TMP/prompt")" "fix the bug" "--raw: the message alone"

t_done
