#!/usr/bin/env bash
# The context protocol under fire: stress_ctxprof (built with ThreadSanitizer)
# has writer threads publish (x, x ^ K) pairs through libctxprof tens of
# millions of times a second while its own reader thread on the other CPU
# checks them; the real BPF sampler reads the same slots at 10 kHz per CPU.
# No sample may carry a (span, root) pair that was not written together:
# torn reads must be rejected (counted), never emitted.
. "$(dirname "$0")/lib.sh"
need_root
STRESS=$OUTPUT/tests/stress_ctxprof_tsan
[ -x "$STRESS" ] || { echo "FAIL: $STRESS not built"; exit 1; }
K=0x5a5a5a5a12345678

# its context phase (--seconds) must outlast the collector's start and its
# 3.5 s: the lanes phase that follows makes a second region, with a consumer
# of its own that a collector draining the same lanes would rob (and pairs
# that are not x, x ^ K)
"$STRESS" --seconds 9 > "$TMP/stress.log" 2>&1 &
st=$!
PIDS+=($st)
sleep 0.5
"$COLLECTOR" --pid "$st" --frequency 10000 --duration 3.5 -o "$TMP/stress.pb.gz" 2>"$TMP/log"
rc=$?
wait $st
src=$?
cat "$TMP/log"
tail -3 "$TMP/stress.log"
[ $rc -eq 0 ] && ok "collector exited 0" || fail "collector exited $rc"
[ $src -eq 0 ] && ok "stress_ctxprof's own reader found no bad pair (TSan clean)" ||
	fail "stress_ctxprof failed (exit $src)"

"$PPROF" -raw "$TMP/stress.pb.gz" 2>/dev/null |
	sed -n 's/.*local_root_span_id:\[\([0-9a-f]*\)\].* span_id:\[\([0-9a-f]*\)\].*/\1 \2/p' > "$TMP/pairs"
n=$(wc -l < "$TMP/pairs")
bad=0
while read -r root span; do
	[ $((0x$span ^ K)) -eq $((0x$root)) ] || bad=$((bad + 1))
done < "$TMP/pairs"
if [ "$n" -ge 100 ] && [ "$bad" -eq 0 ]; then
	ok "$n sampled (span, root) rows, every one a pair written together"
else
	fail "$bad of $n sampled rows carry a pair never written together (want 0 of >= 100)"
fi
ok_ctx=$(sed -n 's/.*trace context: \([0-9]*\) samples with a valid context.*/\1/p' "$TMP/log")
torn=$(sed -n 's/.* \([0-9]*\) torn (rejected).*/\1/p' "$TMP/log")
echo "BPF: $ok_ctx samples with a valid context, $torn torn reads rejected"
[ "${ok_ctx:-0}" -gt 0 ] && ok "the sampler read contexts at 10 kHz" || fail "no context read"
check_reconciled "$TMP/log" "$TMP/stress.pb.gz"
finish
