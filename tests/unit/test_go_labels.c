// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/appctx/go_labels.c: the goroutine labels a sample
 * carries (include/go_abi.h), found past its frames and OpenTelemetry
 * record, checked within their bytes, and spelled out as labels.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include "appctx/go_labels.h"

/* a sample as the ring holds it */
struct sample {
	union {
		struct sample_record rec;
		uint8_t bytes[SAMPLE_RECORD_FULL_MAX_SIZE];
	};
	size_t size;
	struct go_labels_record *go; /* where its labels begin */
};

/* @nr_frames frames, an OpenTelemetry record with @otel_attrs attribute
 * bytes when >= 0, then labels from @pairs (key, value, ..., NULL) */
static void build(struct sample *s, unsigned int nr_frames, int otel_attrs, const char **pairs)
{
	struct otel_thread_record *o;
	uint8_t *e;
	size_t off;

	memset(s, 0, sizeof(*s));
	s->rec.nr_uframes = nr_frames;
	s->rec.flags = SAMPLE_F_GO_LABELS;
	off = sizeof(s->rec) + nr_frames * sizeof(__u64);
	if (otel_attrs >= 0) {
		s->rec.flags |= SAMPLE_F_OTEL;
		o = (void *)(s->bytes + off);
		o->valid = 1;
		o->attrs_size = otel_attrs;
		memset(o + 1, 'a', otel_attrs);
		off += sizeof(*o) + otel_attrs;
	}
	off = (off + 7) & ~(size_t)7;
	s->go = (void *)(s->bytes + off);
	e = (uint8_t *)(s->go + 1);
	for (; pairs && pairs[0]; pairs += 2) {
		e[0] = strlen(pairs[0]);
		e[1] = strlen(pairs[1]);
		memcpy(e + 2, pairs[0], e[0]);
		memcpy(e + 2 + e[0], pairs[1], e[1]);
		s->go->size += 2 + e[0] + e[1];
		s->go->nr++;
		e += 2 + e[0] + e[1];
	}
	s->size = off + sizeof(*s->go) + s->go->size;
}

static const char *two[] = {"span_id", "00000000000012ab", "span_name", "checkout", NULL};

static void go_labels__from_sample__after_frames__found(void **state)
{
	const struct go_labels_record *r = NULL;
	struct go_label l[GO_LABELS_MAX];
	struct sample s;

	build(&s, 3, -1, two);
	assert_int_equal(go_labels__from_sample(&s.rec, s.size, &r), 1);
	assert_ptr_equal(r, s.go);
	assert_int_equal(go_labels__decode(r, l), 2);
	assert_int_equal(l[0].key_len, 7);
	assert_memory_equal(l[0].key, "span_id", 7);
	assert_int_equal(l[0].value_len, 16);
	assert_memory_equal(l[0].value, "00000000000012ab", 16);
	assert_memory_equal(l[1].value, "checkout", 8);
}

static void go_labels__from_sample__after_otel_record__aligned_past_it(void **state)
{
	const struct go_labels_record *r = NULL;
	struct sample s;

	/* 28 + 5 bytes of OpenTelemetry record: the labels start 7 bytes later */
	build(&s, 2, 5, two);
	assert_int_equal(((uint8_t *)s.go - s.bytes) % 8, 0);
	assert_int_equal(go_labels__from_sample(&s.rec, s.size, &r), 1);
	assert_ptr_equal(r, s.go);
}

static void go_labels__from_sample__no_flag__none(void **state)
{
	const struct go_labels_record *r = NULL;
	struct sample s;

	build(&s, 1, -1, two);
	s.rec.flags &= ~SAMPLE_F_GO_LABELS;
	assert_int_equal(go_labels__from_sample(&s.rec, s.size, &r), 0);
	assert_null(r);
}

static void go_labels__from_sample__cut_or_inconsistent__refused(void **state)
{
	const struct go_labels_record *r = NULL;
	struct sample s;
	uint8_t *e;

	build(&s, 1, -1, two);
	/* a byte short */
	assert_int_equal(go_labels__from_sample(&s.rec, s.size - 1, &r), -EINVAL);
	/* the header alone cut */
	assert_int_equal(go_labels__from_sample(&s.rec, (uint8_t *)s.go - s.bytes + 2, &r),
			 -EINVAL);
	/* one entry more than it holds */
	s.go->nr++;
	assert_int_equal(go_labels__from_sample(&s.rec, s.size, &r), -EINVAL);
	s.go->nr--;
	/* an entry running past the size */
	e = (uint8_t *)(s.go + 1);
	e[1] += 1;
	assert_int_equal(go_labels__from_sample(&s.rec, s.size, &r), -EINVAL);
	e[1] -= 1;
	/* a key longer than the sampler takes */
	e[0] = GO_LABEL_KEY_MAX + 1;
	assert_int_equal(go_labels__from_sample(&s.rec, s.size, &r), -EINVAL);
	/* no labels at all: the sampler sends none */
	build(&s, 1, -1, NULL);
	assert_int_equal(go_labels__from_sample(&s.rec, s.size, &r), -EINVAL);
	/* an OpenTelemetry record cut: refused before the labels are looked for */
	build(&s, 1, 100, two);
	assert_int_equal(go_labels__from_sample(&s.rec, sizeof(s.rec) + 8 + 20, &r), -EINVAL);
	assert_null(r);
}

static void go_labels__labels__not_utf8_or_nul__left_out_counted(void **state)
{
	static const char *pairs[] = {
		"span_id", "00000000000012ab", "bad", "a\xff", "nul", "aXb", "empty", "", NULL};
	struct go_labels *gl = go_labels__new(-1, 0);
	const struct go_labels_record *r = NULL;
	struct go_label_str out[GO_LABELS_MAX];
	struct go_label_buf buf;
	struct go_labels_stats st;
	struct sample s;
	uint8_t *x;

	assert_non_null(gl);
	build(&s, 1, -1, pairs);
	x = memmem(s.go + 1, s.go->size, "aXb", 3);
	assert_non_null(x);
	x[1] = '\0';
	assert_int_equal(go_labels__from_sample(&s.rec, s.size, &r), 1);
	assert_int_equal(go_labels__labels(gl, r, out, &buf), 2);
	assert_string_equal(out[0].key, "span_id");
	assert_string_equal(out[0].value, "00000000000012ab");
	assert_string_equal(out[1].key, "empty");
	assert_string_equal(out[1].value, "");
	go_labels__stats(gl, &st);
	assert_int_equal(st.bad_values, 2);
	/* without a reader (the image went): the same labels, nothing counted */
	assert_int_equal(go_labels__labels(NULL, r, out, &buf), 2);
	go_labels__free(gl);
}

static void go_labels__labels__longest_set__fits_the_buffer(void **state)
{
	char keys[GO_LABELS_MAX][GO_LABEL_KEY_MAX + 1],
		values[GO_LABELS_MAX][GO_LABEL_VALUE_MAX + 1];
	const char *pairs[2 * GO_LABELS_MAX + 1];
	const struct go_labels_record *r = NULL;
	struct go_label_str out[GO_LABELS_MAX];
	struct go_label_buf buf;
	struct sample s;
	int i;

	for (i = 0; i < GO_LABELS_MAX; i++) {
		memset(keys[i], 'a' + i, GO_LABEL_KEY_MAX);
		keys[i][GO_LABEL_KEY_MAX] = '\0';
		memset(values[i], 'A' + i, GO_LABEL_VALUE_MAX);
		values[i][GO_LABEL_VALUE_MAX] = '\0';
		pairs[2 * i] = keys[i];
		pairs[2 * i + 1] = values[i];
	}
	pairs[2 * GO_LABELS_MAX] = NULL;
	build(&s, SAMPLER_MAX_FRAMES, OTEL_THREAD_ATTRS_MAX, pairs);
	assert_true(s.size <= SAMPLE_RECORD_FULL_MAX_SIZE);
	assert_int_equal(s.go->size, GO_LABELS_BYTES);
	assert_int_equal(go_labels__from_sample(&s.rec, s.size, &r), 1);
	assert_int_equal(go_labels__labels(NULL, r, out, &buf), GO_LABELS_MAX);
	assert_string_equal(out[GO_LABELS_MAX - 1].key, keys[GO_LABELS_MAX - 1]);
	assert_string_equal(out[GO_LABELS_MAX - 1].value, values[GO_LABELS_MAX - 1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(go_labels__from_sample__after_frames__found),
		cmocka_unit_test(go_labels__from_sample__after_otel_record__aligned_past_it),
		cmocka_unit_test(go_labels__from_sample__no_flag__none),
		cmocka_unit_test(go_labels__from_sample__cut_or_inconsistent__refused),
		cmocka_unit_test(go_labels__labels__not_utf8_or_nul__left_out_counted),
		cmocka_unit_test(go_labels__labels__longest_set__fits_the_buffer),
	};

	return cmocka_run_group_tests_name("go_labels", tests, NULL, NULL);
}
