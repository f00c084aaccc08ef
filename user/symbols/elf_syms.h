/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * elf_syms - function symbols, load segments and build id of one ELF file.
 *
 * The file is untrusted (it comes from the profiled process): every offset,
 * size and index read from it is bounds-checked, and a malformed file makes
 * elf_syms__open_*() fail with -EINVAL rather than crash.  Symbols come from
 * .symtab when present, else .dynsym; only STT_FUNC (and STT_GNU_IFUNC)
 * symbols with a non-zero address are kept.
 */
#ifndef CTXPROF_ELF_SYMS_H
#define CTXPROF_ELF_SYMS_H

#include <stddef.h>
#include <stdint.h>

struct elf_syms;

/*
 * Hard limits against hostile files.  A file with more function symbols is
 * refused (EINVAL); a longer name is cut to ELF_SYMS_MAX_NAME - 1 bytes, as
 * real C++ and Rust names can exceed it; a longer build id is ignored.
 */
#define ELF_SYMS_MAX_SYMBOLS   (4u << 20)
#define ELF_SYMS_MAX_NAME      1024
#define ELF_SYMS_BUILD_ID_MAX  64	    /* bytes */
#define ELF_SYMS_MAX_FILE_SIZE (2ULL << 30) /* larger files are refused (EFBIG) */

/**
 * elf_syms__open_fd() - parse the ELF file open on @fd.
 * The fd is not kept: the caller may close it on return.  The file is read
 * with pread(), never mapped, so a target truncating it cannot SIGBUS us.
 * Only 64-bit ELF files of the host's byte order are supported.
 * Return: the parsed file, or NULL with errno set (EINVAL: not a valid or
 * supported ELF file, EFBIG: larger than ELF_SYMS_MAX_FILE_SIZE, ENOMEM).
 * Pair with elf_syms__free().
 */
struct elf_syms *elf_syms__open_fd(int fd);

/**
 * elf_syms__open_mem() - parse an ELF image held in memory (fuzzing, tests).
 * The buffer is not kept.
 */
struct elf_syms *elf_syms__open_mem(const void *buf, size_t len);

/** elf_syms__free() - accepts NULL. */
void elf_syms__free(struct elf_syms *es);

/**
 * elf_syms__lookup() - name the function containing ELF virtual address @vaddr.
 * @offset: set to @vaddr - symbol start; may be NULL
 *
 * A symbol of size 0 covers addresses up to the next symbol.
 * Return: the symbol name (owned by @es), or NULL when no symbol covers it.
 */
const char *elf_syms__lookup(const struct elf_syms *es, uint64_t vaddr, uint64_t *offset);

/**
 * elf_syms__file_offset_to_vaddr() - translate a file offset to an ELF
 * virtual address through the PT_LOAD segment containing it.
 * Return: 0 and *vaddr set, or -ENOENT when no loadable segment holds it.
 */
int elf_syms__file_offset_to_vaddr(const struct elf_syms *es, uint64_t file_offset,
				   uint64_t *vaddr);

/**
 * elf_syms__build_id() - the GNU build id as a lowercase hex string, or NULL
 * when the file has none.  Owned by @es.
 */
const char *elf_syms__build_id(const struct elf_syms *es);

/** elf_syms__nr_symbols() - function symbols kept. */
size_t elf_syms__nr_symbols(const struct elf_syms *es);

/** elf_syms__is_dyn() - true for ET_DYN (PIE executables, shared libraries). */
int elf_syms__is_dyn(const struct elf_syms *es);

/**
 * elf_syms__symbol() - the @idx-th kept symbol in address order (tests, dumps).
 * @start: set to its first address; may be NULL
 * @end: set to one past its last address; may be NULL
 *
 * Kept symbols have distinct start addresses, start < end, and ranges that
 * do not overlap (a range is cut where the next symbol starts).
 * Return: its name (owned by @es), or NULL when @idx >= elf_syms__nr_symbols().
 */
const char *elf_syms__symbol(const struct elf_syms *es, size_t idx, uint64_t *start, uint64_t *end);

#endif /* CTXPROF_ELF_SYMS_H */
