#!/usr/bin/env bash
# The lifecycle programs and the thread registry against real traffic: load
# bpf/lifecycle.bpf.c, scan /proc, then fork 50 children that exec /bin/true
# and start 20 threads that rename themselves; the driver checks the registry
# saw them come and go (exec filenames, comm changes, exits reclaimed) and
# that the BPF counters reconcile.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root to load BPF programs"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF"
DRIVER=$OUTPUT/tests/lifecycle_driver
[ -x "$DRIVER" ] || { echo "FAIL: $DRIVER not built (make $OUTPUT/tests/lifecycle_driver)"; exit 1; }

timeout 60 "$DRIVER" >"$TMP/log" 2>&1
rc=$?
grep -v '^ok: child' "$TMP/log"
case $rc in
0) ok "lifecycle driver: every check passed" ;;
77) skip "$(sed -n 's/^SKIP //p' "$TMP/log" | head -1)" ;;
124) fail "lifecycle driver timed out" ;;
*) fail "lifecycle driver exited $rc" ;;
esac
n=$(grep -c '^ok: child .* ran /bin/true' "$TMP/log")
[ "$n" -eq 50 ] && ok "50 children ran" || fail "$n of 50 children ran /bin/true"
finish
