// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/appctx/go_binary.c against real Go programs built by
 * tests/unit/golabels_fixtures.mk with the installed toolchain.  The truth comes from that
 * toolchain and binutils (tests/unit/golabels_fixture_expect.py: `go env
 * GOVERSION`, the DWARF of runtime.g and runtime.m, objdump's loads of g
 * from %fs), never from the collector's table: so this test fails when the
 * table lacks the installed Go version or states it wrong.
 * Fixtures are looked up in $FIXTURES_DIR, else $OUTPUT/fixtures, else
 * build/fixtures.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "appctx/go_binary.h"
#include "elf/elf_file.h"
#include "fixtures.h"
#include "tests/golabels_fixture_expect.h"

static const char *fixture_path(const char *name)
{
	static char path[4096];
	const char *dir = getenv("FIXTURES_DIR");
	const char *output = getenv("OUTPUT");

	if (dir && *dir)
		snprintf(path, sizeof(path), "%s/golabels/%s", dir, name);
	else if (output && *output)
		snprintf(path, sizeof(path), "%s/fixtures/golabels/%s", output, name);
	else
		snprintf(path, sizeof(path), "build/fixtures/golabels/%s", name);
	if (access(path, R_OK) != 0)
		fail_msg("fixture %s missing: run make check (tests/unit/golabels_fixtures.mk)",
			 path);
	return path;
}

/* a fixture's bytes, to be changed and read as an image */
struct image {
	uint8_t *buf;
	size_t len;
};

static struct image load(const char *name)
{
	struct image im;

	fixture_read_file(fixture_path(name), &im.buf, &im.len);
	return im;
}

static enum go_binary_status inspect_image(const struct image *im, struct go_binary *out,
					   const char **why)
{
	struct elf_file *ef = elf_file__open_mem(im->buf, im->len);
	enum go_binary_status s;

	assert_non_null(ef);
	s = go_binary__inspect(ef, out, why);
	elf_file__free(ef);
	return s;
}

static enum go_binary_status inspect_file(const char *name, struct go_binary *out, const char **why)
{
	struct image im = load(name);
	enum go_binary_status s = inspect_image(&im, out, why);

	free(im.buf);
	return s;
}

/* the first occurrence of @what at or after @from, NULL when none */
static uint8_t *find(const struct image *im, size_t from, const void *what, size_t len)
{
	return memmem(im->buf + from, im->len - from, what, len);
}

/* the build info header: at the .go.buildinfo section, 16-aligned */
static uint8_t *buildinfo(const struct image *im)
{
	uint8_t *p = find(im, 0, "\xff Go buildinf:", 14);

	while (p && (p - im->buf) % 16)
		p = find(im, p - im->buf + 1, "\xff Go buildinf:", 14);
	assert_non_null(p);
	return p;
}

static void assert_layout(const struct go_binary *b, int32_t tls_g)
{
	assert_int_equal(b->ref.g_m, GO_FIXTURE_G_M);
	assert_int_equal(b->ref.m_curg, GO_FIXTURE_M_CURG);
	assert_int_equal(b->ref.g_labels, GO_FIXTURE_G_LABELS);
	assert_int_equal(b->ref.kind, GO_FIXTURE_LABELS_KIND);
	assert_int_equal(b->ref.g_sched, GO_FIXTURE_G_SCHED);
	assert_int_equal(b->ref.gobuf_sp, GO_FIXTURE_GOBUF_SP);
	assert_int_equal(b->ref.gobuf_pc, GO_FIXTURE_GOBUF_PC);
	assert_int_equal(b->ref.gobuf_bp, GO_FIXTURE_GOBUF_BP);
	assert_int_equal(b->ref.m_vdso_sp, GO_FIXTURE_M_VDSO_SP);
	assert_int_equal(b->ref.m_vdso_pc, GO_FIXTURE_M_VDSO_PC);
	/* read without a table (go_abi.h) */
	assert_int_equal(GO_G_STACK_LO, GO_FIXTURE_G_STACK_LO);
	assert_int_equal(GO_G_STACK_HI, GO_FIXTURE_G_STACK_HI);
	assert_int_equal(GO_M_G0, GO_FIXTURE_M_G0);
	assert_int_equal(b->ref.tls_g, tls_g);
	assert_int_equal(b->tls_g, tls_g);
	assert_int_equal(b->ref.exec_id, 0);
}

static void go_binary__inspect__plain__version_layout_and_tls_of_the_toolchain(void **state)
{
	struct go_binary b;
	const char *why = "";
	enum go_binary_status s = inspect_file("golabels_fixture", &b, &why);

	if (s != GO_BINARY_OK)
		fail_msg("%s (%s) refused: %s; the table needs go1.%u: g.m=%d m.curg=%d "
			 "g.labels=%d (from its DWARF)",
			 GO_FIXTURE_VERSION, b.version, why, b.minor, GO_FIXTURE_G_M,
			 GO_FIXTURE_M_CURG, GO_FIXTURE_G_LABELS);
	assert_string_equal(b.version, GO_FIXTURE_VERSION);
	assert_layout(&b, GO_FIXTURE_TLS_G_PLAIN);
}

static void go_binary__inspect__stripped__same_as_unstripped(void **state)
{
	struct go_binary b;
	const char *why = "";

	assert_int_equal(inspect_file("golabels_fixture_stripped", &b, &why), GO_BINARY_OK);
	assert_string_equal(b.version, GO_FIXTURE_VERSION);
	/* the code of both loads g from the same place */
	assert_layout(&b, GO_FIXTURE_TLS_G_PLAIN);
}

static void go_binary__inspect__cgo__tls_from_runtime_tlsg(void **state)
{
	struct go_binary b;
	const char *why = "";

	assert_int_equal(inspect_file("golabels_fixture_cgo", &b, &why), GO_BINARY_OK);
	assert_string_equal(b.version, GO_FIXTURE_VERSION);
	/* its own TLS variables put g elsewhere than -8: the test would not tell otherwise */
	assert_int_not_equal(GO_FIXTURE_TLS_G_CGO, -8);
	assert_layout(&b, GO_FIXTURE_TLS_G_CGO);
}

static void go_binary__inspect__cgo_stripped__unsupported_not_guessed(void **state)
{
	struct go_binary b;
	const char *why = "";

	assert_int_equal(inspect_file("golabels_fixture_cgo_stripped", &b, &why),
			 GO_BINARY_UNSUPPORTED);
	assert_string_equal(b.version, GO_FIXTURE_VERSION);
	assert_non_null(strstr(why, "stripped"));
}

static void go_binary__inspect__version_not_in_table__unsupported(void **state)
{
	struct image im = load("golabels_fixture_stripped");
	struct go_binary b;
	const char *why = "";
	uint8_t *v = find(&im, buildinfo(&im) - im.buf, "go1.", 4);

	/* go1.19.8 -> go1.99.8: the same bytes but the minor version */
	assert_non_null(v);
	v[4] = '9';
	v[5] = '9';
	assert_int_equal(inspect_image(&im, &b, &why), GO_BINARY_UNSUPPORTED);
	assert_int_equal(b.minor, 99);
	assert_int_equal(strncmp(b.version, "go1.99", 6), 0);
	assert_non_null(strstr(why, "version"));
	free(im.buf);
}

static void go_binary__inspect__version_of_another_pclntab__refused(void **state)
{
	struct image im = load("golabels_fixture_stripped");
	struct go_binary b;
	const char *why = "";
	uint8_t *v = find(&im, buildinfo(&im) - im.buf, "go1.", 4);
	unsigned int lie = go_binary__minor(GO_FIXTURE_VERSION) >= 20 ? 19 : 24;

	/* a build info that claims a version in the table, of another .gopclntab era */
	assert_non_null(v);
	v[4] = '0' + lie / 10;
	v[5] = '0' + lie % 10;
	assert_non_null(go_binary__layout(lie));
	assert_int_equal(inspect_image(&im, &b, &why), GO_BINARY_UNSUPPORTED);
	assert_int_equal(b.minor, lie);
	assert_non_null(strstr(why, "gopclntab"));
	free(im.buf);
}

static void go_binary__inspect__no_section_header__found_in_the_data(void **state)
{
	struct image im = load("golabels_fixture_stripped");
	struct go_binary b;
	const char *why = "";
	uint8_t *name = find(&im, 0, ".go.buildinfo", 14);

	/* the section is no longer found by name: the writable segment is searched */
	assert_non_null(name);
	name[12] = 'X';
	assert_int_equal(inspect_image(&im, &b, &why), GO_BINARY_OK);
	assert_string_equal(b.version, GO_FIXTURE_VERSION);
	free(im.buf);
}

static void go_binary__inspect__no_build_info__not_go(void **state)
{
	struct image im = load("golabels_fixture_stripped");
	struct go_binary b;
	const char *why = "";
	uint8_t *p;

	/* the section and every magic gone, as in a C program */
	p = find(&im, 0, ".go.buildinfo", 14);
	assert_non_null(p);
	p[12] = 'X';
	while ((p = find(&im, 0, "\xff Go buildinf:", 14)))
		p[1] = 'X';
	assert_int_equal(inspect_image(&im, &b, &why), GO_BINARY_NOT_GO);
	assert_string_equal(b.version, "");
	free(im.buf);
}

static void go_binary__inspect__c_program__not_go(void **state)
{
	struct go_binary b;
	const char *why = "";
	struct elf_file *ef;
	FILE *f = fopen("/proc/self/exe", "rb");

	assert_non_null(f);
	ef = elf_file__open_fd(fileno(f));
	assert_non_null(ef);
	assert_int_equal(go_binary__inspect(ef, &b, &why), GO_BINARY_NOT_GO);
	elf_file__free(ef);
	fclose(f);
}

static void go_binary__version__malformed__refused(void **state)
{
	struct image im = load("golabels_fixture_stripped");
	uint8_t *hdr = buildinfo(&im), save = hdr[32];
	struct elf_file *ef;
	char v[GO_BINARY_VERSION_MAX];

	assert_true(hdr[15] & 2); /* inline strings: Go 1.18+ */
	/* a length past what a version may be */
	hdr[32] = 0x7f;
	ef = elf_file__open_mem(im.buf, im.len);
	assert_int_equal(go_binary__version(ef, v, sizeof(v)), -EINVAL);
	elf_file__free(ef);
	/* a varint that does not end */
	hdr[32] = 0xff;
	hdr[33] = 0xff;
	ef = elf_file__open_mem(im.buf, im.len);
	assert_int_equal(go_binary__version(ef, v, sizeof(v)), -EINVAL);
	elf_file__free(ef);
	/* a NUL inside */
	hdr[32] = save;
	hdr[33] = 'g';
	hdr[33 + 2] = '\0';
	ef = elf_file__open_mem(im.buf, im.len);
	assert_int_equal(go_binary__version(ef, v, sizeof(v)), -EINVAL);
	elf_file__free(ef);
	free(im.buf);
}

static void go_binary__version__small_buffer__cut(void **state)
{
	struct image im = load("golabels_fixture");
	struct elf_file *ef = elf_file__open_mem(im.buf, im.len);
	char v[5];

	assert_int_equal(go_binary__version(ef, v, sizeof(v)), 0);
	assert_string_equal(v, "go1.");
	elf_file__free(ef);
	free(im.buf);
}

static void go_binary__minor__release_forms__parsed(void **state)
{
	assert_int_equal(go_binary__minor("go1.19"), 19);
	assert_int_equal(go_binary__minor("go1.19.8"), 19);
	assert_int_equal(go_binary__minor("go1.21rc2"), 21);
	assert_int_equal(go_binary__minor("go1.22beta1"), 22);
	assert_int_equal(go_binary__minor("go1.20.3 X:boringcrypto"), 20);
	assert_int_equal(go_binary__minor("devel go1.23-abcdef"), 0);
	assert_int_equal(go_binary__minor("go1."), 0);
	assert_int_equal(go_binary__minor("go1.19x"), 0);
	assert_int_equal(go_binary__minor("go2.1"), 0);
	assert_int_equal(go_binary__minor("go1.99999999999"), 0);
}

static void go_binary__layout__unknown_minor__none(void **state)
{
	assert_null(go_binary__layout(0));
	assert_null(go_binary__layout(99));
	assert_non_null(go_binary__layout(19));
	/* no Debian suite ships Go 1.20: never checked, so never guessed */
	assert_null(go_binary__layout(20));
	/* the label set a map to 1.23, a slice since 1.24 (go_abi.h) */
	assert_int_equal(go_binary__layout(19)->kind, GO_LABELS_MAP);
	assert_int_equal(go_binary__layout(24)->kind, GO_LABELS_SLICE);
	assert_int_equal(go_binary__layout(27)->kind, GO_LABELS_SLICE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			go_binary__inspect__plain__version_layout_and_tls_of_the_toolchain),
		cmocka_unit_test(go_binary__inspect__stripped__same_as_unstripped),
		cmocka_unit_test(go_binary__inspect__cgo__tls_from_runtime_tlsg),
		cmocka_unit_test(go_binary__inspect__cgo_stripped__unsupported_not_guessed),
		cmocka_unit_test(go_binary__inspect__version_not_in_table__unsupported),
		cmocka_unit_test(go_binary__inspect__version_of_another_pclntab__refused),
		cmocka_unit_test(go_binary__inspect__no_section_header__found_in_the_data),
		cmocka_unit_test(go_binary__inspect__no_build_info__not_go),
		cmocka_unit_test(go_binary__inspect__c_program__not_go),
		cmocka_unit_test(go_binary__version__malformed__refused),
		cmocka_unit_test(go_binary__version__small_buffer__cut),
		cmocka_unit_test(go_binary__minor__release_forms__parsed),
		cmocka_unit_test(go_binary__layout__unknown_minor__none),
	};

	return cmocka_run_group_tests_name("go_binary", tests, NULL, NULL);
}
