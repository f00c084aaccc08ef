/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * go_stack - the native walk (native_unwind.bpf.h) continued past a Go
 * stack switch, as Go's own traceback does (runtime/traceback.go: on g0,
 * jump to gp.m.curg at morestack and systemstack).
 *
 * A Go program's system stack work runs on g0, the thread's own stack:
 * runtime.systemstack(fn), mcall(fn) and morestack save the goroutine's
 * registers in its g.sched (a gobuf) and call on the g0 stack, so the walk
 * of a sample there reaches the switching function with the goroutine's
 * frames elsewhere.  The collector marks those functions
 * (UNWIND_CMD_GO_SYSTEM_STACK, which one in the rule: enum unwind_go_switch)
 * and gives each Go process its runtime's offsets (go_procs, go_abi.h).
 * Here, every read a bpf_probe_read_user of the sampled task:
 *   g    = *(fsbase + tls_g)   g0 on the system stack
 *   m    = g->m, with m->g0 == g: else the sample is not past a switch
 *   gp   = m->curg, the goroutine that switched, owned by this m (for
 *          mcall: the g it pushed on g0's stack); none (fn dropped it:
 *          park_m, goexit0, gopreempt_m), or another: g0 itself, whose
 *          g.sched.sp every switch moved to, where mstart1 left the
 *          thread's own stack (mstart0, then runtime.mstart, the root)
 *   pc, sp, bp = gp->sched.{pc, sp, bp}, sp within gp->stack [lo, hi)
 * The vDSO callers (nanotime1, time.now) leave g as it
 * is and save their caller's sp and return address in m.vdsoSP, m.vdsoPC
 * instead, only around the call: those, within g's stack; a sample in such
 * a function out of its call is in its own frame, on g's stack, as is one
 * in a switching function before it switched (g is not g0 yet) or in
 * systemstack called on g0: the rule's pcsp frame then.
 * The walk goes on from there: systemstack's saved pc is
 * runtime.systemstack_switch (an exact pc, its frame the return address at
 * sp: the collector's rule for it), the others' a return address.  Each
 * kind once per walk: a second one, a saved state outside its stack, a pc
 * of 0 end the stack where it was (UNWIND_STOP_GO_SYSTEM_STACK), counted
 * by reason (SAMPLER_STAT_GO_SWITCH_*); no frame is ever made up.
 * Included by sampler.bpf.c after go_labels.bpf.h (go_procs, go_read_ptr()).
 */
#ifndef CTXPROF_GO_STACK_BPF_H
#define CTXPROF_GO_STACK_BPF_H

#include "go_abi.h"

static __always_inline long go_switch_fail(__u32 stat)
{
	inc_stat(stat);
	return -1;
}

/* a goroutine's stack [@lo, @hi) holding a saved @sp (aligned, room for a saved rbp) */
static __always_inline bool go_sp_in_stack(__u64 lo, __u64 hi, __u64 sp)
{
	return lo < hi && hi - lo <= GO_MAX_STACK && sp >= lo + 16 && sp < hi && !(sp & 7);
}

/* the sampled frame (only it: a return address is in a call) on [@lo, @hi): its own */
static __always_inline bool go_own_frame(const struct ustack_walk *st, __u64 lo, __u64 hi)
{
	return st->n == 1 && lo < hi && st->sp >= lo && st->sp < hi;
}

/*
 * The walk @st met the stack switch @kind (enum unwind_go_switch), its frame
 * recorded: go on from the registers the runtime saved.
 * Return: 0 when the walk goes on there (st->pc, sp, bp, exact set); 1 for
 * a sampled frame in a switching function that has not switched (its own
 * frame, by its rule); -1 when the stack ends here (counted).
 */
static __always_inline long go_follow_switch(struct ustack_walk *st, __u32 kind)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	const struct go_labels_ref *ref;
	struct sample_record *rec;
	__u64 tp, g, m, g0, gp, gm, glo, ghi, lo, hi, pc, sp, bp, sched, oldg, g0sp;

	if (kind <= UNWIND_GO_SWITCH_OTHER || kind >= UNWIND_GO_SWITCH_MAX)
		return go_switch_fail(SAMPLER_STAT_GO_SWITCH_OTHER);
	/* each kind once (a vDSO call on g0, then g0's switch): no loop */
	if (st->go_switched & (1u << kind))
		return go_switch_fail(SAMPLER_STAT_GO_SWITCH_BAD_STATE);
	rec = scratch_record();
	ref = bpf_map_lookup_elem(&go_procs, &tgid);
	if (!rec || !ref || (ref->exec_id && ref->exec_id != rec->exec_id))
		return go_switch_fail(SAMPLER_STAT_GO_SWITCH_NO_LAYOUT);
	tp = arch_thread_pointer(current_task());
	if (!go_read_ptr(tp + ref->tls_g, &g))
		return go_switch_fail(SAMPLER_STAT_GO_SWITCH_READ_ERR);
	if (!g)
		return go_switch_fail(SAMPLER_STAT_GO_SWITCH_NO_GOROUTINE);
	/* g's stack: where the sample is unless it switched */
	if (!go_read_ptr(g + ref->g_m, &m) || !m || !go_read_ptr(m + GO_M_G0, &g0) ||
	    !go_read_ptr(m + ref->m_curg, &gp) || !go_read_ptr(g + GO_G_STACK_LO, &glo) ||
	    !go_read_ptr(g + GO_G_STACK_HI, &ghi))
		return go_switch_fail(SAMPLER_STAT_GO_SWITCH_READ_ERR);
	if (kind == UNWIND_GO_SWITCH_VDSO) {
		/* g stays the caller's: its stack holds the saved sp, switched or not */
		if (!go_read_ptr(m + ref->m_vdso_sp, &sp) || !go_read_ptr(m + ref->m_vdso_pc, &pc))
			return go_switch_fail(SAMPLER_STAT_GO_SWITCH_READ_ERR);
		if (!go_sp_in_stack(glo, ghi, sp) || !pc) {
			/* m.vdsoSP is set only around the call, where sp moves:
			 * out of it, the sampled frame on g's stack is its own */
			if (go_own_frame(st, glo, ghi)) {
				inc_stat(SAMPLER_STAT_GO_SWITCH_OWN_FRAME);
				return 1;
			}
			return go_switch_fail(SAMPLER_STAT_GO_SWITCH_BAD_STATE);
		}
		/* the caller's rbp, which the vDSO caller's prologue pushed at entry */
		if (!go_read_ptr(sp - 16, &bp))
			return go_switch_fail(SAMPLER_STAT_GO_SWITCH_READ_ERR);
	} else {
		if (g != g0) {
			/* not switched yet (or back): the sampled frame is its own */
			if (go_own_frame(st, glo, ghi)) {
				inc_stat(SAMPLER_STAT_GO_SWITCH_OWN_FRAME);
				return 1;
			}
			/* else gsignal's, or between setting g and sp */
			return go_switch_fail(SAMPLER_STAT_GO_SWITCH_NO_GOROUTINE);
		}
		/* on g0 below where every switch puts sp (g0.sched.sp, less
		 * mcall's push): systemstack called on g0, not switching */
		if (!go_read_ptr(g0 + ref->g_sched + ref->gobuf_sp, &g0sp))
			return go_switch_fail(SAMPLER_STAT_GO_SWITCH_READ_ERR);
		if (go_own_frame(st, glo, ghi) && st->sp + 8 < g0sp) {
			inc_stat(SAMPLER_STAT_GO_SWITCH_OWN_FRAME);
			return 1;
		}
		/* mcall pushed the g that called it right above fn's return
		 * address (fn's argument): once fn has scheduled another (execute
		 * sets curg before gogo), the frames below are not curg's */
		if (gp && kind == UNWIND_GO_SWITCH_MCALL &&
		    (read_user_u64(st, st->sp, &oldg) || oldg != gp))
			gp = 0;
		if (gp) {
			/* the goroutine must be this m's, as traceback.go checks */
			if (!go_read_ptr(gp + ref->g_m, &gm))
				return go_switch_fail(SAMPLER_STAT_GO_SWITCH_READ_ERR);
			if (gm != m)
				return go_switch_fail(SAMPLER_STAT_GO_SWITCH_NO_GOROUTINE);
		} else {
			/* no goroutine left (fn dropped it: park_m, gopreempt_m):
			 * the switch went to g0.sched.sp, mstart1's frame */
			gp = g0;
		}
		sched = gp + ref->g_sched;
		if (!go_read_ptr(gp + GO_G_STACK_LO, &lo) ||
		    !go_read_ptr(gp + GO_G_STACK_HI, &hi) ||
		    !go_read_ptr(sched + ref->gobuf_sp, &sp) ||
		    !go_read_ptr(sched + ref->gobuf_pc, &pc) ||
		    !go_read_ptr(sched + ref->gobuf_bp, &bp))
			return go_switch_fail(SAMPLER_STAT_GO_SWITCH_READ_ERR);
		if (!go_sp_in_stack(lo, hi, sp) || !pc)
			return go_switch_fail(SAMPLER_STAT_GO_SWITCH_BAD_STATE);
		/* g0's own saved state lies at or above the frames the switch pushed */
		if (gp == g0 && sp < st->sp)
			return go_switch_fail(SAMPLER_STAT_GO_SWITCH_BAD_STATE);
	}
	st->pc = pc;
	st->sp = sp;
	st->bp = bp;
	/* systemstack's pc is runtime.systemstack_switch's own; the others return addresses */
	st->exact = kind == UNWIND_GO_SWITCH_SYSTEMSTACK;
	st->go_switched |= 1u << kind;
	/* the frames from here are on that stack: the window follows */
	copy_window(st);
	inc_stat(SAMPLER_STAT_GO_SWITCH_OK);
	return 0;
}

#endif /* CTXPROF_GO_STACK_BPF_H */
