// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "appctx/otel_context.h"
#include "appctx/otel_process_ctx.h"
#include "appctx/otel_tls.h"
#include "processes/proc_maps.h"
#include "processes/proc_mem.h"
#include "processes/process_state.h"
#include "util/clock.h"
#include "util/utf8.h"

/* an unknown key index makes a process context be read again at most this often */
#define KEY_REFRESH_NS 1000000000ull

enum tls_state {
	TLS_NOT_TRIED = 0,
	TLS_IN_MAP,   /* located, in the sampler's map */
	TLS_NOT_HERE, /* located nowhere, for this maps generation and context */
};

struct otel_proc {
	struct otel_context *oc;
	struct otel_proc *next, **pprev; /* in oc->procs */
	struct process_state *st;	 /* whose @otel this is */
	uint32_t pid;
	uint32_t exec_id;
	struct proc_mem *mem;
	struct proc_maps *maps;	     /* every mapping, as the last change handed them */
	uint64_t hdr_addr;	     /* the OTEL_CTX mapping's start */
	uint64_t published;	     /* published_at_ns of @pc, or of the refused header */
	struct otel_process_ctx *pc; /* the latest decoded context; NULL until one */
	enum tls_state tls;
	uint32_t tls_maps_gen;	 /* the maps generation location was tried in */
	bool tls_wanted;	 /* @pc announces a thread context we read */
	uint64_t key_refresh_ns; /* when an unknown key index last caused a read */
};

struct otel_context {
	int map_fd;
	int verbose;
	struct otel_proc *procs;
	struct otel_context_stats st;
};

struct otel_context *otel_context__new(int tls_map_fd, int verbose)
{
	struct otel_context *oc = calloc(1, sizeof(*oc));

	if (!oc)
		return NULL;
	oc->map_fd = tls_map_fd;
	oc->verbose = verbose;
	return oc;
}

static bool is_ctx_mapping(const struct proc_map *m)
{
	static const char *const names[] = {
		"[anon_shmem:" OTEL_CTX_NAME "]",
		"[anon:" OTEL_CTX_NAME "]",
		"/memfd:" OTEL_CTX_NAME,
	};
	size_t i;

	/* the OTEP's rule: names starting with one of these */
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(m->path, names[i], strlen(names[i])))
			return true;
	return false;
}

struct mem_ctx {
	struct proc_mem *mem;
	const struct proc_maps *maps;
};

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct mem_ctx *m = ctx;

	return proc_mem__read(m->mem, m->maps, addr, buf, len);
}

/* take @p's location out of the sampler's map, unless another image put its own there */
static void tls_unmap(struct otel_proc *p)
{
	struct otel_tls_ref ref;

	if (p->tls != TLS_IN_MAP)
		return;
	if (!bpf_map_lookup_elem(p->oc->map_fd, &p->pid, &ref) && ref.exec_id == p->exec_id)
		bpf_map_delete_elem(p->oc->map_fd, &p->pid);
	p->tls = TLS_NOT_TRIED;
}

static void tls_locate(struct otel_proc *p, const struct proc_maps *maps, uint32_t maps_gen)
{
	struct otel_context *oc = p->oc;
	struct otel_tls_ref ref;
	enum otel_tls_status s;
	const char *why;

	if (!p->tls_wanted || p->tls == TLS_IN_MAP ||
	    (p->tls == TLS_NOT_HERE && p->tls_maps_gen == maps_gen))
		return;
	p->tls_maps_gen = maps_gen;
	s = otel_tls__locate(p->pid, maps, p->mem, &ref, &why);
	if (s == OTEL_TLS_FOUND) {
		ref.exec_id = p->exec_id;
		if (bpf_map_update_elem(oc->map_fd, &p->pid, &ref, BPF_ANY)) {
			oc->st.map_full++;
			p->tls = TLS_NOT_HERE;
			return;
		}
		p->tls = TLS_IN_MAP;
		oc->st.tls_found++;
		return;
	}
	/* counted once per image: a later try that fails again is not a new failure */
	if (p->tls == TLS_NOT_TRIED) {
		if (s == OTEL_TLS_NO_SYMBOL)
			oc->st.tls_no_symbol++;
		else if (s == OTEL_TLS_UNSUPPORTED)
			oc->st.tls_unsupported++;
		else
			oc->st.tls_unreadable++;
		if (oc->verbose)
			fprintf(stderr,
				"ctxprof: pid %u: OpenTelemetry thread context not read: %s\n",
				p->pid, why);
	}
	p->tls = TLS_NOT_HERE;
}

/*
 * Read @p's process context again if it was published since: the cheap
 * test first (published_at_ns, 8 bytes), the whole protocol when it moved.
 */
static void read_context(struct otel_proc *p, const struct proc_maps *maps)
{
	struct otel_context *oc = p->oc;
	struct mem_ctx m = {p->mem, maps};
	struct otel_process_ctx_header hdr;
	struct otel_process_ctx *pc;
	uint64_t published;
	void *payload;
	int err;

	if (mem_read(&m, p->hdr_addr + offsetof(struct otel_process_ctx_header, published_at_ns),
		     &published, sizeof(published)))
		return; /* gone, or unmapped since the maps were read: the next refresh says */
	if (published && published == p->published)
		return;
	err = otel_process_ctx__read(mem_read, &m, p->hdr_addr, &hdr, &payload);
	if (err) {
		if (err == -EINVAL || err == -EPROTONOSUPPORT || err == -EFBIG)
			oc->st.bad_header++;
		else if (err == -EAGAIN)
			oc->st.updating++;
		else
			oc->st.read_errors++;
		/* a refused header is not looked at again until it is republished */
		if (err != -EAGAIN)
			p->published = published;
		if (oc->verbose && err != -EAGAIN)
			fprintf(stderr,
				"ctxprof: pid %u: OpenTelemetry process context refused: %s\n",
				p->pid, strerror(-err));
		return;
	}
	p->published = hdr.published_at_ns;
	pc = otel_process_ctx__decode(payload, hdr.payload_size);
	free(payload);
	if (!pc) {
		oc->st.bad_payload++;
		if (oc->verbose)
			fprintf(stderr,
				"ctxprof: pid %u: OpenTelemetry process context: bad payload\n",
				p->pid);
		return;
	}
	if (!p->pc)
		oc->st.processes++;
	oc->st.reads++;
	oc->st.skipped_values += pc->skipped;
	otel_process_ctx__free(p->pc);
	p->pc = pc;
	p->tls_wanted = otel_process_ctx__thread_schema_ok(pc);
	if (pc->schema && !p->tls_wanted)
		oc->st.other_schema++;
	/* a new context may announce what the last did not: locate again */
	if (p->tls == TLS_NOT_HERE)
		p->tls = TLS_NOT_TRIED;
}

static struct otel_proc *proc_new(struct otel_context *oc, struct process_state *st)
{
	struct otel_proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->mem = proc_mem__open(st->pid);
	if (!p->mem) {
		free(p);
		return NULL;
	}
	p->oc = oc;
	p->st = st;
	p->pid = st->pid;
	p->exec_id = st->exec_id;
	p->next = oc->procs;
	if (p->next)
		p->next->pprev = &p->next;
	p->pprev = &oc->procs;
	oc->procs = p;
	return p;
}

void otel_context__changed(void *ctx, struct process_state *st, struct mappings *snap,
			   const struct proc_maps *all)
{
	struct otel_context *oc = ctx;
	struct otel_proc *p = st->otel;
	const struct proc_map *m = NULL;
	struct proc_maps *copy;
	uint32_t maps_gen;
	bool retired;
	size_t i;

	for (i = 0; i < all->nr && !m; i++)
		if (is_ctx_mapping(&all->maps[i]))
			m = &all->maps[i];
	pthread_mutex_lock(&st->lock);
	maps_gen = st->maps_gen;
	retired = st->retired;
	pthread_mutex_unlock(&st->lock);
	if (!m || retired)
		return;
	copy = proc_maps__dup(all);
	if (!copy)
		return;
	if (!p) {
		p = proc_new(oc, st);
		if (!p) {
			proc_maps__free(copy);
			return;
		}
		st->otel = p;
	}
	proc_maps__free(p->maps);
	p->maps = copy;
	/* another mapping: a new publication, whatever its timestamp */
	if (p->hdr_addr != m->start)
		p->published = 0;
	p->hdr_addr = m->start;
	read_context(p, p->maps);
	tls_locate(p, p->maps, maps_gen);
}

void otel_context__poll(struct otel_context *oc)
{
	struct otel_proc *p;
	bool retired;

	for (p = oc->procs; p; p = p->next) {
		pthread_mutex_lock(&p->st->lock);
		retired = p->st->retired;
		pthread_mutex_unlock(&p->st->lock);
		if (retired) {
			tls_unmap(p);
			continue;
		}
		/* published again since? one 8-byte read says */
		read_context(p, p->maps);
	}
}

/* read @p's context again for an unknown key index, at most once per KEY_REFRESH_NS */
static void refresh_keys(struct otel_proc *p)
{
	uint64_t now = mono_ns();

	if (p->key_refresh_ns && now - p->key_refresh_ns < KEY_REFRESH_NS)
		return;
	p->key_refresh_ns = now;
	p->oc->st.key_refreshes++;
	read_context(p, p->maps);
}

static const char *key_name(const struct otel_proc *p, uint8_t key)
{
	return p->pc && key < p->pc->nr_keys && p->pc->keys[key] && p->pc->keys[key][0]
		       ? p->pc->keys[key]
		       : NULL;
}

static void hex(char *out, const uint8_t *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

size_t otel_context__thread_labels(struct otel_proc *p, const struct otel_thread_record *r,
				   struct otel_label *out, struct otel_label_buf *buf)
{
	struct otel_thread_attr attrs[OTEL_THREAD_ATTRS_DISTINCT];
	/* a process without otel state (its image went): nothing named, nothing counted */
	struct otel_context_stats unused = {}, *st = p ? &p->oc->st : &unused;
	size_t n = 0, na, i, used = 0;
	const char *name;
	bool truncated, refreshed = false;

	if (otel_thread_ctx__has_ids(r)) {
		hex(buf->trace_id, r->trace_id, sizeof(r->trace_id));
		hex(buf->span_id, r->span_id, sizeof(r->span_id));
		out[n++] = (struct otel_label){"trace_id", buf->trace_id};
		out[n++] = (struct otel_label){"span_id", buf->span_id};
	}
	na = otel_thread_ctx__decode_attrs((const uint8_t *)(r + 1), r->attrs_size, attrs,
					   &truncated);
	if (truncated)
		st->attrs_truncated++;
	for (i = 0; i < na; i++) {
		name = p ? key_name(p, attrs[i].key) : NULL;
		/* the OTEP: an unknown index makes the reader refresh its map */
		if (!name && p && !refreshed) {
			refreshed = true;
			refresh_keys(p);
			name = key_name(p, attrs[i].key);
		}
		if (!name) {
			st->unknown_keys++;
			continue;
		}
		if (!utf8_valid(attrs[i].value, attrs[i].len) ||
		    memchr(attrs[i].value, '\0', attrs[i].len)) {
			st->bad_values++;
			continue;
		}
		memcpy(buf->values + used, attrs[i].value, attrs[i].len);
		buf->values[used + attrs[i].len] = '\0';
		out[n++] = (struct otel_label){name, buf->values + used};
		used += attrs[i].len + 1;
	}
	return n;
}

size_t otel_context__resource_labels(const struct otel_proc *p, struct otel_label *out)
{
	size_t n = 0, i;

	for (i = 0; p && p->pc && i < p->pc->nr_resource; i++)
		out[n++] = (struct otel_label){p->pc->resource[i].key, p->pc->resource[i].value};
	return n;
}

void otel_context__release(struct otel_proc *p)
{
	if (!p)
		return;
	tls_unmap(p);
	*p->pprev = p->next;
	if (p->next)
		p->next->pprev = p->pprev;
	p->st->otel = NULL;
	proc_mem__free(p->mem);
	proc_maps__free(p->maps);
	otel_process_ctx__free(p->pc);
	free(p);
}

void otel_context__stats(const struct otel_context *oc, struct otel_context_stats *st)
{
	*st = oc->st;
}

void otel_context__free(struct otel_context *oc)
{
	free(oc);
}
