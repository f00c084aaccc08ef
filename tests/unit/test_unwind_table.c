// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/unwind/unwind_table.c.
 *
 * Real ELF fixtures (tests/unit/unwind_fixtures.mk) and the system's libc are
 * checked row by row against binutils: readelf --debug-dump=frames-interp
 * gives each row's CFA, rbp and return address rules, and
 * --debug-dump=frames the expressions its "exp" stands for.  Small ELF files
 * synthesized here byte by byte cover what real files never contain:
 * overlapping FDEs, hostile CIEs, a pc range past 4 GiB.
 *
 * Fixtures are looked up in $FIXTURES_DIR, else $OUTPUT/fixtures/unwind,
 * else build/fixtures/unwind (the test runs from the repository root);
 * readelf and nm are found through PATH.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "fixtures.h"
#include "unwind/unwind_table.h"

#define LIBC_PATH      "/lib/x86_64-linux-gnu/libc.so.6"
#define FIX_OMITFP_PIE "unwind_omitfp_pie"
#define FIX_FP_NOPIE   "unwind_fp_nopie"
#define FIX_LIB	       "libunwind_fixture.so"
#define FIX_BARE_DF    "unwind_bare_debug_frame"
#define FIX_BARE_ZLIB  "unwind_bare_zlib"
#define FIX_BARE_ZGNU  "unwind_bare_zlib_gnu"
#define FIX_BARE_STRIP "unwind_bare_stripped"
#define FIX_BARE_DEBUG "unwind_bare.debug"
#define FIX_BARE_NOCFI "unwind_bare_nocfi"
#define FIX_MIXED      "unwind_mixed"
#define FIX_MIXED_DBG  "unwind_mixed.debug"
#define FIX_A64_OMITFP "unwind_a64_omitfp_pie"
#define FIX_A64_FP     "unwind_a64_fp_nopie"
#define MAX_EXPRS      4
#define PATH_LEN       4096

/* ---- fixtures and files */

/* where fixture @name is; whether it is there */
static bool fixture_where(char *buf, const char *name)
{
	const char *dir = getenv("FIXTURES_DIR");
	const char *output = getenv("OUTPUT");

	if (dir && *dir)
		snprintf(buf, PATH_LEN, "%s/%s", dir, name);
	else if (output && *output)
		snprintf(buf, PATH_LEN, "%s/fixtures/unwind/%s", output, name);
	else
		snprintf(buf, PATH_LEN, "build/fixtures/unwind/%s", name);
	return access(buf, R_OK) == 0;
}

static void fixture_path(char *buf, const char *name)
{
	if (!fixture_where(buf, name))
		fail_msg("fixture %s missing: run make check (tests/unit/unwind_fixtures.mk)", buf);
}

/* a fixture open twice: through libelf, to inspect it, and as the builder reads it */
struct test_elf {
	int fd;
	Elf *elf;
	struct elf_file *ef;
};

static void test_elf__open(struct test_elf *f, const char *path)
{
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(f->fd >= 0);
	/* ELF_C_READ: libelf reads with pread(), never mmap() */
	f->elf = elf_begin(f->fd, ELF_C_READ, NULL);
	assert_non_null(f->elf);
	f->ef = elf_file__open_fd(f->fd);
	assert_non_null(f->ef);
}

static void test_elf__close(struct test_elf *f)
{
	elf_file__free(f->ef);
	elf_end(f->elf);
	close(f->fd);
}

static int build_path(const char *path, const char *debug_path, struct unwind_table **t)
{
	struct test_elf f, d = {.fd = -1};
	char err[256];
	int ret;

	test_elf__open(&f, path);
	if (debug_path)
		test_elf__open(&d, debug_path);
	/* the file's machine: AArch64 fixtures are checked on x86-64 too */
	struct unwind_table_limits lim = {.machine = elf_file__ehdr(f.ef)->e_machine};

	ret = unwind_table__build(f.ef, debug_path ? d.ef : NULL, &lim, t, err, sizeof(err));
	if (ret)
		print_message("build %s: %d: %s\n", path, ret, err);
	else
		assert_string_equal(err, "");
	if (debug_path)
		test_elf__close(&d);
	test_elf__close(&f);
	return ret;
}

/* the invariants the BPF side relies on, for any table */
static void table_check_invariants(const struct unwind_table *t)
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
		assert_int_equal(r->pad, 0);
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

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n'))
		*--end = '\0';
	return s;
}

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
		s = trim(line);
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
static size_t check_against_readelf(const struct unwind_table *t, const char *path,
				    const char *section)
{
	uint64_t(*ranges)[2];
	size_t i, checked = 0, nr_fdes = 0;
	struct rd_dump d;
	struct test_elf f;
	bool a64;

	test_elf__open(&f, path);
	a64 = elf_file__ehdr(f.ef)->e_machine == EM_AARCH64;
	test_elf__close(&f);
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

static void check_file(const char *path, const char *section, struct unwind_table **out)
{
	struct unwind_table *t;
	size_t checked;

	assert_int_equal(build_path(path, NULL, &t), 0);
	assert_string_equal(t->source, section);
	table_check_invariants(t);
	checked = check_against_readelf(t, path, section);
	assert_true(checked > 0);
	print_message("%s: %zu rows, %zu rules, %zu FDEs; %zu readelf rows match\n", path,
		      t->nr_rows, t->nr_rules, t->stats.fdes, checked);
	if (out)
		*out = t;
	else
		unwind_table__free(t);
}

/* `nm -S`: a symbol's address and size */
static bool nm_symbol(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	char cmd[PATH_LEN + 100], line[512], sym[256], type;
	bool found = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm -S '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		/* size-0 symbols come without a size */
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %c %255s", addr, size, &type, sym) != 4) {
			*size = 0;
			if (sscanf(line, "%" SCNx64 " %c %255s", addr, &type, sym) != 3)
				continue;
		}
		if (strcmp(sym, name) == 0) {
			found = true;
			break;
		}
	}
	pclose(f);
	return found;
}

/* ---- real files */

static void unwind_table__build__omitfp_pie__matches_readelf(void **state)
{
	struct unwind_table *t;
	char path[PATH_LEN];

	(void)state;

	fixture_path(path, FIX_OMITFP_PIE);
	check_file(path, ".eh_frame", &t);
	assert_int_equal(t->base, 0);
	assert_true(t->stats.cmd_rows[UNWIND_CMD_PLT] >= 1);
	assert_true(t->stats.cmd_rows[UNWIND_CMD_END] >= 1);	 /* _start */
	assert_true(t->stats.cmd_rows[UNWIND_CMD_CFA_RBP] >= 1); /* uses_alloca */
	assert_int_equal(t->stats.fdes_outside + t->stats.fdes_overlap, 0);
	unwind_table__free(t);
}

static void unwind_table__build__fp_nopie__matches_readelf(void **state)
{
	struct unwind_table *t;
	char path[PATH_LEN];

	(void)state;

	fixture_path(path, FIX_FP_NOPIE);
	check_file(path, ".eh_frame", &t);
	assert_int_equal(t->base, 0x400000);
	assert_true(t->stats.cmd_rows[UNWIND_CMD_PLT] >= 1);
	assert_true(t->stats.cmd_rows[UNWIND_CMD_CFA_RBP] >= 1);
	unwind_table__free(t);
}

static void unwind_table__build__shared_lib__matches_readelf(void **state)
{
	struct unwind_table *t;
	char path[PATH_LEN];

	(void)state;

	fixture_path(path, FIX_LIB);
	check_file(path, ".eh_frame", &t);
	assert_true(t->stats.cmd_rows[UNWIND_CMD_PLT] >= 1);
	unwind_table__free(t);
}

static void unwind_table__build__libc__matches_readelf(void **state)
{
	struct unwind_table *t;

	(void)state;

	if (access(LIBC_PATH, R_OK) != 0)
		skip();
	check_file(LIBC_PATH, ".eh_frame", &t);
	assert_int_equal(t->stats.cmd_rows[UNWIND_CMD_SIGNAL], 1); /* __restore_rt */
	unwind_table__free(t);
}

/* AArch64 fixtures (Debian's cross compiler) and arm64 glibc, built on any host */
static void unwind_table__build__aarch64__matches_readelf(void **state)
{
	static const char *const a64_libc = "/usr/lib/aarch64-linux-gnu/libc.so.6";
	struct unwind_table *t;
	char path[PATH_LEN];

	(void)state;
	if (!fixture_where(path, FIX_A64_OMITFP)) {
		print_message("SKIP: no %s (make deps installs gcc-aarch64-linux-gnu)\n", path);
		skip();
	}
	check_file(path, ".eh_frame", &t);
	assert_true(t->stats.cmd_rows[UNWIND_CMD_END] >= 1);	 /* _start: x30 undefined */
	assert_true(t->stats.cmd_rows[UNWIND_CMD_CFA_RSP] >= 1); /* sp + N, x30 saved */
	unwind_table__free(t);
	fixture_path(path, FIX_A64_FP);
	check_file(path, ".eh_frame", &t);
	assert_true(t->stats.cmd_rows[UNWIND_CMD_CFA_RBP] >= 1); /* x29 + N: uses_alloca */
	unwind_table__free(t);
	if (access(a64_libc, R_OK) == 0) {
		check_file(a64_libc, ".eh_frame", &t);
		unwind_table__free(t);
	}
}

/* any files in $UNWIND_TEST_FILES (colon-separated), e.g. a large library */
static void unwind_table__build__extra_files__match_readelf(void **state)
{
	const char *env = getenv("UNWIND_TEST_FILES");
	char *list, *path, *save = NULL;

	(void)state;
	if (!env || !*env)
		skip();
	list = strdup(env);
	assert_non_null(list);
	for (path = strtok_r(list, ":", &save); path; path = strtok_r(NULL, ":", &save))
		check_file(path, ".eh_frame", NULL);
	free(list);
}

/* the lazy .plt: CFA = rsp + 8 + ((rip & 15) >= 11 ? 8 : 0) past its first 16 bytes */
static void unwind_table__find__lazy_plt__plt_rule(void **state)
{
	const struct unwind_rule *r;
	struct unwind_table *t;
	struct test_elf f;
	char path[PATH_LEN];
	Elf_Scn *scn = NULL;
	uint64_t plt = 0, plt_size = 0;
	size_t shstrndx;
	GElf_Shdr sh;

	(void)state;

	fixture_path(path, FIX_FP_NOPIE);
	test_elf__open(&f, path);
	assert_int_equal(elf_getshdrstrndx(f.elf, &shstrndx), 0);
	while ((scn = elf_nextscn(f.elf, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    strcmp(elf_strptr(f.elf, shstrndx, sh.sh_name), ".plt") == 0) {
			plt = sh.sh_addr;
			plt_size = sh.sh_size;
		}
	test_elf__close(&f);
	assert_true(plt && plt_size >= 32);

	assert_int_equal(build_path(path, NULL, &t), 0);
	r = unwind_table__find(t, plt + 16);
	assert_int_equal(r->cmd, UNWIND_CMD_PLT);
	assert_int_equal(r->cfa_off, 8);
	assert_int_equal(r->rbp_off, 11);
	assert_int_equal(r->rbp, UNWIND_RBP_SAME);
	assert_int_equal(unwind_table__find(t, plt + plt_size - 1)->cmd, UNWIND_CMD_PLT);
	/* the first 16 bytes push the GOT entry: plain rsp offsets */
	assert_int_equal(unwind_table__find(t, plt)->cmd, UNWIND_CMD_CFA_RSP);
	unwind_table__free(t);
}

/* force_align_arg_pointer with stack arguments: DRAP, CFA = *(rbp - 8) */
static void unwind_table__find__realigned_function__rbp_deref(void **state)
{
	const char *fixtures[] = {FIX_OMITFP_PIE, FIX_FP_NOPIE};
	char path[PATH_LEN];

	(void)state;

	for (size_t i = 0; i < 2; i++) {
		bool deref = false, drap = false;
		struct unwind_table *t;
		uint64_t addr, size;

		fixture_path(path, fixtures[i]);
		assert_true(nm_symbol(path, "realigned", &addr, &size));
		assert_int_equal(build_path(path, NULL, &t), 0);
		for (uint64_t a = addr; a < addr + size; a++) {
			const struct unwind_rule *r = unwind_table__find(t, a);

			if (r->cmd == UNWIND_CMD_CFA_RBP_DEREF) {
				assert_int_equal(r->cfa_off, -8);
				assert_int_equal(r->rbp, UNWIND_RBP_RBP);
				assert_int_equal(r->rbp_off, 0);
				deref = true;
			}
			/* the CFA on r10 while the realignment is set up */
			drap |= r->cmd == UNWIND_CMD_UNSUPPORTED;
		}
		assert_true(deref);
		assert_true(drap);
		assert_true(t->stats.unsup[UNWIND_UNSUP_CFA_REG] >= 1);
		unwind_table__free(t);
	}
}

/* __restore_rt, the signal trampoline: its CIE has the 'S' augmentation */
static void unwind_table__find__libc_restore_rt__signal(void **state)
{
	char cmd[PATH_LEN], line[512], debug[PATH_LEN] = "";
	uint64_t addr = 0, size;
	struct unwind_table *t;
	FILE *f;

	(void)state;

	if (access(LIBC_PATH, R_OK) != 0)
		skip();
	/* libc's separate debug file has __restore_rt in .symtab */
	snprintf(cmd, sizeof(cmd), "readelf -n %s 2>/dev/null", LIBC_PATH);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *id = strstr(line, "Build ID: ");

		if (id && strlen(trim(id + 10)) > 2)
			snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%.2s/%s.debug",
				 id + 10, id + 12);
	}
	pclose(f);
	if (debug[0] && access(debug, R_OK) == 0 &&
	    nm_symbol(debug, "__restore_rt", &addr, &size)) {
		print_message("__restore_rt at %#" PRIx64 " (from %s)\n", addr, debug);
	} else {
		/* no debug file: the FDE whose CIE has 'S' */
		struct rd_dump d;

		rd_load(&d, LIBC_PATH, ".eh_frame");
		for (size_t i = 0; i < d.nr && !addr; i++)
			if (!d.e[i].cie && rd_find(&d, d.e[i].cie_off)->signal)
				addr = d.e[i].lo + 1;
		rd_free(&d);
		print_message("__restore_rt (from the 'S' FDE) at %#" PRIx64 "\n", addr);
	}
	assert_true(addr != 0);
	assert_int_equal(build_path(LIBC_PATH, NULL, &t), 0);
	assert_int_equal(unwind_table__find(t, addr)->cmd, UNWIND_CMD_SIGNAL);
	unwind_table__free(t);
}

static void unwind_table__build__debug_frame_only__matches_readelf(void **state)
{
	struct unwind_table *t;
	char path[PATH_LEN];

	(void)state;

	fixture_path(path, FIX_BARE_DF);
	check_file(path, ".debug_frame", &t);
	assert_int_equal(t->from_debug_file, 0);
	assert_true(t->stats.cmd_rows[UNWIND_CMD_CFA_RBP] >= 1);
	unwind_table__free(t);
}

static void tables_equal(const struct unwind_table *a, const struct unwind_table *b)
{
	assert_int_equal(a->base, b->base);
	assert_int_equal(a->nr_rows, b->nr_rows);
	assert_int_equal(a->nr_rules, b->nr_rules);
	assert_memory_equal(a->rows, b->rows, a->nr_rows * sizeof(*a->rows));
	assert_memory_equal(a->rules, b->rules, a->nr_rules * sizeof(*a->rules));
}

static void unwind_table__build__compressed_debug_frame__same_rows_as_plain(void **state)
{
	const char *compressed[] = {FIX_BARE_ZLIB, FIX_BARE_ZGNU};
	struct unwind_table *plain, *t;
	char path[PATH_LEN];

	(void)state;

	fixture_path(path, FIX_BARE_DF);
	assert_int_equal(build_path(path, NULL, &plain), 0);
	for (size_t i = 0; i < 2; i++) {
		fixture_path(path, compressed[i]);
		assert_int_equal(build_path(path, NULL, &t), 0);
		assert_string_equal(t->source, ".debug_frame");
		tables_equal(plain, t);
		unwind_table__free(t);
	}
	unwind_table__free(plain);
}

static void unwind_table__build__stripped_with_debug_file__uses_its_debug_frame(void **state)
{
	char path[PATH_LEN], debug[PATH_LEN];
	struct unwind_table *t;

	(void)state;

	fixture_path(path, FIX_BARE_STRIP);
	fixture_path(debug, FIX_BARE_DEBUG);
	assert_int_equal(build_path(path, NULL, &t), -ENODATA);
	assert_null(t);
	assert_int_equal(build_path(path, debug, &t), 0);
	assert_int_equal(t->from_debug_file, 1);
	assert_string_equal(t->source, ".debug_frame");
	table_check_invariants(t);
	assert_true(check_against_readelf(t, debug, ".debug_frame") > 0);
	unwind_table__free(t);
}

/* FDEs of @section in @path, as readelf lists them */
static size_t readelf_fdes(const char *path, const char *section)
{
	struct rd_dump d;
	size_t n = 0;

	rd_load(&d, path, section);
	for (size_t i = 0; i < d.nr; i++)
		n += !d.e[i].cie && d.e[i].lo < d.e[i].hi;
	rd_free(&d);
	return n;
}

/*
 * A program built without unwind tables: .eh_frame covers only the start
 * files; its debug file's .debug_frame fills in its own functions, and the
 * start files keep their .eh_frame rows.
 */
static void unwind_table__build__eh_frame_gaps__debug_file_fills_them(void **state)
{
	char path[PATH_LEN], debug[PATH_LEN];
	struct unwind_table *own, *t;
	uint64_t main_addr, size, start_addr;

	(void)state;

	fixture_path(path, FIX_MIXED);
	fixture_path(debug, FIX_MIXED_DBG);
	assert_true(nm_symbol(debug, "main", &main_addr, &size));
	assert_true(nm_symbol(debug, "_start", &start_addr, &size));

	assert_int_equal(build_path(path, NULL, &own), 0);
	assert_int_equal(own->sources, UNWIND_SRC_EH_FRAME);
	assert_true(own->stats.covered_bytes < own->stats.text_bytes / 2);
	assert_int_equal(unwind_table__find(own, main_addr)->cmd, UNWIND_CMD_INVALID);

	assert_int_equal(build_path(path, debug, &t), 0);
	table_check_invariants(t);
	assert_int_equal(t->sources, UNWIND_SRC_EH_FRAME | UNWIND_SRC_DEBUG_FILE);
	assert_int_equal(t->from_debug_file, 1);
	assert_string_equal(t->source, ".eh_frame");
	assert_int_equal(t->stats.fdes + t->stats.fdes_shadowed,
			 readelf_fdes(path, ".eh_frame") + readelf_fdes(debug, ".debug_frame"));
	assert_true(t->stats.covered_bytes > own->stats.text_bytes / 2);
	assert_int_equal(unwind_table__find(t, main_addr)->cmd, UNWIND_CMD_CFA_RSP);
	assert_memory_equal(unwind_table__find(t, start_addr), unwind_table__find(own, start_addr),
			    sizeof(struct unwind_rule));
	unwind_table__free(own);
	unwind_table__free(t);
}

/* a hostile debug file (a broken .debug_frame) costs nothing the file has */
static void unwind_table__build__broken_debug_file__own_rows_kept(void **state)
{
	char path[PATH_LEN], debug[PATH_LEN], broken[] = "/tmp/unwind_broken_XXXXXX";
	struct unwind_table *own, *t;
	struct test_elf f;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	uint32_t bad = 0xfffffff0; /* a CIE length past the section */
	uint64_t off = 0;
	uint8_t *buf;
	size_t len;
	int fd;

	(void)state;

	fixture_path(path, FIX_MIXED);
	fixture_path(debug, FIX_MIXED_DBG);
	test_elf__open(&f, debug);
	assert_int_equal(elf_getshdrstrndx(f.elf, &shstrndx), 0);
	while ((scn = elf_nextscn(f.elf, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    !strcmp(elf_strptr(f.elf, shstrndx, sh.sh_name), ".debug_frame"))
			off = sh.sh_offset;
	test_elf__close(&f);
	assert_true(off != 0);
	fixture_read_file(debug, &buf, &len);
	memcpy(buf + off, &bad, sizeof(bad));
	fd = mkstemp(broken);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
	free(buf);

	assert_int_equal(build_path(path, NULL, &own), 0);
	assert_int_equal(build_path(path, broken, &t), 0);
	unlink(broken);
	assert_int_equal(t->stats.sources_rejected, 1);
	assert_int_equal(t->sources, UNWIND_SRC_EH_FRAME);
	assert_int_equal(t->from_debug_file, 0);
	tables_equal(own, t);
	unwind_table__free(own);
	unwind_table__free(t);
}

static void unwind_table__build__no_cfi__returns_enodata(void **state)
{
	struct unwind_table *t = (void *)1;
	char path[PATH_LEN], err[128];
	struct test_elf f;

	(void)state;

	fixture_path(path, FIX_BARE_NOCFI);
	test_elf__open(&f, path);
	assert_int_equal(unwind_table__build(f.ef, NULL, NULL, &t, err, sizeof(err)), -ENODATA);
	assert_null(t);
	assert_non_null(strstr(err, "no CFI"));
	test_elf__close(&f);
}

/* the vdso, as the collector will read it: an image in memory */
static void unwind_table__build_mem__vdso__has_rows(void **state)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct unwind_table *t;
	char err[128];

	(void)state;

	if (!eh)
		skip();
	assert_int_equal(unwind_table__build_mem(eh, eh->e_shoff + eh->e_shnum * eh->e_shentsize,
						 &t, err, sizeof(err)),
			 0);
	assert_string_equal(t->source, ".eh_frame");
	table_check_invariants(t);
	assert_true(t->stats.cmd_rows[UNWIND_CMD_CFA_RSP] >= 1);
	unwind_table__free(t);
}

/* ---- hostile and broken input */

static void unwind_table__build_mem__empty_garbage_truncated__fail_cleanly(void **state)
{
	struct unwind_table *t = (void *)1;
	char path[PATH_LEN], err[128];
	uint8_t garbage[4096];
	uint8_t *buf;
	size_t len, i;
	int ret;

	(void)state;

	assert_int_equal(unwind_table__build_mem(NULL, 100, &t, err, sizeof(err)), -EINVAL);
	assert_null(t);
	assert_int_equal(unwind_table__build_mem("", 0, &t, err, sizeof(err)), -EINVAL);
	assert_true(strlen(err) > 0);

	srand(1);
	for (i = 0; i < sizeof(garbage); i++)
		garbage[i] = rand();
	assert_int_equal(unwind_table__build_mem(garbage, sizeof(garbage), &t, err, sizeof(err)),
			 -EINVAL);
	memcpy(garbage, ELFMAG, SELFMAG);
	ret = unwind_table__build_mem(garbage, sizeof(garbage), &t, err, sizeof(err));
	assert_true(ret < 0);
	assert_null(t);

	fixture_path(path, FIX_LIB);
	fixture_read_file(path, &buf, &len);
	for (size_t cut = 0; cut < len; cut += cut < 256 ? 1 : 97) {
		ret = unwind_table__build_mem(buf, cut, &t, err, sizeof(err));
		if (ret == 0) {
			table_check_invariants(t);
			unwind_table__free(t);
		} else {
			assert_true(ret == -EINVAL || ret == -ENODATA || ret == -ENOTSUP);
			assert_null(t);
			assert_true(strlen(err) > 0);
		}
	}
	/* the whole file works from memory as from the fd */
	assert_int_equal(unwind_table__build_mem(buf, len, &t, err, sizeof(err)), 0);
	table_check_invariants(t);
	unwind_table__free(t);
	free(buf);
}

/* ---- synthetic files: a PT_LOAD or two and one CFI section, made here */

struct synth {
	uint8_t cfi[8192];
	size_t len;
	bool eh;      /* .eh_frame, else .debug_frame */
	bool dwarf64; /* .debug_frame entries in the 64-bit format */
};

struct synth_seg {
	uint64_t vaddr;
	uint64_t memsz;
	uint32_t flags;
};

static const struct synth_seg text_seg = {0x400000, 0x10000, PF_R | PF_X};

static void put(struct synth *s, const void *p, size_t n)
{
	assert_true(s->len + n <= sizeof(s->cfi));
	if (n)
		memcpy(s->cfi + s->len, p, n);
	s->len += n;
}

static void put_u(struct synth *s, uint64_t v, size_t n)
{
	put(s, &v, n); /* little-endian host */
}

/* entry header: length (patched by entry_end()) and the CIE id / pointer */
static size_t entry_begin(struct synth *s, size_t *len_at)
{
	size_t off = s->len;

	if (s->dwarf64) {
		put_u(s, 0xffffffff, 4);
		*len_at = s->len;
		put_u(s, 0, 8);
	} else {
		*len_at = s->len;
		put_u(s, 0, 4);
	}
	return off;
}

static void entry_end(struct synth *s, size_t len_at)
{
	size_t w = s->dwarf64 ? 8 : 4;
	uint64_t len = s->len - len_at - w;

	memcpy(s->cfi + len_at, &len, w);
}

static const uint8_t default_cie_insns[] = {DW_CFA_def_cfa, 7, 8, DW_CFA_offset | 16, 1};

/* a CIE: version 1, code factor 1, data factor -8, ra 16 */
static size_t synth_cie(struct synth *s, const char *aug, const void *augdata, size_t augdata_len,
			const uint8_t *insns, size_t n)
{
	static const uint8_t factors[] = {1, 0x78, 16};
	size_t len_at, off = entry_begin(s, &len_at);

	put_u(s, s->eh ? 0 : UINT64_MAX, s->dwarf64 ? 8 : 4);
	put_u(s, 1, 1);
	put(s, aug, strlen(aug) + 1);
	put(s, factors, sizeof(factors));
	if (aug[0] == 'z') {
		put_u(s, augdata_len, 1);
		put(s, augdata, augdata_len);
	}
	if (!insns) {
		insns = default_cie_insns;
		n = sizeof(default_cie_insns);
	}
	put(s, insns, n);
	entry_end(s, len_at);
	return off;
}

/* an FDE with 8-byte absolute addresses (its CIE has no 'R'); @z: CIE has 'z' */
static size_t synth_fde_ptr(struct synth *s, uint64_t cie_ptr, bool z, uint64_t lo, uint64_t len,
			    const uint8_t *insns, size_t n)
{
	size_t len_at, off = entry_begin(s, &len_at);

	put_u(s, cie_ptr, s->dwarf64 ? 8 : 4);
	put_u(s, lo, 8);
	put_u(s, len, 8);
	if (z)
		put_u(s, 0, 1);
	put(s, insns, n);
	entry_end(s, len_at);
	return off;
}

static size_t synth_fde(struct synth *s, size_t cie, uint64_t lo, uint64_t len,
			const uint8_t *insns, size_t n)
{
	size_t pos = s->len + (s->dwarf64 ? 12 : 4);

	return synth_fde_ptr(s, s->eh ? pos - cie : cie, false, lo, len, insns, n);
}

/* an ELF file: header, program headers, the CFI section, .shstrtab, section headers */
static size_t synth_elf(uint8_t *out, size_t cap, const struct synth *s,
			const struct synth_seg *segs, int nsegs, uint16_t machine)
{
	static const char strtab[] = "\0.eh_frame\0.debug_frame\0.shstrtab";
	size_t off_ph = sizeof(Elf64_Ehdr), off_cfi, off_str, off_sh, total;
	Elf64_Ehdr eh = {};
	Elf64_Shdr sh[3] = {};

	off_cfi = off_ph + nsegs * sizeof(Elf64_Phdr);
	off_str = off_cfi + s->len;
	off_sh = (off_str + sizeof(strtab) + 7) & ~(size_t)7;
	total = off_sh + sizeof(sh);
	assert_true(total <= cap);
	memset(out, 0, total);

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = machine;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = off_ph;
	eh.e_shoff = off_sh;
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = nsegs;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 3;
	eh.e_shstrndx = 2;
	memcpy(out, &eh, sizeof(eh));
	for (int i = 0; i < nsegs; i++) {
		Elf64_Phdr ph = {.p_type = PT_LOAD,
				 .p_flags = segs[i].flags,
				 .p_vaddr = segs[i].vaddr,
				 .p_paddr = segs[i].vaddr,
				 .p_memsz = segs[i].memsz,
				 .p_align = 0x1000};

		memcpy(out + off_ph + i * sizeof(ph), &ph, sizeof(ph));
	}
	memcpy(out + off_cfi, s->cfi, s->len);
	memcpy(out + off_str, strtab, sizeof(strtab));
	sh[1].sh_name = s->eh ? 1 : 11;
	sh[1].sh_type = SHT_PROGBITS;
	sh[1].sh_flags = s->eh ? SHF_ALLOC : 0;
	sh[1].sh_addr = s->eh ? segs[0].vaddr + off_cfi : 0;
	sh[1].sh_offset = off_cfi;
	sh[1].sh_size = s->len;
	sh[1].sh_addralign = 1;
	sh[2].sh_name = 24;
	sh[2].sh_type = SHT_STRTAB;
	sh[2].sh_offset = off_str;
	sh[2].sh_size = sizeof(strtab);
	sh[2].sh_addralign = 1;
	memcpy(out + off_sh, sh, sizeof(sh));
	return total;
}

static int synth_build(const struct synth *s, const struct synth_seg *segs, int nsegs,
		       struct unwind_table **t, char *err, size_t err_len)
{
	static uint8_t image[16384];
	size_t len = synth_elf(image, sizeof(image), s, segs, nsegs, EM_X86_64);
	int ret = unwind_table__build_mem(image, len, t, err, err_len);

	if (ret == 0)
		table_check_invariants(*t);
	else
		assert_null(*t);
	return ret;
}

static void expect_rule_at(const struct unwind_table *t, uint64_t vaddr, uint8_t cmd,
			   int32_t cfa_off, uint8_t rbp, int32_t rbp_off)
{
	const struct unwind_rule *r = unwind_table__find(t, vaddr);

	if (r->cmd != cmd || r->cfa_off != cfa_off || r->rbp != rbp || r->rbp_off != rbp_off)
		fail_msg("at %#" PRIx64 ": %s cfa %d rbp %u/%d, want %s cfa %d rbp %u/%d", vaddr,
			 unwind_cmd_name(r->cmd), r->cfa_off, r->rbp, r->rbp_off,
			 unwind_cmd_name(cmd), cfa_off, rbp, rbp_off);
}

static const uint8_t cfa16[] = {DW_CFA_def_cfa_offset, 16};
static const uint8_t cfa24[] = {DW_CFA_def_cfa_offset, 24};
static const uint8_t cfa32[] = {DW_CFA_def_cfa_offset, 32};

/*
 * Overlaps: the earlier-starting FDE (then the earlier in the section)
 * keeps the addresses, a later one is trimmed or dropped.
 */
static void unwind_table__build_mem__overlapping_fdes__earlier_start_wins(void **state)
{
	struct synth s = {.eh = true};
	struct unwind_table *t;
	char err[128];
	size_t cie;

	(void)state;

	cie = synth_cie(&s, "", NULL, 0, NULL, 0);
	synth_fde(&s, cie, 0x401000, 0x100, cfa16, sizeof(cfa16)); /* A */
	synth_fde(&s, cie, 0x401080, 0x180, cfa24, sizeof(cfa24)); /* B: trimmed to A's end */
	synth_fde(&s, cie, 0x401010, 0x10, cfa32, sizeof(cfa32));  /* inside A: dropped */
	synth_fde(&s, cie, 0x401000, 0x40, cfa16, sizeof(cfa16));  /* A's start: dropped */
	assert_int_equal(synth_build(&s, &text_seg, 1, &t, err, sizeof(err)), 0);
	assert_int_equal(t->stats.fdes, 2);
	assert_int_equal(t->stats.fdes_overlap, 3);
	expect_rule_at(t, 0x400fff, UNWIND_CMD_INVALID, 0, 0, 0);
	expect_rule_at(t, 0x401000, UNWIND_CMD_CFA_RSP, 16, 0, 0);
	assert_int_equal(unwind_table__find(t, 0x4010ff)->cmd, UNWIND_CMD_CFA_RSP);
	expect_rule_at(t, 0x401100, UNWIND_CMD_CFA_RSP, 24, 0, 0);
	expect_rule_at(t, 0x4011ff, UNWIND_CMD_CFA_RSP, 24, 0, 0);
	expect_rule_at(t, 0x401200, UNWIND_CMD_INVALID, 0, 0, 0);
	unwind_table__free(t);
}

/* rows from the base up to the end of the last FDE, INVALID in the gaps */
static void unwind_table__build_mem__gaps__invalid_rows(void **state)
{
	struct synth s = {.eh = true};
	struct unwind_table *t;
	char err[128];
	size_t cie;

	(void)state;

	cie = synth_cie(&s, "", NULL, 0, NULL, 0);
	synth_fde(&s, cie, 0x402000, 0x10, cfa16, sizeof(cfa16));
	synth_fde(&s, cie, 0x401000, 0x10, NULL, 0);
	synth_fde(&s, cie, 0x401010, 0x10, cfa24, sizeof(cfa24)); /* adjacent: no gap row */
	assert_int_equal(synth_build(&s, &text_seg, 1, &t, err, sizeof(err)), 0);
	assert_int_equal(t->nr_rows, 6); /* invalid, 8, 24, invalid, 16, invalid */
	assert_int_equal(t->rows[0].pc, 0);
	expect_rule_at(t, 0x400000, UNWIND_CMD_INVALID, 0, 0, 0);
	expect_rule_at(t, 0x401000, UNWIND_CMD_CFA_RSP, 8, 0, 0);
	expect_rule_at(t, 0x40101f, UNWIND_CMD_CFA_RSP, 24, 0, 0);
	expect_rule_at(t, 0x401020, UNWIND_CMD_INVALID, 0, 0, 0);
	expect_rule_at(t, 0x401fff, UNWIND_CMD_INVALID, 0, 0, 0);
	expect_rule_at(t, 0x402000, UNWIND_CMD_CFA_RSP, 16, 0, 0);
	expect_rule_at(t, 0x402010, UNWIND_CMD_INVALID, 0, 0, 0);
	unwind_table__free(t);
}

static void unwind_table__build_mem__pc_range_over_4g__efbig(void **state)
{
	const struct synth_seg segs[] = {text_seg, {0x400000 + (1ULL << 32), 0x1000, PF_R | PF_X}};
	struct synth s = {.eh = true};
	struct unwind_table *t;
	char err[128];
	size_t cie;

	(void)state;

	cie = synth_cie(&s, "", NULL, 0, NULL, 0);
	synth_fde(&s, cie, 0x401000, 0x10, NULL, 0);
	synth_fde(&s, cie, segs[1].vaddr, 0x10, NULL, 0);
	assert_int_equal(synth_build(&s, segs, 2, &t, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "4 GiB"));
}

static void unwind_table__build_mem__fde_outside_text__skipped(void **state)
{
	const struct synth_seg segs[] = {text_seg, {0x500000, 0x1000, PF_R | PF_W}};
	struct synth s = {.eh = true};
	struct unwind_table *t;
	char err[128];
	size_t cie;

	(void)state;

	cie = synth_cie(&s, "", NULL, 0, NULL, 0);
	synth_fde(&s, cie, 0x500000, 0x10, NULL, 0);  /* not executable */
	synth_fde(&s, cie, 0x40fff0, 0x100, NULL, 0); /* runs past the segment */
	synth_fde(&s, cie, 0x401000, 0, NULL, 0);     /* empty */
	assert_int_equal(synth_build(&s, segs, 2, &t, err, sizeof(err)), -ENODATA);
	synth_fde(&s, cie, 0x401000, 0x10, NULL, 0);
	assert_int_equal(synth_build(&s, segs, 2, &t, err, sizeof(err)), 0);
	assert_int_equal(t->stats.fdes, 1);
	assert_int_equal(t->stats.fdes_outside, 3);
	unwind_table__free(t);
}

static void unwind_table__build_mem__cie_only__enodata(void **state)
{
	struct synth s = {.eh = true};
	struct unwind_table *t;
	char err[128];

	(void)state;

	synth_cie(&s, "zR", "\x1b", 1, NULL, 0);
	assert_int_equal(synth_build(&s, &text_seg, 1, &t, err, sizeof(err)), -ENODATA);
}

static void unwind_table__build_mem__not_x86_64__enotsup(void **state)
{
	struct synth s = {.eh = true};
	struct unwind_table *t;
	uint8_t image[4096];
	char err[128];
	size_t cie, len;

	(void)state;

	cie = synth_cie(&s, "", NULL, 0, NULL, 0);
	synth_fde(&s, cie, 0x401000, 0x10, NULL, 0);
	len = synth_elf(image, sizeof(image), &s, &text_seg, 1, EM_AARCH64);
	assert_int_equal(unwind_table__build_mem(image, len, &t, err, sizeof(err)), -ENOTSUP);
}

/* what libdw 0.188 would read out of bounds or allocate without limit */
static void unwind_table__build_mem__hostile_cfi__einval(void **state)
{
	static const uint8_t huge_reg[] = {DW_CFA_undefined, 0xa0, 0x8d, 0x06}; /* r100000 */
	static const uint8_t huge_reg_expr[] = {DW_CFA_expression, 0xff, 0xff, 0x03, 1, DW_OP_lit0};
	uint8_t deep[100], balanced[40];
	struct unwind_table *t;
	char err[128];
	size_t cie, i;

	(void)state;

	memset(deep, DW_CFA_remember_state, sizeof(deep));
	for (i = 0; i < sizeof(balanced); i++)
		balanced[i] = i < 20 ? DW_CFA_remember_state : DW_CFA_restore_state;

	struct {
		const char *aug;
		const char *augdata;
		size_t augdata_len;
		const uint8_t *fde_insns;
		size_t fde_len;
		int want;
	} cases[] = {
		{"zPPPPPPPPPPPP", "\x00", 1, NULL, 0, -EINVAL}, /* personality past the data */
		{"zR", "", 0, NULL, 0, -EINVAL},		/* 'R' without its byte */
		{"eh", NULL, 0, NULL, 0, -EINVAL},		/* g++ 2 */
		{"zRX", "\x00", 1, NULL, 0, -EINVAL},		/* unknown letter */
		{"", NULL, 0, huge_reg, sizeof(huge_reg), -EINVAL},
		{"", NULL, 0, huge_reg_expr, sizeof(huge_reg_expr), -EINVAL},
		{"", NULL, 0, deep, sizeof(deep), -EINVAL},
		{"", NULL, 0, balanced, sizeof(balanced), 0},
		{"zPLR", "\x00\x11\x22\x33\x44\x55\x66\x77\x88\x00\x00", 11, NULL, 0, 0},
	};

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct synth s = {.eh = true};
		int ret;

		/* 'P' with absptr: 8 bytes, 'L' and 'R' absptr */
		cie = synth_cie(&s, cases[i].aug, cases[i].augdata, cases[i].augdata_len, NULL, 0);
		synth_fde_ptr(&s, s.len + 4 - cie, cases[i].aug[0] == 'z', 0x401000, 0x10,
			      cases[i].fde_insns, cases[i].fde_len);
		ret = synth_build(&s, &text_seg, 1, &t, err, sizeof(err));
		if (ret != cases[i].want)
			fail_msg("case %zu: %d (%s), want %d", i, ret, err, cases[i].want);
		if (!ret)
			unwind_table__free(t);
	}
}

static void unwind_table__build_mem__bad_cie_pointer__einval(void **state)
{
	struct synth s = {.eh = true};
	struct unwind_table *t;
	char err[128];
	size_t cie;

	(void)state;

	cie = synth_cie(&s, "", NULL, 0, NULL, 0);
	/* points 4 bytes into the CIE, not at it */
	synth_fde_ptr(&s, s.len + 4 - (cie + 4), false, 0x401000, 0x10, NULL, 0);
	assert_int_equal(synth_build(&s, &text_seg, 1, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "FDE"));

	/* past the start of the section */
	s.len = 0;
	cie = synth_cie(&s, "", NULL, 0, NULL, 0);
	synth_fde_ptr(&s, 0x7fffffff, false, 0x401000, 0x10, NULL, 0);
	assert_int_equal(synth_build(&s, &text_seg, 1, &t, err, sizeof(err)), -EINVAL);
}

/* a rule per kind the unwinder can and cannot follow */
static void unwind_table__build_mem__rule_kinds__translated(void **state)
{
	static const uint8_t insns[] = {
		/* 0x401010: CFA on r12 */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_def_cfa,
		12,
		16,
		/* 0x401020: CFA = rsp + 16, rbp in rbx */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_def_cfa,
		7,
		16,
		DW_CFA_register,
		6,
		3,
		/* 0x401030: rbp undefined */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_undefined,
		6,
		/* 0x401040: rbp saved at rbp + 16 */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_expression,
		6,
		2,
		DW_OP_breg6,
		16,
		/* 0x401050: the PLT expression with DW_OP_const1u constants; rbp unchanged */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_same_value,
		6,
		DW_CFA_def_cfa_expression,
		13,
		DW_OP_breg7,
		8,
		DW_OP_breg16,
		0,
		DW_OP_const1u,
		15,
		DW_OP_and,
		DW_OP_const1u,
		11,
		DW_OP_ge,
		DW_OP_lit3,
		DW_OP_shl,
		DW_OP_plus,
		/* 0x401060: CFA = *(rbp - 8), rbp saved at CFA - 16 */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_def_cfa_expression,
		3,
		DW_OP_breg6,
		0x78,
		DW_OP_deref,
		DW_CFA_offset | 6,
		2,
		/* 0x401070: CFA = rbp + 16, return address saved elsewhere */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_def_cfa,
		6,
		16,
		DW_CFA_offset | 16,
		2,
		/* 0x401080: return address restored: CFA - 8 */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_offset | 16,
		1,
		/* 0x401090: a CFA expression that is a plain DW_OP_breg7 */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_def_cfa_expression,
		2,
		DW_OP_breg7,
		8,
		/* 0x4010a0: an expression the unwinder has no command for */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_def_cfa_expression,
		4,
		DW_OP_breg7,
		8,
		DW_OP_lit1,
		DW_OP_plus,
		/* 0x4010b0: the outermost frame */
		DW_CFA_advance_loc | 0x10,
		DW_CFA_def_cfa,
		7,
		8,
		DW_CFA_undefined,
		16,
	};
	struct synth s = {.eh = true};
	struct unwind_table *t;
	char err[128];
	size_t cie;

	(void)state;

	cie = synth_cie(&s, "", NULL, 0, NULL, 0);
	synth_fde(&s, cie, 0x401000, 0x100, insns, sizeof(insns));
	assert_int_equal(synth_build(&s, &text_seg, 1, &t, err, sizeof(err)), 0);
	expect_rule_at(t, 0x401000, UNWIND_CMD_CFA_RSP, 8, UNWIND_RBP_SAME, 0);
	expect_rule_at(t, 0x401010, UNWIND_CMD_UNSUPPORTED, 0, 0, 0);
	expect_rule_at(t, 0x401020, UNWIND_CMD_UNSUPPORTED, 0, 0, 0);
	expect_rule_at(t, 0x401030, UNWIND_CMD_CFA_RSP, 16, UNWIND_RBP_UNDEFINED, 0);
	expect_rule_at(t, 0x401040, UNWIND_CMD_CFA_RSP, 16, UNWIND_RBP_RBP, 16);
	expect_rule_at(t, 0x401050, UNWIND_CMD_PLT, 8, UNWIND_RBP_SAME, 11);
	expect_rule_at(t, 0x401060, UNWIND_CMD_CFA_RBP_DEREF, -8, UNWIND_RBP_CFA, -16);
	expect_rule_at(t, 0x401070, UNWIND_CMD_UNSUPPORTED, 0, 0, 0);
	expect_rule_at(t, 0x401080, UNWIND_CMD_CFA_RBP, 16, UNWIND_RBP_CFA, -16);
	expect_rule_at(t, 0x401090, UNWIND_CMD_CFA_RSP, 8, UNWIND_RBP_CFA, -16);
	expect_rule_at(t, 0x4010a0, UNWIND_CMD_UNSUPPORTED, 0, 0, 0);
	expect_rule_at(t, 0x4010b0, UNWIND_CMD_END, 0, 0, 0);
	expect_rule_at(t, 0x401100, UNWIND_CMD_INVALID, 0, 0, 0);
	assert_int_equal(t->stats.unsup[UNWIND_UNSUP_CFA_REG], 1);
	assert_int_equal(t->stats.unsup[UNWIND_UNSUP_RBP], 1);
	assert_int_equal(t->stats.unsup[UNWIND_UNSUP_RA], 1);
	assert_int_equal(t->stats.unsup[UNWIND_UNSUP_CFA_EXPR], 1);
	assert_int_equal(t->stats.libdw_rows, 12);
	unwind_table__free(t);
}

/* DW_CFA_set_loc moving backwards: libdw decides, the walk still advances */
static void unwind_table__build_mem__set_loc_backwards__terminates_sorted(void **state)
{
	uint8_t insns[64];
	struct synth s = {.eh = true};
	struct unwind_table *t;
	uint64_t loc = 0x401008;
	char err[128];
	size_t n = 0, cie;

	(void)state;

	insns[n++] = DW_CFA_advance_loc | 0x20;
	insns[n++] = DW_CFA_def_cfa_offset;
	insns[n++] = 16;
	insns[n++] = DW_CFA_set_loc;
	memcpy(insns + n, &loc, 8);
	n += 8;
	insns[n++] = DW_CFA_def_cfa_offset;
	insns[n++] = 24;
	insns[n++] = DW_CFA_advance_loc | 0x3f;
	insns[n++] = DW_CFA_def_cfa_offset;
	insns[n++] = 32;
	cie = synth_cie(&s, "", NULL, 0, NULL, 0);
	synth_fde(&s, cie, 0x401000, 0x80, insns, n);
	assert_int_equal(synth_build(&s, &text_seg, 1, &t, err, sizeof(err)), 0);
	assert_int_equal(unwind_table__find(t, 0x401000)->cmd, UNWIND_CMD_CFA_RSP);
	assert_int_equal(unwind_table__find(t, 0x40107f)->cmd, UNWIND_CMD_CFA_RSP);
	unwind_table__free(t);
}

/* .debug_frame with 32-bit and 64-bit DWARF entries, CIEs after their FDEs */
static void unwind_table__build_mem__debug_frame_formats__parsed(void **state)
{
	(void)state;

	for (int dwarf64 = 0; dwarf64 <= 1; dwarf64++) {
		struct synth s = {.eh = false, .dwarf64 = dwarf64};
		struct unwind_table *t;
		size_t fde_at, cie;
		char err[128];

		/* an FDE whose CIE comes later: patch its pointer afterwards */
		fde_at = synth_fde_ptr(&s, 0, false, 0x401000, 0x10, cfa16, sizeof(cfa16));
		cie = synth_cie(&s, "", NULL, 0, NULL, 0);
		memcpy(s.cfi + fde_at + (dwarf64 ? 12 : 4), &cie, dwarf64 ? 8 : 4);
		synth_fde(&s, cie, 0x401010, 0x10, cfa24, sizeof(cfa24));
		assert_int_equal(synth_build(&s, &text_seg, 1, &t, err, sizeof(err)), 0);
		assert_string_equal(t->source, ".debug_frame");
		expect_rule_at(t, 0x401000, UNWIND_CMD_CFA_RSP, 16, 0, 0);
		expect_rule_at(t, 0x401010, UNWIND_CMD_CFA_RSP, 24, 0, 0);
		expect_rule_at(t, 0x401020, UNWIND_CMD_INVALID, 0, 0, 0);
		unwind_table__free(t);
	}
}

static void unwind_cmd_name__every_command__named(void **state)
{
	(void)state;

	for (int c = 0; c < UNWIND_CMD_MAX; c++)
		assert_string_not_equal(unwind_cmd_name(c), "?");
	assert_string_equal(unwind_cmd_name(UNWIND_CMD_MAX), "?");
	assert_string_equal(unwind_cmd_name(UNWIND_CMD_PLT), "plt");
	for (int u = 0; u < UNWIND_UNSUP_MAX; u++)
		assert_string_not_equal(unwind_unsup_name(u), "?");
	assert_string_equal(unwind_unsup_name(UNWIND_UNSUP_MAX), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unwind_table__build__omitfp_pie__matches_readelf),
		cmocka_unit_test(unwind_table__build__fp_nopie__matches_readelf),
		cmocka_unit_test(unwind_table__build__shared_lib__matches_readelf),
		cmocka_unit_test(unwind_table__build__libc__matches_readelf),
		cmocka_unit_test(unwind_table__build__aarch64__matches_readelf),
		cmocka_unit_test(unwind_table__build__extra_files__match_readelf),
		cmocka_unit_test(unwind_table__find__lazy_plt__plt_rule),
		cmocka_unit_test(unwind_table__find__realigned_function__rbp_deref),
		cmocka_unit_test(unwind_table__find__libc_restore_rt__signal),
		cmocka_unit_test(unwind_table__build__debug_frame_only__matches_readelf),
		cmocka_unit_test(unwind_table__build__compressed_debug_frame__same_rows_as_plain),
		cmocka_unit_test(
			unwind_table__build__stripped_with_debug_file__uses_its_debug_frame),
		cmocka_unit_test(unwind_table__build__eh_frame_gaps__debug_file_fills_them),
		cmocka_unit_test(unwind_table__build__broken_debug_file__own_rows_kept),
		cmocka_unit_test(unwind_table__build__no_cfi__returns_enodata),
		cmocka_unit_test(unwind_table__build_mem__vdso__has_rows),
		cmocka_unit_test(unwind_table__build_mem__empty_garbage_truncated__fail_cleanly),
		cmocka_unit_test(unwind_table__build_mem__overlapping_fdes__earlier_start_wins),
		cmocka_unit_test(unwind_table__build_mem__gaps__invalid_rows),
		cmocka_unit_test(unwind_table__build_mem__pc_range_over_4g__efbig),
		cmocka_unit_test(unwind_table__build_mem__fde_outside_text__skipped),
		cmocka_unit_test(unwind_table__build_mem__cie_only__enodata),
		cmocka_unit_test(unwind_table__build_mem__not_x86_64__enotsup),
		cmocka_unit_test(unwind_table__build_mem__hostile_cfi__einval),
		cmocka_unit_test(unwind_table__build_mem__bad_cie_pointer__einval),
		cmocka_unit_test(unwind_table__build_mem__rule_kinds__translated),
		cmocka_unit_test(unwind_table__build_mem__set_loc_backwards__terminates_sorted),
		cmocka_unit_test(unwind_table__build_mem__debug_frame_formats__parsed),
		cmocka_unit_test(unwind_cmd_name__every_command__named),
	};

	return cmocka_run_group_tests_name("unwind_table", tests, NULL, NULL);
}
