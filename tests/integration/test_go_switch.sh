#!/usr/bin/env bash
# Go samples taken on the system stack (root): continued on the goroutine
# that switched, as Go's own traceback does (bpf/go_stack.bpf.h).
# tests/workloads/go/goswitch.go spends its time where the runtime switches
# stacks, each kind under a function of its own: garbage (goAllocate:
# mallocgc's systemstack work), stack growth (goDeepRecurse: morestack,
# newstack on g0), the clock (goClock: time.now and nanotime1 call the vDSO
# on g0's stack), channel ping-pong (goPingPong: mcall(park_m), the
# scheduler on g0).  Built plain and with -ldflags='-s -w', profiled
# GO_SECONDS (8) each.  Checks:
#  - >= GO_SWITCH_BAR % (98) of the samples end at runtime.goexit or the
#    thread's own runtime.mstart, named, no marker frame; nothing past a root;
#  - the switches were followed (go_switch_followed in the summary);
#  - the frames past each switch are the goroutine's real callers: under
#    runtime.morestack, main.goDeepRecurse; under runtime.systemstack (and
#    systemstack_switch), main.goAllocate's mallocgc; under time.now or
#    runtime.nanotime1, main.goClock; under runtime.mcall, a goroutine's
#    channel operation; and >= 90 % of the samples through each switch
#    are whole.
# GO_SUITE=S GO_MINOR=N (test_go_versions.sh's pairs): with that suite's
# golang-1.N-go, in its root (tests/roots/mkroot.sh), as test_go.sh does.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stacks.sh"
need_root

SECS=${GO_SECONDS:-8}
BAR=${GO_SWITCH_BAR:-98}
SW_BAR=90 # of the samples through one kind of switch: tens of them
SRC=$ROOT/tests/workloads/go/goswitch.go
ROOTS='runtime.goexit|runtime.mstart'

go_build goswitch "$SRC"

# share_of FOLDED AWK_CONDITION: "N of M": the samples whose stack ($2, leaf
# first, ";"-separated, in array f[1..n]) meets the condition
share_of() {
	awk -F'\t' "function whole() { return \$2 !~ /\\[/ && f[n] ~ /^($ROOTS)(\\.abi0)?\$/ }
		{ n = split(\$2, f, \";\"); t += \$1; if ($2) c += \$1 } END { print c + 0, \"of\", t + 0 }" "$1"
}

# past SWITCH CALLER: "N of M": M samples go through the switch frame
# SWITCH (a regex), N of them are whole with a frame matching CALLER rootward
# of it
past() {
	awk -F'\t' -v sw="^($1)(\\.abi0)?\$" -v caller="^($2)(\\.abi0)?\$" -v roots="^($ROOTS)(\\.abi0)?\$" '
	{
		n = split($2, f, ";"); at = 0; found = 0
		for (i = 1; i <= n; i++)
			if (f[i] ~ sw) { at = i; break }
		if (!at) next
		for (i = at + 1; i <= n; i++)
			if (f[i] ~ caller) found = 1
		t += $1
		if (found && $2 !~ /\[/ && f[n] ~ roots) c += $1
	} END { print c + 0, "of", t + 0 }' "$3"
}

# the switch SWITCH, its caller CALLER: whole and under CALLER, some of them
check_past() {
	local what=$1 sw=$2 caller=$3 folded=$4 n m
	read -r n _ m <<<"$(past "$sw" "$caller" "$folded")"
	if [ "$m" -gt 0 ] && [ "$n" -gt 0 ]; then
		ok "$what: $n of $m samples through $sw whole, under $caller"
	else
		fail "$what: $n of $m samples through $sw whole under $caller"
		grep -E "(^|;)($sw)(\\.abi0)?(;|\$)" "$folded" | head -3 | cut -c1-400 | sed 's/^/   /'
	fi
}

check() {
	local what=$1 bin=$2 out=$TMP/$1 pid n m followed
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
	grep -E "user stacks" "$out.log" | sed 's/^/   /'
	grep -oE "go_switch_[a-z_]+=[0-9]+" "$out.log" | tr '\n' ' ' | sed 's/^/   /'
	echo
	STACKS_INLINE=1 stacks_from_pprof "$out.pb.gz" "$pid" >"$out.folded"
	[ -s "$out.folded" ] || { fail "$what: no stacks"; return; }

	read -r n _ m <<<"$(share_of "$out.folded" "whole()")"
	if [ "$m" -gt 0 ] && [ $((100 * n)) -ge $((BAR * m)) ]; then
		ok "$what: $n of $m samples ($((100 * n / m)) %) named and whole down to runtime.goexit or runtime.mstart"
	else
		fail "$what: only $n of $m samples named and whole to runtime.goexit or runtime.mstart (want >= $BAR %)"
		awk -F'\t' -v re="^($ROOTS)(\\.abi0)?\$" '{ n = split($2, f, ";") }
			$2 ~ /\[/ || f[n] !~ re' "$out.folded" | head -8 | cut -c1-400 | sed 's/^/   /'
	fi
	read -r n _ <<<"$(share_of "$out.folded" "(\$2 ~ /(^|;)($ROOTS)(\\\\.abi0)?;/)")"
	[ "$n" -eq 0 ] && ok "$what: no frame after a root" ||
		fail "$what: $n samples have a caller past a root"
	followed=$(grep -oE "go_switch_followed=[0-9]+" "$out.log" | cut -d= -f2)
	[ "${followed:-0}" -gt 0 ] && ok "$what: $followed stack switches followed" ||
		fail "$what: no stack switch followed (go_switch_followed)"

	check_past "$what" runtime.morestack main.goDeepRecurse "$out.folded"
	check_past "$what" runtime.systemstack "main.goAllocate" "$out.folded"
	check_past "$what" "time.now|runtime.nanotime1" main.goClock "$out.folded"
	check_past "$what" runtime.mcall "runtime.gopark" "$out.folded"
	# and those through each switch whole (fewer: the bar lower)
	for sw in runtime.morestack "time.now|runtime.nanotime1" runtime.mcall runtime.systemstack; do
		read -r n _ m <<<"$(past "$sw" ".*" "$out.folded")"
		[ $((100 * n)) -ge $((SW_BAR * m)) ] && ok "$what: $n of $m samples through $sw whole" ||
			fail "$what: $n of $m samples through $sw whole (want >= $SW_BAR %)"
	done
	check_reconciled "$out.log" "$out.pb.gz"
}

check plain "$BIN/goswitch"
check stripped "$BIN/goswitch_stripped"
finish
