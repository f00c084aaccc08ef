// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/symbols/symbolizer.c: kernel frames, and the file
 * cache shared by processes (user frames: test_maps_history.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbols/safe_open.h"
#include "symbols/symbolizer.h"

static void symbolizer__file__same_file_twice__parsed_once(void **state)
{
	struct symbolizer *s = symbolizer__new(0);
	const struct sym_file *a, *b;
	struct symbolizer_stats st;
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	assert_non_null(s);
	assert_true(root >= 0);
	a = symbolizer__file(s, root, "/proc/self/exe");
	/* /proc/self/exe is a magic link: refused, and counted */
	assert_null(a);
	symbolizer__stats(s, &st);
	assert_int_equal(st.elf_open_failed, 1);
	a = symbolizer__file(s, root, "/bin/sh");
	b = symbolizer__file(s, root, "/bin/sh");
	assert_non_null(a);
	assert_ptr_equal(a, b);
	assert_true(symbolizer__file_ok(a));
	symbolizer__stats(s, &st);
	assert_int_equal(st.elf_opened, 1);
	/* not ELF: a negative entry, parsed once too */
	a = symbolizer__file(s, root, "/etc/passwd");
	b = symbolizer__file(s, root, "/etc/passwd");
	assert_non_null(a);
	assert_ptr_equal(a, b);
	assert_false(symbolizer__file_ok(a));
	symbolizer__stats(s, &st);
	assert_int_equal(st.elf_parse_failed, 1);
	close(root);
	symbolizer__free(s);
}

static void symbolizer__intern__equal_strings__one_copy(void **state)
{
	struct symbolizer *s = symbolizer__new(0);
	char a[] = "/usr/lib/x", b[] = "/usr/lib/x";

	assert_non_null(s);
	assert_ptr_equal(symbolizer__intern(s, a), symbolizer__intern(s, b));
	assert_string_equal(symbolizer__intern(s, a), "/usr/lib/x");
	assert_string_equal(symbolizer__intern(s, ""), "");
	symbolizer__free(s);
}

static void symbolizer__kernel__without_kallsyms__unnamed_kernel_frame(void **state)
{
	struct symbolizer *s = symbolizer__new(0);
	struct sym_frame f;

	assert_non_null(s);
	assert_false(symbolizer__has_kernel(s));
	assert_int_equal(symbolizer__kernel(s, 0xffffffff81000000ULL, 1, &f), 0);
	assert_string_equal(f.mapping_path, "[kernel.kallsyms]");
	assert_null(f.function);
	assert_null(f.build_id);
	symbolizer__free(s);
	symbolizer__free(NULL);
}

static void symbolizer__new__kernel_wanted__created_with_or_without_kallsyms(void **state)
{
	/* hidden kallsyms (not root, kptr_restrict) only leave kernel frames unnamed */
	struct symbolizer *s = symbolizer__new(1);
	struct sym_frame f;

	assert_non_null(s);
	assert_int_equal(symbolizer__kernel(s, 0xffffffff81000000ULL, 0, &f), 0);
	assert_string_equal(f.mapping_path, "[kernel.kallsyms]");
	if (!symbolizer__has_kernel(s))
		assert_null(f.function);
	symbolizer__free(s);
}

/* the address /proc/kallsyms prints for @name, or 0 */
static uint64_t proc_kallsyms_addr(const char *name)
{
	unsigned long long addr, found = 0;
	char type, sym[600];
	char line[700];
	FILE *f;

	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %599s", &addr, &type, sym) == 3 && !strcmp(sym, name)) {
			found = addr;
			break;
		}
	}
	fclose(f);
	return found;
}

static void symbolizer__kernel__with_kallsyms__known_symbol_named(void **state)
{
	uint64_t addr = proc_kallsyms_addr("do_sys_openat2");
	struct symbolizer *s;
	struct sym_frame f;

	if (geteuid() != 0 || !addr) {
		print_message("kernel addresses hidden (not root, or no do_sys_openat2)\n");
		skip();
	}
	s = symbolizer__new(1);
	assert_non_null(s);
	assert_true(symbolizer__has_kernel(s));
	assert_int_equal(symbolizer__kernel(s, addr + 4, 0, &f), 0);
	assert_string_equal(f.function, "do_sys_openat2");
	assert_string_equal(f.mapping_path, "[kernel.kallsyms]");
	/* a return address at the very start belongs to the call before it */
	assert_int_equal(symbolizer__kernel(s, addr, 1, &f), 0);
	assert_true(!f.function || strcmp(f.function, "do_sys_openat2"));
	symbolizer__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(symbolizer__file__same_file_twice__parsed_once),
		cmocka_unit_test(symbolizer__intern__equal_strings__one_copy),
		cmocka_unit_test(symbolizer__kernel__without_kallsyms__unnamed_kernel_frame),
		cmocka_unit_test(symbolizer__new__kernel_wanted__created_with_or_without_kallsyms),
		cmocka_unit_test(symbolizer__kernel__with_kallsyms__known_symbol_named),
	};

	return cmocka_run_group_tests_name("symbolizer", tests, NULL, NULL);
}
