# shellcheck shell=bash
# Helpers for the OpenTelemetry tests: sourced, not run.
#
# otel_verdict TRACES: read `pprof -traces` output of a profile of
# otel_service (tests/workloads/otel/otel_service.c) and print, in ms:
#   span_ok span_bad    samples with a span_id label: ok when the span's
#                       handler (by the id's low byte) is on the stack, the
#                       trace_id is the span id twice, http.route and
#                       http.method are the handler's
#   out_ok out_bad      samples without a span_id: ok when no handler is on
#                       the stack and no trace_id or attribute label is there
#   out_traced          samples without a span_id but with a trace_id or an
#                       attribute label
#   span_nosvc          samples with a span_id but no service.name
#   between_labeled     samples in between_requests with any span label
#   service total       samples labeled service.name=otel-shop, all samples
#   gold gold_bad       samples with user.tier=gold; those not in checkout
#   bogus               samples with http.method=BOGUS (a value overridden)
otel_verdict() {
	awk '
	function ms(w) { if (w ~ /ms$/) return w + 0; if (w ~ /us$/) return w / 1000; if (w ~ /s$/) return w * 1000; return w + 0 }
	function flush(   kind, want, route, method, ok) {
		if (!nframes) return
		total += weight
		if (lab["service.name"] == "otel-shop") service += weight
		if (lab["http.method"] == "BOGUS") bogus += weight
		if (lab["user.tier"] == "gold") { gold += weight; if (!index(funcs, " handle_checkout ")) gold_bad += weight }
		if (index(funcs, " between_requests ") && (lab["span_id"] != "" || lab["trace_id"] != "" || lab["http.route"] != "")) between += weight
		if (lab["span_id"] != "") {
			kind = substr(lab["span_id"], 15, 2)
			want = kind == "01" ? "handle_checkout" : kind == "02" ? "handle_search" : kind == "03" ? "handle_login" : "?"
			route = kind == "01" ? "/checkout" : kind == "02" ? "/search" : "/login"
			method = kind == "02" ? "GET" : "POST"
			ok = index(funcs, " " want " ") && lab["trace_id"] == lab["span_id"] lab["span_id"] && lab["http.route"] == route && lab["http.method"] == method
			if (ok) span_ok += weight; else span_bad += weight
			if (lab["service.name"] != "otel-shop") span_nosvc += weight
		} else {
			if (lab["trace_id"] != "" || lab["http.route"] != "") out_traced += weight
			if (funcs ~ / handle_/ || lab["trace_id"] != "" || lab["http.route"] != "") out_bad += weight; else out_ok += weight
		}
		delete lab; funcs = " "; nframes = 0
	}
	BEGIN { funcs = " " }
	/^-+[+]-+$/ { flush(); next }
	/^ *[a-z_.]+:  / && !nframes { k = $1; sub(/:$/, "", k); lab[k] = $2; next }
	/^ +[0-9.]+[mun]?s +/ { weight = ms($1); nframes = 1; funcs = funcs $NF " "; next }
	nframes && NF { funcs = funcs $NF " " }
	END {
		flush()
		printf "%.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f\n", span_ok, span_bad, out_ok, out_bad, between, service, total, gold, gold_bad, bogus, out_traced, span_nosvc
	}' "$1"
}

# pct_at_least OK TOTAL PCT: OK is at least PCT % of TOTAL (TOTAL > 0)
pct_at_least() {
	[ "$2" -gt 0 ] && [ $(($1 * 100)) -ge $(($2 * $3)) ]
}

# otel_check TRACES NAME [late-key] [starts-unlabeled]: the checks every
# otel_service profile passes.  late-key: the service added user.tier to its
# key map while profiled.  starts-unlabeled: it published after the
# collector started, so its first samples (before the next read of its
# mappings, about a second) may lack labels: samples without a span label
# must then carry no trace label, but may be in a handler.
otel_check() {
	local span_ok span_bad out_ok out_bad between service total gold gold_bad bogus out_traced span_nosvc
	read -r span_ok span_bad out_ok out_bad between service total gold gold_bad bogus out_traced span_nosvc \
		<<<"$(otel_verdict "$1")"
	# TRACES holds every sample of the service, labeled or not: too few
	# means the machine starved it, which says nothing about the reader
	if [ "$total" -lt 50 ]; then
		echo "note: $2: only $total ms of the service's samples (machine busy): not judged"
		return
	fi
	echo "$2: span ok/bad $span_ok/$span_bad ms, outside ok/bad $out_ok/$out_bad ms, between_requests labeled $between ms, service.name $service of $total ms, user.tier=gold $gold ms ($gold_bad outside checkout), BOGUS $bogus ms"
	if pct_at_least "$span_ok" $((span_ok + span_bad)) 95; then
		ok "$2: $span_ok of $((span_ok + span_bad)) ms with a span label have its handler, trace id, http.route and http.method"
	else
		fail "$2: only $span_ok of $((span_ok + span_bad)) ms with a span label are right (want >= 95 %)"
	fi
	if [ "${4:-}" = starts-unlabeled ]; then
		[ "$out_traced" -eq 0 ] && ok "$2: no sample without a span label carries a trace label" ||
			fail "$2: $out_traced ms without a span label carry trace labels"
	elif pct_at_least "$out_ok" $((out_ok + out_bad)) 95; then
		ok "$2: $out_ok of $((out_ok + out_bad)) ms without a span label are outside the handlers, with no trace label"
	else
		fail "$2: $out_bad of $((out_ok + out_bad)) ms without a span label are in a handler or carry trace labels"
	fi
	[ "$between" -eq 0 ] && ok "$2: no sample between spans carries a span label" ||
		fail "$2: $between ms between spans carry span labels"
	if [ "${4:-}" = starts-unlabeled ]; then
		[ "$span_nosvc" -eq 0 ] && ok "$2: every sample with a span label has service.name" ||
			fail "$2: $span_nosvc ms with a span label lack service.name"
	else
		pct_at_least "$service" "$total" 95 && ok "$2: service.name=otel-shop on $service of $total ms" ||
			fail "$2: service.name=otel-shop on only $service of $total ms (want >= 95 %)"
	fi
	[ "$bogus" -eq 0 ] && ok "$2: a repeated key's last value wins (no BOGUS)" ||
		fail "$2: $bogus ms labeled with an overridden value"
	if [ "${3:-}" = late-key ]; then
		[ "$gold" -gt 0 ] && [ "$gold_bad" -eq 0 ] &&
			ok "$2: user.tier=gold (a key added to the key map later) on $gold ms, all in checkout" ||
			fail "$2: user.tier=gold on $gold ms, $gold_bad outside checkout"
	fi
}
