# tmux-lib.sh: sourced after lib.sh by the tests that drive a program on a
# real terminal (run-interactive.sh, batch-tty.sh): a private tmux server
# on the test's own socket, gone with the test; the screen read and waited
# for.  Without tmux the test is skipped whole.
if ! command -v tmux >/dev/null 2>&1; then
	echo "1..0 # SKIP tmux not available"
	exit 0
fi
SOCK=$T_TMP/tmux.sock

# tm ARGS...: tmux on this test's own server, no user configuration.
tm() {
	tmux -f /dev/null -S "$SOCK" "$@"
}

# The exit trap: our tmux server (and the programs in its panes) go too.
trap 'tm kill-server >/dev/null 2>&1; t_cleanup_agents' EXIT

# screen SESSION: the pane's text, with its scrollback.
screen() {
	tm capture-pane -p -J -t "$1" -S -1000 2>/dev/null
}

# wait_screen SESSION REGEX COUNT MS: wait (t_until) until REGEX matches
# COUNT lines of the screen; the screen goes to $SCREEN.
wait_screen() {
	local end
	end=$(t_until "$4")
	while :; do
		SCREEN=$(screen "$1")
		[ "$(grep -cE -- "$2" <<<"$SCREEN")" -ge "$3" ] && return 0
		[ "$(t_now_ms)" -ge "$end" ] && return 1
		sleep 0.1
	done
}
