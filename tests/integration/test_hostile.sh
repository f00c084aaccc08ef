#!/usr/bin/env bash
# Hostile targets and careless input (needs root: it loads BPF, chroots,
# drops capabilities).  One case per defect once found, and the cases that
# held, so that a regression in any of them fails:
#   outputs: "-"; /dev/null, /dev/full, a FIFO, a directory and an
#     immutable file refused before profiling, never opened;
#   a sample taken before an exec named from the image it ran in;
#   a library whose path another ELF took after it was mapped: named from
#     the file mapped, with and without /proc/PID/map_files;
#   a chroot whose paths are symlinks out of its root;
#   a process whose leader called pthread_exit();
#   a repeated --pid, a zombie, a kernel thread, missing capabilities;
#   the collector stopped (SIGSTOP) under a 10 kHz load: drops counted,
#     everything reconciles.
# The libctxprof region cases (recycled slots, bogus tid claims, dictionary
# replay) are in test_context*.sh; corrupt regions and every other parser
# are fuzzed (make fuzz) and unit-tested under ASan/UBSan.
. "$(dirname "$0")/lib.sh"
need_root

profile() { # collector args... -> exit code; log in $TMP/log
	"$COLLECTOR" --no-status "$@" 2>"$TMP/log"
}

# names of every function in a profile, from our own symbols (no re-symbolizing)
functions() {
	"$PPROF" -top -nodecount=1000 -symbolize=none "$1" 2>/dev/null |
		sed -n '/flat%/,$p' | awk 'NR > 1 { print $NF }'
}

echo "== outputs"
start_bg "$WORKLOADS/shares"
wl=$!
if profile --pid "$wl" --duration 0.5 -o - >"$TMP/stdout.pb.gz" &&
	"$PPROF" -top "$TMP/stdout.pb.gz" >/dev/null 2>&1; then
	ok "-o -: a valid profile on standard output"
else
	fail "-o -: $(cat "$TMP/log")"
fi
# refused before profiling: --duration 30 must not run
early() { # what, args...
	local what=$1 t0 t1
	shift
	t0=$SECONDS
	if profile --pid "$wl" --duration 30 "$@"; then
		fail "$what: exit 0"
		return
	fi
	t1=$SECONDS
	if [ $((t1 - t0)) -lt 10 ] && [ "$(wc -l <"$TMP/log")" -eq 1 ]; then
		ok "$what refused at once: $(cat "$TMP/log")"
	else
		fail "$what: after $((t1 - t0)) s: $(cat "$TMP/log")"
	fi
}
early "-o a directory" -o "$TMP"
# never opened, never replaced (test_output_hostile.sh has the planted ones)
early "-o /dev/null" -o /dev/null
early "-o /dev/full" -o /dev/full
mkfifo "$TMP/fifo"
early "-o a FIFO" -o "$TMP/fifo"
[ -c /dev/null ] && [ -c /dev/full ] && [ -p "$TMP/fifo" ] && ok "the devices and the FIFO are untouched" ||
	fail "$(ls -l /dev/null /dev/full "$TMP/fifo")"
touch "$TMP/immutable.pb.gz"
if chattr +i "$TMP/immutable.pb.gz" 2>/dev/null; then
	early "-o an immutable file" -o "$TMP/immutable.pb.gz"
	chattr -i "$TMP/immutable.pb.gz"
else
	echo "note: chattr +i unsupported on $TMP, immutable case not exercised"
fi
early "--output-dir a file" --interval 5 --output-dir /etc/hostname
kill "$wl"

echo "== exec: samples before it named from the old image"
"$WORKLOADS/exec_switch" 2 2 &
pid=$!
PIDS+=($pid)
sleep 0.2
profile --pid "$pid" --duration 6 --frequency 499 -o "$TMP/exec.pb.gz"
fns=$(functions "$TMP/exec.pb.gz")
before=$(flat_pct "$TMP/exec.pb.gz" exec_switch_before)
grep -qx exec_switch_before <<<"$fns" && grep -qx exec_switch_after <<<"$fns" &&
	ok "both images named: exec_switch_before and exec_switch_after" ||
	fail "exec: functions named: $(echo $fns)"
cut=$(sed -n 's/.*outside executable mappings=\([0-9]*\).*/\1/p' "$TMP/log")
[ "${cut:-1}" -eq 0 ] && ok "exec: no stack cut at an address outside the image's mappings" ||
	fail "exec: ${cut:-?} stacks cut: named from the wrong image?"

echo "== a mapped library whose path another ELF took"
mkdir -p "$TMP/plant"
cp "$WORKLOADS/libplant_real.so" "$TMP/plant/libplant.so"
start_bg "$WORKLOADS/plant" "$TMP/plant/libplant.so" >"$TMP/plant.out"
pid=$!
sleep 0.3
cp "$WORKLOADS/libplant_fake.so" "$TMP/plant/new.so"
mv "$TMP/plant/new.so" "$TMP/plant/libplant.so"
check_plant() { # what, profile
	local fns
	fns=$(functions "$2")
	if grep -qx ATTACKER_NAME <<<"$fns"; then
		fail "$1: frames named from the planted file"
	elif grep -qx plant_real_work <<<"$fns"; then
		ok "$1: named from the file mapped (plant_real_work), never the impostor"
	else
		fail "$1: plant_real_work not named: $(echo $fns)"
	fi
}
profile --pid "$pid" --duration 2 -o "$TMP/plant.pb.gz"
check_plant "root (map_files)" "$TMP/plant.pb.gz"
# without CAP_SYS_ADMIN and CAP_CHECKPOINT_RESTORE map_files is closed: the
# path is opened, and taken only if it is the inode mapped
if command -v capsh >/dev/null; then
	capsh --drop=cap_sys_admin,cap_checkpoint_restore -- -c \
		"$COLLECTOR --no-status --pid $pid --duration 2 -o $TMP/plant2.pb.gz" 2>"$TMP/log"
	fns=$(functions "$TMP/plant2.pb.gz")
	grep -qx ATTACKER_NAME <<<"$fns" && fail "no map_files: named from the planted file" ||
		ok "no map_files: the impostor's names never appear"
else
	echo "note: capsh missing, the path fallback is not exercised"
fi
kill "$pid"

echo "== a chroot whose paths are symlinks out of its root"
root=$TMP/chroot
mkdir -p "$root/lib64" "$root/lib/x86_64-linux-gnu"
cp "$WORKLOADS/plant" "$root/plant"
cp "$WORKLOADS/libplant_real.so" "$root/libplant.so"
cp /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
cp /lib/x86_64-linux-gnu/libc.so.6 "$root/lib/x86_64-linux-gnu/"
chroot "$root" /plant /libplant.so >"$TMP/chroot.out" &
pid=$!
PIDS+=($pid)
sleep 0.3
# the mapped library's path now leads out of the root, to a host ELF
ln -sf "$WORKLOADS/libplant_fake.so" "$root/libplant.so"
ln -sf "../../../../../../../../..$WORKLOADS/libplant_fake.so" "$root/lib/x86_64-linux-gnu/libc.so.6"
capsh --drop=cap_sys_admin,cap_checkpoint_restore -- -c \
	"$COLLECTOR --no-status --pid $pid --duration 2 -o $TMP/chroot.pb.gz" 2>"$TMP/log"
fns=$(functions "$TMP/chroot.pb.gz")
if grep -qx ATTACKER_NAME <<<"$fns"; then
	fail "chroot: a symlink out of the root named frames from a host file"
elif [ -s "$TMP/chroot.pb.gz" ]; then
	ok "chroot: symlinks out of the root never opened (host names absent)"
else
	fail "chroot: no profile: $(cat "$TMP/log")"
fi
kill "$pid"

echo "== a process whose leader called pthread_exit()"
"$WORKLOADS/leader_exit" --seconds 5 >"$TMP/le.pid" &
PIDS+=($!)
sleep 0.5
pid=$(cat "$TMP/le.pid")
profile --pid "$pid" --duration 2 -o "$TMP/leader.pb.gz"
fns=$(functions "$TMP/leader.pb.gz")
grep -qx leader_exit_worker_spin <<<"$fns" && grep -qx worker <<<"$fns" &&
	ok "leader gone: the workers' frames named (leader_exit_worker_spin <- worker)" ||
	fail "leader gone: functions named: $(echo $fns)"

echo "== careless starts"
one_line() { # what, pattern, command...
	local what=$1 pattern=$2 rc
	shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc -ne 0 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q -- "$pattern" "$TMP/err"; then
		ok "$what -> exit $rc: $(cat "$TMP/err")"
	else
		fail "$what -> exit $rc: $(cat "$TMP/err")"
	fi
}
one_line "--pid twice" "--pid given twice" "$COLLECTOR" --pid 1 --pid 2
kthread=$(awk '$2 == "(kthreadd)" { print $1 }' /proc/[0-9]*/stat 2>/dev/null | head -1)
one_line "a kernel thread" "is a kernel thread" "$COLLECTOR" --pid "${kthread:-2}" --duration 1
sh -c 'sleep 30 & exec sleep 0.1' &
parent=$!
sleep 0.5
zombie=$(awk -v pp="$parent" '$4 == pp && $3 == "Z" { print $1 }' /proc/[0-9]*/stat 2>/dev/null | head -1)
if [ -n "$zombie" ]; then
	one_line "a zombie" "has exited (a zombie" "$COLLECTOR" --pid "$zombie" --duration 1
else
	# the reaper was quick: make one for certain
	python3 -c 'import os,time,subprocess,sys
p = os.fork()
if p == 0: os._exit(0)
time.sleep(0.3)
r = subprocess.run([sys.argv[1], "--pid", str(p), "--duration", "1"], capture_output=True, text=True)
print(r.returncode, r.stderr.strip())' "$COLLECTOR" >"$TMP/z"
	grep -q "^[1-9].*has exited (a zombie" "$TMP/z" && ok "a zombie -> $(cat "$TMP/z")" ||
		fail "a zombie -> $(cat "$TMP/z")"
fi
kill "$parent" 2>/dev/null
start_bg "$WORKLOADS/shares"
wl=$!
capsh --drop=cap_sys_ptrace -- -c "$COLLECTOR --no-status --pid $wl --duration 0.5 -o $TMP/np.pb.gz" \
	2>"$TMP/err" >/dev/null
grep -q "missing CAP_SYS_PTRACE" "$TMP/err" && ok "without CAP_SYS_PTRACE: named in one line" ||
	fail "without CAP_SYS_PTRACE: $(cat "$TMP/err")"
one_line "without CAP_BPF/CAP_PERFMON" "missing capability CAP_BPF and CAP_PERFMON" \
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$COLLECTOR" --pid "$wl" \
	--duration 1

echo "== the collector stopped under load"
"$COLLECTOR" --no-status --pid "$wl" --frequency 10000 --ring-size 64 --duration 7 \
	-o "$TMP/stop.pb.gz" 2>"$TMP/log" &
col=$!
sleep 1.5
kill -STOP $col
sleep 5
kill -CONT $col
wait $col
rc=$?
ring_full=$(sed -n 's/.*ring_full=\([0-9]*\).*/\1/p' "$TMP/log")
[ $rc -eq 0 ] && [ "${ring_full:-0}" -gt 0 ] &&
	ok "SIGSTOP for 5 s at 10 kHz: exit 0, $ring_full samples dropped as ring_full" ||
	fail "SIGSTOP: exit $rc, ring_full=${ring_full:-?}: $(tail -3 "$TMP/log")"
check_reconciled "$TMP/log" "$TMP/stop.pb.gz"
kill "$wl"
finish
