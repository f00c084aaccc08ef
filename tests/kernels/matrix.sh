#!/usr/bin/env bash
# The kernel matrix: boots each kernel (tests/kernels/guest.sh), runs
# tests/kernels/smoke.sh inside with the host-built collector, judges the profiles
# it brings back with the reference pprof, and prints a table kernel x check.
#   tests/kernels/matrix.sh [KERNEL...]   (default: bullseye bookworm trixie sid, bookworm-arm64 sid-arm64)
#   A KERNEL is a suite (amd64) or SUITE-arm64: an arm64 guest runs the arm64 build
#   (make ARCH=arm64: ARM64_OUTPUT, default build/arm64, its collector and workloads).
# Environment: COLLECTOR (default ./collector), OUTPUT (build), PPROF (build/pprof),
# SMOKE_SECONDS (each collector run, default 3), GUEST_TIMEOUT (default 400).
# A cell is ok, FAIL (why) or unsupported (the collector's own reason: a line
# naming the kernel version or feature it lacks).  Exit status 1 when a cell is
# FAIL, or unsupported where this kernel should support the check (EXPECT below),
# or a guest gave no result; 0 otherwise.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUTPUT=${OUTPUT:-build}
COLLECTOR=${COLLECTOR:-./collector}
PPROF=${PPROF:-$OUTPUT/pprof}
ARM64_OUTPUT=${ARM64_OUTPUT:-build/arm64}
CHECKS=(pid pid_fp all nofp labels offcpu otel otel_lib)
KERNELS=("$@")
[ ${#KERNELS[@]} -gt 0 ] || KERNELS=(bullseye bookworm trixie sid bookworm-arm64 sid-arm64)

# checks a kernel may answer "unsupported" to (--off-cpu's task storage and
# sched_switch's prev_state, from 5.11 and 5.18); everything else must be ok on
# every kernel from 5.10, nofp too (whole CFI stacks: on 5.10 by the tail-call
# walker, bpf_loop being 5.17+)
may_lack() { # SUITE CHECK
	case $1:$2 in
	bullseye*:offcpu) return 0 ;;
	esac
	return 1
}

[ -x "$PPROF" ] || { echo "matrix.sh: $PPROF is missing: make $OUTPUT/pprof" >&2; exit 2; }
RUN=$(mktemp -d /tmp/ctxprof-matrix.XXXXXX)
trap 'rm -rf "$RUN"' EXIT
WORKLOADS="shares unw_deep requests offcpu_requests otel_service otel_service_lib libotel_sdk.so"
# each architecture's collector and payload (the workloads smoke.sh runs)
payload() { # amd64|arm64 -> sets GCOLLECTOR, GPAYLOAD
	local out=$OUTPUT mk="make all" f
	GCOLLECTOR=$COLLECTOR
	if [ "$1" = arm64 ]; then
		out=$ARM64_OUTPUT mk="make ARCH=arm64 (make deps-cross first)" GCOLLECTOR=$ARM64_OUTPUT/collector
	fi
	GPAYLOAD=$RUN/payload-$1
	[ -x "$GCOLLECTOR" ] || { echo "matrix.sh: $GCOLLECTOR is missing: run $mk" >&2; exit 2; }
	for f in $WORKLOADS; do
		[ -x "$out/workloads/$f" ] || { echo "matrix.sh: $out/workloads/$f is missing: run $mk" >&2; exit 2; }
	done
	[ -d "$GPAYLOAD" ] && return
	mkdir -p "$GPAYLOAD"
	for f in $WORKLOADS; do cp "$out/workloads/$f" "$GPAYLOAD/"; done
}

# the four leaves' share of their sum near 10/20/30/40 %: within 8 points, or
# 5 standard deviations of a share of that many samples when it is wider (a
# guest under TCG on a loaded host takes few, and loses them in bursts when
# its vCPU is descheduled: a leaf's share is a noisy estimate there).  With
# --all the collector's own start-up (every process's tables, under TCG: seconds)
# takes the workload's vCPUs while it samples, and the leaf it preempts loses
# its share (bookworm's all: alpha 18, beta 10, gamma 40 % of 612 samples, the
# same run's pid exact): 15 points there (MIN)
judge_shares() { # PROFILE [MIN]
	"$PPROF" -top -sample_index=samples -nodecount=200 "$1" 2> /dev/null | awk -v min="${2:-8}" '
		$NF ~ /^leaf_(alpha|beta|gamma|delta)$/ { f[$NF] = $1; s += $1 }
		END {
			if (s == 0) { print "no leaf_* samples"; exit }
			split("alpha 10 beta 20 gamma 30 delta 40", e, " ")
			for (i = 1; i < 8; i += 2) {
				p = 100 * f["leaf_" e[i]] / s
				q = e[i + 1] / 100
				tol = 500 * sqrt(q * (1 - q) / s)
				if (tol < min) tol = min
				if (p < e[i + 1] - tol || p > e[i + 1] + tol)
					bad = bad sprintf(" %s %.0f%% (want %d +- %.0f)", e[i], p, e[i + 1], tol)
			}
			if (bad != "") printf "shares off in %d samples:%s\n", s, bad
		}'
}
# >= 90 % of unw_deep_leaf's samples whole: 120 unw_recurse frames and main.
# Weighted by each stack's time (its first line's value), not one vote a
# distinct stack: the one sample taken before the tables landed is a stack
# of its own, and counted alone it made half of a two-stack profile
judge_nofp() {
	"$PPROF" -traces "$1" 2> /dev/null | awk '
		function ms(v) {
			if (v ~ /ms$/) return v + 0; if (v ~ /us$/) return v / 1000
			if (v ~ /ns$/) return v / 1e6; return v * 1000
		}
		function end() { if (leaf) { n += w; if (rec >= 120 && m) whole += w } leaf = rec = m = w = 0 }
		/^-----------/ { end(); next }
		$1 ~ /^[0-9.]+(ns|us|ms|s)$/ && NF >= 2 { w = ms($1) }
		$NF == "unw_deep_leaf" { leaf = 1 } $NF == "unw_recurse" { rec++ } $NF == "main" { m = 1 }
		END {
			end()
			if (n == 0) print "no unw_deep_leaf stacks"
			else if (whole < 0.9 * n) printf "%.0f of %.0f ms of stacks whole\n", whole, n
		}'
}
# span_id labels on samples whose stack has a handler
judge_labels() {
	"$PPROF" -traces "$1" 2> /dev/null | awk '
		/^-----------/ { if (span && h) good++; span = h = 0; next }
		$1 == "span_id:" { span = 1 } $NF ~ /^handle_(checkout|search|login)$/ { h = 1 }
		END { if (span && h) good++; if (!good) print "no span_id-labelled handler samples" }'
}
# OpenTelemetry span labels on samples of their span's handler: 95 % at least
. "$HERE/../integration/otel_check.sh"
judge_otel() {
	local v
	v=$(otel_verdict <("$PPROF" -traces "$1" 2> /dev/null))
	set -- $v
	if [ "$1" -eq 0 ]; then
		echo "no OTel span-labelled samples"
	elif ! pct_at_least "$1" $(($1 + $2)) 95; then
		echo "span labels right on $1 of $(($1 + $2)) ms"
	fi
}
# off-CPU samples with the workload's sleep wait
judge_offcpu() {
	"$PPROF" -sample_index=off_cpu -top -nodecount=200 "$1" 2> /dev/null | grep -q 'wait_sleep' ||
		echo "no off_cpu samples in wait_sleep"
}

status=0
# the collector's own word that this kernel lacks what a check needs
LACKS='needs (Linux )?[0-9]+\.[0-9]+|this kernel lacks|has no bpf_loop|not supported|unsupported'
declare -A CELL
for k in "${KERNELS[@]}"; do
	out=$RUN/out-$k
	mkdir -p "$out"
	case $k in *-arm64) payload arm64 ;; *) payload amd64 ;; esac
	set +e
	"$HERE/guest.sh" -k "$k" -c "$GCOLLECTOR" -p "$GPAYLOAD" -o "$out" -t "${GUEST_TIMEOUT:-400}" \
		"$HERE/smoke.sh" "${SMOKE_SECONDS:-3}" > "$RUN/$k.log" 2>&1
	grc=$?
	set -e
	sed 's/^/  /' "$RUN/$k.log"
	for c in "${CHECKS[@]}"; do
		rc=$(cat "$out/$c.rc" 2> /dev/null || echo none)
		why=$(grep -v "^ctxprof: " "$out/$c.log" 2> /dev/null | tail -1 | sed "s/^collector: //" | cut -c1-60 || true)
		if [ "$rc" = none ]; then
			cell="FAIL (no result: guest exit $grc)"
		elif [ "$rc" != 0 ] && grep -qiE "$LACKS" "$out/$c.log"; then
			cell="unsupported ($(grep -iE "$LACKS" "$out/$c.log" | head -1 | cut -c1-60))"
		elif [ "$rc" != 0 ]; then
			cell="FAIL (exit $rc: $why)"
		elif [ ! -s "$out/$c.pb.gz" ]; then
			cell="FAIL (no profile)"
		else
			case $c in
			pid | pid_fp) bad=$(judge_shares "$out/$c.pb.gz") ;;
			all) bad=$(judge_shares "$out/$c.pb.gz" 15) ;;
			nofp) bad=$(judge_nofp "$out/$c.pb.gz") ;;
			labels) bad=$(judge_labels "$out/$c.pb.gz") ;;
			offcpu) bad=$(judge_offcpu "$out/$c.pb.gz") ;;
			otel | otel_lib) bad=$(judge_otel "$out/$c.pb.gz") ;;
			esac
			if [ -z "$bad" ]; then
				cell=ok
			elif grep -qiE "$LACKS" "$out/$c.log"; then
				# ran, with the capability switched off and said so
				cell="unsupported ($(grep -iE "$LACKS" "$out/$c.log" | head -1 | cut -c1-60))"
			else
				cell="FAIL ($bad)"
			fi
		fi
		case $cell in
		ok) ;;
		unsupported*) may_lack "$k" "$c" || { cell="$cell, expected"; status=1; } ;;
		*) status=1 ;;
		esac
		CELL[$k:$c]=$cell
	done
	CELL[$k:kernel]=$(cat "$out/uname" 2> /dev/null || echo "$k")
done

printf '\n| kernel |'
printf ' %s |' "${CHECKS[@]}"
printf '\n|---|'
printf -- '---|%.0s' "${CHECKS[@]}"
echo
for k in "${KERNELS[@]}"; do
	printf '| %s (%s) |' "${CELL[$k:kernel]}" "$k"
	for c in "${CHECKS[@]}"; do printf ' %s |' "${CELL[$k:$c]}"; done
	echo
done
exit $status
