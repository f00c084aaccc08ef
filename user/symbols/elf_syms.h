/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * elf_syms - function symbols, load segments and build id of one ELF file.
 *
 * The file is untrusted (it comes from the profiled process) and is read
 * through elf/elf_file.h, the one reader of such files: bounded pieces
 * copied into private memory, never mapped.  A malformed file makes
 * elf_syms__open_*() fail with -EINVAL rather than crash.  Symbols come from
 * .symtab when present, else .dynsym; only STT_FUNC (and STT_GNU_IFUNC)
 * symbols with a non-zero address are kept, one per address: of aliases,
 * the one perf shows (its choose_best_symbol(): sized, non-weak, global,
 * fewest leading underscores, longest name, first in the table), so
 * "malloc" rather than "__libc_malloc" or "__GI___libc_malloc".  Names are
 * kept as the table has them: a .symtab names a versioned symbol with its
 * version ("sem_post@@GLIBC_2.34"), which symbol_version_at()
 * (symbols/demangle.h) finds for display.
 *
 * Memory is bounded per file: what a parse holds at once (the candidates,
 * their names, the kept table, a decompressed MiniDebugInfo) is charged
 * against a budget (ELF_SYMS_MAX_BYTES) before it is allocated, and the
 * counts and sizes below are capped.  A table past a bound is refused whole,
 * never cut (a cut table would name addresses after the wrong function):
 * the file then has no symbols (elf_syms__over_budget()), its frames are
 * named by their mapping, and the caller counts it.
 *
 * MiniDebugInfo (Fedora, RHEL): a .gnu_debugdata section holds an
 * xz-compressed ELF file whose .symtab names the local functions a stripped
 * file's .dynsym leaves out.  It is decompressed (at most
 * ELF_SYMS_MAX_MINIDEBUG bytes: a bigger one is refused, not followed) and
 * its symbols merged with the file's own, within the same budget; how that
 * went is told by elf_syms__minidebug(), and a bad section never fails the
 * file.  The .gnu_debuglink section, naming a separate debug file, is read
 * too; finding that file is elf/debug_file.h's business.
 *
 * Go: a file without .symtab that has a .gopclntab (a Go program built
 * with -ldflags='-s -w', or stripped) is named from that table, the Go
 * runtime's own (elf/gopclntab.h), which also gives source lines and
 * inlined calls (elf_syms__source()), before its .dynsym (where cgo exports
 * a few C functions); charged to the same budget.
 *
 * An elf_syms is immutable once open: any thread may read it.
 */
#ifndef CTXPROF_ELF_SYMS_H
#define CTXPROF_ELF_SYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "elf/elf_file.h"

struct debug_file_result;
struct elf_syms;
struct gopclntab;
struct gopclntab_frame;

/*
 * Bounds against hostile files, per file.  ELF_SYMS_MAX_BYTES is what one
 * parse may hold at once: 40 bytes a candidate symbol while it is read,
 * then 24 bytes a kept one plus its name (each distinct name once), plus a
 * decompressed MiniDebugInfo (charged twice: its bytes and the decoder's
 * dictionary) while its symbols are read.  The largest table measured holds
 * 3 % of it (libLLVM-15's .dynsym: 35k functions, 3.4 MiB); a debug file of
 * a chromium-sized program (a million functions, 100 MiB of names) goes past
 * ELF_SYMS_MAX_NAME_BYTES and is refused: its frames are named by mapping
 * (bench/README.md).  A longer name is cut to ELF_SYMS_MAX_NAME - 1 bytes,
 * as real C++ and Rust names can exceed it.
 */
#define ELF_SYMS_MAX_BYTES	(128u << 20)
#define ELF_SYMS_MAX_SYMBOLS	(2u << 20)  /* function symbols of one table */
#define ELF_SYMS_MAX_NAME_BYTES (64u << 20) /* bytes of their distinct names */
#define ELF_SYMS_MAX_NAME	1024
/*
 * a Go program's .gopclntab larger than this is refused; the trees of its
 * inlined calls are kept within ELF_SYMS_MAX_GO_INLINE more (elf/gopclntab.h)
 */
#define ELF_SYMS_MAX_GOPCLNTAB (96u << 20)
#define ELF_SYMS_MAX_GO_INLINE (16u << 20)
/* a .gnu_debugdata section, compressed or not, larger than this is refused */
#define ELF_SYMS_MAX_MINIDEBUG (32u << 20)
#define ELF_SYMS_BUILD_ID_MAX  ELF_FILE_BUILD_ID_MAX /* bytes */
/* a build id as lowercase hex, with its NUL */
#define ELF_SYMS_BUILD_ID_HEX ELF_FILE_BUILD_ID_HEX

/* What became of a file's .gnu_debugdata section (elf_syms__minidebug()). */
enum elf_syms_minidebug {
	ELF_SYMS_MINIDEBUG_NONE, /* the file has none */
	ELF_SYMS_MINIDEBUG_OK,	 /* decompressed, its symbols merged */
	ELF_SYMS_MINIDEBUG_BAD,	 /* not xz, corrupt, or not a matching ELF file: ignored */
	/* past ELF_SYMS_MAX_MINIDEBUG, or its symbols past the file's bounds
	 * (a bomb?): ignored */
	ELF_SYMS_MINIDEBUG_TOO_BIG,
};

/* What became of a Go program's .gopclntab (elf_syms__go()). */
enum elf_syms_go {
	ELF_SYMS_GO_NONE,    /* not read: the file has a .symtab, or no such section */
	ELF_SYMS_GO_OK,	     /* read: it names the functions */
	ELF_SYMS_GO_BAD,     /* malformed, or a layout not known (before Go 1.16): ignored */
	ELF_SYMS_GO_TOO_BIG, /* past ELF_SYMS_MAX_GOPCLNTAB or the file's budget: ignored */
};

/**
 * elf_syms__open_file() - parse the ELF file @ef (elf/elf_file.h), its
 * symbols within @budget bytes (ELF_SYMS_MAX_BYTES for the collector).
 * @ef is not kept: the caller may free it on return.
 * Return: the parsed file, or NULL with errno set (EINVAL: a malformed
 * symbol table, ENOMEM, or the errno of a failed read).  Symbols past a
 * bound are not an error: see elf_syms__over_budget().
 * Pair with elf_syms__free().
 */
struct elf_syms *elf_syms__open_file(const struct elf_file *ef, size_t budget);

/**
 * elf_syms__open_fd() - elf_syms__open_file() of the file open on @fd; the
 * fd is not kept.  Errors of elf_file__open_fd() as well (EINVAL: not a
 * supported ELF file, EFBIG: larger than ELF_FILE_MAX_SIZE).
 */
struct elf_syms *elf_syms__open_fd(int fd);

/**
 * elf_syms__open_mem() - parse an ELF image held in memory (our vdso,
 * fuzzing, tests).  The buffer is not kept.
 */
struct elf_syms *elf_syms__open_mem(const void *buf, size_t len);

/**
 * elf_syms__open_debug() - the symbols of @es's separate debug file, found
 * and checked by debug_file__open() inside @root_fd (the file's path as the
 * target sees it: @path; its stat: @self), and taken only when its .symtab
 * names at least one function.  Call only for a file without .symtab
 * (elf_syms__has_symtab()): one with it has every name a debug file would
 * give.  Parses outside any lock: takes none.
 * Return: the debug file's symbols (pair with elf_syms__free()), or NULL
 * with errno set: ENOENT when no candidate was usable, ENOMEM.
 */
struct elf_syms *elf_syms__open_debug(int root_fd, const char *path, const struct elf_syms *es,
				      const struct stat *self, struct debug_file_result *res);

/** elf_syms__free() - accepts NULL. */
void elf_syms__free(struct elf_syms *es);

/**
 * elf_syms__lookup() - name the function containing ELF virtual address @vaddr:
 * from its .gopclntab when it was read (elf_syms__go()), else its symbols.
 * @offset: set to @vaddr - symbol start; may be NULL
 *
 * A symbol of size 0 covers addresses up to the next symbol.
 * Return: the symbol name (owned by @es), or NULL when no symbol covers it.
 */
const char *elf_syms__lookup(const struct elf_syms *es, uint64_t vaddr, uint64_t *offset);

/**
 * elf_syms__source() - the source frames of ELF virtual address @vaddr, from
 * a Go program's .gopclntab: the functions inlined there, innermost first,
 * then the one elf_syms__lookup() names, each with its file and line.
 * @frames: room for @max
 * Return: the number filled; 0 when the file has no such table or it does
 * not name @vaddr.
 */
size_t elf_syms__source(const struct elf_syms *es, uint64_t vaddr, struct gopclntab_frame *frames,
			size_t max);

/** elf_syms__from_gopclntab() - @name, returned by a lookup in @es, came from its .gopclntab. */
bool elf_syms__from_gopclntab(const struct elf_syms *es, const char *name);

/** elf_syms__go() - what became of its .gopclntab. */
enum elf_syms_go elf_syms__go(const struct elf_syms *es);

/** elf_syms__gopclntab() - the table its names come from, NULL when none. */
const struct gopclntab *elf_syms__gopclntab(const struct elf_syms *es);

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
 * elf_syms__has_symtab() - the symbols came from a .symtab (not only from
 * .dynsym, or none): a separate debug file would name nothing more.
 */
bool elf_syms__has_symtab(const struct elf_syms *es);

/**
 * elf_syms__debuglink() - the file name its .gnu_debuglink section gives
 * (a plain name: no '/', never "." or ".."), or NULL when it has none.
 * @crc: set to the CRC32 the debug file must have; may be NULL
 */
const char *elf_syms__debuglink(const struct elf_syms *es, uint32_t *crc);

/** elf_syms__minidebug() - what became of its .gnu_debugdata section. */
enum elf_syms_minidebug elf_syms__minidebug(const struct elf_syms *es);

/**
 * elf_syms__from_minidebug() - @name, returned by a lookup in @es, came
 * from the file's MiniDebugInfo rather than from its own symbol table.
 */
bool elf_syms__from_minidebug(const struct elf_syms *es, const char *name);

/**
 * elf_syms__over_budget() - the file's symbols were refused: they would have
 * passed a bound above.  The file has none then; its frames are named by
 * mapping.
 */
bool elf_syms__over_budget(const struct elf_syms *es);

/**
 * elf_syms__bytes() - the memory @es holds (symbols, names, segments), for
 * a cache that keeps a total.
 */
size_t elf_syms__bytes(const struct elf_syms *es);

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
