#!/usr/bin/env bash
# Go programs (root): named, and their stacks whole, stripped or not.
# tests/workloads/go/goload.go runs an HTTP server and its client in one
# process, goroutines spinning in known functions (goSpinLeaf called from
# goSpinMid; goInlined inlined into goSpinInline) and one making garbage, so
# that the garbage collector works on the system stack.  It is built by
# Debian's go as go build makes it (.symtab, .debug_frame), with
# -ldflags='-s -w' (neither: names, lines and unwind rows come from
# .gopclntab alone), and that as a PIE linked by gcc, as distributions link
# cgo programs (.eh_frame for the C parts only, the table inside
# .data.rel.ro), then profiled GO_SECONDS (3) each.  Checks:
#  - >= GO_BAR % (95) of the samples have every user frame named and end at
#    a Go stack root (runtime.goexit below runtime.main and every goroutine,
#    runtime.mstart below a thread's scheduler) or at a function that
#    switched stacks (runtime.systemstack, mcall, morestack, the vdso
#    callers) where the switch could not be followed (counted as
#    go_system_stack; test_go_switch.sh checks the ones followed); no
#    marker frame;
#  - no frame after a root: never a made-up caller;
#  - the hot functions are there, whole: goSpinLeaf under goSpinMid; in the
#    stripped builds, goInlined as an inlined frame, with goload.go lines.
#  GO_SUITE=S GO_MINOR=N (test_go_versions.sh's pairs): with that suite's
#  golang-1.N-go instead, in its root (tests/roots/mkroot.sh), where the
#  workload is built (cached there per version) and runs; no gcc-linked
#  build there (the root has no C compiler).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stacks.sh"
need_root

SECS=${GO_SECONDS:-3}
BAR=${GO_BAR:-95}
SRC=$ROOT/tests/workloads/go/goload.go
ROOTS='runtime.goexit|runtime.mstart|runtime.rt0_go|runtime.sigtramp'
SWITCHES='runtime.mcall|runtime.systemstack|runtime.morestack|runtime.asmcgocall'
SWITCHES="$SWITCHES|runtime.cgocallback|runtime.nanotime1|time.now"

go_build goload "$SRC"
if [ -z "${GO_SUITE:-}" ]; then
	CGO_ENABLED=1 go build -buildmode=pie -ldflags='-linkmode=external -s -w' \
		-o "$TMP/goload_external" "$SRC" || { echo "FAIL: go build -linkmode=external"; exit 1; }
fi

# share_of FOLDED AWK_CONDITION: "N of M": the samples whose stack ($2, leaf
# first, ";"-separated, in array f[1..n]) meets the condition
share_of() {
	awk -F'\t' "{ n = split(\$2, f, \";\"); t += \$1; if ($2) c += \$1 } END { print c + 0, \"of\", t + 0 }" "$1"
}

check() {
	local what=$1 bin=$2 out=$TMP/$1 pid ok bad n m
	"${INROOT[@]}" "$bin" $((SECS + 5)) >"$out.stdout" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	sleep 1
	if ! "$COLLECTOR" --pid "$pid" -d "$SECS" -o "$out.pb.gz" 2>"$out.log"; then
		cat "$out.log"
		fail "$what: the collector failed"
		return
	fi
	kill "$pid" 2>/dev/null
	grep -E "user stacks|symbols:" "$out.log" | sed 's/^/   /'
	STACKS_INLINE=1 stacks_from_pprof "$out.pb.gz" "$pid" >"$out.folded"
	[ -s "$out.folded" ] || { fail "$what: no stacks"; return; }

	# named, and ending at a root or a stack switch
	read -r n _ m <<<"$(share_of "$out.folded" \
		"\$2 !~ /\\[/ && f[n] ~ /^($ROOTS|$SWITCHES)(\\.abi0)?\$/")"
	if [ "$m" -gt 0 ] && [ $((100 * n)) -ge $((BAR * m)) ]; then
		ok "$what: $n of $m samples named and whole down to a Go root or stack switch"
	else
		fail "$what: only $n of $m samples named and whole (want >= $BAR %)"
		awk -F'\t' -v re="^($ROOTS|$SWITCHES)(\\.abi0)?\$" '{ n = split($2, f, ";") }
			$2 ~ /\[/ || f[n] !~ re' "$out.folded" | head -5 | sed 's/^/   /'
	fi
	# nothing past a root (a switch followed has the goroutine's frames past it)
	read -r bad _ <<<"$(share_of "$out.folded" "(\$2 ~ /(^|;)($ROOTS)(\\.abi0)?;/)")"
	[ "$bad" -eq 0 ] && ok "$what: no frame after a root" ||
		fail "$what: $bad samples have a caller past a root"
	grep -E "(^|;)($ROOTS)(\.abi0)?;" "$out.folded" | head -3 | sed 's/^/   /'
	# a cut stack says so (a marker frame, counted): a few are allowed within
	# the bar above (a pc in the middle of a stack switch, 1 in 500 seen),
	# never more than its complement
	bad=$(grep -c '\[unwind stopped\|\[truncated' "$out.folded")
	if [ $((100 * bad)) -le $(((100 - BAR) * m)) ]; then
		ok "$what: $bad of $m stacks marked as cut (at most $((100 - BAR)) %)"
	else
		fail "$what: $bad of $m stacks marked as cut (want at most $((100 - BAR)) %)"
	fi

	# the hot functions, whole
	read -r n _ m <<<"$(share_of "$out.folded" "f[1] == \"main.goSpinLeaf\"")"
	read -r ok_n _ <<<"$(share_of "$out.folded" \
		"f[1] == \"main.goSpinLeaf\" && f[2] == \"main.goSpinMid\" && f[n] ~ /^runtime.goexit(.abi0)?\$/")"
	[ "$n" -gt 0 ] && [ "$ok_n" -eq "$n" ] &&
		ok "$what: main.goSpinLeaf ($n samples), each under main.goSpinMid down to runtime.goexit" ||
		fail "$what: main.goSpinLeaf $n samples, $ok_n of them under goSpinMid to runtime.goexit"
	n=$(grep -c 'main\.goSpinInline' "$out.folded")
	[ "$n" -gt 0 ] && ok "$what: main.goSpinInline named" || fail "$what: main.goSpinInline missing"
	check_reconciled "$out.log" "$out.pb.gz"
}

check unstripped "$BIN/goload"

# names, inlined calls and lines from .gopclntab
check_gopclntab() {
	local what=$1 out=$TMP/$1 n
	grep -q "[1-9][0-9]* Go .gopclntab read" "$out.log" && ok "$what: its .gopclntab read" ||
		fail "$what: the summary counts no .gopclntab read"
	n=$(grep -c 'main\.goInlined;main\.goSpinInline' "$out.folded")
	[ "$n" -gt 0 ] && ok "$what: main.goInlined an inlined frame of main.goSpinInline" ||
		fail "$what: no main.goInlined inlined into main.goSpinInline"
	if "$PPROF" -top -lines -nodecount=200 "$out.pb.gz" 2>/dev/null |
		grep -Eq 'main\.goSpinLeaf .*goload\.go:[0-9]+'; then
		ok "$what: source lines (pprof -lines: main.goSpinLeaf goload.go:N)"
	else
		fail "$what: no goload.go line for main.goSpinLeaf"
	fi
}

check stripped "$BIN/goload_stripped"
check_gopclntab stripped
if [ -z "${GO_SUITE:-}" ]; then
	check external "$TMP/goload_external"
	check_gopclntab external
fi
finish
