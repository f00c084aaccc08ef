#!/usr/bin/env bash
# The collector's files in a real browser (needs root: it runs the
# collector): speedscope's web app in Debian's Chromium, headless, must
# show the workload's function names (viewer.sh, viewer.mjs).
#
# 1. The collector profiles the requests workload (tests/workloads/
#    requests.c; --main-work: its main thread works outside spans) for 3 s; speedscope opens its gzipped pprof file and the
#    same file gunzipped, and shows worker, handle_checkout, handle_search,
#    handle_login, between_requests and burn.
# 2. A Chrome trace-event timeline (JSON with "M" thread_name and "X"
#    events) shows the same names, and thread names (profile:requests); the
#    same file gzipped shows them too.
# 3. The same workload's timeline in speedscope's own format
#    (--timeline FILE.speedscope.json.gz) opens on a request thread
#    (first:worker), not on the main thread (the lowest thread id, where a
#    Chrome trace opens), and shows the same names.
# 4. The offcpu_requests workload (tests/workloads/offcpu_requests.c) with
#    --off-cpu: its Chrome timeline shows the waits ("waiting: lock", ...,
#    nested in their spans: test_offcpu.sh checks where) and the functions
#    they blocked in, with no nesting error.
# 5. The check can fail: the gzipped timeline is also searched for a name it
#    does not hold, and only that name may be reported missing; a trace whose
#    begin/end events speedscope cannot nest (a slice starting where a slice
#    of the same name ends, see below) must fail too.
# Screenshots for a person: $VIEWER_SHOTS (build/viewer/), two a file.
#
# Where the timeline comes from: TIMELINE_FROM below.  "fixture" is
# fixtures/timeline_sample.json, written by hand in the format of the
# collector's --timeline (two request threads of the requests workload at
# 99 Hz, span slices with args, sampled stacks nested in them); "collector"
# runs the collector with --timeline FILE beside -o in step 1.
# Every slice in the fixture ends 1 ns (0.001 us) before the next one on its
# thread begins: speedscope, at equal times, opens a slice before it closes
# one of the same name, so a stack that starts exactly where a span (and its
# stack) ends would be shown nested in the old one.  Step 3's trace shows it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/viewer.sh"

# the collector's own timeline; VIEWER_TIMELINE_FROM=fixture checks the
# hand-written one (tests/integration/fixtures/timeline_sample.json)
TIMELINE_FROM=${VIEWER_TIMELINE_FROM:-collector}

need_root
viewer_available || skip "$VIEWER_SKIP_REASON"
[ -x "$WORKLOADS/requests" ] || { echo "FAIL: $WORKLOADS/requests not built (make)"; exit 1; }

NAMES=(worker handle_checkout handle_search handle_login between_requests burn)
ABSENT=ctxprof_no_such_function
SECS=${VIEWER_SECONDS:-3}

echo "== the collector on the requests workload ($SECS s, timeline from: $TIMELINE_FROM)"
start_bg "$WORKLOADS/requests" --threads 2 --main-work --seconds $((SECS + 20)) >/dev/null
pid=$!
sleep 0.3
args=(--pid "$pid" --duration "$SECS" -o "$TMP/requests.pb.gz")
case $TIMELINE_FROM in
fixture) timeline=$ROOT/tests/integration/fixtures/timeline_sample.json ;;
collector)
	timeline=$TMP/requests.timeline.json
	args+=(--timeline "$timeline")
	;;
*) echo "FAIL: TIMELINE_FROM is fixture or collector, not $TIMELINE_FROM"; exit 1 ;;
esac
if "$COLLECTOR" "${args[@]}" 2>"$TMP/collector.log" && [ -s "$TMP/requests.pb.gz" ]; then
	ok "collector wrote $TMP/requests.pb.gz"
else
	cat "$TMP/collector.log"
	fail "the collector wrote no profile"
	finish
fi
if "$COLLECTOR" --pid "$pid" --duration "$SECS" -o "$TMP/requests2.pb.gz" \
	--timeline "$TMP/requests.speedscope.json.gz" 2>"$TMP/collector2.log" &&
	[ -s "$TMP/requests.speedscope.json.gz" ]; then
	ok "collector wrote $TMP/requests.speedscope.json.gz"
else
	cat "$TMP/collector2.log"
	fail "the collector wrote no speedscope timeline"
fi
kill "$pid" 2>/dev/null
[ -s "$timeline" ] || { fail "no timeline in $timeline"; finish; }

echo "== the collector --off-cpu on the offcpu_requests workload ($SECS s)"
start_bg "$WORKLOADS/offcpu_requests" --seconds $((SECS + 20)) --dir "$TMP" >/dev/null
pid=$!
sleep 0.3
if "$COLLECTOR" --pid "$pid" --off-cpu --duration "$SECS" -o "$TMP/offcpu.pb.gz" \
	--timeline "$TMP/offcpu.timeline.json" 2>"$TMP/collector3.log" &&
	[ -s "$TMP/offcpu.timeline.json" ]; then
	ok "collector --off-cpu wrote $TMP/offcpu.timeline.json"
else
	cat "$TMP/collector3.log"
	fail "the collector --off-cpu wrote no timeline"
fi
kill "$pid" 2>/dev/null
gunzip -c "$TMP/requests.pb.gz" >"$TMP/requests.pb"
gzip -c "$timeline" >"$TMP/requests.timeline.json.gz"

# speedscope sees the new start_thread at ts 10 before the old one's end
# (same name, same time) and nests the new stack in the span it left
cat >"$TMP/misnested.json" <<'EOF'
{"traceEvents": [
{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "misnested"}},
{"ph": "X", "name": "span 00000000000000a1", "pid": 1, "tid": 1, "ts": 0, "dur": 10, "args": {"span_id": "00000000000000a1"}},
{"ph": "X", "name": "start_thread", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
{"ph": "X", "name": "worker", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
{"ph": "X", "name": "start_thread", "pid": 1, "tid": 1, "ts": 10, "dur": 10},
{"ph": "X", "name": "worker", "pid": 1, "tid": 1, "ts": 10, "dur": 10}
], "displayTimeUnit": "ns"}
EOF

echo "== speedscope in Chromium"
shots=$VIEWER_SHOTS
viewer_run \
	--job "$TMP/requests.pb.gz" "$shots/requests.pb.gz.png" left-heavy "${NAMES[@]}" \
	--job "$TMP/requests.pb" "$shots/requests.pb.png" left-heavy "${NAMES[@]}" \
	--job "$timeline" "$shots/timeline.png" time-ordered "${NAMES[@]}" profile:requests \
	--job "$TMP/requests.timeline.json.gz" "$shots/timeline.json.gz.png" time-ordered \
	"${NAMES[@]}" "$ABSENT" \
	--job "$TMP/requests.speedscope.json.gz" "$shots/speedscope.png" time-ordered \
	"${NAMES[@]}" first:worker \
	--job "$TMP/offcpu.timeline.json" "$shots/offcpu.png" time-ordered "waiting: lock" \
	"waiting: sleep" "waiting: network" wait_lock wait_sleep wait_pipe between_requests \
	profile:server \
	--job "$TMP/misnested.json" "$shots/misnested.png" time-ordered worker \
	>"$TMP/viewer.out"
rc=$?
sed 's/^/   /' "$TMP/viewer.out"
if [ "$rc" -eq 2 ] || [ "$rc" -ge 124 ]; then
	fail "the browser check could not run (exit $rc; Chromium's log: $VIEWER_SHOTS/chromium.log)"
	finish
fi

# expect FILE PASS|FAIL WHAT: the job's verdict
expect() {
	local got
	got=$(viewer_result "$TMP/viewer.out" "$1")
	if [ "$got" = "$2" ]; then
		ok "$3"
	else
		fail "$3: the check says ${got:-nothing}, want $2"
	fi
}
# lines "viewer: [n/N BASENAME] ..." of one job matching a pattern
job_lines() { grep -E "^viewer: \[[0-9]+/[0-9]+ $1\] ${2:-}" "$TMP/viewer.out"; }

expect "$TMP/requests.pb.gz" PASS "speedscope shows the gzipped pprof file's functions"
expect "$TMP/requests.pb" PASS "speedscope shows the pprof file's functions, not gzipped"
expect "$timeline" PASS "speedscope shows the timeline's functions and threads ($TIMELINE_FROM)"
expect "$TMP/requests.speedscope.json.gz" PASS \
	"speedscope's own format opens on a request thread and shows the functions"
expect "$TMP/offcpu.timeline.json" PASS \
	"the off-CPU timeline shows the waits and where they blocked, no nesting error"
expect "$TMP/requests.timeline.json.gz" FAIL "a name absent from the file fails the check"
missing=$(job_lines 'requests\.timeline\.json\.gz' MISSING | sed 's/.*MISSING \([^ ]*\).*/\1/')
found=$(job_lines 'requests\.timeline\.json\.gz' found | wc -l)
if [ "$missing" = "$ABSENT" ] && [ "$found" -eq ${#NAMES[@]} ]; then
	ok "gzipped timeline: only $ABSENT missing, the ${#NAMES[@]} others shown"
else
	fail "gzipped timeline: missing '${missing//$'\n'/ }', $found of ${#NAMES[@]} names shown"
fi
expect "$TMP/misnested.json" FAIL "a trace speedscope cannot nest fails the check"
job_lines 'misnested\.json' | grep -q "MISSING" &&
	fail "misnested.json: a name went missing (the check should fail on nesting alone)"
grep -q "^viewer: FAIL $TMP/misnested.json: speedscope found .* do not nest" "$TMP/viewer.out" ||
	fail "misnested.json did not fail for its nesting"

finish
