/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * json_strict - a small, strict JSON parser for tests that read what the
 * collector writes (test_timeline_*, fuzz_timeline_names).  Written apart from
 * the writer, to RFC 8259 and Unicode's Table 3-7, so that it can disagree
 * with it:
 *   - the document is well-formed UTF-8 (no overlongs, surrogates, bytes past
 *     U+10FFFF, truncated sequences), with no BOM;
 *   - strings hold no raw control character (< 0x20), only the escapes JSON
 *     defines, and a \u surrogate only as a high-low pair;
 *   - numbers follow the grammar (no leading zero, no "1.", no NaN);
 *   - an object names each member once;
 *   - only whitespace follows the value; nesting is at most
 *     JSON_STRICT_MAX_DEPTH deep.
 * What passes becomes a tree; strings are decoded to UTF-8 (a \u0000 kept:
 * each string has its length).
 *
 * No cmocka: the fuzz target links it too.  No state; any thread.
 */
#ifndef CTXPROF_TEST_JSON_STRICT_H
#define CTXPROF_TEST_JSON_STRICT_H

#include <stdbool.h>
#include <stddef.h>

#define JSON_STRICT_MAX_DEPTH 64

enum json_type {
	JSON_NULL,
	JSON_BOOL,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

struct json {
	enum json_type type;
	bool boolean; /* JSON_BOOL */
	/* JSON_STRING: decoded UTF-8; JSON_NUMBER: the number as written.
	 * NUL-terminated; a string may hold NULs before @len */
	char *text;
	size_t len;
	struct json *items; /* JSON_ARRAY: the elements; JSON_OBJECT: the members' values */
	struct json *keys;  /* JSON_OBJECT: the members' names (JSON_STRING each) */
	size_t nr;
};

/**
 * json_parse() - parse the @len bytes at @doc (no terminator needed).
 * Return: the tree (free it with json_free()), or NULL with a one-line
 * reason and the byte offset where it was found in @err.
 */
struct json *json_parse(const void *doc, size_t len, char *err, size_t err_len);

/** json_free() - accepts NULL. */
void json_free(struct json *v);

/** json_get() - member @key of object @obj; NULL when @obj is no object or has none. */
const struct json *json_get(const struct json *obj, const char *key);

/** json_str() - the text of string @v, or NULL when @v is NULL or no string. */
const char *json_str(const struct json *v);

/**
 * json_utf8_seq() - the length of the well-formed UTF-8 sequence (Table 3-7)
 * at @s, @avail bytes readable; 0 when none starts there.
 */
size_t json_utf8_seq(const unsigned char *s, size_t avail);

/**
 * json_utf8_replaced() - what a writer that turns every byte of @s (@len
 * bytes) that starts no well-formed UTF-8 sequence into U+FFFD must give:
 * written to @out, which has room for 3 * @len + 1 bytes, NUL-terminated.
 * Return: its length.
 */
size_t json_utf8_replaced(const unsigned char *s, size_t len, char *out);

#endif /* CTXPROF_TEST_JSON_STRICT_H */
