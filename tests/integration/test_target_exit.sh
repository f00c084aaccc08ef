#!/usr/bin/env bash
# A target that exits mid-profile: the collector notices, writes a valid
# profile of what it saw (symbolized, though the process is gone) and exits 0.
. "$(dirname "$0")/lib.sh"
need_root

start_bg "$WORKLOADS/shares" --seconds 2
wl=$!
sleep 0.2
start=$(date +%s)
timeout 20 "$COLLECTOR" --pid "$wl" --duration 15 --frequency 499 -o "$TMP/exit.pb.gz" 2>"$TMP/log"
rc=$?
took=$(($(date +%s) - start))
cat "$TMP/log"
[ $rc -eq 0 ] && ok "collector exited 0" || fail "collector exited $rc"
[ "$took" -lt 10 ] && ok "stopped with the target after ${took}s" || fail "ran ${took}s: did not notice the target exit"
grep -q "(target exited)" "$TMP/log" && ok "summary says the target exited" || fail "summary does not say why it stopped"
"$PPROF" -top "$TMP/exit.pb.gz" > "$TMP/top" 2>&1 || fail "pprof cannot read the profile"
grep -q leaf_delta "$TMP/top" && ok "symbolized after the target exited" || fail "leaf_delta not named"
check_reconciled "$TMP/log" "$TMP/exit.pb.gz"

# SIGINT: the profile so far is written, exit 0
start_bg "$WORKLOADS/shares"
wl=$!
"$COLLECTOR" --pid "$wl" -o "$TMP/int.pb.gz" 2>"$TMP/log2" &
col=$!
sleep 2
kill -INT $col
wait $col
rc=$?
cat "$TMP/log2"
[ $rc -eq 0 ] && ok "SIGINT: exit 0" || fail "SIGINT: exit $rc"
"$PPROF" -top "$TMP/int.pb.gz" 2>/dev/null | grep -q leaf_gamma && ok "SIGINT: profile written" ||
	fail "SIGINT: no usable profile"
start_bg "$COLLECTOR" --pid "$wl" -o "$TMP/term.pb.gz"
col=$!
sleep 1.5
kill -TERM $col
wait $col
rc=$?
[ $rc -eq 0 ] && ok "SIGTERM: exit 0" || fail "SIGTERM: exit $rc"
"$PPROF" -top "$TMP/term.pb.gz" >/dev/null 2>&1 && ok "SIGTERM: profile written" || fail "SIGTERM: no profile"
finish
