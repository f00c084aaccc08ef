# shellcheck shell=bash
# Debian's own programs as unwinding workloads: sourced, not run.
#
# Debian builds its packages without frame pointers, so a frame-pointer walk
# of these programs stops after a frame or two; .eh_frame unwinding must
# reach main.  Each deb_<name> function starts its program CPU-bound for
# SECONDS seconds (its input generated under DIR), prints the pid of the
# process doing the work and returns at once, so a test can profile that pid
# with perf and with our collector in the same run:
#   pid=$(deb_xz 5 "$TMP"); PIDS+=("$pid")
# The programs write to DIR/<name>.out and DIR/<name>.err, never to the
# caller's stdout (a command substitution would wait for them otherwise).
# deb_<name>_available says whether the program is installed, and
# DEB_PROGRAMS lists them with the Debian package that ships them.
#
# Chosen because perf --call-graph dwarf,16384 reaches main in 100% of their
# samples on Debian 12 (test_unwind.sh prints it), each stresses something
# else, and all are cheap to install: perl-base and gzip are Essential (on
# every Debian), the others are one "apt-get install -y python3-minimal
# xz-utils sqlite3 openssl" away (python3-minimal, xz-utils and openssl are in
# most installs already).
#   python3  interpreter loop, static functions unnamed, ~13 frames
#   perl     statically linked interpreter, every function named, ~7 frames
#   gzip     stripped executable: main itself unnamed, ~8 frames
#   xz       stripped executable into liblzma, ~14 frames
#   sqlite3  a stack over 4 KiB deep: perf needs an 8 KiB dump (4 KiB: 0% reach main)
#   openssl  hand-written perlasm SHA-256 leaf, unwound by its .cfi_* notes

DEB_LIBDIR=/lib/$(uname -m)-linux-gnu
# name:package:the ELF holding the hot code (deb_fp_prologues checks it)
DEB_PROGRAMS=(
	"python3:python3-minimal:$(readlink -f /usr/bin/python3 2>/dev/null)"
	perl:perl-base:/usr/bin/perl
	gzip:gzip:/usr/bin/gzip
	"xz:xz-utils:$DEB_LIBDIR/liblzma.so.5"
	"sqlite3:sqlite3:$DEB_LIBDIR/libsqlite3.so.0"
	"openssl:openssl:$DEB_LIBDIR/libcrypto.so.3"
)

# kill PID after SECONDS, for the programs that have no clock of their own;
# the watcher leaves as soon as PID is gone
deb_stop_after() {
	(
		end=$((SECONDS + $2))
		while kill -0 "$1" 2>/dev/null; do
			[ "$SECONDS" -ge "$end" ] && { kill "$1"; break; }
			sleep 0.5
		done
	) >/dev/null 2>&1 </dev/null &
}

deb_python3_available() { [ -x /usr/bin/python3 ]; }
# a pure-Python loop in the main thread (the interpreter starts no thread):
# main -> Py_BytesMain -> ... -> _PyEval_EvalFrameDefault
deb_python3() {
	local secs=$1 dir=$2
	cat >"$dir/unw_py.py" <<'EOF'
import sys, time

def unw_py_leaf(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s

def unw_py_mid(n):
    return unw_py_leaf(n)

end = time.monotonic() + float(sys.argv[1])
total = 0
while time.monotonic() < end:
    total += unw_py_mid(20000)
print(total)
EOF
	/usr/bin/python3 "$dir/unw_py.py" "$secs" >"$dir/python3.out" 2>"$dir/python3.err" </dev/null &
	echo $!
}

deb_perl_available() { [ -x /usr/bin/perl ]; }
# perl's run loop: main -> perl_run -> S_run_body -> Perl_runops_standard -> Perl_pp_*
deb_perl() {
	local secs=$1 dir=$2
	/usr/bin/perl -e '
		sub unw_pl_leaf { my ($n, $s) = (shift, 0); $s += $_ * $_ % 7 for 1 .. $n; $s }
		my ($end, $t) = (time + $ARGV[0], 0);
		$t += unw_pl_leaf(20000) while time < $end;
		print "$t\n";' "$secs" >"$dir/perl.out" 2>"$dir/perl.err" </dev/null &
	echo $!
}

# compressible text that never ends, for the compressors to chew on: varied
# enough that they do real work (seq's numbers, some repeated words)
deb_text_stream() {
	seq 1 100000000000 | sed 's/\(.*\)7\(.*\)/\1 seven \2 lorem ipsum dolor/'
}

deb_xz_available() { command -v xz >/dev/null; }
# main -> coder_run -> lzma_code -> ... -> lzma_mf_bt4_find (liblzma)
deb_xz() {
	local secs=$1 dir=$2 pid
	deb_text_stream 2>/dev/null | xz -9 -T1 -c >/dev/null 2>"$dir/xz.err" &
	pid=$!
	deb_stop_after "$pid" "$secs"
	echo "$pid"
}

deb_gzip_available() { command -v gzip >/dev/null; }
# main -> treat_stdin -> zip -> deflate -> longest_match
deb_gzip() {
	local secs=$1 dir=$2 pid
	deb_text_stream 2>/dev/null | gzip -9 -c >/dev/null 2>"$dir/gzip.err" &
	pid=$!
	deb_stop_after "$pid" "$secs"
	echo "$pid"
}

deb_sqlite3_available() { command -v sqlite3 >/dev/null; }
# a recursive CTE: main -> ... -> sqlite3_step -> sqlite3VdbeExec (libsqlite3)
deb_sqlite3() {
	local secs=$1 dir=$2 pid
	sqlite3 :memory: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
		SELECT sum((x * 7919) % 1000003) FROM (SELECT x FROM c LIMIT 100000000000);" \
		>"$dir/sqlite3.out" 2>"$dir/sqlite3.err" </dev/null &
	pid=$!
	deb_stop_after "$pid" "$secs"
	echo "$pid"
}

deb_openssl_available() { command -v openssl >/dev/null; }
# SHA-256 of 16 KiB blocks: main -> do_cmd -> speed_main -> run_benchmark ->
# EVP_Digest_loop -> ... -> sha256_block_data_order_* (perlasm, libcrypto)
deb_openssl() {
	local secs=$1 dir=$2
	openssl speed -seconds "$secs" -bytes 16384 -evp sha256 \
		>"$dir/openssl.out" 2>"$dir/openssl.err" </dev/null &
	echo $!
}

# how many functions of an ELF set up a frame pointer: "K of F", F = its
# .eh_frame FDEs (one a function), K = "push %rbp; mov %rsp,%rbp" prologues
deb_fp_prologues() {
	local elf=$1 fdes fps
	fdes=$(readelf --debug-dump=frames "$elf" 2>/dev/null | grep -c ' FDE cie=')
	fps=$(objdump -d --no-show-raw-insn "$elf" 2>/dev/null |
		awk '/push +%rbp$/ { p = 1; next } p && /mov +%rsp,%rbp$/ { n++ } { p = 0 } END { print n + 0 }')
	echo "$fps of $fdes"
}
