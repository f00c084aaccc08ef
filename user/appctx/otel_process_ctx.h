/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * otel_process_ctx - OpenTelemetry's process context (OTEP 4719): the
 * header an SDK maps as "OTEL_CTX", its reading protocol, and the
 * ProcessContext protobuf payload it points at.
 *
 * What is kept of the payload: the resource's string attributes (each
 * becomes a label of the same key on the process's samples), and OTEP
 * 4947's process-wide thread-context data from ProcessContext.attributes:
 * threadlocal.schema_version and threadlocal.attribute_key_map (key index
 * -> attribute name).  Other values (numbers, lists, bytes) are skipped and
 * counted.
 *
 * Everything comes from another process and is hostile: the header is
 * checked field by field, the payload size is capped
 * (OTEL_PROCESS_CTX_MAX_PAYLOAD), the decoder (util/protobuf_reader.h) is
 * bounded by the payload and descends only as deep as the schema
 * (ProcessContext, Resource, KeyValue, AnyValue, ArrayValue, AnyValue)
 * whatever the input says, strings are capped and must be UTF-8 without
 * NUL, and counts are capped.  Pure functions but for the reader callback; any thread.
 */
#ifndef CTXPROF_OTEL_PROCESS_CTX_H
#define CTXPROF_OTEL_PROCESS_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "otel_abi.h"

#define OTEL_PROCESS_CTX_MAX_PAYLOAD  (1u << 20) /* "expected in the KB range" */
#define OTEL_PROCESS_CTX_MAX_RESOURCE 64	 /* resource attributes kept */
#define OTEL_PROCESS_CTX_MAX_KEY      256	 /* bytes of an attribute name */
#define OTEL_PROCESS_CTX_MAX_VALUE    1024	 /* bytes of a string value */
/* header reads that found an update in progress before giving up (for now) */
#define OTEL_PROCESS_CTX_READ_TRIES 3

struct otel_resource_attr {
	char *key;
	char *value;
};

struct otel_process_ctx {
	/* string resource attributes, in payload order, keys unique (the first kept) */
	struct otel_resource_attr *resource;
	size_t nr_resource;
	char *schema; /* threadlocal.schema_version; NULL when absent */
	/* threadlocal.attribute_key_map: index -> name, NULL for an entry that
	 * is no usable string; nr_keys 0 when absent */
	char **keys;
	size_t nr_keys;
	/* what was skipped: non-string or unusable values, duplicate keys,
	 * attributes past the caps */
	uint32_t skipped;
};

/**
 * otel_process_ctx__check_header() - whether @h is a published header:
 * signature, version 2, a payload of 1 .. OTEL_PROCESS_CTX_MAX_PAYLOAD
 * bytes at a non-NULL address.
 * Return: 0; -EINVAL (no OTEL_CTX signature), -EPROTONOSUPPORT (another
 * version), -EAGAIN (published_at_ns 0: being updated), -EFBIG (payload
 * size 0 or above the cap, or no payload address).
 */
int otel_process_ctx__check_header(const struct otel_process_ctx_header *h);

/**
 * otel_process_ctx__decode() - decode a ProcessContext payload.
 * Return: the context (pair with otel_process_ctx__free()), or NULL with
 * errno EINVAL (not a well-formed ProcessContext) or ENOMEM.
 */
struct otel_process_ctx *otel_process_ctx__decode(const void *payload, size_t len);

void otel_process_ctx__free(struct otel_process_ctx *pc);

/**
 * otel_process_ctx__thread_schema_ok() - whether @pc announces a thread
 * context this reader knows: schema "tls_v1" or "tlsdesc_v1_dev" (the
 * OTEP's name before it merged; the same record).
 */
bool otel_process_ctx__thread_schema_ok(const struct otel_process_ctx *pc);

/* reads @len bytes at @addr of the publishing process: 0 or -errno */
typedef int (*otel_mem_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/**
 * otel_process_ctx__read() - OTEP 4719's reading protocol on the header at
 * @addr: read and check the header, copy the payload, read
 * published_at_ns again; a change (or 0) means an update raced us and the
 * read starts over, at most OTEL_PROCESS_CTX_READ_TRIES times.
 * @hdr: receives the header of the copy
 * @payload: receives the payload (malloc()ed, hdr->payload_size bytes)
 * Return: 0; -EAGAIN when every try raced an update; the errors of
 * otel_process_ctx__check_header(); the reader's errors; -ENOMEM.
 */
int otel_process_ctx__read(otel_mem_read_fn read, void *ctx, uint64_t addr,
			   struct otel_process_ctx_header *hdr, void **payload);

#endif /* CTXPROF_OTEL_PROCESS_CTX_H */
