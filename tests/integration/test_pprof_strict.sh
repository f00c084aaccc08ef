#!/usr/bin/env bash
# Strings that are not UTF-8 never reach a profile: a process named
# "bad\xff" (prctl), a thread "w\xc0\xaf" and a libctxprof tag whose key and
# value hold bad bytes (tests/workloads/bad_utf8.c), profiled with --pid and
# with --all, give files a strict protobuf parser reads (python3-protobuf's
# C++/upb backend refuses a proto3 string that is not UTF-8, as the Go and
# C++ libraries Pyroscope and Parca use do), with each bad byte shown as
# U+FFFD.  profile.proto is pprof's own (golang-github-google-pprof-dev),
# compiled by protoc at test time into $OUTPUT.
. "$(dirname "$0")/lib.sh"
need_root

PROTO=/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
PY=/usr/bin/python3 # Debian's, with python3-protobuf (not a pyenv shim)
[ -r "$PROTO" ] || skip "$PROTO missing (make deps installs golang-github-google-pprof-dev)"
command -v protoc >/dev/null || skip "protoc missing (make deps installs protobuf-compiler)"
"$PY" -c 'import google.protobuf' 2>/dev/null || skip "python3-protobuf missing (make deps)"
mkdir -p "$OUTPUT/proto"
protoc --python_out="$OUTPUT/proto" -I"$(dirname "$PROTO")" profile.proto ||
	fail "protoc could not compile $PROTO"

strict() { # what, file: decoded by the strict parser, labels in $TMP/labels
	"$PY" "$ROOT/tests/integration/pprof_strict.py" "$OUTPUT/proto" "$2" >"$TMP/labels"
	case $? in
	0) ok "$1: a strict protobuf parser reads it ($(head -1 "$TMP/labels" | cut -d: -f2))" ;;
	77) skip "$(cat "$TMP/labels")" ;;
	*) fail "$1: $(grep -m1 FAIL "$TMP/labels")" ;;
	esac
}

start_bg "$WORKLOADS/bad_utf8"
wl=$!
sleep 0.3
"$COLLECTOR" --no-status --pid "$wl" --duration 2 -o "$TMP/pid.pb.gz" 2>"$TMP/log" ||
	fail "collector --pid exited $?: $(cat "$TMP/log")"
strict "--pid" "$TMP/pid.pb.gz"
# the names, with U+FFFD (printed escaped) where each bad byte was
want=('thread_name=bad\ufffd' 'thread_name=w\ufffd\ufffd'
	'endpoint\ufffd=/bad\ufffd\ufffd\ufffdpath\ufffd\ufffd')
for w in "${want[@]}"; do
	grep -qxF "label $w" "$TMP/labels" && ok "label $w" ||
		fail "no label $w; labels: $(grep ^label "$TMP/labels" | tr '\n' ' ')"
done
check_reconciled "$TMP/log" "$TMP/pid.pb.gz"

# one such process must not make the node's profile unreadable
"$COLLECTOR" --no-status --all --duration 1.5 -o "$TMP/all.pb.gz" 2>"$TMP/log" ||
	fail "collector --all exited $?: $(cat "$TMP/log")"
strict "--all" "$TMP/all.pb.gz"
grep -qxF 'label comm=bad\ufffd' "$TMP/labels" && ok "--all: label comm=bad\\ufffd" ||
	fail "--all: no label comm=bad\\ufffd"
finish
