#!/usr/bin/env bash
# The symbol cache holds what processes map, within --symbol-memory, and lets
# go of what no process maps any more (needs root: BPF, a memory cgroup).
# 24 processes, two at a time, each map their own copy of a file whose
# .symtab names 150 000 functions (about 19 MiB of symbols parsed); before the
# cache was bounded that is 450 MiB kept for good, and the collector, in the
# DaemonSet's 512 MiB cgroup, was killed.  Checked: not killed, the cache never
# past its limit (/metrics, read while the processes come and go), and, as
# profiles are written every second (the states of exited processes then let
# their files go), files evicted to make room rather than refused.
. "$(dirname "$0")/lib.sh"
need_root
LIMIT_MB=512
COPIES=24
memcg_make $LIMIT_MB ||
	skip "no memory cgroup to make (neither cgroup v1's memory controller nor v2's)"

python3 "$ROOT/tests/hostile_elf.py" symtab "$TMP/names.so" --symbols 150000 --name-len 100 ||
	{ fail "tests/hostile_elf.py failed"; finish; }
for i in $(seq $COPIES); do cp "$TMP/names.so" "$TMP/copy$i.so"; done
ok "$COPIES copies of a $(du -k "$TMP/names.so" | cut -f1) KiB file of 150 000 symbols"

cat >"$TMP/mapper.py" <<'PY'
import mmap, os, sys, time
fd = os.open(sys.argv[2], os.O_RDONLY)
m = mmap.mmap(fd, 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_EXEC)
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    pass
PY
cat >"$TMP/driver.sh" <<SH
while [ ! -e "$TMP/go" ]; do sleep 0.05; done
for i in \$(seq $COPIES); do
	python3 "$TMP/mapper.py" 1.5 "$TMP/copy\$i.so" &
	[ \$((i % 2)) -eq 0 ] && wait
done
wait
SH
start_bg bash "$TMP/driver.sh"
driver=$!

PORT=$((20000 + $$ % 20000))
metric() {
	curl -s "http://127.0.0.1:$PORT/metrics" | sed -n "s/^$1 //p" | grep . || echo 0
}

mkdir "$TMP/out"
memcg_exec "$COLLECTOR" --pid "$driver" --children -F 99 --no-status --interval 1 \
	--output-dir "$TMP/out" --metrics-addr "127.0.0.1:$PORT" 2>"$TMP/log" &
collector=$!
PIDS+=("$collector")
sleep 1
touch "$TMP/go"
max=0 limit=0
while kill -0 "$driver" 2>/dev/null; do
	b=$(metric ctxprof_symbol_cache_bytes)
	limit=$(metric ctxprof_symbol_cache_limit_bytes)
	b=${b%.*}
	[ "$b" -gt "$max" ] 2>/dev/null && max=$b
	sleep 0.3
done
kill -INT "$collector"
wait "$collector"
rc=$?
peak=$(cg_peak_mb)
oom=$(cg_oom_kills)
grep -E "symbols:|samples:" "$TMP/log" | sed 's/^/   /'
if [ "$rc" -eq 0 ] && [ "${oom:-0}" = 0 ]; then
	ok "collector not killed (exit 0, no OOM kill; peak ${peak} MiB of ${LIMIT_MB})"
else
	fail "collector exit $rc, OOM kills ${oom:-?}, peak ${peak} MiB: $(tail -3 "$TMP/log")"
fi
limit=${limit%.*}
if [ "$max" -gt 0 ] && [ "$max" -le "$limit" ]; then
	ok "symbol cache at most $((max >> 20)) MiB while files came and went (limit $((limit >> 20)) MiB)"
else
	fail "symbol cache reached $max bytes (limit $limit)"
fi
evicted=$(grep "^ctxprof: symbols:" "$TMP/log" | grep -o '[0-9]* evicted' | grep -o '^[0-9]*')
refused=$(grep "^ctxprof: symbols:" "$TMP/log" | grep -o '[0-9]* not kept' | grep -o '^[0-9]*')
[ "${evicted:-0}" -ge 3 ] && ok "$evicted files let go to make room ($refused not kept)" ||
	fail "files evicted: '${evicted:-}', not kept: '${refused:-}' (want >= 3 evicted)"
taken=$(summary_field "$TMP/log" | awk '{ print $1 }')
[ -n "$taken" ] && [ "$(summary_field "$TMP/log" | awk '{ print $1 - $2 - $3 }')" = 0 ] &&
	ok "samples reconcile: $(summary_field "$TMP/log")" ||
	fail "samples do not reconcile: $(grep samples: "$TMP/log")"
finish
