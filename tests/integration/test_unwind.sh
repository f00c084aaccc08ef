#!/usr/bin/env bash
# User-stack unwinding without frame pointers (needs root: it loads BPF and
# runs perf on other processes).
#
# 1. Our collector (--unwind auto, the default) on workloads with known call
#    chains built -O2 -fomit-frame-pointer (tests/workloads/unwind/): a
#    callback called from glibc's qsort, 120-frame recursion, a signal
#    handler, calls through lazy PLT stubs into a library of our own, and a
#    frame-pointer build whose hot leaves are frameless, and unw_deep built
#    without unwind tables, its CFI only in a separate debug file's
#    .debug_frame (found by .gnu_debuglink), and unw_cfi_gap, whose middle
#    frame has no CFI in a file that has (stepped over by frame pointer).  >= UNWIND_BAR %
#    (95) of each leaf's samples must carry the whole chain to main, read
#    back with the reference pprof tool.
# 2. Debian's own programs (debian_programs.sh), built without frame
#    pointers: the collector and `perf record --call-graph dwarf` profile the
#    same process one after the other; our share of samples reaching main
#    must be >= UNWIND_BAR %, each hot function's flat share within
#    UNWIND_FLAT_POINTS (10) of perf's, and the functions at >=
#    UNWIND_NAME_PCT (1) % flat named as perf names them: none only one side
#    has (an alias such as __libc_malloc for malloc, a version such as
#    __pthread_mutex_lock@GLIBC_2.2.5; perf 6.1 prints versions, and
#    stacks.sh drops them from perf's names only).  At 1 %, some 40 samples
#    of a 4 s run, a name both sides share is all but never missing from one
#    by chance.  At least three programs must run.
# UNWIND_SECONDS (4) per recording.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stacks.sh"
. "$(dirname "$0")/debian_programs.sh"

need_root
command -v perf >/dev/null || skip "perf missing (make deps installs linux-perf)"
perf record -q -e cpu-clock -o "$TMP/probe.data" -- true >/dev/null 2>&1 ||
	skip "perf cannot record the cpu-clock event here"

SECS=${UNWIND_SECONDS:-4}
BAR=${UNWIND_BAR:-95}
FLAT_POINTS=${UNWIND_FLAT_POINTS:-10}
NAME_PCT=${UNWIND_NAME_PCT:-1}

# Profile PID with the collector for SECONDS into OUT.pb.gz, folded to OUT:
# native frames only (--python off), as perf sees them
collector_folded() {
	local pid=$1 secs=$2 out=$3
	shift 3
	if ! "$COLLECTOR" --pid "$pid" --duration "$secs" --frequency 999 --python off "$@" \
		-o "$out.pb.gz" \
		2>"$out.log"; then
		cat "$out.log"
		return 1
	fi
	grep -E "user stacks|unwinding" "$out.log" | sed 's/^/   /'
	stacks_from_pprof "$out.pb.gz" "$pid" >"$out" && [ -s "$out" ]
}

# compare_flat OURS PERF: every function at >= 3% in either flat profile is
# within FLAT_POINTS of the other's share (unnamed frames are one bucket:
# pprof names them by mapping, perf "[unknown]")
compare_flat() {
	awk -F'\t' -v pts="$FLAT_POINTS" '
	function name(s) { return s ~ /^\[.*\]$/ ? "[unnamed]" : s }
	{ leaf = $2; sub(/;.*/, "", leaf); leaf = name(leaf) }
	FILENAME == ARGV[1] { a[leaf] += $1; ta += $1; next }
	{ b[leaf] += $1; tb += $1 }
	END {
		bad = 0
		for (f in a) seen[f] = 1
		for (f in b) seen[f] = 1
		for (f in seen) {
			pa = ta ? 100 * a[f] / ta : 0; pb = tb ? 100 * b[f] / tb : 0
			if (pa < 3 && pb < 3) continue
			d = pa - pb; if (d < 0) d = -d
			printf "   %-40s ours %5.1f%%  perf %5.1f%%%s\n", f, pa, pb, (d > pts ? "  <-- off" : "")
			if (d > pts) bad++
		}
		exit bad > 0
	}' "$1" "$2"
}

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
unw_debugframe unw_deep_leaf unw_deep_leaf;unw_recurse*120;unw_deep_driver;main
unw_signal unw_sig_leaf unw_sig_leaf;unw_sig_handler;unw_sig_interrupted;main
unw_plt unw_lib_leaf unw_lib_leaf;unw_lib_entry;unw_plt_driver;main
unw_plt unw_plt_callback unw_plt_callback;unw_lib_leaf;unw_lib_entry;unw_plt_driver;main
unw_fp_leaf unw_fp_leaf_a unw_fp_leaf_a;unw_fp_caller;main
unw_fp_leaf unw_fp_leaf_b unw_fp_leaf_b;unw_fp_caller;main
unw_cfi_gap unw_gap_leaf unw_gap_leaf;unw_gap_nocfi;unw_gap_driver;main
unw_cfi_gap unw_gap_nocfi unw_gap_nocfi;unw_gap_driver;main"

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

for wl in unw_qsort unw_deep unw_signal unw_plt unw_fp_leaf unw_debugframe unw_cfi_gap; do
	echo "== $wl"
	[ -x "$WORKLOADS/$wl" ] || { fail "$WORKLOADS/$wl not built (make)"; continue; }
	start_bg "$WORKLOADS/$wl" >"$TMP/$wl.out"
	pid=$!
	sleep 0.3
	if collector_folded "$pid" "$SECS" "$TMP/$wl.ctxprof"; then
		check_chains "$TMP/$wl.ctxprof" collector "$wl"
		if [ "$wl" = unw_debugframe ]; then
			if grep -qE "[0-9]+ tables built, [1-9][0-9]* of them from a debug file's CFI" \
				"$TMP/$wl.ctxprof.log"; then
				ok "$wl: its rows came from its debug file's .debug_frame"
			else
				fail "$wl: no table built with a debug file's CFI"
			fi
		fi
		flat_profile "$TMP/$wl.ctxprof" 3 | sed 's/^/   /'
	else
		fail "$wl: the collector wrote no stacks"
	fi
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
done

ran=0
for entry in "${DEB_PROGRAMS[@]}"; do
	IFS=: read -r prog pkg elf <<<"$entry"
	echo "== $prog (Debian package $pkg)"
	if ! "deb_${prog}_available"; then
		echo "   not installed, skipped (apt-get install -y $pkg)"
		continue
	fi
	[ -e "$elf" ] && echo "   frame-pointer prologues in $elf: $(deb_fp_prologues "$elf") functions"
	# long enough for both recordings and perf script in between
	pid=$("deb_$prog" $((3 * SECS + 60)) "$TMP")
	PIDS+=("$pid")
	sleep 0.3
	if ! collector_folded "$pid" "$SECS" "$TMP/$prog.ctxprof"; then
		fail "$prog: the collector wrote no stacks"
		kill "$pid" 2>/dev/null
		continue
	fi
	if ! perf_folded "$pid" "$SECS" "$TMP/$prog.dwarf" dwarf; then
		fail "$prog: perf --call-graph dwarf recorded nothing"
		kill "$pid" 2>/dev/null
		continue
	fi
	ran=$((ran + 1))
	ours=$(reach_share "$TMP/$prog.ctxprof" "$STACKS_MAIN")
	theirs=$(reach_share "$TMP/$prog.dwarf" "$STACKS_MAIN")
	if share_at_least "$ours" "$BAR"; then
		ok "$prog: $ours of our samples reach main (perf dwarf: $theirs)"
	else
		fail "$prog: only $ours of our samples reach main (perf dwarf: $theirs; want >= $BAR%)"
	fi
	if compare_flat "$TMP/$prog.ctxprof" "$TMP/$prog.dwarf"; then
		ok "$prog: flat profile within $FLAT_POINTS points of perf's"
	else
		fail "$prog: flat profile more than $FLAT_POINTS points off perf's"
	fi
	diffs=$(flat_name_diffs "$TMP/$prog.ctxprof" "$TMP/$prog.dwarf" "$NAME_PCT")
	hot=$(flat_profile "$TMP/$prog.ctxprof" 1000 |
		awk -F '\t' -v pct="$NAME_PCT" '$1 + 0 >= pct && $3 !~ /^\[.*\]$/' | wc -l)
	if [ -z "$diffs" ]; then
		ok "$prog: its $hot functions at >= $NAME_PCT% flat named as perf names them"
	else
		awk '{ print "   " $0 }' <<<"$diffs"
		fail "$prog: functions at >= $NAME_PCT% flat named otherwise than perf names them"
	fi
	kill "$pid" 2>/dev/null
done
[ "$ran" -ge 3 ] && ok "$ran Debian programs compared with perf" ||
	fail "only $ran Debian programs could be compared with perf (want >= 3)"

finish
