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

/* the fields of a "cpuN" line that are busy time, by position (1-based) */
#define STAT_USER    1
#define STAT_NICE    2
#define STAT_SYSTEM  3
#define STAT_IRQ     6
#define STAT_SOFTIRQ 7
#define STAT_FIELDS  8 /* through steal: every kernel since 2.6.11 has them */

/* one "cpuN f1 f2 ..." line's busy ticks; -EINVAL if malformed */
static int parse_busy_line(const char *p, uint64_t *ticks)
{
	unsigned long long v;
	char *end;
	int f;

	*ticks = 0;
	for (f = 1; f <= STAT_FIELDS; f++) {
		if (*p != ' ')
			return -EINVAL;
		while (*p == ' ')
			p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (errno)
			return -EINVAL;
		p = end;
		if (f == STAT_USER || f == STAT_NICE || f == STAT_SYSTEM || f == STAT_IRQ ||
		    f == STAT_SOFTIRQ) {
			if (v > UINT64_MAX / 8 - *ticks)
				return -EINVAL;
			*ticks += v;
		}
	}
	return 0;
}

int cpus_parse_busy(const char *text, uint64_t *busy_ns, int n, long ticks_per_s)
{
	const char *p = text;
	uint64_t ticks;
	int cpu, err;

	if (ticks_per_s <= 0 || ticks_per_s > 1000000000)
		return -EINVAL;
	memset(busy_ns, 0, n * sizeof(*busy_ns));
	while (*p) {
		if (strncmp(p, "cpu", 3))
			break;
		p += 3;
		if (*p == ' ') { /* the total */
			p = strchr(p, '\n');
			if (!p)
				return -EINVAL;
			p++;
			continue;
		}
		cpu = parse_cpu(&p, n);
		if (cpu < 0)
			return cpu;
		err = parse_busy_line(p, &ticks);
		if (err)
			return err;
		if (ticks > UINT64_MAX / 1000000000 * ticks_per_s)
			return -EINVAL;
		busy_ns[cpu] = ticks * (1000000000 / ticks_per_s);
		p = strchr(p, '\n');
		if (!p)
			return -EINVAL;
		p++;
	}
	return 0;
}

int cpus_busy_ns(uint64_t *busy_ns, int n)
{
	char *buf;
	size_t cap;
	ssize_t len;
	int err;

	/* the cpu lines come first, at most about 250 bytes each; the rest
	 * of the file (interrupt counts) may be cut off */
	cap = 4096 + (size_t)n * 256;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	len = read_small("/proc/stat", buf, cap - 1);
	if (len < 0) {
		err = (int)len;
		goto out;
	}
	buf[len] = '\0';
	err = cpus_parse_busy(buf, busy_ns, n, sysconf(_SC_CLK_TCK));
out:
	free(buf);
	return err;
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

void cpu_rate__add(struct cpu_rate *r, uint64_t runs, uint64_t busy_ns)
{
	r->runs[r->next] = runs;
	r->busy_ns[r->next] = busy_ns;
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
		ns += r->busy_ns[i];
	}
	if (r->n < CPU_RATE_WINDOW || ns < 1000000000ull)
		return -1;
	return runs * 1e9 / ns;
}
