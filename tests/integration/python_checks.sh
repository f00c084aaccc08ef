# shellcheck shell=bash
# Profile readers and checks for the CPython tests (test_python.sh): sourced,
# not run, but "bash tests/integration/python_checks.sh --selftest" runs the
# checks on hand-written pprof text (a right profile passes, each kind of
# wrong one fails) and needs neither root nor the collector.
#
# The workloads (tests/workloads/python/*.py) write what their frames must
# carry, one line per code object (codeinfo.py):
#   func <co_qualname> <co_firstlineno> <last line> <co_filename>
# A frame is taken as Python's when its name is one of those qualnames
# (FUNCS, such a file); native frames keep their names ("[python3.11]" when
# the symbol is static and no debug file is installed).
#
#   traces_tsv PB               "$PPROF -traces" as one line per sample:
#                               count<TAB>pid<TAB>tid<TAB>leaf;...;root
#   sample_share TSV FUNCS BASE COND   "N M": M samples meet the awk
#                               condition BASE, N of them COND too (awk
#                               helpers below: at(), seq(), after(), ...)
#   py_locations RAW FUNCS      the -raw Locations of Python functions:
#                               name<TAB>file<TAB>line<TAB>start<TAB>system name
#   py_summary LOG / py_samples LOG / py_failures LOG   the collector's
#                               "ctxprof: python: " line and its counts: the
#                               only place that knows its wording

# the collector's Python line of its end summary
py_summary() { grep '^ctxprof: python: ' "$1" | tail -1; }
# "N samples with Python frames": N, empty when the line or the count is missing
py_samples() { py_summary "$1" | grep -o '[0-9]* samples with Python frames' | grep -o '^[0-9]*'; }
# the failed walks and names: read errors, bad code objects, loops, cut walks,
# unplaced frames, code objects unreadable or malformed, summed
py_failures() {
	py_summary "$1" | grep -o 'python_\(read_error\|bad_code\|loop\|truncated\|unplaced\)=[0-9]*\|[0-9]* \(malformed\|unreadable\)' |
		grep -o '[0-9]*' | awk '{ t += $1 } END { print t + 0 }'
}

# pprof -traces -> count<TAB>pid<TAB>tid<TAB>frames (";"-joined, leaf first)
traces_tsv() {
	local out
	out=$("$PPROF" -traces -sample_index=samples "$1" 2>/dev/null) ||
		out=$("$PPROF" -traces "$1" 2>/dev/null) || {
		echo "traces_tsv: $PPROF -traces $1 failed" >&2
		return 1
	}
	traces_text_tsv <<<"$out"
}

traces_text_tsv() {
	awk '
	function trim(s) { sub(/^ +/, "", s); sub(/ +$/, "", s); return s }
	function flush() {
		if (inblock && val != "" && key != "")
			printf "%s\t%s\t%s\t%s\n", val, pid, tid, key
		key = ""; val = ""; pid = ""; tid = ""
	}
	/^-----------\+-+$/ { flush(); inblock = 1; next }
	!inblock { next }
	substr($0, 11, 3) == ":  " {
		k = trim(substr($0, 1, 10))
		if (k == "pid") pid = trim(substr($0, 14))
		if (k == "thread_id") tid = trim(substr($0, 14))
		next
	}
	substr($0, 11, 3) == "   " {
		v = trim(substr($0, 1, 10))
		if (v != "") {
			# "3" with -sample_index=samples; "3.01ms" without: kept as a number
			sub(/[a-z]+$/, "", v)
			val = v
		}
		name = substr($0, 14)
		gsub(/;/, ",", name)
		key = key (key == "" ? "" : ";") name
	}
	END { flush() }'
}

# awk helpers over one sample (f[1..n], leaf first; c, pid, tid), for the
# conditions of sample_share:
#   py(i)        frame i is a Python function of FUNCS
#   npy()        how many frames are
#   at(name)     index of the first frame so named (leaf side), 0 if none
#   atre(re)     index of the first frame matching re, 0 if none
#   count(name)  how many frames are so named
#   seq("a;b;c") index of the first run of consecutive frames a, b, c
#                (seq_end: the index of its last)
#   pyseq("a;b") the same, native frames between them skipped (3.9: every
#                Python call passes through C)
#   py_after(i)  index of the first Python frame rootward of i, 0 if none
#   after(i, re) index of the first frame rootward of i matching re, 0 if none
#   native_between(i, j, re)  frames strictly between i and j (i < j) are
#                all native, at least one of them, and one matches re
#   unready()    the sample was walked by frame pointers while a table of its
#                code was being built (a process started after the collector)
PY_AWK_LIB='
BEGIN {
	while ((getline l < funcs) > 0)
		if (split(l, a, " ") >= 5 && a[1] == "func")
			known[a[2]] = 1
}
function py(i) { return (f[i] in known) }
function npy(   i, k) { for (i = 1; i <= n; i++) k += (f[i] in known); return k + 0 }
function at(name,   i) { for (i = 1; i <= n; i++) if (f[i] == name) return i; return 0 }
function atre(re,   i) { for (i = 1; i <= n; i++) if (f[i] ~ re) return i; return 0 }
function count(name,   i, k) { for (i = 1; i <= n; i++) k += (f[i] == name); return k + 0 }
function seq(list,   w, m, i, k) {
	m = split(list, w, ";")
	for (i = 1; i + m - 1 <= n; i++) {
		for (k = 1; k <= m && f[i + k - 1] == w[k]; k++)
			;
		if (k > m) {
			seq_end = i + m - 1
			return i
		}
	}
	return 0
}
function pyseq(list,   w, m, i, j, k) {
	m = split(list, w, ";")
	for (i = 1; i <= n; i++) {
		if (f[i] != w[1])
			continue
		j = i
		for (k = 2; k <= m && (j = py_after(j)) && f[j] == w[k]; k++)
			;
		if (k > m) {
			seq_end = j
			return i
		}
	}
	return 0
}
function unready() { return atre("unwind tables not ready yet") }
function py_after(i,   j) { for (j = i + 1; j <= n; j++) if (f[j] in known) return j; return 0 }
function after(i, re,   j) { for (j = i + 1; j <= n; j++) if (f[j] ~ re) return j; return 0 }
function native_between(i, j, re,   k, hit) {
	if (!i || !j || j <= i + 1)
		return 0
	for (k = i + 1; k < j; k++) {
		if (f[k] in known)
			return 0
		if (f[k] ~ re)
			hit = 1
	}
	return hit + 0
}
'

# sample_share TSV FUNCS BASE COND [VARS...]: "N M"; VARS are "-v name=value"
sample_share() {
	local tsv=$1 funcs=$2 base=$3 cond=$4
	shift 4
	awk -F '\t' -v funcs="$funcs" "$@" "$PY_AWK_LIB"'
	{ c = $1; pid = $2; tid = $3; n = split($4, f, ";") }
	('"$base"') { m += c; if ('"$cond"') k += c }
	END { print k + 0, m + 0 }' "$tsv"
}

# true when N of M is at least PCT % of a non-empty set
at_least() { awk -v n="$1" -v m="$2" -v p="$3" 'BEGIN { exit !(m > 0 && 100 * n >= p * m) }'; }

# check_share WHAT TSV FUNCS BASE COND PCT [VARS...]: ok/fail with "N of M"
check_share() {
	local what=$1 tsv=$2 funcs=$3 base=$4 cond=$5 pct=$6 n m
	shift 6
	read -r n m <<<"$(sample_share "$tsv" "$funcs" "$base" "$cond" "$@")"
	if at_least "$n" "$m" "$pct"; then
		ok "$what: $n of $m samples (want >= $pct %)"
	else
		fail "$what: $n of $m samples (want >= $pct %)"
		sample_misses "$tsv" "$funcs" "$base" "$cond" "$@" >&2
	fi
}

# sample_misses TSV FUNCS BASE COND [VARS...]: the three heaviest stacks of BASE
# that fail COND, leaf first, so a failed share says what the other samples were
sample_misses() {
	local tsv=$1 funcs=$2 base=$3 cond=$4
	shift 4
	awk -F '\t' -v funcs="$funcs" "$@" "$PY_AWK_LIB"'
	{ c = $1; pid = $2; tid = $3; n = split($4, f, ";") }
	('"$base"') && !('"$cond"') { miss[$4] += c }
	END { for (s in miss) print miss[s] "\t" s }' "$tsv" |
		sort -t "$(printf '\t')" -k1,1nr | head -3 | sed 's/^/  missed: /'
}

# pprof -raw's Locations whose function is one of FUNCS' qualnames:
# name<TAB>file<TAB>line<TAB>start line<TAB>system name if it differs, else "="
py_locations() {
	awk -v funcs="$2" '
	BEGIN {
		while ((getline l < funcs) > 0)
			if (split(l, a, " ") >= 5 && a[1] == "func")
				known[a[2]] = 1
	}
	/^Locations/ { inloc = 1; next }
	/^Mappings/ { inloc = 0 }
	!inloc { next }
	{
		s = $0
		if (!sub(/^ *[0-9]+: 0x[0-9a-f]+ /, "", s))
			sub(/^ +/, "", s)
		sub(/^M=[0-9]+ /, "", s)
		sub(/^\[F\] /, "", s)
		# "name file:line s=N" and "(system name)" when it differs
		if (!match(s, / s=[0-9]+(\(.*\))?$/))
			next
		tail = substr(s, RSTART + 3)
		s = substr(s, 1, RSTART - 1)
		start = tail; sub(/\(.*$/, "", start)
		sys = "="
		if (index(tail, "("))
			sys = substr(tail, index(tail, "(") + 1, length(tail) - index(tail, "(") - 1)
		if (!match(s, / [^ ]*:[0-9]+$/))
			next
		name = substr(s, 1, RSTART - 1)
		fl = substr(s, RSTART + 1)
		line = fl; sub(/.*:/, "", line)
		file = fl; sub(/:[0-9]+$/, "", file)
		if (name in known)
			printf "%s\t%s\t%s\t%s\t%s\n", name, file, line, start, sys
	}' "$1"
}

# check_lines WHAT RAW FUNCS NAMES...: each NAME has locations, each location
# of a FUNCS function carries that function's file, start line and a line
# in its range; NAMES (hot loops) show two or more distinct lines
check_lines() {
	local what=$1 raw=$2 funcs=$3 bad name nl
	shift 3
	py_locations "$raw" "$funcs" >"$raw.pyloc"
	bad=$(awk -F '\t' -v funcs="$funcs" '
	BEGIN {
		while ((getline l < funcs) > 0)
			if (split(l, a, " ") >= 5 && a[1] == "func") {
				# a qualname may have two code objects (rare): any of them
				first[a[2]] = first[a[2]] " " a[3]
				range[a[2]] = range[a[2]] " " a[3] "-" a[4]
				file[a[2]] = a[5]
			}
	}
	{
		why = ""
		if ($2 != file[$1])
			why = why " file " $2 " (want " file[$1] ")"
		if (index(first[$1] " ", " " $4 " ") == 0)
			why = why " start line " $4 " (want" first[$1] ")"
		inr = 0
		nr = split(range[$1], rr, " ")
		for (i = 1; i <= nr; i++) {
			split(rr[i], lo_hi, "-")
			if ($3 + 0 >= lo_hi[1] + 0 && $3 + 0 <= lo_hi[2] + 0)
				inr = 1
		}
		if (!inr)
			why = why " line " $3 " outside" range[$1]
		# the same as the name, or none (the collector writes none: the pprof
		# tool "demangles" a name equal to its system name, "<module>" to "")
		if ($5 != "=" && $5 != "")
			why = why " system_name " $5
		if (why != "")
			print $1 ":" why
	}' "$raw.pyloc" | sort -u)
	if [ -z "$bad" ] && [ -s "$raw.pyloc" ]; then
		ok "$what: $(wc -l <"$raw.pyloc") Python locations, each with its function's file, start line and a line in its range"
	elif [ -n "$bad" ]; then
		fail "$what: Python locations with a wrong file, start or line:"
		head -5 <<<"$bad" | sed 's/^/   /'
	else
		fail "$what: no Python location in pprof -raw"
	fi
	for name in "$@"; do
		nl=$(awk -F '\t' -v n="$name" '$1 == n { print $3 }' "$raw.pyloc" | sort -u | wc -l)
		[ "$nl" -ge 2 ] && ok "$what: $name sampled on $nl distinct lines" ||
			fail "$what: $name sampled on $nl distinct line(s), want >= 2 (the sampled instruction's line)"
	done
}

# --- self-test: the readers and checks against hand-written pprof text
python_checks_selftest() {
	local tmp failures=0 got
	tmp=$(mktemp -d /tmp/python-checks-selftest.XXXXXX)
	ok() { echo "   (ok: $*)"; }
	fail() { echo "   (fail: $*)"; }
	expect() {
		if [ "$2" = "$3" ]; then
			echo "ok: $1"
		else
			echo "FAIL: $1: got [$2], want [$3]"
			failures=$((failures + 1))
		fi
	}
	# verdict CMD...: "passes"/"fails" from the ok/fail a check prints
	verdict() {
		local out
		out=$("$@")
		if grep -q '(fail:' <<<"$out"; then echo fails; else echo passes; fi
	}
	cat >"$tmp/funcs" <<'EOF'
func <module> 1 131 /w/shares.py
func schedule 94 112 /w/shares.py
func shares_main 121 128 /w/shares.py
func sort_work 71 72 /w/shares.py
func <lambda> 68 68 /w/shares.py
func fib 49 52 /w/shares.py
EOF
	cat >"$tmp/traces" <<'EOF'
File: python3.11
Type: cpu
-----------+-------------------------------------------------------
       pid:  7
 thread_id:  8
        10   <lambda>
             _PyFunction_Vectorcall
             PyObject_CallOneArg
             [python3.11]
             sort_work
             schedule
             shares_main
             <module>
             PyEval_EvalCode
             Py_BytesMain
             main
-----------+-------------------------------------------------------
       pid:  7
 thread_id:  8
         3   <lambda>
             sort_work
             schedule
             shares_main
             <module>
             Py_BytesMain
-----------+-------------------------------------------------------
       pid:  7
 thread_id:  9
         6   fib
             fib
             _PyEval_EvalFrameDefault
             schedule
-----------+-------------------------------------------------------
       pid:  7
 thread_id:  8
         1   _PyEval_EvalFrameDefault
             PyEval_EvalCode
-----------+-------------------------------------------------------
EOF
	traces_text_tsv <"$tmp/traces" >"$tmp/tsv"
	expect "traces -> tsv" "$(cut -f1-3 "$tmp/tsv" | tr '\t' ' ' | paste -sd '|')" "10 7 8|3 7 8|6 7 9|1 7 8"
	expect "python samples" "$(sample_share "$tmp/tsv" "$tmp/funcs" 1 'npy() > 0')" "19 20"
	expect "whole to <module> then a native root" \
		"$(sample_share "$tmp/tsv" "$tmp/funcs" 'npy() > 0' '(i = seq("schedule;shares_main;<module>")) && after(i + 2, roots)' -v roots='^(Py_BytesMain|main)$')" \
		"13 19"
	expect "interleaving: <lambda>, a sort native, sort_work" \
		"$(sample_share "$tmp/tsv" "$tmp/funcs" 'at("<lambda>")' 'native_between(at("<lambda>"), at("sort_work"), re)' -v re='^(PyObject_CallOneArg|list_sort_impl)$')" \
		"10 13"
	expect "recursion depth" "$(sample_share "$tmp/tsv" "$tmp/funcs" 'at("fib")' 'count("fib") >= 2')" "6 6"
	expect "eval frame left in a Python stack" \
		"$(sample_share "$tmp/tsv" "$tmp/funcs" 'npy() > 0' '!at("_PyEval_EvalFrameDefault")')" "13 19"
	expect "on one thread" "$(sample_share "$tmp/tsv" "$tmp/funcs" 'at("fib")' 'tid == want' -v want=8)" "0 6"
	expect "95 % bar: 13 of 19 fails" "$(at_least 13 19 95 && echo passes || echo fails)" fails
	expect "95 % bar: 19 of 20 passes" "$(at_least 19 20 95 && echo passes || echo fails)" passes
	expect "bar of an empty set fails" "$(at_least 0 0 0 && echo passes || echo fails)" fails

	cat >"$tmp/raw" <<'EOF'
Locations
     1: 0x5a8778 M=1 
     2: 0x533263 M=1 _PyEval_EvalFrameDefault :0 s=0
     3: 0x0 fib /w/shares.py:50 s=49
     4: 0x0 fib /w/shares.py:52 s=49
     5: 0x0 <lambda> /w/shares.py:68 s=68
     6: 0x1 M=2 schedule /w/shares.py:100 s=94
     7: 0x2 M=2 schedule /w/shares.py:130 s=94
     8: 0x3 sort_work /x/other.py:71 s=71
     9: 0x4 shares_main /w/shares.py:121 s=120
    10: 0x5 <module> /w/shares.py:3 s=1(module)
    11: 0x6 M=1 std::vector<int>::size() const /usr/include/c++/12/bits/stl_vector.h:919 s=0
Mappings
1: 0x400000/0x6f0000/0x0 /usr/bin/python3.11 571d98e0
EOF
	expect "py_locations" "$(py_locations "$tmp/raw" "$tmp/funcs" | cut -f1,3,5 | tr '\t' ' ' | paste -sd '|')" \
		"fib 50 =|fib 52 =|<lambda> 68 =|schedule 100 =|schedule 130 =|sort_work 71 =|shares_main 121 =|<module> 3 module"
	got=$(check_lines t "$tmp/raw" "$tmp/funcs" fib | tr '\n' '|')
	expect "check_lines finds a line out of range, a wrong file, start, system_name" \
		"$(grep -o 'schedule: line 130 outside 94-112\|sort_work: file /x/other.py\|shares_main: start line 120\|<module>: system_name module' <<<"$got" | wc -l)" 4
	expect "check_lines: fib on 2 distinct lines" "$(grep -c 'fib sampled on 2 distinct' <<<"${got//|/$'\n'}")" 1
	grep -v 'schedule /w/shares.py:130\|other.py\|s=120\|(module)' "$tmp/raw" >"$tmp/raw2"
	expect "check_lines passes a right profile" "$(verdict check_lines t "$tmp/raw2" "$tmp/funcs" fib)" passes
	expect "check_lines: one line only fails" "$(verdict check_lines t "$tmp/raw2" "$tmp/funcs" "<lambda>")" fails

	printf 'ctxprof: samples: 1 taken\nctxprof: python: read in 2 Python processes; 1234 samples with Python frames, 5000 Python frames; python_no_thread_state=9 python_read_error=3 python_bad_code=4 python_loop=0 python_stale=5; code objects named 40, 0 changed since sampled, 0 unreadable, 0 malformed\n' >"$tmp/log"
	expect "py_samples" "$(py_samples "$tmp/log")" 1234
	expect "py_failures" "$(py_failures "$tmp/log")" 7
	expect "py_samples without the line" "$(py_samples "$tmp/raw")" ""
	rm -rf "$tmp"
	[ "$failures" -eq 0 ] && { echo "all checks passed"; return 0; }
	echo "$failures check(s) failed"
	return 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case ${1:-} in
	--selftest) PPROF=${PPROF:-build/pprof} python_checks_selftest; exit ;;
	*) echo "usage: $0 --selftest   (otherwise source it)" >&2; exit 2 ;;
	esac
fi
