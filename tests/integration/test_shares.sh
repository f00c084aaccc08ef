#!/usr/bin/env bash
# Profile the shares workload (leaf CPU shares 10/20/30/40 % by construction)
# and check with the reference pprof tool: each leaf within 5 points of its
# share, every leaf's callers up to main in its stacks, mappings with build
# ids, labels on samples, and drop accounting.
. "$(dirname "$0")/lib.sh"
need_root

start_bg "$WORKLOADS/shares" --threads 2
wl=$!
sleep 0.5
"$COLLECTOR" --pid "$wl" --duration 6 --frequency 999 -o "$TMP/shares.pb.gz" 2>"$TMP/log"
rc=$?
cat "$TMP/log"
[ $rc -eq 0 ] || fail "collector exited $rc"
[ -s "$TMP/shares.pb.gz" ] || { fail "no profile written"; finish; }

"$PPROF" -top -nodecount=15 "$TMP/shares.pb.gz" > "$TMP/top" 2>&1 || fail "pprof -top failed"
cat "$TMP/top"
for pair in alpha:10 beta:20 gamma:30 delta:40; do
	fn=leaf_${pair%%:*} want=${pair##*:}
	got=$(flat_pct "$TMP/shares.pb.gz" "$fn")
	if awk -v g="$got" -v w="$want" 'BEGIN { d = g - w; exit !(d <= 5 && d >= -5) }'; then
		ok "$fn: $got% (truth $want%)"
	else
		fail "$fn: $got% is not within 5 points of $want%"
	fi
done

"$PPROF" -traces "$TMP/shares.pb.gz" > "$TMP/traces" 2>&1 || fail "pprof -traces failed"
for leaf in alpha beta gamma delta; do
	# a trace block lists the leaf first, then its callers, one per line;
	# look for a block holding leaf, stage, run_cycle, worker in a row, then main
	if awk -v want="leaf_$leaf stage_$leaf run_cycle worker" '
		function check() { if (index(seq, " " want " ") && seq ~ / main /) found = 1; seq = " " }
		BEGIN { seq = " " }
		/^-+[+]-+$/ { check(); next }
		/^ *[a-z_]+: / { next }
		NF { seq = seq $NF " " }
		END { check(); exit !found }' "$TMP/traces"; then
		ok "leaf_$leaf stack reaches main through stage_$leaf, run_cycle, worker"
	else
		fail "no trace leaf_$leaf <- stage_$leaf <- run_cycle <- worker <- main"
	fi
done

"$PPROF" -raw "$TMP/shares.pb.gz" > "$TMP/raw" 2>&1 || fail "pprof -raw failed"
bid=$(readelf -n "$WORKLOADS/shares" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
if grep -q "$WORKLOADS/shares.*$bid\|$bid.*$WORKLOADS/shares" "$TMP/raw"; then
	ok "mapping of $WORKLOADS/shares carries build id $bid"
else
	fail "no mapping with the workload's path and build id $bid"; grep -A5 '^Mappings' "$TMP/raw"
fi
grep -q "thread_id:\[$wl\]" "$TMP/raw" && ok "thread_id label" || fail "no thread_id:[$wl] label"
grep -q "pid:\[$wl\]" "$TMP/raw" && ok "pid label" || fail "no pid:[$wl] label"
grep -q "thread_name:\[shares\]" "$TMP/raw" && ok "thread_name label" || fail "no thread_name label"
ntids=$(grep -o 'thread_id:\[[0-9]*\]' "$TMP/raw" | sort -u | wc -l)
[ "$ntids" -ge 2 ] && ok "$ntids threads seen" || fail "only $ntids thread(s) seen, want 2"

check_reconciled "$TMP/log" "$TMP/shares.pb.gz"
finish
