/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * elf_plt - names for the PLT stubs of an x86-64 or AArch64 ELF file, "NAME@plt" as
 * perf and objdump give them.  No symbol covers .plt, .plt.sec or .plt.got,
 * yet a program that calls its libraries through them is sampled there
 * (a few per cent of a Python process: libpython calls its own exports
 * through its PLT).  Unnamed, such a frame let pprof re-symbolize the whole
 * mapping from the file on its disk, and its nearest-symbol lookup named
 * the stubs "_init".
 *
 * A stub is one `jmp *GOT(%rip)` (after an endbr64 and a bnd prefix when
 * there are); the relocation of that GOT slot names the function:
 * R_X86_64_JUMP_SLOT in .rela.plt, R_X86_64_GLOB_DAT in .rela.dyn (the
 * .plt.got stubs of functions whose address is also taken).  Decoding the
 * jump rather than counting entries works for lazy .plt, IBT's .plt.sec and
 * .plt.got alike; a stub that is not such a jump (the lazy PLT0, IBT's
 * lazy .plt stubs) or whose slot has no named relocation is left unnamed.
 * AArch64's stubs load their slot with `adrp x16; ldr x17, [x16, #off]`
 * (R_AARCH64_JUMP_SLOT / GLOB_DAT / IRELATIVE name it), after a `bti c` in
 * BTI PLTs, 16 or 24 bytes (PAC-PLT's autia1716): the pair is found at any
 * instruction and a stub ends where the next begins.
 *
 * Hostile input: every section is copied within a cap and charged to the
 * caller's budget first; counts and addresses are checked; a malformed
 * table yields fewer names, never a wrong one.  Other machines: no names.
 *
 * Called by elf_syms (any thread; no shared state).
 */
#ifndef CTXPROF_ELF_PLT_H
#define CTXPROF_ELF_PLT_H

#include <stddef.h>
#include <stdint.h>
#include "elf/elf_file.h"
#include "util/mem_budget.h"

/* caps on what one file's PLT names may read and keep */
#define ELF_PLT_MAX_SECTION (4u << 20) /* bytes of a .plt* or .rela.* section */
#define ELF_PLT_MAX_STUBS   (1u << 16) /* named stubs kept */
#define ELF_PLT_SUFFIX	    "@plt"

struct elf_plt_stub {
	uint64_t start;
	uint64_t end; /* exclusive */
	const char *name;
};

struct elf_plt {
	struct elf_plt_stub *stubs; /* sorted by start, not overlapping */
	size_t nr;
	char *names; /* backing store of stubs[].name */
	size_t names_len;
};

/**
 * elf_plt__read() - the named stubs of @ef into @plt (zeroed first), their
 * memory charged to @b.
 * Return: 0 (no PLT, another machine, or a malformed table: fewer or no
 * names); -E2BIG past @b; -ENOMEM.  On error @plt holds nothing.
 */
int elf_plt__read(const struct elf_file *ef, struct mem_budget *b, struct elf_plt *plt);

/** elf_plt__release() - free what @plt holds; accepts a zeroed one. */
void elf_plt__release(struct elf_plt *plt);

/** elf_plt__find() - the stub containing ELF virtual address @vaddr, or NULL. */
const struct elf_plt_stub *elf_plt__find(const struct elf_plt *plt, uint64_t vaddr);

/** elf_plt__bytes() - the memory @plt holds. */
size_t elf_plt__bytes(const struct elf_plt *plt);

#endif /* CTXPROF_ELF_PLT_H */
