// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * runtimes/hotspot: vmstructs__parse() and code_cache on a synthetic JVM's
 * memory (hotspot_image.h): the layout read from the tables, a pc in an
 * nmethod named package.Class.method, the interpreter's blob by its name;
 * and the same memory made hostile: entry layouts out of their stride, a
 * table with no end, a field missing, a field of a size the Types table
 * does not give, an offset past its structure, segment maps that loop or
 * point at free blocks, a name index past the constant pool, Symbols of
 * bad length or bytes.  Each is refused (counted by the caller), never
 * guessed; tests/integration/test_hotspot.sh reads real JVMs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runtimes/hotspot/code_cache.h"
#include "runtimes/hotspot/vmstructs.h"
#include "hotspot_image.h"

static int setup(void **state)
{
	struct hotspot_image *img = malloc(sizeof(*img));

	if (!img)
		return -1;
	hotspot_image__build(img);
	*state = img;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

static enum vmstructs_error parse(struct hotspot_image *img, struct hotspot_layout *l,
				  const char **what)
{
	return vmstructs__parse(&img->ex, hotspot_image__read, img, l, what);
}

/* the struct entry whose field name is @field */
static uint32_t entry_of(struct hotspot_image *img, const char *type, const char *field)
{
	unsigned int i;

	for (i = 0; i < img->nr_structs; i++) {
		uint32_t e = HI_STRUCTS + i * 48;
		uint64_t t, f;

		memcpy(&t, img->mem + e, 8);
		memcpy(&f, img->mem + e + 8, 8);
		if (!strcmp((char *)img->mem + (t - HI_BASE), type) &&
		    !strcmp((char *)img->mem + (f - HI_BASE), field))
			return e;
	}
	fail_msg("no entry %s::%s", type, field);
	return 0;
}

static void vmstructs__synthetic_jdk25__layout_from_tables(void **state)
{
	struct hotspot_image *img = *state;
	struct hotspot_layout l;
	const char *what;

	assert_int_equal(parse(img, &l, &what), VMSTRUCTS_OK);
	assert_int_equal(l.code_heaps, hi_addr(HI_STATICS));
	assert_int_equal(l.blob_size.off, 24);
	assert_int_equal(l.blob_size.size, 4);
	assert_int_equal(l.blob_kind.off, 56);
	assert_int_equal(l.blob_kind.size, 1);
	assert_int_equal(l.kind_nmethod, 1);
	assert_int_equal(l.hb_used.off, 4);
	assert_int_equal(l.hb_used.size, 1);
	assert_int_equal(l.heap_block_size, 8);
	assert_int_equal(l.cm_name_index.size, 2);
	assert_int_equal(l.cp_size, 72);
	assert_int_equal(l.nm_method.off, 80);
	assert_int_equal(l.nm_read, 224);
	assert_int_equal(l.sym_body.off, 6);
}

static void code_cache__nmethod__named_package_class_method(void **state)
{
	struct hotspot_image *img = *state;
	struct hotspot_heap heaps[HOTSPOT_MAX_HEAPS];
	struct hotspot_layout l;
	struct hotspot_blob b;
	char name[256];
	unsigned int seg;
	int n;

	assert_int_equal(parse(img, &l, NULL), VMSTRUCTS_OK);
	n = hotspot_code__heaps(&l, hotspot_image__read, img, heaps);
	assert_int_equal(n, 1);
	/* every segment of the block finds its start */
	for (seg = HI_NM_SEG; seg < HI_NM_SEG + HI_NM_SEGS; seg++) {
		assert_int_equal(hotspot_code__find(&l, hotspot_image__read, img, heaps, 1,
						    hi_pc(seg, seg == HI_NM_SEG ? 40 : 3), &b),
				 0);
		assert_true(b.nmethod);
		assert_int_equal(b.addr, hi_pc(HI_NM_SEG, 8));
		assert_int_equal(b.compile_id, 417);
	}
	assert_int_equal(hotspot_code__method_name(&l, hotspot_image__read, img, b.method, name,
						   sizeof(name)),
			 0);
	assert_string_equal(name, "com.example.hot.Burner.hotLoopAlpha");
	/* a short buffer cuts, still a string */
	assert_int_equal(hotspot_code__method_name(&l, hotspot_image__read, img, b.method, name, 8),
			 0);
	assert_string_equal(name, "com.exa");
}

static void code_cache__other_blobs__by_name_free_and_outside_refused(void **state)
{
	struct hotspot_image *img = *state;
	struct hotspot_heap heaps[HOTSPOT_MAX_HEAPS];
	struct hotspot_layout l;
	struct hotspot_blob b;
	char name[64];

	assert_int_equal(parse(img, &l, NULL), VMSTRUCTS_OK);
	assert_int_equal(hotspot_code__heaps(&l, hotspot_image__read, img, heaps), 1);
	assert_int_equal(hotspot_code__find(&l, hotspot_image__read, img, heaps, 1,
					    hi_pc(HI_INTERP_SEG + 1, 0), &b),
			 0);
	assert_false(b.nmethod);
	assert_int_equal(
		hotspot_code__blob_name(hotspot_image__read, img, b.name_at, name, sizeof(name)),
		0);
	assert_string_equal(name, "Interpreter");
	/* a free segment, and one between blocks (0xff in the map) */
	assert_int_equal(hotspot_code__find(&l, hotspot_image__read, img, heaps, 1,
					    hi_pc(HI_FREE_SEG, 0), &b),
			 -EINVAL);
	/* outside the heap: not the JVM's code */
	assert_int_equal(
		hotspot_code__find(&l, hotspot_image__read, img, heaps, 1, hi_addr(0x10), &b),
		-ENOENT);
	/* past the blob's _size, inside its last segment */
	img->mem[HI_CODE + (HI_NM_SEG << HI_SEG_SHIFT) + 8 + 24] = 16;
	assert_int_equal(hotspot_code__find(&l, hotspot_image__read, img, heaps, 1,
					    hi_pc(HI_NM_SEG + 1, 0), &b),
			 -EINVAL);
	/* a block not in use */
	hotspot_image__build(img);
	img->mem[HI_CODE + (HI_NM_SEG << HI_SEG_SHIFT) + 4] = 0;
	assert_int_equal(hotspot_code__find(&l, hotspot_image__read, img, heaps, 1,
					    hi_pc(HI_NM_SEG, 20), &b),
			 -EINVAL);
}

static void vmstructs__hostile_layouts__refused(void **state)
{
	struct hotspot_image *img = *state;
	struct hotspot_layout l;
	const char *what;
	uint32_t e;

	/* entry layouts: a stride of 0, past the bound, an offset past the stride */
	img->ex.s_stride = 0;
	assert_int_equal(parse(img, &l, &what), VMSTRUCTS_BAD_EXPORTS);
	img->ex.s_stride = 1u << 20;
	assert_int_equal(parse(img, &l, &what), VMSTRUCTS_BAD_EXPORTS);
	img->ex.s_stride = 48;
	img->ex.s_address = 44;
	assert_int_equal(parse(img, &l, &what), VMSTRUCTS_BAD_EXPORTS);
	img->ex.s_address = 40;
	img->ex.t_size = UINT64_MAX - 3;
	assert_int_equal(parse(img, &l, &what), VMSTRUCTS_BAD_EXPORTS);
	img->ex.t_size = 32;
	img->ex.types = 0;
	assert_int_equal(parse(img, &l, &what), VMSTRUCTS_BAD_EXPORTS);
	img->ex.types = hi_addr(HI_TYPES);
	assert_int_equal(parse(img, &l, &what), VMSTRUCTS_OK);

	/* a table that runs off readable memory before its end */
	img->ex.structs = hi_addr(HI_SIZE - 48 * 3);
	memset(img->mem + HI_SIZE - 48 * 3, 0x11, 48 * 3);
	assert_int_equal(parse(img, &l, &what), VMSTRUCTS_UNREADABLE);
	hotspot_image__build(img);

	/* a field missing: CodeBlob::_size renamed */
	e = entry_of(img, "CodeBlob", "_size");
	hi_put64(img, e + 8, hi_str(img, "_size_renamed"));
	assert_int_equal(parse(img, &l, &what), VMSTRUCTS_MISSING);
	assert_string_equal(what, "_size");
	hotspot_image__build(img);

	/* an integer field of a type the Types table does not size */
	e = entry_of(img, "nmethod", "_compile_id");
	hi_put64(img, e + 16, hi_str(img, "weird_t"));
	assert_int_equal(parse(img, &l, &what), VMSTRUCTS_BAD_VALUE);
	hotspot_image__build(img);

	/* an offset past its structure's size, and past any structure */
	e = entry_of(img, "nmethod", "_compile_id");
	hi_put64(img, e + 32, 222);
	assert_int_equal(parse(img, &l, &what), VMSTRUCTS_BAD_VALUE);
	hi_put64(img, e + 32, 1ull << 40);
	assert_int_equal(parse(img, &l, &what), VMSTRUCTS_BAD_VALUE);
	hotspot_image__build(img);

	/* a static that is not, and a static at 0 */
	e = entry_of(img, "CodeCache", "_heaps");
	hi_put32(img, e + 24, 0);
	assert_int_equal(parse(img, &l, &what), VMSTRUCTS_BAD_VALUE);
	hi_put32(img, e + 24, 1);
	hi_put64(img, e + 40, 0);
	assert_int_equal(parse(img, &l, &what), VMSTRUCTS_BAD_VALUE);
	hotspot_image__build(img);

	/* a name with no NUL within the bound is no name of ours, not an error */
	e = entry_of(img, "Klass", "_layout_helper");
	memset(img->mem + HI_STRINGS + 0x1000, 'A', 200);
	hi_put64(img, e, hi_addr(HI_STRINGS + 0x1000));
	assert_int_equal(parse(img, &l, &what), VMSTRUCTS_OK);
}

/* a reader whose memory repeats one entry forever past the table's start */
static int endless_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct hotspot_image *img = ctx;
	uint8_t *out = buf;
	size_t i;

	if (addr >= hi_addr(HI_SIZE) && addr < hi_addr(HI_SIZE) + (1ull << 32)) {
		for (i = 0; i < len; i++)
			out[i] = img->mem[HI_STRUCTS + (addr + i - hi_addr(HI_SIZE)) % 48];
		return 0;
	}
	return hotspot_image__read(ctx, addr, buf, len);
}

static void vmstructs__endless_table__unterminated(void **state)
{
	struct hotspot_image *img = *state;
	struct hotspot_layout l;
	const char *what;

	img->ex.structs = hi_addr(HI_SIZE);
	assert_int_equal(vmstructs__parse(&img->ex, endless_read, img, &l, &what),
			 VMSTRUCTS_UNTERMINATED);
	assert_string_equal(what, "gHotSpotVMStructs");
}

static void code_cache__hostile_memory__not_named(void **state)
{
	struct hotspot_image *img = *state;
	struct hotspot_heap heaps[HOTSPOT_MAX_HEAPS];
	struct hotspot_layout l;
	struct hotspot_blob b;
	char name[256];
	uint64_t method;
	unsigned int i;

	assert_int_equal(parse(img, &l, NULL), VMSTRUCTS_OK);
	assert_int_equal(hotspot_code__heaps(&l, hotspot_image__read, img, heaps), 1);
	assert_int_equal(
		hotspot_code__find(&l, hotspot_image__read, img, heaps, 1, hi_pc(HI_NM_SEG, 9), &b),
		0);
	method = b.method;

	/* a segment map of hops that go before the heap's start */
	for (i = 0; i < 8; i++)
		img->mem[HI_SEGMAP + i] = 1;
	assert_int_equal(
		hotspot_code__find(&l, hotspot_image__read, img, heaps, 1, hi_pc(5, 0), &b),
		-EINVAL);
	hotspot_image__build(img);

	/* a name index past the constant pool's length, and 0 */
	hi_put16(img, HI_METADATA + 0x100 + 36, 12);
	assert_int_equal(
		hotspot_code__method_name(&l, hotspot_image__read, img, method, name, sizeof(name)),
		-EINVAL);
	hi_put16(img, HI_METADATA + 0x100 + 36, 0);
	assert_int_equal(
		hotspot_code__method_name(&l, hotspot_image__read, img, method, name, sizeof(name)),
		-EINVAL);
	hotspot_image__build(img);

	/* a Symbol of length 0, one longer than the memory, one with a control byte */
	hi_put16(img, HI_METADATA + 0x600 + 4, 0);
	assert_int_not_equal(
		hotspot_code__method_name(&l, hotspot_image__read, img, method, name, sizeof(name)),
		0);
	hi_put16(img, HI_METADATA + 0x600 + 4, 0xffff);
	/* cut to the buffer: reads 511 bytes, all inside the image (zeros: control bytes) */
	assert_int_not_equal(
		hotspot_code__method_name(&l, hotspot_image__read, img, method, name, sizeof(name)),
		0);
	hotspot_image__build(img);
	img->mem[HI_METADATA + 0x600 + 6 + 3] = '\n';
	assert_int_not_equal(
		hotspot_code__method_name(&l, hotspot_image__read, img, method, name, sizeof(name)),
		0);
	hotspot_image__build(img);

	/* invalid UTF-8 in a name */
	img->mem[HI_METADATA + 0x600 + 6 + 3] = 0xff;
	assert_int_not_equal(
		hotspot_code__method_name(&l, hotspot_image__read, img, method, name, sizeof(name)),
		0);
	hotspot_image__build(img);

	/* more heaps than HotSpot makes; a segment size out of bounds */
	hi_put32(img, HI_GA, 9);
	assert_int_equal(hotspot_code__heaps(&l, hotspot_image__read, img, heaps), -EINVAL);
	hi_put32(img, HI_GA, 1);
	hi_put32(img, HI_HEAP + 248, 40);
	assert_int_equal(hotspot_code__heaps(&l, hotspot_image__read, img, heaps), -EINVAL);
	/* no heaps yet: the JVM still starting */
	hi_put64(img, HI_STATICS, 0);
	assert_int_equal(hotspot_code__heaps(&l, hotspot_image__read, img, heaps), -EAGAIN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(vmstructs__synthetic_jdk25__layout_from_tables,
						setup, teardown),
		cmocka_unit_test_setup_teardown(code_cache__nmethod__named_package_class_method,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			code_cache__other_blobs__by_name_free_and_outside_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(vmstructs__hostile_layouts__refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(vmstructs__endless_table__unterminated, setup,
						teardown),
		cmocka_unit_test_setup_teardown(code_cache__hostile_memory__not_named, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
