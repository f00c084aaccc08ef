#!/usr/bin/env bash
# A recycled context slot never lends its new owner's span to its old owner.
# The recycle workload has two threads take turns in ONE libctxprof slot
# (max_threads 1): ctx_a holds it with span a1a1..., leaves, ctx_b takes it
# over with span b1b1..., leaves, and so on every 40 ms, both burning CPU all
# the time.  The collector maps a tid to its slot only at its polls (every
# 100 ms), so between two polls the sampler still has the previous owner's
# tid -> slot entry: it must see that the slot changed hands (state,
# generation, tid) and give "no context" (counted as stale), so that
#  - no sample of ctx_a carries ctx_b's span, and none of ctx_b ctx_a's;
#  - each thread's samples inside its own turns do carry its own span (once a
#    poll in that turn mapped it: a new owner is unknown until then).
. "$(dirname "$0")/lib.sh"
need_root

start_bg "$WORKLOADS/recycle" --hold 40
wl=$!
sleep 0.5
"$COLLECTOR" --pid "$wl" --duration 5 --frequency 999 -o "$TMP/recycle.pb.gz" 2>"$TMP/log"
rc=$?
cat "$TMP/log"
[ $rc -eq 0 ] || fail "collector exited $rc"
"$PPROF" -raw "$TMP/recycle.pb.gz" > "$TMP/raw" 2>/dev/null || fail "pprof -raw failed"

# samples per (thread name, span id); "-" when the sample has no span label
awk '
	/^Samples:/ { on = 1; next }
	/^Locations/ { on = 0 }
	!on { next }
	/^ +[0-9]+ +[0-9]+: / { flush(); n = $1; name = "?"; span = "-"; next }
	{
		if (match($0, /thread_name:\[[^]]*\]/)) name = substr($0, RSTART + 13, RLENGTH - 14)
		gsub(/local_root_span_id:/, "root:")
		if (match($0, /span_id:\[[0-9a-f]*\]/))
			span = substr($0, RSTART + 9, RLENGTH - 10)
	}
	function flush() { if (n) count[name " " span] += n; n = 0 }
	END { flush(); for (k in count) print k, count[k] }' "$TMP/raw" | sort > "$TMP/counts"
cat "$TMP/counts"
get() { awk -v k="$1 $2" '$1 " " $2 == k { print $3; f = 1 } END { if (!f) print 0 }' "$TMP/counts"; }
A=a1a1a1a1a1a1a1a1
B=b1b1b1b1b1b1b1b1
a_own=$(get ctx_a $A)
a_wrong=$(get ctx_a $B)
b_own=$(get ctx_b $B)
b_wrong=$(get ctx_b $A)

[ "$a_wrong" -eq 0 ] && ok "no sample of ctx_a carries ctx_b's span" ||
	fail "$a_wrong samples of ctx_a carry ctx_b's span $B"
[ "$b_wrong" -eq 0 ] && ok "no sample of ctx_b carries ctx_a's span" ||
	fail "$b_wrong samples of ctx_b carry ctx_a's span $A"
if [ "$a_own" -ge 20 ] && [ "$b_own" -ge 20 ]; then
	ok "each thread's own span labels its turns: ctx_a $a_own samples, ctx_b $b_own"
else
	fail "too few samples with the thread's own span: ctx_a $a_own, ctx_b $b_own (want >= 20)"
fi
stale=$(sed -n 's/.* \([0-9]*\) stale (slot changed hands).*/\1/p' "$TMP/log")
[ "${stale:-0}" -gt 0 ] && ok "$stale samples found their slot taken over (counted stale)" ||
	fail "no stale slot counted in the summary"
check_reconciled "$TMP/log" "$TMP/recycle.pb.gz"
finish
