// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * corrupt - a CPython 3.11 extension that lies to a profiler about its
 * caller's frames (tests/workloads/python/hostile.py, test_python.sh).
 *
 * corrupt.spin(mode, seconds) is called from a Python function (victim);
 * C functions push no _PyInterpreterFrame in 3.11, so the thread's current
 * frame is the caller's.  spin() damages that frame as MODE says, spins on
 * the CPU for SECONDS under the profiler with the damage in place, then
 * puts every pointer back and returns: nothing runs Python code or walks
 * the frames meanwhile (no allocation, no callback, the GIL held), so
 * CPython never sees the damage.  Modes:
 *   prev_garbage   frame->previous = 0x4141414141414141
 *   prev_self      frame->previous = frame: a chain that loops
 *   prev_fake      frame->previous = a fake frame whose f_code is a copy of
 *                  a real code object (planted_never_shown's) with ob_type
 *                  &PyDict_Type: not a code object, its names real strings
 *   code_fake      frame->f_code = that same fake code object
 *   code_badname   frame->f_code = a copy of planted_never_shown's code with
 *                  the right type, its co_qualname pointing at a bytes
 *                  object and its co_filename at 0x4141414141414141
 *   prev_unmapped  frame->previous = a page mapped, then unmapped
 * corrupt.current_qualname() is the co_qualname of that frame (the
 * caller's: hostile.py checks it is victim's before each spin).
 * corrupt.native_tid() is the current thread state's native_thread_id (what
 * the sampler matches a thread by), to see what fork() leaves there.
 */
#define PY_SSIZE_T_CLEAN
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define GARBAGE ((void *)0x4141414141414141ull)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* volatile: the loop is not optimized away */
static volatile unsigned long sink;

static void burn(double seconds)
{
	double end = now() + seconds;
	unsigned long x = 1;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

/* a copy of CODE, big enough for any read of a code object's head */
static PyCodeObject *code_copy(PyObject *code)
{
	size_t size = Py_TYPE(code)->tp_basicsize + 512;
	PyCodeObject *c = PyMem_RawCalloc(1, size);

	if (c)
		memcpy(c, code, Py_TYPE(code)->tp_basicsize);
	return c;
}

static PyObject *spin(PyObject *self, PyObject *args)
{
	PyThreadState *ts = PyThreadState_Get();
	_PyInterpreterFrame *frame = ts->cframe->current_frame, *saved_prev;
	_PyInterpreterFrame *fake_frame = NULL;
	PyCodeObject *saved_code, *fake_code = NULL;
	PyObject *planted, *bytes = NULL;
	const char *mode;
	double seconds;
	void *page = NULL;

	if (!PyArg_ParseTuple(args, "sdO", &mode, &seconds, &planted))
		return NULL;
	if (!frame || !PyCode_Check(planted)) {
		PyErr_SetString(PyExc_RuntimeError, "no Python frame, or planted is not code");
		return NULL;
	}
	fake_code = code_copy(planted);
	fake_frame = PyMem_RawCalloc(1, sizeof(*fake_frame) + 64);
	bytes = PyBytes_FromString("planted_bytes_name_planted_bytes_name_planted_bytes_name");
	if (!fake_code || !fake_frame || !bytes) {
		PyErr_NoMemory();
		goto out;
	}
	/* the copy holds no references: its refcount is never touched */
	fake_frame->f_code = fake_code;
	fake_frame->prev_instr = _PyCode_CODE((PyCodeObject *)planted);
	fake_frame->previous = NULL;

	saved_prev = frame->previous;
	saved_code = frame->f_code;
	if (!strcmp(mode, "prev_garbage")) {
		frame->previous = GARBAGE;
	} else if (!strcmp(mode, "prev_self")) {
		frame->previous = frame;
	} else if (!strcmp(mode, "prev_fake")) {
		Py_SET_TYPE((PyObject *)fake_code, &PyDict_Type);
		frame->previous = fake_frame;
	} else if (!strcmp(mode, "code_fake")) {
		Py_SET_TYPE((PyObject *)fake_code, &PyDict_Type);
		frame->f_code = fake_code;
	} else if (!strcmp(mode, "code_badname")) {
		fake_code->co_qualname = bytes;
		fake_code->co_name = bytes;
		fake_code->co_filename = GARBAGE;
		frame->f_code = fake_code;
	} else if (!strcmp(mode, "prev_unmapped")) {
		page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (page == MAP_FAILED) {
			PyErr_SetFromErrno(PyExc_OSError);
			goto out;
		}
		munmap(page, 4096);
		frame->previous = page;
	} else {
		PyErr_Format(PyExc_ValueError, "unknown mode %s", mode);
		goto out;
	}
	burn(seconds);
	frame->previous = saved_prev;
	frame->f_code = saved_code;
out:
	Py_XDECREF(bytes);
	PyMem_RawFree(fake_frame);
	PyMem_RawFree(fake_code);
	if (PyErr_Occurred())
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *native_tid(PyObject *self, PyObject *args)
{
	return PyLong_FromUnsignedLong(PyThreadState_Get()->native_thread_id);
}

/* the co_qualname of the frame spin() would damage: its caller's */
static PyObject *current_qualname(PyObject *self, PyObject *args)
{
	_PyInterpreterFrame *frame = PyThreadState_Get()->cframe->current_frame;

	if (!frame)
		Py_RETURN_NONE;
	return Py_NewRef(frame->f_code->co_qualname);
}

static PyMethodDef methods[] = {
	{"spin", spin, METH_VARARGS, "spin(mode, seconds, code): damage the caller's frame, spin"},
	{"current_qualname", current_qualname, METH_NOARGS, "the caller's frame's co_qualname"},
	{"native_tid", native_tid, METH_NOARGS, "the thread state's native_thread_id"},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
	.m_base = PyModuleDef_HEAD_INIT,
	.m_name = "corrupt",
	.m_doc = "frames that lie to a profiler",
	.m_size = -1,
	.m_methods = methods,
};

PyMODINIT_FUNC PyInit_corrupt(void)
{
	return PyModule_Create(&module);
}
