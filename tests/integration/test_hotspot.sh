#!/usr/bin/env bash
# Java with no profiler flag named from the JVM's own tables (root: it loads
# BPF).  A CPU-bound program (three threads, each in a method of its own in
# package com.example.hot; one keeps a dozen live values, most of them 0, so
# that the JIT puts a 0 in rbp) runs with NO flag: no -XX:+PreserveFramePointer,
# no perf map.  Each JVM is profiled for HS_SECONDS (3) once warm:
#  - OpenJDK 17, Debian's (bookworm: make deps' default-jdk-headless), on the host;
#  - OpenJDK 11 and 21, bullseye's openjdk-11-jre-headless and trixie's
#    openjdk-21-jre-headless, in those suites' roots (tests/roots/mkroot.sh;
#    HS_ROOTS=0 leaves them out);
#  - JDK 25 where one is installed under /usr/lib/jvm (no Debian package of
#    this release has one: said, not failed, when missing).
# Checks, per JVM:
#  - the summary says the JVM's tables were read (none refused);
#  - >= HS_NAMED_BAR (90) % of the samples hold a method of the program, by
#    its name package.Class.method;
#  - no stack is a lone JIT frame counted whole: where the walk cannot go on
#    from JIT code it ends in a marker (jit_no_frame_pointer and others);
# and on the host's JVM, once its perf map is written (jcmd Compiler.perfmap),
# the JVM's tables still name its methods (perf maps name them
# "long com.example.hot.Hot.alphaMix(long)"): the tables win.  A JVM whose
# VMStructs exports a native agent damaged (the struct entries' stride set to
# 0 in its memory) is refused and counted, its frames left unnamed.
# Keep it under 90 s.
. "$(dirname "$0")/lib.sh"
need_root

SECS=${HS_SECONDS:-3}
HZ=${HS_HZ:-499}
NAMED_BAR=${HS_NAMED_BAR:-90}
PKG=com.example.hot
PROTO=/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
PY=/usr/bin/python3 # Debian's, with python3-protobuf
JDK17=/usr/lib/jvm/java-17-openjdk-amd64

[ -x "$JDK17/bin/javac" ] || skip "$JDK17 has no javac (make deps installs default-jdk-headless)"
[ -r "$PROTO" ] || skip "$PROTO missing (make deps installs golang-github-google-pprof-dev)"
command -v protoc >/dev/null || skip "protoc missing (make deps installs protobuf-compiler)"
"$PY" -c 'import google.protobuf' 2>/dev/null || skip "python3-protobuf missing (make deps)"
mkdir -p "$OUTPUT/proto"
protoc --python_out="$OUTPUT/proto" -I"$(dirname "$PROTO")" profile.proto ||
	{ echo "FAIL: protoc could not compile $PROTO"; exit 1; }

mkdir -p "$TMP/src/com/example/hot" "$TMP/classes"
cat >"$TMP/src/com/example/hot/Hot.java" <<'JAVA'
package com.example.hot;

/* three CPU-bound threads, each in a method of its own, no allocation in the loops */
public class Hot {
	static volatile long sink;

	static long alphaMix(long n) {
		long acc = 0;
		for (long i = 0; i < n; i++)
			acc = acc * 31 + (i ^ (acc >>> 7));
		return acc;
	}

	static long betaRoots(int n) {
		double acc = 1;
		for (int i = 1; i < n; i++)
			acc += Math.sqrt(i) / (acc + i);
		return (long) acc;
	}

	/* many live values, most of them 0: the JIT keeps them in every register
	 * it has, rbp included (no frame pointer without -XX:+PreserveFramePointer) */
	static long gammaRegisters(long n, long z) {
		long a = z, b = z, c = z, d = z, e = z, f = z, g = z, h = z, k = z, m = z, p = z, q = z;
		for (long i = 0; i < n; i++) {
			a += i & z; b ^= a & z; c += b | z; d ^= c + z; e += d & z; f ^= e | z;
			g += f & z; h ^= g + z; k += h & z; m ^= k | z; p += m & z; q ^= p + (i & 1);
		}
		return a + b + c + d + e + f + g + h + k + m + p + q;
	}

	public static void main(String[] args) throws Exception {
		long end = System.nanoTime() + Long.parseLong(args[0]) * 1000000000L;
		Thread[] t = new Thread[3];
		for (int id = 0; id < t.length; id++) {
			final int which = id;
			t[id] = new Thread(() -> {
				while (System.nanoTime() < end) {
					if (which == 0)
						sink += alphaMix(300000);
					else if (which == 1)
						sink += betaRoots(300000);
					else
						sink += gammaRegisters(300000, sink & 0);
				}
			}, "hot-" + id);
			t[id].start();
		}
		for (Thread x : t)
			x.join();
	}
}
JAVA
# class files of Java 11: every JVM tried runs them
"$JDK17/bin/javac" --release 11 -d "$TMP/classes" "$TMP/src/com/example/hot/Hot.java" ||
	{ echo "FAIL: javac failed"; exit 1; }

# the JVM runs longer than the collector: its code is named at the export,
# from the live process
RUN_SECS=$((SECS * 4 + 30)) # killed once profiled

# Profile PID as WHAT for SECS once warm; then judge.  Sets $CHECK.
profile() {
	local what=$1 pid=$2 rc
	sleep 2.5 # the JIT compiles the hot methods
	"$COLLECTOR" --no-status --pid "$pid" -d "$SECS" -F "$HZ" -o "$TMP/$what.pb.gz" \
		2>"$TMP/$what.log"
	rc=$?
	CHECK=$TMP/$what.check
	: >"$CHECK"
	if [ "$rc" -ne 0 ]; then
		fail "$what: the collector exited $rc: $(tail -3 "$TMP/$what.log")"
		return 1
	fi
	if ! "$PY" "$ROOT/tests/integration/hotspot_check.py" "$OUTPUT/proto" "$TMP/$what.pb.gz" \
		"$PKG" >"$CHECK"; then
		fail "$what: hotspot_check.py failed"
		return 1
	fi
	grep -E "user stacks|HotSpot" "$TMP/$what.log" | sed 's/^/   /'
	sed 's/^/   /' "$CHECK"
}

val() { sed -n "s/^$1 //p" "$CHECK"; }

judge() {
	local what=$1 total program line
	total=$(val samples)
	program=$(val program)
	line=$(grep "^ctxprof: HotSpot" "$TMP/$what.log")
	if [[ $line =~ \ 1\ JVMs\'\ tables\ read.*\ 0\ refused ]]; then
		ok "$what: the JVM's VMStructs tables read, none refused"
	else
		fail "$what: the JVM's tables not read: ${line:-no HotSpot line in the summary}"
	fi
	if [ "${total:-0}" -lt 100 ]; then
		fail "$what: only ${total:-0} samples"
	elif [ $((program * 100)) -ge $((total * NAMED_BAR)) ]; then
		ok "$what: $program of $total samples name a method of $PKG ($((program * 100 / total)) %, want >= $NAMED_BAR %)"
	else
		fail "$what: only $program of $total samples name a method of $PKG (want >= $NAMED_BAR %); heaviest leaves: $(grep '^top' "$CHECK" | tr '\n' ';')"
	fi
	if [ "$(val jit_complete)" = 0 ]; then
		ok "$what: no lone JIT frame counted as a whole stack ($(val jit_marked) samples of JIT leaves end in a marker)"
	else
		fail "$what: $(val jit_complete) samples are a lone JIT frame counted as a whole stack"
	fi
}

# --- OpenJDK 17 on the host, then with its perf map written
(cd "$TMP" && exec "$JDK17/bin/java" -cp "$TMP/classes" "$PKG.Hot" "$RUN_SECS") &
pid=$!
PIDS+=("$pid")
MAP=/tmp/perf-$pid.map # jcmd's, below
trap 'cleanup; rm -f "$MAP"' EXIT
if profile jdk17 "$pid"; then
	judge jdk17
fi
if [ -x "$JDK17/bin/jcmd" ] && "$JDK17/bin/jcmd" "$pid" Compiler.perfmap >/dev/null 2>&1 &&
	grep -q "$PKG.Hot.alphaMix" "/tmp/perf-$pid.map"; then
	if profile jdk17-perfmap "$pid"; then
		if [ "$(val perf_map_names)" = 0 ] && [ "$(val program)" -gt 0 ]; then
			ok "jdk17-perfmap: with a perf map naming them too, the JVM's tables name the methods ($(val program) samples)"
		else
			fail "jdk17-perfmap: $(val perf_map_names) samples named by the perf map where the JVM's tables name the code"
		fi
	fi
else
	fail "jdk17: jcmd $pid Compiler.perfmap wrote no perf map naming the program"
fi
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null

# --- a JVM whose VMStructs a native agent corrupted: its struct entries'
# stride (an export only debuggers read) set to 0 in its memory
(cd "$TMP" && exec "$JDK17/bin/java" -cp "$TMP/classes" "$PKG.Hot" "$RUN_SECS") &
pid=$!
PIDS+=("$pid")
sleep 1
"$PY" - "$pid" <<'PY' || fail "corrupt: could not write the JVM's stride export"
import subprocess, sys
pid = sys.argv[1]
for line in open(f"/proc/{pid}/maps"):
    f = line.split()
    if len(f) == 6 and f[5].endswith("/libjvm.so") and int(f[2], 16) == 0:
        base, lib = int(f[0].split("-")[0], 16), f[5]
        break
nm = subprocess.run(["nm", "-D", lib], capture_output=True, text=True, check=True).stdout
at = next(int(x.split()[0], 16) for x in nm.splitlines()
          if x.split()[-1].startswith("gHotSpotVMStructEntryArrayStride"))
with open(f"/proc/{pid}/mem", "r+b") as m:
    m.seek(base + at)
    m.write(b"\0" * 8)
PY
if profile corrupt "$pid"; then
	line=$(grep "^ctxprof: HotSpot" "$TMP/corrupt.log")
	if [[ $line =~ \ 0\ JVMs\'\ tables\ read.*bad_exports=1 ]] && kill -0 "$pid" 2>/dev/null; then
		ok "corrupt: the JVM's damaged VMStructs refused and counted (bad_exports), the JVM unharmed, no name guessed ($(val program) samples named)"
	else
		fail "corrupt: a damaged VMStructs not refused as bad_exports: ${line:-no HotSpot line}"
	fi
	[ "$(val program)" = 0 ] || fail "corrupt: $(val program) samples named from a refused layout"
fi
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null

# --- OpenJDK 11 and 21 in Debian roots: WHAT SUITE PACKAGE JAVA_HOME
in_root() {
	local what=$1 suite=$2 pkg=$3 home=$4 R IN
	if [ "${HS_ROOTS:-1}" = 0 ]; then
		echo "skip: $what (HS_ROOTS=0)"
		return
	fi
	if ! R=$("$ROOT/tests/roots/mkroot.sh" "$suite" "$pkg" | tail -1) ||
		[ ! -x "$R$home/bin/java" ]; then
		fail "$what: the $suite root with $pkg could not be made"
		return
	fi
	IN=/var/tmp/ctxprof-hotspot.$$
	mkdir -p "$R$IN"
	cp -r "$TMP/classes" "$R$IN/"
	# run.sh execs through unshare and chroot: $! is the JVM
	"$ROOT/tests/roots/run.sh" "$R" "$home/bin/java" -cp "$IN/classes" "$PKG.Hot" "$RUN_SECS" &
	pid=$!
	PIDS+=("$pid")
	if profile "$what" "$pid"; then
		judge "$what"
	fi
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rm -rf "${R:?}$IN"
}
in_root jdk11 bullseye openjdk-11-jre-headless /usr/lib/jvm/java-11-openjdk-amd64
in_root jdk21 trixie openjdk-21-jre-headless /usr/lib/jvm/java-21-openjdk-amd64

# --- JDK 25, where installed
JDK25=$(ls -d /usr/lib/jvm/*-25-* 2>/dev/null | head -1)
if [ -n "$JDK25" ] && [ -x "$JDK25/bin/java" ]; then
	(cd "$TMP" && exec "$JDK25/bin/java" -cp "$TMP/classes" "$PKG.Hot" "$RUN_SECS") &
	pid=$!
	PIDS+=("$pid")
	if profile jdk25 "$pid"; then
		judge jdk25
	fi
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
else
	echo "skip: JDK 25 (none under /usr/lib/jvm; no Debian suite of ours packages it yet)"
fi

finish
