#!/usr/bin/env bash
# Tags interned before the collector attached still get their names.
# The requests workload interns its three endpoint tags once, at start, and
# then only runs spans.  A first collector reads the dictionary records; a
# second one, attached after (a collector restart), finds none left in the
# lanes: it must ask the library to send the dictionary again
# (dict_replay_request), and the library must answer on the span traffic,
# since the workload never interns again.  So the second profile has to show
# endpoint=/checkout, /search and /login labels, and no ctxprof_tag_id.
. "$(dirname "$0")/lib.sh"
need_root

start_bg "$WORKLOADS/requests" --threads 2
wl=$!
sleep 0.5
"$COLLECTOR" --pid "$wl" --duration 1.5 --frequency 499 -o "$TMP/first.pb.gz" 2>"$TMP/first.log"
rc=$?
grep "trace context" "$TMP/first.log"
[ $rc -eq 0 ] || fail "first collector exited $rc"
"$COLLECTOR" --pid "$wl" --duration 3 --frequency 999 -o "$TMP/second.pb.gz" 2>"$TMP/log"
rc=$?
cat "$TMP/log"
[ $rc -eq 0 ] || fail "second collector exited $rc"
"$PPROF" -tags "$TMP/second.pb.gz" > "$TMP/tags" 2>/dev/null || fail "pprof -tags failed"
sed -n '/endpoint:/,/^$/p; /ctxprof_tag_id:/,/^$/p' "$TMP/tags"
for ep in /checkout /search /login; do
	grep -q ": $ep\$" "$TMP/tags" && ok "tag endpoint=$ep in the second profile" ||
		fail "no endpoint=$ep tag label in the second profile"
done
if grep -q "ctxprof_tag_id" "$TMP/tags"; then
	fail "samples labeled with bare tag ids: the dictionary never reached the second collector"
else
	ok "no sample with a bare ctxprof_tag_id"
fi
replays=$(sed -n 's/.* \([0-9]*\) dictionary replays requested.*/\1/p' "$TMP/log")
[ "${replays:-0}" -ge 1 ] && ok "the second collector asked for the dictionary ($replays)" ||
	fail "no dictionary replay request counted"
check_reconciled "$TMP/log" "$TMP/second.pb.gz"
finish
