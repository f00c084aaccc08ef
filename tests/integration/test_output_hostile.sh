#!/usr/bin/env bash
# Output paths are hostile (needs root: BPF, and another user to plant
# things).  In a sticky, world-writable directory like /tmp, user nobody
# plants at the name root's collector will write:
#   - a FIFO (mode 666) with a reader waiting: refused, the reader gets
#     nothing;
#   - a symbolic link to /dev/kmsg, to /dev/null, to a file of root's:
#     refused, never followed; the link and what it names are untouched;
#   - a regular file of its own: refused (root would replace it);
#   - FIFOs at the names of the next interval files, while a continuous run
#     goes on: each of those writes is refused (counted, the run goes on,
#     the FIFOs untouched, the samples still reconcile);
# and, whoever made them: a directory, a path in a directory that does not
# exist (one line, exit non-zero, before profiling); a link in a directory
# only root can write is followed to the regular file it names; "-" writes
# to standard output.  Temporary files a SIGKILLed run left are removed at
# the next start, and only those: not another user's, not a link or a
# directory named like ours.
. "$(dirname "$0")/lib.sh"
need_root
command -v setpriv >/dev/null || skip "setpriv missing (util-linux)"

as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

profile() { # collector args... -> exit code; stderr in $TMP/log
	"$COLLECTOR" --no-status "$@" 2>"$TMP/log"
}

# refused at once, one line, nothing profiled: --duration 30 must not run
refused() { # what, pattern, args...
	local what=$1 pattern=$2 t0 rc
	shift 2
	t0=$SECONDS
	profile --pid "$wl" --duration 30 "$@"
	rc=$?
	if [ $rc -ne 0 ] && [ $((SECONDS - t0)) -lt 10 ] && [ "$(wc -l <"$TMP/log")" -eq 1 ] &&
		grep -q -- "$pattern" "$TMP/log"; then
		ok "$what: refused (exit $rc): $(cat "$TMP/log")"
	else
		fail "$what: exit $rc after $((SECONDS - t0)) s: $(cat "$TMP/log")"
	fi
}

# a /tmp of our own: sticky, world-writable, reachable by nobody
chmod 711 "$TMP"
S=$TMP/sticky
mkdir "$S"
chmod 1777 "$S"
start_bg "$WORKLOADS/shares"
wl=$!

echo "== a FIFO nobody planted, with a reader"
as_nobody mkfifo -m 666 "$S/cpu.pb.gz"
as_nobody timeout 5 cat "$S/cpu.pb.gz" >"$TMP/stolen" &
reader=$!
refused "FIFO" "it is a FIFO" -o "$S/cpu.pb.gz"
wait $reader
[ ! -s "$TMP/stolen" ] && [ -p "$S/cpu.pb.gz" ] && ok "the FIFO's reader got nothing; still a FIFO" ||
	fail "the reader got $(stat -c %s "$TMP/stolen") bytes"
rm -f "$S/cpu.pb.gz"

echo "== symbolic links nobody planted"
echo precious >"$TMP/victim"
for target in /dev/kmsg /dev/null "$TMP/victim"; do
	as_nobody ln -s "$target" "$S/cpu.pb.gz"
	refused "a link to $target in a sticky directory" "symbolic link" -o "$S/cpu.pb.gz"
	[ -L "$S/cpu.pb.gz" ] && [ "$(readlink "$S/cpu.pb.gz")" = "$target" ] ||
		fail "the link to $target was replaced"
	rm -f "$S/cpu.pb.gz"
done
[ "$(cat "$TMP/victim")" = precious ] && ok "the file a link named is untouched" ||
	fail "the file a link named was written"
[ -c /dev/null ] && [ -c /dev/kmsg ] && ok "/dev/null and /dev/kmsg are still devices" ||
	fail "a device was replaced: $(ls -l /dev/null /dev/kmsg)"
# the same link, root's own: the directory is still others', still refused
ln -s "$TMP/victim" "$S/cpu.pb.gz"
refused "root's own link in a sticky directory" "symbolic link" -o "$S/cpu.pb.gz"
rm -f "$S/cpu.pb.gz"

echo "== a file of nobody's at the name"
as_nobody sh -c "echo theirs > '$S/cpu.pb.gz'"
refused "nobody's file in a sticky directory" "another user" -o "$S/cpu.pb.gz"
[ "$(cat "$S/cpu.pb.gz")" = theirs ] && ok "nobody's file is untouched" || fail "nobody's file was replaced"
rm -f "$S/cpu.pb.gz"

echo "== other paths"
refused "a directory" "is a directory" -o "$TMP"
refused "a path in no directory" "No such file or directory" -o "$TMP/nonexistent/cpu.pb.gz"
refused "a device" "device" -o /dev/null
refused "--timeline a FIFO" "FIFO" -o "$TMP/ok.pb.gz" --timeline "$(mkfifo "$TMP/tl" && echo "$TMP/tl")"
# a link only root could have made is followed to the file it names
mkdir -m 700 "$TMP/mine"
echo old >"$TMP/mine/real.pb.gz"
ln -s real.pb.gz "$TMP/mine/latest.pb.gz"
if profile --pid "$wl" --duration 0.5 -o "$TMP/mine/latest.pb.gz" &&
	[ -L "$TMP/mine/latest.pb.gz" ] && pprof_total "$TMP/mine/real.pb.gz" samples | grep -q .; then
	ok "a link in root's own directory: the profile is in the file it names"
else
	fail "a link in root's own directory: $(cat "$TMP/log"); $(ls -l "$TMP/mine")"
fi
if profile --pid "$wl" --duration 0.5 -o - >"$TMP/stdout.pb.gz" &&
	pprof_total "$TMP/stdout.pb.gz" samples | grep -q .; then
	ok "-o -: a valid profile on standard output"
else
	fail "-o -: $(cat "$TMP/log")"
fi

echo "== FIFOs planted at the next interval files' names"
mkdir "$TMP/cont"
chmod 1777 "$TMP/cont"
profile --pid "$wl" --interval 1 --duration 6 --output-dir "$TMP/cont" &
col=$!
PIDS+=($col)
sleep 1.5
# the names of the next seconds' files, as nobody can guess them
for i in 1 2 3; do
	as_nobody mkfifo -m 666 "$TMP/cont/ctxprof-$wl-$(date -u -d "+$i sec" +%Y%m%dT%H%M%SZ).pb.gz"
done
wait $col
rc=$?
fifos=$(find "$TMP/cont" -type p | wc -l)
refusals=$(grep -c "cannot write the profile .*: it is a FIFO" "$TMP/log")
[ $rc -eq 0 ] && [ "$fifos" -eq 3 ] && [ "$refusals" -ge 1 ] &&
	ok "continuous run: $refusals writes refused at a FIFO, exit 0, the FIFOs untouched" ||
	fail "continuous run: exit $rc, $fifos FIFOs left, $refusals refusals: $(cat "$TMP/log")"
grep '^ctxprof: writes:' "$TMP/log" | grep -q "files dropped" &&
	ok "$(grep '^ctxprof: writes:' "$TMP/log")" || fail "no writes line in the summary"
sum=0
for f in "$TMP"/cont/ctxprof-"$wl"-*.pb.gz; do
	[ -f "$f" ] && sum=$((sum + $(pprof_total "$f" samples)))
done
read -r taken in_profile dropped <<<"$(summary_field "$TMP/log")"
[ "$sum" = "$in_profile" ] && [ "$taken" -eq $((in_profile + dropped)) ] &&
	ok "samples reconcile: $taken taken = $in_profile in files + $dropped dropped" ||
	fail "samples: files hold $sum; summary: $taken taken, $in_profile in files, $dropped dropped"

echo "== temporary files a SIGKILLed run left"
D=$TMP/killed
mkdir -m 1777 "$D"
chmod 1777 "$D"
# real runs killed at random moments, exporting every second
for i in 1 2 3 4 5; do
	"$COLLECTOR" --no-status --all --interval 1 --output-dir "$D" 2>/dev/null &
	k=$!
	sleep "$(awk -v i=$i 'BEGIN { srand(); printf "%.2f", 1.5 + i * 0.37 + rand() * 0.3 }')"
	kill -9 $k
	wait $k 2>/dev/null
done
left=$(find "$D" -name '.ctxprof-*.tmp' | wc -l)
# and what such a run leaves, made by hand, beside what is not ours
printf 'x' >"$D/.ctxprof-0123456789abcdef.tmp"
printf 'x' >"$D/.ctxprof-fedcba9876543210.tmp"
as_nobody sh -c "echo theirs > '$D/.ctxprof-1111111111111111.tmp'"
ln -s "$TMP/victim" "$D/.ctxprof-2222222222222222.tmp"
mkdir "$D/.ctxprof-3333333333333333.tmp"
echo mine >"$D/.notes.tmp"
profile --pid "$wl" --interval 1 --duration 1.5 --output-dir "$D"
rc=$?
removed=$(sed -n "s/^ctxprof: removed \([0-9]*\) temporary files\? a killed run left in .*/\1/p" "$TMP/log")
[ $rc -eq 0 ] && [ "${removed:-0}" -eq $((left + 2)) ] &&
	ok "the next start removed $removed temporary files ($left from the killed runs)" ||
	fail "exit $rc, removed '${removed:-}' of $((left + 2)): $(cat "$TMP/log")"
kept=0
for f in .ctxprof-1111111111111111.tmp .ctxprof-2222222222222222.tmp \
	.ctxprof-3333333333333333.tmp .notes.tmp; do
	[ -e "$D/$f" ] || [ -L "$D/$f" ] && kept=$((kept + 1))
done
[ $kept -eq 4 ] && [ "$(cat "$TMP/victim")" = precious ] &&
	ok "kept: nobody's file, a link, a directory named like ours, another name" ||
	fail "only $kept of 4 files not ours kept: $(ls -la "$D")"
left=$(find "$D" -name '.ctxprof-*.tmp' -type f -user root | wc -l)
[ "$left" -eq 0 ] && ok "no temporary file of ours left" || fail "$left temporary files left"
finish
