/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pprof - build a profile.proto message and write it gzipped.
 *
 * A builder that owns deduplicated string, mapping, function and location
 * tables and a list of samples, and serializes them as the protobuf message
 * perftools.profiles.Profile (github.com/google/pprof/proto/profile.proto).
 * Ids handed out are 1-based as profile.proto requires; 0 means "none".
 * Every string (names, labels, comments) is written as UTF-8: bytes that
 * are not (a thread's prctl() name, a tag, a hostile file's symbol) become
 * U+FFFD (util/utf8.h), since protobuf libraries refuse a whole profile
 * with one proto3 string that is not UTF-8.
 *
 * Not thread-safe: one builder is used by one thread (the exporter).
 */
#ifndef CTXPROF_PPROF_H
#define CTXPROF_PPROF_H

#include <stddef.h>
#include <stdint.h>

struct pprof;
struct output_keep;

/* A value type such as ("samples", "count") or ("cpu", "nanoseconds"). */
struct pprof_value_type {
	const char *type;
	const char *unit;
};

struct pprof_mapping {
	uint64_t memory_start;
	uint64_t memory_limit;
	uint64_t file_offset;
	const char *filename; /* may be NULL */
	const char *build_id; /* hex string, may be NULL */
	int has_functions;    /* this frame was named; the mapping is written with
			       * has_functions only if every call for it said so,
			       * so pprof may symbolize a partly named mapping again */
};

/* A sample label: exactly one of str or (num, num_unit) is used. */
struct pprof_label {
	const char *key;
	const char *str;      /* string label when non-NULL */
	int64_t num;	      /* numeric label when str is NULL */
	const char *num_unit; /* may be NULL */
};

/**
 * pprof__new() - create an empty profile builder.
 * @sample_types: the value types of each sample, in order (at least one)
 * @nr_sample_types: how many
 * @period_type: the period's value type
 * @period: sampling period in period_type units
 *
 * Return: the builder, or NULL with errno set.  Pair with pprof__free().
 */
struct pprof *pprof__new(const struct pprof_value_type *sample_types, size_t nr_sample_types,
			 struct pprof_value_type period_type, int64_t period);

/** pprof__free() - release the builder; accepts NULL. */
void pprof__free(struct pprof *p);

/** pprof__set_time() - set time_nanos (wall clock start) and duration_nanos. */
void pprof__set_time(struct pprof *p, int64_t time_nanos, int64_t duration_nanos);

/** pprof__add_comment() - append a free-text comment. Return: 0 or -errno. */
int pprof__add_comment(struct pprof *p, const char *comment);

/**
 * pprof__mapping() - intern a mapping.
 *
 * Mappings equal in every field but has_functions get the same id; the
 * mapping's has_functions is the AND of every call's.
 * Return: the mapping id (>= 1), or 0 on allocation failure.
 */
uint64_t pprof__mapping(struct pprof *p, const struct pprof_mapping *m);

/**
 * pprof__function() - intern a function by (name, system_name, filename).
 * @system_name and @filename may be NULL.
 * Return: the function id (>= 1), or 0 on allocation failure.
 */
uint64_t pprof__function(struct pprof *p, const char *name, const char *system_name,
			 const char *filename);

/**
 * pprof__set_default_type() - the sample type viewers show first: the
 * @idx-th of pprof__new()'s (pprof shows the last one when none is set).
 */
void pprof__set_default_type(struct pprof *p, size_t idx);

/**
 * pprof__function_at() - pprof__function() with the function's first
 * source line (0: unknown), as a Python code object has it.
 */
uint64_t pprof__function_at(struct pprof *p, const char *name, const char *system_name,
			    const char *filename, int64_t start_line);

/**
 * pprof__location() - intern a location by (mapping_id, address, function_id).
 * @mapping_id: 0 when the address belongs to no known mapping
 * @function_id: 0 when the address could not be named (no Line is written)
 * Return: the location id (>= 1), or 0 on allocation failure or when
 * @mapping_id or @function_id is not an id this builder handed out (pprof
 * rejects a whole profile that holds a dangling id).
 */
uint64_t pprof__location(struct pprof *p, uint64_t mapping_id, uint64_t address,
			 uint64_t function_id);

/* One Line of a location: a function and the line in it (0: unknown). */
struct pprof_line {
	uint64_t function_id;
	int64_t line;
};

/* lines of one location at most: a call and the calls inlined into it */
#define PPROF_MAX_LINES 64

/**
 * pprof__location_lines() - intern a location by (mapping_id, address,
 * lines): what pprof__location() does, with a line number, and the calls
 * inlined at the address.
 * @lines: innermost first; the last is the function the code belongs to
 *	(profile.proto's order); at most PPROF_MAX_LINES, none: unnamed
 * Return: the location id (>= 1), or 0 on allocation failure or for an id
 * not handed out by this builder.
 */
uint64_t pprof__location_lines(struct pprof *p, uint64_t mapping_id, uint64_t address,
			       const struct pprof_line *lines, size_t nr_lines);

/**
 * pprof__add_sample() - append one sample.
 * @locations: location ids, leaf first
 * @values: nr_sample_types values
 * @labels: may be NULL when nr_labels is 0; strings are copied
 *
 * Samples are not merged: the caller aggregates.  pprof itself drops a string
 * label whose value is "" and a numeric label that is 0 with no unit, as
 * profile.proto cannot tell those from "no value".
 * Return: 0 or -errno: -EINVAL for a location id not handed out by
 * pprof__location(), a label without a key or NULL @values; -ENOMEM.  On
 * error no sample is added.
 */
int pprof__add_sample(struct pprof *p, const uint64_t *locations, size_t nr_locations,
		      const int64_t *values, const struct pprof_label *labels, size_t nr_labels);

/**
 * pprof__encode() - serialize the profile (uncompressed protobuf).
 * @buf: set to a malloc'ed buffer the caller frees
 * @len: set to its length
 * Return: 0 or -errno.
 */
int pprof__encode(struct pprof *p, uint8_t **buf, size_t *len);

/**
 * pprof__gz() - serialize and gzip into memory.
 * @max: the gzipped size at most (-EFBIG past it)
 * @gz: set to a malloc()ed buffer the caller frees; @gz_len its length
 * Return: 0 or -errno.
 */
int pprof__gz(struct pprof *p, size_t max, uint8_t **gz, size_t *gz_len);

/**
 * pprof__write_gz() - serialize, gzip and write to @path the way
 * export/output.h says: "-", or a regular file atomically (a temporary file
 * in the same directory, mode 0600, then renamed).
 * On error no temporary file is left behind.
 * @keep: NULL, or where the gzipped profile is kept when it cannot be
 *	written (output_write())
 * Return: 0 or -errno.
 */
int pprof__write_gz(struct pprof *p, const char *path, struct output_keep *keep);

/* what a location names (pprof__location_frame()) */
struct pprof_frame {
	uint64_t function_id;	  /* 0: unnamed; inlined calls: the outermost function */
	uint64_t mapping_id;	  /* 0: in no known mapping */
	const char *name;	  /* the function's name, NULL when unnamed */
	const char *mapping_file; /* the mapping's file, NULL without one ("" when it has none) */
};

/**
 * pprof__location_frame() - what location @location_id names; the strings
 * live as long as the builder.
 * Return: 0, or -ENOENT for an id not handed out.
 */
int pprof__location_frame(const struct pprof *p, uint64_t location_id, struct pprof_frame *f);

/** Counts of what the builder holds, for summaries and tests. */
size_t pprof__nr_samples(const struct pprof *p);
size_t pprof__nr_locations(const struct pprof *p);
size_t pprof__nr_functions(const struct pprof *p);
size_t pprof__nr_mappings(const struct pprof *p);

#endif /* CTXPROF_PPROF_H */
