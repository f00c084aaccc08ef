// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "runtimes/hotspot/vmstructs.h"

/* entries read with one read, where the table's memory allows */
#define CHUNK_ENTRIES 32
/* a structure whose header we read at most (nmethod: 224-352 bytes) */
#define MAX_READ_STRUCT 4096

enum slot {
	S_HEAPS,
	S_LOW,
	S_HIGH,
	S_GA_LEN,
	S_GA_DATA,
	S_HEAP_MEM,
	S_HEAP_SEGMAP,
	S_HEAP_LOG2,
	S_VS_LOW,
	S_VS_HIGH,
	S_HB_HEADER,
	S_HB_USED,
	S_BLOB_NAME,
	S_BLOB_SIZE,
	S_BLOB_FRAME,
	S_BLOB_KIND,
	S_NM_METHOD,
	S_NM_ID,
	S_M_CONST,
	S_CM_CONSTANTS,
	S_CM_NAME,
	S_CP_HOLDER,
	S_CP_LEN,
	S_K_NAME,
	S_SYM_LEN,
	S_SYM_BODY,
	S_MAX,
};

enum want_kind {
	W_STATIC, /* its address */
	W_PTR,	  /* a pointer: 8 bytes */
	W_INT,	  /* an integer: its type's size, 1 to 8 */
	W_STRUCT, /* a structure inside: its offset only */
};

/* several names for one slot: the JDKs that renamed or moved it */
static const struct want {
	const char *type, *field;
	uint8_t slot, kind;
	bool optional;
} wants[] = {
	{"CodeCache", "_heaps", S_HEAPS, W_STATIC, false},
	{"CodeCache", "_low_bound", S_LOW, W_STATIC, false},
	{"CodeCache", "_high_bound", S_HIGH, W_STATIC, false},
	{"GrowableArrayBase", "_len", S_GA_LEN, W_INT, false},
	{"GenericGrowableArray", "_len", S_GA_LEN, W_INT, false},
	{"GrowableArray<int>", "_data", S_GA_DATA, W_PTR, false},
	{"CodeHeap", "_memory", S_HEAP_MEM, W_STRUCT, false},
	{"CodeHeap", "_segmap", S_HEAP_SEGMAP, W_STRUCT, false},
	{"CodeHeap", "_log2_segment_size", S_HEAP_LOG2, W_INT, false},
	{"VirtualSpace", "_low", S_VS_LOW, W_PTR, false},
	{"VirtualSpace", "_high", S_VS_HIGH, W_PTR, false},
	{"HeapBlock", "_header", S_HB_HEADER, W_STRUCT, false},
	{"HeapBlock::Header", "_used", S_HB_USED, W_INT, false},
	{"CodeBlob", "_name", S_BLOB_NAME, W_PTR, false},
	{"CodeBlob", "_size", S_BLOB_SIZE, W_INT, false},
	{"CodeBlob", "_frame_size", S_BLOB_FRAME, W_INT, false},
	{"CodeBlob", "_kind", S_BLOB_KIND, W_INT, true},
	{"nmethod", "_method", S_NM_METHOD, W_PTR, false},
	{"CompiledMethod", "_method", S_NM_METHOD, W_PTR, false},
	{"nmethod", "_compile_id", S_NM_ID, W_INT, false},
	{"Method", "_constMethod", S_M_CONST, W_PTR, false},
	{"ConstMethod", "_constants", S_CM_CONSTANTS, W_PTR, false},
	{"ConstMethod", "_name_index", S_CM_NAME, W_INT, false},
	{"ConstantPool", "_pool_holder", S_CP_HOLDER, W_PTR, false},
	{"ConstantPool", "_length", S_CP_LEN, W_INT, false},
	{"Klass", "_name", S_K_NAME, W_PTR, false},
	{"Symbol", "_length", S_SYM_LEN, W_INT, false},
	{"Symbol", "_body", S_SYM_BODY, W_STRUCT, false},
};

#define NR_WANTS (sizeof(wants) / sizeof(wants[0]))

struct got {
	bool have;
	uint8_t want;	/* index into wants[] */
	uint64_t value; /* offset, or address for W_STATIC */
	char type_string[VMSTRUCTS_NAME_MAX];
	uint64_t size;	     /* of type_string, from the Types table; 0: unknown */
	uint64_t owner_size; /* sizeof(its structure); 0: unknown */
};

/* types whose size we need: the owners of the fields, and a few of their own */
enum type_slot { T_HEAP_BLOCK, T_CONSTANT_POOL, T_CODE_BLOB, T_NMETHOD, T_MAX };

static const char *const type_names[T_MAX] = {"HeapBlock", "ConstantPool", "CodeBlob", "nmethod"};

struct parse {
	const struct vmstructs_exports *ex;
	vmstructs_read_fn read;
	void *ctx;
	const char **what;
	struct got got[S_MAX];
	uint64_t type_size[T_MAX];
	bool have_kind_nmethod;
	int64_t kind_nmethod;
	/* the chunk of a table read last */
	uint8_t chunk[CHUNK_ENTRIES * VMSTRUCTS_MAX_STRIDE];
	uint64_t chunk_addr;
	size_t chunk_len;
};

static enum vmstructs_error fail(struct parse *p, enum vmstructs_error e, const char *what)
{
	if (p->what)
		*p->what = what;
	return e;
}

/*
 * @len bytes at @addr through the chunk: a whole chunk read where it can
 * be, else the entry alone (a table that ends near its mapping's end)
 */
static int read_table(struct parse *p, uint64_t addr, void *buf, size_t len)
{
	size_t want = CHUNK_ENTRIES * len;

	if (addr < p->chunk_addr || addr + len > p->chunk_addr + p->chunk_len) {
		p->chunk_len = 0;
		if (addr + want > addr && !p->read(p->ctx, addr, p->chunk, want)) {
			p->chunk_addr = addr;
			p->chunk_len = want;
		} else {
			return p->read(p->ctx, addr, buf, len);
		}
	}
	memcpy(buf, p->chunk + (addr - p->chunk_addr), len);
	return 0;
}

/*
 * The NUL-terminated name at @addr into @buf, read a page at a time so that
 * a name at the end of its mapping reads.  Return: 0; 1 when it is longer
 * than VMSTRUCTS_NAME_MAX - 1 (no name we look for); -errno.
 */
static int read_name(struct parse *p, uint64_t addr, char buf[VMSTRUCTS_NAME_MAX])
{
	size_t got = 0, n;
	int err;

	while (got < VMSTRUCTS_NAME_MAX) {
		n = 4096 - ((addr + got) & 4095);
		if (n > VMSTRUCTS_NAME_MAX - got)
			n = VMSTRUCTS_NAME_MAX - got;
		err = p->read(p->ctx, addr + got, buf + got, n);
		if (err)
			return err;
		if (memchr(buf + got, 0, n))
			return 0;
		got += n;
	}
	buf[VMSTRUCTS_NAME_MAX - 1] = 0;
	return 1;
}

static uint64_t word_at(const uint8_t *entry, uint64_t off)
{
	uint64_t v;

	memcpy(&v, entry + off, sizeof(v));
	return v;
}

/* an entry layout: @nr offsets of 8-byte words (4 for the last @narrow) inside @stride */
static bool layout_ok(uint64_t stride, const uint64_t *offs, size_t nr)
{
	size_t i;

	if (stride < 8 || stride > VMSTRUCTS_MAX_STRIDE)
		return false;
	for (i = 0; i < nr; i++)
		if (offs[i] > stride - 8)
			return false;
	return true;
}

static enum vmstructs_error check_exports(struct parse *p)
{
	const struct vmstructs_exports *ex = p->ex;
	/* is_static is an int32; read as a word it must still fit: stride >= off + 8 */
	uint64_t s[] = {ex->s_type_name, ex->s_field_name, ex->s_type_string, ex->s_offset,
			ex->s_address};
	uint64_t t[] = {ex->t_type_name, ex->t_size};
	uint64_t i[] = {ex->i_name};

	if (!ex->structs || !ex->types || !ex->int_consts)
		return fail(p, VMSTRUCTS_BAD_EXPORTS, "table address");
	if (!layout_ok(ex->s_stride, s, 5) || ex->s_is_static > ex->s_stride - 4)
		return fail(p, VMSTRUCTS_BAD_EXPORTS, "struct entry layout");
	if (!layout_ok(ex->t_stride, t, 2))
		return fail(p, VMSTRUCTS_BAD_EXPORTS, "type entry layout");
	if (!layout_ok(ex->i_stride, i, 1) || ex->i_value > ex->i_stride - 4)
		return fail(p, VMSTRUCTS_BAD_EXPORTS, "int constant entry layout");
	return VMSTRUCTS_OK;
}

/*
 * Walk one table: @name_off is the offset of the name that ends it when
 * NULL; @fn sees each entry.  Return: VMSTRUCTS_OK or why not.
 */
static enum vmstructs_error walk(struct parse *p, uint64_t table, uint64_t stride,
				 uint64_t name_off, const char *what,
				 enum vmstructs_error (*fn)(struct parse *p, const uint8_t *entry))
{
	uint8_t entry[VMSTRUCTS_MAX_STRIDE];
	enum vmstructs_error e;
	uint64_t i, addr;

	p->chunk_len = 0;
	for (i = 0; i < VMSTRUCTS_MAX_ENTRIES; i++) {
		addr = table + i * stride;
		if (addr < table || read_table(p, addr, entry, stride))
			return fail(p, VMSTRUCTS_UNREADABLE, what);
		if (!word_at(entry, name_off))
			return VMSTRUCTS_OK;
		e = fn(p, entry);
		if (e)
			return e;
	}
	return fail(p, VMSTRUCTS_UNTERMINATED, what);
}

static enum vmstructs_error on_struct(struct parse *p, const uint8_t *entry)
{
	const struct vmstructs_exports *ex = p->ex;
	char type[VMSTRUCTS_NAME_MAX], field[VMSTRUCTS_NAME_MAX];
	struct got *g;
	int32_t is_static;
	size_t i;
	int err;

	err = read_name(p, word_at(entry, ex->s_type_name), type);
	if (err < 0)
		return fail(p, VMSTRUCTS_UNREADABLE, "struct entry's type name");
	if (err)
		return VMSTRUCTS_OK;
	for (i = 0; i < NR_WANTS && strcmp(wants[i].type, type); i++)
		;
	if (i == NR_WANTS || !word_at(entry, ex->s_field_name))
		return VMSTRUCTS_OK;
	err = read_name(p, word_at(entry, ex->s_field_name), field);
	if (err < 0)
		return fail(p, VMSTRUCTS_UNREADABLE, "struct entry's field name");
	if (err)
		return VMSTRUCTS_OK;
	for (i = 0; i < NR_WANTS; i++) {
		if (strcmp(wants[i].type, type) || strcmp(wants[i].field, field))
			continue;
		g = &p->got[wants[i].slot];
		if (g->have)
			return VMSTRUCTS_OK; /* the first name found wins */
		memcpy(&is_static, entry + ex->s_is_static, sizeof(is_static));
		if ((wants[i].kind == W_STATIC) != (is_static != 0))
			return fail(p, VMSTRUCTS_BAD_VALUE, wants[i].field);
		g->value = word_at(entry, wants[i].kind == W_STATIC ? ex->s_address : ex->s_offset);
		if (wants[i].kind == W_STATIC ? !g->value : g->value > MAX_READ_STRUCT)
			return fail(p, VMSTRUCTS_BAD_VALUE, wants[i].field);
		g->type_string[0] = 0;
		if (word_at(entry, ex->s_type_string) &&
		    read_name(p, word_at(entry, ex->s_type_string), g->type_string) < 0)
			return fail(p, VMSTRUCTS_UNREADABLE, "struct entry's type string");
		g->have = true;
		g->want = (uint8_t)i;
		return VMSTRUCTS_OK;
	}
	return VMSTRUCTS_OK;
}

static enum vmstructs_error on_type(struct parse *p, const uint8_t *entry)
{
	char name[VMSTRUCTS_NAME_MAX];
	uint64_t size = word_at(entry, p->ex->t_size);
	size_t i;
	int err;

	err = read_name(p, word_at(entry, p->ex->t_type_name), name);
	if (err < 0)
		return fail(p, VMSTRUCTS_UNREADABLE, "type entry's name");
	if (err)
		return VMSTRUCTS_OK;
	for (i = 0; i < T_MAX; i++)
		if (!strcmp(type_names[i], name))
			p->type_size[i] = size;
	for (i = 0; i < S_MAX; i++) {
		struct got *g = &p->got[i];

		if (!g->have)
			continue;
		if (!strcmp(g->type_string, name))
			g->size = size;
		if (!strcmp(wants[g->want].type, name))
			g->owner_size = size;
	}
	return VMSTRUCTS_OK;
}

static enum vmstructs_error on_int(struct parse *p, const uint8_t *entry)
{
	char name[VMSTRUCTS_NAME_MAX];
	int32_t v;
	int err;

	err = read_name(p, word_at(entry, p->ex->i_name), name);
	if (err < 0)
		return fail(p, VMSTRUCTS_UNREADABLE, "int constant's name");
	if (!err && !strcmp(name, "CodeBlobKind::Nmethod")) {
		memcpy(&v, entry + p->ex->i_value, sizeof(v));
		p->kind_nmethod = v;
		p->have_kind_nmethod = true;
	}
	return VMSTRUCTS_OK;
}

/* slot @s into @f, its size checked for its kind; false: refused */
static bool take(struct parse *p, enum slot s, struct vm_field *f)
{
	const struct got *g = &p->got[s];
	uint64_t size;

	switch (wants[g->want].kind) {
	case W_PTR:
		size = 8;
		break;
	case W_INT:
		size = g->size;
		if (size != 1 && size != 2 && size != 4 && size != 8)
			return false;
		break;
	default:
		size = 0;
		break;
	}
	/* inside its structure, where the Types table gives that structure's size */
	if (g->owner_size && g->value + size > g->owner_size)
		return false;
	f->off = (uint32_t)g->value;
	f->size = (uint32_t)size;
	return true;
}

static const struct {
	enum slot slot;
	size_t dst; /* offset of its struct vm_field in struct hotspot_layout */
} fields[] = {
	{S_GA_LEN, offsetof(struct hotspot_layout, ga_len)},
	{S_GA_DATA, offsetof(struct hotspot_layout, ga_data)},
	{S_HEAP_MEM, offsetof(struct hotspot_layout, heap_memory)},
	{S_HEAP_SEGMAP, offsetof(struct hotspot_layout, heap_segmap)},
	{S_HEAP_LOG2, offsetof(struct hotspot_layout, heap_log2_seg)},
	{S_VS_LOW, offsetof(struct hotspot_layout, vs_low)},
	{S_VS_HIGH, offsetof(struct hotspot_layout, vs_high)},
	{S_HB_USED, offsetof(struct hotspot_layout, hb_used)},
	{S_BLOB_NAME, offsetof(struct hotspot_layout, blob_name)},
	{S_BLOB_SIZE, offsetof(struct hotspot_layout, blob_size)},
	{S_BLOB_FRAME, offsetof(struct hotspot_layout, blob_frame_size)},
	{S_BLOB_KIND, offsetof(struct hotspot_layout, blob_kind)},
	{S_NM_METHOD, offsetof(struct hotspot_layout, nm_method)},
	{S_NM_ID, offsetof(struct hotspot_layout, nm_compile_id)},
	{S_M_CONST, offsetof(struct hotspot_layout, method_const)},
	{S_CM_CONSTANTS, offsetof(struct hotspot_layout, cm_constants)},
	{S_CM_NAME, offsetof(struct hotspot_layout, cm_name_index)},
	{S_CP_HOLDER, offsetof(struct hotspot_layout, cp_holder)},
	{S_CP_LEN, offsetof(struct hotspot_layout, cp_length)},
	{S_K_NAME, offsetof(struct hotspot_layout, klass_name)},
	{S_SYM_LEN, offsetof(struct hotspot_layout, sym_length)},
	{S_SYM_BODY, offsetof(struct hotspot_layout, sym_body)},
};

/* the first of @s's names */
static const struct want *slot_want(enum slot s)
{
	size_t i;

	for (i = 0; i < NR_WANTS && wants[i].slot != s; i++)
		;
	return &wants[i];
}

static bool optional(enum slot s)
{
	return slot_want(s)->optional;
}

static const char *slot_name(enum slot s)
{
	return slot_want(s)->field;
}

/* the layout from what the tables gave, every value bounded */
static enum vmstructs_error fill(struct parse *p, struct hotspot_layout *out)
{
	uint64_t blob = p->type_size[T_CODE_BLOB], nm = p->type_size[T_NMETHOD];
	struct vm_field *f;
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < S_MAX; i++)
		if (!p->got[i].have && !optional((enum slot)i))
			return fail(p, VMSTRUCTS_MISSING, slot_name((enum slot)i));
	for (i = 0; i < T_MAX; i++)
		if (!p->type_size[i] || p->type_size[i] > MAX_READ_STRUCT)
			return fail(p, p->type_size[i] ? VMSTRUCTS_BAD_VALUE : VMSTRUCTS_MISSING,
				    type_names[i]);
	out->code_heaps = p->got[S_HEAPS].value;
	out->code_low = p->got[S_LOW].value;
	out->code_high = p->got[S_HIGH].value;
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		f = (struct vm_field *)((char *)out + fields[i].dst);
		if (!p->got[fields[i].slot].have)
			continue;
		if (!take(p, fields[i].slot, f))
			return fail(p, VMSTRUCTS_BAD_VALUE,
				    wants[p->got[fields[i].slot].want].field);
	}
	/* HeapBlock::Header sits inside HeapBlock: its _used at the sum */
	out->hb_used.off += (uint32_t)p->got[S_HB_HEADER].value;
	if (out->hb_used.off + out->hb_used.size > p->type_size[T_HEAP_BLOCK])
		return fail(p, VMSTRUCTS_BAD_VALUE, "HeapBlock::Header::_used");
	out->heap_block_size = (uint32_t)p->type_size[T_HEAP_BLOCK];
	out->cp_size = (uint32_t)p->type_size[T_CONSTANT_POOL];
	/* a blob's kind: by _kind where the JVM has one and says which is an nmethod */
	if (out->blob_kind.size && !p->have_kind_nmethod)
		out->blob_kind.size = 0;
	out->kind_nmethod = p->kind_nmethod;
	out->blob_read = (uint32_t)blob;
	out->nm_read = (uint32_t)nm;
	if (nm < blob || out->nm_method.off + 8 > nm ||
	    out->nm_compile_id.off + out->nm_compile_id.size > nm)
		return fail(p, VMSTRUCTS_BAD_VALUE, "nmethod");
	if (out->vs_low.off + 8 > MAX_READ_STRUCT || out->vs_high.off + 8 > MAX_READ_STRUCT)
		return fail(p, VMSTRUCTS_BAD_VALUE, "VirtualSpace");
	return VMSTRUCTS_OK;
}

enum vmstructs_error vmstructs__parse(const struct vmstructs_exports *ex, vmstructs_read_fn read,
				      void *ctx, struct hotspot_layout *out, const char **what)
{
	static struct parse zero;
	struct parse p = zero;
	enum vmstructs_error e;

	p.ex = ex;
	p.read = read;
	p.ctx = ctx;
	p.what = what;
	if (what)
		*what = NULL;
	e = check_exports(&p);
	if (!e)
		e = walk(&p, ex->structs, ex->s_stride, ex->s_type_name, "gHotSpotVMStructs",
			 on_struct);
	if (!e)
		e = walk(&p, ex->types, ex->t_stride, ex->t_type_name, "gHotSpotVMTypes", on_type);
	if (!e)
		e = walk(&p, ex->int_consts, ex->i_stride, ex->i_name, "gHotSpotVMIntConstants",
			 on_int);
	if (!e)
		e = fill(&p, out);
	return e;
}

const char *vmstructs__error_name(enum vmstructs_error e)
{
	static const char *const names[VMSTRUCTS_ERROR_MAX] = {
		[VMSTRUCTS_OK] = "ok",
		[VMSTRUCTS_BAD_EXPORTS] = "bad_exports",
		[VMSTRUCTS_UNREADABLE] = "unreadable",
		[VMSTRUCTS_UNTERMINATED] = "unterminated",
		[VMSTRUCTS_MISSING] = "missing",
		[VMSTRUCTS_BAD_VALUE] = "bad_value",
	};

	return (unsigned int)e < VMSTRUCTS_ERROR_MAX ? names[e] : "unknown";
}
