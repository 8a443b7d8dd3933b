/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-maplog-jit.c: Check suite for maplog-jit.c: a child process's JIT map
 * (/tmp/perf-PID.map) is kept open, saved when the child exits although the file
 * is gone by then, appended for a later process with the same pid; a FIFO in its
 * place is never opened; processes out of scope are not looked at.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwpmcd/maplog-jit.h"

static char outdir[256];

/* A child that waits until it is killed. */
static pid_t spawn(void)
{
	pid_t p = fork();

	ck_assert_int_ge(p, 0);
	if (p == 0) {
		for (;;)
			pause();
	}
	return p;
}

static void reap(pid_t p)
{
	ck_assert_int_eq(kill(p, SIGKILL), 0);
	ck_assert_int_eq(waitpid(p, NULL, 0), p);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int open_outdir(void)
{
	int fd;

	snprintf(outdir, sizeof(outdir), "%s/test-maplog-jit-XXXXXX",
		 getenv("TMPDIR") && strlen(getenv("TMPDIR")) < 128 ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(outdir));
	fd = open(outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	return fd;
}

START_TEST(test_saved_after_exit)
{
	struct maplog_jit *j = NULL;
	struct maplog_jit_stats st;
	struct maplog_jit_opts o = { 0 };
	char map[64], saved[512];
	int dfd = open_outdir();
	pid_t child = spawn();
	const char *got;

	o.pids = &child;
	o.npids = 1;
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)child);
	put(map, "7f0000001000 100 JS:*hot a.js:1\n");
	ck_assert_int_eq(maplog_jit__new(dfd, &o, &j), 0);
	ck_assert_int_eq(maplog_jit__poll(j), 0);
	/* The JIT writes on; the file goes; the process exits. */
	put(map, "7f0000001000 100 JS:*hot a.js:1\n7f0000002000 80 JS:*more b.js:2\n");
	ck_assert_int_eq(unlink(map), 0);
	reap(child);
	ck_assert_int_eq(maplog_jit__poll(j), 0);
	maplog_jit__stats(j, &st);
	ck_assert_uint_eq(st.saved, 1);
	snprintf(saved, sizeof(saved), "%s/perf-%d.map", outdir, (int)child);
	got = slurp(saved);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, "7f0000001000 100 JS:*hot a.js:1\n7f0000002000 80 JS:*more b.js:2\n");
	ck_assert_int_eq(maplog_jit__finish(j), 0);
	maplog_jit__free(j);
	unlink(saved);
	close(dfd);
	rmdir(outdir);
}
END_TEST

START_TEST(test_fifo_scope_finish)
{
	struct maplog_jit *j = NULL;
	struct maplog_jit_stats st;
	struct maplog_jit_opts o = { 0 };
	char fifo[64], map[64], saved[512];
	int dfd = open_outdir();
	pid_t a = spawn(), b = spawn(), other = spawn();

	/* a: a FIFO where its map would be (never opened: nobody writes to it) */
	snprintf(fifo, sizeof(fifo), "/tmp/perf-%d.map", (int)a);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	/* b: a map, saved at finish while it still runs; other: out of scope */
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)b);
	put(map, "1000 10 f\n");
	{
		char m2[64];

		snprintf(m2, sizeof(m2), "/tmp/perf-%d.map", (int)other);
		put(m2, "2000 10 g\n");
	}
	{
		pid_t t[2] = { a, b };

		o.pids = t;
		o.npids = 2;
		ck_assert_int_eq(maplog_jit__new(dfd, &o, &j), 0);
	}
	alarm(20);
	ck_assert_int_eq(maplog_jit__finish(j), 0);
	alarm(0);
	maplog_jit__stats(j, &st);
	ck_assert_uint_eq(st.saved, 1);
	ck_assert_uint_eq(st.errors, 0);
	snprintf(saved, sizeof(saved), "%s/perf-%d.map", outdir, (int)b);
	ck_assert_str_eq(slurp(saved), "1000 10 f\n");
	unlink(saved);
	snprintf(saved, sizeof(saved), "%s/perf-%d.map", outdir, (int)other);
	ck_assert_ptr_null(slurp(saved));
	snprintf(saved, sizeof(saved), "%s/perf-%d.map", outdir, (int)a);
	ck_assert_ptr_null(slurp(saved));
	maplog_jit__free(j);
	reap(a);
	reap(b);
	reap(other);
	unlink(fifo);
	unlink(map);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)other);
	unlink(map);
	close(dfd);
	rmdir(outdir);
}
END_TEST

START_TEST(test_limits)
{
	struct maplog_jit *j = NULL;
	struct maplog_jit_stats st;
	struct maplog_jit_opts o = { .max_open = 1, .max_map_bytes = 4 };
	char m1[64], m2[64], saved[512];
	int dfd = open_outdir();
	pid_t t[2] = { spawn(), spawn() };

	o.pids = t;
	o.npids = 2;
	for (int i = 0; i < 2; i++) {
		snprintf(i ? m2 : m1, 64, "/tmp/perf-%d.map", (int)t[i]);
		put(i ? m2 : m1, "123456 10 name\n");
	}
	ck_assert_int_eq(maplog_jit__new(dfd, &o, &j), 0);
	ck_assert_int_eq(maplog_jit__finish(j), 0);
	maplog_jit__stats(j, &st);
	/* One kept (and cut at 4 bytes), one over the limit: both counted, neither silent. */
	ck_assert_uint_eq(st.saved, 1);
	ck_assert_uint_eq(st.over_open, 1);
	ck_assert_uint_eq(st.truncated, 1);
	ck_assert_uint_eq(st.bytes, 4);
	maplog_jit__free(j);
	for (int i = 0; i < 2; i++) {
		snprintf(saved, sizeof(saved), "%s/perf-%d.map", outdir, (int)t[i]);
		unlink(saved);
		reap(t[i]);
	}
	unlink(m1);
	unlink(m2);
	close(dfd);
	rmdir(outdir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("maplog-jit");
	TCase *tc = tcase_create("jit");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_saved_after_exit);
	tcase_add_test(tc, test_fifo_scope_finish);
	tcase_add_test(tc, test_limits);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
