// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <setjmp.h>
#include <string.h>
#include <libiberty/demangle.h>

#include "symbols/demangle.h"

/* perf's choice: parameter lists and qualifiers, no return types */
#define DEMANGLE_OPTS (DMGL_PARAMS | DMGL_ANSI)

struct demangle_out {
	char *buf;
	size_t len;
	jmp_buf too_long;
};

/*
 * libiberty's output, piece by piece.  Past the cap, leave the demangler by
 * longjmp(): its callback interface allocates nothing and holds no lock
 * (checked: no malloc() on that path), so nothing leaks or stays held, and
 * the rest of a possibly exponential output is never produced.
 */
static void demangle_put(const char *s, size_t n, void *opaque)
{
	struct demangle_out *o = opaque;

	if (n >= DEMANGLE_MAX_LEN - o->len)
		longjmp(o->too_long, 1);
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

size_t symbol_version_at(const char *name)
{
	const char *at = strchr(name, '@'), *ver;

	if (!at || at == name)
		return strlen(name);
	ver = at[1] == '@' ? at + 2 : at + 1;
	if (!*ver || strchr(ver, '@'))
		return strlen(name);
	return (size_t)(at - name);
}

bool demangle_wanted(const char *name)
{
	return !strncmp(name, "_Z", 2) || !strncmp(name, "_R", 2) || !strncmp(name, "_GLOBAL_", 8);
}

int demangle(const char *name, char out[DEMANGLE_MAX_LEN])
{
	struct demangle_out o = {.buf = out};
	int ok;

	if (strnlen(name, DEMANGLE_MAX_INPUT) >= DEMANGLE_MAX_INPUT)
		return -EINVAL;
	if (setjmp(o.too_long))
		return -E2BIG;
	/* Rust first: a legacy Rust name is a valid C++ name with its hash left in */
	ok = rust_demangle_callback(name, DEMANGLE_OPTS, demangle_put, &o);
	if (!ok) {
		o.len = 0;
		ok = cplus_demangle_v3_callback(name, DEMANGLE_OPTS, demangle_put, &o);
	}
	if (!ok || !o.len)
		return -EINVAL;
	out[o.len] = '\0';
	return 0;
}
