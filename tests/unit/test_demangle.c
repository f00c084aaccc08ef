// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/symbols/demangle.c */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "symbols/demangle.h"

static void expect(const char *mangled, const char *want)
{
	char out[DEMANGLE_MAX_LEN];

	assert_true(demangle_wanted(mangled));
	assert_int_equal(demangle(mangled, out), 0);
	assert_string_equal(out, want);
}

static void demangle__cxx_names__itanium_display_form(void **state)
{
	expect("_ZN10ctxprof_fx6Widget4spinEi", "ctxprof_fx::Widget::spin(int)");
	expect("_ZN10ctxprof_fx5twiceIlEET_S1_", "long ctxprof_fx::twice<long>(long)");
	expect("_ZNSt6vectorIiSaIiEE9push_backERKi",
	       "std::vector<int, std::allocator<int> >::push_back(int const&)");
	/* GCC's clones keep their suffix */
	expect("_ZN3foo3barEv.cold", "foo::bar() [clone .cold]");
}

static void demangle__rust_names__hash_dropped_v0_decoded(void **state)
{
	expect("_ZN3std2rt10lang_start17h0123456789abcdefE", "std::rt::lang_start");
	expect("_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$"
	       "closure$u7d$$u7d$$GT$17h5ab4e2a7a04ad9d1E",
	       "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>");
	expect("_RNvCs15kBYyAo9fc_7mycrate7example", "mycrate::example");
}

static void demangle__not_mangled_or_malformed__einval(void **state)
{
	char out[DEMANGLE_MAX_LEN];

	assert_false(demangle_wanted("main"));
	assert_false(demangle_wanted("Z"));
	assert_int_equal(demangle("main", out), -EINVAL);
	assert_int_equal(demangle("_Z", out), -EINVAL);
	assert_int_equal(demangle("_ZZZZZ", out), -EINVAL);
	assert_int_equal(demangle("_ZN3foo", out), -EINVAL);
	assert_int_equal(demangle("", out), -EINVAL);
}

/* Substitution S<n>_ for the n-th substitutable component, as the ABI numbers them */
static void put_subst(char *p, unsigned int n)
{
	static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

	if (!n) {
		strcpy(p, "S_");
		return;
	}
	n--;
	if (n < 36)
		sprintf(p, "S%c_", digits[n]);
	else
		sprintf(p, "S%c%c_", digits[n / 36], digits[n % 36]);
}

/*
 * 24 pointer-to-function types, each taking the previous one twice: a
 * 250-byte name whose output doubles 24 times (335 MB from __cxa_demangle,
 * 2.8 s).  Refused at DEMANGLE_MAX_LEN, at once.
 */
static void demangle__exponential_expansion__e2big_quickly(void **state)
{
	char name[1024] = "_Z1fIPi", sub[8], out[DEMANGLE_MAX_LEN];
	struct timespec t0, t1;
	unsigned int i;

	for (i = 0; i < 24; i++) {
		put_subst(sub, i * 2);
		strcat(name, "PFv");
		strcat(name, sub);
		strcat(name, sub);
		strcat(name, "E");
	}
	strcat(name, "Evv");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(demangle(name, out), -E2BIG);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 1);
	/* the demangler is left in no bad state: the next name works */
	expect("_ZN3foo3barEv", "foo::bar()");
}

static void demangle__input_too_long__einval(void **state)
{
	char name[DEMANGLE_MAX_INPUT + 16], out[DEMANGLE_MAX_LEN];

	memset(name, 'a', sizeof(name));
	memcpy(name, "_ZN", 3);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(demangle(name, out), -EINVAL);
}

static void symbol_version_at__versioned_names__length_before_the_version(void **state)
{
	assert_int_equal(symbol_version_at("sem_post@@GLIBC_2.34"), strlen("sem_post"));
	assert_int_equal(symbol_version_at("sem_post@GLIBC_2.2.5"), strlen("sem_post"));
	assert_int_equal(symbol_version_at("__libc_start_main@@GLIBC_2.34"),
			 strlen("__libc_start_main"));
	assert_int_equal(symbol_version_at("_ZNSt6vectorIiSaIiEE9push_backERKi@@GLIBCXX_3.4"),
			 strlen("_ZNSt6vectorIiSaIiEE9push_backERKi"));
	assert_int_equal(symbol_version_at("f@V"), 1);
	/* no version: the whole name */
	assert_int_equal(symbol_version_at("malloc"), strlen("malloc"));
	assert_int_equal(symbol_version_at(""), 0);
	assert_int_equal(symbol_version_at("@GLIBC_2.34"), strlen("@GLIBC_2.34"));
	assert_int_equal(symbol_version_at("f@"), strlen("f@"));
	assert_int_equal(symbol_version_at("f@@"), strlen("f@@"));
	assert_int_equal(symbol_version_at("f@@@V"), strlen("f@@@V"));
	assert_int_equal(symbol_version_at("f@V@W"), strlen("f@V@W"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(demangle__cxx_names__itanium_display_form),
		cmocka_unit_test(demangle__rust_names__hash_dropped_v0_decoded),
		cmocka_unit_test(demangle__not_mangled_or_malformed__einval),
		cmocka_unit_test(demangle__exponential_expansion__e2big_quickly),
		cmocka_unit_test(demangle__input_too_long__einval),
		cmocka_unit_test(symbol_version_at__versioned_names__length_before_the_version),
	};

	return cmocka_run_group_tests_name("demangle", tests, NULL, NULL);
}
