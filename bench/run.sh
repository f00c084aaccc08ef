#!/usr/bin/env bash
# make bench: what the collector costs, next to baselines measured in the same run.
#  1. slowdown of a fixed-work target (2 threads on 2 CPUs, a 16-deep chain)
#     at 99 and 999 Hz: ctxprof with CFI unwinding on the target built without
#     frame pointers, ctxprof --unwind fp and perf record -g on the same
#     target built with them, and an empty BPF profile probe (bpftrace
#     'profile:hz:999 {}', the VM's interrupt floor);
#  2. BPF run time per sample (kernel.bpf_stats_enabled) on a 45-deep chain:
#     our CFI unwinder on the no-frame-pointer build, next to bpftrace's
#     ustack (the kernel's frame-pointer walk) and our --unwind fp on the
#     frame-pointer build;
#  3. where the collector's share of the slowdown goes: its CPU time per
#     thread over the work phase;
#  4. the BPF cost of reading the trace context (with and without --no-context),
#     and bench/context_read.sh: the OpenTelemetry thread context read next
#     to the libctxprof slot read and to no context read, in one run;
#  5. unwind tables: building the largest library's, and every process's
#     under --all (rows, memory of the BPF maps and of the collector);
#  6. the micro-benchmarks of the hot data structures, each with its baseline;
#  7. bench/python.sh: the CPython 3.11 walk's BPF time per sample, --python
#     on next to --python off on the same script;
#  8. bench/offcpu.sh: off-CPU profiling's BPF time per context switch (waits
#     above and below the threshold) next to bcc's offcputime, and a switch
#     storm's round trips per second with --off-cpu on and off.
#  9. bench/unwind_cost.sh: the CFI walk's BPF time per sample next to
#     bpftrace's frame-pointer ustack on the same work; bench/rss.sh: where
#     the collector's resident memory goes; bench/node_cost.sh: its CPU and
#     RSS under --all on a busy node next to an idle one.
# Each slowdown figure is the median of BENCH_REPS runs (default 3).
. "$(dirname "$0")/lib.sh"
REPS=${BENCH_REPS:-3}
ITER=${BENCH_ITERATIONS:-20000}
DEPTH=${BENCH_DEPTH:-45}
mkdir -p "$B"
[ "$(id -u)" = 0 ] || { echo "bench: needs root (BPF, perf)"; exit 1; }
command -v perf >/dev/null || { echo "bench: perf missing (make deps installs linux-perf)"; exit 1; }
command -v bpftrace >/dev/null || { echo "bench: bpftrace missing (make deps installs it)"; exit 1; }
for b in fixed_work fixed_work_nofp progstat unwind_table_bench; do
	[ -x "$B/$b" ] || { echo "bench: run through make bench ($b missing)"; exit 1; }
done
W="$B/fixed_work --threads 2 --iterations $ITER --delay 1"
WNOFP="$B/fixed_work_nofp --threads 2 --iterations $ITER --delay 1"

work_of() { sed -n 's/^work_seconds //p' "$1"; }

run_base() { $1 > "$B/out"; work_of "$B/out"; }
run_ctxprof() { # target, frequency, collector options...
	$1 > "$B/out" & local wl=$!
	"$ROOT/collector" --pid $wl --frequency "$2" --no-status "${@:3}" -o "$B/ctxprof.pb.gz" \
		2> "$B/ctxprof.log"
	wait $wl
	work_of "$B/out"
}
run_perf() {
	$W > "$B/out" & local wl=$!
	perf record -q -F "$1" -g -p $wl -o "$B/perf.data" > /dev/null 2>&1
	wait $wl
	work_of "$B/out"
}
run_probe() {
	bpftrace -e "profile:hz:$1 {}" > /dev/null 2>&1 & local bt=$!
	sleep 0.5
	$W > "$B/out"
	kill -INT $bt
	wait $bt 2> /dev/null || true
	work_of "$B/out"
}

echo "bench: fixed work = 2 threads x $ITER iterations; $REPS runs each, medians"
declare -A T
for kind in base base_nofp probe999 ctxprof99 ctxprof999 ctxfp999 perf99 perf999; do
	vals=()
	for _ in $(seq "$REPS"); do
		case $kind in
		base) vals+=("$(run_base "$W")") ;;
		base_nofp) vals+=("$(run_base "$WNOFP")") ;;
		probe*) vals+=("$(run_probe "${kind#probe}")") ;;
		ctxfp*) vals+=("$(run_ctxprof "$W" "${kind#ctxfp}" --unwind fp)") ;;
		ctxprof*) vals+=("$(run_ctxprof "$WNOFP" "${kind#ctxprof}")") ;;
		perf*) vals+=("$(run_perf "${kind#perf}")") ;;
		esac
	done
	T[$kind]=$(printf '%s\n' "${vals[@]}" | median)
	printf '  %-11s %s s   (runs: %s)\n' "$kind" "${T[$kind]}" "${vals[*]}"
done
slow() { awk -v t="$1" -v b="$2" 'BEGIN { printf "%.2f", (t / b - 1) * 100 }'; }
s_probe=$(slow "${T[probe999]}" "${T[base]}")
s_c99=$(slow "${T[ctxprof99]}" "${T[base_nofp]}") s_c999=$(slow "${T[ctxprof999]}" "${T[base_nofp]}")
s_f999=$(slow "${T[ctxfp999]}" "${T[base]}")
s_p99=$(slow "${T[perf99]}" "${T[base]}") s_p999=$(slow "${T[perf999]}" "${T[base]}")

# BPF run time per sample, from the kernel's own accounting
bpf_stats_on
deep() { echo "$1 --threads 2 --iterations 100000 --delay 0 --depth $DEPTH"; }
bpf_ctxprof() { # target, collector options... -> "ns-per-run frames-line"
	"$B/progstat" > "$B/ids.before"
	$1 > /dev/null & local wl=$!
	"$ROOT/collector" --pid $wl --frequency 999 --no-status --duration 6 "${@:2}" \
		-o "$B/bpf.pb.gz" 2> "$B/bpf.log" & local col=$!
	sleep 5
	read -r cnt ns <<< "$(prog_stats "$B/ids.before")"
	wait $col || true
	kill $wl
	wait $wl 2> /dev/null || true
	per_run "$cnt" "$ns"
}
ns_cfi=$(bpf_ctxprof "$(deep "$B/fixed_work_nofp")")
stops_cfi=$(sed -n 's/^ctxprof: user stacks by how they end: //p' "$B/bpf.log")
ns_fp=$(bpf_ctxprof "$(deep "$B/fixed_work")" --unwind fp)
"$B/progstat" > "$B/ids.before"
$(deep "$B/fixed_work") > /dev/null & wl=$!
bpftrace -e 'profile:hz:999 { @[ustack, kstack] = count(); }' > /dev/null 2>&1 & bt=$!
sleep 5
read -r bt_cnt bt_ns <<< "$(prog_stats "$B/ids.before")"
kill -INT $bt; wait $bt 2> /dev/null || true
kill $wl; wait $wl 2> /dev/null || true
ns_bt=$(per_run "$bt_cnt" "$bt_ns")

# the collector's own CPU during the work phase, per thread (999 Hz, CFI)
$WNOFP > "$B/out" & wl=$!
"$ROOT/collector" --pid $wl --frequency 999 --no-status -o "$B/cpu.pb.gz" 2> "$B/cpu.log" & col=$!
sleep 1.2
thread_ticks() { # pid -> "comm ticks" per thread
	for t in /proc/$1/task/*; do
		awk '{ sub(/^[^)]*\) /, ""); print $12 + $13 }' "$t/stat" 2> /dev/null |
			sed "s|^|$(tr ' ' _ < "$t/comm" 2> /dev/null) |"
	done
}
# a window inside the work phase: once the target exits, the collector's
# threads stop and their counts go with them
thread_ticks $col > "$B/ticks.before"
t0=$(date +%s.%N)
sleep 2
thread_ticks $col > "$B/ticks.after" || true
t1=$(date +%s.%N)
wait $wl
wait $col || true
hz=$(getconf CLK_TCK)
cpu_threads=$(awk -v hz="$hz" -v dt="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" '
	FILENAME == ARGV[1] { before[$1] += $2; next }
	{ after[$1] += $2 }
	END { for (c in after) printf "%s %.1f ms (%.3f%% of 2 CPUs); ", c, (after[c] - before[c]) * 1000 / hz, (after[c] - before[c]) * 100 / hz / dt / 2 }' \
	"$B/ticks.before" "$B/ticks.after")

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
	per_run "$cnt" "$ns"
}
with_ctx=$(ctx_run)
without_ctx=$(ctx_run --no-context)

cat <<EOT

| measure | ctxprof | baseline | ratio (ctxprof / baseline) |
|---|---|---|---|
| target slowdown at 99 Hz (CFI, no-frame-pointer build) | ${s_c99} % | perf record -g (frame-pointer build): ${s_p99} % | $(ratio "$s_c99" "$s_p99") |
| target slowdown at 999 Hz (CFI, no-frame-pointer build) | ${s_c999} % | perf record -g (frame-pointer build): ${s_p999} % | $(ratio "$s_c999" "$s_p999") |
| target slowdown at 999 Hz, --unwind fp | ${s_f999} % | empty BPF profile probe: ${s_probe} % | |
| BPF run time per sample, $DEPTH-deep chain, CFI unwinding (no frame pointers) | ${ns_cfi} ns | bpftrace ustack (frame pointers): ${ns_bt} ns | $(ratio "$ns_cfi" "$ns_bt") |
| BPF run time per sample, $DEPTH-deep chain, --unwind fp | ${ns_fp} ns | bpftrace ustack: ${ns_bt} ns | $(ratio "$ns_fp" "$ns_bt") |
| BPF run time per sample, context read on (requests workload) | ${with_ctx} ns | --no-context: ${without_ctx} ns | $(ratio "$with_ctx" "$without_ctx") |

CFI run, how its stacks ended: ${stops_cfi}
collector threads' CPU over the 999 Hz work phase: ${cpu_threads}
$(grep 'collector CPU' "$B/cpu.log" || true)
EOT

echo
echo "== context reads (bench/context_read.sh)"
OUTPUT=$OUTPUT "$ROOT/bench/context_read.sh"

# unwind tables: the largest library here with CFI, and the whole host
echo
echo "== unwind tables"
biggest=$(find /usr/lib /lib /usr/local/lib /opt -xdev -name '*.so*' -type f -size +20M 2> /dev/null |
	xargs -r ls -S 2> /dev/null | head -3)
"$B/unwind_table_bench" /lib/$(uname -m)-linux-gnu/libc.so.6 $biggest || true
"$ROOT/collector" --all --duration 5 --no-status -o "$B/all.pb.gz" 2> "$B/all.log" & col=$!
sleep 4.5
rss=$(awk '/^VmHWM/ { print $2 / 1024 " MiB" }' /proc/$col/status 2> /dev/null || echo "?")
wait $col || true
echo "--all for 5 s, collector peak RSS ${rss}:"
grep -E 'unwinding|processes:' "$B/all.log" || true

# runtimes (issue 18): BPF time per sample on a Node and a Go service, the
# default walk (tables, frame pointers over JIT code and CFI gaps, Go's
# .gopclntab rows) next to --unwind fp (the kernel's frame-pointer walk) on
# the same workload in the same run
echo
echo "== runtimes: BPF ns per sample, --unwind auto next to --unwind fp"
cat > "$B/work.js" <<'EOJS'
function sortWork(n) { const a = []; for (let i = 0; i < n; i++) a.push((i * 7919) % n); a.sort((x, y) => x - y); return a[0]; }
function hashWork(n) { let h = 0; for (let i = 0; i < n; i++) h = (h * 31 + i) | 0; return h; }
const end = Date.now() + 20000; let s = 0;
while (Date.now() < end) { s += sortWork(20000); s += hashWork(200000); }
console.log(s);
EOJS
echo "| workload | --unwind auto | --unwind fp | ratio | auto: how stacks ended |"
echo "|---|---|---|---|---|"
runtime_row() { # name, target command
	local a f stops
	a=$(bpf_ctxprof "$2")
	stops=$(sed -n 's/^ctxprof: user stacks by how they end: \([^;]*\);.*/\1/p' "$B/bpf.log")
	f=$(bpf_ctxprof "$2" --unwind fp)
	echo "| $1 | $a ns | $f ns | $(ratio "$a" "$f") | $stops |"
}
if command -v node > /dev/null; then
	runtime_row "node --perf-basic-prof (sort + hash loop)" "node --perf-basic-prof $B/work.js"
else
	echo "| node | not installed (make deps) | | | |"
fi
if command -v go > /dev/null &&
	GO111MODULE=off GOFLAGS= GOCACHE="$OUTPUT/gocache" GOPATH="$B/gopath" \
		go build -o "$B/goload" "$ROOT/tests/workloads/go/goload.go" 2> "$B/go.log"; then
	runtime_row "Go HTTP server + client (tests/workloads/go/goload.go)" "$B/goload 20"
else
	echo "| Go | could not build (make deps installs golang-go): $(tail -1 "$B/go.log" 2> /dev/null) | | | |"
fi

# CPython 3.11 frames: the walk's BPF cost, --python on next to off
echo
echo "== python: BPF ns per sample, --python on next to --python off (bench/python.sh)"
OUTPUT=$OUTPUT "$ROOT/bench/python.sh" || echo "python: bench/python.sh failed"

# off-CPU profiling: BPF time per context switch, a switch storm's round trips
echo
echo "== off-CPU: BPF ns per context switch, storm round trips with --off-cpu on and off (bench/offcpu.sh)"
OUTPUT=$OUTPUT "$ROOT/bench/offcpu.sh" || echo "offcpu: bench/offcpu.sh failed"

# the user-stack walk against the kernel's frame-pointer walk, same work
echo
echo "== unwind cost: BPF ns per sample, CFI walk next to bpftrace's ustack (bench/unwind_cost.sh)"
OUTPUT=$OUTPUT "$ROOT/bench/unwind_cost.sh" || echo "unwind_cost: bench/unwind_cost.sh failed"
echo
echo "== memory: the collector's RSS by category, --all and --pid (bench/rss.sh)"
OUTPUT=$OUTPUT "$ROOT/bench/rss.sh" || echo "rss: bench/rss.sh failed"
echo
echo "== a busy node: the collector's CPU and RSS under --all (bench/node_cost.sh)"
OUTPUT=$OUTPUT "$ROOT/bench/node_cost.sh" || echo "node_cost: bench/node_cost.sh failed"

# micro-benchmarks, each prints its own baseline and ratio
for mb in context_bench calltrace_bench registry_bench trace_bench; do
	if [ -x "$B/$mb" ]; then
		echo
		echo "== $mb"
		"$B/$mb"
	fi
done
