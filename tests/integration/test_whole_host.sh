#!/usr/bin/env bash
# Whole-host mode: while `collector --all` runs, a script starts 200
# short-lived processes, each spinning ~100 ms in a function of its own
# (burner N -> burn_NNN).  At least 90 % of them must be in the profile with
# that function named and with their own pid and comm labels, though every
# one has exited before the export.  Then --pid N --children follows a
# process tree: the children of a shell show up, an unrelated process not.
. "$(dirname "$0")/lib.sh"
need_root
BURNER=$WORKLOADS/burner
[ -x "$BURNER" ] || { echo "FAIL: $BURNER not built"; exit 1; }

"$COLLECTOR" --all --frequency 499 --duration 40 -o "$TMP/all.pb.gz" 2>"$TMP/log" &
col=$!
PIDS+=($col)
sleep 2
: > "$TMP/expected"
pair=()
for i in $(seq 0 199); do
	"$BURNER" "$i" &
	pair+=($!)
	printf '%d burn_%03d\n' $! "$i" >> "$TMP/expected"
	# two at a time: one per CPU (wait for these two only, not the collector)
	if [ ${#pair[@]} -eq 2 ]; then
		wait "${pair[@]}"
		pair=()
	fi
done
sleep 1
kill -INT $col
wait $col
rc=$?
cat "$TMP/log"
[ $rc -eq 0 ] && ok "collector --all exited 0" || fail "collector --all exited $rc"

"$PPROF" -traces "$TMP/all.pb.gz" > "$TMP/traces" 2>/dev/null || fail "pprof -traces failed"
# "pid comm function" for every trace block with a burn_ frame
awk '
	/^-+[+]-+$/ { if (fn != "") print pid, comm, fn; pid = comm = fn = ""; next }
	$1 == "pid:" { pid = $2; next }
	$1 == "comm:" { comm = $2; next }
	$NF ~ /^burn_[0-9][0-9][0-9]$/ { fn = $NF }
	END { if (fn != "") print pid, comm, fn }' "$TMP/traces" | sort -u > "$TMP/seen"
found=0
while read -r pid fn; do
	grep -q "^$pid burner $fn\$" "$TMP/seen" && found=$((found + 1))
done < "$TMP/expected"
echo "$found of 200 short-lived processes found with their function, pid and comm"
[ "$found" -ge 180 ] && ok "$found/200 >= 90 % of short-lived processes profiled and symbolized" ||
	fail "only $found/200 short-lived processes found (want >= 180)"
wrong=$(awk '$2 != "burner"' "$TMP/seen" | wc -l)
[ "$wrong" -eq 0 ] && ok "every burn_ sample carries comm=burner" || fail "$wrong burn_ rows with another comm"
check_reconciled "$TMP/log" "$TMP/all.pb.gz"

# --children: a shell's children are followed, a stranger is not
start_bg "$WORKLOADS/shares"
stranger=$!
bash -c "sleep 1; for i in 1 2 3 4; do $BURNER \$i; done" &
tree=$!
PIDS+=($tree)
"$COLLECTOR" --pid "$tree" --children --frequency 499 --duration 4 -o "$TMP/tree.pb.gz" 2>"$TMP/log2"
rc=$?
cat "$TMP/log2"
[ $rc -eq 0 ] && ok "--children exited 0" || fail "--children exited $rc"
"$PPROF" -top "$TMP/tree.pb.gz" > "$TMP/tree" 2>/dev/null
n=$(grep -c "burn_00[1-4]" "$TMP/tree")
[ "$n" -ge 3 ] && ok "--children: $n of the 4 children's functions in the profile" ||
	fail "--children: only $n of 4 children seen"
grep -q leaf_ "$TMP/tree" && fail "--children profiled an unrelated process" ||
	ok "--children left the unrelated process out"
kill "$stranger" 2>/dev/null

# --children once the root is gone: the tree's child is followed, and the
# collector waits on it without spinning (its root's pidfd stays readable)
bash -c "sleep 4 & sleep 1; exit 0" &
tree=$!
"$COLLECTOR" --pid "$tree" --children --frequency 99 --duration 3 -o "$TMP/orphan.pb.gz" \
	2>"$TMP/log_orphan"
cpu=$(sed -n 's/^ctxprof: collector CPU: \([0-9.]*\) s in all.*/\1/p' "$TMP/log_orphan")
if [ -n "$cpu" ] && awk -v c="$cpu" 'BEGIN { exit !(c < 1.0) }'; then
	ok "--children after its root exited: ${cpu} s of CPU in 3 s (no spinning)"
else
	fail "--children after its root exited: '${cpu:-?}' s of CPU in 3 s: $(tail -3 "$TMP/log_orphan")"
fi

# 1000 process spawns a second for 30 s: the registry, the labels and the
# mapping snapshots of exited processes are reclaimed, so the collector's
# memory stops growing (continuous mode exports, and forgets, every 5 s)
mkdir -p "$TMP/churn"
"$COLLECTOR" --all --interval 5 --max-files 2 --frequency 99 --duration 34 \
	--output-dir "$TMP/churn" 2>"$TMP/log3" &
col=$!
PIDS+=($col)
sleep 2
"$WORKLOADS/spawner" 1000 30 > "$TMP/spawned" &
sp=$!
rss=()
for _ in 1 2 3 4 5 6; do
	sleep 5
	rss+=("$(awk '/^VmRSS/ { print $2 }' /proc/$col/status 2>/dev/null || echo 0)")
done
wait $sp
wait $col
rc=$?
tail -4 "$TMP/log3"
echo "$(cat "$TMP/spawned"); collector RSS every 5 s (KiB): ${rss[*]}"
[ $rc -eq 0 ] && ok "--all under churn exited 0" || fail "--all under churn exited $rc"
grep -q "spawned [0-9]\{5\}" "$TMP/spawned" && ok "over 10000 processes spawned" ||
	fail "spawner did not reach its rate: $(cat "$TMP/spawned")"
second=${rss[1]} last=${rss[-1]}
if [ "$second" -gt 0 ] && [ "$last" -le $((second + second / 10)) ]; then
	ok "RSS bounded under 1000 spawns/s: ${second} KiB at 10 s, ${last} KiB at 30 s"
else
	fail "RSS grew under churn: ${second} KiB at 10 s, ${last} KiB at 30 s"
fi
finish
