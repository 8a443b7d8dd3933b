/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * elf-seed.c: the program behind the fuzz-elf seeds (tests/fuzz/elf-seeds.sh).
 *
 * IMPLEMENTATION NOTES
 *   Built with many compilers and flags, each binary samples itself once as the
 *   kernel would for a perf sample with user registers and stack: seed_capture()
 *   stores the registers in perf's order, then copies up to STACK_BYTES of its
 *   stack from SP through /proc/self/mem, and writes to stdout the stack bytes
 *   and then a struct trailer (fuzz-elf.c): the registers, the object's load
 *   bias (run-time minus link-time address; 0 for ET_EXEC) and the length of the
 *   stack bytes.  The seed is the binary followed by that output, so the harness
 *   can place the binary where it ran and unwind the sample through its own
 *   .eh_frame, .eh_frame_hdr or frame pointers.
 *
 *   Only raw system calls are used, no C library, so that the same file builds
 *   with -nostdlib (SEED_NOSTDLIB: its own _start, for static and static-pie
 *   objects without libc) as well as normally.  No initialized pointer is kept
 *   in data: a -nostdlib static-pie has no one to apply its relocations.  With
 *   SEED_NO_MAIN it is a shared object whose seed_run() a tiny main calls.
 */
#include <stdint.h>
#include "../unwind-data/capture-regs.h"

#define STACK_BYTES 4096
#define NR_REGS	    20

struct trailer {
	uint64_t regs[NR_REGS];
	uint64_t bias;
	uint32_t stack_len;
	uint32_t flags;
};

extern const unsigned char __ehdr_start[] __attribute__((visibility("hidden")));

static struct trailer g_t;
static unsigned char g_stack[STACK_BYTES];
static volatile int g_sink;

#define SEED_FN __attribute__((noinline, noclone, used))

static long sys4(long n, long a, long b, long c, long d)
{
	long r;
	register long r10 __asm__("r10") = d;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return r;
}

static void write_all(const void *p, unsigned long n)
{
	const unsigned char *b = p;

	while (n > 0) {
		long w = sys4(1 /* write */, 1, (long)b, (long)n, 0);

		if (w <= 0)
			return;
		b += w;
		n -= (unsigned long)w;
	}
}

/* Registers in perf's order: AX BX CX DX SI DI BP SP IP FLAGS CS SS R8..R15. */
SEED_FN static void seed_capture(void)
{
	uint64_t *r = g_t.regs;
	long fd, got;

	CAPTURE_USER_REGS(r);
	/* ET_DYN objects here are linked at 0; an ET_EXEC runs where it was linked. */
	g_t.bias = __ehdr_start[16] == 3 /* ET_DYN */ ? (uint64_t)(uintptr_t)__ehdr_start : 0;
	fd = sys4(2 /* open */, (long)"/proc/self/mem", 0 /* O_RDONLY */, 0, 0);
	got = fd >= 0 ? sys4(17 /* pread64 */, fd, (long)g_stack, STACK_BYTES, (long)r[7]) : -1;
	g_t.stack_len = got > 0 ? (uint32_t)got : 0;
	g_sink++;
}

SEED_FN static int seed_leaf(int x)
{
	seed_capture();
	return x + g_sink;
}

/* A frame whose size is known only at run time: its CFA is rbp-based even at -O2. */
SEED_FN static int seed_vla(int n)
{
	volatile unsigned char buf[n + 16];

	buf[0] = 1;
	buf[n] = (unsigned char)n;
	return seed_leaf(buf[n]) + buf[0];
}

SEED_FN static int seed_mid(int n)
{
	int v = seed_vla(n);

	return v * 3 + g_sink;
}

SEED_FN int seed_run(void)
{
	int v = seed_mid(g_sink + 5);

	write_all(g_stack, g_t.stack_len);
	write_all(&g_t, sizeof(g_t));
	return v & 0;
}

#ifndef SEED_NO_MAIN
int main(void)
{
	return seed_run();
}
#endif

#ifdef SEED_NOSTDLIB
/* The kernel enters at _start with SP at argc; no CFI here, as in glibc's _start. */
__attribute__((noreturn, used)) static void seed_start(void)
{
	sys4(60 /* exit */, main(), 0, 0, 0);
	for (;;)
		;
}
__asm__(".globl _start\n"
	"_start:\n\t"
	"xorl %ebp, %ebp\n\t"
	"andq $-16, %rsp\n\t"
	"call seed_start\n\t"
	"hlt\n");
#endif
