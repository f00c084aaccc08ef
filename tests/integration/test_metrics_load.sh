#!/usr/bin/env bash
# /healthz and /metrics stay answerable (issue 17): while other processes
# hold 200 slow connections on each listener (loopback, the probes' own
# address, half a request each, a byte every 5 s, reopened when closed) and
# 100 silent ones (connected, nothing sent) for SLOW_SECONDS (60), and then
# while 50 clients hammer /metrics for
# FAST_SECONDS (15), curl probes /healthz on both listeners and /metrics
# every second: every probe must answer 200 within 1 s.  Evictions show in
# /metrics and the summary; the collector exits 0 with its profile whole.
. "$(dirname "$0")/lib.sh"
need_root
command -v python3 > /dev/null || skip "python3 is not installed"
command -v curl > /dev/null || skip "curl is not installed"
[ -x "$WORKLOADS/shares" ] || { echo "FAIL: $WORKLOADS/shares not built"; exit 1; }
SLOW=${SLOW_SECONDS:-60}
FAST=${FAST_SECONDS:-15}
LOAD="python3 $ROOT/tests/integration/http_load.py"

PORT=$(free_port $((21000 + $$ % 500)))
HPORT=$(free_port $((PORT + 1)))

start_bg "$WORKLOADS/shares" --seconds $((SLOW + FAST + 30))
wl=$!
"$COLLECTOR" --pid "$wl" --interval 5 --duration $((SLOW + FAST + 10)) --no-status \
	--metrics-addr "127.0.0.1:$PORT" --health-addr "127.0.0.1:$HPORT" \
	--output-dir "$TMP" 2> "$TMP/log" &
col=$!
PIDS+=($col)
for _ in $(seq 1 100); do
	[ "$(curl -s -m 1 "http://127.0.0.1:$HPORT/healthz")" = ok ] && break
	sleep 0.2
done
[ "$(curl -s -m 1 "http://127.0.0.1:$HPORT/healthz")" = ok ] ||
	{ cat "$TMP/log"; fail "the collector did not become healthy"; finish; }

# one probe of each, every second, for $1 seconds: "url code seconds" lines
probe() {
	local end=$((SECONDS + $1)) url
	while [ $SECONDS -lt $end ]; do
		for url in "http://127.0.0.1:$HPORT/healthz" "http://127.0.0.1:$PORT/healthz" \
			"http://127.0.0.1:$PORT/metrics"; do
			echo "$url $(curl -s -o /dev/null -m 5 -w '%{http_code} %{time_total}' "$url")"
		done
		sleep 1
	done
}

# every probe 200 within 1 s; $1 names the phase
check_probes() {
	local n bad
	n=$(wc -l < "$TMP/$1.probes")
	bad=$(awk '$2 != 200 || $3 >= 1.0' "$TMP/$1.probes")
	[ "$n" -ge 9 ] && [ -z "$bad" ] &&
		ok "$1: all $n probes answered 200 within 1 s (slowest $(sort -k3 -n "$TMP/$1.probes" | tail -1 | awk '{ print $3 }') s)" ||
		fail "$1: $(echo "$bad" | grep -c .) of $n probes failed or were slow: $(echo "$bad" | head -5 | tr '\n' ';')"
}

cpu_ticks() { awk '{ sub(/^[^)]*\) /, ""); print $12 + $13 }' /proc/"$col"/stat; }

# --- 200 slow and 100 silent connections on each listener, from the probes' own address
attackers=()
for p in "$PORT" "$HPORT"; do
	$LOAD slow 127.0.0.1 "$p" 200 "$SLOW" > "$TMP/slow_$p.out" 2>&1 &
	attackers+=($!)
	$LOAD silent 127.0.0.1 "$p" 100 "$SLOW" > "$TMP/silent_$p.out" 2>&1 &
	attackers+=($!)
done
PIDS+=("${attackers[@]}")
sleep 2
probe $((SLOW - 4)) > "$TMP/slow.probes"
wait "${attackers[@]}"
cat "$TMP"/slow_*.out "$TMP"/silent_*.out
check_probes slow
evicted=$(curl -s -m 2 "http://127.0.0.1:$PORT/metrics" |
	awk '/^ctxprof_http_connections_evicted_total/ { n += $2 } END { print n + 0 }')
[ "$evicted" -gt 0 ] && ok "/metrics counts the connections evicted: $evicted" ||
	fail "no eviction counted on /metrics"

# --- many fast clients on /metrics
t0=$(cpu_ticks)
$LOAD fast 127.0.0.1 "$PORT" 50 "$FAST" /metrics > "$TMP/fast.out" 2>&1 &
a=$!
PIDS+=($a)
sleep 1
probe $((FAST - 2)) > "$TMP/fast.probes"
wait $a
t1=$(cpu_ticks)
cat "$TMP/fast.out"
echo "collector CPU while 50 clients scraped: $(( (t1 - t0) * 1000 / $(getconf CLK_TCK) / FAST )) millicores"
check_probes fast
grep -q "^fast: [1-9][0-9]* requests answered" "$TMP/fast.out" && ok "the fast clients were answered" ||
	fail "the fast clients got nothing"

wait $col
rc=$?
grep -E "^ctxprof: (samples|metrics server|exports|degraded)" "$TMP/log"
[ $rc -eq 0 ] && ok "collector exited 0" || { tail -20 "$TMP/log"; fail "collector exited $rc"; }
grep -q "^ctxprof: metrics server: .* evicted" "$TMP/log" && ok "the summary says how many connections were evicted" ||
	fail "no metrics server line in the summary"
read -r taken in_profile dropped <<< "$(summary_field "$TMP/log")"
[ -n "${taken:-}" ] && [ "$taken" -gt 0 ] && [ "$taken" -eq $((in_profile + dropped)) ] &&
	ok "samples reconcile: $taken taken = $in_profile in files + $dropped dropped" ||
	fail "samples do not reconcile: ${taken:-?} taken, ${in_profile:-?} in files, ${dropped:-?} dropped"
finish
