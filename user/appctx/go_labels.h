/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * go_labels - the collector's reader of Go goroutine labels
 * (runtime/pprof.SetGoroutineLabels, pprof.Do: what Pyroscope's
 * otel-profiling-go puts span_id in), per process image.
 *
 * A subscriber of process mappings on the main thread, told of the first
 * read of every image (process_state_subscriber.first_read):
 * go_labels__changed() opens the image's executable (the file holding
 * AT_PHDR, as the inode mapped: processes/mapped_file.h) and, when it is a
 * Go program whose runtime layout appctx/go_binary.h knows, attaches a
 * struct go_proc to the state (@go) and puts the layout into the sampler's
 * pid -> layout map: the sampler then appends the running goroutine's
 * labels to each sample of the process (include/go_abi.h).  A Go program
 * of another version, or whose g it cannot locate, is counted as
 * unsupported and left alone; nothing is guessed.  Each second,
 * go_labels__poll() takes the images gone out of the map.
 *
 * Labels: every label of the goroutine's set (at most GO_LABELS_MAX, each
 * within GO_LABEL_KEY_MAX / GO_LABEL_VALUE_MAX bytes), key = value as the
 * program set them, so span_id is the span id otel-profiling-go wrote.  A
 * key or value that is not UTF-8 or holds a NUL is left out, counted.
 *
 * Hostile input: the executable is read through elf/elf_file.h (bounded),
 * the records the sampler copied are decoded within their bytes.
 * Main thread only (the changes, the polls, the export and the release run
 * there); the pure functions (from_sample, decode) on any thread.
 */
#ifndef CTXPROF_GO_LABELS_H
#define CTXPROF_GO_LABELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "records.h"

struct go_labels;
struct go_proc;
struct mappings;
struct proc_maps;
struct process_state;

struct go_labels_stats {
	uint64_t processes;	      /* images whose goroutine labels the sampler reads */
	uint64_t unsupported_version; /* Go programs of a version not in the table */
	uint64_t unsupported_build;   /* of a known version, but g not locatable, or not x86-64 */
	uint64_t unreadable;	      /* executables that could not be opened or read */
	uint64_t map_full;	      /* the sampler's map had no room */
	uint64_t bad_values;	      /* labels left out at export: not UTF-8, or a NUL */
};

/* one label of a record, as the program wrote it (not NUL-terminated) */
struct go_label {
	const uint8_t *key;
	const uint8_t *value;
	uint8_t key_len, value_len;
};

/* one label spelled out: both strings valid until the buffer is reused */
struct go_label_str {
	const char *key;
	const char *value;
};

/* where go_labels__labels() spells a record's labels out */
struct go_label_buf {
	char bytes[GO_LABELS_BYTES];
};

/**
 * go_labels__new() - @map_fd: the sampler's pid -> layout map
 * (sampler__go_map_fd()); @verbose: say on stderr why a Go program's
 * labels are not read.
 * Return: NULL with errno set.  Pair with go_labels__free().
 */
struct go_labels *go_labels__new(int map_fd, int verbose);

/**
 * go_labels__changed() - the process_state_subscriber's changed (ctx: the
 * go_labels; main_thread, first_read): look at @st's executable, once per
 * image.
 */
void go_labels__changed(void *ctx, struct process_state *st, struct mappings *snap,
			const struct proc_maps *all);

/** go_labels__poll() - take the images gone out of the sampler's map.  Each second. */
void go_labels__poll(struct go_labels *gl);

/**
 * go_labels__release() - the image of @p is gone: out of the sampler's
 * map, freed.  Accepts NULL.
 */
void go_labels__release(struct go_proc *p);

void go_labels__stats(const struct go_labels *gl, struct go_labels_stats *st);

/** go_labels__free() - after every go_proc was released; accepts NULL. */
void go_labels__free(struct go_labels *gl);

/**
 * go_labels__from_sample() - the goroutine labels a sample of @size bytes
 * (as its ring held it, frames checked) carries: past its frames and its
 * OpenTelemetry record if any, 8-byte aligned.
 * @out: set to the record; its size bytes of entries follow it
 * Return: 1 with @out set, 0 when the sample has none, -EINVAL when the
 * record is cut, or its entries do not fill it exactly.
 */
int go_labels__from_sample(const struct sample_record *rec, size_t size,
			   const struct go_labels_record **out);

/**
 * go_labels__decode() - the entries of record @r (checked: from
 * go_labels__from_sample(), or a copy of one) into @out, at most
 * GO_LABELS_MAX.
 * Return: the number of labels.
 */
size_t go_labels__decode(const struct go_labels_record *r, struct go_label *out);

/**
 * go_labels__labels() - the labels of record @r as strings, in @buf; those
 * that are no label (not UTF-8, a NUL) are left out and counted in @gl's
 * stats (@gl NULL: not counted).
 * @out: room for GO_LABELS_MAX
 * Return: the number written.
 */
size_t go_labels__labels(struct go_labels *gl, const struct go_labels_record *r,
			 struct go_label_str *out, struct go_label_buf *buf);

/** go_labels__of() - the reader @p belongs to (NULL: NULL), for go_labels__labels(). */
struct go_labels *go_labels__of(const struct go_proc *p);

#endif /* CTXPROF_GO_LABELS_H */
