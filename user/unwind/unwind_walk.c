// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwind_walk - the walk stage of an unwind table build: each settled FDE,
 * row by row, asked of libdw (dwarf_cfi_addrframe() at an address, then
 * on at the end of the row it reports, so the walk always advances), each
 * row translated (cfi_rules.h) and merged on the fly with the one before it
 * when their rules are equal; rules are deduplicated as they come.
 *
 * What bounds it: UNWIND_TABLE_FDE_WORK per FDE (estimated, as it must be
 * known before a libdw call no clock can interrupt), and between calls the
 * thread's CPU clock against the build's budget and the caller's slice,
 * and the caller's cancel flag.  Rows and rules are charged to the build's
 * memory budget as they grow.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unwind/cfi_rules.h"
#include "unwind/unwind_walk.h"
#include "util/clock.h"
#include "util/errmsg.h"
#include "util/hash.h"

/*
 * The clock is read every WALK_CHECK_EVALS libdw calls, or sooner after
 * WALK_CHECK_WORK of estimated work: on real files a call takes about
 * 250 ns, so the check costs well under 1% and comes every 20 us or so.
 */
#define WALK_CHECK_EVALS 64
#define WALK_CHECK_WORK	 (1u << 20)

static const struct unwind_rule invalid_rule = {.cmd = UNWIND_CMD_INVALID};

/* when the walk of this call started, and how far it may go */
struct walk_clock {
	uint64_t start; /* the thread's CPU clock */
	uint64_t slice;
	unsigned int evals; /* since the last check */
	uint64_t work;
};

static uint64_t thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* stop for the caller (cancel), the budget (CPU) or the slice? */
static int walk_check(struct unwind_build *b, struct walk_clock *c)
{
	uint64_t now;

	c->evals = 0;
	c->work = 0;
	if (b->cancel && atomic_load_explicit(b->cancel, memory_order_relaxed)) {
		set_err(b->err, b->err_len, "cancelled");
		return -ECANCELED;
	}
	now = thread_cpu_ns();
	if (b->cpu_ns + (now - c->start) > b->cpu_limit) {
		set_err(b->err, b->err_len, "evaluating the CFI takes more than %llu ms of CPU",
			(unsigned long long)(b->cpu_limit / 1000000));
		return -ETIME;
	}
	return now - c->start >= c->slice ? -EAGAIN : 0;
}

static bool rule_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct unwind_build *b = ctx;

	return !memcmp(&b->rules[idx], key, sizeof(struct unwind_rule));
}

/*
 * What the rule index may hold a rule: at 3/4 load after a doubling, and
 * both slot arrays while it rehashes, about four slots.
 */
#define RULE_INDEX_BYTES (4 * sizeof(struct htable_slot))

/* the index of @rule among the build's distinct rules, added if new */
static int rule_index(struct unwind_build *b, const struct unwind_rule *rule, uint32_t *idx)
{
	uint32_t hash = (uint32_t)hash_bytes(rule, sizeof(*rule));
	int ret;

	*idx = htable__find(&b->rule_index, hash, rule_eq, b, rule);
	if (*idx != HTABLE_NONE)
		return 0;
	ret = mem_budget__grow(&b->mem, (void **)&b->rules, &b->cap_rules, b->nr_rules + 1,
			       sizeof(*b->rules), 64);
	if (!ret)
		ret = mem_budget__take(&b->mem, RULE_INDEX_BYTES);
	if (!ret)
		ret = htable__insert(&b->rule_index, hash, (uint32_t)b->nr_rules);
	if (ret)
		return ret;
	b->rules[b->nr_rules] = *rule;
	*idx = (uint32_t)b->nr_rules++;
	return 0;
}

int unwind_walk__emit(struct unwind_build *b, uint64_t vaddr, const struct unwind_rule *rule)
{
	uint32_t pc = (uint32_t)(vaddr - b->base), idx;
	int ret;

	if (b->emitted >= UNWIND_TABLE_MAX_ROWS) {
		set_err(b->err, b->err_len, "more than %u rows", UNWIND_TABLE_MAX_ROWS);
		return -E2BIG;
	}
	if (b->any_row && pc < b->last_pc) {
		set_err(b->err, b->err_len, "internal error: rows out of order");
		return -EINVAL;
	}
	if (b->any_row && pc == b->last_pc && b->nr_rows && b->rows[b->nr_rows - 1].pc == pc)
		b->nr_rows--;
	b->emitted++;
	b->any_row = true;
	b->last_pc = pc;
	ret = rule_index(b, rule, &idx);
	if (ret)
		goto out_err;
	if (b->nr_rows && b->rows[b->nr_rows - 1].rule == idx)
		return 0;
	ret = mem_budget__grow(&b->mem, (void **)&b->rows, &b->cap_rows, b->nr_rows + 1,
			       sizeof(*b->rows), 1024);
	if (ret)
		goto out_err;
	b->rows[b->nr_rows++] = (struct unwind_row){.pc = pc, .rule = idx};
	return 0;

out_err:
	set_err(b->err, b->err_len, "%s",
		ret == -E2BIG ? "rows past the memory budget" : "out of memory");
	return ret;
}

static int emit_unsup(struct unwind_build *b, uint64_t vaddr, enum unwind_unsup why)
{
	struct unwind_rule r = {.cmd = UNWIND_CMD_UNSUPPORTED};

	b->stats.unsup[why]++;
	return unwind_walk__emit(b, vaddr, &r);
}

/*
 * Walk one FDE's rows, from b->walk_addr when resuming: ask libdw for the
 * row at an address, emit it, continue at its end.  libdw reports
 * start <= addr < end; anything else stops the walk, so it always advances.
 */
static int walk_fde(struct unwind_build *b, const struct fde_range *f, struct walk_clock *c)
{
	const struct cfi_src *src = &b->srcs[f->src];
	uint64_t addr = b->in_fde ? b->walk_addr : f->lo;
	int ret;

	if (!b->in_fde)
		b->fde_work = 0;
	b->in_fde = false;
	while (addr < f->hi) {
		Dwarf_Addr start, end;
		struct unwind_rule rule;
		enum unwind_unsup why;
		Dwarf_Frame *fr;
		bool signal;
		int ra_reg;

		if (b->fde_work + f->cost > UNWIND_TABLE_FDE_WORK)
			return emit_unsup(b, addr, UNWIND_UNSUP_BUDGET);
		b->fde_work += f->cost;
		b->stats.work += f->cost;

		if (dwarf_cfi_addrframe(src->cfi, addr, &fr) != 0)
			return emit_unsup(b, addr, UNWIND_UNSUP_LIBDW);
		ra_reg = dwarf_frame_info(fr, &start, &end, &signal);
		if (start > addr || end <= addr) {
			free(fr);
			return emit_unsup(b, addr, UNWIND_UNSUP_LIBDW);
		}
		b->stats.libdw_rows++;
		why = cfi_rule_from_frame(fr, ra_reg, signal, b->machine, &rule);
		free(fr);
		if (why != UNWIND_UNSUP_MAX)
			b->stats.unsup[why]++;
		ret = unwind_walk__emit(b, addr, &rule);
		if (ret)
			return ret;
		addr = end < f->hi ? end : f->hi;
		c->work += f->cost;
		if (++c->evals >= WALK_CHECK_EVALS || c->work >= WALK_CHECK_WORK) {
			ret = walk_check(b, c);
			if (ret) {
				b->in_fde = true;
				b->walk_addr = addr;
				return ret;
			}
		}
	}
	return 0;
}

static int walk_fdes(struct unwind_build *b, struct walk_clock *c)
{
	int ret;

	if (!b->head_done) {
		if (b->fdes[0].lo > b->base) {
			ret = unwind_walk__emit(b, b->base, &invalid_rule);
			if (ret)
				return ret;
		}
		b->head_done = true;
	}
	for (; b->next_fde < b->nr_fdes; b->next_fde++) {
		const struct fde_range *f = &b->fdes[b->next_fde];

		ret = walk_fde(b, f, c);
		if (ret)
			return ret;
		if (b->next_fde + 1 == b->nr_fdes || f[1].lo != f->hi) {
			ret = unwind_walk__emit(b, f->hi, &invalid_rule);
			if (ret)
				return ret;
		}
		/* between FDEs too: a file of many short FDEs is timed as well */
		if (++c->evals >= WALK_CHECK_EVALS) {
			ret = walk_check(b, c);
			if (ret) {
				b->next_fde++;
				return ret;
			}
		}
	}
	return 0;
}

int unwind_walk(struct unwind_build *b, uint64_t slice_ns)
{
	struct walk_clock c = {.start = thread_cpu_ns(), .slice = slice_ns};
	int ret;

	ret = walk_fdes(b, &c);
	b->cpu_ns += thread_cpu_ns() - c.start;
	if (ret)
		return ret;
	b->stats.fdes = b->nr_fdes;
	for (size_t i = 0; i < b->nr_fdes; i++)
		b->stats.covered_bytes += b->fdes[i].hi - b->fdes[i].lo;
	return 0;
}

static int rule_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct unwind_rule));
}

static int rule_idx_cmp(const void *a, const void *b, void *rules)
{
	const struct unwind_rule *r = rules;

	return rule_cmp(&r[*(const uint32_t *)a], &r[*(const uint32_t *)b]);
}

int unwind_walk__finish(struct unwind_build *b)
{
	size_t i, n = b->nr_rows, k = 0, bytes;
	struct unwind_table *t;
	uint32_t *order, *remap;

	if (!n) {
		set_err(b->err, b->err_len, "no rows");
		return -ENODATA;
	}
	bytes = b->nr_rules * 2 * sizeof(uint32_t) + sizeof(*t);
	if (mem_budget__take(&b->mem, bytes) ||
	    mem_budget__take(&b->mem, b->nr_rules * sizeof(*t->rules))) {
		set_err(b->err, b->err_len, "rules past the memory budget");
		return -E2BIG;
	}
	order = calloc(b->nr_rules, sizeof(*order));
	remap = calloc(b->nr_rules, sizeof(*remap));
	t = calloc(1, sizeof(*t));
	if (t)
		t->rules = malloc(b->nr_rules * sizeof(*t->rules));
	if (!order || !remap || !t || !t->rules) {
		free(order);
		free(remap);
		if (t)
			free(t->rules);
		free(t);
		set_err(b->err, b->err_len, "out of memory");
		return -ENOMEM;
	}
	/* the rules the rows use (a popped row's may be unused), sorted as bytes */
	for (i = 0; i < n; i++)
		remap[b->rows[i].rule] = 1;
	for (i = 0; i < b->nr_rules; i++)
		if (remap[i])
			order[k++] = (uint32_t)i;
	qsort_r(order, k, sizeof(*order), rule_idx_cmp, b->rules);
	for (i = 0; i < k; i++) {
		t->rules[i] = b->rules[order[i]];
		remap[order[i]] = (uint32_t)i;
	}
	for (i = 0; i < n; i++) {
		b->rows[i].rule = remap[b->rows[i].rule];
		b->stats.cmd_rows[t->rules[b->rows[i].rule].cmd]++;
	}
	free(order);
	free(remap);
	mem_budget__give(&b->mem, bytes - sizeof(*t));
	/* the rows become the table's: shrunk to their number */
	t->rows = realloc(b->rows, n * sizeof(*t->rows));
	if (!t->rows)
		t->rows = b->rows;
	b->rows = NULL;
	t->nr_rows = n;
	t->nr_rules = k;
	t->base = b->base;
	b->table = t;
	return 0;
}
