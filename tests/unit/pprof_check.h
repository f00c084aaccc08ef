/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pprof_check: the decoder and fixtures the pprof unit tests share.
 * decode_profile() stores the first DEC_MAX entries (1024 strings) of each
 * table and counts all; assertion failures end the calling cmocka test.
 */
#ifndef CTXPROF_TESTS_PPROF_CHECK_H
#define CTXPROF_TESTS_PPROF_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export/pprof.h"

#define DEC_MAX 64

struct slice {
	const uint8_t *p;
	size_t len;
};

struct dec_label {
	int64_t key, str, num, num_unit;
};

struct dec_sample {
	uint64_t locs[DEC_MAX];
	size_t nr_locs;
	int64_t values[DEC_MAX];
	size_t nr_values;
	struct dec_label labels[8];
	size_t nr_labels;
	size_t value_run_len; /* bytes in the packed value field */
};

struct dec_mapping {
	uint64_t id, start, limit, offset, has_functions;
	int64_t filename, build_id;
};

struct dec_location {
	uint64_t id, mapping_id, address, function_id;
	size_t nr_lines;
};

struct dec_function {
	uint64_t id;
	int64_t name, system_name, filename;
};

/* stores the first DEC_MAX (or 1024 strings) of each table, counts all */
struct dec_profile {
	int64_t sample_types[DEC_MAX][2];
	size_t nr_sample_types;
	struct dec_sample samples[DEC_MAX];
	size_t nr_samples;
	struct dec_mapping mappings[DEC_MAX];
	size_t nr_mappings;
	struct dec_location locations[DEC_MAX];
	size_t nr_locations;
	struct dec_function functions[DEC_MAX];
	size_t nr_functions;
	struct slice strs[1024];
	size_t nr_strs;
	int64_t time_nanos, duration_nanos, period;
	int64_t period_type[2];
	int64_t comments[DEC_MAX];
	size_t nr_comments;
	uint8_t *buf; /* the encoding strs point into, from encode_and_decode() */
};

/* Read one field of @s: a varint into *@v, or a length-delimited body into *@sub. */
bool rd_field(struct slice *s, unsigned int *field, unsigned int *wire, uint64_t *v,
	      struct slice *sub);
/* Return: true when @buf (@len bytes) decodes into @d (strings point into @buf). */
bool decode_profile(const uint8_t *buf, size_t len, struct dec_profile *d);
/* Return: true when string_table[@idx] is @want. */
bool dec_str_is(const struct dec_profile *d, int64_t idx, const char *want);
/* Encode @p and decode it; the caller frees the result with dec_free(). */
struct dec_profile *encode_and_decode(struct pprof *p);
void dec_free(struct dec_profile *d);

extern const struct pprof_value_type cpu_types[2];
extern const struct pprof_value_type cpu_period;
#define PERIOD_NS 10000000LL /* 100 Hz */

struct fixture {
	char *dir; /* private temporary directory */
};

/* cmocka setup/teardown: a private temporary directory in struct fixture */
int setup(void **state);
int teardown(void **state);
/* Return: how many entries @dir holds, "." and ".." aside. */
int count_dir_entries(const char *path);
/* The three-function profile several tests read (see pprof_check.c). */
struct pprof *build_three_functions(void);

#endif /* CTXPROF_TESTS_PPROF_CHECK_H */
