/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Go goroutine labels (runtime/pprof.SetGoroutineLabels, pprof.Do: what
 * Pyroscope's otel-profiling-go puts span_id in) as the sampler reads them
 * from the running goroutine, and the layouts of the Go runtime it reads
 * through (linux/amd64).
 *
 * The path, every step a bpf_probe_read_user of the sampled task:
 *   g      = *(fsbase + tls_g)     the goroutine the thread runs (g0 on the
 *                                  system stack, a signal's gsignal)
 *   curg   = g->m->curg            the user goroutine of that thread, whose
 *                                  labels a sample on g0 belongs to; NULL
 *                                  while the scheduler runs
 *   labels = curg->labels          unsafe.Pointer: a *labelMap
 *                                  (runtime/pprof/label.go), one of two
 *                                  layouts (enum go_labels_kind):
 *  - GO_LABELS_MAP (Go 1.19 to 1.23, all but 1.20 verified): labelMap is
 *    map[string]string: hmap = *labels, the map's header (runtime/map.go),
 *    then its buckets, its old buckets while it grows, and their overflow
 *    chains, all bounded below;
 *  - GO_LABELS_SLICE (Go 1.24 and later; 1.24 to 1.27 verified):
 *    labelMap is struct { LabelSet } with LabelSet struct { list []label }
 *    (1.26: label.Set{List []label.Label}, internal/runtime/pprof/label),
 *    label struct { key, value string }: *labels is a slice header, its
 *    array the labels sorted by key, GO_SLICE_MAX at most.  Go 1.24's
 *    swiss-table maps never hold labels.
 * The offsets of g.m, m.curg and g.labels change with Go versions: the
 * collector finds them per executable (appctx/go_binary.h) and gives the
 * sampler one struct go_labels_ref per process.  Everything read is the
 * application's: the sampler checks the map against its own count.
 *
 * Compiles in both worlds: only __u8..__u64, #defines and enums.
 */
#ifndef CTXPROF_GO_ABI_H
#define CTXPROF_GO_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * runtime.hmap's head, the same from Go 1.0 to 1.23 (Go 1.24 made maps
 * Swiss tables, and labels a slice): what the sampler reads of it.
 */
struct go_hmap_head {
	__u64 count; /* entries (a Go int) */
	__u8 flags;  /* GO_HMAP_SAME_SIZE_GROW, ... */
	__u8 B;	     /* log2 of the buckets */
	__u16 noverflow;
	__u32 hash0;
	__u64 buckets;	  /* 2^B buckets */
	__u64 oldbuckets; /* while growing: the buckets before, else 0 */
};

_Static_assert(sizeof(struct go_hmap_head) == 32, "runtime.hmap");
_Static_assert(__builtin_offsetof(struct go_hmap_head, B) == 9, "runtime.hmap");
_Static_assert(__builtin_offsetof(struct go_hmap_head, buckets) == 16, "runtime.hmap");

#define GO_HMAP_SAME_SIZE_GROW 8 /* flags: oldbuckets has as many buckets as buckets */

/* a bucket's slots, and the least tophash of a slot in use (below: empty, evacuated) */
#define GO_BUCKET_SLOTS 8
#define GO_MIN_TOPHASH	5

/* a Go string header */
struct go_string {
	__u64 ptr;
	__u64 len;
};

/* a Go slice header: Go 1.24's labelMap */
struct go_slice {
	__u64 ptr;
	__u64 len;
	__u64 cap;
};

/* an element of Go 1.24's label list: runtime/pprof.label, label.Label since 1.26 */
struct go_label_pair {
	struct go_string key;
	struct go_string value;
};

_Static_assert(sizeof(struct go_slice) == 24, "a Go slice header");
_Static_assert(sizeof(struct go_label_pair) == 32, "runtime/pprof.label");

/* a label list longer than this is not read (SAMPLER_STAT_GO_BAD_MAP): pprof sets are short */
#define GO_SLICE_MAX 64

/* how a Go version holds a goroutine's labels (go_labels_ref.kind) */
enum go_labels_kind {
	GO_LABELS_MAP = 0, /* map[string]string, runtime.hmap (Go 1.23 and before) */
	GO_LABELS_SLICE,   /* a slice of key/value pairs, sorted by key (Go 1.24 and later) */
};

/* runtime.bmap of map[string]string: its keys, then its values, then the overflow bucket */
struct go_bucket_str {
	__u8 tophash[GO_BUCKET_SLOTS];
	struct go_string keys[GO_BUCKET_SLOTS];
	struct go_string values[GO_BUCKET_SLOTS];
	__u64 overflow; /* the next bucket of the chain, 0: none */
};

_Static_assert(sizeof(struct go_bucket_str) == 272, "runtime.bmap of map[string]string");
_Static_assert(__builtin_offsetof(struct go_bucket_str, values) == 136, "runtime.bmap");

/*
 * The map walk's bounds: 2^B buckets up to 8 (a label set of at most 52
 * labels at Go's load factor; pprof.Labels sets have a handful), and at
 * most 16 bucket reads in all, old and overflow buckets included.  A
 * bigger map is not read (SAMPLER_STAT_GO_BAD_MAP); a walk out of reads
 * keeps the labels it found (truncated).
 */
#define GO_MAP_MAX_B	 3
#define GO_MAP_MAX_READS 16

/*
 * What a sample carries: at most GO_LABELS_MAX labels, each with a key of
 * at most GO_LABEL_KEY_MAX bytes and a value of at most
 * GO_LABEL_VALUE_MAX; a longer one is left out whole (a cut value would
 * be another value) and the set flagged truncated, as is one with more
 * labels.
 */
#define GO_LABELS_MAX	   10
#define GO_LABEL_KEY_MAX   64
#define GO_LABEL_VALUE_MAX 128
#define GO_LABEL_ENTRY_MAX (2 + GO_LABEL_KEY_MAX + GO_LABEL_VALUE_MAX)
#define GO_LABELS_BYTES	   (GO_LABELS_MAX * GO_LABEL_ENTRY_MAX)

#define GO_LABELS_F_TRUNCATED (1u << 0) /* labels of the set were left out */

/*
 * With SAMPLE_F_GO_LABELS (records.h), at the first 8-byte boundary past
 * the frames and the OpenTelemetry record if any: this header, then @size
 * bytes of @nr entries: key length u8, value length u8, the key's bytes,
 * the value's (not NUL-terminated, as the application wrote them).  The
 * record size covers it.
 */
struct go_labels_record {
	__u16 size; /* entry bytes after the header, at most GO_LABELS_BYTES */
	__u8 nr;    /* entries, 1..GO_LABELS_MAX */
	__u8 flags; /* GO_LABELS_F_* */
};

_Static_assert(sizeof(struct go_labels_record) == 4, "go_labels_record ABI");

/*
 * Value of the sampler's go_procs map (key: the host pid), written by
 * user/appctx/go_labels.c for a Go executable whose runtime layout it knows
 * (appctx/go_binary.h).
 */
struct go_labels_ref {
	__s32 tls_g;	/* the current g is at fsbase + tls_g */
	__u32 exec_id;	/* the image it was found in (sample_record.exec_id); 0: any */
	__u16 g_m;	/* offsetof(runtime.g, m) */
	__u16 m_curg;	/* offsetof(runtime.m, curg) */
	__u16 g_labels; /* offsetof(runtime.g, labels) */
	__u8 kind;	/* enum go_labels_kind */
	__u8 pad;
	/* the stack switches the native walk follows (bpf/go_stack.bpf.h) */
	__u16 g_sched; /* offsetof(runtime.g, sched), a runtime.gobuf */
	__u8 gobuf_sp; /* offsetof(runtime.gobuf, sp) */
	__u8 gobuf_pc; /* offsetof(runtime.gobuf, pc) */
	__u8 gobuf_bp; /* offsetof(runtime.gobuf, bp): 48, 40 since Go 1.25 (ret gone) */
	__u8 pad2;
	__u16 m_vdso_sp; /* offsetof(runtime.m, vdsoSP): the vDSO callers' caller's sp */
	__u16 m_vdso_pc; /* offsetof(runtime.m, vdsoPC): and its return address */
	__u8 pad3[6];
};

_Static_assert(sizeof(struct go_labels_ref) == 32, "go_labels_ref ABI");

/*
 * What every Go version (1.0 to 1.27 at least) keeps first, read without a
 * table: runtime.g begins with its stack (stack.lo, stack.hi: "offset known
 * to runtime/cgo"), runtime.m with g0, the thread's system goroutine.
 */
#define GO_G_STACK_LO 0
#define GO_G_STACK_HI 8
#define GO_M_G0	      0
/* a goroutine stack larger than this is not one (runtime.maxstacksize: 1 GB on 64-bit) */
#define GO_MAX_STACK (1ull << 30)

#endif /* CTXPROF_GO_ABI_H */
