/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * corpus.c: the unwinding correctness corpus: known call chains to unwind.
 *
 * usage: hwpmc-corpus-{pie,nopie,static} MODE [SECONDS]
 *   chain      main -> c_outer -> c_middle -> c_inner -> c_leaf
 *   shlib      main -> s_outer -> lib_mid -> lib_leaf (libhwpmc-corpus.so, linked)
 *   dlopen     main -> d_outer -> dl_mid -> dl_leaf (libhwpmc-corpus-dl.so, dlopen)
 *   threads    two threads: t_worker -> t_middle -> t_leaf
 *   signal     main -> m_spin, interrupted by SIGPROF: sig_handler -> sig_leaf
 *   recursion  main -> rec_top -> rec_fn x 100 (1 KiB a frame) -> rec_leaf: 100 KiB,
 *              deeper than the largest stack snapshot (65528 bytes) in fewer frames
 *              than the default depth (128), so unwinding must stop short
 *   storm      main -> storm_loop forks and execs itself 1000 times ("chain" for 2 ms)
 *   vdso       main -> v_outer -> v_mid -> clock_gettime (libc) -> the vDSO's function
 *   epilogue   main -> ep_outer -> ep_leaf, with frame pointers (corpus-fp.c): samples
 *              on the ret after pop %rbp
 *   bigframe   main -> bf_outer (5.5 KB frame) -> bf_mid (5 KB frame) -> bf_leaf: a
 *              stack deeper than 8 KiB, as sqlite3's shell (5.5 KB) and bzip2 (5 KB)
 *              have; complete with the default snapshot
 *   frameless  main -> fl_outer -> fl_caller -> fl_leaf, the last two without CFI and
 *              fl_leaf without a frame (corpus-fp.c)
 *   remap      main -> r_outer -> r_leaf run from a second mapping of the program's
 *              file, in the middle of a 64 MiB reservation (as node maps its embedded
 *              builtins again inside V8's code range)
 *
 * IMPLEMENTATION NOTES
 *   Built -O2 -fomit-frame-pointer -fno-optimize-sibling-calls: frame pointers
 *   are of no help, only the unwind tables are.  Every corpus function is
 *   noinline and has exactly one caller (rec_fn calls itself), so the correct
 *   chain of a sample follows from its innermost corpus function; the chain
 *   checker (tests/integration/check_chains.py) knows these chains by name.
 *   The hot loops call nothing, so samples land in corpus code; the time is
 *   read between rounds of about a millisecond.  The static build (-DCORPUS_STATIC)
 *   has no shlib and dlopen modes.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifndef CORPUS_STATIC
#include <dlfcn.h>
#endif
#include <pthread.h>

#define NOINL __attribute__((noinline, noclone))
#define ROUND 200000 /* iterations of a hot loop: about a millisecond here */

uint64_t lib_mid(uint64_t n);
void ep_outer(double seconds, volatile uint64_t *sink);
void fl_outer(double seconds, volatile uint64_t *sink);

static volatile uint64_t sink;
static volatile sig_atomic_t in_handler;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t spin(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++)
		x ^= x * 6364136223846793005ull + i;
	return x;
}

NOINL static uint64_t c_leaf(uint64_t n) { return spin(n, sink) + 1; }
NOINL static uint64_t c_inner(uint64_t n) { return c_leaf(n) + 1; }
NOINL static uint64_t c_middle(uint64_t n) { return c_inner(n) + 1; }
NOINL static void c_outer(double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		sink += c_middle(ROUND);
}

#ifndef CORPUS_STATIC
NOINL static void s_outer(double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		sink += lib_mid(ROUND);
}

NOINL static int d_outer(const char *self, double seconds)
{
	char path[4096];
	const char *slash = strrchr(self, '/');
	uint64_t (*mid)(uint64_t);
	void *h;
	double end;

	/* The library sits beside the executable (both in the build's corpus directory). */
	snprintf(path, sizeof(path), "%.*slibhwpmc-corpus-dl.so",
		 slash ? (int)(slash - self + 1) : 0, self);
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "hwpmc-corpus: %s\n", dlerror());
		return 1;
	}
	*(void **)&mid = dlsym(h, "dl_mid");
	if (!mid) {
		fprintf(stderr, "hwpmc-corpus: no dl_mid in %s\n", path);
		dlclose(h);
		return 1;
	}
	end = now() + seconds;
	while (now() < end)
		sink += mid(ROUND);
	dlclose(h);
	return 0;
}
#endif

NOINL static uint64_t t_leaf(uint64_t n) { return spin(n, sink) + 3; }
NOINL static uint64_t t_middle(uint64_t n) { return t_leaf(n) + 3; }
NOINL static void *t_worker(void *arg)
{
	double end = now() + *(double *)arg;

	while (now() < end)
		sink += t_middle(ROUND);
	return NULL;
}

NOINL static uint64_t sig_leaf(uint64_t n) { return spin(n, sink) + 5; }
NOINL static void sig_handler(int sig)
{
	(void)sig;
	in_handler = 1;
	sink += sig_leaf(ROUND * 2);
	in_handler = 0;
}
NOINL static void m_spin(double seconds)
{
	double end = now() + seconds;

	/* The time is read rarely: the interrupted code is almost always this loop. */
	while (now() < end)
		for (int i = 0; i < ROUND; i++)
			sink = sink * 3 + (uint64_t)i;
}

NOINL static uint64_t rec_leaf(uint64_t n) { return spin(n, sink) + 7; }
NOINL static uint64_t rec_fn(int depth, uint64_t n)
{
	volatile char frame[1024]; /* makes the stack deeper than the snapshot */
	uint64_t r;

	frame[depth % 1024] = (char)depth;
	r = depth > 0 ? rec_fn(depth - 1, n) : rec_leaf(n);
	return r + (uint64_t)frame[depth % 1024];
}
NOINL static void rec_top(double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		sink += rec_fn(100, ROUND);
}

NOINL static uint64_t v_mid(int n)
{
	struct timespec ts;
	uint64_t x = 0;

	for (int i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts); /* the vDSO's, through libc */
		x += (uint64_t)ts.tv_nsec;
	}
	return x;
}
NOINL static void v_outer(double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		sink += v_mid(20000);
}

/* Frames as large as sqlite3's shell main (5.5 KB) and bzip2's (5 KB). */
NOINL static uint64_t bf_leaf(uint64_t n) { return spin(n, sink) + 9; }
NOINL static uint64_t bf_mid(uint64_t n)
{
	volatile char frame[5120];

	frame[n % sizeof(frame)] = (char)n;
	return bf_leaf(n) + (uint64_t)frame[n % sizeof(frame)];
}
NOINL static void bf_outer(double seconds)
{
	volatile char frame[5632];
	double end = now() + seconds;

	while (now() < end) {
		frame[sink % sizeof(frame)] = (char)sink;
		sink += bf_mid(ROUND) + (uint64_t)frame[sink % sizeof(frame)];
	}
}

NOINL static int storm_loop(const char *self, int n)
{
	int failed = 0;

	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		int status;

		if (pid < 0) {
			perror("hwpmc-corpus: fork");
			return 1;
		}
		if (pid == 0) {
			execl(self, self, "chain", "0.002", (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	if (failed)
		fprintf(stderr, "hwpmc-corpus: %d of %d children failed\n", failed, n);
	return failed != 0;
}

/* Code that runs anywhere: its argument, registers and immediates only. */
NOINL static uint64_t r_leaf(uint64_t n)
{
	uint64_t x = n;

	for (uint64_t i = 0; i < n; i++)
		x ^= x * 6364136223846793005ull + i;
	return x;
}
NOINL static int r_outer(double seconds)
{
	uintptr_t at = (uintptr_t)r_leaf, page = (uintptr_t)sysconf(_SC_PAGESIZE), lo = 0;
	unsigned long long s, e, off = 0;
	char line[4200], perms[8];
	uint64_t (*copy)(uint64_t);
	FILE *f = fopen("/proc/self/maps", "re");
	double end;
	void *res, *m;
	int fd;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s %llx", &s, &e, perms, &off) == 4 && s <= at && at < e) {
			lo = (uintptr_t)s;
			break;
		}
	if (f)
		fclose(f);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	res = mmap(NULL, (size_t)64 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!lo || fd < 0 || res == MAP_FAILED) {
		fprintf(stderr, "hwpmc-corpus: remap: no mapping of r_leaf, no file or no room\n");
		return 1;
	}
	/* The two pages from r_leaf's, 32 MiB into the reservation. */
	m = mmap((char *)res + (32 << 20), 2 * page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED,
		 fd, (off_t)(off + ((at & ~(page - 1)) - lo)));
	close(fd);
	if (m == MAP_FAILED) {
		fprintf(stderr, "hwpmc-corpus: remap: mmap failed\n");
		return 1;
	}
	copy = (uint64_t (*)(uint64_t))((char *)m + (at & (page - 1)));
	end = now() + seconds;
	while (now() < end)
		sink += copy(ROUND);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "chain";
	double seconds = argc > 2 ? atof(argv[2]) : 2.0;

	if (strcmp(mode, "chain") == 0) {
		c_outer(seconds);
#ifndef CORPUS_STATIC
	} else if (strcmp(mode, "shlib") == 0) {
		s_outer(seconds);
	} else if (strcmp(mode, "dlopen") == 0) {
		return d_outer(argv[0], seconds);
#endif
	} else if (strcmp(mode, "threads") == 0) {
		pthread_t t[2];

		for (int i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, t_worker, &seconds) != 0) {
				fprintf(stderr, "hwpmc-corpus: pthread_create failed\n");
				return 1;
			}
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
	} else if (strcmp(mode, "signal") == 0) {
		struct sigaction sa;
		struct itimerval it = { { 0, 5000 }, { 0, 5000 } };

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = sig_handler;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGPROF, &sa, NULL);
		setitimer(ITIMER_PROF, &it, NULL);
		m_spin(seconds);
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_PROF, &it, NULL);
	} else if (strcmp(mode, "recursion") == 0) {
		rec_top(seconds);
	} else if (strcmp(mode, "vdso") == 0) {
		v_outer(seconds);
	} else if (strcmp(mode, "epilogue") == 0) {
		ep_outer(seconds, &sink);
	} else if (strcmp(mode, "bigframe") == 0) {
		bf_outer(seconds);
	} else if (strcmp(mode, "remap") == 0) {
		return r_outer(seconds);
	} else if (strcmp(mode, "frameless") == 0) {
		fl_outer(seconds, &sink);
	} else if (strcmp(mode, "storm") == 0) {
		return storm_loop(argv[0], argc > 2 ? atoi(argv[2]) : 1000);
	} else {
		fprintf(stderr,
			"usage: %s chain|shlib|dlopen|threads|signal|recursion|vdso|epilogue|bigframe|remap|\n"
			"       frameless|storm\n"
			"       [SECONDS|N]\n",
			argv[0]);
		return 2;
	}
	return 0;
}
