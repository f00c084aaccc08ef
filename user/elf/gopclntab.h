/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gopclntab - the Go runtime's own table of functions (.gopclntab) of an
 * ELF file: what names the functions of a Go program whose symbol table is
 * stripped (go build -ldflags='-s -w', most container images), and says
 * where each instruction's stack frame is (pcsp), from which source line it
 * comes (pcfile, pcln) and into which function it was inlined.  Every Go
 * binary keeps it: the runtime needs it for its own tracebacks.
 *
 * Layouts read (the header's magic, little-endian, 64-bit): 0xfffffffa for
 * Go 1.16 and 1.17, 0xfffffff0 for 1.18 and 1.19, 0xfffffff1 for 1.20 on
 * (as Go's runtime/symtab.go, runtime2.go and debug/gosym describe them);
 * older and unknown ones are refused (ENOTSUP).
 *
 * Where: the .gopclntab section (.data.rel.ro.gopclntab in a PIE Go's own
 * linker made); a PIE linked by gcc (cgo) has it merged into .data.rel.ro,
 * where its header is looked for (a few candidates at most) when the file
 * says it is Go's (.go.buildinfo, .note.go.buildid): other files cost a
 * look at their section names.
 *
 * The file is hostile (elf/elf_file.h): the section is copied whole into
 * private memory (at most the caller's cap: its bytes are what the table
 * holds), its header's counts are capped and its offsets checked against
 * the section at open; the function table must be sorted, each function's
 * record inside the section.  What lookups follow later (names, pc-value
 * tables, file names) is checked on every read: a malformed piece names
 * nothing (NULL, -EINVAL), never reads outside the copy, and a pc-value
 * table is decoded in at most as many steps as its function has bytes.
 *
 * Inlining (FUNCDATA_InlTree): the trees live outside the section, in the
 * file's read-only data; gopclntab__open_inline() copies the ones the table
 * uses, within a byte cap, while the file is at hand.
 *
 * Threads: immutable once open; its readers keep their state in the
 * caller's structs: any thread.
 */
#ifndef CTXPROF_GOPCLNTAB_H
#define CTXPROF_GOPCLNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_file;
struct gopclntab;

/*
 * Caps against hostile files.  The largest tables seen: kubelet-sized
 * programs (100 MiB of code) carry 30-40 MiB of .gopclntab and 100k
 * functions.
 */
#define GOPCLNTAB_MAX_FUNCS (4u << 20) /* functions of one table */
#define GOPCLNTAB_MAX_NAME  4096       /* bytes of a name or file name: longer is malformed */
#define GOPCLNTAB_MAX_STEPS (1u << 20) /* entries of one pc-value table */
#define GOPCLNTAB_MAX_DEPTH 64	       /* inlined frames at one pc */

/* the table's layout, by the Go release that introduced it */
enum gopclntab_version {
	GOPCLNTAB_GO116 = 116, /* 1.16, 1.17 */
	GOPCLNTAB_GO118 = 118, /* 1.18, 1.19 */
	GOPCLNTAB_GO120 = 120, /* 1.20 and later */
};

/* _func.flag bits (Go 1.17 on; always 0 in a Go 1.16 table) */
#define GOPCLNTAB_FLAG_TOPFRAME 0x1 /* the outermost frame of a stack: nothing calls it */
#define GOPCLNTAB_FLAG_SPWRITE	0x2 /* writes rsp other than by its frame's size */
#define GOPCLNTAB_FLAG_ASM	0x4 /* written in assembly */

/* One function, as gopclntab__func() and gopclntab__find() give it. */
struct gopclntab_func {
	uint64_t entry;	  /* ELF virtual address of its first instruction */
	uint64_t end;	  /* one past its last: the next function's entry */
	const char *name; /* owned by the table; NULL when malformed */
	uint32_t idx;	  /* its index in the table, in address order */
	uint32_t off;	  /* of its record in the section */
	uint32_t pcsp;	  /* its pc-value tables, offsets into pctab (0: none) */
	uint32_t pcfile;
	uint32_t pcln;
	uint32_t npcdata;
	uint32_t nfuncdata;
	uint32_t cu_offset; /* its compilation unit's first entry in cutab */
	uint8_t func_id;    /* the runtime's funcID (version-dependent values) */
	uint8_t flag;	    /* GOPCLNTAB_FLAG_* */
};

/* A decoder of one pc-value table of one function (gopclntab__pcvalue()). */
struct gopclntab_pcvalue {
	const uint8_t *p, *end; /* what is left of the table */
	uint64_t pc;		/* where the next entry starts */
	uint64_t func_end;
	uint32_t quantum;
	uint32_t steps;	    /* entries decoded */
	uint32_t max_steps; /* one a quantum of the function, GOPCLNTAB_MAX_STEPS at most */
	int32_t val;
	bool first;
	bool done;
};

/**
 * gopclntab__open() - read @ef's .gopclntab (or the table in its .data.rel.ro).
 * @max_bytes: the most the copy may hold; larger sections are refused
 * Return: the table (pair with gopclntab__free()), or NULL with errno set:
 * ENOENT (no such section), E2BIG (past @max_bytes or a cap above),
 * ENOTSUP (a layout not listed above, or not 64-bit little-endian), EINVAL
 * (malformed), ENOMEM, or the errno of a read.
 */
struct gopclntab *gopclntab__open(const struct elf_file *ef, size_t max_bytes);

/**
 * gopclntab__open_inline() - also copy the inlining trees the table's
 * functions use, from @ef's loaded read-only data, within @max_bytes (on
 * top of the section).  Call once, right after gopclntab__open() on the
 * same file, before the table is shared.  Trees that cannot be found (a
 * layout whose tree base is unknown) or read are left out: their pcs then
 * give only the outermost function.
 * Return: 0 (trees copied or not), -E2BIG past @max_bytes (none kept),
 * -ENOMEM.
 */
int gopclntab__open_inline(struct gopclntab *g, const struct elf_file *ef, size_t max_bytes);

/** gopclntab__free() - accepts NULL. */
void gopclntab__free(struct gopclntab *g);

/** gopclntab__version() - the layout read. */
enum gopclntab_version gopclntab__version(const struct gopclntab *g);

/** gopclntab__nr_funcs() - functions in the table. */
size_t gopclntab__nr_funcs(const struct gopclntab *g);

/** gopclntab__bytes() - the memory the table holds (its copy, the trees). */
size_t gopclntab__bytes(const struct gopclntab *g);

/** gopclntab__owns() - @p points into the table's copy (a name it gave). */
bool gopclntab__owns(const struct gopclntab *g, const void *p);

/** gopclntab__has_inline() - inlining trees were copied (gopclntab__open_inline()). */
bool gopclntab__has_inline(const struct gopclntab *g);

/**
 * gopclntab__func() - function @idx, in address order.
 * Return: 0 and @f filled; -ENOENT past the last; -EINVAL when its record
 * is malformed.
 */
int gopclntab__func(const struct gopclntab *g, size_t idx, struct gopclntab_func *f);

/**
 * gopclntab__find() - the function holding ELF virtual address @vaddr.
 * Return: 0 and @f filled; -ENOENT when no function holds it.
 */
int gopclntab__find(const struct gopclntab *g, uint64_t vaddr, struct gopclntab_func *f);

/* which of a function's pc-value tables */
enum gopclntab_pctab {
	GOPCLNTAB_PCSP,	  /* bytes the function has pushed below its entry rsp */
	GOPCLNTAB_PCFILE, /* the file, an index into its compilation unit's files */
	GOPCLNTAB_PCLN,	  /* the line */
	/* the index of the inlined call the pc belongs to, -1: none (PCDATA_InlTreeIndex) */
	GOPCLNTAB_PCINLINE,
};

/**
 * gopclntab__pcvalue() - start decoding @f's table @which.
 * Return: 0, -ENOENT when @f has none, -EINVAL when its offset is outside
 * the section.
 */
int gopclntab__pcvalue(const struct gopclntab *g, const struct gopclntab_func *f,
		       enum gopclntab_pctab which, struct gopclntab_pcvalue *it);

/**
 * gopclntab_pcvalue__next() - the next entry: @val over [@lo, @hi).
 * Entries are in address order and end at @f's end (a last entry past it
 * is cut there).
 * Return: 1 with an entry, 0 at the table's end, -EINVAL when it is
 * malformed (a varint past the table, more than GOPCLNTAB_MAX_STEPS or
 * than the function's bytes, a pc that wraps).
 */
int gopclntab_pcvalue__next(struct gopclntab_pcvalue *it, uint64_t *lo, uint64_t *hi, int32_t *val);

/**
 * gopclntab__value_at() - the value of @f's table @which at @vaddr.
 * Return: 0 and *@val set; -ENOENT when @f has no such table or it does not
 * cover @vaddr; -EINVAL when it is malformed.
 */
int gopclntab__value_at(const struct gopclntab *g, const struct gopclntab_func *f,
			enum gopclntab_pctab which, uint64_t vaddr, int32_t *val);

/**
 * gopclntab__file() - file @fileno of @f's compilation unit (a pcfile value).
 * Return: the name (owned by the table), NULL when malformed.
 */
const char *gopclntab__file(const struct gopclntab *g, const struct gopclntab_func *f,
			    int32_t fileno);

/** A source position: one frame of gopclntab__frames(). */
struct gopclntab_frame {
	const char *function; /* owned by the table; NULL when malformed */
	const char *file;     /* NULL when unknown */
	uint32_t line;	      /* 0 when unknown */
};

/**
 * gopclntab__frames() - the source frames of ELF virtual address @vaddr in
 * @f: the functions inlined there, innermost first, then @f itself, each
 * with its file and line (an inlined function's position is the call site
 * in the frame after it).
 * @frames: room for @max frames (at least 1)
 * Return: the number filled (at least 1: @f itself, with the position
 * known or not); a tree deeper than @max or GOPCLNTAB_MAX_DEPTH keeps its
 * innermost @max - 1 frames and @f.
 */
size_t gopclntab__frames(const struct gopclntab *g, const struct gopclntab_func *f, uint64_t vaddr,
			 struct gopclntab_frame *frames, size_t max);

#endif /* CTXPROF_GOPCLNTAB_H */
