/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * kallsyms - name kernel addresses from /proc/kallsyms.
 */
#ifndef CTXPROF_KALLSYMS_H
#define CTXPROF_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct kallsyms;

/**
 * kallsyms__parse() - parse kallsyms text (text and data symbols alike are
 * kept; lines that do not parse are skipped).
 * Return: the table, or NULL with errno set.  Pair with kallsyms__free().
 */
struct kallsyms *kallsyms__parse(const char *text, size_t len);

/**
 * kallsyms__load() - read and parse /proc/kallsyms.
 * Return: NULL with errno EPERM when every address reads as 0
 * (kptr_restrict hides them).
 */
struct kallsyms *kallsyms__load(void);

void kallsyms__free(struct kallsyms *ks);

/**
 * kallsyms__lookup() - the symbol at or below @addr.
 * @module: set to the module name ("" for vmlinux), may be NULL
 * @offset: set to @addr - symbol address, may be NULL
 * Return: the name, or NULL when @addr is below every symbol.
 */
const char *kallsyms__lookup(const struct kallsyms *ks, uint64_t addr, const char **module,
			     uint64_t *offset);

size_t kallsyms__nr_symbols(const struct kallsyms *ks);

#endif /* CTXPROF_KALLSYMS_H */
