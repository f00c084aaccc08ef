/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * python_proc - the collector's side of CPython frames
 * (include/python_abi.h): which processes run an interpreter whose layout
 * we know, and the names of the code objects their samples carry.
 *
 * A subscriber of process mappings on the main thread, told of the first
 * read of every image (process_state_subscriber.first_read):
 * python_procs__changed() looks for the interpreter among the image's
 * mappings (the executable, else a mapped libpython3.x.so: a program that
 * embeds it), reads from its ELF file (elf/elf_file.h, bounded) the
 * symbols the walk needs (_PyRuntime, _PyEval_EvalFrameDefault and its
 * size, PyCode_Type, PyUnicode_Type, PyBytes_Type, _Py_NoneStruct) and
 * Py_Version, takes the version's layout (3.13 on: the file's own
 * _Py_DebugOffsets, symbols/python_debug_offsets.h; before: the table,
 * symbols/python_layout.h) and puts the process's
 * struct python_proc into the sampler's map.  A layout that fails its
 * checks against the file (its own type sizes), debug offsets that fail
 * theirs, a version without a layout, a free-threaded build or a file
 * missing a symbol is counted (by why) and said once a run for each
 * version: its samples keep their native frames.  Each second,
 * python_procs__poll() takes the images gone out of the map.
 *
 * Naming, at export: python_proc__frame() names a frame's code object from
 * the process's memory (processes/proc_mem.h: only anonymous and private
 * writable memory is read) through symbols/python_code.h, the target's
 * structures read as hostile input, and keeps the name per (address,
 * check) so each code object is read once; a code object whose check no
 * longer matches (freed, its address reused) is not named, counted.  The
 * cache is charged to the symbolizer's budget (--symbol-memory), as perf
 * maps are: what does not fit is not kept.
 *
 * Main thread only (the changes, the polls, the export and the release run
 * there).
 */
#ifndef CTXPROF_PYTHON_PROC_H
#define CTXPROF_PYTHON_PROC_H

#include <stdbool.h>
#include <stdint.h>

struct mappings;
struct proc_maps;
struct process_state;
struct python_proc;
struct python_procs;
struct symbolizer;

struct python_procs_stats {
	uint64_t processes;	      /* images whose Python frames the sampler reads */
	uint64_t unsupported_version; /* interpreters of a version without a layout */
	uint64_t unsupported_build;   /* missing a symbol the walk needs, or free-threaded */
	uint64_t bad_layout;	      /* a layout refused: _Py_DebugOffsets or the file's own
				       * type sizes failed a check */
	uint64_t unreadable;	      /* interpreter files that could not be opened or read */
	uint64_t map_full;	      /* the sampler's map had no room */
	/* naming, at export */
	uint64_t named;		  /* code objects read and named */
	uint64_t stale;		  /* frames whose code object changed since the sample */
	uint64_t unreadable_code; /* code objects unreadable: the process gone, or bad memory */
	uint64_t malformed;	  /* code objects whose structures did not hold together */
	uint64_t over_budget;	  /* names not kept: past the symbol memory budget */
	uint64_t retried;	  /* of @named, those a first read had failed (a read
				   * again, at most once a second) */
};

/* one Python frame, named; strings live until the next call on the same process */
struct python_frame {
	const char *function; /* co_qualname; a bracketed reason when not named */
	const char *file;     /* co_filename; NULL when not named */
	int32_t line;	      /* of the sampled instruction (one without a line: start_line) */
	int32_t start_line;   /* co_firstlineno */
	bool named;
};

/**
 * python_procs__new() - @map_fd: the sampler's pid -> python_proc map
 * (sampler__python_map_fd()); @sym: whose budget names are charged to;
 * @verbose: say on stderr why an interpreter is not read.
 * Return: NULL with errno set.  Pair with python_procs__free().
 */
struct python_procs *python_procs__new(int map_fd, struct symbolizer *sym, int verbose);

/**
 * python_procs__changed() - the process_state_subscriber's changed (ctx:
 * the python_procs; main_thread, first_read): look at @st's mappings in
 * @all, once per image.
 */
void python_procs__changed(void *ctx, struct process_state *st, struct mappings *snap,
			   const struct proc_maps *all);

/**
 * python_procs__look() - look at @st's mappings now (read from /proc),
 * unless it was looked at: for an image with Python frames in its samples
 * whose first read did not come (a forked child inherits its parent's
 * mappings, and the sampler its parent's layout meanwhile).
 */
void python_procs__look(struct python_procs *pp, struct process_state *st);

/**
 * python_procs__poll() - once a second: the retired images' entries leave
 * the map; a live one's code objects whose naming failed are read again.
 */
void python_procs__poll(struct python_procs *pp);

/**
 * python_proc__frame() - name the Python frame whose two words (include/
 * python_abi.h) are @w1, @w2, of @p's process (NULL: not a process we
 * read, the frame is named by its reason only).
 */
void python_proc__frame(struct python_procs *pp, struct python_proc *p, uint64_t w1, uint64_t w2,
			struct python_frame *out);

/**
 * python_proc__prefetch() - name the code object of the Python frame @w1,
 * @w2 of @p's process now, while the process lives (the drains announce
 * what they see: sampling/drain.h drains__recent_codes()), so the export
 * finds it named even after the process exited.
 */
void python_proc__prefetch(struct python_procs *pp, struct python_proc *p, uint64_t w1,
			   uint64_t w2);

/** python_proc__release() - @st's reader goes with its image; accepts NULL. */
void python_proc__release(struct python_proc *p);

void python_procs__stats(const struct python_procs *pp, struct python_procs_stats *st);

/** python_procs__free() - after every state released its reader; accepts NULL. */
void python_procs__free(struct python_procs *pp);

#endif /* CTXPROF_PYTHON_PROC_H */
