/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * series - what a profile store files a process's samples under, and an
 * interval's rows split that way (one profile per series, for --push).
 *
 * The rule, one series per service:
 *   service  the process's OpenTelemetry resource service.name (OTEP 4719),
 *            else its Kubernetes namespace/container (what Alloy names an
 *            eBPF-profiled container), else its container id's first 12
 *            hex digits, else its comm (the process name), else "unknown"
 *   labels   pod, namespace, container (Kubernetes, when known), node
 * Pyroscope's name syntax is service{k=v,...}: a service keeps
 * [A-Za-z0-9_.-/] (others become '_'), a value loses ',', '{', '}' and
 * bytes outside printable ASCII (each becomes '_'), so that the name parses
 * back to what was meant.
 *
 * Main thread (the exporter's).
 */
#ifndef CTXPROF_SERIES_H
#define CTXPROF_SERIES_H

#include <stddef.h>
#include "export/export.h"
#include "processes/process_state.h"

#define SERIES_SERVICE_MAX 128
#define SERIES_NAME_MAX	   1024 /* a whole name: service and labels */

/* where a series' service came from */
enum series_source {
	SERIES_FROM_OTEL,
	SERIES_FROM_KUBERNETES,
	SERIES_FROM_CONTAINER,
	SERIES_FROM_COMM,
	SERIES_FROM_NOTHING,
};

struct series {
	char service[SERIES_SERVICE_MAX];
	char pod[POD_META_POD_LEN];
	char ns[POD_META_NAME_LEN];
	char container[POD_META_NAME_LEN];
	char node[256];
	enum series_source source;
};

/**
 * series__of() - the series of process image @ps (NULL: unknown) on @node
 * (NULL: none).  Takes no lock: a state's labels are immutable (and its
 * OpenTelemetry state is the main thread's).
 */
void series__of(const struct process_state *ps, const char *node, struct series *out);

/**
 * series__name() - @s as Pyroscope's ingest `name`: service{k=v,...}.
 * Return: its length, or -ENAMETOOLONG when @len is too small.
 */
int series__name(const struct series *s, char *buf, size_t len);

struct series_set;

/**
 * series_set__new() - an empty split of one interval: each series gets an
 * exporter of no rotation (exporter__new()) made with @opts.
 * Return: the set, or NULL with errno set.  Pair with series_set__free().
 */
struct series_set *series_set__new(struct calltrace_storage *traces, struct symbolizer *sym,
				   const struct export_opts *opts);

/**
 * series_set__add_row() - @row into its series' profile: its process image
 * as @src (the interval's exporter) knows it.  A row whose stack is gone
 * goes nowhere (@src counts it when it adds the row itself).
 * Return: 0 or -errno.
 */
int series_set__add_row(struct series_set *set, struct exporter *src, const struct sample_row *row);

/** series_set__nr() - how many series the rows fell into. */
size_t series_set__nr(const struct series_set *set);

/** series_set__name() - series @i's name (series__name()). */
const char *series_set__name(const struct series_set *set, size_t i);

/** series_set__exporter() - series @i's profile. */
struct exporter *series_set__exporter(const struct series_set *set, size_t i);

/** series_set__free() - accepts NULL. */
void series_set__free(struct series_set *set);

#endif /* CTXPROF_SERIES_H */
