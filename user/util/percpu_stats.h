/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * percpu_stats - read a BPF per-CPU counter array (bpf/stats.bpf.h) as one
 * total per counter.  Any thread; one bpf() syscall per counter.
 */
#ifndef CTXPROF_PERCPU_STATS_H
#define CTXPROF_PERCPU_STATS_H

#include <stdint.h>

/**
 * percpu_stats__read() - sum counters 0..@nr - 1 of the BPF_MAP_TYPE_PERCPU_ARRAY
 * @map_fd over every possible CPU into @out[0..@nr - 1].
 * Return: 0 or -errno (@out is then partly filled).
 */
int percpu_stats__read(int map_fd, unsigned int nr, uint64_t *out);

#endif /* CTXPROF_PERCPU_STATS_H */
