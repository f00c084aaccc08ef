#!/usr/bin/env bash
# Profiles pulled from the node (issue 20): a running --all collector serves
# GET /debug/pprof/profile?seconds=N as Go's net/http/pprof does, what Parca,
# Alloy's pyroscope.scrape and the pprof tool fetch, while it goes on writing
# its interval files.
#  - the real pprof tool fetches 3 s from the URL: the shares workload's
#    leaves are 10/20/30/40 % of its samples;
#  - three scrapes at once, of 2, 3 and 4 s, each get every sample of their
#    own window: each holds the shares process's CPU time in that window at
#    -F (within 12 %), so their counts go 2:3:4;
#  - ?pid= keeps one process, ?service.name= (OpenTelemetry's resource) and
#    ?comm= the samples labelled so, and nothing else;
#  - a bad query is a 400 with a line, a method other than GET a 405, a
#    scraper past the ones taken at once a 503 with Retry-After, an answer
#    application/octet-stream (Alloy refuses others);
#  - a scrape under way when the collector stops is answered 503 at once,
#    and the collector exits 0 with its summary.
. "$(dirname "$0")/lib.sh"
need_root
command -v curl > /dev/null || skip "curl is not installed"
command -v python3 > /dev/null || skip "python3 is not installed"
for w in shares otel_service; do
	[ -x "$WORKLOADS/$w" ] || { echo "FAIL: $WORKLOADS/$w not built"; exit 1; }
done
HZ=99
PORT=$(free_port $((22000 + $$ % 500)))
URL="http://127.0.0.1:$PORT/debug/pprof/profile"

start_bg "$WORKLOADS/shares" --threads 1 --seconds 90
sh=$!
start_bg "$WORKLOADS/otel_service" --threads 1 --wait-ms 20 --seconds 90
os=$!
mkdir -p "$TMP/files"
"$COLLECTOR" --all -F $HZ --interval 4 --output-dir "$TMP/files" --no-status \
	--metrics-addr "127.0.0.1:$PORT" 2> "$TMP/log" &
col=$!
PIDS+=($col)
for _ in $(seq 1 150); do
	[ "$(curl -s -m 1 "http://127.0.0.1:$PORT/healthz")" = ok ] && break
	sleep 0.2
done
[ "$(curl -s -m 1 "http://127.0.0.1:$PORT/healthz")" = ok ] ||
	{ cat "$TMP/log"; fail "the collector did not become healthy"; finish; }
# the processes' mappings and tables, before the windows that count
sleep 2

# samples of pid $2 in profile $1 ("pprof -raw": a sample's count, then its labels)
samples_of() {
	"$PPROF" -raw "$1" 2>/dev/null | python3 -c '
import re, sys
pid, total, count = sys.argv[1], 0, None
for line in sys.stdin:
    m = re.match(r"^\s+(\d+)\s+\d+:", line)
    if m:
        count = int(m.group(1))
        continue
    if count is not None and re.search(r"\bpid:\[" + pid + r"\]", line):
        total += count
        count = None
print(total)' "$2"
}

# the distinct values of label $2 in profile $1, one per line
label_values() {
	"$PPROF" -raw "$1" 2>/dev/null | grep -o "$2:\[[^]]*\]" | sort -u | sed "s/^$2:\[//; s/\]$//"
}

# CPU seconds of pid $1 so far
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/^[^)]*\) /, ""); print ($12 + $13) / hz }' /proc/"$1"/stat; }

# --- the pprof tool itself fetches 3 s
if "$PPROF" -proto "$URL?seconds=3" > "$TMP/pprof.pb.gz" 2> "$TMP/pprof.err" &&
	[ -s "$TMP/pprof.pb.gz" ]; then
	ok "pprof fetched $URL?seconds=3 ($(stat -c %s "$TMP/pprof.pb.gz") bytes)"
else
	fail "pprof could not fetch $URL?seconds=3: $(tail -2 "$TMP/pprof.err")"
fi
dur=$("$PPROF" -raw "$TMP/pprof.pb.gz" 2>/dev/null | sed -n 's/^Duration: *\(.*\)/\1/p' | head -1)
[ "$dur" = "3s" ] && ok "the profile's duration is its window: $dur" ||
	fail "duration $dur, want 3s"
# the shares workload's leaves: counts of samples, 10/20/30/40 % of their sum
# within what sampling allows (3 binomial sigmas of their count, at least 4
# points): 3 s at 99 Hz is about 300 of them, and a busy machine breaks the
# timer's phase lock that usually makes the split far tighter
leaf_counts=$("$PPROF" -top -sample_index=samples -nodecount=100 "$TMP/pprof.pb.gz" 2>/dev/null |
	awk '{ n[$NF] = $1 } END { printf "%d %d %d %d", n["leaf_alpha"], n["leaf_beta"], n["leaf_gamma"], n["leaf_delta"] }')
# shellcheck disable=SC2086
python3 - $leaf_counts << 'EOF' && ok "the shares workload's leaves: $leaf_counts samples (10/20/30/40 of theirs)" || fail "leaf samples $leaf_counts are not 10/20/30/40 of their sum"
import math, sys
v = [int(x) for x in sys.argv[1:]]
n = sum(v)
want = [0.1, 0.2, 0.3, 0.4]
ok = n >= 50 and all(abs(x / n - w) <= max(0.04, 3 * math.sqrt(w * (1 - w) / n)) for x, w in zip(v, want))
print("leaf shares %s of %d samples" % (" ".join("%.1f%%" % (100 * x / max(n, 1)) for x in v), n))
sys.exit(0 if ok else 1)
EOF

# --- three at once, each its own window
c0=$(cpu_s "$sh")
scrapers=()
for s in 2 3 4; do
	curl -s -m 20 -D "$TMP/h$s" -o "$TMP/c$s.pb.gz" "$URL?seconds=$s&pid=$sh" &
	scrapers+=($!)
done
sleep 2.05
c2=$(cpu_s "$sh")
sleep 1
c3=$(cpu_s "$sh")
sleep 1
c4=$(cpu_s "$sh")
wait "${scrapers[@]}"
for s in 2 3 4; do
	grep -qi '^content-type: application/octet-stream' "$TMP/h$s" ||
		fail "the $s s scrape's answer is not application/octet-stream: $(head -1 "$TMP/h$s")"
	n=$(samples_of "$TMP/c$s.pb.gz" "$sh")
	cpu=$(eval echo "\$c$s")
	python3 - "$n" "$c0" "$cpu" "$HZ" << 'EOF' && ok "the $s s scrape: $n samples of shares for its $(python3 -c "print(round(($cpu - $c0), 2))") CPU s at $HZ Hz" || fail "the $s s scrape: $n samples, want the shares process's CPU time at $HZ Hz ($c0 -> $cpu s)"
import sys
n, c0, c1, hz = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
want = (c1 - c0) * hz
sys.exit(0 if want > 0 and abs(n - want) <= 0.12 * want + 3 else 1)
EOF
done
others=$(label_values "$TMP/c4.pb.gz" pid | grep -vx "$sh" | tr '\n' ' ')
[ -z "$others" ] && ok "?pid=$sh: no other process" || fail "?pid=$sh has pids $others"

# --- filters by label
curl -s -m 20 -o "$TMP/svc.pb.gz" "$URL?seconds=2&service.name=otel-shop" &
scrapers=($!)
curl -s -m 20 -o "$TMP/comm.pb.gz" "$URL?seconds=2&comm=shares" &
scrapers+=($!)
wait "${scrapers[@]}"
pids=$(label_values "$TMP/svc.pb.gz" pid | tr '\n' ' ')
[ "$pids" = "$os " ] && ok "?service.name=otel-shop: only otel_service ($os)" ||
	fail "?service.name=otel-shop has pids '$pids', want $os"
pids=$(label_values "$TMP/comm.pb.gz" pid | tr '\n' ' ')
[ "$pids" = "$sh " ] && ok "?comm=shares: only shares ($sh)" ||
	fail "?comm=shares has pids '$pids', want $sh"

# --- bad requests, too many at once
code() { curl -s -o "$TMP/body" -w '%{http_code}' -m 10 "$@"; }
[ "$(code "$URL?seconds=0")" = 400 ] && grep -q seconds "$TMP/body" &&
	ok "seconds=0: 400, $(cat "$TMP/body")" || fail "seconds=0: not a 400 saying why"
[ "$(code "$URL?seconds=abc")" = 400 ] && ok "seconds=abc: 400" || fail "seconds=abc: not 400"
[ "$(code "$URL?seconds=1&pid=x")" = 400 ] && ok "pid=x: 400" || fail "pid=x: not 400"
[ "$(code -X POST "$URL?seconds=1")" = 405 ] && ok "POST: 405" || fail "POST: not 405"
scrapers=()
for i in $(seq 1 10); do
	curl -s -D "$TMP/busy$i" -o /dev/null -m 20 "$URL?seconds=3" &
	scrapers+=($!)
done
wait "${scrapers[@]}"
busy=$(grep -l '^HTTP/1.1 503' "$TMP"/busy* 2>/dev/null | wc -l)
served=$(grep -l '^HTTP/1.1 200' "$TMP"/busy* 2>/dev/null | wc -l)
retry=$(grep -li '^retry-after: [0-9]' "$TMP"/busy* 2>/dev/null | wc -l)
[ "$served" -ge 1 ] && [ "$busy" -ge 1 ] && [ "$busy" = "$retry" ] && [ $((served + busy)) = 10 ] &&
	ok "10 at once: $served served, $busy answered 503 with Retry-After" ||
	fail "10 at once: $served served, $busy 503 ($retry with Retry-After)"

# --- the interval files went on meanwhile
files=$(ls "$TMP/files" | grep -c '\.pb\.gz$')
[ "$files" -ge 4 ] && ok "interval files written meanwhile: $files" ||
	fail "only $files interval files while scraped"

# --- a scrape under way at the stop
curl -s -o "$TMP/cut" -w '%{http_code}' -m 20 "$URL?seconds=30" > "$TMP/cut.code" &
cut=$!
sleep 1
kill -TERM "$col"
t0=$SECONDS
wait "$cut"
wait "$col"
rc=$?
[ "$(cat "$TMP/cut.code")" = 503 ] && [ $((SECONDS - t0)) -le 10 ] &&
	ok "a scrape cut by the stop: 503 ($(cat "$TMP/cut"))" ||
	fail "a scrape cut by the stop answered $(cat "$TMP/cut.code") after $((SECONDS - t0)) s"
[ "$rc" = 0 ] && ok "the collector exited 0" || fail "the collector exited $rc: $(tail -3 "$TMP/log")"
line=$(grep '^ctxprof: /debug/pprof/profile:' "$TMP/log")
[ -n "$line" ] && ok "summary: ${line#ctxprof: }" || fail "no /debug/pprof/profile line in the summary"
finish
