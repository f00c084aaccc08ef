// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Shared unit test fixtures: see fixtures.h */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixtures.h"

void fixture_require_root(const char *what)
{
	if (geteuid() == 0)
		return;
	print_message("SKIP: not root: %s\n", what);
	skip();
}

void *fixture_exact_copy(const void *text, size_t len)
{
	char *copy = malloc(len ? len : 1);

	assert_non_null(copy);
	memcpy(copy, text, len);
	return copy;
}

char *fixture_tmpdir(const char *name)
{
	char *dir = malloc(PATH_MAX);

	assert_non_null(dir);
	snprintf(dir, PATH_MAX, "/tmp/ctxprof-%s.XXXXXX", name);
	assert_non_null(mkdtemp(dir));
	return dir;
}

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	return remove(path) && errno != ENOENT ? -1 : 0;
}

void fixture_tmpdir_remove(char *dir)
{
	if (!dir)
		return;
	/* depth first, links not followed: only what is below @dir goes */
	if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS))
		print_message("cannot remove %s: %s\n", dir, strerror(errno));
	free(dir);
}

void fixture_put(const char *dir, const char *rel, const char *fmt, ...)
{
	char path[PATH_MAX], *slash;
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	assert_int_equal(fclose(f), 0);
}

void fixture_read_file(const char *path, uint8_t **buf, size_t *len)
{
	struct stat st;
	FILE *f = fopen(path, "rb");

	assert_non_null(f);
	assert_int_equal(fstat(fileno(f), &st), 0);
	*len = st.st_size;
	*buf = malloc(*len ? *len : 1);
	assert_non_null(*buf);
	assert_int_equal(fread(*buf, 1, *len, f), *len);
	fclose(f);
}

char *fixture_trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n'))
		*--end = '\0';
	return s;
}

const char *fixture_hostile_elf(const char *dir, const char *name, const char *args)
{
	static char path[PATH_MAX];
	char cmd[2 * PATH_MAX + 256], kind[32];
	const char *src = getenv("SRCDIR");

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* the kind comes first, the output file next, then its options */
	assert_int_equal(sscanf(args, "%31s", kind), 1);
	snprintf(cmd, sizeof(cmd), "python3 '%s/tests/hostile_elf.py' %s '%s' %s",
		 src && *src ? src : ".", kind, path, args + strlen(kind));
	if (system(cmd) != 0)
		fail_msg("cannot make %s: %s", path, cmd);
	return path;
}

struct thread_registry *fixture_registry_new(const struct thread_registry_opts *opts)
{
	struct thread_registry *r;

	thread_registry__register_thread();
	r = thread_registry__new(opts);
	assert_non_null(r);
	return r;
}

void fixture_registry_free(struct thread_registry *r)
{
	thread_registry__free(r);
	thread_registry__unregister_thread();
}

struct thread_registry *fixture_registry_with_states(struct process_states *ps)
{
	struct thread_registry_opts opts = {.state_free = process_states_retire,
					    .state_unlinked = process_states_unlinked,
					    .state_ctx = ps};

	return fixture_registry_new(&opts);
}

int fixture_registry_setup(void **state)
{
	*state = fixture_registry_new(NULL);
	return 0;
}

int fixture_registry_teardown(void **state)
{
	fixture_registry_free(*state);
	return 0;
}

int fixture_add_process(struct thread_registry *r, uint32_t pid, uint64_t start, const char *comm,
			const char *cgroup, uint32_t exec_id)
{
	struct thread_desc td = {.tid = pid, .pid = pid, .ppid = 1, .start = start};
	struct process_desc pd = {
		.pid = pid,
		.ppid = 1,
		.start = start,
		.exe = "/usr/bin/fixture",
		.cgroup = cgroup,
		.exec_id = exec_id,
	};

	snprintf(td.comm, sizeof(td.comm), "%s", comm);
	snprintf(pd.comm, sizeof(pd.comm), "%s", comm);
	return thread_registry__insert(r, &td, &pd, 0);
}

int fixture_exec(struct thread_registry *r, uint32_t pid, uint64_t start, const char *comm,
		 uint32_t exec_id)
{
	struct exec_desc ed = {
		.tid = pid,
		.old_tid = pid,
		.pd = {.pid = pid,
		       .ppid = 1,
		       .start = start,
		       .exe = "/usr/bin/fixture",
		       .exec_id = exec_id},
	};

	snprintf(ed.pd.comm, sizeof(ed.pd.comm), "%s", comm);
	return thread_registry__exec(r, &ed);
}

static int copy_thread(void *ctx, const struct thread_info *t)
{
	struct fixture_thread *s = ctx;
	const struct process_image *img = process_info__image(t->proc);

	s->found = 1;
	s->t = *t;
	s->t.ppid = thread_info__ppid(t);
	s->p = *t->proc;
	s->p.ppid = process_info__ppid(t->proc);
	s->p.image = NULL;
	s->img = *img;
	s->img.exe = s->img.cgroup = NULL;
	s->img.state = NULL;
	snprintf(s->exe, sizeof(s->exe), "%s", img->exe);
	snprintf(s->cgroup, sizeof(s->cgroup), "%s", img->cgroup);
	return 0;
}

struct fixture_thread fixture_look(struct thread_registry *r, uint32_t tid)
{
	struct fixture_thread s = {0};

	thread_registry__visit(r, tid, copy_thread, &s);
	return s;
}

uint64_t fixture_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* the /proc/self/maps line of the mapping holding @addr, without its newline */
static void maps_line_of(uint64_t addr, char *line, size_t size)
{
	unsigned long long start, end;
	FILE *f = fopen("/proc/self/maps", "r");

	assert_non_null(f);
	while (fgets(line, size, f)) {
		if (sscanf(line, "%llx-%llx", &start, &end) == 2 && addr >= start && addr < end) {
			line[strcspn(line, "\n")] = '\0';
			fclose(f);
			return;
		}
	}
	fail_msg("no mapping holds %#llx", (unsigned long long)addr);
}

struct process_states *fixture_states_new(struct symbolizer *sym)
{
	struct process_states *ps = process_states__new();
	struct process_state_resolver r;

	assert_non_null(ps);
	symbolizer__resolver(sym, &r);
	process_states__set_resolver(ps, &r);
	return ps;
}

void fixture_map_code(struct process_states *ps, struct process_state *st, uint64_t addr,
		      int64_t shift, const char *path)
{
	unsigned long long start, end;
	char line[PATH_MAX + 128], text[2 * PATH_MAX + 160], *file;
	int rest, len;

	maps_line_of(addr, line, sizeof(line));
	/* "start-end perms offset dev inode   path": @path replaces the last field */
	assert_int_equal(sscanf(line, "%llx-%llx %n", &start, &end, &rest), 2);
	assert_non_null(strstr(line, " r-xp "));
	file = strchr(line, '/');
	assert_non_null(file);
	if (path)
		snprintf(file, sizeof(line) - (size_t)(file - line), "%s", path);
	len = snprintf(text, sizeof(text), "%llx-%llx %s\n", start + shift, end + shift,
		       line + rest);
	/* our own pid: the file is opened through /proc/self/root */
	assert_int_equal(process_states__add_text(ps, st, getpid(), text, len, 1), 1);
}

uint64_t fixture_kallsyms_addr(const char *name)
{
	unsigned long long addr, found = 0;
	char type, sym[600];
	char line[700];
	FILE *f;

	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %599s", &addr, &type, sym) == 3 && !strcmp(sym, name)) {
			found = addr;
			break;
		}
	}
	fclose(f);
	return found;
}

struct fixture_plt_stub *fixture_plt_stubs(const char *objdump, const char *path, size_t *nr)
{
	char cmd[PATH_MAX + 96], line[1200];
	struct fixture_plt_stub *stubs = NULL, s;
	size_t cap = 0;
	FILE *f;

	*nr = 0;
	snprintf(cmd, sizeof(cmd), "%s -d -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null",
		 objdump, path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		size_t len;

		if (sscanf(line, "%" SCNx64 " <%1023[^>]>:", &s.addr, s.name) != 2)
			continue;
		len = strlen(s.name);
		if (len < 5 || strcmp(s.name + len - 4, "@plt"))
			continue; /* PLT0 ("<.plt>", "<getenv@plt-0x10>") */
		if (*nr == cap) {
			cap = cap ? 2 * cap : 64;
			stubs = realloc(stubs, cap * sizeof(*stubs));
			assert_non_null(stubs);
		}
		stubs[(*nr)++] = s;
	}
	assert_int_equal(pclose(f), 0);
	return stubs;
}

const char *fixture_pprof_tool(void)
{
	const char *path = getenv("PPROF");

	if (!path || !*path) {
		print_message("SKIP: PPROF is not set (make check sets it to build/pprof)\n");
		return NULL;
	}
	if (access(path, X_OK)) {
		print_message("SKIP: PPROF=%s is not executable: %s\n", path, strerror(errno));
		return NULL;
	}
	return path;
}

char *fixture_run_pprof(const char *tool, const char *args, const char *file, int *status)
{
	char cmd[PATH_MAX * 2 + 256];
	size_t len = 0, cap = 4096;
	char *out = malloc(cap);
	FILE *fp;
	size_t n;
	int rc;

	assert_non_null(out);
	/* HOME points pprof's caches at a scratch place, never the user's */
	snprintf(cmd, sizeof(cmd), "HOME=/tmp '%s' %s '%s' 2>&1", tool, args, file);
	fp = popen(cmd, "r");
	assert_non_null(fp);
	while ((n = fread(out + len, 1, cap - len - 1, fp)) > 0) {
		len += n;
		if (cap - len < 2) {
			cap *= 2;
			out = realloc(out, cap);
			assert_non_null(out);
		}
	}
	out[len] = '\0';
	rc = pclose(fp);
	*status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
	return out;
}

#define MAX_LOCS 256

/*
 * The function name of a -raw location line,
 * "     1: 0x400123 M=1 main app.c:0 s=0" ("M=<id> " only with a mapping):
 * what lies between the address (or mapping) and the last
 * " <file>:<line> s=" (a name may hold spaces, a file name is empty for
 * frames without one); the address when there is no function.
 */
static void location_name(const char *line, const char *nl, char *name, size_t size)
{
	const char *from, *s = NULL, *p, *sp;
	unsigned long long addr = 0;
	int n = 0;

	sscanf(line, "%*s %llx %n", &addr, &n);
	for (p = line; (p = strstr(p, " s=")) && p < nl; p++)
		s = p;
	from = line + n;
	if (!strncmp(from, "M=", 2))
		from += strcspn(from, " ") + 1;
	if (n && s && s >= from) {
		/* the space before "<file>:<line>" ends the name */
		for (sp = s - 1; sp >= from && *sp != ' '; sp--)
			;
		if (sp > from) {
			snprintf(name, size, "%.*s", (int)(sp - from), from);
			return;
		}
	}
	snprintf(name, size, "%#llx", addr);
}

char *fixture_pprof_samples(const char *raw)
{
	const char *locs = strstr(raw, "\nLocations\n");
	const char *line, *nl, *colon;
	static char names[MAX_LOCS][128];
	size_t len = 0, cap;
	unsigned long id;
	char *res;
	long value;
	int n, pos;

	assert_non_null(locs);
	memset(names, 0, sizeof(names));
	for (line = locs + 11; *line && strncmp(line, "Mappings", 8); line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		if (sscanf(line, "%lu:", &id) == 1 && id < MAX_LOCS)
			location_name(line, nl, names[id], sizeof(names[id]));
	}
	cap = strlen(raw) * 4 + 1;
	res = malloc(cap);
	assert_non_null(res);
	res[0] = '\0';
	line = strstr(raw, "\nSamples:\n");
	assert_non_null(line);
	line = strchr(line + 10, '\n') + 1; /* skip the sample types */
	for (; line < locs; line = nl + 1) {
		nl = strchr(line, '\n');
		if (strspn(line, " ") >= 16) {
			/* a label line */
			len += snprintf(res + len, cap - len, " |%.*s", (int)(nl - line - 15),
					line + 15);
			continue;
		}
		if (len)
			res[len++] = '\n';
		colon = strchr(line, ':');
		assert_true(colon && colon < nl);
		/* values, single-spaced */
		for (pos = 0; line + pos < colon && sscanf(line + pos, "%ld%n", &value, &n) == 1;
		     pos += n)
			len += snprintf(res + len, cap - len, pos ? " %ld" : "%ld", value);
		res[len++] = ':';
		/* location ids */
		for (pos = colon + 1 - line;
		     line + pos < nl && sscanf(line + pos, "%lu%n", &id, &n) == 1; pos += n)
			len += snprintf(res + len, cap - len, " %s",
					id < MAX_LOCS ? names[id] : "?");
		assert_true(len < cap);
	}
	if (len)
		res[len++] = '\n';
	res[len] = '\0';
	return res;
}

void fixture_assert_contains(const char *haystack, const char *needle)
{
	if (!strstr(haystack, needle))
		fail_msg("expected \"%s\" in:\n%s", needle, haystack);
}
