/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * corpus-fp.c: the corpus's "epilogue" and "frameless" workloads, built WITH frame
 * pointers.
 *
 * PUBLIC INTERFACES
 *   ep_outer()   main -> ep_outer -> ep_leaf, called about a million times a round
 *   fl_outer()   main -> fl_outer -> fl_caller -> fl_leaf, the last two in assembly
 *                without CFI (as JIT code and V8's builtins are): fl_caller keeps a
 *                frame, fl_leaf does not, so in fl_leaf RBP is fl_caller's and
 *                [RBP + 8] returns into fl_outer; a frame-pointer step from the leaf
 *                would skip fl_caller (issue 33, item 8)
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
uint64_t fl_caller(uint64_t n);
uint64_t fl_leaf(uint64_t n);
void fl_outer(double seconds, volatile uint64_t *sink);

/* No .cfi_* directives: no FDE covers these two. */
__asm__(".text\n"
	".globl fl_caller\n"
	".type fl_caller, @function\n"
	"fl_caller:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	call fl_leaf\n"
	"	add $1, %rax\n"
	"	pop %rbp\n"
	"	ret\n"
	".size fl_caller, .-fl_caller\n"
	".globl fl_leaf\n"
	".type fl_leaf, @function\n"
	"fl_leaf:\n"
	"	mov %rdi, %rcx\n"
	"	movabs $0x5851f42d4c957f2d, %rdx\n"
	"	xor %eax, %eax\n"
	"1:	imul %rdx, %rax\n"
	"	add %rcx, %rax\n"
	"	dec %rcx\n"
	"	jnz 1b\n"
	"	ret\n"
	".size fl_leaf, .-fl_leaf\n");

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

NOINL void fl_outer(double seconds, volatile uint64_t *sink)
{
	double end = ep_now() + seconds;

	while (ep_now() < end)
		for (int i = 0; i < 1000; i++)
			*sink += fl_caller(1000);
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
