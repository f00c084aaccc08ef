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
	return true;
}

/* the user registers @task saved on entering the kernel (bpf_task_pt_regs: 5.15+) */
static __always_inline void arch_task_user_regs(struct task_struct *task, struct user_regs *r)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	r->pc = BPF_CORE_READ(regs, ip);
	r->sp = BPF_CORE_READ(regs, sp);
	r->fp = BPF_CORE_READ(regs, bp);
}

/* the thread pointer user TLS hangs from: fsbase */
static __always_inline __u64 arch_thread_pointer(struct task_struct *task)
{
	return BPF_CORE_READ(task, thread.fsbase);
}

#else
#error "bpf/arch.bpf.h: only x86-64 is supported yet by the BPF programs (arm64: see README)"
#endif

#endif /* CTXPROF_ARCH_BPF_H */
