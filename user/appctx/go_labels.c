// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "appctx/go_binary.h"
#include "appctx/go_labels.h"
#include "appctx/otel_thread_ctx.h"
#include "elf/elf_file.h"
#include "processes/mapped_file.h"
#include "processes/proc_maps.h"
#include "processes/process_state.h"
#include "util/utf8.h"

struct go_proc {
	struct go_labels *gl;
	struct go_proc *next, **pprev; /* in gl->procs */
	struct process_state *st;      /* whose @go this is */
	uint32_t pid;
	uint32_t exec_id;
	bool in_map; /* its layout is in the sampler's map */
};

/* executables found not to be Go, remembered at most (an exec churn's programs) */
#define NOT_GO_MAX 4096

struct go_labels {
	int map_fd;
	int verbose;
	struct go_proc *procs;
	struct go_labels_stats st;
	struct file_id_set *not_go; /* by the identity their mapping was resolved to */
};

struct go_labels *go_labels__new(int map_fd, int verbose)
{
	struct go_labels *gl = calloc(1, sizeof(*gl));

	if (!gl)
		return NULL;
	gl->map_fd = map_fd;
	gl->verbose = verbose;
	gl->not_go = file_id_set__new(NOT_GO_MAX);
	if (!gl->not_go) {
		free(gl);
		return NULL;
	}
	return gl;
}

/* @pid's executable, as the inode it maps */
static enum go_binary_status inspect(struct go_labels *gl, pid_t pid, const struct proc_maps *all,
				     const struct mappings *snap, struct go_binary *bin,
				     const char **why)
{
	const struct proc_map *exe = mapped_file__exe(pid, all);
	const struct file_id *id;
	enum go_binary_status s;
	struct elf_file *ef;
	int root_fd = -1, fd;

	memset(bin, 0, sizeof(*bin));
	/* a kernel thread, or gone already: nothing to tell */
	if (!exe) {
		*why = "no executable mapping found";
		return GO_BINARY_NOT_GO;
	}
	/* a program seen before and not Go (each exec of /bin/true...): no open */
	id = mappings__file_id(snap, exe->inode, exe->dev_major, exe->dev_minor);
	if (id && file_id_set__has(gl->not_go, id)) {
		*why = "not a Go program (seen before)";
		return GO_BINARY_NOT_GO;
	}
	fd = mapped_file__open(pid, exe, &root_fd);
	if (root_fd >= 0)
		close(root_fd);
	if (fd < 0) {
		*why = "the executable could not be opened";
		return GO_BINARY_UNREADABLE;
	}
	ef = elf_file__open_fd(fd);
	close(fd);
	if (!ef) {
		*why = "the executable is not ELF we read";
		return GO_BINARY_NOT_GO;
	}
	s = go_binary__inspect(ef, bin, why);
	elf_file__free(ef);
	if (s == GO_BINARY_NOT_GO && id)
		file_id_set__add(gl->not_go, id);
	return s;
}

static struct go_proc *proc_new(struct go_labels *gl, struct process_state *st)
{
	struct go_proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->gl = gl;
	p->st = st;
	p->pid = st->pid;
	p->exec_id = st->exec_id;
	p->next = gl->procs;
	if (p->next)
		p->next->pprev = &p->next;
	p->pprev = &gl->procs;
	gl->procs = p;
	return p;
}

void go_labels__changed(void *ctx, struct process_state *st, struct mappings *snap,
			const struct proc_maps *all)
{
	struct go_labels *gl = ctx;
	struct go_binary bin;
	enum go_binary_status s;
	const char *why = "";
	struct go_proc *p;
	bool retired;

	pthread_mutex_lock(&st->lock);
	retired = st->retired;
	pthread_mutex_unlock(&st->lock);
	/* one look per image; a forked child's first read is its own image's */
	if (st->go || retired || !all)
		return;
	s = inspect(gl, st->pid, all, snap, &bin, &why);
	if (s == GO_BINARY_NOT_GO)
		return;
	if (s == GO_BINARY_UNREADABLE) {
		gl->st.unreadable++;
	} else if (s == GO_BINARY_UNSUPPORTED) {
		if (bin.version[0] && !go_binary__layout(bin.minor))
			gl->st.unsupported_version++;
		else
			gl->st.unsupported_build++;
	}
	if (s != GO_BINARY_OK) {
		if (gl->verbose)
			fprintf(stderr, "ctxprof: pid %u: Go labels not read (%s): %s\n", st->pid,
				bin.version[0] ? bin.version : "Go version unknown", why);
		return;
	}
	p = proc_new(gl, st);
	if (!p)
		return;
	st->go = p;
	bin.ref.exec_id = st->exec_id;
	if (bpf_map_update_elem(gl->map_fd, &p->pid, &bin.ref, BPF_ANY)) {
		gl->st.map_full++;
		return;
	}
	p->in_map = true;
	gl->st.processes++;
	if (gl->verbose)
		fprintf(stderr, "ctxprof: pid %u: Go %s, labels read (g at fsbase%+d)\n", st->pid,
			bin.version, bin.tls_g);
}

/* take @p's layout out of the sampler's map, unless another image put its own there */
static void unmap(struct go_proc *p)
{
	struct go_labels_ref ref;

	if (!p->in_map)
		return;
	if (!bpf_map_lookup_elem(p->gl->map_fd, &p->pid, &ref) && ref.exec_id == p->exec_id)
		bpf_map_delete_elem(p->gl->map_fd, &p->pid);
	p->in_map = false;
}

void go_labels__poll(struct go_labels *gl)
{
	struct go_proc *p;
	bool retired;

	for (p = gl->procs; p; p = p->next) {
		if (!p->in_map)
			continue;
		pthread_mutex_lock(&p->st->lock);
		retired = p->st->retired;
		pthread_mutex_unlock(&p->st->lock);
		if (retired)
			unmap(p);
	}
}

void go_labels__release(struct go_proc *p)
{
	if (!p)
		return;
	unmap(p);
	*p->pprev = p->next;
	if (p->next)
		p->next->pprev = p->pprev;
	p->st->go = NULL;
	free(p);
}

struct go_labels *go_labels__of(const struct go_proc *p)
{
	return p ? p->gl : NULL;
}

void go_labels__stats(const struct go_labels *gl, struct go_labels_stats *st)
{
	*st = gl->st;
}

void go_labels__free(struct go_labels *gl)
{
	if (!gl)
		return;
	file_id_set__free(gl->not_go);
	free(gl);
}

/* the entries of @r, walked within @r->size bytes: -EINVAL unless they fill it exactly */
static int walk(const struct go_labels_record *r, struct go_label *out)
{
	const uint8_t *e = (const uint8_t *)(r + 1);
	size_t pos = 0, n = 0;

	while (pos < r->size && n < GO_LABELS_MAX) {
		if (r->size - pos < 2 || e[pos] > GO_LABEL_KEY_MAX ||
		    e[pos + 1] > GO_LABEL_VALUE_MAX || r->size - pos - 2 < e[pos] + e[pos + 1])
			return -EINVAL;
		if (out)
			out[n] = (struct go_label){
				.key = e + pos + 2,
				.key_len = e[pos],
				.value = e + pos + 2 + e[pos],
				.value_len = e[pos + 1],
			};
		pos += 2 + e[pos] + e[pos + 1];
		n++;
	}
	return pos == r->size && n == r->nr ? (int)n : -EINVAL;
}

int go_labels__from_sample(const struct sample_record *rec, size_t size,
			   const struct go_labels_record **out)
{
	size_t off = sizeof(*rec) + (size_t)(rec->nr_kframes + rec->nr_uframes) * sizeof(__u64);
	const struct otel_thread_record *otel;
	const struct go_labels_record *r;

	if (!(rec->flags & SAMPLE_F_GO_LABELS))
		return 0;
	if (otel_thread_ctx__from_sample(rec, size, &otel) < 0)
		return -EINVAL;
	if (rec->flags & SAMPLE_F_OTEL)
		off += sizeof(*otel) + otel->attrs_size;
	off = (off + 7) & ~(size_t)7;
	if (size < off || size - off < sizeof(*r))
		return -EINVAL;
	r = (const void *)((const uint8_t *)rec + off);
	if (!r->nr || r->nr > GO_LABELS_MAX || r->size > GO_LABELS_BYTES ||
	    size - off - sizeof(*r) < r->size || walk(r, NULL) < 0)
		return -EINVAL;
	*out = r;
	return 1;
}

size_t go_labels__decode(const struct go_labels_record *r, struct go_label *out)
{
	int n = walk(r, out);

	return n < 0 ? 0 : (size_t)n;
}

/* a key or value that a pprof label can carry */
static bool label_ok(const uint8_t *s, size_t len)
{
	return utf8_valid((const char *)s, len) && !memchr(s, '\0', len);
}

size_t go_labels__labels(struct go_labels *gl, const struct go_labels_record *r,
			 struct go_label_str *out, struct go_label_buf *buf)
{
	struct go_label l[GO_LABELS_MAX];
	size_t n = go_labels__decode(r, l), i, used = 0, k = 0;
	char *key, *value;

	for (i = 0; i < n; i++) {
		if (!label_ok(l[i].key, l[i].key_len) || !label_ok(l[i].value, l[i].value_len)) {
			if (gl)
				gl->st.bad_values++;
			continue;
		}
		/* each entry's two length bytes make room for the two NULs */
		key = buf->bytes + used;
		memcpy(key, l[i].key, l[i].key_len);
		key[l[i].key_len] = '\0';
		value = key + l[i].key_len + 1;
		memcpy(value, l[i].value, l[i].value_len);
		value[l[i].value_len] = '\0';
		used += l[i].key_len + l[i].value_len + 2;
		out[k++] = (struct go_label_str){key, value};
	}
	return k;
}
