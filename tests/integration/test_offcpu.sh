#!/usr/bin/env bash
# Off-CPU profiling per span (collector --off-cpu), end to end, on the
# offcpu_requests workload (tests/workloads/offcpu_requests.c): a server
# thread whose requests A-E each burn a known CPU time in a span and then
# wait once in a known way (A a mutex a helper holds, B nanosleep, C a pipe
# read, D write + fsync in $TMP, E a loopback TCP recv), with a 10 ms sleep
# outside any span between requests.  The workload measures every wait with its own clocks; the
# collector runs for the workload's whole measured life (the workload waits
# for SIGUSR1, sent once the collector is profiling; the collector stops when
# the workload exits), so both count the same waits.  Checks:
#  - without --off-cpu: two sample types (samples, cpu), no off_cpu label;
#  - --off-cpu: three sample types, cpu the default; off-CPU samples have 0
#    samples and 0 cpu, CPU samples 0 off_cpu;
#  - per kind: off-CPU ns within 5 % of the time the workload was blocked in
#    its wait (threshold 0 for D, whose fsync may block several times, some
#    shorter than the default threshold); CPU within 10 % of its burn;
#    CPU + off-CPU within 5 % of the span's wall time; the blocking kernel
#    function (below schedule/__schedule) and the workload's wait function
#    on >= 95 % of its off-CPU ns; off_cpu_class as expected_class says; the
#    span's root, thread and pid labels; pprof -top -sample_index=off_cpu
#    -tagfocus=span_id=... gives the same total as the samples;
#  - per span (check_spans), every span of A, B, C, E (and D with
#    threshold 0): its off-CPU within 5 % of its blocking call's time off
#    the CPU by the workload's own clocks, less what the thread's CPU clock
#    counted of its waits to run after wake-ups (measured by
#    tests/workloads/cpuclock/cpuclock_skew, started before the collector;
#    without it, D is a note);
#  - the between-requests sleeps: off-CPU samples without span label, all;
#  - its timeline (--timeline): every wait a slice inside its span, of its
#    class, with the stack it blocked in; per kind, the same total as the
#    profile; whole spans drawn >= 90 % as CPU samples and waits; the
#    server thread sorted first (offcpu_timeline_check.py);
#  - --off-cpu-threshold 17000: B's 15 ms sleeps left out and counted below
#    the threshold, A's 20 ms and C's 25 ms waits kept;
#  - the summary line "ctxprof: off-CPU: " (offcpu_counts reads it);
#  - storm (2 threads ping-ponging through pipes, --off-cpu-threshold 0):
#    exit 0, waits sampled away (or all recorded, none dropped), the scaled
#    off-CPU total within 10 % of the threads' blocked time;
#  - --all, and --children with the workload started after the collector:
#    each kind's waits found in its spans, of its class, in its frames.
# Each check prints one ok/FAIL line.  Without --off-cpu in the collector
# (collector --help) the test fails with one line saying so, after the checks
# that need no off-CPU support.
. "$(dirname "$0")/lib.sh"
need_root
WL=$WORKLOADS/offcpu_requests
# the oracle of the workload's CPU clock (span_corrections)
SKEW=$WORKLOADS/cpuclock_skew
[ -x "$WL" ] || { echo "FAIL: $WL not built (make all)"; exit 1; }
KINDS="A B C D E"
# a CPU sample's weight at --frequency 999, as every run here samples
PERIOD_NS=$((1000000000 / 999))

# --- what the off-CPU samples of each kind must show; adjust here only

# off_cpu_class of each kind's waits (between: the sleeps between requests)
expected_class() {
	case $1 in
	A) echo lock ;;		# futex
	B) echo sleep ;;	# nanosleep
	C) echo network ;;	# pipe (pipe, socket, epoll: network)
	D) echo io ;;		# fsync (disk)
	E) echo network ;;	# TCP recv
	between) echo sleep ;;
	esac
}

# kernel frames (an ERE matching one whole function name) where each kind
# blocks; D: /tmp is ext4 here, the others in case $TMP is not
blocking_frames() {
	case $1 in
	A) echo '^(futex_wait|__futex_wait|futex_wait_queue|futex_wait_queue_me)$' ;;
	B) echo '^(hrtimer_nanosleep|do_nanosleep)$' ;;
	C) echo '^(anon_pipe_read|pipe_read)$' ;;
	D) echo '^(vfs_fsync_range|do_fsync|ext4_sync_file|xfs_file_fsync|btrfs_sync_file|file_write_and_wait_range)$' ;;
	E) echo '^(sk_wait_data|tcp_recvmsg_locked|tcp_recvmsg)$' ;;
	esac
}

# the workload's function that waits, per kind
wait_function() {
	case $1 in A) echo wait_lock ;; B) echo wait_sleep ;; C) echo wait_pipe ;; D) echo wait_fsync ;; E) echo wait_socket ;; esac
}

# the high byte of each kind's span ids, as the labels write it
span_prefix() {
	case $1 in A) echo a1 ;; B) echo b2 ;; C) echo c3 ;; D) echo d4 ;; E) echo e5 ;; storm) echo 51 ;; esac
}

# "recorded below sampled dropped" from the summary line
# "ctxprof: off-CPU: ... N waits recorded, N below threshold, N sampled away, N dropped ..."
# ("?" for a count not found)
offcpu_counts() {
	local line k n out=
	line=$(grep -m1 '^ctxprof: off-CPU: ' "$1") || { echo "? ? ? ?"; return 1; }
	for k in 'waits recorded' 'below threshold' 'sampled away' 'dropped'; do
		n=$(printf '%s\n' "$line" | grep -o "[0-9][0-9]* $k" | head -1 | grep -o '^[0-9]*')
		out+="${n:-?} "
	done
	echo "${out% }"
}

# --- helpers

# true when |$1 - $2| <= $3 % of $2
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * p / 100) }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a * 100 / b; else print "n/a" }'; }
ms() { awk -v a="$1" 'BEGIN { printf "%.1f ms", a / 1e6 }'; }

# a pprof value with its unit ("1.23s", "950ms") in ns; -1 when unreadable
to_ns() {
	awk -v v="$1" 'BEGIN {
		n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
		m = u == "ns" ? 1 : (u == "us" || u == "µs") ? 1e3 : u == "ms" ? 1e6 : u == "s" ? 1e9 : u == "mins" ? 60e9 : u == "hrs" ? 3600e9 : -1
		printf "%.0f\n", (m < 0 || v == "") ? -1 : n * m }'
}

# field $3 of the workload's "kind $2 ..." line (or "between ..." / "storm ..."), 0 when absent
wl_field() {
	awk -v k="$2" -v f="$3" '
		($1 == "kind" && $2 == k) || ($1 == k && k != "kind") {
			for (i = 2; i < NF; i++) if ($i == f) { print $(i + 1); found = 1; exit } }
		END { if (!found) print 0 }' "$1"
}

# profile one whole workload run: NAME "WORKLOAD ARGS" COLLECTOR OPTIONS...
# -> $TMP/NAME.{out,log,pb.gz}; returns the collector's exit status.  With
# a server thread (the requests, not the storm), cpuclock_skew traces it
# first (-> $TMP/NAME.skew; see span_corrections)
profile_run() {
	local name=$1 wargs=$2 wl col rc oracle= tid o i
	local -a storm_oracles=()
	shift 2
	# shellcheck disable=SC2086
	"$WL" --wait-signal $wargs >"$TMP/$name.out" 2>"$TMP/$name.err" &
	wl=$!
	PIDS+=("$wl")
	if ! wait_for_line "$TMP/$name.out" '^ready$' 10 "$wl"; then
		echo "$name: workload never ready: $(cat "$TMP/$name.err")"
		return 1
	fi
	tid=$(sed -n 's/^server_tid //p' "$TMP/$name.out")
	if [ -n "$tid" ] && [ -x "$SKEW" ]; then
		# before the collector: programs on one tracepoint run in the
		# order they were attached (cpuclock_skew.c)
		"$SKEW" "$tid" >"$TMP/$name.skew" 2>"$TMP/$name.skew.err" &
		oracle=$!
		PIDS+=("$oracle")
		if ! wait_for_line "$TMP/$name.skew.err" '^attached$' 10 "$oracle"; then
			echo "$name: cpuclock_skew did not attach: $(cat "$TMP/$name.skew.err")"
			kill "$oracle" 2>/dev/null
			rm -f "$TMP/$name.skew"
			oracle=
		fi
	fi
	# the storm's threads, each traced likewise (-> $TMP/NAME.stormI.skew; storm_truth)
	while read -r i tid; do
		[ -x "$SKEW" ] || break
		"$SKEW" "$tid" >"$TMP/$name.storm$i.skew" 2>"$TMP/$name.storm$i.skew.err" &
		o=$!
		PIDS+=("$o")
		if wait_for_line "$TMP/$name.storm$i.skew.err" '^attached$' 10 "$o"; then
			storm_oracles+=("$o")
		else
			echo "$name: cpuclock_skew did not attach to storm thread $i"
			kill "$o" 2>/dev/null
			rm -f "$TMP/$name.storm$i.skew"
		fi
	done < <(sed -n 's/^storm_tid //p' "$TMP/$name.out")
	timeout -k 10 -s INT 90 "$COLLECTOR" --pid "$wl" --no-status "$@" -o "$TMP/$name.pb.gz" \
		2>"$TMP/$name.log" &
	col=$!
	if ! wait_for_line "$TMP/$name.log" '^ctxprof: profiling pid' 60 "$col"; then
		kill -9 "$wl" 2>/dev/null
		wait "$col"
		rc=$?
		echo "$name: the collector never started profiling (exit $rc):"
		cat "$TMP/$name.log"
		return $((rc ? rc : 1))
	fi
	# let the collector find the libctxprof region and the threads' slots
	sleep 1
	kill -USR1 "$wl"
	wait "$col"
	rc=$?
	wait "$wl" 2>/dev/null
	if [ -n "$oracle" ]; then
		kill -INT "$oracle"
		wait "$oracle" || { echo "$name: cpuclock_skew failed: $(cat "$TMP/$name.skew.err")"; rm -f "$TMP/$name.skew"; }
	fi
	for o in "${storm_oracles[@]}"; do
		kill -INT "$o"
		wait "$o" || echo "$name: a storm thread's cpuclock_skew failed"
	done
	echo "--- $name: collector $*: exit $rc"
	grep -E '^ctxprof: (samples|off-CPU|trace context|collector CPU)' "$TMP/$name.log"
	cat "$TMP/$name.out"
	return $rc
}

# run $1's correction of the workload's clocks per span, from
# cpuclock_skew's trace of the server thread ($TMP/$1.skew) -> $TMP/$1.corr,
# one "SPAN KIND NS" a span line of $TMP/$1.out: how far the thread's CPU
# clock strayed, over its blocking call, from the time it really ran (the
# two CPU clock reads of the call, when they returned, less the thread's
# stretches switched out between them), so that the call's time off the
# CPU is wall - CPU + NS.  The kernel starts a thread's CPU clock at its run
# queue's clock as last read, which after a wake-up that preempts (or wakes
# an idle CPU) is the wake-up's: the wait to run after it is on the
# thread's CPU clock (in no schedstat run delay either), while the wait,
# switch out to switch in, holds it too: 5-60 us a wake-up here, and an
# fsync blocks 2-4 times for 50-300 us.  Steal time counts the other way
# (off the CPU clock while running).  A span whose reads were not traced,
# or with a switch in unreported inside its call, gets "?" (not checked,
# counted).  Without the file (no cpuclock_skew), none: returns 1.
span_corrections() {
	[ -s "$TMP/$1.skew" ] || { rm -f "$TMP/$1.corr"; return 1; }
	awk 'NR == FNR {
			if ($1 == "stretch") { n++; in_[n] = $2; out[n] = $3 }
			if ($1 == "cpuclock") at[$3] = $2
			next
		}
		$1 == "span" {
			for (i = 5; i < NF; i += 2) v[$i] = $(i + 1)
			c0 = v["cpu_begin_ns"]; c1 = c0 + v["wait_cpu_ns"]
			if (!(c0 in at) || !(c1 in at)) { print $2, $4, "?"; next }
			k0 = at[c0]; k1 = at[c1]
			while (j < n && out[j + 1] < k0) j++
			# the thread runs as it reads its clock: each read inside a
			# stretch whose start is known, and every switch in between
			# seen (a stretch from 0 had its switch in unreported)
			known = j < n && in_[j + 1] && in_[j + 1] <= k0
			away = 0
			for (k = j + 1; k < n && in_[k + 1] <= k1; k++) {
				if (!in_[k + 1]) known = 0
				away += in_[k + 1] - out[k]
			}
			if (!known || !(in_[k] <= k1 && k1 <= out[k])) { print $2, $4, "?"; next }
			printf "%s %s %.0f\n", $2, $4, v["wait_cpu_ns"] - (k1 - k0 - away)
		}' "$TMP/$1.skew" "$TMP/$1.out" >"$TMP/$1.corr"
}

# the correction of kind $2's spans in run $1, summed (0 without one)
kind_correction() {
	awk -v k="$2" '$2 == k && $3 != "?" { c += $3 } END { printf "%.0f\n", c }' "$TMP/$1.corr" 2>/dev/null ||
		echo 0
}

# pprof -raw of $1 -> $1.types (the sample types line) and $1.tsv, one line a
# sample: count cpu off_cpu span root class tid pid frames (leaf first, ";"),
# "-" for an absent label
samples_tsv() {
	"$PPROF" -raw "$1" >"$1.raw" 2>/dev/null || return 1
	awk -v types="$1.types" '
		function flush(   i, k, v, s, rest) {
			if (!have) return
			for (k in lab) delete lab[k]
			s = labels
			while (match(s, /[A-Za-z_.]+:\[[^]]*\]/)) {
				rest = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
				k = rest; sub(/:\[.*/, "", k); v = rest; sub(/^[^[]*\[/, "", v); sub(/\]$/, "", v)
				lab[k] = v
			}
			nsamples[++n] = val[ci] "\t" val[pi] "\t" (oi ? val[oi] : 0) "\t" L("span_id") "\t" \
				L("local_root_span_id") "\t" L("off_cpu_class") "\t" L("thread_id") "\t" L("pid")
			locs[n] = locline
			have = 0
		}
		function L(k) { return (k in lab) && lab[k] != "" ? lab[k] : "-" }
		/^Samples:/ { sec = "s"; next }
		/^Locations/ { flush(); sec = "l"; next }
		/^Mappings/ { sec = "m"; next }
		sec == "s" && /^[a-z_]+\/[a-z]+/ {
			# pprof marks the default type "[dflt]": the types alone here
			gsub(/\[dflt\]/, "")
			print > types
			for (i = 1; i <= NF; i++) {
				if ($i == "samples/count") ci = i
				if ($i == "cpu/nanoseconds") pi = i
				if ($i == "off_cpu/nanoseconds") oi = i
			}
			next
		}
		sec == "s" && /^ *[0-9]+( +[0-9]+)*:/ {
			flush()
			split($0, parts, ":"); nv = split(parts[1], val, " ")
			locline = parts[2]; labels = ""; have = 1
			next
		}
		sec == "s" { labels = labels " " $0; next }
		sec == "l" && /^ +[0-9]+: / {
			id = $1; sub(/:$/, "", id); r = $0
			sub(/^ +[0-9]+: +(0x[0-9a-f]+ +)?(M=[0-9]+ +)?/, "", r)
			split(r, w, " "); fn[id] = w[1] == "" ? "?" : w[1]
			next
		}
		sec == "l" && NF { fn[id] = fn[id] ";" $1 }
		END {
			for (i = 1; i <= n; i++) {
				m = split(locs[i], ids, " "); f = ""
				for (j = 1; j <= m; j++) f = f (f == "" ? "" : ";") fn[ids[j]]
				print nsamples[i] "\t" f
			}
		}' "$1.raw" >"$1.tsv"
}

# facts about the samples of $1.tsv, one "key value" per line:
#   <kind> off|cpu|stack_ok|root_bad|tid_bad|pid_bad|class=<c> NS
#   between labeled|unlabeled NS, between class=<c> NS, none off NS
#   mixed N (samples with off-CPU and samples/cpu values both)
# (kind from the span id's high byte; "none": no span label)
span_facts() {
	local tid=$2 pid=$3
	awk -F'\t' -v tid="$tid" -v pid="$pid" \
		-v fa="$(blocking_frames A)" -v fb="$(blocking_frames B)" \
		-v fc="$(blocking_frames C)" -v fd="$(blocking_frames D)" -v fe="$(blocking_frames E)" \
		-v ua="$(wait_function A)" -v ub="$(wait_function B)" \
		-v uc="$(wait_function C)" -v ud="$(wait_function D)" -v ue="$(wait_function E)" '
		BEGIN {
			kind["a1"] = "A"; kind["b2"] = "B"; kind["c3"] = "C"; kind["d4"] = "D"; kind["e5"] = "E"
			kind["51"] = "storm"
			kf["A"] = fa; kf["B"] = fb; kf["C"] = fc; kf["D"] = fd; kf["E"] = fe
			uf["A"] = ua; uf["B"] = ub; uf["C"] = uc; uf["D"] = ud; uf["E"] = ue
		}
		# the blocking frame below a schedule frame, and the wait function
		function stack_ok(k, frames,   n, f, i, sched, blk, user) {
			n = split(frames, f, ";")
			for (i = 1; i <= n; i++) {
				if (f[i] ~ /^(__schedule|schedule)$/ && !blk) sched = 1
				if (f[i] ~ kf[k] && sched) blk = 1
				if (f[i] == uf[k]) user = 1
			}
			return blk && user
		}
		{
			cnt = $1; cpu = $2; off = $3; span = $4; root = $5; class = $6
			if (off > 0 && (cnt > 0 || cpu > 0)) mixed++
			k = span == "-" ? "none" : ((substr(span, 1, 2) in kind) ? kind[substr(span, 1, 2)] : "other")
			v[k " cpu"] += cpu
			if (off <= 0) next
			v[k " off"] += off
			v[k " class=" class] += off
			if (k ~ /^[ABCDE]$/) {
				if (stack_ok(k, $9)) v[k " stack_ok"] += off
				if (root != substr(span, 1, 2) "f" substr(span, 4)) v[k " root_bad"] += off
				if ($7 != tid) v[k " tid_bad"] += off
				if ($8 != pid) v[k " pid_bad"] += off
			}
			if ((";" $9 ";") ~ /;between_requests;/) {
				v["between " (span == "-" ? "unlabeled" : "labeled")] += off
				v["between class=" class] += off
			}
		}
		END {
			print "mixed", mixed + 0
			for (x in v) printf "%s %.0f\n", x, v[x]
		}' "$1.tsv"
}

# a fact from span_facts' output $1, 0 when absent
fact() { awk -v k="$2" '{ key = $1; for (i = 2; i < NF; i++) key = key " " $i; if (key == k) { print $NF; f = 1 } } END { if (!f) print 0 }' "$1"; }

# the workload's own consistency: in each span, CPU + wait = wall (nothing
# else took the thread off the CPU), within 5 %
check_workload() {
	local out=$1 k wall cpu wait wcpu runq
	for k in $KINDS; do
		wall=$(wl_field "$out" "$k" wall_ns) cpu=$(wl_field "$out" "$k" cpu_ns)
		wait=$(wl_field "$out" "$k" wait_ns) wcpu=$(wl_field "$out" "$k" wait_cpu_ns)
		runq=$(wl_field "$out" "$k" runq_ns)
		if [ "$(wl_field "$out" "$k" count)" = 0 ]; then
			fail "workload: no requests of kind $k"
		elif within $((cpu + wait - wcpu)) "$wall" 5; then
			ok "workload: kind $k: cpu $(ms "$cpu") + wait $(ms "$wait") = span wall $(ms "$wall") within 5 % (runqueue $(ms "$runq"))"
		else
			fail "workload: kind $k: cpu $(ms "$cpu") + wait $(ms "$wait") != span wall $(ms "$wall") (runqueue $(ms "$runq"): preempted inside its spans; a busy machine?)"
		fi
	done
}

# the default profile (no --off-cpu): still two sample types, no off-CPU label
check_default_profile() {
	profile_run default "--seconds 3 --dir $TMP" --frequency 999
	local rc=$?
	[ $rc -eq 0 ] || { fail "default run: collector exited $rc"; return; }
	samples_tsv "$TMP/default.pb.gz" || { fail "default run: pprof -raw failed"; return; }
	if [ "$(cat "$TMP/default.pb.gz.types")" = "samples/count cpu/nanoseconds" ]; then
		ok "without --off-cpu: sample types samples/count cpu/nanoseconds"
	else
		fail "without --off-cpu: sample types are '$(cat "$TMP/default.pb.gz.types")', want 'samples/count cpu/nanoseconds'"
	fi
	if grep -q 'off_cpu' "$TMP/default.pb.gz.raw"; then
		fail "without --off-cpu: the profile mentions off_cpu: $(grep -m1 off_cpu "$TMP/default.pb.gz.raw")"
	else
		ok "without --off-cpu: no off_cpu sample type or label"
	fi
}

# per-kind accuracy of run $1 (facts file $2) for the kinds $3, with what
# the workload printed in $TMP/$1.out
check_accuracy() {
	local run=$1 facts=$2 kinds=$3 out=$TMP/$1.out k off cpu wall wcpu wait blocked burn tol lo sd
	for k in $kinds; do
		off=$(fact "$facts" "$k off") cpu=$(fact "$facts" "$k cpu")
		wall=$(wl_field "$out" "$k" wall_ns) burn=$(wl_field "$out" "$k" cpu_ns)
		wait=$(wl_field "$out" "$k" wait_ns) wcpu=$(wl_field "$out" "$k" wait_cpu_ns)
		# (with the CPU clock's over-count after wake-ups: span_corrections)
		blocked=$((wait - wcpu + $(kind_correction "$run" "$k")))
		# a wait runs from the switch out to the switch back in: it holds
		# the wake-up's run delay, not a preemption's (runqueue time the
		# thread spent runnable, which wall - cpu holds): the truth lies
		# between blocked - runqueue and blocked (the span's runqueue time,
		# from schedstat: a bound on the wait's)
		lo=$((blocked - $(wl_field "$out" "$k" runq_ns)))
		tol=5
		if [ $((off * 100)) -ge $((lo * (100 - tol))) ] && [ $((off * 100)) -le $((blocked * (100 + tol))) ]; then
			ok "$run: kind $k: off-CPU $(ms "$off") = the workload's blocked time within $tol % ($(ms "$lo") to $(ms "$blocked"))"
		else
			fail "$run: kind $k: off-CPU $(ms "$off") not within $tol % of the workload's blocked time ($(ms "$lo") to $(ms "$blocked"); $(wl_field "$out" "$k" count) waits, shortest $(ms "$(wl_field "$out" "$k" min_wait_ns)"))"
		fi
		# the CPU side is sampled (one sample a period): a count of n has a
		# standard deviation of sqrt(n) samples, three of them allowed too
		# (kind D's 93 samples: 10 %)
		sd=$(awk -v c="$cpu" -v p="$PERIOD_NS" 'BEGIN { printf "%.0f", 3 * sqrt(c / p) * p }')
		if [ $(((cpu + off + sd) * 100)) -ge $(((wall - blocked + lo) * (100 - tol))) ] &&
			[ $(((cpu + off - sd) * 100)) -le $((wall * (100 + tol))) ]; then
			ok "$run: kind $k: CPU $(ms "$cpu") + off-CPU $(ms "$off") = span wall $(ms "$wall") within $tol % and 3 sd of the CPU samples ($(ms "$sd"))"
		else
			fail "$run: kind $k: CPU $(ms "$cpu") + off-CPU $(ms "$off") is $(pct $((cpu + off)) "$wall") % of the span wall time $(ms "$wall") (want within $tol %; runqueue inside the spans $(ms "$(wl_field "$out" "$k" runq_ns)"))"
		fi
	done
}

# per span, of the kinds $2 in run $1: the profile's off-CPU ns with that
# span_id against the workload's own clocks around its blocking call (its
# "span" lines: CLOCK_MONOTONIC and the thread's CPU clock): the call's wall
# time less its CPU time is the time it was off the CPU, from blocking to
# running again, the runqueue delay after the wake-up included (a wait ends
# when the thread runs again, as the app's clock sees it), once the CPU
# clock's own error is taken out (span_corrections: what it counted of the
# waits to run after wake-ups; on fsync's short blocks up to 28 % of the
# call before).  A preemption inside the call (an involuntary switch) is not
# a wait: there the truth is down to that less the call's runqueue delay
# (schedstat).  Each span within 5 % of those bounds, or 0.1 ms on a span
# so short that 5 % is less (an fsync's 0.9 ms: a VM's steal landing between
# the oracle's program and the collector's at a switch moves either by tens
# of us, and an fsync switches 2-4 times); one line per kind:
# spans, failures, the worst (% of the corrected wall - CPU), and the kind's
# total.  Without cpuclock_skew's stretches (it did not load), the kinds $3
# are reported with "note:", not failed: their waits are too short for the
# clock's error to stay under 5 %.
check_spans() {
	local run=$1 kinds=$2 soft=" ${3:-} " out=$TMP/$1.out k line
	[ -f "$TMP/$run.corr" ] && soft=" "
	awk -F'\t' '$3 > 0 && $4 != "-" { off[$4] += $3 } END { for (s in off) print s, off[s] }' \
		"$TMP/$run.pb.gz.tsv" >"$TMP/$run.spanoff"
	for k in $kinds; do
		line=$(awk -v k="$k" -v tol=5 -v floor=100000 -v corrf="$TMP/$run.corr" '
			BEGIN { while ((getline l < corrf) > 0) { split(l, f, " "); if (f[3] != "?") corr[f[1]] = f[3]; else skip[f[1]] = 1 } }
			NR == FNR { off[$1] = $2; next }
			$1 == "span" && $4 == k && ($2 in skip) { untraced++; next }
			$1 == "span" && $4 == k {
				for (i = 5; i < NF; i += 2) v[$i] = $(i + 1)
				hi = v["wait_ns"] - v["wait_cpu_ns"] + corr[$2]
				lo = v["involuntary"] > 0 ? hi - v["runq_ns"] : hi
				o = ($2 in off) ? off[$2] : 0
				n++; to += o; tw += hi
				r = hi > 0 ? o / hi : 0
				bad = o < lo * (100 - tol) / 100 && o < lo - floor ||
					o > hi * (100 + tol) / 100 && o > hi + floor
				if (bad) { nbad++; if (length(ex) < 300) ex = ex sprintf(" %s %.3f/%.3f ms (clock %+.3f)", $2, o / 1e6, hi / 1e6, corr[$2] / 1e6) }
				d = r - 1; if (d < 0) d = -d
				if (d > wd || n == 1) { wd = d; worst = r }
			}
			END { if (untraced) ex = ex sprintf(" (%d spans without a traced clock)", untraced)
				printf "%d %d %.1f %.1f %.1f%s\n", n, nbad, worst * 100, to / 1e6, tw / 1e6, ex }' \
			"$TMP/$run.spanoff" "$out")
		read -r n nbad worst to tw ex <<<"$line"
		if [ "$n" -gt 0 ] && [ "$nbad" -eq 0 ]; then
			ok "$run: kind $k: each of $n spans' off-CPU within 5 % of its blocking call's off-CPU time by the workload's clocks (worst $worst %; total $to of $tw ms)${ex:+ $ex}"
		elif [[ $soft == *" $k "* ]]; then
			echo "note: $run: kind $k: $nbad of $n spans' off-CPU not within 5 % of the workload's clocks (worst $worst %; total $to of $tw ms):$ex"
		else
			fail "$run: kind $k: $nbad of $n spans' off-CPU not within 5 % of the workload's clocks (worst $worst %; total $to of $tw ms):$ex"
		fi
	done
}

# CPU per kind, stacks, classes and labels of run $1 (facts $2)
check_samples() {
	local run=$1 facts=$2 out=$TMP/$1.out k off cpu burn good c want bad
	for k in $KINDS; do
		off=$(fact "$facts" "$k off") cpu=$(fact "$facts" "$k cpu") burn=$(wl_field "$out" "$k" cpu_ns)
		if within "$cpu" "$burn" 10; then
			ok "$run: kind $k: CPU samples $(ms "$cpu") = the workload's CPU in the span $(ms "$burn") within 10 %"
		else
			fail "$run: kind $k: CPU samples $(ms "$cpu") are $(pct "$cpu" "$burn") % of the workload's CPU in the span $(ms "$burn") (want 90-110 %)"
		fi
		if [ "$off" -eq 0 ] && [ "$run" = main ] && [ "$k" = D ]; then
			echo "note: main: kind D: no fsync wait reached the 1 ms threshold (the threshold-0 run checks them)"
			continue
		fi
		[ "$off" -gt 0 ] || { fail "$run: kind $k: no off-CPU samples with its span ids"; continue; }
		good=$(fact "$facts" "$k stack_ok")
		if [ $((good * 100)) -ge $((off * 95)) ]; then
			ok "$run: kind $k: $(pct "$good" "$off") % of its off-CPU ns in $(wait_function "$k") blocked in $(blocking_frames "$k") under schedule"
		else
			fail "$run: kind $k: only $(pct "$good" "$off") % of its off-CPU ns have $(wait_function "$k") and $(blocking_frames "$k") below schedule/__schedule (want >= 95 %): $(sort_stacks "$TMP/$run.pb.gz.tsv" "$k")"
		fi
		want=$(expected_class "$k")
		c=$(fact "$facts" "$k class=$want")
		if [ $((c * 100)) -ge $((off * 95)) ]; then
			ok "$run: kind $k: off_cpu_class=$want on $(pct "$c" "$off") % of its off-CPU ns"
		else
			fail "$run: kind $k: off_cpu_class=$want on only $(pct "$c" "$off") % of its off-CPU ns: $(grep "^$k class=" "$facts" | tr '\n' ' ')"
		fi
		bad=$(($(fact "$facts" "$k root_bad") + $(fact "$facts" "$k tid_bad") + $(fact "$facts" "$k pid_bad")))
		if [ "$bad" -eq 0 ]; then
			ok "$run: kind $k: off-CPU samples carry the span's local_root_span_id, the server's thread_id and pid"
		else
			fail "$run: kind $k: off-CPU ns with a wrong root $(fact "$facts" "$k root_bad"), thread_id $(fact "$facts" "$k tid_bad"), pid $(fact "$facts" "$k pid_bad")"
		fi
	done
	local lab unl bc
	lab=$(fact "$facts" "between labeled") unl=$(fact "$facts" "between unlabeled")
	if [ "$unl" -gt 0 ] && [ "$lab" -eq 0 ]; then
		ok "$run: between requests: $(ms "$unl") off-CPU in between_requests, none with a span label"
	else
		fail "$run: between requests: $(ms "$unl") off-CPU without span label, $(ms "$lab") with one (want > 0 and 0)"
	fi
	bc=$(fact "$facts" "between class=$(expected_class between)")
	if [ "$unl" -gt 0 ] && [ $((bc * 100)) -ge $(((unl + lab) * 95)) ]; then
		ok "$run: between requests: off_cpu_class=$(expected_class between)"
	else
		fail "$run: between requests: off_cpu_class=$(expected_class between) on $(ms "$bc") of $(ms $((unl + lab)))"
	fi
}

# the heaviest off-CPU stacks of kind $2 in $1 (for failure messages)
sort_stacks() {
	awk -F'\t' -v p="$(span_prefix "$2")" '$3 > 0 && substr($4, 1, 2) == p { w[$9] += $3 }
		END { for (s in w) printf "%.1f ms %s\n", w[s] / 1e6, s }' "$1" | sort -rn | head -3 | tr '\n' '|'
}

# pprof's own view agrees: -top -sample_index=off_cpu -tagfocus on one kind
check_pprof_view() {
	local run=$1 facts=$2 k=$3 total off
	total=$("$PPROF" -top -sample_index=off_cpu -tagfocus="span_id=^$(span_prefix "$k")" \
		"$TMP/$run.pb.gz" 2>/dev/null | sed -n 's/.*accounting for \([0-9.]*[a-zµ]*\),.*/\1/p' | head -1)
	off=$(fact "$facts" "$k off")
	if within "$(to_ns "$total")" "$off" 1; then
		ok "$run: pprof -top -sample_index=off_cpu -tagfocus=span_id=^$(span_prefix "$k"): $total, as the samples say"
	else
		fail "$run: pprof -top -sample_index=off_cpu -tagfocus=span_id=^$(span_prefix "$k") says '${total:-nothing}', the samples $(ms "$off")"
	fi
	# wall: the span's CPU and off-CPU time in one type
	# (every node shown: the default count leaves some out)
	total=$("$PPROF" -top -nodecount=100000 -nodefraction=0 -sample_index=wall \
		-tagfocus="span_id=^$(span_prefix "$k")" "$TMP/$run.pb.gz" 2>/dev/null |
		sed -n 's/.*accounting for \([0-9.]*[a-zµ]*\),.*/\1/p' | head -1)
	if within "$(to_ns "$total")" $((off + $(fact "$facts" "$k cpu"))) 1; then
		ok "$run: pprof -sample_index=wall for span $(span_prefix "$k"): $total = CPU $(ms "$(fact "$facts" "$k cpu")") + off-CPU $(ms "$off")"
	else
		fail "$run: pprof -sample_index=wall for span $(span_prefix "$k") says '${total:-nothing}', want CPU + off-CPU $(ms $((off + $(fact "$facts" "$k cpu"))))"
	fi
	if "$PPROF" -top "$TMP/$run.pb.gz" 2>/dev/null | grep -q '^Type: cpu$'; then
		ok "$run: the default sample type is cpu"
	else
		fail "$run: the default sample type is not cpu: $("$PPROF" -top "$TMP/$run.pb.gz" 2>&1 | grep -m1 '^Type')"
	fi
}

# sample types and the zeros of the other types
check_types() {
	local run=$1 facts=$2 types
	types=$(cat "$TMP/$run.pb.gz.types")
	if [ "$types" = "samples/count cpu/nanoseconds off_cpu/nanoseconds wall/nanoseconds" ]; then
		ok "$run: sample types samples/count cpu/nanoseconds off_cpu/nanoseconds wall/nanoseconds"
	else
		fail "$run: sample types '$types', want 'samples/count cpu/nanoseconds off_cpu/nanoseconds wall/nanoseconds'"
	fi
	if [ "$(fact "$facts" mixed)" -eq 0 ]; then
		ok "$run: off-CPU samples have 0 samples and 0 cpu"
	else
		fail "$run: $(fact "$facts" mixed) samples have an off_cpu value and a samples or cpu value"
	fi
}

# run $1's summary line: waits recorded >= $2
check_summary() {
	local run=$1 least=$2 rec below sampled dropped
	read -r rec below sampled dropped <<<"$(offcpu_counts "$TMP/$run.log")"
	if [ "$rec" = "?" ]; then
		fail "$run: no 'ctxprof: off-CPU: ... waits recorded' in the summary: $(grep -m1 'off-CPU' "$TMP/$run.log")"
	elif [ "$rec" -ge "$least" ]; then
		ok "$run: summary: $rec waits recorded (>= $least the workload made), $below below threshold, $sampled sampled away, $dropped dropped"
	else
		fail "$run: summary: $rec waits recorded, fewer than the $least the workload made"
	fi
}

# --- the run with what needs no off-CPU support
check_default_profile

if ! "$COLLECTOR" --help 2>&1 | grep -q -- '--off-cpu'; then
	fail "collector --help has no --off-cpu option: off-CPU profiling is not in this collector; every off-CPU check needs it"
	check_workload "$TMP/default.out"
	finish
fi

# the timeline of run $1 (facts $2, pid $3, server thread $4): waits inside
# their spans (offcpu_timeline_check.py; test_viewer.sh opens one in a browser)
check_timeline() {
	local run=$1 facts=$2 pid=$3 tid=$4 file=$TMP/$1.timeline.json.gz k args=()
	for k in A B C; do
		args+=(--kind "$(span_prefix "$k"):$(expected_class "$k"):$(wait_function "$k"):$(fact "$facts" "$k off")")
	done
	if python3 "$(dirname "$0")/offcpu_timeline_check.py" "$file" --pid "$pid" --tid "$tid" \
		"${args[@]}" --outside "between_requests:$(expected_class between)" >"$TMP/$run.tlcheck" 2>&1; then
		sed 's/^/   /' "$TMP/$run.tlcheck"
		ok "$run: the timeline draws every wait inside its span"
	else
		cat "$TMP/$run.tlcheck"
		fail "$run: offcpu_timeline_check.py"
	fi
}

# --- 1. default threshold (1000 us)
profile_run main "--seconds 6 --dir $TMP" --off-cpu --frequency 999 \
	--timeline "$TMP/main.timeline.json.gz"
rc=$?
[ $rc -eq 0 ] && ok "main: collector --off-cpu exit 0" || fail "main: collector --off-cpu exited $rc"
check_workload "$TMP/main.out"
tid=$(sed -n 's/^server_tid //p' "$TMP/main.out")
wlpid=$(grep -o 'profiling pid [0-9]*' "$TMP/main.log" | grep -o '[0-9]*$')
if samples_tsv "$TMP/main.pb.gz"; then
	span_facts "$TMP/main.pb.gz" "$tid" "$wlpid" >"$TMP/main.facts"
	span_corrections main || echo "note: main: no cpuclock_skew stretches: the workload's CPU clock taken as it reads"
	check_types main "$TMP/main.facts"
	check_accuracy main "$TMP/main.facts" "A B C E"
	check_spans main "A B C E"
	# D's fsync may block several times, some below the threshold: at most its blocked time
	off=$(fact "$TMP/main.facts" "D off")
	blocked=$(($(wl_field "$TMP/main.out" D wait_ns) - $(wl_field "$TMP/main.out" D wait_cpu_ns)))
	if [ $((off * 100)) -le $((blocked * 105)) ]; then
		ok "main: kind D: off-CPU $(ms "$off"), $(pct "$off" "$blocked") % of its blocked time $(ms "$blocked") (waits below 1 ms left out)"
	else
		fail "main: kind D: off-CPU $(ms "$off") for a blocked time of $(ms "$blocked") (want <= 105 %)"
	fi
	check_samples main "$TMP/main.facts"
	check_pprof_view main "$TMP/main.facts" A
	check_reconciled "$TMP/main.log" "$TMP/main.pb.gz"
	check_timeline main "$TMP/main.facts" "$wlpid" "$tid"
else
	fail "main: pprof -raw failed"
fi
least=0
for k in A B C E; do least=$((least + $(wl_field "$TMP/main.out" "$k" count))); done
least=$((least + $(wl_field "$TMP/main.out" between count)))
check_summary main "$least"

# --- 2. threshold 0: every wait, D's short ones too
profile_run all_waits "--seconds 6 --dir $TMP" --off-cpu --off-cpu-threshold 0 --frequency 999
rc=$?
[ $rc -eq 0 ] && ok "all_waits: collector exit 0" || fail "all_waits: collector exited $rc"
if samples_tsv "$TMP/all_waits.pb.gz"; then
	span_facts "$TMP/all_waits.pb.gz" "$(sed -n 's/^server_tid //p' "$TMP/all_waits.out")" \
		"$(grep -o 'profiling pid [0-9]*' "$TMP/all_waits.log" | grep -o '[0-9]*$')" >"$TMP/all_waits.facts"
	span_corrections all_waits ||
		echo "note: all_waits: no cpuclock_skew stretches: the workload's CPU clock taken as it reads"
	check_accuracy all_waits "$TMP/all_waits.facts" "$KINDS"
	check_spans all_waits "$KINDS" D
else
	fail "all_waits: pprof -raw failed"
fi
read -r _ below _ _ <<<"$(offcpu_counts "$TMP/all_waits.log")"
[ "$below" = 0 ] && ok "all_waits: 0 below threshold with --off-cpu-threshold 0" ||
	fail "all_waits: '$below' below threshold with --off-cpu-threshold 0"

# --- 3. threshold 17 ms: B's 15 ms sleeps and the 10 ms ones between requests left out
profile_run threshold "--seconds 4 --dir $TMP" --off-cpu --off-cpu-threshold 17000 --frequency 999
rc=$?
[ $rc -eq 0 ] && ok "threshold: collector exit 0" || fail "threshold: collector exited $rc"
if samples_tsv "$TMP/threshold.pb.gz"; then
	span_facts "$TMP/threshold.pb.gz" 0 0 >"$TMP/threshold.facts"
	b=$(fact "$TMP/threshold.facts" "B off")
	# a 15 ms sleep that a busy scheduler woke 2 ms late is a 17 ms wait:
	# rare, so under 5 % of B's sleeps
	bb=$(($(wl_field "$TMP/threshold.out" B wait_ns) - $(wl_field "$TMP/threshold.out" B wait_cpu_ns)))
	[ $((b * 100)) -le $((bb * 5)) ] && ok "threshold: B's 15 ms sleeps under a 17 ms threshold: $(ms "$b") of $(ms "$bb") kept (late wake-ups only)" ||
		fail "threshold: $(ms "$b") off-CPU of B's $(ms "$bb") of 15 ms sleeps under a 17 ms threshold (want under 5 %)"
	for k in A C; do
		off=$(fact "$TMP/threshold.facts" "$k off")
		blocked=$(($(wl_field "$TMP/threshold.out" "$k" wait_ns) - $(wl_field "$TMP/threshold.out" "$k" wait_cpu_ns)))
		within "$off" "$blocked" 5 && ok "threshold: kind $k's waits (>= 20 ms) kept: $(ms "$off") of $(ms "$blocked")" ||
			fail "threshold: kind $k: off-CPU $(ms "$off") for $(ms "$blocked") blocked in waits above the threshold"
	done
else
	fail "threshold: pprof -raw failed"
fi
read -r _ below _ _ <<<"$(offcpu_counts "$TMP/threshold.log")"
least=$(($(wl_field "$TMP/threshold.out" B count) + $(wl_field "$TMP/threshold.out" between count)))
if [ "$below" != "?" ] && [ "$below" -ge "$least" ]; then
	ok "threshold: $below waits below threshold (>= the $least sleeps of 10 and 15 ms)"
else
	fail "threshold: '$below' waits below threshold, want >= $least (B's sleeps and the sleeps between requests)"
fi

# --- 4. the switch storms, every wait recorded or timed and sampled away
# storm_truth NAME: from cpuclock_skew's stretches of each storm thread
# (sched_switch, CLOCK_MONOTONIC), the time it was off the CPU over its storm
# (begin_ns to begin_ns + wall_ns), summed, and its run delay (schedstat):
# "MIN MAX RUNQ" (a stretch whose switch in went unreported began somewhere
# after the one before it ended: MIN takes it from there, MAX as empty);
# nothing when a thread was not traced.  Its own wall - cpu is no measure of
# that: its CPU clock holds the run delay after a wake-up from another CPU
# (the clock's update skipped at the wake-up: cpuclock_skew.c), 5-60 us a
# wake-up, and a storm wakes its threads 10,000 times a second.
storm_truth() {
	local f i files=()
	for i in 0 1; do
		f=$TMP/$1.storm$i.skew
		[ -s "$f" ] || return
		files+=("$f")
	done
	awk 'FNR == 1 { fi++ }
		fi <= 2 && $1 == "stretch" { n[fi]++; a[fi, n[fi]] = $2; b[fi, n[fi]] = $3; next }
		fi == 3 && $1 == "storm_thread" {
			for (k = 2; k < NF; k++) v[$k] = $(k + 1)
			t = $2 + 1; lo = v["begin_ns"]; hi = lo + v["wall_ns"]
			on = unk = 0
			for (k = 1; k <= n[t]; k++) {
				s = a[t, k]; e = b[t, k]
				if (e <= lo || (s && s >= hi)) continue
				if (!s) {
					if (k > 1 && b[t, k - 1] > lo) unk += (e < hi ? e : hi) - b[t, k - 1]
					continue
				}
				on += (e < hi ? e : hi) - (s > lo ? s : lo)
			}
			max += v["wall_ns"] - on; min += v["wall_ns"] - on - unk
			q += v["runq_ns"]; seen++
		}
		END { if (seen == 2) printf "%.0f %.0f %.0f\n", min, max, q }' "${files[@]}" "$TMP/$1.out"
}

# storm_check NAME: the budget held (waits sampled away), and the off-CPU
# total against the threads' time off the CPU: a wait (switch out to switch
# in) holds the wake-up's run delay but not a preemption's, so the truth
# lies between off - runqueue and off (storm_truth).  Without the oracle,
# against the threads' own clocks: wall - cpu - runqueue to wall - cpu (with
# none, split: two CPUs, wall - cpu), less exact (their CPU clocks)
storm_check() {
	local name=$1 rc=$2 rt rec below sampled dropped off lo hi by q
	[ "$rc" -eq 0 ] && ok "$name: collector exit 0" || fail "$name: collector exited $rc"
	rt=$(wl_field "$TMP/$name.out" storm round_trips)
	echo "$name: $rt round trips, $(wl_field "$TMP/$name.out" storm per_second)/s; $(grep '^ctxprof: collector CPU' "$TMP/$name.log")"
	read -r rec below sampled dropped <<<"$(offcpu_counts "$TMP/$name.log")"
	if [ "$sampled" != "?" ] && [ "$sampled" -gt 0 ]; then
		ok "$name: $sampled waits sampled away ($rec recorded, $dropped dropped, ${rt:-?} round trips)"
	else
		fail "$name: $rec recorded, $below below threshold, $sampled sampled away, $dropped dropped for ${rt:-?} round trips: the budget did not sample"
	fi
	samples_tsv "$TMP/$name.pb.gz" || { fail "$name: pprof -raw failed"; return; }
	span_facts "$TMP/$name.pb.gz" 0 0 >"$TMP/$name.facts"
	off=$(fact "$TMP/$name.facts" "storm off")
	read -r lo hi q <<<"$(storm_truth "$name")"
	if [ -n "$hi" ]; then
		lo=$((lo - q)) by="the threads' time off the CPU (sched_switch)"
	else
		by="the threads' blocked time (their clocks)"
		read -r lo hi <<<"$(awk '$1 == "storm_thread" { for (i = 2; i < NF; i++) { if ($i == "blocked_ns") b += $(i + 1); if ($i == "runq_ns") q += $(i + 1) } }
			END { printf "%.0f %.0f\n", b - q, b }' "$TMP/$name.out")"
		[ "${3:-}" = split ] && lo=$hi
	fi
	if [ $((off * 100)) -ge $((lo * 90)) ] && [ $((off * 100)) -le $((hi * 110)) ]; then
		ok "$name: off-CPU $(ms "$off") within 10 % of $by ($(ms "$lo") to $(ms "$hi"))"
	else
		fail "$name: off-CPU $(ms "$off") not within 10 % of $by ($(ms "$lo") to $(ms "$hi"); involuntary switches: $(grep -o 'involuntary [0-9]*' "$TMP/$name.out" | tr '\n' ' '))"
	fi
}
profile_run storm "--storm --seconds 5" --off-cpu --off-cpu-threshold 0 --frequency 999
storm_check storm $?
profile_run storm_split "--storm --cpu split --seconds 4" --off-cpu --off-cpu-threshold 0 --frequency 999
storm_check storm_split $? split

# --- 5. --all and --children: the same waits, labeled, classed and placed
# mode_check RUN: per kind A-C, off-CPU time in the workload's spans (its
# pid, from its server_tid line: the main thread serves), >= 95 % of it of
# the kind's class and with its blocking frames, none with another pid
mode_check() {
	local run=$1 rc=$2 pid k off cls st
	[ "$rc" -eq 0 ] && ok "$run: collector exit 0" || fail "$run: collector exited $rc"
	pid=$(sed -n 's/^server_tid //p' "$TMP/$run.out")
	[ -n "$pid" ] || { fail "$run: the workload printed no server_tid"; return; }
	samples_tsv "$TMP/$run.pb.gz" || { fail "$run: pprof -raw failed"; return; }
	span_facts "$TMP/$run.pb.gz" "$pid" "$pid" >"$TMP/$run.facts"
	for k in A B C; do
		off=$(fact "$TMP/$run.facts" "$k off")
		cls=$(fact "$TMP/$run.facts" "$k class=$(expected_class "$k")")
		st=$(fact "$TMP/$run.facts" "$k stack_ok")
		if [ "$off" -gt 0 ] && [ $((cls * 100)) -ge $((off * 95)) ] &&
			[ $((st * 100)) -ge $((off * 95)) ] && [ "$(fact "$TMP/$run.facts" "$k pid_bad")" = 0 ]; then
			ok "$run: kind $k: $(ms "$off") off the CPU, $(pct "$cls" "$off") % $(expected_class "$k"), $(pct "$st" "$off") % in its blocking frames"
		else
			fail "$run: kind $k: $(ms "$off") off the CPU, $(pct "$cls" "$off") % $(expected_class "$k"), $(pct "$st" "$off") % in its blocking frames, $(ms "$(fact "$TMP/$run.facts" "$k pid_bad")") with another pid"
		fi
	done
}
start_bg "$WL" --seconds 6 --dir "$TMP" >"$TMP/all.out"
sleep 0.5
timeout -k 10 -s INT 60 "$COLLECTOR" --all --off-cpu --frequency 999 --duration 3 --no-status \
	-o "$TMP/all.pb.gz" 2>"$TMP/all.log"
mode_check all $?
# the workload a child of the profiled process, started after the collector
# (--children runs until --duration: the tree may outlive its root)
start_bg bash -c "sleep 1; '$WL' --seconds 3 --dir '$TMP' >'$TMP/children.out'; true"
timeout -k 10 -s INT 60 "$COLLECTOR" --pid $! --children --off-cpu --frequency 999 --duration 5 \
	--no-status \
	-o "$TMP/children.pb.gz" 2>"$TMP/children.log"
mode_check children $?
finish
