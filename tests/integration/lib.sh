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
	rm -rf "$TMP"
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
