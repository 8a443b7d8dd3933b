/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * corpus-lib.c: libhwpmc-corpus.so (linked: lib_mid -> lib_leaf) and, built
 * with -DCORPUS_DL, libhwpmc-corpus-dl.so (dlopen'ed: dl_mid -> dl_leaf).
 * No frame pointers, noinline, one caller each (see corpus.c).
 */
#include <stdint.h>

#ifdef CORPUS_DL
#define MID dl_mid
#define LEAF dl_leaf
#else
#define MID lib_mid
#define LEAF lib_leaf
#endif

uint64_t MID(uint64_t n);

static volatile uint64_t lib_sink = 11;

__attribute__((noinline, noclone)) static uint64_t LEAF(uint64_t n)
{
	uint64_t x = lib_sink;

	for (uint64_t i = 0; i < n; i++)
		x ^= x * 6364136223846793005ull + i;
	return x;
}

uint64_t MID(uint64_t n)
{
	return LEAF(n) + 1;
}
