#!/usr/bin/env bash
# Check with objdump that gcc built the unwinding workloads as promised:
# every unw_* function is a symbol of its own (no inlining, no .constprop/
# .isra/.part/.cold clones), each edge of the promised chains is a real call
# (no sibling call, no recursion turned into a loop), the -fomit-frame-pointer
# builds set up no %rbp frame, unw_fp_leaf's leaves touch no stack while
# their caller has a frame, and the PLT stubs stay lazily bound.
# Usage: verify.sh DIR   (DIR holds the binaries: $(OUTPUT)/workloads)
# Prints ok:/FAIL: lines; exits 0, 1 on a failure, 77 (SKIP) off x86-64.
set -u
dir=${1:?usage: verify.sh DIR}
failures=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

[ "$(uname -m)" = x86_64 ] || { echo "SKIP objdump checks are written for x86-64"; exit 77; }
command -v objdump >/dev/null || { echo "SKIP objdump missing"; exit 77; }
tmp=$(mktemp -d /tmp/unw-verify.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# the disassembly of function FN in binary BIN, one instruction a line
body() {
	[ -s "$tmp/${1##*/}.dis" ] ||
		objdump -d --no-show-raw-insn "$dir/$1" >"$tmp/${1##*/}.dis" 2>/dev/null
	awk -v fn="$2" '$0 ~ "^[0-9a-f]+ <" fn ">:$" { on = 1; next } on && /^$/ { exit } on' \
		"$tmp/${1##*/}.dis"
}

# FN exists in BIN as a function symbol with code, and gcc made no clone of it
exists() {
	local bin=$1 fn=$2
	if [ -n "$(body "$bin" "$fn")" ]; then ok "$bin: $fn is a function"; else fail "$bin: no $fn"; fi
}

# CALLER calls CALLEE with a call instruction (CALLEE may be X@plt or *: indirect)
calls() {
	local bin=$1 caller=$2 callee=$3 re
	case $callee in
	'*') re='call +\*%' ;;
	*) re="call +[0-9a-f]+ <$callee>\$" ;;
	esac
	if body "$bin" "$caller" | grep -Eq "$re"; then
		ok "$bin: $caller calls $callee"
	else
		fail "$bin: $caller does not call $callee (inlined or a sibling call?)"
	fi
}

# FN's address is taken in USER (a callback or a signal handler)
address_taken() {
	local bin=$1 user=$2 fn=$3
	if body "$bin" "$user" | grep -Eq "lea .*<$fn>\$"; then
		ok "$bin: $user takes the address of $fn"
	else
		fail "$bin: $user does not take the address of $fn"
	fi
}

# every unw_* function and main of BIN: no clones, no tail jump to a function
whole_binary() {
	local bin=$1 clones tails
	clones=$(nm "$dir/$bin" | awk '$3 ~ /^unw_.*\./ { print $3 }' | tr '\n' ' ')
	[ -z "$clones" ] && ok "$bin: no clones of unw_* functions" || fail "$bin: clones $clones"
	body "$bin" main >/dev/null
	tails=$(grep -Ec 'jmp +[0-9a-f]+ <(unw_[a-z_]*|main|qsort)(@plt)?>$' "$tmp/$bin.dis")
	[ "$tails" -eq 0 ] && ok "$bin: no tail jumps to functions" || fail "$bin: $tails tail jump(s)"
}

# -fomit-frame-pointer: no function of ours sets up %rbp as a frame pointer
no_fp_frames() {
	local bin=$1 fn bad=""
	for fn in $(nm "$dir/$bin" | awk '$2 ~ /^[tT]$/ && ($3 ~ /^unw_/ || $3 == "main") { print $3 }'); do
		body "$bin" "$fn" | grep -Eq 'mov +%rsp,%rbp' && bad="$bad $fn"
	done
	[ -z "$bad" ] && ok "$bin: no %rbp frame in any unw_* function or main" ||
		fail "$bin: %rbp frames in$bad"
}

# FN touches no stack at all: no push, pop, %rsp or %rbp
frameless_leaf() {
	local bin=$1 fn=$2
	if body "$bin" "$fn" | grep -Eq 'push|pop|%rsp|%rbp|call'; then
		fail "$bin: $fn touches the stack or calls"
	else
		ok "$bin: $fn is a frameless leaf (no push %rbp, no stack access)"
	fi
}

has_fp_frame() {
	local bin=$1 fn=$2
	if body "$bin" "$fn" | grep -EA3 'push +%rbp' | grep -Eq 'mov +%rsp,%rbp'; then
		ok "$bin: $fn sets up a %rbp frame"
	else
		fail "$bin: $fn has no %rbp frame"
	fi
}

lazy() {
	local bin=$1
	if readelf -d "$dir/$bin" | grep -Eq 'BIND_NOW|FLAGS.* NOW'; then
		fail "$bin: bound now (-z now), the PLT stubs are not lazy"
	else
		ok "$bin: lazy binding"
	fi
}

# does an FDE of FILE's SECTION (.eh_frame or .debug_frame) cover ADDR (hex)?
# (readelf follows a debuglink and dumps the debug file's sections too)
fde_covers() {
	local file=$1 section=$2 addr=$3
	# 16-digit hex compares as strings ("x" keeps awk from reading numbers)
	readelf --debug-dump=frames "$file" 2>/dev/null | awk -v sec="$section" -v a="x$addr" '
		/^Contents of the / { on = index($0, "the " sec " section") > 0 }
		on && / FDE / && match($0, /pc=[0-9a-f]+\.\.[0-9a-f]+/) {
			split(substr($0, RSTART + 3, RLENGTH - 3), r, /\.\./)
			if ("x" r[1] <= a && a < "x" r[2]) found = 1
		}
		END { exit !found }'
}

# FN has no CFI at all in BIN while WITH (another function there) has some
cfi_gap() {
	local bin=$1 fn=$2 with=$3 addr waddr
	addr=$(nm "$dir/$bin" | awk -v f="$fn" '$3 == f { print $1 }')
	waddr=$(nm "$dir/$bin" | awk -v f="$with" '$3 == f { print $1 }')
	[ -n "$addr" ] && [ -n "$waddr" ] || { fail "$bin: no symbol $fn or $with"; return; }
	if fde_covers "$dir/$bin" .eh_frame "$addr" || fde_covers "$dir/$bin" .debug_frame "$addr"; then
		fail "$bin: an FDE covers $fn"
	elif ! fde_covers "$dir/$bin" .eh_frame "$waddr"; then
		fail "$bin: no .eh_frame FDE covers $with"
	else
		ok "$bin: $fn has no CFI, $with has .eh_frame CFI"
	fi
}

# FN's CFI is in BIN's separate debug file only, found by its debuglink
cfi_in_debug_file_only() {
	local bin=$1 fn=$2 addr
	addr=$(nm "$dir/$bin" | awk -v f="$fn" '$3 == f { print $1 }')
	[ -n "$addr" ] || { fail "$bin: no symbol $fn"; return; }
	if fde_covers "$dir/$bin" .eh_frame "$addr"; then
		fail "$bin: $fn has an .eh_frame FDE in the binary itself"
	elif readelf -SW "$dir/$bin" | grep -Eq '\.z?debug_frame'; then
		fail "$bin: the binary itself has a .debug_frame"
	elif ! fde_covers "$dir/$bin.debug" .debug_frame "$addr"; then
		fail "$bin: $fn has no .debug_frame FDE in $bin.debug"
	elif ! readelf -p .gnu_debuglink "$dir/$bin" 2>/dev/null | grep -q "$bin.debug"; then
		fail "$bin: no .gnu_debuglink naming $bin.debug"
	else
		ok "$bin: $fn's CFI only in $bin.debug's .debug_frame (debuglink)"
	fi
}

for f in unw_qsort unw_deep unw_signal unw_plt libunw_lib.so unw_fp_leaf unw_debugframe \
	unw_cfi_gap; do
	[ -f "$dir/$f" ] || { echo "FAIL: $dir/$f not built"; exit 1; }
done

exists unw_qsort unw_cmp_hot
calls unw_qsort unw_sort_driver qsort@plt
address_taken unw_qsort unw_sort_driver unw_cmp_hot
calls unw_qsort main unw_sort_driver

exists unw_deep unw_deep_leaf
calls unw_deep unw_recurse unw_recurse
calls unw_deep unw_recurse unw_deep_leaf
calls unw_deep unw_deep_driver unw_recurse
calls unw_deep main unw_deep_driver

exists unw_signal unw_sig_leaf
calls unw_signal unw_sig_handler unw_sig_leaf
address_taken unw_signal main unw_sig_handler
calls unw_signal main unw_sig_interrupted

exists unw_plt unw_plt_callback
calls unw_plt main unw_plt_driver
calls unw_plt unw_plt_driver unw_lib_entry@plt
address_taken unw_plt unw_plt_driver unw_plt_callback
calls unw_plt unw_plt_driver unw_plt_tight
calls unw_plt unw_plt_tight unw_lib_tiny@plt
exists libunw_lib.so unw_lib_tiny
calls libunw_lib.so unw_lib_entry unw_lib_leaf@plt
calls libunw_lib.so unw_lib_leaf '*'
lazy unw_plt
lazy libunw_lib.so

calls unw_fp_leaf main unw_fp_caller
calls unw_fp_leaf unw_fp_caller unw_fp_leaf_a
calls unw_fp_leaf unw_fp_caller unw_fp_leaf_b
frameless_leaf unw_fp_leaf unw_fp_leaf_a
frameless_leaf unw_fp_leaf unw_fp_leaf_b
has_fp_frame unw_fp_leaf unw_fp_caller
has_fp_frame unw_fp_leaf main

for fn in unw_deep_leaf unw_recurse unw_deep_driver main; do
	cfi_in_debug_file_only unw_debugframe "$fn"
done
calls unw_debugframe unw_recurse unw_recurse

calls unw_cfi_gap main unw_gap_driver
calls unw_cfi_gap unw_gap_driver unw_gap_nocfi
calls unw_cfi_gap unw_gap_nocfi '*'
has_fp_frame unw_cfi_gap unw_gap_nocfi
cfi_gap unw_cfi_gap unw_gap_nocfi unw_gap_driver

for f in unw_qsort unw_deep unw_signal unw_plt libunw_lib.so unw_fp_leaf unw_debugframe \
	unw_cfi_gap; do
	whole_binary "$f"
done
for f in unw_qsort unw_deep unw_signal unw_plt libunw_lib.so unw_debugframe; do
	no_fp_frames "$f"
done

[ "$failures" -eq 0 ] && { echo "all workload checks passed"; exit 0; }
echo "$failures workload check(s) failed"
exit 1
