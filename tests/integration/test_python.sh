#!/usr/bin/env bash
# CPython 3.11 frames (root): Debian's /usr/bin/python3 and a program
# embedding libpython3.11.so, profiled with their Python functions
# interleaved with native frames.  Workloads in tests/workloads/python/ (each
# writes the qualname, file and line range of each of its code objects);
# the checks' readers in python_checks.sh (--selftest tests them).
#  1. shares.py under --pid, 999 Hz: each task's cumulative share within
#     PY_TOL (3) points of the script's own thread_time measure; >= 95 % of
#     samples have Python frames, and of those >= 95 % the whole chain
#     share_loop <- shares_main <- <module> then native frames to the root,
#     with no _PyEval_EvalFrameDefault left; nested calls, recursion, a
#     method, sorted(key=<lambda>) (native frames between <lambda> and
#     sort_work) and a generator expression under sum(); every Python
#     location with its function's file, start line, a line in its range;
#  2. the same with --python off: no Python name, _PyEval_EvalFrameDefault;
#  3. --pid of a launcher with --children, everything started after the
#     collector: 8 threads, each thread_work_N on its own thread only;
#     forks.py's child_work in each child, parent_work in the parent; the
#     embedding program's embedded_hot, down to its C caller and main;
#  4. --all: a python3 started after the collector, its late_work named;
#  5. hostile.py: frames damaged under the sampler (garbage, loops, fake
#     frames and code objects, unmapped pages), odd qualnames, short-lived
#     threads: the collector exits 0, counts failures, names nothing from a
#     lie, and names the frames again once the damage is undone.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/python_checks.sh"
need_root

PY=/usr/bin/python3
[ -x "$PY" ] || skip "no /usr/bin/python3"
ver=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
[ "$ver" = 3.11 ] || skip "/usr/bin/python3 is $ver, these tests are of CPython 3.11"
SRC=$ROOT/tests/workloads/python
EMBED=$WORKLOADS/embed
CORRUPT_DIR=$WORKLOADS/python
[ -x "$EMBED" ] && [ -f "$CORRUPT_DIR/corrupt.so" ] ||
	{ echo "FAIL: $EMBED or $CORRUPT_DIR/corrupt.so not built (make all, with python3-dev: make deps)"; exit 1; }
ldd "$EMBED" | grep -q 'libpython3\.11\.so' || fail "$EMBED does not link libpython3.11.so"
TOL=${PY_TOL:-3}
SECS=${PY_SECONDS:-6}
ROOTS='^(main|Py_BytesMain|Py_RunMain|__libc_start_call_main|__libc_start_main|_start)$'
# native frames of sorted(key=): list_sort_impl and builtin_sorted are static
# ("[python3.11]" without python3.11-dbg); PyObject_CallOneArg calls the key
SORT_NATIVE='^(PyObject_CallOneArg|list_sort_impl|list_sort|builtin_sorted|_PyObject_VectorcallTstate|method_vectorcall_FASTCALL_KEYWORDS)$'
# sum() resuming a generator: gen_iternext and gen_send_ex2 are static too
GEN_NATIVE='^(builtin_sum_impl|builtin_sum|gen_iternext|gen_send_ex2|gen_send_ex|PyIter_Next|\[python3\.11\])$'

PYOPT=(--python on)
if ! "$COLLECTOR" --help 2>&1 | grep -q -- '--python'; then
	fail "the collector has no --python option (collector --help): the CPython feature has not landed; checking what can be checked without it"
	PYOPT=()
fi

# collect NAME COLLECTOR-ARGS...: profile to $TMP/NAME.pb.gz, log in
# $TMP/NAME.log; pprof text in NAME.tsv and NAME.raw
collect() {
	local name=$1 rc
	shift
	timeout 120 "$COLLECTOR" --no-status "$@" -o "$TMP/$name.pb.gz" 2>"$TMP/$name.log"
	rc=$?
	[ $rc -eq 0 ] && ok "$name: collector exited 0" ||
		{ fail "$name: collector exited $rc"; tail -5 "$TMP/$name.log" | sed 's/^/   /'; }
	if [ ! -s "$TMP/$name.pb.gz" ]; then
		fail "$name: no profile"
		: >"$TMP/$name.tsv"
		: >"$TMP/$name.raw"
		return 1
	fi
	traces_tsv "$TMP/$name.pb.gz" >"$TMP/$name.tsv" || fail "$name: pprof -traces failed"
	"$PPROF" -raw "$TMP/$name.pb.gz" >"$TMP/$name.raw" 2>&1 || fail "$name: pprof -raw failed"
}

# the summary's Python line, and Python frames in some samples
check_py_summary() {
	local name=$1 n
	if [ -z "$(py_summary "$TMP/$name.log")" ]; then
		fail "$name: no 'ctxprof: python: ' line in the summary"
		return
	fi
	py_summary "$TMP/$name.log" | sed 's/^/   /'
	n=$(py_samples "$TMP/$name.log")
	[ "${n:-0}" -gt 0 ] && ok "$name: the summary counts $n samples with Python frames" ||
		fail "$name: the summary counts '${n:-no}' samples with Python frames"
}

# "+" "name": samples that hold the function at all, as a share of BASE
pct_of() { awk -v n="$1" -v m="$2" 'BEGIN { printf "%.2f", m ? 100 * n / m : 0 }'; }

# --- 1. shares.py under --pid
"$PY" "$SRC/shares.py" $((SECS + 2)) "$TMP/shares.out" &
wl=$!
PIDS+=("$wl")
sleep 1
collect shares --pid "$wl" --duration "$SECS" --frequency 999 "${PYOPT[@]}"
wait "$wl" || fail "shares.py exited non-zero"
F=$TMP/shares.out
[ -s "$F" ] || fail "shares.py wrote nothing"
"$PPROF" -top -nodecount=25 "$TMP/shares.pb.gz" 2>/dev/null | sed -n '5,25p' | sed 's/^/   /'
check_py_summary shares

# each task's share: the samples holding its frame (callees included, as
# the script's thread_time around each call measures it) over all samples
while read -r _ name want; do
	read -r n m <<<"$(sample_share "$TMP/shares.tsv" "$F" 1 'at(name)' -v name="$name")"
	got=$(pct_of "$n" "$m")
	if awk -v g="$got" -v w="$want" -v t="$TOL" 'BEGIN { d = g - w; exit !(d <= t && d >= -t) }' &&
		[ "$n" -gt 0 ]; then
		ok "shares: $name $got % of samples (script measured $want %)"
	else
		fail "shares: $name $got % of samples, not within $TOL points of the script's $want %"
	fi
done < <(grep '^share ' "$F")

check_share "shares: samples with Python frames" "$TMP/shares.tsv" "$F" 1 'npy() > 0' 95
check_share "shares: Python stacks whole: share_loop <- shares_main <- <module>, then native frames to the root" \
	"$TMP/shares.tsv" "$F" 'npy() > 0' \
	'(i = seq("share_loop;shares_main;<module>")) && after(i + 2, roots) && !py(n)' 95 -v roots="$ROOTS"
check_share "shares: no _PyEval_EvalFrameDefault left where Python frames stand" "$TMP/shares.tsv" "$F" \
	'npy() > 0' '!at("_PyEval_EvalFrameDefault")' 95
check_share "shares: nested calls nest_leaf <- nest_b <- nest_a <- share_loop" "$TMP/shares.tsv" "$F" \
	'at("nest_leaf")' 'seq("nest_leaf;nest_b;nest_a;share_loop")' 95
check_share "shares: recursion: fib at least 4 deep" "$TMP/shares.tsv" "$F" 'at("fib")' 'count("fib") >= 4' 50
check_share "shares: fib's recursion ends at fib_task <- share_loop" "$TMP/shares.tsv" "$F" \
	'at("fib")' '(i = seq("fib;fib_task;share_loop")) && count("fib") == i - at("fib") + 1' 95
check_share "shares: method Worker.crunch <- share_loop" "$TMP/shares.tsv" "$F" \
	'at("Worker.crunch")' 'seq("Worker.crunch;share_loop")' 95
check_share "shares: <lambda>, then sorted()'s native frames, then sort_work <- share_loop" \
	"$TMP/shares.tsv" "$F" 'at("<lambda>")' \
	'native_between(at("<lambda>"), at("sort_work"), re) && seq("sort_work;share_loop")' 95 -v re="$SORT_NATIVE"
check_share "shares: the generator expression, then sum()'s native frames, then gen_work <- share_loop" \
	"$TMP/shares.tsv" "$F" 'at("gen_work.<locals>.<genexpr>")' \
	'native_between(at("gen_work.<locals>.<genexpr>"), at("gen_work"), re) && seq("gen_work;share_loop")' 95 \
	-v re="$GEN_NATIVE"
check_lines "shares" "$TMP/shares.raw" "$F" share_loop Worker.crunch nest_leaf
check_reconciled "$TMP/shares.log" "$TMP/shares.pb.gz"

# --- 2. --python off
if [ ${#PYOPT[@]} -gt 0 ]; then
	"$PY" "$SRC/shares.py" 5 "$TMP/off.out" &
	wl=$!
	PIDS+=("$wl")
	sleep 1
	collect off --pid "$wl" --duration 3 --frequency 999 --python off
	wait "$wl"
	read -r n m <<<"$(sample_share "$TMP/off.tsv" "$TMP/off.out" 1 'npy() > 0')"
	[ "$m" -gt 0 ] && [ "$n" -eq 0 ] && ok "--python off: no Python function in $m samples" ||
		fail "--python off: $n of $m samples have Python functions"
	read -r n m <<<"$(sample_share "$TMP/off.tsv" "$TMP/off.out" 1 'at("_PyEval_EvalFrameDefault")')"
	at_least "$n" "$m" 50 && ok "--python off: _PyEval_EvalFrameDefault in $n of $m samples" ||
		fail "--python off: _PyEval_EvalFrameDefault in $n of $m samples"
else
	fail "--python off: not run (no --python option)"
fi

# --- 3. children started after the collector: threads, forks, embedding
cat >"$TMP/launch.sh" <<EOF
# its children start once the collector samples (60 s at most)
for i in \$(seq 600); do [ -e "$TMP/launch.go" ] && break; sleep 0.1; done
sleep 0.3
"$PY" "$SRC/threads.py" 4 "$TMP/threads.out" &
"$PY" "$SRC/forks.py" 4 "$TMP/forks.out" &
"$EMBED" 4 &
echo \$! >"$TMP/embed.pid"
wait
EOF
bash "$TMP/launch.sh" &
launcher=$!
PIDS+=("$launcher")
(wait_for_line "$TMP/children.log" '^ctxprof: profiling pid' 60 $$ && touch "$TMP/launch.go") &
collect children --pid "$launcher" --children --duration 6 --frequency 999 "${PYOPT[@]}"
wait "$launcher"
check_py_summary children
T=$TMP/threads.out
if [ -s "$T" ]; then
	for k in 0 1 2 3 4 5 6 7; do
		tid=$(awk -v n="thread_work_$k" '$1 == "tid" && $2 == n { print $3 }' "$T")
		read -r n m <<<"$(sample_share "$TMP/children.tsv" "$T" 'at(name)' 'tid == want' \
			-v name="thread_work_$k" -v want="$tid")"
		[ "$m" -gt 0 ] && [ "$n" -eq "$m" ] &&
			ok "threads: thread_work_$k in $m samples, all on its own thread $tid" ||
			fail "threads: thread_work_$k in $m samples, $n of them on its thread $tid"
	done
	check_share "threads: thread_spin <- thread_work_N <- thread_start, down to Thread._bootstrap" \
		"$TMP/children.tsv" "$T" 'atre(tw)' \
		'(i = atre(tw)) && f[i - 1] == "thread_spin" && f[i + 1] == "thread_start" && after(i, "^Thread\\._bootstrap$")' 95 \
		-v tw='^thread_work_[0-7]$'
else
	fail "threads.py wrote nothing"
fi
K=$TMP/forks.out
if [ -s "$K" ]; then
	# each process: its work function in most of its samples (the rest: its
	# start-up, fork(), waitpid(), its exit), and always under the right callers
	for who in $(awk '$1 == "pid" { print $2 "=" $3 }' "$K"); do
		w=${who%%=*}_work p=${who#*=}
		check_share "forks: ${who%%=*} $p: $w in its samples" "$TMP/children.tsv" "$K" \
			'pid == want' "at(\"$w\")" 80 -v want="$p"
		check_share "forks: ${who%%=*} $p: $w <- forks_main <- <module>" "$TMP/children.tsv" "$K" \
			"pid == want && at(\"$w\")" "seq(\"$w;forks_main;<module>\")" 95 -v want="$p"
	done
else
	fail "forks.py wrote nothing"
fi
printf 'func embedded_leaf 1 5 <string>\nfunc embedded_hot 7 8 <string>\n' >"$TMP/embed.funcs"
epid=$(cat "$TMP/embed.pid" 2>/dev/null)
check_share "embedded: embedded_leaf <- embedded_hot in the embedding program's samples" \
	"$TMP/children.tsv" "$TMP/embed.funcs" 'pid == want' 'seq("embedded_leaf;embedded_hot")' 80 -v want="$epid"
# it started after the collector: its first samples may come before its
# tables (walked by frame pointers, said so), a share of their own
check_share "embedded: embedded_hot, then native frames only, through embed_call_loop to main, once its tables are built" \
	"$TMP/children.tsv" "$TMP/embed.funcs" 'pid == want && at("embedded_hot") && !unready()' \
	'(i = at("embedded_hot")) && !py_after(i) && (j = after(i, "^embed_call_loop$")) && after(j, "^main$")' 95 \
	-v want="$epid"
check_share "embedded: its tables built while it ran (its samples after them the most)" \
	"$TMP/children.tsv" "$TMP/embed.funcs" 'pid == want' '!unready()' 50 -v want="$epid"

# --- 4. --all: a python3 that starts after the collector
timeout 60 "$COLLECTOR" --all --no-status --duration 5 --frequency 499 "${PYOPT[@]}" \
	-o "$TMP/all.pb.gz" 2>"$TMP/all.log" &
col=$!
# started once the collector samples (its start takes seconds on a busy machine)
wait_for_line "$TMP/all.log" '^ctxprof: profiling all' 60 "$col" || fail "all: the collector did not start"
sleep 0.5
"$PY" "$SRC/late.py" 3 "$TMP/late.out" &
late=$!
PIDS+=("$late")
wait "$late"
wait "$col"
rc=$?
[ $rc -eq 0 ] && ok "all: collector --all exited 0" || fail "all: collector --all exited $rc"
traces_tsv "$TMP/all.pb.gz" >"$TMP/all.tsv" || fail "all: pprof -traces failed"
check_py_summary all
check_share "all: the python3 started after the collector: late_work <- <module> in its samples" \
	"$TMP/all.tsv" "$TMP/late.out" 'pid == want' 'seq("late_work;<module>")' 80 -v want="$late"

# --- 5. hostile frames
# its phases start once the collector samples: before_work is judged too
HOSTILE_GO=$TMP/hostile.go PYTHONPATH=$CORRUPT_DIR "$PY" "$SRC/hostile.py" 1 "$TMP/hostile.out" \
	>"$TMP/hostile.stdout" 2>&1 &
wl=$!
PIDS+=("$wl")
(wait_for_line "$TMP/hostile.log" '^ctxprof: profiling pid' 60 $$ && touch "$TMP/hostile.go") &
collect hostile --pid "$wl" --frequency 999 "${PYOPT[@]}"
wait "$wl" || { fail "hostile.py exited non-zero"; cat "$TMP/hostile.stdout"; }
H=$TMP/hostile.out
check_py_summary hostile
nf=$(py_failures "$TMP/hostile.log")
[ "${nf:-0}" -gt 0 ] && ok "hostile: the summary counts $nf failed Python walks" ||
	fail "hostile: the summary counts no failed Python walk (py_failures: '${nf:-}')"
# nothing named from what the damage pointed at
bad=$(sed -n '/^Locations/,/^Mappings/p' "$TMP/hostile.raw" | grep -c '[[:cntrl:]]')
[ "$bad" -eq 0 ] && ok "hostile: no location with a control character" ||
	{ fail "hostile: $bad locations with control characters"; sed -n '/^Locations/,/^Mappings/p' "$TMP/hostile.raw" | grep '[[:cntrl:]]' | head -3 | cat -v | cut -c1-200; }
bad=$(grep -c 'planted\|AAAA\|4141414141' "$TMP/hostile.raw")
[ "$bad" -eq 0 ] && ok "hostile: no frame named from a fake code object or garbage (planted_*, AAAA)" ||
	{ fail "hostile: $bad locations named from a lie"; grep 'planted\|AAAA\|4141414141' "$TMP/hostile.raw" | head -3; }
# every Python function of hostile.py in the profile is one of its code objects' (the
# odd qualnames: printable, the long one a prefix of itself, the non-ASCII one exact)
sed -n '/^Locations/,/^Mappings/p' "$TMP/hostile.raw" | grep -F " $SRC/hostile.py:" |
	sed -E 's/^ *([0-9]+: 0x[0-9a-f]+ )?(M=[0-9]+ )?//; s| '"$SRC"'/hostile\.py:.*||' | sort -u >"$TMP/hostile.names"
bad=$(awk -v funcs="$H" 'BEGIN { while ((getline l < funcs) > 0) if (split(l, a, " ") >= 5 && a[1] == "func") known[a[2]] = 1 }
	$0 == "planted_never_shown" || (!($0 in known) && $0 !~ /^ctl.*name$/ && $0 !~ /^long_x*(…)?$/)' "$TMP/hostile.names")
if [ ! -s "$TMP/hostile.names" ]; then
	fail "hostile: no hostile.py function named at all: nothing to judge the names by"
elif [ -z "$bad" ]; then
	ok "hostile: each of the $(wc -l <"$TMP/hostile.names") hostile.py functions named is one of its code objects"
else
	fail "hostile: hostile.py functions named that it has no code object for:"
	head -5 <<<"$bad" | cut -c1-120
fi
# damage: victim's previous pointing at victim itself
read -r n m <<<"$(sample_share "$TMP/hostile.tsv" "$H" 'at("victim")' 'count("victim") > 1')"
[ "$m" -gt 0 ] && [ "$n" -eq 0 ] && ok "hostile: a looping chain never shows victim twice in a stack ($m samples)" ||
	fail "hostile: $n of $m samples with victim show it more than once (a loop followed; 0 of 0: victim never named)"
read -r n m <<<"$(sample_share "$TMP/hostile.tsv" "$H" 1 'at("victim")')"
[ "$n" -gt 0 ] && ok "hostile: victim's own frame named ($n samples) while its caller chain is damaged" ||
	fail "hostile: victim never named (its own frame is intact in the prev_* modes)"
check_share "hostile: after the damage is undone, after_work <- hostile_main <- <module> again" \
	"$TMP/hostile.tsv" "$H" 'at("after_work")' 'seq("after_work;hostile_main;<module>")' 95
check_share "hostile: before it, before_work <- hostile_main <- <module>" \
	"$TMP/hostile.tsv" "$H" 'at("before_work")' 'seq("before_work;hostile_main;<module>")' 95
read -r n m <<<"$(sample_share "$TMP/hostile.tsv" "$H" 1 'at("short_thread_work")')"
[ "$n" -gt 0 ] && ok "hostile: short-lived threads named ($n samples)" ||
	fail "hostile: short_thread_work never named"
n=$(grep -c "naïve_π_work $SRC/hostile.py" "$TMP/hostile.raw")
[ "$n" -gt 0 ] && ok "hostile: the non-ASCII qualname naïve_π_work named exactly" ||
	echo "note: naïve_π_work not named (allowed: the check above found no wrong name for it)"
n=$(sed -n '/^Locations/,/^Mappings/p' "$TMP/hostile.raw" | grep -o ' long_x*' | awk '{ print length($1) }' | sort -n | tail -1)
echo "note: the 100000-character qualname: ${n:-no} characters of it named"
# ---- span context (libctxprof, through ctypes) on the samples with Python frames
LIBCTXPROF=$OUTPUT/libctxprof.so
if [ -r "$LIBCTXPROF" ]; then
	start_bg "$PY" "$SRC/spans.py" "$LIBCTXPROF" 6
	wl=$!
	sleep 0.7
	collect spans --pid "$wl" --frequency 999 --duration 4 "${PYOPT[@]}"
	# the share of span SPAN's samples (all of which run under <module>) that hold FN
	span_share() {
		"$PPROF" -top -nodecount=200 -sample_index=samples -tagfocus="span_id=^0*$1\$" \
			"$TMP/spans.pb.gz" 2>/dev/null |
			awk -v fn="$2" '$NF == fn { f = $4 } $NF == "<module>" { m = $4 }
				END { printf "%.1f\n", m ? 100 * f / m : 0 }'
	}
	for pair in a:a1a1:b b:b2b2:a; do
		IFS=: read -r h span other <<<"$pair"
		got=$(span_share "$span" "handler_$h")
		bad=$(span_share "$span" "handler_$other")
		if awk -v g="$got" -v b="$bad" 'BEGIN { exit !(g >= 95 && b == 0) }'; then
			ok "spans: samples of span $span: handler_$h in $got %, handler_$other in none"
		else
			fail "spans: samples of span $span: handler_$h in $got % (want >= 95), handler_$other in $bad % (want 0)"
		fi
	done
else
	fail "spans: $LIBCTXPROF not built"
fi

finish
