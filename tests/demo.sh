#!/usr/bin/env bash
# make demo: profile the bundled workload for a few seconds, show the top
# functions and where the pprof file is.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUTPUT=${OUTPUT:-build}
case $OUTPUT in /*) ;; *) OUTPUT=$ROOT/$OUTPUT ;; esac
PPROF=${PPROF:-$OUTPUT/pprof}
out=$OUTPUT/demo.pb.gz

if [ "$(id -u)" != 0 ]; then
	echo "make demo: loading BPF programs needs root: run it as root (e.g. sudo make demo)" >&2
	exit 1
fi
"$OUTPUT/workloads/shares" --threads 2 --seconds 8 &
wl=$!
trap 'kill $wl 2>/dev/null || true' EXIT
echo "demo: profiling the shares workload (pid $wl, 2 threads; its leaves take 10/20/30/40 % of CPU)"
"$ROOT/collector" --pid "$wl" --duration 5 --frequency 999 --output "$out"
echo
echo "Top functions (pprof -top):"
"$PPROF" -top -nodecount=8 "$out" 2>/dev/null | sed -n '/flat%/,$p'
echo
echo "Profile: $out"
echo "Explore it:  $PPROF -http=: $out   or   $PPROF -traces $out"

# a Python program on Debian's python3, built without frame pointers: its
# native stacks come whole from the CFI unwinder, and the Python functions
# stand where the interpreter ran them
out2=$OUTPUT/demo-python.pb.gz
app=$OUTPUT/demo_app.py
if [ -x /usr/bin/python3 ]; then
	cat > "$app" <<'PY'
import json, time

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def render(rows):
    return json.dumps(rows, default=lambda o: fib(12))

def handle_request(i):
    rows = [{"id": k, "value": object()} for k in range(20)]
    return fib(18) + len(render(rows))

end = time.time() + 6
i = 0
while time.time() < end:
    handle_request(i)
    i += 1
PY
	/usr/bin/python3 "$app" &
	what="Debian's python3 (built without frame pointers) running $app"
else
	"$OUTPUT/workloads/unw_qsort" --seconds 6 >/dev/null &
	what="a -fomit-frame-pointer program sorting through glibc's qsort"
fi
wl=$!
echo
echo "demo: profiling $what (pid $wl)"
"$ROOT/collector" --pid "$wl" --duration 3 --frequency 999 --output "$out2" 2>"$OUTPUT/demo-python.log"
grep -E "user stacks|python:" "$OUTPUT/demo-python.log"
echo
echo "Its hottest stacks, leaf first (pprof -traces):"
"$PPROF" -traces "$out2" 2>/dev/null | awk '/^-+\+-+$/ { n++; next } n >= 1 && n <= 2 && /^ +[0-9.]+m?s +/ { p = 1 } n >= 1 && n <= 2 && p' | head -60
echo
echo "Python functions with their files and lines (pprof -top -lines):"
"$PPROF" -top -lines -nodecount=8 "$out2" 2>/dev/null | sed -n '/flat%/,$p'
echo
echo "Profile: $out2"
