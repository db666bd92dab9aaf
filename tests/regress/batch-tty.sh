#!/bin/bash
# batch-tty.sh: `batch` on a real terminal, as a person sees it: inside
# tmux (a private server), a line per running item with its role and
# elapsed time and a totals line, redrawn in place (never piled up); a
# line that stays for each item that ended; the summary table at the end.
. "$(dirname "$0")/lib.sh"
t_watchdog 120
. "$(dirname "$0")/tmux-lib.sh"
t_valgrind_worker

R=$T_TMP/tty
mkdir -p "$R"
# develop waits for a file, so the live lines can be read at leisure
cat >"$R/dev.sh" <<EOF
#!/bin/bash
echo "working on it"
while [ ! -e "$R/go" ]; do sleep 0.05; done
printf 'WORKER_RESULT:\n- status: success\n- summary: done\n'
EOF
OK="printf 'WORKER_RESULT:\n- status: success\n- summary: ok\n'"
t_run_config "$R" "$OK" "bash $R/dev.sh" "$OK" "$OK" "$OK" '{"grace_ms": 500}'
for i in 1 2 3; do
	printf '{"title": "title number %d", "max_iterations": 5}\n' "$i"
done >"$R/items.jsonl"
tm new-session -d -s b -x 160 -y 40 "cd '$R' && $WRAP '$SUP' batch items.jsonl \
--jobs 2; echo EXIT=\$?; read x"

wait_screen b 'item-00[12] +title number [12] +develop' 2 30000
ok $? "a line per running item: id, title, role"
[ "$T_FAILED" -gt 0 ] && sed 's/^/#   /' <<<"$SCREEN" | tail -n 12
# the rows come before the workers' first progress (a sanitizer build is
# slow to start them), and a capture may catch the block half redrawn:
# wait for each
wait_screen b 'item-00[12] .*working on it' 2 30000
ok $? "the worker's last progress line is shown"
wait_screen b 'batch-[0-9T]+-[0-9a-f]+: 0/3 completed, 0 failed, 0 blocked, 2 running' 1 30000
ok $? "the totals line"
# once the elapsed time moved the block was redrawn: still one totals
# line (wait for the tick, not a second and more)
wait_screen b 'develop +[1-9][0-9]*s' 1 30000
is "$(grep -cE '/3 completed' <<<"$SCREEN")" 1 "redrawn in place: one totals line, not one per tick"
is "$(grep -cE 'item-001 +title number 1' <<<"$SCREEN")" 1 "redrawn in place: one line for the item"
like "$SCREEN" 'develop +[1-9][0-9]*s' "the elapsed time counts"
touch "$R/go"
wait_screen b 'EXIT=' 1 30000
ok $? "the batch ends"
like "$SCREEN" 'EXIT=0' "exit 0"
is "$(grep -cE '^ok +item-00[123] completed' <<<"$SCREEN")" 3 "a line that stays for each ended item"
like "$SCREEN" 'ITEM +STATUS +TIME +LOOP' "the summary table"
like "$SCREEN" 'item-003 +completed .*loop-v2-' "a summary row: status and loop"
like "$SCREEN" '3/3 completed, 0 failed, 0 blocked, 0 running' "the summary's totals"
is "$(grep -cE 'running; ' <<<"$SCREEN")" 1 "no live block left behind"

t_done
