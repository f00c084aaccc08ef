#!/usr/bin/env bash
# What the BPF programs cost, as an operator sees it (needs root: it loads
# BPF): with --bpf-stats the kernel counts the programs' run time while the
# collector runs, and
#  - /metrics has ctxprof_bpf_runs_total and ctxprof_bpf_run_seconds_total
#    for program="sample" (and "offcpu_switch" with --off-cpu), not 0;
#  - the summary's "BPF run time:" line gives ns per run and per sample
#    taken, and agrees within 25 % with what bpftool reads of the same
#    program at the end (an independent reader of the same kernel counters);
#  - without --bpf-stats (kernel.bpf_stats_enabled 0), no such line: nothing
#    is made up; and the statistics went off with the collector.
. "$(dirname "$0")/lib.sh"
need_root
command -v curl >/dev/null || skip "curl is not installed (make deps installs it)"
[ -x "$WORKLOADS/shares" ] || { echo "FAIL: $WORKLOADS/shares not built"; exit 1; }
[ "$(sysctl -n kernel.bpf_stats_enabled)" = 0 ] ||
	skip "kernel.bpf_stats_enabled is 1: the test needs it 0 to see --bpf-stats turn counting on"

PORT=$(free_port $((23000 + $$ % 500)))

start_bg "$WORKLOADS/shares" --seconds 30
wl=$!
"$COLLECTOR" --pid "$wl" --bpf-stats --off-cpu --frequency 999 --duration 4 --no-status \
	--metrics-addr "127.0.0.1:$PORT" -o "$TMP/cost.pb.gz" 2>"$TMP/cost.log" &
col=$!
sleep 3
curl -s "http://127.0.0.1:$PORT/metrics" >"$TMP/metrics" || fail "no /metrics on port $PORT"
# the program's id, for bpftool, while it is loaded
prog_id=$(bpftool prog show 2>/dev/null | awk '/ perf_event +name sample / { sub(":", "", $1); id = $1 } END { print id }')
bpftool_line=
[ -n "$prog_id" ] && bpftool_line=$(bpftool prog show id "$prog_id" 2>/dev/null | head -1)
wait "$col" || fail "collector exited $?"

for p in sample offcpu_switch; do
	runs=$(sed -n "s/^ctxprof_bpf_runs_total{program=\"$p\"} \\([0-9.e+]*\\)$/\\1/p" "$TMP/metrics")
	secs=$(sed -n "s/^ctxprof_bpf_run_seconds_total{program=\"$p\"} \\([0-9.e+-]*\\)$/\\1/p" "$TMP/metrics")
	if awk -v r="${runs:-0}" -v s="${secs:-0}" 'BEGIN { exit !(r > 0 && s > 0) }'; then
		ok "/metrics: $p ran ${runs} times, ${secs} s"
	else
		fail "/metrics: $p: runs '${runs:-none}', seconds '${secs:-none}'"
	fi
done

line=$(grep -m1 '^ctxprof: BPF run time: ' "$TMP/cost.log")
per_run=$(printf '%s\n' "$line" | sed -n 's/.*runs, \([0-9.]*\) ns per run, [0-9.]* ns per sample taken.*/\1/p')
if [ -n "$per_run" ] && awk -v n="$per_run" 'BEGIN { exit !(n >= 50 && n <= 200000) }'; then
	ok "summary: $line"
else
	fail "summary: no plausible ns per run in '${line:-no BPF run time line}'"
fi
# bpftool: "run_time_ns T run_cnt N" of the same program, read right after
# /metrics (whose snapshot is at most a second older): the same counts.
# (Not against the summary: ns per run moves as the run goes on, from frame
# pointers to tables, and the summary is a second later.)
bt=$(printf '%s\n' "$bpftool_line" | awk '{ for (i = 1; i < NF; i++) { if ($i == "run_time_ns") t = $(i + 1); if ($i == "run_cnt") c = $(i + 1) } } END { if (c > 0) printf "%.0f", t / c }')
bcnt=$(printf '%s\n' "$bpftool_line" | awk '{ for (i = 1; i < NF; i++) if ($i == "run_cnt") print $(i + 1) }')
mruns=$(sed -n 's/^ctxprof_bpf_runs_total{program="sample"} \([0-9.e+]*\)$/\1/p' "$TMP/metrics")
msecs=$(sed -n 's/^ctxprof_bpf_run_seconds_total{program="sample"} \([0-9.e+-]*\)$/\1/p' "$TMP/metrics")
mper=$(awk -v r="${mruns:-0}" -v s="${msecs:-0}" 'BEGIN { if (r > 0) printf "%.0f", s * 1e9 / r }')
sruns=$(printf '%s\n' "$line" | sed -n 's/.*sample() [0-9.]* s in all, \([0-9]*\) runs, .*/\1/p')
if [ -z "$bt" ]; then
	fail "bpftool shows no run_time_ns for the sample program: '${bpftool_line:-no program found}'"
elif awk -v a="${mper:-0}" -v b="$bt" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && b > 0 && d <= b * 0.25) }'; then
	ok "bpftool reads $bt ns per run of the same program: within 25 % of /metrics' $mper"
else
	fail "bpftool reads $bt ns per run, /metrics ${mper:-nothing}"
fi
awk -v s="${sruns:-0}" -v m="${mruns:-0}" -v b="${bcnt:-0}" 'BEGIN { exit !(s >= m && s >= b && m > 0) }' &&
	ok "the summary's $sruns runs count on from /metrics' $mruns and bpftool's $bcnt" ||
	fail "the summary's runs (${sruns:-none}) are fewer than /metrics' ($mruns) or bpftool's ($bcnt)"
[ "$(sysctl -n kernel.bpf_stats_enabled)" = 0 ] && ok "kernel.bpf_stats_enabled is still 0" ||
	fail "kernel.bpf_stats_enabled changed"

# without --bpf-stats: the kernel counts nothing, the summary says nothing
"$COLLECTOR" --pid "$wl" --frequency 999 --duration 2 --no-status -o "$TMP/plain.pb.gz" \
	2>"$TMP/plain.log" || fail "collector without --bpf-stats exited $?"
if grep -q '^ctxprof: BPF run time' "$TMP/plain.log"; then
	fail "without --bpf-stats: $(grep '^ctxprof: BPF run time' "$TMP/plain.log")"
else
	ok "without --bpf-stats: no BPF run time line (the kernel counted nothing)"
fi
finish
