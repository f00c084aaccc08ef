// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwind_table - a build's stages driven in order (unwind_table.h lists
 * them): the file's segments, its CFI sources loaded and checked, their
 * FDEs collected and settled, libdw opened on what is used, then the walk
 * in slices and the table.  And the lookup of a finished table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "elf/elf_file.h"
#include "elf/gopclntab.h"
#include "unwind/cfi_fdes.h"
#include "unwind/go_rows.h"
#include "unwind/unwind_table.h"
#include "unwind/unwind_walk.h"
#include "util/clock.h"
#include "util/errmsg.h"

static const struct unwind_rule invalid_rule = {.cmd = UNWIND_CMD_INVALID};

/* the lowest PT_LOAD and the executable ones */
static int load_segments(struct unwind_build *b, const struct elf_file *elf)
{
	const struct elf_load *loads;
	size_t nr, i;

	loads = elf_file__loads(elf, &nr);
	if (!elf_loads__base(loads, nr, &b->base)) {
		set_err(b->err, b->err_len, "no PT_LOAD segment");
		return -EINVAL;
	}
	if (mem_budget__take(&b->mem, nr * sizeof(*b->xsegs)))
		return -E2BIG;
	b->xsegs = calloc(nr, sizeof(*b->xsegs));
	if (!b->xsegs) {
		set_err(b->err, b->err_len, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < nr; i++) {
		const struct elf_load *l = &loads[i];

		if ((l->flags & PF_X) && l->memsz && l->vaddr <= UINT64_MAX - l->memsz) {
			b->xsegs[b->nr_xsegs].lo = l->vaddr;
			b->xsegs[b->nr_xsegs].hi = l->vaddr + l->memsz;
			b->stats.text_bytes += l->memsz;
			b->nr_xsegs++;
		}
	}
	return 0;
}

static bool cancelled(struct unwind_build *b)
{
	if (!b->cancel || !atomic_load_explicit(b->cancel, memory_order_relaxed))
		return false;
	set_err(b->err, b->err_len, "cancelled");
	return true;
}

/*
 * Collect the FDEs of every source, earlier sources first; a later one only
 * fills the gaps (a program whose own functions have .debug_frame only and
 * whose start files brought .eh_frame).  A broken later source is skipped
 * and counted when an earlier one gave FDEs: the debug file must not cost
 * the rows the file itself has.
 */
static int collect(struct unwind_build *b, const struct elf_file *const files[])
{
	int ret;

	for (unsigned int i = 0; i < UNWIND_TABLE_SOURCES; i++) {
		size_t before = b->nr_fdes;

		if (!files[i])
			continue;
		if (cancelled(b))
			return -ECANCELED;
		ret = cfi_src__load(&b->srcs[i], files[i], i == 0, &b->mem, b->err, b->err_len);
		if (ret == 1) {
			cfi_src__release(&b->srcs[i], &b->mem);
			continue;
		}
		if (!ret)
			ret = fdes_collect(b, &b->srcs[i], i);
		if (ret < 0 && before) {
			b->nr_fdes = before;
			b->stats.sources_rejected++;
			cfi_src__release(&b->srcs[i], &b->mem);
			if (b->err && b->err_len)
				b->err[0] = '\0';
			continue;
		}
		if (ret < 0)
			return ret;
		if (b->nr_fdes == before) {
			cfi_src__release(&b->srcs[i], &b->mem);
			continue;
		}
		fdes_settle(b);
		if (!b->source)
			b->source = b->srcs[i].sec.name;
		b->sources |= 1u << i;
	}
	if (!b->nr_fdes) {
		set_err(b->err, b->err_len, "no CFI: no FDE in .eh_frame or .debug_frame");
		return -ENODATA;
	}
	return 0;
}

static int start(struct unwind_build *b, const struct elf_file *elf, const struct elf_file *debug)
{
	const struct elf_file *const files[UNWIND_TABLE_SOURCES] = {elf, elf, debug};
	int ret;

	ret = load_segments(b, elf);
	if (!ret)
		ret = go_rows__load(b, elf);
	if (ret >= 0)
		ret = collect(b, files);
	/* a Go program without CFI (-ldflags=-s -w): its own table alone */
	if (ret == -ENODATA && b->go) {
		if (b->err && b->err_len)
			b->err[0] = '\0';
		return 0;
	}
	if (ret)
		return ret;
	if (b->fdes[b->nr_fdes - 1].hi - b->base > UINT32_MAX) {
		set_err(b->err, b->err_len, "CFI covers %#lx past the base %#lx: over 4 GiB",
			(unsigned long)b->fdes[b->nr_fdes - 1].hi, (unsigned long)b->base);
		return -EFBIG;
	}
	for (unsigned int i = 0; i < UNWIND_TABLE_SOURCES; i++) {
		if (!(b->sources & (1u << i)))
			continue;
		ret = cfi_src__open_libdw(&b->srcs[i], b->err, b->err_len);
		if (ret)
			return ret;
	}
	return 0;
}

int unwind_build__start(const struct elf_file *elf, const struct elf_file *debug,
			const struct unwind_table_limits *lim, struct unwind_build **out, char *err,
			size_t err_len)
{
	uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	struct unwind_build *b;
	uint16_t machine;
	int ret;

	*out = NULL;
	if (err && err_len)
		err[0] = '\0';
	if (!elf) {
		set_err(err, err_len, "no file");
		return -EINVAL;
	}
	machine = lim && lim->machine ? lim->machine : UNWIND_HOST_MACHINE;
	if (elf_file__ehdr(elf)->e_machine != machine ||
	    (debug && elf_file__ehdr(debug)->e_machine != machine)) {
		set_err(err, err_len, "%snot an ELF file of machine %u",
			elf_file__ehdr(elf)->e_machine == machine ? "debug file: " : "", machine);
		return -ENOTSUP;
	}
	if (machine != EM_X86_64 && machine != EM_AARCH64) {
		set_err(err, err_len, "machine %u: only x86-64 and AArch64 tables", machine);
		return -ENOTSUP;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		set_err(err, err_len, "out of memory");
		return -ENOMEM;
	}
	b->err = err;
	b->err_len = err_len;
	b->machine = machine;
	b->cpu_limit = lim && lim->cpu_ns ? lim->cpu_ns : UNWIND_TABLE_CPU_NS;
	b->mem.limit = lim && lim->memory ? lim->memory : UNWIND_TABLE_MEMORY;
	b->cancel = lim ? lim->cancel : NULL;
	ret = start(b, elf, debug);
	b->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	if (ret == -E2BIG && err && !err[0])
		set_err(err, err_len, "past the memory budget of %zu MiB", b->mem.limit >> 20);
	if (!ret && b->cpu_ns > b->cpu_limit) {
		set_err(err, err_len, "reading the CFI takes more than %llu ms of CPU",
			(unsigned long long)(b->cpu_limit / 1000000));
		ret = -ETIME;
	}
	if (ret) {
		unwind_build__free(b);
		return ret;
	}
	*out = b;
	return 0;
}

int unwind_build__run(struct unwind_build *b, uint64_t slice_ns)
{
	int ret;

	if (b->table)
		return 0;
	ret = b->nr_fdes ? unwind_walk(b, slice_ns) : 0;
	if (!ret && b->go) {
		uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

		ret = go_rows__apply(b);
		b->cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
		if (!ret && b->cpu_ns > b->cpu_limit) {
			set_err(b->err, b->err_len, "the Go rows take more than %llu ms of CPU",
				(unsigned long long)(b->cpu_limit / 1000000));
			ret = -ETIME;
		}
	}
	if (!ret)
		ret = unwind_walk__finish(b);
	if (ret == -E2BIG && b->err && !b->err[0])
		set_err(b->err, b->err_len, "past the memory budget of %zu MiB",
			b->mem.limit >> 20);
	if (ret)
		return ret;
	b->table->stats = b->stats;
	b->table->stats.cpu_ns = b->cpu_ns;
	b->table->stats.mem_peak = b->mem.peak;
	b->table->source = b->source;
	b->table->sources = b->sources;
	b->table->from_debug_file = !!(b->sources & UNWIND_SRC_DEBUG_FILE);
	return 0;
}

struct unwind_table *unwind_build__take(struct unwind_build *b)
{
	struct unwind_table *t = b->table;

	b->table = NULL;
	return t;
}

size_t unwind_build__bytes(const struct unwind_build *b)
{
	return b->mem.used;
}

uint64_t unwind_build__cpu_ns(const struct unwind_build *b)
{
	return b->cpu_ns;
}

void unwind_build__free(struct unwind_build *b)
{
	if (!b)
		return;
	for (unsigned int i = 0; i < UNWIND_TABLE_SOURCES; i++)
		cfi_src__release(&b->srcs[i], &b->mem);
	gopclntab__free(b->go);
	unwind_table__free(b->table);
	htable__destroy(&b->rule_index);
	free(b->xsegs);
	free(b->fdes);
	free(b->rows);
	free(b->rules);
	free(b);
}

int unwind_table__build(const struct elf_file *elf, const struct elf_file *debug,
			const struct unwind_table_limits *lim, struct unwind_table **out, char *err,
			size_t err_len)
{
	struct unwind_build *b;
	int ret;

	*out = NULL;
	ret = unwind_build__start(elf, debug, lim, &b, err, err_len);
	if (ret)
		return ret;
	ret = unwind_build__run(b, UINT64_MAX);
	if (!ret)
		*out = unwind_build__take(b);
	unwind_build__free(b);
	return ret;
}

int unwind_table__build_mem(const void *buf, size_t len, struct unwind_table **out, char *err,
			    size_t err_len)
{
	struct elf_file *ef;
	int ret;

	*out = NULL;
	if (!buf || len < sizeof(Elf64_Ehdr)) {
		set_err(err, err_len, "not an ELF file: %zu bytes", buf ? len : 0);
		return -EINVAL;
	}
	ef = elf_file__open_mem(buf, len);
	if (!ef) {
		ret = errno == ENOMEM || errno == EFBIG ? -errno : -EINVAL;
		set_err(err, err_len,
			"not a 64-bit ELF executable or shared object of this byte order");
		return ret;
	}
	ret = unwind_table__build(ef, NULL, NULL, out, err, err_len);
	elf_file__free(ef);
	return ret;
}

const struct unwind_rule *unwind_table__find(const struct unwind_table *t, uint64_t vaddr)
{
	size_t lo = 0, hi = t->nr_rows;
	uint64_t pc;

	if (vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return &invalid_rule;
	pc = vaddr - t->base;
	/* the last row starting at or below pc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || t->rows[lo - 1].rule >= t->nr_rules)
		return &invalid_rule;
	return &t->rules[t->rows[lo - 1].rule];
}

void unwind_table__free(struct unwind_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->rules);
	free(t);
}

const char *unwind_cmd_name(enum unwind_cmd c)
{
	static const char *const names[UNWIND_CMD_MAX] = {
		[UNWIND_CMD_INVALID] = "invalid",
		[UNWIND_CMD_CFA_RSP] = "cfa_rsp",
		[UNWIND_CMD_CFA_RBP] = "cfa_rbp",
		[UNWIND_CMD_CFA_RBP_DEREF] = "cfa_rbp_deref",
		[UNWIND_CMD_PLT] = "plt",
		[UNWIND_CMD_SIGNAL] = "signal",
		[UNWIND_CMD_END] = "end",
		[UNWIND_CMD_FP] = "fp",
		[UNWIND_CMD_UNSUPPORTED] = "unsupported",
		[UNWIND_CMD_GO_SYSTEM_STACK] = "go_system_stack",
	};

	return (unsigned int)c < UNWIND_CMD_MAX && names[c] ? names[c] : "?";
}

const char *unwind_unsup_name(enum unwind_unsup u)
{
	static const char *const names[UNWIND_UNSUP_MAX] = {
		[UNWIND_UNSUP_CFA_REG] = "cfa_reg",
		[UNWIND_UNSUP_CFA_EXPR] = "cfa_expr",
		[UNWIND_UNSUP_CFA_UNDEF] = "cfa_undef",
		[UNWIND_UNSUP_RA] = "ra",
		[UNWIND_UNSUP_RSP] = "rsp",
		[UNWIND_UNSUP_RBP] = "rbp",
		[UNWIND_UNSUP_OFFSET] = "offset",
		[UNWIND_UNSUP_LIBDW] = "libdw",
		[UNWIND_UNSUP_BUDGET] = "budget",
	};

	return (unsigned int)u < UNWIND_UNSUP_MAX && names[u] ? names[u] : "?";
}
