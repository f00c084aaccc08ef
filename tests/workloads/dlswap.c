// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dlswap - a library replaced while profiled: spin in SYM_A of LIB_A for
 * SECONDS, dlclose() it, then spin in SYM_B of LIB_B for SECONDS; the second
 * dlopen() usually lands where the first library was.  With --rewrite, LIB_B
 * is copied over LIB_A in place between the two (same path, same inode, new
 * contents) and LIB_A is opened again.  Prints both load addresses, the
 * CLOCK_MONOTONIC time of the switch, and the CPU time each phase took (a
 * profile cannot hold more of a function than that) on stderr.
 *
 * Usage: dlswap LIB_A SYM_A LIB_B SYM_B SECONDS [--rewrite]
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

typedef unsigned long (*spin_fn)(unsigned long);

/* the library's function, called until @seconds passed; its load address */
static void *run(const char *lib, const char *sym, double seconds, void **handle)
{
	volatile unsigned long sink = 0;
	spin_fn fn;
	Dl_info info;
	double end;

	*handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!*handle) {
		fprintf(stderr, "dlswap: %s\n", dlerror());
		exit(1);
	}
	fn = (spin_fn)dlsym(*handle, sym);
	if (!fn || !dladdr((void *)fn, &info)) {
		fprintf(stderr, "dlswap: no %s in %s\n", sym, lib);
		exit(1);
	}
	for (end = now() + seconds; now() < end;)
		sink += fn(20000);
	return info.dli_fbase;
}

/* @from's bytes over @to, in place: the inode stays */
static void rewrite(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (in < 0 || out < 0) {
		perror("dlswap: rewrite");
		exit(1);
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			perror("dlswap: write");
			exit(1);
		}
	close(in);
	close(out);
}

int main(int argc, char **argv)
{
	void *handle, *base_a, *base_b;
	double seconds, cpu0, cpu_a, cpu_b;
	bool in_place;

	if (argc < 6 || (seconds = atof(argv[5])) <= 0) {
		fprintf(stderr, "usage: %s LIB_A SYM_A LIB_B SYM_B SECONDS [--rewrite]\n", argv[0]);
		return 2;
	}
	in_place = argc > 6 && !strcmp(argv[6], "--rewrite");
	cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	base_a = run(argv[1], argv[2], seconds, &handle);
	cpu_a = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	dlclose(handle);
	if (in_place)
		rewrite(argv[3], argv[1]);
	fprintf(stderr, "dlswap: switch at %.6f\n", now());
	cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	base_b = run(in_place ? argv[1] : argv[3], argv[4], seconds, &handle);
	cpu_b = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	fprintf(stderr, "dlswap: %s at %p, %s at %p%s\n", argv[2], base_a, argv[4], base_b,
		base_a == base_b ? " (the same address)" : "");
	fprintf(stderr, "dlswap: cpu %.3f %.3f\n", cpu_a, cpu_b);
	dlclose(handle);
	return 0;
}
