/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * corpus-inline.h: two functions that are always inlined, one into the other and
 * both into inl_outer() (corpus-inline.c), and one that runs inlined and out of
 * line.  The markers name the lines the inline tests expect
 * (tests/integration/test-report.sh): the body of inl_mix(), the call of inl_mix()
 * in inl_step(), the loop of inl_twice().
 */
#ifndef HWPMC_CORPUS_INLINE_H
#define HWPMC_CORPUS_INLINE_H

static inline __attribute__((always_inline)) unsigned inl_mix(unsigned x)
{
	/* INL-MIX-BEGIN */
	for (int i = 0; i < 64; i++)
		x = x * 2654435761u + (x >> 13);
	return x;
	/* INL-MIX-END */
}

static inline __attribute__((always_inline)) unsigned inl_step(unsigned x)
{
	unsigned y = inl_mix(x); /* INL-CALL-MIX */

	return y ^ (y >> 7);
}

/*
 * Run both inlined (twice_direct() in corpus-inline.c) and out of line (through a
 * pointer, twice_ptr()): one source function, one line, two copies of its code.
 */
static inline __attribute__((always_inline)) unsigned inl_twice(unsigned x)
{
	for (int i = 0; i < 64; i++) x = x * 40503u + (x >> 11); /* INL-TWICE */
	return x;
}

#endif
