/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * elf-free32.c: freestanding 32-bit (i386) executable built at test time by
 * tests/unit/test-maplog-elf.c with clang and ld.lld, to check that ELFCLASS32 objects
 * are read.  It is never run.
 */
__attribute__((noinline)) int maplog_test_free32_fn(int x);
void _start(void);

__attribute__((noinline)) int maplog_test_free32_fn(int x)
{
	return x + 1;
}

void _start(void)
{
	(void)maplog_test_free32_fn(1);
	for (;;)
		;
}
