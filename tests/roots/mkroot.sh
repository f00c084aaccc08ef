#!/usr/bin/env bash
# A Debian suite's minimal root with the given packages, made once and reused:
#   tests/roots/mkroot.sh SUITE[-backports] [PKG...]  (root; prints its path last)
# The roots hold other Debian releases' runtimes (CPython, Go, JDKs, Node.js) for
# the runtime-version tests: a workload runs inside with chroot, on this kernel,
# and the host's collector profiles it by pid.  debootstrap --variant=minbase from
# the mirror this machine's apt uses, into $CTXPROF_ROOTS/SUITE (default
# /opt/ctxprof-deps/roots, shared by every clone, as make deps' other caches are);
# packages missing from the root are installed with the root's own apt.  A flock
# per root serialises concurrent callers; a root whose debootstrap did not finish
# (no .complete marker) is made again.  SUITE-backports is SUITE's root with
# that suite's backports added to its apt sources (the Go toolchains Debian
# ships only there: bookworm-backports' 1.21-1.23, trixie-backports' 1.25), so
# a backported package costs no second root; apt takes a package found only in
# backports from there, and everything else still from SUITE.
set -euo pipefail
SUITE=${1:?usage: mkroot.sh SUITE[-backports] [PKG...]}
shift
BACKPORTS=
case $SUITE in
*-backports) BACKPORTS=$SUITE SUITE=${SUITE%-backports} ;;
esac
ROOTS=${CTXPROF_ROOTS:-/opt/ctxprof-deps/roots}
ROOT=$ROOTS/$SUITE
log() { printf '  %-9s %s\n' ROOT "$*" >&2; }

case $SUITE in
bullseye | bookworm | trixie | sid) ;;
*) echo "mkroot.sh: unknown suite '$SUITE' (bullseye, bookworm, trixie or sid)" >&2; exit 2 ;;
esac
[ "$BACKPORTS" != sid-backports ] || { echo "mkroot.sh: sid has no backports" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "mkroot.sh: needs root (debootstrap, chroot)" >&2; exit 1; }
command -v debootstrap > /dev/null ||
	{ echo "mkroot.sh: debootstrap is missing: run make deps" >&2; exit 1; }

. "$(dirname "$0")/mirror.sh"

mkdir -p "$ROOTS"
exec 9> "$ROOTS/.$SUITE.lock"
flock 9

make_root() {
	local main f
	main=$(mirror /debian)
	log "debootstrap $SUITE from $main into $ROOT (a few minutes, once)"
	rm -rf "$ROOT"
	debootstrap --variant=minbase "$SUITE" "$ROOT" "$main" > "$ROOTS/$SUITE.debootstrap.log" 2>&1 ||
		{ tail -20 "$ROOTS/$SUITE.debootstrap.log" >&2; exit 1; }
	echo "deb $main $SUITE main" > "$ROOT/etc/apt/sources.list"
	# apt inside behaves like this machine's (its Acquire:: settings); sid's
	# Release file may read as expired on a snapshot mirror
	for f in /etc/apt/apt.conf.d/*; do
		grep -q '^Acquire::' "$f" 2>/dev/null && cp "$f" "$ROOT/etc/apt/apt.conf.d/"
	done
	echo 'Acquire::Check-Valid-Until "false";' > "$ROOT/etc/apt/apt.conf.d/99ctxprof-valid"
	touch "$ROOT/.complete"
}

[ -f "$ROOT/.complete" ] || make_root

# the backports line, once (a root made before it was asked for gets it now)
if [ -n "$BACKPORTS" ] && ! grep -q " $BACKPORTS " "$ROOT/etc/apt/sources.list"; then
	echo "deb $(mirror /debian) $BACKPORTS main" >> "$ROOT/etc/apt/sources.list"
fi

missing=()
for p in "$@"; do
	chroot "$ROOT" dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "$SUITE${BACKPORTS:+ (with $BACKPORTS)}: installing ${missing[*]}"
	# with /proc mounted (run.sh): a JRE's postinst runs java, which needs it;
	# dpkg --configure -a finishes a package an earlier install left unconfigured
	inroot=("$(dirname "$0")/run.sh" "$ROOT" env DEBIAN_FRONTEND=noninteractive)
	"${inroot[@]}" apt-get update -qq > /dev/null
	{ "${inroot[@]}" dpkg --configure -a &&
		"${inroot[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
		> "$ROOTS/$SUITE.apt.log" 2>&1 || { tail -20 "$ROOTS/$SUITE.apt.log" >&2; exit 1; }
	chroot "$ROOT" apt-get clean
fi
echo "$ROOT"
