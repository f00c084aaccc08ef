#!/bin/sh
# Regenerate vmlinux/<arch>/vmlinux.h from the running kernel's BTF.
# Usage: vmlinux/gen.sh [arch]   (arch defaults to the host's: x86 or arm64)
set -eu
arch=${1:-$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')}
dir=$(dirname "$0")/$arch
mkdir -p "$dir"
bpftool btf dump file /sys/kernel/btf/vmlinux format c > "$dir/vmlinux.h.tmp"
mv "$dir/vmlinux.h.tmp" "$dir/vmlinux.h"
echo "wrote $dir/vmlinux.h"
