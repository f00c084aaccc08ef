#!/bin/sh
# The kernel smoke suite, run inside a guest by tests/kernels/matrix.sh (busybox sh):
# each check runs the collector on a workload from /payload and leaves, in /out,
# NAME.pb.gz (the profile), NAME.log (the collector's stderr) and NAME.rc (its exit
# status).  The host judges them with pprof (matrix.sh): nothing is judged here, as
# the guest has no pprof.
#   pid     --pid on shares (leaf CPU 10/20/30/40 %), the default unwinder
#   pid_fp  the same with --unwind fp
#   all     --all while shares runs
#   nofp    --pid on unw_deep (-fomit-frame-pointer, 120 frames), default unwinder
#   labels  --pid on requests (libctxprof span labels)
#   offcpu  --pid --off-cpu on offcpu_requests
#   otel    --pid on otel_service (OpenTelemetry thread context in the executable's TLS)
#   otel_lib  the same with otel_service_lib (in libotel_sdk.so's TLS)
# Usage: smoke.sh [SECONDS]   (each collector run's duration, default 3)
D=${1:-3}

run() { # NAME PID COLLECTOR-ARGS...
	name=$1 pid=$2
	shift 2
	t0=$(cut -d' ' -f1 /proc/uptime)
	# a hung collector costs its check, not the guest's other checks
	timeout $((D + 60)) collector ${pid:+--pid $pid} "$@" -d "$D" -o "/out/$name.pb.gz" \
		> "/out/$name.log" 2>&1
	rc=$?
	[ $rc != 124 ] && [ $rc != 143 ] || echo "collector: not done after $((D + 60)) s, killed" >> "/out/$name.log"
	echo $rc > "/out/$name.rc"
	echo "CHECK $name rc=$rc ($t0 -> $(cut -d' ' -f1 /proc/uptime) s): $(grep -v '^ctxprof: ' "/out/$name.log" | tail -1)"
}

# start WORKLOAD ARGS...: wl=its pid, its threads niced: the guest's vCPUs
# are slow (TCG), and a workload spinning on all of them would take the
# collector's start-up (its BPF verification: seconds there) three times as long
start() {
	"$@" & wl=$!
	sleep 0.5
	for t in /proc/$wl/task/*; do renice -n 10 -p "${t##*/}" > /dev/null; done
}

start ./shares --threads 2
run pid $wl
run pid_fp $wl --unwind fp
run all "" --all
kill $wl

start ./unw_deep
run nofp $wl
kill $wl

start ./requests --threads 2
run labels $wl
kill $wl

start sh -c 'exec ./offcpu_requests --seconds 600 > /out/offcpu_workload.log 2>&1'
run offcpu $wl --off-cpu
kill $wl

for w in otel otel_lib; do
	start ./otel_service${w#otel} --threads 2
	run $w $wl
	kill $wl
done
uname -r > /out/uname
