/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A synthetic HotSpot JVM's memory for tests/unit/test_hotspot.c and
 * tests/fuzz/fuzz_hotspot.c: VMStructs, VMTypes and int constant tables laid
 * out as JDK 25 lays them (48-byte struct and type entries, 16-byte
 * constants; the offsets of JDK 25's own tables, read from Temurin 25 with
 * the collector's parser), a code heap of 64-byte segments with its segment
 * map, an nmethod of com/example/hot/Burner.hotLoopAlpha, the interpreter's
 * blob, a free block, and the Method -> ConstMethod -> ConstantPool -> Klass
 * and Symbols the name is read through.  Header-only: each includer gets its
 * own copy.
 */
#ifndef CTXPROF_TESTS_HOTSPOT_IMAGE_H
#define CTXPROF_TESTS_HOTSPOT_IMAGE_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "runtimes/hotspot/vmstructs.h"

#define HI_BASE 0x7f0000000000ull
#define HI_SIZE (64u << 10)

/* where the builder put things, as offsets into the image */
#define HI_STRUCTS   0x0000u /* struct entries: up to 64 */
#define HI_TYPES     0x1000u /* type entries: up to 64 */
#define HI_CONSTS    0x2000u /* int constants: up to 16 */
#define HI_STRINGS   0x2400u /* names */
#define HI_STATICS   0x3c00u /* CodeCache::_heaps */
#define HI_GA	     0x3c40u /* the GrowableArray<CodeHeap*> */
#define HI_GA_DATA   0x3c80u /* its one element */
#define HI_HEAP	     0x3d00u /* the CodeHeap (344 bytes) */
#define HI_METADATA  0x4000u /* Method, ConstMethod, ConstantPool, Klass, Symbols */
#define HI_SEGMAP    0x6000u /* the segment map: 128 segments */
#define HI_CODE	     0x8000u /* the heap's code: 128 segments of 64 bytes */
#define HI_SEG_SHIFT 6

/* blocks: the nmethod in segments 2-5, the interpreter in 10-11, 20 free */
#define HI_NM_SEG     2
#define HI_NM_SEGS    4
#define HI_INTERP_SEG 10
#define HI_FREE_SEG   20

struct hotspot_image {
	uint8_t mem[HI_SIZE];
	struct vmstructs_exports ex;
	unsigned int nr_structs, nr_types, nr_consts;
	uint32_t str_at;
};

static inline uint64_t hi_addr(uint32_t off)
{
	return HI_BASE + off;
}

static inline void hi_put64(struct hotspot_image *img, uint32_t off, uint64_t v)
{
	memcpy(img->mem + off, &v, sizeof(v));
}

static inline void hi_put32(struct hotspot_image *img, uint32_t off, uint32_t v)
{
	memcpy(img->mem + off, &v, sizeof(v));
}

static inline void hi_put16(struct hotspot_image *img, uint32_t off, uint16_t v)
{
	memcpy(img->mem + off, &v, sizeof(v));
}

static inline uint64_t hi_str(struct hotspot_image *img, const char *s)
{
	uint32_t at = img->str_at;

	memcpy(img->mem + at, s, strlen(s) + 1);
	img->str_at += (uint32_t)strlen(s) + 1;
	return hi_addr(at);
}

static inline void hi_field(struct hotspot_image *img, const char *type, const char *field,
			    const char *type_string, int is_static, uint64_t offset,
			    uint64_t address)
{
	uint32_t e = HI_STRUCTS + img->nr_structs++ * 48;

	hi_put64(img, e + 0, hi_str(img, type));
	hi_put64(img, e + 8, hi_str(img, field));
	hi_put64(img, e + 16, type_string ? hi_str(img, type_string) : 0);
	hi_put32(img, e + 24, (uint32_t)is_static);
	hi_put64(img, e + 32, offset);
	hi_put64(img, e + 40, address);
}

static inline void hi_type(struct hotspot_image *img, const char *name, uint64_t size)
{
	uint32_t e = HI_TYPES + img->nr_types++ * 48;

	hi_put64(img, e + 0, hi_str(img, name));
	hi_put64(img, e + 32, size);
}

static inline void hi_const(struct hotspot_image *img, const char *name, int32_t v)
{
	uint32_t e = HI_CONSTS + img->nr_consts++ * 16;

	hi_put64(img, e + 0, hi_str(img, name));
	hi_put32(img, e + 8, (uint32_t)v);
}

/* a Symbol (JDK 25: _length u2 at 4, _body at 6) at image offset @at */
static inline uint64_t hi_symbol(struct hotspot_image *img, uint32_t at, const char *s)
{
	hi_put16(img, at + 4, (uint16_t)strlen(s));
	memcpy(img->mem + at + 6, s, strlen(s));
	return hi_addr(at);
}

/* a used HeapBlock at segment @seg of @segs segments, with a CodeBlob after it */
static inline uint32_t hi_block(struct hotspot_image *img, unsigned int seg, unsigned int segs,
				uint8_t kind, const char *name)
{
	uint32_t block = HI_CODE + (seg << HI_SEG_SHIFT), blob = block + 8;
	unsigned int i;

	for (i = 0; i < segs; i++)
		img->mem[HI_SEGMAP + seg + i] = (uint8_t)i;
	img->mem[block + 4] = 1;			      /* HeapBlock::Header::_used */
	hi_put64(img, blob + 8, hi_str(img, name));	      /* _name */
	hi_put32(img, blob + 24, (segs << HI_SEG_SHIFT) - 8); /* _size */
	img->mem[blob + 56] = kind;			      /* _kind */
	return blob;
}

static inline void hotspot_image__build(struct hotspot_image *img)
{
	uint32_t m = HI_METADATA, cm = m + 0x100, cp = m + 0x200, k = m + 0x400, blob;

	memset(img, 0, sizeof(*img));
	img->str_at = HI_STRINGS;
	/* the fields we read, with a few we do not among them (as the real table has) */
	hi_field(img, "Klass", "_layout_helper", "jint", 0, 8, 0);
	hi_field(img, "ConstantPool", "_pool_holder", "InstanceKlass*", 0, 24, 0);
	hi_field(img, "ConstantPool", "_length", "int", 0, 64, 0);
	hi_field(img, "Klass", "_name", "Symbol*", 0, 24, 0);
	hi_field(img, "Method", "_constMethod", "ConstMethod*", 0, 8, 0);
	hi_field(img, "ConstMethod", "_constants", "ConstantPool*", 0, 8, 0);
	hi_field(img, "ConstMethod", "_name_index", "u2", 0, 36, 0);
	hi_field(img, "Symbol", "_length", "u2", 0, 4, 0);
	hi_field(img, "Symbol", "_body", NULL, 0, 6, 0);
	hi_field(img, "VirtualSpace", "_low_boundary", "char*", 0, 0, 0);
	hi_field(img, "VirtualSpace", "_low", "char*", 0, 16, 0);
	hi_field(img, "VirtualSpace", "_high", "char*", 0, 24, 0);
	hi_field(img, "GrowableArrayBase", "_len", "int", 0, 0, 0);
	hi_field(img, "GrowableArray<int>", "_data", "int*", 0, 8, 0);
	hi_field(img, "CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", 1, 0,
		 hi_addr(HI_STATICS));
	hi_field(img, "CodeCache", "_low_bound", "address", 1, 0, hi_addr(HI_STATICS + 8));
	hi_field(img, "CodeCache", "_high_bound", "address", 1, 0, hi_addr(HI_STATICS + 16));
	hi_field(img, "CodeHeap", "_memory", "VirtualSpace", 0, 0, 0);
	hi_field(img, "CodeHeap", "_segmap", "VirtualSpace", 0, 112, 0);
	hi_field(img, "CodeHeap", "_log2_segment_size", "int", 0, 248, 0);
	hi_field(img, "HeapBlock", "_header", "HeapBlock::Header", 0, 0, 0);
	hi_field(img, "HeapBlock::Header", "_length", "uint32_t", 0, 0, 0);
	hi_field(img, "HeapBlock::Header", "_used", "bool", 0, 4, 0);
	hi_field(img, "CodeBlob", "_name", "const char*", 0, 8, 0);
	hi_field(img, "CodeBlob", "_size", "int", 0, 24, 0);
	hi_field(img, "CodeBlob", "_kind", "CodeBlobKind", 0, 56, 0);
	hi_field(img, "CodeBlob", "_frame_size", "int", 0, 44, 0);
	hi_field(img, "nmethod", "_method", "Method*", 0, 80, 0);
	hi_field(img, "nmethod", "_compile_id", "int", 0, 212, 0);
	hi_type(img, "int", 4);
	hi_type(img, "u2", 2);
	hi_type(img, "bool", 1);
	hi_type(img, "uint32_t", 4);
	hi_type(img, "CodeBlobKind", 1);
	hi_type(img, "HeapBlock", 8);
	hi_type(img, "HeapBlock::Header", 8);
	hi_type(img, "ConstantPool", 72);
	hi_type(img, "CodeBlob", 64);
	hi_type(img, "nmethod", 224);
	hi_type(img, "CodeHeap", 344);
	hi_type(img, "VirtualSpace", 112);
	hi_type(img, "Symbol", 8);
	hi_type(img, "Klass", 200);
	hi_type(img, "Method", 88);
	hi_type(img, "ConstMethod", 48);
	hi_const(img, "CodeBlobKind::Buffer", 2);
	hi_const(img, "CodeBlobKind::Nmethod", 1);
	/* the code cache: one heap */
	hi_put64(img, HI_STATICS, hi_addr(HI_GA));
	hi_put64(img, HI_STATICS + 8, hi_addr(HI_CODE));
	hi_put64(img, HI_STATICS + 16, hi_addr(HI_CODE + (128 << HI_SEG_SHIFT)));
	hi_put32(img, HI_GA, 1);
	hi_put64(img, HI_GA + 8, hi_addr(HI_GA_DATA));
	hi_put64(img, HI_GA_DATA, hi_addr(HI_HEAP));
	hi_put64(img, HI_HEAP + 16, hi_addr(HI_CODE));
	hi_put64(img, HI_HEAP + 24, hi_addr(HI_CODE + (128 << HI_SEG_SHIFT)));
	hi_put64(img, HI_HEAP + 112 + 16, hi_addr(HI_SEGMAP));
	hi_put32(img, HI_HEAP + 248, HI_SEG_SHIFT);
	memset(img->mem + HI_SEGMAP, 0xff, 128);
	blob = hi_block(img, HI_NM_SEG, HI_NM_SEGS, 1, "nmethod");
	hi_put64(img, blob + 80, hi_addr(m));
	hi_put32(img, blob + 212, 417);
	hi_block(img, HI_INTERP_SEG, 2, 2, "Interpreter");
	/* Method -> ConstMethod -> ConstantPool (length 12) -> Klass; name at slot 7 */
	hi_put64(img, m + 8, hi_addr(cm));
	hi_put64(img, cm + 8, hi_addr(cp));
	hi_put16(img, cm + 36, 7);
	hi_put64(img, cp + 24, hi_addr(k));
	hi_put32(img, cp + 64, 12);
	hi_put64(img, cp + 72 + 7 * 8, hi_symbol(img, m + 0x600, "hotLoopAlpha"));
	hi_put64(img, k + 24, hi_symbol(img, m + 0x700, "com/example/hot/Burner"));

	img->ex = (struct vmstructs_exports){
		.structs = hi_addr(HI_STRUCTS),
		.types = hi_addr(HI_TYPES),
		.int_consts = hi_addr(HI_CONSTS),
		.s_stride = 48,
		.s_type_name = 0,
		.s_field_name = 8,
		.s_type_string = 16,
		.s_is_static = 24,
		.s_offset = 32,
		.s_address = 40,
		.t_stride = 48,
		.t_type_name = 0,
		.t_size = 32,
		.i_stride = 16,
		.i_name = 0,
		.i_value = 8,
	};
}

/* vmstructs_read_fn over the image: a read outside it fails */
static inline int hotspot_image__read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct hotspot_image *img = ctx;

	if (addr < HI_BASE || addr - HI_BASE > HI_SIZE || len > HI_SIZE - (addr - HI_BASE))
		return -EFAULT;
	memcpy(buf, img->mem + (addr - HI_BASE), len);
	return 0;
}

/* a pc inside segment @seg's code */
static inline uint64_t hi_pc(unsigned int seg, unsigned int at)
{
	return hi_addr(HI_CODE + (seg << HI_SEG_SHIFT) + at);
}

#endif /* CTXPROF_TESTS_HOTSPOT_IMAGE_H */
