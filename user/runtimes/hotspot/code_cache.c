// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "runtimes/hotspot/code_cache.h"
#include "util/utf8.h"

/* segment map hops followed at most for one pc (HotSpot keeps them few: a
 * hop is at most 0xfe segments, and a block's map is built to need few) */
#define MAX_HOPS 4096
/* the structures whose fields we read, at most (vmstructs bounds offsets to 4 KiB) */
#define MAX_STRUCT 4096

/* the integer field @f of the bytes @base read */
static int64_t field_int(const uint8_t *base, const struct vm_field *f)
{
	int8_t i8;
	int16_t i16;
	int32_t i32;
	int64_t i64;

	switch (f->size) {
	case 1:
		memcpy(&i8, base + f->off, 1);
		return i8;
	case 2:
		memcpy(&i16, base + f->off, 2);
		return i16;
	case 4:
		memcpy(&i32, base + f->off, 4);
		return i32;
	default:
		memcpy(&i64, base + f->off, 8);
		return i64;
	}
}

static uint64_t field_ptr(const uint8_t *base, const struct vm_field *f)
{
	uint64_t v;

	memcpy(&v, base + f->off, sizeof(v));
	return v;
}

static int read_u64(vmstructs_read_fn read, void *ctx, uint64_t addr, uint64_t *v)
{
	return read(ctx, addr, v, sizeof(*v));
}

/* the integer field @f of the structure at @at; 0 or -errno */
static int read_int(vmstructs_read_fn read, void *ctx, uint64_t at, const struct vm_field *f,
		    int64_t *v)
{
	const struct vm_field here = {0, f->size};
	uint8_t buf[8];
	int err;

	err = read(ctx, at + f->off, buf, f->size);
	if (!err)
		*v = field_int(buf, &here);
	return err;
}

/* one past the last byte of @f */
static uint32_t field_end(const struct vm_field *f)
{
	return f->off + (f->size ? f->size : 8);
}

int hotspot_code__heaps(const struct hotspot_layout *l, vmstructs_read_fn read, void *ctx,
			struct hotspot_heap heaps[HOTSPOT_MAX_HEAPS])
{
	uint32_t heap_len = 0, ga_len, end;
	uint8_t ga[64], heap[MAX_STRUCT];
	uint64_t arr, data, ptr;
	int64_t len, log2;
	unsigned int i;
	int err;

	/* the parts of a CodeHeap we read: its two VirtualSpaces, the segment size */
	end = l->heap_memory.off + field_end(&l->vs_high);
	heap_len = end > heap_len ? end : heap_len;
	end = l->heap_memory.off + field_end(&l->vs_low);
	heap_len = end > heap_len ? end : heap_len;
	end = l->heap_segmap.off + field_end(&l->vs_low);
	heap_len = end > heap_len ? end : heap_len;
	end = field_end(&l->heap_log2_seg);
	heap_len = end > heap_len ? end : heap_len;
	ga_len = field_end(&l->ga_len) > field_end(&l->ga_data) ? field_end(&l->ga_len)
								: field_end(&l->ga_data);
	if (heap_len > sizeof(heap) || ga_len > sizeof(ga))
		return -EINVAL;
	err = read_u64(read, ctx, l->code_heaps, &arr);
	if (!err && !arr)
		return -EAGAIN; /* not made yet */
	if (!err)
		err = read(ctx, arr, ga, ga_len);
	if (err)
		return err;
	len = field_int(ga, &l->ga_len);
	data = field_ptr(ga, &l->ga_data);
	if (len <= 0)
		return -EAGAIN;
	if (len > HOTSPOT_MAX_HEAPS)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		struct hotspot_heap *h = &heaps[i];

		err = read_u64(read, ctx, data + (uint64_t)i * 8, &ptr);
		if (!err)
			err = read(ctx, ptr, heap, heap_len);
		if (err)
			return err;
		h->low = field_ptr(heap + l->heap_memory.off, &l->vs_low);
		h->high = field_ptr(heap + l->heap_memory.off, &l->vs_high);
		h->segmap = field_ptr(heap + l->heap_segmap.off, &l->vs_low);
		log2 = field_int(heap, &l->heap_log2_seg);
		/* segments of 16 bytes to 1 MiB: HotSpot's CodeCacheSegmentSize is 64 or 128 */
		if (h->high < h->low || log2 < 4 || log2 > 20)
			return -EINVAL;
		h->log2_seg = (uint32_t)log2;
	}
	return (int)len;
}

/* the block holding @pc in @h (CodeHeap::find_block_for); 0 or -errno */
static int find_block(vmstructs_read_fn read, void *ctx, const struct hotspot_heap *h, uint64_t pc,
		      uint64_t *block)
{
	uint64_t seg = (pc - h->low) >> h->log2_seg;
	uint8_t hop = 0;
	unsigned int i;
	int err;

	for (i = 0; i < MAX_HOPS; i++) {
		err = read(ctx, h->segmap + seg, &hop, 1);
		if (err)
			return err;
		if (hop == 0xff) /* free_sentinel: no block there */
			return -EINVAL;
		if (!hop)
			break;
		if (hop > seg)
			return -EINVAL;
		seg -= hop;
	}
	if (hop)
		return -EINVAL;
	*block = h->low + (seg << h->log2_seg);
	return 0;
}

int hotspot_code__find(const struct hotspot_layout *l, vmstructs_read_fn read, void *ctx,
		       const struct hotspot_heap *heaps, unsigned int nr, uint64_t pc,
		       struct hotspot_blob *out)
{
	const struct hotspot_heap *h = NULL;
	uint8_t hdr[MAX_STRUCT];
	uint64_t block, blob;
	int64_t size, used = 0;
	unsigned int i;
	char name[8];
	int err;

	for (i = 0; i < nr && !h; i++)
		if (pc >= heaps[i].low && pc < heaps[i].high)
			h = &heaps[i];
	if (!h)
		return -ENOENT;
	if (l->nm_read > sizeof(hdr) || l->blob_read > l->nm_read)
		return -EINVAL;
	err = find_block(read, ctx, h, pc, &block);
	if (!err)
		err = read_int(read, ctx, block, &l->hb_used, &used);
	if (err)
		return err;
	if (!used)
		return -EINVAL;
	blob = block + l->heap_block_size;
	err = read(ctx, blob, hdr, l->blob_read);
	if (err)
		return err;
	size = field_int(hdr, &l->blob_size);
	if (size <= 0 || pc >= blob + (uint64_t)size || blob + (uint64_t)size > h->high)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->addr = blob;
	out->name_at = field_ptr(hdr, &l->blob_name);
	if (l->blob_kind.size)
		out->nmethod = field_int(hdr, &l->blob_kind) == l->kind_nmethod;
	else
		/* before JDK 23: an nmethod's CodeBlob name is "nmethod" */
		out->nmethod = !read(ctx, out->name_at, name, sizeof(name)) &&
			       !memcmp(name, "nmethod", sizeof(name));
	if (!out->nmethod)
		return 0;
	if ((uint64_t)size < l->nm_read)
		return -EINVAL;
	err = read(ctx, blob, hdr, l->nm_read);
	if (err)
		return err;
	out->method = field_ptr(hdr, &l->nm_method);
	out->compile_id = field_int(hdr, &l->nm_compile_id);
	return 0;
}

/* the Symbol at @sym into @out (cut to @cap - 1 bytes); 0 or -errno */
static int read_symbol(const struct hotspot_layout *l, vmstructs_read_fn read, void *ctx,
		       uint64_t sym, char *out, size_t cap)
{
	int64_t len, i;
	int err;

	if (!sym || cap < 2)
		return -EINVAL;
	err = read_int(read, ctx, sym, &l->sym_length, &len);
	if (err)
		return err;
	len &= 0xffff;
	if (!len)
		return -EINVAL;
	if ((size_t)len >= cap)
		len = (int64_t)cap - 1;
	err = read(ctx, sym + l->sym_body.off, out, (size_t)len);
	if (err)
		return err;
	out[len] = 0;
	/* a control byte is in no class or method name; the rest must be UTF-8
	 * (a cut may split a character: cut back to where it is) */
	for (i = 0; i < len; i++)
		if ((unsigned char)out[i] < 0x20)
			return -EINVAL;
	while (len > 0 && !utf8_valid(out, (size_t)len) && (unsigned char)out[len - 1] >= 0x80)
		out[--len] = 0;
	return len > 0 && utf8_valid(out, (size_t)len) ? 0 : -EINVAL;
}

int hotspot_code__method_name(const struct hotspot_layout *l, vmstructs_read_fn read, void *ctx,
			      uint64_t method, char *out, size_t cap)
{
	char klass[HOTSPOT_NAME_MAX], name[HOTSPOT_NAME_MAX];
	uint64_t cm, cp, holder, kname, sym;
	int64_t idx, cp_len;
	int err;
	char *c;

	if (!cap)
		return -EINVAL;
	err = read_u64(read, ctx, method + l->method_const.off, &cm);
	if (!err)
		err = read_int(read, ctx, cm, &l->cm_name_index, &idx);
	if (!err)
		err = read_u64(read, ctx, cm + l->cm_constants.off, &cp);
	if (!err)
		err = read_int(read, ctx, cp, &l->cp_length, &cp_len);
	if (err)
		return err;
	/* a u2: its bits, whatever the sign the field's size read it with */
	idx &= 0xffff;
	if (idx <= 0 || idx >= cp_len)
		return -EINVAL;
	err = read_u64(read, ctx, cp + l->cp_holder.off, &holder);
	if (!err)
		err = read_u64(read, ctx, holder + l->klass_name.off, &kname);
	if (!err)
		err = read_symbol(l, read, ctx, kname, klass, sizeof(klass));
	if (!err)
		err = read_u64(read, ctx, cp + l->cp_size + (uint64_t)idx * 8, &sym);
	if (!err)
		err = read_symbol(l, read, ctx, sym, name, sizeof(name));
	if (err)
		return err;
	/* the JVM's internal form, com/example/Foo: as Java writes it */
	for (c = klass; *c; c++)
		if (*c == '/')
			*c = '.';
	snprintf(out, cap, "%s.%s", klass, name);
	/* a cut may split a character */
	for (size_t n = strlen(out); n > 0 && !utf8_valid(out, n); n--)
		out[n - 1] = 0;
	return 0;
}

int hotspot_code__blob_name(vmstructs_read_fn read, void *ctx, uint64_t at, char *out, size_t cap)
{
	size_t n;

	for (n = 0; n + 1 < cap; n++) {
		if (read(ctx, at + n, out + n, 1))
			return -EFAULT;
		if (!out[n])
			break;
		/* HotSpot's blob names are ASCII words */
		if ((unsigned char)out[n] < 0x20 || (unsigned char)out[n] >= 0x7f)
			return -EINVAL;
	}
	return n && n + 1 < cap ? 0 : -EINVAL;
}
