// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * series - a process's series in a profile store, and an interval split by
 * them.  See series.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "appctx/otel_context.h"
#include "export/series.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/htable.h"

/* @src into @dst (@len bytes), each byte @keep refuses as '_' */
static void put_clean(char *dst, size_t len, const char *src, bool (*keep)(unsigned char c))
{
	size_t i;

	for (i = 0; src[i] && i + 1 < len; i++)
		dst[i] = keep((unsigned char)src[i]) ? src[i] : '_';
	dst[i] = '\0';
}

/* what Pyroscope's labelset parser takes in an application name */
static bool service_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-' || c == '/';
}

/* what ends no label value early and reads the same back */
static bool value_char(unsigned char c)
{
	return c > ' ' && c < 0x7f && c != ',' && c != '{' && c != '}' && c != '"';
}

static const char *otel_service(const struct process_state *ps)
{
	struct otel_label l[OTEL_CONTEXT_MAX_LABELS];
	size_t n, i;

	n = otel_context__resource_labels(ps->otel, l);
	for (i = 0; i < n; i++)
		if (!strcmp(l[i].key, "service.name") && l[i].value[0])
			return l[i].value;
	return NULL;
}

void series__of(const struct process_state *ps, const char *node, struct series *out)
{
	const char *svc = ps ? otel_service(ps) : NULL;
	char kube[2 * POD_META_NAME_LEN + 1], id[13];

	memset(out, 0, sizeof(*out));
	if (svc) {
		out->source = SERIES_FROM_OTEL;
	} else if (ps && ps->kube.pod[0] && ps->kube.container[0]) {
		snprintf(kube, sizeof(kube), "%s/%s", ps->kube.ns, ps->kube.container);
		svc = kube;
		out->source = SERIES_FROM_KUBERNETES;
	} else if (ps && ps->container_id[0]) {
		/* the short form docker and crictl show */
		memcpy(id, ps->container_id, sizeof(id) - 1);
		id[sizeof(id) - 1] = '\0';
		svc = id;
		out->source = SERIES_FROM_CONTAINER;
	} else if (ps && ps->comm[0]) {
		svc = ps->comm;
		out->source = SERIES_FROM_COMM;
	} else {
		svc = "unknown";
		out->source = SERIES_FROM_NOTHING;
	}
	put_clean(out->service, sizeof(out->service), svc, service_char);
	if (ps && ps->kube.pod[0]) {
		put_clean(out->pod, sizeof(out->pod), ps->kube.pod, value_char);
		put_clean(out->ns, sizeof(out->ns), ps->kube.ns, value_char);
		put_clean(out->container, sizeof(out->container), ps->kube.container, value_char);
	}
	if (node)
		put_clean(out->node, sizeof(out->node), node, value_char);
}

int series__name(const struct series *s, char *buf, size_t len)
{
	const char *keys[] = {"pod", "namespace", "container", "node"};
	const char *values[] = {s->pod, s->ns, s->container, s->node};
	size_t n, i;
	int w;

	w = snprintf(buf, len, "%s{", s->service);
	if (w < 0 || (size_t)w >= len)
		return -ENAMETOOLONG;
	n = (size_t)w;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!values[i][0])
			continue;
		w = snprintf(buf + n, len - n, "%s%s=%s", buf[n - 1] == '{' ? "" : ",", keys[i],
			     values[i]);
		if (w < 0 || (size_t)w >= len - n)
			return -ENAMETOOLONG;
		n += (size_t)w;
	}
	if (n + 2 > len)
		return -ENAMETOOLONG;
	buf[n++] = '}';
	buf[n] = '\0';
	return (int)n;
}

struct series_entry {
	char *name;
	struct exporter *e;
};

struct series_set {
	struct calltrace_storage *traces;
	struct symbolizer *sym;
	struct export_opts opts;
	struct series_entry *entries;
	size_t nr, cap;
	struct htable index; /* name -> entry */
	/* the last row's image and its entry: rows of one process come in runs */
	const struct process_state *last_ps;
	size_t last;
};

struct series_set *series_set__new(struct calltrace_storage *traces, struct symbolizer *sym,
				   const struct export_opts *opts)
{
	struct series_set *set = calloc(1, sizeof(*set));

	if (!set)
		return NULL;
	set->traces = traces;
	set->sym = sym;
	set->opts = *opts;
	set->last = SIZE_MAX;
	return set;
}

static bool entry_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct series_entry *e = ctx;

	return !strcmp(e[idx].name, key);
}

/* the entry of series @name, made on first sight; SIZE_MAX on failure */
static size_t entry_of(struct series_set *set, const char *name)
{
	uint32_t hash = (uint32_t)hash_bytes(name, strlen(name));
	uint32_t idx = htable__find(&set->index, hash, entry_eq, set->entries, name);
	struct series_entry *e;

	if (idx != HTABLE_NONE)
		return idx;
	if (array_grow((void **)&set->entries, &set->cap, set->nr + 1, sizeof(*set->entries), 16))
		return SIZE_MAX;
	e = &set->entries[set->nr];
	e->name = strdup(name);
	e->e = e->name ? exporter__new(set->traces, set->sym, &set->opts) : NULL;
	if (!e->e || htable__insert(&set->index, hash, (uint32_t)set->nr)) {
		exporter__free(e->e);
		free(e->name);
		return SIZE_MAX;
	}
	return set->nr++;
}

int series_set__add_row(struct series_set *set, struct exporter *src, const struct sample_row *row)
{
	const struct process_state *ps = exporter__row_state(src, row);
	char name[SERIES_NAME_MAX];
	struct series s;
	size_t i;

	if (set->last == SIZE_MAX || ps != set->last_ps) {
		series__of(ps, set->opts.node, &s);
		if (series__name(&s, name, sizeof(name)) < 0)
			return -ENAMETOOLONG;
		i = entry_of(set, name);
		if (i == SIZE_MAX)
			return -ENOMEM;
		set->last = i;
		set->last_ps = ps;
	}
	return exporter__add_row(set->entries[set->last].e, row);
}

size_t series_set__nr(const struct series_set *set)
{
	return set->nr;
}

const char *series_set__name(const struct series_set *set, size_t i)
{
	return set->entries[i].name;
}

struct exporter *series_set__exporter(const struct series_set *set, size_t i)
{
	return set->entries[i].e;
}

void series_set__free(struct series_set *set)
{
	size_t i;

	if (!set)
		return;
	for (i = 0; i < set->nr; i++) {
		exporter__free(set->entries[i].e);
		free(set->entries[i].name);
	}
	free(set->entries);
	htable__destroy(&set->index);
	free(set);
}
