// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * otel_tls__locate() against where glibc really put otel_thread_ctx_v1:
 * in this executable (it defines and exports the variable), in a library
 * loaded at start (LD_PRELOAD) and in one dlopen()ed into dynamic TLS
 * (tests/unit/fixtures/otel_tls_fixture.c, with libotel_sdk.so).  The
 * address the sampler would compute from the thread pointer must be the
 * variable's.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "appctx/otel_tls.h"
#include "processes/proc_maps.h"
#include "processes/proc_mem.h"

/* the executable's case: this binary exports it (-Wl,--export-dynamic-symbol) */
__attribute__((visibility("default"))) __thread void *otel_thread_ctx_v1;

static char dir[PATH_MAX];

static enum otel_tls_status locate(pid_t pid, struct otel_tls_ref *ref)
{
	struct proc_maps *pm = proc_maps__read(pid);
	struct proc_mem *mem = proc_mem__open(pid);
	enum otel_tls_status s;
	const char *why;

	assert_non_null(pm);
	assert_non_null(mem);
	s = otel_tls__locate(pid, pm, mem, ref, &why);
	if (s != OTEL_TLS_FOUND)
		print_message("not found: %s\n", why);
	proc_mem__free(mem);
	proc_maps__free(pm);
	return s;
}

static void locate__executable_tls__thread_pointer_plus_offset(void **state)
{
	struct otel_tls_ref ref;
	uint64_t tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp));
	assert_int_equal(locate(getpid(), &ref), OTEL_TLS_FOUND);
	assert_int_equal(ref.mode, OTEL_TLS_STATIC);
	assert_int_equal(tp + ref.offset, (uintptr_t)&otel_thread_ctx_v1);
}

struct child {
	pid_t pid;
	int in; /* its standard input: closing it ends it */
	uint64_t tp, addr;
};

/* start the fixture with @env set and @arg (may be NULL); read what it printed */
static void spawn(struct child *c, const char *env, const char *arg)
{
	char fixture[PATH_MAX + 32];
	int to[2], from[2];
	FILE *f;

	snprintf(fixture, sizeof(fixture), "%s/otel_tls_fixture", dir);
	assert_int_equal(pipe2(to, O_CLOEXEC), 0);
	assert_int_equal(pipe2(from, O_CLOEXEC), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (!c->pid) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		if (env)
			putenv((char *)env);
		execl(fixture, fixture, arg, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	c->in = to[1];
	f = fdopen(from[0], "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%llu %llu", (unsigned long long *)&c->tp,
				(unsigned long long *)&c->addr),
			 2);
	fclose(f);
}

static void reap(struct child *c)
{
	int status;

	close(c->in);
	waitpid(c->pid, &status, 0);
}

/* the address the sampler computes for the main thread of @c */
static uint64_t sampler_address(const struct child *c, const struct otel_tls_ref *ref)
{
	struct proc_maps *pm = proc_maps__read(c->pid);
	struct proc_mem *mem = proc_mem__open(c->pid);
	uint64_t dtv, block;

	if (ref->mode == OTEL_TLS_STATIC) {
		block = c->tp;
	} else {
		assert_int_equal(proc_mem__read(mem, pm, c->tp + ref->dtv_ptr, &dtv, 8), 0);
		assert_int_equal(proc_mem__read(mem, pm, dtv + ref->dtv_slot, &block, 8), 0);
	}
	proc_mem__free(mem);
	proc_maps__free(pm);
	return block + ref->offset;
}

static void locate__library_loaded_at_start__static_offset(void **state)
{
	static char env[PATH_MAX + 64];
	struct otel_tls_ref ref;
	struct child c;

	snprintf(env, sizeof(env), "LD_PRELOAD=%s/../workloads/libotel_sdk.so", dir);
	spawn(&c, env, NULL);
	assert_int_not_equal(c.addr, 0);
	assert_int_equal(locate(c.pid, &ref), OTEL_TLS_FOUND);
	assert_int_equal(ref.mode, OTEL_TLS_STATIC);
	assert_int_equal(sampler_address(&c, &ref), c.addr);
	reap(&c);
}

static void locate__library_dlopened_without_static_room__through_the_dtv(void **state)
{
	char lib[PATH_MAX + 64];
	struct otel_tls_ref ref;
	struct child c;

	snprintf(lib, sizeof(lib), "%s/../workloads/libotel_sdk.so", dir);
	/* no surplus static TLS for dlopen(): glibc gives the library dynamic TLS */
	spawn(&c, "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=0", lib);
	assert_int_not_equal(c.addr, 0);
	assert_int_equal(locate(c.pid, &ref), OTEL_TLS_FOUND);
	assert_int_equal(ref.mode, OTEL_TLS_DTV);
	assert_int_equal(sampler_address(&c, &ref), c.addr);
	reap(&c);
}

static void locate__nothing_exports_it__no_symbol(void **state)
{
	struct otel_tls_ref ref;
	struct child c;

	spawn(&c, NULL, NULL);
	assert_int_equal(c.addr, 0);
	assert_int_equal(locate(c.pid, &ref), OTEL_TLS_NO_SYMBOL);
	reap(&c);
}

static void static_offset__aligned_and_not__as_glibc_places_the_first_block(void **state)
{
	assert_int_equal(otel_tls__static_offset(0x288, 8, 0x4d10), 0x288);
	assert_int_equal(otel_tls__static_offset(100, 64, 0x1000), 128);
	/* a segment starting 16 bytes into its alignment keeps that phase */
	assert_int_equal(otel_tls__static_offset(100, 64, 0x1010), 112);
	assert_int_equal(otel_tls__static_offset(5, 0, 0), 5);
	/* arm64 (TLS_DTV_AT_TP): the block after the 16-byte TCB, aligned */
	assert_int_equal(otel_tls__static_offset_above(8, 0x10de8), 16);
	assert_int_equal(otel_tls__static_offset_above(64, 0x1000), 64);
	assert_int_equal(otel_tls__static_offset_above(32, 0x1010), 16);
	assert_int_equal(otel_tls__static_offset_above(32, 0x1008), 40);
	assert_int_equal(otel_tls__static_offset_above(0, 0), 16);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(locate__executable_tls__thread_pointer_plus_offset),
		cmocka_unit_test(locate__library_loaded_at_start__static_offset),
		cmocka_unit_test(locate__library_dlopened_without_static_room__through_the_dtv),
		cmocka_unit_test(locate__nothing_exports_it__no_symbol),
		cmocka_unit_test(static_offset__aligned_and_not__as_glibc_places_the_first_block),
	};
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return 1;
	self[n] = '\0';
	snprintf(dir, sizeof(dir), "%s", dirname(self));
	/* touch the variable: this thread's block exists in any case */
	otel_thread_ctx_v1 = dir;
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("otel_tls", tests, NULL, NULL);
}
