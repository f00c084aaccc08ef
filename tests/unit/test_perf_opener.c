// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>
#include "sampling/perf_opener.h"

static const struct perf_event_attr attr = {
	.size = sizeof(attr),
	.type = PERF_TYPE_SOFTWARE,
	.config = PERF_COUNT_SW_CPU_CLOCK,
	.sample_period = 1000000,
	.disabled = 1,
};

/* the kernel's answer comes back: an fd with CAP_PERFMON (root), else EACCES */
static void perf_opener__open__cpu0__fd_or_kernel_refusal(void **state)
{
	struct perf_opener *o = perf_opener__start(&attr);
	int fd;

	assert_non_null(o);
	fd = perf_opener__open(o, 0);
	if (fd >= 0) {
		assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
		close(fd);
	} else {
		assert_int_equal(fd, -EACCES);
	}
	/* one request after another: the answers stay in step */
	fd = perf_opener__open(o, INT_MAX);
	assert_true(fd == -EINVAL || fd == -EACCES);
	fd = perf_opener__open(o, 0);
	assert_true(fd >= 0 || fd == -EACCES);
	if (fd >= 0)
		close(fd);
	perf_opener__stop(o);
}

static void perf_opener__stop__null__nothing(void **state)
{
	perf_opener__stop(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(perf_opener__open__cpu0__fd_or_kernel_refusal),
		cmocka_unit_test(perf_opener__stop__null__nothing),
	};

	return cmocka_run_group_tests_name("perf_opener", tests, NULL, NULL);
}
