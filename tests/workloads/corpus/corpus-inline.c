/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * corpus-inline.c: inline frames and source lines to report (hwpmc report
 * --inline, --srcline): built -O2 -g, so inl_step() and inl_mix() of
 * corpus-inline.h exist only inlined into inl_outer().
 *
 * usage: hwpmc-corpus-inline [CPU_SECONDS]
 *   main -> inl_outer (noinline) -> inl_step (inlined) -> inl_mix (inlined), and
 *   main -> twice_direct -> inl_twice (inlined) and main -> twice_ptr -> inl_twice
 *   (out of line), until the process has used CPU_SECONDS (default 1) of CPU time,
 *   however busy the machine is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "corpus-inline.h"

static volatile unsigned sink;

static __attribute__((noinline)) unsigned inl_outer(unsigned x)
{
	for (unsigned n = 0; n < 4096; n++)
		x = inl_step(x + n); /* INL-CALL-STEP */
	return x;
}

static __attribute__((noinline)) unsigned twice_direct(unsigned x)
{
	return inl_twice(x) + 1;
}

/* a pointer the compiler cannot see through: inl_twice() also exists out of line */
static unsigned (*volatile twice_fn)(unsigned) = inl_twice;

static __attribute__((noinline)) unsigned twice_ptr(unsigned x)
{
	return twice_fn(x) + 1;
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double want = argc > 1 ? atof(argv[1]) : 1.0;
	unsigned x = 1;

	while (cpu_seconds() < want) {
		x = inl_outer(x);
		for (int i = 0; i < 256; i++)
			x = twice_ptr(twice_direct(x));
	}
	sink = x;
	printf("inline %u\n", x);
	return 0;
}
