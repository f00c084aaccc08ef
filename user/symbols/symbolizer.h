/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * symbolizer - name sampled addresses: the caches shared by every process.
 *
 * Caches by file, never by process: an ELF file is opened through safe_open,
 * parsed once and cached by the (device, inode) of the file opened, shared by
 * every process that maps it; mapping paths are interned; kernel addresses
 * are named from /proc/kallsyms, loaded once.  What a process has mapped is
 * its own state (symbols/maps_history.h, kept in the process's entry of the
 * thread registry); it hands the symbolizer one mapping at a time.
 *
 * Which file: the very inode the process maps, opened through
 * /proc/PID/map_files (symbolizer__file_mapped()).  Without the capability
 * that needs, the mapping's path is opened inside the target's root and the
 * file kept only if its inode is the one /proc/PID/maps gave
 * (symbolizer__file_at()): a container cannot plant an ELF file at a mapped
 * path and so choose the names of our frames.
 *
 * Names, as perf finds them: the file's .symtab, else its separate debug
 * file (by build id or .gnu_debuglink, inside the target's root, see
 * elf/debug_file.h), else its .dynsym merged with its MiniDebugInfo
 * (.gnu_debugdata, see symbols/elf_syms.h); all found when the file is first
 * parsed and cached with it.  C++ and Rust names are demangled for display
 * (symbols/demangle.h), once per symbol.  "[vdso]" mappings are named from
 * the collector's own vDSO image, which every 64-bit process on this kernel
 * maps; the kernel mapping carries the kernel's text range and build id.
 *
 * A frame that cannot be named keeps its address and mapping: never a guess.
 * Every string and file handed out stays valid until symbolizer__free().
 *
 * Thread-safe: one internal mutex guards the caches and counters; files are
 * parsed outside it; lookups in a file already cached take it to count and,
 * for a mangled name, to find its display form.
 */
#ifndef CTXPROF_SYMBOLIZER_H
#define CTXPROF_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct symbolizer;
struct sym_file; /* one cached ELF file, or a negative entry for a file that is not ELF */

/* What is known about one frame; strings are owned by the symbolizer. */
struct sym_frame {
	const char *function;	 /* display name (demangled); NULL when not named */
	const char *system_name; /* the name as the symbol table has it (mangled) */
	/*
	 * file as the target sees it, "[vdso]", "[kernel.kallsyms]", "" when
	 * anonymous; NULL when unmapped
	 */
	const char *mapping_path;
	const char *build_id; /* hex, NULL when unknown */
	uint64_t map_start;   /* mapping start address (0 when unmapped) */
	uint64_t map_end;     /* one past the mapping's end */
	uint64_t map_pgoff;   /* file offset of map_start */
};

/* Counters for the run summary; every skipped input is counted here. */
struct symbolizer_stats {
	uint64_t maps_reads;	   /* /proc/PID/maps reads, unchanged ones included */
	uint64_t maps_bad_lines;   /* unparsable lines in them */
	uint64_t elf_opened;	   /* distinct ELF files parsed */
	uint64_t elf_open_failed;  /* files that could not be opened safely */
	uint64_t elf_parse_failed; /* files that were not valid ELF */
	/* parsed, but their symbols refused: past elf_syms' per-file bounds */
	uint64_t symbols_over_budget;
	uint64_t elf_by_path;  /* opened by path: /proc/PID/map_files was refused */
	uint64_t elf_mismatch; /* by path, but another inode than mapped: refused */
	uint64_t unmapped;     /* user addresses in no known mapping */
	uint64_t unnamed;      /* addresses in a mapping but with no symbol */
	/* separate debug files, looked for when a file has no .symtab */
	uint64_t debug_files;	     /* found and used */
	uint64_t debug_missing;	     /* none usable (no -dbgsym package installed?) */
	uint64_t debug_build_id_bad; /* candidates refused: another build id */
	uint64_t debug_crc_bad;	     /* .gnu_debuglink candidates refused: CRC32 differs */
	uint64_t debug_unusable;     /* candidates refused: not ELF, or no symbols */
	/* MiniDebugInfo (.gnu_debugdata) */
	uint64_t minidebug_files;   /* merged */
	uint64_t minidebug_bad;	    /* not xz, corrupt, or not a matching ELF: ignored */
	uint64_t minidebug_too_big; /* past ELF_SYMS_MAX_MINIDEBUG (a bomb?): ignored */
	/* frames named from each source (the file's own tables are the rest) */
	uint64_t names_debug_file;
	uint64_t names_minidebug;
	uint64_t names_vdso;
	uint64_t demangled;	  /* distinct symbols demangled */
	uint64_t demangle_failed; /* distinct mangled-looking symbols left as they are */
};

/**
 * symbolizer__new() - create a symbolizer.
 * @kernel: load /proc/kallsyms for kernel frames (0 to skip)
 * Return: the symbolizer, or NULL with errno set.  Pair with symbolizer__free().
 * Kernel symbols that cannot be loaded are not an error: kernel frames then
 * stay unnamed (see symbolizer__has_kernel()).
 */
struct symbolizer *symbolizer__new(int kernel);

void symbolizer__free(struct symbolizer *s);

struct sym_map;

/**
 * symbolizer__file_mapped() - the cached ELF file @pid maps at @m, parsed
 * (with its debug file) now if this (device, inode) was never seen.
 * @root_fd: the target's root (proc_root_open()), where debug files are
 *	looked for and, when map_files is refused, @m->path is opened; may be
 *	-1 (neither is then tried)
 * @m: the mapping, as read from /proc/@pid/maps
 *
 * Opens the mapped inode itself through /proc/@pid/map_files; when that
 * fails (-EPERM: no CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE; or the mapping
 * is gone by now), falls back to symbolizer__file_at() (counted in
 * elf_by_path), unless the mapping's file was deleted: its path then names
 * another file or none.
 * Return: the entry (possibly negative: not ELF; see symbolizer__file_ok()),
 * or NULL when no file could be opened safely, the file is not the one
 * mapped (both counted), or memory ran out.
 */
const struct sym_file *symbolizer__file_mapped(struct symbolizer *s, pid_t pid, int root_fd,
					       const struct sym_map *m);

/**
 * symbolizer__file_at() - the same by path: @path opened inside @root_fd,
 * kept only when its inode is @inode, the one /proc/PID/maps gave for the
 * mapping (else counted in elf_mismatch: a file planted or replaced there).
 * Return: as symbolizer__file_mapped().
 */
const struct sym_file *symbolizer__file_at(struct symbolizer *s, int root_fd, const char *path,
					   uint64_t inode);

/** symbolizer__file_ok() - @f is a parsed ELF file (not a negative entry). */
bool symbolizer__file_ok(const struct sym_file *f);

/**
 * symbolizer__vdso() - the collector's own vDSO image, for a "[vdso]"
 * mapping of @size bytes: every 64-bit process on this kernel maps the same
 * one.  NULL when the sizes differ (a 32-bit process's vDSO) or the image
 * could not be read.  Immutable after symbolizer__new(): no lock taken.
 */
const struct sym_file *symbolizer__vdso(const struct symbolizer *s, uint64_t size);

/**
 * symbolizer__intern() - a copy of @str that lives as long as @s; "" for "".
 * Return: the copy, or NULL (ENOMEM).
 */
const char *symbolizer__intern(struct symbolizer *s, const char *str);

/* A mapping as a process had it, with the file behind it (see maps_history.h). */
struct sym_map {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint64_t inode; /* as /proc/PID/maps reports it */
	uint32_t dev_major;
	uint32_t dev_minor;
	const char *path;	    /* interned; "" for anonymous */
	const struct sym_file *elf; /* NULL when there is no ELF to read or it failed */
	bool deleted;		    /* the file was unlinked when the mapping was read */
};

/**
 * symbolizer__user() - name user address @addr, known to lie in @m.
 * @return_address: look up @addr - 1, so a call at the very end of a
 *	function (or mapping) names the caller
 *
 * Looks in the file's debug file first, then in its own table (with its
 * MiniDebugInfo); a mangled name met for the first time is demangled here,
 * under the lock (microseconds, bounded; some 100 KiB of stack).
 * Return: 0 with @out filled (function may be NULL: counted as unnamed).
 */
int symbolizer__user(struct symbolizer *s, const struct sym_map *m, uint64_t addr,
		     bool return_address, struct sym_frame *out);

/** symbolizer__unmapped() - count a user address in no known mapping. */
void symbolizer__unmapped(struct symbolizer *s);

/** symbolizer__maps_read() - count one /proc/PID/maps read and its bad lines. */
void symbolizer__maps_read(struct symbolizer *s, uint64_t bad_lines);

/**
 * symbolizer__kernel() - resolve a kernel address (at address - 1 when
 * @return_address).
 * Return: 0 with @out filled: mapping "[kernel.kallsyms]" with the kernel's
 * text range (kallsyms__text_range(); 0 when kallsyms are hidden) and build
 * id (/sys/kernel/notes; NULL when unreadable), or "[<module>]" with no range
 * or build id for an address kallsyms places in a module; function may be
 * NULL.
 */
int symbolizer__kernel(struct symbolizer *s, uint64_t addr, bool return_address,
		       struct sym_frame *out);

/** symbolizer__has_kernel() - kallsyms were loaded. */
bool symbolizer__has_kernel(const struct symbolizer *s);

/** symbolizer__stats() - counters since creation. */
void symbolizer__stats(struct symbolizer *s, struct symbolizer_stats *st);

#endif /* CTXPROF_SYMBOLIZER_H */
