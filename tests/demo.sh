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
