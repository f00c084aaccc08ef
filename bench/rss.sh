#!/usr/bin/env bash
# Where the collector's resident memory goes under --all (issue 21's
# accounting), next to what the same mappings hold on an idle run of the
# same collector with --pid (its baseline: the fixed costs any mode pays).
#
# For each run: the collector's /proc/PID/smaps after BENCH_SECONDS (default
# 15) of profiling, each mapping put in one category:
#   - a BPF map mmapped into the collector (anon_inode:bpf-map), named from
#     bpftool's list of the collector's maps (by size): unwind tables
#     (unwind_rows, unwind_rules, unwind_mappings), the sample and lifecycle
#     rings (a ring's data pages are mapped twice, so that records wrap
#     contiguously: RSS counts them twice, memory once);
#   - the heap and anonymous mappings (malloc arenas: stack and sample
#     tables, per-thread traces, symbol caches, unwind tables being built);
#   - files: the collector's binary and its libraries;
# and, not in RSS but charged to the host: the BPF maps that are not mmapped
# (hash maps, preallocated at load: their memlock from bpftool).
# Prints one table per run; bench/README.md keeps the figures.
# Run as root after make (it needs bpftool, from Debian's bpftool or
# linux-tools).
. "$(dirname "$0")/lib.sh"
SECS=${BENCH_SECONDS:-15}
[ "$(id -u)" = 0 ] || { echo "rss: needs root (BPF)"; exit 1; }
command -v bpftool >/dev/null || { echo "rss: bpftool missing (apt-get install bpftool)"; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; [ -n "${wl:-}" ] && kill "$wl" 2>/dev/null; true' EXIT

# account PID: the categories of PID's smaps, in KiB, one "name kib" a line
account() {
	local pid=$1
	# the collector's BPF maps, from its descriptors: "memlock name mmap|kernel"
	# (an mmapped array's memlock is its mapping's size, page-rounded; a
	# ring's mapping is 2 x data + 2 pages); names from bpftool
	local fd info id mem flags type name
	for fd in /proc/"$pid"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:bpf-map" ] || continue
		info=/proc/$pid/fdinfo/${fd##*/}
		id=$(awk '$1 == "map_id:" { print $2 }' "$info")
		mem=$(awk '$1 == "memlock:" { print $2 }' "$info")
		flags=$(awk '$1 == "map_flags:" { print $2 }' "$info")
		type=$(awk '$1 == "map_type:" { print $2 }' "$info")
		name=$(bpftool map show id "$id" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i == "name") print $(i + 1) }' | head -1)
		if [ "$type" = 27 ]; then
			# BPF_MAP_TYPE_RINGBUF: its data size, mapped twice
			echo "$id $(awk '$1 == "max_entries:" { print $2 }' "$info") $name ring"
		elif [ $((flags & 0x400)) -ne 0 ]; then
			echo "$id $mem $name mmap" # BPF_F_MMAPABLE
		else
			echo "$id $mem $name kernel"
		fi
	done | sort -u -n | cut -d' ' -f2- >"$TMP/maps"
	awk -v maps="$TMP/maps" '
		BEGIN {
			while ((getline l < maps) > 0) {
				split(l, f, " ")
				if (f[3] == "kernel") { kern += f[1] / 1024; continue }
				n++; msz[n] = f[1]; mname[n] = f[2]; ring[n] = f[3] == "ring"; used[n] = 0
			}
		}
		/^[0-9a-f]+-[0-9a-f]+ / { name = NF >= 6 ? $6 : ""; next }
		/^Size:/ {
			size = $2
			if (name == "anon_inode:bpf-map") {
				cat = "bpf map (other)"
				for (i = 1; i <= n; i++) {
					kib = msz[i] / 1024
					if (used[i]) continue
					if (ring[i] && size >= 2 * kib && size <= 2 * kib + 8) { cat = "ring buffer " mname[i] " (data mapped twice)"; used[i] = 1; break }
					if (!ring[i] && size >= kib - 8 && size <= kib + 8) { cat = "bpf map " mname[i]; used[i] = 1; break }
				}
			} else if (name == "" || name == "[heap]" || name ~ /^\[anon/) {
				cat = "heap and anonymous (malloc arenas)"
			} else if (name ~ /^\[(stack|vdso|vvar|vsyscall)/) {
				cat = "stacks, vdso"
			} else {
				cat = "files (binary, libraries)"
			}
			next
		}
		/^Rss:/ { rss[cat] += $2; total += $2 }
		END {
			for (c in rss) printf "%s\t%d\n", c, rss[c]
			printf "TOTAL RSS\t%d\n", total
			printf "not in RSS: BPF maps not mmapped (memlock)\t%d\n", kern
		}' "/proc/$pid/smaps"
}

run() { # name collector-args...
	local name=$1 col
	shift
	"$ROOT/collector" "$@" --duration $((SECS + 5)) --no-status -o "$TMP/$name.pb.gz" 2>"$TMP/$name.log" &
	col=$!
	sleep "$SECS"
	account "$col" | sort -t"$(printf '\t')" -k2 -rn >"$TMP/$name.acct"
	wait "$col" || true
}

"$OUTPUT/workloads/requests" --threads 2 --seconds $((SECS * 3)) >/dev/null &
wl=$!
sleep 0.5
run pid --pid "$wl"
run all --all
echo "rss: collector RSS by category after ${SECS} s (KiB): --all, and --pid on one process"
printf '| category | --all | --pid |\n|---|---|---|\n'
cut -f1 "$TMP/all.acct" "$TMP/pid.acct" | sort -u | while IFS= read -r c; do
	printf '| %s | %s | %s |\n' "$c" \
		"$(awk -F'\t' -v c="$c" '$1 == c { print $2 }' "$TMP/all.acct")" \
		"$(awk -F'\t' -v c="$c" '$1 == c { print $2 }' "$TMP/pid.acct")"
done | sort -t'|' -k3 -rn
grep -h '^ctxprof: collector CPU' "$TMP/all.log" | sed 's/^/--all: /'
grep -h '^ctxprof: collector CPU' "$TMP/pid.log" | sed 's/^/--pid: /'
