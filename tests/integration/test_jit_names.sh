#!/usr/bin/env bash
# JIT code named from perf maps (root: it loads BPF and runs perf on other
# processes).  Two JITs write /tmp/perf-PID.map, the file perf reads for
# anonymous executable memory:
#  - Node: node --perf-basic-prof running ten known hot JS functions
#    (written here), appending as V8 compiles;
#  - Java: a JVM with -XX:+PreserveFramePointer running ten hot methods
#    (compiled here with javac: the JRE has neither javac nor jcmd, so `make
#    deps` installs default-jdk-headless), its map written by `jcmd PID
#    Compiler.perfmap` once warm and again near the end of the recording.
# Each is profiled for JIT_SECONDS (3) by the collector and, at the same
# time, by `perf record -g`, which reads the same map.  Checks:
#  - >= JIT_NAMED_BAR (90) % of the samples whose leaf is in anonymous
#    code (or no known mapping) name a function;
#  - the ten hottest self functions (user-space leaves) agree with perf's on
#    >= JIT_AGREE (8);
#  - the summary counts the map's lines and the frames named from it.
#  - >= JIT_REACH_BAR (95) % of the stacks reach a thread's root (main,
#    start_thread): JIT frames and V8's builtins (no CFI in node) are walked
#    by frame pointer, and the walk goes back to the tables after them.
# Names are compared whole, decoded from the profile by
# jit_check.py (pprof's text output would cut "JS:*f /tmp/x.js:3:1").
. "$(dirname "$0")/lib.sh"
need_root

SECS=${JIT_SECONDS:-3}
HZ=${JIT_HZ:-499}
NAMED_BAR=${JIT_NAMED_BAR:-90}
AGREE=${JIT_AGREE:-8}
REACH_BAR=${JIT_REACH_BAR:-95}
PROTO=/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
PY=/usr/bin/python3 # Debian's, with python3-protobuf

command -v perf >/dev/null || skip "perf missing (make deps installs linux-perf)"
# --no-buildid: Debian 12's perf 6.1 aborts now and then in its build-id
# pass at the end of a recording ("assertion failed at util/build-id.c");
# perf script finds the files by path
perf record -q --no-buildid -e cpu-clock -o "$TMP/probe.data" -- true >/dev/null 2>&1 ||
	skip "perf cannot record the cpu-clock event here"
[ -r "$PROTO" ] || skip "$PROTO missing (make deps installs golang-github-google-pprof-dev)"
command -v protoc >/dev/null || skip "protoc missing (make deps installs protobuf-compiler)"
"$PY" -c 'import google.protobuf' 2>/dev/null || skip "python3-protobuf missing (make deps)"
mkdir -p "$OUTPUT/proto"
protoc --python_out="$OUTPUT/proto" -I"$(dirname "$PROTO")" profile.proto ||
	{ echo "FAIL: protoc could not compile $PROTO"; exit 1; }

MAPS=()
trap 'cleanup; rm -f "${MAPS[@]}"' EXIT

# Record PID for SECS with the collector and perf at once, as WHAT; then
# compare.  A command in "$@" runs in the background meanwhile.
profile_and_check() {
	local what=$1 pid=$2 c bg='' rc named anon agree reach total line
	shift 2
	"$COLLECTOR" --no-status --pid "$pid" -d "$SECS" -F "$HZ" -o "$TMP/$what.pb.gz" \
		2>"$TMP/$what.log" &
	c=$!
	if [ $# -gt 0 ]; then
		"$@" &
		bg=$!
	fi
	perf record -q --no-buildid -e cpu-clock -F "$HZ" -g -p "$pid" -o "$TMP/$what.data" \
		-- sleep "$SECS" \
		>"$TMP/$what.perf.log" 2>&1
	wait "$c"
	rc=$?
	[ -n "$bg" ] && wait "$bg"
	if [ "$rc" -ne 0 ]; then
		fail "$what: the collector exited $rc: $(tail -3 "$TMP/$what.log")"
		return
	fi
	perf script -i "$TMP/$what.data" -F comm,tid,ip,sym,dso >"$TMP/$what.perf.txt" 2>/dev/null
	if ! "$PY" "$ROOT/tests/integration/jit_check.py" "$OUTPUT/proto" "$TMP/$what.pb.gz" \
		"$TMP/$what.perf.txt" >"$TMP/$what.check"; then
		fail "$what: jit_check.py failed"
		return
	fi
	grep -E "samples:|perf maps|user stacks" "$TMP/$what.log" | sed 's/^/   /'
	sed 's/^/   /' "$TMP/$what.check"
	val() { sed -n "s/^$1 //p" "$TMP/$what.check"; }
	anon=$(val anon_leaf)
	named=$(val anon_named)
	agree=$(val agree)
	reach=$(val reach_root)
	total=$(val samples)
	if [ "${anon:-0}" -lt 50 ]; then
		fail "$what: only ${anon:-0} samples with a leaf in anonymous code: no JIT code ran?"
	elif [ $((named * 100)) -ge $((anon * NAMED_BAR)) ]; then
		ok "$what: $named of $anon samples with a leaf in JIT code named ($((named * 100 / anon)) %, want >= $NAMED_BAR %)"
	else
		fail "$what: only $named of $anon samples with a leaf in JIT code named (want >= $NAMED_BAR %)"
	fi
	if [ "${agree:-0}" -ge "$AGREE" ]; then
		ok "$what: $agree of the 10 hottest self functions are perf's too (want >= $AGREE)"
	else
		fail "$what: only ${agree:-0} of the 10 hottest self functions are perf's (want >= $AGREE)"
	fi
	line=$(grep "^ctxprof: perf maps" "$TMP/$what.log")
	# a JVM's frames are named from its own tables first (test_hotspot.sh):
	# its perf map is read, and names what they do not
	hs=$(sed -n 's/^ctxprof: HotSpot.* frames named as methods \([0-9]*\).*/\1/p' "$TMP/$what.log")
	if [[ $line =~ ([0-9]+)\ lines\ kept.*\ ([0-9]+)\ frames\ named ]] &&
		[ "${BASH_REMATCH[1]}" -gt 0 ] && [ $((BASH_REMATCH[2] + ${hs:-0})) -gt 0 ]; then
		ok "$what: the summary counts ${BASH_REMATCH[1]} lines kept, ${BASH_REMATCH[2]} frames named (${hs:-0} by the JVM's tables)"
	else
		fail "$what: no perf map counted in the summary: ${line:-none}"
	fi
	if [ "${total:-0}" -gt 0 ] && [ $((reach * 100)) -ge $((total * REACH_BAR)) ]; then
		ok "$what: $reach of $total samples reach a thread's root (want >= $REACH_BAR %)"
	else
		fail "$what: only ${reach:-0} of ${total:-0} samples reach a thread's root (want >= $REACH_BAR %)"
	fi
}

# --- Node
if command -v node >/dev/null; then
	# ten functions, each a frame of its own (--no-turbo-inlining), whose
	# shares of the loop (3 to 12 parts in 75) stand well above the rest
	cat >"$TMP/hot.js" <<'JS'
function w0(n) { let h = 1; for (let i = 0; i < n; i++) h = Math.imul(h ^ i, 16777619); return h; }
function w1(n) { let h = 2; for (let i = 0; i < n; i++) h = (h * 31 + i) | 0; return h; }
function w2(n) { let h = 3; for (let i = 0; i < n; i++) h = (h ^ (h << 5)) + i | 0; return h; }
function w3(n) { let h = 4; for (let i = 0; i < n; i++) h = (h + (h >>> 3) + i) | 0; return h; }
function w4(n) { let a = 0, b = 1; for (let i = 0; i < n; i++) { const t = (a + b) | 0; a = b; b = t; } return a; }
function w5(n) { let h = 6; for (let i = 0; i < n; i++) h = (h - i * 7) | 0; return h; }
function w6(n) { let h = 7; for (let i = 0; i < n; i++) h = (h ^ i) + (i & 15) | 0; return h; }
function w7(n) { let h = 8; for (let i = 0; i < n; i++) h = Math.imul(h + i, 40503) ^ i; return h; }
function w8(n) { let h = 9; for (let i = 0; i < n; i++) h = (h + (i | 3)) ^ (h >>> 7); return h; }
function w9(n) { let h = 10; for (let i = 0; i < n; i++) h = (h * 5 + (i ^ 0x55)) | 0; return h; }
const fs = [w0, w1, w2, w3, w4, w5, w6, w7, w8, w9];
let s = 0;
for (;;)
	for (let k = 0; k < fs.length; k++)
		s = (s + fs[k]((k + 3) * 20000)) | 0;
JS
	# in $TMP: V8 writes its isolate-*-v8.log into the working directory
	(cd "$TMP" && exec node --perf-basic-prof --no-turbo-inlining hot.js) &
	pid=$!
	PIDS+=("$pid")
	MAPS+=("/tmp/perf-$pid.map")
	sleep 2 # V8 optimizes the hot functions
	profile_and_check node "$pid"
	kill "$pid" 2>/dev/null
	grep -q "JS:\*w9 \|LazyCompile:\*w9 " "/tmp/perf-$pid.map" 2>/dev/null ||
		fail "node: its perf map has no optimized w9"
else
	fail "node missing (make deps installs nodejs)"
fi

# --- Java
if command -v javac >/dev/null && command -v jcmd >/dev/null; then
	mkdir -p "$TMP/java"
	cat >"$TMP/java/JitHot.java" <<'JAVA'
public class JitHot {
	static int w0(int n) { int h = 1; for (int i = 0; i < n; i++) h = (h ^ i) * 16777619; return h; }
	static int w1(int n) { int h = 2; for (int i = 0; i < n; i++) h = h * 31 + i; return h; }
	static int w2(int n) { int h = 3; for (int i = 0; i < n; i++) h = (h ^ (h << 5)) + i; return h; }
	static int w3(int n) { int h = 4; for (int i = 0; i < n; i++) h = h + (h >>> 3) + i; return h; }
	static int w4(int n) { int a = 0, b = 1; for (int i = 0; i < n; i++) { int t = a + b; a = b; b = t; } return a; }
	static int w5(int n) { int h = 6; for (int i = 0; i < n; i++) h = (h - i * 7) ^ (h >>> 11); return h; }
	static int w6(int n) { int h = 7; for (int i = 0; i < n; i++) h = (h ^ i) + (i & 15) * h; return h; }
	static int w7(int n) { int h = 8; for (int i = 0; i < n; i++) h = (h + i) * 40503 ^ i; return h; }
	static int w8(int n) { int h = 9; for (int i = 0; i < n; i++) h = (h + (i | 3)) ^ (h >>> 7); return h; }
	static int w9(int n) { int h = 10; for (int i = 0; i < n; i++) h = h * 5 + (i ^ 0x55); return h; }
	public static void main(String[] args) {
		int s = 0;
		for (;;) {
			s += w0(3 * 200000); s += w1(4 * 200000); s += w2(5 * 200000); s += w3(6 * 200000);
			s += w4(7 * 200000); s += w5(8 * 200000); s += w6(9 * 200000); s += w7(10 * 200000);
			s += w8(11 * 200000); s += w9(12 * 200000);
			if (s == 42) System.out.println(s);
		}
	}
}
JAVA
	if javac -d "$TMP/java" "$TMP/java/JitHot.java"; then
		# each method a frame of its own: C2 would inline them into main's loop
		(cd "$TMP" && exec java -XX:+PreserveFramePointer -XX:CompileCommand=quiet \
			-XX:CompileCommand=dontinline,JitHot::* -cp "$TMP/java" JitHot) &
		pid=$!
		PIDS+=("$pid")
		MAPS+=("/tmp/perf-$pid.map")
		sleep 3 # C2 compiles the hot methods
		jcmd "$pid" Compiler.perfmap >/dev/null || fail "java: jcmd $pid Compiler.perfmap failed"
		# again near the end: code compiled while recording gets its name too
		profile_and_check java "$pid" sh -c "sleep $((SECS - 1)); jcmd $pid Compiler.perfmap >/dev/null"
		kill "$pid" 2>/dev/null
	else
		fail "java: javac failed"
	fi
else
	fail "javac or jcmd missing (make deps installs default-jdk-headless)"
fi
finish
