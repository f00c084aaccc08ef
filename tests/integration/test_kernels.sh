#!/usr/bin/env bash
# The kernel matrix's older half: Debian 11's 5.10 and Debian 12's own 6.1 booted
# under qemu (tests/kernels/matrix.sh: TCG where KVM is unusable, ~1 min a kernel
# here), the smoke suite run in each, its table printed.  Fails on any FAIL cell and
# on "unsupported" where the kernel should support the check (matrix.sh's may_lack).
# Skipped until tests/kernels/enabled exists (or CTXPROF_KERNEL_TESTS=1): main's BPF
# programs load on neither kernel yet (issue 30), the file goes in with that fix.
source "$(dirname "$0")/lib.sh"
need_root
[ -f "$ROOT/tests/kernels/enabled" ] || [ "${CTXPROF_KERNEL_TESTS:-0}" = 1 ] ||
	skip "kernel matrix not enabled yet (tests/kernels/enabled, or CTXPROF_KERNEL_TESTS=1)"
for t in qemu-system-x86_64 busybox cpio; do
	command -v $t > /dev/null || skip "$t is missing: run make deps"
done
cd "$ROOT"
if COLLECTOR=$COLLECTOR OUTPUT=$OUTPUT PPROF=$PPROF tests/kernels/matrix.sh bullseye bookworm; then
	ok "5.10 and 6.1: every check as expected"
else
	fail "kernel matrix: a FAIL, an unexpected unsupported, or a guest without result (table above)"
fi
finish
