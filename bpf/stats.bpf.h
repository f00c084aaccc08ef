/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Per-CPU counter arrays, one per program family, indexed by the family's
 * enum in include/records.h (enum sampler_stat, enum lifecycle_stat).  The
 * collector sums them over CPUs (user/util/percpu_stats.h).  BPF-only.
 */
#ifndef CTXPROF_STATS_BPF_H
#define CTXPROF_STATS_BPF_H

#define STATS_MAP(name, nr)                                                                        \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                                           \
		__uint(max_entries, nr);                                                           \
		__type(key, __u32);                                                                \
		__type(value, __u64);                                                              \
	} name SEC(".maps")

/*
 * stat_add() - for tracing programs: they only disable migration, so on a
 * preemptible kernel another task can run the same program on this CPU in
 * the middle of an increment.
 */
static __always_inline void stat_add(void *map, __u32 stat, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(map, &stat);

	if (v)
		__sync_fetch_and_add(v, n);
}

/*
 * stat_add_unnested() - for perf_event programs: the kernel never runs one
 * inside another on the same CPU (bpf_prog_active), so a plain add on the
 * per-CPU slot is exact and spares a locked instruction per counter.
 */
static __always_inline void stat_add_unnested(void *map, __u32 stat, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(map, &stat);

	if (v)
		*v += n;
}

#endif /* CTXPROF_STATS_BPF_H */
