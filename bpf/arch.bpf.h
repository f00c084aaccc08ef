/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the BPF programs read differently per architecture, in one place:
 * the user registers a perf_event sample interrupted, a task's saved user
 * registers, and its thread pointer.  Included by sampler.bpf.c.
 *
 * The perf_event context's registers are the architecture's UAPI pt_regs
 * (bpf_user_pt_regs_t), whose layout never changes, read at fixed offsets:
 * a CO-RE relocation there would follow the kernel's own struct pt_regs,
 * whose fields are renamed between versions (x86-64's cs became a union
 * with csx in 6.9, so a relocation against csx fails on 6.1), and the
 * context allows 8-byte loads of its registers only.
 */
#ifndef CTXPROF_ARCH_BPF_H
#define CTXPROF_ARCH_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

/* the registers a user stack walk starts from */
struct user_regs {
	__u64 pc;
	__u64 sp;
	__u64 fp; /* rbp / x29 */
	__u64 lr; /* arm64's x30, the return address of a frame not stored yet; x86: 0 */
};

#if defined(__TARGET_ARCH_x86)

/* 8-byte words of the x86-64 UAPI struct pt_regs (asm/ptrace.h) */
#define UAPI_REG_RBP 4
#define UAPI_REG_RIP 16
#define UAPI_REG_CS  17
#define UAPI_REG_RSP 19

/* the sample's own registers when it interrupted user mode (CPL 3) */
static __always_inline bool arch_ctx_user_regs(const struct bpf_perf_event_data *pctx,
					       struct user_regs *r)
{
	const __u64 *w = (const __u64 *)pctx;

	if ((w[UAPI_REG_CS] & 3) != 3)
		return false;
	r->pc = w[UAPI_REG_RIP];
	r->sp = w[UAPI_REG_RSP];
	r->fp = w[UAPI_REG_RBP];
	r->lr = 0;
	return true;
}

/* the user registers @task saved on entering the kernel (bpf_task_pt_regs: 5.15+) */
static __always_inline void arch_task_user_regs(struct task_struct *task, struct user_regs *r)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	r->pc = BPF_CORE_READ(regs, ip);
	r->sp = BPF_CORE_READ(regs, sp);
	r->fp = BPF_CORE_READ(regs, bp);
	r->lr = 0;
}

/* the thread pointer user TLS hangs from: fsbase */
static __always_inline __u64 arch_thread_pointer(struct task_struct *task)
{
	return BPF_CORE_READ(task, thread.fsbase);
}

/* a return address as the unwinder reads it from the stack */
#define arch_strip_ra(ra) (ra)

/* a frame-pointer step gives the caller's sp exactly: rbp was pushed right
 * below the return address, at CFA - 16 */
#define ARCH_FP_STEP_SP_EXACT 1

/* the interrupted registers in the signal frame __restore_rt's rsp points
 * at: the kernel's struct ucontext */
#define SIGFRAME_REG(f)                                                                            \
	(__builtin_offsetof(struct ucontext, uc_mcontext) +                                        \
	 __builtin_offsetof(struct sigcontext_64, f))
#define SIGFRAME_PC SIGFRAME_REG(ip)
#define SIGFRAME_SP SIGFRAME_REG(sp)
#define SIGFRAME_FP SIGFRAME_REG(bp)

#elif defined(__TARGET_ARCH_arm64)

/* 8-byte words of the arm64 UAPI struct user_pt_regs (asm/ptrace.h) */
#define UAPI_REG_FP	      29
#define UAPI_REG_LR	      30
#define UAPI_REG_SP	      31
#define UAPI_REG_PC	      32
#define UAPI_REG_PSTATE	      33
/* PSR_MODE_MASK and PSR_MODE32_BIT: EL0 in AArch64 state is all zero */
#define PSTATE_MODE_BITS      0x1f

/* the sample's own registers when it interrupted AArch64 user mode (EL0t);
 * a 32-bit compat task's are another register file: not walked */
static __always_inline bool arch_ctx_user_regs(const struct bpf_perf_event_data *pctx,
					       struct user_regs *r)
{
	const __u64 *w = (const __u64 *)pctx;

	if (w[UAPI_REG_PSTATE] & PSTATE_MODE_BITS)
		return false;
	r->pc = w[UAPI_REG_PC];
	r->sp = w[UAPI_REG_SP];
	r->fp = w[UAPI_REG_FP];
	r->lr = w[UAPI_REG_LR];
	return true;
}

/* the user registers @task saved on entering the kernel (bpf_task_pt_regs: 5.15+) */
static __always_inline void arch_task_user_regs(struct task_struct *task, struct user_regs *r)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	r->pc = BPF_CORE_READ(regs, pc);
	r->sp = BPF_CORE_READ(regs, sp);
	r->fp = BPF_CORE_READ(regs, regs[UAPI_REG_FP]);
	r->lr = BPF_CORE_READ(regs, regs[UAPI_REG_LR]);
}

/* the thread pointer user TLS hangs from: TPIDR_EL0 as the kernel saved it */
static __always_inline __u64 arch_thread_pointer(struct task_struct *task)
{
	return BPF_CORE_READ(task, thread.uw.tp_value);
}

/*
 * A return address without its pointer-authentication code: user
 * addresses are below 2^48 (Debian's arm64 kernels: VA_BITS 48; 52-bit
 * user addresses only for mappings a process asks above 2^48), and PAC
 * and top-byte tags live above bit 47
 */
#define arch_strip_ra(ra)     ((ra)&0x0000ffffffffffffull)

/* the frame record {x29, x30} sits anywhere in its frame (GCC: at the
 * bottom), so a frame-pointer step does not give the caller's sp */
#define ARCH_FP_STEP_SP_EXACT 0

/* the interrupted registers in the signal frame the vDSO's
 * __kernel_rt_sigreturn's sp points at: the kernel's struct rt_sigframe */
#define SIGFRAME_REG(f)	      __builtin_offsetof(struct rt_sigframe, uc.uc_mcontext.f)
#define SIGFRAME_PC	      SIGFRAME_REG(pc)
#define SIGFRAME_SP	      SIGFRAME_REG(sp)
#define SIGFRAME_FP	      SIGFRAME_REG(regs[UAPI_REG_FP])
#define SIGFRAME_LR	      SIGFRAME_REG(regs[UAPI_REG_LR])

#else
#error "bpf/arch.bpf.h: the BPF programs know x86-64 and arm64 only"
#endif

#endif /* CTXPROF_ARCH_BPF_H */
