// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pprof - build a profile.proto message and write it gzipped.
 *
 * Strings, mappings, functions and locations live in flat arrays, each
 * deduplicated through a hash index (util/htable.h).  Samples' location ids,
 * values and labels are appended to shared flat arrays, so adding a sample
 * allocates only when an array doubles.  The protobuf is
 * written by hand: every field we emit is a varint or length-delimited, and a
 * nested message is written in place and then shifted right to make room for
 * its length prefix.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "export/output.h"
#include "export/pprof.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/htable.h"
#include "util/utf8.h"

/* field numbers from profile.proto */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,

	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,

	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	LABEL_NUM_UNIT = 4,

	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,

	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,

	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

enum {
	WIRE_VARINT = 0,
	WIRE_LEN = 2,
};

/* table indexes are stored as uint32_t; this many entries at most */
#define PPROF_MAX_ENTRIES (UINT32_MAX - 1)

struct pprof_string {
	char *s;
	size_t len;
};

/* string fields are string table indexes, as in the encoded message */
struct mapping_ent {
	uint64_t memory_start;
	uint64_t memory_limit;
	uint64_t file_offset;
	uint32_t filename;
	uint32_t build_id;
	bool has_functions;
};

struct function_ent {
	uint32_t name;
	uint32_t system_name;
	uint32_t filename;
	int64_t start_line; /* 0: unknown */
};

/* a Line of a location: its function and line (0: unknown) */
struct line_ent {
	int64_t line;
	uint32_t function_id;
};

struct location_ent {
	uint64_t address;
	uint32_t mapping_id;
	uint32_t nr_lines; /* 0: unnamed; more than 1: inlined calls, innermost first */
	size_t lines_off;  /* its lines in pprof.lines */
};

struct label_ent {
	int64_t num;
	uint32_t key;
	uint32_t str;
	uint32_t num_unit;
};

/* a sample's location ids, values and labels are runs in shared arrays */
struct sample_ent {
	size_t loc_off;
	size_t label_off;
	uint32_t nr_locs;
	uint32_t nr_labels;
};

struct pprof {
	size_t nr_types;
	uint32_t *types; /* nr_types (type, unit) string index pairs */
	uint32_t period_type[2];
	int64_t period;
	int64_t default_type; /* the string of the type shown first; 0: the last */
	int64_t time_nanos;
	int64_t duration_nanos;

	struct pprof_string *strs;
	size_t nr_strs, strs_cap;
	struct htable str_idx;

	struct mapping_ent *mappings;
	size_t nr_mappings, mappings_cap;
	struct htable mapping_idx;

	struct function_ent *functions;
	size_t nr_functions, functions_cap;
	struct htable function_idx;

	struct location_ent *locations;
	size_t nr_locations, locations_cap;
	struct htable location_idx;
	struct line_ent *lines; /* the locations' lines, a run each */
	size_t nr_lines, lines_cap;

	struct sample_ent *samples;
	size_t nr_samples, samples_cap;
	uint32_t *sample_locs;
	size_t nr_sample_locs, sample_locs_cap;
	int64_t *sample_values;
	size_t nr_sample_values, sample_values_cap;
	struct label_ent *sample_labels;
	size_t nr_sample_labels, sample_labels_cap;

	uint32_t *comments;
	size_t nr_comments, comments_cap;
};

/* --- growable arrays */

/*
 * Make room for @need elements in array @arr of capacity @cap (array_grow(),
 * 16 at first).  Evaluates to 0 or -ENOMEM; on failure @arr and @cap are left
 * as they were.
 */
#define ARRAY_RESERVE(arr, cap, need)                                                              \
	array_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)), 16)

/* --- interning */

struct str_key {
	const char *s;
	size_t len;
};

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct pprof *p = ctx;
	const struct str_key *k = key;

	return p->strs[idx].len == k->len && !memcmp(p->strs[idx].s, k->s, k->len);
}

/*
 * Intern @s (NULL reads as "") into the string table: the one door every
 * string of the profile goes through, so this is where bytes that are not
 * UTF-8 (a thread named by prctl(), a tag, a symbol or path from a hostile
 * file) become U+FFFD.  A protobuf library refuses a whole profile with one
 * such string in it (proto3 strings are UTF-8); the strings are interned as
 * replaced, so two that differ only in bad bytes share an index.
 * Return: 0 with *@idx set, or -ENOMEM.
 */
static int intern_string(struct pprof *p, const char *s, uint32_t *idx)
{
	struct str_key key;
	uint32_t hash, found;
	char *copy, *clean = NULL;
	int err = 0;

	/* "" is string_table[0] and is never hashed */
	if (!s || !*s) {
		*idx = 0;
		return 0;
	}
	key.s = s;
	key.len = strlen(s);
	if (!utf8_valid(s, key.len)) {
		clean = malloc(key.len * UTF8_REPLACEMENT_LEN);
		if (!clean)
			return -ENOMEM;
		key.len = utf8_sanitize(s, key.len, clean);
		key.s = clean;
	}
	hash = hash_bytes(key.s, key.len);
	found = htable__find(&p->str_idx, hash, str_eq, p, &key);
	if (found != HTABLE_NONE) {
		*idx = found;
		goto out;
	}
	err = p->nr_strs >= PPROF_MAX_ENTRIES ? -ENOMEM
					      : ARRAY_RESERVE(p->strs, p->strs_cap, p->nr_strs + 1);
	if (err)
		goto out;
	copy = malloc(key.len + 1);
	if (!copy) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(copy, key.s, key.len);
	copy[key.len] = '\0';
	err = htable__insert(&p->str_idx, hash, p->nr_strs);
	if (err) {
		free(copy);
		goto out;
	}
	p->strs[p->nr_strs].s = copy;
	p->strs[p->nr_strs].len = key.len;
	*idx = p->nr_strs++;
out:
	free(clean);
	return err;
}

static bool mapping_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct pprof *p = ctx;
	const struct mapping_ent *a = &p->mappings[idx], *b = key;

	return a->memory_start == b->memory_start && a->memory_limit == b->memory_limit &&
	       a->file_offset == b->file_offset && a->filename == b->filename &&
	       a->build_id == b->build_id;
}

static bool function_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct pprof *p = ctx;
	const struct function_ent *a = &p->functions[idx], *b = key;

	return a->name == b->name && a->system_name == b->system_name &&
	       a->filename == b->filename && a->start_line == b->start_line;
}

/* a location looked up: its entry, and its lines not yet in pprof.lines */
struct location_key {
	struct location_ent ent;
	const struct pprof_line *lines;
};

static bool location_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct pprof *p = ctx;
	const struct location_ent *a = &p->locations[idx];
	const struct location_key *b = key;
	uint32_t i;

	if (a->address != b->ent.address || a->mapping_id != b->ent.mapping_id ||
	    a->nr_lines != b->ent.nr_lines)
		return false;
	for (i = 0; i < a->nr_lines; i++)
		if (p->lines[a->lines_off + i].function_id != b->lines[i].function_id ||
		    p->lines[a->lines_off + i].line != b->lines[i].line)
			return false;
	return true;
}

/* --- builder */

struct pprof *pprof__new(const struct pprof_value_type *sample_types, size_t nr_sample_types,
			 struct pprof_value_type period_type, int64_t period)
{
	struct pprof *p;
	size_t i;
	int err;

	if (!sample_types || !nr_sample_types || nr_sample_types > PPROF_MAX_ENTRIES) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	/* string_table[0] must be "" */
	err = ARRAY_RESERVE(p->strs, p->strs_cap, 1);
	if (err)
		goto err_free;
	p->strs[0].s = calloc(1, 1);
	if (!p->strs[0].s) {
		err = -ENOMEM;
		goto err_free;
	}
	p->strs[0].len = 0;
	p->nr_strs = 1;

	p->types = calloc(nr_sample_types, 2 * sizeof(*p->types));
	if (!p->types) {
		err = -ENOMEM;
		goto err_free;
	}
	p->nr_types = nr_sample_types;
	for (i = 0; i < nr_sample_types; i++) {
		err = intern_string(p, sample_types[i].type, &p->types[2 * i]);
		if (err)
			goto err_free;
		err = intern_string(p, sample_types[i].unit, &p->types[2 * i + 1]);
		if (err)
			goto err_free;
	}
	err = intern_string(p, period_type.type, &p->period_type[0]);
	if (err)
		goto err_free;
	err = intern_string(p, period_type.unit, &p->period_type[1]);
	if (err)
		goto err_free;
	p->period = period;
	return p;

err_free:
	pprof__free(p);
	errno = -err;
	return NULL;
}

void pprof__free(struct pprof *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nr_strs; i++)
		free(p->strs[i].s);
	free(p->strs);
	htable__destroy(&p->str_idx);
	free(p->mappings);
	htable__destroy(&p->mapping_idx);
	free(p->functions);
	htable__destroy(&p->function_idx);
	free(p->locations);
	htable__destroy(&p->location_idx);
	free(p->lines);
	free(p->samples);
	free(p->sample_locs);
	free(p->sample_values);
	free(p->sample_labels);
	free(p->comments);
	free(p->types);
	free(p);
}

void pprof__set_time(struct pprof *p, int64_t time_nanos, int64_t duration_nanos)
{
	p->time_nanos = time_nanos;
	p->duration_nanos = duration_nanos;
}

int pprof__add_comment(struct pprof *p, const char *comment)
{
	uint32_t idx;
	int err;

	err = ARRAY_RESERVE(p->comments, p->comments_cap, p->nr_comments + 1);
	if (err)
		return err;
	err = intern_string(p, comment, &idx);
	if (err)
		return err;
	p->comments[p->nr_comments++] = idx;
	return 0;
}

uint64_t pprof__mapping(struct pprof *p, const struct pprof_mapping *m)
{
	struct mapping_ent key = {
		.memory_start = m->memory_start,
		.memory_limit = m->memory_limit,
		.file_offset = m->file_offset,
		.has_functions = m->has_functions != 0,
	};
	uint32_t hash, found;
	uint64_t h;

	if (intern_string(p, m->filename, &key.filename) ||
	    intern_string(p, m->build_id, &key.build_id))
		return 0;
	h = hash_combine(key.memory_start, key.memory_limit);
	h = hash_combine(h, key.file_offset);
	h = hash_combine(h, (uint64_t)key.filename << 32 | key.build_id);
	hash = hash_u64(h);
	found = htable__find(&p->mapping_idx, hash, mapping_eq, p, &key);
	if (found != HTABLE_NONE) {
		/* one unnamed frame is enough to let pprof symbolize the mapping again */
		p->mappings[found].has_functions &= key.has_functions;
		return found + 1;
	}
	if (p->nr_mappings >= PPROF_MAX_ENTRIES ||
	    ARRAY_RESERVE(p->mappings, p->mappings_cap, p->nr_mappings + 1) ||
	    htable__insert(&p->mapping_idx, hash, p->nr_mappings))
		return 0;
	p->mappings[p->nr_mappings++] = key;
	return p->nr_mappings;
}

void pprof__set_default_type(struct pprof *p, size_t idx)
{
	if (idx < p->nr_types)
		p->default_type = p->types[2 * idx];
}

uint64_t pprof__function(struct pprof *p, const char *name, const char *system_name,
			 const char *filename)
{
	return pprof__function_at(p, name, system_name, filename, 0);
}

uint64_t pprof__function_at(struct pprof *p, const char *name, const char *system_name,
			    const char *filename, int64_t start_line)
{
	struct function_ent key;
	uint32_t hash, found;

	if (intern_string(p, name, &key.name) || intern_string(p, system_name, &key.system_name) ||
	    intern_string(p, filename, &key.filename))
		return 0;
	key.start_line = start_line;
	hash = hash_u64(hash_combine(((uint64_t)key.name << 32) | key.system_name,
				     (uint64_t)key.filename ^ (uint64_t)start_line << 32));
	found = htable__find(&p->function_idx, hash, function_eq, p, &key);
	if (found != HTABLE_NONE)
		return found + 1;
	if (p->nr_functions >= PPROF_MAX_ENTRIES ||
	    ARRAY_RESERVE(p->functions, p->functions_cap, p->nr_functions + 1) ||
	    htable__insert(&p->function_idx, hash, p->nr_functions))
		return 0;
	p->functions[p->nr_functions++] = key;
	return p->nr_functions;
}

uint64_t pprof__location_lines(struct pprof *p, uint64_t mapping_id, uint64_t address,
			       const struct pprof_line *lines, size_t nr_lines)
{
	struct location_key key = {.lines = lines};
	uint32_t hash, found;
	uint64_t h;
	size_t i;

	/* a dangling id would make pprof reject the whole profile */
	if (mapping_id > p->nr_mappings || nr_lines > PPROF_MAX_LINES || (nr_lines && !lines))
		return 0;
	for (i = 0; i < nr_lines; i++)
		if (!lines[i].function_id || lines[i].function_id > p->nr_functions)
			return 0;
	key.ent.address = address;
	key.ent.mapping_id = mapping_id;
	key.ent.nr_lines = nr_lines;
	h = hash_combine(address, mapping_id << 32 | nr_lines);
	for (i = 0; i < nr_lines; i++)
		h = hash_combine(h, lines[i].function_id << 32 ^ (uint64_t)lines[i].line);
	hash = hash_u64(h);
	found = htable__find(&p->location_idx, hash, location_eq, p, &key);
	if (found != HTABLE_NONE)
		return found + 1;
	key.ent.lines_off = p->nr_lines;
	if (p->nr_locations >= PPROF_MAX_ENTRIES ||
	    ARRAY_RESERVE(p->locations, p->locations_cap, p->nr_locations + 1) ||
	    ARRAY_RESERVE(p->lines, p->lines_cap, p->nr_lines + nr_lines) ||
	    htable__insert(&p->location_idx, hash, p->nr_locations))
		return 0;
	for (i = 0; i < nr_lines; i++)
		p->lines[p->nr_lines++] = (struct line_ent){
			.line = lines[i].line, .function_id = (uint32_t)lines[i].function_id};
	p->locations[p->nr_locations++] = key.ent;
	return p->nr_locations;
}

uint64_t pprof__location(struct pprof *p, uint64_t mapping_id, uint64_t address,
			 uint64_t function_id)
{
	struct pprof_line line = {.function_id = function_id};

	return pprof__location_lines(p, mapping_id, address, &line, function_id != 0);
}

int pprof__add_sample(struct pprof *p, const uint64_t *locations, size_t nr_locations,
		      const int64_t *values, const struct pprof_label *labels, size_t nr_labels)
{
	struct sample_ent *s;
	struct label_ent *l;
	size_t i;
	int err;

	if ((nr_locations && !locations) || !values || (nr_labels && !labels) ||
	    nr_locations > UINT32_MAX || nr_labels > UINT32_MAX)
		return -EINVAL;
	for (i = 0; i < nr_locations; i++) {
		if (!locations[i] || locations[i] > p->nr_locations)
			return -EINVAL;
	}
	for (i = 0; i < nr_labels; i++) {
		if (!labels[i].key)
			return -EINVAL;
	}

	/* reserve everything first, so a failure leaves no partial sample */
	if (ARRAY_RESERVE(p->samples, p->samples_cap, p->nr_samples + 1) ||
	    ARRAY_RESERVE(p->sample_locs, p->sample_locs_cap, p->nr_sample_locs + nr_locations) ||
	    ARRAY_RESERVE(p->sample_values, p->sample_values_cap,
			  p->nr_sample_values + p->nr_types) ||
	    ARRAY_RESERVE(p->sample_labels, p->sample_labels_cap, p->nr_sample_labels + nr_labels))
		return -ENOMEM;

	/* labels go past the end of the array until the sample is committed */
	for (i = 0; i < nr_labels; i++) {
		l = &p->sample_labels[p->nr_sample_labels + i];
		err = intern_string(p, labels[i].key, &l->key);
		if (err)
			return err;
		l->str = 0;
		l->num = 0;
		l->num_unit = 0;
		if (labels[i].str) {
			err = intern_string(p, labels[i].str, &l->str);
		} else {
			l->num = labels[i].num;
			err = intern_string(p, labels[i].num_unit, &l->num_unit);
		}
		if (err)
			return err;
	}

	s = &p->samples[p->nr_samples++];
	s->loc_off = p->nr_sample_locs;
	s->nr_locs = nr_locations;
	s->label_off = p->nr_sample_labels;
	s->nr_labels = nr_labels;
	for (i = 0; i < nr_locations; i++)
		p->sample_locs[p->nr_sample_locs++] = locations[i];
	memcpy(&p->sample_values[p->nr_sample_values], values, p->nr_types * sizeof(*values));
	p->nr_sample_values += p->nr_types;
	p->nr_sample_labels += nr_labels;
	return 0;
}

int pprof__location_frame(const struct pprof *p, uint64_t location_id, struct pprof_frame *f)
{
	const struct location_ent *l;

	if (!location_id || location_id > p->nr_locations)
		return -ENOENT;
	l = &p->locations[location_id - 1];
	*f = (struct pprof_frame){.mapping_id = l->mapping_id};
	/* the function the code belongs to: its last line, the outermost */
	if (l->nr_lines) {
		f->function_id = p->lines[l->lines_off + l->nr_lines - 1].function_id;
		f->name = p->strs[p->functions[f->function_id - 1].name].s;
	}
	if (l->mapping_id)
		f->mapping_file = p->strs[p->mappings[l->mapping_id - 1].filename].s;
	return 0;
}

size_t pprof__nr_samples(const struct pprof *p)
{
	return p->nr_samples;
}

size_t pprof__nr_locations(const struct pprof *p)
{
	return p->nr_locations;
}

size_t pprof__nr_functions(const struct pprof *p)
{
	return p->nr_functions;
}

size_t pprof__nr_mappings(const struct pprof *p)
{
	return p->nr_mappings;
}

/* --- protobuf encoding */

/* an output buffer whose first failure sticks, so writers need no checks */
struct pb_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	int err;
};

static bool pb_reserve(struct pb_buf *b, size_t n)
{
	if (b->err)
		return false;
	if (n > SIZE_MAX - b->len || ARRAY_RESERVE(b->data, b->cap, b->len + n)) {
		b->err = -ENOMEM;
		return false;
	}
	return true;
}

static size_t varint_put(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

static void pb_varint(struct pb_buf *b, uint64_t v)
{
	if (pb_reserve(b, 10))
		b->len += varint_put(b->data + b->len, v);
}

static void pb_key(struct pb_buf *b, unsigned int field, unsigned int wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

/* proto3 scalars: a zero value is the default and is not written */
static void pb_uint64(struct pb_buf *b, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	pb_key(b, field, WIRE_VARINT);
	pb_varint(b, v);
}

/* int64 is encoded as its two's complement uint64: negatives take 10 bytes */
static void pb_int64(struct pb_buf *b, unsigned int field, int64_t v)
{
	pb_uint64(b, field, (uint64_t)v);
}

static void pb_bytes(struct pb_buf *b, unsigned int field, const void *data, size_t len)
{
	pb_key(b, field, WIRE_LEN);
	pb_varint(b, len);
	if (pb_reserve(b, len)) {
		memcpy(b->data + b->len, data, len);
		b->len += len;
	}
}

/* start a length-delimited field (message or packed run); pair with pb_end() */
static size_t pb_begin(struct pb_buf *b)
{
	return b->len;
}

/*
 * Close the field begun at @start: its body is already in place, so shift it
 * right by the size of the key and length prefix, then write those in front.
 */
static void pb_end(struct pb_buf *b, unsigned int field, size_t start)
{
	uint8_t hdr[20];
	size_t body, n;

	if (b->err)
		return;
	body = b->len - start;
	n = varint_put(hdr, (uint64_t)field << 3 | WIRE_LEN);
	n += varint_put(hdr + n, body);
	if (!pb_reserve(b, n))
		return;
	memmove(b->data + start + n, b->data + start, body);
	memcpy(b->data + start, hdr, n);
	b->len += n;
}

static void pb_value_type(struct pb_buf *b, unsigned int field, const uint32_t type_unit[2])
{
	size_t msg = pb_begin(b);

	pb_int64(b, VALUE_TYPE_TYPE, type_unit[0]);
	pb_int64(b, VALUE_TYPE_UNIT, type_unit[1]);
	pb_end(b, field, msg);
}

static void encode_sample(const struct pprof *p, struct pb_buf *b, size_t idx)
{
	const struct sample_ent *s = &p->samples[idx];
	const int64_t *values = &p->sample_values[idx * p->nr_types];
	size_t msg, run, lmsg, i;

	msg = pb_begin(b);
	if (s->nr_locs) {
		run = pb_begin(b);
		for (i = 0; i < s->nr_locs; i++)
			pb_varint(b, p->sample_locs[s->loc_off + i]);
		pb_end(b, SAMPLE_LOCATION_ID, run);
	}
	run = pb_begin(b);
	for (i = 0; i < p->nr_types; i++)
		pb_varint(b, (uint64_t)values[i]);
	pb_end(b, SAMPLE_VALUE, run);
	for (i = 0; i < s->nr_labels; i++) {
		const struct label_ent *l = &p->sample_labels[s->label_off + i];

		lmsg = pb_begin(b);
		pb_int64(b, LABEL_KEY, l->key);
		pb_int64(b, LABEL_STR, l->str);
		pb_int64(b, LABEL_NUM, l->num);
		pb_int64(b, LABEL_NUM_UNIT, l->num_unit);
		pb_end(b, SAMPLE_LABEL, lmsg);
	}
	pb_end(b, PROFILE_SAMPLE, msg);
}

static void encode_mapping(const struct pprof *p, struct pb_buf *b, size_t idx)
{
	const struct mapping_ent *m = &p->mappings[idx];
	size_t msg = pb_begin(b);

	pb_uint64(b, MAPPING_ID, idx + 1);
	pb_uint64(b, MAPPING_MEMORY_START, m->memory_start);
	pb_uint64(b, MAPPING_MEMORY_LIMIT, m->memory_limit);
	pb_uint64(b, MAPPING_FILE_OFFSET, m->file_offset);
	pb_int64(b, MAPPING_FILENAME, m->filename);
	pb_int64(b, MAPPING_BUILD_ID, m->build_id);
	pb_uint64(b, MAPPING_HAS_FUNCTIONS, m->has_functions);
	pb_end(b, PROFILE_MAPPING, msg);
}

static void encode_location(const struct pprof *p, struct pb_buf *b, size_t idx)
{
	const struct location_ent *l = &p->locations[idx];
	size_t msg = pb_begin(b), line;
	uint32_t i;

	pb_uint64(b, LOCATION_ID, idx + 1);
	pb_uint64(b, LOCATION_MAPPING_ID, l->mapping_id);
	pb_uint64(b, LOCATION_ADDRESS, l->address);
	for (i = 0; i < l->nr_lines; i++) {
		const struct line_ent *e = &p->lines[l->lines_off + i];

		line = pb_begin(b);
		pb_uint64(b, LINE_FUNCTION_ID, e->function_id);
		pb_int64(b, LINE_LINE, e->line);
		pb_end(b, LOCATION_LINE, line);
	}
	pb_end(b, PROFILE_LOCATION, msg);
}

static void encode_function(const struct pprof *p, struct pb_buf *b, size_t idx)
{
	const struct function_ent *f = &p->functions[idx];
	size_t msg = pb_begin(b);

	pb_uint64(b, FUNCTION_ID, idx + 1);
	pb_int64(b, FUNCTION_NAME, f->name);
	pb_int64(b, FUNCTION_SYSTEM_NAME, f->system_name);
	pb_int64(b, FUNCTION_FILENAME, f->filename);
	pb_int64(b, FUNCTION_START_LINE, f->start_line);
	pb_end(b, PROFILE_FUNCTION, msg);
}

int pprof__encode(struct pprof *p, uint8_t **buf, size_t *len)
{
	struct pb_buf b = {};
	size_t i, run;

	for (i = 0; i < p->nr_types; i++)
		pb_value_type(&b, PROFILE_SAMPLE_TYPE, &p->types[2 * i]);
	for (i = 0; i < p->nr_samples; i++)
		encode_sample(p, &b, i);
	for (i = 0; i < p->nr_mappings; i++)
		encode_mapping(p, &b, i);
	for (i = 0; i < p->nr_locations; i++)
		encode_location(p, &b, i);
	for (i = 0; i < p->nr_functions; i++)
		encode_function(p, &b, i);
	/* repeated strings are written even when empty: index 0 must be "" */
	for (i = 0; i < p->nr_strs; i++)
		pb_bytes(&b, PROFILE_STRING_TABLE, p->strs[i].s, p->strs[i].len);
	pb_int64(&b, PROFILE_TIME_NANOS, p->time_nanos);
	pb_int64(&b, PROFILE_DURATION_NANOS, p->duration_nanos);
	pb_value_type(&b, PROFILE_PERIOD_TYPE, p->period_type);
	pb_int64(&b, PROFILE_PERIOD, p->period);
	if (p->nr_comments) {
		run = pb_begin(&b);
		for (i = 0; i < p->nr_comments; i++)
			pb_varint(&b, p->comments[i]);
		pb_end(&b, PROFILE_COMMENT, run);
	}
	/* 0 (unset): pprof then shows the last sample type */
	pb_int64(&b, PROFILE_DEFAULT_SAMPLE_TYPE, p->default_type);

	if (b.err) {
		free(b.data);
		return b.err;
	}
	*buf = b.data;
	*len = b.len;
	return 0;
}

/* --- gzip file output */

struct gz_job {
	const uint8_t *buf;
	size_t len;
};

static int fill_gz(void *ctx, struct output_sink *s)
{
	const struct gz_job *job = ctx;

	return output_write_gz(s, job->buf, job->len);
}

int pprof__gz(struct pprof *p, size_t max, uint8_t **gz, size_t *gz_len)
{
	struct gz_job job;
	uint8_t *buf = NULL;
	int err;

	*gz = NULL;
	*gz_len = 0;
	err = pprof__encode(p, &buf, &job.len);
	if (err)
		return err;
	job.buf = buf;
	err = output_to_memory(fill_gz, &job, max, gz, gz_len);
	free(buf);
	return err;
}

int pprof__write_gz(struct pprof *p, const char *path, struct output_keep *keep)
{
	struct gz_job job;
	uint8_t *buf = NULL;
	int err;

	err = pprof__encode(p, &buf, &job.len);
	if (err)
		return err;
	job.buf = buf;
	err = output_write(path, fill_gz, &job, keep);
	free(buf);
	return err;
}
