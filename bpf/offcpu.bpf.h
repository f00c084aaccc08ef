/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * offcpu - the waits of profiled threads (--off-cpu): where a thread left
 * the CPU of its own accord, for how long, and in which span.
 *
 * One program on the sched_switch BTF tracepoint, which runs in the task
 * leaving the CPU (prev is current) with interrupts off:
 *   - prev, when it blocks (not preempted, its state not TASK_RUNNING):
 *     its stacks and trace context are taken now, as a CPU sample's are
 *     (fill_record(): the native walk from its saved user registers), into
 *     its task storage with the time;
 *   - next, when it has such a capture: it was away now - then; a wait of
 *     --off-cpu-threshold or more goes to this CPU's ring as a sample
 *     record with SAMPLE_F_OFFCPU and its struct offcpu_trailer;
 *   - prev, when it still has one: its switch back in went unreported
 *     (offcpu_unreported_in()).
 * Why at sched_switch, both ends: the stacks must be taken in the task
 * itself (bpf_get_stack and the user-memory reads of the walk act on
 * current), and finish_task_switch, where the next task runs, needs a
 * kprobe (not on every kernel: not on this one); the switch out is the
 * last moment the blocked task is current.  With interrupts off, the
 * cpu-clock sampler cannot run on this CPU meanwhile, so the two share the
 * scratch record.
 *
 * The cost is one capture per voluntary switch, whatever the wait turns
 * out to be: a budget bounds it.  Each CPU counts its switches out per
 * OFFCPU_WINDOW_NS; past off_cpu_budget a second in the last window, one
 * switch in `stride` is captured, the others counted as sampled away but
 * still timed (a timestamp in the task's storage): the time of a thread's
 * sampled-away waits goes with its next recorded wait, whose record says
 * how many waits it stands for.  So the totals are every wait's; only
 * their stacks are sampled.  (Scaling a captured wait by the stride
 * instead read 150 % of a ping-pong's blocked time: the capture itself
 * slows the next few microseconds, and a sample that always lands there
 * is not a fair one.)
 * Included by sampler.bpf.c after its helpers.
 */
#ifndef CTXPROF_OFFCPU_BPF_H
#define CTXPROF_OFFCPU_BPF_H

/* load-time knobs, written by user/sampling/sampler.c before load */
const volatile bool off_cpu = false;
const volatile __u64 off_cpu_threshold_ns = 1000000;
const volatile __u32 off_cpu_budget = 2000; /* captures per second per CPU */
/* set by the collector while the events are enabled (.bss): no wait is
 * recorded before the drains run nor after they stopped */
volatile bool off_cpu_running = false;

#define OFFCPU_WINDOW_NS 100000000ull /* 100 ms */
/* the kernel stack from sched_switch starts in this program and
 * bpf_trace_run4: the wait's own starts at __schedule, as perf shows it */
#define OFFCPU_KSKIP 2
/* include/linux/sched.h (a #define: not in BTF): a kernel thread's waits are
 * not a request's */
#define OFFCPU_PF_KTHREAD 0x00200000

/* a blocked thread's capture, until it runs again */
struct offcpu_pending {
	__u64 start_ns;	  /* 0: none */
	__u64 ran_ns;	  /* its CPU time (se.sum_exec_runtime) as it left */
	__u64 pending_ns; /* waits sampled away since the last recorded one: their time */
	__u32 pending_n;  /* and their number */
	__u32 size;	  /* bytes of @rec: the header and frames */
	__u32 state;
	__u32 captured; /* @rec is this wait's (not sampled away) */
	__u32 extra;	/* bytes of its offcpu_extra: 0, none */
	__u8 rec[SAMPLE_RECORD_MAX_SIZE + sizeof(struct offcpu_trailer)];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_pending);
} offcpu_store SEC(".maps");

/*
 * The OpenTelemetry record and goroutine labels of a capture, apart: only
 * the threads of processes that publish them get this storage, so the
 * others' (every blocking thread of a node, with --all) stays 1.6 KiB.
 */
#define OFFCPU_EXTRA_MAX (SAMPLE_RECORD_FULL_MAX_SIZE - SAMPLE_RECORD_MAX_SIZE)

struct offcpu_extra {
	__u8 bytes[OFFCPU_EXTRA_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_extra);
} offcpu_extras SEC(".maps");

/* each CPU's switches out in the current window, and the stride it samples at */
struct offcpu_budget {
	__u64 window_start;
	__u32 n;
	__u32 stride;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_budget);
} offcpu_budgets SEC(".maps");

/* capture this switch out?  Past the budget, one in `stride` (the others are timed only) */
static __always_inline bool offcpu_capture(__u64 now)
{
	__u32 zero = 0, per_window = off_cpu_budget / (1000000000ull / OFFCPU_WINDOW_NS);
	struct offcpu_budget *b = bpf_map_lookup_elem(&offcpu_budgets, &zero);

	if (!b)
		return true;
	if (!per_window)
		per_window = 1;
	if (now - b->window_start >= OFFCPU_WINDOW_NS) {
		/* the last window's rate sets this one's stride */
		b->stride = b->n > per_window ? (b->n + per_window - 1) / per_window : 1;
		b->window_start = now;
		b->n = 0;
	}
	b->n++;
	return b->stride <= 1 || !(b->n % b->stride);
}

/*
 * The thread's OpenTelemetry record and goroutine labels, read as a CPU
 * sample's are (after the frames of @rec, @size bytes), into its
 * offcpu_extras storage.  Return: their bytes; 0 when there are none, or
 * when there is no storage for them: then the wait goes without them (its
 * flags say so) rather than not at all.
 */
static __always_inline __u32 offcpu_take_extra(struct task_struct *prev, struct sample_record *rec,
					       __u32 size)
{
	struct offcpu_extra *x;
	__u64 extra = 0; /* one register: a __u32 copy would escape the bound */

	if (read_context)
		extra += read_otel(rec, size);
	if (read_go)
		extra += read_go_labels(rec, size + extra);
	if (!extra)
		return 0;
	x = bpf_task_storage_get(&offcpu_extras, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (extra > OFFCPU_EXTRA_MAX) /* for the verifier, which must see it bounded here */
		extra = OFFCPU_EXTRA_MAX;
	barrier_var(extra);
	if (!x || size > SAMPLE_RECORD_MAX_SIZE ||
	    bpf_probe_read_kernel(x->bytes, extra, (__u8 *)rec + size)) {
		rec->flags &= ~(SAMPLE_F_OTEL | SAMPLE_F_GO_LABELS);
		return 0;
	}
	return extra;
}

/* @prev blocks: take its stacks and context now */
static __always_inline void offcpu_out(void *ctx, struct task_struct *prev, __u32 state, __u64 now)
{
	struct sample_record *rec;
	struct offcpu_pending *p;
	__u64 size;

	inc_stat(SAMPLER_STAT_OFF_SWITCHES);
	p = bpf_task_storage_get(&offcpu_store, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!p) {
		inc_stat(SAMPLER_STAT_OFF_DROP_NO_STORAGE);
		return;
	}
	p->ran_ns = BPF_CORE_READ(prev, se.sum_exec_runtime);
	/* sampled away: timed all the same, its time goes with the thread's
	 * next recorded wait (so the totals are every wait's, not a guess) */
	if (!offcpu_capture(now)) {
		inc_stat(SAMPLER_STAT_OFF_SAMPLED_AWAY);
		p->captured = 0;
		p->start_ns = now;
		return;
	}
	rec = scratch_record();
	if (!rec)
		return;
	size = fill_record(ctx, NULL, rec, BPF_CORE_READ(prev, tgid), BPF_CORE_READ(prev, pid),
			   OFFCPU_KSKIP);
	if (size > SAMPLE_RECORD_MAX_SIZE) /* for the verifier */
		size = SAMPLE_RECORD_MAX_SIZE;
	p->extra = offcpu_take_extra(prev, rec, size);
	if (bpf_probe_read_kernel(p->rec, size, rec)) {
		p->start_ns = 0;
		return;
	}
	p->size = size;
	p->state = state;
	p->captured = 1;
	/* from the switch out: the capture's microseconds are the thread's
	 * wall time too, not on its CPU clock (the switch accounted prev's
	 * runtime before the tracepoint; they are on next's): left out, an
	 * fsync's short waits read 85 % of the thread's own measure */
	p->start_ns = now;
	inc_stat(SAMPLER_STAT_OFF_CAPTURED);
}

/*
 * The wait's record without its trailer, *@size bytes: the capture itself,
 * or, when it has an OpenTelemetry record or labels, the capture and those
 * put together in the scratch record (the CPU sampler cannot run here:
 * interrupts are off).  NULL when the scratch record is missing.
 */
static __always_inline __u8 *offcpu_assemble(struct task_struct *next, struct offcpu_pending *p,
					     __u32 *size)
{
	struct offcpu_extra *x;
	__u32 extra = p->extra;
	__u8 *buf;

	if (!extra)
		return p->rec;
	x = bpf_task_storage_get(&offcpu_extras, next, 0, 0);
	buf = (__u8 *)scratch_record();
	if (!buf || *size > SAMPLE_RECORD_MAX_SIZE)
		return NULL;
	if (!x || extra > OFFCPU_EXTRA_MAX) {
		/* gone (it cannot be, while the task lives): the wait goes without them */
		((struct sample_record *)p->rec)->flags &= ~(SAMPLE_F_OTEL | SAMPLE_F_GO_LABELS);
		return p->rec;
	}
	barrier_var(extra);
	if (bpf_probe_read_kernel(buf, *size, p->rec) ||
	    bpf_probe_read_kernel(buf + *size, extra, x->bytes))
		return NULL;
	*size += extra;
	return buf;
}

/*
 * @task (with capture @p) came back at @now: its wait, when long enough,
 * goes to this CPU's ring.  @task is next at a switch in, or prev when
 * its switch back in went unreported.
 */
static __always_inline void offcpu_end(struct task_struct *task, struct offcpu_pending *p,
				       __u64 now)
{
	struct offcpu_trailer *t;
	struct sample_record *rec;
	__u32 cpu, size;
	__u8 *out;
	__u64 d;
	void *ring;

	d = now - p->start_ns;
	p->start_ns = 0;
	if (d < off_cpu_threshold_ns) {
		inc_stat(SAMPLER_STAT_OFF_BELOW);
		return;
	}
	if (!p->captured) {
		p->pending_ns += d;
		p->pending_n++;
		return;
	}
	size = p->size;
	if (size > SAMPLE_RECORD_MAX_SIZE) /* for the verifier */
		return;
	rec = (struct sample_record *)p->rec;
	rec->time_ns = now;
	rec->flags |= SAMPLE_F_OFFCPU;
	out = offcpu_assemble(task, p, &size);
	if (!out) {
		inc_stat(SAMPLER_STAT_OFF_DROP_NO_STORAGE);
		return;
	}
	if (size > SAMPLE_RECORD_FULL_MAX_SIZE) /* for the verifier */
		return;
	t = (struct offcpu_trailer *)(out + size);
	t->duration_ns = d + p->pending_ns;
	t->wait_ns = d;
	t->weight = 1 + p->pending_n;
	t->state = p->state;
	p->pending_ns = 0;
	p->pending_n = 0;
	cpu = bpf_get_smp_processor_id();
	ring = bpf_map_lookup_elem(&rings, &cpu);
	if (!ring ||
	    bpf_ringbuf_output(ring, out, size + sizeof(*t), ring_flags(ring, size + sizeof(*t)))) {
		inc_stat(SAMPLER_STAT_OFF_DROP_RING_FULL);
		return;
	}
	inc_stat(SAMPLER_STAT_OFF_EMITTED);
}

/* @next runs again */
static __always_inline void offcpu_in(struct task_struct *next, __u64 now)
{
	struct offcpu_pending *p = bpf_task_storage_get(&offcpu_store, next, 0, 0);

	if (p && p->start_ns)
		offcpu_end(next, p, now);
}

/*
 * @prev leaves the CPU with its last wait still open: it ran again, but
 * the kernel reported no switch in (seen on 6.18: a switch back from some
 * tasks fires no sched_switch; ftrace misses it too).  Left open, the wait
 * would end at its next reported switch in and swallow the run between
 * (and its CPU samples).  Its end: now less the CPU time it ran since it
 * left (exact when that was one stretch, as it is when only the switch in
 * went unreported).
 */
static __always_inline void offcpu_unreported_in(struct task_struct *prev, __u64 now)
{
	struct offcpu_pending *p = bpf_task_storage_get(&offcpu_store, prev, 0, 0);
	__u64 ran, end = now;

	if (!p || !p->start_ns)
		return;
	ran = BPF_CORE_READ(prev, se.sum_exec_runtime) - p->ran_ns;
	if (ran < now - p->start_ns)
		end = now - ran;
	inc_stat(SAMPLER_STAT_OFF_UNREPORTED_IN);
	offcpu_end(prev, p, end);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now;
	__u32 ptid;

	if (!off_cpu || !off_cpu_running)
		return 0;
	now = bpf_ktime_get_ns();
	ptid = BPF_CORE_READ(prev, pid);
	if (ptid)
		offcpu_unreported_in(prev, now);
	/* next's wait ends before prev's capture: the switch started next's
	 * CPU clock before this tracepoint, so the capture's microseconds
	 * are on next's clock, and on prev's wait (begun at @now), which
	 * prev's clock leaves them to */
	if (BPF_CORE_READ(next, pid))
		offcpu_in(next, now);
	/* a block, not a preemption: the task gave the CPU up to wait
	 * (TASK_INTERRUPTIBLE or TASK_UNINTERRUPTIBLE, with their variants:
	 * not stopped, traced, or dying), by a user thread */
	if (!preempt && (prev_state & 3) && ptid &&
	    !(BPF_CORE_READ(prev, flags) & OFFCPU_PF_KTHREAD) &&
	    profiled(BPF_CORE_READ(prev, tgid)))
		offcpu_out(ctx, prev, prev_state & 0xff, now);
	return 0;
}

#endif /* CTXPROF_OFFCPU_BPF_H */
