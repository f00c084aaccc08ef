// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: proc_maps__parse() and proc_maps__find() on hostile text.
 * Beyond "no crash", it checks the invariants lookups rely on.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "processes/proc_maps.h"

static void check_invariants(const struct proc_maps *pm)
{
	size_t i;

	for (i = 0; i < pm->nr; i++) {
		const struct proc_map *m = &pm->maps[i];

		if (m->start >= m->end || strlen(m->path) >= PROC_MAPS_MAX_PATH)
			abort();
		if (i && m->start < pm->maps[i - 1].end)
			abort();
		if (proc_maps__find(pm, m->start) != m || proc_maps__find(pm, m->end - 1) != m)
			abort();
		if (m->end != UINT64_MAX && proc_maps__find(pm, m->end) == m)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_maps *pm;
	uint64_t addr = 0;
	size_t i;

	/* libFuzzer's buffer has no terminator: ASan catches reads past it */
	pm = proc_maps__parse((const char *)data, size);
	if (!pm)
		return 0;
	check_invariants(pm);
	for (i = 0; i + 8 <= size && i < 64; i += 8) {
		memcpy(&addr, data + i, sizeof(addr));
		proc_maps__find(pm, addr);
	}
	proc_maps__free(pm);
	return 0;
}
