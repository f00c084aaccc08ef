// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: proc_scan__parse_stat() on hostile /proc/PID/stat text
 * (a process names itself: its comm may hold ')', spaces and newlines).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "processes/proc_scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_stat ps;

	/* libFuzzer's buffer has no terminator: ASan catches reads past it */
	if (proc_scan__parse_stat((const char *)data, size, &ps))
		return 0;
	if (!ps.pid || strnlen(ps.comm, sizeof(ps.comm)) >= sizeof(ps.comm) || ps.state == ' ' ||
	    ps.state == '\n')
		abort();
	return 0;
}
