// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sampler - CPU stack sampler, attached to a cpu-clock perf event per CPU.
 *
 * Each tick on a profiled task captures the kernel and user stacks into a
 * per-CPU scratch record and copies only the captured frames into the ring
 * buffer of the CPU it runs on.  Every sample is either emitted or counted as
 * dropped with one reason (see enum sampler_stat in include/sampler.h).
 *
 * Built twice: as is, and with SAMPLER_NO_LOOP for kernels without bpf_loop
 * (before 5.17): there the sample program hands the table walk over to
 * unwind_hop, which walks UNWIND_HOP_FRAMES frames and tail-calls itself
 * until the stack ends, then finishes and emits the record (the frame step
 * is native_unwind.bpf.h's, shared with the bpf_loop walk); it reads no
 * CPython frames nor goroutine labels, so it calls no bpf_loop callback (a
 * kernel that lacks the helper refuses any program that references one),
 * nor bpf_get_current_task_btf (5.11).  Both objects declare the same maps,
 * programs and variables, so that the collector drives either through one
 * skeleton (the Makefile checks that their skeletons match): unwind_hop is
 * loaded from the second only, the off-CPU program, which needs newer
 * kernels still, from the first only.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#ifdef SAMPLER_NO_LOOP
/* the walks this build leaves uncalled (bpf_loop's) are compiled, never emitted */
#pragma clang diagnostic ignored "-Wunused-function"
#define current_task() ((struct task_struct *)bpf_get_current_task())
#else
#define current_task() bpf_get_current_task_btf()
#endif

#include "records.h"
#include "ctxprof_abi.h"
#include "stats.bpf.h"
#include "arch.bpf.h"
#include "native_unwind.bpf.h"
#include "go_labels.bpf.h"
#include "go_stack.bpf.h"
#include "python.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* load-time knobs, written by user/sampling/sampler.c before load */
const volatile __u32 target_tgid = 0;	  /* 0: every task but the idle ones */
const volatile bool filter_pids = false;  /* profile only the tgids in target_pids */
const volatile bool kernel_stacks = true; /* capture kernel frames */
/* wake the collector only once a ring holds this many bytes; below it the
 * collector picks records up on its poll timer (per-event wakeups are costly) */
const volatile __u64 wakeup_bytes = 0;
const volatile bool read_context = true;	   /* read libctxprof context slots */
const volatile __u32 unwind_mode = UNWIND_MODE_FP; /* enum unwind_mode */
/* read the goroutine labels of the processes in go_procs (needs bpf_loop) */
const volatile bool read_go = false;
/* put the CPython frames of the processes in python_procs in place (needs bpf_loop) */
const volatile bool read_py = false;

/* one ring buffer per possible CPU; user/sampling/sampler.c creates and inserts them */
struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22); /* resized before load */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1); /* resized to the number of possible CPUs */
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

/* the record is assembled here: too big for the 512-byte BPF stack */
struct scratch {
	__u8 buf[SAMPLE_RECORD_OFFCPU_MAX_SIZE]; /* a CPU sample, or a wait with its trailer */
	/*
	 * The user stack walk's state.  In a map, not on the stack: the
	 * verifier treats what it loads from a map as unknown, so it checks
	 * the bpf_loop step once instead of once per distinct frame count.
	 */
	struct ustack_walk walk;
	struct go_walk go;     /* the goroutine labels' map walk (go_labels.bpf.h), likewise */
	struct python_walk py; /* the CPython frames' walks (python.bpf.h), likewise */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

STATS_MAP(stats, SAMPLER_STAT_MAX);

/* with filter_pids: the processes to profile (--children), kept by the collector */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} target_pids SEC(".maps");

/* tid -> its libctxprof context slot (address, claimed tid, generation); kept
 * by the collector from the registry regions it validated, at each poll */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536); /* resized before load */
	__type(key, __u32);
	__type(value, struct ctx_slot_ref);
} ctx_slots SEC(".maps");

/* pid -> where its threads' OpenTelemetry context pointer (otel_thread_ctx_v1)
 * lies, kept by the collector for the processes it located it in */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct otel_tls_ref);
} otel_tls SEC(".maps");

static __always_inline void inc_stat(__u32 stat)
{
	stat_add_unnested(&stats, stat, 1);
}

static __always_inline void add_stat(__u32 stat, __u64 n)
{
	stat_add_unnested(&stats, stat, n);
}

static __always_inline struct sample_record *scratch_record(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&scratch, &zero);
}

static __always_inline struct ustack_walk *scratch_walk(void)
{
	__u32 zero = 0;
	struct scratch *sc = bpf_map_lookup_elem(&scratch, &zero);

	return sc ? &sc->walk : NULL;
}

static __always_inline struct go_walk *scratch_go(void)
{
	__u32 zero = 0;
	struct scratch *sc = bpf_map_lookup_elem(&scratch, &zero);

	return sc ? &sc->go : NULL;
}

static __always_inline struct python_walk *scratch_py(void)
{
	__u32 zero = 0;
	struct scratch *sc = bpf_map_lookup_elem(&scratch, &zero);

	return sc ? &sc->py : NULL;
}

/* the kernel's frame-pointer walk of the user stack into frames[@nk...] */
static __always_inline __u32 fp_stack(void *ctx, struct sample_record *rec, __u32 nk, __u32 *nu)
{
	long len;

	/* the bound is for the verifier: nk never exceeds it */
	if (nk > SAMPLER_MAX_KSTACK)
		return UNWIND_STOP_FP;
	len = bpf_get_stack(ctx, &rec->frames[nk], SAMPLER_MAX_USTACK * sizeof(__u64),
			    BPF_F_USER_STACK);
	if (len < 0) {
		inc_stat(SAMPLER_STAT_USTACK_ERR);
		return UNWIND_STOP_FP;
	}
	*nu = len / sizeof(__u64);
	if (*nu > SAMPLER_MAX_USTACK)
		*nu = SAMPLER_MAX_USTACK;
	return *nu == SAMPLER_MAX_USTACK ? UNWIND_STOP_TRUNCATED : UNWIND_STOP_FP;
}

/* the interrupted user registers: a CPU sample's own (@pctx), or the
 * task's saved ones when the tick came in the kernel or the task is
 * switching out (no @pctx); false for a kernel thread, and for a tick in
 * the kernel before 5.15 (no bpf_task_pt_regs: the relocation reads the
 * running kernel's list of helpers, and the verifier drops the dead calls) */
static __always_inline bool user_regs(struct bpf_perf_event_data *pctx, struct ustack_walk *st)
{
	struct task_struct *task = current_task();
	struct user_regs r;

	if (!BPF_CORE_READ(task, mm))
		return false;
	if (!pctx || !arch_ctx_user_regs(pctx, &r)) {
		if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
			return false;
		/* it takes a BTF pointer: bpf_get_current_task_btf is 5.11+ */
		arch_task_user_regs(bpf_get_current_task_btf(), &r);
	}
	st->pc = r.pc;
	st->sp = r.sp;
	st->bp = r.fp;
	st->lr = r.lr;
	st->lr_ok = 1;
	st->sp_ok = 1;
	return true;
}

/*
 * The table walk's start (native_unwind.bpf.h): the state in the scratch
 * map from the user registers and the process's mappings.  Return: -1 when
 * the frames are to be walked, else the walk's stop, its frames (*@nu)
 * already in place.
 */
static __always_inline long native_begin(void *ctx, struct bpf_perf_event_data *pctx,
					 struct sample_record *rec, __u32 nk, __u32 *nu)
{
	struct ustack_walk *st = scratch_walk();
	const struct unwind_proc *proc;

	if (!st || nk > SAMPLER_MAX_KSTACK)
		return UNWIND_STOP_BAD_FRAME;
	/* the state, not the window: copy_window() fills what it uses */
	__builtin_memset(st, 0, __builtin_offsetof(struct ustack_walk, window));
	st->base = nk;
	st->exact = 1;
	if (!user_regs(pctx, st)) {
		/* user memory but no registers (a tick in the kernel before
		 * 5.15): the kernel's own walk, where frame pointers may be used */
		if (unwind_mode == UNWIND_MODE_AUTO && BPF_CORE_READ(current_task(), mm))
			return fp_stack(ctx, rec, nk, nu);
		return UNWIND_STOP_NO_USER;
	}
	proc = bpf_map_lookup_elem(&unwind_procs, &rec->pid);
	/* none, or read from the image this process had before an exec */
	if (!proc || (proc->exec_id && proc->exec_id != rec->exec_id)) {
		if (unwind_mode == UNWIND_MODE_AUTO) {
			fp_stack(ctx, rec, nk, nu);
			return UNWIND_STOP_NO_TABLE_YET;
		}
		rec->frames[nk] = st->pc;
		*nu = 1;
		return UNWIND_STOP_NO_TABLE_YET;
	}
	st->map_first = proc->map_first;
	st->map_count = proc->map_count < UNWIND_MAX_PROC_MAPPINGS ? proc->map_count
								   : UNWIND_MAX_PROC_MAPPINGS;
	st->cached = proc->map_first;
	st->fp_ok = unwind_mode == UNWIND_MODE_AUTO;
	st->stop = UNWIND_STOP_TRUNCATED;
	copy_window(st);
	return -1;
}

/* the walk's end: its frames (*@nu) and counters; Return: its stop */
static __always_inline __u32 native_end(struct ustack_walk *st, __u32 *nu)
{
	*nu = st->n;
	stat_add_unnested(&stats, SAMPLER_STAT_UFRAMES_CFI, st->nr_cfi);
	stat_add_unnested(&stats, SAMPLER_STAT_UFRAMES_PLT, st->nr_plt);
	stat_add_unnested(&stats, SAMPLER_STAT_UFRAMES_SIGNAL, st->nr_signal);
	stat_add_unnested(&stats, SAMPLER_STAT_UFRAMES_FP, st->nr_fp);
	return st->stop;
}

#ifndef SAMPLER_NO_LOOP
/* the user stack by the collector's tables, the frames under bpf_loop */
static __always_inline __u32 native_stack(void *ctx, struct bpf_perf_event_data *pctx,
					  struct sample_record *rec, __u32 nk, __u32 *nu)
{
	struct ustack_walk *st = scratch_walk();
	long stop = native_begin(ctx, pctx, rec, nk, nu);

	if (stop >= 0)
		return stop;
	if (!st) /* for the verifier: native_begin() found it */
		return UNWIND_STOP_BAD_FRAME;
	bpf_loop(SAMPLER_MAX_USTACK + 1, unwind_step, NULL, 0);
	return native_end(st, nu);
}
#endif

/*
 * Read the thread's context slot with one bpf_probe_read_user and validate it
 * as a signal handler would.  We run on the writer's own CPU,
 * between two of its instructions, so a valid checksum means one whole
 * update; checksum 0 (no context, or a write in progress) and a mismatch are
 * "no context", counted.
 * The map entry may be older than the slot's owner: the collector updates it
 * at its polls only.  So the same read takes the slot's state_gen and tid,
 * and the context counts only if the slot is still Active in the generation
 * and with the tid the collector saw (a thread that left its slot, and
 * perhaps saw it recycled by another, gets no context, not the other's).
 * The slot is copied into the scratch record's frame area, which the stacks
 * overwrite afterwards.
 */
static __always_inline void read_ctx(struct sample_record *rec, __u32 tid)
{
	struct ctxprof_slot *s = (void *)rec->frames;
	struct ctxprof_context *c = &s->context;
	struct ctx_slot_ref *ref;
	int i;

	rec->span_id = 0;
	rec->local_root_span_id = 0;
	for (i = 0; i < SAMPLER_NR_TAGS; i++)
		rec->tags[i] = 0;
	ref = bpf_map_lookup_elem(&ctx_slots, &tid);
	if (!ref)
		return;
	if (bpf_probe_read_user(s, CTXPROF_SLOT_SAMPLER_READ, (const void *)ref->addr)) {
		inc_stat(SAMPLER_STAT_CTX_READ_ERR);
		return;
	}
	if (s->state_gen != CTXPROF_SLOT_STATE_GEN(CTXPROF_SLOT_ACTIVE, ref->generation) ||
	    s->tid != ref->tid) {
		inc_stat(SAMPLER_STAT_CTX_STALE);
		return;
	}
	if (!c->checksum) {
		rec->flags |= SAMPLE_F_CONTEXT_NONE;
		inc_stat(SAMPLER_STAT_CTX_EMPTY);
		return;
	}
	if (c->checksum != ctxprof_context_checksum(c->span_id, c->local_root_span_id)) {
		inc_stat(SAMPLER_STAT_CTX_TORN);
		return;
	}
	rec->span_id = c->span_id;
	rec->local_root_span_id = c->local_root_span_id;
	for (i = 0; i < SAMPLER_NR_TAGS; i++)
		rec->tags[i] = c->tags[i];
	rec->flags |= SAMPLE_F_CONTEXT;
	inc_stat(SAMPLER_STAT_CTX_OK);
}

/*
 * Read the thread's OpenTelemetry context (OTEP 4947) into the record at
 * byte @off (just past its frames): the thread pointer (fsbase, TPIDR_EL0) locates
 * otel_thread_ctx_v1, which points at the record; then the record's 28
 * bytes and, when it is valid, its attributes.  As with the libctxprof
 * slot, we run between two instructions of the writer, on its CPU: the
 * OTEP's signal-handler reading, so valid == 1 means a whole record.
 * Every read is a bpf_probe_read_user of the current task's memory, so
 * whatever the process put in its TLS or its record, the sampler reads
 * nothing but that process.
 * Return: the bytes appended to the record (0: no context).
 */
/* what the first read of a thread record takes: its header and 36 bytes of attributes */
#define OTEL_READ_FIRST 64

static __always_inline __u32 read_otel(struct sample_record *rec, __u32 off)
{
	struct otel_thread_record *r;
	struct otel_tls_ref *ref;
	__u64 tp, var, ptr, block;
	__u32 n, head, rest;

	ref = bpf_map_lookup_elem(&otel_tls, &rec->pid);
	if (!ref)
		return 0;
	if (ref->exec_id && ref->exec_id != rec->exec_id) {
		inc_stat(SAMPLER_STAT_OTEL_STALE);
		return 0;
	}
	tp = arch_thread_pointer(current_task());
	if (ref->mode == OTEL_TLS_DTV) {
		if (bpf_probe_read_user(&block, sizeof(block), (const void *)(tp + ref->dtv_ptr)) ||
		    bpf_probe_read_user(&block, sizeof(block),
					(const void *)(block + ref->dtv_slot))) {
			inc_stat(SAMPLER_STAT_OTEL_READ_ERR);
			return 0;
		}
		/* glibc's TLS_DTV_UNALLOCATED: the thread never touched the module's TLS */
		if (!block || block == (__u64)-1) {
			inc_stat(SAMPLER_STAT_OTEL_NO_BLOCK);
			return 0;
		}
		var = block + ref->offset;
	} else {
		var = tp + ref->offset;
	}
	if (bpf_probe_read_user(&ptr, sizeof(ptr), (const void *)var)) {
		inc_stat(SAMPLER_STAT_OTEL_READ_ERR);
		return 0;
	}
	if (!ptr) {
		inc_stat(SAMPLER_STAT_OTEL_NONE);
		return 0;
	}
	/* the bound is for the verifier: the frames never end past it */
	if (off > SAMPLE_RECORD_MAX_SIZE)
		return 0;
	r = (void *)((__u8 *)rec + off);
	/* one read for the record and short attributes; the header alone when
	 * the record ends a mapping */
	head = OTEL_READ_FIRST;
	if (bpf_probe_read_user(r, OTEL_READ_FIRST, (const void *)ptr)) {
		head = sizeof(*r);
		if (bpf_probe_read_user(r, sizeof(*r), (const void *)ptr)) {
			inc_stat(SAMPLER_STAT_OTEL_READ_ERR);
			return 0;
		}
	}
	if (r->valid != 1) {
		inc_stat(SAMPLER_STAT_OTEL_INVALID);
		return 0;
	}
	n = r->attrs_size;
	if (n > OTEL_THREAD_ATTRS_MAX) {
		/* part of the attributes could be a wrong label (a later entry
		 * overrides an earlier one): none rather than some */
		inc_stat(SAMPLER_STAT_OTEL_ATTRS_BIG);
		n = 0;
	} else if (sizeof(*r) + n > head) {
		rest = sizeof(*r) + n - head;
		/* the bounds are for the verifier: head is one of two constants */
		if (rest > OTEL_THREAD_ATTRS_MAX || head > OTEL_READ_FIRST ||
		    bpf_probe_read_user((__u8 *)r + head, rest, (const void *)(ptr + head))) {
			inc_stat(SAMPLER_STAT_OTEL_ATTRS_ERR);
			n = 0;
		}
	}
	r->attrs_size = n;
	rec->flags |= SAMPLE_F_OTEL;
	inc_stat(SAMPLER_STAT_OTEL_OK);
	return sizeof(*r) + n;
}

_Static_assert(SAMPLER_NR_TAGS == CTXPROF_MAX_TAGS, "a sample carries every tag of a slot");
/* the slot copy fits in the frame area it borrows */
_Static_assert(CTXPROF_SLOT_SAMPLER_READ <= SAMPLER_MAX_FRAMES * sizeof(__u64),
	       "the slot copy fits in the scratch frames");

/*
 * The record's header, the libctxprof slot and the kernel frames from
 * bpf_get_stack(@ctx) into the scratch record @rec.  @kskip: kernel frames
 * left out at the leaf (a tracepoint's own).  Return: the kernel frames.
 */
static __always_inline __u32 fill_head(void *ctx, struct sample_record *rec, __u32 tgid, __u32 tid,
				       __u64 kskip)
{
	__u32 nk = 0;
	long len;

	rec->pid = tgid;
	rec->tid = tid;
	rec->cpu = bpf_get_smp_processor_id();
	rec->flags = 0;
	rec->exec_id = BPF_CORE_READ(current_task(), self_exec_id);
	bpf_get_current_comm(rec->comm, sizeof(rec->comm));
	if (read_context)
		read_ctx(rec, tid);

	if (kernel_stacks) {
		len = bpf_get_stack(ctx, rec->frames, SAMPLER_MAX_KSTACK * sizeof(__u64),
				    kskip & BPF_F_SKIP_FIELD_MASK);
		if (len < 0)
			inc_stat(SAMPLER_STAT_KSTACK_ERR);
		else
			nk = len / sizeof(__u64);
	}
	/* the bound is for the verifier: bpf_get_stack never returns more */
	if (nk > SAMPLER_MAX_KSTACK)
		nk = SAMPLER_MAX_KSTACK;
	if (nk == SAMPLER_MAX_KSTACK)
		rec->flags |= SAMPLE_F_KSTACK_TRUNCATED;
	return nk;
}

/*
 * The record @rec past its @nu user frames, which the walk ended with
 * @stop: its flags and counters, CPython's frames in place.
 * Return: the bytes of the record so far (header and frames).
 */
static __always_inline __u64 fill_tail(struct sample_record *rec, __u32 nk, __u32 nu, __u32 stop)
{
	__u64 n;

	if (nk > SAMPLER_MAX_KSTACK) /* for the verifier */
		nk = SAMPLER_MAX_KSTACK;
	if (nu > SAMPLER_MAX_USTACK)
		nu = SAMPLER_MAX_USTACK;
	if (stop == UNWIND_STOP_TRUNCATED)
		rec->flags |= SAMPLE_F_USTACK_TRUNCATED;
	if (stop >= UNWIND_STOP_MAX)
		stop = UNWIND_STOP_BAD_FRAME;
	rec->flags |= stop << SAMPLE_USTOP_SHIFT;
	inc_stat(SAMPLER_STAT_USTOP_FIRST + stop);
#ifndef SAMPLER_NO_LOOP
	if (read_py)
		nu = read_python(rec, nk, nu);
#endif
	if (nu > SAMPLER_MAX_USTACK) /* for the verifier */
		nu = SAMPLER_MAX_USTACK;

	rec->nr_kframes = nk;
	rec->nr_uframes = nu;
	/* for the verifier, in 64 bits: clang proves the bound from the
	 * clamps above and drops this one, which a verifier loses in the
	 * 32-bit sum when the record is finished in another program */
	n = (__u64)nk + nu;
	asm volatile("" : "+r"(n));
	if (n > SAMPLER_MAX_FRAMES)
		n = SAMPLER_MAX_FRAMES;
	return sizeof(*rec) + n * sizeof(__u64);
}

/*
 * The current task's stacks and trace context into the scratch record
 * @rec (fill_head(), fill_tail()), the user frames by the walk the mode
 * asks (a CPU sample's registers from @pctx; NULL: the task's saved ones).
 * Return: the bytes of the record so far (header and frames).
 */
static __always_inline __u64 fill_record(void *ctx, struct bpf_perf_event_data *pctx,
					 struct sample_record *rec, __u32 tgid, __u32 tid,
					 __u64 kskip)
{
	__u32 nk = fill_head(ctx, rec, tgid, tid, kskip), nu = 0, stop;

#ifdef SAMPLER_NO_LOOP
	stop = fp_stack(ctx, rec, nk, &nu);
#else
	if (unwind_mode == UNWIND_MODE_FP)
		stop = fp_stack(ctx, rec, nk, &nu);
	else
		stop = native_stack(ctx, pctx, rec, nk, &nu);
#endif
	return fill_tail(rec, nk, nu, stop);
}

/* a thread of a profiled process? (tid 0, the idle task, never is) */
static __always_inline bool profiled(__u32 tgid)
{
	return !(target_tgid && tgid != target_tgid) &&
	       !(filter_pids && !bpf_map_lookup_elem(&target_pids, &tgid));
}

static __always_inline __u64 ring_flags(void *ring, __u64 size)
{
	if (wakeup_bytes && bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) + size >= wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/*
 * The record @rec of @size bytes (header and frames) into this CPU's ring,
 * with the trace context read past its frames
 */
static __always_inline void emit(struct sample_record *rec, __u64 size)
{
	__u32 cpu = bpf_get_smp_processor_id();
	void *ring = bpf_map_lookup_elem(&rings, &cpu);

	if (!ring) {
		inc_stat(SAMPLER_STAT_DROP_NO_RING);
		return;
	}
	if (read_context)
		size += read_otel(rec, size);
#ifndef SAMPLER_NO_LOOP
	if (read_go)
		size += read_go_labels(rec, size);
#endif
	if (size > SAMPLE_RECORD_FULL_MAX_SIZE)
		size = SAMPLE_RECORD_FULL_MAX_SIZE;

	if (bpf_ringbuf_output(ring, rec, size, ring_flags(ring, size))) {
		inc_stat(SAMPLER_STAT_DROP_RING_FULL);
		return;
	}
	inc_stat(SAMPLER_STAT_EMITTED);
}

/*
 * The table walk without bpf_loop: unwind_hop, its one entry, walks
 * UNWIND_HOP_FRAMES frames per run and tail-calls itself.  The kernel
 * allows 33 tail calls in a chain (32 before 5.17's count fix, plus the
 * first): 33 * 8 frames cover SAMPLER_MAX_USTACK with room, and 8 unrolled
 * steps with their searches stay far below the verifier's million
 * instructions on 5.10.
 */
#define UNWIND_HOP_FRAMES 8
_Static_assert(32 * UNWIND_HOP_FRAMES > SAMPLER_MAX_USTACK, "the hops cover a whole stack");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} unwind_hops SEC(".maps");

SEC("perf_event")
int sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct sample_record *rec;
#ifdef SAMPLER_NO_LOOP
	struct ustack_walk *st;
	__u32 nk, nu = 0;
	long stop;
#endif

	/* tid 0 is the idle task: not a thread of anything; counted apart, as
	 * the effective rate is measured over the CPUs' busy time */
	if (tid == 0) {
		inc_stat(SAMPLER_STAT_IDLE);
		return 0;
	}
	if (!profiled(tgid)) {
		inc_stat(SAMPLER_STAT_FILTERED);
		return 0;
	}
	inc_stat(SAMPLER_STAT_SAMPLES);

	rec = scratch_record();
	if (!rec) {
		inc_stat(SAMPLER_STAT_DROP_NO_SCRATCH);
		return 0;
	}
	rec->time_ns = bpf_ktime_get_ns();
#ifdef SAMPLER_NO_LOOP
	if (unwind_mode != UNWIND_MODE_FP) {
		nk = fill_head(ctx, rec, tgid, tid, 0);
		stop = native_begin(ctx, ctx, rec, nk, &nu);
		if (stop < 0) {
			/* unwind_hop finishes and emits the record */
			bpf_tail_call(ctx, &unwind_hops, 0);
			/* no hop loaded: the collector loads one with this build */
			st = scratch_walk();
			if (!st)
				return 0;
			unwind_end(st, UNWIND_STOP_UNSUPPORTED);
			stop = native_end(st, &nu);
		}
		emit(rec, fill_tail(rec, nk, nu, stop));
		return 0;
	}
#endif
	emit(rec, fill_record(ctx, ctx, rec, tgid, tid, 0));
	return 0;
}

/* the frames of the walk sample() began, UNWIND_HOP_FRAMES per run; the
 * last run finishes the record and emits it */
SEC("perf_event")
int unwind_hop(struct bpf_perf_event_data *ctx)
{
	struct sample_record *rec = scratch_record();
	struct ustack_walk *st = scratch_walk();
	__u32 i, nu, stop;

	if (!rec || !st) {
		inc_stat(SAMPLER_STAT_DROP_NO_SCRATCH);
		return 0;
	}
	for (i = 0; i < UNWIND_HOP_FRAMES; i++)
		if (unwind_frame(st))
			goto out;
	bpf_tail_call(ctx, &unwind_hops, 0);
	/* still here: the chain's budget of tail calls is spent */
	unwind_end(st, UNWIND_STOP_TRUNCATED);
out:
	stop = native_end(st, &nu);
	emit(rec, fill_tail(rec, st->base, nu, stop));
	return 0;
}

#include "offcpu.bpf.h"
