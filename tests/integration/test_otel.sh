#!/usr/bin/env bash
# OpenTelemetry process context (OTEP 4719) and thread context (OTEP 4947)
# end to end: otel_service, a fake service publishing both with our own
# publisher written from the OTEP texts, is profiled with the real BPF
# sampler, and the reference pprof tool checks (tests/integration/otel_check.sh)
#  - >= 95 % of the samples labeled with a span have that span's handler on
#    the stack, its trace_id, http.route and http.method;
#  - samples between spans carry no span label;
#  - service.name=otel-shop is on >= 95 % of the process's samples;
# for otel_thread_ctx_v1 in the executable's TLS (local-exec) and in a
# -mtls-dialect=gnu2 shared library (TLSDESC), in --pid mode with a key
# added to the key map while profiled, for a process started after the
# collector under --children, and under --all; and with --off-cpu, the
# waits a request makes in its span (--wait-ms) carry the same labels.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/otel_check.sh"
need_root
for w in otel_service otel_service_lib; do
	[ -x "$WORKLOADS/$w" ] || { echo "FAIL: $WORKLOADS/$w not built"; exit 1; }
done

profile() { # name, collector options...
	"$COLLECTOR" --frequency 999 --no-status "${@:2}" -o "$TMP/$1.pb.gz" 2>"$TMP/$1.log"
	local rc=$?
	grep -E '^ctxprof: (samples|OpenTelemetry)' "$TMP/$1.log"
	[ $rc -eq 0 ] || fail "$1: collector exited $rc"
	"$PPROF" -traces "$TMP/$1.pb.gz" > "$TMP/$1.traces" 2>/dev/null || fail "$1: pprof -traces failed"
}

# 1. TLS in the executable; the key map grows after 1.5 s (re-read on change)
start_bg "$WORKLOADS/otel_service" --threads 4 --late-key 1.5
wl=$!
sleep 0.5
profile exe --pid "$wl" --duration 5
kill "$wl"
otel_check "$TMP/exe.traces" "executable TLS" late-key
check_reconciled "$TMP/exe.log" "$TMP/exe.pb.gz"
grep -q 'thread context located in 1 ' "$TMP/exe.log" && ok "exe: thread context located" ||
	fail "exe: thread context not located"

# 2. TLS in a shared library, TLSDESC (-mtls-dialect=gnu2), loaded at start
start_bg "$WORKLOADS/otel_service_lib" --threads 4
wl=$!
sleep 0.5
profile lib --pid "$wl" --duration 5
kill "$wl"
otel_check "$TMP/lib.traces" "library TLS (TLSDESC)"
check_reconciled "$TMP/lib.log" "$TMP/lib.pb.gz"

# 3. --children: the service starts after the collector (and publishes then)
start_bg sh -c "sleep 1.5; exec $WORKLOADS/otel_service_lib --threads 2 --seconds 5"
parent=$!
profile children --pid "$parent" --children --duration 6
otel_check "$TMP/children.traces" "--children, published after the start" "" starts-unlabeled

# 4. --all: every process; the service's samples found by their pid label
start_bg "$WORKLOADS/otel_service" --threads 2 --seconds 8
wl=$!
sleep 1
profile all --all --duration 5
"$PPROF" -traces -tagfocus="pid=$wl" "$TMP/all.pb.gz" > "$TMP/all_svc.traces" 2>/dev/null
otel_check "$TMP/all_svc.traces" "--all"
"$PPROF" -traces -tagignore='service.name=otel-shop' "$TMP/all.pb.gz" 2>/dev/null |
	grep -q -E '^ *(trace_id|http.route):' && fail "--all: another process carries OTel labels" ||
	ok "--all: no other process carries OpenTelemetry labels"

# 5. --no-context reads none of it
start_bg "$WORKLOADS/otel_service" --threads 2 --seconds 3
wl=$!
sleep 0.3
profile off --pid "$wl" --duration 2 --no-context
grep -q -E '^ *(service.name|trace_id):' "$TMP/off.traces" && fail "--no-context: OTel labels" ||
	ok "--no-context: no OpenTelemetry label"
# 6. --off-cpu: a wait in a span carries the thread's OpenTelemetry context
# as it blocked (ids and attributes), like the span's CPU samples
start_bg "$WORKLOADS/otel_service" --threads 2 --seconds 8 --wait-ms 3
wl=$!
sleep 0.5
profile waits --pid "$wl" --duration 3 --off-cpu
"$PPROF" -traces -sample_index=off_cpu "$TMP/waits.pb.gz" >"$TMP/waits_off.traces" 2>/dev/null ||
	fail "waits: pprof -traces -sample_index=off_cpu failed"
read -r w_ok w_bad w_other <<<"$(awk '
	function us(w) { if (w ~ /ms$/) return w * 1000; if (w ~ /us$/) return w + 0; if (w ~ /s$/) return w * 1e6; return w + 0 }
	function flush(   kind) {
		if (!n) return
		if (index(funcs, " request_wait ")) {
			kind = substr(lab["span_id"], 15, 2)
			if (lab["span_id"] != "" && lab["trace_id"] == lab["span_id"] lab["span_id"] &&
			    lab["http.route"] == (kind == "01" ? "/checkout" : kind == "02" ? "/search" : "/login") &&
			    lab["service.name"] == "otel-shop" && lab["off_cpu_class"] == "sleep")
				ok += wt
			else
				bad += wt
		} else {
			other += wt
		}
		n = 0; funcs = " "; for (k in lab) delete lab[k]
	}
	BEGIN { funcs = " " }
	/^-+[+]-+$/ { flush(); next }
	/^ *[a-z_.]+:  / && !n { k = $1; sub(/:$/, "", k); lab[k] = $2; next }
	/^ +[0-9.]+[mun]?s +/ { n = 1; wt = us($1); funcs = funcs $NF " "; next }
	n && NF { funcs = funcs $NF " " }
	END { flush(); printf "%d %d %d\n", ok / 1000, bad / 1000, other / 1000 }' "$TMP/waits_off.traces")"
if [ "${w_ok:-0}" -gt 0 ] && [ $((w_ok * 100)) -ge $(((w_ok + w_bad) * 95)) ]; then
	ok "--off-cpu: $w_ok of $((w_ok + w_bad)) ms waited in request_wait carry the span's trace_id, http.route, service.name"
else
	fail "--off-cpu: only ${w_ok:-0} of $((${w_ok:-0} + ${w_bad:-0})) ms waited in request_wait carry the span's OpenTelemetry labels"
fi
finish
