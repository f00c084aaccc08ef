/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * vmstructs - the layout a HotSpot JVM publishes about itself, read from
 * its tables (gHotSpotVMStructs, gHotSpotVMTypes, gHotSpotVMIntConstants,
 * gHotSpotVMLongConstants) as hostile input.
 *
 * The JVM exports, in libjvm.so's dynamic symbols, a pointer to each table
 * and the layout of the tables' entries (gHotSpotVMStructEntryTypeNameOffset,
 * ...ArrayStride, ...): the caller reads those values from the target
 * (struct vmstructs_exports) and vmstructs__parse() walks the tables through
 * its reader, taking the few fields the naming of compiled methods needs
 * (struct hotspot_layout).  Every value is checked: entry layouts (offsets
 * inside the stride, the stride bounded), tables that end (a NULL name
 * within VMSTRUCTS_MAX_ENTRIES), names bounded, each field's size from the
 * Types table (an integer field of 1, 2, 4 or 8 bytes), offsets inside their
 * structure's size.  A table that fails, or lacks a field we need, refuses
 * the whole layout: nothing is guessed and nothing is taken from a hand
 * table.
 *
 * Pure: no I/O but through the reader; any thread.
 */
#ifndef CTXPROF_HOTSPOT_VMSTRUCTS_H
#define CTXPROF_HOTSPOT_VMSTRUCTS_H

#include <stddef.h>
#include <stdint.h>

/* entries read at most per table (JDK 17's largest has about 2,300) */
#define VMSTRUCTS_MAX_ENTRIES 65536
/* an entry's stride at most (48 bytes in JDK 11 to 25) */
#define VMSTRUCTS_MAX_STRIDE 256
/* a name at most, NUL included: longer ones are none of ours */
#define VMSTRUCTS_NAME_MAX 96

/*
 * Read @len bytes at @addr of the target into @buf, whole.
 * Return: 0 or -errno.
 */
typedef int (*vmstructs_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* the values of libjvm.so's gHotSpot* exports, as the target holds them */
struct vmstructs_exports {
	uint64_t structs, types, int_consts; /* the tables' addresses */
	/* gHotSpotVMStructEntry*: */
	uint64_t s_stride, s_type_name, s_field_name, s_type_string, s_is_static, s_offset,
		s_address;
	/* gHotSpotVMTypeEntry*: */
	uint64_t t_stride, t_type_name, t_size;
	/* gHotSpotVMIntConstantEntry*: */
	uint64_t i_stride, i_name, i_value;
};

/* a non-static field: where it is in its structure and how many bytes it has */
struct vm_field {
	uint32_t off;
	uint32_t size; /* 1, 2, 4 or 8 for integers; 8 for pointers */
};

/* what the naming of a pc in the code cache needs, all from the JVM's tables */
struct hotspot_layout {
	/* statics: addresses in the target */
	uint64_t code_heaps;		 /* CodeCache::_heaps: GrowableArray<CodeHeap*>* */
	uint64_t code_low, code_high;	 /* CodeCache::_low_bound, _high_bound: address */
	struct vm_field ga_len;		 /* GrowableArrayBase::_len (GenericGrowableArray before) */
	struct vm_field ga_data;	 /* GrowableArray<int>::_data */
	struct vm_field heap_memory;	 /* CodeHeap::_memory: a VirtualSpace */
	struct vm_field heap_segmap;	 /* CodeHeap::_segmap: a VirtualSpace */
	struct vm_field heap_log2_seg;	 /* CodeHeap::_log2_segment_size */
	struct vm_field vs_low, vs_high; /* VirtualSpace::_low, _high */
	uint32_t heap_block_size;	 /* sizeof(HeapBlock) */
	struct vm_field hb_used;	 /* HeapBlock::_header + HeapBlock::Header::_used */
	struct vm_field blob_name;	 /* CodeBlob::_name: const char* */
	struct vm_field blob_size;	 /* CodeBlob::_size */
	struct vm_field blob_frame_size; /* CodeBlob::_frame_size, in words */
	struct vm_field blob_kind;	 /* CodeBlob::_kind (JDK 23 on); size 0: none */
	int64_t kind_nmethod;		 /* CodeBlobKind::Nmethod, when blob_kind has a size */
	uint32_t blob_read;		 /* bytes of a blob's header that hold its fields above */
	struct vm_field nm_method;	 /* nmethod::_method (CompiledMethod::_method before 23) */
	struct vm_field nm_compile_id;	 /* nmethod::_compile_id */
	uint32_t nm_read;		 /* bytes of an nmethod's header that hold the above */
	struct vm_field method_const;	 /* Method::_constMethod */
	struct vm_field cm_constants;	 /* ConstMethod::_constants */
	struct vm_field cm_name_index;	 /* ConstMethod::_name_index */
	struct vm_field cp_holder;	 /* ConstantPool::_pool_holder */
	struct vm_field cp_length;	 /* ConstantPool::_length */
	uint32_t cp_size;		 /* sizeof(ConstantPool): its slots follow it */
	struct vm_field klass_name;	 /* Klass::_name */
	struct vm_field sym_length;	 /* Symbol::_length */
	struct vm_field sym_body;	 /* Symbol::_body */
};

/* why a layout was refused (vmstructs__parse()'s @why) */
enum vmstructs_error {
	VMSTRUCTS_OK = 0,
	VMSTRUCTS_BAD_EXPORTS,	/* an entry layout that does not hold together */
	VMSTRUCTS_UNREADABLE,	/* a table or name could not be read */
	VMSTRUCTS_UNTERMINATED, /* a table with no end within VMSTRUCTS_MAX_ENTRIES */
	VMSTRUCTS_MISSING,	/* a field, type or constant we need is not published */
	VMSTRUCTS_BAD_VALUE,	/* a size or offset out of its bounds */
	VMSTRUCTS_ERROR_MAX,
};

/**
 * vmstructs__parse() - walk the tables @ex points to through @read and fill @out.
 * @what: on refusal, the name of what failed (static storage; may be NULL)
 * Return: VMSTRUCTS_OK, or why the layout is refused (@out then undefined).
 */
enum vmstructs_error vmstructs__parse(const struct vmstructs_exports *ex, vmstructs_read_fn read,
				      void *ctx, struct hotspot_layout *out, const char **what);

/** vmstructs__error_name() - a short name for @e ("missing", ...) */
const char *vmstructs__error_name(enum vmstructs_error e);

#endif /* CTXPROF_HOTSPOT_VMSTRUCTS_H */
