// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include "util/protobuf_reader.h"

/* a base-128 varint of at most 10 bytes; false when cut or longer */
static bool read_varint(struct pb_reader *r, uint64_t *v)
{
	uint64_t x = 0;
	unsigned int shift;

	for (shift = 0; shift < 70 && r->p < r->end; shift += 7) {
		uint8_t b = *r->p++;

		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

static uint64_t read_le(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

int pb_reader__next(struct pb_reader *r, struct pb_field *f)
{
	uint64_t key, len;

	if (r->p >= r->end)
		return 0;
	if (!read_varint(r, &key) || key >> 3 == 0 || key >> 3 > UINT32_MAX)
		goto malformed;
	f->number = key >> 3;
	f->wire = key & 7;
	f->data = NULL;
	f->len = 0;
	f->value = 0;
	switch (f->wire) {
	case PB_WIRE_VARINT:
		if (!read_varint(r, &f->value))
			goto malformed;
		return 1;
	case PB_WIRE_I64:
	case PB_WIRE_I32:
		len = f->wire == PB_WIRE_I64 ? 8 : 4;
		if ((size_t)(r->end - r->p) < len)
			goto malformed;
		f->value = read_le(r->p, len);
		r->p += len;
		return 1;
	case PB_WIRE_LEN:
		if (!read_varint(r, &len) || len > (size_t)(r->end - r->p))
			goto malformed;
		f->data = r->p;
		f->len = len;
		r->p += len;
		return 1;
	default:
		goto malformed;
	}

malformed:
	r->p = r->end;
	return -EINVAL;
}
