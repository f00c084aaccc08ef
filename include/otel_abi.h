/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * OpenTelemetry's process and thread context, as an instrumented process
 * publishes them for out-of-process readers: the layouts of OTEP 4719
 * ("Process Context: Sharing Resource Attributes with External Readers",
 * merged April 2026) and OTEP 4947 ("Thread Context: Sharing Thread-Level
 * Information with External Readers", merged July 2026), as their texts in
 * open-telemetry/opentelemetry-specification oteps/profiles/ give them.
 * Everything here is written by the application: a reader validates every
 * field.
 *
 * Compiles in both worlds (the BPF sampler reads the thread record, the
 * collector the process context): only __u8..__u64, #defines and enums.
 */
#ifndef CTXPROF_OTEL_ABI_H
#define CTXPROF_OTEL_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * OTEP 4719: the process context.  A mapping named (as /proc/PID/maps shows
 * it) "[anon_shmem:OTEL_CTX]", "[anon:OTEL_CTX]" or "/memfd:OTEL_CTX" starts
 * with this header; the payload (a protobuf ProcessContext) lies anywhere
 * in the process.  published_at_ns is written last: 0 means "being
 * updated", and every update writes a new value, so a reader that finds it
 * unchanged after copying the payload has a consistent copy.
 */
#define OTEL_CTX_NAME	   "OTEL_CTX"
#define OTEL_CTX_SIGNATURE "OTEL_CTX" /* 8 bytes, no NUL */
#define OTEL_CTX_VERSION   2

struct otel_process_ctx_header {
	char signature[8];     /* OTEL_CTX_SIGNATURE */
	__u32 version;	       /* OTEL_CTX_VERSION */
	__u32 payload_size;    /* bytes of the protobuf payload */
	__u64 published_at_ns; /* CLOCK_BOOTTIME of the publication; 0: being updated */
	__u64 payload;	       /* the payload's address in the publishing process */
};

_Static_assert(sizeof(struct otel_process_ctx_header) == 32, "OTEP 4719 header");
_Static_assert(__builtin_offsetof(struct otel_process_ctx_header, published_at_ns) == 16,
	       "OTEP 4719 header");
_Static_assert(__builtin_offsetof(struct otel_process_ctx_header, payload) == 24,
	       "OTEP 4719 header");

/*
 * ProcessContext (package opentelemetry.proto.processcontext.v1development)
 * and the OTLP common messages it embeds: the field numbers a reader needs.
 */
enum otel_pb_field {
	OTEL_PB_PROCESS_CONTEXT_RESOURCE = 1,	/* Resource */
	OTEL_PB_PROCESS_CONTEXT_ATTRIBUTES = 2, /* repeated KeyValue */
	OTEL_PB_RESOURCE_ATTRIBUTES = 1,	/* repeated KeyValue */
	OTEL_PB_KEY_VALUE_KEY = 1,		/* string */
	OTEL_PB_KEY_VALUE_VALUE = 2,		/* AnyValue */
	OTEL_PB_ANY_VALUE_STRING = 1,		/* string */
	OTEL_PB_ANY_VALUE_ARRAY = 5,		/* ArrayValue */
	OTEL_PB_ARRAY_VALUE_VALUES = 1,		/* repeated AnyValue */
};

/* OTEP 4947's process-wide data, as ProcessContext.attributes entries */
#define OTEL_TLS_SCHEMA_KEY    "threadlocal.schema_version"
#define OTEL_TLS_KEY_MAP_KEY   "threadlocal.attribute_key_map"
#define OTEL_TLS_SCHEMA_V1     "tls_v1"		/* the name once the OTEP merged */
#define OTEL_TLS_SCHEMA_V1_DEV "tlsdesc_v1_dev" /* the name before it, same layout */
#define OTEL_TLS_KEY_MAP_MAX   256		/* key indexes are one byte */
#define OTEL_THREAD_CTX_SYMBOL "otel_thread_ctx_v1"

/*
 * OTEP 4947: the thread-local context record.  The TLS variable
 * otel_thread_ctx_v1 (exported in .dynsym) points at it, or is NULL.  Byte
 * packed, host endianness, at least 2-byte aligned; attrs_size bytes of
 * attributes follow: entries (key index u8, length u8, length bytes of
 * UTF-8), packed.  valid is 1 while the record may be read.
 */
struct otel_thread_record {
	__u8 trace_id[16]; /* W3C trace id; zero: none */
	__u8 span_id[8];   /* W3C span id */
	__u8 valid;	   /* 1: readable; anything else: ignore the record */
	__u8 trace_flags;  /* W3C trace flags */
	__u16 attrs_size;  /* bytes of attributes after the record */
};

_Static_assert(sizeof(struct otel_thread_record) == 28, "OTEP 4947 record");
_Static_assert(__builtin_offsetof(struct otel_thread_record, valid) == 24, "OTEP 4947 record");
_Static_assert(__builtin_offsetof(struct otel_thread_record, attrs_size) == 26, "OTEP 4947 record");

/*
 * Attribute bytes a reader takes: the OTEP recommends a whole record of at
 * most 640 bytes (the OpenTelemetry eBPF profiler's limit), so this is what
 * a conforming writer can put after the 28-byte header.
 */
#define OTEL_THREAD_ATTRS_MAX (640 - 28)

#endif /* CTXPROF_OTEL_ABI_H */
