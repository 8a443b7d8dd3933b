/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-pmclog-alloc.c: src/pmclog under a failing allocator.
 *
 * IMPLEMENTATION NOTES
 *   Linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc: every allocation
 *   in this executable (the pmclog library included, Check's shared library not)
 *   goes through the wrappers below, which fail the Nth one once armed.  Each test
 *   fails allocation 0, 1, 2, ... in turn until the operation succeeds, and checks
 *   that every failure is a clean -ENOMEM that loses nothing: ASan/LSan and
 *   valgrind (the 'valgrind' test setup) report any leak or bad access.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake-logs.h"
#include "hwpmcd/pmclog.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);

static long fail_countdown = -1; /* -1: never fail */
static long failures;
static bool armed; /* count only allocations of the code under test, not Check's */

#define ARMED(expr)                   \
	({                            \
		armed = true;         \
		__typeof__(expr) v_ = (expr); \
		armed = false;        \
		v_;                   \
	})

static bool should_fail(void)
{
	if (!armed || fail_countdown < 0)
		return false;
	if (fail_countdown-- == 0) {
		failures++;
		return true;
	}
	return false;
}

void *__wrap_malloc(size_t n)
{
	return should_fail() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
	return should_fail() ? NULL : __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
	return should_fail() ? NULL : __real_realloc(p, n);
}

/* Write the all-types log; returns 0 or -ENOMEM.  Nothing leaks either way. */
static int write_log(int fd)
{
	struct plog_writer *w = NULL;
	int r;

	r = plog_writer__new(fd, 0, &w);
	if (r < 0)
		return r;
	r = fake_log_all_types(w);
	plog_writer__free(w);
	return r;
}

START_TEST(test_writer_enomem)
{
	long i;
	int r = -ENOMEM;

	for (i = 0; i < 1000 && r == -ENOMEM; i++) {
		int fd = memfd_create("w", MFD_CLOEXEC);

		ck_assert_int_ge(fd, 0);
		fail_countdown = i;
		r = ARMED(write_log(fd));
		fail_countdown = -1;
		ck_assert(r == 0 || r == -ENOMEM);
		close(fd);
	}
	ck_assert_int_eq(r, 0);
	/* Allocation 0 (the writer) and at least one after it were failed. */
	ck_assert_int_ge(i, 2);
}
END_TEST

/* Read the log fed in @chunk-byte pieces, retrying each failed feed. */
START_TEST(test_reader_enomem)
{
	int fd = memfd_create("r", MFD_CLOEXEC);
	uint8_t buf[4096];
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write_log(fd), 0);
	n = pread(fd, buf, sizeof(buf), 0);
	ck_assert_int_gt(n, 0);
	close(fd);

	for (long i = 0; i < 200; i++) {
		struct plog_reader *r = NULL;
		struct plog_record rec;
		size_t pos = 0, nrec = 0;
		int k;

		fail_countdown = i;
		k = ARMED(plog_reader__new(0, &r));
		if (k < 0) {
			fail_countdown = -1;
			ck_assert_int_eq(k, -ENOMEM);
			continue;
		}
		while (pos < (size_t)n) {
			size_t c = (size_t)n - pos < 100 ? (size_t)n - pos : 100;

			k = ARMED(plog_reader__feed(r, buf + pos, c));
			if (k == -ENOMEM) {
				/* Nothing was taken: the same bytes go in again. */
				fail_countdown = -1;
				continue;
			}
			ck_assert_int_eq(k, 0);
			pos += c;
			while ((k = ARMED(plog_reader__next(r, &rec))) > 0)
				nrec++;
			ck_assert_int_eq(k, 0);
		}
		fail_countdown = -1;
		plog_reader__finish(r);
		ck_assert_int_eq(plog_reader__next(r, &rec), 0);
		ck_assert_int_eq(plog_reader__status(r), PLOG_STATUS_COMPLETE);
		ck_assert_uint_eq(nrec, 27);
		plog_reader__free(r);
	}
	ck_assert_int_gt(failures, 2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pmclog-alloc");
	TCase *tc = tcase_create("enomem");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_writer_enomem);
	tcase_add_test(tc, test_reader_enomem);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	/* The countdown is process state: run in this process even without CK_FORK=no. */
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
