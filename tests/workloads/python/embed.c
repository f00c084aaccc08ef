// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * embed - a C program that embeds CPython 3.11 (libpython3.11.so, linked
 * with python3-config --embed): the interpreter is a shared library, not
 * the executable (tests/integration/test_python.sh).
 *
 * It defines embedded_hot (and embedded_leaf, which it calls) with
 * PyRun_SimpleString, then calls embedded_hot from C with PyObject_Call
 * in embed_call_loop() for SECONDS, so a sample's stack reads
 * embedded_leaf <- embedded_hot <- (libpython's call machinery) <-
 * embed_call_loop <- main.  No <module> below it: C is the caller.
 *
 * usage: embed SECONDS
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char source[] = "def embedded_leaf(n):\n"
			     "    s = 0\n"
			     "    for i in range(n):\n"
			     "        s = (s * 31 + i) & 0xFFFF\n"
			     "    return s\n"
			     "\n"
			     "def embedded_hot(n):\n"
			     "    return embedded_leaf(n) + embedded_leaf(n // 2)\n";

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* calls embedded_hot(20000) until SECONDS have passed; -1 on a Python error */
static __attribute__((noinline)) int embed_call_loop(PyObject *fn, double seconds)
{
	double end = now() + seconds;
	PyObject *args = Py_BuildValue("(i)", 20000), *res;

	if (!args)
		return -1;
	while (now() < end) {
		res = PyObject_Call(fn, args, NULL);
		if (!res) {
			Py_DECREF(args);
			return -1;
		}
		Py_DECREF(res);
	}
	Py_DECREF(args);
	return 0;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5;
	PyObject *main_module, *fn;
	int err = 1;

	Py_Initialize();
	if (PyRun_SimpleString(source))
		goto out;
	main_module = PyImport_AddModule("__main__"); /* borrowed */
	fn = main_module ? PyObject_GetAttrString(main_module, "embedded_hot") : NULL;
	if (!fn)
		goto out;
	err = embed_call_loop(fn, seconds) ? 1 : 0;
	Py_DECREF(fn);
out:
	if (PyErr_Occurred())
		PyErr_Print();
	if (Py_FinalizeEx() < 0)
		err = 1;
	return err;
}
