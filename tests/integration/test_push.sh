#!/usr/bin/env bash
# Profiles pushed to a Pyroscope store (issue 20, push).  The store is
# tests/integration/pyroscope_receiver.py: Pyroscope's ingest API as its
# handler takes it, storing only what it gets; the test tells it how to
# answer (DIR/mode).  One collector (--pid shares, --interval 1) pushes
# through every way a store misbehaves, in turn:
#   ok; 500; 429 with Retry-After 2; connections reset; 10 s per request;
#   down for 30 s (the process gone) then back; 400 for a moment.
# Then, from what the store holds, read by the real pprof tool:
#  - every profile the collector queued is stored once or was refused (the
#    400s), none lost within the spool's bound, in order (each series'
#    `from` rising), none retried after a 400, the 429's wait >= 2 s;
#  - names (shares{node=...}), tenant, token, time ranges, sample types,
#    and the samples: stored = sent, queued = sent + refused, and the
#    summary's taken = in profile + dropped;
#  - sampling unaffected: the shares process's CPU time at -F (no drops),
#    interval files written on time while uploads took 10 s.
# Besides: --all names each service by the rule (otel-shop from
# OpenTelemetry, shares from its comm); a profile whose upload failed waits
# in --output-dir's spool across a restart; a password in the URL is never
# shown (stderr, /metrics, /healthz); an unreadable token file is one
# clear error at start.
. "$(dirname "$0")/lib.sh"
need_root
command -v curl > /dev/null || skip "curl is not installed"
command -v python3 > /dev/null || skip "python3 is not installed"
for w in shares otel_service; do
	[ -x "$WORKLOADS/$w" ] || { echo "FAIL: $WORKLOADS/$w not built"; exit 1; }
done
HZ=99
PORT=$(free_port $((23000 + $$ % 500)))
MPORT=$(free_port $((PORT + 1)))
STORE=$TMP/store
mkdir -p "$STORE" "$TMP/out"
echo t0k3n > "$TMP/token"
NODE=$(hostname)

receiver() { # the store, on $PORT, into $STORE
	python3 "$ROOT/tests/integration/pyroscope_receiver.py" --port "$PORT" --store "$STORE" \
		--auth "Bearer t0k3n" > "$TMP/receiver.out" 2>&1 &
	recv=$!
	PIDS+=($recv)
	for _ in $(seq 1 50); do
		grep -q listening "$TMP/receiver.out" 2>/dev/null && return
		sleep 0.1
	done
	fail "the receiver did not start: $(cat "$TMP/receiver.out")"
}
mode() { echo "$*" > "$STORE/mode"; }
metric() { curl -s -m 2 "http://127.0.0.1:$MPORT/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
# until nothing waits to be sent, at most $1 seconds
drained() {
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do
		[ "$(metric ctxprof_push_pending_profiles)" = 0 ] && return 0
		sleep 0.5
	done
	return 1
}
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/^[^)]*\) /, ""); print ($12 + $13) / hz }' /proc/"$1"/stat; }

receiver
start_bg "$WORKLOADS/shares" --threads 1 --seconds 200
sh=$!
sleep 0.3
c0=$(cpu_s "$sh")
"$COLLECTOR" --pid "$sh" -F $HZ --interval 1 --no-status --push "http://127.0.0.1:$PORT" \
	--push-token-file "$TMP/token" --push-tenant team-a --push-timeout 15 \
	--output-dir "$TMP/out" --max-files 0 --metrics-addr "127.0.0.1:$MPORT" 2> "$TMP/log" &
col=$!
PIDS+=($col)
for _ in $(seq 1 100); do
	[ -n "$(metric ctxprof_push_attempts_total)" ] && break
	sleep 0.2
done
t_start=$SECONDS
mode ok
sleep 3
mode 500
sleep 3
mode 429 2
sleep 3
mode reset
sleep 2
mode slow 10
slow_from=$SECONDS
sleep 12
files_slow=$(ls "$TMP/out" | grep -c '\.pb\.gz$')
mode ok
drained 30 || fail "the queue did not empty after the slow store"
# down for 30 s: the process gone, the port closed
kill "$recv"
wait "$recv" 2>/dev/null
sleep 30
pending_down=$(metric ctxprof_push_pending_profiles)
receiver
drained 45 || fail "the queue did not empty after the store came back"
mode 400
sleep 2
mode ok
sleep 2
kill -TERM "$col"
wait "$col"
rc=$?
c1=$(cpu_s "$sh")
t_run=$((SECONDS - t_start))
[ "$rc" = 0 ] && ok "the collector exited 0" || fail "the collector exited $rc: $(tail -5 "$TMP/log")"
grep '^ctxprof: push:' "$TMP/log"
[ "${pending_down:-0}" -ge 20 ] && ok "$pending_down profiles waited while the store was down" ||
	fail "only ${pending_down:-?} profiles waited while the store was down 30 s"

# what the store holds, what it was asked, against the summary
python3 - "$STORE" "$TMP/log" "$NODE" "$PPROF" << 'EOF' || fail "the store's profiles do not add up (above)"
import glob, json, os, re, subprocess, sys
store, log, node, pprof = sys.argv[1:5]
bad = 0
def check(cond, what):
    global bad
    print(('ok: ' if cond else 'FAIL: ') + what)
    bad += not cond
metas = [json.load(open(p)) for p in sorted(glob.glob(store + '/*.json'))]
reqs = [l.split() for l in open(store + '/requests.log')]
summary = open(log).read()
m = re.search(r'^ctxprof: push: (\d+) profiles queued \((\d+) samples\)', summary, re.M)
queued, queued_samples = int(m.group(1)), int(m.group(2))
m = re.search(r' (\d+) sent \((\d+) samples\)', summary)
sent_samples = int(m.group(2))
m = re.search(r' (\d+) refused by the store \(4xx\) \((\d+) samples\)', summary)
refused, refused_samples = int(m.group(1)), int(m.group(2))
m = re.search(r'^ctxprof: samples: (\d+) taken, (\d+) in profile, (\d+) dropped$', summary, re.M)
taken, in_profile, dropped = map(int, m.groups())
check(taken == in_profile + dropped, 'taken %d = in profile %d + dropped %d' % (taken, in_profile, dropped))
check(in_profile == queued_samples, 'in profile %d = queued %d samples' % (in_profile, queued_samples))
check(len(metas) + refused == queued,
      '%d stored + %d refused = %d queued: none lost' % (len(metas), refused, queued))
check(queued_samples == sent_samples + refused_samples,
      'queued %d samples = %d sent + %d refused' % (queued_samples, sent_samples, refused_samples))
# every stored profile read by pprof; its samples summed
total = 0
for i, meta in enumerate(metas):
    pb = store + '/%06d.pb' % (i + 1)
    raw = subprocess.run([pprof, '-raw', pb], capture_output=True, text=True)
    if raw.returncode:
        check(False, 'pprof reads %s: %s' % (pb, raw.stderr.strip()))
        continue
    n = sum(int(m.group(1)) for m in re.finditer(r'^\s+(\d+)\s+\d+:', raw.stdout, re.M))
    total += n
    if re.search(r'\b(thread_name|pid|comm):\[', raw.stdout):
        check(False, '%s: per-process labels in samples (they make series in Pyroscope)' % pb)
check(total == sent_samples, 'the stored profiles hold %d samples, the collector sent %d' % (total, sent_samples))
names = {m['name'] for m in metas}
check(names == {'shares{node=%s}' % node}, 'one series, shares{node=%s}: %s' % (node, sorted(names)))
check(all(m['labels'] == {'__name__': 'shares', 'node': node} for m in metas), 'labels parse back')
check(all(m['tenant'] == 'team-a' for m in metas), 'X-Scope-OrgID team-a on every upload')
check(all(m['spy'] == 'ctxprof' for m in metas), 'spyName ctxprof')
check(all(set(m['sample_type_config']) == {'samples', 'cpu'} for m in metas), 'sample_type_config names samples and cpu')
check(all(1 <= m['until'] - m['from'] <= 2 for m in metas), 'each profile spans its interval (1 s, whole seconds)')
froms = [m['from'] for m in metas]
check(froms == sorted(froms) and len(set(froms)) == len(froms), 'stored in order, each interval once')
# the store's side: what it answered
by_status = {}
for t, status, name, frm in reqs:
    by_status.setdefault(int(status), []).append((float(t), frm))
for s in (500, 429, 0, 400):
    check(len(by_status.get(s, [])) > 0, '%d answers of %s were given' % (len(by_status.get(s, [])), s or 'reset'))
stored_froms = {str(int(f)) for f in froms}
retried = {frm for _, frm in by_status.get(500, []) + by_status.get(0, []) + by_status.get(429, [])}
check(retried <= stored_froms, 'every profile answered 500, 429 or reset was stored later')
refused_froms = [frm for _, frm in by_status.get(400, [])]
check(len(refused_froms) == len(set(refused_froms)) == refused and not set(refused_froms) & stored_froms,
      'each of the %d refused profiles was tried once and never stored' % refused)
# after each 429 the next request came after its Retry-After
times = sorted((float(t), int(s)) for t, s, _, _ in reqs)
gaps = [b[0] - a[0] for a, b in zip(times, times[1:]) if a[1] == 429]
check(gaps and min(gaps) >= 1.9, 'after a 429 the next try waited %.2f s at least (Retry-After: 2)' % min(gaps or [0]))
sys.exit(1 if bad else 0)
EOF

# sampling went on as if nothing were pushed
python3 - "$TMP/log" "$c0" "$c1" "$HZ" << 'EOF' && ok "sampling unaffected: samples = the shares process's CPU time at $HZ Hz, none dropped" || fail "sampling was affected (above)"
import re, sys
log, c0, c1, hz = open(sys.argv[1]).read(), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
taken, _, dropped = map(int, re.search(r'^ctxprof: samples: (\d+) taken, (\d+) in profile, (\d+) dropped$', log, re.M).groups())
want = (c1 - c0) * hz
print('  %d taken, %d dropped, CPU time %.1f s -> %.0f expected' % (taken, dropped, c1 - c0, want))
sys.exit(0 if dropped == 0 and abs(taken - want) <= 0.1 * want else 1)
EOF
[ "$files_slow" -ge $((slow_from - t_start + 10)) ] &&
	ok "interval files on time while each upload took 10 s: $files_slow after $((slow_from - t_start + 12)) s" ||
	fail "$files_slow interval files after $((slow_from - t_start + 12)) s of 1 s intervals"

# --- --all: a series per service, by the rule
rm -f "$STORE"/*
start_bg "$WORKLOADS/otel_service" --threads 1 --wait-ms 20 --seconds 30
os=$!
sleep 0.5
"$COLLECTOR" --all --duration 4 --interval 2 --no-status --push "http://127.0.0.1:$PORT" \
	--push-token-file "$TMP/token" 2> "$TMP/all.log" ||
	fail "collector --all --push exited $?: $(tail -3 "$TMP/all.log")"
names=$(python3 -c 'import glob, json, sys; print(" ".join(sorted({json.load(open(p))["name"] for p in glob.glob(sys.argv[1] + "/*.json")})))' "$STORE")
case " $names " in
*" otel-shop{node=$NODE} "*) ok "--all: otel_service is otel-shop (OpenTelemetry service.name)" ;;
*) fail "--all: no otel-shop{node=$NODE} series in: $names" ;;
esac
case " $names " in
*" shares{node=$NODE} "*) ok "--all: shares by its comm" ;;
*) fail "--all: no shares{node=$NODE} series in: $names" ;;
esac
kill "$os" 2>/dev/null

# --- the spool directory across a restart, the store down meanwhile
kill "$recv"
wait "$recv" 2>/dev/null
rm -f "$STORE"/*
mkdir -p "$TMP/spool"
"$COLLECTOR" --pid "$sh" --duration 3 --interval 1 --no-status --push "http://127.0.0.1:$PORT" \
	--push-token-file "$TMP/token" --push-flush 0 --output-dir "$TMP/spool" 2> "$TMP/spool1.log"
kept=$(sed -n 's/.* \([0-9]*\) kept in the spool directory for the next start.*/\1/p' "$TMP/spool1.log")
[ "${kept:-0}" -ge 2 ] && ok "store down: $kept profiles kept in $TMP/spool/ctxprof-push-spool" ||
	fail "store down: ${kept:-no} profiles kept: $(grep '^ctxprof: push:' "$TMP/spool1.log")"
receiver
"$COLLECTOR" --pid "$sh" --duration 2 --interval 1 --no-status --push "http://127.0.0.1:$PORT" \
	--push-token-file "$TMP/token" --output-dir "$TMP/spool" 2> "$TMP/spool2.log"
restored=$(sed -n 's/.* \([0-9]*\) restored from the spool directory.*/\1/p' "$TMP/spool2.log")
stored=$(ls "$STORE" | grep -c '\.json$')
left=$(ls "$TMP/spool/ctxprof-push-spool" | wc -l)
[ "${restored:-0}" = "$kept" ] && [ "$stored" -gt "$kept" ] && [ "$left" = 0 ] &&
	ok "after the restart: $restored restored and sent first, $stored stored in all, spool empty" ||
	fail "after the restart: restored ${restored:-none} of $kept, $stored stored, $left left in the spool"

# --- a password in the URL is never shown
"$COLLECTOR" --pid "$sh" --duration 3 --interval 1 --no-status \
	--push "http://alice:S3cretPw@127.0.0.1:$(free_port $((PORT + 50)))" \
	--metrics-addr "127.0.0.1:$MPORT" 2> "$TMP/cred.log" &
cred=$!
sleep 2
curl -s -m 2 "http://127.0.0.1:$MPORT/metrics" > "$TMP/cred.metrics"
curl -s -m 2 "http://127.0.0.1:$MPORT/healthz" > "$TMP/cred.health"
wait "$cred"
grep -q 127.0.0.1 "$TMP/cred.log" "$TMP/cred.health" ||
	fail "the failing store is not named anywhere (the check below would prove nothing)"
if grep -q -e S3cretPw -e alice "$TMP/cred.log" "$TMP/cred.metrics" "$TMP/cred.health"; then
	fail "the URL's credentials were shown: $(grep -h -e S3cretPw -e alice "$TMP"/cred.* | head -2)"
else
	ok "the URL's credentials are in no message, /metrics or /healthz ($(grep -m1 -o 'push_failing: [^;]*' "$TMP/cred.health"))"
fi

# --- an unreadable token file: one clear line at start
"$COLLECTOR" --pid "$sh" --duration 1 --no-status --push "http://127.0.0.1:$PORT" \
	--push-token-file "$TMP/nonexistent" 2> "$TMP/tok.log"
rc=$?
[ "$rc" != 0 ] && [ "$(grep -c . "$TMP/tok.log")" = 1 ] && grep -q "push-token-file.*$TMP/nonexistent" "$TMP/tok.log" &&
	ok "an unreadable token file: exit $rc, $(cat "$TMP/tok.log")" ||
	fail "an unreadable token file: exit $rc, $(cat "$TMP/tok.log")"
printf 'two\nlines\n' > "$TMP/token2"
"$COLLECTOR" --pid "$sh" --duration 1 --no-status --push "http://127.0.0.1:$PORT" \
	--push-token-file "$TMP/token2" 2> "$TMP/tok2.log" &&
	fail "a two-line token file was taken" || ok "a two-line token file: $(cat "$TMP/tok2.log")"
finish
