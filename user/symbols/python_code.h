/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * python_code - the name, file and lines of a CPython code object, read
 * from the target's memory, for a Python frame of a sample
 * (include/python_abi.h: the code object's address and the check).
 *
 * The memory is the target's and hostile: any pointer may be wrong, any
 * object freed and its memory reused since the sample.  So every object is
 * first checked to be of the type it must be (its ob_type is the target's
 * PyCode_Type, PyUnicode_Type or PyBytes_Type), the code object's first line
 * and name pointers must give the check the sampler computed, and every
 * length is bounded before anything is read or allocated:
 *   names       at most PYTHON_CODE_MAX_NAME code points,
 *   file names  at most PYTHON_CODE_MAX_FILENAME code points: longer ones
 *               are cut there and end with PYTHON_CODE_CUT ("…"), so a
 *               generated 10 MB name costs a few KiB, and still names;
 *   line tables at most PYTHON_CODE_MAX_LINETABLE bytes: a longer one is
 *               not read (the name is kept, its lines read as the first).
 * Strings come out as well-formed UTF-8 without NUL (a profile string must
 * be UTF-8): CPython's 1-, 2- and 4-byte kinds are converted; a NUL or
 * other control character (C0, DEL, C1: a name that is an escape sequence
 * would rewrite a terminal showing the profile), a surrogate (surrogateescape'd file names have
 * them), a value past U+10FFFF or a byte >= 0x80 in an "ASCII" string becomes U+FFFD.  Only compact
 * strings are read (data right after the header): every str the compiler makes is; the legacy kind
 * whose data lies elsewhere is refused.
 *
 * The module only reads through a callback, so it is pure: no cache (the
 * caller keeps one, by address and check), no state.  Any thread.
 */
#ifndef CTXPROF_PYTHON_CODE_H
#define CTXPROF_PYTHON_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "symbols/python_layout.h"

#define PYTHON_CODE_MAX_NAME	  1024	      /* code points of a qualified name */
#define PYTHON_CODE_MAX_FILENAME  4096	      /* code points of a file name (PATH_MAX) */
#define PYTHON_CODE_MAX_LINETABLE (64u << 10) /* bytes of co_linetable read */
/* the bytes read of a code object's, a str's or a bytes object's header, at most: a layout
 * whose fields lie further is refused */
#define PYTHON_CODE_HEADER_MAX 256
/* what ends a name or file name cut at its bound: U+2026 HORIZONTAL ELLIPSIS */
#define PYTHON_CODE_CUT "\xe2\x80\xa6"

/**
 * typedef python_read_fn - read @len bytes of the target's memory at @addr
 * into @buf: all of them, or fail.
 * Return: 0 or -errno (-EFAULT, -EIO: not mapped; -ESRCH: gone ...).
 */
typedef int (*python_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* a code object's names: owned, python_code_name__free() */
struct python_code_name {
	char *qualname;	      /* co_qualname, UTF-8, NUL-terminated ("Klass.method") */
	char *filename;	      /* co_filename, the same */
	int32_t firstlineno;  /* co_firstlineno */
	uint8_t *linetable;   /* co_linetable's bytes (python_code__line()); NULL if none */
	size_t linetable_len; /* 0: empty, or longer than PYTHON_CODE_MAX_LINETABLE */
};

/**
 * python_code__name() - read the code object at @code and what it names.
 * @l: the target's layout (python_layout__find())
 * @rd, @ctx: reads the target's memory
 * @code_type, @unicode_type, @bytes_type: the target's &PyCode_Type,
 *	&PyUnicode_Type, &PyBytes_Type (load bias applied)
 * @check: the frame's check (PYTHON_FRAME_CHECK()): python_code_check() of
 *	the first line and the two name pointers as the sampler read them
 * @out: filled on success; untouched otherwise
 * Return: 0; -ESTALE when @code no longer holds what the sampler saw (the
 * check differs: freed, and another code object or anything else put
 * there); -EINVAL when an object is not of its type (@code is not a code
 * object, a name not a str, the line table not bytes) or has a negative
 * length; -EOPNOTSUPP for a string that is not compact; -ENOMEM; or what
 * @rd returned.
 */
int python_code__name(const struct python_layout *l, python_read_fn rd, void *ctx,
		      uint64_t code_type, uint64_t unicode_type, uint64_t bytes_type, uint64_t code,
		      uint32_t check, struct python_code_name *out);

/** python_code_name__free() - free what @n holds and clear it; accepts NULL. */
void python_code_name__free(struct python_code_name *n);

/**
 * python_code__line() - the source line of the instruction at code unit
 * @instr (from co_code_adaptive), from a CPython location table
 * (co_linetable, Objects/locations.md; one format from 3.11 to 3.15), as
 * PyCode_Addr2Line() computes it.
 * Reads nothing past @len bytes of @table, and only up to @instr's entry.
 * Return: the line (>= 0: a module's first instruction is on line 0);
 * @firstlineno for PYTHON_INSTR_NONE or an @instr past the table's end;
 * -1 when the instruction has no line, either because the table says so
 * (CPython's None: code 15) or because it is malformed before reaching it
 * (an entry that does not start with bit 7 set, a varint cut short or
 * longer than 32 bits, a line outside [0, INT_MAX]).
 */
int python_code__line(const uint8_t *table, size_t len, int firstlineno, uint32_t instr);

/**
 * python_code__lnotab_line() - the same from a CPython 3.9 co_lnotab
 * (Objects/lnotab_notes.txt: pairs of byte offset and signed line
 * increments), as its PyCode_Addr2Line() computes it; @instr in code units
 * (2 bytes each).  A trailing odd byte is ignored.
 * Return: the line; @firstlineno for PYTHON_INSTR_NONE; -1 for a line
 * outside [0, INT_MAX].
 */
int python_code__lnotab_line(const uint8_t *table, size_t len, int firstlineno, uint32_t instr);

#endif /* CTXPROF_PYTHON_CODE_H */
