// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sampling/cpus.h"
#include "util/read_capped.h"

static int parse_cpu(const char **p, int n)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	v = strtol(*p, &end, 10);
	if (errno)
		return -EINVAL;
	if (v >= n)
		return -ERANGE;
	*p = end;
	return (int)v;
}

int cpus_parse_list(const char *text, bool *mask, int n)
{
	const char *p = text;
	int a, b, i;

	memset(mask, 0, n * sizeof(*mask));
	while (*p && *p != '\n') {
		a = parse_cpu(&p, n);
		if (a < 0)
			return a;
		b = a;
		if (*p == '-') {
			p++;
			b = parse_cpu(&p, n);
			if (b < 0)
				return b;
			if (b < a)
				return -EINVAL;
		}
		for (i = a; i <= b; i++)
			mask[i] = true;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return 0;
}

int cpus_online(bool *mask, int n)
{
	char buf[4096];
	ssize_t len;

	len = read_small("/sys/devices/system/cpu/online", buf, sizeof(buf) - 1);
	if (len < 0)
		return (int)len;
	buf[len] = '\0';
	return cpus_parse_list(buf, mask, n);
}

long cpus_max_sample_rate(void)
{
	char buf[32], *end;
	ssize_t len;
	long v;

	len = read_small("/proc/sys/kernel/perf_event_max_sample_rate", buf, sizeof(buf) - 1);
	if (len < 0)
		return len;
	buf[len] = '\0';
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n') || v < 0)
		return -EINVAL;
	return v;
}

void cpu_rate__add(struct cpu_rate *r, uint64_t runs, uint64_t enabled_ns)
{
	r->runs[r->next] = runs;
	r->enabled_ns[r->next] = enabled_ns;
	r->next = (r->next + 1) % CPU_RATE_WINDOW;
	if (r->n < CPU_RATE_WINDOW)
		r->n++;
}

double cpu_rate__hz(const struct cpu_rate *r)
{
	uint64_t runs = 0, ns = 0;
	unsigned int i;

	for (i = 0; i < r->n; i++) {
		runs += r->runs[i];
		ns += r->enabled_ns[i];
	}
	if (r->n < CPU_RATE_WINDOW || ns < 1000000000ull)
		return -1;
	return runs * 1e9 / ns;
}
