"""Two request handlers, each under its own span set through libctxprof
(ctypes on build/libctxprof.so): the span labels must sit on the samples
whose Python frames are that handler's (tests/integration/test_python.sh).

usage: python3 spans.py LIBCTXPROF SECONDS
"""
import ctypes
import sys
import time

lib = ctypes.CDLL(sys.argv[1])
lib.ctxprof_set_context.argtypes = [ctypes.c_uint64, ctypes.c_uint64]
lib.ctxprof_clear_context.argtypes = []
SPAN_A, SPAN_B, ROOT = 0xA1A1, 0xB2B2, 0x7777


def work(n):
    s = 0
    for i in range(n):
        s += i * i % 13
    return s


def handler_a():
    end = time.monotonic() + 0.02
    while time.monotonic() < end:
        work(500)


def handler_b():
    end = time.monotonic() + 0.02
    while time.monotonic() < end:
        work(500)


def serve(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        lib.ctxprof_set_context(SPAN_A, ROOT)
        handler_a()
        lib.ctxprof_set_context(SPAN_B, ROOT)
        handler_b()
        lib.ctxprof_clear_context()
        work(2000)


serve(float(sys.argv[2]))
