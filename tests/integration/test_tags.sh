#!/usr/bin/env bash
# Every tag a sample carries is named: no pair of the dictionary is lost for
# good.  The requests workload interns 3,000 more pairs ("item") in one burst,
# far more than the interning thread's two 4 KiB detail rings hold, and never
# interns or flushes again; its workers' span events carry the records that
# did not fit.  Each case wants every profile after the first interval to
# hold item labels and 0 bare ctxprof_tag_id labels:
#   1. --pid, continuous (-i 1): the burst comes after the collector attached
#      and its dictionary replay was served (the workload waits for SIGUSR1);
#   2. --pid, continuous: the burst came before any collector ran;
#   3. --all, continuous: the same, the workload's samples found by their pid label;
#   4. a collector restart: a second collector on the process of case 2.
. "$(dirname "$0")/lib.sh"
need_root

# $1: case name; $2: the workload's pid; $3..: profiles of the intervals after the first
check_named() {
	local name=$1 wl=$2 f bare items checked=0 before=$failures
	shift 2
	for f in "$@"; do
		"$PPROF" -tags -tagfocus="pid=$wl" "$f" >"$TMP/tags" 2>/dev/null ||
			{ fail "$name: pprof -tags failed on $(basename "$f")"; continue; }
		bare=$(sed -n '/ctxprof_tag_id:/,/^$/p' "$TMP/tags" | grep -c '^ *[0-9]')
		items=$(sed -n '/ item:/,/^$/p' "$TMP/tags" | grep -c ': i[0-9]\{5\}$')
		if [ "$bare" -ne 0 ]; then
			fail "$name: $(basename "$f") has $bare bare tag ids"
			sed -n '/ctxprof_tag_id:/,/^$/p' "$TMP/tags" | head -5
		elif [ "$items" -eq 0 ]; then
			fail "$name: $(basename "$f") has no item label (the test cannot fail)"
		fi
		checked=$((checked + 1))
	done
	if [ "$checked" -lt 2 ]; then
		fail "$name: $checked profiles to check, want 2 or more"
	elif [ "$failures" -eq "$before" ]; then
		ok "$name: $checked profiles after the first, every tag named"
	fi
}

# 1. the burst after the collector attached
start_bg "$WORKLOADS/requests" --threads 2 --seconds 30 --tags 3000 --tags-on-usr1
wl=$!
sleep 0.2
mkdir -p "$TMP/after"
"$COLLECTOR" --pid "$wl" --interval 1 --duration 5 --frequency 499 \
	--output-dir "$TMP/after" 2>"$TMP/after.log" &
col=$!
PIDS+=($col)
for _ in $(seq 100); do
	grep -q "profiling pid" "$TMP/after.log" && break
	sleep 0.1
done
sleep 1 # the first interval: the replay it asked for is served by now
kill -USR1 "$wl"
wait $col
rc=$?
kill "$wl"
grep -E "trace context|dictionary|tag" "$TMP/after.log"
[ $rc -eq 0 ] || fail "burst after attach: collector exited $rc"
mapfile -t files < <(ls "$TMP"/after/ctxprof-"$wl"-*.pb.gz 2>/dev/null)
# the first two intervals may end before the burst: the ones after hold the items
check_named "burst after attach" "$wl" "${files[@]:2}"

# 2. the burst before any collector ran
start_bg "$WORKLOADS/requests" --threads 2 --seconds 90 --tags 3000
wl=$!
sleep 1
mkdir -p "$TMP/before"
"$COLLECTOR" --pid "$wl" --interval 1 --duration 4 --frequency 499 \
	--output-dir "$TMP/before" 2>"$TMP/before.log"
rc=$?
[ $rc -eq 0 ] || fail "burst before attach: collector exited $rc"
mapfile -t files < <(ls "$TMP"/before/ctxprof-"$wl"-*.pb.gz 2>/dev/null)
check_named "burst before attach" "$wl" "${files[@]:1}"

# 3. --all, on the same process
mkdir -p "$TMP/all"
"$COLLECTOR" --all --interval 1 --duration 4 --frequency 199 \
	--output-dir "$TMP/all" 2>"$TMP/all.log"
rc=$?
grep -E "trace context|building" "$TMP/all.log"
[ $rc -eq 0 ] || fail "--all: collector exited $rc"
mapfile -t files < <(ls "$TMP"/all/*.pb.gz 2>/dev/null)
check_named "--all" "$wl" "${files[@]:1}"

# 4. a collector restart: the dictionary records went to the collectors before
kill -0 "$wl" 2>/dev/null || fail "the workload of case 2 is gone"
mkdir -p "$TMP/restart"
"$COLLECTOR" --pid "$wl" --interval 1 --duration 3 --frequency 499 \
	--output-dir "$TMP/restart" 2>"$TMP/restart.log"
rc=$?
grep -E "trace context|samples:" "$TMP/restart.log"
[ $rc -eq 0 ] || fail "restart: collector exited $rc"
mapfile -t files < <(ls "$TMP"/restart/ctxprof-"$wl"-*.pb.gz 2>/dev/null)
check_named "restart" "$wl" "${files[@]:1}"
again=$(sed -n 's/.* \([0-9]*\) of them for a known id.*/\1/p' "$TMP/restart.log")
replays=$(sed -n 's/.* \([0-9]*\) dictionary replays requested.*/\1/p' "$TMP/restart.log")
[ "${replays:-0}" -ge 1 ] && ok "restart: the dictionary asked for again ($replays), $again records for known ids" ||
	fail "restart: no dictionary replay requested"
kill "$wl"
finish
