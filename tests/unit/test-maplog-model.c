/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-maplog-model.c: Check suite for maplog's process model and bookkeeping.
 *
 * IMPLEMENTATION NOTES
 *   The ops record every callback as a line of text ("map_in 42 0x1000 /x"), so a
 *   test states the exact bookkeeping that a sequence of side-band records must
 *   produce, in order.  Kernel and /proc inputs that need fixed contents come from
 *   fake procfs/sysfs trees written into a temporary directory.
 */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "hwpmcd/maplog.h"

static char calls[64][1200];
static int ncalls;

static void add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void add(const char *fmt, ...)
{
	va_list ap;

	if (ncalls >= 64)
		ck_abort_msg("more than 64 callbacks: %s", fmt);
	va_start(ap, fmt);
	vsnprintf(calls[ncalls++], sizeof(calls[0]), fmt, ap);
	va_end(ap);
}

static int o_proc(void *c, uint64_t t, int32_t pid, uint32_t f, const char *n)
{
	(void)c;
	add("proc_create %" PRIu64 " %d %u %s", t, pid, f, n);
	return 0;
}
static int o_thr(void *c, uint64_t t, int32_t tid, int32_t pid, uint32_t f, const char *n)
{
	(void)c;
	(void)t;
	add("thr_create %d %d %u %s", tid, pid, f, n);
	return 0;
}
static int o_in(void *c, uint64_t t, int32_t pid, uint64_t start, const char *path)
{
	(void)c;
	(void)t;
	add("map_in %d 0x%" PRIx64 " %s", pid, start, path);
	return 0;
}
static int o_out(void *c, uint64_t t, int32_t pid, uint64_t s, uint64_t e)
{
	(void)c;
	(void)t;
	add("map_out %d 0x%" PRIx64 " 0x%" PRIx64, pid, s, e);
	return 0;
}
static int o_fork(void *c, uint64_t t, int32_t a, int32_t b)
{
	(void)c;
	(void)t;
	add("procfork %d %d", a, b);
	return 0;
}
static int o_sysexit(void *c, uint64_t t, int32_t pid)
{
	(void)c;
	(void)t;
	add("sysexit %d", pid);
	return 0;
}
static int o_threxit(void *c, uint64_t t, int32_t tid)
{
	(void)c;
	(void)t;
	add("thr_exit %d", tid);
	return 0;
}

static const struct maplog_ops ops = { o_proc, o_thr, o_in, o_out, o_fork, o_sysexit, o_threxit };

static struct rec mk(enum rec_type type, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct rec r;

	memset(&r, 0, sizeof(r));
	r.type = type;
	r.pid = pid;
	r.tid = tid;
	r.time = time;
	return r;
}

static struct rec mmap_rec(uint32_t pid, uint64_t addr, uint64_t pgoff, uint32_t prot,
			   uint64_t inode, const char *path)
{
	struct rec r = mk(REC_MMAP, pid, pid, 10);

	r.u.mmap.addr = addr;
	r.u.mmap.len = 0x1000;
	r.u.mmap.pgoff = pgoff;
	r.u.mmap.prot = prot;
	r.u.mmap.dev_major = 8;
	r.u.mmap.dev_minor = 1;
	r.u.mmap.inode = inode;
	r.u.mmap.filename = path;
	return r;
}

static void expect(const char *const *want, int n)
{
	for (int i = 0; i < n && i < ncalls; i++)
		ck_assert_str_eq(calls[i], want[i]);
	ck_assert_int_eq(ncalls, n);
	ncalls = 0;
}

/* A pid that cannot exist: the file cannot be opened, so pl_start falls back. */
#define NOPID 999999999u

START_TEST(test_lifecycle)
{
	struct maplog *m;
	struct rec r;
	char longpath[1100];

	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops, NULL, &m), 0);

	/* A new process from an unknown parent. */
	r = mk(REC_FORK, NOPID, NOPID, 5);
	r.u.task.ppid = 1;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect((const char *[]){ "procfork 1 999999999", "proc_create 5 999999999 0 ?",
				 "thr_create 999999999 999999999 0 ?" }, 3);

	/* Executable file mappings: one MAP_IN per object; the fallback bias addr - pgoff. */
	r = mmap_rec(NOPID, 0x7f0000001000, 0x1000, 5, 100, "/usr/lib/libx.so (deleted)");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = mmap_rec(NOPID, 0x7f0000005000, 0x5000, 5, 100, "/usr/lib/libx.so");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = mmap_rec(NOPID, 0x7f0000009000, 0x0, 3, 101, "/usr/lib/data"); /* not executable */
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = mmap_rec(NOPID, 0x7f000000a000, 0x0, 5, 0, "//anon");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = mmap_rec(NOPID, 0x7f000000b000, 0x0, 5, 0, "[vdso]");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = mmap_rec(NOPID, 0x7f000000c000, 0x0, 5, 7, "/memfd:jit (deleted)");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	memset(longpath, 'a', sizeof(longpath));
	longpath[0] = '/';
	longpath[1099] = '\0';
	r = mmap_rec(NOPID, 0x7f000000d000, 0x0, 5, 102, longpath);
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect((const char *[]){ "map_in 999999999 0x7f0000000000 /usr/lib/libx.so" }, 1);
	ck_assert_uint_eq(maplog__stats(m)->anon_exec, 3);
	ck_assert_uint_eq(maplog__stats(m)->path_too_long, 1);
	ck_assert_uint_eq(maplog__stats(m)->elf_fallback, 1);

	/* A thread: THR_CREATE only, with the process's name. */
	r = mk(REC_FORK, NOPID, NOPID + 1, 20);
	r.u.task.ppid = NOPID;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect((const char *[]){ "thr_create 1000000000 999999999 0 ?" }, 1);

	/* A child inherits the parent's objects: no second MAP_IN for them. */
	r = mk(REC_FORK, NOPID + 2, NOPID + 2, 30);
	r.u.task.ppid = NOPID;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = mmap_rec(NOPID + 2, 0x7f0000001000, 0x1000, 5, 100, "/usr/lib/libx.so");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect((const char *[]){ "procfork 999999999 1000000001",
				 "proc_create 30 1000000001 0 ?",
				 "thr_create 1000000001 1000000001 0 ?" }, 3);

	/* exec: everything out, a new name, the objects announced again. */
	r = mk(REC_COMM, NOPID + 2, NOPID + 2, 40);
	r.u.comm.exec = true;
	r.u.comm.comm = "true";
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = mmap_rec(NOPID + 2, 0x7f0000001000, 0x1000, 5, 100, "/usr/lib/libx.so");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect((const char *[]){ "map_out 1000000001 0x0 0xffffffffffffffff",
				 "proc_create 40 1000000001 0 true",
				 "thr_create 1000000001 1000000001 0 true",
				 "map_in 1000000001 0x7f0000000000 /usr/lib/libx.so" }, 4);

	/* A rename of a thread, then exits. */
	r = mk(REC_COMM, NOPID, NOPID + 1, 50);
	r.u.comm.comm = "worker";
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = mk(REC_EXIT, NOPID, NOPID + 1, 60);
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = mk(REC_EXIT, NOPID, NOPID, 61);
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect((const char *[]){ "thr_create 1000000000 999999999 0 worker", "thr_exit 1000000000",
				 "thr_exit 999999999", "sysexit 999999999" }, 4);

	/* Samples and unknown records change nothing. */
	r = mk(REC_SAMPLE, NOPID, NOPID, 70);
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect(NULL, 0);
	maplog__free(m);
}
END_TEST

/* The test's own executable: pl_start from the real file through the ELF rule. */
START_TEST(test_real_mapping)
{
	struct maplog *m;
	FILE *f = fopen("/proc/self/maps", "re");
	char line[8200], self[4096];
	unsigned long long lo = 0, start = 0, off = 0, ino = 0;
	unsigned maj = 0, min = 0;
	struct rec r;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	ck_assert_int_gt(n, 0);
	self[n] = '\0';
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, o, in;
		unsigned a, b;
		char perms[8], path[4096] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &s, &e, perms, &o, &a, &b,
			   &in, path) < 7 || strcmp(path, self) != 0)
			continue;
		if (!lo)
			lo = s;
		if (perms[2] == 'x' && !start) {
			start = s;
			off = o;
			maj = a;
			min = b;
			ino = in;
		}
	}
	fclose(f);
	ck_assert_uint_ne(start, 0);
	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops, NULL, &m), 0);
	r = mmap_rec((uint32_t)getpid(), start, off, 5, ino, self);
	r.u.mmap.dev_major = maj;
	r.u.mmap.dev_minor = min;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ck_assert_int_eq(ncalls, 1);
	/* A PIE (meson builds them) is placed at its load bias: its lowest mapping. */
	snprintf(line, sizeof(line), "map_in %d 0x%llx %s", (int)getpid(), lo, self);
	ck_assert_str_eq(calls[0], line);
	ck_assert_uint_eq(maplog__stats(m)->elf_fallback, 0);
	maplog__free(m);

	/* The /proc scan of ourselves: our name, our thread, our executable. */
	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops, NULL, &m), 0);
	{
		pid_t me = getpid();
		bool saw_self = false, saw_thr = false;
		char want[64];

		ck_assert_int_eq(maplog__scan_procs(m, 7, &me, 1, false), 0);
		for (int i = 0; i < ncalls; i++) {
			saw_self |= strncmp(calls[i], "map_in", 6) == 0 && strstr(calls[i], self);
			snprintf(want, sizeof(want), "thr_create %d %d 0 ", (int)me, (int)me);
			saw_thr |= strncmp(calls[i], want, strlen(want)) == 0;
		}
		char comm[32] = "";
		FILE *cf = fopen("/proc/self/comm", "re");

		/* Our comm as the kernel keeps it (valgrind renames us). */
		ck_assert_ptr_nonnull(cf);
		ck_assert_ptr_nonnull(fgets(comm, sizeof(comm), cf));
		fclose(cf);
		comm[strcspn(comm, "\n")] = '\0';
		snprintf(want, sizeof(want), "proc_create 7 %d 0 %s", (int)me, comm);
		ck_assert_str_eq(calls[0], want);
		ck_assert(saw_thr);
		ck_assert(saw_self);
	}
	maplog__free(m);
}
END_TEST

/* A storm of short-lived processes: the model stays small, slots are reused. */
START_TEST(test_storm_forgets)
{
	struct maplog *m;
	struct rec r;
	int bad = 0;

	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops, NULL, &m), 0);
	/* Plain checks in the loop: every ck_assert costs Check a write(2). */
	for (uint32_t i = 0; i < 20000; i++) {
		uint32_t pid = 1000 + i;

		r = mk(REC_FORK, pid, pid, i);
		r.u.task.ppid = 1;
		bad += maplog__record(m, &r) != 0;
		r = mmap_rec(pid, 0x400000, 0, 5, 77, "/bin/x");
		bad += maplog__record(m, &r) != 0;
		r = mk(REC_EXIT, pid, pid, i);
		bad += maplog__record(m, &r) != 0;
		bad += maplog__stats(m)->tracked != 0;
		ncalls = 0;
	}
	ck_assert_int_eq(bad, 0);
	ck_assert_uint_eq(maplog__stats(m)->map_in, 20000);
	/* A pid reused after its exit starts afresh: its objects are announced again. */
	r = mk(REC_FORK, 1000, 1000, 1);
	r.u.task.ppid = 1;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = mmap_rec(1000, 0x400000, 0, 5, 77, "/bin/x");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ck_assert_uint_eq(maplog__stats(m)->map_in, 20001);
	ck_assert_uint_eq(maplog__stats(m)->tracked, 1);
	maplog__free(m);
}
END_TEST

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(test_kernel_maps)
{
	char dir[] = "/tmp/maplog-test-XXXXXX", p[256];
	struct maplog *m;
	uint64_t slide = 1;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/proc", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/proc/kallsyms", dir);
	write_file(p, "ffffffff9a000000 T _text\nffffffff9a000000 T _stext\n");
	snprintf(p, sizeof(p), "%s/proc/modules", dir);
	write_file(p, "ext4 1 0 - Live 0xffffffffc0400000\nkvm 2 0 - Live 0xffffffffc0800000\n"
		      "hidden 3 0 - Live 0x0000000000000000\n");
	snprintf(p, sizeof(p), "%s/sys/module/ext4/sections", dir);
	{
		char cmd[1024];

		snprintf(cmd, sizeof(cmd), "mkdir -p %s && printf '0xffffffffc0401000\\n' > %s/.text",
			 p, p);
		ck_assert_int_eq(system(cmd), 0);
	}
	snprintf(p, sizeof(p), "%s/proc", dir);
	ck_assert_int_eq(maplog_kernel_slide(p, &slide), 0);
	ck_assert_uint_eq(slide, 0x19000000);
	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops, NULL, &m), 0);
	{
		char sys[256];

		snprintf(sys, sizeof(sys), "%s/sys", dir);
		ck_assert_int_eq(maplog__scan_kernel(m, 1, p, sys), 0);
	}
	/* .text from sysfs when readable, else the base from /proc/modules; hidden: none. */
	expect((const char *[]){ "map_in -1 0x19000000 vmlinux",
				 "map_in -1 0xffffffffc0401000 ext4.ko",
				 "map_in -1 0xffffffffc0800000 kvm.ko" }, 3);
	maplog__free(m);

	/* kptr_restrict: zeros, no slide. */
	snprintf(p, sizeof(p), "%s/proc/kallsyms", dir);
	write_file(p, "0000000000000000 T _stext\n");
	snprintf(p, sizeof(p), "%s/proc", dir);
	ck_assert_int_eq(maplog_kernel_slide(p, &slide), -ENOENT);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		ck_assert_int_eq(system(cmd), 0);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("maplog-model");
	TCase *tc = tcase_create("model");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_lifecycle);
	tcase_add_test(tc, test_real_mapping);
	tcase_add_test(tc, test_kernel_maps);
	tcase_add_test(tc, test_storm_forgets);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
