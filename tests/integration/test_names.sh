#!/usr/bin/env bash
# Names that follow the files mapped when the samples were taken (root).
# A workload spins 2 s in a function of library A, dlclose()s it and spins
# 2 s in a function of library B, which dlopen() puts where A was; the two
# libraries are built here from one source, so their code sits at the same
# addresses.  Then the same with B's bytes copied over A in place (same
# path, same inode) and A opened again.  The workload says how much CPU time
# each phase took, so neither function can have more samples than that at
# -F: a profile naming B's samples with A's function (or the other way) is
# wrong, and fails.  Frames
# whose file the collector cannot vouch for are named by their mapping only,
# counted in the summary.
. "$(dirname "$0")/lib.sh"
need_root
DLSWAP=$WORKLOADS/dlswap
[ -x "$DLSWAP" ] || { echo "FAIL: $DLSWAP not built"; exit 1; }
HZ=499
PHASE=2

cat > "$TMP/lib.c" <<'SRC'
__attribute__((noinline)) unsigned long NAME(unsigned long n)
{
	volatile unsigned long x = 0;
	unsigned long i;

	for (i = 0; i < n; i++)
		x += i * i;
	return x;
}
SRC
cc -shared -fPIC -O1 -g -DNAME=alpha_spin -o "$TMP/liba.so" "$TMP/lib.c" || { echo "FAIL: cc"; exit 1; }
cc -shared -fPIC -O1 -g -DNAME=beta_spin -o "$TMP/libb.so" "$TMP/lib.c" || { echo "FAIL: cc"; exit 1; }

# samples whose leaf is @fn, from pprof -traces
leaf_samples() {
	"$PPROF" -traces -sample_index=samples "$1" 2>/dev/null | awk -v fn="$2" '
		/^-+[+]-+$/ { leaf = 1; next }
		leaf && NF >= 2 && $2 == fn { n += $1 } { if (NF >= 2 && $1 ~ /^[0-9]+$/) leaf = 0 }
		END { print n + 0 }'
}

check() {
	local what=$1 lib_a=$2 lib_b=$3 extra=${4:-}
	local pb="$TMP/$what.pb.gz" log="$TMP/$what.log" max_a max_b total a b cpu_a cpu_b
	"$DLSWAP" "$lib_a" alpha_spin "$lib_b" beta_spin $PHASE $extra 2>"$TMP/$what.out" &
	local pid=$!
	PIDS+=($pid)
	"$COLLECTOR" --pid "$pid" -F $HZ -o "$pb" 2>"$log"
	wait "$pid"
	cat "$TMP/$what.out"
	grep -E "samples:|by mapping only|mappings:" "$log"
	a=$(leaf_samples "$pb" alpha_spin)
	b=$(leaf_samples "$pb" beta_spin)
	read -r cpu_a cpu_b <<<"$(sed -n 's/^dlswap: cpu \([0-9.]*\) \([0-9.]*\)$/\1 \2/p' "$TMP/$what.out")"
	# a phase's CPU time at -F, and a little for the timer's jitter
	max_a=$(awk -v c="$cpu_a" -v hz=$HZ 'BEGIN { print int(c * hz * 1.05 + 5) }')
	max_b=$(awk -v c="$cpu_b" -v hz=$HZ 'BEGIN { print int(c * hz * 1.05 + 5) }')
	echo "$what: alpha_spin $a samples (at most $max_a), beta_spin $b samples (at most $max_b)"
	[ "$a" -le "$max_a" ] && ok "$what: alpha_spin has no more samples than its phase ran" ||
		fail "$what: alpha_spin has $a samples, more than its phase ran: some are beta_spin's"
	[ "$b" -le "$max_b" ] && ok "$what: beta_spin has no more samples than its phase ran" ||
		fail "$what: beta_spin has $b samples, more than its phase ran: some are alpha_spin's"
	[ "$a" -gt 0 ] && [ "$b" -gt 0 ] && ok "$what: both functions named" ||
		fail "$what: a function is missing (alpha $a, beta $b)"
	# the kernel's reports of new mappings date the swap: (almost) every
	# sample is named, none left to its mapping
	total=$(summary_field "$log" | awk '{ print $2 }')
	if grep -q "no kernel reports of new mappings" "$log"; then
		echo "no mapping events here: samples of the swap's second may be named by mapping only"
	elif [ $((a + b)) -ge $((total * 9 / 10)) ]; then
		ok "$what: $((a + b)) of $total samples named alpha_spin or beta_spin (>= 90 %)"
	else
		fail "$what: only $((a + b)) of $total samples named alpha_spin or beta_spin (want >= 90 %)"
	fi
	check_reconciled "$log" "$pb"
}

check swap "$TMP/liba.so" "$TMP/libb.so"
cp "$TMP/liba.so" "$TMP/libx.so"
check rewrite "$TMP/libx.so" "$TMP/libb.so" --rewrite
finish
