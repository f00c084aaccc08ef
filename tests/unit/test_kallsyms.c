// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/symbols/kallsyms.c */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixtures.h"
#include "symbols/kallsyms.h"

/* in a buffer of exactly its length: no NUL terminator to lean on */
static struct kallsyms *parse_str(const char *text)
{
	size_t len = strlen(text);
	char *copy = fixture_exact_copy(text, len);
	struct kallsyms *ks = kallsyms__parse(copy, len);

	free(copy);
	return ks;
}

static const char sample[] = "ffffffffc0123000 t foo_init\t[foo]\n"
			     "ffffffff81000000 T _stext\n"
			     "ffffffff81000100 T do_thing\n"
			     "ffffffff81000200 t helper\n"
			     "ffffffffc0123100 t foo_work\t[foo]\n"
			     "ffffffffc0200000 t bpf_prog_abc_handler\t[bpf]\n"
			     "ffffffff81000300 D some_data\n";

static void kallsyms__parse__sample_with_modules__all_kept(void **state)
{
	struct kallsyms *ks = parse_str(sample);

	assert_non_null(ks);
	assert_int_equal(kallsyms__nr_symbols(ks), 7);
	assert_int_equal(kallsyms__nr_bad_lines(ks), 0);
	kallsyms__free(ks);
}

static void kallsyms__lookup__unsorted_input__at_or_below_named(void **state)
{
	struct kallsyms *ks = parse_str(sample);
	const char *module = NULL;
	uint64_t offset = 1;

	assert_non_null(ks);
	assert_string_equal(kallsyms__lookup(ks, 0xffffffff81000000ULL, &module, &offset),
			    "_stext");
	assert_string_equal(module, "");
	assert_true(offset == 0);
	assert_string_equal(kallsyms__lookup(ks, 0xffffffff810000ffULL, NULL, &offset), "_stext");
	assert_true(offset == 0xff);
	assert_string_equal(kallsyms__lookup(ks, 0xffffffff81000100ULL, NULL, NULL), "do_thing");
	assert_string_equal(kallsyms__lookup(ks, 0xffffffff81000234ULL, NULL, NULL), "helper");

	assert_string_equal(kallsyms__lookup(ks, 0xffffffffc0123080ULL, &module, &offset),
			    "foo_init");
	assert_string_equal(module, "foo");
	assert_true(offset == 0x80);
	assert_string_equal(kallsyms__lookup(ks, 0xffffffffc0123100ULL, &module, NULL), "foo_work");
	assert_string_equal(module, "foo");
	assert_string_equal(kallsyms__lookup(ks, 0xffffffffc0200010ULL, &module, NULL),
			    "bpf_prog_abc_handler");
	assert_string_equal(module, "bpf");
	kallsyms__free(ks);
}

static void kallsyms__lookup__below_first_symbol__null(void **state)
{
	struct kallsyms *ks = parse_str(sample);

	assert_non_null(ks);
	assert_null(kallsyms__lookup(ks, 0xffffffff80ffffffULL, NULL, NULL));
	assert_null(kallsyms__lookup(ks, 0, NULL, NULL));
	assert_null(kallsyms__lookup(NULL, 0xffffffff81000000ULL, NULL, NULL));
	kallsyms__free(ks);
}

static void kallsyms__lookup__far_past_a_symbol__null(void **state)
{
	struct kallsyms *ks = parse_str(sample);

	assert_non_null(ks);
	/* past the last symbol: named while within KALLSYMS_MAX_OFFSET */
	assert_string_equal(
		kallsyms__lookup(ks, 0xffffffffc0200000ULL + KALLSYMS_MAX_OFFSET - 1, NULL, NULL),
		"bpf_prog_abc_handler");
	assert_null(kallsyms__lookup(ks, 0xffffffffc0200000ULL + KALLSYMS_MAX_OFFSET, NULL, NULL));
	assert_null(kallsyms__lookup(ks, UINT64_MAX, NULL, NULL));
	/* the gap between vmlinux and the modules is not named either */
	assert_null(kallsyms__lookup(ks, 0xffffffffa0000000ULL, NULL, NULL));
	kallsyms__free(ks);
}

static void kallsyms__parse__aliases_at_one_address__text_symbol_kept(void **state)
{
	struct kallsyms *ks = parse_str("ffffffff81000000 A abs_alias\n"
					"ffffffff81000000 W weak_alias\n"
					"ffffffff81000000 T first_text\n"
					"ffffffff81000000 T second_text\n"
					"ffffffff81001000 d data_only\n"
					"ffffffff81001000 w weak_only\n");

	assert_non_null(ks);
	assert_int_equal(kallsyms__nr_symbols(ks), 2);
	assert_string_equal(kallsyms__lookup(ks, 0xffffffff81000010ULL, NULL, NULL), "first_text");
	assert_string_equal(kallsyms__lookup(ks, 0xffffffff81001000ULL, NULL, NULL), "weak_only");
	kallsyms__free(ks);
}

static void kallsyms__parse__all_zero_addresses__eperm(void **state)
{
	errno = 0;
	assert_null(parse_str("0000000000000000 T _stext\n"
			      "0000000000000000 t foo\t[mod]\n"
			      "0000000000000000 D bar\n"));
	assert_int_equal(errno, EPERM);
}

static void kallsyms__parse__some_zero_addresses__loaded(void **state)
{
	/* per-cpu symbols really sit at 0 */
	struct kallsyms *ks = parse_str("0000000000000000 A fixed_percpu_data\n"
					"ffffffff81000000 T _stext\n");

	assert_non_null(ks);
	assert_int_equal(kallsyms__nr_symbols(ks), 2);
	kallsyms__free(ks);
}

static void kallsyms__parse__garbage_lines__skipped_and_counted(void **state)
{
	struct kallsyms *ks = parse_str("ffffffff81000000 T good_one\n"
					"\n"
					"garbage\n"
					"ffffffff81000100\n"
					"ffffffff81000100 T\n"
					"ffffffff81000100 T \n"
					"ffffffff81000100 1 digit_type\n"
					"ffffffff81000100  T two_spaces\n"
					"zzzzffff81000100 T bad_hex\n"
					"1ffffffff81000100 T seventeen_digits\n"
					"ffffffff81000100 T name with_space\n"
					"ffffffff81000100 T name\t[unterminated\n"
					"ffffffff81000100 T name\t[]\n"
					"ffffffff81000100 T name\t[mod] trailing\n"
					"ffffffff81000100 T name\tmod\n"
					"ffffffff81000200 t good_two\t[mod]\n"
					"ffffffff81000300 T cut_off_with_no_newl");

	assert_non_null(ks);
	assert_int_equal(kallsyms__nr_symbols(ks), 2);
	assert_int_equal(kallsyms__nr_bad_lines(ks), 15);
	assert_string_equal(kallsyms__lookup(ks, 0xffffffff81000150ULL, NULL, NULL), "good_one");
	assert_string_equal(kallsyms__lookup(ks, 0xffffffff81000300ULL, NULL, NULL), "good_two");
	kallsyms__free(ks);
}

static void kallsyms__parse__embedded_nul_and_long_name__skipped(void **state)
{
	static const char with_nul[] = "ffffffff81000000 T a\0b\n"
				       "ffffffff81000100 T ok\n";
	char line[KALLSYMS_MAX_NAME + 64];
	struct kallsyms *ks;
	int n;

	ks = kallsyms__parse(with_nul, sizeof(with_nul) - 1);
	assert_non_null(ks);
	assert_int_equal(kallsyms__nr_symbols(ks), 1);
	assert_int_equal(kallsyms__nr_bad_lines(ks), 1);
	kallsyms__free(ks);

	n = snprintf(line, sizeof(line), "ffffffff81000000 T %0*d\n", KALLSYMS_MAX_NAME + 1, 0);
	assert_true(n > 0 && (size_t)n < sizeof(line));
	ks = kallsyms__parse(line, n);
	assert_non_null(ks);
	assert_int_equal(kallsyms__nr_symbols(ks), 0);
	assert_int_equal(kallsyms__nr_bad_lines(ks), 1);
	kallsyms__free(ks);

	n = snprintf(line, sizeof(line), "ffffffff81000000 T %0*d\n", KALLSYMS_MAX_NAME, 0);
	ks = kallsyms__parse(line, n);
	assert_non_null(ks);
	assert_int_equal(kallsyms__nr_symbols(ks), 1);
	kallsyms__free(ks);
}

static void kallsyms__parse__empty_text__empty_table(void **state)
{
	struct kallsyms *ks = kallsyms__parse(NULL, 0);

	assert_non_null(ks);
	assert_int_equal(kallsyms__nr_symbols(ks), 0);
	assert_null(kallsyms__lookup(ks, 0xffffffff81000000ULL, NULL, NULL));
	kallsyms__free(ks);
	kallsyms__free(NULL);
}

static void kallsyms__text_range__stext_etext_or_text_symbols__vmlinux_text(void **state)
{
	struct kallsyms *ks;
	uint64_t start, end;

	/* _stext.._etext; modules and data lie outside and do not count */
	ks = parse_str("ffffffff81000000 T _stext\n"
		       "ffffffff81000100 t early\n"
		       "ffffffff82000000 T _etext\n"
		       "ffffffff83000000 D data\n"
		       "ffffffffc0000000 t mod_fn\t[mod]\n");
	assert_int_equal(kallsyms__text_range(ks, &start, &end), 0);
	assert_true(start == 0xffffffff81000000ULL && end == 0xffffffff82000000ULL);
	kallsyms__free(ks);

	/* no _stext/_etext: lowest text symbol to KALLSYMS_MAX_OFFSET past the highest */
	ks = parse_str("ffffffff81000100 t a\n"
		       "ffffffff81000000 T b\n"
		       "ffffffff81200000 W weak\n"
		       "ffffffff81100000 t c\n");
	assert_int_equal(kallsyms__text_range(ks, &start, &end), 0);
	assert_true(start == 0xffffffff81000000ULL);
	assert_true(end == 0xffffffff81100000ULL + KALLSYMS_MAX_OFFSET);
	kallsyms__free(ks);

	/* no vmlinux text; or one at the very top, which leaves no range */
	ks = parse_str("ffffffff83000000 D data\nffffffffc0000000 t mod_fn\t[mod]\n");
	assert_int_equal(kallsyms__text_range(ks, &start, &end), -ENOENT);
	kallsyms__free(ks);
	ks = parse_str("ffffffffffffffff t top\n");
	assert_int_equal(kallsyms__text_range(ks, &start, &end), -ENOENT);
	kallsyms__free(ks);
	assert_int_equal(kallsyms__text_range(NULL, &start, &end), -ENOENT);
}

static void kallsyms__load__as_root__known_symbol_named(void **state)
{
	static const char *const names[] = {"do_sys_openat2", "do_sys_open", "vfs_read"};
	const char *module = NULL, *name = NULL;
	uint64_t addr = 0, offset = 1;
	struct kallsyms *ks;
	size_t i;

	fixture_require_root("kernel addresses are hidden from other users");
	for (i = 0; i < sizeof(names) / sizeof(names[0]) && !addr; i++) {
		name = names[i];
		addr = fixture_kallsyms_addr(name);
	}
	if (!addr) {
		print_message("no known symbol with an address in /proc/kallsyms\n");
		skip();
	}

	ks = kallsyms__load();
	assert_non_null(ks);
	assert_true(kallsyms__nr_symbols(ks) > 1000);
	assert_int_equal(kallsyms__nr_bad_lines(ks), 0);
	assert_string_equal(kallsyms__lookup(ks, addr, &module, &offset), name);
	assert_string_equal(module, "");
	assert_true(offset == 0);
	assert_string_equal(kallsyms__lookup(ks, addr + 1, NULL, &offset), name);
	assert_true(offset == 1);
	kallsyms__free(ks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kallsyms__parse__sample_with_modules__all_kept),
		cmocka_unit_test(kallsyms__lookup__unsorted_input__at_or_below_named),
		cmocka_unit_test(kallsyms__lookup__below_first_symbol__null),
		cmocka_unit_test(kallsyms__lookup__far_past_a_symbol__null),
		cmocka_unit_test(kallsyms__parse__aliases_at_one_address__text_symbol_kept),
		cmocka_unit_test(kallsyms__parse__all_zero_addresses__eperm),
		cmocka_unit_test(kallsyms__parse__some_zero_addresses__loaded),
		cmocka_unit_test(kallsyms__parse__garbage_lines__skipped_and_counted),
		cmocka_unit_test(kallsyms__parse__embedded_nul_and_long_name__skipped),
		cmocka_unit_test(kallsyms__parse__empty_text__empty_table),
		cmocka_unit_test(kallsyms__text_range__stext_etext_or_text_symbols__vmlinux_text),
		cmocka_unit_test(kallsyms__load__as_root__known_symbol_named),
	};

	return cmocka_run_group_tests_name("kallsyms", tests, NULL, NULL);
}
