#!/usr/bin/env bash
# BPF run time per sample of the user-stack walk, against the kernel's
# frame-pointer walk doing the same work (issues 21 and 30), in one run:
# ctxprof, CFI unwinding, on bench/fixed_work_nofp (built without frame
# pointers, as distributions ship), `--no-kernel`, next to bpftrace
# `profile:hz:999 /pid == PID/ { @[ustack] = count(); }` on the
# frame-pointer build (bench/fixed_work): user stacks alone, both sides.
#
# On every stack shape of BENCH_SHAPES (default: all 12 below), each
# WHERE:FRAMES:STACK:
#   WHERE  thread: 2 threads on the 2 CPUs; main: the main thread alone
#          (its stack's top a few KiB above the frames, where a 4 KiB read
#          above sp fails)
#   FRAMES small: a few words a frame; large: 1 KiB of locals a frame
#   STACK  user frames in a sample, hash_block to the stack's end: 10, 45,
#          127 (127 = SAMPLER_MAX_USTACK, and perf's kernel.perf_event_max_stack
#          default, which bpftrace's ustack keeps to: the deepest stack whole
#          on both sides)
# 999 Hz; each measure over 4 s of the kernel's accounting
# (kernel.bpf_stats_enabled), per sample of the target (see window()),
# BENCH_REPS runs (default 3), the shapes
# interleaved in each, medians.  Every ctxprof run must end with every
# stack complete (reached the stack's end), or the figure says so.
# Run as root after make bench.
. "$(dirname "$0")/lib.sh"
REPS=${BENCH_REPS:-3}
# the collector to measure (default: this tree's), and another to measure
# beside it in the same run (a before/after pair), if any
COLLECTOR=${COLLECTOR:-$ROOT/collector}
COLLECTOR_BEFORE=${COLLECTOR_BEFORE:-}
SHAPES=${BENCH_SHAPES:-"thread:small:10 thread:small:45 thread:small:127 thread:large:10 thread:large:45 thread:large:127 main:small:10 main:small:45 main:small:127 main:large:10 main:large:45 main:large:127"}
[ "$(id -u)" = 0 ] || { echo "unwind_cost: needs root (BPF)"; exit 1; }
command -v bpftrace >/dev/null || { echo "unwind_cost: bpftrace missing (make deps installs it)"; exit 1; }
for b in fixed_work fixed_work_nofp progstat; do
	[ -x "$B/$b" ] || { echo "unwind_cost: $B/$b missing (make bench builds it)"; exit 1; }
done
bpf_stats_on

# the workload $1 in shape $2: fixed_work's frames around the descend chain
# are hash_block and worker, then start_thread and clone3 on a thread,
# main, __libc_start_call_main, __libc_start_main and _start on the main one
target() {
	local where frames stack opts
	IFS=: read -r where frames stack <<<"$2"
	case $where in
	thread) opts="--threads 2 --depth $((stack - 4))" ;;
	main) opts="--main --depth $((stack - 6))" ;;
	*) echo "unwind_cost: bad shape $2" >&2; exit 1 ;;
	esac
	[ "$frames" = large ] && opts="$opts --large"
	# shellcheck disable=SC2086
	"$B/$1" $opts --iterations 100000000 --delay 0 >/dev/null &
}
# the target's CPU time so far (all its threads), ns
cpu_ns() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.0f\n", ($12 + $13) * 1e9 / hz }' \
		"/proc/$1/stat"
}
# BPF ns per sample of target $2 by the perf_event programs loaded since $1's
# list, over 4 s: their run time over the target's samples (its CPU time
# at 999 Hz), not over their runs, which count every other task's ticks they
# filter out too (cheap runs, more of them the busier the machine: per run,
# a loaded machine's figures fell by half)
window() {
	local t0 t1 u0 u1
	sleep 1
	read -r _ t0 <<<"$(prog_stats "$1")"
	u0=$(cpu_ns "$2")
	sleep 4
	read -r _ t1 <<<"$(prog_stats "$1")"
	u1=$(cpu_ns "$2")
	awk -v t=$((t1 - t0)) -v u=$((u1 - u0)) 'BEGIN { n = u * 999 / 1e9; printf "%.0f\n", (n > 0 ? t / n : 0) }'
}
# ctxprof on the no-frame-pointer build, shape $1, collector $2
ours() {
	local wl col ns
	"$B/progstat" >"$B/uc.ids"
	target fixed_work_nofp "$1"
	wl=$!
	"$2" --pid $wl --frequency 999 --no-status --duration 7 --no-kernel -o "$B/uc.pb.gz" \
		2>"$B/uc.log" &
	col=$!
	ns=$(window "$B/uc.ids" $wl)
	wait $col || true
	kill $wl 2>/dev/null || true
	wait $wl 2>/dev/null || true
	complete=$(sed -n 's/^ctxprof: user stacks by how they end: complete=\([0-9]*\).*/\1/p' "$B/uc.log")
	taken=$(sed -n 's/^ctxprof: samples: \([0-9]*\) taken.*/\1/p' "$B/uc.log")
	[ "${complete:-0}" = "${taken:-x}" ] || echo "unwind_cost: only ${complete:-?} of ${taken:-?} stacks complete ($1, $2)" >&2
	echo "$ns"
}
# bpftrace on the frame-pointer build, shape $1
theirs() {
	local wl bt ns
	"$B/progstat" >"$B/uc.ids"
	target fixed_work "$1"
	wl=$!
	bpftrace -e "profile:hz:999 /pid == $wl/ { @[ustack] = count(); }" >/dev/null 2>&1 &
	bt=$!
	# compiling and attaching: seconds on a loaded machine, and a SIGINT
	# before its handler is in place is lost
	for _ in $(seq 60); do
		[ "$(prog_stats "$B/uc.ids" | cut -d' ' -f1)" -gt 0 ] && break
		sleep 0.5
	done
	ns=$(window "$B/uc.ids" $wl)
	kill -INT $bt 2>/dev/null || true
	for _ in $(seq 20); do kill -0 $bt 2>/dev/null || break; sleep 0.5; done
	kill -KILL $bt 2>/dev/null || true
	wait $bt 2>/dev/null || true
	kill $wl 2>/dev/null || true
	wait $wl 2>/dev/null || true
	echo "$ns"
}

declare -A OURS THEIRS BEFORE
for r in $(seq "$REPS"); do
	for sh in $SHAPES; do
		o=$(ours "$sh" "$COLLECTOR")
		t=$(theirs "$sh")
		OURS[$sh]="${OURS[$sh]:-} $o"
		THEIRS[$sh]="${THEIRS[$sh]:-} $t"
		line="ctxprof --no-kernel $o ns, bpftrace ustack $t ns ($(ratio "$o" "$t"))"
		if [ -n "$COLLECTOR_BEFORE" ]; then
			b=$(ours "$sh" "$COLLECTOR_BEFORE")
			BEFORE[$sh]="${BEFORE[$sh]:-} $b"
			line="$line; $COLLECTOR_BEFORE $b ns ($(ratio "$b" "$t"))"
		fi
		echo "unwind_cost: run $r, $sh: $line"
	done
done
echo
head="| BPF ns per target sample, user stack only, 999 Hz, medians of $REPS (runs) | ctxprof (CFI, no frame pointers) | bpftrace ustack (frame pointers) | ratio |"
sep="|---|---|---|---|"
if [ -n "$COLLECTOR_BEFORE" ]; then
	head="$head before: ctxprof | before: ratio |"
	sep="$sep---|---|"
fi
echo "$head"
echo "$sep"
for sh in $SHAPES; do
	# shellcheck disable=SC2086
	o=$(printf '%s\n' ${OURS[$sh]} | median) t=$(printf '%s\n' ${THEIRS[$sh]} | median)
	IFS=: read -r where frames stack <<<"$sh"
	case $where in main) where="main thread" ;; *) where="2 other threads" ;; esac
	line="| $where, $frames frames, $stack deep | $o (${OURS[$sh]# }) | $t (${THEIRS[$sh]# }) | $(ratio "$o" "$t") |"
	if [ -n "$COLLECTOR_BEFORE" ]; then
		# shellcheck disable=SC2086
		b=$(printf '%s\n' ${BEFORE[$sh]} | median)
		line="$line $b (${BEFORE[$sh]# }) | $(ratio "$b" "$t") |"
	fi
	echo "$line"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
