# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# CPython tests.  test_python_layout checks symbols/python_layout.c's 3.11
# table against CPython's own internal headers (Debian's python3.11-dev, in
# make deps): python_layout_expect.o is that table as offsetof() and sizeof()
# compute it, built with Py_BUILD_CORE.  The headers are pinned to 3.11, not
# taken from python3-config (which may be another version's); without them
# the object is a stub and the test skips, saying why.

PY311_INCLUDE ?= /usr/include/python3.11
PY311_EXPECT := $(OUTPUT)/tests/python_layout_expect.o
PY311_EXPECT_FLAGS := -DCTXPROF_PY311_INCLUDE='"$(PY311_INCLUDE)"' \
	$(if $(wildcard $(PY311_INCLUDE)/internal/pycore_frame.h), \
		-DCTXPROF_PY311_HEADERS -isystem $(PY311_INCLUDE))

$(PY311_EXPECT): tests/unit/python_layout_expect.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(PY311_EXPECT_FLAGS) -c $< -o $@

$(OUTPUT)/tests/test_python_layout: tests/unit/test_python_layout.c $(PY311_EXPECT) \
		$(UNIT_FIXTURES) $(LIBCOLLECTOR) | $(OUTPUT)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(PY311_EXPECT) $(UNIT_FIXTURES) $(LIBCOLLECTOR) $(ALL_LDFLAGS) \
		$(LIBS) -lcmocka -o $@
