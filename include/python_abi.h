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
 *   frame->f_code, ->prev_instr, ->is_entry, ->previous ...
 * The thread state is found by its native thread id rather than through
 * the interpreter's TLS key (pthread_getspecific, whose blocks sit at an
 * offset inside glibc's struct pthread that glibc does not publish): the
 * list is the interpreter's own, every entry is checked against the tid,
 * and a thread without one (a C thread) simply has no Python frames.
 *
 * Offsets change with the version; the collector reads Py_Version from the
 * interpreter (the executable or libpython3.x.so) and gives the sampler one
 * struct python_proc_ref per process, offsets included (symbols/python_layout.h
 * has the table and where each number comes from).
 *
 * Interleaving: one call of _PyEval_EvalFrameDefault runs a chain of
 * Python frames (a Python call from Python stays in the same C call); the
 * first frame of each such call has is_entry set.  The sampler walks the
 * Python frames leaf first and, where the native walk passed a frame in
 * [eval_start, eval_end), puts that call's Python frames in its place: the
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
/* thread states looked through to find a thread's (the rest: not found) */
#define PYTHON_MAX_THREADS 256

/* versions the sampler's walk knows the shape of */
enum python_walk_kind {
	PYTHON_WALK_311 = 1, /* 3.11: tstate->cframe->current_frame, is_entry */
};

/*
 * The offsets and addresses the sampler needs for one process (pid -> this,
 * the python_procs map).  Addresses are the process's own (load bias
 * applied); offsets in bytes.
 */
struct python_proc_ref {
	__u64 runtime;		       /* &_PyRuntime */
	__u64 code_type;	       /* &PyCode_Type: a frame's f_code must point at one */
	__u64 eval_start;	       /* _PyEval_EvalFrameDefault's first byte */
	__u64 eval_end;		       /* one past its last */
	__u32 exec_id;		       /* the image these are of (sample_record.exec_id); 0: any */
	__u32 version;		       /* Py_Version (PY_VERSION_HEX) */
	__u32 walk;		       /* enum python_walk_kind */
	__u16 interp_head;	       /* _PyRuntimeState.interpreters.head */
	__u16 threads_head;	       /* PyInterpreterState.threads.head */
	__u16 tstate_next;	       /* PyThreadState.next */
	__u16 tstate_native_thread_id; /* PyThreadState.native_thread_id */
	__u16 tstate_cframe;	       /* PyThreadState.cframe */
	__u16 cframe_current_frame;    /* _PyCFrame.current_frame */
	__u16 frame_code;	       /* _PyInterpreterFrame.f_code */
	__u16 frame_previous;	       /* _PyInterpreterFrame.previous */
	__u16 frame_prev_instr;	       /* _PyInterpreterFrame.prev_instr */
	__u16 frame_is_entry;	       /* _PyInterpreterFrame.is_entry */
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
