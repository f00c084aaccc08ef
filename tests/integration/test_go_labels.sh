#!/usr/bin/env bash
# Go goroutine labels end to end: tests/workloads/go_labels (four goroutines
# burning CPU in pprof.Do spans whose span_id names the one function each
# runs in; a label set of nine, a value too long) is built here with the
# installed Go, offline, three ways (the Go linker alone; stripped, -s -w;
# cgo with TLS of its own, externally linked), profiled 3 s with the real
# BPF sampler, and checked by tests/integration/go_labels_check.py:
#  - >= 95 % of the samples labeled span_id X are in X's function, with
#    X's span_name and the set's other labels, every goroutine's seen;
#  - unlabeled samples in a span's function <= 5 %; none between spans
#    labeled; the too-long value never a label, counted as truncated;
# then under --all (a process started before the collector), and that
# --no-context reads none.
# GO_SUITE=S GO_MINOR=N (test_go_versions.sh's pairs): with that suite's
# golang-1.N-go instead, in its root (tests/roots/mkroot.sh), where the
# workload is built (cached there per version, rebuilt when its sources
# change) and runs; no cgo build there (the root has no C compiler).
. "$(dirname "$0")/lib.sh"
need_root

SRC=$ROOT/tests/workloads/go_labels
BUILDS="plain stripped cgo"
if [ -n "${GO_SUITE:-}" ]; then
	GO_MINOR=${GO_MINOR:?GO_SUITE needs GO_MINOR, e.g. GO_SUITE=trixie GO_MINOR=24}
	R=$("$ROOT/tests/roots/mkroot.sh" "$GO_SUITE" "golang-1.$GO_MINOR-go" | tail -1) ||
		skip "no $GO_SUITE root with golang-1.$GO_MINOR-go"
	IN=/var/cache/ctxprof-go/1.$GO_MINOR # the builds, inside the root
	INROOT=("$ROOT/tests/roots/run.sh" "$R")
	GO_IN=/usr/lib/go-1.$GO_MINOR/bin/go
	GO_TOOL="${INROOT[*]} $GO_IN"
	BIN=$IN BINROOT=$R BUILDS="plain stripped"
	mkdir -p "$R$IN/src"
	if ! cmp -s "$SRC/main.go" "$R$IN/src/main.go" || [ ! -x "$R$IN/golabels_stripped" ]; then
		cp "$SRC/main.go" "$R$IN/src/"
		rm -f "$R$IN"/golabels_*
		"${INROOT[@]}" sh -c "cd $IN/src && export GO111MODULE=off GOFLAGS= GOPROXY=off \
			GOPATH=$IN/gopath GOCACHE=$IN/gocache CGO_ENABLED=0 &&
			$GO_IN build -o $IN/golabels_plain . &&
			$GO_IN build -ldflags='-s -w' -o $IN/golabels_stripped ." ||
			{ echo "FAIL: go build in $R"; exit 1; }
	fi
	echo "built with $($GO_TOOL version) in $R"
	# the collector's table line for 1.N against this build's DWARF
	table_ok=1
	python3 - "$ROOT" "$R$IN/golabels_plain" "$GO_MINOR" <<'PY' || table_ok=0
import re, subprocess, sys
root, binary, minor = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, root + "/tests/unit")
from golabels_fixture_expect import struct_members
info = subprocess.run(["readelf", "--debug-dump=info", binary], check=True,
                      capture_output=True, text=True).stdout
g = struct_members(info, "runtime.g", ["m", "sched", "labels"])
m = struct_members(info, "runtime.m", ["curg", "vdsoSP", "vdsoPC"])
b = struct_members(info, "runtime.gobuf", ["sp", "pc", "bp"])
want = "{.minor = %s, .g_m = %d, .m_curg = %d, .g_labels = %d," % (minor, g["m"], m["curg"],
                                                                   g["labels"])
# the stack switch's offsets, on the same entry
want2 = (".g_sched = %d, .gobuf_sp = %d, .gobuf_pc = %d, .gobuf_bp = %d,\n\t "
         ".m_vdso_sp = %d, .m_vdso_pc = %d}") % (g["sched"], b["sp"], b["pc"], b["bp"],
                                                m["vdsoSP"], m["vdsoPC"])
src = open(root + "/user/appctx/go_binary.c").read()
print("go1.%s's DWARF: %s ... %s" % (minor, want, want2))
sys.exit(0 if re.search(re.escape(want) + r"[^}]*" + re.escape(want2), src) else 1)
PY
	[ $table_ok = 1 ] && ok "go_binary.c's table line for go1.$GO_MINOR is its DWARF's" ||
		fail "go_binary.c's table has no line for go1.$GO_MINOR as its DWARF says"
else
	command -v go >/dev/null || skip "no Go toolchain (golang-go)"
	GO_TOOL=go BIN=$TMP BINROOT= INROOT=()
	export GO111MODULE=off GOFLAGS= GOPATH=$TMP/gopath GOCACHE=$TMP/gocache GOPROXY=off
	mkdir -p "$TMP/src" && cp "$SRC"/*.go "$TMP/src/"
	build() { # name, go build options...
		(cd "$TMP/src" && go build "${@:2}" -o "$TMP/$1" .) ||
			{ echo "FAIL: go build $1"; exit 1; }
	}
	build golabels_plain
	build golabels_stripped -ldflags='-s -w'
	CGO_ENABLED=1 build golabels_cgo -tags cgo_tls
	echo "built with $(go env GOVERSION)"
fi
export GO_TOOL
# run NAME ARGS...: the workload in the background (in the root: run.sh execs it, same pid)
run() { start_bg "${INROOT[@]}" "$BIN/golabels_$1" "${@:2}"; }

profile() { # name, collector options...
	"$COLLECTOR" --frequency 999 --no-status -v "${@:2}" -o "$TMP/$1.pb.gz" 2>"$TMP/$1.log"
	local rc=$?
	grep -E '^ctxprof: (samples|Go goroutine|pid [0-9]+: Go)' "$TMP/$1.log"
	[ $rc -eq 0 ] || fail "$1: collector exited $rc"
}

# a goroutine counter from the summary: go_labels_ok=N ...
go_stat() { sed -n "s/.* $2=\([0-9]*\).*/\1/p" "$TMP/$1.log" | head -1; }

# check NAME BINARY MIN [PID]: the labels against what each goroutine ran, in
# at least MIN labeled samples (of PID's only when given)
check() {
	local ok bad unknown unlabeled between payload g0 g1 g2 g3 labeled
	read -r ok bad unknown unlabeled between payload g0 g1 g2 g3 <<<"$(python3 \
		"$ROOT/tests/integration/go_labels_check.py" "$PPROF" "$TMP/$1.pb.gz" "$2" ${4:-})"
	echo "$1: labeled right=$ok wrong=$bad unverifiable=$unknown; unlabeled in spans=$unlabeled;" \
		"labeled between spans=$between; payload=$payload; by goroutine $g0 $g1 $g2 $g3"
	labeled=$((ok + bad))
	if [ "${labeled:-0}" -ge "$3" ] && [ $((ok * 100)) -ge $((labeled * 95)) ]; then
		ok "$1: $ok of $labeled labeled samples carry the right span_id ($((ok * 100 / labeled)) %)"
	else
		fail "$1: $ok of ${labeled:-0} labeled samples carry the right span_id (want >= 95 % of >= $3)"
	fi
	[ $((unlabeled * 100)) -le $(((ok + unlabeled) * 5)) ] &&
		ok "$1: $unlabeled samples in spans unlabeled (<= 5 %)" ||
		fail "$1: $unlabeled samples in spans unlabeled (> 5 % of $((ok + unlabeled)))"
	[ "$between" -eq 0 ] && ok "$1: no sample between spans labeled" ||
		fail "$1: $between samples between spans labeled"
	[ "$payload" -eq 0 ] && ok "$1: the too-long value left out" ||
		fail "$1: $payload samples with the too-long value"
	[ "$g0" -ge 5 ] && [ "$g1" -ge 5 ] && [ "$g2" -ge 5 ] && [ "$g3" -ge 5 ] &&
		ok "$1: every goroutine's spans seen" ||
		fail "$1: a goroutine without samples labeled right ($g0 $g1 $g2 $g3)"
	[ "$(go_stat "$1" go_labels_truncated)" -gt 0 ] && ok "$1: truncated sets counted" ||
		fail "$1: no truncated set counted"
}

# the sampler's counters, of a run that profiled the workload alone
check_counts() {
	[ "$(go_stat "$1" go_labels_bad_map)" = 0 ] && [ "$(go_stat "$1" go_labels_read_error)" = 0 ] &&
		ok "$1: no map refused, nothing unreadable" ||
		fail "$1: maps refused or unreadable: $(grep '^ctxprof: Go goroutine' "$TMP/$1.log")"
}

# 1-3. --pid, each build
for b in $BUILDS; do
	run "$b" -seconds 15
	wl=$!
	sleep 0.5
	profile "$b" --pid "$wl" --duration 3
	kill "$wl" 2>/dev/null
	grep -q "^ctxprof: pid $wl: Go go1\.[0-9.]*, labels read" "$TMP/$b.log" ||
		fail "$b: not recognised as a Go program whose labels are read"
	check "$b" "$BIN/golabels_$b" 200
	check_counts "$b"
done
grep -q 'labels read (g at fsbase-8)' "$TMP/plain.log" || fail "plain: g not at fsbase-8"
if [ -z "$BINROOT" ]; then
	grep -q 'labels read (g at fsbase-8)' "$TMP/cgo.log" &&
		fail "cgo: g at fsbase-8: its own TLS should have moved it" ||
		ok "cgo: g found past the program's own TLS"
fi

# 4. --all: the program runs before the collector starts (whose start takes
# longer: every process's tables); its samples are found by their pid label
run plain -seconds 30
wl=$!
sleep 0.5
profile all --all --duration 3
kill "$wl" 2>/dev/null
check all "$BIN/golabels_plain" 50 "$wl"

# 5. --no-context reads none of it
run plain -seconds 15
wl=$!
sleep 0.3
profile off --pid "$wl" --duration 1 --no-context
kill "$wl" 2>/dev/null
"$PPROF" -raw "$TMP/off.pb.gz" 2>/dev/null | grep -q 'span_id:' && fail "--no-context: span_id labels" ||
	ok "--no-context: no goroutine label"
finish
