#!/usr/bin/env bash
# Go on the versions Debian ships after bookworm's 1.19 (which test_go.sh and
# test_go_labels.sh check with the host's toolchain): each of GO_VERSIONS
# (SUITE:MINOR, default trixie:24 sid:26 sid:27) gets that suite's root with
# golang-1.MINOR-go (tests/roots/mkroot.sh: debootstrap once, cached under
# /opt/ctxprof-deps/roots), and both tests run against it: names, lines,
# inlined calls and whole stacks, plain and stripped (test_go.sh), the
# goroutine labels (test_go_labels.sh), and the samples taken on the system
# stack continued on the goroutine that switched (test_go_switch.sh).  The
# workloads are built in the root once per version and source (about 90 s a
# version after that).
. "$(dirname "$0")/lib.sh"
need_root
command -v debootstrap >/dev/null || skip "debootstrap missing (make deps)"

for v in ${GO_VERSIONS:-trixie:24 sid:26 sid:27}; do
	for t in test_go.sh test_go_labels.sh test_go_switch.sh; do
		echo "== Go 1.${v#*:} ($v): $t"
		GO_SUITE=${v%%:*} GO_MINOR=${v#*:} bash "$ROOT/tests/integration/$t" |
			sed "s/^/   /"
		rc=${PIPESTATUS[0]}
		case $rc in
		0) ok "Go 1.${v#*:}: $t" ;;
		77) echo "skipped: Go 1.${v#*:}: $t (its root could not be made)" ;;
		*) fail "Go 1.${v#*:}: $t failed (exit $rc)" ;;
		esac
	done
done
finish
