// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: vmstructs__parse() and the code cache walk
 * (runtimes/hotspot/code_cache.h) on a synthetic JVM's memory
 * (tests/unit/hotspot_image.h) that the input corrupts.  The input:
 *   u16 pc         the pc looked up: an offset into the image's code
 *   then patches   (u16 at, u8 value) each: image byte @at % (image + the
 *                  exports' bytes) set to @value
 * Starting from a whole image puts every mutation deep in the tables and
 * structures.  Whatever comes back must keep the contract: a refusal, or a
 * layout whose reads stay bounded (ASan) and names that are NUL-terminated
 * UTF-8 within their buffers.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/hotspot/code_cache.h"
#include "runtimes/hotspot/vmstructs.h"
#include "util/utf8.h"
#include "../unit/hotspot_image.h"

static struct hotspot_image img;

static void check_name(const char *s, size_t cap)
{
	size_t len = strnlen(s, cap);

	if (len == cap || !utf8_valid(s, len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hotspot_heap heaps[HOTSPOT_MAX_HEAPS];
	uint8_t *ex = (uint8_t *)&img.ex;
	struct hotspot_layout l;
	struct hotspot_blob b;
	char name[HOTSPOT_NAME_MAX * 2 + 64];
	uint16_t pc, at;
	size_t i;
	int n;

	if (size < 2)
		return 0;
	hotspot_image__build(&img);
	memcpy(&pc, data, 2);
	for (i = 2; i + 3 <= size; i += 3) {
		memcpy(&at, data + i, 2);
		n = at % (HI_SIZE + sizeof(img.ex));
		if ((size_t)n < HI_SIZE)
			img.mem[n] = data[i + 2];
		else
			ex[n - HI_SIZE] = data[i + 2];
	}
	if (vmstructs__parse(&img.ex, hotspot_image__read, &img, &l, NULL))
		return 0;
	n = hotspot_code__heaps(&l, hotspot_image__read, &img, heaps);
	if (n <= 0)
		return 0;
	if (hotspot_code__find(&l, hotspot_image__read, &img, heaps, (unsigned int)n,
			       hi_addr(HI_CODE + pc % (128 << HI_SEG_SHIFT)), &b))
		return 0;
	if (b.nmethod) {
		if (!hotspot_code__method_name(&l, hotspot_image__read, &img, b.method, name,
					       sizeof(name)))
			check_name(name, sizeof(name));
	} else if (!hotspot_code__blob_name(hotspot_image__read, &img, b.name_at, name,
					    sizeof(name))) {
		check_name(name, sizeof(name));
	}
	return 0;
}
