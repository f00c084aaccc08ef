/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * otel_sdk - the publishing side of OpenTelemetry's process context (OTEP
 * 4719) and thread context (OTEP 4947), written from the two OTEP texts for
 * the tests: what an instrumented service's SDK does.  Not a reader: the
 * layouts here are spelled out from the texts, independently of the
 * collector's include/otel_abi.h, so the tests check the reader against
 * the specification, not against itself.
 *
 * Built two ways (tests/workloads/otel.mk): compiled into the executable
 * (otel_thread_ctx_v1 in the executable's TLS, exported with
 * --export-dynamic-symbol), and as libotel_sdk.so with -mtls-dialect=gnu2
 * (TLSDESC in a shared library).
 */
#ifndef OTEL_SDK_H
#define OTEL_SDK_H

#include <stddef.h>
#include <stdint.h>

/* OTEP 4947's record, byte-packed: 28 bytes, then attrs_size bytes of attributes */
struct otel_sdk_record {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;
	uint8_t trace_flags;
	uint16_t attrs_size;
	uint8_t attrs[640 - 28];
} __attribute__((packed, aligned(8)));

struct otel_sdk_attr {
	const char *key;
	const char *value;
};

/* publication options */
struct otel_sdk_opts {
	int anonymous;	    /* skip memfd_create: the anonymous mapping fallback */
	const char *schema; /* threadlocal.schema_version; NULL: no thread context */
};

/**
 * otel_sdk_publish() - publish (or update) the process context: the resource
 * attributes @res (plus an integer process.pid), and the thread context's
 * schema and key map @keys (index -> attribute name).
 * Return: 0 or -1.
 */
int otel_sdk_publish(const struct otel_sdk_opts *o, const struct otel_sdk_attr *res, size_t nr_res,
		     const char *const *keys, size_t nr_keys);

/** otel_sdk_publish_raw() - publish @len bytes as the payload, whatever they are. */
int otel_sdk_publish_raw(const struct otel_sdk_opts *o, const void *payload, size_t len);

/** otel_sdk_hold_update() - leave the header "being updated" (timestamp 0). */
void otel_sdk_hold_update(void);

/** otel_sdk_record_set() - fill @r's ids, valid = 0, no attributes. */
void otel_sdk_record_set(struct otel_sdk_record *r, const uint8_t trace_id[16],
			 const uint8_t span_id[8]);

/** otel_sdk_record_add() - append attribute (@key index, @value); -1 when it does not fit. */
int otel_sdk_record_add(struct otel_sdk_record *r, uint8_t key, const char *value);

/** otel_sdk_attach() - make @r the thread's context: valid = 1, then the TLS pointer. */
void otel_sdk_attach(struct otel_sdk_record *r);

/** otel_sdk_detach() - no context: the TLS pointer NULL. */
void otel_sdk_detach(void);

/** otel_sdk_set_valid() - in-place updates of a record left attached (the OTEP's second way). */
void otel_sdk_set_valid(struct otel_sdk_record *r, uint8_t valid);

/** otel_sdk_point() - set the TLS pointer to anything (hostile tests). */
void otel_sdk_point(void *p);

#endif /* OTEL_SDK_H */
