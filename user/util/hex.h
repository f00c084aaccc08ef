/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hex - hexadecimal digits of text another process or the kernel wrote
 * (/proc/PID/maps, /proc/kallsyms, perf maps).  Pure, any thread.
 */
#ifndef CTXPROF_HEX_H
#define CTXPROF_HEX_H

/* the value of hex digit @c (either case), or -1 */
static inline int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif /* CTXPROF_HEX_H */
