// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwind_check - checks of a built unwind table, for test_unwind_table and
 * test_unwind_synth: the invariants the BPF side relies on, and, row by row,
 * binutils' own reading of the file's CFI: readelf
 * --debug-dump=frames-interp (the rows) and --debug-dump=frames (the
 * expressions behind "exp"); readelf is found through PATH.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <elf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "unwind_check.h"

#define MAX_EXPRS 4
#define PATH_LEN  4096

/* the invariants the BPF side relies on, for any table */
void unwind_check_invariants(const struct unwind_table *t)
{
	size_t i, sum = 0;

	assert_true(t->nr_rows >= 2);
	assert_true(t->nr_rules >= 1 && t->nr_rules <= t->nr_rows);
	for (i = 0; i < t->nr_rows; i++) {
		assert_true(t->rows[i].rule < t->nr_rules);
		if (i) {
			assert_true(t->rows[i].pc > t->rows[i - 1].pc);
			assert_int_not_equal(t->rows[i].rule, t->rows[i - 1].rule);
		}
	}
	for (i = 0; i < t->nr_rules; i++) {
		const struct unwind_rule *r = &t->rules[i];

		assert_true(r->cmd < UNWIND_CMD_MAX && r->rbp < UNWIND_RBP_MAX);
		assert_true(r->go_switch < UNWIND_GO_SWITCH_MAX);
		if (r->cmd != UNWIND_CMD_GO_SYSTEM_STACK)
			assert_int_equal(r->go_switch, 0);
		assert_true(r->ra < UNWIND_RA_MAX);
		if (r->ra != UNWIND_RA_CFA)
			assert_int_equal(r->ra_off, 0);
		if (i)
			assert_int_not_equal(memcmp(r, &t->rules[i - 1], sizeof(*r)), 0);
	}
	for (i = 0; i < UNWIND_CMD_MAX; i++)
		sum += t->stats.cmd_rows[i];
	assert_int_equal(sum, t->nr_rows);
	/* the last row closes the last FDE */
	assert_int_equal(t->rules[t->rows[t->nr_rows - 1].rule].cmd, UNWIND_CMD_INVALID);
	assert_int_equal(unwind_table__find(t, t->base - 1)->cmd, UNWIND_CMD_INVALID);
	assert_int_equal(unwind_table__find(t, t->base + t->rows[t->nr_rows - 1].pc)->cmd,
			 UNWIND_CMD_INVALID);
	assert_int_equal(unwind_table__find(t, UINT64_MAX)->cmd, UNWIND_CMD_INVALID);
}

/* @path's ELF machine (e_machine), 0 when it cannot be read */
static uint16_t elf_machine(const char *path)
{
	Elf64_Ehdr eh;
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(&eh, sizeof(eh), 1, f) : 0;

	if (f)
		fclose(f);
	return n == 1 ? eh.e_machine : 0;
}

/* ---- readelf --debug-dump=frames(-interp) */

struct rd_row {
	uint64_t loc;
	char cfa[48];
	char rbp[48];
	char rsp[48];
	char ra[48];
};

/* one CIE or FDE */
struct rd_entry {
	uint64_t off;
	bool cie;
	uint64_t cie_off; /* FDE */
	uint64_t lo, hi;  /* FDE */
	bool signal;	  /* CIE: 'S' augmentation */
	size_t row0, nr_rows;
	/* from the raw dump: the expressions behind "exp" */
	char cfa_expr[MAX_EXPRS][256];
	int nr_cfa_expr;
	char rbp_expr[MAX_EXPRS][256];
	int nr_rbp_expr;
	bool rbp_undefined;
	bool ra_undefined; /* AArch64: DW_CFA_undefined x30 (readelf's "u" is also unmentioned) */
};

struct rd_dump {
	struct rd_entry *e;
	size_t nr, cap;
	struct rd_row *rows;
	size_t nr_rows, cap_rows;
};

/* readelf exits 1 after complaining about, e.g., libc's missing interpreter */
static void readelf_close(FILE *f)
{
	int st = pclose(f);

	assert_true(WIFEXITED(st) && WEXITSTATUS(st) <= 1);
}

static bool section_header(const char *line, const char *section, bool *in)
{
	char want[96];

	if (strncmp(line, "Contents of the ", 16) != 0)
		return false;
	snprintf(want, sizeof(want), "Contents of the %s section", section);
	*in = strncmp(line, want, strlen(want)) == 0;
	return true;
}

/* "OFF LEN ID CIE ..." / "OFF LEN ID FDE cie=X pc=LO..HI": a new entry */
static struct rd_entry *rd_entry_line(struct rd_dump *d, const char *line)
{
	uint64_t off, len, id, cie, lo, hi;
	struct rd_entry *e;
	const char *q;
	int n;

	if (sscanf(line, "%" SCNx64 " %" SCNx64 " %" SCNx64 " %n", &off, &len, &id, &n) != 3)
		return NULL;
	if (strncmp(line + n, "CIE", 3) != 0 && strncmp(line + n, "FDE", 3) != 0)
		return NULL;
	if (d->nr == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 256;
		d->e = realloc(d->e, d->cap * sizeof(*d->e));
		assert_non_null(d->e);
	}
	e = &d->e[d->nr++];
	memset(e, 0, sizeof(*e));
	e->off = off;
	e->row0 = d->nr_rows;
	if (strncmp(line + n, "CIE", 3) == 0) {
		e->cie = true;
		q = strchr(line + n, '"');
		e->signal =
			q && strchr(q + 1, '"') && memchr(q + 1, 'S', strchr(q + 1, '"') - q - 1);
		return e;
	}
	assert_int_equal(
		sscanf(line + n, "FDE cie=%" SCNx64 " pc=%" SCNx64 "..%" SCNx64, &cie, &lo, &hi),
		3);
	e->cie_off = cie;
	e->lo = lo;
	e->hi = hi;
	return e;
}

/* readelf's whitespace-separated values; "r9 (r9)" is one value */
static int split_values(char *line, char **tok, int max)
{
	int n = 0;
	char *p = strtok(line, " \t\n");

	for (; p; p = strtok(NULL, " \t\n")) {
		if (p[0] == '(' && n) {
			p[-1] = ' '; /* rejoin with the previous token */
			continue;
		}
		if (n < max)
			tok[n++] = p;
	}
	return n;
}

static void rd_load_interp(struct rd_dump *d, const char *path, const char *section)
{
	char cmd[PATH_LEN + 100], line[1024], cols[32][16];
	struct rd_entry *cur = NULL;
	int ncols = 0;
	bool in = false;
	FILE *f;

	memset(d, 0, sizeof(*d));
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *tok[34];
		int n, i;

		if (section_header(line, section, &in)) {
			cur = NULL;
			continue;
		}
		if (!in)
			continue;
		if (rd_entry_line(d, line)) {
			cur = &d->e[d->nr - 1];
			ncols = 0;
			continue;
		}
		if (!cur)
			continue;
		if (strncmp(line, "   LOC", 6) == 0) {
			n = split_values(line, tok, 34);
			for (ncols = 0; ncols + 1 < n && ncols < 32; ncols++)
				snprintf(cols[ncols], sizeof(cols[ncols]), "%s", tok[ncols + 1]);
			continue;
		}
		if (strlen(line) < 17 || line[16] != ' ' || strspn(line, "0123456789abcdef") != 16)
			continue;
		n = split_values(line, tok, 34);
		assert_true(n >= 2 && ncols > 0);
		if (d->nr_rows == d->cap_rows) {
			d->cap_rows = d->cap_rows ? 2 * d->cap_rows : 1024;
			d->rows = realloc(d->rows, d->cap_rows * sizeof(*d->rows));
			assert_non_null(d->rows);
		}
		struct rd_row *r = &d->rows[d->nr_rows++];

		memset(r, 0, sizeof(*r));
		r->loc = strtoull(tok[0], NULL, 16);
		for (i = 0; i < ncols && i + 1 < n; i++) {
			char *dst = NULL;

			/* AArch64's frame pointer and sp stand in rbp's and rsp's columns */
			if (strcmp(cols[i], "CFA") == 0)
				dst = r->cfa;
			else if (strcmp(cols[i], "rbp") == 0 || strcmp(cols[i], "x29") == 0)
				dst = r->rbp;
			else if (strcmp(cols[i], "rsp") == 0 || strcmp(cols[i], "sp") == 0)
				dst = r->rsp;
			else if (strcmp(cols[i], "ra") == 0)
				dst = r->ra;
			if (dst)
				snprintf(dst, sizeof(r->cfa), "%s", tok[i + 1]);
		}
		cur->nr_rows++;
	}
	readelf_close(f);
}

static struct rd_entry *rd_find(const struct rd_dump *d, uint64_t off)
{
	for (size_t lo = 0, hi = d->nr; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->e[mid].off == off)
			return &d->e[mid];
		if (d->e[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void add_expr(char exprs[][256], int *nr, const char *s)
{
	for (int i = 0; i < *nr; i++)
		if (strcmp(exprs[i], s) == 0)
			return;
	assert_true(*nr < MAX_EXPRS);
	snprintf(exprs[(*nr)++], 256, "%s", s);
}

/* the text between the first '(' after @prefix and the last ')' */
static const char *paren_body(char *s, const char *prefix)
{
	char *open, *close;

	if (strncmp(s, prefix, strlen(prefix)) != 0)
		return NULL;
	open = strchr(s + strlen(prefix), '(');
	close = strrchr(s, ')');
	if (!open || !close || close < open)
		return NULL;
	*close = '\0';
	return open + 1;
}

static void rd_load_raw(struct rd_dump *d, const char *path, const char *section)
{
	char cmd[PATH_LEN + 100], line[1024];
	struct rd_entry *cur = NULL;
	bool in = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		uint64_t off, len, id;
		const char *body;
		char *s;
		int n;

		if (section_header(line, section, &in)) {
			cur = NULL;
			continue;
		}
		if (!in)
			continue;
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %" SCNx64 " %n", &off, &len, &id, &n) ==
			    3 &&
		    (strncmp(line + n, "CIE", 3) == 0 || strncmp(line + n, "FDE", 3) == 0)) {
			cur = rd_find(d, off);
			assert_non_null(cur);
			continue;
		}
		if (!cur)
			continue;
		s = fixture_trim(line);
		if ((body = paren_body(s, "DW_CFA_def_cfa_expression")))
			add_expr(cur->cfa_expr, &cur->nr_cfa_expr, body);
		else if ((body = paren_body(s, "DW_CFA_expression: r6 (rbp)")))
			add_expr(cur->rbp_expr, &cur->nr_rbp_expr, body);
		else if (strncmp(s, "DW_CFA_undefined: r6 (rbp)", 26) == 0)
			cur->rbp_undefined = true;
		else if (strncmp(s, "DW_CFA_undefined: r29 (x29)", 27) == 0)
			cur->rbp_undefined = true;
		else if (strncmp(s, "DW_CFA_undefined: r30 (x30)", 27) == 0)
			cur->ra_undefined = true;
	}
	readelf_close(f);
}

static void rd_load(struct rd_dump *d, const char *path, const char *section)
{
	rd_load_interp(d, path, section);
	rd_load_raw(d, path, section);
	assert_true(d->nr > 0);
}

static void rd_free(struct rd_dump *d)
{
	free(d->e);
	free(d->rows);
}

/* "rsp+8", "c-16": the signed number after the first non-letter */
static bool value_off(const char *v, const char *prefix, int32_t *off)
{
	char *end;
	long n;

	if (strncmp(v, prefix, strlen(prefix)) != 0)
		return false;
	v += strlen(prefix);
	if (*v != '+' && *v != '-')
		return false;
	n = strtol(v, &end, 10);
	*off = (int32_t)n;
	return *end == '\0';
}

/*
 * The rule readelf's @row stands for, reading "exp" in the CFA and rbp
 * columns as @cfa_expr / @rbp_expr and "u" in the rbp column as undefined
 * when @rbp_undef (readelf prints "u" for both unmentioned and undefined).
 */
static struct unwind_rule expect_rule(bool signal, const struct rd_row *row, const char *cfa_expr,
				      const char *rbp_expr, bool rbp_undef)
{
	struct unwind_rule r = {}, unsup = {.cmd = UNWIND_CMD_UNSUPPORTED};
	int32_t off, thresh;
	int n = 0;

	if (signal) {
		r.cmd = UNWIND_CMD_SIGNAL;
		return r;
	}
	if (strcmp(row->ra, "u") == 0) {
		r.cmd = UNWIND_CMD_END;
		return r;
	}
	if (strcmp(row->ra, "c-8") != 0)
		return unsup;
	if (row->rsp[0] && strcmp(row->rsp, "u") != 0)
		return unsup;

	if (value_off(row->cfa, "rsp", &off)) {
		r.cmd = UNWIND_CMD_CFA_RSP;
	} else if (value_off(row->cfa, "rbp", &off)) {
		r.cmd = UNWIND_CMD_CFA_RBP;
	} else if (strcmp(row->cfa, "exp") == 0 && cfa_expr) {
		if (sscanf(cfa_expr,
			   "DW_OP_breg7 (rsp): %d; DW_OP_breg16 (rip): 0; DW_OP_lit15; DW_OP_and; "
			   "DW_OP_lit%d; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus%n",
			   &off, &thresh, &n) == 2 &&
		    cfa_expr[n] == '\0') {
			r.cmd = UNWIND_CMD_PLT;
			r.rbp_off = thresh;
		} else if (n = 0, sscanf(cfa_expr, "DW_OP_breg6 (rbp): %d; DW_OP_deref%n", &off,
					 &n) == 1 &&
					  n && cfa_expr[n] == '\0') {
			r.cmd = UNWIND_CMD_CFA_RBP_DEREF;
		} else {
			return unsup;
		}
	} else {
		return unsup;
	}
	r.cfa_off = off;

	if (!row->rbp[0] || strcmp(row->rbp, "u") == 0 || strcmp(row->rbp, "s") == 0) {
		r.rbp = rbp_undef && strcmp(row->rbp, "u") == 0 ? UNWIND_RBP_UNDEFINED
								: UNWIND_RBP_SAME;
	} else if (value_off(row->rbp, "c", &off)) {
		r.rbp = UNWIND_RBP_CFA;
		r.rbp_off = off;
	} else if (strcmp(row->rbp, "exp") == 0 && rbp_expr &&
		   (n = 0, sscanf(rbp_expr, "DW_OP_breg6 (rbp): %d%n", &off, &n) == 1) &&
		   rbp_expr[n] == '\0') {
		r.rbp = UNWIND_RBP_RBP;
		r.rbp_off = off;
	} else {
		return unsup;
	}
	if (r.cmd == UNWIND_CMD_PLT && r.rbp != UNWIND_RBP_SAME)
		return unsup;
	return r;
}

/*
 * AArch64's rule for readelf's @row: CFA sp+N or x29+N; x29 unchanged or at
 * c-N; the return address (x30, "ra") at c-N, still in x30 ("u": unmentioned)
 * or undefined (@ra_undef: the end).
 */
static struct unwind_rule expect_rule_a64(const struct rd_row *row, bool rbp_undef, bool ra_undef)
{
	struct unwind_rule r = {}, unsup = {.cmd = UNWIND_CMD_UNSUPPORTED};
	int32_t off;

	if (strcmp(row->ra, "u") == 0 && ra_undef) {
		r.cmd = UNWIND_CMD_END;
		return r;
	}
	if (!row->ra[0] || strcmp(row->ra, "u") == 0 || strcmp(row->ra, "s") == 0) {
		r.ra = UNWIND_RA_LR;
	} else if (value_off(row->ra, "c", &off)) {
		r.ra = UNWIND_RA_CFA;
		r.ra_off = off;
	} else {
		return unsup;
	}
	if (row->rsp[0] && strcmp(row->rsp, "u") != 0)
		return unsup;
	if (value_off(row->cfa, "sp", &off))
		r.cmd = UNWIND_CMD_CFA_RSP;
	else if (value_off(row->cfa, "x29", &off))
		r.cmd = UNWIND_CMD_CFA_RBP;
	else
		return unsup;
	r.cfa_off = off;
	if (!row->rbp[0] || strcmp(row->rbp, "u") == 0 || strcmp(row->rbp, "s") == 0) {
		r.rbp = rbp_undef && strcmp(row->rbp, "u") == 0 ? UNWIND_RBP_UNDEFINED
								: UNWIND_RBP_SAME;
	} else if (value_off(row->rbp, "c", &off)) {
		r.rbp = UNWIND_RBP_CFA;
		r.rbp_off = off;
	} else {
		return unsup;
	}
	return r;
}

/* does @got match the row under one reading of its "exp" and "u" values? */
static bool row_matches(const struct rd_entry *fde, const struct rd_entry *cie,
			const struct rd_row *row, const struct unwind_rule *got, bool a64)
{
	const char *cfa_exprs[2 * MAX_EXPRS + 1] = {NULL}, *rbp_exprs[2 * MAX_EXPRS + 1] = {NULL};
	int nc = 0, nr = 0, i;
	bool undef = fde->rbp_undefined || cie->rbp_undefined;
	bool ra_undef = fde->ra_undefined || cie->ra_undefined;

	for (i = 0; i < fde->nr_cfa_expr; i++)
		cfa_exprs[nc++] = fde->cfa_expr[i];
	for (i = 0; i < cie->nr_cfa_expr; i++)
		cfa_exprs[nc++] = cie->cfa_expr[i];
	for (i = 0; i < fde->nr_rbp_expr; i++)
		rbp_exprs[nr++] = fde->rbp_expr[i];
	for (i = 0; i < cie->nr_rbp_expr; i++)
		rbp_exprs[nr++] = cie->rbp_expr[i];
	nc = nc ? nc : 1;
	nr = nr ? nr : 1;
	for (int u = 0; a64 && u <= (int)undef; u++)
		for (int v = 0; v <= (int)ra_undef; v++) {
			struct unwind_rule want = expect_rule_a64(row, u, v);

			if (memcmp(&want, got, sizeof(want)) == 0)
				return true;
		}
	if (a64)
		return false;
	for (int c = 0; c < nc; c++)
		for (int b = 0; b < nr; b++)
			for (int u = 0; u <= (int)undef; u++) {
				struct unwind_rule want = expect_rule(
					cie->signal, row, cfa_exprs[c], rbp_exprs[b], u);

				if (memcmp(&want, got, sizeof(want)) == 0)
					return true;
			}
	return false;
}

static int range_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/*
 * Check @t against readelf's rows of @section in @path: for every row, at its
 * first and last byte; and UNWIND_CMD_INVALID around every FDE.
 * Return: the number of rows checked.
 */
size_t unwind_check_readelf(const struct unwind_table *t, const char *path, const char *section)
{
	uint64_t(*ranges)[2];
	size_t i, checked = 0, nr_fdes = 0;
	struct rd_dump d;
	bool a64 = elf_machine(path) == EM_AARCH64;

	rd_load(&d, path, section);
	ranges = calloc(d.nr, sizeof(*ranges));
	assert_non_null(ranges);
	for (i = 0; i < d.nr; i++) {
		const struct rd_entry *fde = &d.e[i], *cie;
		const struct rd_row *rows;
		size_t nrows, k;

		if (fde->cie || fde->lo >= fde->hi)
			continue;
		cie = rd_find(&d, fde->cie_off);
		assert_non_null(cie);
		ranges[nr_fdes][0] = fde->lo;
		ranges[nr_fdes][1] = fde->hi;
		nr_fdes++;
		/* readelf prints no rows for an FDE without instructions: its CIE's apply */
		rows = &d.rows[fde->row0];
		nrows = fde->nr_rows;
		if (!nrows) {
			assert_true(cie->nr_rows >= 1);
			rows = &d.rows[cie->row0 + cie->nr_rows - 1];
			nrows = 1;
		}
		for (k = 0; k < nrows; k++) {
			uint64_t a = fde->nr_rows ? rows[k].loc : fde->lo;
			uint64_t b = k + 1 < nrows ? rows[k + 1].loc : fde->hi;
			const struct unwind_rule *first, *last;

			if (a >= b)
				continue;
			first = unwind_table__find(t, a);
			last = unwind_table__find(t, b - 1);
			if (!row_matches(fde, cie, &rows[k], first, a64) ||
			    !row_matches(fde, cie, &rows[k], last, a64))
				fail_msg(
					"%s: FDE %#" PRIx64 " row [%#" PRIx64 ",%#" PRIx64
					") CFA %s rbp %s ra %s: got %s cfa %d rbp %u/%d, at end %s",
					path, fde->off, a, b, rows[k].cfa, rows[k].rbp, rows[k].ra,
					unwind_cmd_name(first->cmd), first->cfa_off, first->rbp,
					first->rbp_off, unwind_cmd_name(last->cmd));
			checked++;
		}
	}
	/* addresses no FDE covers */
	qsort(ranges, nr_fdes, sizeof(*ranges), range_cmp);
	assert_true(nr_fdes > 0);
	if (ranges[0][0] > t->base)
		assert_int_equal(unwind_table__find(t, ranges[0][0] - 1)->cmd, UNWIND_CMD_INVALID);
	for (i = 0; i < nr_fdes; i++) {
		uint64_t end = ranges[i][1];

		if (i + 1 < nr_fdes && ranges[i + 1][0] <= end)
			continue;
		assert_int_equal(unwind_table__find(t, end)->cmd, UNWIND_CMD_INVALID);
		if (i + 1 < nr_fdes)
			assert_int_equal(unwind_table__find(t, ranges[i + 1][0] - 1)->cmd,
					 UNWIND_CMD_INVALID);
	}
	assert_int_equal(t->stats.fdes, nr_fdes);
	free(ranges);
	rd_free(&d);
	return checked;
}

/* FDEs of @section in @path, as readelf lists them */
size_t unwind_check_readelf_fdes(const char *path, const char *section)
{
	struct rd_dump d;
	size_t n = 0;

	rd_load(&d, path, section);
	for (size_t i = 0; i < d.nr; i++)
		n += !d.e[i].cie && d.e[i].lo < d.e[i].hi;
	rd_free(&d);
	return n;
}

uint64_t unwind_check_readelf_signal_fde(const char *path, const char *section)
{
	struct rd_dump d;
	uint64_t lo = 0;

	rd_load(&d, path, section);
	for (size_t i = 0; i < d.nr && !lo; i++)
		if (!d.e[i].cie && rd_find(&d, d.e[i].cie_off)->signal)
			lo = d.e[i].lo;
	rd_free(&d);
	return lo;
}
