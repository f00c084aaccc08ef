// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwind_table_bench - what building an unwind table costs, per file: wall
 * time, CPU time, the most memory the build held at once (its budget's
 * peak), rows, distinct rules, and the memory the rows take in the BPF
 * array (8 bytes a row).  The best of three builds is printed.
 *
 * Usage: unwind_table_bench FILE...
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "elf/elf_file.h"
#include "unwind/unwind_table.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int bench_file(const char *path)
{
	struct unwind_table *t = NULL;
	double best = 1e9, t0;
	struct elf_file *ef;
	char err[160];
	int i, fd, ret = 0;

	for (i = 0; i < 3; i++) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "%s: %s\n", path, strerror(errno));
			return 1;
		}
		t0 = now();
		ef = elf_file__open_fd(fd);
		ret = ef ? unwind_table__build(ef, NULL, NULL, &t, err, sizeof(err)) : -errno;
		if (now() - t0 < best)
			best = now() - t0;
		elf_file__free(ef);
		close(fd);
		if (ret) {
			fprintf(stderr, "%s: %s\n", path, ef ? err : strerror(-ret));
			return 1;
		}
		if (i < 2)
			unwind_table__free(t);
	}
	printf("%-50s %7.1f ms %7.1f ms cpu %6.1f MiB peak %8zu rows %5zu rules %6.2f MiB\n", path,
	       best * 1e3, t->stats.cpu_ns / 1e6, t->stats.mem_peak / 1048576.0, t->nr_rows,
	       t->nr_rules, t->nr_rows * sizeof(struct unwind_row) / 1048576.0);
	unwind_table__free(t);
	return 0;
}

int main(int argc, char **argv)
{
	int i, err = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE...\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++)
		err |= bench_file(argv[i]);
	return err;
}
