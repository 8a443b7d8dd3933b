/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * corpus-inline.h: two functions that are always inlined, one into the other and
 * both into inl_outer() (corpus-inline.c).  The markers name the lines the inline
 * tests expect (tests/integration/test-report.sh): the body of inl_mix(), and the
 * call of inl_mix() in inl_step().
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

#endif
