#!/usr/bin/env bash
# Each interval file holds exactly the samples taken in its window, and the
# windows follow each other with no gap and no overlap: a single CPU-bound
# thread (shares, nice -20) profiled at 99 Hz with --interval 2, and per
# file (pprof -raw: Time, Duration, the samples)
#   - the next file's Time is this one's Time + Duration (to the us);
#   - a full interval lasts 2 s: the boundaries stay on their grid;
#   - samples / frequency <= Duration + 1 period: a thread is sampled at
#     most once a period (the first file once held 2.103 s for 2.003 s);
#   - samples / frequency >= Duration - 1 period when the thread had its
#     CPU all along (measured from its schedstat; on a busy machine the
#     slack is what it lacked, said in the log);
# and every sample is in one file: the files sum to the summary's count,
# taken = in files + dropped.
. "$(dirname "$0")/lib.sh"
need_root

F=99
I=2
RUN=${WINDOWS_SECONDS:-9}
mkdir -p "$TMP/out"
# one CPU: a thread moving between CPUs whose timers are out of phase could
# be sampled twice within a period
cpu=$(($(nproc) - 1))
taskset -c "$cpu" nice -n -20 "$WORKLOADS/shares" &
wl=$!
PIDS+=($wl)
sleep 0.3
cpu0=$(cut -d' ' -f1 "/proc/$wl/schedstat")
t0=$(date +%s%N)
"$COLLECTOR" --no-status --pid "$wl" --interval $I --duration "$RUN" --frequency $F \
	--output-dir "$TMP/out" 2>"$TMP/log" || fail "collector exited $?: $(cat "$TMP/log")"
cpu1=$(cut -d' ' -f1 "/proc/$wl/schedstat")
t1=$(date +%s%N)
# the thread's share of the CPU while the collector ran, in ppm
share=$(((cpu1 - cpu0) * 1000000 / (t1 - t0)))

files=("$TMP"/out/ctxprof-"$wl"-*.pb.gz)
[ "${#files[@]}" -ge 4 ] && ok "${#files[@]} files for $RUN s at --interval $I" ||
	fail "${#files[@]} files for $RUN s at --interval $I"
# one line per file: start (ns since the epoch), duration (ns, 10 ms steps), samples
for f in "${files[@]}"; do
	"$PPROF" -raw "$f" 2>/dev/null | awk '
		/^Time:/ { t = $2 " " $3 }
		/^Duration:/ { d = $2 }
		/^samples\/count/ { s = 1; next }
		/^Locations/ { s = 0 }
		s && /^ +[0-9]+ +[0-9]+:/ { n += $1 }
		END { print t "|" d "|" n + 0 }'
done >"$TMP/windows"
# starts in ns since the epoch, Durations in ns (printed to 10 ms), samples
starts=() durs=() counts=()
while IFS='|' read -r time dur n; do
	starts+=("$(date -d "$time" +%s%N)")
	case $dur in
	*ms) durs+=("$(awk -v d="${dur%ms}" 'BEGIN { printf "%d", d * 1e6 }')") ;;
	*s) durs+=("$(awk -v d="${dur%s}" 'BEGIN { printf "%d", d * 1e9 }')") ;;
	*) durs+=("$(awk -v d="$dur" 'BEGIN { printf "%d", d * 1e9 }')") ;;
	esac
	counts+=("$n")
done <"$TMP/windows"
period=$((1000000000 / F))
# what the thread lacked of a whole CPU over the run, in ns
slack=$(((1000000 - share) * (t1 - t0) / 1000000))
last=$((${#starts[@]} - 1))
sum=0
for i in $(seq 0 $last); do
	# Duration is printed to 10 ms
	n=${counts[$i]} d=${durs[$i]} round=5000000
	if [ "$i" -lt "$last" ]; then
		# a full interval: to the ns, from the next file's start
		gap=$((starts[i + 1] - starts[i]))
		[ $((gap - d)) -le $round ] && [ $((d - gap)) -le $round ] ||
			fail "file $i: the next starts $gap ns later, its Duration says $d"
		[ $((gap - I * 1000000000)) -le 1000000 ] && [ $((I * 1000000000 - gap)) -le 1000000 ] ||
			fail "file $i: its window lasts $gap ns, not $I s"
	fi
	got=$((n * period))
	echo "file $i: $n samples = $((got / 1000000)) ms in $((d / 1000000)) ms"
	[ "$got" -le $((d + period + round)) ] ||
		fail "file $i: $n samples at $F Hz = $((got / 1000000)) ms in a $((d / 1000000)) ms window"
	if [ "$share" -ge 990000 ] && [ "$got" -lt $((d - period - round - slack)) ]; then
		fail "file $i: $n samples = $((got / 1000000)) ms in a $((d / 1000000)) ms window (the thread was on a CPU $((share / 10000))% of the time)"
	fi
	sum=$((sum + n))
done
[ "$share" -ge 990000 ] && ok "the thread had its CPU ($((share / 10000)).$((share / 1000 % 10))%): per-file lower bounds checked" ||
	echo "note: the thread had $((share / 10000))% of a CPU (busy machine): per-file lower bounds not checked"
read -r taken in_profile dropped <<<"$(summary_field "$TMP/log")"
[ "$sum" = "$in_profile" ] && ok "the files hold $sum samples, as the summary says" ||
	fail "the files hold $sum samples, the summary says $in_profile"
[ "$taken" -eq $((in_profile + dropped)) ] &&
	ok "samples reconcile: $taken taken = $in_profile in files + $dropped dropped" ||
	fail "samples do not reconcile: $taken taken != $in_profile + $dropped"
finish
