/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind-lib.c: a tiny shared library that tests/unit/test-unwind.c builds at run time
 * and dlopen()s, so that a captured stack runs through frames of a file the test can
 * copy, replace and build without unwind tables.
 *
 * PUBLIC INTERFACES
 *   unwl_outer() calls unwl_inner(), which calls back into the test.
 *
 * IMPLEMENTATION NOTES
 *   Both functions do work after their call, so that neither call is a tail call
 *   and each leaves a frame the unwinder must step through.  Built with unwind
 *   tables (.eh_frame_hdr) for the replaced-file and LRU tests, and with
 *   -fno-asynchronous-unwind-tables -fno-unwind-tables -fno-omit-frame-pointer -g
 *   (only .debug_frame) for the frame-pointer fallback test.
 */
typedef int (*unwl_cb_fn)(void *arg);

int unwl_inner(unwl_cb_fn cb, void *arg);
int unwl_outer(unwl_cb_fn cb, void *arg);

volatile int unwl_sink;

__attribute__((noinline)) int unwl_inner(unwl_cb_fn cb, void *arg)
{
	int r = cb(arg);

	return r + unwl_sink;
}

__attribute__((noinline)) int unwl_outer(unwl_cb_fn cb, void *arg)
{
	int r = unwl_inner(cb, arg);

	return r + unwl_sink + 1;
}
