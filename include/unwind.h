/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Native unwinding tables shared by the collector, which builds them from
 * .eh_frame / .debug_frame with libdw (user/unwind/), and the BPF sampler,
 * which walks user stacks with them (bpf/native_unwind.bpf.h).  x86-64 only:
 * the registers named here are the x86-64 ones (DWARF 6 = rbp, 7 = rsp,
 * 16 = return address).
 *
 * A table belongs to one ELF file and is a sorted array of rows; a row says
 * "from this pc on (up to the next row's pc), unwind with rule R".  Rules
 * are deduplicated across every table: a row holds an index into one global
 * rule array.  Row pcs are offsets from the table's base, an ELF virtual
 * address (the file's lowest PT_LOAD vaddr), so they fit 32 bits.
 *
 * Compiles in both worlds: only __u8..__u64, #defines and enums.
 */
#ifndef CTXPROF_UNWIND_H
#define CTXPROF_UNWIND_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * How to find the caller's frame (the CFA, canonical frame address: the
 * caller's rsp right after the call pushed the return address, which is
 * then at CFA - 8), or a command for the cases a CFA rule cannot say.
 */
enum unwind_cmd {
	UNWIND_CMD_INVALID = 0, /* no CFI covers this pc (a gap between FDEs): stop */
	UNWIND_CMD_CFA_RSP,	/* CFA = rsp + cfa_off */
	UNWIND_CMD_CFA_RBP,	/* CFA = rbp + cfa_off */
	/* CFA = *(rbp + cfa_off): gcc's stack realignment (DW_OP_breg6 off; DW_OP_deref) */
	UNWIND_CMD_CFA_RBP_DEREF,
	/*
	 * A PLT stub (the lazy-binding entries' CFA expression):
	 *   CFA = rsp + cfa_off + ((rip & 15) >= rbp_off ? 8 : 0)
	 * rbp_off holds the threshold (11 for the classic 16-byte .plt
	 * entries); rbp is unchanged.
	 */
	UNWIND_CMD_PLT,
	/* a signal trampoline (__restore_rt: the CIE has the 'S' augmentation):
	 * rsp points at the kernel's ucontext; the caller's registers come from
	 * its sigcontext, and its pc is exact, not a return address */
	UNWIND_CMD_SIGNAL,
	/* the return address is undefined: the outermost frame (_start, a
	 * thread's clone entry); the stack is complete */
	UNWIND_CMD_END,
	/* walk this frame by its frame pointer: CFA = rbp + 16, caller's rbp at
	 * CFA - 16 (used for files without CFI and code without a file) */
	UNWIND_CMD_FP,
	/* the CFI says something no command above can express (a CFA on another
	 * register, an unknown expression, a return address not at CFA - 8): stop */
	UNWIND_CMD_UNSUPPORTED,
	UNWIND_CMD_MAX,
};

/* Where the caller's rbp is (its other registers are not needed). */
enum unwind_rbp {
	UNWIND_RBP_SAME = 0,  /* unchanged by this frame */
	UNWIND_RBP_CFA,	      /* saved at CFA + rbp_off */
	UNWIND_RBP_RBP,	      /* saved at rbp + rbp_off (DW_CFA_expression DW_OP_breg6 off) */
	UNWIND_RBP_UNDEFINED, /* not recoverable: a later CFA on rbp fails */
	UNWIND_RBP_MAX,
};

struct unwind_rule {
	__u8 cmd;      /* enum unwind_cmd */
	__u8 rbp;      /* enum unwind_rbp */
	__u16 pad;     /* zero */
	__s32 cfa_off; /* see enum unwind_cmd */
	__s32 rbp_off; /* see enum unwind_rbp; UNWIND_CMD_PLT: the threshold */
	__u32 pad2;    /* zero: rules are compared and hashed as bytes */
};

_Static_assert(sizeof(struct unwind_rule) == 16, "unwind_rule ABI");

struct unwind_row {
	__u32 pc;   /* offset from the table's base; the row covers [pc, next row's pc) */
	__u32 rule; /* index into the rule array */
};

_Static_assert(sizeof(struct unwind_row) == 8, "unwind_row ABI");

#endif /* CTXPROF_UNWIND_H */
