#!/usr/bin/env bash
# CPU hotplug: a CPU that goes offline takes its perf event with it, and the
# collector must open a new one when the CPU comes back.  A workload pinned
# to cpu1 (cpu_phases) runs while cpu1 goes offline for 2 s and comes back,
# is pinned there again, then switches to spin_after; spin_after's samples
# per second of its CPU time must be within 10 % of -F (without a new event
# on cpu1 it gets none).  With --pid, then --all.  Also: the summary counts
# the hotplug, and the perf event opener (the child that keeps CAP_PERFMON
# for this) holds that capability alone and goes with the collector.
. "$(dirname "$0")/lib.sh"
need_root

CPU1=/sys/devices/system/cpu/cpu1/online
FREQ=999
[ -w "$CPU1" ] || skip "cpu1 cannot be taken offline here (no $CPU1)"
[ "$(cat "$CPU1")" = 1 ] || skip "cpu1 is offline already"
# whatever happens, cpu1 comes back
trap 'echo 1 > "$CPU1" 2>/dev/null; cleanup' EXIT

set_cpu1() {
	local i
	echo "$1" > "$CPU1" 2>/dev/null || return 1
	for i in $(seq 50); do
		[ "$(cat "$CPU1")" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# spin_after's flat sample count in a profile
flat_count() {
	"$PPROF" -top -sample_index=samples -nodecount=200 "$1" 2>/dev/null |
		awk -v fn="$2" '$NF == fn { print $1; found = 1 } END { if (!found) print 0 }'
}

# the opener children of collector $1 (the sampler's, and the mapping
# events'): CAP_PERFMON alone, no_new_privs, one fd each
check_opener() {
	local child s n=0
	OPENER=
	for child in $(pgrep -P "$1" -x ctxprof-perf); do
		n=$((n + 1))
		s=$(grep -E '^(CapPrm|CapEff|CapAmb|NoNewPrivs):' "/proc/$child/status" | tr -d '\t' | tr '\n' ' ')
		[ "$s" = "CapPrm:0000004000000000 CapEff:0000004000000000 CapAmb:0000000000000000 NoNewPrivs:1 " ] &&
			ok "perf event opener $child: CAP_PERFMON alone, no_new_privs" ||
			fail "perf event opener $child: $s"
		[ "$(ls "/proc/$child/fd" | wc -l)" -eq 1 ] && ok "opener $child holds one fd (its socket)" ||
			fail "opener $child holds fds: $(ls -l "/proc/$child/fd" | tail -n +2)"
		OPENER="$OPENER $child"
	done
	[ "$n" -ge 1 ] || fail "no ctxprof-perf child of the collector"
}

# run_mode pid|all
run_mode() {
	local mode=$1 log=$TMP/$1.log pb=$TMP/$1.pb.gz wl col i n cpu_s rate
	OPENER=
	start_bg taskset -c 1 "$WORKLOADS/cpu_phases" > "$TMP/$mode.out"
	wl=$!
	if [ "$mode" = pid ]; then
		"$COLLECTOR" --pid "$wl" -F $FREQ -o "$pb" 2> "$log" &
	else
		"$COLLECTOR" --all -F $FREQ -o "$pb" 2> "$log" &
	fi
	col=$!
	PIDS+=("$col")
	for i in $(seq 300); do
		grep -q "^ctxprof: profiling" "$log" && break
		sleep 0.1
	done
	grep -q "^ctxprof: profiling" "$log" || { fail "$mode: collector did not start"; cat "$log"; return; }
	check_opener "$col"
	sleep 1
	if ! set_cpu1 0; then
		kill -INT "$col"
		skip "cpu1 cannot be taken offline here (writing 0 to $CPU1 failed)"
	fi
	sleep 2
	set_cpu1 1 || { fail "cpu1 did not come back online"; return; }
	# the kernel broke the affinity when cpu1 went: pin it there again
	taskset -p -c 1 "$wl" > /dev/null
	# the collector looks once a second
	sleep 2
	kill -USR1 "$wl"
	sleep 4
	kill -TERM "$wl"
	wait "$wl"
	[ "$mode" = all ] && kill -INT "$col"
	wait "$col" || fail "$mode: collector exited $?"
	cat "$log"
	for child in $OPENER; do
		kill -0 "$child" 2> /dev/null && fail "opener $child outlived the collector" ||
			ok "opener $child gone with the collector"
	done
	# the kernel's mapping reports came back on cpu1 too (a gap, counted)
	if grep -q "^ctxprof: mappings:.* reported" "$log"; then
		grep -Eq "^ctxprof: mappings:.* [1-9][0-9]* CPUs with a gap" "$log" &&
			ok "$mode: mapping events reopened on cpu1 (a gap counted)" ||
			fail "$mode: no mapping-event gap counted after cpu1 came back: $(grep mappings: "$log")"
	fi

	grep -q "^ctxprof: cpu 1 went offline" "$log" && grep -q "^ctxprof: cpu 1 came online" "$log" &&
		ok "$mode: said cpu 1 went and came back" || fail "$mode: no line for cpu 1 going and coming"
	grep -q "^ctxprof: CPUs: 2 online, 2 sampled; hotplug: 1 went offline, 1 came online; 0 event opens failed$" "$log" &&
		ok "$mode: summary counts the hotplug" || fail "$mode: summary: $(grep '^ctxprof: CPUs:' "$log")"
	cpu_s=$(sed -n 's/^after_cpu_s //p' "$TMP/$mode.out")
	n=$(flat_count "$pb" spin_after)
	rate=$(awk -v n="$n" -v s="$cpu_s" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }')
	echo "$mode: spin_after: $n samples in ${cpu_s} s of CPU on cpu1 after it came back: $rate/s"
	if awk -v r="$rate" -v f=$FREQ 'BEGIN { exit !(r >= 0.9 * f && r <= 1.1 * f) }'; then
		ok "$mode: cpu1 sampled at $rate/s after it came back (-F $FREQ)"
	else
		fail "$mode: cpu1 sampled at $rate/s after it came back, not within 10 % of $FREQ"
		# what the profile holds instead
		"$PPROF" -top -sample_index=samples -nodecount=15 "$pb" 2>&1 | sed 's/^/   /'
		"$PPROF" -top -sample_index=samples -nodecount=15 -tagfocus="pid=$wl" "$pb" 2>&1 |
			sed 's/^/   pid /'
	fi
}

run_mode pid
run_mode all
finish
