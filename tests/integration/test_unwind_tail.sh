#!/usr/bin/env bash
# The table walk's tail-call driver, on the host's kernel: kernels without
# bpf_loop (5.10-5.16) walk user stacks in tail-call hops of a few frames
# (bpf/sampler.bpf.c, unwind_hop); CTXPROF_UNWIND_WALKER=tail makes the
# collector load that build here too.  On workloads built -O2
# -fomit-frame-pointer (tests/workloads/unwind/: 120-frame recursion, some
# 16 hops; a signal frame; PLT stubs; a frame without CFI stepped over by
# frame pointer) each leaf's share of whole chains to main, read back with
# the reference pprof tool, must be >= UNWIND_BAR % (95) and within
# TAIL_POINTS (2) of the bpf_loop walker's on the same process; the
# collector must say, in one line, that the tail-call walker is in use, and
# only then.  UNWIND_SECONDS (3) per recording.  Needs root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stacks.sh"

need_root
SECS=${UNWIND_SECONDS:-3}
BAR=${UNWIND_BAR:-95}
POINTS=${TAIL_POINTS:-2}
FALLBACK_LINE='the unwinder walks user stacks by tail calls'

# record PID with WALKER (loop or tail) into OUT (folded), OUT.log
record() { # PID WALKER OUT
	local env=()
	[ "$2" = tail ] && env=(CTXPROF_UNWIND_WALKER=tail)
	if ! env "${env[@]}" "$COLLECTOR" --pid "$1" --duration "$SECS" --frequency 499 \
		--python off -o "$3.pb.gz" 2>"$3.log"; then
		tail -5 "$3.log"
		return 1
	fi
	stacks_from_pprof "$3.pb.gz" "$1" >"$3" && [ -s "$3" ]
}

# the percentage in "N of M (P%)"
pct() { sed 's/.*(\([0-9.]*\)%)/\1/' <<<"$1"; }

# workload leaf chain (stacks.sh's chain_share)
CHAINS="\
unw_deep unw_deep_leaf unw_deep_leaf;unw_recurse*120;unw_deep_driver;main
unw_signal unw_sig_leaf unw_sig_leaf;unw_sig_handler;unw_sig_interrupted;main
unw_plt unw_lib_leaf unw_lib_leaf;unw_lib_entry;unw_plt_driver;main
unw_cfi_gap unw_gap_leaf unw_gap_leaf;unw_gap_nocfi;unw_gap_driver;main"

while read -r wl leaf chain; do
	echo "== $wl"
	[ -x "$WORKLOADS/$wl" ] || { fail "$WORKLOADS/$wl not built (make)"; continue; }
	start_bg "$WORKLOADS/$wl" >"$TMP/$wl.out"
	pid=$!
	sleep 0.3
	for w in loop tail; do
		if ! record "$pid" $w "$TMP/$wl.$w"; then
			fail "$wl, $w walker: the collector wrote no stacks"
			continue 2
		fi
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	if grep -q "$FALLBACK_LINE" "$TMP/$wl.tail.log" &&
		! grep -q "$FALLBACK_LINE" "$TMP/$wl.loop.log"; then
		ok "$wl: the collector says when the tail-call walker is in use, only then"
	else
		fail "$wl: no line naming the tail-call walker (or one with bpf_loop's)"
	fi
	loop=$(chain_share "$TMP/$wl.loop" "$leaf" "$chain")
	tail=$(chain_share "$TMP/$wl.tail" "$leaf" "$chain")
	grep -h "user stacks by how they end" "$TMP/$wl.loop.log" "$TMP/$wl.tail.log" |
		sed 's/^ctxprof: /   /' | cut -c1-110
	if share_at_least "$tail" "$BAR" &&
		awk -v t="$(pct "$tail")" -v l="$(pct "$loop")" -v p="$POINTS" 'BEGIN { exit !(t >= l - p) }'; then
		ok "$wl: tail calls $tail of $leaf samples whole, bpf_loop $loop"
	else
		fail "$wl: tail calls $tail of $leaf samples whole, bpf_loop $loop (want >= $BAR% and within $POINTS points)"
	fi
done <<<"$CHAINS"
finish
