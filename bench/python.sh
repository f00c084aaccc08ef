#!/usr/bin/env bash
# BPF run time per sample of the CPython 3.11 walk, in one run: Debian's
# python3 running tests/workloads/python/shares.py (nested calls, recursion,
# sorted(key=lambda), a generator under sum(): 5 to 20 Python frames a
# sample) profiled with --python on, next to the same workload with
# --python off (the native walk alone, _PyEval_EvalFrameDefault unnamed);
# interleaved, BENCH_REPS runs (default 3) of BENCH_SECONDS (default 5) at
# 999 Hz; the cost is the median of the paired differences.  Reads the
# kernel's accounting (kernel.bpf_stats_enabled).  Run by bench/run.sh, or
# alone as root after make bench.
. "$(dirname "$0")/lib.sh"
REPS=${BENCH_REPS:-3}
SECS=${BENCH_SECONDS:-5}
PY=/usr/bin/python3
SHARES=$ROOT/tests/workloads/python/shares.py
[ "$(id -u)" = 0 ] || { echo "bench: needs root (BPF)"; exit 1; }
[ -x "$B/progstat" ] || { echo "bench: $B/progstat missing (make bench builds it)"; exit 1; }
if [ "$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" != 3.11 ]; then
	echo "python: skipped, $PY is not CPython 3.11"
	exit 0
fi
if ! "$ROOT/collector" --help 2>&1 | grep -q -- '--python'; then
	echo "python: skipped, this collector has no --python option"
	exit 0
fi
mkdir -p "$B"
bpf_stats_on

one() { # on|off -> ns per run; the log in $B/python_$1.log
	"$B/progstat" > "$B/ids.before"
	"$PY" "$SHARES" $((SECS + 2)) /dev/null & local wl=$!
	sleep 0.5
	"$ROOT/collector" --pid $wl --frequency 999 --no-status --duration "$SECS" --python "$1" \
		-o "$B/python.pb.gz" 2> "$B/python_$1.log" & local c=$!
	sleep $((SECS - 1))
	per_run $(prog_stats "$B/ids.before")
	wait $c || true
	kill $wl 2> /dev/null || true
	wait $wl 2> /dev/null || true
}
on= off=
for _ in $(seq "$REPS"); do
	on+="$(one on) "
	off+="$(one off) "
done
med() { printf '%s\n' $1 | median; }
diffs() { paste <(printf '%s\n' $1) <(printf '%s\n' $2) | awk '{ print $1 - $2 }' | median; }
# the collector's CPU per code object it names: a script with NAMES distinct
# functions, each run in turn, profiled --python on and off in the same run
NAMES=${BENCH_PY_NAMES:-3000}
cat > "$B/many_codes.py" <<'PY'
import sys, time
n = int(sys.argv[2])
ns = {}
exec("".join("def f%d(k):\n    s = 0\n    for i in range(k):\n        s += i\n    return s\n" % i
             for i in range(n)), ns)
fs = [ns["f%d" % i] for i in range(n)]
end = time.time() + float(sys.argv[1])
while time.time() < end:
    for f in fs:
        f(300)
PY
cpu_of() { sed -n 's/^ctxprof: collector CPU: \([0-9.]*\) s in all.*/\1/p' "$1"; }
named_of() { grep -o 'code objects named [0-9]*' "$1" | grep -o '[0-9]*$'; }
naming() { # on|off -> the log in $B/python_names_$1.log
	"$PY" "$B/many_codes.py" $((SECS + 2)) "$NAMES" & local wl=$!
	sleep 1
	"$ROOT/collector" --pid $wl --frequency 999 --no-status --duration "$SECS" --python "$1" \
		-o "$B/python_names.pb.gz" 2> "$B/python_names_$1.log" || true
	kill $wl 2> /dev/null || true
	wait $wl 2> /dev/null || true
}
naming on
naming off
cpu_on=$(cpu_of "$B/python_names_on.log")
cpu_off=$(cpu_of "$B/python_names_off.log")
named=$(named_of "$B/python_names_on.log")

cat <<EOT

| sampler run (shares.py, 999 Hz, $SECS s, $REPS interleaved runs each) | ns per sample, median (runs) | --python off, median (runs) | ratio on / off | the walk costs (median of paired differences) |
|---|---|---|---|---|
| CPython 3.11 frames (--python on) | $(med "$on") (${on% }) | $(med "$off") (${off% }) | $(ratio "$(med "$on")" "$(med "$off")") | $(diffs "$on" "$off") ns |

last --python on run: $(grep '^ctxprof: python: ' "$B/python_on.log" || echo "no 'ctxprof: python: ' line")
$(grep '^ctxprof: user stacks by how they end' "$B/python_on.log" || true)
EOT
cat <<EOT

| naming ($NAMES distinct functions, 999 Hz, $SECS s) | collector CPU --python on | --python off | code objects named | CPU per code object named |
|---|---|---|---|---|
| many_codes.py | ${cpu_on:-?} s | ${cpu_off:-?} s | ${named:-?} | $(awk -v a="${cpu_on:-0}" -v b="${cpu_off:-0}" -v n="${named:-0}" 'BEGIN { if (n > 0) printf "%.1f us", (a - b) * 1e6 / n; else print "n/a" }') |
EOT
