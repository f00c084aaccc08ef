/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * utf8 - is a byte string well-formed UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF)?  For strings another process wrote
 * that become profile labels: pprof's strings are protobuf strings.
 * Pure function, any thread.
 */
#ifndef CTXPROF_UTF8_H
#define CTXPROF_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline bool utf8_valid(const void *buf, size_t len)
{
	const uint8_t *p = buf, *end = p + len;

	while (p < end) {
		uint8_t c = *p;
		size_t n;
		uint32_t cp, min;

		if (c < 0x80) {
			p++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			n = 1, cp = c & 0x1f, min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			n = 2, cp = c & 0x0f, min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			n = 3, cp = c & 0x07, min = 0x10000;
		} else {
			return false;
		}
		if ((size_t)(end - p) <= n)
			return false;
		for (size_t i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		p += n + 1;
	}
	return true;
}

#endif /* CTXPROF_UTF8_H */
