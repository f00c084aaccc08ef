// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "appctx/python_proc.h"
#include "elf/elf_file.h"
#include "processes/mapped_file.h"
#include "processes/proc_maps.h"
#include "processes/proc_mem.h"
#include "processes/process_state.h"
#include "symbols/python_code.h"
#include "symbols/python_debug_offsets.h"
#include "symbols/python_eval.h"
#include "symbols/python_layout.h"
#include "symbols/symbolizer.h"
#include "records.h"

/* code objects named per process at most (each read once) */
#define PY_CACHE_MAX 65536
/* a range outside the maps last read: read them again, at most this often */
#define PY_MAPS_REREAD_NS 1000000000ull
/* a failed naming read again at most this often (a second apart): one that
 * fails every time (an import's code object, freed) costs nothing after */
#define PY_NAME_RETRIES 5
/* the longest .dynstr looked through (libpython3.11's is about 200 KiB) */
#define PY_DYNSTR_MAX (16u << 20)

struct py_entry {
	uint64_t code; /* 0: empty */
	uint32_t check;
	int err;	    /* 0: @name holds the names; else why not */
	uint64_t failed_ns; /* @err: when, so it is read again PY_MAPS_REREAD_NS later */
	uint32_t retries;   /* ... and how often it was, PY_NAME_RETRIES at most */
	struct python_code_name name;
	size_t bytes; /* charged to the symbolizer */
};

struct python_proc {
	struct python_procs *pp;
	struct python_proc *next, **pprev; /* in pp->procs */
	struct process_state *st;
	uint32_t pid, exec_id;
	bool in_map;
	bool failed; /* the cache holds entries whose naming failed: read again each poll */
	struct python_layout layout;
	struct {
		uint64_t code_type, unicode_type, bytes_type;
	} types; /* their addresses in the process */
	struct proc_mem *mem;
	struct proc_maps *maps;
	uint64_t maps_read_ns;
	bool gone; /* its memory cannot be opened any more */
	struct py_entry *cache;
	size_t cap, nr;
	size_t charged;
};

/* executables found to hold no interpreter, remembered at most */
#define NO_INTERPRETER_MAX 4096

struct python_procs {
	int map_fd;
	int verbose;
	struct symbolizer *sym;
	struct python_proc *procs;
	struct python_procs_stats st;
	struct py_entry scratch; /* a name that was not kept, until the next call */
	/* by the identity their mapping was resolved to: each exec of a
	 * program seen before costs no open */
	struct file_id_set *no_interpreter;
	/* the refusals said on stderr: bit (minor & 63) of the kind's word (version, build,
	 * layout), so each version is said once a run, whatever its processes' number */
	uint64_t said[3];
};

/* what an interpreter file says of itself */
struct py_file {
	uint64_t runtime, eval, eval_size, code_type, unicode_type, bytes_type, none_obj,
		frame_type;
	uint64_t version_at;
	uint32_t version;
	unsigned int found; /* PY_SYM_* bits */
	int layout_err;	    /* 0: @layout holds its layout; else why not (-ENOENT: no layout) */
	const char *why;    /* a refused layout: what failed */
	struct python_layout layout;
	struct python_eval_range eval_ranges[PYTHON_EVAL_RANGES];
	size_t nr_eval;
};

enum {
	PY_SYM_RUNTIME = 1 << 0,
	PY_SYM_EVAL = 1 << 1,
	PY_SYM_CODE_TYPE = 1 << 2,
	PY_SYM_UNICODE_TYPE = 1 << 3,
	PY_SYM_BYTES_TYPE = 1 << 4,
	PY_SYM_VERSION = 1 << 5,
	PY_SYM_NONE = 1 << 6,
	PY_SYM_FRAME_TYPE = 1 << 7,
	PY_SYM_ALL = (1 << 8) - 1,
};

static const struct {
	const char *name;
	unsigned int bit;
	size_t off; /* in struct py_file */
} py_syms[] = {
	{"_PyRuntime", PY_SYM_RUNTIME, offsetof(struct py_file, runtime)},
	{"_PyEval_EvalFrameDefault", PY_SYM_EVAL, offsetof(struct py_file, eval)},
	{"PyCode_Type", PY_SYM_CODE_TYPE, offsetof(struct py_file, code_type)},
	{"PyUnicode_Type", PY_SYM_UNICODE_TYPE, offsetof(struct py_file, unicode_type)},
	{"PyBytes_Type", PY_SYM_BYTES_TYPE, offsetof(struct py_file, bytes_type)},
	{"Py_Version", PY_SYM_VERSION, offsetof(struct py_file, version_at)},
	{"_Py_NoneStruct", PY_SYM_NONE, offsetof(struct py_file, none_obj)},
	{"PyFrame_Type", PY_SYM_FRAME_TYPE, offsetof(struct py_file, frame_type)},
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct python_procs *python_procs__new(int map_fd, struct symbolizer *sym, int verbose)
{
	struct python_procs *pp = calloc(1, sizeof(*pp));

	if (!pp)
		return NULL;
	pp->map_fd = map_fd;
	pp->sym = sym;
	pp->verbose = verbose;
	pp->no_interpreter = file_id_set__new(NO_INTERPRETER_MAX);
	if (!pp->no_interpreter) {
		free(pp);
		return NULL;
	}
	return pp;
}

/* the symbols of @ef's table of @type that the walk needs, into @f */
static void scan_symbols(const struct elf_file *ef, uint32_t type, struct py_file *f)
{
	struct elf_symtab st;
	char name[32]; /* longer than any name looked for: a longer one is cut, and differs */
	Elf64_Sym sym;
	size_t i, k;

	if (elf_file__symtab(ef, type, &st))
		return;
	if (elf_symtab__load_strings(&st, PY_DYNSTR_MAX))
		goto out;
	for (i = 1; i < st.nr && f->found != PY_SYM_ALL && !elf_symtab__get(&st, i, &sym); i++) {
		if (sym.st_shndx == SHN_UNDEF || !sym.st_name || !sym.st_value ||
		    elf_symtab__name(&st, sym.st_name, name, sizeof(name), NULL))
			continue;
		for (k = 0; k < sizeof(py_syms) / sizeof(py_syms[0]); k++) {
			if ((f->found & py_syms[k].bit) || strcmp(name, py_syms[k].name))
				continue;
			*(uint64_t *)((char *)f + py_syms[k].off) = sym.st_value;
			if (py_syms[k].bit == PY_SYM_EVAL)
				f->eval_size = sym.st_size;
			f->found |= py_syms[k].bit;
		}
	}
out:
	elf_symtab__release(&st);
}

/*
 * The layout of @f's version into @f: the one its _Py_DebugOffsets give (3.13
 * on, read from the file: they are _PyRuntime's initial value, constant),
 * else the table's.
 */
static void find_layout(const struct elf_file *ef, const struct elf_load *loads, size_t n,
			struct py_file *f)
{
	const struct python_layout *l;
	uint8_t buf[1024];
	size_t size = python_debug_offsets__size(f->version);
	uint64_t off;

	if (!size) {
		l = python_layout__find(f->version);
		f->layout_err = l ? 0 : -ENOENT;
		if (l)
			f->layout = *l;
#if defined(__aarch64__)
		/* glibc's pthread_self() is the thread pointer on x86-64 only
		 * (arm64: below it by an unpublished struct pthread's size) */
		if (l && (l->walk & PYTHON_WALK_TID_PTHREAD)) {
			f->layout_err = -EOPNOTSUPP;
			f->why = "CPython before 3.11 on arm64 (its threads are found by "
				 "pthread_self)";
		}
#endif
		return;
	}
	if (size > sizeof(buf) || elf_loads__vaddr_to_offset(loads, n, f->runtime, size, &off) ||
	    elf_file__read(ef, off, buf, size)) {
		f->layout_err = -EINVAL;
		f->why = "_Py_DebugOffsets not in the file";
		return;
	}
	f->layout_err = python_debug_offsets__parse(buf, size, f->version, &f->layout, &f->why);
}

/* the minor version a file's name says (python3.N, libpython3.N.so...); 0: none */
static unsigned int minor_from_name(const char *path)
{
	const char *s = strrchr(path, '/');
	unsigned int minor = 0;

	s = s ? s + 1 : path;
	if (!strncmp(s, "lib", 3))
		s += 3;
	if (strncmp(s, "python3.", 8))
		return 0;
	for (s += 8; *s >= '0' && *s <= '9' && minor < 100; s++)
		minor = minor * 10 + (unsigned int)(*s - '0');
	/* python3.9d, python3.13t: another build, another layout */
	return *s && *s != '.' && *s != '-' ? 0 : minor;
}

/* the tp_basicsize of the type object at ELF address @type */
static int basicsize(const struct elf_file *ef, const struct elf_load *loads, size_t n,
		     uint64_t type, int64_t *size)
{
	uint64_t off;

	/* PyTypeObject: ob_refcnt, ob_type, ob_size, tp_name, then tp_basicsize */
	if (elf_loads__vaddr_to_offset(loads, n, type + 32, sizeof(*size), &off))
		return -EINVAL;
	return elf_file__read(ef, off, size, sizeof(*size));
}

/*
 * A layout against the interpreter's own type objects, a second source in
 * the same file: PyBytes_Type's tp_basicsize is ob_sval's offset + 1 (its
 * NUL), PyCode_Type's is co_code_adaptive's (3.11 on: the code follows the
 * object) or, for a table that says it, sizeof(PyCodeObject), as
 * PyFrame_Type's is sizeof(PyFrameObject).  Refused when one differs.
 */
static void check_sizes(const struct elf_file *ef, const struct elf_load *loads, size_t n,
			struct py_file *f)
{
	const struct python_layout *l = &f->layout;
	int64_t code = 0, frame = 0, bytes = 0;

	if (basicsize(ef, loads, n, f->code_type, &code) ||
	    basicsize(ef, loads, n, f->bytes_type, &bytes) ||
	    (l->frame_basicsize && basicsize(ef, loads, n, f->frame_type, &frame)) ||
	    bytes != (int64_t)l->bytes_data + 1 ||
	    code != (l->code_basicsize ? l->code_basicsize : l->code_adaptive) ||
	    (l->frame_basicsize && frame != l->frame_basicsize)) {
		f->layout_err = -EINVAL;
		f->why = "its code or bytes objects not of the size its layout says";
	}
}

/*
 * The interpreter's symbols, version and layout from @ef, the file @path
 * maps; -ENOENT: not one.  Before 3.11 (no Py_Version) the version is its
 * file's name's, the table's sizes checked against the file's.
 */
static int read_interpreter(const struct elf_file *ef, const char *path, struct py_file *f)
{
	unsigned int want = PY_SYM_ALL, minor;
	const struct elf_load *loads;
	uint64_t off;
	size_t n;

	memset(f, 0, sizeof(*f));
	scan_symbols(ef, SHT_DYNSYM, f);
	if (f->found != PY_SYM_ALL)
		scan_symbols(ef, SHT_SYMTAB, f);
	if (!(f->found & PY_SYM_RUNTIME))
		return -ENOENT;
	if (!(f->found & PY_SYM_VERSION)) {
		/* Py_Version came with 3.11, _PyRuntime with 3.7: one between them */
		minor = minor_from_name(path);
		if (minor < 7 || minor > 10 || !python_layout__find(0x030000f0u | minor << 16)) {
			f->layout_err = -ENOENT;
			f->version = minor >= 7 && minor <= 10 ? 0x030000f0u | minor << 16 : 0;
			return 0;
		}
		f->version = 0x030000f0u | minor << 16;
		want &= ~PY_SYM_VERSION;
	}
	if ((f->found & want) != want || !f->eval_size)
		return -EINVAL;
	loads = elf_file__loads(ef, &n);
	if ((f->found & PY_SYM_VERSION) &&
	    (elf_loads__vaddr_to_offset(loads, n, f->version_at, sizeof(f->version), &off) ||
	     elf_file__read(ef, off, &f->version, sizeof(f->version))))
		return -EINVAL;
	find_layout(ef, loads, n, f);
	if (!f->layout_err)
		check_sizes(ef, loads, n, f);
	f->nr_eval = python_eval__ranges(ef, f->eval, f->eval_size, f->eval_ranges);
	return 0;
}

/* the load bias of the file @m maps (runtime address - ELF address); false when unknown */
static bool load_bias(const struct elf_file *ef, const struct proc_map *m, uint64_t *bias)
{
	const struct elf_load *loads, *l;
	size_t n;

	loads = elf_file__loads(ef, &n);
	l = elf_loads__for_mapping(loads, n, m->pgoff);
	if (!l)
		return false;
	*bias = m->start - m->pgoff + l->offset - l->vaddr;
	return true;
}

/* an interpreter a program embeds: libpython3.x.so... */
static bool is_libpython(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libpython3.", 11) && strstr(base, ".so");
}

/*
 * The interpreter among @all's executable mappings: the executable, else a
 * libpython.  Return: 0 and @f, @bias set; -ENOENT: no interpreter;
 * -EACCES: one could not be read.
 */
static int find_interpreter(struct python_procs *pp, pid_t pid, const struct proc_maps *all,
			    const struct mappings *snap, struct py_file *f, uint64_t *bias)
{
	const struct proc_map *exe = mapped_file__exe(pid, all), *m;
	const struct file_id *exe_id = NULL;
	struct elf_file *ef;
	int root_fd = -1, fd, err = -ENOENT, ret;
	bool lib = false;
	size_t i;

	for (i = 0; i < all->nr && !lib; i++)
		lib = (all->maps[i].perms & PROC_MAP_X) && is_libpython(all->maps[i].path);
	/* a program seen before, neither python nor embedding one: no open */
	if (exe)
		exe_id = mappings__file_id(snap, exe->inode, exe->dev_major, exe->dev_minor);
	if (!lib && exe_id && file_id_set__has(pp->no_interpreter, exe_id))
		return -ENOENT;
	for (i = 0; i <= all->nr && err == -ENOENT; i++) {
		m = i == 0 ? exe : &all->maps[i - 1];
		if (!m || (i > 0 && (!(m->perms & PROC_MAP_X) || !is_libpython(m->path))))
			continue;
		fd = mapped_file__open(pid, m, &root_fd);
		if (fd < 0) {
			err = -EACCES;
			break;
		}
		ef = elf_file__open_fd(fd);
		close(fd);
		if (!ef)
			continue;
		ret = read_interpreter(ef, m->path, f);
		if (!ret && !load_bias(ef, m, bias))
			ret = -EINVAL;
		elf_file__free(ef);
		if (ret != -ENOENT)
			err = ret;
	}
	if (root_fd >= 0)
		close(root_fd);
	if (err == -ENOENT && !lib && exe_id)
		file_id_set__add(pp->no_interpreter, exe_id);
	return err;
}

static struct python_proc *proc_new(struct python_procs *pp, struct process_state *st)
{
	struct python_proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pp = pp;
	p->st = st;
	p->pid = st->pid;
	p->exec_id = st->exec_id;
	p->next = pp->procs;
	if (p->next)
		p->next->pprev = &p->next;
	p->pprev = &pp->procs;
	pp->procs = p;
	return p;
}

/* the sampler's view of layout @l */
static void fill_offsets(struct python_proc_ref *ref, const struct python_layout *l)
{
	memset(ref, 0, sizeof(*ref));
	ref->walk = l->walk;
	ref->interp_head = l->interp_head;
	ref->threads_head = l->threads_head;
	ref->tstate_next = l->tstate_next;
	ref->tstate_native_thread_id = l->tstate_native_thread_id;
	ref->tstate_frame = l->tstate_frame;
	ref->cframe_current_frame = l->cframe_current_frame;
	ref->frame_code = l->frame_code;
	ref->frame_previous = l->frame_previous;
	ref->frame_prev_instr = l->frame_prev_instr;
	ref->frame_is_entry = l->frame_is_entry;
	ref->code_type_off = l->code_type_off;
	ref->code_firstlineno = l->code_firstlineno;
	ref->code_filename = l->code_filename;
	ref->code_qualname = l->code_qualname;
	ref->code_adaptive = l->code_adaptive;
}

/*
 * An interpreter whose layout we do not have: counted by why, said once a
 * run for each why and minor version (each time with -v): its samples keep
 * their native frames.
 */
static void refused(struct python_procs *pp, uint32_t pid, const struct py_file *f)
{
	uint64_t bit = 1ull << (f->version >> 16 & 63);
	const char *what;
	unsigned int kind;

	if (f->layout_err == -ENOENT) {
		pp->st.unsupported_version++;
		kind = 0;
		what = "a version whose frames we cannot read";
	} else if (f->layout_err == -EOPNOTSUPP) {
		pp->st.unsupported_build++;
		kind = 1;
		what = f->why;
	} else {
		pp->st.bad_layout++;
		kind = 2;
		what = f->why ? f->why : "its layout refused";
	}
	if (!pp->verbose && (pp->said[kind] & bit))
		return;
	pp->said[kind] |= bit;
	if (!f->version)
		fprintf(stderr,
			"ctxprof: pid %u: Python before 3.11 (no Py_Version), %s: native frames "
			"only\n",
			pid, what);
	else
		fprintf(stderr, "ctxprof: pid %u: Python %u.%u, %s: native frames only\n", pid,
			f->version >> 24, f->version >> 16 & 0xff, what);
}

void python_procs__changed(void *ctx, struct process_state *st, struct mappings *snap,
			   const struct proc_maps *all)
{
	struct python_procs *pp = ctx;
	struct python_proc_ref ref;
	struct python_proc *p;
	struct py_file f;
	uint64_t bias = 0;
	bool retired;
	size_t i;
	int err;

	pthread_mutex_lock(&st->lock);
	retired = st->retired;
	pthread_mutex_unlock(&st->lock);
	if (st->python || retired || !all)
		return;
	st->python_looked = true;
	err = find_interpreter(pp, (pid_t)st->pid, all, snap, &f, &bias);
	if (err == -ENOENT)
		return;
	if (err == -EACCES) {
		pp->st.unreadable++;
		return;
	}
	if (err) {
		pp->st.unsupported_build++;
		if (pp->verbose)
			fprintf(stderr,
				"ctxprof: pid %u: a Python interpreter without the symbols its "
				"frames are read through: native frames only\n",
				st->pid);
		return;
	}
	if (f.layout_err) {
		refused(pp, st->pid, &f);
		return;
	}
	p = proc_new(pp, st);
	if (!p)
		return;
	st->python = p;
	p->layout = f.layout;
	p->types.code_type = f.code_type + bias;
	p->types.unicode_type = f.unicode_type + bias;
	p->types.bytes_type = f.bytes_type + bias;
	fill_offsets(&ref, &p->layout);
	ref.runtime = f.runtime + bias;
	ref.code_type = f.code_type + bias;
	ref.none_obj = f.none_obj + bias;
	for (i = 0; i < f.nr_eval; i++) {
		ref.eval_start[i] = f.eval_ranges[i].start + bias;
		ref.eval_end[i] = f.eval_ranges[i].end + bias;
	}
	ref.exec_id = st->exec_id;
	ref.version = f.version;
	if (bpf_map_update_elem(pp->map_fd, &p->pid, &ref, BPF_ANY)) {
		pp->st.map_full++;
		return;
	}
	p->in_map = true;
	pp->st.processes++;
	if (pp->verbose)
		fprintf(stderr,
			"ctxprof: pid %u: Python %u.%u, its frames read (layout from %s, "
			"evaluation loop in %zu part%s)\n",
			st->pid, f.version >> 24, f.version >> 16 & 0xff,
			python_debug_offsets__size(f.version) ? "_Py_DebugOffsets" : "our table",
			f.nr_eval, f.nr_eval > 1 ? "s" : "");
}

void python_procs__look(struct python_procs *pp, struct process_state *st)
{
	struct proc_maps *all;

	if (st->python || st->python_looked)
		return;
	st->python_looked = true;
	all = proc_maps__read((pid_t)st->pid);
	if (!all)
		return;
	python_procs__changed(pp, st, NULL, all);
	proc_maps__free(all);
}

/* take @p's layout out of the sampler's map, unless another image put its own there */
static void unmap(struct python_proc *p)
{
	struct python_proc_ref ref;

	if (!p->in_map)
		return;
	if (!bpf_map_lookup_elem(p->pp->map_fd, &p->pid, &ref) && ref.exec_id == p->exec_id)
		bpf_map_delete_elem(p->pp->map_fd, &p->pid);
	p->in_map = false;
}

/* python_code's reader: @p's memory, its maps read again when a range is outside them */
static int read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct python_proc *p = ctx;
	struct proc_maps *fresh;
	uint64_t now;
	int err;

	if (p->gone)
		return -ESRCH;
	if (!p->mem) {
		p->mem = proc_mem__open((pid_t)p->pid);
		if (!p->mem) {
			/* only a process that left is given up on */
			p->gone = errno == ENOENT || errno == ESRCH;
			return -errno;
		}
	}
	err = p->maps ? proc_mem__read(p->mem, p->maps, addr, buf, len) : -EACCES;
	if (err != -EACCES)
		return err;
	now = now_ns();
	if (p->maps && now - p->maps_read_ns < PY_MAPS_REREAD_NS)
		return err;
	fresh = proc_maps__read((pid_t)p->pid);
	if (!fresh)
		return -errno;
	proc_maps__free(p->maps);
	p->maps = fresh;
	p->maps_read_ns = now;
	return proc_mem__read(p->mem, p->maps, addr, buf, len);
}

static size_t slot_of(const struct python_proc *p, uint64_t code, uint32_t check)
{
	uint64_t h = (code ^ ((uint64_t)check << 32)) * 0x9E3779B97F4A7C15ull;

	return (size_t)(h >> 17) & (p->cap - 1);
}

static int cache_grow(struct python_proc *p)
{
	struct py_entry *old = p->cache, *e;
	size_t old_cap = p->cap, i, j;

	p->cap = old_cap ? old_cap * 2 : 256;
	p->cache = calloc(p->cap, sizeof(*p->cache));
	if (!p->cache) {
		p->cache = old;
		p->cap = old_cap;
		return -ENOMEM;
	}
	for (i = 0; i < old_cap; i++) {
		if (!old[i].code)
			continue;
		for (j = slot_of(p, old[i].code, old[i].check); p->cache[j].code;
		     j = (j + 1) & (p->cap - 1))
			;
		e = &p->cache[j];
		*e = old[i];
	}
	free(old);
	return 0;
}

/* the cached entry of (@code, @check), or where it goes (code 0); NULL: no room */
static struct py_entry *cache_find(struct python_proc *p, uint64_t code, uint32_t check)
{
	size_t j;

	if (p->nr >= PY_CACHE_MAX)
		goto full;
	if ((p->nr + 1) * 4 > p->cap * 3 && cache_grow(p))
		goto full;
	for (j = slot_of(p, code, check); p->cache[j].code; j = (j + 1) & (p->cap - 1))
		if (p->cache[j].code == code && p->cache[j].check == check)
			return &p->cache[j];
	return &p->cache[j];
full:
	/* look without adding */
	if (!p->cap)
		return NULL;
	for (j = slot_of(p, code, check); p->cache[j].code; j = (j + 1) & (p->cap - 1))
		if (p->cache[j].code == code && p->cache[j].check == check)
			return &p->cache[j];
	return NULL;
}

static size_t entry_bytes(const struct py_entry *e)
{
	size_t n = sizeof(*e) + e->name.linetable_len;

	if (e->name.qualname)
		n += strlen(e->name.qualname) + 1;
	if (e->name.filename)
		n += strlen(e->name.filename) + 1;
	return n;
}

/* the counter of a naming that ended with @err, each code object counted once */
static uint64_t *outcome(struct python_procs *pp, int err)
{
	if (!err)
		return &pp->st.named;
	if (err == -ESTALE)
		return &pp->st.stale;
	if (err == -EINVAL)
		return &pp->st.malformed;
	return &pp->st.unreadable_code;
}

/* read and name (@code, @check) into @e */
static void name_entry(struct python_procs *pp, struct python_proc *p, uint64_t code,
		       uint32_t check, struct py_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->code = code;
	e->check = check;
	e->err = python_code__name(&p->layout, read_mem, p, p->types.code_type,
				   p->types.unicode_type, p->types.bytes_type, code, check,
				   &e->name);
	if (e->err)
		e->failed_ns = now_ns();
	(*outcome(pp, e->err))++;
}

/*
 * A cached failure read again, at most once a PY_MAPS_REREAD_NS and
 * PY_NAME_RETRIES times: a code object made in an arena mapped after the
 * process's maps were last read is outside them until they are read again,
 * and one sampled while it was being made may hold together a moment
 * later.  Without this the first sample's failure named the function for
 * the rest of the process's life.
 */
static void retry_entry(struct python_procs *pp, struct python_proc *p, struct py_entry *e)
{
	struct py_entry fresh;

	if (e->retries >= PY_NAME_RETRIES || now_ns() - e->failed_ns < PY_MAPS_REREAD_NS)
		return;
	name_entry(pp, p, e->code, e->check, &fresh);
	(*outcome(pp, e->err))--;
	if (fresh.err) {
		e->err = fresh.err;
		e->failed_ns = fresh.failed_ns;
		e->retries++;
		return;
	}
	fresh.bytes = entry_bytes(&fresh);
	if (pp->sym && symbolizer__charge(pp->sym, fresh.bytes - e->bytes)) {
		/* named, but not kept: still the failure it was to the profile */
		pp->st.over_budget++;
		pp->st.named--;
		(*outcome(pp, e->err))++;
		python_code_name__free(&fresh.name);
		e->failed_ns = now_ns();
		e->retries++;
		return;
	}
	p->charged += fresh.bytes - e->bytes;
	*e = fresh;
	pp->st.retried++;
}

static const char *reason(int err)
{
	switch (err) {
	case -ESTALE:
		return "[python: code object changed since the sample]";
	case -EINVAL:
		return "[python: malformed code object]";
	default:
		return "[python: code object unreadable]";
	}
}

/* the entry of (@code, @check), named when new: cached, or the scratch entry */
static struct py_entry *lookup(struct python_procs *pp, struct python_proc *p, uint64_t code,
			       uint32_t check)
{
	struct py_entry *e = code ? cache_find(p, code, check) : NULL;

	if (e && e->code) {
		if (e->err)
			retry_entry(pp, p, e);
		return e;
	}
	if (e) {
		name_entry(pp, p, code, check, e);
		p->failed |= e->err != 0;
		e->bytes = entry_bytes(e);
		if (!pp->sym || !symbolizer__charge(pp->sym, e->bytes)) {
			p->nr++;
			p->charged += e->bytes;
			return e;
		}
		/* not kept: named once more from the scratch entry */
		pp->st.over_budget++;
		python_code_name__free(&pp->scratch.name);
		pp->scratch = *e;
		memset(e, 0, sizeof(*e));
		return &pp->scratch;
	}
	python_code_name__free(&pp->scratch.name);
	e = &pp->scratch;
	memset(e, 0, sizeof(*e));
	if (code)
		name_entry(pp, p, code, check, e);
	else
		e->err = -EINVAL;
	return e;
}

/* @p's failed names read again while it lives: its samples are exported later */
static void retry_failed(struct python_procs *pp, struct python_proc *p)
{
	size_t i;

	p->failed = false;
	for (i = 0; i < p->cap; i++) {
		if (!p->cache[i].code || !p->cache[i].err)
			continue;
		retry_entry(pp, p, &p->cache[i]);
		p->failed |= p->cache[i].err && p->cache[i].retries < PY_NAME_RETRIES;
	}
}

void python_procs__poll(struct python_procs *pp)
{
	struct python_proc *p;
	bool retired;

	for (p = pp->procs; p; p = p->next) {
		if (!p->in_map)
			continue;
		pthread_mutex_lock(&p->st->lock);
		retired = p->st->retired;
		pthread_mutex_unlock(&p->st->lock);
		if (retired)
			unmap(p);
		else if (p->failed)
			retry_failed(pp, p);
	}
}

void python_proc__prefetch(struct python_procs *pp, struct python_proc *p, uint64_t w1, uint64_t w2)
{
	if (p)
		lookup(pp, p, PYTHON_FRAME_CODE(w1), PYTHON_FRAME_CHECK(w2));
}

void python_proc__frame(struct python_procs *pp, struct python_proc *p, uint64_t w1, uint64_t w2,
			struct python_frame *out)
{
	struct py_entry *e;
	int line;

	memset(out, 0, sizeof(*out));
	if (!p) {
		out->function = "[python: interpreter unknown]";
		return;
	}
	e = lookup(pp, p, PYTHON_FRAME_CODE(w1), PYTHON_FRAME_CHECK(w2));
	if (e->err) {
		out->function = reason(e->err);
		return;
	}
	out->named = true;
	out->function = e->name.qualname;
	out->file = e->name.filename;
	out->start_line = e->name.firstlineno;
	if (p->layout.line_format == PYTHON_LINES_LNOTAB)
		line = python_code__lnotab_line(e->name.linetable, e->name.linetable_len,
						e->name.firstlineno, PYTHON_FRAME_INSTR(w2));
	else
		line = python_code__line(e->name.linetable, e->name.linetable_len,
					 e->name.firstlineno, PYTHON_FRAME_INSTR(w2));
	/* an instruction the table gives no line (a frame's set-up: RESUME,
	 * RETURN_GENERATOR ...), or a table that does not decode: the function's
	 * own line, where the profile shows it starts */
	out->line = line > 0 ? line : (e->name.firstlineno > 0 ? e->name.firstlineno : 0);
}

void python_proc__release(struct python_proc *p)
{
	size_t i;

	if (!p)
		return;
	unmap(p);
	*p->pprev = p->next;
	if (p->next)
		p->next->pprev = p->pprev;
	p->st->python = NULL;
	for (i = 0; i < p->cap; i++)
		if (p->cache[i].code)
			python_code_name__free(&p->cache[i].name);
	if (p->pp->sym && p->charged)
		symbolizer__uncharge(p->pp->sym, p->charged);
	free(p->cache);
	proc_mem__free(p->mem);
	proc_maps__free(p->maps);
	free(p);
}

void python_procs__stats(const struct python_procs *pp, struct python_procs_stats *st)
{
	*st = pp->st;
}

void python_procs__free(struct python_procs *pp)
{
	if (!pp)
		return;
	python_code_name__free(&pp->scratch.name);
	file_id_set__free(pp->no_interpreter);
	free(pp);
}
