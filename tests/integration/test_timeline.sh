#!/usr/bin/env bash
# Timelines (needs root: it loads BPF).  The phases workload (libctxprof; each
# request a span running phase_parse, phase_compute, phase_render in that
# order, idle_between outside spans) is profiled with --timeline, and
# timeline_check.py reads the Chrome trace-event JSON:
#  1. --pid: >= 95 % of the spans show the three phases in order inside
#     their slice; phases inside spans, idle_between outside; slices nest;
#  2. --all, the workload started after the collector: the same, and the
#     pprof file's span labels are attributed as in --pid mode (samples
#     labeled with a span have a phase on the stack, others have none);
#  3. --interval 1 with --timelines for 20 s: a timeline beside every
#     profile, each valid, every span whole inside one shows all its phases
#     in order, no timeline sample lost its stack;
#  4. --max-files deletes old timelines with their profiles.
. "$(dirname "$0")/lib.sh"
need_root
command -v python3 >/dev/null || skip "python3 missing (make deps installs it)"
python3 -c 'import json, gzip' 2>/dev/null || skip "python3 without json (make deps installs python3)"

CHECK="python3 $(dirname "$0")/timeline_check.py"
PHASES=phase_parse,phase_compute,phase_render
# 20 ms phases: each gets ~20 samples at 999 Hz, even on a busy machine
WL_ARGS=(--threads 1 --phase-ms 20)

# check_labels PPROF PID BAR: span labels vs. the functions on each sample's
# stack, weighted by CPU time: >= BAR % of the labeled time runs a phase, and
# >= BAR % of the time in a phase is labeled
check_labels() {
	local pb=$1 pid=$2 bar=$3 verdict in_ok in_bad out_ok out_bad
	"$PPROF" -tagfocus="pid=$pid" -traces "$pb" >"$TMP/traces.$pid" 2>/dev/null ||
		{ fail "pprof -traces failed on $pb"; return; }
	verdict=$(awk '
		function us(w) { if (w ~ /ms$/) return w * 1000; if (w ~ /us$/) return w + 0; if (w ~ /ns$/) return w / 1000; if (w ~ /s$/) return w * 1e6; return w + 0 }
		function flush() {
			if (!n) return
			if (span != "") { if (funcs ~ / phase_/) in_ok += wt; else in_bad += wt }
			else { if (funcs ~ / phase_/) out_bad += wt; else out_ok += wt }
			span = ""; funcs = " "; n = 0
		}
		BEGIN { funcs = " " }
		/^-+[+]-+$/ { flush(); next }
		/^ *[a-z_]+:  / && !n { if ($1 == "span_id:") span = $2; next }
		/^ +[0-9.]+[mun]?s +/ { n = 1; wt = us($1); funcs = funcs $NF " "; next }
		n && NF { funcs = funcs $NF " " }
		END { flush(); printf "%d %d %d %d\n", in_ok / 1000, in_bad / 1000, out_ok / 1000, out_bad / 1000 }' \
		"$TMP/traces.$pid")
	read -r in_ok in_bad out_ok out_bad <<<"$verdict"
	if [ $((in_ok + in_bad)) -gt 0 ] && [ $((in_ok * 100)) -ge $(((in_ok + in_bad) * bar)) ]; then
		ok "pprof: $in_ok of $((in_ok + in_bad)) ms labeled with a span run a phase"
	else
		fail "pprof: only $in_ok of $((in_ok + in_bad)) ms labeled with a span run a phase"
	fi
	if [ $((in_ok + out_bad)) -gt 0 ] && [ $((in_ok * 100)) -ge $(((in_ok + out_bad) * bar)) ]; then
		ok "pprof: $in_ok of $((in_ok + out_bad)) ms in a phase carry their span label"
	else
		fail "pprof: $out_bad of $((in_ok + out_bad)) ms in a phase carry no span label"
	fi
	if [ "$out_ok" -gt 0 ]; then
		ok "pprof: $out_ok ms outside spans, unlabeled"
	else
		fail "pprof: no unlabeled time outside spans"
	fi
}

run_check() {
	if $CHECK "$@" >"$TMP/check" 2>&1; then
		sed 's/^/   /' "$TMP/check"
		ok "timeline_check $1"
	else
		cat "$TMP/check"
		fail "timeline_check $1"
	fi
}

echo "== --pid"
start_bg "$WORKLOADS/phases" "${WL_ARGS[@]}" >"$TMP/wl.out"
wl=$!
sleep 0.3
if "$COLLECTOR" --pid "$wl" --duration 4 --frequency 999 -o "$TMP/pid.pb.gz" \
	--timeline "$TMP/pid.json.gz" 2>"$TMP/pid.log"; then
	grep -E "timeline" "$TMP/pid.log" | sed 's/^/   /'
	run_check "$TMP/pid.json.gz" --pid "$wl" --phases "$PHASES" --outside idle_between
	check_labels "$TMP/pid.pb.gz" "$wl" 95
else
	cat "$TMP/pid.log"
	fail "collector --pid --timeline exited non-zero"
fi
kill "$wl" 2>/dev/null
wait "$wl" 2>/dev/null

echo "== --all, the workload started after the collector"
"$COLLECTOR" --all --duration 6 --frequency 999 -o "$TMP/all.pb.gz" \
	--timeline "$TMP/all.json" 2>"$TMP/all.log" &
col=$!
sleep 1.5
start_bg "$WORKLOADS/phases" "${WL_ARGS[@]}" >"$TMP/wl2.out"
wl=$!
if wait "$col"; then
	grep -E "timeline|trace context" "$TMP/all.log" | sed 's/^/   /'
	run_check "$TMP/all.json" --pid "$wl" --phases "$PHASES" --outside idle_between \
		--min-spans 10
	# the process is found at its first samples' maps read (process_state
	# app_due): what runs before that is unlabeled, so the bar counts the
	# whole run, discovery included
	check_labels "$TMP/all.pb.gz" "$wl" 95
else
	cat "$TMP/all.log"
	fail "collector --all --timeline exited non-zero"
fi
kill "$wl" 2>/dev/null
wait "$wl" 2>/dev/null

echo "== --interval --timelines, 20 s"
# every span lying whole inside an interval holds all its phases, and no
# event of a timeline lost its stack: a stack put just before an export's
# rotation, whose event is appended just after, must survive to the timeline
# that replays the event (docs/design/calltrace-storage.md, liveness)
mkdir -p "$TMP/out"
start_bg "$WORKLOADS/phases" "${WL_ARGS[@]}" >"$TMP/wl3.out"
wl=$!
sleep 0.3
if "$COLLECTOR" --pid "$wl" --duration 20 --frequency 999 --interval 1 \
	--output-dir "$TMP/out" --timelines 2>"$TMP/int.log"; then
	nr=0
	for f in "$TMP"/out/*.pb.gz; do
		t=${f%.pb.gz}.timeline.json.gz
		[ -s "$t" ] || { fail "no timeline beside $(basename "$f")"; continue; }
		nr=$((nr + 1))
		if $CHECK "$t" --pid "$wl" --phases "$PHASES" --outside idle_between --min-spans 5 \
			--span-bar 100 --skip-lost >"$TMP/check" 2>&1; then
			grep -E "spans \(|rebuilt" "$TMP/check" | sed "s|^|   $(basename "$t"): |"
		else
			cat "$TMP/check"
			fail "timeline_check $(basename "$t")"
		fi
	done
	[ "$nr" -ge 18 ] && ok "$nr timelines, one beside each profile" ||
		fail "only $nr timelines in 20 s of --interval 1"
	# a sample whose stack is gone is drawn as "[stack unavailable]" (so is a
	# dropped one, and the drains dropped none: stack_table_full=0)
	no_stack=$(for t in "$TMP"/out/*.timeline.json.gz; do zcat "$t"; done |
		grep -o '"name": *"\[stack unavailable\]"' | wc -l)
	dropped=$(sed -n 's/.*stack_table_full=\([0-9]*\).*/\1/p' "$TMP/int.log" | tail -1)
	if [ "$no_stack" -eq 0 ]; then
		ok "no timeline slice lost its stack (drains dropped ${dropped:-?} stacks)"
	else
		fail "$no_stack timeline slices whose stack was no longer stored (drains dropped ${dropped:-?})"
	fi
else
	cat "$TMP/int.log"
	fail "collector --interval --timelines exited non-zero"
fi
kill "$wl" 2>/dev/null
wait "$wl" 2>/dev/null

echo "== --max-files with --timelines"
mkdir -p "$TMP/out2"
start_bg "$WORKLOADS/phases" "${WL_ARGS[@]}" >"$TMP/wl4.out"
wl=$!
sleep 0.3
if "$COLLECTOR" --pid "$wl" --duration 3.5 --frequency 999 --interval 1 --max-files 2 \
	--output-dir "$TMP/out2" --timelines 2>"$TMP/int2.log"; then
	profiles=$(find "$TMP/out2" -name '*.pb.gz' | wc -l)
	timelines=$(find "$TMP/out2" -name '*.timeline.json.gz' | wc -l)
	if [ "$profiles" -eq 2 ] && [ "$timelines" -eq 2 ]; then
		ok "--max-files 2 kept 2 profiles and their 2 timelines"
	else
		ls -l "$TMP/out2"
		fail "want 2 profiles and 2 timelines, found $profiles and $timelines"
	fi
else
	cat "$TMP/int2.log"
	fail "collector --interval --max-files --timelines exited non-zero"
fi
kill "$wl" 2>/dev/null
wait "$wl" 2>/dev/null

echo "== refused combinations"
if "$COLLECTOR" --pid 1 --interval 1 --timeline x.json 2>"$TMP/err"; then
	fail "--interval with --timeline FILE accepted"
else
	grep -q -- "--timelines" "$TMP/err" && ok "--interval --timeline FILE refused, pointing to --timelines" ||
		fail "unhelpful error: $(cat "$TMP/err")"
fi

finish
