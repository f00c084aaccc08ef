// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * plant - dlopen()s the library at LIB and calls its plant_spin() until
 * killed.  A test then puts another ELF at that path (rename over it): a
 * profiler that opens the path instead of the file mapped there names the
 * frames from the impostor.
 *
 * Usage: plant LIB
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void (*spin)(void);
	void *h;

	if (argc != 2) {
		fprintf(stderr, "usage: %s LIB\n", argv[0]);
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW);
	if (!h || !(spin = (void (*)(void))dlsym(h, "plant_spin"))) {
		fprintf(stderr, "plant: %s\n", dlerror());
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		spin();
}
