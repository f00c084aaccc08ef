/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * python - the CPython frames of a sample (include/python_abi.h), read for
 * the processes in python_procs and put in place of the native frames of
 * _PyEval_EvalFrameDefault that ran them.
 *
 * Three bpf_loop walks, each checked once by the verifier, their state in
 * the per-CPU scratch area: the interpreter's thread states until the
 * sampled thread's (only when the per-tid cache misses), the frame chain
 * from the running frame (at most PYTHON_MAX_FRAMES), and the merge of the
 * native frames with the Python ones into the record's user frames.  Every
 * pointer is the application's: each read is a bpf_probe_read_user of the
 * sampled task, a frame's f_code must point at a PyCode_Type object, and a
 * walk that meets anything else stops there, counted; the frames read
 * before stay (they were checked), none after is guessed.
 * Included by sampler.bpf.c, which defines scratch_record(), scratch_py(),
 * inc_stat() and add_stat().
 */
#ifndef CTXPROF_PYTHON_BPF_H
#define CTXPROF_PYTHON_BPF_H

#include "records.h"
#include "python_abi.h"

/* pid -> its interpreter's layout, for the CPython processes the collector recognised */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct python_proc_ref);
} python_procs SEC(".maps");

/* tid -> its thread state as last found (checked against the tid each time) */
struct python_thread_ref {
	__u64 tstate; /* 0: none found at @checked_ns */
	__u64 checked_ns;
	__u32 pid;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct python_thread_ref);
} python_threads SEC(".maps");

/* a thread found without a thread state is looked for again after this */
#define PYTHON_NO_THREAD_RETRY_NS 1000000000ull

enum python_walk_end {
	PYTHON_END_RUNNING = 0,
	PYTHON_END_DONE,     /* the chain ended (previous == NULL) */
	PYTHON_END_READ_ERR, /* a frame or code object unreadable */
	PYTHON_END_BAD_CODE, /* f_code not a code object */
	PYTHON_END_FULL,     /* PYTHON_MAX_FRAMES read, the chain goes on */
	PYTHON_END_LOOP,     /* previous is one of the last PYTHON_LOOP_SEEN frames */
};

/*
 * The frames a previous pointer is checked against: a chain that loops
 * back within this many frames is cut where it does; a longer loop runs
 * until PYTHON_MAX_FRAMES (truncated), every frame of it a real code
 * object's.  A power of two, for the index mask.
 */
#define PYTHON_LOOP_SEEN 8

/* the walks' state, in the per-CPU scratch area (see struct scratch) */
struct python_walk {
	struct python_proc_ref proc;
	__u64 native[SAMPLER_MAX_USTACK + 1]; /* the native user frames, as walked */
	__u64 py[2 * PYTHON_MAX_FRAMES];      /* the Python frames' words, leaf first */
	__u8 entry[PYTHON_MAX_FRAMES];	      /* frame i began a _PyEval_EvalFrameDefault call */
	__u64 seen[PYTHON_LOOP_SEEN];	      /* the last frames' addresses (loop check) */
	__u8 frame[PYTHON_FRAME_READ];
	__u8 code[PYTHON_CODE_READ];
	__u64 cur;	 /* the frame (walk) or thread state (search) to read next */
	__u64 tstate;	 /* the search's find */
	__u64 thread_id; /* what the thread state's id field holds for the sampled thread */
	__u32 tid;
	__u32 nn, np; /* native frames, Python frames */
	__u32 base;   /* where the user frames start in the record */
	__u32 i, p, out, in_group;
	__u32 end;	/* enum python_walk_end */
	__u32 unplaced; /* Python frames placed past the native ones */
	__u32 shims;	/* entry shim frames skipped (PYTHON_WALK_SHIM_NONE) */
	__u32 truncated;
};

static __always_inline struct sample_record *scratch_record(void);
static __always_inline struct python_walk *scratch_py(void);
static __always_inline void inc_stat(__u32 stat);
static __always_inline void add_stat(__u32 stat, __u64 n);

/* a u64 at @off of a buffer of @size read from the target, 0 past its end */
static __always_inline __u64 py_u64(const __u8 *buf, __u32 off, __u32 size)
{
	__u64 v = 0;

	if (off > size - 8)
		return 0;
	__builtin_memcpy(&v, buf + (off & 0xff), sizeof(v));
	return v;
}

/* one thread state of the interpreter's list: the sampled thread's? */
static long py_thread_step(__u32 i, void *ctx)
{
	struct python_walk *w = scratch_py();
	__u64 next = 0, tid = 0;

	if (!w || !w->cur)
		return 1;
	if (bpf_probe_read_user(&tid, sizeof(tid),
				(const void *)(w->cur + w->proc.tstate_native_thread_id)) ||
	    bpf_probe_read_user(&next, sizeof(next), (const void *)(w->cur + w->proc.tstate_next)))
		return 1;
	if (tid == w->thread_id) {
		w->tstate = w->cur;
		return 1;
	}
	w->cur = next;
	return 0;
}

/* the sampled thread's PyThreadState, 0 when it has none */
static __always_inline __u64 py_find_tstate(struct python_walk *w, __u32 pid)
{
	struct python_thread_ref *ref, fresh = {};
	__u64 interp = 0, tid = 0, now = bpf_ktime_get_ns();

	ref = bpf_map_lookup_elem(&python_threads, &w->tid);
	if (ref && ref->pid == pid) {
		if (!ref->tstate && now - ref->checked_ns < PYTHON_NO_THREAD_RETRY_NS)
			return 0;
		if (ref->tstate &&
		    !bpf_probe_read_user(
			    &tid, sizeof(tid),
			    (const void *)(ref->tstate + w->proc.tstate_native_thread_id)) &&
		    tid == w->thread_id)
			return ref->tstate;
	}
	w->tstate = 0;
	w->cur = 0;
	if (!bpf_probe_read_user(&interp, sizeof(interp),
				 (const void *)(w->proc.runtime + w->proc.interp_head)) &&
	    interp)
		bpf_probe_read_user(&w->cur, sizeof(w->cur),
				    (const void *)(interp + w->proc.threads_head));
	bpf_loop(PYTHON_MAX_THREADS, py_thread_step, NULL, 0);
	fresh.tstate = w->tstate;
	fresh.checked_ns = now;
	fresh.pid = pid;
	bpf_map_update_elem(&python_threads, &w->tid, &fresh, BPF_ANY);
	return w->tstate;
}

/* one frame of the chain: its code object, instruction and entry mark */
static long py_frame_step(__u32 i, void *ctx)
{
	struct python_walk *w = scratch_py();
	const struct python_proc_ref *pp;
	__u64 code, instr, base, prev;
	__s32 firstlineno, lasti;
	__u32 n, k;

	if (!w)
		return 1;
	pp = &w->proc;
	n = w->np;
	if (n >= PYTHON_MAX_FRAMES) {
		w->end = PYTHON_END_FULL;
		return 1;
	}
	if (bpf_probe_read_user(w->frame, sizeof(w->frame), (const void *)w->cur)) {
		w->end = PYTHON_END_READ_ERR;
		return 1;
	}
	code = py_u64(w->frame, pp->frame_code, PYTHON_FRAME_READ);
	if (pp->walk & PYTHON_WALK_TAGGED)
		code &= ~PYTHON_TAG_MASK;
	if ((pp->walk & PYTHON_WALK_SHIM_NONE) && code == pp->none_obj) {
		/* a C call's entry shim: the frame before it began that call */
		if (n > 0)
			w->entry[(n - 1) & (PYTHON_MAX_FRAMES - 1)] = 1;
		w->shims++;
		goto next;
	}
	if (!code || bpf_probe_read_user(w->code, sizeof(w->code), (const void *)code)) {
		w->end = PYTHON_END_READ_ERR;
		return 1;
	}
	if (py_u64(w->code, pp->code_type_off, PYTHON_CODE_READ) != pp->code_type) {
		w->end = PYTHON_END_BAD_CODE;
		return 1;
	}
	firstlineno = (__s32)py_u64(w->code, pp->code_firstlineno, PYTHON_CODE_READ);
	if (pp->walk & PYTHON_WALK_FRAME_OBJECT) {
		/* f_lasti: an int past what the frame read holds; -1 before the first */
		lasti = -1;
		bpf_probe_read_user(&lasti, sizeof(lasti),
				    (const void *)(w->cur + pp->frame_prev_instr));
		if (lasti >= 0 && (pp->walk & PYTHON_WALK_LASTI_BYTES))
			lasti /= 2;
		instr = lasti >= 0 && lasti < PYTHON_INSTR_NONE ? (__u64)lasti : PYTHON_INSTR_NONE;
	} else {
		instr = py_u64(w->frame, pp->frame_prev_instr, PYTHON_FRAME_READ);
		base = code + pp->code_adaptive;
		/* prev_instr is the last instruction run: one before the first while
		 * the frame has not started */
		if (instr >= base && (instr - base) / 2 < PYTHON_INSTR_NONE)
			instr = (instr - base) / 2;
		else
			instr = PYTHON_INSTR_NONE;
	}
	w->py[(2 * n) & (2 * PYTHON_MAX_FRAMES - 1)] = PYTHON_FRAME_TAG | code;
	w->py[(2 * n + 1) & (2 * PYTHON_MAX_FRAMES - 1)] =
		PYTHON_FRAME_TAG | PYTHON_FRAME_WORD2 |
		(__u64)python_code_check(firstlineno,
					 py_u64(w->code, pp->code_filename, PYTHON_CODE_READ),
					 py_u64(w->code, pp->code_qualname, PYTHON_CODE_READ))
			<< PYTHON_INSTR_BITS |
		instr;
	if (pp->walk & PYTHON_WALK_FRAME_OBJECT)
		/* 3.9: every Python call is a C call of its own */
		w->entry[n & (PYTHON_MAX_FRAMES - 1)] = 1;
	else
		w->entry[n & (PYTHON_MAX_FRAMES - 1)] =
			(pp->walk & PYTHON_WALK_IS_ENTRY) && pp->frame_is_entry < PYTHON_FRAME_READ
				? w->frame[pp->frame_is_entry & 0x7f]
				: 0;
	w->np = n + 1;
next:
	prev = py_u64(w->frame, pp->frame_previous, PYTHON_FRAME_READ);
	if (!prev) {
		w->end = PYTHON_END_DONE;
		return 1;
	}
	/* shims count in the loop check as frames do */
	k = w->np + w->shims - 1;
	w->seen[k & (PYTHON_LOOP_SEEN - 1)] = w->cur;
	for (k = 0; k < PYTHON_LOOP_SEEN; k++) {
		if (k < w->np + w->shims && w->seen[k] == prev) {
			w->end = PYTHON_END_LOOP;
			return 1;
		}
	}
	w->cur = prev;
	return 0;
}

/* is the native frame @i a call of _PyEval_EvalFrameDefault? */
static __always_inline bool py_is_eval(const struct python_walk *w, __u32 i, __u64 word)
{
	__u64 pc = word & ~SAMPLE_FRAME_EXACT;

	/* a return address is one past its call: look up the call */
	if (i > 0 && !(word & SAMPLE_FRAME_EXACT) && pc)
		pc--;
	return (pc >= w->proc.eval_start[0] && pc < w->proc.eval_end[0]) ||
	       (pc >= w->proc.eval_start[1] && pc < w->proc.eval_end[1]) ||
	       (pc >= w->proc.eval_start[2] && pc < w->proc.eval_end[2]);
}

static __always_inline bool py_put(struct sample_record *rec, struct python_walk *w, __u64 v)
{
	__u32 at = w->base + w->out;

	if (w->out >= SAMPLER_MAX_USTACK || at >= SAMPLER_MAX_FRAMES) {
		w->truncated = 1;
		return false;
	}
	rec->frames[at] = v;
	w->out++;
	return true;
}

/* Python frame @p's two words, and the walk past it; false: no room for both */
static __always_inline bool py_put_frame(struct sample_record *rec, struct python_walk *w, __u32 p)
{
	if (w->out + 2 > SAMPLER_MAX_USTACK) {
		w->truncated = 1;
		return false;
	}
	py_put(rec, w, w->py[(2 * p) & (2 * PYTHON_MAX_FRAMES - 1)]);
	py_put(rec, w, w->py[(2 * p + 1) & (2 * PYTHON_MAX_FRAMES - 1)]);
	w->p = p + 1;
	return true;
}

/* one output frame: native, or the next Python frame of a group */
static long py_merge_step(__u32 k, void *ctx)
{
	struct python_walk *w = scratch_py();
	struct sample_record *rec = scratch_record();
	__u32 p, i;

	if (!w || !rec)
		return 1;
	p = w->p;
	i = w->i;
	if (w->in_group) {
		if (p >= w->np || p >= PYTHON_MAX_FRAMES) {
			/* the chain ended inside the group: the call's frame goes */
			w->in_group = 0;
			w->i = i + 1;
			return 0;
		}
		if (!py_put_frame(rec, w, p))
			return 1;
		if (w->entry[p & (PYTHON_MAX_FRAMES - 1)]) {
			w->in_group = 0;
			w->i = i + 1;
		}
		return 0;
	}
	if (i < w->nn && i < SAMPLER_MAX_USTACK) {
		if (p < w->np && py_is_eval(w, i, w->native[i & SAMPLER_MAX_USTACK])) {
			w->in_group = 1;
			return 0;
		}
		if (!py_put(rec, w, w->native[i & SAMPLER_MAX_USTACK]))
			return 1;
		w->i = i + 1;
		return 0;
	}
	/* the native walk ended first: the rest of the chain at the root end */
	if (p >= w->np || p >= PYTHON_MAX_FRAMES)
		return 1;
	if (!py_put_frame(rec, w, p))
		return 1;
	w->unplaced++;
	return 0;
}

static long py_copy_step(__u32 i, void *ctx)
{
	struct python_walk *w = scratch_py();
	struct sample_record *rec = scratch_record();
	__u32 at;

	if (!w || !rec || i >= w->nn)
		return 1;
	/* the masks hold the indexes for the verifier, which the compiler's
	 * own bound checks would not */
	barrier_var(i);
	i &= SAMPLER_MAX_USTACK;
	at = w->base + i;
	barrier_var(at);
	if (at >= SAMPLER_MAX_FRAMES)
		return 1;
	w->native[i] = rec->frames[at];
	return 0;
}

/*
 * The sample's Python frames in place of the native frames that ran them:
 * rewrites the user frames at @nk..@nk+@nu of @rec.
 * Return: the user frames now (@nu when the process is not Python's or no
 * Python frame could be read).
 */
static __always_inline __u32 read_python(struct sample_record *rec, __u32 nk, __u32 nu)
{
	struct python_walk *w = scratch_py();
	const struct python_proc_ref *pp;
	__u64 tstate, cframe = 0;
	int err;
	__u32 ppid;

	if (!w || nk > SAMPLER_MAX_KSTACK || nu > SAMPLER_MAX_USTACK)
		return nu;
	pp = bpf_map_lookup_elem(&python_procs, &rec->pid);
	if (!pp) {
		/* a child forked since, not read yet: its parent's layout holds
		 * while it runs the image it was forked with (fork copies the
		 * exec id and the address space) */
		ppid = BPF_CORE_READ(bpf_get_current_task_btf(), real_parent, tgid);
		pp = bpf_map_lookup_elem(&python_procs, &ppid);
		if (!pp || !pp->exec_id || pp->exec_id != rec->exec_id)
			return nu;
	}
	if (pp->exec_id && pp->exec_id != rec->exec_id) {
		inc_stat(SAMPLER_STAT_PY_STALE);
		return nu;
	}
	w->proc = *pp;
	w->tid = rec->tid;
	/* 3.9 keeps pthread_self(): glibc's thread pointer on x86-64 */
	w->thread_id = w->proc.walk & PYTHON_WALK_TID_PTHREAD
			       ? arch_thread_pointer(bpf_get_current_task_btf())
			       : rec->tid;
	tstate = py_find_tstate(w, rec->pid);
	if (!tstate) {
		inc_stat(SAMPLER_STAT_PY_NO_THREAD);
		return nu;
	}
	w->cur = 0;
	if (w->proc.walk & PYTHON_WALK_CFRAME) {
		err = bpf_probe_read_user(&cframe, sizeof(cframe),
					  (const void *)(tstate + w->proc.tstate_frame));
		if (!err && cframe)
			err = bpf_probe_read_user(
				&w->cur, sizeof(w->cur),
				(const void *)(cframe + w->proc.cframe_current_frame));
	} else {
		err = bpf_probe_read_user(&w->cur, sizeof(w->cur),
					  (const void *)(tstate + w->proc.tstate_frame));
	}
	if (err) {
		inc_stat(SAMPLER_STAT_PY_READ_ERR);
		return nu;
	}
	if (!w->cur) {
		inc_stat(SAMPLER_STAT_PY_IDLE);
		return nu;
	}
	w->np = 0;
	w->shims = 0;
	w->end = PYTHON_END_RUNNING;
	/* room for a shim after each frame (3.13 on), and the end */
	bpf_loop(2 * PYTHON_MAX_FRAMES + 2, py_frame_step, NULL, 0);
	if (w->end == PYTHON_END_RUNNING)
		w->end = PYTHON_END_FULL;
	if (w->end == PYTHON_END_READ_ERR)
		inc_stat(SAMPLER_STAT_PY_READ_ERR);
	else if (w->end == PYTHON_END_BAD_CODE)
		inc_stat(SAMPLER_STAT_PY_BAD_CODE);
	else if (w->end == PYTHON_END_FULL)
		inc_stat(SAMPLER_STAT_PY_TRUNCATED);
	else if (w->end == PYTHON_END_LOOP)
		inc_stat(SAMPLER_STAT_PY_LOOP);
	if (!w->np)
		return nu;

	w->nn = nu;
	w->base = nk;
	bpf_loop(SAMPLER_MAX_USTACK, py_copy_step, NULL, 0);
	w->i = 0;
	w->p = 0;
	w->out = 0;
	w->in_group = 0;
	w->unplaced = 0;
	w->truncated = 0;
	bpf_loop(SAMPLER_MAX_USTACK + 2 * PYTHON_MAX_FRAMES, py_merge_step, NULL, 0);
	if (w->truncated || w->i < w->nn || w->p < w->np) {
		rec->flags |= SAMPLE_F_USTACK_TRUNCATED;
		if (w->end != PYTHON_END_FULL)
			inc_stat(SAMPLER_STAT_PY_TRUNCATED);
	}
	if (w->unplaced)
		inc_stat(SAMPLER_STAT_PY_UNPLACED);
	rec->flags |= SAMPLE_F_PYTHON;
	inc_stat(SAMPLER_STAT_PY_OK);
	add_stat(SAMPLER_STAT_PY_FRAMES, w->p);
	return w->out;
}

#endif /* CTXPROF_PYTHON_BPF_H */
