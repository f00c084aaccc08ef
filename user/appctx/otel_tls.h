/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * otel_tls - where a process keeps each thread's otel_thread_ctx_v1 (OTEP
 * 4947), as the sampler finds it from the thread pointer (x86-64, TLS
 * variant II: the static TLS blocks lie below fsbase).
 *
 * The variable is found in the .dynsym of the executable and of the
 * libraries the process maps (an STT_TLS symbol; its value is its offset in
 * its module's TLS block).  Then its module's block:
 *  - the executable (local-exec / initial-exec, or a reference the linker
 *    relaxed to them): module 1, its block at tp - round_up(PT_TLS memsz,
 *    PT_TLS align), adjusted as glibc does for a PT_TLS not aligned in the
 *    file, so the variable is at tp + (st_value - that offset);
 *  - a shared library (TLSDESC or general dynamic): where the dynamic
 *    loader put its block.  glibc says it in the library's link_map
 *    (l_tls_offset, l_tls_modid), whose offsets it publishes for debuggers
 *    as the _thread_db_link_map_l_tls_* descriptors in libc's .dynsym; the
 *    link_map list is found through _r_debug (ld.so's .dynsym), and the
 *    library's entry by its l_ld.  A library loaded at start (or dlopen()ed
 *    into the static TLS surplus) has a static offset: tp - l_tls_offset;
 *    one in dynamic TLS is reached through the thread's DTV
 *    (_thread_db_pthread_dtvp, _thread_db_dtv_dtv) with l_tls_modid, and
 *    threads that never touched it have no block yet (counted by the
 *    sampler).  Another C library (musl) publishes no such descriptors: a
 *    library's variable there is unsupported.
 * When several modules define the variable, the one the dynamic linker
 * binds references to is taken: the executable's, else the first library
 * in load (link_map) order.
 *
 * Everything read is the target's: the ELF files are the inodes it maps
 * (safe_open), every count and offset is bounded, the link_map walk stops
 * after OTEL_TLS_MAX_LINK_MAPS entries, and its memory is read through
 * processes/proc_mem.h.  Runs on the caller's thread.
 */
#ifndef CTXPROF_OTEL_TLS_H
#define CTXPROF_OTEL_TLS_H

#include <sys/types.h>
#include "records.h"

struct proc_maps;
struct proc_mem;

#define OTEL_TLS_MAX_FILES     512  /* ELF files of one process looked at */
#define OTEL_TLS_MAX_LINK_MAPS 4096 /* link_map entries walked */

enum otel_tls_status {
	OTEL_TLS_FOUND = 0,
	OTEL_TLS_NO_SYMBOL,   /* no mapped file exports otel_thread_ctx_v1 */
	OTEL_TLS_UNSUPPORTED, /* exported where we cannot locate its block (see above) */
	OTEL_TLS_UNREADABLE,  /* the files or the loader's data could not be read */
};

/**
 * otel_tls__locate() - find where @pid's threads keep otel_thread_ctx_v1.
 * @maps: its mappings, as just read
 * @mem: its memory (the loader's link_map list is read there)
 * @ref: receives the location (exec_id left 0) when found
 * @why: receives a short reason when not found (a static string)
 * Return: enum otel_tls_status.
 */
enum otel_tls_status otel_tls__locate(pid_t pid, const struct proc_maps *maps, struct proc_mem *mem,
				      struct otel_tls_ref *ref, const char **why);

/**
 * otel_tls__static_offset() - glibc's static TLS offset of a module whose
 * block is the first one placed (the executable's): its block starts this
 * many bytes below the thread pointer.  @align 0 counts as 1.
 */
uint64_t otel_tls__static_offset(uint64_t memsz, uint64_t align, uint64_t vaddr);

/**
 * otel_tls__static_offset_above() - the same for the other TLS layout
 * (TLS_DTV_AT_TP: arm64): the first block starts this many bytes above the
 * thread pointer, past glibc's 16-byte TCB.  @align 0 counts as 1.
 */
uint64_t otel_tls__static_offset_above(uint64_t align, uint64_t vaddr);

/**
 * otel_tls__tp_offset() - where a variable at @sym in a block at static
 * TLS offset @off (as the two functions above or link_map.l_tls_offset
 * say) lies from the thread pointer, on the architecture the collector
 * was built for: below it on x86-64, above it on arm64.
 */
int64_t otel_tls__tp_offset(uint64_t sym, uint64_t off);

#endif /* CTXPROF_OTEL_TLS_H */
