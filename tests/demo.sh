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

# a program built without frame pointers, as distributions ship them: its
# stacks come whole from the CFI unwinder
out2=$OUTPUT/demo-nofp.pb.gz
if [ -x /usr/bin/python3 ]; then
	/usr/bin/python3 -c 'import time
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
end = time.time() + 6
while time.time() < end: fib(20)' &
	what="Debian's python3 (built without frame pointers) running fib()"
else
	"$OUTPUT/workloads/unw_qsort" --seconds 6 >/dev/null &
	what="a -fomit-frame-pointer program sorting through glibc's qsort"
fi
wl=$!
echo
echo "demo: profiling $what (pid $wl)"
"$ROOT/collector" --pid "$wl" --duration 3 --frequency 999 --output "$out2" 2>"$OUTPUT/demo-nofp.log"
grep -E "user stacks|unwinding" "$OUTPUT/demo-nofp.log"
echo
echo "Its hottest stack, leaf first (pprof -traces):"
"$PPROF" -traces "$out2" 2>/dev/null | awk '/^-+\+-+$/ { n++; next } n == 1 && /^ +[0-9.]+m?s +/ { p = 1 } n == 1 && p' | head -40
echo
echo "Profile: $out2"
