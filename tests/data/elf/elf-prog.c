/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * elf-prog.c: executable built at test time by tests/unit/test-maplog-elf.c (as PIE,
 * non-PIE, classic-layout non-PIE and with LLD).  It prints the run-time address of
 * maplog_test_prog_fn() as "fn 0x<hex>", then its own /proc/self/maps, and exits 0.
 */
#include <stdint.h>
#include <stdio.h>

__attribute__((noinline)) int maplog_test_prog_fn(int x);

__attribute__((noinline)) int maplog_test_prog_fn(int x)
{
	return x * 3 + 1;
}

int main(void)
{
	int (*volatile fn)(int) = maplog_test_prog_fn;
	char buf[4096];
	size_t n;
	FILE *f;

	printf("fn 0x%llx\n", (unsigned long long)(uintptr_t)fn);
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return 2;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stdout);
	fclose(f);
	return fn(1) == 4 && fflush(stdout) == 0 ? 0 : 1;
}
