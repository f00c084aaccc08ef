#!/usr/bin/env bash
# The collector's own cost under --all on a busy node (issue 21's measure):
# 150 more processes (sleepers, each its own image), a CPU-bound program on
# each CPU (bench/fixed_work_nofp), and a shell loop starting /bin/true
# and sleep 0.05 (about 18 of each a second, more than the issue's 20); `--all --interval 20` at 99 Hz for NODE_SECONDS
# (default 60, at least 30), with and without --timelines, with --push (a
# series per service each interval, to the tests' Pyroscope receiver), next to the same
# collector on the machine with none of that load (its idle baseline), in
# one run.
# For each: the collector's CPU over the steady state (after its first 20 s:
# utime + stime of every thread, /proc/PID/stat) as % of one core, its peak
# and final RSS (VmHWM, VmRSS), and its samples taken and dropped.
# Run as root after make bench.
. "$(dirname "$0")/lib.sh"
SECS=${NODE_SECONDS:-60}
WARM=20
[ "$SECS" -ge 30 ] || { echo "node_cost: NODE_SECONDS must be at least 30"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "node_cost: needs root (BPF)"; exit 1; }
[ -x "$B/fixed_work_nofp" ] || { echo "node_cost: $B/fixed_work_nofp missing (make bench)"; exit 1; }
TMP=$(mktemp -d)
LOAD=()
stop_load() {
	for p in "${LOAD[@]}"; do kill "$p" 2>/dev/null || true; done
	LOAD=()
	wait 2>/dev/null || true
}
trap 'stop_load; rm -rf "$TMP"' EXIT
HZ=$(getconf CLK_TCK)
ticks() { awk '{ sub(/^[^)]*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }

start_load() {
	local i n
	n=$(nproc)
	for i in $(seq 150); do
		# each its own process image: a copy of sleep under another name
		cp /bin/sleep "$TMP/idle$i" 2>/dev/null || true
		"$TMP/idle$i" 100000 &
		LOAD+=($!)
	done
	for i in $(seq "$n"); do
		"$B/fixed_work_nofp" --threads 1 --iterations 100000000 --delay 0 --depth 20 >/dev/null &
		LOAD+=($!)
	done
	# a shell loop: /bin/true, then sleep 0.05: some 36 short-lived programs a second
	bash -c 'while :; do /bin/true; sleep 0.05; done' &
	LOAD+=($!)
}

# a store for --push: Pyroscope's ingest API (the tests' receiver), on loopback
PUSH_PORT=$(for p in $(seq 24600 24800); do ss -Htln "sport = :$p" | grep -q . || { echo $p; break; }; done)
start_store() {
	python3 "$ROOT/tests/integration/pyroscope_receiver.py" --port "$PUSH_PORT" \
		--store "$TMP/store" > "$TMP/store.log" 2>&1 &
	LOAD+=($!)
	sleep 0.5
}

# one run: NAME collector-options... -> "cpu% hwm_kib rss_kib taken dropped"
one() {
	local name=$1 col t0 t1
	shift
	"$ROOT/collector" --all --frequency 99 --interval 20 --output-dir "$TMP/$name" \
		--duration "$SECS" --no-status "$@" 2>"$TMP/$name.log" &
	col=$!
	mkdir -p "$TMP/$name"
	sleep "$WARM"
	t0=$(ticks $col)
	sleep $((SECS - WARM - 2))
	t1=$(ticks $col)
	hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$col/status")
	rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$col/status")
	wait $col || true
	read -r taken dropped <<<"$(sed -n 's/^ctxprof: samples: \([0-9]*\) taken, [0-9]* in profile, \([0-9]*\) dropped$/\1 \2/p' "$TMP/$name.log")"
	awk -v d=$((t1 - t0)) -v hz="$HZ" -v s=$((SECS - WARM - 2)) -v h="$hwm" -v r="$rss" \
		-v t="${taken:-?}" -v x="${dropped:-?}" \
		'BEGIN { printf "%.2f %d %d %s %s\n", 100 * d / hz / s, h, r, t, x }'
}

echo "node_cost: --all at 99 Hz, --interval 20, ${SECS} s a run (steady state from ${WARM} s)"
idle=$(one idle)
echo "  idle machine:                $idle"
start_load
sleep 2
echo "  load: $(ps -e --no-headers | wc -l) processes"
busy=$(one busy)
echo "  busy node:                   $busy"
busy_tl=$(one busy_tl --timelines)
echo "  busy node, --timelines:      $busy_tl"
start_store
busy_push=$(one busy_push --push "http://127.0.0.1:$PUSH_PORT")
echo "  busy node, --push:           $busy_push ($(ls "$TMP/store" | grep -c '\.json$') profiles stored)"
stop_load
row() { read -r c h r t x <<<"$2"; printf '| %s | %s %% | %d | %d | %s | %s |\n' "$1" "$c" $((h / 1024)) $((r / 1024)) "$t" "$x"; }
cat <<EOT

| --all, 99 Hz, 20 s intervals, ${SECS} s | collector CPU (steady, % of a core) | peak RSS (MiB) | RSS at the end (MiB) | samples taken | dropped |
|---|---|---|---|---|---|
$(row "idle machine (baseline)" "$idle")
$(row "busy node: +150 processes, a CPU-bound program per CPU, ~36 execs/s" "$busy")
$(row "the same, --timelines" "$busy_tl")
$(row "the same, --push to a Pyroscope receiver on loopback (files too)" "$busy_push")
EOT
