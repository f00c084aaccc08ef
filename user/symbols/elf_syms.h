/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * elf_syms - function symbols, load segments and build id of one ELF file.
 *
 * The file is untrusted (it comes from the profiled process): every offset,
 * size and index read from it is bounds-checked, and a malformed file makes
 * elf_syms__open_*() fail with -EINVAL rather than crash.  Symbols come from
 * .symtab when present, else .dynsym; only STT_FUNC (and STT_GNU_IFUNC)
 * symbols with a non-zero address are kept.
 *
 * MiniDebugInfo (Fedora, RHEL): a .gnu_debugdata section holds an
 * xz-compressed ELF file whose .symtab names the local functions a stripped
 * file's .dynsym leaves out.  It is decompressed (at most
 * ELF_SYMS_MAX_MINIDEBUG bytes: a bigger one is refused, not followed) and
 * its symbols merged with the file's own; how that went is told by
 * elf_syms__minidebug(), and a bad section never fails the file.
 * The .gnu_debuglink section, naming a separate debug file, is read too;
 * finding that file is symbols/debug_file.h's business.
 *
 * An elf_syms is immutable once open: any thread may read it.
 */
#ifndef CTXPROF_ELF_SYMS_H
#define CTXPROF_ELF_SYMS_H

#include <stdbool.h>
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
/* a build id as lowercase hex, with its NUL */
#define ELF_SYMS_BUILD_ID_HEX (ELF_SYMS_BUILD_ID_MAX * 2 + 1)
/* a .gnu_debugdata section, compressed or not, larger than this is refused */
#define ELF_SYMS_MAX_MINIDEBUG (64u << 20)

/* What became of a file's .gnu_debugdata section (elf_syms__minidebug()). */
enum elf_syms_minidebug {
	ELF_SYMS_MINIDEBUG_NONE,    /* the file has none */
	ELF_SYMS_MINIDEBUG_OK,	    /* decompressed, its symbols merged */
	ELF_SYMS_MINIDEBUG_BAD,	    /* not xz, corrupt, or not a matching ELF file: ignored */
	ELF_SYMS_MINIDEBUG_TOO_BIG, /* past ELF_SYMS_MAX_MINIDEBUG (a bomb?): ignored */
};

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

/** elf_syms__bytes() - the memory @es holds (symbols, names, segments). */
size_t elf_syms__bytes(const struct elf_syms *es);

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
 * elf_syms__note_build_id() - find the GNU build id in a list of ELF notes
 * (a PT_NOTE segment, an SHT_NOTE section, /sys/kernel/notes), bounds-checked
 * like the rest: @notes may be hostile.
 * @align: 4 or 8, the notes' alignment
 * @hex: filled with the build id in lowercase hex when found
 * Return: true when found.  Pure function: any thread.
 */
bool elf_syms__note_build_id(const void *notes, size_t len, size_t align,
			     char hex[ELF_SYMS_BUILD_ID_HEX]);

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
