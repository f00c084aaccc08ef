# shellcheck shell=bash
# Helpers for the integration tests: sourced, not run.
# Tests print "SKIP <reason>" and exit 77 when they cannot run here.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUTPUT=${OUTPUT:-build}
case $OUTPUT in /*) ;; *) OUTPUT=$ROOT/$OUTPUT ;; esac
COLLECTOR=$ROOT/collector
PPROF=${PPROF:-$OUTPUT/pprof}
WORKLOADS=$OUTPUT/workloads
TMP=$(mktemp -d /tmp/ctxprof-test.XXXXXX)
PIDS=()
failures=0

cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	# CTXPROF_KEEP_TMP=1: a failed run's files stay, for a look
	if [ "${CTXPROF_KEEP_TMP:-0}" = 1 ] && [ "$failures" -gt 0 ]; then
		echo "kept $TMP"
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT

skip() { echo "SKIP $*"; exit 77; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
finish() { [ "$failures" -eq 0 ] && { echo "all checks passed"; exit 0; }; echo "$failures check(s) failed"; exit 1; }

need_root() {
	[ "$(id -u)" = 0 ] || skip "needs root to load BPF programs"
	[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF"
	[ -x "$COLLECTOR" ] || { echo "FAIL: $COLLECTOR not built"; exit 1; }
	[ -x "$PPROF" ] || { echo "FAIL: reference pprof tool $PPROF not built"; exit 1; }
}

start_bg() { "$@" & PIDS+=($!); }

# the first TCP port from $1 on (200 tried) that nothing listens on
free_port() {
	local p
	for p in $(seq "$1" $(($1 + 200))); do
		ss -Htln "sport = :$p" | grep -q . || { echo "$p"; return; }
	done
}

# "samples: X taken, Y in profile, Z dropped" from a collector log
summary_field() {
	sed -n 's/^ctxprof: samples: \([0-9]*\) taken, \([0-9]*\) in profile, \([0-9]*\) dropped$/\1 \2 \3/p' "$1"
}

# total of a sample index as pprof -top prints it ("... of N total")
pprof_total() {
	"$PPROF" -top -sample_index="$2" "$1" 2>/dev/null |
		sed -n 's/.* of \([0-9.]*[a-z]*\) total.*/\1/p' | head -1
}

# flat percentage of a function in pprof -top, 0 when absent
flat_pct() {
	"$PPROF" -top -nodecount=100 "$1" 2>/dev/null |
		awk -v fn="$2" '$NF == fn { sub("%", "", $2); print $2; found = 1 } END { if (!found) print 0 }'
}

# the drop accounting check shared by tests
check_reconciled() {
	local log=$1 pb=$2 taken in_profile dropped total
	read -r taken in_profile dropped <<<"$(summary_field "$log")"
	if [ -z "${taken:-}" ]; then fail "no summary line in $log"; return; fi
	total=$(pprof_total "$pb" samples)
	[ "$total" = "$in_profile" ] || fail "pprof counts $total samples, collector says $in_profile"
	if [ "$taken" -eq $((in_profile + dropped)) ]; then
		ok "samples reconcile: $taken taken = $in_profile in profile + $dropped dropped"
	else
		fail "samples do not reconcile: $taken taken != $in_profile in profile + $dropped dropped"
	fi
}

# A memory cgroup of $1 MiB (v1's memory controller, else v2's) in CG, removed
# at exit; false when none can be made here.
memcg_make() {
	CG=
	if [ -d /sys/fs/cgroup/memory ] && [ -w /sys/fs/cgroup/memory ]; then
		CG=/sys/fs/cgroup/memory/ctxprof-test-$$
		mkdir "$CG" && echo $(($1 << 20)) >"$CG/memory.limit_in_bytes" || CG=
	elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		CG=/sys/fs/cgroup/ctxprof-test-$$
		mkdir "$CG" && echo $(($1 << 20)) >"$CG/memory.max" || CG=
	fi
	[ -n "$CG" ] || return 1
	trap 'cleanup; rmdir "$CG" 2>/dev/null' EXIT
}

# run "$@" inside the cgroup CG, in place of the caller (so that "memcg_exec
# CMD &" leaves CMD's pid in $!)
memcg_exec() {
	exec sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$CG" "$@"
}

# the cgroup's peak memory, MiB
cg_peak_mb() {
	local f
	for f in memory.max_usage_in_bytes memory.peak; do
		[ -r "$CG/$f" ] && { echo $(($(cat "$CG/$f") >> 20)); return; }
	done
	echo "?"
}

# OOM kills in the cgroup
cg_oom_kills() {
	if [ -r "$CG/memory.oom_control" ]; then
		sed -n 's/^oom_kill //p' "$CG/memory.oom_control"
	else
		sed -n 's/^oom_kill //p' "$CG/memory.events" 2>/dev/null
	fi
}

# go_build NAME SRC: NAME and NAME_stripped (-ldflags='-s -w') built from SRC,
# with the host's Go, or with the Go of a Debian root when GO_SUITE and GO_MINOR
# say which (tests/integration/test_go_versions.sh): the builds are cached inside
# the root and the programs run there.  Sets BIN (where the two are, as the
# program sees it) and INROOT (the command prefix that runs one there; empty on
# the host); skips when no Go is at hand.
go_build() {
	local name=$1 src=$2 R IN GO_IN
	INROOT=()
	if [ -n "${GO_SUITE:-}" ]; then
		GO_MINOR=${GO_MINOR:?GO_SUITE needs GO_MINOR, e.g. GO_SUITE=trixie GO_MINOR=24}
		R=$("$ROOT/tests/roots/mkroot.sh" "$GO_SUITE" "golang-1.$GO_MINOR-go" | tail -1) ||
			skip "no $GO_SUITE root with golang-1.$GO_MINOR-go"
		IN=/var/cache/ctxprof-go/1.$GO_MINOR/$name # the builds, inside the root
		INROOT=("$ROOT/tests/roots/run.sh" "$R")
		GO_IN=/usr/lib/go-1.$GO_MINOR/bin/go
		mkdir -p "$R$IN"
		if ! cmp -s "$src" "$R$IN/$name.go" || [ ! -x "$R$IN/${name}_stripped" ]; then
			cp "$src" "$R$IN/"
			rm -f "$R$IN/$name" "$R$IN/${name}_stripped"
			"${INROOT[@]}" sh -c "cd $IN && export GO111MODULE=off GOFLAGS= GOPROXY=off \
				GOPATH=$IN/gopath GOCACHE=$IN/gocache CGO_ENABLED=0 &&
				$GO_IN build -o $IN/$name $name.go &&
				$GO_IN build -ldflags='-s -w' -o $IN/${name}_stripped $name.go" ||
				{ echo "FAIL: go build in $R"; exit 1; }
		fi
		echo "built with $("${INROOT[@]}" "$GO_IN" version) in $R"
		BIN=$IN
	else
		command -v go >/dev/null || skip "go missing (make deps installs golang-go)"
		# offline, stdlib only; the build cache is the fixtures' (tests/unit/go_fixtures.mk)
		export GO111MODULE=off GOFLAGS= GOCACHE=$OUTPUT/gocache GOPATH=$TMP/gopath
		go build -o "$TMP/$name" "$src" || { echo "FAIL: go build"; exit 1; }
		go build -ldflags='-s -w' -o "$TMP/${name}_stripped" "$src" ||
			{ echo "FAIL: go build -ldflags='-s -w'"; exit 1; }
		echo "built with $(go version)"
		BIN=$TMP
	fi
}

# wait until file $1 has a line matching $2, for $3 s at most, while pid $4 lives
wait_for_line() {
	local _
	for _ in $(seq $(($3 * 10))); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$4" 2>/dev/null || { grep -q "$2" "$1" 2>/dev/null; return; }
		sleep 0.1
	done
	return 1
}
