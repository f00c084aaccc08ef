/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * perf_map - names of a process's JIT code from the perf map it writes,
 * /tmp/perf-PID.map: node --perf-basic-prof, the JVM's "jcmd PID
 * Compiler.perfmap", and the other JITs that perf names this way.
 *
 * Format, as perf reads it (tools/perf/util/symbol.c, dso__load_perf_map()):
 * one line per piece of code, "START SIZE name", START and SIZE in hex
 * ("0x" allowed: the JVM writes it), the name the rest of the line after one
 * blank, spaces and all, exactly as the map has it ("JS:*sortWork
 * /tmp/x.js:3:18", "long Hot.sortWork(int)").  A line names [START,
 * START + SIZE); a SIZE of 0 names START alone (perf's symbol of length 0).
 * Where perf would read garbage, a line here is skipped and counted by
 * reason (enum perf_map_skip), never a crash or a wrong name: no name (or a
 * blank one), an address or size that is not hex, longer than 64 bits or
 * whose range wraps, a control byte (NUL, binary junk) anywhere in the line,
 * a line longer than PERF_MAP_MAX_LINE.  Two differences with perf, both on
 * the side of naming what a JIT wrote: perf drops names shorter than 3 bytes
 * (an artefact of its length arithmetic), and takes any byte as separator.
 *
 * Overlaps.  perf keeps every line in a tree and returns whichever
 * overlapping symbol its search meets first: it has no rule.  A live JIT
 * reuses addresses (code freed, other code put there) and appends the new
 * code's line, so here the line read later wins: where ranges overlap, the
 * addresses belong to the latest line that covers them, the earlier lines
 * keep the rest.  Lines that overlap another are counted.
 *
 * Reading.  The file is the target's, written by it: opened inside the
 * target's root (/proc/PID/root, elf/safe_open.h) as /tmp/perf-<NSpid>.map,
 * with the pid the process has in its own pid namespace (a container's
 * process writes its own pid there); a symbolic link, FIFO, device or
 * directory is refused before it is opened (nothing blocks), and so is a
 * file owned by neither root nor one of the process's uids (another user
 * cannot plant names for it in a shared /tmp).  Then it is read
 * incrementally: a JIT appends as it compiles, so a refresh reads from
 * where the last one stopped, complete lines only (a line being written
 * waits for its newline).  A file replaced (another inode), truncated, or
 * rewritten in place (its first or last bytes read differ: jcmd rewrites
 * the whole map) is read again from the start, its old names dropped.
 *
 * Bounds.  At most PERF_MAP_MAX_BYTES of a file are read (the rest is not,
 * and the map is counted as too big) and PERF_MAP_MAX_ENTRIES lines kept
 * (later ones skipped, counted).  What the names and ranges hold is charged
 * to the symbolizer's budget (--symbol-memory, symbolizer__charge()) as it
 * grows, the ranges at their bound (every range begins at a line's start
 * or end: two per line); past the budget lines are skipped, counted.
 * Without a symbolizer the caps alone bound a map: some 64 MiB of names and
 * 48 MiB of ranges at worst, plus a few MiB while a read is merged
 * (PERF_MAP_BATCH lines at a time, not charged).
 *
 * Threads: a perf map is its owner's, with no lock of its own: the
 * collector's main thread (the exporter), which keeps it in the process
 * state (process_state.perf_map) and refreshes it at most once per export
 * and process, outside the state's lock (a refresh reads a file).  Lookups
 * take no lock.  Refresh and free take the symbolizer's lock for a moment
 * (charging), and no other.
 */
#ifndef CTXPROF_PERF_MAP_H
#define CTXPROF_PERF_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct symbolizer;
struct perf_map;

#define PERF_MAP_MAX_BYTES   (64u << 20) /* of one file: what lies past it is not read */
#define PERF_MAP_MAX_ENTRIES (1u << 20)	 /* lines kept per map */
#define PERF_MAP_MAX_LINE    8192	 /* longer lines are skipped (bytes, without \n) */
#define PERF_MAP_BATCH	     65536	 /* lines merged into the ranges at a time */

/* why a line was not kept */
enum perf_map_skip {
	PERF_MAP_SKIP_NO_NAME,	   /* START and SIZE but no name, or a blank one */
	PERF_MAP_SKIP_BAD_ADDRESS, /* START or SIZE not hex, too long, or a range that wraps */
	PERF_MAP_SKIP_JUNK,	   /* a control byte (NUL, binary data) in the line */
	PERF_MAP_SKIP_TOO_LONG,	   /* longer than PERF_MAP_MAX_LINE */
	PERF_MAP_SKIP_OVER_CAP,	   /* past PERF_MAP_MAX_ENTRIES lines kept */
	PERF_MAP_SKIP_NO_MEMORY,   /* past the symbolizer's budget (or out of memory) */
	PERF_MAP_SKIP_MAX,
};

/** perf_map_skip_name() - "no_name", "bad_address", ...: the metrics' label. */
const char *perf_map_skip_name(unsigned int reason);

/* Counters, added to by every call that takes a struct perf_map_stats. */
struct perf_map_stats {
	uint64_t reads;	      /* reads that consumed new lines of a map */
	uint64_t rereads;     /* maps read again from the start: replaced, truncated, rewritten */
	uint64_t entries;     /* lines kept */
	uint64_t overlapping; /* of those, lines whose range overlaps another line's */
	uint64_t skipped[PERF_MAP_SKIP_MAX];
	/* maps refused, once per process image and reason */
	uint64_t not_regular;  /* a symbolic link, FIFO, device, directory: never opened */
	uint64_t not_owner;    /* owned by neither root nor the process's user */
	uint64_t too_big;      /* read only up to PERF_MAP_MAX_BYTES */
	uint64_t frames_named; /* frames named from maps (the exporter counts them) */
};

/* a range of code and the line naming it; ranges are sorted and do not overlap */
struct perf_map_range {
	uint64_t start;
	uint64_t end;  /* one past the last address */
	uint32_t name; /* offset of its name (perf_map__name()) */
	uint32_t line; /* which kept line named it: 0, 1, ... in the order read */
};

/**
 * perf_map__new() - the (not yet read) perf map of process @pid, as this
 * collector's /proc numbers it.
 * @budget: the symbolizer whose budget the map's memory is charged to; NULL:
 *	the caps alone bound it
 * Return: the map, or NULL (ENOMEM).  Pair with perf_map__free().
 */
struct perf_map *perf_map__new(pid_t pid, struct symbolizer *budget);

/** perf_map__free() - give back what was charged, and free; accepts NULL. */
void perf_map__free(struct perf_map *pm);

/**
 * perf_map__refresh() - open the process's perf map inside its root and read
 * what is new: nothing when its size and mtime did not change, the lines
 * appended since, or the whole file again when it was replaced, truncated or
 * rewritten.  Names read before stay when the file is gone or refused.
 * Return: 0 (read, or unchanged), -ENOENT (no map), -EINVAL (not a regular
 * file), -EPERM (not the process's user's), -ESRCH (the process is gone),
 * or another -errno from opening or reading it.
 */
int perf_map__refresh(struct perf_map *pm, struct perf_map_stats *st);

/**
 * perf_map__read_fd() - perf_map__refresh() from a file already open on @fd
 * (not closed here): the same checks of what changed since the last read,
 * the same bounds.  For tests, and any caller that opened the map itself.
 * Return: 0, -EINVAL when @fd is not a regular file, -errno from reading.
 */
int perf_map__read_fd(struct perf_map *pm, int fd, struct perf_map_stats *st);

/**
 * perf_map__lookup() - the name of the code at @addr: the latest line
 * covering it.  Valid until the next refresh or read of @pm.
 * Return: the name, or NULL when no line covers @addr.
 */
const char *perf_map__lookup(const struct perf_map *pm, uint64_t addr);

/**
 * perf_map__ranges() - the ranges named now, sorted by start, not
 * overlapping (*@nr of them); valid until the next refresh or read.
 */
const struct perf_map_range *perf_map__ranges(const struct perf_map *pm, size_t *nr);

/** perf_map__name() - the name of @r, a range of @pm. */
const char *perf_map__name(const struct perf_map *pm, const struct perf_map_range *r);

/** perf_map__lines() - lines kept since the map was (last) read from its start. */
size_t perf_map__lines(const struct perf_map *pm);

/** perf_map__bytes() - memory the names and ranges hold (what is charged). */
size_t perf_map__bytes(const struct perf_map *pm);

#endif /* CTXPROF_PERF_MAP_H */
