/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * elf-lib.c: shared library built at test time by tests/unit/test-maplog-elf.c (with
 * GNU ld and with LLD); the test dlopen()s it and resolves maplog_test_lib_fn().
 */
__attribute__((noinline)) int maplog_test_lib_fn(int x);

__attribute__((noinline)) int maplog_test_lib_fn(int x)
{
	return x * 5 + 2;
}
