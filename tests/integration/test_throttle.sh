#!/usr/bin/env bash
# Kernel throttling: with kernel.perf_event_max_sample_rate lowered to 250
# (as another tool may do, or the kernel itself when perf interrupts take
# too long), -F 999 yields about 250 samples/s per CPU, and the collector
# must say so: a line at start (-F above the limit), a line once it measures
# it, the summary, and /metrics.  With the limit restored, a run says
# nothing of the kind and measures the requested rate.
. "$(dirname "$0")/lib.sh"
need_root

RATE=/proc/sys/kernel/perf_event_max_sample_rate
FREQ=999
LOW=250
[ -w "$RATE" ] || skip "$RATE is not writable here"
SAVED=$(cat "$RATE")
[ "$SAVED" -ge $FREQ ] || skip "perf_event_max_sample_rate is $SAVED already, below $FREQ"
trap 'echo "$SAVED" > "$RATE"; cleanup' EXIT

start_bg "$WORKLOADS/cpu_phases" > /dev/null
wl=$!

# run NAME: the collector on the workload for 7 s, /metrics fetched near the end
run() {
	local port col
	port=$(free_port $((19500 + $$ % 400)))
	"$COLLECTOR" --pid "$wl" -F $FREQ -d 7 --metrics-addr "127.0.0.1:$port" \
		-o "$TMP/$1.pb.gz" 2> "$TMP/$1.log" &
	col=$!
	sleep 6
	curl -s "http://127.0.0.1:$port/metrics" > "$TMP/$1.metrics"
	wait "$col" || fail "$1: collector exited $?"
	cat "$TMP/$1.log"
	grep '^ctxprof_\(sampling\|perf_event\|cpus\)' "$TMP/$1.metrics"
}

metric() { awk -v m="$2" '$1 == m { print $2 }' "$TMP/$1.metrics"; }

echo $LOW > "$RATE"
run throttled
echo "$SAVED" > "$RATE"
log=$TMP/throttled.log
grep -q "^ctxprof: -F $FREQ is above kernel.perf_event_max_sample_rate=$LOW: " "$log" &&
	ok "start: -F above the limit said" || fail "start: no line for -F above the limit"
hz=$(sed -n "s/^ctxprof: kernel throttles sampling: \([0-9]*\) Hz effective of $FREQ Hz requested; perf_event_max_sample_rate=$LOW\$/\1/p" "$log")
if [ -n "$hz" ] && [ "$hz" -lt $((FREQ * 9 / 10)) ]; then
	ok "said: kernel throttles sampling: $hz Hz effective"
else
	fail "no 'kernel throttles sampling' line below 90 % of $FREQ Hz"
fi
[ "$(grep -c "^ctxprof: kernel throttles sampling" "$log")" -eq 1 ] && ok "said once" ||
	fail "said $(grep -c "^ctxprof: kernel throttles sampling" "$log") times"
grep -q "^ctxprof: sampling rate: $FREQ Hz requested, [0-9]* Hz effective per CPU .*; perf_event_max_sample_rate=$LOW; throttled (below 90 %) for [1-9][0-9]* s, still at the end\$" "$log" &&
	ok "summary: throttled" || fail "summary: $(grep '^ctxprof: sampling rate' "$log")"
[ "$(metric throttled ctxprof_sampling_throttled)" = 1 ] && ok "/metrics: ctxprof_sampling_throttled 1" ||
	fail "/metrics: ctxprof_sampling_throttled is '$(metric throttled ctxprof_sampling_throttled)'"
[ "$(metric throttled ctxprof_perf_event_max_sample_rate)" = $LOW ] && ok "/metrics: max sample rate $LOW" ||
	fail "/metrics: ctxprof_perf_event_max_sample_rate is '$(metric throttled ctxprof_perf_event_max_sample_rate)'"
awk -v v="$(metric throttled ctxprof_sampling_effective_hz)" -v f=$FREQ 'BEGIN { exit !(v != "" && v < 0.9 * f) }' &&
	ok "/metrics: effective rate $(metric throttled ctxprof_sampling_effective_hz) Hz" ||
	fail "/metrics: ctxprof_sampling_effective_hz is '$(metric throttled ctxprof_sampling_effective_hz)'"

run normal
log=$TMP/normal.log
grep -q "above kernel.perf_event_max_sample_rate\|throttles sampling\|below the requested rate" "$log" &&
	fail "normal run: said throttled" || ok "normal run: no throttling said"
grep -q "^ctxprof: sampling rate: $FREQ Hz requested, [0-9]* Hz effective per CPU .*; perf_event_max_sample_rate=$SAVED; throttled (below 90 %) for 0 s\$" "$log" &&
	ok "normal summary: not throttled" || fail "normal summary: $(grep '^ctxprof: sampling rate' "$log")"
[ "$(metric normal ctxprof_sampling_throttled)" = 0 ] && ok "/metrics: ctxprof_sampling_throttled 0" ||
	fail "/metrics: ctxprof_sampling_throttled is '$(metric normal ctxprof_sampling_throttled)'"
awk -v v="$(metric normal ctxprof_sampling_effective_hz)" -v f=$FREQ 'BEGIN { exit !(v >= 0.9 * f && v <= 1.1 * f) }' &&
	ok "/metrics: effective rate $(metric normal ctxprof_sampling_effective_hz) Hz" ||
	fail "/metrics: ctxprof_sampling_effective_hz is '$(metric normal ctxprof_sampling_effective_hz)', not within 10 % of $FREQ"
finish
