// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A strict JSON parser for tests: see json_strict.h */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_strict.h"

struct parser {
	const unsigned char *start, *p, *end;
	unsigned int depth;
	char *err;
	size_t err_len;
	bool failed;
};

/* a growing byte buffer, for decoded strings */
struct buf {
	char *s;
	size_t len, cap;
};

static bool fail(struct parser *ps, const char *what)
{
	if (!ps->failed)
		snprintf(ps->err, ps->err_len, "%s at byte %zu", what, (size_t)(ps->p - ps->start));
	ps->failed = true;
	return false;
}

static bool buf_put(struct buf *b, const void *s, size_t n)
{
	char *grown;

	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		grown = realloc(b->s, b->cap);
		if (!grown)
			return false;
		b->s = grown;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return true;
}

size_t json_utf8_seq(const unsigned char *s, size_t avail)
{
	unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
	size_t n, i;

	if (!avail)
		return 0;
	if (s[0] <= 0x7f)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
	} else if (s[0] == 0xe0) {
		n = 3;
		lo = 0xa0;
	} else if ((s[0] >= 0xe1 && s[0] <= 0xec) || s[0] == 0xee || s[0] == 0xef) {
		n = 3;
	} else if (s[0] == 0xed) {
		n = 3;
		hi = 0x9f;
	} else if (s[0] == 0xf0) {
		n = 4;
		lo = 0x90;
	} else if (s[0] >= 0xf1 && s[0] <= 0xf3) {
		n = 4;
	} else if (s[0] == 0xf4) {
		n = 4;
		hi = 0x8f;
	} else {
		return 0;
	}
	if (avail < n || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

size_t json_utf8_replaced(const unsigned char *s, size_t len, char *out)
{
	size_t i = 0, o = 0, n;

	while (i < len) {
		n = json_utf8_seq(s + i, len - i);
		if (n) {
			memcpy(out + o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	out[o] = '\0';
	return o;
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static bool literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
		return fail(ps, "bad literal");
	ps->p += n;
	return true;
}

static bool hex4(struct parser *ps, uint32_t *cp)
{
	*cp = 0;
	if (ps->end - ps->p < 4)
		return fail(ps, "short \\u escape");
	for (int i = 0; i < 4; i++) {
		unsigned char c = *ps->p++;

		*cp <<= 4;
		if (c >= '0' && c <= '9')
			*cp |= c - '0';
		else if (c >= 'a' && c <= 'f')
			*cp |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			*cp |= c - 'A' + 10;
		else
			return fail(ps, "bad hex digit in \\u escape");
	}
	return true;
}

static bool put_cp(struct buf *b, uint32_t cp)
{
	unsigned char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = 0xc0 | cp >> 6;
		u[1] = 0x80 | (cp & 0x3f);
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = 0xe0 | cp >> 12;
		u[1] = 0x80 | (cp >> 6 & 0x3f);
		u[2] = 0x80 | (cp & 0x3f);
		n = 3;
	} else {
		u[0] = 0xf0 | cp >> 18;
		u[1] = 0x80 | (cp >> 12 & 0x3f);
		u[2] = 0x80 | (cp >> 6 & 0x3f);
		u[3] = 0x80 | (cp & 0x3f);
		n = 4;
	}
	return buf_put(b, u, n);
}

/* after the backslash */
static bool escape(struct parser *ps, struct buf *b)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *hit;
	uint32_t cp, lo;

	if (ps->p == ps->end)
		return fail(ps, "unterminated escape");
	if (*ps->p != 'u') {
		hit = *ps->p ? strchr(from, *ps->p) : NULL;
		if (!hit)
			return fail(ps, "bad escape");
		ps->p++;
		return buf_put(b, &to[hit - from], 1) || fail(ps, "out of memory");
	}
	ps->p++;
	if (!hex4(ps, &cp))
		return false;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return fail(ps, "lone low surrogate");
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u')
			return fail(ps, "high surrogate without its low half");
		ps->p += 2;
		if (!hex4(ps, &lo))
			return false;
		if (lo < 0xdc00 || lo > 0xdfff)
			return fail(ps, "high surrogate without its low half");
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	return put_cp(b, cp) || fail(ps, "out of memory");
}

static bool string(struct parser *ps, struct json *out)
{
	struct buf b = {0};
	size_t n;

	ps->p++; /* the opening quote */
	if (!buf_put(&b, "", 0))
		return fail(ps, "out of memory");
	for (;;) {
		if (ps->p == ps->end) {
			fail(ps, "unterminated string");
			break;
		}
		if (*ps->p == '"') {
			ps->p++;
			out->type = JSON_STRING;
			out->text = b.s;
			out->len = b.len;
			return true;
		}
		if (*ps->p < 0x20) {
			fail(ps, "raw control character in a string");
			break;
		}
		if (*ps->p == '\\') {
			ps->p++;
			if (!escape(ps, &b))
				break;
			continue;
		}
		n = json_utf8_seq(ps->p, (size_t)(ps->end - ps->p));
		if (!n) {
			fail(ps, "ill-formed UTF-8 in a string");
			break;
		}
		if (!buf_put(&b, ps->p, n)) {
			fail(ps, "out of memory");
			break;
		}
		ps->p += n;
	}
	free(b.s);
	return false;
}

static bool digits(struct parser *ps)
{
	const unsigned char *from = ps->p;

	while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
		ps->p++;
	return ps->p > from;
}

static bool number(struct parser *ps, struct json *out)
{
	const unsigned char *from = ps->p;

	if (*ps->p == '-')
		ps->p++;
	if (ps->p < ps->end && *ps->p == '0')
		ps->p++;
	else if (ps->p == ps->end || *ps->p < '1' || *ps->p > '9' || !digits(ps))
		return fail(ps, "bad number");
	if (ps->p < ps->end && *ps->p == '.') {
		ps->p++;
		if (!digits(ps))
			return fail(ps, "no digit after the decimal point");
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		ps->p++;
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
			ps->p++;
		if (!digits(ps))
			return fail(ps, "no digit in the exponent");
	}
	out->type = JSON_NUMBER;
	out->len = (size_t)(ps->p - from);
	out->text = strndup((const char *)from, out->len);
	return out->text || fail(ps, "out of memory");
}

static bool value(struct parser *ps, struct json *out);

/* one more slot in @v's items (and keys, for an object) */
static struct json *add_item(struct parser *ps, struct json *v, size_t *cap)
{
	struct json *items, *keys;

	if (v->nr == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		items = realloc(v->items, *cap * sizeof(*items));
		if (!items)
			return fail(ps, "out of memory"), NULL;
		v->items = items;
		if (v->type == JSON_OBJECT) {
			keys = realloc(v->keys, *cap * sizeof(*keys));
			if (!keys)
				return fail(ps, "out of memory"), NULL;
			v->keys = keys;
		}
	}
	memset(&v->items[v->nr], 0, sizeof(*v->items));
	if (v->type == JSON_OBJECT)
		memset(&v->keys[v->nr], 0, sizeof(*v->keys));
	return &v->items[v->nr];
}

static bool array(struct parser *ps, struct json *out)
{
	size_t cap = 0;
	struct json *item;

	out->type = JSON_ARRAY;
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
		return true;
	}
	for (;;) {
		item = add_item(ps, out, &cap);
		if (!item)
			return false;
		out->nr++;
		if (!value(ps, item))
			return false;
		skip_ws(ps);
		if (ps->p == ps->end)
			return fail(ps, "unterminated array");
		if (*ps->p == ']') {
			ps->p++;
			return true;
		}
		if (*ps->p != ',')
			return fail(ps, "expected ',' or ']'");
		ps->p++;
		skip_ws(ps);
	}
}

static bool object(struct parser *ps, struct json *out)
{
	size_t cap = 0;
	struct json *item, *key;

	out->type = JSON_OBJECT;
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
		return true;
	}
	for (;;) {
		item = add_item(ps, out, &cap);
		if (!item)
			return false;
		key = &out->keys[out->nr];
		out->nr++;
		if (ps->p == ps->end || *ps->p != '"')
			return fail(ps, "expected a member name");
		if (!string(ps, key))
			return false;
		for (size_t i = 0; i + 1 < out->nr; i++)
			if (out->keys[i].len == key->len &&
			    !memcmp(out->keys[i].text, key->text, key->len))
				return fail(ps, "duplicate member name");
		skip_ws(ps);
		if (ps->p == ps->end || *ps->p != ':')
			return fail(ps, "expected ':'");
		ps->p++;
		if (!value(ps, item))
			return false;
		skip_ws(ps);
		if (ps->p == ps->end)
			return fail(ps, "unterminated object");
		if (*ps->p == '}') {
			ps->p++;
			return true;
		}
		if (*ps->p != ',')
			return fail(ps, "expected ',' or '}'");
		ps->p++;
		skip_ws(ps);
	}
}

static bool value(struct parser *ps, struct json *out)
{
	bool ok;

	skip_ws(ps);
	if (ps->p == ps->end)
		return fail(ps, "expected a value");
	switch (*ps->p) {
	case '{':
	case '[':
		if (++ps->depth > JSON_STRICT_MAX_DEPTH)
			return fail(ps, "nested too deep");
		ok = *ps->p == '{' ? object(ps, out) : array(ps, out);
		ps->depth--;
		return ok;
	case '"':
		return string(ps, out);
	case 't':
		out->type = JSON_BOOL;
		out->boolean = true;
		return literal(ps, "true");
	case 'f':
		out->type = JSON_BOOL;
		return literal(ps, "false");
	case 'n':
		out->type = JSON_NULL;
		return literal(ps, "null");
	default:
		return number(ps, out);
	}
}

static void json_free_inner(struct json *v)
{
	for (size_t i = 0; i < v->nr; i++) {
		json_free_inner(&v->items[i]);
		if (v->keys)
			free(v->keys[i].text);
	}
	free(v->items);
	free(v->keys);
	free(v->text);
}

struct json *json_parse(const void *doc, size_t len, char *err, size_t err_len)
{
	struct parser ps = {.start = doc, .p = doc, .end = (const unsigned char *)doc + len};
	char dummy[1];
	struct json *v = calloc(1, sizeof(*v));

	ps.err = err_len ? err : dummy;
	ps.err_len = err_len ? err_len : sizeof(dummy);
	if (!v) {
		fail(&ps, "out of memory");
		return NULL;
	}
	if (value(&ps, v)) {
		skip_ws(&ps);
		if (ps.p == ps.end)
			return v;
		fail(&ps, "text after the value");
	}
	json_free(v);
	return NULL;
}

void json_free(struct json *v)
{
	if (!v)
		return;
	json_free_inner(v);
	free(v);
}

const struct json *json_get(const struct json *obj, const char *key)
{
	size_t n = strlen(key);

	if (!obj || obj->type != JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < obj->nr; i++)
		if (obj->keys[i].len == n && !memcmp(obj->keys[i].text, key, n))
			return &obj->items[i];
	return NULL;
}

const char *json_str(const struct json *v)
{
	return v && v->type == JSON_STRING ? v->text : NULL;
}
