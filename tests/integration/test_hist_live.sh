#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The --hist live view in a real terminal: tmux runs a shell in a 120x40
# pane, the shell runs kmemsnoop --hist (its stdout is the terminal, so
# the live view starts by itself) while a workload allocates.  From what
# capture-pane shows:
#   screen      the title, per-second totals (and per class: kmalloc,
#               cache, page, vmalloc, percpu), histogram bars, the heat map
#               and the cache and call-site tables are on screen, and the
#               title bar spans the pane's width;
#   resize      after the pane becomes 100x30 the view is redrawn to fit
#               it; at 40x8 it says the terminal is too small; back at
#               120x40 it is whole again;
#   quit        q ends kmemsnoop with status 0;
#   restored    the shell's screen is back (the view is gone, the prompt
#               and kmemsnoop's closing line show);
#   ctrl_c      a second run ended by Ctrl-C: status 0, screen restored.
#
# vmtest: host only: the terminal view draws what --hist reads (test_hist runs
#   in the VMs).
. "$(dirname "$0")/../lib.sh"

TESTS=(live.screen live.resize live.too_small live.quit live.restored live.ctrl_c)

require_root
require_kmemsnoop
require_workload
command -v tmux >/dev/null || skip_all "tmux is not installed (tools/install-deps.sh installs it)"

SCREEN_TIMEOUT=${SCREEN_TIMEOUT:-60}

# The live view's elements; "q: quit" ends the title bar at the pane's
# right edge (COLS - 8, 1-based).
view_shown() { # COLS
	wait_screen "$SCREEN_TIMEOUT" '
	NR == 1 && /kmemsnoop --hist/ && index($0, "q: quit") == '"$(($1 - 8))"' { title = 1 }
	/allocs\/s/ && /frees\/s/ { totals = 1 }
	/kmalloc\/s .*cache\/s .*page\/s .*vmalloc\/s .*percpu\/s .* missed [0-9]+ untracked [0-9]+$/ { classes = 1 }
	/^ *[0-9]+[KMG]?-[0-9]+[KMG]? +[0-9.]+[KMG]? \|\*+ *\|/ { bars = 1 }
	/newest right/ { heat = 1 }
	/^CACHE .*ALLOCS\/s +BYTES\/s +CALL SITE .*ALLOCS\/s +BYTES\/s$/ { tables = 1 }
	END { exit !(title && totals && classes && bars && heat && tables) }'
}

tmux_start live 120 40
case $? in
2) skip_all "tmux cannot start a session" ;;
1)
	fail_rest "${TESTS[@]}" "the shell in tmux did not start: $(describe_screen head 12)"
	finish
	;;
esac

# Something to show: allocations for as long as the test runs.
"$WORKLOAD" noise 300 200 >/dev/null 2>&1 &
BG_PIDS+=($!)

tm send-keys -t live "'$KMEMSNOOP' --hist 0.5; echo EXIT=\$?" Enter
if view_shown 120; then
	pass live.screen
else
	fail_rest "${TESTS[@]}" "the live view did not show within ${SCREEN_TIMEOUT}s: $(describe_screen head 12)"
	finish
fi

tm resize-window -t live -x 100 -y 30
if view_shown 100 && [ "$(grep -c '' "$WORK/screen")" -eq 30 ]; then
	pass live.resize
else
	fail live.resize "not redrawn for 100x30: $(describe_screen head 12)"
fi

tm resize-window -t live -x 40 -y 8
wait_screen 20 '/too small/ { ok = 1 } END { exit !ok }'
small=$?
tm resize-window -t live -x 120 -y 40
[ $small -eq 0 ] && view_shown 120
check $? live.too_small "at 40x8 and back at 120x40: $(describe_screen head 12)"

tm send-keys -t live q
wait_screen 30 '/^EXIT=/ { rc = $0 } END { exit !(rc == "EXIT=0") }'
check $? live.quit "after q: $(describe_screen head 12)"

# The view used the alternate screen: gone, the shell's lines are back.
wait_screen 10 '
/CALL SITE|newest right|q: quit/ { view = 1 }
/kmemsnoop: Tracing kernel allocations/ { tracing = 1 }
/^kmemsnoop: [0-9]+ allocations \(/ { summary = 1 }
/READY\$ *$/ { prompt = 1 }
END { exit !(!view && tracing && summary && prompt) }'
check $? live.restored "the shell's screen is not back: $(describe_screen head 12)"

tm send-keys -t live "clear; '$KMEMSNOOP' --hist 0.5; echo EXIT=\$?" Enter
if view_shown 120; then
	tm send-keys -t live C-c
	wait_screen 30 '
	/^EXIT=/ { rc = $0 }
	/CALL SITE|newest right|q: quit/ { view = 1 }
	END { exit !(rc == "EXIT=0" && !view) }'
	check $? live.ctrl_c "after Ctrl-C: $(describe_screen head 12)"
else
	fail live.ctrl_c "the second live view did not show: $(describe_screen head 12)"
fi

tm kill-server 2>/dev/null
finish
