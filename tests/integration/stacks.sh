# shellcheck shell=bash
# Stack checkers for the unwinding tests: sourced, not run (but
# "bash tests/integration/stacks.sh --selftest" tests the awk on hand-written
# inputs and needs neither pprof nor perf).
#
# Both profile readers write the same "folded" text: one line per distinct
# stack, "count<TAB>leaf;caller;...;root", leaf first, most samples first.
#   stacks_from_pprof FILE [PID]     from "$PPROF -traces" (count = the
#                                    "samples" sample type when there is one)
#   stacks_from_perf PERF_DATA [PID] from "perf script"; one sample = 1
# Kernel frames (addresses from 0xffff..., perf's [kernel.*] objects) are
# dropped, since these checkers judge user stacks; a sample left with no frame
# becomes "[kernel]".  Inlined frames are dropped too: an unwinder yields
# physical frames, and the collector symbolizes inlined calls only in Go
# programs (from .gopclntab).
# STACKS_KERNEL=1 / STACKS_INLINE=1 keep them.  Unnamed frames are
# "[unknown]".  The collector's names are taken as the profile has them: it
# shows a versioned symbol without its version ("sem_post"), so a version
# in them is a difference to see, never normalized away.  perf 6.1 shows it
# with its version ("sem_post@GLIBC_2.2.5", "__libc_start_main@@GLIBC_2.34"):
# from perf's names only, that version goes ("x@plt" stays).
#
# Then, on a folded file:
#   chain_share FOLDED LEAF CHAIN  "N of M (P%)": M samples have LEAF as leaf
#       frame, N of those hold CHAIN, frames listed leaf to root, as an ordered
#       subsequence (gaps allowed) with a $STACKS_MAIN frame at or rootward of
#       its last frame.  A CHAIN element may be "a|b" (either name) or
#       "name*K" (K frames).
#   reach_share FOLDED FUNC        "N of M (P%)": of all M samples, N hold FUNC
#       ("a|b": either); reach_share FOLDED "$STACKS_MAIN" is "reaches main"
#   flat_profile FOLDED [N]        the N (10) hottest leaf frames, "P%  count  name"
#   flat_name_diffs OURS PERF [PCT] the named leaf frames at >= PCT (3) % of one
#       folded file that are no leaf of the other: "name  ours P%  perf P%", one
#       a line, none when the two name their hot functions alike.  A leaf is
#       where the sample was taken, whatever the unwinding: a hot function one
#       side has and the other has not is the same code under another name
#       (an alias, a version).  Unnamed frames ("[...]") are no names.
#   share_at_least "N of M (P%)" PCT   true when P >= PCT (and M > 0)

# main, or glibc's frames above it: a stripped program's main has no name
# (not in .dynsym), but an unwinder that reaches __libc_start_call_main (named
# with libc6-dbg) or __libc_start_main (in .dynsym; __libc_start_main_impl
# with libc6-dbg) came through main
STACKS_MAIN='main|__libc_start_call_main|__libc_start_main|__libc_start_main_impl'

# pprof -traces text on stdin -> folded; $1: keep only samples with this pid label
folded_from_traces() {
	awk -v want_pid="${1:-}" -v kernel="${STACKS_KERNEL:-0}" -v inl="${STACKS_INLINE:-0}" '
	function trim(s) { sub(/^ +/, "", s); sub(/ +$/, "", s); return s }
	function flush(   key, i) {
		if (inblock && !skip && val != "") {
			key = ""
			for (i = 1; i <= n; i++)
				key = key (i > 1 ? ";" : "") fr[i]
			if (key == "")
				key = "[kernel]"
			count[key] += val
		}
		n = 0; val = ""; skip = 0
	}
	/^-----------\+-+$/ { flush(); inblock = 1; next }
	!inblock { next }
	# labels: "%10s:  %s"
	substr($0, 11, 3) == ":  " {
		if (want_pid != "" && trim(substr($0, 1, 10)) == "pid" && trim(substr($0, 14)) != want_pid)
			skip = 1
		next
	}
	# frames: "%10s   %s", the value on the first (leaf) frame only
	substr($0, 11, 3) == "   " {
		v = trim(substr($0, 1, 10))
		if (v != "")
			val = v
		name = substr($0, 14)
		if (sub(/ \(inline\)$/, "", name) && !inl)
			next
		addr = ""
		# -addresses puts the address first, as 16 hex digits
		if (substr(name, 1, 16) ~ /^[0-9a-f]+$/ && length(name) >= 16 &&
		    (length(name) == 16 || substr(name, 17, 1) == " ")) {
			addr = substr(name, 1, 16)
			name = trim(substr(name, 18))
		}
		if (addr ~ /^ffff/ && !kernel)
			next
		# -addresses also prints "file:line" (or a path) after the name
		if (match(name, / [^ ]+$/) && (substr(name, RSTART + 1) ~ /:[0-9]+$/ ||
		    substr(name, RSTART + 1) ~ /^[^(]*\/[^(]*$/))
			name = substr(name, 1, RSTART - 1)
		if (name == "")
			name = "[unknown]"
		fr[++n] = name
	}
	END {
		flush()
		for (k in count)
			print count[k] "\t" k
	}' | LC_ALL=C sort -t "$(printf '\t')" -k1,1nr -k2
}

# the folded stacks of a pprof file; counts are its "samples" sample type
stacks_from_pprof() {
	local file=$1 pid=${2:-} out
	if ! out=$("$PPROF" -traces -addresses -sample_index=samples "$file" 2>/dev/null); then
		out=$("$PPROF" -traces -addresses "$file" 2>/dev/null) || {
			echo "stacks_from_pprof: $PPROF -traces $file failed" >&2
			return 1
		}
	fi
	folded_from_traces "$pid" <<<"$out"
}

# "perf script -F comm,pid,tid,ip,sym,dso --no-inline" text on stdin -> folded
folded_from_perf_script() {
	awk -v want_pid="${1:-}" -v kernel="${STACKS_KERNEL:-0}" -v inl="${STACKS_INLINE:-0}" '
	function flush(   key, i) {
		if (insample && !skip) {
			key = ""
			for (i = 1; i <= n; i++)
				key = key (i > 1 ? ";" : "") fr[i]
			if (key == "")
				key = "[kernel]"
			count[key]++
		}
		n = 0; insample = 0; skip = 0
	}
	NF == 0 { flush(); next }
	# a sample header: "comm pid/tid" (comm may hold spaces), then frames
	/^[^ \t]/ || !insample {
		flush()
		insample = 1
		if (want_pid != "") {
			for (i = NF; i > 0 && $i !~ /^[0-9]+\/[0-9]+$/; i--)
				;
			split($i, pt, "/")
			if (i == 0 || pt[1] != want_pid)
				skip = 1
		}
		next
	}
	# a frame: "<tab>ip sym (dso)"
	{
		line = $0
		sub(/^[ \t]+/, "", line)
		ip = line
		sub(/ .*/, "", ip)
		name = substr(line, length(ip) + 2)
		dso = ""
		if (match(name, / \([^()]*\)$/)) {
			dso = substr(name, RSTART + 2, RLENGTH - 3)
			name = substr(name, 1, RSTART - 1)
		}
		if (sub(/ \(inlined\)$/, "", name) && !inl)
			next
		if (!kernel && (dso ~ /^\[kernel/ || dso ~ /^\[guest\.kernel/ ||
		    (length(ip) == 16 && ip ~ /^ffff/)))
			next
		sub(/\+0x[0-9a-f]+$/, "", name)
		sub(/@@?[A-Z][A-Za-z0-9_.]*$/, "", name)
		if (name == "")
			name = "[unknown]"
		fr[++n] = name
	}
	END {
		flush()
		for (k in count)
			print count[k] "\t" k
	}' | LC_ALL=C sort -t "$(printf '\t')" -k1,1nr -k2
}

# the folded stacks of a perf.data file (recorded with --call-graph)
stacks_from_perf() {
	local data=$1 pid=${2:-} out
	out=$(perf script -i "$data" -F comm,pid,tid,ip,sym,dso --no-inline 2>/dev/null) || {
		echo "stacks_from_perf: perf script -i $data failed" >&2
		return 1
	}
	folded_from_perf_script "$pid" <<<"$out"
}

# "N of M (P%)" of the samples with leaf LEAF that hold CHAIN, then main
chain_share() {
	awk -F '\t' -v leaf="$2" -v chain="$3" -v roots="|$STACKS_MAIN|" '
	BEGIN {
		# expand "name*K" into K elements
		nc = 0
		ne = split(chain, el, ";")
		for (i = 1; i <= ne; i++) {
			rep = 1
			if (match(el[i], /\*[0-9]+$/)) {
				rep = substr(el[i], RSTART + 1) + 0
				el[i] = substr(el[i], 1, RSTART - 1)
			}
			for (r = 0; r < rep; r++)
				want[++nc] = "|" el[i] "|"
		}
	}
	{
		nf = split($2, f, ";")
		if (f[1] != leaf)
			next
		m += $1
		j = 1
		last = 0
		for (i = 1; i <= nf && j <= nc; i++)
			if (index(want[j], "|" f[i] "|")) {
				j++
				last = i
			}
		if (j <= nc)
			next
		for (i = last; i <= nf; i++)
			if (index(roots, "|" f[i] "|")) {
				n += $1
				break
			}
	}
	END { printf "%d of %d (%.1f%%)\n", n, m, m ? 100 * n / m : 0 }' "$1"
}

# "N of M (P%)" of all samples that hold FUNC ("a|b": either) anywhere in their stack
reach_share() {
	awk -F '\t' -v fns="|$2|" '
	{
		m += $1
		nf = split($2, f, ";")
		for (i = 1; i <= nf; i++)
			if (index(fns, "|" f[i] "|")) {
				n += $1
				break
			}
	}
	END { printf "%d of %d (%.1f%%)\n", n, m, m ? 100 * n / m : 0 }' "$1"
}

# the hottest leaf frames: "P%  count  name", N (10) of them
flat_profile() {
	awk -F '\t' '
	{
		leaf = $2
		sub(/;.*/, "", leaf)
		c[leaf] += $1
		m += $1
	}
	END {
		for (k in c)
			printf "%6.2f%%\t%d\t%s\n", 100 * c[k] / m, c[k], k
	}' "$1" | sort -t "$(printf '\t')" -k2,2nr -k3 | head -n "${2:-10}"
}

# named leaf frames at >= PCT% of one folded file and no leaf of the other
flat_name_diffs() {
	awk -F '\t' -v pct="${3:-3}" -v side=1 '
	{ leaf = $2; sub(/;.*/, "", leaf) }
	side == 1 { a[leaf] += $1; ta += $1; next }
	{ b[leaf] += $1; tb += $1 }
	END {
		for (f in a) seen[f] = 1
		for (f in b) seen[f] = 1
		for (f in seen) {
			if (f ~ /^\[.*\]$/)
				continue
			pa = ta ? 100 * a[f] / ta : 0
			pb = tb ? 100 * b[f] / tb : 0
			if ((pa >= pct && !b[f]) || (pb >= pct && !a[f]))
				printf "%s\tours %.1f%%\tperf %.1f%%\n", f, pa, pb
		}
	}' "$1" side=2 "$2" | LC_ALL=C sort
}

# true when a "N of M (P%)" result is at least PCT percent of a non-empty set
share_at_least() {
	awk -v r="$1" -v want="$2" 'BEGIN {
		if (split(r, w, " ") < 4 || w[3] + 0 == 0)
			exit 1
		p = w[4]
		gsub(/[()%]/, "", p)
		exit !(p + 0 >= want + 0)
	}'
}

# --- self-test: the awk above against hand-written inputs
stacks_selftest() {
	local tmp failures=0 got
	tmp=$(mktemp -d /tmp/stacks-selftest.XXXXXX)
	verdict() { if "$@"; then echo passes; else echo fails; fi; }
	# expect NAME GOT WANT
	expect() {
		if [ "$2" = "$3" ]; then
			echo "ok: $1"
		else
			echo "FAIL: $1: got [$2], want [$3]"
			failures=$((failures + 1))
		fi
	}

	# pprof -traces -addresses: labels, an inlined frame, kernel frames,
	# an unnamed frame, two samples of one stack, another pid
	cat >"$tmp/traces" <<'EOF'
File: unw_qsort
Type: samples
-----------+-------------------------------------------------------
thread_name:  unw_qsort
       pid:  100
 thread_id:  100
        40   0000555500001310 unw_cmp_hot
             00007f0000040123 msort_with_tmp
             00007f0000040456 qsort_r
             0000555500001385 unw_sort_driver
             00005555000010f0 main unw_qsort.c:49
             00007f0000027000 __libc_start_main
-----------+-------------------------------------------------------
       pid:  100
 thread_id:  100
         2   ffffffff8225f2d9 pvm_irq_enable
             ffffffff81000e06 asm_sysvec_apic_timer_interrupt
             0000555500001311 unw_cmp_hot
             0000555500001385 unw_sort_driver
-----------+-------------------------------------------------------
       pid:  100
         5   0000555500001320 unw_spin (inline)
             0000555500001320 unw_cmp_hot
             00007f0000040123 msort_with_tmp
             00007f0000040456 qsort_r
             0000555500001385 unw_sort_driver
             00005555000010f0 main
             00007f0000027000 __libc_start_main sysdeps/nptl/libc_start_call_main.h:74
-----------+-------------------------------------------------------
       pid:  100
         3   00007f00000400aa
             00007f0000040456 qsort_r
-----------+-------------------------------------------------------
       pid:  200
         7   0000555500001310 unw_cmp_hot
-----------+-------------------------------------------------------
       pid:  300
         1   0000555500001310 std::less<int>::operator()(int const&, int const&) const /usr/include/c++/12/bits/stl_function.h:408
             00005555000010f0 operator new(unsigned long)
-----------+-------------------------------------------------------
       pid:  400
         1   00007f0000090123 sem_post@@GLIBC_2.34
             00007f0000027000 __libc_start_main@GLIBC_2.2.5 sysdeps/nptl/libc_start_call_main.h:74
-----------+-------------------------------------------------------
EOF
	folded_from_traces 100 <"$tmp/traces" >"$tmp/f1"
	got=$(tr '\t' ' ' <"$tmp/f1" | paste -sd '|')
	expect "traces: pid filter, inline and kernel frames dropped, stacks merged" "$got" \
		"45 unw_cmp_hot;msort_with_tmp;qsort_r;unw_sort_driver;main;__libc_start_main|3 [unknown];qsort_r|2 unw_cmp_hot;unw_sort_driver"
	expect "traces: C++ names with spaces, file:line dropped" "$(folded_from_traces 300 <"$tmp/traces" | cut -f2)" \
		"std::less<int>::operator()(int const&, int const&) const;operator new(unsigned long)"
	expect "traces: a symbol version in the profile stays, to be seen" \
		"$(folded_from_traces 400 <"$tmp/traces" | cut -f2)" \
		"sem_post@@GLIBC_2.34;__libc_start_main@GLIBC_2.2.5"
	got=$(STACKS_INLINE=1 STACKS_KERNEL=1 folded_from_traces <"$tmp/traces" | cut -f2 | sed 's/;.*//' | sort | paste -sd ' ')
	expect "traces: STACKS_INLINE and STACKS_KERNEL keep those frames" "$got" \
		"[unknown] pvm_irq_enable sem_post@@GLIBC_2.34 std::less<int>::operator()(int const&, int const&) const unw_cmp_hot unw_cmp_hot unw_spin"
	expect "chain through qsort_r to main" "$(chain_share "$tmp/f1" unw_cmp_hot 'unw_cmp_hot;qsort|qsort_r;unw_sort_driver;main')" \
		"45 of 47 (95.7%)"
	expect "a chain not naming main still needs main rootward" "$(chain_share "$tmp/f1" unw_cmp_hot 'unw_cmp_hot;unw_sort_driver')" \
		"45 of 47 (95.7%)"
	expect "chain out of order fails" "$(chain_share "$tmp/f1" unw_cmp_hot 'unw_cmp_hot;unw_sort_driver;qsort_r')" \
		"0 of 47 (0.0%)"
	expect "absent leaf" "$(chain_share "$tmp/f1" nosuch 'nosuch;main')" "0 of 0 (0.0%)"
	expect "reach main" "$(reach_share "$tmp/f1" main)" "45 of 50 (90.0%)"
	expect "flat profile" "$(flat_profile "$tmp/f1" 2 | tr '\t' ' ' | paste -sd '|')" \
		" 94.00% 47 unw_cmp_hot|  6.00% 3 [unknown]"

	# perf script: pid/tid headers, comm with a space, dso, [unknown], kernel
	cat >"$tmp/perf" <<'EOF'
unw_deep 300/300
	            1349 unw_deep_leaf (/b/unw_deep)
	            138c unw_recurse (/b/unw_deep)
	            1370 unw_recurse (/b/unw_deep)
	            1370 unw_recurse (/b/unw_deep)
	            13aa unw_deep_driver (/b/unw_deep)
	            1108 main (/b/unw_deep)
	           27249 __libc_start_call_main (/usr/lib/x86_64-linux-gnu/libc.so.6)

unw_deep 300/300
	ffffffff8225f2d9 pvm_irq_enable ([kernel.kallsyms])
	            1349 unw_deep_leaf (/b/unw_deep)
	            138c unw_recurse (/b/unw_deep)
	            1370 unw_recurse (/b/unw_deep)
	            13aa unw_deep_driver (/b/unw_deep)
	            1108 main (/b/unw_deep)

unw_deep 300/300
	            1349 unw_deep_leaf (/b/unw_deep)
	            138c unw_recurse (/b/unw_deep)
	               0 [unknown] ([unknown])

Web Content 301/305
	            1349 unw_deep_leaf (/b/unw_deep)
	            1108 main (/b/unw_deep)

gzip 300/300
	            1050 unw_lib_tiny@plt (/b/gzip)
	            2a3b [unknown] (/b/gzip)
	           27249 __libc_start_call_main (/usr/lib/x86_64-linux-gnu/libc.so.6)
	           27305 __libc_start_main@@GLIBC_2.34 (/usr/lib/x86_64-linux-gnu/libc.so.6)
	            2c41 [unknown] (/b/gzip)

EOF
	folded_from_perf_script 300 <"$tmp/perf" >"$tmp/f2"
	got=$(tr '\t' ' ' <"$tmp/f2" | paste -sd '|')
	expect "perf: pid filter, kernel frames, dsos and symbol versions dropped" "$got" \
		"1 unw_deep_leaf;unw_recurse;[unknown]|1 unw_deep_leaf;unw_recurse;unw_recurse;unw_deep_driver;main|1 unw_deep_leaf;unw_recurse;unw_recurse;unw_recurse;unw_deep_driver;main;__libc_start_call_main|1 unw_lib_tiny@plt;[unknown];__libc_start_call_main;__libc_start_main;[unknown]"
	expect "reach main, or glibc's start above an unnamed main" "$(reach_share "$tmp/f2" "$STACKS_MAIN")" \
		"3 of 4 (75.0%)"
	expect "reach main by name only" "$(reach_share "$tmp/f2" main)" "2 of 4 (50.0%)"
	expect "chain passing an unnamed main" "$(chain_share "$tmp/f2" unw_lib_tiny@plt 'unw_lib_tiny@plt')" \
		"1 of 1 (100.0%)"
	expect "perf: comm with a space, pid 301" "$(folded_from_perf_script 301 <"$tmp/perf" | tr '\t' ' ')" \
		"1 unw_deep_leaf;main"
	expect "repeated frames: three unw_recurse" \
		"$(chain_share "$tmp/f2" unw_deep_leaf 'unw_deep_leaf;unw_recurse*3;unw_deep_driver;main')" "1 of 3 (33.3%)"
	expect "repeated frames: two unw_recurse" \
		"$(chain_share "$tmp/f2" unw_deep_leaf 'unw_deep_leaf;unw_recurse*2;main')" "2 of 3 (66.7%)"

	# hot names one side lacks: an alias or a version is a difference, a
	# share apart is not, nor are unnamed frames or a cold name
	printf '50\tsqlite3VdbeExec;main\n20\t__libc_malloc;main\n20\t[libc.so.6];main\n1\tcold_a;main\n9\tsem_post;main\n' >"$tmp/ours"
	printf '40\tsqlite3VdbeExec;main\n20\tmalloc;main\n30\t[unknown];main\n1\tcold_b;main\n9\tsem_post;main\n' >"$tmp/theirs"
	expect "flat names: an alias differs, shares and unnamed frames do not" \
		"$(flat_name_diffs "$tmp/ours" "$tmp/theirs" | tr '\t' ' ' | paste -sd '|')" \
		"__libc_malloc ours 20.0% perf 0.0%|malloc ours 0.0% perf 20.0%"
	expect "flat names: a profile against itself" "$(flat_name_diffs "$tmp/ours" "$tmp/ours")" ""
	printf '9\tsem_post@@GLIBC_2.34;main\n91\tsqlite3VdbeExec;main\n' >"$tmp/ours"
	printf '9\tsem_post;main\n91\tsqlite3VdbeExec;main\n' >"$tmp/theirs"
	expect "flat names: a version left in our names differs" \
		"$(flat_name_diffs "$tmp/ours" "$tmp/theirs" | cut -f1 | paste -sd ' ')" \
		"sem_post sem_post@@GLIBC_2.34"

	# the 95% bar: 96 of 100 passes, 94 of 100 and 0 of 0 fail
	printf '94\ta;b;main\n6\ta;b\n' >"$tmp/f3"
	got=$(chain_share "$tmp/f3" a 'a;b;main')
	expect "94 of 100" "$got" "94 of 100 (94.0%)"
	expect "94% fails the 95% bar" "$(verdict share_at_least "$got" 95)" fails
	expect "96% passes the 95% bar" "$(verdict share_at_least "96 of 100 (96.0%)" 95)" passes
	expect "an empty set fails any bar" "$(verdict share_at_least "0 of 0 (0.0%)" 0)" fails

	rm -rf "$tmp"
	[ "$failures" -eq 0 ] && { echo "all checks passed"; return 0; }
	echo "$failures check(s) failed"
	return 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case ${1:-} in
	--selftest) stacks_selftest; exit ;;
	*) echo "usage: $0 --selftest   (otherwise source it)" >&2; exit 2 ;;
	esac
fi
