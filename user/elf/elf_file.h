/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * elf_file - the one reader of ELF files that come from other processes.
 *
 * Every ELF file the collector reads (symbols, unwind tables, TLS lookup,
 * debug files, MiniDebugInfo) is hostile: a target can craft it, truncate or
 * rewrite it while we read.  One policy holds for all of them, here:
 *  - the file is read with pread(), never mapped: a target that truncates
 *    it cannot SIGBUS us, and what we checked is what we use, because every
 *    piece is copied into private memory before it is looked at;
 *  - every offset, size, count and index taken from the file is checked
 *    against the file's size and the caps below before anything is read or
 *    allocated from it; a file past a cap is refused, not followed;
 *  - libelf and libdw never see the target's bytes or its fd: a caller that
 *    needs them hands them a private copy of one section (elf_file__section_read());
 *  - only 64-bit ELF files of the host's byte order, ET_EXEC or ET_DYN, are
 *    read (what processes map; separate debug files keep their type).
 * Opening reads the ELF header, the program and section headers, the
 * section names, the notes (the GNU build id) and .gnu_debuglink; sections
 * and symbol tables are read when asked for, through bounded windows.
 *
 * Threads: an elf_file is immutable once open; its readers (sections,
 * symbol tables) keep their own windows, so distinct threads may read one
 * file with distinct readers.  The pure helpers (elf_loads__*, elf_notes__*)
 * take no state: any thread.
 */
#ifndef CTXPROF_ELF_FILE_H
#define CTXPROF_ELF_FILE_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_file;

/*
 * Caps against hostile files, far above what linked executables and
 * libraries carry (tens of sections and program headers, a few KiB of
 * names and notes).
 */
#define ELF_FILE_MAX_SIZE     (2ULL << 30) /* larger files are refused (EFBIG) */
#define ELF_FILE_MAX_SECTIONS (1u << 16)   /* 4 MiB of section headers */
#define ELF_FILE_MAX_SEGMENTS 4096	   /* program headers */
#define ELF_FILE_MAX_NAMES    (1u << 20)   /* section names: bytes of .shstrtab */
#define ELF_FILE_MAX_NOTE     (1u << 20)   /* bytes of one note segment or section */
#define ELF_FILE_BUILD_ID_MAX 64	   /* bytes; a longer build id is ignored */
/* a build id as lowercase hex, with its NUL */
#define ELF_FILE_BUILD_ID_HEX  (ELF_FILE_BUILD_ID_MAX * 2 + 1)
#define ELF_FILE_DEBUGLINK_MAX 255 /* NAME_MAX: .gnu_debuglink names a file */

/* One PT_LOAD program header, in the order the file lists them. */
struct elf_load {
	uint64_t offset; /* p_offset */
	uint64_t vaddr;	 /* p_vaddr */
	uint64_t filesz; /* p_filesz */
	uint64_t memsz;	 /* p_memsz */
	uint32_t flags;	 /* p_flags: PF_X, PF_W, PF_R */
	/* its file-backed bytes lie inside the file (those of a separate debug
	 * file do not) and its addresses do not wrap */
	bool in_file;
};

/**
 * elf_file__open_fd() - open the ELF file on @fd.
 * The fd is duplicated (the caller may close its own); the duplicate is
 * closed by elf_file__free().  The file's size is taken once, by fstat():
 * a file that shrinks later fails the reads that reach past its end.
 * Return: the file, or NULL with errno set: EINVAL (not a supported ELF
 * file, malformed headers, or more of them than the caps above), EFBIG
 * (larger than ELF_FILE_MAX_SIZE), ENOMEM, or the errno of a failed read.
 * Pair with elf_file__free().
 */
struct elf_file *elf_file__open_fd(int fd);

/**
 * elf_file__open_mem() - the same over an image in memory (an ELF file
 * decompressed from MiniDebugInfo, our own vdso, fuzzing, tests).  @buf is
 * not copied: it must outlive the elf_file and not change meanwhile.
 */
struct elf_file *elf_file__open_mem(const void *buf, size_t len);

/** elf_file__free() - accepts NULL. */
void elf_file__free(struct elf_file *ef);

/* e_machine of the architecture the collector was built for: the processes
 * it profiles run it too (readers of their TLS and registers refuse others) */
#if defined(__aarch64__)
#define ELF_NATIVE_MACHINE EM_AARCH64
#else
#define ELF_NATIVE_MACHINE EM_X86_64
#endif

/** elf_file__ehdr() - the ELF header, as read (e_shnum, e_phnum as in the file). */
const Elf64_Ehdr *elf_file__ehdr(const struct elf_file *ef);

/** elf_file__size() - the file's size in bytes. */
uint64_t elf_file__size(const struct elf_file *ef);

/**
 * elf_file__read() - copy @len bytes at file offset @off into @dst.
 * Return: 0, -EINVAL when they are not all inside the file (or it shrank),
 * -errno of pread().
 */
int elf_file__read(const struct elf_file *ef, uint64_t off, void *dst, uint64_t len);

/* --- sections ---------------------------------------------------------- */

/** elf_file__nr_sections() - section headers, the null one at index 0 included. */
size_t elf_file__nr_sections(const struct elf_file *ef);

/**
 * elf_file__section() - the header of section @idx.
 * Return: NULL when @idx is 0 or out of range.
 */
const Elf64_Shdr *elf_file__section(const struct elf_file *ef, size_t idx);

/**
 * elf_file__section_name() - section @idx's name, or NULL when the file's
 * section names are missing or malformed (then no section is found by name).
 */
const char *elf_file__section_name(const struct elf_file *ef, size_t idx);

/**
 * elf_file__find_section() - the first section called @name that has
 * contents in the file (not SHT_NOBITS).
 * Return: its index, 0 when there is none.
 */
size_t elf_file__find_section(const struct elf_file *ef, const char *name);

/** elf_file__find_section_type() - the first section of type @type; 0 when none. */
size_t elf_file__find_section_type(const struct elf_file *ef, uint32_t type);

/**
 * elf_file__section_size() - the size of section @idx's contents as
 * elf_file__section_read() gives them: decompressed when the section is
 * SHF_COMPRESSED (ELFCOMPRESS_ZLIB) or a GNU .zdebug_ section ("ZLIB"
 * header).  The size is the one the file claims: @max is the caller's cap.
 * Return: 0 and *@size set; -E2BIG past @max (checked before anything is
 * allocated or inflated); -EINVAL for a section outside the file, SHT_NOBITS,
 * or a bad compression header; -ENOTSUP for another compression type.
 */
int elf_file__section_size(const struct elf_file *ef, size_t idx, uint64_t max, uint64_t *size);

/**
 * elf_file__section_read() - copy section @idx's contents, decompressed,
 * into @dst, which holds exactly @size bytes (elf_file__section_size()).
 * Compressed data is inflated through a small window, never held whole.
 * Return: 0; -EINVAL when the section is not what its header says (a stream
 * that does not inflate to exactly @size bytes, a read past the file);
 * -ENOMEM; -errno of a read.
 */
int elf_file__section_read(const struct elf_file *ef, size_t idx, void *dst, uint64_t size);

/**
 * elf_file__section_copy() - a malloc()ed private copy of section @idx's
 * contents, decompressed, refused past @max bytes.
 * Return: 0 with *@out (the caller frees it) and *@len set, or -errno as
 * elf_file__section_size() and elf_file__section_read().
 */
int elf_file__section_copy(const struct elf_file *ef, size_t idx, uint64_t max, void **out,
			   size_t *len);

/* --- segments ---------------------------------------------------------- */

/** elf_file__nr_segments() - program headers. */
size_t elf_file__nr_segments(const struct elf_file *ef);

/** elf_file__segment() - program header @idx; NULL when out of range. */
const Elf64_Phdr *elf_file__segment(const struct elf_file *ef, size_t idx);

/**
 * elf_file__loads() - the PT_LOAD segments, in the order of the program
 * headers.  @nr: set to their number.  Owned by @ef.
 */
const struct elf_load *elf_file__loads(const struct elf_file *ef, size_t *nr);

/**
 * elf_loads__base() - the lowest p_vaddr of @loads (the base an ET_DYN file
 * is loaded relative to).  Return: false when @nr is 0.
 */
bool elf_loads__base(const struct elf_load *loads, size_t nr, uint64_t *base);

/**
 * elf_loads__offset_to_vaddr() - the ELF virtual address of file offset
 * @off, through the first in-file PT_LOAD whose file-backed bytes hold it.
 * Return: 0 and *@vaddr set, or -ENOENT.
 */
int elf_loads__offset_to_vaddr(const struct elf_load *loads, size_t nr, uint64_t off,
			       uint64_t *vaddr);

/**
 * elf_loads__vaddr_to_offset() - the file offset of the @len bytes at ELF
 * virtual address @vaddr, through the first in-file PT_LOAD whose
 * file-backed bytes hold all of them.
 * Return: 0 and *@off set, or -ENOENT.
 */
int elf_loads__vaddr_to_offset(const struct elf_load *loads, size_t nr, uint64_t vaddr,
			       uint64_t len, uint64_t *off);

/**
 * elf_loads__for_mapping() - the PT_LOAD a process's mapping of the file
 * at file offset @pgoff (page-aligned, as /proc/PID/maps gives it) comes
 * from: the first whose pages [offset rounded down to a page, offset +
 * filesz) hold @pgoff.  The mapping's load bias (runtime address - ELF
 * virtual address) is then start - @pgoff + offset - vaddr.
 * Return: the segment, or NULL.
 */
const struct elf_load *elf_loads__for_mapping(const struct elf_load *loads, size_t nr,
					      uint64_t pgoff);

/* --- notes, build id, debug link ------------------------------------- */

/**
 * elf_file__build_id() - the GNU build id (NT_GNU_BUILD_ID) of the first
 * PT_NOTE segment, else SHT_NOTE section, that has one.
 * @len: set to its length in bytes
 * Return: the bytes (owned by @ef), or NULL when the file has none.
 */
const uint8_t *elf_file__build_id(const struct elf_file *ef, size_t *len);

/**
 * elf_notes__build_id() - find the GNU build id in a list of ELF notes
 * (a note segment or section, /sys/kernel/notes), bounds-checked: @notes
 * may be hostile.
 * @align: 4 or 8, the notes' alignment
 * @id: receives up to ELF_FILE_BUILD_ID_MAX bytes
 * Return: the build id's length, 0 when there is none (or it is longer).
 */
size_t elf_notes__build_id(const void *notes, size_t len, size_t align,
			   uint8_t id[ELF_FILE_BUILD_ID_MAX]);

/** elf_build_id__hex() - @id[@len] as lowercase hex into @hex; @len <= ELF_FILE_BUILD_ID_MAX. */
void elf_build_id__hex(const uint8_t *id, size_t len, char hex[ELF_FILE_BUILD_ID_HEX]);

/**
 * elf_file__debuglink() - the file name .gnu_debuglink gives (a plain name:
 * no '/', never "." or ".."), or NULL when the file has none or it is
 * malformed.
 * @crc: set to the CRC32 the debug file must have; may be NULL
 */
const char *elf_file__debuglink(const struct elf_file *ef, uint32_t *crc);

/* --- symbol tables ------------------------------------------------------ */

/*
 * A symbol table and its string table, read through windows: neither is
 * held whole, so a huge table costs what its caller keeps of it.
 */
struct elf_symtab {
	const struct elf_file *ef;
	uint32_t type;	  /* SHT_SYMTAB or SHT_DYNSYM */
	size_t nr;	  /* entries, the null entry 0 included */
	uint64_t off;	  /* of entry 0 */
	uint64_t str_off; /* the string table */
	uint64_t str_size;
	/* the window of entries read last */
	Elf64_Sym *win;
	size_t win_first, win_nr;
	/* the window of strings read last */
	char *strs;
	uint64_t strs_off;
	size_t strs_len;
};

/**
 * elf_file__symtab() - open the first symbol table of @type (SHT_SYMTAB or
 * SHT_DYNSYM) for reading: its entry size, bounds and string table (linked,
 * SHT_STRTAB, inside the file, ending with a NUL so that every name ends)
 * are checked here.
 * Return: 0 and @st set up (pair with elf_symtab__release()); -ENOENT when
 * the file has none; -EINVAL when it is malformed; -errno of a read.
 */
int elf_file__symtab(const struct elf_file *ef, uint32_t type, struct elf_symtab *st);

/**
 * elf_symtab__get() - entry @idx.  Reading in index order costs one read a
 * few thousand entries.
 * Return: 0, -EINVAL when @idx >= st->nr, -errno of a read.
 */
int elf_symtab__get(struct elf_symtab *st, size_t idx, Elf64_Sym *sym);

/**
 * elf_symtab__name() - the name at string table offset @name, copied into
 * @buf (always NUL-terminated), cut to @len - 1 bytes; reading names in
 * offset order costs one read a window.
 * @name_len: set to the length copied; may be NULL
 * Return: 0, -EINVAL when @name is outside the string table or @len is 0
 * or above 4096, -errno of a read.
 */
int elf_symtab__name(struct elf_symtab *st, uint32_t name, char *buf, size_t len, size_t *name_len);

/**
 * elf_symtab__load_strings() - read the whole string table at once, for a
 * caller that reads names in no particular order (a lookup by name in
 * .dynsym); names are then served from memory.
 * Return: 0, -E2BIG when it is larger than @max bytes, -ENOMEM, -errno of
 * a read.
 */
int elf_symtab__load_strings(struct elf_symtab *st, uint64_t max);

/** elf_symtab__release() - free the windows; accepts a zeroed @st. */
void elf_symtab__release(struct elf_symtab *st);

#endif /* CTXPROF_ELF_FILE_H */
