/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * code_cache - what lies at a pc in a HotSpot JVM's code cache, and the name
 * of a compiled method, read through a reader of the target's memory with
 * the layout its VMStructs gave (runtimes/hotspot/vmstructs.h).
 *
 * The code cache is one to three CodeHeaps (CodeCache::_heaps).  A pc in a
 * heap's committed code is looked up as CodeHeap::find_block_for() does:
 * its segment's byte in the heap's segment map says how many segments back
 * the block goes on (0: the block starts here; 0xff: no block), the
 * HeapBlock there must be in use and the CodeBlob after it must cover the
 * pc.  An nmethod names its Method: ConstMethod -> ConstantPool -> the
 * holder Klass's name and the method's name Symbol at the ConstMethod's
 * name index (inside the pool's length).  Every read is of hostile memory:
 * hops, lengths and indexes are bounded, and what does not hold together
 * is not named.
 *
 * Pure: no I/O but through the reader; any thread.
 */
#ifndef CTXPROF_HOTSPOT_CODE_CACHE_H
#define CTXPROF_HOTSPOT_CODE_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "runtimes/hotspot/vmstructs.h"

/* code heaps read at most (HotSpot makes 1 or 3) */
#define HOTSPOT_MAX_HEAPS 8
/* a name's part (class or method) at most, in bytes; longer ones are cut */
#define HOTSPOT_NAME_MAX 512

struct hotspot_heap {
	uint64_t low, high; /* its committed code */
	uint64_t segmap;    /* its segment map's first byte */
	uint32_t log2_seg;
};

/* the code blob holding a pc */
struct hotspot_blob {
	uint64_t addr;
	bool nmethod;
	uint64_t method;    /* an nmethod's Method* */
	int64_t compile_id; /* an nmethod's compile id */
	uint64_t name_at;   /* another blob's name (a C string in libjvm) */
};

/**
 * hotspot_code__heaps() - the code heaps into @heaps.
 * Return: their number; -EAGAIN when the JVM has not made them yet;
 * -EINVAL when they do not hold together; -errno of a read.
 */
int hotspot_code__heaps(const struct hotspot_layout *l, vmstructs_read_fn read, void *ctx,
			struct hotspot_heap heaps[HOTSPOT_MAX_HEAPS]);

/**
 * hotspot_code__find() - the blob holding @pc among @heaps.
 * Return: 0; -ENOENT when @pc is in none of the heaps; -EINVAL when no blob
 * in use covers it, or it does not hold together; -errno of a read.
 */
int hotspot_code__find(const struct hotspot_layout *l, vmstructs_read_fn read, void *ctx,
		       const struct hotspot_heap *heaps, unsigned int nr, uint64_t pc,
		       struct hotspot_blob *out);

/**
 * hotspot_code__method_name() - `package.Class.method` of the Method at
 * @method into @out (NUL-terminated, cut to @cap - 1 bytes; printable ASCII
 * and UTF-8 bytes only).
 * Return: 0, -EINVAL (structures that do not hold together), -errno of a read.
 */
int hotspot_code__method_name(const struct hotspot_layout *l, vmstructs_read_fn read, void *ctx,
			      uint64_t method, char *out, size_t cap);

/**
 * hotspot_code__blob_name() - the C string at @at (a blob's name) into
 * @out, read up to @cap - 1 bytes.  Return: 0, -EINVAL (empty, or longer
 * than that), -errno of a read.
 */
int hotspot_code__blob_name(vmstructs_read_fn read, void *ctx, uint64_t at, char *out, size_t cap);

#endif /* CTXPROF_HOTSPOT_CODE_CACHE_H */
