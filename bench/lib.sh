# shellcheck shell=bash
# What the benchmark scripts share: sourced first by each, not run.
#   ROOT, OUTPUT (absolute), B (OUTPUT/bench); set -eu
#   median             the median of the numbers on stdin, one a line
#   ratio A B          A / B with two decimals, "n/a" when B is not positive
#   bpf_stats_on       the kernel counts BPF run time until the script exits
#                      (kernel.bpf_stats_enabled: its setting is put back)
#   prog_stats IDS     "runs ns" summed over the perf_event programs loaded
#                      since IDS (a file of build/bench/progstat's output)
#   per_run RUNS NS    NS / RUNS, whole, 0 when no run
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTPUT=${OUTPUT:-build}
case $OUTPUT in /*) ;; *) OUTPUT=$ROOT/$OUTPUT ;; esac
B=$OUTPUT/bench

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) print "n/a"; else printf "%.2f", a / b }'; }

bpf_stats_on() {
	BPF_STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -q -w kernel.bpf_stats_enabled=1
	trap 'sysctl -q -w kernel.bpf_stats_enabled=$BPF_STATS_WAS' EXIT
}

prog_stats() {
	"$B/progstat" | awk 'FILENAME == ARGV[1] { old[$1] = 1; next }
		!($1 in old) { c += $3; t += $4 } END { print c + 0, t + 0 }' "$1" -
}

per_run() { awk -v c="$1" -v t="$2" 'BEGIN { printf "%.0f\n", c ? t / c : 0 }'; }
