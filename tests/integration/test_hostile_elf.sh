#!/usr/bin/env bash
# Hostile ELF files against the collector's budgets (needs root: it loads BPF
# and makes a memory cgroup).  The collector runs in a cgroup of 512 MiB, the
# DaemonSet's limit, while processes merely map these files PROT_EXEC
# (tests/hostile_elf.py makes them here):
#   minidebug  965 KB whose MiniDebugInfo holds 2.6 million symbols (the
#              collector grew to 5.65 GB on it)
#   names      a .symtab of 300 000 functions with 250-byte names
#   cfi_slow   1 MiB of .eh_frame that takes libdw a minute (a CIE naming
#              register 1023, FDEs of remember/restore pairs)
#   cfi_big    a well-formed 94 MiB .eh_frame of 3.9 million FDEs (718 MB)
# and checks that the collector is not killed, stays under the limit, refuses
# and counts each file (summary), that a python3 started meanwhile still gets
# its whole stacks (its tables are not queued behind the bombs'), and that
# SIGTERM, sent while another cfi_slow builds, ends the collector within
# HOSTILE_TERM_S seconds (3).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stacks.sh"
. "$(dirname "$0")/debian_programs.sh"
need_root
deb_python3_available || skip "python3 missing (make deps installs it)"

LIMIT_MB=512
TERM_S=${HOSTILE_TERM_S:-3}
PY_BAR=${HOSTILE_PY_BAR:-75}
GEN="$ROOT/tests/hostile_elf.py"

memcg_make $LIMIT_MB ||
	skip "no memory cgroup to make (neither cgroup v1's memory controller nor v2's)"

echo "== the hostile files"
t0=$SECONDS
python3 "$GEN" minidebug "$TMP/minidebug.so" &&
	python3 "$GEN" symtab "$TMP/names.so" --symbols 300000 --name-len 250 &&
	python3 "$GEN" cfi-slow "$TMP/cfi_slow.so" &&
	python3 "$GEN" cfi-slow "$TMP/cfi_slow2.so" --pairs 682 &&
	python3 "$GEN" cfi-big "$TMP/cfi_big.so" ||
	{ fail "tests/hostile_elf.py failed"; finish; }
ok "made in $((SECONDS - t0)) s: $(cd "$TMP" && ls -s --block-size=K -- *.so | tr '\n' ' ')"

# maps the files PROT_EXEC and spins, so that it is sampled and its mappings read
cat >"$TMP/mapper.py" <<'EOF'
import mmap, os, sys, time
maps = []
for path in sys.argv[2:]:
    fd = os.open(path, os.O_RDONLY)
    maps.append(mmap.mmap(fd, 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_EXEC))
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    pass
EOF

# the processes profiled: all children of this driver, started as $TMP/go and go2 appear
cat >"$TMP/driver.sh" <<EOF
while [ ! -e "$TMP/go" ]; do sleep 0.05; done
python3 "$TMP/mapper.py" 60 "$TMP/minidebug.so" "$TMP/names.so" "$TMP/cfi_slow.so" \
	"$TMP/cfi_big.so" &
sleep 2
. "$ROOT/tests/integration/debian_programs.sh"
deb_python3 6 "$TMP" >"$TMP/python.pid"
while [ ! -e "$TMP/go2" ]; do sleep 0.05; done
python3 "$TMP/mapper.py" 60 "$TMP/cfi_slow2.so" &
wait
EOF
start_bg bash "$TMP/driver.sh"
driver=$!
# the mappers spin for 60 s: they go with the test (cleanup kills the driver
# alone), or the tests after it run on a busy machine
trap 'pkill -9 -P "$driver" 2>/dev/null; cleanup' EXIT

PORT=$((20000 + $$ % 20000))
# a reason's count of files left without a table, from /metrics
table_errors() {
	curl -s "http://127.0.0.1:$PORT/metrics" |
		sed -n "s/^ctxprof_unwind_table_errors_total{reason=\"$1\"} //p" | grep . || echo 0
}

# CPU ticks of the collector's unwinder thread so far
unwinder_ticks() {
	local t
	for t in /proc/"$collector"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = ctxprof-unwind ] || continue
		awk '{ sub(/.*\) /, ""); print $12 + $13 }' "$t/stat"
		return
	done
	echo 0
}

echo "== the collector in a ${LIMIT_MB} MiB memory cgroup ($CG)"
memcg_exec "$COLLECTOR" --pid "$driver" --children -F 199 --no-status -o "$TMP/out.pb.gz" \
	--metrics-addr "127.0.0.1:$PORT" 2>"$TMP/log" &
collector=$!
PIDS+=("$collector")
sleep 1
touch "$TMP/go"
# python3 runs its 6 s while the bombs' tables build; then the bombs' verdicts
# (2 s of CPU for cfi_slow's: longer on a loaded machine)
sleep 3
pypid=$(cat "$TMP/python.pid" 2>/dev/null)
for _ in $(seq 600); do
	if ! { [ -n "$pypid" ] && kill -0 "$pypid" 2>/dev/null; } &&
		[ "$(table_errors too_slow)" -ge 1 ] && [ "$(table_errors too_large)" -ge 1 ]; then
		break
	fi
	sleep 0.2
done
# the second cfi_slow: SIGTERM once its build has taken 0.3 s of CPU
ticks=$(unwinder_ticks)
touch "$TMP/go2"
for _ in $(seq 200); do
	[ $(($(unwinder_ticks) - ticks)) -ge 30 ] && break
	sleep 0.05
done
building=$(($(unwinder_ticks) - ticks))
term=$(date +%s.%N)
kill -TERM "$collector"
wait "$collector"
rc=$?
took=$(awk -v a="$term" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
peak=$(cg_peak_mb)
oom=$(cg_oom_kills)
grep -E "unwinding|symbols|ELF files|samples:" "$TMP/log" | sed 's/^/   /'

if [ "$rc" -eq 0 ] && [ "${oom:-0}" = 0 ]; then
	ok "collector not killed (exit 0, no OOM kill in its cgroup; peak ${peak} MiB of ${LIMIT_MB})"
else
	fail "collector exit $rc, OOM kills ${oom:-?}, peak ${peak} MiB: $(tail -5 "$TMP/log")"
fi
if [ "$building" -lt 30 ]; then
	fail "the second cfi_slow's build never began (unwinder: $building ticks)"
elif awk -v t="$took" -v max="$TERM_S" 'BEGIN { exit !(t < max) }'; then
	ok "SIGTERM $((building * 10)) ms into a table build: exited in ${took} s"
else
	fail "SIGTERM $((building * 10)) ms into a table build: exited after ${took} s (want < ${TERM_S} s)"
fi

check_count() { # WHAT N
	if [ "${2:-0}" -ge 1 ] 2>/dev/null; then
		ok "$1: $2"
	else
		fail "$1: '${2:-}' in the summary"
	fi
}
check_count "CFI refused as too slow (cfi_slow)" "$(grep -o 'too slow [0-9]*' "$TMP/log" | grep -o '[0-9]*')"
check_count "CFI refused as too large (cfi_big)" "$(grep -o 'too large [0-9]*' "$TMP/log" | grep -o '[0-9]*')"
check_count "builds cancelled at SIGTERM (cfi_slow2)" "$(grep -o 'cancelled [0-9]*' "$TMP/log" | grep -o '[0-9]*')"
check_count "MiniDebugInfo refused as too big (minidebug)" \
	"$(sed -n 's/.*MiniDebugInfo merged, [0-9]* bad, \([0-9]*\) too big.*/\1/p' "$TMP/log")"
check_count "symbols refused past the per-file budget (names)" \
	"$(grep -o '[0-9]* with symbols past the per-file budget' "$TMP/log" | grep -o '^[0-9]*')"

if [ -n "$pypid" ] && stacks_from_pprof "$TMP/out.pb.gz" "$pypid" >"$TMP/py.folded" &&
	[ -s "$TMP/py.folded" ]; then
	share=$(reach_share "$TMP/py.folded" "$STACKS_MAIN")
	if share_at_least "$share" "$PY_BAR"; then
		ok "python3 started while the bombs built: $share of its samples reach main"
	else
		fail "python3 started while the bombs built: only $share of its samples reach main (want >= $PY_BAR%)"
	fi
else
	fail "no python3 samples in the profile (pid ${pypid:-?})"
fi
finish
