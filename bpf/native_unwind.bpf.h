/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * native_unwind - walk a user stack (x86-64, arm64) with the unwind tables the
 * collector built from each file's CFI (user/unwind/, include/unwind.h).
 * Included by sampler.bpf.c; BPF-only.
 *
 * Per frame: find the mapping holding the pc among the process's executable
 * mappings (binary search over its range of unwind_mappings, the last hit
 * first), then the table row covering it (binary search over the file's rows
 * in unwind_rows, as many steps as the table needs; the last frame's rule
 * again when the pc is the last frame's, as down a recursion), then apply
 * the row's rule: the CFA from sp or the frame pointer, the return address
 * where the rule says (x86-64: CFA - 8; arm64: saved at CFA + off, or still
 * in the link register in the sampled frame), the caller's frame pointer
 * where the rule says.  Code without CFI (JIT, a file without .eh_frame) is
 * walked by its frame pointer in --unwind auto, and so is a pc that a
 * file's table leaves without CFI.  A frame that cannot be unwound ends the
 * stack with a reason
 * (enum unwind_stop): no address past it is ever guessed.
 *
 * The frame loop runs under bpf_loop() (Linux 5.17+): the verifier checks
 * one step, not 127 unrolled copies with their nested searches, and the
 * kernel inlines the loop.  Where bpf_loop is missing (5.10-5.16) the same
 * step, unwind_frame(), runs in tail-call hops of UNWIND_HOP_FRAMES frames
 * each (sampler.bpf.c, SAMPLER_NO_LOOP), the state carried in the per-CPU
 * scratch map between them.
 */
#ifndef CTXPROF_NATIVE_UNWIND_BPF_H
#define CTXPROF_NATIVE_UNWIND_BPF_H

#include "records.h"
#include "unwind.h"

/* one chunk of the rows array (include/unwind.h): the collector writes it (mmap) */
struct unwind_row_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, UNWIND_CHUNK_ROWS);
	/* sizes, not types: clang 14 leaves a type seen only this deep a
	 * forward declaration in BTF, and libbpf cannot size it */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct unwind_row));
};

/*
 * Every table's rows, one after another, in chunks made as rows land: the
 * same size each, so that a lookup in one is inlined like a plain array's
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1); /* resized before load */
	__type(key, __u32);
	__array(values, struct unwind_row_chunk);
} unwind_rows SEC(".maps");

/* the distinct rules every row points into */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* resized before load */
	__type(key, __u32);
	__type(value, struct unwind_rule);
} unwind_rules SEC(".maps");

/* every profiled process's executable mappings, a sorted range each */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* resized before load */
	__type(key, __u32);
	__type(value, struct unwind_mapping);
} unwind_mappings SEC(".maps");

/* tgid -> its range of mappings; no entry: no tables yet */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* resized before load */
	__type(key, __u32);
	__type(value, struct unwind_proc);
} unwind_procs SEC(".maps");

/*
 * The user stack above the sampled sp is read a page at a time into a
 * window: the frames' reads come from the copy, one bpf_probe_read_user per
 * page of stack the walk climbs instead of one or two per frame (each costs
 * tens of ns in fault handling set-up).  A page, not a fixed span above sp:
 * a page is either mapped or not, so the read never fails for want of what
 * lies above the stack's top (a main thread's top is a few KiB above its
 * frames: a 4 KiB read above sp failed there, and every frame paid its own
 * read), it needs no bound kept per thread (task->mm->start_stack would
 * give the main thread's alone; /proc/PID/maps changes as threads come and
 * go), and a shallow walk copies no more than the pages it climbs.  Reads
 * elsewhere (below the window, or more than a page above it: a huge frame)
 * go to the user memory as before.
 */
#define USTACK_WINDOW 4096 /* one page */

/* the walk, in the per-CPU scratch next to the record its frames go into */
struct ustack_walk {
	__u64 pc;
	__u64 sp;
	__u64 bp;
	__u64 lr;	 /* arm64's link register, while it is known (lr_ok) */
	__u32 lr_ok;	 /* the sampled frame and one a signal frame restored only */
	__u32 sp_ok;	 /* sp is the frame's: not after an arm64 frame-pointer step */
	__u32 base;	 /* frames[] index of the first user frame */
	__u32 n;	 /* user frames recorded */
	__u32 map_first; /* the process's mappings */
	__u32 map_count;
	__u32 cached; /* mappings index of the last hit */
	__u32 stop;   /* enum unwind_stop, once the walk ended */
	__u32 exact;  /* pc is exact: the leaf, or the pc a signal frame saved */
	__u32 fp_ok;  /* code without CFI may be walked by frame pointer */
	__u32 nr_cfi, nr_plt, nr_signal, nr_fp; /* frames by method, for the counters */
	__u64 rule_at;				/* the address the last table search was for */
	__u32 rule_idx;				/* its rule + 1 in unwind_rules; 0: none */
	__u32 rule_pad;
	__u64 win_lo;  /* the user address window[0] holds */
	__u32 win_len; /* bytes of it copied; 0: none */
	__u32 win_pad;
	__u32 go_switched; /* 1 << the Go stack switches followed (go_stack.bpf.h) */
	__u32 building;	   /* a frame walked by frame pointer for want of a table yet */
	/* how a frame-pointer walk ends at a 0: UNWIND_STOP_COMPLETE, or in JIT
	 * code (UNWIND_MAP_JIT) UNWIND_STOP_JIT_NO_FP */
	__u32 fp_end;
	__u32 fp_pad;
	/* last: native_stack() clears only what is before it */
	__u8 window[USTACK_WINDOW];
};

/* st->window = the user memory from @lo to the end of its page; none if unmapped */
static __always_inline void fill_window(struct ustack_walk *st, __u64 lo)
{
	__u32 len = 4096 - (lo & 4095);

	if (len > USTACK_WINDOW) /* for the verifier */
		len = USTACK_WINDOW;
	st->win_lo = lo;
	st->win_len = bpf_probe_read_user(st->window, len, (const void *)lo) ? 0 : len;
}

/* the walk's first window: from the sampled sp to the end of its page */
static __always_inline void copy_window(struct ustack_walk *st)
{
	fill_window(st, st->sp);
}

/* 8 bytes of the user stack at @addr: from the window, moved up to it if need be */
static __always_inline int read_user_u64(struct ustack_walk *st, __u64 addr, __u64 *v)
{
	__u64 end = st->win_lo + st->win_len, off;

	/* the walk climbs: the page after the window's is the next to read */
	if (addr >= end && addr - end < 4096 && (addr & 4095) <= 4096 - 8)
		fill_window(st, addr & ~4095ull);
	off = addr - st->win_lo;
	if (addr >= st->win_lo && st->win_len >= 8 && off <= st->win_len - 8) {
		if (off > USTACK_WINDOW - 8) /* for the verifier */
			return -1;
		__builtin_memcpy(v, st->window + off, sizeof(*v));
		return 0;
	}
	return bpf_probe_read_user(v, sizeof(*v), (const void *)addr);
}

/*
 * 1 when @a <= @b, without a branch: the searches below take no
 * data-dependent branch, so a verifier walks each of their steps once
 * (6.1's gave up at a million instructions on the branching ones: every
 * step doubled the states it kept).  The borrow of b - a, for any 64-bit
 * values: a mapping above 2^63 ([vsyscall] at 0xffffffffff600000) must
 * compare right, the sign of the difference alone put it below every
 * address.  The barrier keeps the compiler from turning this back into a
 * compare and a jump.
 */
static __always_inline __u64 le_u64(__u64 a, __u64 b)
{
	__u64 borrow = (~b & a) | (~(b ^ a) & (b - a));

	asm volatile("" : "+r"(borrow));
	return (borrow >> 63) ^ 1;
}

/*
 * The last mapping whose start <= @addr, if it holds @addr (a binary
 * search; the last hit first).  Branchless, like rows_upto(): Linux 6.19+
 * verifies a bpf_loop callback as a loop whose states must converge, and a
 * branch per halving there multiplied the states until the sampler did not
 * load in minutes.
 */
static __always_inline const struct unwind_mapping *find_mapping(struct ustack_walk *st, __u64 addr)
{
	const struct unwind_mapping *m;
	__u32 base = 0, len = st->map_count, half, idx, i;

	m = bpf_map_lookup_elem(&unwind_mappings, &st->cached);
	if (m && addr >= m->start && addr < m->end)
		return m;
	if (!len)
		return NULL;
	/* 13 halvings bring 4096 (UNWIND_MAX_PROC_MAPPINGS) down to 1 */
	for (i = 0; i < 13; i++) {
		half = len >> 1;
		idx = st->map_first + base + half;
		m = bpf_map_lookup_elem(&unwind_mappings, &idx);
		if (!m)
			return NULL;
		base += half * (__u32)le_u64(m->start, addr);
		len -= half;
	}
	idx = st->map_first + base;
	m = bpf_map_lookup_elem(&unwind_mappings, &idx);
	if (!m || addr < m->start || addr >= m->end)
		return NULL;
	st->cached = idx;
	return m;
}

/* row @idx of the whole array: its chunk, then the row in it */
static __always_inline const struct unwind_row *row_at(__u32 idx)
{
	__u32 chunk = idx >> UNWIND_CHUNK_SHIFT, off = idx & (UNWIND_CHUNK_ROWS - 1);
	void *rows = bpf_map_lookup_elem(&unwind_rows, &chunk);

	return rows ? bpf_map_lookup_elem(rows, &off) : NULL;
}

/*
 * How many of the @n rows from @first have pc <= @off, -1 when a row is
 * missing: find_mapping()'s branchless search over rows.  A table within
 * one chunk (most: a chunk holds 128k rows) looks its chunk up once; one
 * that straddles two, at each step.
 */
static __always_inline long rows_upto(__u32 first, __u32 n, __u64 off)
{
	const struct unwind_row *row;
	__u32 base = 0, len = n, half, i, chunk = first >> UNWIND_CHUNK_SHIFT, idx;
	void *rows;

	if ((first + n - 1) >> UNWIND_CHUNK_SHIFT == chunk) {
		rows = bpf_map_lookup_elem(&unwind_rows, &chunk);
		if (!rows)
			return -1;
		first &= UNWIND_CHUNK_ROWS - 1;
		/* as many halvings as the table needs, 18 at most: the exit
		 * depends on the table's size alone, not on a row, so a
		 * verifier's states grow by one per step, not double */
		for (i = 0; i < 18; i++) {
			if (len <= 1)
				break;
			half = len >> 1;
			idx = first + base + half;
			row = bpf_map_lookup_elem(rows, &idx);
			if (!row)
				return -1;
			base += half * (__u32)le_u64(row->pc, off);
			len -= half;
		}
		idx = first + base;
		row = bpf_map_lookup_elem(rows, &idx);
	} else {
		for (i = 0; i < 25; i++) {
			if (len <= 1)
				break;
			half = len >> 1;
			row = row_at(first + base + half);
			if (!row)
				return -1;
			base += half * (__u32)le_u64(row->pc, off);
			len -= half;
		}
		row = row_at(first + base);
	}
	if (!row)
		return -1;
	return base + le_u64(row->pc, off);
}

/* the rule index of the last row whose pc <= @off, -1 when none */
static __always_inline long find_rule(const struct unwind_mapping *m, __u64 off)
{
	const struct unwind_row *row;
	long lo;

	if (off > 0xffffffffull || !m->row_count || m->row_count > UNWIND_MAX_TABLE_ROWS)
		return -1;
	lo = rows_upto(m->row_first, m->row_count, off);
	if (lo <= 0)
		return -1;
	row = row_at(m->row_first + (__u32)lo - 1);
	if (!row)
		return -1;
	return row->rule;
}

/*
 * The rule for @lookup in table mapping @m: the last frame's again when the
 * address is the same (a recursion's frames return to one address: its
 * search is not repeated), else by find_rule()
 */
static __always_inline const struct unwind_rule *
frame_rule(struct ustack_walk *st, const struct unwind_mapping *m, __u64 lookup)
{
	__u32 idx;
	long rule;

	if (st->rule_idx && st->rule_at == lookup) {
		idx = st->rule_idx - 1;
		return bpf_map_lookup_elem(&unwind_rules, &idx);
	}
	rule = find_rule(m, lookup - m->bias);
	if (rule < 0 || rule >= 0xffffffffl)
		return NULL;
	idx = (__u32)rule;
	st->rule_at = lookup;
	st->rule_idx = idx + 1;
	return bpf_map_lookup_elem(&unwind_rules, &idx);
}

static __always_inline long unwind_end(struct ustack_walk *st, __u32 why)
{
	/* however it ended, a stack walked by frame pointers through code whose
	 * table was not built yet says so: its end may be that code's, not its own */
	st->stop = st->building ? UNWIND_STOP_NO_TABLE_YET : why;
	return 1;
}

/*
 * one frame by its frame pointer: [rbp] = caller's rbp, [rbp + 8] = return
 * address; a 0 in either ends the stack as st->fp_end says
 */
static __always_inline long step_fp(struct ustack_walk *st)
{
	__u64 ra, bp;

	if (!st->bp)
		return unwind_end(st, st->fp_end);
	if (st->bp < st->sp || (st->bp & 7))
		return unwind_end(st, UNWIND_STOP_BAD_FRAME);
	if (read_user_u64(st, st->bp + 8, &ra) || read_user_u64(st, st->bp, &bp))
		return unwind_end(st, UNWIND_STOP_READ_ERR);
	ra = arch_strip_ra(ra);
	st->sp = st->bp + 16;
	st->bp = bp;
	st->pc = ra;
	st->exact = 0;
	st->lr_ok = 0;
	st->sp_ok = ARCH_FP_STEP_SP_EXACT;
	st->nr_fp++;
	return ra ? 0 : unwind_end(st, st->fp_end);
}

/* through a signal frame: the interrupted registers from the kernel's sigcontext */
static __always_inline long step_signal(struct ustack_walk *st)
{
	__u64 pc, sp, bp;

	if (read_user_u64(st, st->sp + SIGFRAME_PC, &pc) ||
	    read_user_u64(st, st->sp + SIGFRAME_SP, &sp) ||
	    read_user_u64(st, st->sp + SIGFRAME_FP, &bp))
		return unwind_end(st, UNWIND_STOP_READ_ERR);
#ifdef SIGFRAME_LR
	if (read_user_u64(st, st->sp + SIGFRAME_LR, &st->lr))
		return unwind_end(st, UNWIND_STOP_READ_ERR);
	st->lr_ok = 1;
#endif
	st->pc = pc;
	st->sp = sp;
	st->bp = bp;
	st->exact = 1;
	st->sp_ok = 1;
	st->nr_signal++;
	return 0;
}

static __always_inline long go_follow_switch(struct ustack_walk *st, __u32 kind);

/*
 * A frame whose CFA is on sp, reached by an arm64 frame-pointer step (the
 * caller's sp unknown: code without CFI, the vDSO's): by its own frame
 * record too, as the kernel's walk would, where frame pointers may be
 * used; never a CFA from a guessed sp
 */
static __always_inline long step_no_sp(struct ustack_walk *st)
{
	return st->fp_ok ? step_fp(st) : unwind_end(st, UNWIND_STOP_UNSUPPORTED);
}

static __always_inline long step_rule(struct ustack_walk *st, const struct unwind_rule *r)
{
	__u64 cfa, ra, bp = st->bp;
	long go;

	switch (r->cmd) {
	case UNWIND_CMD_CFA_RSP:
		if (!st->sp_ok)
			return step_no_sp(st);
		cfa = st->sp + r->cfa_off;
		st->nr_cfi++;
		break;
	case UNWIND_CMD_CFA_RBP:
		cfa = st->bp + r->cfa_off;
		st->nr_cfi++;
		break;
	case UNWIND_CMD_CFA_RBP_DEREF:
		if (read_user_u64(st, st->bp + r->cfa_off, &cfa))
			return unwind_end(st, UNWIND_STOP_READ_ERR);
		st->nr_cfi++;
		break;
	case UNWIND_CMD_PLT:
		if (!st->sp_ok)
			return step_no_sp(st);
		cfa = st->sp + r->cfa_off + ((st->pc & 15) >= (__u64)r->rbp_off ? 8 : 0);
		st->nr_plt++;
		break;
	case UNWIND_CMD_SIGNAL:
		return step_signal(st);
	case UNWIND_CMD_END:
		return unwind_end(st, UNWIND_STOP_COMPLETE);
	case UNWIND_CMD_GO_SYSTEM_STACK:
		/* on the goroutine's saved registers (go_stack.bpf.h), else the
		 * end; a sampled frame not switched yet: its own (its pcsp) */
		go = go_follow_switch(st, r->go_switch);
		if (!go)
			return 0;
		if (go < 0 || !r->cfa_off)
			return unwind_end(st, UNWIND_STOP_GO_SYSTEM_STACK);
		cfa = st->sp + r->cfa_off;
		st->nr_cfi++;
		break;
	case UNWIND_CMD_FP:
		return step_fp(st);
	default:
		return unwind_end(st, UNWIND_STOP_UNSUPPORTED);
	}
	/*
	 * The caller's sp is the CFA, above ours: anything else is corrupt or
	 * a loop.  Only an arm64 frame that stored nothing yet (its return
	 * address still in the link register) may have its CFA at sp.
	 */
	if (cfa < st->sp || (cfa == st->sp && r->ra != UNWIND_RA_LR))
		return unwind_end(st, UNWIND_STOP_BAD_FRAME);
	switch (r->ra) {
	case UNWIND_RA_CFA_M8:
		if (read_user_u64(st, cfa - 8, &ra))
			return unwind_end(st, UNWIND_STOP_READ_ERR);
		break;
	case UNWIND_RA_CFA:
		if (read_user_u64(st, cfa + r->ra_off, &ra))
			return unwind_end(st, UNWIND_STOP_READ_ERR);
		break;
	case UNWIND_RA_LR:
		/* a caller's link register was overwritten by its own calls */
		if (!st->lr_ok)
			return unwind_end(st, UNWIND_STOP_BAD_FRAME);
		ra = st->lr;
		break;
	default:
		return unwind_end(st, UNWIND_STOP_UNSUPPORTED);
	}
	ra = arch_strip_ra(ra);
	switch (r->rbp) {
	case UNWIND_RBP_SAME:
		break;
	case UNWIND_RBP_CFA:
		if (read_user_u64(st, cfa + r->rbp_off, &bp))
			return unwind_end(st, UNWIND_STOP_READ_ERR);
		break;
	case UNWIND_RBP_RBP:
		if (read_user_u64(st, st->bp + r->rbp_off, &bp))
			return unwind_end(st, UNWIND_STOP_READ_ERR);
		break;
	default:
		bp = 0;
		break;
	}
	st->pc = ra;
	st->sp = cfa;
	st->bp = bp;
	st->exact = 0;
	st->lr_ok = 0;
	st->sp_ok = 1;
	/* a zero return address is how an outermost frame without CFI ends */
	return ra ? 0 : unwind_end(st, UNWIND_STOP_COMPLETE);
}

static __always_inline struct sample_record *scratch_record(void);
static __always_inline struct ustack_walk *scratch_walk(void);

/* frames[base + n] = @frame; false (and the walk ends) when there is no room */
static __always_inline bool put_frame(struct ustack_walk *st, __u64 frame)
{
	struct sample_record *rec = scratch_record();
	__u32 idx = st->base + st->n;

	/* checked right at the store: the verifier needs the bound on this register */
	if (!rec || st->n >= SAMPLER_MAX_USTACK || idx >= SAMPLER_MAX_FRAMES)
		return false;
	rec->frames[idx] = frame;
	st->n++;
	return true;
}

/*
 * One frame of the walk: the logic both drivers share (the bpf_loop step
 * below, the tail-call hops in sampler.bpf.c).  Return: 0 to go on, 1 once
 * the walk ended (st->stop says why).
 */
static __always_inline long unwind_frame(struct ustack_walk *st)
{
	const struct unwind_mapping *m;
	const struct unwind_rule *r;
	__u64 lookup, frame;

	if (st->n >= SAMPLER_MAX_USTACK)
		return unwind_end(st, UNWIND_STOP_TRUNCATED);
	/* a return address points past its call: the call is at pc - 1 */
	lookup = st->exact ? st->pc : st->pc - 1;
	frame = st->pc;
	if (st->exact && st->n)
		frame |= SAMPLE_FRAME_EXACT;
	m = find_mapping(st, lookup);
	if (!m) {
		/* the leaf is where the CPU was, mapped or not; a return address
		 * nowhere executable is garbage and is not recorded */
		if (!st->n)
			put_frame(st, frame);
		return unwind_end(st, UNWIND_STOP_NO_MAPPING);
	}
	if (!put_frame(st, frame))
		return unwind_end(st, UNWIND_STOP_TRUNCATED);
	/*
	 * JIT code (UNWIND_MAP_JIT): a JIT that keeps no frame pointer (HotSpot
	 * without -XX:+PreserveFramePointer) leaves rbp 0 or a value of its
	 * own, and a 0 there, or a 0 return address above it, is no end of the
	 * stack: no thread's outermost frame is JIT code.  Branchless (1 when
	 * the kind is UNWIND_MAP_JIT): the callback's states must converge.
	 */
	st->fp_end = (__u32)(((__u64)(m->kind ^ UNWIND_MAP_JIT) - 1) >> 63) * UNWIND_STOP_JIT_NO_FP;
	if (m->kind == UNWIND_MAP_TABLE) {
		r = frame_rule(st, m, lookup);
		if (r && r->cmd != UNWIND_CMD_INVALID)
			return step_rule(st, r);
		/* code the file's CFI leaves out (V8's builtins, HotSpot's
		 * stubs, hand-written assembly): by its frame pointer, as
		 * elsewhere without CFI; the next frame goes back to the table */
	}
	if (m->kind == UNWIND_MAP_BUILDING) {
		st->building = 1;
		if (!st->fp_ok)
			return unwind_end(st, UNWIND_STOP_NO_TABLE_YET);
	}
	if (!st->fp_ok)
		return unwind_end(st, UNWIND_STOP_NO_CFI);
	return step_fp(st);
}

/* the bpf_loop driver (Linux 5.17+): one frame per call */
static long unwind_step(__u32 i, void *ctx)
{
	struct ustack_walk *st = scratch_walk();

	return st ? unwind_frame(st) : 1;
}

#endif /* CTXPROF_NATIVE_UNWIND_BPF_H */
