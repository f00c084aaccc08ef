#!/usr/bin/env bash
# Each bad start prints one clear line naming the problem and exits non-zero.
. "$(dirname "$0")/lib.sh"
need_root

# expect <exit-code-must-be-nonzero> <pattern> -- args...
expect_error() {
	local pattern=$1; shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$? lines
	lines=$(wc -l < "$TMP/err")
	if [ $rc -ne 0 ] && grep -q -- "$pattern" "$TMP/err" && [ "$lines" -eq 1 ]; then
		ok "$* -> exit $rc: $(cat "$TMP/err")"
	else
		fail "$* -> exit $rc, stderr ($lines lines): $(cat "$TMP/err"); wanted one line matching '$pattern'"
	fi
}

expect_error "pid.*is required" "$COLLECTOR"
expect_error "--pid: 'abc' is not a process id" "$COLLECTOR" --pid abc
expect_error "--pid: '-5' is not a process id" "$COLLECTOR" --pid -5
expect_error "--frequency: '0'" "$COLLECTOR" --pid 1 --frequency 0
expect_error "--frequency: '999999'" "$COLLECTOR" --pid 1 --frequency 999999
expect_error "--duration: 'x'" "$COLLECTOR" --pid 1 --duration x
expect_error "--ring-size: '100'" "$COLLECTOR" --pid 1 --ring-size 100
expect_error "unknown option '--bogus'" "$COLLECTOR" --pid 1 --bogus
expect_error "unexpected argument 'extra'" "$COLLECTOR" --pid 1 extra
expect_error "option --output needs a value" "$COLLECTOR" --pid 1 --output

# a pid that does not exist: the highest pid the kernel allows is never in use
max=$(cat /proc/sys/kernel/pid_max)
expect_error "no process with pid $max" "$COLLECTOR" --pid "$max" --duration 1
expect_error "btf /nonexistent" "$COLLECTOR" --pid 1 --btf /nonexistent --duration 1

# not privileged: drop to nobody; the message names the capabilities
if command -v setpriv >/dev/null; then
	expect_error "missing capability CAP_BPF and CAP_PERFMON" \
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$COLLECTOR" --pid 1 --duration 1
else
	echo "note: setpriv missing, privilege check not exercised"
fi

# an output path that cannot be written: the run fails with a clear line
start_bg "$WORKLOADS/shares"
wl=$!
"$COLLECTOR" --pid "$wl" --duration 1 -o /nonexistent-dir/x.pb.gz >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "cannot write /nonexistent-dir/x.pb.gz" "$TMP/err"; then
	ok "unwritable output -> exit $rc"
else
	fail "unwritable output -> exit $rc: $(cat "$TMP/err")"
fi

"$COLLECTOR" --help > "$TMP/help" 2>&1 && grep -q -- "--frequency HZ" "$TMP/help" &&
	ok "--help explains the options" || fail "--help"
finish
