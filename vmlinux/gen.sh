#!/bin/sh
# Regenerate vmlinux/<arch>/vmlinux.h from a kernel's BTF.
# Usage: vmlinux/gen.sh [arch [kernel-image]]
#   arch defaults to the host's (x86 or arm64); without an image the running
#   kernel's BTF is used, with one (e.g. /boot/vmlinuz-* of Debian's
#   linux-image-*-arm64 package, taken with dpkg-deb -x) the BTF inside it.
#   arm64's was made from Debian 12's linux-image-6.1.0-56-arm64.
set -eu
arch=${1:-$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')}
dir=$(dirname "$0")/$arch
btf=/sys/kernel/btf/vmlinux
mkdir -p "$dir"
if [ $# -ge 2 ]; then
	btf=$dir/vmlinux.btf.tmp
	python3 "$(dirname "$0")/btf_from_image.py" "$2" "$btf"
fi
bpftool btf dump file "$btf" format c > "$dir/vmlinux.h.tmp"
[ "$btf" = /sys/kernel/btf/vmlinux ] || rm -f "$btf"
mv "$dir/vmlinux.h.tmp" "$dir/vmlinux.h"
echo "wrote $dir/vmlinux.h"
