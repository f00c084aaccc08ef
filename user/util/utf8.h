/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * utf8 - well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
 * nothing past U+10FFFF) for strings another process wrote (thread names,
 * tags, symbol names, paths) that become profile strings: pprof's are
 * proto3 strings, which protobuf libraries refuse unless they are UTF-8,
 * and the timeline's are JSON.  One rule for both writers: each byte that
 * starts no well-formed sequence becomes U+FFFD.
 * Pure functions, any thread.
 */
#ifndef CTXPROF_UTF8_H
#define CTXPROF_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* the bytes U+FFFD (REPLACEMENT CHARACTER) takes in UTF-8 */
#define UTF8_REPLACEMENT_LEN 3

/* length of the well-formed sequence at @s (before @end), or 0 */
static inline size_t utf8_seq_len(const uint8_t *s, const uint8_t *end)
{
	uint32_t cp;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	if ((size_t)(end - s) < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong, surrogate, past U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static inline bool utf8_valid(const void *buf, size_t len)
{
	const uint8_t *p = buf, *end = p + len;
	size_t n;

	for (; p < end; p += n) {
		n = utf8_seq_len(p, end);
		if (!n)
			return false;
	}
	return true;
}

/*
 * utf8_sanitize() - @len bytes at @buf into @out, each byte that starts no
 * well-formed sequence replaced by U+FFFD.  @out holds at least
 * UTF8_REPLACEMENT_LEN * @len bytes (not NUL-terminated).
 * Return: the bytes written to @out.
 */
static inline size_t utf8_sanitize(const void *buf, size_t len, char *out)
{
	const uint8_t *p = buf, *end = p + len;
	size_t n, o = 0;

	while (p < end) {
		n = utf8_seq_len(p, end);
		if (!n) {
			out[o++] = '\xef';
			out[o++] = '\xbf';
			out[o++] = '\xbd';
			p++;
			continue;
		}
		memcpy(out + o, p, n);
		o += n;
		p += n;
	}
	return o;
}

/*
 * utf8_encode() - code point @cp as UTF-8 into @out (room for 4 bytes; not
 * NUL-terminated).  A surrogate or a value past U+10FFFF, which no
 * well-formed UTF-8 holds, becomes U+FFFD.  U+0000 is written as the byte 0:
 * a caller that wants no NUL replaces it first.
 * Return: the bytes written, 1 to 4.
 */
static inline size_t utf8_encode(uint32_t cp, char *out)
{
	if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		cp = 0xfffd;
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

#endif /* CTXPROF_UTF8_H */
