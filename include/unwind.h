/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Native unwinding tables shared by the collector, which builds them from
 * .eh_frame / .debug_frame with libdw (user/unwind/), and the BPF sampler,
 * which walks user stacks with them (bpf/native_unwind.bpf.h).  The names
 * are x86-64's (DWARF 6 = rbp, 7 = rsp, 16 = return address); on arm64
 * "rsp" stands for sp (DWARF 31), "rbp" for the frame pointer x29 and the
 * return address is x30's (the link register), found as enum unwind_ra says.
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
	/* no CFI covers this pc (a gap between FDEs): frame pointer, or stop */
	UNWIND_CMD_INVALID = 0,
	UNWIND_CMD_CFA_RSP, /* CFA = rsp + cfa_off */
	UNWIND_CMD_CFA_RBP, /* CFA = rbp + cfa_off */
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
	/* a Go function that runs its callee on another stack or came from one
	 * (runtime.mcall, systemstack, morestack, asmcgocall, the vDSO callers:
	 * the runtime's SPWRITE functions): its caller is not above it on this
	 * stack.  go_switch says which (enum unwind_go_switch): for those the
	 * runtime saved the goroutine's registers of (runtime.g.sched,
	 * m.vdsoSP), the walk goes on there as Go's own traceback does
	 * (bpf/go_stack.bpf.h); a sampled frame not switched yet (or back) is
	 * its own, CFA = rsp + cfa_off and rbp as UNWIND_CMD_CFA_RSP's (its
	 * pcsp); otherwise, or when the saved state fails its checks, the stack
	 * ends here, counted (UNWIND_STOP_GO_SYSTEM_STACK): never a made-up
	 * caller */
	UNWIND_CMD_GO_SYSTEM_STACK,
	UNWIND_CMD_MAX,
};

/*
 * Which stack switch an UNWIND_CMD_GO_SYSTEM_STACK rule is (its go_switch),
 * and so where the frames that led to it are (the runtime's asm_amd64.s):
 */
enum unwind_go_switch {
	UNWIND_GO_SWITCH_OTHER = 0, /* asmcgocall, cgocallback, gogo...: the stack ends */
	/* systemstack(fn) from a goroutine: the goroutine's g.sched holds
	 * pc = runtime.systemstack_switch (+8 since Go 1.21), sp = systemstack's
	 * own (its return address), bp: the goroutine's stack goes on there */
	UNWIND_GO_SWITCH_SYSTEMSTACK,
	/* mcall(fn): g.sched holds the caller's return address, sp and bp;
	 * with no goroutine left on the thread (fn dropped it: park_m, goexit0),
	 * g0.sched, where mstart1 left the thread's own stack (mstart) */
	UNWIND_GO_SWITCH_MCALL,
	/* morestack, from a function's prologue: g.sched holds the return
	 * address into that function, its sp and bp */
	UNWIND_GO_SWITCH_MORESTACK,
	/* runtime.nanotime1, time.now: the vDSO called on g0's stack (unless on
	 * g0 already), the caller's sp and return address in m.vdsoSP, m.vdsoPC
	 * (for Go's own SIGPROF traceback) around the call only, its rbp saved
	 * below that sp (their $16 frame) */
	UNWIND_GO_SWITCH_VDSO,
	UNWIND_GO_SWITCH_MAX,
};

/* Where the caller's rbp is (its other registers are not needed). */
enum unwind_rbp {
	UNWIND_RBP_SAME = 0,  /* unchanged by this frame */
	UNWIND_RBP_CFA,	      /* saved at CFA + rbp_off */
	UNWIND_RBP_RBP,	      /* saved at rbp + rbp_off (DW_CFA_expression DW_OP_breg6 off) */
	UNWIND_RBP_UNDEFINED, /* not recoverable: a later CFA on rbp fails */
	UNWIND_RBP_MAX,
};

/*
 * Where the caller's pc (the return address) is.  x86-64's is always at
 * CFA - 8, where the call pushed it (0, so x86-64 rules are as they were);
 * arm64's call leaves it in x30, which a prologue stores with the frame
 * pointer.  A PAC-signed return address is stripped by the unwinder.
 */
enum unwind_ra {
	UNWIND_RA_CFA_M8 = 0, /* at CFA - 8 (x86-64) */
	UNWIND_RA_CFA,	      /* saved at CFA + ra_off (arm64, after the prologue) */
	/* still in the link register (arm64: a leaf, a prologue before the store,
	 * an epilogue after the load): only the sampled frame can be such */
	UNWIND_RA_LR,
	UNWIND_RA_MAX,
};

struct unwind_rule {
	__u8 cmd; /* enum unwind_cmd */
	__u8 rbp; /* enum unwind_rbp */
	__u8 ra;  /* enum unwind_ra */
	/* UNWIND_CMD_GO_SYSTEM_STACK: enum unwind_go_switch; else zero (rules
	 * are compared and hashed as bytes) */
	__u8 go_switch;
	__s32 cfa_off; /* see enum unwind_cmd */
	__s32 rbp_off; /* see enum unwind_rbp; UNWIND_CMD_PLT: the threshold */
	__s32 ra_off;  /* UNWIND_RA_CFA: the offset from the CFA; else zero */
};

_Static_assert(sizeof(struct unwind_rule) == 16, "unwind_rule ABI");

struct unwind_row {
	__u32 pc;   /* offset from the table's base; the row covers [pc, next row's pc) */
	__u32 rule; /* index into the rule array */
};

_Static_assert(sizeof(struct unwind_row) == 8, "unwind_row ABI");

/*
 * What the BPF unwinder knows of one process: its executable mappings, a
 * sorted range of the mappings array, and the image they were read from.
 */
enum unwind_map_kind {
	UNWIND_MAP_TABLE = 1, /* a file whose table is in the rows array */
	UNWIND_MAP_FP,	      /* no CFI (a file without any, JIT code, the anonymous */
	/* executable memory of an interpreter): frame pointers */
	UNWIND_MAP_NO_TABLE, /* a file whose table could not be built or kept (too */
	/* large, no room, unreadable): frame pointers, counted */
	UNWIND_MAP_BUILDING, /* a file whose table is being built: frame pointers */
	/* meanwhile, and the stack ends as UNWIND_STOP_NO_TABLE_YET (code built */
	/* without them walked so would look corrupt, for want of a table) */
	/* anonymous executable memory (JIT code): frame pointers, but a frame
	 * pointer of 0 there, or a 0 return address above it, is code that keeps
	 * no frame record (HotSpot's compiled methods), never the stack's end */
	UNWIND_MAP_JIT,
	UNWIND_MAP_KIND_MAX,
};

struct unwind_mapping {
	__u64 start;	 /* first address */
	__u64 end;	 /* one past the last */
	__u64 bias;	 /* row pc = address - bias (load bias + the table's base) */
	__u32 row_first; /* UNWIND_MAP_TABLE: the table's first row in the rows array */
	__u32 row_count; /* and its number of rows */
	__u32 kind;	 /* enum unwind_map_kind */
	__u32 pad;	 /* zero */
};

_Static_assert(sizeof(struct unwind_mapping) == 40, "unwind_mapping ABI");

struct unwind_proc {
	__u32 map_first; /* its mappings: [map_first, map_first + map_count) */
	__u32 map_count;
	__u32 exec_id; /* the image they belong to (sample_record.exec_id); 0: any */
	__u32 pad;     /* zero */
};

_Static_assert(sizeof(struct unwind_proc) == 16, "unwind_proc ABI");

/* how the sampler walks user stacks (the collector's --unwind) */
enum unwind_mode {
	UNWIND_MODE_FP = 0, /* the kernel's frame-pointer walk (bpf_get_stack) only */
	UNWIND_MODE_AUTO,   /* tables where there are some, frame pointers elsewhere */
	UNWIND_MODE_DWARF,  /* tables only: a frame without CFI ends the stack */
};

/* mappings of one process the unwinder searches; more are not installed */
#define UNWIND_MAX_PROC_MAPPINGS 4096
/* rows of one table the unwinder searches: 2^24 (24 halvings) */
#define UNWIND_MAX_TABLE_ROWS (1u << 24)
/*
 * The rows array is made of chunks of 2^UNWIND_CHUNK_SHIFT rows (1 MiB),
 * each a BPF array of its own created when rows first land in it: the
 * rows take the memory their tables use, not the --unwind-memory budget.
 * Row i lies in chunk i >> UNWIND_CHUNK_SHIFT, at i & (UNWIND_CHUNK_ROWS - 1).
 */
#define UNWIND_CHUNK_SHIFT 17
#define UNWIND_CHUNK_ROWS  (1u << UNWIND_CHUNK_SHIFT)

/*
 * Why a user stack ends where it does: one per sample, in the record's
 * flags (SAMPLE_USTOP()), and counted per reason.  A frame that cannot be
 * unwound ends the stack: no address is guessed past it.
 */
enum unwind_stop {
	UNWIND_STOP_COMPLETE =
		0,		 /* the outermost frame was reached (CFI end, a 0 return address) */
	UNWIND_STOP_TRUNCATED,	 /* SAMPLER_MAX_USTACK frames taken, more were left */
	UNWIND_STOP_NO_MAPPING,	 /* a return address in no executable mapping known */
	UNWIND_STOP_NO_CFI,	 /* --unwind dwarf: no CFI covers the address */
	UNWIND_STOP_UNSUPPORTED, /* CFI the unwinder cannot follow */
	UNWIND_STOP_READ_ERR,	 /* the stack could not be read there */
	UNWIND_STOP_BAD_FRAME,	 /* a frame that does not go up the stack (corrupt or looping) */
	UNWIND_STOP_NO_USER,	 /* no user context (a kernel thread) */
	UNWIND_STOP_NO_TABLE_YET, /* the process has no tables yet: walked by frame pointers */
	UNWIND_STOP_FP,		  /* --unwind fp: walked by frame pointers, end unknown */
	/* a Go runtime function that switched stacks (UNWIND_CMD_GO_SYSTEM_STACK):
	 * the frames above it are whole, their goroutine's are on another stack */
	UNWIND_STOP_GO_SYSTEM_STACK,
	UNWIND_STOP_JIT_NO_FP, /* JIT code without a frame record (UNWIND_MAP_JIT) */
	UNWIND_STOP_MAX,
};

#endif /* CTXPROF_UNWIND_H */
