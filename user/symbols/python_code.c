// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * python_code - naming a CPython code object from the target's memory, and
 * decoding its location table.  See python_code.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/python_code.h"
#include "util/utf8.h"

/* location table entry codes (CPython's _PyCodeLocationInfoKind) */
#define LOC_ONE_LINE0	10 /* 10..12: the line moves by code - 10, two column bytes */
#define LOC_ONE_LINE2	12
#define LOC_NO_COLUMNS	13 /* svarint line delta */
#define LOC_LONG	14 /* svarint line delta, then end line and columns */
#define LOC_NO_LOCATION 15 /* no line at all */
/* a varint has 6 bits a byte: 6 bytes hold any 32-bit value */
#define VARINT_MAX_SHIFT 30

static uint64_t get_u64(const uint8_t *buf, uint16_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

static uint32_t get_u32(const uint8_t *buf, uint16_t off)
{
	uint32_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

static size_t max_size(size_t a, size_t b)
{
	return a > b ? a : b;
}

/* a callback that broke its contract (> 0) fails the read all the same */
static int read_mem(python_read_fn rd, void *ctx, uint64_t addr, void *buf, size_t len)
{
	int err = rd(ctx, addr, buf, len);

	return err > 0 ? -EIO : err;
}

/* the code point at unit @i of a string's data of @kind bytes a unit */
static uint32_t unit_at(const uint8_t *data, unsigned int kind, size_t i)
{
	uint16_t u16;
	uint32_t u32;

	switch (kind) {
	case 1:
		return data[i];
	case 2:
		memcpy(&u16, data + 2 * i, sizeof(u16));
		return u16;
	default:
		memcpy(&u32, data + 4 * i, sizeof(u32));
		return u32;
	}
}

/*
 * The str at @addr as UTF-8 in *@out (malloc()ed, NUL-terminated), at most
 * @max code points of it, PYTHON_CODE_CUT after a cut.
 */
static int read_str(const struct python_layout *l, python_read_fn rd, void *ctx,
		    uint64_t unicode_type, uint64_t addr, size_t max, char **out)
{
	uint8_t hdr[PYTHON_CODE_HEADER_MAX], *data = NULL;
	size_t need, n, i, o = 0;
	unsigned int kind;
	uint32_t state, cp;
	int64_t length;
	bool ascii;
	char *s;
	int err;

	need = max_size(max_size(l->code_type_off + 8u, l->unicode_length + 8u),
			l->unicode_state + 4u);
	/* the ASCII header is the smallest: read no more, the object may end there */
	if (need > l->unicode_ascii_data || l->unicode_ascii_data > sizeof(hdr))
		return -EINVAL;
	err = read_mem(rd, ctx, addr, hdr, l->unicode_ascii_data);
	if (err)
		return err;
	if (get_u64(hdr, l->code_type_off) != unicode_type)
		return -EINVAL;
	length = (int64_t)get_u64(hdr, l->unicode_length);
	if (length < 0)
		return -EINVAL;
	state = get_u32(hdr, l->unicode_state);
	if (!(state >> l->unicode_compact_bit & 1))
		return -EOPNOTSUPP;
	ascii = state >> l->unicode_ascii_bit & 1;
	kind = state >> l->unicode_kind_shift & 7;
	/* kind 0 is 3.11's not-yet-ready wchar_t string; an ASCII one has kind 1 */
	if ((kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1))
		return -EINVAL;
	n = (uint64_t)length < max ? (size_t)length : max;
	if (n) {
		data = malloc(n * kind);
		if (!data)
			return -ENOMEM;
		err = read_mem(rd, ctx,
			       addr + (ascii ? l->unicode_ascii_data : l->unicode_compact_data),
			       data, n * kind);
		if (err)
			goto out_free_data;
	}
	/* 4 bytes a code point at most, the cut's mark, the NUL */
	s = malloc(n * 4 + sizeof(PYTHON_CODE_CUT));
	if (!s) {
		err = -ENOMEM;
		goto out_free_data;
	}
	for (i = 0; i < n; i++) {
		cp = unit_at(data, kind, i);
		/* a control character (a newline, an escape sequence) would
		 * break every text view of the profile: none is a name's */
		if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || (ascii && cp >= 0x80))
			cp = 0xfffd;
		o += utf8_encode(cp, s + o);
	}
	if ((uint64_t)length > n) {
		memcpy(s + o, PYTHON_CODE_CUT, sizeof(PYTHON_CODE_CUT) - 1);
		o += sizeof(PYTHON_CODE_CUT) - 1;
	}
	s[o] = '\0';
	*out = s;
out_free_data:
	free(data);
	return err;
}

/* the bytes object at @addr: *@out NULL when empty or over the bound */
static int read_bytes(const struct python_layout *l, python_read_fn rd, void *ctx,
		      uint64_t bytes_type, uint64_t addr, uint8_t **out, size_t *out_len)
{
	uint8_t hdr[PYTHON_CODE_HEADER_MAX], *data;
	int64_t size;
	int err;

	if (max_size(l->code_type_off + 8u, l->bytes_size + 8u) > l->bytes_data ||
	    l->bytes_data > sizeof(hdr))
		return -EINVAL;
	err = read_mem(rd, ctx, addr, hdr, l->bytes_data);
	if (err)
		return err;
	if (get_u64(hdr, l->code_type_off) != bytes_type)
		return -EINVAL;
	size = (int64_t)get_u64(hdr, l->bytes_size);
	if (size < 0)
		return -EINVAL;
	*out = NULL;
	*out_len = 0;
	if (!size || size > PYTHON_CODE_MAX_LINETABLE)
		return 0;
	data = malloc(size);
	if (!data)
		return -ENOMEM;
	err = read_mem(rd, ctx, addr + l->bytes_data, data, size);
	if (err) {
		free(data);
		return err;
	}
	*out = data;
	*out_len = size;
	return 0;
}

int python_code__name(const struct python_layout *l, python_read_fn rd, void *ctx,
		      uint64_t code_type, uint64_t unicode_type, uint64_t bytes_type, uint64_t code,
		      uint32_t check, struct python_code_name *out)
{
	struct python_code_name n = {0};
	uint64_t filename, qualname;
	uint8_t hdr[PYTHON_CODE_HEADER_MAX];
	size_t need;
	int err;

	need = max_size(max_size(l->code_type_off + 8u, l->code_firstlineno + 4u),
			max_size(max_size(l->code_filename, l->code_qualname), l->code_linetable) +
				8u);
	if (need > sizeof(hdr))
		return -EINVAL;
	err = read_mem(rd, ctx, code, hdr, need);
	if (err)
		return err;
	if (get_u64(hdr, l->code_type_off) != code_type)
		return -EINVAL;
	n.firstlineno = (int32_t)get_u32(hdr, l->code_firstlineno);
	filename = get_u64(hdr, l->code_filename);
	qualname = get_u64(hdr, l->code_qualname);
	if (python_code_check(n.firstlineno, filename, qualname) != check)
		return -ESTALE;
	err = read_str(l, rd, ctx, unicode_type, qualname, PYTHON_CODE_MAX_NAME, &n.qualname);
	if (err)
		goto err_free;
	err = read_str(l, rd, ctx, unicode_type, filename, PYTHON_CODE_MAX_FILENAME, &n.filename);
	if (err)
		goto err_free;
	err = read_bytes(l, rd, ctx, bytes_type, get_u64(hdr, l->code_linetable), &n.linetable,
			 &n.linetable_len);
	if (err)
		goto err_free;
	*out = n;
	return 0;
err_free:
	python_code_name__free(&n);
	return err;
}

void python_code_name__free(struct python_code_name *n)
{
	if (!n)
		return;
	free(n->qualname);
	free(n->filename);
	free(n->linetable);
	memset(n, 0, sizeof(*n));
}

/* a varint at *@i: 6-bit chunks, least significant first, bit 6 "more" */
static int read_varint(const uint8_t *t, size_t len, size_t *i, uint32_t *out)
{
	unsigned int shift = 0;
	uint64_t v = 0;
	uint8_t b;

	do {
		/* bit 7 starts the next entry: this one was cut short */
		if (*i >= len || shift > VARINT_MAX_SHIFT || t[*i] & 0x80)
			return -1;
		b = t[(*i)++];
		v |= (uint64_t)(b & 0x3f) << shift;
		shift += 6;
	} while (b & 0x40);
	if (v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int python_code__lnotab_line(const uint8_t *table, size_t len, int firstlineno, uint32_t instr)
{
	uint64_t addr = 0, want = (uint64_t)instr * 2;
	int64_t line = firstlineno;
	size_t i;

	if (instr == PYTHON_INSTR_NONE)
		return firstlineno;
	for (i = 0; i + 1 < len; i += 2) {
		addr += table[i];
		if (addr > want)
			break;
		line += (int8_t)table[i + 1];
		if (line < 0 || line > INT_MAX)
			return -1;
	}
	return (int)line;
}

int python_code__line(const uint8_t *table, size_t len, int firstlineno, uint32_t instr)
{
	int64_t line = firstlineno;
	uint64_t end = 0; /* one past the last code unit of the entries read */
	unsigned int code;
	uint32_t delta;
	size_t i = 0;
	uint8_t b;

	if (instr == PYTHON_INSTR_NONE)
		return firstlineno;
	while (i < len) {
		b = table[i++];
		if (!(b & 0x80))
			return -1;
		code = b >> 3 & 15;
		if (code == LOC_NO_COLUMNS || code == LOC_LONG) {
			if (read_varint(table, len, &i, &delta))
				return -1;
			/* signed: the lowest bit is the sign */
			line += delta & 1 ? -(int64_t)(delta >> 1) : (int64_t)(delta >> 1);
		} else if (code >= LOC_ONE_LINE0 && code <= LOC_ONE_LINE2) {
			line += code - LOC_ONE_LINE0;
		}
		if (line < 0 || line > INT_MAX)
			return -1;
		/* the rest of the entry holds columns only, as CPython skips it */
		while (i < len && !(table[i] & 0x80))
			i++;
		end += (b & 7) + 1;
		if (instr < end)
			return code == LOC_NO_LOCATION ? -1 : (int)line;
	}
	return firstlineno;
}
