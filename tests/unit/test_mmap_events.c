// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for processes/mmap_events: the record parser and the ring
 * reader on hand-built bytes (no root), then the kernel's records of real
 * mappings (root: the events are for every process).  The CPU hotplug test
 * offlines cpu1 and needs CTXPROF_TEST_HOTPLUG=1.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "fixtures.h"
#include "processes/mmap_events.h"
#include "sampling/cpus.h"
#include "util/clock.h"

/* --- hand-built records, as the kernel lays them out */

struct spec {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, gen;
	const uint8_t *build_id;
	uint8_t build_id_len;
	uint32_t prot, flags;
	const char *path;
	uint64_t time;
};

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put_header(uint8_t *p, uint32_t type, uint16_t misc, uint16_t size)
{
	struct perf_event_header h = {.type = type, .misc = misc, .size = size};

	memcpy(p, &h, sizeof(h));
}

/* a PERF_RECORD_MMAP2 into @buf; returns its size */
static size_t build_mmap2(uint8_t *buf, const struct spec *s)
{
	size_t path_room = (strlen(s->path) + 1 + 7) & ~(size_t)7;
	size_t size = 8 + 64 + path_room + 16;
	uint8_t *b = buf + 8;

	memset(buf, 0, size);
	put_header(buf, PERF_RECORD_MMAP2,
		   PERF_RECORD_MISC_USER | (s->build_id_len ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0),
		   (uint16_t)size);
	put32(b, s->pid);
	put32(b + 4, s->tid);
	put64(b + 8, s->addr);
	put64(b + 16, s->len);
	put64(b + 24, s->pgoff);
	if (s->build_id_len) {
		b[32] = s->build_id_len;
		memcpy(b + 36, s->build_id, s->build_id_len);
	} else {
		put32(b + 32, s->maj);
		put32(b + 36, s->min);
		put64(b + 40, s->ino);
		put64(b + 48, s->gen);
	}
	put32(b + 56, s->prot);
	put32(b + 60, s->flags);
	memcpy(b + 64, s->path, strlen(s->path));
	put32(buf + size - 16, s->pid);
	put32(buf + size - 12, s->tid);
	put64(buf + size - 8, s->time);
	return size;
}

/* a PERF_RECORD_LOST of @lost records; returns its size (40) */
static size_t build_lost(uint8_t *buf, uint64_t lost)
{
	memset(buf, 0, 40);
	put_header(buf, PERF_RECORD_LOST, 0, 40);
	put64(buf + 8, 7);
	put64(buf + 16, lost);
	put64(buf + 32, 12345);
	return 40;
}

static const uint8_t test_build_id[20] = {0x93, 0xac, 0x61, 0xec, 0x5a, 0x8e, 0xb1,
					  0x39, 0x6f, 0x9f, 0xbd, 0x35, 0x0e, 0x31,
					  0x69, 0xa5, 0x58, 0x52, 0x8a, 0x40};

static const struct spec lib_spec = {
	.pid = 4242,
	.tid = 4243,
	.addr = 0x7f0000001000,
	.len = 0x156000,
	.pgoff = 0x26000,
	.build_id = test_build_id,
	.build_id_len = 20,
	.prot = PROT_READ | PROT_EXEC,
	.flags = MAP_PRIVATE,
	.path = "/usr/lib/x86_64-linux-gnu/libc.so.6",
	.time = 2565224957006ull,
};

/* parse @size bytes of @rec from a buffer of exactly that size (ASan sees over-reads) */
static int parse_exact(const uint8_t *rec, size_t size, struct mmap_event *ev, uint64_t *lost)
{
	static char path[256];
	void *copy = fixture_exact_copy(rec, size);
	int ret = mmap_events_parse(copy, size, ev, lost);

	/* ev->path pointed into the copy, which goes */
	if (ret == MMAP_EVENTS_MMAP2) {
		assert_in_range(ev->path_len, 0, sizeof(path) - 1);
		memcpy(path, ev->path, ev->path_len + 1);
		ev->path = path;
	}
	free(copy);
	return ret;
}

static void mmap_events_parse__mmap2_build_id__fields(void **state)
{
	uint8_t buf[256];
	struct mmap_event ev;
	uint64_t lost = 0;
	size_t size = build_mmap2(buf, &lib_spec);

	assert_int_equal(parse_exact(buf, size, &ev, &lost), MMAP_EVENTS_MMAP2);
	assert_int_equal(ev.pid, 4242);
	assert_int_equal(ev.tid, 4243);
	assert_int_equal(ev.time_ns, 2565224957006ull);
	assert_int_equal(ev.start, 0x7f0000001000);
	assert_int_equal(ev.len, 0x156000);
	assert_int_equal(ev.pgoff, 0x26000);
	assert_int_equal(ev.build_id_len, 20);
	assert_memory_equal(ev.build_id, test_build_id, 20);
	/* the build id takes their place in the record */
	assert_int_equal(ev.inode, 0);
	assert_int_equal(ev.dev_major, 0);
	assert_int_equal(ev.prot, PROT_READ | PROT_EXEC);
	assert_int_equal(ev.flags, MAP_PRIVATE);
	assert_string_equal(ev.path, lib_spec.path);
	assert_int_equal(ev.path_len, strlen(lib_spec.path));
	assert_int_equal(ev.cpu, -1);
}

static void mmap_events_parse__mmap2_inode__fields(void **state)
{
	struct spec s = lib_spec;
	uint8_t buf[256];
	struct mmap_event ev;
	uint64_t lost = 0;
	size_t size;

	s.build_id_len = 0;
	s.maj = 254;
	s.min = 3;
	s.ino = 1234567;
	s.gen = 99;
	s.path = "/tmp/x (deleted)";
	size = build_mmap2(buf, &s);
	assert_int_equal(parse_exact(buf, size, &ev, &lost), MMAP_EVENTS_MMAP2);
	assert_int_equal(ev.build_id_len, 0);
	assert_int_equal(ev.dev_major, 254);
	assert_int_equal(ev.dev_minor, 3);
	assert_int_equal(ev.inode, 1234567);
	assert_int_equal(ev.inode_gen, 99);
	assert_string_equal(ev.path, "/tmp/x (deleted)");
}

static void mmap_events_parse__lost_and_other__classified(void **state)
{
	uint8_t buf[64];
	struct mmap_event ev;
	uint64_t lost = 0;

	assert_int_equal(parse_exact(buf, build_lost(buf, 17), &ev, &lost), MMAP_EVENTS_LOST);
	assert_int_equal(lost, 17);
	/* an EXIT record: what mmap = 1 brings along */
	memset(buf, 0, 56);
	put_header(buf, PERF_RECORD_EXIT, 0, 56);
	assert_int_equal(parse_exact(buf, 56, &ev, &lost), MMAP_EVENTS_OTHER);
	/* a header alone is a record of its type */
	put_header(buf, PERF_RECORD_COMM, 0, 8);
	assert_int_equal(parse_exact(buf, 8, &ev, &lost), MMAP_EVENTS_OTHER);
}

static void mmap_events_parse__bad_sizes__einval(void **state)
{
	uint8_t buf[256], bad[256];
	struct mmap_event ev;
	uint64_t lost = 0;
	size_t size = build_mmap2(buf, &lib_spec), n;

	/* shorter than a header, or not the header's size */
	for (n = 0; n < 8; n++)
		assert_int_equal(parse_exact(buf, n, &ev, &lost), -EINVAL);
	assert_int_equal(parse_exact(buf, size - 8, &ev, &lost), -EINVAL);
	memcpy(bad, buf, size);
	put_header(bad, PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID, (uint16_t)(size + 8));
	assert_int_equal(parse_exact(bad, size, &ev, &lost), -EINVAL);
	/* every size too small for a body, one path byte and the trailer */
	for (n = 8; n < 8 + 64 + 1 + 16; n++) {
		put_header(bad, PERF_RECORD_MMAP2, 0, (uint16_t)n);
		assert_int_equal(parse_exact(bad, n, &ev, &lost), -EINVAL);
	}
	/* the path without its NUL: it would run into the trailer */
	memcpy(bad, buf, size);
	memset(bad + 72, 'a', size - 72 - 16);
	assert_int_equal(parse_exact(bad, size, &ev, &lost), -EINVAL);
	/* the smallest valid one: a 1-byte room holding the NUL */
	memset(bad, 0, sizeof(bad));
	put_header(bad, PERF_RECORD_MMAP2, 0, 89);
	put64(bad + 16, 0x1000);
	put64(bad + 24, 0x1000);
	assert_int_equal(parse_exact(bad, 89, &ev, &lost), MMAP_EVENTS_MMAP2);
	assert_int_equal(ev.path_len, 0);
	/* a build id longer than the kernel's, or flagged and empty */
	memcpy(bad, buf, size);
	bad[8 + 32] = 21;
	assert_int_equal(parse_exact(bad, size, &ev, &lost), -EINVAL);
	bad[8 + 32] = 0;
	assert_int_equal(parse_exact(bad, size, &ev, &lost), -EINVAL);
	/* an empty range, one that wraps, one that ends at 2^64 */
	memcpy(bad, buf, size);
	put64(bad + 8 + 16, 0);
	assert_int_equal(parse_exact(bad, size, &ev, &lost), -EINVAL);
	put64(bad + 8 + 8, UINT64_MAX - 0xfff);
	put64(bad + 8 + 16, 0x2000);
	assert_int_equal(parse_exact(bad, size, &ev, &lost), -EINVAL);
	put64(bad + 8 + 16, 0x1000);
	assert_int_equal(parse_exact(bad, size, &ev, &lost), -EINVAL);
	/* a LOST without its trailer */
	build_lost(bad, 3);
	put_header(bad, PERF_RECORD_LOST, 0, 32);
	assert_int_equal(parse_exact(bad, 32, &ev, &lost), -EINVAL);
}

/* --- the ring reader on a fake ring */

struct fake_ring {
	struct perf_event_mmap_page page;
	uint8_t data[256];
	uint8_t copy[256];
	struct mmap_events_ring r;
};

struct collect {
	pid_t pid; /* events of this process only; 0: all */
	int n;
	struct {
		struct mmap_event ev;
		char path[PATH_MAX];
	} got[64];
};

static void collect_cb(void *ctx, const struct mmap_event *ev)
{
	struct collect *c = ctx;

	assert_int_equal(strlen(ev->path), ev->path_len);
	if (c->pid && ev->pid != (uint32_t)c->pid)
		return;
	assert_in_range(c->n, 0, 63);
	c->got[c->n].ev = *ev;
	snprintf(c->got[c->n].path, sizeof(c->got[c->n].path), "%s", ev->path);
	c->got[c->n].ev.path = c->got[c->n].path;
	c->n++;
}

static void fake_ring_init(struct fake_ring *f, uint64_t tail)
{
	memset(f, 0, sizeof(*f));
	f->page.data_tail = tail;
	f->page.data_head = tail;
	f->r.page = &f->page;
	f->r.data = f->data;
	f->r.size = sizeof(f->data);
	f->r.copy = f->copy;
}

/* write @len bytes at the head, across the end of the ring */
static void fake_ring_put(struct fake_ring *f, const void *src, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		f->data[(f->page.data_head + i) % sizeof(f->data)] = ((const uint8_t *)src)[i];
	f->page.data_head += len;
}

static void mmap_events_ring__read__wrapped_records__delivered(void **state)
{
	struct fake_ring f;
	struct mmap_events_stats st = {0};
	struct collect c = {0};
	struct spec s = lib_spec;
	uint8_t rec[256];
	uint64_t tail;

	/* tails that put the wrap in the body, in the path, in the trailer, and
	 * a header across the end (the kernel keeps 8-byte alignment; a reader
	 * should not depend on it) */
	for (tail = 1000; tail < 1000 + 256; tail += 4) {
		fake_ring_init(&f, tail);
		memset(&st, 0, sizeof(st));
		c.n = 0;
		fake_ring_put(&f, rec, build_lost(rec, 5));
		fake_ring_put(&f, rec, build_mmap2(rec, &s));
		put_header(rec, PERF_RECORD_FORK, 0, 40);
		fake_ring_put(&f, rec, 40);
		assert_int_equal(mmap_events_ring__read(&f.r, 3, collect_cb, &c, &st), 3);
		assert_int_equal(c.n, 1);
		assert_string_equal(c.got[0].path, lib_spec.path);
		assert_int_equal(c.got[0].ev.start, lib_spec.addr);
		assert_memory_equal(c.got[0].ev.build_id, test_build_id, 20);
		assert_int_equal(c.got[0].ev.cpu, 3);
		assert_int_equal(st.records, 3);
		assert_int_equal(st.mmap2, 1);
		assert_int_equal(st.lost, 5);
		assert_int_equal(st.lost_records, 1);
		assert_int_equal(st.other, 1);
		assert_int_equal(st.malformed, 0);
		assert_int_equal(f.page.data_tail, f.page.data_head);
	}
}

static void mmap_events_ring__read__bad_header__resyncs_to_head(void **state)
{
	struct fake_ring f;
	struct mmap_events_stats st = {0};
	struct collect c = {0};
	uint8_t rec[256];
	size_t size;

	/* size 0 would never advance: skipped to the head, once */
	fake_ring_init(&f, 64);
	fake_ring_put(&f, rec, build_lost(rec, 1));
	put_header(rec, PERF_RECORD_MMAP2, 0, 0);
	fake_ring_put(&f, rec, 8);
	fake_ring_put(&f, rec, build_mmap2(rec, &lib_spec));
	assert_int_equal(mmap_events_ring__read(&f.r, 0, collect_cb, &c, &st), 1);
	assert_int_equal(st.lost, 1);
	assert_int_equal(st.malformed, 1);
	assert_int_equal(c.n, 0);
	assert_int_equal(f.page.data_tail, f.page.data_head);

	/* a record that says it goes beyond the head */
	fake_ring_init(&f, 0);
	size = build_mmap2(rec, &lib_spec);
	fake_ring_put(&f, rec, size - 8);
	memset(&st, 0, sizeof(st));
	assert_int_equal(mmap_events_ring__read(&f.r, 0, collect_cb, &c, &st), 0);
	assert_int_equal(st.malformed, 1);
	assert_int_equal(f.page.data_tail, f.page.data_head);

	/* fewer bytes than a header between tail and head */
	fake_ring_init(&f, 0);
	fake_ring_put(&f, rec, 4);
	memset(&st, 0, sizeof(st));
	assert_int_equal(mmap_events_ring__read(&f.r, 0, collect_cb, &c, &st), 0);
	assert_int_equal(st.malformed, 1);

	/* a head more than a ring ahead, or behind the tail */
	fake_ring_init(&f, 512);
	f.page.data_head = 512 + 257;
	memset(&st, 0, sizeof(st));
	assert_int_equal(mmap_events_ring__read(&f.r, 0, collect_cb, &c, &st), 0);
	assert_int_equal(st.malformed, 1);
	assert_int_equal(f.page.data_tail, 512 + 257);
	f.page.data_head = 100;
	assert_int_equal(mmap_events_ring__read(&f.r, 0, collect_cb, &c, &st), 0);
	assert_int_equal(st.malformed, 2);
	assert_int_equal(f.page.data_tail, 100);

	/* an MMAP2 whose own sizes are wrong: that record alone is skipped */
	fake_ring_init(&f, 0);
	size = build_mmap2(rec, &lib_spec);
	memset(rec + 72, 'x', size - 72 - 16);
	fake_ring_put(&f, rec, size);
	fake_ring_put(&f, rec, build_lost(rec, 2));
	memset(&st, 0, sizeof(st));
	assert_int_equal(mmap_events_ring__read(&f.r, 0, collect_cb, &c, &st), 2);
	assert_int_equal(st.malformed, 1);
	assert_int_equal(st.lost, 2);
	assert_int_equal(c.n, 0);
}

/* --- the kernel's records (root) */

struct fixture {
	struct mmap_events *me;
	char *dir;
	struct collect c;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	mmap_events__free(f->me);
	fixture_tmpdir_remove(f->dir);
	free(f);
	return 0;
}

static void open_events(struct fixture *f, int nr_pages)
{
	char err[256] = "";

	fixture_require_root("perf events for every process need CAP_PERFMON");
	f->me = mmap_events__new(nr_pages, err, sizeof(err));
	if (!f->me && (errno == EACCES || errno == EPERM || errno == ENOENT)) {
		print_message("SKIP: no perf events here: %s\n", err);
		skip();
	}
	if (!f->me)
		fail_msg("mmap_events__new: %s", err);
	f->dir = fixture_tmpdir("mmap_events");
}

/* read every ring, keeping the events of process @pid */
static void collect(struct fixture *f, pid_t pid)
{
	memset(&f->c, 0, sizeof(f->c));
	f->c.pid = pid;
	assert_true(mmap_events__consume(f->me, collect_cb, &f->c) >= 0);
}

/* the event that maps @addr, failing unless exactly one */
static const struct mmap_event *event_at(struct fixture *f, uint64_t addr)
{
	const struct mmap_event *found = NULL;
	int i;

	for (i = 0; i < f->c.n; i++) {
		if (f->c.got[i].ev.start > addr ||
		    addr - f->c.got[i].ev.start >= f->c.got[i].ev.len)
			continue;
		if (found)
			fail_msg("two records map %#lx", (unsigned long)addr);
		found = &f->c.got[i].ev;
	}
	if (!found)
		fail_msg("no record maps %#lx (%d records of the process)", (unsigned long)addr,
			 f->c.n);
	return found;
}

static const char *fixture_lib(int variant)
{
	static char path[2][PATH_MAX];
	const char *output = getenv("OUTPUT");
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "%s/fixtures/mmap/libmmap_fixture_%d.so",
		 output && *output ? output : "build", variant);
	if (!realpath(rel, path[variant - 1]))
		fail_msg("fixture %s missing: run make check (tests/unit/mmap_events.mk)", rel);
	return path[variant - 1];
}

/* the file's GNU build id, as readelf -n shows it; returns its length */
static size_t readelf_build_id(const char *path, uint8_t id[MMAP_EVENTS_BUILD_ID_MAX])
{
	char cmd[PATH_MAX + 32], line[512], *hex;
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		hex = strstr(line, "Build ID: ");
		if (!hex)
			continue;
		for (hex += 10; n < MMAP_EVENTS_BUILD_ID_MAX && sscanf(hex, "%2hhx", &id[n]) == 1;
		     hex += 2)
			n++;
	}
	pclose(p);
	assert_true(n > 0);
	return n;
}

/* the running kernel is @major.@minor or later */
static bool kernel_at_least(int major_v, int minor_v)
{
	struct utsname u;
	int ma = 0, mi = 0;

	assert_int_equal(uname(&u), 0);
	assert_int_equal(sscanf(u.release, "%d.%d", &ma, &mi), 2);
	return ma > major_v || (ma == major_v && mi >= minor_v);
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC);
	/* O_TRUNC on an existing file: the same inode, new contents */
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	ssize_t n;

	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	assert_int_equal(n, 0);
	close(in);
	assert_int_equal(close(out), 0);
}

/* a file of @pages pages that is no ELF file: the kernel finds no build id */
static int plain_file(struct fixture *f, const char *name, int pages, char *path)
{
	char buf[4096];
	int fd, i;

	snprintf(path, PATH_MAX, "%s/%s", f->dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	memset(buf, 'x', sizeof(buf));
	for (i = 0; i < pages; i++)
		assert_int_equal(write(fd, buf, sizeof(buf)), sizeof(buf));
	return fd;
}

static void *map_exec(int fd, size_t len, off_t off)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, off);

	if (p == MAP_FAILED && errno == EPERM) {
		print_message("SKIP: cannot map PROT_EXEC here (noexec /tmp?)\n");
		skip();
	}
	assert_true(p != MAP_FAILED);
	return p;
}

static void mmap_events__mmap_exec_file__record(void **state)
{
	struct fixture *f = *state;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const struct mmap_event *ev;
	char path[PATH_MAX], real[PATH_MAX];
	struct mmap_events_stats st;
	uint64_t t0, t1;
	struct stat sb;
	void *p;
	int fd;

	open_events(f, 0);
	fd = plain_file(f, "plain", 3, path);
	assert_int_equal(fstat(fd, &sb), 0);
	assert_non_null(realpath(path, real));
	collect(f, getpid());
	t0 = mono_ns();
	p = map_exec(fd, 2 * page, (off_t)page);
	t1 = mono_ns();
	collect(f, getpid());
	ev = event_at(f, (uint64_t)(uintptr_t)p);
	assert_int_equal(ev->start, (uintptr_t)p);
	assert_int_equal(ev->len, 2 * page);
	assert_int_equal(ev->pgoff, page);
	assert_int_equal(ev->pid, getpid());
	assert_int_equal(ev->tid, gettid());
	assert_in_range(ev->time_ns, t0, t1);
	assert_string_equal(ev->path, real);
	assert_int_equal(ev->build_id_len, 0);
	assert_int_equal(ev->dev_major, major(sb.st_dev));
	assert_int_equal(ev->dev_minor, minor(sb.st_dev));
	assert_int_equal(ev->inode, sb.st_ino);
	assert_int_equal(ev->prot, PROT_READ | PROT_EXEC);
	assert_int_equal(ev->flags & (MAP_PRIVATE | MAP_SHARED), MAP_PRIVATE);
	assert_in_range(ev->cpu, 0, 4095);

	/* a data mapping of the same file: no record */
	assert_true(mmap(NULL, page, PROT_READ, MAP_PRIVATE, fd, 0) != MAP_FAILED);
	collect(f, getpid());
	assert_int_equal(f->c.n, 0);

	/* every record counted once, by type; none malformed */
	mmap_events__stats(f->me, &st);
	assert_true(st.mmap2 >= 1);
	assert_int_equal(st.records, st.mmap2 + st.lost_records + st.other + st.malformed);
	assert_int_equal(st.malformed, 0);
	assert_true(st.cpus_watched >= 1);
	munmap(p, 2 * page);
	close(fd);
}

static void mmap_events__munmap__no_record(void **state)
{
	struct fixture *f = *state;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char path[PATH_MAX];
	uint8_t *p;
	int fd;

	open_events(f, 0);
	fd = plain_file(f, "unmapped", 4, path);
	p = map_exec(fd, 4 * page, 0);
	collect(f, getpid());
	assert_int_equal(f->c.n, 1);
	/* a hole in the middle, then the rest */
	assert_int_equal(munmap(p + page, page), 0);
	assert_int_equal(munmap(p, 4 * page), 0);
	collect(f, getpid());
	assert_int_equal(f->c.n, 0);
	close(fd);
}

static void mmap_events__anonymous_exec__anon_record(void **state)
{
	struct fixture *f = *state;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const struct mmap_event *ev;
	uint8_t *jit, *data;

	open_events(f, 0);
	collect(f, getpid());
	jit = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	assert_true(jit != MAP_FAILED);
	collect(f, getpid());
	ev = event_at(f, (uintptr_t)jit);
	assert_int_equal(ev->start, (uintptr_t)jit);
	assert_int_equal(ev->len, 2 * page);
	assert_string_equal(ev->path, "//anon");
	assert_int_equal(ev->inode, 0);
	assert_int_equal(ev->dev_major, 0);
	assert_int_equal(ev->dev_minor, 0);
	assert_int_equal(ev->build_id_len, 0);
	/* an anonymous mapping's page offset is its address */
	assert_int_equal(ev->pgoff, (uintptr_t)jit);
	assert_int_equal(ev->prot, PROT_READ | PROT_WRITE | PROT_EXEC);

	/* data first, made executable later (a JIT's W^X flip): a record for
	 * the range that became executable */
	data = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(data != MAP_FAILED);
	collect(f, getpid());
	assert_int_equal(f->c.n, 0);
	assert_int_equal(mprotect(data + page, page, PROT_READ | PROT_EXEC), 0);
	collect(f, getpid());
	ev = event_at(f, (uintptr_t)(data + page));
	assert_int_equal(ev->start, (uintptr_t)(data + page));
	assert_int_equal(ev->len, page);
	assert_string_equal(ev->path, "//anon");
	assert_int_equal(ev->prot, PROT_READ | PROT_EXEC);
	munmap(jit, 2 * page);
	munmap(data, 3 * page);
}

static void mmap_events__dlopen__build_id_of_the_file(void **state)
{
	struct fixture *f = *state;
	const char *lib = fixture_lib(1);
	uint8_t id[MMAP_EVENTS_BUILD_ID_MAX];
	const struct mmap_event *ev;
	struct mmap_events_stats st;
	size_t id_len = readelf_build_id(lib, id);
	struct stat sb;
	void *h, *fn;

	open_events(f, 0);
	mmap_events__stats(f->me, &st);
	/* attr.build_id came with 5.12 */
	assert_int_equal(st.build_id, kernel_at_least(5, 12));
	assert_int_equal(stat(lib, &sb), 0);
	collect(f, getpid());
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	fn = dlsym(h, "mmap_fixture_fn");
	assert_non_null(fn);
	collect(f, getpid());
	/* the text segment: the one record that holds the function */
	ev = event_at(f, (uintptr_t)fn);
	assert_string_equal(ev->path, lib);
	assert_true(ev->prot & PROT_EXEC);
	if (st.build_id) {
		assert_int_equal(ev->build_id_len, id_len);
		assert_memory_equal(ev->build_id, id, id_len);
	} else {
		print_message("the kernel gives no build ids: device and inode checked\n");
		assert_int_equal(ev->build_id_len, 0);
		assert_int_equal(ev->inode, sb.st_ino);
	}
	dlclose(h);
}

/*
 * The case /proc/PID/maps cannot see: a library rewritten in place (same
 * path, same inode) and mapped again.  A new record comes, with the new
 * file's build id when the kernel gives build ids.
 */
static void mmap_events__rewritten_in_place__new_build_id(void **state)
{
	struct fixture *f = *state;
	uint8_t id1[MMAP_EVENTS_BUILD_ID_MAX], id2[MMAP_EVENTS_BUILD_ID_MAX];
	size_t len1 = readelf_build_id(fixture_lib(1), id1);
	size_t len2 = readelf_build_id(fixture_lib(2), id2);
	char path[PATH_MAX];
	const struct mmap_event *ev;
	struct mmap_events_stats st;
	struct stat sb1, sb2;
	void *h, *fn;

	open_events(f, 0);
	mmap_events__stats(f->me, &st);
	assert_false(len1 == len2 && !memcmp(id1, id2, len1));
	snprintf(path, sizeof(path), "%s/libswap.so", f->dir);
	copy_file(fixture_lib(1), path);
	assert_int_equal(stat(path, &sb1), 0);
	collect(f, getpid());
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	fn = dlsym(h, "mmap_fixture_fn");
	assert_int_equal(((int (*)(int))fn)(10), 11);
	collect(f, getpid());
	ev = event_at(f, (uintptr_t)fn);
	if (st.build_id)
		assert_memory_equal(ev->build_id, id1, len1);
	assert_int_equal(dlclose(h), 0);

	copy_file(fixture_lib(2), path);
	assert_int_equal(stat(path, &sb2), 0);
	assert_int_equal(sb1.st_ino, sb2.st_ino);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	fn = dlsym(h, "mmap_fixture_fn");
	assert_int_equal(((int (*)(int))fn)(10), 22);
	collect(f, getpid());
	ev = event_at(f, (uintptr_t)fn);
	assert_string_equal(ev->path, path);
	if (st.build_id) {
		assert_int_equal(ev->build_id_len, len2);
		assert_memory_equal(ev->build_id, id2, len2);
	} else {
		assert_int_equal(ev->inode, sb1.st_ino);
	}
	dlclose(h);
}

static void mmap_events__child_process__record_with_its_pid(void **state)
{
	struct fixture *f = *state;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const struct mmap_event *ev;
	struct mmap_events_stats before, after;
	char path[PATH_MAX];
	int fd, pipefd[2], status;
	uint64_t addr = 0;
	pid_t child;

	open_events(f, 0);
	fd = plain_file(f, "child", 1, path);
	assert_int_equal(pipe(pipefd), 0);
	mmap_events__stats(f->me, &before);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		void *p = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

		addr = p == MAP_FAILED ? 0 : (uintptr_t)p;
		_exit(write(pipefd[1], &addr, sizeof(addr)) == sizeof(addr) ? 0 : 1);
	}
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], &addr, sizeof(addr)), sizeof(addr));
	close(pipefd[0]);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(addr != 0);
	collect(f, child);
	ev = event_at(f, addr);
	assert_int_equal(ev->pid, child);
	assert_int_equal(ev->tid, child);
	assert_int_equal(ev->len, page);
	/* the child's FORK and EXIT came too, as other records */
	mmap_events__stats(f->me, &after);
	assert_true(after.other >= before.other + 2);
	close(fd);
}

/* one record wakes the poller, long before its timeout: a report waits for nothing */
static void mmap_events__poll__a_record_wakes_it(void **state)
{
	struct fixture *f = *state;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char path[PATH_MAX];
	uint64_t t0;
	void *p;
	int fd, n;

	open_events(f, 2);
	fd = plain_file(f, "poll", 1, path);
	collect(f, getpid());
	p = map_exec(fd, page, 0);
	t0 = mono_ns();
	memset(&f->c, 0, sizeof(f->c));
	f->c.pid = getpid();
	n = mmap_events__poll(f->me, 10000, collect_cb, &f->c);
	assert_true(n >= 1);
	assert_true(mono_ns() - t0 < 2000000000ull);
	assert_int_equal(f->c.n, 1);
	munmap(p, page);
	close(fd);
}

/* --- CPU hotplug: cpu1 offline and back (root, CTXPROF_TEST_HOTPLUG=1) */

static const char cpu1_online[] = "/sys/devices/system/cpu/cpu1/online";

static int set_cpu1(int on)
{
	int fd = open(cpu1_online, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : write(fd, on ? "1" : "0", 1);

	if (fd >= 0)
		close(fd);
	return n == 1 ? 0 : -1;
}

static int hotplug_teardown(void **state)
{
	/* always put it back */
	set_cpu1(1);
	return teardown(state);
}

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	assert_int_equal(sched_setaffinity(0, sizeof(s), &s), 0);
}

struct opener {
	int calls;
	const struct perf_event_attr *attr;
};

static int count_open(void *ctx, int cpu)
{
	struct opener *o = ctx;
	int fd = (int)syscall(__NR_perf_event_open, o->attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	o->calls++;
	return fd < 0 ? -errno : fd;
}

/* map one page of @fd on cpu1 and collect; returns the records of that page */
static int mapped_on_cpu1(struct fixture *f, int fd)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;
	int i, n = 0;

	pin(1);
	p = map_exec(fd, page, 0);
	pin(0);
	collect(f, getpid());
	for (i = 0; i < f->c.n; i++)
		if (f->c.got[i].ev.start == (uintptr_t)p) {
			assert_int_equal(f->c.got[i].ev.cpu, 1);
			n++;
		}
	munmap(p, page);
	return n;
}

static void check_cpus(struct fixture *f, int expect)
{
	bool online[64] = {false};

	assert_int_equal(cpus_online(online, 64), 0);
	assert_int_equal(mmap_events__check_cpus(f->me, online, 64), expect);
}

static void mmap_events__check_cpus__cpu_back__reopened(void **state)
{
	struct fixture *f = *state;
	struct opener o = {0};
	struct mmap_events_stats st;
	char path[PATH_MAX];
	int fd;

	if (!getenv("CTXPROF_TEST_HOTPLUG") || access(cpu1_online, W_OK)) {
		print_message("SKIP: set CTXPROF_TEST_HOTPLUG=1 (root) to offline cpu1\n");
		skip();
	}
	open_events(f, 0);
	o.attr = mmap_events__attr(f->me);
	mmap_events__set_opener(f->me, count_open, &o);
	fd = plain_file(f, "hotplug", 1, path);
	assert_int_equal(mapped_on_cpu1(f, fd), 1);
	check_cpus(f, 0);

	/* offline and back between two checks: the event died and stays dead */
	pin(0);
	assert_int_equal(set_cpu1(0), 0);
	assert_int_equal(set_cpu1(1), 0);
	assert_int_equal(mapped_on_cpu1(f, fd), 0);
	/* the check sees its enabled time stand still and opens another */
	check_cpus(f, 1);
	assert_int_equal(o.calls, 1);
	assert_int_equal(mapped_on_cpu1(f, fd), 1);
	mmap_events__stats(f->me, &st);
	assert_int_equal(st.cpus_gone, 1);
	assert_int_equal(st.cpus_opened, 1);

	/* a check while it is offline closes its event; one after opens it */
	assert_int_equal(set_cpu1(0), 0);
	check_cpus(f, 0);
	mmap_events__stats(f->me, &st);
	assert_int_equal(st.cpus_gone, 2);
	assert_int_equal(o.calls, 1);
	assert_int_equal(set_cpu1(1), 0);
	check_cpus(f, 1);
	assert_int_equal(o.calls, 2);
	assert_int_equal(mapped_on_cpu1(f, fd), 1);
	mmap_events__stats(f->me, &st);
	assert_int_equal(st.cpus_opened, 2);
	assert_int_equal(st.open_failed, 0);
	assert_int_equal(st.malformed, 0);
	close(fd);
}

static void mmap_events__new__bad_pages__einval(void **state)
{
	char err[256] = "";

	assert_null(mmap_events__new(3, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "power of two"));
	assert_null(mmap_events__new(-1, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mmap_events_parse__mmap2_build_id__fields),
		cmocka_unit_test(mmap_events_parse__mmap2_inode__fields),
		cmocka_unit_test(mmap_events_parse__lost_and_other__classified),
		cmocka_unit_test(mmap_events_parse__bad_sizes__einval),
		cmocka_unit_test(mmap_events_ring__read__wrapped_records__delivered),
		cmocka_unit_test(mmap_events_ring__read__bad_header__resyncs_to_head),
		cmocka_unit_test(mmap_events__new__bad_pages__einval),
		cmocka_unit_test_setup_teardown(mmap_events__mmap_exec_file__record, setup,
						teardown),
		cmocka_unit_test_setup_teardown(mmap_events__munmap__no_record, setup, teardown),
		cmocka_unit_test_setup_teardown(mmap_events__anonymous_exec__anon_record, setup,
						teardown),
		cmocka_unit_test_setup_teardown(mmap_events__dlopen__build_id_of_the_file, setup,
						teardown),
		cmocka_unit_test_setup_teardown(mmap_events__rewritten_in_place__new_build_id,
						setup, teardown),
		cmocka_unit_test_setup_teardown(mmap_events__child_process__record_with_its_pid,
						setup, teardown),
		cmocka_unit_test_setup_teardown(mmap_events__poll__a_record_wakes_it, setup,
						teardown),
		cmocka_unit_test_setup_teardown(mmap_events__check_cpus__cpu_back__reopened, setup,
						hotplug_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
