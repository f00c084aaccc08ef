/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * errmsg - the one-line reasons loaders hand back to the collector's main.
 *
 * Threads: a function of its arguments; any thread.
 */
#ifndef CTXPROF_ERRMSG_H
#define CTXPROF_ERRMSG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/** set_err() - format a reason into @buf[@len]; a NULL or empty @buf is ignored. */
static inline __attribute__((format(printf, 3, 4))) void set_err(char *buf, size_t len,
								 const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

#endif /* CTXPROF_ERRMSG_H */
