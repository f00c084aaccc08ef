#!/usr/bin/env bash
# A Debian suite's own kernel, downloaded once and reused:
#   tests/kernels/kernel.sh SUITE [ARCH]     (prints the kernel's directory last)
# SUITE is bullseye, bookworm, trixie or sid; ARCH amd64 (default) or arm64.
# The directory, $CTXPROF_KERNELS/SUITE-ARCH (default /opt/ctxprof-deps/kernels),
# holds vmlinuz, config (the kernel's build configuration) and version (the
# package's version, e.g. 6.1.176-1), and for a foreign architecture its
# busybox-static's busybox.  The package is the one the suite's
# linux-image-ARCH meta package points at, from the suite itself (not its
# -security or -updates: a fixed point release, so a run is comparable with the
# last).  apt runs with a configuration and state of its own under the cache, from
# the mirror this machine's apt uses: the host's apt lists are not touched.
# Only the image is kept, not its modules: the guests need none (serial console,
# BTF, perf events, tracefs and bpffs are built in on every Debian kernel).
# A flock per kernel serialises concurrent callers; a kernel whose fetch did not
# finish (no .complete marker) is fetched again.
set -euo pipefail
SUITE=${1:?usage: kernel.sh SUITE [ARCH]}
ARCH=${2:-amd64}
KERNELS=${CTXPROF_KERNELS:-/opt/ctxprof-deps/kernels}
DIR=$KERNELS/$SUITE-$ARCH
log() { printf '  %-9s %s\n' KERNEL "$*" >&2; }

case $SUITE in
bullseye | bookworm | trixie | sid) ;;
*) echo "kernel.sh: unknown suite '$SUITE' (bullseye, bookworm, trixie or sid)" >&2; exit 2 ;;
esac
case $ARCH in
amd64 | arm64) ;;
*) echo "kernel.sh: unknown architecture '$ARCH' (amd64 or arm64)" >&2; exit 2 ;;
esac

. "$(dirname "$0")/../roots/mirror.sh"

mkdir -p "$KERNELS"
exec 9> "$KERNELS/.$SUITE-$ARCH.lock"
flock 9

fetch() {
	local apt=$KERNELS/apt/$SUITE-$ARCH work=$DIR.tmp pkg deb
	log "$SUITE $ARCH: downloading the kernel package (once)"
	mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/etc/preferences.d"
	: > "$apt/status"
	echo "deb $(mirror /debian) $SUITE main" > "$apt/etc/sources.list"
	# sid's Release may read as expired on a snapshot mirror
	cat > "$apt/etc/apt.conf" <<-EOF
		Dir::Etc::SourceList "$apt/etc/sources.list";
		Dir::Etc::SourceParts "/dev/null";
		Dir::Etc::Preferences "/dev/null";
		Dir::Etc::PreferencesParts "$apt/etc/preferences.d";
		Dir::State "$apt";
		Dir::State::Lists "$apt/lists";
		Dir::State::status "$apt/status";
		Dir::Cache "$apt";
		Dir::Cache::Archives "$apt/archives";
		APT::Architecture "$ARCH";
		APT::Architectures { "$ARCH"; };
		Acquire::Check-Valid-Until "false";
		Acquire::Languages "none";
	EOF
	export APT_CONFIG=$apt/etc/apt.conf
	apt-get update -qq > "$apt/update.log" 2>&1 || { tail -20 "$apt/update.log" >&2; exit 1; }
	pkg=$(apt-cache depends "linux-image-$ARCH" | sed -n 's/^ *Depends: *\(linux-image-[0-9][^ ]*\)$/\1/p' | head -1)
	[ -n "$pkg" ] || { echo "kernel.sh: $SUITE has no linux-image-$ARCH dependency" >&2; exit 1; }
	rm -rf "$work" && mkdir -p "$work/deb"
	(cd "$work/deb" && apt-get download -qq "$pkg:$ARCH") > "$apt/download.log" 2>&1 ||
		{ tail -20 "$apt/download.log" >&2; exit 1; }
	deb=$(ls "$work"/deb/*.deb)
	dpkg-deb -f "$deb" Version > "$work/version"
	# sid (7.x) splits the image: vmlinuz and config in linux-binary-*, linux-base-*,
	# under /usr/lib/modules/VERSION/
	parts=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' |
		sed -n 's/^ *\(linux-\(binary\|base\)-[0-9][^ ]*\) .*/\1/p')
	for p in $parts; do
		(cd "$work/deb" && apt-get download -qq "$p:$ARCH") >> "$apt/download.log" 2>&1 ||
			{ tail -20 "$apt/download.log" >&2; exit 1; }
	done
	for d in "$work"/deb/*.deb; do
		dpkg-deb --fsys-tarfile "$d" | tar -x -C "$work/deb" --wildcards --no-wildcards-match-slash \
			'./boot/vmlinu*' './boot/config-*' './usr/lib/modules/*/vmlinuz' \
			'./usr/lib/modules/*/config' 2> /dev/null || true
	done
	img=$(find "$work/deb/boot" "$work/deb/usr" -type f -name 'vmlinu*' 2> /dev/null | head -1 || true)
	cfg=$(find "$work/deb/boot" "$work/deb/usr" -type f -name 'config*' 2> /dev/null | head -1 || true)
	[ -n "$img" ] && [ -n "$cfg" ] ||
		{ echo "kernel.sh: no vmlinuz or config in $pkg $parts" >&2; exit 1; }
	mv "$img" "$work/vmlinuz"
	mv "$cfg" "$work/config"
	# a foreign architecture's guest needs its own busybox (the host's serves its own)
	if [ "$ARCH" != "$(dpkg --print-architecture)" ]; then
		(cd "$work/deb" && apt-get download -qq "busybox-static:$ARCH") >> "$apt/download.log" 2>&1 ||
			{ tail -20 "$apt/download.log" >&2; exit 1; }
		# /bin (bookworm) or /usr/bin (trixie on, merged /usr)
		dpkg-deb --fsys-tarfile "$work"/deb/busybox-static_*.deb |
			tar -x -O --wildcards './bin/busybox' './usr/bin/busybox' > "$work/busybox" 2> /dev/null ||
			true
		[ -s "$work/busybox" ] || { echo "kernel.sh: no busybox in busybox-static:$ARCH" >&2; exit 1; }
		chmod 755 "$work/busybox"
	fi
	rm -rf "$work/deb"
	rm -rf "$DIR" && mv "$work" "$DIR"
	touch "$DIR/.complete"
	log "$SUITE $ARCH: $pkg $(cat "$DIR/version")"
}

[ -f "$DIR/.complete" ] || fetch
echo "$DIR"
