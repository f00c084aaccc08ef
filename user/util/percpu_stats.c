// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "util/percpu_stats.h"

int percpu_stats__read(int map_fd, unsigned int nr, uint64_t *out)
{
	int cpu, nr_cpus = libbpf_num_possible_cpus(), err = 0;
	uint64_t *vals;
	__u32 key;

	if (nr_cpus <= 0)
		return nr_cpus ? nr_cpus : -ENODEV;
	vals = calloc(nr_cpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (key = 0; key < nr; key++) {
		out[key] = 0;
		if (bpf_map_lookup_elem(map_fd, &key, vals)) {
			err = -errno;
			break;
		}
		for (cpu = 0; cpu < nr_cpus; cpu++)
			out[key] += vals[cpu];
	}
	free(vals);
	return err;
}
