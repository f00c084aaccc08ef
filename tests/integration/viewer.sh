# shellcheck shell=bash
# The real-browser check: sourced after lib.sh, not run.
#
# Opens profiles in the speedscope web app (npm package speedscope, installed
# by `make deps` into $SPEEDSCOPE_DIR) in Debian's Chromium, headless, and
# checks that the page shows given function names; viewer.mjs beside this
# file does the work (how: see its header).  No mock anywhere: a real browser
# loads the real app from a local HTTP server on 127.0.0.1.
#
#   viewer_available                 0, or 1 with the reason in VIEWER_SKIP_REASON
#   viewer_check FILE OUT_PNG NAME...
#                                    FILE in speedscope; 0 when it shows every NAME
#   viewer_run --job FILE PNG VIEW NAME... [--job ...]
#                                    several files in one browser; prints one
#                                    "viewer: PASS FILE" or "viewer: FAIL FILE: why"
#                                    each; 0 all passed, 1 one failed, 2 could not run
#   viewer_result OUTPUT FILE        PASS or FAIL (or nothing) for FILE in a
#                                    viewer_run's saved output
#
# A NAME matches a row of speedscope's function table that is exactly NAME,
# or NAME followed by " {...}" (a trace event with args); "profile:TEXT"
# instead wants TEXT in the name of one of the file's profiles (threads),
# "first:TEXT" in the name of the profile the page opens on.
# VIEW is time-ordered, left-heavy or sandwich: the view OUT_PNG shows;
# viewer_check takes VIEWER_VIEW, else time-ordered for JSON, left-heavy
# otherwise.  Screenshots: OUT_PNG and OUT_PNG's .sandwich.png, the table.
#
# Environment: SPEEDSCOPE_DIR (default: where `make deps` puts the version
# the Makefile pins), CHROMIUM (chromium), NODE (node), VIEWER_TIMEOUT
# (seconds for one viewer_run, 120), VIEWER_SHOTS (where tests put their
# screenshots, $OUTPUT/viewer).

VIEWER_DRIVER=$ROOT/tests/integration/viewer.mjs
if [ -z "${SPEEDSCOPE_DIR:-}" ]; then
	SPEEDSCOPE_DIR=$(sed -n 's/^DEPS_DIR ?= *//p' "$ROOT/Makefile")/speedscope-$(sed -n \
		's/^SPEEDSCOPE_VERSION := *//p' "$ROOT/Makefile")
fi
CHROMIUM=${CHROMIUM:-chromium}
NODE=${NODE:-node}
VIEWER_TIMEOUT=${VIEWER_TIMEOUT:-120}
VIEWER_SHOTS=${VIEWER_SHOTS:-$OUTPUT/viewer}
VIEWER_SKIP_REASON=
VIEWER_PGID_FILE=$TMP/viewer-chromium.pgid

# shellcheck disable=SC2034 # VIEWER_SKIP_REASON: the tests read it
viewer_available() {
	if ! command -v "$CHROMIUM" >/dev/null; then
		VIEWER_SKIP_REASON="$CHROMIUM missing (make deps installs Debian's chromium)"
	elif ! command -v "$NODE" >/dev/null; then
		VIEWER_SKIP_REASON="$NODE missing (make deps installs Debian's npm and nodejs)"
	elif [ ! -f "$SPEEDSCOPE_DIR/dist/release/index.html" ]; then
		VIEWER_SKIP_REASON="speedscope missing from $SPEEDSCOPE_DIR (make deps installs it)"
	else
		return 0
	fi
	return 1
}

# Chromium is in a process group of its own, which the driver kills when it
# ends; this is for a driver that was killed itself.  pgrep finds only a
# group that still has members, so never a reused pid; the processes of a
# group just killed take a moment to go.
viewer_kill_chromium() {
	local pgid
	[ -s "$VIEWER_PGID_FILE" ] || return 0
	pgid=$(cat "$VIEWER_PGID_FILE")
	rm -f "$VIEWER_PGID_FILE"
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		pgrep -g "$pgid" >/dev/null 2>&1 || return 0
		sleep 0.2
	done
	echo "viewer: killing Chromium's process group $pgid, left behind"
	kill -KILL -- "-$pgid" 2>/dev/null
	return 0
}
# lib.sh's clean-up, and Chromium's if a test stops in the middle
trap 'viewer_kill_chromium; cleanup' EXIT

viewer_run() {
	local rc
	mkdir -p "$VIEWER_SHOTS"
	timeout -k 5 $((VIEWER_TIMEOUT + 15)) "$NODE" "$VIEWER_DRIVER" \
		--speedscope "$SPEEDSCOPE_DIR" --chromium "$CHROMIUM" --timeout "$VIEWER_TIMEOUT" \
		--pgid-file "$VIEWER_PGID_FILE" --chromium-log "$VIEWER_SHOTS/chromium.log" "$@"
	rc=$?
	[ "$rc" -ge 124 ] && echo "viewer: ERROR: the driver was stopped after $((VIEWER_TIMEOUT + 15)) s"
	viewer_kill_chromium
	return "$rc"
}

viewer_check() {
	local file=$1 png=$2 view=${VIEWER_VIEW:-}
	shift 2
	if [ -z "$view" ]; then
		case $file in
		*.json | *.json.gz) view=time-ordered ;;
		*) view=left-heavy ;;
		esac
	fi
	viewer_run --job "$file" "$png" "$view" "$@"
}

viewer_result() {
	local line
	while IFS= read -r line; do
		case $line in
		"viewer: PASS $2" | "viewer: PASS $2: "*) echo PASS ;;
		"viewer: FAIL $2" | "viewer: FAIL $2: "*) echo FAIL ;;
		esac
	done <"$1"
}
