// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include "appctx/otel_thread_ctx.h"

int otel_thread_ctx__from_sample(const struct sample_record *rec, size_t size,
				 const struct otel_thread_record **out)
{
	size_t off = sizeof(*rec) + (size_t)(rec->nr_kframes + rec->nr_uframes) * sizeof(__u64);
	const struct otel_thread_record *r;

	if (!(rec->flags & SAMPLE_F_OTEL))
		return 0;
	if (size < off || size - off < sizeof(*r))
		return -EINVAL;
	r = (const void *)((const uint8_t *)rec + off);
	if (r->valid != 1 || r->attrs_size > OTEL_THREAD_ATTRS_MAX ||
	    size - off - sizeof(*r) < r->attrs_size)
		return -EINVAL;
	*out = r;
	return 1;
}

size_t otel_thread_ctx__decode_attrs(const uint8_t *buf, size_t len, struct otel_thread_attr *out,
				     bool *truncated)
{
	/* where each key index is in @out, + 1; 0: not yet */
	uint16_t at[OTEL_THREAD_ATTRS_DISTINCT] = {};
	size_t pos = 0, n = 0;

	*truncated = false;
	while (pos < len) {
		uint8_t key, vlen;

		if (len - pos < 2 || len - pos - 2 < buf[pos + 1]) {
			*truncated = true;
			break;
		}
		key = buf[pos];
		vlen = buf[pos + 1];
		if (!at[key]) {
			at[key] = ++n;
			out[n - 1].key = key;
		}
		out[at[key] - 1].len = vlen;
		out[at[key] - 1].value = buf + pos + 2;
		pos += 2 + vlen;
	}
	return n;
}

bool otel_thread_ctx__has_ids(const struct otel_thread_record *r)
{
	static const uint8_t zero[24];

	return memcmp(r->trace_id, zero, sizeof(r->trace_id)) ||
	       memcmp(r->span_id, zero, sizeof(r->span_id));
}
