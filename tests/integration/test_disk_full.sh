#!/usr/bin/env bash
# A disk that fills up does not stop profiling or lose what can be kept
# (needs root: BPF, and a small tmpfs mounted for the output directory).
#   1. --interval 1 --timelines into a 4 MiB tmpfs that another file fills
#      mid-run, then frees: the collector goes on, keeps the files it cannot
#      write in memory and writes them once there is room (every interval
#      has its profile and its timeline, their windows abut), says so in the
#      summary, exits 0, and the samples reconcile.
#   2. the disk still full when the collector stops: what it kept is
#      dropped, counted with its samples (unwritten), and taken = in files +
#      dropped still holds.
#   3. the disk full from the start, one file (-o): nothing can ever be
#      written: exit 1, one line saying so, the summary all the same.
. "$(dirname "$0")/lib.sh"
need_root

DISK=$TMP/disk
mkdir -p "$DISK"
mount -t tmpfs -o size=4m,mode=0700 ctxprof-test "$DISK" || skip "cannot mount a tmpfs here"
trap 'umount -l "$DISK" 2>/dev/null; cleanup' EXIT

fill_disk() { dd if=/dev/zero of="$DISK/filler" bs=64k 2>/dev/null; }

# the windows of the profiles in $1 (a glob's files, in name order) abut:
# each file's Time is the previous one's Time + 1 s; prints the sample sum
windows_abut() {
	local f t prev= sum=0 n bad=0
	for f in "$@"; do
		t=$(date -d "$("$PPROF" -raw "$f" 2>/dev/null | sed -n 's/^Time: \(.*\) UTC$/\1/p')" +%s%N)
		n=$(pprof_total "$f" samples)
		[ -n "$n" ] || { echo "FAIL: pprof cannot read $f" >&2; bad=1; }
		sum=$((sum + ${n:-0}))
		if [ -n "$prev" ] && [ $((t - prev - 1000000000)) -gt 1000000 -o \
			$((1000000000 - t + prev)) -gt 1000000 ]; then
			echo "FAIL: $(basename "$f") starts $((t - prev)) ns after the one before" >&2
			bad=1
		fi
		prev=$t
	done
	echo "$sum"
	return $bad
}

start_bg "$WORKLOADS/requests" --threads 1
wl=$!
sleep 0.3

echo "== 1. the disk fills up mid-run, then frees"
"$COLLECTOR" --no-status --pid "$wl" --interval 1 --timelines --duration 11 --frequency 99 \
	--output-dir "$DISK" 2>"$TMP/log1" &
col=$!
PIDS+=($col)
sleep 3.5
fill_disk
echo "disk full at $(date +%T): $(df -h --output=used,avail "$DISK" | tail -1)"
sleep 4
rm -f "$DISK/filler"
echo "disk freed at $(date +%T)"
wait $col
rc=$?
grep -v '^ctxprof: \(symbols\|unwinding\|user stacks\|collector CPU\|stack errors\)' "$TMP/log1"
[ $rc -eq 0 ] && ok "collector exited 0" || fail "collector exited $rc"
nfail=$(grep -c "cannot write the profile .*: No space left on device; kept in memory" "$TMP/log1")
[ "$nfail" -ge 2 ] && ok "$nfail profiles could not be written at first: kept in memory" ||
	fail "$nfail profile writes failed while the disk was full"
line=$(grep '^ctxprof: writes:' "$TMP/log1")
kept=$(sed -n 's/.* \([0-9]*\) files kept in memory.*/\1/p' <<<"$line")
late=$(sed -n 's/.* \([0-9]*\) of them written later.*/\1/p' <<<"$line")
dropped=$(sed -n 's/.* \([0-9]*\) files dropped.*/\1/p' <<<"$line")
[ -n "$kept" ] && [ "$kept" -ge 2 ] && [ "$late" = "$kept" ] && [ "$dropped" = 0 ] &&
	ok "the summary says: $line" || fail "summary: ${line:-no writes line}"
profiles=("$DISK"/ctxprof-"$wl"-*.pb.gz)
timelines=("$DISK"/ctxprof-"$wl"-*.timeline.json.gz)
[ "${#profiles[@]}" -ge 10 ] && [ "${#timelines[@]}" -eq "${#profiles[@]}" ] &&
	ok "${#profiles[@]} profiles and ${#timelines[@]} timelines: one per interval" ||
	fail "${#profiles[@]} profiles, ${#timelines[@]} timelines for 11 intervals"
bad=0
for t in "${timelines[@]}"; do
	gzip -dc "$t" | python3 -c 'import json, sys; json.load(sys.stdin)' 2>/dev/null || bad=$((bad + 1))
done
[ $bad -eq 0 ] && ok "every timeline is whole JSON" || fail "$bad timelines are not JSON"
ls -a "$DISK" | grep -q '\.tmp$' && fail "temporary files left: $(ls -a "$DISK")" ||
	ok "no temporary file left"
if sum=$(windows_abut "${profiles[@]}"); then
	ok "the profiles' windows abut: no interval lost"
else
	fail "the windows of the profiles do not abut"
fi
read -r taken in_profile dropped <<<"$(summary_field "$TMP/log1")"
[ "$sum" = "$in_profile" ] && ok "the files hold $sum samples, as the summary says" ||
	fail "the files hold $sum samples, the summary says $in_profile"
[ "$taken" -eq $((in_profile + dropped)) ] &&
	ok "samples reconcile: $taken taken = $in_profile in files + $dropped dropped" ||
	fail "samples do not reconcile: $taken taken != $in_profile + $dropped"
rm -f "$DISK"/*

echo "== 2. the disk still full at the end"
"$COLLECTOR" --no-status --pid "$wl" --interval 1 --duration 5 --frequency 99 \
	--output-dir "$DISK" 2>"$TMP/log2" &
col=$!
PIDS+=($col)
sleep 2.5
fill_disk
wait $col
rc=$?
[ $rc -eq 0 ] && ok "collector exited 0 (it wrote files before the disk filled)" ||
	fail "collector exited $rc: $(cat "$TMP/log2")"
line=$(grep '^ctxprof: writes:' "$TMP/log2")
dropped=$(sed -n 's/.* \([0-9]*\) files dropped, with \([0-9]*\) samples/\1 \2/p' <<<"$line")
unwritten=$(sed -n 's/.* unwritten=\([0-9]*\).*/\1/p' "$TMP/log2")
[ "${dropped%% *}" -ge 1 ] 2>/dev/null && [ "${dropped#* }" = "$unwritten" ] &&
	[ "$unwritten" -gt 0 ] && ok "kept files dropped at the end, counted: $line" ||
	fail "dropped at the end: '${line:-no writes line}', unwritten=$unwritten"
rm -f "$DISK/filler"
sum=0
for f in "$DISK"/ctxprof-"$wl"-*.pb.gz; do
	sum=$((sum + $(pprof_total "$f" samples)))
done
read -r taken in_profile dropped <<<"$(summary_field "$TMP/log2")"
[ "$sum" = "$in_profile" ] && [ "$taken" -eq $((in_profile + dropped)) ] &&
	ok "samples reconcile: $taken taken = $in_profile in files + $dropped dropped ($unwritten unwritten)" ||
	fail "samples: files hold $sum, summary: $taken taken, $in_profile in files, $dropped dropped"
rm -f "$DISK"/*

echo "== 3. the disk full from the start"
fill_disk
"$COLLECTOR" --no-status --pid "$wl" --duration 1.5 --frequency 99 -o "$DISK/one.pb.gz" \
	2>"$TMP/log3"
rc=$?
[ $rc -eq 1 ] && grep -q "^collector: no profile could be written$" "$TMP/log3" &&
	grep -q "^ctxprof: no profile written$" "$TMP/log3" &&
	ok "nothing could be written: exit 1, $(grep -c '^collector:' "$TMP/log3") error lines" ||
	fail "exit $rc: $(cat "$TMP/log3")"
read -r taken in_profile dropped <<<"$(summary_field "$TMP/log3")"
[ "${in_profile:-x}" = 0 ] && [ "$taken" -eq "$dropped" ] && [ "$taken" -gt 0 ] &&
	ok "the summary still reconciles: $taken taken = 0 written + $dropped dropped" ||
	fail "summary: $(grep 'samples:' "$TMP/log3")"
[ ! -e "$DISK/one.pb.gz" ] && ! ls -a "$DISK" | grep -q '\.tmp$' && ok "no file, no temporary file" ||
	fail "left in $DISK: $(ls -a "$DISK")"
finish
