#!/usr/bin/env bash
# What off-CPU profiling (collector --off-cpu) costs, in one run:
#  1. BPF run time per context switch (kernel.bpf_stats_enabled, read with
#     build/bench/progstat --all): every program the collector loaded that is
#     not its perf_event sampler, over a window of the workload's steady
#     state, per run of each program and per context switch of the host
#     (/proc/stat ctxt), for
#       - waits that meet the threshold: 4 threads sleeping 2 ms in a loop
#         (offcpu_requests --sleepers 4 --sleep-ms 2), --off-cpu;
#       - waits that do not: the switch storm (offcpu_requests --storm: two
#         threads ping-ponging through pipes), --off-cpu with the default
#         threshold (1000 us), and --off-cpu-threshold 0 (every wait kept);
#       - the collector without --off-cpu on the storm (what it runs per
#         switch anyway);
#     next to bcc's offcputime (offcputime-bpfcc, Debian's bpfcc-tools) when
#     it is installed, else the same method in bpftrace on the sched_switch
#     tracepoint (kprobes are not on every kernel): a start time and the
#     stacks per thread as it blocks (bpftrace's own frame-pointer stacks,
#     where ctxprof walks CFI), summed per wait >= 1 ms as offcputime does;
#  2. the storm's round trips per second: no profiler, the collector without
#     and with --off-cpu (default threshold, threshold 0), perf record -e
#     sched:sched_switch -a, and the offcputime baseline; BENCH_REPS runs
#     each (default 3), interleaved, medians.
# Run by bench/run.sh, or alone as root after make bench.
. "$(dirname "$0")/lib.sh"
REPS=${BENCH_REPS:-3}
SECS=${BENCH_SECONDS:-5}
WL=$OUTPUT/workloads/offcpu_requests
[ "$(id -u)" = 0 ] || { echo "bench: needs root (BPF)"; exit 1; }
[ -x "$B/progstat" ] || { echo "bench: $B/progstat missing (make bench builds it)"; exit 1; }
[ -x "$WL" ] || { echo "bench: $WL missing (make all builds it)"; exit 1; }
if ! "$ROOT/collector" --help 2>&1 | grep -q -- '--off-cpu'; then
	echo "offcpu: skipped, this collector has no --off-cpu option"
	exit 0
fi
mkdir -p "$B"
bpf_stats_on

ctxt() { awk '$1 == "ctxt" { print $2 }' /proc/stat; }
# wait until file $1 has a line matching $2 (10 s at most)
wait_line() {
	local _
	for _ in $(seq 100); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# the baseline tool: bcc's offcputime, or the same in bpftrace
OFFCPUTIME=$(command -v offcputime-bpfcc || true)
BT_OFFCPU='tracepoint:sched:sched_switch {
	if (args->prev_state != 0 && pid == $1) {
		@start[tid] = nsecs; @ks[tid] = kstack; @us[tid] = ustack;
	}
	$s = @start[args->next_pid];
	if ($s) {
		delete(@start[args->next_pid]);
		if (nsecs - $s >= 1000000) {
			@t[@ks[args->next_pid], @us[args->next_pid]] = sum((nsecs - $s) / 1000);
		}
	}
}'
if [ -n "$OFFCPUTIME" ]; then
	BASELINE="bcc offcputime ($OFFCPUTIME -p PID -m 1000)"
else
	BASELINE="bpftrace on sched_switch, offcputime's method (bpfcc-tools not installed)"
fi

# one run: TOOL WORKLOAD-ARGS -> "round_trips_per_s ns_per_prog_run ns_per_switch runs_per_s";
# TOOL: none, ctxprof[:OPTIONS], perf, offcputime; a window of SECS-2 s in
# the middle of the workload's SECS + 1 s
one() {
	local tool=$1 wargs=$2 wl t c0 c1 opts
	"$B/progstat" --all >"$B/offcpu_ids.before"
	# shellcheck disable=SC2086
	"$WL" --wait-signal --seconds $((SECS + 1)) $wargs >"$B/offcpu_wl.out" &
	wl=$!
	wait_line "$B/offcpu_wl.out" '^ready$'
	t=
	case $tool in
	none) ;;
	ctxprof*)
		opts=${tool#ctxprof}
		opts=${opts#:}
		# shellcheck disable=SC2086
		"$ROOT/collector" --pid $wl --frequency 99 --no-status $opts -o "$B/offcpu.pb.gz" \
			2>"$B/offcpu_$(echo "$opts" | tr -c 'a-z0-9\n' _).log" &
		t=$!
		wait_line "$B/offcpu_$(echo "$opts" | tr -c 'a-z0-9\n' _).log" '^ctxprof: profiling pid'
		;;
	perf)
		perf record -q -e sched:sched_switch -a -o "$B/offcpu_perf.data" >/dev/null 2>&1 &
		t=$!
		sleep 1
		;;
	offcputime)
		if [ -n "$OFFCPUTIME" ]; then
			"$OFFCPUTIME" -p $wl -m 1000 -f $((SECS + 10)) >"$B/offcpu_bcc.out" 2>&1 &
		else
			bpftrace -e "$BT_OFFCPU" $wl >"$B/offcpu_bcc.out" 2>&1 &
		fi
		t=$!
		sleep 3 # compiling
		;;
	esac
	kill -USR1 $wl
	sleep 1
	"$B/progstat" --all >"$B/offcpu_p0"
	c0=$(ctxt)
	sleep $((SECS - 2))
	"$B/progstat" --all >"$B/offcpu_p1"
	c1=$(ctxt)
	wait $wl || true
	[ -n "$t" ] && { kill -INT $t 2>/dev/null || true; wait $t 2>/dev/null || true; }
	# per program: runs and ns over the window, the programs new since before
	awk -v dc=$((c1 - c0)) -v secs=$((SECS - 2)) -v rt="$(sed -n 's/.*per_second \([0-9]*\).*/\1/p' "$B/offcpu_wl.out")" '
		FILENAME == ARGV[1] { old[$1] = 1; next }
		FILENAME == ARGV[2] { c0[$1] = $3; t0[$1] = $4; next }
		!($1 in old) && $5 != "perf_event" && ($1 in c0) { c += $3 - c0[$1]; t += $4 - t0[$1] }
		END {
			printf "%s %.0f %.0f %.0f\n", rt == "" ? "-" : rt, c ? t / c : 0, dc ? t / dc : 0, c / secs
		}' "$B/offcpu_ids.before" "$B/offcpu_p0" "$B/offcpu_p1"
	# the programs themselves, for the record
	awk 'FILENAME == ARGV[1] { old[$1] = 1; next } FILENAME == ARGV[2] { c0[$1] = $3; t0[$1] = $4; next }
		!($1 in old) && $5 != "perf_event" && ($1 in c0) && $3 > c0[$1] {
			printf "%s(%s): %d runs, %.0f ns/run; ", $2, $5, $3 - c0[$1], ($4 - t0[$1]) / ($3 - c0[$1]) }' \
		"$B/offcpu_ids.before" "$B/offcpu_p0" "$B/offcpu_p1" >"$B/offcpu_progs.$$"
}

declare -A RT NSRUN NSSW RUNS PROGS
row() { # key tool wargs
	local rt=() ns=() sw=() rs=() a b c d
	for _ in $(seq "$REPS"); do
		read -r a b c d <<<"$(one "$2" "$3")"
		rt+=("$a") ns+=("$b") sw+=("$c") rs+=("$d")
	done
	RT[$1]=$(printf '%s\n' "${rt[@]}" | median)
	NSRUN[$1]=$(printf '%s\n' "${ns[@]}" | median)
	NSSW[$1]=$(printf '%s\n' "${sw[@]}" | median)
	RUNS[$1]=$(printf '%s\n' "${rs[@]}" | median)
	PROGS[$1]=$(cat "$B/offcpu_progs.$$")
	printf '  %-22s round trips/s %s (%s); BPF ns/run %s, ns/switch %s, runs/s %s; %s\n' "$1" \
		"${RT[$1]}" "${rt[*]}" "${NSRUN[$1]}" "${NSSW[$1]}" "${RUNS[$1]}" "${PROGS[$1]}"
}
echo "offcpu: $REPS runs of ${SECS} s each; baseline: $BASELINE"
STORM="--storm"
SLEEP="--sleepers 4 --sleep-ms 2"
rm -f "$B"/offcpu_*.log
for k in storm_none storm_ctxprof storm_offcpu storm_offcpu_t0 storm_perf storm_offcputime \
	sleep_offcpu sleep_offcputime; do
	case $k in
	storm_none) row $k none "$STORM" ;;
	storm_ctxprof) row $k ctxprof "$STORM" ;;
	storm_offcpu) row $k ctxprof:--off-cpu "$STORM" ;;
	storm_offcpu_t0) row $k "ctxprof:--off-cpu --off-cpu-threshold 0" "$STORM" ;;
	storm_perf) row $k perf "$STORM" ;;
	storm_offcputime) row $k offcputime "$STORM" ;;
	sleep_offcpu) row $k ctxprof:--off-cpu "$SLEEP" ;;
	sleep_offcputime) row $k offcputime "$SLEEP" ;;
	esac
done
rm -f "$B"/offcpu_progs.$$

cat <<EOT

| BPF run time (off-CPU programs, kernel.bpf_stats_enabled) | ctxprof --off-cpu, ns per run | ns per host context switch | $BASELINE, ns per run | ratio |
|---|---|---|---|---|
| waits meet the threshold (4 threads sleeping 2 ms) | ${NSRUN[sleep_offcpu]} | ${NSSW[sleep_offcpu]} | ${NSRUN[sleep_offcputime]} | $(ratio "${NSRUN[sleep_offcpu]}" "${NSRUN[sleep_offcputime]}") |
| waits below the threshold (switch storm, default 1000 us) | ${NSRUN[storm_offcpu]} | ${NSSW[storm_offcpu]} | ${NSRUN[storm_offcputime]} | $(ratio "${NSRUN[storm_offcpu]}" "${NSRUN[storm_offcputime]}") |
| switch storm, --off-cpu-threshold 0 (every wait kept or sampled) | ${NSRUN[storm_offcpu_t0]} | ${NSSW[storm_offcpu_t0]} | | |
| switch storm, collector without --off-cpu | ${NSRUN[storm_ctxprof]} | ${NSSW[storm_ctxprof]} | | |

| switch storm (2 threads, pipes, one CPU) | round trips/s | of no profiler |
|---|---|---|
| no profiler | ${RT[storm_none]} | 1.00 |
| collector, no --off-cpu | ${RT[storm_ctxprof]} | $(ratio "${RT[storm_ctxprof]}" "${RT[storm_none]}") |
| collector --off-cpu (threshold 1000 us: waits below it) | ${RT[storm_offcpu]} | $(ratio "${RT[storm_offcpu]}" "${RT[storm_none]}") |
| collector --off-cpu --off-cpu-threshold 0 | ${RT[storm_offcpu_t0]} | $(ratio "${RT[storm_offcpu_t0]}" "${RT[storm_none]}") |
| perf record -e sched:sched_switch -a | ${RT[storm_perf]} | $(ratio "${RT[storm_perf]}" "${RT[storm_none]}") |
| $BASELINE | ${RT[storm_offcputime]} | $(ratio "${RT[storm_offcputime]}" "${RT[storm_none]}") |

programs per case: --off-cpu on the sleepers: ${PROGS[sleep_offcpu]}
--off-cpu on the storm: ${PROGS[storm_offcpu]}
baseline on the storm: ${PROGS[storm_offcputime]}
$(for f in "$B"/offcpu_*.log; do [ -f "$f" ] && grep -H '^ctxprof: off-CPU: ' "$f"; done)
EOT
