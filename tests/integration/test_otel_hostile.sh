#!/usr/bin/env bash
# Hostile OpenTelemetry contexts (tests/workloads/otel/otel_hostile.c): each
# way of breaking the process or thread context is profiled; the collector
# must exit 0, count what it refused under its name, and write no wrong
# label: the expected labels only (the record's ids when they were read,
# http.route when its entry was whole), never an attribute from a broken
# entry or a label from a record that was not valid.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$WORKLOADS/otel_hostile" ] || { echo "FAIL: $WORKLOADS/otel_hostile not built"; exit 1; }

# mode, counter that must be > 0 ("name=" in the summary), labels that must
# appear (comma-separated), labels that must not
check_mode() {
	local mode=$1 counter=$2 want=$3 never=$4 wl rc n l
	start_bg "$WORKLOADS/otel_hostile" --mode "$mode" --seconds 5
	wl=$!
	sleep 0.5
	"$COLLECTOR" --pid "$wl" --duration 3 --frequency 499 --no-status -o "$TMP/$mode.pb.gz" \
		2>"$TMP/$mode.log"
	rc=$?
	kill "$wl" 2>/dev/null
	[ $rc -eq 0 ] || { fail "$mode: collector exited $rc"; return; }
	# "name=N" (the sampler's counters) or "N name" (the collector's)
	n=$( { grep -o -E "$counter=[0-9]+" "$TMP/$mode.log" | grep -o -E '[0-9]+$'
		grep -o -E "[0-9]+ $counter" "$TMP/$mode.log" | grep -o -E '^[0-9]+'; } | head -1)
	if [ "${n:-0}" -gt 0 ]; then
		ok "$mode: counted ($counter $n)"
	else
		fail "$mode: '$counter' not counted: $(grep OpenTelemetry "$TMP/$mode.log")"
	fi
	"$PPROF" -tags "$TMP/$mode.pb.gz" > "$TMP/$mode.tags" 2>/dev/null
	for l in ${want//,/ }; do
		grep -q "^ $l: " "$TMP/$mode.tags" && ok "$mode: label $l present" ||
			fail "$mode: label $l missing"
	done
	for l in ${never//,/ }; do
		grep -q "^ $l: " "$TMP/$mode.tags" && fail "$mode: label $l present: $(grep -A2 "^ $l: " "$TMP/$mode.tags")" ||
			ok "$mode: no $l label"
	done
	check_reconciled "$TMP/$mode.log" "$TMP/$mode.pb.gz"
}

check_mode invalid otel_invalid service.name trace_id,span_id,http.route
check_mode attrs-past otel_attrs_unreadable service.name,trace_id,span_id http.route
check_mode attrs-absurd otel_attrs_too_big service.name,trace_id,span_id http.route
check_mode unmapped otel_read_error service.name trace_id,span_id,http.route
check_mode unknown-key "unknown keys" trace_id,http.route http.method
grep -q -E '[^0-9][1-9][0-9]* key map refreshes' "$TMP/unknown-key.log" &&
	ok "unknown-key: the key map was read again" || fail "unknown-key: no key map refresh"
check_mode truncated "truncated records" trace_id,http.route http.method
check_mode not-protobuf "bad payloads" "" service.name,trace_id,span_id,http.route
check_mode updating "found mid-update" "" service.name,trace_id,span_id,http.route
# the ids read are the record's
grep -q "deadbeef0102030405060708090a0b0c" "$TMP/attrs-absurd.tags" &&
	ok "attrs-absurd: trace_id is the record's" || fail "attrs-absurd: wrong trace_id"
finish
