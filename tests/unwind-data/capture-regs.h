/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * capture-regs.h: CAPTURE_USER_REGS(r) stores the calling function's x86-64 user
 * registers into r[0..19] in perf's sample_regs_user order (AX BX CX DX SI DI BP SP
 * IP FLAGS CS SS R8..R15), as a sample of that point would carry them.  IP is the
 * label after a nop inside the same asm statement, so IP - 1 (the nop) has the same
 * CFI row as IP: a test may use IP as a return address.  FLAGS, CS and SS get the
 * values a user-mode sample has.  Freestanding (no libc), so that the fuzz seeds
 * built with -nostdlib use it as the unit tests do.
 */
#ifndef HWPMCD_TESTS_CAPTURE_REGS_H
#define HWPMCD_TESTS_CAPTURE_REGS_H

#define CAPTURE_USER_REGS(r)                                                                     \
	do {                                                                                     \
		__asm__ volatile("nop\n"                                                         \
				 "1:\n\t"                                                        \
				 "movq %%rax, 0(%0)\n\t"                                         \
				 "movq %%rbx, 8(%0)\n\t"                                         \
				 "movq %%rcx, 16(%0)\n\t"                                        \
				 "movq %%rdx, 24(%0)\n\t"                                        \
				 "movq %%rsi, 32(%0)\n\t"                                        \
				 "movq %%rdi, 40(%0)\n\t"                                        \
				 "movq %%rbp, 48(%0)\n\t"                                        \
				 "movq %%rsp, 56(%0)\n\t"                                        \
				 "leaq 1b(%%rip), %%rax\n\t"                                     \
				 "movq %%rax, 64(%0)\n\t"                                        \
				 "movq %%r8, 96(%0)\n\t"                                         \
				 "movq %%r9, 104(%0)\n\t"                                        \
				 "movq %%r10, 112(%0)\n\t"                                       \
				 "movq %%r11, 120(%0)\n\t"                                       \
				 "movq %%r12, 128(%0)\n\t"                                       \
				 "movq %%r13, 136(%0)\n\t"                                       \
				 "movq %%r14, 144(%0)\n\t"                                       \
				 "movq %%r15, 152(%0)\n\t"                                       \
				 :                                                               \
				 : "r"(r)                                                        \
				 : "rax", "memory");                                             \
		(r)[9] = 0x246;                                                                  \
		(r)[10] = 0x33;                                                                  \
		(r)[11] = 0x2b;                                                                  \
	} while (0)

#endif
