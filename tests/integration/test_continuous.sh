#!/usr/bin/env bash
# Continuous mode: a 60 s run with --interval 5 on a workload whose stacks
# keep changing writes about 12 valid files whose sample sums reconcile with
# the BPF counters, and the collector's memory stops growing; --max-files
# keeps only the newest files.
. "$(dirname "$0")/lib.sh"
need_root

RUN=${CONTINUOUS_SECONDS:-60}
mkdir -p "$TMP/out"
start_bg "$WORKLOADS/churn"
wl=$!
sleep 0.3
"$COLLECTOR" --pid "$wl" --interval 5 --duration "$RUN" --frequency 499 \
	--output-dir "$TMP/out" 2>"$TMP/log" &
col=$!
PIDS+=($col)
rss=()
for _ in $(seq $((RUN / 5))); do
	sleep 5
	rss+=("$(awk '/^VmRSS/ { print $2 }' /proc/$col/status 2>/dev/null || echo 0)")
done
wait $col
rc=$?
cat "$TMP/log"
[ $rc -eq 0 ] && ok "collector exited 0" || fail "collector exited $rc"
echo "RSS every 5 s (KiB): ${rss[*]}"

files=("$TMP"/out/ctxprof-"$wl"-*.pb.gz)
n=${#files[@]}
want=$((RUN / 5))
if [ "$n" -ge $((want - 1)) ] && [ "$n" -le $((want + 1)) ]; then
	ok "$n files for $RUN s at --interval 5"
else
	fail "$n files for $RUN s at --interval 5, want about $want"
fi
sum=0 bad=0
for f in "${files[@]}"; do
	t=$(pprof_total "$f" samples)
	if [ -z "$t" ]; then bad=$((bad + 1)); continue; fi
	sum=$((sum + t))
done
[ $bad -eq 0 ] && ok "every file is read by pprof" || fail "$bad files pprof cannot read"
read -r taken in_profile dropped <<<"$(summary_field "$TMP/log")"
[ "$sum" = "$in_profile" ] && ok "files hold $sum samples, as the summary says" ||
	fail "files hold $sum samples, summary says $in_profile"
[ "$taken" -eq $((in_profile + dropped)) ] &&
	ok "samples reconcile: $taken taken = $in_profile in files + $dropped dropped" ||
	fail "samples do not reconcile: $taken taken != $in_profile + $dropped"
# a sample counted just after a rotation still finds its stack
grep -q " no_trace=0" "$TMP/log" && ok "no sample lost its stack across rotations (no_trace=0)" ||
	fail "samples lost their stack across rotations: $(grep -o 'no_trace=[0-9]*' "$TMP/log")"
# each file covers its own interval: time_nanos increases, durations ~5 s
"$PPROF" -raw "${files[1]}" 2>/dev/null | grep -q "Duration: 5" &&
	ok "an interval file says Duration: 5.x s" || fail "interval file duration is not ~5 s"

# memory: after the first half of the run, RSS grows by less than 10 %
half=${rss[$((${#rss[@]} / 2))]} last=${rss[-1]}
if [ "$half" -gt 0 ] && [ "$last" -le $((half + half / 10)) ]; then
	ok "RSS bounded: ${half} KiB at half time, ${last} KiB at the end"
else
	fail "RSS grew from ${half} KiB at half time to ${last} KiB at the end"
fi

# --max-files keeps the newest N files this run wrote, and only those
mkdir -p "$TMP/few"
touch "$TMP/few/ctxprof-$wl-19990101T000000Z.pb.gz"
"$COLLECTOR" --pid "$wl" --interval 1 --max-files 3 --duration 6.5 --output-dir "$TMP/few" \
	2>"$TMP/log2" || fail "collector --max-files run failed: $(cat "$TMP/log2")"
kept=$(ls "$TMP/few" | grep -vc 19990101)
[ "$kept" -eq 3 ] && ok "--max-files 3 keeps 3 files" || fail "--max-files 3 kept $kept files"
[ -e "$TMP/few/ctxprof-$wl-19990101T000000Z.pb.gz" ] && ok "a file it did not write survives" ||
	fail "--max-files deleted a file it did not write"
finish
