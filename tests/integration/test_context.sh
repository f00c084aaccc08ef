#!/usr/bin/env bash
# Trace context end to end: the requests workload (libctxprof, one span per
# request, the handler chosen by the span id's low byte) is profiled with the
# real BPF sampler, and the reference pprof tool checks that
#  - >= 95 % of the samples labeled span_id X have X's handler on the stack,
#  - samples outside any span carry no span label (and are not in a handler),
#  - tag labels carry the interned strings (endpoint=/checkout ...),
#  - pprof -tagfocus on one span id shows only that request's handler.
. "$(dirname "$0")/lib.sh"
need_root

start_bg "$WORKLOADS/requests" --threads 4
wl=$!
sleep 0.5
"$COLLECTOR" --pid "$wl" --duration 5 --frequency 999 -o "$TMP/ctx.pb.gz" 2>"$TMP/log"
rc=$?
cat "$TMP/log"
[ $rc -eq 0 ] || fail "collector exited $rc"
"$PPROF" -traces "$TMP/ctx.pb.gz" > "$TMP/traces" 2>/dev/null || fail "pprof -traces failed"

# per trace block: its span_id label and its functions; weights in ms
awk '
	function ms(w) { if (w ~ /ms$/) return w + 0; if (w ~ /us$/) return w / 1000; if (w ~ /s$/) return w * 1000; return w + 0 }
	function flush() {
		if (!nframes) return
		if (span != "") {
			kind = substr(span, 15, 2)
			want = kind == "01" ? "handle_checkout" : kind == "02" ? "handle_search" : kind == "03" ? "handle_login" : "?"
			if (index(funcs, " " want " ")) in_ok += weight; else in_bad += weight
		} else {
			if (funcs ~ / handle_/) out_bad += weight; else out_ok += weight
		}
		span = ""; funcs = " "; nframes = 0
	}
	BEGIN { funcs = " " }
	/^-+[+]-+$/ { flush(); next }
	/^ *[a-z_]+:  / && !nframes { if ($1 == "span_id:") span = $2; next }
	/^ +[0-9.]+[mun]?s +/ { weight = ms($1); nframes = 1; funcs = funcs $NF " "; next }
	nframes && NF { funcs = funcs $NF " " }
	END {
		flush()
		printf "in_span_ok %.0f in_span_bad %.0f outside_ok %.0f outside_bad %.0f\n", in_ok, in_bad, out_ok, out_bad
	}' "$TMP/traces" > "$TMP/verdict"
read -r _ in_ok _ in_bad _ out_ok _ out_bad < "$TMP/verdict"
cat "$TMP/verdict"
total=$((in_ok + in_bad))
if [ "$total" -gt 0 ] && [ $((in_ok * 100)) -ge $((total * 95)) ]; then
	ok "$in_ok of $total ms labeled with a span have that span's handler on the stack"
else
	fail "only $in_ok of $total ms labeled with a span have its handler (want >= 95 %)"
fi
out_total=$((out_ok + out_bad))
if [ "$out_total" -gt 0 ] && [ $((out_ok * 100)) -ge $((out_total * 95)) ]; then
	ok "$out_ok of $out_total ms without span label are outside the handlers"
else
	fail "$out_bad of $out_total ms without span label are inside a handler"
fi
"$PPROF" -raw "$TMP/ctx.pb.gz" 2>/dev/null | grep -A1 "between_requests" > /dev/null
"$PPROF" -tags "$TMP/ctx.pb.gz" > "$TMP/tags" 2>/dev/null
for ep in /checkout /search /login; do
	grep -q ": $ep\$" "$TMP/tags" && ok "tag endpoint=$ep" || fail "no endpoint=$ep tag label"
done

# one request's CPU with -tagfocus: only its handler
span=$(awk '$1 == "span_id:" { print $2; exit }' "$TMP/traces")
# anchored: pprof reads an all-digit value as a number, not as a string
"$PPROF" -top -tagfocus="span_id=^$span\$" "$TMP/ctx.pb.gz" > "$TMP/one" 2>/dev/null
case ${span:14:2} in 01) want=handle_checkout ;; 02) want=handle_search ;; *) want=handle_login ;; esac
if grep -q "$want" "$TMP/one" && ! grep -v "$want" "$TMP/one" | grep -q "handle_"; then
	ok "-tagfocus=span_id=$span shows $want only"
else
	fail "-tagfocus=span_id=$span: $(cat "$TMP/one")"
fi
grep -q "0 torn" "$TMP/log" || echo "note: torn reads counted (rejected, never emitted)"
check_reconciled "$TMP/log" "$TMP/ctx.pb.gz"
finish
