// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * kallsyms - name kernel addresses from /proc/kallsyms.
 *
 * Lines are "%px %c %s\n" for vmlinux and "%px %c %s\t[%s]\n" for modules
 * (and BPF programs, as module "bpf").  Names live in one string pool and
 * symbols refer to them by 32-bit offset, which KALLSYMS_MAX_TEXT keeps valid.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/array.h"
#include "symbols/kallsyms.h"
#include "util/hex.h"
#include "util/ranges.h"
#include "util/read_capped.h"
#include "util/strpool.h"

#define READ_CHUNK (1u << 20)

struct ksym {
	uint64_t addr;
	uint32_t name;	 /* pool offset */
	uint32_t module; /* pool offset; 0 is "" (vmlinux) */
	uint32_t seq;	 /* line number, so sorting keeps file order among equals */
	uint32_t rank;	 /* 0 text, 1 weak, 2 anything else: which alias to keep */
};

struct kallsyms {
	struct ksym *syms; /* sorted by address, one per address */
	size_t nr;
	size_t nr_bad_lines;
	char *strings;
	uint64_t text_start; /* vmlinux text, see kallsyms__text_range(); 0: unknown */
	uint64_t text_end;
};

struct ksyms_builder {
	struct kallsyms *ks;
	size_t syms_cap;
	struct strpool pool;	      /* becomes ks->strings */
	uint32_t last_module;	      /* module lines come grouped: share the string */
	uint64_t stext, etext;	      /* _stext and _etext, 0 until seen */
	uint64_t text_low, text_high; /* lowest and highest vmlinux text symbol */
};

static bool is_type_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* a name or module byte: printable, no blank (UTF-8 bytes pass) */
static bool is_name_char(char c)
{
	unsigned char u = c;

	return u > ' ' && u != 0x7f;
}

/* each line adds at most its own length: KALLSYMS_MAX_TEXT bounds the pool */
static int pool_add(struct ksyms_builder *b, const char *s, size_t len, uint32_t *off)
{
	size_t o;
	int err;

	err = strpool__add(&b->pool, s, len, &o);
	if (err)
		return err;
	*off = (uint32_t)o;
	return 0;
}

struct line_fields {
	uint64_t addr;
	char type;
	const char *name;
	size_t name_len;
	const char *module; /* NULL for vmlinux */
	size_t module_len;
};

static bool parse_line(const char *p, const char *end, struct line_fields *f)
{
	size_t digits = 0;
	int d;

	memset(f, 0, sizeof(*f));
	while (p < end && (d = hex_digit(*p)) >= 0) {
		/* leading zeros are harmless; a 17th significant digit is not */
		if (f->addr >> 60)
			return false;
		f->addr = f->addr << 4 | d;
		p++;
		digits++;
	}
	if (!digits || p >= end || *p++ != ' ')
		return false;
	if (p >= end || !is_type_char(*p))
		return false;
	f->type = *p++;
	if (p >= end || *p++ != ' ')
		return false;

	f->name = p;
	while (p < end && is_name_char(*p))
		p++;
	f->name_len = p - f->name;
	if (!f->name_len || f->name_len > KALLSYMS_MAX_NAME)
		return false;
	if (p == end)
		return true;

	/* only "\t[module]" may follow the name */
	if (*p++ != '\t' || p >= end || *p++ != '[')
		return false;
	f->module = p;
	while (p < end && is_name_char(*p) && *p != '[' && *p != ']')
		p++;
	f->module_len = p - f->module;
	if (!f->module_len || f->module_len > KALLSYMS_MAX_MODULE)
		return false;
	if (p >= end || *p++ != ']')
		return false;
	return p == end;
}

static uint32_t type_rank(char type)
{
	switch (type) {
	case 't':
	case 'T':
		return 0;
	case 'w':
	case 'W':
		return 1;
	default:
		return 2;
	}
}

static int add_line(struct ksyms_builder *b, const struct line_fields *f)
{
	struct kallsyms *ks = b->ks;
	struct ksym *sym;
	uint32_t module = 0;
	int err;

	if (f->module) {
		if (b->last_module &&
		    strpool__is(&b->pool, b->last_module, f->module, f->module_len)) {
			module = b->last_module;
		} else {
			err = pool_add(b, f->module, f->module_len, &module);
			if (err)
				return err;
			b->last_module = module;
		}
	}
	err = array_grow((void **)&ks->syms, &b->syms_cap, ks->nr + 1, sizeof(*ks->syms), 256);
	if (err)
		return err;
	sym = &ks->syms[ks->nr];
	sym->addr = f->addr;
	sym->module = module;
	sym->seq = (uint32_t)ks->nr;
	sym->rank = type_rank(f->type);
	err = pool_add(b, f->name, f->name_len, &sym->name);
	if (err)
		return err;
	ks->nr++;
	if (!f->module && f->addr && type_rank(f->type) == 0) {
		if (f->name_len == 6 && !memcmp(f->name, "_stext", 6))
			b->stext = f->addr;
		else if (f->name_len == 6 && !memcmp(f->name, "_etext", 6))
			b->etext = f->addr;
		if (!b->text_low || f->addr < b->text_low)
			b->text_low = f->addr;
		if (f->addr > b->text_high)
			b->text_high = f->addr;
	}
	return 0;
}

/*
 * vmlinux text: _stext.._etext when kallsyms lists both, else from the
 * lowest text symbol to KALLSYMS_MAX_OFFSET past the highest (no size is
 * known, and lookups name no further).
 */
static void ksyms_text_range(const struct ksyms_builder *b, struct kallsyms *ks)
{
	uint64_t start = b->stext, end = b->etext;

	if (!start || end <= start) {
		start = b->text_low;
		end = b->text_high > UINT64_MAX - KALLSYMS_MAX_OFFSET
			      ? UINT64_MAX
			      : b->text_high + KALLSYMS_MAX_OFFSET;
	}
	/* a lone symbol at the top of the address space has no range */
	if (start && start < end) {
		ks->text_start = start;
		ks->text_end = end;
	}
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return 0;
}

/* sort, and keep the preferred symbol of each address (the first after sorting) */
static void ksyms_sort_unique(struct kallsyms *ks)
{
	size_t i, out;

	if (ks->nr < 2)
		return;
	qsort(ks->syms, ks->nr, sizeof(*ks->syms), ksym_cmp);
	for (i = 1, out = 1; i < ks->nr; i++) {
		if (ks->syms[i].addr == ks->syms[out - 1].addr)
			continue;
		ks->syms[out++] = ks->syms[i];
	}
	ks->nr = out;
}

struct kallsyms *kallsyms__parse(const char *text, size_t len)
{
	struct ksyms_builder b = {};
	const char *p, *end, *nl;
	struct kallsyms *ks;
	bool all_zero = true;
	int err;

	if (len > KALLSYMS_MAX_TEXT)
		return errno = EFBIG, NULL;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return errno = ENOMEM, NULL;
	b.ks = ks;
	/* offset 0 is the empty module name of vmlinux symbols */
	err = strpool__init(&b.pool, 256);
	if (err)
		goto err_free;

	p = text;
	end = text ? text + len : NULL;
	while (p < end) {
		struct line_fields f;

		nl = memchr(p, '\n', end - p);
		/* a last line without '\n' was cut and may have lost part of its name */
		if (!nl) {
			ks->nr_bad_lines++;
			break;
		}
		if (!parse_line(p, nl, &f)) {
			ks->nr_bad_lines++;
			p = nl + 1;
			continue;
		}
		p = nl + 1;
		err = add_line(&b, &f);
		if (err)
			goto err_free;
		if (f.addr)
			all_zero = false;
	}
	ks->strings = b.pool.buf;
	b.pool.buf = NULL;
	ksyms_text_range(&b, ks);

	if (ks->nr && all_zero) {
		err = -EPERM;
		goto err_free;
	}
	ksyms_sort_unique(ks);
	return ks;

err_free:
	free(b.pool.buf);
	kallsyms__free(ks);
	return errno = -err, NULL;
}

struct kallsyms *kallsyms__load(void)
{
	struct kallsyms *ks;
	char *text = NULL;
	size_t len = 0;
	int err;

	err = read_capped("/proc/kallsyms", KALLSYMS_MAX_TEXT, READ_CHUNK, &text, &len);
	if (err)
		return errno = -err, NULL;
	ks = kallsyms__parse(text, len);
	err = ks ? 0 : -errno;
	free(text);
	if (!ks)
		return errno = -err, NULL;
	if (!ks->nr) {
		kallsyms__free(ks);
		return errno = ENOENT, NULL;
	}
	return ks;
}

void kallsyms__free(struct kallsyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->strings);
	free(ks);
}

const char *kallsyms__lookup(const struct kallsyms *ks, uint64_t addr, const char **module,
			     uint64_t *offset)
{
	const struct ksym *sym;

	if (!ks)
		return NULL;
	/* kallsyms gives no sizes: the nearest symbol below, within a bound */
	sym = RANGE_FLOOR(ks->syms, ks->nr, addr, addr);
	if (!sym || addr - sym->addr >= KALLSYMS_MAX_OFFSET)
		return NULL;
	if (module)
		*module = ks->strings + sym->module;
	if (offset)
		*offset = addr - sym->addr;
	return ks->strings + sym->name;
}

size_t kallsyms__nr_symbols(const struct kallsyms *ks)
{
	return ks ? ks->nr : 0;
}

size_t kallsyms__nr_bad_lines(const struct kallsyms *ks)
{
	return ks ? ks->nr_bad_lines : 0;
}

int kallsyms__text_range(const struct kallsyms *ks, uint64_t *start, uint64_t *end)
{
	if (!ks || !ks->text_start)
		return -ENOENT;
	*start = ks->text_start;
	*end = ks->text_end;
	return 0;
}
