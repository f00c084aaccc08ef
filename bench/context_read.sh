#!/usr/bin/env bash
# BPF run time per sample of the trace-context reads, in one run: the
# OpenTelemetry thread context (otel_service: fsbase, the TLS pointer, the
# 28-byte record and its attributes), the libctxprof slot (requests: one
# 64-byte read and its checksum), Go goroutine labels (go_labels: g, m.curg,
# the label map's head, buckets and strings), each next to the same
# workload profiled with --no-context (no context read at all).  kernel.bpf_stats_enabled;
# medians of BENCH_REPS runs (default 3) of BENCH_SECONDS (default 5) at
# 999 Hz.  Run by bench/run.sh, or alone as root after make bench.
. "$(dirname "$0")/lib.sh"
W=$OUTPUT/workloads
REPS=${BENCH_REPS:-3}
SECS=${BENCH_SECONDS:-5}
[ "$(id -u)" = 0 ] || { echo "bench: needs root (BPF)"; exit 1; }
for b in "$B/progstat" "$W/otel_service" "$W/requests" "$B/go_labels"; do
	[ -x "$b" ] || { echo "bench: $b missing (make bench builds it)"; exit 1; }
done
mkdir -p "$B"
bpf_stats_on

one() { # workload command, collector options... -> ns per run
	"$B/progstat" > "$B/ids.before"
	$1 > /dev/null & local wl=$!
	sleep 0.5
	"$ROOT/collector" --pid $wl --frequency 999 --no-status --duration "$SECS" "${@:2}" \
		-o "$B/ctxread.pb.gz" 2> "$B/ctxread.log" & local c=$!
	sleep $((SECS - 1))
	per_run $(prog_stats "$B/ids.before")
	wait $c || true
	kill $wl 2> /dev/null || true
	wait $wl 2> /dev/null || true
}
declare -A V
OTEL="$W/otel_service --threads 2"
REQ="$W/requests --threads 2"
GO="$B/go_labels -seconds $((SECS + 5))"
# interleaved, each context read next to its no-read run, so that the
# machine's load drifting hits every variant alike; the cost is the median
# of the per-repetition differences
for _ in $(seq "$REPS"); do
	V[otel]+="$(one "$OTEL") "
	V[otel_none]+="$(one "$OTEL" --no-context) "
	V[slot]+="$(one "$REQ") "
	V[slot_none]+="$(one "$REQ" --no-context) "
	V[go]+="$(one "$GO") "
	V[go_none]+="$(one "$GO" --no-context) "
done
med() { printf '%s\n' $1 | median; }
diffs() { paste <(printf '%s\n' $1) <(printf '%s\n' $2) | awk '{ print $1 - $2 }' | median; }
cat <<EOT

| sampler run (999 Hz, $SECS s, $REPS interleaved runs each) | ns per sample, median (runs) | same workload, --no-context: no context read | context read costs (median of paired differences) |
|---|---|---|---|
| OpenTelemetry thread context (otel_service: TLS pointer, record, attributes) | $(med "${V[otel]}") (${V[otel]% }) | $(med "${V[otel_none]}") (${V[otel_none]% }) | $(diffs "${V[otel]}" "${V[otel_none]}") ns |
| libctxprof context slot (requests) | $(med "${V[slot]}") (${V[slot]% }) | $(med "${V[slot_none]}") (${V[slot_none]% }) | $(diffs "${V[slot]}" "${V[slot_none]}") ns |
| Go goroutine labels (go_labels: 2 to 9 labels, 1 or 2 buckets) | $(med "${V[go]}") (${V[go]% }) | $(med "${V[go_none]}") (${V[go_none]% }) | $(diffs "${V[go]}" "${V[go_none]}") ns |
EOT
