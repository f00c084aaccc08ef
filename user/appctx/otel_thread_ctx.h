/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * otel_thread_ctx - OpenTelemetry's thread context record (OTEP 4947) as the
 * sampler copies it after a sample's frames (SAMPLE_F_OTEL, records.h): find
 * it in a sample, and decode its attributes.
 *
 * The attribute bytes are the application's: entries (key index u8, length
 * u8, value) are decoded within the bytes the sampler copied; an entry that
 * does not fit ends the decoding (the OTEP's "truncated entry: stop"), a
 * key index that appears again replaces the earlier value ("last wins").
 * Naming the indexes is the caller's (the process context's key map).
 * Pure functions; any thread.
 */
#ifndef CTXPROF_OTEL_THREAD_CTX_H
#define CTXPROF_OTEL_THREAD_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "records.h"

/* one decoded attribute: key index and value bytes (not NUL-terminated) */
struct otel_thread_attr {
	uint8_t key;
	uint8_t len;
	const uint8_t *value;
};

/* at most one attribute per key index */
#define OTEL_THREAD_ATTRS_DISTINCT 256

/**
 * otel_thread_ctx__from_sample() - the thread record a sample of @size
 * bytes (as its ring held it, frames checked) carries.
 * @out: set to the record, whose attrs_size bytes of attributes follow it
 * Return: 1 with @out set, 0 when the sample has none, -EINVAL when the
 * record is cut or announces more attribute bytes than it holds.
 */
int otel_thread_ctx__from_sample(const struct sample_record *rec, size_t size,
				 const struct otel_thread_record **out);

/**
 * otel_thread_ctx__decode_attrs() - decode the @len attribute bytes at
 * @buf into @out (OTEL_THREAD_ATTRS_DISTINCT entries), in the order each
 * key index first appeared, each with its last value.
 * @truncated: set when the bytes ended inside an entry
 * Return: the number of attributes in @out.
 */
size_t otel_thread_ctx__decode_attrs(const uint8_t *buf, size_t len, struct otel_thread_attr *out,
				     bool *truncated);

/** otel_thread_ctx__has_ids() - the record names a trace (its ids are not zero). */
bool otel_thread_ctx__has_ids(const struct otel_thread_record *r);

#endif /* CTXPROF_OTEL_THREAD_CTX_H */
