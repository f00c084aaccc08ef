/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* CPython 3.11's layout from its own headers, for test_python_layout (python_layout_expect.c) */
#ifndef CTXPROF_PYTHON_LAYOUT_EXPECT_H
#define CTXPROF_PYTHON_LAYOUT_EXPECT_H

#include <stdint.h>

struct python_layout;

/**
 * python_layout_expect() - fill @l with the offsets the 3.11 headers give,
 * *@version with their PY_VERSION_HEX.
 * Return: 0, or -ENOENT when built without the headers (*@why says so).
 */
int python_layout_expect(struct python_layout *l, uint32_t *version, const char **why);

#endif /* CTXPROF_PYTHON_LAYOUT_EXPECT_H */
