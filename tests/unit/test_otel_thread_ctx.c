// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "appctx/otel_thread_ctx.h"

static void decode_attrs__repeated_key__last_value_in_first_place(void **state)
{
	static const uint8_t a[] = {0, 3, 'a', 'b', 'c', 1, 1, 'x', 0, 2, 'd', 'e'};
	struct otel_thread_attr out[OTEL_THREAD_ATTRS_DISTINCT];
	bool truncated;

	assert_int_equal(otel_thread_ctx__decode_attrs(a, sizeof(a), out, &truncated), 2);
	assert_false(truncated);
	assert_int_equal(out[0].key, 0);
	assert_int_equal(out[0].len, 2);
	assert_memory_equal(out[0].value, "de", 2);
	assert_int_equal(out[1].key, 1);
	assert_memory_equal(out[1].value, "x", 1);
}

static void decode_attrs__entry_cut__stops_before_it(void **state)
{
	static const uint8_t a[] = {5, 2, 'o', 'k', 6, 9, 'c', 'u', 't'};
	struct otel_thread_attr out[OTEL_THREAD_ATTRS_DISTINCT];
	bool truncated;
	size_t len;

	assert_int_equal(otel_thread_ctx__decode_attrs(a, sizeof(a), out, &truncated), 1);
	assert_true(truncated);
	assert_int_equal(out[0].key, 5);
	/* a lone key byte, and a key without its length, are cut entries too */
	for (len = 5; len <= 6; len++) {
		assert_int_equal(otel_thread_ctx__decode_attrs(a, len, out, &truncated), 1);
		assert_true(truncated);
	}
}

static void decode_attrs__empty_values_and_all_keys__each_once(void **state)
{
	uint8_t a[2 * 300];
	struct otel_thread_attr out[OTEL_THREAD_ATTRS_DISTINCT];
	bool truncated;
	size_t i;

	for (i = 0; i < 300; i++) {
		a[2 * i] = (uint8_t)i; /* 256 distinct, then 0..43 again */
		a[2 * i + 1] = 0;
	}
	assert_int_equal(otel_thread_ctx__decode_attrs(a, sizeof(a), out, &truncated), 256);
	assert_false(truncated);
}

/* a sample record with @nframes frames and, when @r, the thread record after them */
static size_t sample(uint8_t *buf, unsigned int nframes, const struct otel_thread_record *r,
		     const char *attrs)
{
	struct sample_record *rec = (void *)buf;
	size_t off = sizeof(*rec) + nframes * sizeof(__u64), n = attrs ? strlen(attrs) : 0;

	memset(buf, 0, off);
	rec->nr_uframes = nframes;
	if (!r)
		return off;
	rec->flags = SAMPLE_F_OTEL;
	memcpy(buf + off, r, sizeof(*r));
	memcpy(buf + off + sizeof(*r), attrs, n);
	return off + sizeof(*r) + n;
}

static void from_sample__record_after_frames__found(void **state)
{
	uint8_t buf[2048];
	struct otel_thread_record r = {.valid = 1, .attrs_size = 4, .span_id = {1}};
	const struct otel_thread_record *out;
	size_t size = sample(buf, 3, &r, "\x01\x02hi");

	assert_int_equal(otel_thread_ctx__from_sample((void *)buf, size, &out), 1);
	assert_int_equal(out->attrs_size, 4);
	assert_memory_equal(out + 1, "\x01\x02hi", 4);
	assert_true(otel_thread_ctx__has_ids(out));
	assert_int_equal(
		otel_thread_ctx__from_sample((void *)buf, sample(buf, 3, NULL, NULL), &out), 0);
}

static void from_sample__cut_or_lying_record__malformed(void **state)
{
	uint8_t buf[2048];
	struct otel_thread_record r = {.valid = 1, .attrs_size = 4};
	const struct otel_thread_record *out;
	size_t size = sample(buf, 2, &r, "\x01\x02hi");

	/* cut inside the attributes, inside the header */
	assert_int_equal(otel_thread_ctx__from_sample((void *)buf, size - 1, &out), -EINVAL);
	assert_int_equal(otel_thread_ctx__from_sample((void *)buf, size - 10, &out), -EINVAL);
	/* the sampler never sends an invalid record nor more attributes than its cap */
	r.valid = 2;
	size = sample(buf, 2, &r, "\x01\x02hi");
	assert_int_equal(otel_thread_ctx__from_sample((void *)buf, size, &out), -EINVAL);
	r.valid = 1;
	r.attrs_size = OTEL_THREAD_ATTRS_MAX + 1;
	size = sample(buf, 2, &r, "");
	assert_int_equal(otel_thread_ctx__from_sample((void *)buf, size + 700, &out), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decode_attrs__repeated_key__last_value_in_first_place),
		cmocka_unit_test(decode_attrs__entry_cut__stops_before_it),
		cmocka_unit_test(decode_attrs__empty_values_and_all_keys__each_once),
		cmocka_unit_test(from_sample__record_after_frames__found),
		cmocka_unit_test(from_sample__cut_or_lying_record__malformed),
	};

	return cmocka_run_group_tests_name("otel_thread_ctx", tests, NULL, NULL);
}
