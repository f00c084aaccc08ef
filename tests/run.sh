#!/usr/bin/env bash
# Test runner: runs test programs and prints one closing line
#   "N passed, N failed, N skipped"
# cmocka binaries count their own cases; any other program (integration
# scripts, fuzz smoke runs) counts as one test: exit 0 passes, 77 skips.
# Usage: tests/run.sh <suite-name> <program>...
set -u
suite=$1; shift
pass=0 fail=0 skip=0
failed=()
fuzz_summary=()
log_dir=${OUTPUT:-build}/test-logs
mkdir -p "$log_dir"

for t in "$@"; do
	name=$(basename "$t")
	log="$log_dir/$name.log"
	case "$t" in
	*/fuzz/fuzz_*)
		corpus=tests/fuzz/corpus/${name#fuzz_}
		mkdir -p "$log_dir/$name.corpus" "$log_dir/$name.artifacts"
		# a short smoke run over the seed corpus plus fresh mutations; what
		# libFuzzer writes (crash-, slow-unit-, oom-) goes under the build
		# directory, never into the working tree
		cmd=("$t" -max_total_time="${FUZZ_SECONDS:-20}" -rss_limit_mb=2048
			-artifact_prefix="$log_dir/$name.artifacts/" "$log_dir/$name.corpus")
		[ -d "$corpus" ] && cmd+=("$corpus")
		;;
	*) cmd=("$t") ;;
	esac
	printf '=== %s\n' "$name"
	t0=$SECONDS
	"${cmd[@]}" >"$log" 2>&1
	rc=$?
	took="$((SECONDS - t0)) s"
	if grep -q '^\[==========\]' "$log"; then
		# cmocka: count its cases
		cat "$log"
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
		s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
		pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			fail=$((fail + 1))
		fi
		[ "$rc" -ne 0 ] && failed+=("$name")
		continue
	fi
	tail -n 30 "$log"
	# a fuzz run: how far it got, for bench/README.md's fuzzing table
	case "$t" in
	*/fuzz/fuzz_*)
		runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 executions in \2 s/p' "$log")
		fuzz_summary+=("$(printf '%-24s %s' "$name" "${runs:-no summary (crashed?)}")")
		;;
	esac
	case $rc in
	0) pass=$((pass + 1)); echo "--- PASS $name ($took)" ;;
	77) skip=$((skip + 1)); echo "--- SKIP $name ($took): $(grep -m1 '^SKIP' "$log" || echo 'no reason printed')" ;;
	*) fail=$((fail + 1)); failed+=("$name"); echo "--- FAIL $name (exit $rc, $took, log $log)" ;;
	esac
done

if [ ${#fuzz_summary[@]} -gt 0 ]; then
	echo "fuzzing (FUZZ_SECONDS=${FUZZ_SECONDS:-20} per target):"
	printf '  %s\n' "${fuzz_summary[@]}"
fi
# why each failed, again at the end: a CI page often shows only the tail
for name in "${failed[@]}"; do
	echo "--- why $name failed (log $log_dir/$name.log):"
	grep -E '^(FAIL|ERROR|\[  (FAILED|ERROR)  \])' "$log_dir/$name.log" | head -n 12 | grep . ||
		tail -n 3 "$log_dir/$name.log"
done
[ ${#failed[@]} -gt 0 ] && echo "$suite: failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped in $((SECONDS / 60)) min $((SECONDS % 60)) s"
[ "$fail" -eq 0 ]
