#!/usr/bin/env bash
# CPython of other Debian releases (root): 3.9 (bullseye), 3.13 (trixie),
# 3.14 and 3.15 (sid, 3.15 while sid ships it), each from the suite's own packages in a
# minimal root (tests/roots/mkroot.sh: made once, cached), run there with
# chroot, profiled by the host's collector by pid; the layout of 3.13
# and later read from the interpreter's own _Py_DebugOffsets.  Per version, shares.py (the
# workload of test_python.sh):
#  - each task's cumulative share within PY_TOL (3) points of the script's
#    own thread_time measure;
#  - >= 95 % of samples with Python frames, >= 95 % of those whole:
#    share_loop <- shares_main <- <module>, then native frames to the root,
#    no _PyEval_EvalFrameDefault left (all its parts replaced);
#  - calls back from C (sorted's key) keep their Python callers;
#  - every Python location with its function's file, start line, a line in
#    its range, and the hot loops on two lines or more.
# Embedded: a program linked with sid's libpython3.14.so (embed.c, built here
# against libpython3.14-dev): its Python frames between its C frames.
# --all: a python3.14 started after the collector is read.
# Hostile: copies of the 3.13 executable with their _Py_DebugOffsets
# damaged (the cookie; an offset past its structure; an offset in bounds
# that the file's own PyCode_Type contradicts) run as well: each is
# refused and counted ("by a refused layout"), its samples keep
# their native frames, nothing is named from it, the collector exits 0.
# 3.9 (bullseye): read from our table (the file's type sizes checked), the
# same checks, its frames named by co_name (no co_qualname before 3.11); a
# copy of it named python3.7 (no Py_Version: the name gives the version, one
# without a table) is counted "by version", said once, its samples native.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/python_checks.sh"
need_root

MKROOT=$ROOT/tests/roots/mkroot.sh
RUNROOT=$ROOT/tests/roots/run.sh
SRC=$ROOT/tests/workloads/python
TOL=${PY_TOL:-3}
SECS=${PY_SECONDS:-6}
NATIVE_ROOTS='^(main|Py_BytesMain|Py_RunMain|__libc_start_call_main|__libc_start_main|_start)$'
command -v debootstrap >/dev/null || skip "no debootstrap (make deps)"

WORKDIRS=()
trap 'cleanup; rm -rf "${WORKDIRS[@]}"' EXIT

# root SUITE PKG...: the suite's root with PKG installed (its path), or "" (said why)
root() {
	local suite=$1 r
	shift
	if ! r=$("$MKROOT" "$suite" "$@" 2>"$TMP/mkroot.$suite.log" | tail -1) || [ ! -d "$r" ]; then
		fail "$suite: its root with $* could not be made:"
		tail -5 "$TMP/mkroot.$suite.log" | sed 's/^/   /'
		return 1
	fi
	echo "$r"
}

# workdir RT: the workloads copied into root RT; WD: their path inside it (not
# a $(...) subshell: WORKDIRS, which the exit removes, must see each)
workdir() {
	local d
	d=$(mktemp -d "$1/var/tmp/ctxprof-pyv.XXXXXX")
	WORKDIRS+=("$d")
	cp "$SRC"/*.py "$d/"
	chmod 755 "$d"
	WD=${d#"$1"}
}

# collect NAME RT PYTHON [ARGS...]: run shares.py with PYTHON inside root RT,
# profile it to $TMP/NAME.pb.gz (log NAME.log, NAME.tsv, NAME.raw); the
# script's output in $TMP/NAME.out
collect() {
	local name=$1 rt=$2 py=$3 d wl rc
	shift 3
	workdir "$rt"
	d=$WD
	"$RUNROOT" "$rt" "$py" "$d/shares.py" $((SECS + 2)) "$d/shares.out" "$@" >"$TMP/$name.stdout" 2>&1 &
	wl=$!
	PIDS+=("$wl")
	sleep 1
	timeout 120 "$COLLECTOR" --no-status --pid "$wl" --duration "$SECS" --frequency 999 \
		--python on -o "$TMP/$name.pb.gz" 2>"$TMP/$name.log"
	rc=$?
	wait "$wl" || { fail "$name: $py shares.py exited non-zero"; tail -3 "$TMP/$name.stdout"; }
	cp "$rt$d/shares.out" "$TMP/$name.out" 2>/dev/null || : >"$TMP/$name.out"
	[ $rc -eq 0 ] && ok "$name: collector exited 0" ||
		{ fail "$name: collector exited $rc"; tail -5 "$TMP/$name.log" | sed 's/^/   /'; }
	[ -s "$TMP/$name.pb.gz" ] || { fail "$name: no profile"; return 1; }
	traces_tsv "$TMP/$name.pb.gz" >"$TMP/$name.tsv" || fail "$name: pprof -traces failed"
	"$PPROF" -raw "$TMP/$name.pb.gz" >"$TMP/$name.raw" 2>&1 || fail "$name: pprof -raw failed"
}

pct_of() { awk -v n="$1" -v m="$2" 'BEGIN { printf "%.2f", m ? 100 * n / m : 0 }'; }

# check_version NAME [CRUNCH SEQ]: the checks on a readable version's profile; CRUNCH:
# the method's name there (Worker.crunch; crunch before 3.11: no co_qualname); SEQ:
# how Python callers follow (seq: next to each other; pyseq: with native frames
# between, as every call of 3.9 passes through C)
check_version() {
	local name=$1 crunch=${2:-Worker.crunch} sq=${3:-seq} F=$TMP/$1.out n m got want
	[ -s "$F" ] || { fail "$name: shares.py wrote nothing"; return; }
	py_summary "$TMP/$name.log" | cut -c1-220 | sed 's/^/   /'
	n=$(py_summary "$TMP/$name.log" | grep -o 'read in [0-9]* Python' | grep -o '[0-9]*')
	[ "${n:-0}" -eq 1 ] && ok "$name: its interpreter read (summary: read in 1 Python processes)" ||
		fail "$name: the summary says read in '${n:-?}' Python processes"
	while read -r _ fn want; do
		read -r n m <<<"$(sample_share "$TMP/$name.tsv" "$F" 1 'at(name)' -v name="$fn")"
		got=$(pct_of "$n" "$m")
		if awk -v g="$got" -v w="$want" -v t="$TOL" 'BEGIN { d = g - w; exit !(d <= t && d >= -t) }' &&
			[ "$n" -gt 0 ]; then
			ok "$name: $fn $got % of samples (script measured $want %)"
		else
			fail "$name: $fn $got % of samples, not within $TOL points of the script's $want %"
		fi
	done < <(grep '^share ' "$F" | sed "s/^share Worker\.crunch /share $crunch /")
	check_share "$name: samples with Python frames" "$TMP/$name.tsv" "$F" 1 'npy() > 0' 95
	check_share "$name: Python stacks whole: share_loop <- shares_main <- <module>, then native frames to the root" \
		"$TMP/$name.tsv" "$F" 'npy() > 0' \
		"(i = $sq(\"share_loop;shares_main;<module>\")) && after(seq_end, roots) && !py(n)" 95 \
		-v roots="$NATIVE_ROOTS"
	check_share "$name: no _PyEval_EvalFrameDefault left where Python frames stand" "$TMP/$name.tsv" "$F" \
		'npy() > 0' '!at("_PyEval_EvalFrameDefault")' 95
	check_share "$name: nested calls nest_leaf <- nest_b <- nest_a <- share_loop" "$TMP/$name.tsv" "$F" \
		'at("nest_leaf")' "$sq(\"nest_leaf;nest_b;nest_a;share_loop\")" 95
	check_share "$name: fib's recursion ends at fib_task <- share_loop" "$TMP/$name.tsv" "$F" \
		'at("fib")' "(i = $sq(\"fib;fib_task;share_loop\")) && !after(i, \"^fib\$\")" 95
	check_share "$name: <lambda> called back from sorted(): native frames, then sort_work <- share_loop" \
		"$TMP/$name.tsv" "$F" 'at("<lambda>")' \
		"(i = at(\"<lambda>\")) && (j = at(\"sort_work\")) && j > i + 1 && !py(i + 1) && $sq(\"sort_work;share_loop\")" 95
	check_lines "$name" "$TMP/$name.raw" "$F" share_loop "$crunch" nest_leaf
}

# check_native NAME WHY: a process whose Python frames must not be read, its samples native
check_native() {
	local name=$1 why=$2 n m
	[ -s "$TMP/$name.out" ] || { fail "$name: shares.py wrote nothing"; return; }
	py_summary "$TMP/$name.log" | cut -c1-220 | sed 's/^/   /'
	n=$(py_summary "$TMP/$name.log" | grep -o "[0-9]* $why" | grep -o '^[0-9]*')
	[ "${n:-0}" -eq 1 ] && ok "$name: counted once, '1 $why'" ||
		fail "$name: not counted as '$why' (got '${n:-nothing}')"
	read -r n m <<<"$(sample_share "$TMP/$name.tsv" "$TMP/$name.out" 1 'npy() > 0')"
	[ "$m" -gt 0 ] && [ "$n" -eq 0 ] && ok "$name: no Python function named in its $m samples" ||
		fail "$name: $n of $m samples name Python functions"
	read -r n m <<<"$(sample_share "$TMP/$name.tsv" "$TMP/$name.out" 1 'after(0, "^(Py_RunMain|Py_BytesMain|main)$")')"
	at_least "$n" "$m" 90 && ok "$name: native frames kept: $n of $m samples reach Py_RunMain/main" ||
		fail "$name: native frames: $n of $m samples reach Py_RunMain/main"
}

# --- 3.13 (trixie)
if RT=$(root trixie python3.13); then
	collect py313 "$RT" python3.13
	check_version py313
	# damaged copies of its executable: the cookie; interpreter_frame.instr_ptr
	# (word 31 of 3.13's _Py_DebugOffsets) past the frame; code_object.co_code_adaptive
	# (word 43) 192, within bounds but not PyCode_Type's tp_basicsize (200)
	exe=$RT/usr/bin/python3.13
	off=$(readelf -SW "$exe" | awk '$2 == ".PyRuntime" { print $5 } $3 == ".PyRuntime" { print $6 }')
	if [ -n "$off" ]; then
		for bad in cookie:0:58 instr_ptr:248:0010 adaptive:344:c0; do
			IFS=: read -r what at hex <<<"$bad"
			workdir "$RT"
			d=$WD
			cp "$exe" "$RT$d/python3.13"
			printf "$(sed 's/\(..\)/\\x\1/g' <<<"$hex")" |
				dd of="$RT$d/python3.13" bs=1 seek=$((0x$off + at)) conv=notrunc status=none
			cmp -s "$exe" "$RT$d/python3.13" && fail "hostile $what: the copy was not changed"
			collect "bad_$what" "$RT" "$d/python3.13"
			check_native "bad_$what" "by a refused layout"
		done
	else
		fail "hostile: no .PyRuntime section in $exe"
	fi
fi

# --- 3.14 and 3.15 (sid)
if RT=$(root sid python3.14); then
	collect py314 "$RT" python3.14
	check_version py314
	# a program embedding sid's libpython3.14.so, built here against its headers
	if RT2=$(root sid libpython3.14-dev); then
		ma=$(gcc -dumpmachine)
		mkdir -p "$TMP/pyinc/$ma"
		ln -sfn "$RT2/usr/include/$ma/python3.14" "$TMP/pyinc/$ma/python3.14"
		workdir "$RT2"
		d=$WD
		if gcc -O1 -fno-omit-frame-pointer -I"$RT2/usr/include/python3.14" -I"$TMP/pyinc" \
			"$SRC/embed.c" -L"$RT2/usr/lib/$ma" -lpython3.14 -Wl,--allow-shlib-undefined \
			-o "$RT2$d/embed" 2>"$TMP/embed.cc.log"; then
			"$RUNROOT" "$RT2" "$d/embed" 6 >/dev/null 2>&1 &
			wl=$!
			PIDS+=("$wl")
			sleep 1
			timeout 60 "$COLLECTOR" --no-status --pid "$wl" --duration 4 --frequency 999 \
				--python on -o "$TMP/embed.pb.gz" 2>"$TMP/embed.log" ||
				fail "embed314: collector failed"
			wait "$wl"
			traces_tsv "$TMP/embed.pb.gz" >"$TMP/embed.tsv" || fail "embed314: pprof -traces failed"
			printf 'func embedded_leaf 1 5 <string>\nfunc embedded_hot 7 8 <string>\n' >"$TMP/embed.funcs"
			check_share "embed314: embedded_leaf <- embedded_hot in the embedding program's samples" \
				"$TMP/embed.tsv" "$TMP/embed.funcs" 1 'seq("embedded_leaf;embedded_hot")' 80
			check_share "embed314: embedded_hot, then native frames only, through embed_call_loop to main" \
				"$TMP/embed.tsv" "$TMP/embed.funcs" 'at("embedded_hot")' \
				'(i = at("embedded_hot")) && !py_after(i) && (j = after(i, "^embed_call_loop$")) && after(j, "^main$")' 95
		else
			fail "embed314: embed.c did not build against libpython3.14-dev:"
			tail -3 "$TMP/embed.cc.log"
		fi
	fi
	# --all: a python3.14 started after the collector, found at its exec
	workdir "$RT"
	d=$WD
	timeout 60 "$COLLECTOR" --all --no-status --duration 5 --frequency 499 --python on \
		-o "$TMP/all.pb.gz" 2>"$TMP/all.log" &
	col=$!
	sleep 1.5
	"$RUNROOT" "$RT" python3.14 "$d/late.py" 3 "$d/late.out" >/dev/null 2>&1 &
	late=$!
	PIDS+=("$late")
	wait "$late"
	wait "$col" && ok "all: collector --all exited 0" || fail "all: collector --all failed"
	cp "$RT$d/late.out" "$TMP/late.out" 2>/dev/null || : >"$TMP/late.out"
	traces_tsv "$TMP/all.pb.gz" >"$TMP/all.tsv" || fail "all: pprof -traces failed"
	check_share "all: python3.14 started after the collector: late_work <- <module> in its samples" \
		"$TMP/all.tsv" "$TMP/late.out" 'pid == want' 'seq("late_work;<module>")' 80 -v want="$late"
	if chroot "$RT" apt-cache show python3.15 >/dev/null 2>&1; then
		if RT=$(root sid python3.15); then
			collect py315 "$RT" python3.15
			check_version py315
		fi
	else
		echo "note: sid ships no python3.15 now: not run"
	fi
fi

# --- 3.9 (bullseye): a table checked at attach against the file's type sizes
if RT=$(root bullseye python3.9-minimal); then
	collect py39 "$RT" python3.9
	check_version py39 crunch pyseq
	# a copy named python3.7: no Py_Version, its name's version has no table
	workdir "$RT"
	d=$WD
	cp "$RT/usr/bin/python3.9" "$RT$d/python3.7"
	collect py37name "$RT" "$d/python3.7"
	check_native py37name "by version"
	grep -q 'Python 3.7, a version whose frames we cannot read' "$TMP/py37name.log" &&
		ok "py37name: said on stderr: Python 3.7, a version whose frames we cannot read" ||
		fail "py37name: no 'Python 3.7, a version whose frames we cannot read' line"
fi

finish
