// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "util/protobuf_reader.h"

static void next__every_wire_type__fields_in_order(void **state)
{
	/* 1: varint 150; 2: "hi"; 3: fixed64 1; 4: fixed32 2 */
	static const uint8_t msg[] = {0x08, 0x96, 0x01, 0x12, 0x02, 'h',  'i', 0x19, 1, 0, 0,
				      0,    0,	  0,	0,    0,    0x25, 2,   0,    0, 0};
	struct pb_reader r;
	struct pb_field f;

	pb_reader__init(&r, msg, sizeof(msg));
	assert_int_equal(pb_reader__next(&r, &f), 1);
	assert_int_equal(f.number, 1);
	assert_int_equal(f.wire, PB_WIRE_VARINT);
	assert_int_equal(f.value, 150);
	assert_int_equal(pb_reader__next(&r, &f), 1);
	assert_int_equal(f.number, 2);
	assert_int_equal(f.wire, PB_WIRE_LEN);
	assert_int_equal(f.len, 2);
	assert_memory_equal(f.data, "hi", 2);
	assert_int_equal(pb_reader__next(&r, &f), 1);
	assert_int_equal(f.wire, PB_WIRE_I64);
	assert_int_equal(f.value, 1);
	assert_int_equal(pb_reader__next(&r, &f), 1);
	assert_int_equal(f.wire, PB_WIRE_I32);
	assert_int_equal(f.value, 2);
	assert_int_equal(pb_reader__next(&r, &f), 0);
}

static void next__length_past_the_end__malformed_and_stays_at_end(void **state)
{
	static const uint8_t msg[] = {0x12, 0x05, 'a', 'b'};
	struct pb_reader r;
	struct pb_field f;

	pb_reader__init(&r, msg, sizeof(msg));
	assert_int_equal(pb_reader__next(&r, &f), -EINVAL);
	assert_int_equal(pb_reader__next(&r, &f), 0);
}

static void next__varint_of_eleven_bytes__malformed(void **state)
{
	static const uint8_t msg[] = {0x08, 0x80, 0x80, 0x80, 0x80, 0x80,
				      0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
	struct pb_reader r;
	struct pb_field f;

	pb_reader__init(&r, msg, sizeof(msg));
	assert_int_equal(pb_reader__next(&r, &f), -EINVAL);
}

static void next__cut_inputs__malformed_never_past_the_buffer(void **state)
{
	static const uint8_t msg[] = {0x08, 0x96, 0x01, 0x12, 0x02, 'h', 'i', 0x19, 1, 0, 0, 0, 0};
	struct pb_reader r;
	struct pb_field f;
	size_t cut;
	int ret;

	/* every prefix that cuts a field is malformed; one that ends between fields is not */
	for (cut = 0; cut <= sizeof(msg); cut++) {
		pb_reader__init(&r, msg, cut);
		while ((ret = pb_reader__next(&r, &f)) > 0)
			if (f.wire == PB_WIRE_LEN)
				assert_true(f.data + f.len <= msg + cut);
		assert_int_equal(ret, cut == 0 || cut == 3 || cut == 7 ? 0 : -EINVAL);
	}
}

static void next__groups_field_zero_and_bad_wire_types__malformed(void **state)
{
	static const uint8_t group[] = {0x0b}, zero[] = {0x00, 0x01}, wire6[] = {0x0e};
	struct pb_reader r;
	struct pb_field f;

	pb_reader__init(&r, group, sizeof(group));
	assert_int_equal(pb_reader__next(&r, &f), -EINVAL);
	pb_reader__init(&r, zero, sizeof(zero));
	assert_int_equal(pb_reader__next(&r, &f), -EINVAL);
	pb_reader__init(&r, wire6, sizeof(wire6));
	assert_int_equal(pb_reader__next(&r, &f), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(next__every_wire_type__fields_in_order),
		cmocka_unit_test(next__length_past_the_end__malformed_and_stays_at_end),
		cmocka_unit_test(next__varint_of_eleven_bytes__malformed),
		cmocka_unit_test(next__cut_inputs__malformed_never_past_the_buffer),
		cmocka_unit_test(next__groups_field_zero_and_bad_wire_types__malformed),
	};

	return cmocka_run_group_tests_name("protobuf_reader", tests, NULL, NULL);
}
