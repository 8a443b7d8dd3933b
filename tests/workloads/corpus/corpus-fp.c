/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * corpus-fp.c: the corpus's "epilogue" workload, built WITH frame pointers.
 *
 * PUBLIC INTERFACES
 *   ep_outer()   main -> ep_outer -> ep_leaf, called about a million times a round
 *
 * IMPLEMENTATION NOTES
 *   Both functions keep a frame pointer (-fno-omit-frame-pointer for this file
 *   only; ep_leaf is written in assembly with GCC's CFI), so ep_outer's CFA is rbp + 16 and ep_leaf is push %rbp; mov %rsp,%rbp;
 *   ...; pop %rbp; ret.  At ep_leaf's ret, after the pop, GCC's CFI still says
 *   "rbp is saved at CFA - 16", a slot that is now under SP and outside the stack
 *   snapshot: an unwinder that trusts that rule loses ep_outer's frame.  ep_leaf is
 *   tiny and called in a tight loop, so a good share of samples land on that ret
 *   (check_chains.py counts them and requires each one's chain to be complete).
 */
#include <stdint.h>
#include <time.h>

#define NOINL __attribute__((noinline, noclone))

uint64_t ep_leaf(uint64_t x);
void ep_outer(double seconds, volatile uint64_t *sink);

/*
 * ep_leaf(x) = x * 6364136223846793005 + 1442695040888963407, with the frame and
 * the CFI GCC gives a function compiled with frame pointers (GCC itself omits the
 * frame of so small a leaf whatever the options say).
 */
__asm__(".text\n"
	".globl ep_leaf\n"
	".type ep_leaf, @function\n"
	"ep_leaf:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	mov %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	movabs $0x5851f42d4c957f2d, %rax\n"
	"	imul %rdi, %rax\n"
	"	movabs $0x14057b7ef767814f, %rdi\n"
	"	add %rdi, %rax\n"
	"	pop %rbp\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size ep_leaf, .-ep_leaf\n");

static double ep_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

NOINL void ep_outer(double seconds, volatile uint64_t *sink)
{
	double end = ep_now() + seconds;

	while (ep_now() < end) {
		uint64_t x = *sink;

		for (int i = 0; i < 1000000; i++)
			x = ep_leaf(x);
		*sink = x;
	}
}
