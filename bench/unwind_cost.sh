#!/usr/bin/env bash
# BPF run time per sample of the user-stack walk, against the kernel's
# frame-pointer walk doing the same work (issue 21's measure), in one run:
#  - ctxprof, CFI unwinding, on bench/fixed_work_nofp (built without frame
#    pointers, as distributions ship), `--no-kernel`, next to bpftrace
#    `profile:hz:999 /pid == PID/ { @[ustack] = count(); }` on the
#    frame-pointer build (bench/fixed_work): user stacks alone, both sides;
#  - the same with kernel stacks: ctxprof's default, next to bpftrace's
#    `@[ustack, kstack]`.
# The target: 2 threads at the bottom of a BENCH_DEPTH-deep chain (default
# 45), on the 2 CPUs; 999 Hz; each measure over 4 s of the kernel's
# accounting (kernel.bpf_stats_enabled), BENCH_REPS runs (default 3)
# interleaved, medians.  Every ctxprof run must end with every stack
# complete (reached main), or the figure says so.
# Run as root after make bench.
. "$(dirname "$0")/lib.sh"
REPS=${BENCH_REPS:-3}
DEPTH=${BENCH_DEPTH:-45}
[ "$(id -u)" = 0 ] || { echo "unwind_cost: needs root (BPF)"; exit 1; }
command -v bpftrace >/dev/null || { echo "unwind_cost: bpftrace missing (make deps installs it)"; exit 1; }
for b in fixed_work fixed_work_nofp progstat; do
	[ -x "$B/$b" ] || { echo "unwind_cost: $B/$b missing (make bench builds it)"; exit 1; }
done
bpf_stats_on

target() { "$B/$1" --threads 2 --iterations 100000 --delay 0 --depth "$DEPTH" >/dev/null & }
# ns per run of the perf_event programs loaded since $1's list, over 4 s
window() {
	local c0 t0 c1 t1
	sleep 1
	read -r c0 t0 <<<"$(prog_stats "$1")"
	sleep 4
	read -r c1 t1 <<<"$(prog_stats "$1")"
	per_run $((c1 - c0)) $((t1 - t0))
}
# ctxprof on the no-frame-pointer build; extra collector options in $@
ours() {
	local wl col ns
	"$B/progstat" >"$B/uc.ids"
	target fixed_work_nofp
	wl=$!
	"$ROOT/collector" --pid $wl --frequency 999 --no-status --duration 7 "$@" -o "$B/uc.pb.gz" \
		2>"$B/uc.log" &
	col=$!
	ns=$(window "$B/uc.ids")
	wait $col || true
	kill $wl 2>/dev/null || true
	wait $wl 2>/dev/null || true
	complete=$(sed -n 's/^ctxprof: user stacks by how they end: complete=\([0-9]*\).*/\1/p' "$B/uc.log")
	taken=$(sed -n 's/^ctxprof: samples: \([0-9]*\) taken.*/\1/p' "$B/uc.log")
	[ "${complete:-0}" = "${taken:-x}" ] || echo "unwind_cost: only ${complete:-?} of ${taken:-?} stacks complete ($*)" >&2
	echo "$ns"
}
# bpftrace on the frame-pointer build: $1 the map key
theirs() {
	local wl bt ns
	"$B/progstat" >"$B/uc.ids"
	target fixed_work
	wl=$!
	bpftrace -e "profile:hz:999 /pid == $wl/ { @[$1] = count(); }" >/dev/null 2>&1 &
	bt=$!
	sleep 2 # compiling
	ns=$(window "$B/uc.ids")
	kill -INT $bt 2>/dev/null || true
	wait $bt 2>/dev/null || true
	kill $wl 2>/dev/null || true
	wait $wl 2>/dev/null || true
	echo "$ns"
}

declare -a OU OK TU TK
for r in $(seq "$REPS"); do
	OU+=("$(ours --no-kernel)")
	TU+=("$(theirs ustack)")
	OK+=("$(ours)")
	TK+=("$(theirs 'ustack, kstack')")
	echo "unwind_cost: run $r: ctxprof --no-kernel ${OU[-1]} ns, bpftrace ustack ${TU[-1]} ns; ctxprof ${OK[-1]} ns, bpftrace ustack+kstack ${TK[-1]} ns"
done
ou=$(printf '%s\n' "${OU[@]}" | median) tu=$(printf '%s\n' "${TU[@]}" | median)
ok=$(printf '%s\n' "${OK[@]}" | median) tk=$(printf '%s\n' "${TK[@]}" | median)
cat <<EOT

| BPF ns per sample, $DEPTH-deep chain, 999 Hz ($REPS runs, medians) | ctxprof (CFI, no frame pointers) | bpftrace (frame pointers) | ratio |
|---|---|---|---|
| user stack only (ctxprof --no-kernel; bpftrace @[ustack]) | $ou | $tu | $(ratio "$ou" "$tu") |
| user and kernel stacks (ctxprof's default; bpftrace @[ustack, kstack]) | $ok | $tk | $(ratio "$ok" "$tk") |
EOT
