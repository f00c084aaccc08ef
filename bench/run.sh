#!/usr/bin/env bash
# make bench: what the collector costs, next to baselines measured in the same run.
#  1. slowdown of a fixed-work target (2 threads on 2 CPUs) under the collector
#     at 99 and 999 Hz, next to `perf record -g` at the same frequencies;
#  2. BPF run time per sample (kernel.bpf_stats_enabled) of our sampler next to
#     bpftrace's `profile:hz:999 { @[ustack, kstack] = count(); }`;
#  3. the collector's own CPU time per sample;
#  4. the BPF cost of reading the trace context: run time per sample with and
#     without it (--no-context), on the libctxprof-instrumented requests workload;
#  5. the micro-benchmarks of the hot data structures, each with its baseline
#     (context update vs a seq_cst store, call-trace put vs a mutex table,
#     thread registry lookup vs an rwlock registry) when they are built.
# Each slowdown figure is the median of BENCH_REPS runs (default 3).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUTPUT=${OUTPUT:-build}
case $OUTPUT in /*) ;; *) OUTPUT=$ROOT/$OUTPUT ;; esac
B=$OUTPUT/bench
REPS=${BENCH_REPS:-3}
ITER=${BENCH_ITERATIONS:-20000}
mkdir -p "$B"
[ "$(id -u)" = 0 ] || { echo "bench: needs root (BPF, perf)"; exit 1; }
command -v perf >/dev/null || { echo "bench: perf missing (make deps installs linux-perf)"; exit 1; }
command -v bpftrace >/dev/null || { echo "bench: bpftrace missing (make deps installs it)"; exit 1; }

[ -x "$B/fixed_work" ] && [ -x "$B/progstat" ] || { echo "bench: run through make bench"; exit 1; }
W="$B/fixed_work --threads 2 --iterations $ITER --delay 1"

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
work_of() { sed -n 's/^work_seconds //p' "$1"; }

run_base() { $W > "$B/out"; work_of "$B/out"; }
run_ctxprof() {
	$W > "$B/out" & local wl=$!
	"$ROOT/collector" --pid $wl --frequency "$1" --no-status -o "$B/ctxprof.pb.gz" 2> "$B/ctxprof.log"
	wait $wl
	work_of "$B/out"
}
run_perf() {
	$W > "$B/out" & local wl=$!
	perf record -q -F "$1" -g -p $wl -o "$B/perf.data" > /dev/null 2>&1
	wait $wl
	work_of "$B/out"
}

echo "bench: fixed work = 2 threads x $ITER iterations; $REPS runs each, medians"
declare -A T
for kind in base ctxprof99 ctxprof999 perf99 perf999; do
	vals=()
	for _ in $(seq "$REPS"); do
		case $kind in
		base) vals+=("$(run_base)") ;;
		ctxprof*) vals+=("$(run_ctxprof "${kind#ctxprof}")") ;;
		perf*) vals+=("$(run_perf "${kind#perf}")") ;;
		esac
	done
	T[$kind]=$(printf '%s\n' "${vals[@]}" | median)
	printf '  %-11s %s s   (runs: %s)\n' "$kind" "${T[$kind]}" "${vals[*]}"
done
slow() { awk -v t="$1" -v b="${T[base]}" 'BEGIN { printf "%.2f", (t / b - 1) * 100 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) print "n/a"; else printf "%.2f", a / b }'; }
s_c99=$(slow "${T[ctxprof99]}") s_c999=$(slow "${T[ctxprof999]}")
s_p99=$(slow "${T[perf99]}") s_p999=$(slow "${T[perf999]}")

# collector CPU per sample, from the last 999 Hz run's summary
cpu_line=$(grep 'collector CPU' "$B/ctxprof.log" || true)

# BPF run time per sample, from the kernel's own accounting
sysctl -q -w kernel.bpf_stats_enabled=1
trap 'sysctl -q -w kernel.bpf_stats_enabled=0' EXIT
prog_stats() { # <ids-before-file> -> "cnt ns" summed over new perf_event programs
	"$B/progstat" | awk 'FILENAME == ARGV[1] { old[$1] = 1; next } !($1 in old) { c += $3; t += $4 } END { print c + 0, t + 0 }' "$1" -
}
"$B/progstat" > "$B/ids.before"
$B/fixed_work --threads 2 --iterations 100000 --delay 0 > /dev/null & wl=$!
"$ROOT/collector" --pid $wl --frequency 999 --no-status --duration 6 -o "$B/bpf.pb.gz" 2> /dev/null & col=$!
sleep 5
read -r our_cnt our_ns <<< "$(prog_stats "$B/ids.before")"
wait $col || true
"$B/progstat" > "$B/ids.before"
bpftrace -e 'profile:hz:999 { @[ustack, kstack] = count(); }' > /dev/null 2>&1 & bt=$!
sleep 5
read -r bt_cnt bt_ns <<< "$(prog_stats "$B/ids.before")"
kill -INT $bt; wait $bt 2> /dev/null || true
kill $wl; wait $wl 2> /dev/null || true
our_per=$(awk -v c="$our_cnt" -v t="$our_ns" 'BEGIN { printf "%.0f", c ? t / c : 0 }')
bt_per=$(awk -v c="$bt_cnt" -v t="$bt_ns" 'BEGIN { printf "%.0f", c ? t / c : 0 }')

# context read cost: the same workload, sampler with and without the read
ctx_run() { # extra collector flags -> "ns-per-run"
	"$B/progstat" > "$B/ids.before"
	"$OUTPUT/workloads/requests" --threads 2 --seconds 7 > /dev/null & local rq=$!
	sleep 0.5
	"$ROOT/collector" --pid $rq --frequency 999 --no-status --duration 6 "$@" -o "$B/ctx.pb.gz" 2> /dev/null & local c=$!
	sleep 5
	read -r cnt ns <<< "$(prog_stats "$B/ids.before")"
	wait $c || true
	wait $rq || true
	awk -v c="$cnt" -v t="$ns" 'BEGIN { printf "%.0f", c ? t / c : 0 }'
}
with_ctx=$(ctx_run)
without_ctx=$(ctx_run --no-context)

cat <<EOT

| measure | ctxprof | baseline | ratio (ctxprof / baseline) |
|---|---|---|---|
| target slowdown at 99 Hz | ${s_c99} % | perf record -g: ${s_p99} % | $(ratio "$s_c99" "$s_p99") |
| target slowdown at 999 Hz | ${s_c999} % | perf record -g: ${s_p999} % | $(ratio "$s_c999" "$s_p999") |
| BPF run time per sample | ${our_per} ns (${our_cnt} runs) | bpftrace: ${bt_per} ns (${bt_cnt} runs) | $(ratio "$our_per" "$bt_per") |
| BPF run time per sample, context read on (requests workload) | ${with_ctx} ns | --no-context: ${without_ctx} ns | $(ratio "$with_ctx" "$without_ctx") |

${cpu_line:-collector CPU: not reported}
EOT

# micro-benchmarks, each prints its own baseline and ratio
for mb in context_bench calltrace_bench registry_bench; do
	if [ -x "$B/$mb" ]; then
		echo
		echo "== $mb"
		"$B/$mb"
	fi
done
