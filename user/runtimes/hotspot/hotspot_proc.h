/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hotspot_proc - the collector's side of a HotSpot JVM: JIT frames named
 * from the JVM's own tables, with no profiler flag.
 *
 * hotspot_proc__open() finds libjvm.so among a process's mappings, reads
 * from its ELF file (elf/elf_file.h, bounded) the dynamic symbols of the
 * VMStructs exports, reads their values from the process and parses the
 * tables (runtimes/hotspot/vmstructs.h).  hotspot_proc__name() then names a
 * pc in the code cache: the CodeHeap holding it, the block that starts
 * there through the heap's segment map, the CodeBlob; an nmethod by its
 * Method (holder class and method name Symbols: `package.Class.method`),
 * any other blob by its own name (the interpreter, stubs).  Every structure
 * is read from the process (processes/proc_mem.h: anonymous and private
 * writable memory only; libjvm's read-only data from its file) as hostile
 * input: lengths bounded, a block not in use or a pc outside its blob is
 * not named, counted.  Names are kept per (nmethod address, compile id,
 * Method*): a blob freed and reused by another method is read again.
 *
 * What it cannot know: the naming runs at export, up to an interval after
 * the sample; code freed and reused in between by another method is named
 * as the newcomer (a JIT's code cache rarely frees hot code).
 *
 * One thread at a time per hotspot_proc (the exporter's).
 */
#ifndef CTXPROF_HOTSPOT_PROC_H
#define CTXPROF_HOTSPOT_PROC_H

#include <stdint.h>
#include <sys/types.h>

#include "runtimes/hotspot/vmstructs.h"

struct hotspot_proc;
struct proc_maps;

struct hotspot_stats {
	uint64_t jvms;			       /* JVMs whose tables were read */
	uint64_t refused[VMSTRUCTS_ERROR_MAX]; /* layouts refused, by why */
	uint64_t unreadable;		       /* libjvm.so files or exports unreadable */
	uint64_t frames_named;		       /* frames named as a Java method */
	uint64_t frames_blob;		       /* frames named by a non-method blob's name */
	uint64_t frames_unnamed;	       /* pcs in the code cache not named */
	uint64_t methods_read;		       /* methods read (cache misses) */
};

/**
 * hotspot_proc__open() - the JVM in process @pid, whose mappings are @all.
 * @stats: counted into (refusals, unreadable files)
 * @verbose: say on stderr why a JVM's tables are refused
 * Return: NULL (errno ENOENT: no libjvm.so mapped; else the JVM is not read,
 * counted).  Pair with hotspot_proc__free().
 */
struct hotspot_proc *hotspot_proc__open(pid_t pid, const struct proc_maps *all,
					struct hotspot_stats *stats, int verbose);

/**
 * hotspot_proc__name() - the name of the code at @pc, an address in an
 * anonymous executable mapping.
 * Return: the name (valid until the next call on @hp), or NULL when @pc is
 * in none of the JVM's code heaps (other JIT code), or could not be named
 * (counted in frames_unnamed): the perf map's then, if there is one.
 */
const char *hotspot_proc__name(struct hotspot_proc *hp, uint64_t pc, struct hotspot_stats *stats);

/** hotspot_proc__free() - accepts NULL. */
void hotspot_proc__free(struct hotspot_proc *hp);

#endif /* CTXPROF_HOTSPOT_PROC_H */
