#!/usr/bin/env bash
# Build the collector image with podman, offline: no registry is needed.
#   deploy/image.sh            (what `make image` runs; root)
# The Dockerfile's base (debian:12) is replaced by localhost/ctxprof-base:bookworm,
# made once with debootstrap from this machine's Debian mirror and imported
# with `podman import`; its root file system is cached as
# $OUTPUT/image/base-bookworm.tar.  The image is tagged localhost/ctxprof:dev and
# localhost/ctxprof:<hash of its sources>, and built again only when a source
# changes (podman's layer cache keeps the build stage's packages meanwhile).
# Prints the image's reference on the last line.
set -euo pipefail
cd "$(dirname "$0")/.."
OUTPUT=${OUTPUT:-build}
DIR=$OUTPUT/image
SUITE=bookworm
BASE=localhost/ctxprof-base:$SUITE
NAME=${IMAGE_NAME:-localhost/ctxprof}
PODMAN=(podman)
mkdir -p "$DIR"
log() { printf '  %-9s %s\n' IMAGE "$*" >&2; }

# the mirrors this machine's apt uses, else Debian's
mirror() {
	local m
	m=$(sed -n "s|^URIs: *\(http[^ ]*$1\)/*$|\1|p" /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
	[ -n "$m" ] || m=$(awk -v s="$1" '$1 == "deb" && $2 ~ s"/?$" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
	echo "${m:-http://deb.debian.org$1}"
}

make_base() {
	local root=$DIR/base-root tar=$DIR/base-$SUITE.tar main security f
	if "${PODMAN[@]}" image exists "$BASE"; then return; fi
	if [ ! -s "$tar" ]; then
		main=$(mirror /debian)
		security=$(mirror /debian-security)
		log "debootstrap $SUITE from $main (a few minutes, once)"
		rm -rf "$root"
		debootstrap --variant=minbase "$SUITE" "$root" "$main" > "$DIR/debootstrap.log" 2>&1 ||
			{ tail -20 "$DIR/debootstrap.log" >&2; exit 1; }
		cat > "$root/etc/apt/sources.list" <<-EOF
			deb $main $SUITE main
			deb $main $SUITE-updates main
			deb $security $SUITE-security main
		EOF
		# apt inside the image behaves like this machine's (Acquire:: settings)
		for f in /etc/apt/apt.conf.d/*; do
			grep -q '^Acquire::' "$f" 2>/dev/null && cp "$f" "$root/etc/apt/apt.conf.d/"
		done
		rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
		tar -C "$root" -cf "$tar.tmp" . && mv "$tar.tmp" "$tar"
		rm -rf "$root"
	fi
	log "podman import $tar as $BASE"
	"${PODMAN[@]}" import "$tar" "$BASE" > /dev/null
}

# the hash of everything the build reads (.dockerignore's list, the Dockerfile)
sources_hash() {
	find Makefile .dockerignore deploy/Dockerfile bpf include user vmlinux \
		lib/ctxprof/ctxprof.mk bench/bench.mk deploy/deploy.mk -type f -print0 | sort -z |
		xargs -0 sha256sum | sha256sum | cut -c1-16
}

for tool in podman runc debootstrap; do
	command -v "$tool" > /dev/null || { echo "deploy/image.sh: $tool is missing: make deps" >&2; exit 1; }
done
hash=$(sources_hash)
if ! "${PODMAN[@]}" image exists "$NAME:$hash"; then
	make_base
	log "podman build -f deploy/Dockerfile -t $NAME:$hash"
	"${PODMAN[@]}" build --runtime runc --network host --build-arg "BASE=$BASE" \
		-f deploy/Dockerfile -t "$NAME:$hash" -t "$NAME:dev" . > "$DIR/build.log" 2>&1 ||
		{ tail -30 "$DIR/build.log" >&2; exit 1; }
fi
"${PODMAN[@]}" tag "$NAME:$hash" "$NAME:dev"
echo "$NAME:$hash" > "$DIR/image-ref"
echo "$NAME:$hash"
