// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * go_rows - a Go program's .gopclntab laid over its CFI rows (go_rows.h).
 *
 * The walked rows and the Go functions' segments are two step functions of
 * the pc, both sorted: one sweep over the union of their breakpoints picks,
 * at each, the rule that wins there (a root or switch, else CFI, else the
 * function's pcsp rule, else the gap's) and emits it; equal neighbours
 * merge in unwind_walk__emit().  The Go side is decoded as the sweep goes,
 * one function's pcsp table at a time: nothing is held per function.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf/gopclntab.h"
#include "unwind/go_rows.h"
#include "unwind/unwind_walk.h"

/* a frame larger than this is not Go's: the row is UNSUPPORTED */
#define GO_MAX_FRAME (1 << 30)

/* Go 1.16 tables have no flags: the same functions by name */
static const char *const go116_roots[] = {
	"runtime.goexit",
	"runtime.mstart",
	"runtime.rt0_go",
	"runtime.sigtramp",
};
static const char *const go116_switches[] = {
	"runtime.mcall",      "runtime.systemstack", "runtime.morestack",
	"runtime.asmcgocall", "runtime.cgocallback", "runtime.gogo",
};

enum go_kind {
	GO_PLAIN,  /* rows from its pcsp table */
	GO_ROOT,   /* UNWIND_CMD_END */
	GO_SWITCH, /* its pcsp rows made UNWIND_CMD_GO_SYSTEM_STACK, over CFI */
};

/* which switch a GO_SWITCH function is (enum unwind_go_switch), by name; the
 * vDSO callers are SPWRITE since Go 1.17 (Go 1.16's by name here too) */
static const struct {
	const char *name;
	enum unwind_go_switch kind;
} go_switch_kinds[] = {
	{"runtime.systemstack", UNWIND_GO_SWITCH_SYSTEMSTACK},
	{"runtime.mcall", UNWIND_GO_SWITCH_MCALL},
	{"runtime.morestack", UNWIND_GO_SWITCH_MORESTACK},
	{"runtime.nanotime1", UNWIND_GO_SWITCH_VDSO},
	{"time.now", UNWIND_GO_SWITCH_VDSO},
};

/* one segment of the Go side: [lo, hi) with its rule */
struct go_seg {
	uint64_t lo, hi;
	struct unwind_rule rule;
	uint32_t fn;	/* the function it belongs to */
	bool overrides; /* a root or a switch: wins over CFI */
	bool valid;	/* false: past the last function */
};

/* the Go side, decoded as the sweep asks for it */
struct go_cursor {
	struct unwind_build *b;
	size_t next_fn;
	struct gopclntab_func f;
	struct gopclntab_pcvalue it;
	bool in_pcsp;
	bool sw;		       /* the function is a GO_SWITCH */
	enum unwind_go_switch sw_kind; /* and which */
	struct go_seg seg;
};

static bool named(const char *name, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; name && i < n; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

static enum unwind_go_switch switch_kind(const char *name)
{
	size_t i;

	for (i = 0; name && i < sizeof(go_switch_kinds) / sizeof(go_switch_kinds[0]); i++)
		if (!strcmp(name, go_switch_kinds[i].name))
			return go_switch_kinds[i].kind;
	return UNWIND_GO_SWITCH_OTHER;
}

static enum go_kind classify(const struct gopclntab *go, const struct gopclntab_func *f)
{
	if (f->flag & GOPCLNTAB_FLAG_TOPFRAME)
		return GO_ROOT;
	if ((f->flag & GOPCLNTAB_FLAG_SPWRITE) || switch_kind(f->name) != UNWIND_GO_SWITCH_OTHER)
		return GO_SWITCH;
	if (gopclntab__version(go) != GOPCLNTAB_GO116 || f->flag)
		return GO_PLAIN;
	if (named(f->name, go116_roots, sizeof(go116_roots) / sizeof(go116_roots[0])))
		return GO_ROOT;
	if (named(f->name, go116_switches, sizeof(go116_switches) / sizeof(go116_switches[0])))
		return GO_SWITCH;
	return GO_PLAIN;
}

/* the frame of a Go function @sp bytes below its entry rsp */
static struct unwind_rule pcsp_rule(int32_t sp)
{
	struct unwind_rule r = {.cmd = UNWIND_CMD_CFA_RSP};

	if (sp < 0 || sp > GO_MAX_FRAME || sp % 8)
		return (struct unwind_rule){.cmd = UNWIND_CMD_UNSUPPORTED};
	r.cfa_off = sp + 8;
	/* the prologue saves rbp at the top of the frame it makes: CFA - 16 */
	if (sp >= 16) {
		r.rbp = UNWIND_RBP_CFA;
		r.rbp_off = -16;
	}
	return r;
}

/*
 * A switching function's rule: UNWIND_CMD_GO_SYSTEM_STACK with which switch
 * it is, and its own frame where its pcsp gave one (@r: for a sampled frame
 * not switched yet; none: cfa_off 0)
 */
static struct unwind_rule switch_rule(struct unwind_rule r, enum unwind_go_switch kind)
{
	if (r.cmd != UNWIND_CMD_CFA_RSP)
		r = (struct unwind_rule){0};
	r.cmd = UNWIND_CMD_GO_SYSTEM_STACK;
	r.go_switch = kind;
	return r;
}

/* the next segment of the Go side into c->seg (valid false at the end) */
static void cursor_next(struct go_cursor *c)
{
	struct unwind_build *b = c->b;
	struct gopclntab_func *f = &c->f;
	uint64_t lo, hi;
	enum go_kind kind;
	int32_t sp;
	int ret;

	for (;;) {
		if (c->in_pcsp) {
			ret = gopclntab_pcvalue__next(&c->it, &lo, &hi, &sp);
			if (ret == 1 && hi > lo) {
				c->seg =
					(struct go_seg){lo, hi, pcsp_rule(sp), f->idx, c->sw, true};
				if (c->sw)
					c->seg.rule = switch_rule(c->seg.rule, c->sw_kind);
				return;
			}
			if (ret == 1)
				continue;
			c->in_pcsp = false;
			/* a table that ends early or is malformed: the rest is not walked */
			if (c->it.pc < f->end) {
				b->stats.go_bad += ret < 0;
				c->seg = (struct go_seg){
					c->it.pc, f->end, {.cmd = UNWIND_CMD_UNSUPPORTED},
					f->idx,	  c->sw,  true};
				if (c->sw)
					c->seg.rule = switch_rule(c->seg.rule, c->sw_kind);
				return;
			}
			continue;
		}
		if (c->next_fn >= gopclntab__nr_funcs(b->go)) {
			c->seg.valid = false;
			return;
		}
		/* functions outside the table's 4 GiB from its base have no rows */
		if (gopclntab__func(b->go, c->next_fn++, f) || f->end <= f->entry ||
		    f->entry < b->base || f->end - b->base > UINT32_MAX)
			continue;
		kind = classify(b->go, f);
		if (kind == GO_ROOT) {
			c->seg = (struct go_seg){f->entry, f->end, {.cmd = UNWIND_CMD_END},
						 f->idx,   true,   true};
			b->stats.go_roots++;
			return;
		}
		c->sw = kind == GO_SWITCH;
		c->sw_kind = switch_kind(f->name);
		b->stats.go_switches += c->sw;
		if (gopclntab__pcvalue(b->go, f, GOPCLNTAB_PCSP, &c->it)) {
			/* a switch without its frames is still one */
			if (!c->sw)
				continue;
			c->seg = (struct go_seg){
				f->entry, f->end, switch_rule((struct unwind_rule){0}, c->sw_kind),
				f->idx,	  true,	  true};
			return;
		}
		c->in_pcsp = true;
	}
}

int go_rows__load(struct unwind_build *b, const struct elf_file *elf)
{
	struct gopclntab *go;
	size_t bytes;

	/* Go's arm64 frames keep the return address at the callee's sp, not at
	 * CFA - 8: its pcsp rows are x86-64's shape only (arm64: the CFI alone) */
	if (b->machine != EM_X86_64)
		return 0;
	go = gopclntab__open(elf, mem_budget__left(&b->mem));
	if (!go) {
		if (errno == ENOMEM)
			return -ENOMEM;
		/* none, malformed or too large: the CFI as it is */
		return errno == E2BIG ? -E2BIG : 0;
	}
	bytes = gopclntab__bytes(go);
	if (mem_budget__take(&b->mem, bytes)) {
		gopclntab__free(go);
		return -E2BIG;
	}
	b->go = go;
	b->go_charged = bytes;
	return 1;
}

int go_rows__apply(struct unwind_build *b)
{
	const struct unwind_rule gap = {.cmd = b->nr_fdes ? UNWIND_CMD_INVALID : UNWIND_CMD_FP};
	struct unwind_row *base = b->rows;
	size_t nbase = b->nr_rows, cap = b->cap_rows, j = 0;
	struct go_cursor c = {.b = b};
	uint64_t p, next, last_fn = UINT64_MAX;
	int ret = 0;

	/* the walked rows are read while the table's are emitted afresh */
	b->rows = NULL;
	b->nr_rows = 0;
	b->cap_rows = 0;
	b->any_row = false;
	b->last_pc = 0;
	b->emitted = 0;
	cursor_next(&c);
	p = nbase ? b->base + base[0].pc : UINT64_MAX;
	if (c.seg.valid && c.seg.lo < p)
		p = c.seg.lo;
	if (p != UINT64_MAX && p > b->base)
		ret = unwind_walk__emit(b, b->base, &gap);
	while (!ret && p != UINT64_MAX) {
		const struct unwind_rule *cfi = NULL, *rule;
		bool go_here;

		while (j < nbase && b->base + base[j].pc <= p)
			j++;
		while (c.seg.valid && c.seg.hi <= p)
			cursor_next(&c);
		if (j && base[j - 1].rule < b->nr_rules &&
		    b->rules[base[j - 1].rule].cmd != UNWIND_CMD_INVALID)
			cfi = &b->rules[base[j - 1].rule];
		go_here = c.seg.valid && c.seg.lo <= p && (c.seg.overrides || !cfi);
		rule = go_here ? &c.seg.rule : cfi ? cfi : &gap;
		ret = unwind_walk__emit(b, p, rule);
		next = j < nbase ? b->base + base[j].pc : UINT64_MAX;
		if (c.seg.valid) {
			uint64_t q = c.seg.lo > p ? c.seg.lo : c.seg.hi;

			next = q < next ? q : next;
		}
		if (go_here && !cfi && next != UINT64_MAX) {
			b->stats.go_bytes += next - p;
			if (!c.seg.overrides && c.seg.fn != last_fn) {
				b->stats.go_funcs++;
				last_fn = c.seg.fn;
			}
		}
		p = next;
	}
	free(base);
	mem_budget__give(&b->mem, cap * sizeof(*base));
	/* what the table needs of it is in the rows now */
	gopclntab__free(b->go);
	b->go = NULL;
	mem_budget__give(&b->mem, b->go_charged);
	b->go_charged = 0;
	if (ret)
		return ret;
	b->stats.covered_bytes += b->stats.go_bytes;
	b->sources |= UNWIND_SRC_GOPCLNTAB;
	if (!b->source)
		b->source = ".gopclntab";
	return 0;
}
