#!/usr/bin/env bash
# Guest-side check of the RDMA environment with rdma-core's own tools on rxe0 (10.0.0.1).
# Run by `rdma-vm selfcheck`; a Java test run can run it first in the same boot, so a
# broken environment is told apart from a broken binding. Prints one PASS/FAIL line per
# tool and "selfcheck: N passed, N failed"; exits non-zero if anything failed.
# Env: SELFCHECK_DEV (rxe0), SELFCHECK_ADDR (10.0.0.1), SELFCHECK_STEP_TIMEOUT (120 s;
# the guest runs 10-20x slower than the host).
set -uo pipefail

DEV=${SELFCHECK_DEV:-rxe0}
ADDR=${SELFCHECK_ADDR:-10.0.0.1}
STEP=${SELFCHECK_STEP_TIMEOUT:-120}
LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/selfcheck.XXXXXX")
passed=0
failed=0

result() { # NAME STATUS LOGFILE...
    local name=$1 rc=$2
    shift 2
    if ((rc == 0)); then
        echo "PASS $name"
        passed=$((passed + 1))
    else
        echo "FAIL $name (exit $rc)"
        failed=$((failed + 1))
        local f
        for f in "$@"; do sed "s/^/  | /" "$f"; done
    fi
}

single() { # NAME EXPECTED-REGEX COMMAND...
    local name=$1 expect=$2 log=$LOGDIR/$1.log rc=0
    shift 2
    timeout "$STEP" "$@" >"$log" 2>&1 || rc=$?
    if ((rc == 0)) && ! grep -qE "$expect" "$log"; then
        echo "output lacks /$expect/" >>"$log"
        rc=1
    fi
    result "$name" "$rc" "$log"
}

# Server in the background, then the client; the client is retried while the server is
# still starting (nothing listens yet: connection refused / REJ), never after it exited.
pair() { # NAME "SERVER CMD" "CLIENT CMD"
    local name=$1 server=$2 client=$3 slog=$LOGDIR/$1.server.log clog=$LOGDIR/$1.client.log
    local spid crc=1 src=0 try
    # shellcheck disable=SC2086 # the commands are word lists
    timeout "$STEP" $server >"$slog" 2>&1 &
    spid=$!
    for try in 1 2 3 4 5 6 7 8 9 10; do
        sleep 1
        kill -0 "$spid" 2>/dev/null || break
        # shellcheck disable=SC2086
        timeout "$STEP" $client >"$clog" 2>&1 && { crc=0; break; }
        crc=$?
        echo "client attempt $try: exit $crc" >>"$clog.tries"
    done
    # A server whose client never got through would wait for the whole step timeout.
    ((crc == 0)) || kill "$spid" 2>/dev/null
    wait "$spid" || src=$?
    touch "$clog.tries" "$clog"
    result "$name" "$((crc != 0 ? crc : src))" "$slog" "$clog.tries" "$clog"
}

# Clients connect to $ADDR: make sure it is this machine's own (the VM's dummy0), so a run
# outside the VM cannot send anything onto a real network.
if [[ $(ip -o addr show 2>/dev/null) != *"inet $ADDR/"* ]]; then
    echo "FAIL $ADDR is not a local address (not inside rdma-vm?)"
    echo "selfcheck: 0 passed, 1 failed"
    exit 1
fi

single ibv_devices "^[[:space:]]+${DEV}[[:space:]]" ibv_devices
single ibv_devinfo "PORT_ACTIVE" ibv_devinfo -d "$DEV"
pair rping "rping -s -a $ADDR -C 3 -v" "rping -c -a $ADDR -C 3 -v"
pair ucmatose "ucmatose" "ucmatose -s $ADDR"
pair ibv_rc_pingpong "ibv_rc_pingpong -d $DEV -g 1" "ibv_rc_pingpong -d $DEV -g 1 $ADDR"
pair "ibv_rc_pingpong -e" "ibv_rc_pingpong -d $DEV -g 1 -e" "ibv_rc_pingpong -d $DEV -g 1 -e $ADDR"

rm -rf "$LOGDIR"
echo "selfcheck: $passed passed, $failed failed"
((failed == 0))
