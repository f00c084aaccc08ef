// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lifecycle - thread and process lifecycle events for the collector's thread
 * registry: fork, thread creation, exec, exit and rename, as fixed-size
 * records in one ring buffer (struct lifecycle_record in include/records.h).
 *
 * BTF tracepoints (tp_btf) give typed task_struct pointers; every field is
 * read with BPF_CORE_READ so the object loads on any BTF kernel.  Every hit is
 * either emitted or counted as dropped with one reason (enum lifecycle_stat).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "records.h"
#include "stats.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define PF_KTHREAD 0x00200000 /* include/linux/sched.h; not in BTF (a #define) */

/* wake the collector only once the ring holds this many bytes; below it the
 * collector picks records up on its poll timer (per-event wakeups are costly) */
const volatile __u64 wakeup_bytes = 0;
/* events of this process alone (the collector's --pid mode); 0: every one */
const volatile __u32 only_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* resized before load by user/processes/lifecycle.c */
} lifecycle_ring SEC(".maps");

STATS_MAP(lifecycle_stats, LIFECYCLE_STAT_MAX);

static __always_inline void inc_stat(__u32 stat)
{
	stat_add(&lifecycle_stats, stat, 1);
}

/* reserve a zeroed record and fill what every type shares; NULL: counted drop */
static __always_inline struct lifecycle_record *record_begin(__u32 type, struct task_struct *task)
{
	struct lifecycle_record *rec;

	if (only_tgid && BPF_CORE_READ(task, tgid) != only_tgid)
		return NULL;
	inc_stat(LIFECYCLE_STAT_EVENTS);
	rec = bpf_ringbuf_reserve(&lifecycle_ring, sizeof(*rec), 0);
	if (!rec) {
		inc_stat(LIFECYCLE_STAT_DROP_RING_FULL);
		return NULL;
	}
	/* the ring's memory is not cleared: do not hand stale bytes to userspace */
	__builtin_memset(rec, 0, sizeof(*rec));
	rec->time_ns = bpf_ktime_get_ns();
	rec->type = type;
	rec->pid = BPF_CORE_READ(task, tgid);
	rec->tid = BPF_CORE_READ(task, pid);
	rec->ppid = BPF_CORE_READ(task, real_parent, tgid);
	rec->start_ns = BPF_CORE_READ(task, start_boottime);
	rec->pstart_ns = BPF_CORE_READ(task, group_leader, start_boottime);
	rec->cgroup_id = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
	if (BPF_CORE_READ(task, flags) & PF_KTHREAD)
		rec->flags |= LIFECYCLE_F_KTHREAD;
	BPF_CORE_READ_STR_INTO(&rec->comm, task, comm);
	/* exec has bumped it by now; fork and clone copied the parent's */
	rec->exec_id = BPF_CORE_READ(task, self_exec_id);
	return rec;
}

static __always_inline void record_submit(struct lifecycle_record *rec)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	/* an exec wakes the collector: the new image's mappings are to be read
	 * while it lives (a short-lived program lives milliseconds) */
	if (rec->type == LIFECYCLE_EXEC ||
	    (wakeup_bytes && bpf_ringbuf_query(&lifecycle_ring, BPF_RB_AVAIL_DATA) >= wakeup_bytes))
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(rec, flags);
	inc_stat(LIFECYCLE_STAT_EMITTED);
}

/* runs in the parent before the child is woken, so the child's own events
 * (exec, exit) are always reserved after this one */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(lifecycle_fork, struct task_struct *parent, struct task_struct *child)
{
	struct lifecycle_record *rec;
	__u32 type = LIFECYCLE_FORK;

	/* CLONE_THREAD puts the child in its creator's thread group */
	if (BPF_CORE_READ(child, tgid) == BPF_CORE_READ(parent, tgid))
		type = LIFECYCLE_THREAD;
	rec = record_begin(type, child);
	if (!rec)
		return 0;
	rec->ptid = BPF_CORE_READ(parent, pid);
	rec->ptgid = BPF_CORE_READ(parent, tgid);
	record_submit(rec);
	return 0;
}

/* after de_thread(): @p is the group leader now, and old_pid its tid before */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(lifecycle_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct lifecycle_record *rec;

	rec = record_begin(LIFECYCLE_EXEC, p);
	if (!rec)
		return 0;
	rec->ptid = old_pid;
	if (bpf_probe_read_kernel_str(rec->filename, sizeof(rec->filename),
				      BPF_CORE_READ(bprm, filename)) < 0) {
		rec->filename[0] = '\0';
		inc_stat(LIFECYCLE_STAT_FILENAME_ERR);
	}
	/* the file's identity: an exec of a file seen before needs no /proc read */
	rec->exe_ino = BPF_CORE_READ(bprm, file, f_inode, i_ino);
	rec->exe_dev = BPF_CORE_READ(bprm, file, f_inode, i_sb, s_dev);
	record_submit(rec);
	return 0;
}

/* fires for every exiting thread; only the task argument is read, so the
 * program also attaches where the tracepoint has no group_dead argument */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(lifecycle_exit, struct task_struct *p)
{
	struct lifecycle_record *rec;

	rec = record_begin(LIFECYCLE_EXIT, p);
	if (!rec)
		return 0;
	/* do_exit() decremented signal->live before this tracepoint */
	if (BPF_CORE_READ(p, signal, live.counter) == 0)
		rec->flags |= LIFECYCLE_F_GROUP_DEAD;
	record_submit(rec);
	return 0;
}

/* fires before the new name is copied in: take it from the argument */
SEC("tp_btf/task_rename")
int BPF_PROG(lifecycle_rename, struct task_struct *task, const char *comm)
{
	struct lifecycle_record *rec;

	rec = record_begin(LIFECYCLE_RENAME, task);
	if (!rec)
		return 0;
	if (bpf_probe_read_kernel_str(rec->comm, sizeof(rec->comm), comm) < 0) {
		/* a record without the new name is useless: give it back */
		bpf_ringbuf_discard(rec, BPF_RB_NO_WAKEUP);
		inc_stat(LIFECYCLE_STAT_DROP_BAD_COMM);
		return 0;
	}
	record_submit(rec);
	return 0;
}
