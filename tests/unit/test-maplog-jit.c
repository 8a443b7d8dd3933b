/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-maplog-jit.c: Check suite for maplog-jit.c: a child process's JIT map
 * (/tmp/perf-PID.map) is kept open, saved when the child exits although the file
 * is gone by then, appended for a later process with the same pid; a FIFO in its
 * place is never opened; processes out of scope are not looked at; a snapshot
 * copies the maps into one directory and goes on into another; as root, the
 * daemon's rules (strict_owner, by_uid) with children of other uids.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwpmcd/files.h"
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
	ck_assert_int_eq(maplog_jit__new(&(struct util_dir){ .fd = dfd }, &o, &j), 0);
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
		ck_assert_int_eq(maplog_jit__new(&(struct util_dir){ .fd = dfd }, &o, &j), 0);
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
	ck_assert_int_eq(maplog_jit__new(&(struct util_dir){ .fd = dfd }, &o, &j), 0);
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

/* A rotated log's files each get the map as it was at their end (the daemon's profiles). */
START_TEST(test_snapshot)
{
	struct maplog_jit *j = NULL;
	struct maplog_jit_stats st;
	struct maplog_jit_opts o = { 0 };
	char map[64], first[512], second[512], dir1[sizeof(outdir)];
	int d1 = open_outdir(), d2;
	pid_t child = spawn();

	snprintf(dir1, sizeof(dir1), "%s", outdir);
	d2 = open_outdir();
	o.pids = &child;
	o.npids = 1;
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)child);
	put(map, "1000 10 a\n");
	ck_assert_int_eq(maplog_jit__new(&(struct util_dir){ .fd = d1 }, &o, &j), 0);
	ck_assert_int_eq(maplog_jit__poll(j), 0);
	ck_assert_int_eq(maplog_jit__snapshot(j, &(struct util_dir){ .fd = d2 }), 0);
	put(map, "1000 10 a\n2000 10 b\n");
	reap(child);
	ck_assert_int_eq(maplog_jit__finish(j), 0);
	maplog_jit__stats(j, &st);
	snprintf(first, sizeof(first), "%s/perf-%d.map", dir1, (int)child);
	snprintf(second, sizeof(second), "%s/perf-%d.map", outdir, (int)child);
	ck_assert_str_eq(slurp(first), "1000 10 a\n");
	ck_assert_str_eq(slurp(second), "1000 10 a\n2000 10 b\n");
	ck_assert_uint_eq(st.bytes, 10 + 20);
	maplog_jit__free(j);
	unlink(first);
	unlink(second);
	unlink(map);
	close(d1);
	close(d2);
	rmdir(dir1);
	rmdir(outdir);
}
END_TEST

/*
 * A process without a map is looked at again 1, 2, 4, ... polls later (a walk of a
 * busy machine stays cheap): one whose map appears after the first look is found
 * at the next poll; one whose map appears later, at the latest at the end.
 */
START_TEST(test_backoff)
{
	struct maplog_jit *j = NULL;
	struct maplog_jit_stats st;
	struct maplog_jit_opts o = { 0 };
	char m1[64], m2[64], saved[512];
	int dfd = open_outdir();
	pid_t t[2] = { spawn(), spawn() };

	o.pids = t;
	o.npids = 2;
	snprintf(m1, sizeof(m1), "/tmp/perf-%d.map", (int)t[0]);
	snprintf(m2, sizeof(m2), "/tmp/perf-%d.map", (int)t[1]);
	ck_assert_int_eq(maplog_jit__new(&(struct util_dir){ .fd = dfd }, &o, &j), 0);
	ck_assert_int_eq(maplog_jit__poll(j), 0); /* neither has a map: next look 1 poll on */
	put(m1, "1000 10 a\n");
	ck_assert_int_eq(maplog_jit__poll(j), 0); /* t[0]'s found (kept open) */
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(maplog_jit__poll(j), 0); /* t[1]: looked at, then less often */
	put(m2, "2000 10 b\n");
	unlink(m1);
	unlink(m2); /* gone from /tmp: only what was kept open is saved */
	ck_assert_int_eq(maplog_jit__finish(j), 0);
	maplog_jit__stats(j, &st);
	ck_assert_uint_eq(st.saved, 1);
	snprintf(saved, sizeof(saved), "%s/perf-%d.map", outdir, (int)t[0]);
	ck_assert_str_eq(slurp(saved), "1000 10 a\n");
	unlink(saved);
	maplog_jit__free(j);
	/* Under backoff, the end still looks at everyone. */
	ck_assert_int_eq(maplog_jit__new(&(struct util_dir){ .fd = dfd }, &o, &j), 0);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(maplog_jit__poll(j), 0); /* t[1]: gap 8 by now */
	put(m2, "3000 10 c\n");
	ck_assert_int_eq(maplog_jit__finish(j), 0);
	maplog_jit__stats(j, &st);
	ck_assert_uint_eq(st.saved, 1);
	snprintf(saved, sizeof(saved), "%s/perf-%d.map", outdir, (int)t[1]);
	ck_assert_str_eq(slurp(saved), "3000 10 c\n");
	unlink(saved);
	maplog_jit__free(j);
	reap(t[0]);
	reap(t[1]);
	unlink(m2);
	close(dfd);
	rmdir(outdir);
}
END_TEST

/* A child that becomes @uid, then waits until it is killed. */
static pid_t spawn_as(uid_t uid)
{
	int fds[2];
	char c;
	pid_t p;

	ck_assert_int_eq(pipe(fds), 0);
	p = fork();
	ck_assert_int_ge(p, 0);
	if (p == 0) {
		/* Dumpable again (a uid change clears it): /proc/PID is then the uid's. */
		if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0 ||
		    prctl(PR_SET_DUMPABLE, 1) < 0)
			_exit(1);
		(void)!write(fds[1], "x", 1);
		for (;;)
			pause();
	}
	close(fds[1]);
	ck_assert_int_eq(read(fds[0], &c, 1), 1);
	close(fds[0]);
	return p;
}

/*
 * The daemon's rules (root): strict_owner refuses root's file as a user's
 * process's map; by_uid never looks at another user's processes.
 */
START_TEST(test_daemon_rules)
{
	struct maplog_jit *j = NULL;
	struct maplog_jit_stats st;
	struct maplog_jit_opts o = { .strict_owner = true };
	char m1[64], m2[64], saved[512];
	int dfd;
	pid_t t[2];

	if (geteuid() != 0) {
		fprintf(stderr, "test_daemon_rules: skipped: needs root (children of other uids)\n");
		return;
	}
	dfd = open_outdir();
	t[0] = spawn_as(65534);
	t[1] = spawn_as(65533);
	o.pids = t;
	o.npids = 2;
	/* 65534's map is root's: refused.  65533's is its own: saved. */
	snprintf(m1, sizeof(m1), "/tmp/perf-%d.map", (int)t[0]);
	put(m1, "1000 10 root-owned\n");
	snprintf(m2, sizeof(m2), "/tmp/perf-%d.map", (int)t[1]);
	put(m2, "1000 10 own\n");
	ck_assert_int_eq(chown(m2, 65533, 65533), 0);
	ck_assert_int_eq(maplog_jit__new(&(struct util_dir){ .fd = dfd }, &o, &j), 0);
	ck_assert_int_eq(maplog_jit__finish(j), 0);
	maplog_jit__stats(j, &st);
	ck_assert_uint_eq(st.refused, 1);
	ck_assert_uint_eq(st.saved, 1);
	snprintf(saved, sizeof(saved), "%s/perf-%d.map", outdir, (int)t[1]);
	ck_assert_str_eq(slurp(saved), "1000 10 own\n");
	unlink(saved);
	maplog_jit__free(j);
	/* A session of uid 65534: 65533's process is not looked at, whatever its map. */
	o.by_uid = true;
	o.uid = 65534;
	o.strict_owner = false;
	ck_assert_int_eq(maplog_jit__new(&(struct util_dir){ .fd = dfd }, &o, &j), 0);
	ck_assert_int_eq(maplog_jit__finish(j), 0);
	maplog_jit__stats(j, &st);
	ck_assert_uint_eq(st.refused, 0);
	ck_assert_uint_eq(st.saved, 1); /* 65534's own (root's file: allowed without strict) */
	ck_assert_ptr_null(slurp(saved));
	snprintf(saved, sizeof(saved), "%s/perf-%d.map", outdir, (int)t[0]);
	ck_assert_str_eq(slurp(saved), "1000 10 root-owned\n");
	unlink(saved);
	maplog_jit__free(j);
	reap(t[0]);
	reap(t[1]);
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
	tcase_add_test(tc, test_snapshot);
	tcase_add_test(tc, test_backoff);
	tcase_add_test(tc, test_daemon_rules);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
