/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * kallsyms - name kernel addresses from /proc/kallsyms.
 *
 * Threads: immutable once built: kallsyms__lookup() and the counters from
 * any thread without a lock; kallsyms__parse()/__load() and __free() on one
 * thread while no lookup runs (the symbolizer loads them at start, before
 * the collector's threads exist).
 */
#ifndef CTXPROF_KALLSYMS_H
#define CTXPROF_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct kallsyms;

#define KALLSYMS_MAX_TEXT   (256u << 20) /* refuse a /proc/kallsyms larger than this */
#define KALLSYMS_MAX_NAME   511		 /* KSYM_NAME_LEN - 1; longer names are bad lines */
#define KALLSYMS_MAX_MODULE 255		 /* module names are 55 bytes at most (MODULE_NAME_LEN) */
/*
 * An address further than this past the symbol below it is not named: no
 * kernel function is 1 MiB long, so such an address lies in a gap kallsyms does
 * not describe (past the last symbol, between vmlinux and the modules, in an
 * unlisted BPF trampoline), and naming it after its neighbour would be a guess.
 */
#define KALLSYMS_MAX_OFFSET (1u << 20)

/**
 * kallsyms__parse() - parse kallsyms text (text and data symbols alike are
 * kept; lines that do not parse are skipped and counted).
 * @text: "ADDR TYPE NAME" or "ADDR TYPE NAME\t[MODULE]" lines; not
 *	necessarily NUL-terminated, may be NULL when @len is 0
 *
 * Of several symbols at one address only one is kept: the first text symbol
 * (t/T) in file order, else the first weak one (w/W), else the first.
 * Return: the table (possibly empty), or NULL with errno set: EPERM when there
 * are symbols and every address is 0 (kptr_restrict hid them), EFBIG when
 * @len exceeds KALLSYMS_MAX_TEXT, ENOMEM.  Pair with kallsyms__free().
 */
struct kallsyms *kallsyms__parse(const char *text, size_t len);

/**
 * kallsyms__load() - read and parse /proc/kallsyms.
 * Return: the table, or NULL with errno set: EPERM when every address reads
 * as 0 (kptr_restrict hides them), ENOENT when no line parses.
 */
struct kallsyms *kallsyms__load(void);

/** kallsyms__free() - accepts NULL. */
void kallsyms__free(struct kallsyms *ks);

/**
 * kallsyms__lookup() - the symbol at or below @addr.
 * @module: set to the module name ("" for vmlinux), may be NULL
 * @offset: set to @addr - symbol address, may be NULL
 * Return: the name (owned by @ks), or NULL when @addr is below every symbol
 * or KALLSYMS_MAX_OFFSET or more past the symbol below it.
 */
const char *kallsyms__lookup(const struct kallsyms *ks, uint64_t addr, const char **module,
			     uint64_t *offset);

/** kallsyms__nr_symbols() - symbols kept (one per address). */
size_t kallsyms__nr_symbols(const struct kallsyms *ks);

/** kallsyms__nr_bad_lines() - lines that did not parse. */
size_t kallsyms__nr_bad_lines(const struct kallsyms *ks);

/**
 * kallsyms__text_range() - the kernel image's text, [@start, @end):
 * _stext.._etext (vmlinux text symbols "T"/"t"), else from the lowest vmlinux
 * text symbol to KALLSYMS_MAX_OFFSET past the highest.  Modules lie outside.
 * Return: 0, or -ENOENT when @ks lists no vmlinux text symbol (or is NULL).
 */
int kallsyms__text_range(const struct kallsyms *ks, uint64_t *start, uint64_t *end);

#endif /* CTXPROF_KALLSYMS_H */
