// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * progstat - run time statistics of loaded perf_event BPF programs.
 *
 * Prints "<id> <name> <run_cnt> <run_time_ns>" for every BPF program of
 * type perf_event; with --all, every program, its type appended
 * ("<id> <name> <run_cnt> <run_time_ns> <type>", e.g. tracing, raw_tracepoint,
 * kprobe).  Needs kernel.bpf_stats_enabled=1 for non-zero numbers.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

int main(int argc, char **argv)
{
	bool all = argc > 1 && !strcmp(argv[1], "--all");
	struct bpf_prog_info info;
	const char *type;
	__u32 id = 0, len;
	int fd;

	while (!bpf_prog_get_next_id(id, &id)) {
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
			close(fd);
			continue;
		}
		if (all) {
			type = libbpf_bpf_prog_type_str(info.type);
			printf("%u %s %llu %llu %s\n", id, info.name[0] ? info.name : "-",
			       (unsigned long long)info.run_cnt,
			       (unsigned long long)info.run_time_ns, type ? type : "unknown");
		} else if (info.type == BPF_PROG_TYPE_PERF_EVENT) {
			printf("%u %s %llu %llu\n", id, info.name, (unsigned long long)info.run_cnt,
			       (unsigned long long)info.run_time_ns);
		}
		close(fd);
	}
	return 0;
}
