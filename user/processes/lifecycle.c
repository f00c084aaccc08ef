// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lifecycle - loader and ring consumer for bpf/lifecycle.bpf.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "util/errmsg.h"
#include "processes/exe_cache.h"
#include "processes/lifecycle.h"
#include "processes/proc_scan.h"
#include "lifecycle.skel.h"
#include "util/percpu_stats.h"

/* fork, exec, exit and rename events of ~100 bytes: thousands of them, and
 * mapped twice (RSS 2 MiB) */
#define DEFAULT_RING_BYTES (1u << 20)

struct lifecycle {
	struct lifecycle_bpf *skel;
	struct ring_buffer *rb;
	struct thread_registry *r;
	char *proc_root;
	struct exe_cache *exes; /* NULL: no memory for it, /proc read at every exec */
	lifecycle_event_fn on_event;
	void *ctx;
	struct lifecycle_counters counters; /* polling thread only */
	/* @counters as of the last poll, for other threads (lifecycle__counters()) */
	pthread_mutex_t pub_lock;
	struct lifecycle_counters pub;
};

static const char *const stat_names[LIFECYCLE_STAT_MAX] = {
	[LIFECYCLE_STAT_EVENTS] = "events",
	[LIFECYCLE_STAT_EMITTED] = "emitted",
	[LIFECYCLE_STAT_DROP_RING_FULL] = "ring_full",
	[LIFECYCLE_STAT_DROP_BAD_COMM] = "bad_comm",
	[LIFECYCLE_STAT_FILENAME_ERR] = "filename_error",
};

const char *lifecycle_stat_name(enum lifecycle_stat stat)
{
	return stat < LIFECYCLE_STAT_MAX ? stat_names[stat] : "unknown";
}

/* start_boottime (ns) in the clock ticks of /proc/PID/stat field 22: the
 * kernel divides by NSEC_PER_SEC / USER_HZ, so both sides agree exactly */
static uint64_t ns_to_ticks(uint64_t ns)
{
	static uint64_t ns_per_tick;

	if (!ns_per_tick) {
		long hz = sysconf(_SC_CLK_TCK);

		ns_per_tick = 1000000000ull / (hz > 0 ? hz : 100);
	}
	return ns / ns_per_tick;
}

/* exe and (if @cgroup) cgroup of @pid from /proc, if it is still incarnation @start */
static struct proc_process *read_proc(const char *proc_root, uint32_t pid, uint64_t start,
				      bool cgroup, struct lifecycle_counters *c)
{
	struct proc_process *proc = malloc(sizeof(*proc));

	if (proc && !proc_scan__read_process(proc_root, pid, proc, cgroup) &&
	    proc->stat.starttime == start) {
		c->proc_reads++;
		return proc;
	}
	c->proc_misses++;
	free(proc);
	return NULL;
}

/* the cgroup id process @pid's image was read for, 0 if unknown */
static uint64_t known_cgroup_id(struct thread_registry *r, uint32_t pid)
{
	const struct process_info *p;
	uint64_t id = 0;

	thread_registry__read_lock();
	p = thread_registry__lookup_process(r, pid);
	if (p)
		id = process_info__image(p)->cgroup_id;
	thread_registry__read_unlock();
	return id;
}

static int apply_fork(struct thread_registry *r, const struct lifecycle_record *rec,
		      const char *proc_root, struct lifecycle_counters *c)
{
	struct thread_desc td = {
		.tid = rec->tid,
		.pid = rec->pid,
		.ppid = rec->ppid,
		.ptid = rec->ptid,
		.start = ns_to_ticks(rec->start_ns),
	};
	struct process_desc pd = {
		.pid = rec->pid,
		.ppid = rec->ppid,
		.start = ns_to_ticks(rec->pstart_ns),
		.exec_id = rec->exec_id,
	};
	struct proc_process *proc = NULL;
	uint64_t parent_id;
	int err;

	memcpy(td.comm, rec->comm, sizeof(td.comm));
	/* a new process copies its parent's image and, unless born into
	 * another cgroup (clone3 CLONE_INTO_CGROUP), its cgroup: read /proc
	 * only then.  The scan does not learn ids: a child of a scanned
	 * parent takes the path and teaches the registry its id. */
	pd.cgroup_id = rec->cgroup_id;
	if (rec->type == LIFECYCLE_FORK && rec->cgroup_id) {
		parent_id = known_cgroup_id(r, rec->ppid);
		if (parent_id && parent_id != rec->cgroup_id)
			proc = read_proc(proc_root, rec->pid, pd.start, true, c);
		if (proc)
			pd.cgroup = proc->cgroup;
	}
	err = thread_registry__insert(r, &td, &pd, 0);
	free(proc);
	return err;
}

static int apply_exec(struct thread_registry *r, const struct lifecycle_record *rec,
		      const char *proc_root, struct exe_cache *exes, struct lifecycle_counters *c)
{
	struct exec_desc ed = {
		.tid = rec->tid,
		.old_tid = rec->ptid,
		.pd =
			{
				.pid = rec->pid,
				.ppid = rec->ppid,
				.start = ns_to_ticks(rec->pstart_ns),
				/* the path given to execve: relative, or a script's */
				.exe = rec->filename,
				.cgroup_id = rec->cgroup_id,
				.exec_id = rec->exec_id,
			},
	};
	/* the record's file as st_dev encodes its device */
	uint64_t dev = makedev(rec->exe_dev >> 20, rec->exe_dev & 0xfffff);
	struct proc_process *proc = NULL;
	const char *known;
	bool cgroup;
	int err;

	memcpy(ed.pd.comm, rec->comm, sizeof(ed.pd.comm));
	/* /proc/PID/exe is the binary really mapped, and the cgroup may have
	 * moved since the fork (a container runtime does that before exec):
	 * read unless the file was read before under the name exec was given
	 * and the cgroup id is the one the image before the exec was read for */
	cgroup = !rec->cgroup_id || known_cgroup_id(r, rec->pid) != rec->cgroup_id;
	known = exes ? exe_cache__find(exes, dev, rec->exe_ino, rec->filename) : NULL;
	if (known && !cgroup) {
		c->exe_known++;
		ed.pd.exe = known;
	} else {
		proc = read_proc(proc_root, rec->pid, ed.pd.start, cgroup, c);
	}
	if (proc) {
		if (proc->exe[0])
			ed.pd.exe = proc->exe;
		if (cgroup)
			ed.pd.cgroup = proc->cgroup;
		/* the stat after the readlink found the record's file: the path names it */
		if (exes && proc->exe_ino == rec->exe_ino && proc->exe_dev == dev)
			exe_cache__add(exes, dev, rec->exe_ino, rec->filename, proc->exe);
	}
	err = thread_registry__exec(r, &ed);
	free(proc);
	return err;
}

int lifecycle_apply(struct thread_registry *r, const struct lifecycle_record *in, size_t size,
		    const char *proc_root, struct exe_cache *exes,
		    struct lifecycle_counters *counters)
{
	struct lifecycle_counters dummy;
	struct lifecycle_counters *c = counters ? counters : &dummy;
	struct lifecycle_record rec;
	int err;

	c->records++;
	if (size != sizeof(rec) || in->type == 0 || in->type >= LIFECYCLE_TYPE_MAX) {
		c->malformed++;
		return -EINVAL;
	}
	/* BPF terminates the strings; a copy makes sure of it */
	rec = *in;
	rec.comm[sizeof(rec.comm) - 1] = '\0';
	rec.filename[sizeof(rec.filename) - 1] = '\0';
	c->by_type[rec.type]++;

	switch (rec.type) {
	case LIFECYCLE_FORK:
	case LIFECYCLE_THREAD:
		err = apply_fork(r, &rec, proc_root, c);
		break;
	case LIFECYCLE_EXEC:
		err = apply_exec(r, &rec, proc_root, exes, c);
		break;
	case LIFECYCLE_EXIT:
		err = thread_registry__remove(r, rec.tid, ns_to_ticks(rec.start_ns));
		break;
	default: /* LIFECYCLE_RENAME */
		err = thread_registry__rename(r, rec.tid, ns_to_ticks(rec.start_ns), rec.comm);
		break;
	}
	switch (err) {
	case 0:
		c->applied++;
		break;
	case -EEXIST:
		c->duplicate++;
		break;
	case -ESTALE:
		c->stale++;
		break;
	case -ENOENT:
		c->unknown++;
		break;
	default:
		c->failed++;
	}
	return err;
}

/*
 * Attach the exit program first and the fork program last: a thread whose
 * birth we see is then sure to die visibly.  The skeleton's __attach() goes
 * in object order, fork first: a thread born and gone in between was left
 * in the registry forever.  Links land in skel->links, so __destroy() frees
 * them.
 */
static int attach_in_order(struct lifecycle_bpf *skel)
{
	struct {
		struct bpf_program *prog;
		struct bpf_link **link;
	} order[] = {
		{skel->progs.lifecycle_exit, &skel->links.lifecycle_exit},
		{skel->progs.lifecycle_rename, &skel->links.lifecycle_rename},
		{skel->progs.lifecycle_exec, &skel->links.lifecycle_exec},
		{skel->progs.lifecycle_fork, &skel->links.lifecycle_fork},
	};
	size_t i;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		*order[i].link = bpf_program__attach(order[i].prog);
		if (!*order[i].link)
			return -errno;
	}
	return 0;
}

static int handle_record(void *ctx, void *data, size_t size)
{
	struct lifecycle *l = ctx;
	int err;

	err = lifecycle_apply(l->r, data, size, l->proc_root, l->exes, &l->counters);
	if (l->on_event && err != -EINVAL)
		l->on_event(l->ctx, data, err);
	return 0;
}

struct lifecycle *lifecycle__open(const struct lifecycle_opts *opts, struct thread_registry *r,
				  char *err_msg, size_t err_len)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts, .btf_custom_path = opts->btf_path);
	size_t ring_bytes = opts->ring_bytes ? opts->ring_bytes : DEFAULT_RING_BYTES;
	struct lifecycle *l;
	int err;

	l = calloc(1, sizeof(*l));
	if (l)
		pthread_mutex_init(&l->pub_lock, NULL);
	if (!l)
		return NULL;
	l->r = r;
	/* without it (no memory): every exec reads /proc, as before */
	l->exes = exe_cache__new();
	l->on_event = opts->on_event;
	l->ctx = opts->ctx;
	if (opts->proc_root) {
		l->proc_root = strdup(opts->proc_root);
		if (!l->proc_root) {
			err = -ENOMEM;
			goto err_free;
		}
	}
	l->skel = lifecycle_bpf__open_opts(&open_opts);
	if (!l->skel) {
		err = -errno;
		set_err(err_msg, err_len, "cannot open the BPF lifecycle object: %s",
			strerror(errno));
		goto err_free;
	}
	/* wake us when a quarter full: far from overflowing, yet rare */
	l->skel->rodata->wakeup_bytes = ring_bytes / 4;
	l->skel->rodata->only_tgid = opts->only_pid;
	err = bpf_map__set_max_entries(l->skel->maps.lifecycle_ring, ring_bytes);
	if (err) {
		set_err(err_msg, err_len, "bad lifecycle ring size %zu: %s", ring_bytes,
			strerror(-err));
		goto err_free;
	}
	err = lifecycle_bpf__load(l->skel);
	if (err) {
		set_err(err_msg, err_len, "cannot load the BPF lifecycle programs: %s%s",
			strerror(-err),
			err == -EPERM ? " (missing CAP_BPF/CAP_PERFMON, or locked down kernel?)"
				      : "");
		goto err_free;
	}
	l->rb = ring_buffer__new(bpf_map__fd(l->skel->maps.lifecycle_ring), handle_record, l, NULL);
	if (!l->rb) {
		err = -errno;
		set_err(err_msg, err_len, "cannot set up the lifecycle ring consumer: %s",
			strerror(errno));
		goto err_free;
	}
	err = attach_in_order(l->skel);
	if (err) {
		set_err(err_msg, err_len, "cannot attach the lifecycle tracepoints: %s%s",
			strerror(-err), err == -ENOENT ? " (kernel without BTF tracepoints?)" : "");
		goto err_free;
	}
	return l;

err_free:
	lifecycle__free(l);
	errno = -err;
	return NULL;
}

/* a copy of the polling thread's counters for the others, once a poll */
static void publish(struct lifecycle *l)
{
	pthread_mutex_lock(&l->pub_lock);
	l->pub = l->counters;
	pthread_mutex_unlock(&l->pub_lock);
}

int lifecycle__poll(struct lifecycle *l, int timeout_ms)
{
	int n, m;

	/* records submitted without wakeup are not signalled on epoll: wait
	 * for the watermark or the timeout, then sweep the ring */
	n = ring_buffer__poll(l->rb, timeout_ms);
	if (n < 0)
		return n;
	m = ring_buffer__consume(l->rb);
	publish(l);
	if (m < 0)
		return m;
	return n + m;
}

int lifecycle__fd(const struct lifecycle *l)
{
	return ring_buffer__epoll_fd(l->rb);
}

int lifecycle__consume(struct lifecycle *l)
{
	int n = ring_buffer__consume(l->rb);

	publish(l);
	return n;
}

int lifecycle__read_stats(struct lifecycle *l, uint64_t *out)
{
	return percpu_stats__read(bpf_map__fd(l->skel->maps.lifecycle_stats), LIFECYCLE_STAT_MAX,
				  out);
}

void lifecycle__counters(struct lifecycle *l, struct lifecycle_counters *out)
{
	pthread_mutex_lock(&l->pub_lock);
	*out = l->pub;
	pthread_mutex_unlock(&l->pub_lock);
}

void lifecycle__free(struct lifecycle *l)
{
	if (!l)
		return;
	ring_buffer__free(l->rb);
	lifecycle_bpf__destroy(l->skel);
	free(l->proc_root);
	exe_cache__free(l->exes);
	pthread_mutex_destroy(&l->pub_lock);
	free(l);
}
