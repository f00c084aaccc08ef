/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CPython's call stack as the sampler reads it (bpf/python.bpf.h), and how
 * its frames travel in a sample's user frames to the collector.
 *
 * The path, every step a bpf_probe_read_user of the sampled task:
 *   interp  = *(runtime + interp_head)      _PyRuntime.interpreters.head:
 *                                           the main interpreter
 *   tstate  = interp->threads.head, ->next  the thread states, until the one
 *                                           whose native_thread_id is the
 *                                           sampled tid (kept per tid in a
 *                                           map, checked again each sample)
 *   frame   = tstate->cframe->current_frame the running _PyInterpreterFrame
 *             (3.13 on: tstate->current_frame)
 *   frame->f_code, ->prev_instr, ->is_entry, ->previous ...
 *             (3.13 on: f_executable, a tagged reference from 3.14, and
 *             instr_ptr; no is_entry: see below)
 * The thread state is found by its native thread id rather than through
 * the interpreter's TLS key (pthread_getspecific, whose blocks sit at an
 * offset inside glibc's struct pthread that glibc does not publish): the
 * list is the interpreter's own, every entry is checked against the tid,
 * and a thread without one (a C thread) simply has no Python frames.
 *
 * Offsets change with the version; the collector reads Py_Version from the
 * interpreter (the executable or libpython3.x.so) and gives the sampler one
 * struct python_proc_ref per process, offsets included: for 3.13 and later
 * from the interpreter's own _Py_DebugOffsets (symbols/python_debug_offsets.h),
 * before that from a table (symbols/python_layout.h).
 *
 * Interleaving: one call of _PyEval_EvalFrameDefault runs a chain of
 * Python frames (a Python call from Python stays in the same C call); the
 * first frame of each such call has is_entry set (3.11), or is followed by
 * a shim frame whose f_executable is Py_None (3.13 on: the C call's entry
 * frame, on its C stack; the walk skips it).  The sampler walks the
 * Python frames leaf first and, where the native walk passed a frame in
 * one of [eval_start, eval_end), puts that call's Python frames in its place: the
 * frames from the cursor up to and including the next entry frame.
 *
 * A Python frame takes two user-frame slots, both with PYTHON_FRAME_TAG
 * (bit 62: no user address, which is below 2^57, nor a kernel one, which
 * has bit 63, has it):
 *   PYTHON_FRAME_TAG | code                  the PyCodeObject's address
 *   PYTHON_FRAME_TAG | PYTHON_FRAME_WORD2 | (check << 24) | instr
 * where instr is the sampled instruction's index in code units from
 * co_code_adaptive (PYTHON_INSTR_NONE: not known), and check
 * python_code_check() of what the sampler read from the code object, so a
 * code object freed and another allocated at its address is told apart.
 *
 * Compiles in both worlds: only __u8..__u64, #defines and inline functions.
 */
#ifndef CTXPROF_PYTHON_ABI_H
#define CTXPROF_PYTHON_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define PYTHON_FRAME_TAG   (1ull << 62)
#define PYTHON_FRAME_WORD2 (1ull << 61)
#define PYTHON_INSTR_BITS  24
#define PYTHON_INSTR_MASK  ((1ull << PYTHON_INSTR_BITS) - 1)
#define PYTHON_INSTR_NONE  PYTHON_INSTR_MASK

/* a user frame word that is (half of) a Python frame */
#define PYTHON_FRAME_IS(w)    (((w) & (3ull << 62)) == PYTHON_FRAME_TAG)
#define PYTHON_FRAME_CODE(w)  ((w) & ~(PYTHON_FRAME_TAG | PYTHON_FRAME_WORD2))
#define PYTHON_FRAME_CHECK(w) ((__u32)((w) >> PYTHON_INSTR_BITS))
#define PYTHON_FRAME_INSTR(w) ((__u32)((w)&PYTHON_INSTR_MASK))

/* Python frames one sample takes at most (each takes two user-frame slots);
 * a power of two, for the sampler's index masks */
#define PYTHON_MAX_FRAMES 64
/* ranges of _PyEval_EvalFrameDefault's code a process's layout holds */
#define PYTHON_EVAL_RANGES 3
/* thread states looked through to find a thread's (the rest: not found) */
#define PYTHON_MAX_THREADS 256

/* the shape of the sampler's walk: python_proc_ref.walk, a set of these */
enum python_walk_flags {
	PYTHON_WALK_CFRAME = 1 << 0,   /* the frame is tstate->cframe->current_frame (3.11) */
	PYTHON_WALK_IS_ENTRY = 1 << 1, /* a frame's is_entry byte marks a C call's first frame */
	PYTHON_WALK_SHIM_NONE =
		1 << 2,		     /* a frame whose executable is Py_None is a C call's entry
				      * shim: skipped, the frame before it was the call's first */
	PYTHON_WALK_TAGGED = 1 << 3, /* the executable is a tagged reference (3.14's
				      * _PyStackRef): PYTHON_TAG_MASK masked off */
	PYTHON_WALK_FRAME_OBJECT = 1 << 4, /* 3.9: PyFrameObject chain (f_back), each frame its
					    * own C call, the instruction an int f_lasti */
	PYTHON_WALK_LASTI_BYTES = 1 << 5,  /* f_lasti counts bytes, not code units (3.9) */
	PYTHON_WALK_TID_PTHREAD = 1 << 6,  /* the thread state's id is pthread_self() (the
					    * thread pointer, x86-64 glibc), not the tid (3.9) */
	PYTHON_WALK_311 = PYTHON_WALK_CFRAME | PYTHON_WALK_IS_ENTRY,
	PYTHON_WALK_39 =
		PYTHON_WALK_FRAME_OBJECT | PYTHON_WALK_LASTI_BYTES | PYTHON_WALK_TID_PTHREAD,
	PYTHON_WALK_313 = PYTHON_WALK_SHIM_NONE | PYTHON_WALK_TAGGED,
};

/* a tagged reference's tag: every object is 8-byte aligned, 3.14 uses the low 1-2 bits */
#define PYTHON_TAG_MASK 7ull

/*
 * The offsets and addresses the sampler needs for one process (pid -> this,
 * the python_procs map).  Addresses are the process's own (load bias
 * applied); offsets in bytes.
 */
struct python_proc_ref {
	__u64 runtime;	 /* &_PyRuntime */
	__u64 code_type; /* &PyCode_Type: a frame's f_code must point at one */
	__u64 none_obj;	 /* &_Py_NoneStruct (PYTHON_WALK_SHIM_NONE) */
	/* _PyEval_EvalFrameDefault's code: [start, end) each, its own range first, then parts
	 * a compiler split off it (symbols/python_eval.h); unused ones empty */
	__u64 eval_start[PYTHON_EVAL_RANGES];
	__u64 eval_end[PYTHON_EVAL_RANGES];
	__u32 exec_id;		       /* the image these are of (sample_record.exec_id); 0: any */
	__u32 version;		       /* Py_Version (PY_VERSION_HEX) */
	__u32 walk;		       /* enum python_walk_flags */
	__u16 interp_head;	       /* _PyRuntimeState.interpreters.head */
	__u16 threads_head;	       /* PyInterpreterState.threads.head */
	__u16 tstate_next;	       /* PyThreadState.next */
	__u16 tstate_native_thread_id; /* PyThreadState.native_thread_id (thread_id: TID_PTHREAD) */
	__u16 tstate_frame;	       /* PyThreadState.cframe, or .current_frame (no CFRAME) */
	__u16 cframe_current_frame;    /* _PyCFrame.current_frame (PYTHON_WALK_CFRAME) */
	__u16 frame_code;	       /* _PyInterpreterFrame.f_code / f_executable */
	__u16 frame_previous;	       /* _PyInterpreterFrame.previous */
	__u16 frame_prev_instr;	       /* _PyInterpreterFrame.prev_instr / instr_ptr; f_lasti */
	__u16 frame_is_entry;	       /* _PyInterpreterFrame.is_entry (PYTHON_WALK_IS_ENTRY) */
	__u16 code_type_off;	       /* PyObject.ob_type */
	__u16 code_firstlineno;	       /* PyCodeObject.co_firstlineno */
	__u16 code_filename;	       /* PyCodeObject.co_filename */
	__u16 code_qualname;	       /* PyCodeObject.co_qualname */
	__u16 code_adaptive;	       /* PyCodeObject.co_code_adaptive */
	__u16 pad;
};

/* what the sampler reads of a frame and of a code object, at most */
#define PYTHON_FRAME_READ 80
#define PYTHON_CODE_READ  192

/*
 * The check a Python frame carries: of the code object's first line and
 * the addresses of its file name and qualified name, as the sampler read
 * them.  The collector computes it again from what it reads and names the
 * frame only when the two agree.
 */
static inline __u32 python_code_check(__s32 firstlineno, __u64 filename, __u64 qualname)
{
	__u64 x = (__u64)(__u32)firstlineno * 0x9E3779B97F4A7C15ull;

	x ^= filename * 0xC2B2AE3D27D4EB4Full;
	x ^= (qualname << 29) | (qualname >> 35);
	x ^= x >> 31;
	x *= 0x94D049BB133111EBull;
	return (__u32)(x ^ (x >> 32));
}

#endif /* CTXPROF_PYTHON_ABI_H */
