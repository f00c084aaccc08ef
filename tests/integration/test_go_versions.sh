#!/usr/bin/env bash
# Go on the versions Debian ships besides bookworm's 1.19 (which test_go.sh,
# test_go_labels.sh and test_go_switch.sh check with the host's toolchain):
# each of GO_VERSIONS (SUITE:MINOR) gets that suite's root with
# golang-1.MINOR-go (tests/roots/mkroot.sh: debootstrap once, cached under
# /opt/ctxprof-deps/roots; SUITE-backports is SUITE's root with its backports
# enabled), and the three tests run against it: names, lines, inlined calls
# and whole stacks, plain and stripped (test_go.sh), the goroutine labels
# (test_go_labels.sh), and the samples taken on the system stack continued on
# the goroutine that switched (test_go_switch.sh).  The workloads are built in
# the root once per version and source (about 55 s a version after that;
# the first run makes the roots: bookworm's debootstrap and its three Go
# packages took 5.5 min here).
# make test's default: the ends of each layout range (the map of labels
# 1.21 and 1.23, the slice 1.24 to 1.27, gobuf without ret since 1.25);
# make test-go-versions adds 1.22.  Go 1.20 is in no Debian suite.
. "$(dirname "$0")/lib.sh"
need_root
command -v debootstrap >/dev/null || skip "debootstrap missing (make deps)"

GO_VERSIONS=${GO_VERSIONS:-bookworm-backports:21 bookworm-backports:23 trixie:24
	trixie-backports:25 sid:26 sid:27}
for v in $GO_VERSIONS; do
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
