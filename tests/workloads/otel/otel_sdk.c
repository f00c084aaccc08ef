// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * otel_sdk - see otel_sdk.h.  Each step cites the OTEP text it follows.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include "otel_sdk.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA	     0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif

/* OTEP 4947: "a single thread-local - otel_thread_ctx_v1", exported in .dynsym */
__attribute__((visibility("default"))) __thread void *otel_thread_ctx_v1;

/* OTEP 4719's header: signature, version, payload_size, monotonic_published_at_ns, payload */
struct header {
	char signature[8];
	uint32_t version;
	uint32_t payload_size;
	uint64_t published_at_ns;
	uint64_t payload;
};

static struct header *hdr;
static size_t hdr_len;
static void *payload_buf; /* the published payload (heap) */

static uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* --- a minimal protobuf writer: varints, tags, length-delimited fields */
struct pbw {
	uint8_t *buf;
	size_t len, cap;
};

static void put_byte(struct pbw *w, uint8_t b)
{
	if (w->len == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 256;
		w->buf = realloc(w->buf, w->cap);
		if (!w->buf)
			abort();
	}
	w->buf[w->len++] = b;
}

static void put_varint(struct pbw *w, uint64_t v)
{
	while (v >= 0x80) {
		put_byte(w, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	put_byte(w, (uint8_t)v);
}

static void put_bytes(struct pbw *w, unsigned int field, const void *p, size_t n)
{
	put_varint(w, field << 3 | 2);
	put_varint(w, n);
	for (size_t i = 0; i < n; i++)
		put_byte(w, ((const uint8_t *)p)[i]);
}

/* a nested message: its encoding as a length-delimited field, then freed */
static void put_msg(struct pbw *w, unsigned int field, struct pbw *m)
{
	put_bytes(w, field, m->buf, m->len);
	free(m->buf);
	*m = (struct pbw){0};
}

/* KeyValue { key = 1; value = 2 (AnyValue { string_value = 1 }) } */
static void put_kv_string(struct pbw *w, unsigned int field, const char *k, const char *v)
{
	struct pbw kv = {0}, any = {0};

	put_bytes(&kv, 1, k, strlen(k));
	put_bytes(&any, 1, v, strlen(v));
	put_msg(&kv, 2, &any);
	put_msg(w, field, &kv);
}

/* KeyValue with AnyValue { int_value = 3 } */
static void put_kv_int(struct pbw *w, unsigned int field, const char *k, int64_t v)
{
	struct pbw kv = {0}, any = {0};

	put_bytes(&kv, 1, k, strlen(k));
	put_varint(&any, 3 << 3 | 0);
	put_varint(&any, (uint64_t)v);
	put_msg(&kv, 2, &any);
	put_msg(w, field, &kv);
}

/* KeyValue with AnyValue { array_value = 5 (ArrayValue { values = 1 }) } of strings */
static void put_kv_strings(struct pbw *w, unsigned int field, const char *k, const char *const *v,
			   size_t n)
{
	struct pbw kv = {0}, any = {0}, arr = {0}, item = {0};

	put_bytes(&kv, 1, k, strlen(k));
	for (size_t i = 0; i < n; i++) {
		put_bytes(&item, 1, v[i], strlen(v[i]));
		put_msg(&arr, 1, &item);
	}
	put_msg(&any, 5, &arr);
	put_msg(&kv, 2, &any);
	put_msg(w, field, &kv);
}

/*
 * OTEP 4719, "Publication Protocol" steps 2-5 (the mapping), or the first
 * steps of the "Updating Protocol" when one exists.
 */
static int map_header(const struct otel_sdk_opts *o)
{
	int fd = -1;

	if (hdr)
		return 0;
	hdr_len = sysconf(_SC_PAGESIZE);
	if (!o->anonymous) {
		fd = memfd_create("OTEL_CTX", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
		if (fd < 0)
			fd = memfd_create("OTEL_CTX", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	}
	if (fd >= 0) {
		if (ftruncate(fd, hdr_len) == 0)
			hdr = mmap(NULL, hdr_len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		close(fd);
		if (hdr == MAP_FAILED)
			hdr = NULL;
	}
	if (!hdr) {
		hdr = mmap(NULL, hdr_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			   0);
		if (hdr == MAP_FAILED) {
			hdr = NULL;
			return -1;
		}
	}
	if (madvise(hdr, hdr_len, MADV_DONTFORK))
		return -1;
	return 0;
}

int otel_sdk_publish_raw(const struct otel_sdk_opts *o, const void *payload, size_t len)
{
	void *old = payload_buf, *copy = malloc(len);
	uint64_t prev;

	if (!copy || map_header(o))
		return -1;
	memcpy(copy, payload, len);
	prev = hdr->published_at_ns;
	/* update: "Write 0 to the monotonic_published_at_ns field" first, then a barrier */
	hdr->published_at_ns = 0;
	atomic_thread_fence(memory_order_seq_cst);
	memcpy(hdr->signature, "OTEL_CTX", 8);
	hdr->version = 2;
	hdr->payload_size = (uint32_t)len;
	hdr->payload = (uint64_t)(uintptr_t)copy;
	atomic_thread_fence(memory_order_seq_cst);
	/* "Write monotonic_published_at_ns last"; "must be different (and after)" */
	uint64_t now = boottime_ns();
	__atomic_store_n(&hdr->published_at_ns, now > prev ? now : prev + 1, __ATOMIC_RELAXED);
	payload_buf = copy;
	/* "Name mapping": unconditionally; a memfd mapping cannot be named (EBADF) */
	prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)hdr, hdr_len,
	      (unsigned long)"OTEL_CTX");
	/* a reader copying the old payload sees the timestamp move and reads again */
	free(old);
	return 0;
}

int otel_sdk_publish(const struct otel_sdk_opts *o, const struct otel_sdk_attr *res, size_t nr_res,
		     const char *const *keys, size_t nr_keys)
{
	struct pbw pc = {0}, resource = {0};
	int ret;

	/* ProcessContext.resource = 1: Resource { attributes = 1 } */
	for (size_t i = 0; i < nr_res; i++)
		put_kv_string(&resource, 1, res[i].key, res[i].value);
	put_kv_int(&resource, 1, "process.pid", getpid());
	put_msg(&pc, 1, &resource);
	/* ProcessContext.attributes = 2: OTEP 4947's thread-local reference data */
	if (o->schema) {
		put_kv_string(&pc, 2, "threadlocal.schema_version", o->schema);
		put_kv_strings(&pc, 2, "threadlocal.attribute_key_map", keys, nr_keys);
	}
	ret = otel_sdk_publish_raw(o, pc.buf, pc.len);
	free(pc.buf);
	return ret;
}

void otel_sdk_hold_update(void)
{
	if (hdr)
		__atomic_store_n(&hdr->published_at_ns, 0, __ATOMIC_RELAXED);
}

void otel_sdk_record_set(struct otel_sdk_record *r, const uint8_t trace_id[16],
			 const uint8_t span_id[8])
{
	r->valid = 0;
	atomic_signal_fence(memory_order_seq_cst);
	memcpy(r->trace_id, trace_id, 16);
	memcpy(r->span_id, span_id, 8);
	r->trace_flags = 1; /* sampled */
	r->attrs_size = 0;
}

int otel_sdk_record_add(struct otel_sdk_record *r, uint8_t key, const char *value)
{
	size_t n = strlen(value);

	if (n > 255 || r->attrs_size + 2 + n > sizeof(r->attrs))
		return -1;
	/* "[x].key uint8, [x].length uint8, [x].val" packed, no padding */
	r->attrs[r->attrs_size] = key;
	r->attrs[r->attrs_size + 1] = (uint8_t)n;
	memcpy(r->attrs + r->attrs_size + 2, value, n);
	atomic_signal_fence(memory_order_seq_cst);
	/* growing: "the final update to attrs-data-size ... happens last" */
	r->attrs_size += 2 + n;
	return 0;
}

/* signal-handler semantics: compiler fences and volatile stores are enough */
void otel_sdk_attach(struct otel_sdk_record *r)
{
	*(volatile uint8_t *)&r->valid = 1;
	atomic_signal_fence(memory_order_seq_cst);
	*(void *volatile *)&otel_thread_ctx_v1 = r;
	atomic_signal_fence(memory_order_seq_cst);
}

void otel_sdk_detach(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	*(void *volatile *)&otel_thread_ctx_v1 = NULL;
	atomic_signal_fence(memory_order_seq_cst);
}

void otel_sdk_set_valid(struct otel_sdk_record *r, uint8_t valid)
{
	atomic_signal_fence(memory_order_seq_cst);
	*(volatile uint8_t *)&r->valid = valid;
	atomic_signal_fence(memory_order_seq_cst);
}

void otel_sdk_point(void *p)
{
	*(void *volatile *)&otel_thread_ctx_v1 = p;
	atomic_signal_fence(memory_order_seq_cst);
}
