// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/symbols/symbolizer.c: kernel frames, the file cache
 * shared by processes (identity, build ids, budget, idle files), which file
 * is read for a mapping, and MiniDebugInfo counting (user frames of a real
 * process: test_mappings.c; debug files: test_debug_file.c).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <lzma.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbols/elf_syms.h"
#include "elf/safe_open.h"
#include "processes/mappings.h"
#include "processes/proc_maps.h"
#include "fixtures.h"
#include "symbols/symbolizer.h"

static const char *fixture_path(const char *name)
{
	static char path[PATH_MAX];
	const char *output = getenv("OUTPUT");

	snprintf(path, sizeof(path), "%s/fixtures/%s", output && *output ? output : "build", name);
	if (access(path, R_OK) != 0)
		fail_msg("fixture %s missing: run make check (tests/unit/elf_fixtures.mk)", path);
	return path;
}

static uint64_t inode_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

/* a snapshot of one executable mapping of @path (inode @inode) at @start */
static struct mappings *snap_of(const char *path, uint64_t inode, uint64_t start)
{
	char line[PATH_MAX + 128];
	struct mappings *m;
	struct proc_maps *pm;
	int len;

	len = snprintf(line, sizeof(line), "%llx-%llx r-xp 00000000 08:01 %llu %s\n",
		       (unsigned long long)start, (unsigned long long)start + 0x100000,
		       (unsigned long long)inode, path);
	pm = proc_maps__parse(line, len);
	assert_non_null(pm);
	m = mappings__new(pm, 0, 1);
	proc_maps__free(pm);
	assert_non_null(m);
	assert_int_equal(m->nr, 1);
	return m;
}

/* the file the symbolizer gives @path, found by path in the host's root */
static const void *file_at(struct symbolizer *s, int root, const char *path, uint64_t inode,
			   struct mappings **out)
{
	struct mappings *m = snap_of(path, inode, 0x10000000);

	symbolizer__attach(s, 0, root, m, NULL, 0, 0);
	*out = m;
	return m->maps[0].file;
}

static void release(struct symbolizer *s, struct mappings *m)
{
	symbolizer__detach(s, m);
	mappings__put(m);
}

static int root_dir(void)
{
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	assert_true(root >= 0);
	return root;
}

static void symbolizer__attach__same_file_twice__parsed_once(void **state)
{
	struct symbolizer *s = symbolizer__new(0, 64 << 20);
	struct mappings *ma, *mb, *mx;
	const void *a, *b;
	struct symbolizer_stats st;
	int root = root_dir();

	assert_non_null(s);
	a = file_at(s, root, "/proc/self/exe", inode_of("/proc/self/exe"), &mx);
	/* /proc/self/exe is a magic link: refused, and counted */
	assert_null(a);
	release(s, mx);
	symbolizer__stats(s, &st);
	assert_int_equal(st.elf_open_failed, 1);
	a = file_at(s, root, "/bin/sh", inode_of("/bin/sh"), &ma);
	b = file_at(s, root, "/bin/sh", inode_of("/bin/sh"), &mb);
	assert_non_null(a);
	assert_ptr_equal(a, b);
	symbolizer__stats(s, &st);
	assert_int_equal(st.elf_opened, 1);
	assert_int_equal(st.files_cached, 1);
	assert_true(st.bytes_cached > 0);
	release(s, ma);
	release(s, mb);
	/* not ELF: a negative entry, parsed once too */
	a = file_at(s, root, "/etc/passwd", inode_of("/etc/passwd"), &ma);
	b = file_at(s, root, "/etc/passwd", inode_of("/etc/passwd"), &mb);
	assert_non_null(a);
	assert_ptr_equal(a, b);
	symbolizer__stats(s, &st);
	assert_int_equal(st.elf_parse_failed, 1);
	assert_int_equal(st.elf_mismatch, 0);
	release(s, ma);
	release(s, mb);
	close(root);
	symbolizer__free(s);
}

static void symbolizer__attach__other_inode_than_mapped__refused_and_counted(void **state)
{
	struct symbolizer *s = symbolizer__new(0, 64 << 20);
	struct symbolizer_stats st;
	struct mappings *m;
	int root = root_dir();

	assert_non_null(s);
	assert_null(file_at(s, root, "/bin/sh", inode_of("/etc/passwd"), &m));
	release(s, m);
	symbolizer__stats(s, &st);
	assert_int_equal(st.elf_mismatch, 1);
	assert_int_equal(st.elf_opened, 0);
	close(root);
	symbolizer__free(s);
}

/* the file offset holding ELF virtual address @vaddr of the file at @path */
static uint64_t file_offset_of(const char *path, uint64_t vaddr)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY);
	unsigned int i;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	for (i = 0; i < eh.e_phnum; i++) {
		assert_int_equal(pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)),
				 sizeof(ph));
		if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr - ph.p_vaddr < ph.p_filesz) {
			close(fd);
			return vaddr - ph.p_vaddr + ph.p_offset;
		}
	}
	close(fd);
	fail_msg("no PT_LOAD of %s holds 0x%llx", path, (unsigned long long)vaddr);
	return 0;
}

/* the address `nm` gives @name in @path */
static uint64_t nm_addr(const char *path, const char *name)
{
	char cmd[PATH_MAX + 64], line[512], sym[256], type;
	unsigned long long addr, found = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm --defined-only '%s'", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 && !strcmp(sym, name))
			found = addr;
	pclose(f);
	assert_true(found != 0);
	return found;
}

static void copy_file(const char *from, const char *to)
{
	char buf[4096];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;

	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, n), n);
	assert_int_equal(n, 0);
	close(in);
	close(out);
}

/*
 * A process maps a file, then another ELF file is renamed over its path (a
 * container planting an impostor, or an upgrade): frames are named from the
 * inode mapped, through /proc/PID/map_files; the path, opened when
 * map_files is refused, is refused too, its inode not the mapped one.
 */
static void symbolizer__attach__path_replaced_after_mmap__named_from_mapped_file(void **state)
{
	const char *mapped = fixture_path("elf_fixture_pie");
	uint64_t off = file_offset_of(mapped, nm_addr(mapped, "fixture_alpha"));
	char dir[] = "/tmp/test_symbolizer.XXXXXX", path[64], impostor[64];
	struct mappings *snap, *by_path;
	struct symbolizer_stats st;
	const struct mapping *m;
	struct proc_maps *pm;
	struct symbolizer *s;
	struct sym_frame f;
	struct stat sb;
	int fd, root;
	void *base;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/libplanted.so", dir);
	snprintf(impostor, sizeof(impostor), "%s/impostor", dir);
	copy_file(mapped, path);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	base = mmap(NULL, sb.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(base != MAP_FAILED);
	close(fd);
	copy_file(fixture_path("libelf_fixture.so"), impostor);
	assert_int_equal(rename(impostor, path), 0);

	s = symbolizer__new(0, 64 << 20);
	assert_non_null(s);
	pm = proc_maps__read(getpid());
	assert_non_null(pm);
	snap = mappings__new(pm, 0, 1);
	proc_maps__free(pm);
	assert_non_null(snap);
	symbolizer__attach(s, getpid(), -1, snap, NULL, 0, 0);
	m = mappings__find(snap, (uintptr_t)base + off);
	assert_non_null(m);
	assert_string_equal(m->path, path);
	assert_int_equal(m->inode, sb.st_ino);
	assert_int_equal(symbolizer__user(s, m, (uintptr_t)base + off, false, &f), 0);
	symbolizer__stats(s, &st);
	if (st.elf_by_path) {
		/*
		 * No CAP_SYS_ADMIN: map_files refused.  The rename made the mapping
		 * " (deleted)", whose path is not even tried.
		 */
		print_message("map_files refused (not root): only the inode check is tested\n");
		assert_true(m->deleted);
		assert_null(f.function);
	} else {
		assert_non_null(f.function);
		assert_string_equal(f.function, "fixture_alpha");
	}
	assert_int_equal(st.elf_mismatch, 0);

	/* the path fallback, as without the capability: the impostor is refused */
	root = root_dir();
	assert_null(file_at(s, root, path, m->inode, &by_path));
	release(s, by_path);
	symbolizer__stats(s, &st);
	assert_int_equal(st.elf_mismatch, 1);
	close(root);

	release(s, snap);
	symbolizer__free(s);
	munmap(base, sb.st_size);
	unlink(path);
	rmdir(dir);
}

/* .xz of @len zero bytes, made here: a few KiB that decompress to @len */
static uint8_t *xz_zeros(size_t len, size_t *out_len)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	static uint8_t zeros[1 << 16];
	size_t cap = 1 << 20;
	uint8_t *out = malloc(cap);
	lzma_ret ret;

	assert_non_null(out);
	assert_int_equal(lzma_easy_encoder(&strm, 0, LZMA_CHECK_CRC32), LZMA_OK);
	strm.next_out = out;
	strm.avail_out = cap;
	while (len) {
		strm.next_in = zeros;
		strm.avail_in = len < sizeof(zeros) ? len : sizeof(zeros);
		len -= strm.avail_in;
		while (strm.avail_in) {
			assert_int_equal(lzma_code(&strm, LZMA_RUN), LZMA_OK);
			assert_true(strm.avail_out > 0);
		}
	}
	do {
		ret = lzma_code(&strm, LZMA_FINISH);
		assert_true(ret == LZMA_OK || ret == LZMA_STREAM_END);
	} while (ret != LZMA_STREAM_END);
	*out_len = strm.total_out;
	lzma_end(&strm);
	return out;
}

/*
 * A .gnu_debugdata that decompresses past ELF_SYMS_MAX_MINIDEBUG (a few KiB
 * on disk): refused and counted; the file is still used for its .dynsym.
 */
/* the address of the first stub objdump labels "<PREFIX...@plt>" in @path; 0 when none */
static uint64_t plt_label(const char *path, const char *prefix, char *label, size_t len)
{
	struct fixture_plt_stub *stubs = NULL;
	uint64_t found = 0;
	size_t i, n;

	stubs = fixture_plt_stubs("objdump", path, &n);
	for (i = 0; i < n && !found; i++) {
		if (strncmp(stubs[i].name, prefix, strlen(prefix)))
			continue;
		snprintf(label, len, "%s", stubs[i].name);
		found = stubs[i].addr;
	}
	free(stubs);
	return found;
}

/* a PLT stub's name as a frame: "NAME@plt" shown and kept, C++ demangled before it */
static void symbolizer__user__plt_stub__shown_with_its_plt_suffix(void **state)
{
	const char *cxx = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
	char label[1024], lib[PATH_MAX], cpath[PATH_MAX];
	struct mappings *m;
	struct symbolizer *s;
	struct sym_frame f;
	uint64_t vaddr;
	int root = root_dir();

	(void)state;
	/* the symbolizer opens a mapping's path under the target's root: absolute */
	assert_non_null(realpath(fixture_path("libelf_fixture_plt.so"), lib));
	s = symbolizer__new(0, 64 << 20);
	assert_non_null(s);
	vaddr = plt_label(lib, "puts@plt", label, sizeof(label));
	assert_true(vaddr);
	assert_non_null(file_at(s, root, lib, inode_of(lib), &m));
	assert_int_equal(symbolizer__user(s, &m->maps[0],
					  m->maps[0].start + file_offset_of(lib, vaddr), false, &f),
			 0);
	assert_string_equal(f.function, "puts@plt");
	assert_string_equal(f.system_name, "puts@plt");
	release(s, m);
	if (realpath(cxx, cpath) && (vaddr = plt_label(cpath, "_Z", label, sizeof(label)))) {
		assert_non_null(file_at(s, root, cpath, inode_of(cpath), &m));
		assert_int_equal(symbolizer__user(s, &m->maps[0],
						  m->maps[0].start + file_offset_of(cpath, vaddr),
						  false, &f),
				 0);
		assert_string_equal(f.system_name, label);
		/* "std::...(...)@plt" */
		assert_true(strncmp(f.function, "_Z", 2) && strstr(f.function, "::"));
		assert_string_equal(f.function + strlen(f.function) - 4, "@plt");
		release(s, m);
	}
	symbolizer__free(s);
	close(root);
}

static void symbolizer__attach__minidebuginfo_bomb__refused_and_counted(void **state)
{
	char dir[] = "/tmp/test_symbolizer.XXXXXX", xz[64], bomb[64], cmd[512];
	struct symbolizer_stats st;
	struct mappings *m;
	struct symbolizer *s;
	size_t len;
	uint8_t *data;
	FILE *out;
	int root;

	assert_non_null(mkdtemp(dir));
	snprintf(xz, sizeof(xz), "%s/bomb.xz", dir);
	snprintf(bomb, sizeof(bomb), "%s/bomb", dir);
	data = xz_zeros(ELF_SYMS_MAX_MINIDEBUG + 1, &len);
	assert_true(len < (1 << 20));
	out = fopen(xz, "w");
	assert_non_null(out);
	assert_int_equal(fwrite(data, 1, len, out), len);
	fclose(out);
	free(data);
	snprintf(cmd, sizeof(cmd), "objcopy --add-section .gnu_debugdata='%s' '%s' '%s'", xz,
		 fixture_path("elf_fixture_stripped"), bomb);
	assert_int_equal(system(cmd), 0);

	s = symbolizer__new(0, 64 << 20);
	assert_non_null(s);
	root = root_dir();
	assert_non_null(file_at(s, root, bomb, inode_of(bomb), &m));
	release(s, m);
	symbolizer__stats(s, &st);
	assert_int_equal(st.minidebug_too_big, 1);
	assert_int_equal(st.minidebug_files, 0);
	assert_int_equal(st.elf_opened, 1);
	close(root);
	symbolizer__free(s);
	unlink(xz);
	unlink(bomb);
	rmdir(dir);
}

static void symbolizer__attach__vdso_of_other_size__no_file(void **state)
{
	struct symbolizer *s = symbolizer__new(0, 64 << 20);
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
	const struct mapping *m;
	struct mappings *snap, *other;
	struct proc_maps *pm;
	char line[128];
	int len;

	assert_non_null(s);
	if (!vdso) {
		symbolizer__free(s);
		skip();
	}
	pm = proc_maps__read(getpid());
	assert_non_null(pm);
	snap = mappings__new(pm, 0, 1);
	proc_maps__free(pm);
	symbolizer__attach(s, getpid(), -1, snap, NULL, 0, 0);
	m = mappings__find(snap, vdso);
	assert_non_null(m);
	assert_string_equal(m->path, "[vdso]");
	assert_non_null(m->file);
	/* a 32-bit process's vDSO is another image: not named from ours */
	len = snprintf(line, sizeof(line), "%llx-%llx r-xp 00000000 00:00 0 [vdso]\n",
		       (unsigned long long)m->start, (unsigned long long)m->end + 4096);
	pm = proc_maps__parse(line, len);
	other = mappings__new(pm, 0, 1);
	proc_maps__free(pm);
	symbolizer__attach(s, getpid(), -1, other, NULL, 0, 0);
	assert_null(other->maps[0].file);
	release(s, other);
	release(s, snap);
	symbolizer__free(s);
}

/* the name @s gives the first function of the file mapped by @m, at @vaddr */
static const char *name_at(struct symbolizer *s, const struct mappings *m, uint64_t off)
{
	struct sym_frame f;

	assert_int_equal(symbolizer__user(s, &m->maps[0], m->maps[0].start + off, false, &f), 0);
	return f.function;
}

/*
 * A library rewritten in place (same path, same inode, new contents) is
 * another file: a mapping that appears afterwards is named from the new
 * contents, while the snapshot read before keeps the old ones.
 */
static void symbolizer__attach__file_rewritten_in_place__new_contents_named(void **state)
{
	char a_src[PATH_MAX], b_src[PATH_MAX], dir[] = "/tmp/test_symbolizer.XXXXXX", path[64];
	struct symbolizer *s = symbolizer__new(0, 64 << 20);
	struct mappings *before, *after;
	const char *name;
	uint64_t ino, a_off;
	int root = root_dir();

	/* absolute: found by path inside the root "/" */
	assert_non_null(realpath(fixture_path("elf_fixture_pie"), a_src));
	assert_non_null(realpath(fixture_path("elf_fixture_nopie"), b_src));
	a_off = file_offset_of(a_src, nm_addr(a_src, "fixture_alpha"));
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/libswap.so", dir);
	copy_file(a_src, path);
	ino = inode_of(path);
	file_at(s, root, path, ino, &before);
	name = name_at(s, before, a_off);
	assert_non_null(name);
	assert_string_equal(name, "fixture_alpha");
	/* O_TRUNC keeps the inode: same device, same inode number, new bytes */
	copy_file(b_src, path);
	assert_int_equal(inode_of(path), ino);
	file_at(s, root, path, ino, &after);
	assert_ptr_not_equal(after->maps[0].file, before->maps[0].file);
	name = name_at(s, after, a_off);
	{
		/* what the new contents say there, read by a symbolizer of their own */
		struct symbolizer *fresh = symbolizer__new(0, 64 << 20);
		struct mappings *m;
		const char *want;

		file_at(fresh, root, b_src, inode_of(b_src), &m);
		want = name_at(fresh, m, a_off);
		if (want)
			assert_string_equal(name, want);
		else
			assert_null(name);
		release(fresh, m);
		symbolizer__free(fresh);
	}
	/* the older snapshot still names what was mapped when it was read */
	assert_string_equal(name_at(s, before, a_off), "fixture_alpha");
	release(s, before);
	release(s, after);
	unlink(path);
	rmdir(dir);
	close(root);
	symbolizer__free(s);
}

/* two copies of one file (another container's): parsed once, by build id */
static void symbolizer__attach__copies_with_one_build_id__parsed_once(void **state)
{
	char dir[] = "/tmp/test_symbolizer.XXXXXX", a[64], b[64];
	struct symbolizer *s = symbolizer__new(0, 64 << 20);
	struct symbolizer_stats st;
	struct mappings *ma, *mb;
	int root = root_dir();

	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.so", dir);
	snprintf(b, sizeof(b), "%s/b.so", dir);
	copy_file(fixture_path("libelf_fixture.so"), a);
	copy_file(fixture_path("libelf_fixture.so"), b);
	assert_ptr_equal(file_at(s, root, a, inode_of(a), &ma),
			 file_at(s, root, b, inode_of(b), &mb));
	symbolizer__stats(s, &st);
	assert_int_equal(st.elf_opened, 1);
	assert_int_equal(st.elf_shared, 1);
	assert_int_equal(st.files_cached, 1);
	release(s, ma);
	release(s, mb);
	unlink(a);
	unlink(b);
	rmdir(dir);
	close(root);
	symbolizer__free(s);
}

/*
 * The budget: a file too large for it is not kept (its frames unnamed,
 * counted); unheld files go, least recently used first, to make room; and
 * memory returns once files are idle.
 */
static void symbolizer__attach__past_budget__unheld_evicted_then_refused(void **state)
{
	char big[PATH_MAX], small[PATH_MAX];
	struct symbolizer_stats st;
	struct mappings *mbig, *msmall, *mbig2;
	struct symbolizer *probe = symbolizer__new(0, 64 << 20), *s;
	uint64_t big_bytes, small_bytes;
	int root = root_dir();

	assert_non_null(realpath(fixture_path("elf_fixture_pie"), big));
	assert_non_null(realpath(fixture_path("libelf_fixture.so"), small));
	/* what each costs */
	file_at(probe, root, big, inode_of(big), &mbig);
	symbolizer__stats(probe, &st);
	big_bytes = st.bytes_cached;
	file_at(probe, root, small, inode_of(small), &msmall);
	symbolizer__stats(probe, &st);
	small_bytes = st.bytes_cached - big_bytes;
	release(probe, mbig);
	release(probe, msmall);
	symbolizer__free(probe);
	assert_true(big_bytes > 0 && small_bytes > 0);

	/* room for the larger one alone */
	s = symbolizer__new(0, big_bytes > small_bytes ? big_bytes : small_bytes);
	file_at(s, root, small, inode_of(small), &msmall);
	assert_non_null(msmall->maps[0].file);
	/* held: the other cannot make room, and is refused */
	if (big_bytes + small_bytes > (big_bytes > small_bytes ? big_bytes : small_bytes)) {
		file_at(s, root, big, inode_of(big), &mbig);
		symbolizer__stats(s, &st);
		assert_int_equal(st.files_over_budget, 1);
		assert_null(name_at(s, mbig, 0x1000));
		release(s, mbig);
	}
	/* unheld: it goes to make room for the refused one, after it went idle */
	release(s, msmall);
	symbolizer__trim(s, fixture_mono_ns() + SYMBOLIZER_IDLE_NS);
	file_at(s, root, big, inode_of(big), &mbig2);
	symbolizer__stats(s, &st);
	assert_true(st.files_evicted >= 1);
	assert_true(st.bytes_cached <= st.bytes_budget);
	assert_non_null(mbig2->maps[0].file);
	release(s, mbig2);
	symbolizer__trim(s, fixture_mono_ns() + SYMBOLIZER_IDLE_NS);
	symbolizer__stats(s, &st);
	assert_int_equal(st.files_cached, 0);
	assert_int_equal(st.bytes_cached, 0);
	close(root);
	symbolizer__free(s);
}

static void symbolizer__kernel__without_kallsyms__unnamed_kernel_frame(void **state)
{
	struct symbolizer *s = symbolizer__new(0, 64 << 20);
	struct sym_frame f;

	assert_non_null(s);
	assert_false(symbolizer__has_kernel(s));
	assert_int_equal(symbolizer__kernel(s, 0xffffffff81000000ULL, 1, &f), 0);
	assert_string_equal(f.mapping_path, "[kernel.kallsyms]");
	assert_null(f.function);
	assert_null(f.build_id);
	symbolizer__free(s);
	symbolizer__free(NULL);
}

static void symbolizer__new__kernel_wanted__created_with_or_without_kallsyms(void **state)
{
	/* hidden kallsyms (not root, kptr_restrict) only leave kernel frames unnamed */
	struct symbolizer *s = symbolizer__new(1, 64 << 20);
	struct sym_frame f;

	assert_non_null(s);
	assert_int_equal(symbolizer__kernel(s, 0xffffffff81000000ULL, 0, &f), 0);
	assert_string_equal(f.mapping_path, "[kernel.kallsyms]");
	if (!symbolizer__has_kernel(s))
		assert_null(f.function);
	symbolizer__free(s);
}

/* the build id in /sys/kernel/notes, by a walk of its own; false when none */
static bool kernel_notes_build_id(char *hex)
{
	uint8_t buf[4096];
	size_t len, pos = 0, i;
	FILE *f = fopen("/sys/kernel/notes", "r");

	if (!f)
		return false;
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	while (pos + 12 <= len) {
		uint32_t namesz, descsz, type;

		memcpy(&namesz, buf + pos, 4);
		memcpy(&descsz, buf + pos + 4, 4);
		memcpy(&type, buf + pos + 8, 4);
		pos += 12;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(buf + pos, "GNU", 4)) {
			pos += 4;
			for (i = 0; i < descsz && pos + i < len; i++)
				sprintf(hex + 2 * i, "%02x", buf[pos + i]);
			return true;
		}
		pos += (namesz + 3) / 4 * 4 + (descsz + 3) / 4 * 4;
	}
	return false;
}

/* the first symbol /proc/kallsyms places in a module, and that module */
static bool module_symbol(uint64_t *addr, char *module)
{
	char line[700], name[600];
	unsigned long long a;
	bool found = false;
	FILE *f;

	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%llx %*c %599s [%255[^]]]", &a, name, module) == 3 && a;
	fclose(f);
	*addr = a;
	return found;
}

static void symbolizer__kernel__kernel_mapping__text_range_and_build_id(void **state)
{
	uint64_t stext = fixture_kallsyms_addr("_stext"), etext = fixture_kallsyms_addr("_etext"),
		 addr;
	char want[ELF_SYMS_BUILD_ID_HEX], module[256], mapping[260];
	struct symbolizer *s;
	struct sym_frame f;
	bool has_id = kernel_notes_build_id(want);

	s = symbolizer__new(1, 64 << 20);
	assert_non_null(s);
	assert_int_equal(symbolizer__kernel(s, stext ? stext + 16 : 0xffffffff81000010ULL, 0, &f),
			 0);
	assert_string_equal(f.mapping_path, "[kernel.kallsyms]");
	/* /sys/kernel/notes is world-readable: the build id needs no root */
	if (has_id)
		assert_string_equal(f.build_id, want);
	else
		assert_null(f.build_id);
	if (geteuid() != 0 || !stext || !etext || !symbolizer__has_kernel(s)) {
		symbolizer__free(s);
		print_message("SKIP range: kernel addresses hidden (not root, or kptr_restrict)\n");
		skip();
	}
	assert_true(f.map_start == stext);
	assert_true(f.map_end == etext);
	assert_true(f.map_start < f.map_end);
	/* a module (ftrace trampolines and BPF programs count as one) maps apart */
	if (module_symbol(&addr, module)) {
		assert_int_equal(symbolizer__kernel(s, addr, 0, &f), 0);
		snprintf(mapping, sizeof(mapping), "[%s]", module);
		assert_string_equal(f.mapping_path, mapping);
		assert_true(f.map_start == 0 && f.map_end == 0);
		assert_null(f.build_id);
	}
	symbolizer__free(s);
}

static void symbolizer__kernel__with_kallsyms__known_symbol_named(void **state)
{
	uint64_t addr = fixture_kallsyms_addr("do_sys_openat2");
	struct symbolizer *s;
	struct sym_frame f;

	if (geteuid() != 0 || !addr) {
		print_message("kernel addresses hidden (not root, or no do_sys_openat2)\n");
		skip();
	}
	s = symbolizer__new(1, 64 << 20);
	assert_non_null(s);
	assert_true(symbolizer__has_kernel(s));
	assert_int_equal(symbolizer__kernel(s, addr + 4, 0, &f), 0);
	assert_string_equal(f.function, "do_sys_openat2");
	assert_string_equal(f.system_name, "do_sys_openat2");
	assert_string_equal(f.mapping_path, "[kernel.kallsyms]");
	/* a return address at the very start belongs to the call before it */
	assert_int_equal(symbolizer__kernel(s, addr, 1, &f), 0);
	assert_true(!f.function || strcmp(f.function, "do_sys_openat2"));
	symbolizer__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(symbolizer__attach__same_file_twice__parsed_once),
		cmocka_unit_test(symbolizer__user__plt_stub__shown_with_its_plt_suffix),
		cmocka_unit_test(symbolizer__attach__other_inode_than_mapped__refused_and_counted),
		cmocka_unit_test(
			symbolizer__attach__path_replaced_after_mmap__named_from_mapped_file),
		cmocka_unit_test(symbolizer__attach__minidebuginfo_bomb__refused_and_counted),
		cmocka_unit_test(symbolizer__attach__vdso_of_other_size__no_file),
		cmocka_unit_test(symbolizer__attach__file_rewritten_in_place__new_contents_named),
		cmocka_unit_test(symbolizer__attach__copies_with_one_build_id__parsed_once),
		cmocka_unit_test(symbolizer__attach__past_budget__unheld_evicted_then_refused),
		cmocka_unit_test(symbolizer__kernel__without_kallsyms__unnamed_kernel_frame),
		cmocka_unit_test(symbolizer__new__kernel_wanted__created_with_or_without_kallsyms),
		cmocka_unit_test(symbolizer__kernel__with_kallsyms__known_symbol_named),
		cmocka_unit_test(symbolizer__kernel__kernel_mapping__text_range_and_build_id),
	};

	return cmocka_run_group_tests_name("symbolizer", tests, NULL, NULL);
}
