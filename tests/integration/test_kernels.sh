#!/usr/bin/env bash
# The kernel matrix's part in make test: Debian 11's 5.10 and Debian 12's own 6.1
# (amd64, the host-built collector) and Debian 12's arm64 6.1 (the arm64 build,
# make ARCH=arm64, in $OUTPUT/arm64) booted under qemu (tests/kernels/matrix.sh:
# TCG where KVM is unusable, 1-2 min a kernel here), the smoke suite run in each,
# its table printed.  Fails on any FAIL cell and on "unsupported" where the kernel
# should support the check (matrix.sh's may_lack).  Needs root (the guests' files)
# and make deps-cross (make test runs it).  make test-kernels runs the whole matrix.
source "$(dirname "$0")/lib.sh"
need_root
for t in qemu-system-x86_64 qemu-system-aarch64 busybox cpio; do
	command -v $t > /dev/null || skip "$t is missing: run make deps"
done
cd "$ROOT"
ARM64_OUTPUT=${ARM64_OUTPUT:-$OUTPUT/arm64}
[ -x "$ARM64_OUTPUT/collector" ] || skip "no arm64 build in $ARM64_OUTPUT: make deps-cross && make ARCH=arm64"
if COLLECTOR=$COLLECTOR OUTPUT=$OUTPUT ARM64_OUTPUT=$ARM64_OUTPUT PPROF=$PPROF \
	tests/kernels/matrix.sh bullseye bookworm bookworm-arm64; then
	ok "5.10 and 6.1 amd64, 6.1 arm64: every check as expected"
else
	fail "kernel matrix: a FAIL, an unexpected unsupported, or a guest without result (table above)"
fi
finish
