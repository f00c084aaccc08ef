#!/usr/bin/env bash
# Boot a Debian kernel under qemu with the host-built collector, run a script in
# it, bring its files back:
#   tests/kernels/guest.sh [OPTIONS] SCRIPT [ARG...]
#     -k SUITE[-ARCH]  the kernel: bullseye, bookworm, trixie or sid, amd64 (default)
#                      or arm64 (tests/kernels/kernel.sh fetches it once); default bookworm
#     -c FILE          the collector binary, /ctxprof/collector in the guest (default
#                      ./collector); "-c none" boots without one
#     -p DIR           a payload: DIR's contents land in /payload (repeatable; later
#                      ones win); the script runs with /payload as its directory
#     -o DIR           where /out of the guest lands on the host (default: a temporary
#                      directory, removed at exit); the guest's console log is DIR/console.log
#     -t SECONDS       hard limit on the whole boot, qemu killed after it (default 300)
#     -m MIB           guest memory (default 2048); -s CPUS (default 2)
#     -a kvm|tcg       the accelerator (default: kvm when /dev/kvm opens, else tcg;
#                      also $CTXPROF_ACCEL)
#     -v               the guest's console on stderr as it boots
# Prints what SCRIPT printed (stdout and stderr) and exits with its status; 124 when
# the guest did not finish in time, 125 when it did not report (a panic, a boot
# failure: the console's tail is printed).
# The guest has no disk: an initramfs holds busybox (Debian's busybox-static), the
# collector, the payload, the shared libraries all their ELF files need (ldd on the
# host: the same glibc as the collector's build), and an init that mounts proc,
# sys, devtmpfs, debugfs, tracefs, bpffs, cgroup2 and runs SCRIPT as root.  Files
# come back as a base64 tar between markers on the second serial port (the console
# carries the kernel's messages): no modules needed, which Debian's kernels keep
# virtio, 9p and ext4 in.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2; }

KERNEL=bookworm COLLECTOR=./collector OUTDIR= TIMEOUT=300 MEM=2048 CPUS=2
ACCEL=${CTXPROF_ACCEL:-} VERBOSE=0
PAYLOADS=()
while getopts k:c:p:o:t:m:s:a:vh opt; do
	case $opt in
	k) KERNEL=$OPTARG ;;
	c) COLLECTOR=$OPTARG ;;
	p) PAYLOADS+=("$OPTARG") ;;
	o) OUTDIR=$OPTARG ;;
	t) TIMEOUT=$OPTARG ;;
	m) MEM=$OPTARG ;;
	s) CPUS=$OPTARG ;;
	a) ACCEL=$OPTARG ;;
	v) VERBOSE=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
SCRIPT=$1
shift
[ -f "$SCRIPT" ] || { echo "guest.sh: no script $SCRIPT" >&2; exit 2; }
case $KERNEL in
*-amd64 | *-arm64) SUITE=${KERNEL%-*} GARCH=${KERNEL##*-} ;;
*) SUITE=$KERNEL GARCH=amd64 ;;
esac
for t in busybox cpio; do
	command -v $t > /dev/null || { echo "guest.sh: $t is missing: run make deps" >&2; exit 2; }
done

KDIR=$("$HERE/kernel.sh" "$SUITE" "$GARCH" | tail -1)
WORK=$(mktemp -d /tmp/ctxprof-guest.XXXXXX)
QPID=
cleanup() {
	[ -z "$QPID" ] || kill "$QPID" 2> /dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT
[ -n "$OUTDIR" ] || OUTDIR=$WORK/out
mkdir -p "$OUTDIR"
ROOT=$WORK/root
mkdir -p "$ROOT"/{bin,sbin,proc,sys,dev,tmp,run,out,payload,ctxprof,guest}

# --- the initramfs
if [ -f "$KDIR/busybox" ]; then cp "$KDIR/busybox" "$ROOT/bin/busybox"; else cp /bin/busybox "$ROOT/bin/busybox"; fi
[ "$COLLECTOR" = none ] || install -m 755 "$COLLECTOR" "$ROOT/ctxprof/collector"
for p in "${PAYLOADS[@]}"; do
	cp -rL "$p"/. "$ROOT/payload/"
done
cp "$SCRIPT" "$ROOT/guest/script"
# the arguments, one file each, so any argument survives
mkdir "$ROOT/guest/args"
i=0
for a in "$@"; do
	printf '%s' "$a" > "$ROOT/guest/args/$(printf %03d $i)"
	i=$((i + 1))
done

# every ELF file's shared libraries (and the loader), at the host's paths: ldd
# for the host's architecture; for the other one (a cross-built arm64 collector)
# the DT_NEEDED closure, found in Debian's multiarch directories (make deps-cross)
foreign_libs() { # MULTIARCH-TRIPLET FILE...
	local dirs=("/lib/$1" "/usr/lib/$1") todo=("${@:2}") seen=" " f lib d
	while [ ${#todo[@]} -gt 0 ]; do
		f=${todo[0]} todo=("${todo[@]:1}")
		readelf -lW "$f" 2> /dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p'
		for lib in $(readelf -dW "$f" 2> /dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			case $seen in *" $lib "*) continue ;; esac
			seen="$seen$lib "
			for d in "${dirs[@]}"; do
				[ -e "$d/$lib" ] || continue
				echo "$d/$lib"
				todo+=("$d/$lib")
				break
			done
		done
	done
}
find "$ROOT/ctxprof" "$ROOT/payload" -type f -print0 | while IFS= read -r -d '' f; do
	[ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
	case $GARCH:$(od -An -tu2 -j18 -N2 "$f" | tr -d ' ') in
	arm64:183 | amd64:62)
		[ "$GARCH" = "$(dpkg --print-architecture)" ] || {
			foreign_libs "$([ "$GARCH" = arm64 ] && echo aarch64-linux-gnu || echo x86_64-linux-gnu)" "$f"
			continue
		}
		;;
	esac
	ldd "$f" 2> /dev/null | sed -n -e 's/.*=> \(\/[^ ]*\) (.*/\1/p' -e 's/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p'
done | sort -u | while read -r lib; do
	mkdir -p "$ROOT$(dirname "$lib")"
	cp -L "$lib" "$ROOT$lib"
done

cat > "$ROOT/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/ctxprof:/bin:/sbin HOME=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug
[ -d /sys/kernel/tracing ] && mount -t tracefs tracefs /sys/kernel/tracing
mount -t bpf bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup
echo 1 > /proc/sys/kernel/printk
ip link set lo up 2> /dev/null
xfer=$(cat /guest/xfer)
stty -F "$xfer" raw -echo 2> /dev/null
echo "CTXPROF-GUEST-UP $(uname -r) $(cut -d' ' -f1 /proc/uptime)s"
cd /payload
# the script's output to the console as it runs and to a file for the host
set --
for a in /guest/args/*; do
	[ -f "$a" ] && set -- "$@" "$(cat "$a")"
done
{ sh /guest/script "$@"; echo $? > /guest/rc; } 2>&1 | tee /guest/output
rc=$(cat /guest/rc 2> /dev/null || echo 125)
{
	echo CTXPROF-XFER-BEGIN
	tar -c -C / guest/output out | base64
	echo "CTXPROF-XFER-END $rc"
} > "$xfer"
sync
poweroff -f
EOF
chmod 755 "$ROOT/init"

# --- qemu
case $GARCH in
amd64)
	QEMU=qemu-system-x86_64 CONSOLE=ttyS0 XFER=/dev/ttyS1 MACHINE=(-M pc)
	;;
arm64)
	# virt has one PL011: the files come over the console, between their markers
	QEMU=qemu-system-aarch64 CONSOLE=ttyAMA0 XFER=/dev/ttyAMA0 MACHINE=(-M virt)
	[ "$ACCEL" = kvm ] || CPU_TCG=cortex-a72
	;;
esac
echo "$XFER" > "$ROOT/guest/xfer"
command -v $QEMU > /dev/null || { echo "guest.sh: $QEMU is missing: run make deps" >&2; exit 2; }
(cd "$ROOT" && find . | cpio -o -H newc --quiet) > "$WORK/initrd"

# KVM when /dev/kvm opens, creates a VM, and the CPU shows its virtualisation
# extension: a nested guest without vmx/svm (this Firecracker VM's /dev/kvm) creates
# VMs whose kernel then hangs in its decompressor
kvm_usable() {
	[ "$GARCH" = "$(dpkg --print-architecture)" ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] &&
		grep -qwE 'vmx|svm' /proc/cpuinfo &&
		python3 -c 'import os, fcntl; fcntl.ioctl(os.open("/dev/kvm", os.O_RDWR), 0xAE01, 0)' \
			2> /dev/null # KVM_CREATE_VM
}
if [ -z "$ACCEL" ]; then
	if kvm_usable; then ACCEL=kvm; else ACCEL=tcg; fi
fi
case $ACCEL in
kvm) CPU=host ;;
tcg) CPU=${CPU_TCG:-max} ;;
*) echo "guest.sh: unknown accelerator '$ACCEL' (kvm or tcg)" >&2; exit 2 ;;
esac

: > "$OUTDIR/console.log"
: > "$WORK/xfer"
serials=(-serial "file:$OUTDIR/console.log")
[ "$XFER" = "/dev/$CONSOLE" ] || serials+=(-serial "file:$WORK/xfer")
start=$(date +%s.%N)
echo "guest: $SUITE $GARCH $(cat "$KDIR/version"), $ACCEL, $(du -m "$WORK/initrd" | cut -f1) MiB initramfs" >&2
if [ $VERBOSE = 1 ]; then
	tail -f "$OUTDIR/console.log" >&2 &
	TAILPID=$!
fi
set +e
timeout -k 5 "$TIMEOUT" $QEMU "${MACHINE[@]}" -accel "$ACCEL" -cpu $CPU -smp "$CPUS" -m "$MEM" \
	-nodefaults -display none -monitor none -no-reboot "${serials[@]}" \
	-kernel "$KDIR/vmlinuz" -initrd "$WORK/initrd" \
	-append "console=$CONSOLE panic=-1 quiet loglevel=4 rdinit=/init" > "$WORK/qemu.log" 2>&1
qrc=$?
set -e
[ $VERBOSE = 0 ] || kill "$TAILPID" 2> /dev/null || true
secs=$(echo "$(date +%s.%N) $start" | awk '{ printf "%.1f", $1 - $2 }')
[ "$XFER" != "/dev/$CONSOLE" ] || cp "$OUTDIR/console.log" "$WORK/xfer"

end=$(tr -d '\r' < "$WORK/xfer" | sed -n 's/^CTXPROF-XFER-END \([0-9]*\)$/\1/p' | tail -1)
if [ -z "$end" ]; then
	if [ $qrc = 124 ]; then
		echo "guest: no answer in ${TIMEOUT}s ($SUITE $GARCH, $ACCEL); the console's tail:" >&2
	else
		echo "guest: qemu exited ($qrc) without the script's result after ${secs}s; the console's tail:" >&2
	fi
	tail -30 "$OUTDIR/console.log" | tr -d '\r' >&2
	tail -5 "$WORK/qemu.log" >&2
	[ $qrc = 124 ] && exit 124
	exit 125
fi
mkdir "$WORK/back"
tr -d '\r' < "$WORK/xfer" | sed -n '/^CTXPROF-XFER-BEGIN$/,/^CTXPROF-XFER-END /p' | sed -e '1d' -e '$d' |
	base64 -d | tar -x -C "$WORK/back" --no-same-owner
cp -r "$WORK/back/out/." "$OUTDIR/"
cat "$WORK/back/guest/output"
echo "guest: $SUITE $GARCH $ACCEL: exit $end after ${secs}s" >&2
exit "$end"
