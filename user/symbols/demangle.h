/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * demangle - the display form of symbol names: a symbol version dropped
 * (symbol_version_at()), then C++ and Rust names demangled through
 * libiberty (the demangler of binutils and GCC): Itanium C++ ("_Z"), Rust
 * legacy ("_ZN...17h<hash>E", hash dropped) and Rust v0 ("_R").
 *
 * Names come from a target's files, so they are hostile: a few hundred bytes
 * of mangled name can ask for gigabytes of output (each substitution may
 * repeat an earlier, already doubled one).  libiberty's callback interface
 * hands the output over piece by piece and allocates nothing (its tables
 * live on the stack), so demangle() stops it at DEMANGLE_MAX_LEN bytes and
 * refuses the name: time and memory stay bounded.  Mangled names longer than
 * DEMANGLE_MAX_INPUT are not tried (libiberty refuses deep ones itself).
 *
 * Reentrant: any thread, no shared state.  Needs some 100 KiB of stack.
 */
#ifndef CTXPROF_DEMANGLE_H
#define CTXPROF_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

#define DEMANGLE_MAX_LEN   4096 /* longest display name kept, NUL included */
#define DEMANGLE_MAX_INPUT 1024 /* longer mangled names are not tried */

/**
 * symbol_version_at() - where @name's symbol version begins, the one place
 * that knows its syntax.  GNU ld names a versioned symbol in .symtab with its
 * version: "name@@VER" for the default one, "name@VER" for another
 * ("sem_post@@GLIBC_2.34", "sem_post@GLIBC_2.2.5"; Debian's libc6-dbg
 * files are full of them).  .dynsym never has them: versions live in
 * .gnu.version there.  The display name is the part before it, the one
 * users and callers know; the whole name stays the system name.  A PLT
 * stub's "@plt" (elf_plt.h) is no version: the symbolizer keeps it shown.
 * Return: the length of @name without its version; strlen(@name) when it
 * has none ("@" first, an empty version, or a second version are none).
 */
size_t symbol_version_at(const char *name);

/** demangle_wanted() - @name looks mangled (C++ or Rust), so worth a demangle(). */
bool demangle_wanted(const char *name);

/**
 * demangle() - demangle @name into @out.
 * @out: DEMANGLE_MAX_LEN bytes
 * Return: 0 with @out set; -EINVAL when @name does not demangle (not
 * mangled, malformed, or longer than DEMANGLE_MAX_INPUT); -E2BIG when its
 * display form would not fit in DEMANGLE_MAX_LEN.
 */
int demangle(const char *name, char out[DEMANGLE_MAX_LEN]);

#endif /* CTXPROF_DEMANGLE_H */
