/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * protobuf_reader - walk the fields of an encoded protobuf message, for
 * payloads another process wrote (the OpenTelemetry process context).
 *
 * Wire format only: the caller knows its schema and descends into a
 * length-delimited field with a reader of its own over the field's bytes, so
 * nesting is as deep as the caller's code, never as deep as the input says.
 * Every read is bounded by the buffer: a varint longer than 10 bytes, a
 * length past the end, field number 0, a group (wire types 3 and 4, which
 * OTLP never uses) or an unknown wire type makes the message malformed.
 * No allocation; the bytes handed out point into the caller's buffer.
 * Any thread: a reader is the caller's.
 */
#ifndef CTXPROF_PROTOBUF_READER_H
#define CTXPROF_PROTOBUF_READER_H

#include <stddef.h>
#include <stdint.h>

enum pb_wire_type {
	PB_WIRE_VARINT = 0,
	PB_WIRE_I64 = 1,
	PB_WIRE_LEN = 2,
	PB_WIRE_I32 = 5,
};

struct pb_reader {
	const uint8_t *p;   /* next byte */
	const uint8_t *end; /* one past the last */
};

struct pb_field {
	uint32_t number;	/* the field number, >= 1 */
	enum pb_wire_type wire; /* how it was encoded */
	uint64_t value;		/* PB_WIRE_VARINT, PB_WIRE_I64, PB_WIRE_I32 (little endian) */
	const uint8_t *data;	/* PB_WIRE_LEN: its bytes, inside the reader's buffer */
	size_t len;		/* PB_WIRE_LEN: how many */
};

/** pb_reader__init() - read the message in @len bytes at @buf. */
static inline void pb_reader__init(struct pb_reader *r, const void *buf, size_t len)
{
	r->p = buf;
	r->end = r->p + len;
}

/**
 * pb_reader__next() - the next field of the message into @f.
 * Return: 1 with @f set, 0 at the end of the message, -EINVAL when it is
 * malformed (the reader then stays at its end).
 */
int pb_reader__next(struct pb_reader *r, struct pb_field *f);

#endif /* CTXPROF_PROTOBUF_READER_H */
