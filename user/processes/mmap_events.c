// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mmap_events - PERF_RECORD_MMAP2 records from one dummy perf event per CPU.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "processes/mmap_events.h"
#include "util/errmsg.h"

/* what follows the perf_event_header of a PERF_RECORD_MMAP2 */
struct mmap2_body {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {
			uint8_t build_id_size;
			uint8_t reserved_1;
			uint16_t reserved_2;
			uint8_t build_id[MMAP_EVENTS_BUILD_ID_MAX];
		};
	};
	uint32_t prot, flags;
	/* then the path, NUL-terminated, padded to 8 bytes */
};
_Static_assert(sizeof(struct mmap2_body) == 64, "PERF_RECORD_MMAP2 layout");

/* ... of a PERF_RECORD_LOST */
struct lost_body {
	uint64_t id, lost;
};

/* after every record's body: sample_id_all with PERF_SAMPLE_TID | PERF_SAMPLE_TIME */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
};
_Static_assert(sizeof(struct sample_id) == 16, "sample_id layout");

/* a record's header says its size in 16 bits */
#define MAX_RECORD 65536u

/* one CPU's event and its ring */
struct cpu_event {
	int fd;
	void *base; /* the control page, then the data pages */
	struct mmap_events_ring ring;
};

struct mmap_events {
	pthread_mutex_t lock; /* everything below */
	struct perf_event_attr attr;
	int nr_cpus; /* possible CPUs: the size of the arrays */
	size_t page_size;
	size_t data_size;
	int epoll_fd;
	struct cpu_event **live;     /* [nr_cpus]: the CPU's event, NULL: none */
	struct cpu_event **retiring; /* [nr_cpus]: dead, to be read once more then closed */
	uint8_t *copy;		     /* a record that wraps, put together */
	mmap_events_open_fn open_fn; /* NULL: perf_event_open() */
	void *open_ctx;
	struct mmap_events_stats st;
};

int mmap_events_parse(const void *rec, size_t size, struct mmap_event *ev, uint64_t *lost)
{
	const uint8_t *p = rec;
	struct perf_event_header h;
	struct mmap2_body b;
	struct lost_body l;
	struct sample_id sid;
	const char *path, *nul;
	size_t path_room;

	if (size < sizeof(h))
		return -EINVAL;
	memcpy(&h, p, sizeof(h));
	if (h.size != size)
		return -EINVAL;
	switch (h.type) {
	case PERF_RECORD_MMAP2:
		if (size < sizeof(h) + sizeof(b) + 1 + sizeof(sid))
			return -EINVAL;
		memcpy(&b, p + sizeof(h), sizeof(b));
		memcpy(&sid, p + size - sizeof(sid), sizeof(sid));
		path = (const char *)p + sizeof(h) + sizeof(b);
		path_room = size - sizeof(h) - sizeof(b) - sizeof(sid);
		nul = memchr(path, 0, path_room);
		if (!nul || !b.len || b.addr + b.len < b.addr || b.addr + b.len == 0)
			return -EINVAL;
		memset(ev, 0, sizeof(*ev));
		if (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			if (!b.build_id_size || b.build_id_size > MMAP_EVENTS_BUILD_ID_MAX)
				return -EINVAL;
			ev->build_id_len = b.build_id_size;
			memcpy(ev->build_id, b.build_id, b.build_id_size);
		} else {
			ev->dev_major = b.maj;
			ev->dev_minor = b.min;
			ev->inode = b.ino;
			ev->inode_gen = b.ino_generation;
		}
		ev->pid = b.pid;
		ev->tid = b.tid;
		ev->time_ns = sid.time;
		ev->start = b.addr;
		ev->len = b.len;
		ev->pgoff = b.pgoff;
		ev->prot = b.prot;
		ev->flags = b.flags;
		ev->path = path;
		ev->path_len = (size_t)(nul - path);
		ev->cpu = -1;
		return MMAP_EVENTS_MMAP2;
	case PERF_RECORD_LOST:
		if (size < sizeof(h) + sizeof(l) + sizeof(sid))
			return -EINVAL;
		memcpy(&l, p + sizeof(h), sizeof(l));
		*lost = l.lost;
		return MMAP_EVENTS_LOST;
	default:
		return MMAP_EVENTS_OTHER;
	}
}

/* @len bytes of the ring from offset @off on, across its end */
static void ring_copy(const struct mmap_events_ring *r, size_t off, void *dst, size_t len)
{
	size_t first = r->size - off < len ? r->size - off : len;

	memcpy(dst, r->data + off, first);
	memcpy((uint8_t *)dst + first, r->data, len - first);
}

int mmap_events_ring__read(struct mmap_events_ring *r, int cpu, mmap_events_fn cb, void *ctx,
			   struct mmap_events_stats *st)
{
	/* the kernel publishes head after writing the records below it */
	uint64_t head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = __atomic_load_n(&r->page->data_tail, __ATOMIC_RELAXED);
	struct perf_event_header h;
	struct mmap_event ev;
	uint64_t lost = 0;
	int n = 0;

	if (head - tail > r->size)
		goto resync;
	while (tail != head) {
		size_t off = tail & (r->size - 1);
		const uint8_t *rec = r->data + off;

		if (head - tail < sizeof(h))
			goto resync;
		ring_copy(r, off, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail)
			goto resync;
		if (off + h.size > r->size) {
			ring_copy(r, off, r->copy, h.size);
			rec = r->copy;
		}
		n++;
		st->records++;
		switch (mmap_events_parse(rec, h.size, &ev, &lost)) {
		case MMAP_EVENTS_MMAP2:
			ev.cpu = cpu;
			st->mmap2++;
			if (cb)
				cb(ctx, &ev);
			break;
		case MMAP_EVENTS_LOST:
			st->lost += lost;
			st->lost_records++;
			break;
		case MMAP_EVENTS_OTHER:
			st->other++;
			break;
		default:
			st->malformed++;
			break;
		}
		tail += h.size;
	}
	goto out;
resync:
	st->malformed++;
	tail = head;
out:
	/* the kernel may overwrite what lies below tail once it sees it */
	__atomic_store_n(&r->page->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

static int perf_open(const struct perf_event_attr *attr, int cpu)
{
	int fd = (int)syscall(__NR_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* the event's enabled time: it stands still once the event is dead */
static int read_enabled(int fd, uint64_t *enabled)
{
	uint64_t v[2]; /* the count, then PERF_FORMAT_TOTAL_TIME_ENABLED */
	ssize_t n = read(fd, v, sizeof(v));

	if (n != (ssize_t)sizeof(v))
		return n < 0 ? -errno : -EIO;
	*enabled = v[1];
	return 0;
}

static void cpu_event__free(struct mmap_events *me, struct cpu_event *ce)
{
	if (!ce)
		return;
	if (ce->base)
		munmap(ce->base, me->page_size + me->data_size);
	if (ce->fd >= 0)
		close(ce->fd);
	free(ce);
}

/* map the ring of @fd (taken over) and enable it: the live event of @cpu */
static int cpu_event__start(struct mmap_events *me, int cpu, int fd)
{
	struct epoll_event e = {.events = EPOLLIN, .data.u32 = (uint32_t)cpu};
	struct cpu_event *ce = calloc(1, sizeof(*ce));
	int err;

	if (!ce) {
		close(fd);
		return -ENOMEM;
	}
	ce->fd = fd;
	ce->base = mmap(NULL, me->page_size + me->data_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			0);
	if (ce->base == MAP_FAILED) {
		ce->base = NULL;
		err = -errno;
		goto err_free;
	}
	ce->ring.page = ce->base;
	ce->ring.data = (const uint8_t *)ce->base + me->page_size;
	ce->ring.size = me->data_size;
	ce->ring.copy = me->copy;
	if (epoll_ctl(me->epoll_fd, EPOLL_CTL_ADD, fd, &e)) {
		err = -errno;
		goto err_free;
	}
	/* opened disabled: no record is written before there is a ring for it */
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		err = -errno;
		epoll_ctl(me->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
		goto err_free;
	}
	me->live[cpu] = ce;
	return 0;

err_free:
	cpu_event__free(me, ce);
	return err;
}

static int open_cpu(struct mmap_events *me, int cpu)
{
	int fd = me->open_fn ? me->open_fn(me->open_ctx, cpu) : perf_open(&me->attr, cpu);

	return fd < 0 ? fd : cpu_event__start(me, cpu, fd);
}

/* the first CPU the kernel takes an event on, asking for build ids if it has them */
static int open_first(struct mmap_events *me, int cpu)
{
	int fd = perf_open(&me->attr, cpu);

	/* before 5.12 the bit was reserved, and reserved bits are refused */
	if (fd == -EINVAL) {
		me->attr.build_id = 0;
		fd = perf_open(&me->attr, cpu);
		if (fd < 0)
			me->attr.build_id = 1;
	}
	if (fd < 0)
		return fd;
	me->st.build_id = me->attr.build_id;
	return cpu_event__start(me, cpu, fd);
}

static void init_attr(struct perf_event_attr *a, size_t data_size)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	/* mmap: without it or mmap_data the kernel skips every mapping
	 * (nr_mmap_events); mmap2: the record with device, inode or build id */
	a->mmap = 1;
	a->mmap2 = 1;
	a->build_id = 1;
	a->sample_id_all = 1;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	/* exclude_kernel stays 0: it filters no side-band record, and an
	 * event for every process needs CAP_PERFMON with or without it */
	/* its enabled time tells a dead event (cpu_event__dead()) */
	a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED;
	a->disabled = 1;
	/* wake the poller at each report: a new library's samples are named by
	 * its generation, which the report starts (the reader waits long
	 * otherwise; reports are a handful per process start).  A watermark,
	 * as wakeup_events counts samples only, never these records. */
	a->watermark = 1;
	a->wakeup_watermark = 1;
}

static const char *open_hint(int err)
{
	return err == -EACCES || err == -EPERM ? " (needs CAP_PERFMON or CAP_SYS_ADMIN)" : "";
}

struct mmap_events *mmap_events__new(int nr_pages, char *err_msg, size_t err_len)
{
	struct mmap_events *me;
	int err = 0, cpu, nr = 0;

	if (!nr_pages)
		nr_pages = MMAP_EVENTS_DEFAULT_PAGES;
	if (nr_pages < 0 || nr_pages > (1 << 16) || (nr_pages & (nr_pages - 1))) {
		set_err(err_msg, err_len,
			"mmap events: %d pages per ring: not a power of two up to 65536", nr_pages);
		errno = EINVAL;
		return NULL;
	}
	me = calloc(1, sizeof(*me));
	if (!me) {
		set_err(err_msg, err_len, "mmap events: out of memory");
		return NULL;
	}
	pthread_mutex_init(&me->lock, NULL);
	me->epoll_fd = -1;
	me->page_size = (size_t)sysconf(_SC_PAGESIZE);
	me->data_size = me->page_size * (size_t)nr_pages;
	init_attr(&me->attr, me->data_size);
	me->nr_cpus = libbpf_num_possible_cpus();
	if (me->nr_cpus <= 0) {
		err = me->nr_cpus < 0 ? me->nr_cpus : -ENODEV;
		set_err(err_msg, err_len, "mmap events: cannot count the CPUs: %s", strerror(-err));
		goto err_free;
	}
	me->live = calloc((size_t)me->nr_cpus, sizeof(struct cpu_event *));
	me->retiring = calloc((size_t)me->nr_cpus, sizeof(struct cpu_event *));
	me->copy = malloc(me->data_size < MAX_RECORD ? me->data_size : MAX_RECORD);
	if (!me->live || !me->retiring || !me->copy) {
		err = -ENOMEM;
		set_err(err_msg, err_len, "mmap events: out of memory");
		goto err_free;
	}
	me->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (me->epoll_fd < 0) {
		err = -errno;
		set_err(err_msg, err_len, "mmap events: epoll: %s", strerror(-err));
		goto err_free;
	}
	/* every possible CPU: the kernel refuses an offline one (-ENODEV), and
	 * unlike a read of the online mask it cannot be out of date */
	for (cpu = 0; cpu < me->nr_cpus; cpu++) {
		err = nr ? open_cpu(me, cpu) : open_first(me, cpu);
		if (err == -ENODEV)
			continue;
		if (err) {
			set_err(err_msg, err_len, "mmap events: perf event on CPU %d: %s%s", cpu,
				strerror(-err), open_hint(err));
			goto err_free;
		}
		nr++;
	}
	if (!nr) {
		err = -ENODEV;
		set_err(err_msg, err_len, "mmap events: no online CPU took a perf event");
		goto err_free;
	}
	me->st.cpus_watched = nr;
	return me;

err_free:
	mmap_events__free(me);
	errno = -err;
	return NULL;
}

/* read every ring, the dead ones a last time before closing them; locked */
static int consume_locked(struct mmap_events *me, mmap_events_fn cb, void *ctx)
{
	int cpu, n = 0;

	for (cpu = 0; cpu < me->nr_cpus; cpu++) {
		struct cpu_event *dead = me->retiring[cpu];

		if (dead) {
			n += mmap_events_ring__read(&dead->ring, cpu, cb, ctx, &me->st);
			cpu_event__free(me, dead);
			me->retiring[cpu] = NULL;
		}
		if (me->live[cpu])
			n += mmap_events_ring__read(&me->live[cpu]->ring, cpu, cb, ctx, &me->st);
	}
	return n;
}

int mmap_events__consume(struct mmap_events *me, mmap_events_fn cb, void *ctx)
{
	int n;

	pthread_mutex_lock(&me->lock);
	n = consume_locked(me, cb, ctx);
	pthread_mutex_unlock(&me->lock);
	return n;
}

int mmap_events__poll(struct mmap_events *me, int timeout_ms, mmap_events_fn cb, void *ctx)
{
	/* which rings woke us does not matter: all are read */
	struct epoll_event e[8];

	if (epoll_wait(me->epoll_fd, e, 8, timeout_ms) < 0)
		return -errno;
	return mmap_events__consume(me, cb, ctx);
}

int mmap_events__fd(const struct mmap_events *me)
{
	return me->epoll_fd;
}

const struct perf_event_attr *mmap_events__attr(const struct mmap_events *me)
{
	return &me->attr;
}

void mmap_events__set_opener(struct mmap_events *me, mmap_events_open_fn fn, void *ctx)
{
	pthread_mutex_lock(&me->lock);
	me->open_fn = fn;
	me->open_ctx = ctx;
	pthread_mutex_unlock(&me->lock);
}

/*
 * The kernel took @ce off its CPU for good (the CPU went offline): its
 * enabled time stands still.  A live event's moves between two reads: each
 * read brings it up to date on its CPU.
 */
static bool cpu_event__dead(const struct cpu_event *ce)
{
	uint64_t a = 0, b = 0;

	return read_enabled(ce->fd, &a) || read_enabled(ce->fd, &b) || a == b;
}

int mmap_events__check_cpus(struct mmap_events *me, const bool *online, int n)
{
	int cpu, err, first_err = 0, opened = 0, watched = 0;

	pthread_mutex_lock(&me->lock);
	for (cpu = 0; cpu < me->nr_cpus; cpu++) {
		struct cpu_event *ce = me->live[cpu];

		if (ce && cpu_event__dead(ce)) {
			/* the poller has not read the last dead one yet: next time */
			if (me->retiring[cpu])
				continue;
			epoll_ctl(me->epoll_fd, EPOLL_CTL_DEL, ce->fd, NULL);
			me->retiring[cpu] = ce;
			me->live[cpu] = NULL;
			me->st.cpus_gone++;
			ce = NULL;
		}
		if (!ce && cpu < n && online[cpu]) {
			err = open_cpu(me, cpu);
			if (!err) {
				opened++;
				me->st.cpus_opened++;
			} else if (err != -ENODEV) {
				me->st.open_failed++;
				if (!first_err)
					first_err = err;
			}
		}
		if (me->live[cpu])
			watched++;
	}
	me->st.cpus_watched = watched;
	pthread_mutex_unlock(&me->lock);
	return first_err ? first_err : opened;
}

void mmap_events__stats(struct mmap_events *me, struct mmap_events_stats *out)
{
	pthread_mutex_lock(&me->lock);
	*out = me->st;
	pthread_mutex_unlock(&me->lock);
}

void mmap_events__free(struct mmap_events *me)
{
	int cpu;

	if (!me)
		return;
	for (cpu = 0; me->live && cpu < me->nr_cpus; cpu++)
		cpu_event__free(me, me->live[cpu]);
	for (cpu = 0; me->retiring && cpu < me->nr_cpus; cpu++)
		cpu_event__free(me, me->retiring[cpu]);
	if (me->epoll_fd >= 0)
		close(me->epoll_fd);
	free(me->live);
	free(me->retiring);
	free(me->copy);
	pthread_mutex_destroy(&me->lock);
	free(me);
}
