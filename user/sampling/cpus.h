/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cpus - which CPUs are online.
 *
 * libbpf's CPU-mask parser is internal (not LIBBPF_API), so we parse the
 * kernel's list format ("0-3,5,7-8") ourselves.
 */
#ifndef CTXPROF_CPUS_H
#define CTXPROF_CPUS_H

#include <stdbool.h>
#include <stddef.h>

/**
 * cpus_parse_list() - parse a CPU list such as "0-3,5\n" into @mask[@n].
 * CPUs >= @n in the list are an error (-ERANGE); malformed text -EINVAL.
 * Return: 0 or -errno.
 */
int cpus_parse_list(const char *text, bool *mask, int n);

/**
 * cpus_online() - read /sys/devices/system/cpu/online into @mask[@n].
 * Return: 0 or -errno.
 */
int cpus_online(bool *mask, int n);

#endif /* CTXPROF_CPUS_H */
