#!/usr/bin/env bash
# User-stack unwinding without frame pointers: the share of samples whose
# stack reaches main, on workloads with known chains (tests/workloads/unwind/,
# built by make) and on Debian's own programs (debian_programs.sh).
#
# Today this measures perf, the reference: --call-graph dwarf must carry each
# workload's chain to main in >= UNWIND_BAR % (95) of its leaf's samples and
# reach main in >= UNWIND_BAR % of a Debian program's samples; --call-graph fp
# is printed beside it for contrast (low on the -fomit-frame-pointer builds).
# Our collector's DWARF unwinder will be judged by the same checkers on the
# same pids: see the COLLECTOR markers.
#
# Needs root (perf -p on any process) and perf (Debian: linux-perf); runs
# UNWIND_SECONDS (5) of recording per program and mode.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stacks.sh"
. "$(dirname "$0")/debian_programs.sh"

[ "$(id -u)" = 0 ] || skip "needs root to record any process with perf"
command -v perf >/dev/null || skip "perf missing (apt-get install linux-perf)"
perf record -q -e cpu-clock -o "$TMP/probe.data" -- true >/dev/null 2>&1 ||
	skip "perf cannot record the cpu-clock event here"

SECS=${UNWIND_SECONDS:-5}
BAR=${UNWIND_BAR:-95}

# Record PID for SECONDS with perf and write its folded stacks to OUT.
# MODE: dwarf (default; PERF_STACK_DUMP bytes of stack a sample, 16384) or fp.
# perf's exit status is not the verdict (it is non-zero when the target
# exits first); having stacks is.  Keeps OUT.data and OUT.log beside OUT.
perf_folded() {
	local pid=$1 secs=$2 out=$3 mode=${4:-dwarf} cg
	case $mode in
	dwarf) cg=dwarf,${PERF_STACK_DUMP:-16384} ;;
	fp) cg=fp ;;
	*) echo "perf_folded: unknown mode $mode" >&2; return 2 ;;
	esac
	perf record -e cpu-clock -F 999 --call-graph "$cg" -p "$pid" -o "$out.data" \
		-- sleep "$secs" >"$out.log" 2>&1
	if ! stacks_from_perf "$out.data" "$pid" >"$out" || [ ! -s "$out" ]; then
		cat "$out.log"
		return 1
	fi
}

# check_chains FOLDED WHO WORKLOAD: each of WORKLOAD's chains against BAR
check_chains() {
	local folded=$1 who=$2 wl=$3 line leaf chain share
	while read -r line; do
		[ "${line%% *}" = "$wl" ] || continue
		read -r _ leaf chain <<<"$line"
		share=$(chain_share "$folded" "$leaf" "$chain")
		if share_at_least "$share" "$BAR"; then
			ok "$wl, $who: $share of $leaf samples carry $chain"
		else
			fail "$wl, $who: only $share of $leaf samples carry $chain (want >= $BAR%)"
		fi
	done <<<"$WORKLOAD_CHAINS"
}

# the chains each workload guarantees: workload leaf leaf;...;main
# (glibc's qsort tail-jumps to qsort_r, so qsort itself is never a frame;
# the signal trampoline between unw_sig_handler and unw_sig_interrupted is
# __restore_rt only where libc's .symtab is at hand, so it is not named)
WORKLOAD_CHAINS="\
unw_qsort unw_cmp_hot unw_cmp_hot;qsort|qsort_r|__qsort_r|__GI___qsort_r;unw_sort_driver;main
unw_deep unw_deep_leaf unw_deep_leaf;unw_recurse*120;unw_deep_driver;main
unw_signal unw_sig_leaf unw_sig_leaf;unw_sig_handler;unw_sig_interrupted;main
unw_plt unw_lib_leaf unw_lib_leaf;unw_lib_entry;unw_plt_driver;main
unw_plt unw_plt_callback unw_plt_callback;unw_lib_leaf;unw_lib_entry;unw_plt_driver;main
unw_fp_leaf unw_fp_leaf_a unw_fp_leaf_a;unw_fp_caller;main
unw_fp_leaf unw_fp_leaf_b unw_fp_leaf_b;unw_fp_caller;main"

echo "== stack checkers"
if bash "$(dirname "$0")/stacks.sh" --selftest >"$TMP/selftest" 2>&1; then
	ok "stacks.sh --selftest"
else
	cat "$TMP/selftest"
	fail "stacks.sh --selftest"
fi

echo "== workload binaries"
if "$ROOT/tests/workloads/unwind/verify.sh" "$WORKLOADS" >"$TMP/verify" 2>&1; then
	ok "verify.sh: every chain edge is a real call, frame layouts as promised"
else
	grep -v '^ok' "$TMP/verify"
	fail "verify.sh (run make unwind-verify)"
fi

for wl in unw_qsort unw_deep unw_signal unw_plt unw_fp_leaf; do
	echo "== $wl"
	[ -x "$WORKLOADS/$wl" ] || { fail "$WORKLOADS/$wl not built (make)"; continue; }
	start_bg "$WORKLOADS/$wl" >"$TMP/$wl.out"
	pid=$!
	sleep 0.3
	if perf_folded "$pid" "$SECS" "$TMP/$wl.dwarf" dwarf; then
		check_chains "$TMP/$wl.dwarf" "perf dwarf" "$wl"
		echo "   perf dwarf, all samples reaching main: $(reach_share "$TMP/$wl.dwarf" "$STACKS_MAIN")"
		flat_profile "$TMP/$wl.dwarf" 3 | sed 's/^/   /'
	else
		fail "$wl: perf --call-graph dwarf recorded nothing"
	fi
	# contrast only: frame pointers lose these chains
	if perf_folded "$pid" "$SECS" "$TMP/$wl.fp" fp; then
		while read -r w leaf chain; do
			[ "$w" = "$wl" ] && echo "   perf fp: $(chain_share "$TMP/$wl.fp" "$leaf" "$chain") of $leaf"
		done <<<"$WORKLOAD_CHAINS"
		echo "   perf fp, all samples reaching main: $(reach_share "$TMP/$wl.fp" "$STACKS_MAIN")"
	fi
	# COLLECTOR: profile the same pid with our DWARF unwinder here, e.g.
	#   "$COLLECTOR" --pid "$pid" --duration "$SECS" --frequency 999 -o "$TMP/$wl.pb.gz"
	#   stacks_from_pprof "$TMP/$wl.pb.gz" "$pid" >"$TMP/$wl.ctxprof"
	#   check_chains "$TMP/$wl.ctxprof" collector "$wl"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
done

for entry in "${DEB_PROGRAMS[@]}"; do
	IFS=: read -r prog pkg elf <<<"$entry"
	echo "== $prog (Debian package $pkg)"
	if ! "deb_${prog}_available"; then
		echo "   not installed, skipped (apt-get install -y $pkg)"
		continue
	fi
	[ -e "$elf" ] && echo "   frame-pointer prologues in $elf: $(deb_fp_prologues "$elf") functions"
	# long enough for both recordings and perf script in between
	pid=$("deb_$prog" $((4 * SECS + 60)) "$TMP")
	PIDS+=("$pid")
	sleep 0.3
	if perf_folded "$pid" "$SECS" "$TMP/$prog.dwarf" dwarf; then
		share=$(reach_share "$TMP/$prog.dwarf" "$STACKS_MAIN")
		if share_at_least "$share" "$BAR"; then
			ok "$prog, perf dwarf: $share of samples reach main"
		else
			fail "$prog, perf dwarf: only $share of samples reach main (want >= $BAR%)"
		fi
		flat_profile "$TMP/$prog.dwarf" 3 | sed 's/^/   /'
	else
		fail "$prog: perf --call-graph dwarf recorded nothing"
	fi
	perf_folded "$pid" "$SECS" "$TMP/$prog.fp" fp &&
		echo "   perf fp: $(reach_share "$TMP/$prog.fp" "$STACKS_MAIN") of samples reach main"
	# COLLECTOR: the same pid with our collector, then
	#   stacks_from_pprof "$TMP/$prog.pb.gz" "$pid" >"$TMP/$prog.ctxprof"
	#   reach_share "$TMP/$prog.ctxprof" "$STACKS_MAIN"   against the same BAR
	kill "$pid" 2>/dev/null
done

finish
