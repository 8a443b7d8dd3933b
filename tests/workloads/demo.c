/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * demo.c: the demo and test workload: known call paths in a PIE and a library.
 *
 * usage: hwpmc-demo [SECONDS] [--threads] [--fork]
 *
 * IMPLEMENTATION NOTES
 *   main -> run -> work_outer -> work_inner -> hot_leaf burns most of the time
 *   in the executable; every 4th round goes through lib_entry -> lib_hot_loop in
 *   libhwpmc-demo.so.  --threads runs the same in a second thread, --fork in a
 *   child process as well, so that tests can see threads and children followed.
 *   Built with frame pointers so that fp call chains reach main.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

uint64_t lib_entry(uint64_t n);

static double seconds = 2.0;
static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t hot_leaf(uint64_t n)
{
	volatile uint64_t x = 7;

	for (uint64_t i = 0; i < n; i++)
		x ^= x * 6364136223846793005ull + i;
	return x;
}

__attribute__((noinline)) static uint64_t work_inner(uint64_t n)
{
	return hot_leaf(n) + 1;
}

__attribute__((noinline)) static uint64_t work_outer(uint64_t n)
{
	return work_inner(n) + 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void *run(void *arg)
{
	double end = now() + seconds;
	unsigned round = 0;

	(void)arg;
	while (now() < end) {
		if (++round % 4 == 0)
			sink += lib_entry(200000);
		else
			sink += work_outer(200000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int threads = 0, forks = 0;
	pid_t child = -1;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--threads") == 0)
			threads = 1;
		else if (strcmp(argv[i], "--fork") == 0)
			forks = 1;
		else
			seconds = atof(argv[i]);
	}
	if (seconds <= 0)
		seconds = 2.0;
	if (forks) {
		child = fork();
		if (child == 0) {
			run(NULL);
			_exit(0);
		}
	}
	if (threads && pthread_create(&t, NULL, run, NULL) != 0)
		threads = 0;
	run(NULL);
	if (threads)
		pthread_join(t, NULL);
	if (child > 0)
		waitpid(child, NULL, 0);
	printf("hwpmc-demo: done (%llu)\n", (unsigned long long)(sink & 0xff));
	return 0;
}
