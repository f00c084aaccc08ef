# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Shared unit test fixtures (tests/unit/fixtures.h): one object, linked by
# the test rule of the top Makefile ($(UNIT_FIXTURES)) and by the rules here
# that build tests their own way.

$(UNIT_FIXTURES): tests/unit/fixtures.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@
