#!/usr/bin/env bash
# Capabilities after start-up, on the host (root, every capability): mid-run,
# every thread of `collector --all` holds only CAP_SYS_PTRACE,
# CAP_DAC_READ_SEARCH and CAP_CHECKPOINT_RESTORE in its effective, permitted
# and bounding sets, nothing inheritable or ambient, and no_new_privs; and
# the profile still has named kernel frames (kallsyms was read before the
# drop).  Then a start with CAP_SYSLOG missing says what it costs.
# test_deploy.sh checks the same inside the container the DaemonSet runs.
. "$(dirname "$0")/lib.sh"
need_root
command -v capsh > /dev/null || skip "capsh (libcap2-bin) is not installed"

"$COLLECTOR" --all --duration 6 -o "$TMP/all.pb.gz" 2> "$TMP/log" &
col=$!
PIDS+=($col)
for _ in $(seq 1 100); do grep -q "^ctxprof: profiling" "$TMP/log" && break; sleep 0.1; done
sleep 1
want=$(printf '%016x' $(((1 << 19) | (1 << 2) | (1 << 40))))
bad=0 nr=0
for t in /proc/"$col"/task/*; do
	nr=$((nr + 1))
	s=$(awk '/^Cap(Inh|Prm|Eff|Bnd|Amb)|^NoNewPrivs/ { printf "%s%s ", $1, $2 }' "$t/status")
	[ "$s" = "CapInh:0000000000000000 CapPrm:$want CapEff:$want CapBnd:$want CapAmb:0000000000000000 NoNewPrivs:1 " ] ||
		{ bad=$((bad + 1)); echo "thread ${t##*/}: $s"; }
done
[ "$nr" -ge 4 ] && [ "$bad" -eq 0 ] &&
	ok "all $nr threads mid-run: CapEff = CapPrm = CapBnd = $want ($(capsh --decode="$want" | cut -d= -f2)), CapInh = CapAmb = 0, NoNewPrivs 1" ||
	fail "$bad of $nr threads hold other capabilities"
# the child that makes the unwinder's row chunks: CAP_BPF alone, its socket alone
bpf_child=$(pgrep -P "$col" -x ctxprof-bpf | head -1)
if [ -z "$bpf_child" ]; then
	fail "no ctxprof-bpf child of the collector"
else
	s=$(grep -E '^(CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' "/proc/$bpf_child/status" | tr -d '\t' | tr '\n' ' ')
	[ "$s" = "CapPrm:0000008000000000 CapEff:0000008000000000 CapBnd:$(awk '/^CapBnd/ { print $2 }' "/proc/$bpf_child/status") CapAmb:0000000000000000 NoNewPrivs:1 " ] &&
		[ "$(ls "/proc/$bpf_child/fd" | wc -l)" -eq 1 ] &&
		ok "the unwind chunk maker $bpf_child: CAP_BPF alone, no_new_privs, one fd (its socket)" ||
		fail "the unwind chunk maker $bpf_child: $s, fds $(ls "/proc/$bpf_child/fd" | tr '\n' ' ')"
fi
wait $col
rc=$?
[ $rc -eq 0 ] && ok "collector exited 0" || { cat "$TMP/log"; fail "collector exited $rc"; }
grep -q "^ctxprof: capabilities kept after start-up: cap_sys_ptrace,cap_dac_read_search,cap_checkpoint_restore; no new privileges$" "$TMP/log" &&
	ok "it says what it kept" || fail "no word of what it kept: $(cat "$TMP/log")"
awk '$2 ~ /^[Tt]$/ { print $3 }' /proc/kallsyms | sort -u > "$TMP/ksyms"
"$PPROF" -top -nodecount=1000 "$TMP/all.pb.gz" 2> /dev/null | awk 'NR > 6 { print $NF }' | sort -u > "$TMP/names"
kn=$(comm -12 "$TMP/ksyms" "$TMP/names" | wc -l)
[ "$kn" -ge 1 ] && ok "$kn kernel functions named after the drop (kallsyms read before it)" ||
	fail "no kernel function named"

# without CAP_SYSLOG: runs, says kernel frames stay unnamed
capsh --drop=cap_syslog -- -c "exec $COLLECTOR --all --duration 1 -o $TMP/nosyslog.pb.gz" 2> "$TMP/log2"
rc=$?
[ $rc -eq 0 ] && grep -q "missing CAP_SYSLOG: /proc/kallsyms shows no addresses" "$TMP/log2" &&
	ok "without CAP_SYSLOG it runs and says kernel frames stay unnamed" ||
	fail "without CAP_SYSLOG: exit $rc, $(head -3 "$TMP/log2")"
finish
