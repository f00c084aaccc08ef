// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cpuclock_skew - one thread's stretches on the CPU (switch in to switch
 * out, CLOCK_MONOTONIC at the two sched_switch events) and its reads of its
 * own CPU clock (the value clock_gettime(CLOCK_THREAD_CPUTIME_ID) returned
 * and when), so that the clock can be held against the time the thread
 * really ran.  A test oracle (cpuclock_skew.c says why); not the
 * collector's.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 target_tid = 0;
const volatile long clock_gettime_nr = -1; /* the syscall's number on this architecture */

#define CLOCK_THREAD_CPUTIME_ID 3

enum { EV_STRETCH = 1, EV_CPUCLOCK };

struct event {
	__u64 type;
	__u64 a; /* stretch: switched in; cpuclock: when the read returned */
	__u64 b; /* stretch: switched out; cpuclock: the value read */
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps");

/* one thread: its open stretch, and its syscall in flight */
static __u64 in_ns;
static long cur_nr = -1, last_nr = -1;
static __u64 read_ts; /* user address of the timespec of a CPU clock read to report; 0: none */

/* no wake-up: on a VM its self-IPI is a trap of ~10 us, which would land in
 * the next program on sched_switch (the profiler's) and lengthen the very
 * waits being compared */
static __always_inline void emit(__u64 type, __u64 a, __u64 b)
{
	struct event e = {.type = type, .a = a, .b = b};

	bpf_ringbuf_output(&events, &e, sizeof(e), BPF_RB_NO_WAKEUP);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(cpuclock_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();

	/* in_ns 0: its switch in was not seen (a switch back from some tasks
	 * fires no sched_switch on 6.18; the collector's offcpu.bpf.h has the
	 * same case), reported as a stretch from 0 */
	if (prev->pid == target_tid) {
		emit(EV_STRETCH, in_ns, now);
		in_ns = 0;
	}
	if (next->pid == target_tid)
		in_ns = now;
	return 0;
}

/* a read of the thread's CPU clock, reported when it follows another
 * syscall (the workload's reads around a call; not a loop's reads) */
SEC("tp_btf/sys_enter")
int BPF_PROG(cpuclock_sys_enter, struct pt_regs *regs, long id)
{
	if ((__u32)bpf_get_current_pid_tgid() != target_tid)
		return 0;
	cur_nr = id;
	read_ts = 0;
	if (id == clock_gettime_nr && last_nr != clock_gettime_nr &&
	    PT_REGS_PARM1_CORE_SYSCALL(regs) == CLOCK_THREAD_CPUTIME_ID)
		read_ts = PT_REGS_PARM2_CORE_SYSCALL(regs);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(cpuclock_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 now = bpf_ktime_get_ns();
	struct {
		__s64 sec, nsec;
	} ts;

	if ((__u32)bpf_get_current_pid_tgid() != target_tid)
		return 0;
	last_nr = cur_nr;
	if (read_ts && !ret && !bpf_probe_read_user(&ts, sizeof(ts), (void *)read_ts))
		emit(EV_CPUCLOCK, now, ts.sec * 1000000000ull + ts.nsec);
	read_ts = 0;
	return 0;
}
