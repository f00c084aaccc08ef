// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: util/protobuf_reader on any bytes, descending into every
 * length-delimited field as if it were a message (up to 32 deep): every
 * field handed out lies inside its parent, and a reader always ends.
 */
#include <stdint.h>
#include <stdlib.h>

#include "util/protobuf_reader.h"

static void walk(const uint8_t *buf, size_t len, int depth)
{
	struct pb_reader r;
	struct pb_field f;
	size_t fields = 0;
	int ret;

	pb_reader__init(&r, buf, len);
	while ((ret = pb_reader__next(&r, &f)) > 0) {
		/* every field takes at least one byte */
		if (++fields > len || !f.number)
			abort();
		if (f.wire == PB_WIRE_LEN) {
			if (f.data < buf || f.len > len || f.data + f.len > buf + len)
				abort();
			if (depth < 32)
				walk(f.data, f.len, depth + 1);
		}
	}
	if (ret > 0 || r.p != r.end)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	walk(data, size, 0);
	return 0;
}
