/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * symbolizer - name sampled addresses: the cache of parsed ELF files shared
 * by every process, and the kernel's symbols.
 *
 * What a process has mapped is its own state (processes/mappings.h, kept in
 * its entry of the thread registry).  The symbolizer is that state set's
 * resolver (symbolizer__resolver()): when a snapshot of a process's
 * mappings is built, it attaches to each mapping the cached file behind it
 * (symbolizer__attach()), and frames are later named through that mapping
 * (symbolizer__user()), so a frame is named from the file its process had
 * mapped when the snapshot was read, whatever has become of the path since.
 *
 * Which file: the very inode the process maps, opened through
 * /proc/PID/map_files.  Without the capability that needs, the mapping's
 * path is opened inside the target's root and the file kept only if its
 * inode is the one /proc/PID/maps gave: a container cannot plant an ELF file
 * at a mapped path and so choose the names of our frames.
 *
 * The cache notices change.  A file is found again by its identity as
 * fstat() gives it when a mapping appears (device, inode, size, mtime and
 * ctime: a file rewritten in place or replaced by one that reuses its inode
 * is another file), and two identities with the same GNU build id share one
 * parse (the same library in several containers).  An entry lives while a
 * snapshot's mapping holds it, then SYMBOLIZER_IDLE_NS more (a process that
 * restarts finds it), then goes; the parsed symbols of all files are kept
 * within a memory budget (symbolizer__new()): past it the least recently
 * used unheld files go first, and a file that still does not fit is not
 * kept, counted, and its frames named by their mapping only.  Processes'
 * perf maps (JIT code's names, symbols/perf_map.h) are charged to the same
 * budget (symbolizer__charge()): they make room the same way, and what
 * does not fit is not kept.
 *
 * Names, as perf finds them: the file's .symtab, else its separate debug
 * file (by build id or .gnu_debuglink, inside the target's root, see
 * elf/debug_file.h), else its .dynsym merged with its MiniDebugInfo
 * (.gnu_debugdata, see symbols/elf_syms.h); a Go program without any is
 * named from its runtime's own table, .gopclntab, with source lines and
 * inlined calls (elf/gopclntab.h); of aliases, the name perf shows.
 * For display, once per symbol (symbols/demangle.h), a symbol version is
 * dropped ("sem_post@@GLIBC_2.34" shows as "sem_post") and C++ and Rust
 * names are demangled; the system name keeps both.  "[vdso]"
 * mappings are named from the collector's own vDSO image, which every 64-bit
 * process on this kernel maps; the kernel mapping carries the kernel's text
 * range and build id.
 *
 * A frame that cannot be named keeps its address and mapping: never a guess.
 * Strings in a struct sym_frame live as long as the mapping's snapshot:
 * copy them before dropping it.
 *
 * Thread-safe: one internal mutex guards the cache and its counters; files
 * are parsed outside it.  Lock order: a process state's lock, then this
 * one (symbolizer__attach() runs under the first).
 */
#ifndef CTXPROF_SYMBOLIZER_H
#define CTXPROF_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct mapping;
struct mappings;
struct process_state_resolver;
struct symbolizer;

/* an unheld file's entry goes this long after its last mapping went */
#define SYMBOLIZER_IDLE_NS (30ull * 1000000000ull)

/* calls inlined at one address a frame keeps at most (deeper: the innermost are kept) */
#define SYM_FRAME_MAX_INLINE 8

/* A call inlined at a frame's address: the function and its position there. */
struct sym_inline {
	const char *function; /* NULL when unnamed */
	const char *file;     /* NULL when unknown */
	uint32_t line;	      /* 0 when unknown */
};

/* What is known about one frame; strings live as long as the mapping's snapshot. */
struct sym_frame {
	/* display name (no symbol version, demangled); NULL when not named */
	const char *function;
	/* the name as the symbol table has it (versioned, mangled) */
	const char *system_name;
	/*
	 * file as the target sees it, "[vdso]", "[kernel.kallsyms]", "" when
	 * anonymous; NULL when unmapped
	 */
	const char *mapping_path;
	const char *build_id; /* hex, NULL when unknown */
	uint64_t map_start;   /* mapping start address (0 when unmapped) */
	uint64_t map_end;     /* one past the mapping's end */
	uint64_t map_pgoff;   /* file offset of map_start */
	/* source position, where the file says (a Go program's .gopclntab) */
	const char *file; /* NULL when unknown */
	uint32_t line;	  /* 0 when unknown */
	/* the calls inlined at the address into @function, innermost first; the
	 * position of each is in the callee's body, @file:@line the outermost call */
	uint32_t nr_inlined;
	struct sym_inline inlined[SYM_FRAME_MAX_INLINE];
};

/* Counters for the run summary; every skipped input is counted here. */
struct symbolizer_stats {
	uint64_t elf_opened;	    /* distinct ELF files parsed */
	uint64_t elf_open_failed;   /* files that could not be opened safely */
	uint64_t elf_parse_failed;  /* files that were not valid ELF */
	uint64_t elf_by_path;	    /* opened by path: /proc/PID/map_files was refused */
	uint64_t elf_mismatch;	    /* by path, but another inode than mapped: refused */
	uint64_t elf_shared;	    /* identities found parsed already under their build id */
	uint64_t elf_by_stat;	    /* mappings found parsed already by a stat, not opened */
	uint64_t files_cached;	    /* entries in the cache now */
	uint64_t bytes_cached;	    /* memory their parsed symbols hold now, and bytes_charged */
	uint64_t bytes_charged;	    /* of those, what processes' perf maps hold */
	uint64_t bytes_budget;	    /* the budget those bytes are kept within */
	uint64_t files_evicted;	    /* entries let go: unheld and idle, or to make room */
	uint64_t files_over_budget; /* parsed files not kept: past the budget */
	/* parsed, but their symbols refused: past elf_syms' per-file bounds */
	uint64_t symbols_over_budget;
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
	/* Go programs without symbols, named from their .gopclntab */
	uint64_t go_tables;  /* read */
	uint64_t go_bad;     /* malformed or of a layout before Go 1.16: ignored */
	uint64_t go_too_big; /* past ELF_SYMS_MAX_GOPCLNTAB: ignored */
	/* frame lookups named from each source (the file's own tables are the rest) */
	uint64_t names_debug_file;
	uint64_t names_minidebug;
	uint64_t names_gopclntab;
	uint64_t names_vdso;
	uint64_t demangled;	  /* distinct symbols demangled */
	uint64_t demangle_failed; /* distinct mangled-looking symbols left as they are */
};

/**
 * symbolizer__new() - create a symbolizer.
 * @kernel: load /proc/kallsyms for kernel frames (0 to skip)
 * @budget: bytes the cached files' parsed symbols may hold together
 * Return: the symbolizer, or NULL with errno set.  Pair with symbolizer__free().
 * Kernel symbols that cannot be loaded are not an error: kernel frames then
 * stay unnamed (see symbolizer__has_kernel()).
 */
struct symbolizer *symbolizer__new(int kernel, uint64_t budget);

/** symbolizer__free() - after every snapshot it attached files to is gone; accepts NULL. */
void symbolizer__free(struct symbolizer *s);

/**
 * symbolizer__resolver() - @s as the resolver of a process state set
 * (process_states__set_resolver()).
 */
void symbolizer__resolver(struct symbolizer *s, struct process_state_resolver *out);

/**
 * symbolizer__attach() - set the file of each of @snap's mappings, as
 * process @pid maps it: @prev's where the mapping is the same (same place,
 * same file), else the cached file of the identity found now, parsed (with
 * its debug file) when new.  Mappings whose file cannot be read safely, or
 * does not fit the budget, get none (counted).  Before @snap is shared.
 * @root_fd: the process's root (proc_root_open()), where paths and debug
 *	files are looked up; -1: opened here from @pid when needed
 * @pid: 0 for no process: files are then found by path in @root_fd only
 * @fresh_start, @fresh_end: where @prev's files are not reused (new
 *	mappings the kernel reported: the text may be the same, the file not)
 */
void symbolizer__attach(struct symbolizer *s, pid_t pid, int root_fd, struct mappings *snap,
			const struct mappings *prev, uint64_t fresh_start, uint64_t fresh_end);

/**
 * symbolizer__charge() - count @n bytes held elsewhere (a process's perf
 * map, symbols/perf_map.h) against the budget, as the parsed symbols of a
 * file: unheld files go, least recently used first, to make room.  Any
 * thread; takes the symbolizer's lock.
 * Return: 0, or -E2BIG when they do not fit even then (nothing charged).
 */
int symbolizer__charge(struct symbolizer *s, size_t n);

/** symbolizer__uncharge() - give back @n bytes symbolizer__charge() took. */
void symbolizer__uncharge(struct symbolizer *s, size_t n);

/** symbolizer__detach() - release what symbolizer__attach() set in @snap. */
void symbolizer__detach(struct symbolizer *s, struct mappings *snap);

/**
 * symbolizer__trim() - let go of files no mapping held for
 * SYMBOLIZER_IDLE_NS before @now_ns (CLOCK_MONOTONIC).  Any thread; the
 * collector calls it after each export.
 */
void symbolizer__trim(struct symbolizer *s, uint64_t now_ns);

/**
 * symbolizer__user() - name user address @addr, known to lie in @m (a
 * mapping of a snapshot symbolizer__attach() saw).
 * @return_address: look up @addr - 1, so a call at the very end of a
 *	function (or mapping) names the caller
 *
 * Looks in the file's debug file first, then in its own table (with its
 * MiniDebugInfo); a versioned or mangled name met for the first time gets
 * its display form here, under the lock (microseconds, bounded; some
 * 100 KiB of stack).
 * Return: 0 with @out filled (function may be NULL: unnamed).
 */
int symbolizer__user(struct symbolizer *s, const struct mapping *m, uint64_t addr,
		     bool return_address, struct sym_frame *out);

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
