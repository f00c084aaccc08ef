/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mmap_events - the kernel's word on every new executable mapping of every
 * process: PERF_RECORD_MMAP2 records, as perf record gets them.
 *
 * Snapshots of /proc/PID/maps (processes/mappings.h) miss what happens
 * between two reads: a library dlclose()d and another dlopen()ed at its
 * address, by a process that may exit before the next read, and a library
 * rewritten in place (same path, same inode) and mapped again, whose maps
 * text does not change at all.  The kernel reports each mapping as it is
 * made, with its time on the clock of our samples, so a consumer knows that
 * something was mapped, when, and (with the build id) which file.
 *
 * What the kernel reports, and what is verified (tests/unit/test_mmap_events.c,
 * Linux 6.18):
 *  - every mapping made executable: mmap() with PROT_EXEC (a file, the
 *    executable and ld.so at exec, the vdso as "[vdso]") and mprotect() that
 *    adds PROT_EXEC.  Not data mappings (we do not ask for mmap_data), and
 *    nothing on munmap(): a mapping's end is only known from the next one
 *    at its address, or from /proc.
 *  - an anonymous executable mapping (a JIT's): path "//anon", device 0:0,
 *    inode 0, and pgoff = its start address (the kernel's vm_pgoff of an
 *    anonymous mapping); a shared anonymous one is "/dev/zero (deleted)" on
 *    a shmem inode.
 *  - the build id (kernel >= 5.12, asked for when the kernel takes it): in
 *    place of device, inode and generation, which the record then lacks
 *    (a union in the record).  The kernel reads it only from pages already
 *    in the page cache; where it cannot (no note, not cached, anonymous) the
 *    record has device and inode instead.
 *  - records of a few other types come too (mmap = 1 also asks for FORK and
 *    EXIT of every task): counted as other, not delivered.
 *
 * One perf event per online CPU (PERF_COUNT_SW_DUMMY, every process), each
 * with its own ring: the kernel writes a mapping's record into the ring of
 * the CPU the mapping was made on, while the mmap() call runs.  A full ring
 * drops records; the kernel then writes how many (PERF_RECORD_LOST), counted
 * in mmap_events_stats.lost.  The rings are read here, not through libbpf's
 * perf_buffer: that opens the events itself, so a CPU that comes back after
 * the capabilities were dropped could not get one from an opener that kept
 * them (mmap_events__set_opener()); and it cannot close one CPU's ring.
 *
 * Privileges: opening an event for every process needs CAP_PERFMON (or
 * CAP_SYS_ADMIN): mmap_events__new() runs at start-up, before
 * collector/privileges.c drops them.  Reading the rings needs nothing.
 *
 * Threads: mmap_events__poll() and mmap_events__consume() from one thread
 * (the tracker's), which runs the callback; mmap_events__check_cpus(),
 * mmap_events__stats() and mmap_events__fd() from any thread.  An internal
 * mutex serializes them, held while the callback runs: the callback must
 * not call back into this module.
 */
#ifndef CTXPROF_MMAP_EVENTS_H
#define CTXPROF_MMAP_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct mmap_events;

/* data pages of each CPU's ring when mmap_events__new() is given 0: 64 KiB
 * with 4 KiB pages, some 500 records of ~120 bytes; each record wakes the poller */
#define MMAP_EVENTS_DEFAULT_PAGES 16
/* the kernel's build ids are at most this long (BUILD_ID_SIZE_MAX) */
#define MMAP_EVENTS_BUILD_ID_MAX 20

/* one new executable mapping */
struct mmap_event {
	uint32_t pid;	    /* process, in the collector's pid namespace */
	uint32_t tid;	    /* the thread that mapped it */
	uint64_t time_ns;   /* CLOCK_MONOTONIC (bpf_ktime_get_ns()'s clock) of the mapping */
	uint64_t start;	    /* first address */
	uint64_t len;	    /* bytes; start + len does not wrap */
	uint64_t pgoff;	    /* file offset of start; the start address when anonymous */
	uint32_t dev_major; /* device, inode and inode generation: 0 when */
	uint32_t dev_minor; /* build_id_len != 0 (the record carries the */
	uint64_t inode;	    /* build id in their place) */
	uint64_t inode_gen;
	uint32_t prot;	  /* PROT_READ | PROT_EXEC ... */
	uint32_t flags;	  /* MAP_PRIVATE or MAP_SHARED, MAP_LOCKED, MAP_HUGETLB ... */
	const char *path; /* NUL-terminated, "//anon", "[vdso]", "... (deleted)": in the
			   * record, valid during the callback only */
	size_t path_len;  /* strlen(path) */
	uint8_t build_id[MMAP_EVENTS_BUILD_ID_MAX];
	uint8_t build_id_len; /* 0: none in the record */
	int cpu;	      /* the ring it came from; -1 for mmap_events_parse() */
};

/*
 * Called on the polling thread for each PERF_RECORD_MMAP2, in ring order: one
 * CPU's records are in time order, two CPUs' are not ordered between them.
 */
typedef void (*mmap_events_fn)(void *ctx, const struct mmap_event *ev);

/*
 * Opens the event of mmap_events__attr() on @cpu for every process: returns
 * its fd, or -errno (-ENODEV: @cpu is offline).  Default: perf_event_open().
 */
typedef int (*mmap_events_open_fn)(void *ctx, int cpu);

struct mmap_events_stats {
	uint64_t records;      /* read from the rings, every type */
	uint64_t mmap2;	       /* PERF_RECORD_MMAP2 delivered to the callback */
	uint64_t lost;	       /* records the kernel dropped, its ring full (PERF_RECORD_LOST) */
	uint64_t lost_records; /* PERF_RECORD_LOST records that said so */
	uint64_t other;	       /* other types (FORK, EXIT ...): not ours, skipped */
	uint64_t malformed; /* sizes that did not add up: skipped (a ring resynced to its head) */
	/*
	 * CPU hotplug (mmap_events__check_cpus()): a CPU that goes offline takes
	 * its event with it for good; one opened again for a CPU that came back
	 * missed what was mapped on that CPU from its return to the reopen.
	 */
	uint64_t cpus_gone;   /* events found dead (their CPU went offline), closed */
	uint64_t cpus_opened; /* events opened after mmap_events__new(): each one a gap */
	uint64_t open_failed; /* opens for an online CPU that failed (not -ENODEV) */
	int cpus_watched;     /* CPUs with a live event now */
	bool build_id;	      /* the kernel gives build ids (attr.build_id taken) */
};

/**
 * mmap_events__new() - open the event on every online CPU, map its ring and
 * enable it: records accumulate from here on, to be read by
 * mmap_events__poll() or mmap_events__consume().
 * @nr_pages: data pages of each ring, a power of two; 0: MMAP_EVENTS_DEFAULT_PAGES
 * @err: on failure, a one-line reason for the user (may be NULL)
 * Build ids are asked for when the kernel takes attr.build_id (5.12+): an
 * open refused with EINVAL is tried again without it, and stats.build_id
 * says which.  Needs CAP_PERFMON or CAP_SYS_ADMIN; start-up, main thread.
 * Return: the events, or NULL with errno set.  Pair with mmap_events__free().
 */
struct mmap_events *mmap_events__new(int nr_pages, char *err, size_t err_len);

/**
 * mmap_events__poll() - wait up to @timeout_ms (-1: forever) for a record in
 * any ring, then read every ring (mmap_events__consume()).
 * Polling thread.  Records are already in the ring when the mmap() that made
 * them returns; the wait only bounds how long they stay there.
 * Return: records read (>= 0), or -errno (-EINTR: a signal came).
 */
int mmap_events__poll(struct mmap_events *me, int timeout_ms, mmap_events_fn cb, void *ctx);

/** mmap_events__consume() - read every ring now, without waiting; as mmap_events__poll(). */
int mmap_events__consume(struct mmap_events *me, mmap_events_fn cb, void *ctx);

/**
 * mmap_events__fd() - an epoll fd that is readable when a ring holds a
 * record, for a caller's own epoll; then call mmap_events__consume().
 */
int mmap_events__fd(const struct mmap_events *me);

/**
 * mmap_events__attr() - the attributes every CPU's event is opened with, for
 * an opener process forked to open them later (mmap_events__set_opener()).
 */
const struct perf_event_attr *mmap_events__attr(const struct mmap_events *me);

/**
 * mmap_events__set_opener() - how mmap_events__check_cpus() opens an event
 * from now on: once the collector gave up CAP_PERFMON, through a process
 * that kept it (sampling/perf_opener.h, started with mmap_events__attr()).
 * Any thread; NULL @fn: perf_event_open() again.
 */
void mmap_events__set_opener(struct mmap_events *me, mmap_events_open_fn fn, void *ctx);

/**
 * mmap_events__check_cpus() - follow CPU hotplug; call it where the sampler
 * follows it (once a second, after reading the online CPUs).
 * @online: @n flags, online[cpu] true when the CPU is online
 * An event whose enabled time stood still since the last check died with
 * its CPU going offline (the kernel never revives it): it is closed once
 * the polling thread has read what its ring holds.  An online CPU without a
 * live event gets a new one through the opener (counted in cpus_opened:
 * what was mapped on that CPU before is missed).  A CPU the kernel finds
 * offline (-ENODEV) is left for the next check.  Any thread.
 * Return: events opened (>= 0), or the -errno of the first open that
 * failed (the other CPUs are still tried; counted in open_failed).
 */
int mmap_events__check_cpus(struct mmap_events *me, const bool *online, int n);

/** mmap_events__stats() - copy the counters into @out.  Any thread. */
void mmap_events__stats(struct mmap_events *me, struct mmap_events_stats *out);

/** mmap_events__free() - close every event and unmap its ring; accepts NULL.  Not while polled. */
void mmap_events__free(struct mmap_events *me);

/* --- the parts below, exposed for the unit tests and the fuzz target */

/* what one record is (mmap_events_parse()) */
enum mmap_events_record {
	MMAP_EVENTS_MMAP2 = 0, /* *ev filled */
	MMAP_EVENTS_LOST,      /* *lost set to the records the kernel dropped */
	MMAP_EVENTS_OTHER,     /* a type not ours */
};

/**
 * mmap_events_parse() - one record as read from a ring, hostile: every size
 * is checked against @size and the layout mmap_events__attr() asked for
 * (sample_id_all with TID and TIME: 16 bytes after each record's body).
 * @rec: the record, perf_event_header first; @size: its bytes, which must be
 * its header's size
 * @ev: filled for MMAP2; ev->path points into @rec, ev->cpu is -1
 * @lost: set for LOST
 * Return: what the record is, or -EINVAL when malformed (a size too small,
 * a path without its NUL, a build id longer than 20 bytes, a range that
 * wraps).  Pure function: any thread.
 */
int mmap_events_parse(const void *rec, size_t size, struct mmap_event *ev, uint64_t *lost);

/* one CPU's ring: the kernel writes at data_head, we read from data_tail */
struct mmap_events_ring {
	struct perf_event_mmap_page *page; /* the control page: data_head, data_tail */
	const uint8_t *data;		   /* the data pages, @size bytes after it */
	size_t size;			   /* a power of two */
	uint8_t *copy; /* >= min(@size, 64 KiB) bytes: a record that wraps is put together here */
};

/**
 * mmap_events_ring__read() - read the records between data_tail and the
 * data_head of now, parse each (mmap_events_parse()), give the MMAP2 ones to
 * @cb, count all in @st, then move data_tail past them.  data_head is read
 * with acquire and data_tail stored with release, so the kernel reuses none
 * of the space before we are done with it.  A header whose size is below
 * 8 bytes or beyond what the kernel published, or head - tail beyond the
 * ring, is malformed: the ring skips to data_head (counted once).
 * @cpu: set in each event
 * Return: records read.
 */
int mmap_events_ring__read(struct mmap_events_ring *r, int cpu, mmap_events_fn cb, void *ctx,
			   struct mmap_events_stats *st);

#endif /* CTXPROF_MMAP_EVENTS_H */
