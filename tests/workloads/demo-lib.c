/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * demo-lib.c: the shared-library half of the demo workload (libhwpmc-demo.so).
 *
 * IMPLEMENTATION NOTES
 *   Noinline functions with known names, so that reports and tests can check
 *   that samples land in lib_hot_loop via lib_entry.
 */
#include <stdint.h>

uint64_t lib_entry(uint64_t n);

__attribute__((noinline)) static uint64_t lib_hot_loop(uint64_t n)
{
	volatile uint64_t x = 1;

	for (uint64_t i = 0; i < n; i++)
		x = x * 2862933555777941757ull + 3037000493ull;
	return x;
}

__attribute__((noinline)) uint64_t lib_entry(uint64_t n)
{
	return lib_hot_loop(n) + 1;
}
