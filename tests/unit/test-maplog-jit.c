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

/*
 * Issue 32, finding 7: a sparse map of a terabyte costs its user nothing; the copy
 * reads its data only and keeps its well-formed lines, within the owner's quota.
 */
START_TEST(test_sparse_and_quota)
{
	struct maplog_jit *j = NULL;
	struct maplog_jit_stats st;
	struct maplog_jit_opts o = { .max_user_bytes = 100 };
	char map[64], saved[512], *got;
	int dfd = open_outdir(), fd;
	pid_t a = spawn(), b = spawn();
	pid_t both[2] = { a, b };
	struct stat sst;
	static const char line1[] = "7f0000001000 100 JS:*first a.js:1\n";
	static const char line2[] = "7f0000002000 0x80 JS:*after_the_hole b.js:2\n";

	o.pids = both;
	o.npids = 2;
	/* a: a line, a hole of 1 TiB, a line, zeros, garbage and a line too long. */
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)a);
	fd = open(map, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, line1, strlen(line1), 0), (ssize_t)strlen(line1));
	ck_assert_int_eq(pwrite(fd, line2, strlen(line2), 1ll << 40), (ssize_t)strlen(line2));
	{
		char junk[8192];
		off_t at = (1ll << 40) + (off_t)strlen(line2);

		memset(junk, 0, 64);
		memcpy(junk + 64, "not a line\n0 10 zero start is fine\n1000 0 size zero\n", 52);
		memset(junk + 116, 'x', sizeof(junk) - 117);
		junk[sizeof(junk) - 1] = '\n';
		ck_assert_int_eq(pwrite(fd, junk, sizeof(junk), at), (ssize_t)sizeof(junk));
	}
	close(fd);
	ck_assert_int_eq(stat(map, &sst), 0);
	ck_assert_uint_gt((uint64_t)sst.st_size, 1ull << 40);
	/* b: the same owner, a map past what the owner has left (100 bytes in all). */
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)b);
	put(map, "7f0000003000 10 JS:*b_first\n7f0000004000 10 JS:*b_second_is_over_the_quota\n");
	ck_assert_int_eq(maplog_jit__new(&(struct util_dir){ .fd = dfd }, &o, &j), 0);
	ck_assert_int_eq(maplog_jit__finish(j), 0);
	maplog_jit__stats(j, &st);
	/* The owner's 100 bytes: a's first line (35) and the one after the hole, then b's... */
	snprintf(saved, sizeof(saved), "%s/perf-%d.map", outdir, (int)a);
	got = slurp(saved);
	ck_assert_ptr_nonnull(got);
	ck_assert_msg(strncmp(got, line1, strlen(line1)) == 0, "got '%s'", got);
	ck_assert_uint_le(st.bytes, 100);
	ck_assert_uint_ge(st.bad_lines, 1);
	ck_assert_uint_ge(st.truncated, 1);
	ck_assert_int_eq(stat(saved, &sst), 0);
	ck_assert_uint_le((uint64_t)sst.st_size, 100);
	maplog_jit__free(j);
	/* With room: both lines of a and the zero-start one, nothing of the hole or the junk. */
	o.max_user_bytes = 0;
	unlink(saved);
	ck_assert_int_eq(maplog_jit__new(&(struct util_dir){ .fd = dfd }, &o, &j), 0);
	ck_assert_int_eq(maplog_jit__finish(j), 0);
	maplog_jit__stats(j, &st);
	got = slurp(saved);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, "7f0000001000 100 JS:*first a.js:1\n"
			      "7f0000002000 0x80 JS:*after_the_hole b.js:2\n"
			      "0 10 zero start is fine\n");
	/* the zeros after line 1 in its block, zeros+"not a line", "size zero", the long one */
	ck_assert_uint_eq(st.bad_lines, 4);
	maplog_jit__free(j);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)a);
	unlink(map);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)b);
	unlink(map);
	reap(a);
	reap(b);
	unlink(saved);
	snprintf(saved, sizeof(saved), "%s/perf-%d.map.times", outdir, (int)a);
	unlink(saved);
	snprintf(saved, sizeof(saved), "%s/perf-%d.map", outdir, (int)b);
	unlink(saved);
	snprintf(saved, sizeof(saved), "%s/perf-%d.map.times", outdir, (int)b);
	unlink(saved);
	close(dfd);
	ck_assert_int_eq(rmdir(outdir), 0);
}
END_TEST

/* The line parser the copier and the report share. */
START_TEST(test_parse_line)
{
	static const struct {
		const char *line;
		bool ok;
		uint64_t start, size;
		const char *name;
	} c[] = {
		{ "7f00 10 f", true, 0x7f00, 0x10, "f" },
		{ "0x7f00 0X10 a b  c", true, 0x7f00, 0x10, "a b  c" },
		{ "7f00 10 ", false, 0, 0, NULL },
		{ "7f00 10", false, 0, 0, NULL },
		{ "7f00  10 f", false, 0, 0, NULL },
		{ "7f00 0 f", false, 0, 0, NULL },
		{ "ffffffffffffffff 2 f", false, 0, 0, NULL },
		{ "11111111111111111 1 f", false, 0, 0, NULL },
		{ "g 1 f", false, 0, 0, NULL },
		{ "", false, 0, 0, NULL },
		{ "0x 1 f", false, 0, 0, NULL },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint64_t st = 0, sz = 0;
		size_t off = 0;
		bool ok = maplog_jit_parse_line(c[i].line, strlen(c[i].line), &st, &sz, &off);

		ck_assert_msg(ok == c[i].ok, "'%s': %d", c[i].line, ok);
		if (ok) {
			ck_assert_uint_eq(st, c[i].start);
			ck_assert_uint_eq(sz, c[i].size);
			ck_assert_str_eq(c[i].line + off, c[i].name);
		}
	}
	ck_assert(!maplog_jit_parse_line("7f00 10 a\0b", 11, &(uint64_t){ 0 }, &(uint64_t){ 0 },
					 &(size_t){ 0 }));
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
	/* room for one line and its time (20 bytes: "1764...\n", perf-PID.map.times) */
	struct maplog_jit_opts o = { .max_open = 1, .max_map_bytes = 15 + 21 };
	char m1[64], m2[64], saved[512];
	int dfd = open_outdir();
	pid_t t[2] = { spawn(), spawn() };

	o.pids = t;
	o.npids = 2;
	for (int i = 0; i < 2; i++) {
		snprintf(i ? m2 : m1, 64, "/tmp/perf-%d.map", (int)t[i]);
		put(i ? m2 : m1, "123456 10 name\n123457 10 more\n");
	}
	ck_assert_int_eq(maplog_jit__new(&(struct util_dir){ .fd = dfd }, &o, &j), 0);
	ck_assert_int_eq(maplog_jit__finish(j), 0);
	maplog_jit__stats(j, &st);
	/*
	 * One kept (and cut at 36 bytes: whole lines and their times only, so its first),
	 * one over the limit: both counted, neither silent.
	 */
	ck_assert_uint_eq(st.saved, 1);
	ck_assert_uint_eq(st.over_open, 1);
	ck_assert_uint_eq(st.truncated, 1);
	ck_assert_uint_eq(st.bytes, 15 + 20);
	for (int i = 0; i < 2; i++) {
		snprintf(saved, sizeof(saved), "%s/perf-%d.map", outdir, (int)t[i]);
		if (slurp(saved))
			ck_assert_str_eq(slurp(saved), "123456 10 name\n");
	}
	maplog_jit__free(j);
	for (int i = 0; i < 2; i++) {
		snprintf(saved, sizeof(saved), "%s/perf-%d.map", outdir, (int)t[i]);
		unlink(saved);
		snprintf(saved, sizeof(saved), "%s/perf-%d.map.times", outdir, (int)t[i]);
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
	/* each line's time (20 bytes) counts too; the second file's times follow the first's */
	ck_assert_uint_eq(st.bytes, (10 + 20) + (20 + 2 * 20));
	{
		char tf[600], *t1, *t2;
		long long a1, a2, b2;

		/* (slurp() has one buffer: each read before the next) */
		snprintf(tf, sizeof(tf), "%s.times", first);
		t1 = slurp(tf);
		ck_assert_ptr_nonnull(t1);
		ck_assert_int_eq(sscanf(t1, "%lld\n", &a1), 1);
		snprintf(tf, sizeof(tf), "%s.times", second);
		t2 = slurp(tf);
		ck_assert_ptr_nonnull(t2);
		ck_assert_int_eq(sscanf(t2, "%lld\n%lld\n", &a2, &b2), 2);
		/* line a: seen at the first poll, in both files; b: after it */
		ck_assert_int_eq(a1, a2);
		ck_assert_int_ge(b2, a2);
		snprintf(tf, sizeof(tf), "%s.times", first);
		unlink(tf);
		snprintf(tf, sizeof(tf), "%s.times", second);
		unlink(tf);
	}
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
	tcase_add_test(tc, test_sparse_and_quota);
	tcase_add_test(tc, test_parse_line);
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
