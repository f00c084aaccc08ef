/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Records shared by the BPF programs (bpf/) and the collector (user/): one
 * definition of every struct that crosses the boundary.
 *
 * Compiles in both worlds: only __u8..__u64, #defines and enums, and nothing
 * included from outside include/.  The BPF side gets the __u* types from
 * vmlinux.h, userspace from <linux/types.h>.
 */
#ifndef CTXPROF_RECORDS_H
#define CTXPROF_RECORDS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "unwind.h"
#include "otel_abi.h"
#include "go_abi.h"
#include "python_abi.h"

/* kernel frames kept per sample; the kernel's own limit is 127 */
#define SAMPLER_MAX_KSTACK 64
/* user frames kept per sample */
#define SAMPLER_MAX_USTACK 127
#define SAMPLER_MAX_FRAMES (SAMPLER_MAX_KSTACK + SAMPLER_MAX_USTACK)

#define SAMPLER_COMM_LEN 16

/* record flags */
#define SAMPLE_F_USTACK_TRUNCATED (1u << 0) /* user stack hit SAMPLER_MAX_USTACK */
#define SAMPLE_F_KSTACK_TRUNCATED (1u << 1) /* kernel stack hit SAMPLER_MAX_KSTACK */
#define SAMPLE_F_CONTEXT	  (1u << 2) /* span_id, local_root_span_id and tags are valid */
/* the thread's slot was read and holds no context: it is in no span (or,
 * for an instant, its context is being written) */
#define SAMPLE_F_CONTEXT_NONE (1u << 3)
#define SAMPLE_F_OTEL	      (1u << 4) /* an OpenTelemetry thread record follows the frames */
#define SAMPLE_F_GO_LABELS    (1u << 5) /* the goroutine's labels follow (go_abi.h) */
#define SAMPLE_F_PYTHON	      (1u << 6) /* Python frames among the user frames (python_abi.h) */
/* not a CPU sample: a wait, its struct offcpu_trailer ends the record */
#define SAMPLE_F_OFFCPU (1u << 7)
/* the flags that describe the stack (a stored trace's), not the context */
#define SAMPLE_STACK_FLAGS(f)                                                                      \
	((f) & ~(SAMPLE_F_CONTEXT | SAMPLE_F_CONTEXT_NONE | SAMPLE_F_OTEL | SAMPLE_F_GO_LABELS))
/* bits 8-15: why the user stack ends (enum unwind_stop) */
#define SAMPLE_USTOP_SHIFT  8
#define SAMPLE_USTOP_MASK   (0xffu << SAMPLE_USTOP_SHIFT)
#define SAMPLE_USTOP(flags) (((flags)&SAMPLE_USTOP_MASK) >> SAMPLE_USTOP_SHIFT)
/* bits 16-31 are the collector's: it files a stored stack under the
 * generation of its process's mappings there (processes/process_state.h) */

/*
 * A user frame other than the first with this bit set is an exact
 * instruction address (the interrupted pc a signal frame saved), not a
 * return address; user addresses never have it (x86-64: below 2^57).
 */
#define SAMPLE_FRAME_EXACT (1ull << 63)

/* tag ids carried per sample: as many as a context slot has (include/ctxprof_abi.h) */
#define SAMPLER_NR_TAGS 10

/*
 * One CPU sample as written into the ring buffer of the CPU it was taken on.
 * The record is variable-length: the header is followed by nr_kframes kernel
 * frames and then nr_uframes user frames, leaf first, only those captured.
 * The first user frame is the interrupted instruction pointer; the others
 * are return addresses, but for those marked SAMPLE_FRAME_EXACT.
 */
struct sample_record {
	__u64 time_ns;	  /* bpf_ktime_get_ns() (CLOCK_MONOTONIC) */
	__u32 pid;	  /* thread group id, what userspace calls the pid */
	__u32 tid;	  /* kernel task id, what userspace calls the tid */
	__u32 cpu;	  /* CPU the sample was taken on */
	__u16 nr_kframes; /* kernel frames following the header */
	__u16 nr_uframes; /* user frames following the kernel frames */
	__u32 flags;	  /* SAMPLE_F_* */
	/* the process image: the task's self_exec_id (low 32 bits), which
	 * every exec increments and fork and clone copy, so (pid, exec_id)
	 * names what one exec made of a process */
	__u32 exec_id;
	char comm[SAMPLER_COMM_LEN]; /* thread name at sample time */
	/* the thread's trace context, read from its libctxprof slot; all zero
	 * unless flags has SAMPLE_F_CONTEXT */
	__u64 span_id;
	__u64 local_root_span_id;
	__u32 tags[SAMPLER_NR_TAGS]; /* interned tag ids, 0: unset */
	__u64 frames[];		     /* nr_kframes + nr_uframes addresses */
};

_Static_assert(sizeof(struct sample_record) == 104, "sample_record ABI");
_Static_assert(__builtin_offsetof(struct sample_record, span_id) == 48, "sample_record ABI");
_Static_assert(__builtin_offsetof(struct sample_record, tags) == 64, "sample_record ABI");
_Static_assert(__builtin_offsetof(struct sample_record, frames) == 104, "sample_record ABI");

#define SAMPLE_RECORD_MAX_SIZE (sizeof(struct sample_record) + SAMPLER_MAX_FRAMES * sizeof(__u64))

/*
 * With SAMPLE_F_OTEL, the frames are followed by the thread's OpenTelemetry
 * context record (include/otel_abi.h) as the sampler read it, valid == 1,
 * and its attrs_size attribute bytes, at most OTEL_THREAD_ATTRS_MAX (a
 * record announcing more, or whose attributes could not be read, comes with
 * attrs_size 0: its ids are right, its attributes unknown).  The record
 * size covers it.
 */
#define SAMPLE_OTEL_MAX_SIZE	    (sizeof(struct otel_thread_record) + OTEL_THREAD_ATTRS_MAX)
#define SAMPLE_RECORD_OTEL_MAX_SIZE (SAMPLE_RECORD_MAX_SIZE + SAMPLE_OTEL_MAX_SIZE)

/*
 * With SAMPLE_F_GO_LABELS, the goroutine's labels (struct go_labels_record
 * and its entries) follow, 8-byte aligned, after the OpenTelemetry record
 * or else the frames.
 */
#define SAMPLE_GO_MAX_SIZE	    (7 + sizeof(struct go_labels_record) + GO_LABELS_BYTES)
#define SAMPLE_RECORD_FULL_MAX_SIZE (SAMPLE_RECORD_OTEL_MAX_SIZE + SAMPLE_GO_MAX_SIZE)

/*
 * With SAMPLE_F_OFFCPU the record is a wait, not a CPU sample: its stacks
 * and context (the OpenTelemetry record and goroutine labels too, as their
 * flags say) are the thread's as it left the CPU (they are taken then),
 * time_ns when it came back, and the record's last bytes are this trailer.
 */
struct offcpu_trailer {
	/* off the CPU, switch out to switch in: this wait's, and those of the
	 * thread's waits sampled away since its last recorded one */
	__u64 duration_ns;
	/* this wait's alone (what a timeline draws: it ended at time_ns) */
	__u64 wait_ns;
	__u32 weight; /* the waits it stands for (1 unless some were sampled away) */
	__u32 state;  /* the task's state as it left (TASK_INTERRUPTIBLE 1, ...) */
};

_Static_assert(sizeof(struct offcpu_trailer) == 24, "offcpu_trailer ABI");

#define SAMPLE_RECORD_OFFCPU_MAX_SIZE (SAMPLE_RECORD_FULL_MAX_SIZE + sizeof(struct offcpu_trailer))

/*
 * Per-CPU counters kept by the sampler, indexed by enum sampler_stat.
 * SAMPLER_STAT_SAMPLES counts every sample of a profiled task; each of those
 * either reaches a ring (SAMPLER_STAT_EMITTED) or is dropped with exactly one
 * reason from the DROP range, so
 *   SAMPLES == EMITTED + sum(DROP_*).
 * Stack errors do not drop the sample: it is emitted with the frames that
 * could be read and the error is counted beside it.
 */
enum sampler_stat {
	SAMPLER_STAT_SAMPLES = 0,     /* samples taken on a profiled task */
	SAMPLER_STAT_EMITTED,	      /* records written into a ring */
	SAMPLER_STAT_DROP_RING_FULL,  /* bpf_ringbuf_output failed: ring full */
	SAMPLER_STAT_DROP_NO_RING,    /* no ring registered for this CPU */
	SAMPLER_STAT_DROP_NO_SCRATCH, /* per-CPU scratch lookup failed */
	SAMPLER_STAT_USTACK_ERR, /* bpf_get_stack(user) failed; sample kept without user frames */
	SAMPLER_STAT_KSTACK_ERR, /* bpf_get_stack(kernel) failed; sample kept without kernel frames
				  */
	SAMPLER_STAT_FILTERED,	 /* ticks on other tasks (not lost: not profiled) */
	SAMPLER_STAT_IDLE,	 /* ticks on an idle CPU (the idle task; some kernels take none) */
	/* trace context, for samples of threads with a registered slot; the
	 * sample is kept in every case, with context only when CTX_OK */
	SAMPLER_STAT_CTX_OK,	   /* a valid context was read */
	SAMPLER_STAT_CTX_EMPTY,	   /* checksum 0: no context set, or a write in progress */
	SAMPLER_STAT_CTX_TORN,	   /* checksum mismatch: a torn read, rejected */
	SAMPLER_STAT_CTX_READ_ERR, /* the slot could not be read (unmapped, paged out) */
	SAMPLER_STAT_CTX_STALE,	   /* the slot changed hands since the collector mapped it */
	/* user stacks: one count per sample by why its stack ends, at
	 * SAMPLER_STAT_USTOP_FIRST + enum unwind_stop ... */
	SAMPLER_STAT_USTOP_FIRST,
	SAMPLER_STAT_USTOP_LAST = SAMPLER_STAT_USTOP_FIRST + UNWIND_STOP_MAX - 1,
	/* ... and user frames by how they were unwound (not counting the leaf) */
	SAMPLER_STAT_UFRAMES_CFI,    /* a CFI row: CFA from rsp or rbp */
	SAMPLER_STAT_UFRAMES_PLT,    /* a PLT stub's rule */
	SAMPLER_STAT_UFRAMES_SIGNAL, /* through a signal frame */
	SAMPLER_STAT_UFRAMES_FP,     /* by frame pointer (no CFI for that code) */
	/* OpenTelemetry thread context (OTEP 4947), for samples of processes
	 * whose TLS variable the collector located; the sample is kept in
	 * every case, with the record only when OTEL_OK */
	SAMPLER_STAT_OTEL_OK,	     /* a record with valid == 1 was read */
	SAMPLER_STAT_OTEL_NONE,	     /* the TLS pointer is NULL: no context attached */
	SAMPLER_STAT_OTEL_INVALID,   /* the record's valid byte is not 1 */
	SAMPLER_STAT_OTEL_READ_ERR,  /* the TLS variable or the record is unreadable */
	SAMPLER_STAT_OTEL_NO_BLOCK,  /* dynamic TLS not allocated for the thread yet */
	SAMPLER_STAT_OTEL_STALE,     /* the location is from another image of the pid */
	SAMPLER_STAT_OTEL_ATTRS_BIG, /* attrs_size past OTEL_THREAD_ATTRS_MAX: ids only */
	SAMPLER_STAT_OTEL_ATTRS_ERR, /* the attributes are unreadable: ids only */
	/* Go goroutine labels, for samples of processes whose runtime layout
	 * the collector knows (go_abi.h); the sample is kept in every case,
	 * with the labels only when GO_OK */
	SAMPLER_STAT_GO_OK,	   /* labels read */
	SAMPLER_STAT_GO_NONE,	   /* no labels: none set, or no goroutine (scheduler, C thread) */
	SAMPLER_STAT_GO_TRUNCATED, /* of GO_OK, or all of them too long: labels left out */
	SAMPLER_STAT_GO_READ_ERR,  /* g, m, the map or a string unreadable */
	SAMPLER_STAT_GO_BAD_MAP,   /* a map past the walk's bounds, or not matching its count */
	SAMPLER_STAT_GO_STALE,	   /* the layout is from another image of the pid */
	/* Go stack switches (UNWIND_CMD_GO_SYSTEM_STACK) met by the native walk:
	 * followed onto the goroutine's saved registers, or the stack ends there
	 * (UNWIND_STOP_GO_SYSTEM_STACK) for one reason */
	SAMPLER_STAT_GO_SWITCH_OK,	     /* followed (bpf/go_stack.bpf.h) */
	SAMPLER_STAT_GO_SWITCH_OWN_FRAME,    /* sampled in one not switched (yet): its own frame */
	SAMPLER_STAT_GO_SWITCH_OTHER,	     /* a switch not followed (asmcgocall, gogo, ...) */
	SAMPLER_STAT_GO_SWITCH_NO_LAYOUT,    /* a process whose runtime layout is unknown */
	SAMPLER_STAT_GO_SWITCH_NO_GOROUTINE, /* not on g0, or no goroutine of this thread */
	SAMPLER_STAT_GO_SWITCH_READ_ERR,     /* g, m, a g's stack or gobuf unreadable */
	SAMPLER_STAT_GO_SWITCH_BAD_STATE, /* a saved sp outside its stack, pc 0, a second switch */
	/* CPython frames (python_abi.h), for samples of processes whose
	 * interpreter the collector recognised; the sample keeps its native
	 * frames in every case, with Python frames in place when PY_OK */
	SAMPLER_STAT_PY_OK,	   /* Python frames read and placed */
	SAMPLER_STAT_PY_FRAMES,	   /* Python frames placed, in all */
	SAMPLER_STAT_PY_NO_THREAD, /* the thread has no thread state (a C thread, or new) */
	SAMPLER_STAT_PY_IDLE,	   /* a thread state with no frame running (not in Python) */
	SAMPLER_STAT_PY_READ_ERR,  /* a thread state, frame or code object unreadable */
	SAMPLER_STAT_PY_BAD_CODE,  /* a frame's f_code is not a code object: walk cut there */
	SAMPLER_STAT_PY_LOOP,	   /* a frame's previous is a frame just walked: walk cut there */
	SAMPLER_STAT_PY_TRUNCATED, /* more than PYTHON_MAX_FRAMES, or no room in the stack */
	SAMPLER_STAT_PY_UNPLACED,  /* frames with no evaluation frame left to stand for (kept at
				    * the root end) */
	SAMPLER_STAT_PY_STALE,	   /* the layout is from another image of the pid */
	/* off-CPU waits (--off-cpu) of profiled threads: each voluntary switch
	 * out is captured or sampled away; each capture, at the switch back in,
	 * is emitted, below the threshold, or dropped with a reason (or still
	 * waiting at the end) */
	SAMPLER_STAT_OFF_SWITCHES,	 /* voluntary switches out */
	SAMPLER_STAT_OFF_SAMPLED_AWAY,	 /* not captured: over the budget (the others weigh more) */
	SAMPLER_STAT_OFF_CAPTURED,	 /* stacks and context taken at the switch out */
	SAMPLER_STAT_OFF_EMITTED,	 /* records written into a ring */
	SAMPLER_STAT_OFF_BELOW,		 /* back within --off-cpu-threshold: not recorded */
	SAMPLER_STAT_OFF_DROP_RING_FULL, /* the ring was full */
	SAMPLER_STAT_OFF_DROP_NO_STORAGE, /* no task storage for the capture */
	/* captures whose switch back in the kernel did not report: ended at
	 * the thread's next switch out, less the CPU time it ran since */
	SAMPLER_STAT_OFF_UNREPORTED_IN,
	SAMPLER_STAT_MAX,
};

#define SAMPLER_STAT_DROP_FIRST SAMPLER_STAT_DROP_RING_FULL
#define SAMPLER_STAT_DROP_LAST	SAMPLER_STAT_DROP_NO_SCRATCH

/*
 * Value of the sampler's ctx_slots map (key: the host tid), written by
 * user/appctx/app_context.c for each slot whose claim it verified.  The
 * collector brings the map up to date only at its polls; in between, the
 * thread may leave the slot and another one recycle it.  So the sampler
 * takes the slot's context only while the slot still says what the
 * collector saw: state Active, this generation and this tid; else the
 * sample has no context (SAMPLER_STAT_CTX_STALE).
 */
struct ctx_slot_ref {
	__u64 addr;	  /* the slot's address in the thread's process */
	__u32 tid;	  /* the slot's tid claim as it holds it (app's pid namespace) */
	__u32 generation; /* the slot's generation the collector saw Active */
};

_Static_assert(sizeof(struct ctx_slot_ref) == 16, "ctx_slot_ref ABI");

/* how the sampler finds a thread's otel_thread_ctx_v1 from its thread pointer */
enum otel_tls_mode {
	OTEL_TLS_STATIC = 1, /* static TLS: the variable is at tp + offset */
	OTEL_TLS_DTV,	     /* dynamic TLS: at (*(*(tp + dtv_ptr) + dtv_slot)) + offset */
};

/*
 * Value of the sampler's otel_tls map (key: the host pid), written by
 * user/appctx/otel_context.c once it located the process's TLS variable
 * (user/appctx/otel_tls.c).  The thread pointer is the task's fsbase
 * (x86-64, TLS variant II).
 */
struct otel_tls_ref {
	__s64 offset;	/* see enum otel_tls_mode */
	__u32 exec_id;	/* the image it was located in (sample_record.exec_id); 0: any */
	__u32 mode;	/* enum otel_tls_mode */
	__u32 dtv_ptr;	/* OTEL_TLS_DTV: where the thread's DTV pointer is, from tp */
	__u32 dtv_slot; /* OTEL_TLS_DTV: the module's DTV entry, bytes from the DTV */
};

_Static_assert(sizeof(struct otel_tls_ref) == 24, "otel_tls_ref ABI");

/*
 * Thread lifecycle records, written by bpf/lifecycle.bpf.c and applied by
 * user/processes/lifecycle.c: one fixed-size record per fork, thread creation, exec,
 * exit and rename, all into ONE BPF ring buffer (the lifecycle ring), so the
 * collector sees them in the order the kernel reserved them.
 */
#define LIFECYCLE_COMM_LEN 16
/* exec: first bytes of the path given to execve, NUL-terminated */
#define LIFECYCLE_FILENAME_LEN 128

enum lifecycle_type {
	LIFECYCLE_FORK = 1, /* a new process: clone without CLONE_THREAD (fork, vfork, ...) */
	LIFECYCLE_THREAD,   /* a new thread in the creator's process: clone with CLONE_THREAD */
	LIFECYCLE_EXEC,	    /* the process replaced its image (sched_process_exec) */
	LIFECYCLE_EXIT,	    /* one thread exited (sched_process_exit: fires for every thread) */
	LIFECYCLE_RENAME,   /* a thread's comm changed (task_rename: prctl, pthread_setname_np) */
	LIFECYCLE_TYPE_MAX,
};

/* record flags */
#define LIFECYCLE_F_GROUP_DEAD (1u << 0) /* exit: the last live thread of its process */
#define LIFECYCLE_F_KTHREAD    (1u << 1) /* the subject is a kernel thread (PF_KTHREAD) */

/*
 * One lifecycle event.  "Subject" is the thread the event is about: the new
 * child for FORK/THREAD, the exec'ing, exiting or renamed thread otherwise
 * (a rename may come from another thread writing /proc/PID/task/TID/comm).
 *
 * Times are CLOCK_MONOTONIC (bpf_ktime_get_ns), start times are the kernel's
 * start_boottime (CLOCK_BOOTTIME), the clock /proc/PID/stat field 22 counts
 * in ticks: together with the id they name one incarnation of a thread or a
 * process, so a pid that was reused is not mistaken for the one that died.
 *
 * EXEC: ptid differs from tid when a thread other than the leader exec'd:
 * the kernel gave it the leader's tid (and start time) in de_thread().
 */
struct lifecycle_record {
	__u64 time_ns;	 /* when the event happened (bpf_ktime_get_ns) */
	__u64 start_ns;	 /* subject thread's start_boottime */
	__u64 pstart_ns; /* subject's group leader start_boottime: the process's */
	__u64 cgroup_id; /* subject's cgroup v2 id (kernfs node id), 0 if none */
	__u32 type;	 /* enum lifecycle_type */
	__u32 flags;	 /* LIFECYCLE_F_* */
	__u32 pid;	 /* subject's thread group id (what userspace calls pid) */
	__u32 tid;	 /* subject's task id */
	__u32 ppid;	 /* subject's parent process (real_parent's tgid) */
	__u32 ptid;	 /* FORK/THREAD: creating thread; EXEC: tid before exec; else 0 */
	__u32 exec_id;	 /* subject's self_exec_id, low 32 bits (sample_record.exec_id) */
	/* FORK/THREAD: the creating thread's thread group, whose address space
	 * the child copied or shares (not ppid under CLONE_PARENT); else 0 */
	__u32 ptgid;
	char comm[LIFECYCLE_COMM_LEN];	       /* subject's comm; RENAME: the new one */
	char filename[LIFECYCLE_FILENAME_LEN]; /* EXEC: bprm->filename, cut; else "" */
	/* EXEC: the file the new image runs (bprm->file: a script's
	 * interpreter), what /proc/PID/exe names: its inode and its device in
	 * the kernel's encoding (major << 20 | minor); else 0 */
	__u64 exe_ino;
	__u32 exe_dev;
	__u32 pad;
};

_Static_assert(sizeof(struct lifecycle_record) == 224, "lifecycle_record ABI");
_Static_assert(__builtin_offsetof(struct lifecycle_record, comm) == 64, "lifecycle_record ABI");

/*
 * Per-CPU counters kept by the lifecycle programs, indexed by enum
 * lifecycle_stat.  Every tracepoint hit is counted in EVENTS and then either
 * reaches the ring (EMITTED) or is dropped with exactly one reason, so
 *   EVENTS == EMITTED + sum(DROP_*).
 * FILENAME_ERR does not drop: the exec record is sent with an empty filename.
 */
enum lifecycle_stat {
	LIFECYCLE_STAT_EVENTS = 0,     /* tracepoint hits */
	LIFECYCLE_STAT_EMITTED,	       /* records submitted to the ring */
	LIFECYCLE_STAT_DROP_RING_FULL, /* bpf_ringbuf_reserve failed: ring full */
	LIFECYCLE_STAT_DROP_BAD_COMM,  /* rename: the new comm could not be read */
	LIFECYCLE_STAT_FILENAME_ERR,   /* exec: filename unreadable; sent with "" */
	LIFECYCLE_STAT_MAX,
};

#define LIFECYCLE_STAT_DROP_FIRST LIFECYCLE_STAT_DROP_RING_FULL
#define LIFECYCLE_STAT_DROP_LAST  LIFECYCLE_STAT_DROP_BAD_COMM

#endif /* CTXPROF_RECORDS_H */
