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
#include <signal.h>
#include <stdbool.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hwpmcd/common.h"
#include "hwpmcd/maplog-elf.h"
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

/* Process @pid's exec of a program named @comm at @time (its COMM record), recorded. */
static void record_exec(struct maplog *m, uint32_t pid, uint64_t time, const char *comm)
{
	struct rec r = mk(REC_COMM, pid, pid, time);

	r.u.comm.exec = true;
	r.u.comm.comm = comm;
	ck_assert_int_eq(maplog__record(m, &r), 0);
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

static const char *range_at(const struct maplog *m, int32_t pid, uint64_t addr);

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

	/* Executable file mappings: one MAP_IN per object; the fallback: the mapping's start. */
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
	/* The vDSO gets a MAP_IN of its own ("[vdso]", read from FILE.vdso by the report). */
	expect((const char *[]){ "map_in 999999999 0x7f0000001000 /usr/lib/libx.so",
				 "map_in 999999999 0x7f000000b000 [vdso]" }, 2);
	ck_assert_uint_eq(maplog__stats(m)->anon_exec, 2);
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

	/*
	 * exec: a new name; the old image stays until the new one runs, and a mapping
	 * of the new image over one of its objects sends that object out (one MAP_OUT
	 * over its span) first; the old vDSO stays, the exec not being over.
	 */
	record_exec(m, NOPID + 2, 40, "true");
	r = mmap_rec(NOPID + 2, 0x7f0000001000, 0x1000, 5, 100, "/usr/lib/libx.so");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect((const char *[]){ "proc_create 40 1000000001 0 true",
				 "thr_create 1000000001 1000000001 0 true",
				 "map_out 1000000001 0x7f0000001000 0x7f0000006000",
				 "map_in 1000000001 0x7f0000001000 /usr/lib/libx.so" }, 4);
	ck_assert_str_eq(range_at(m, NOPID + 2, 0x7f000000b000),
			 "7f000000b000-7f000000c000 0 0 [vdso] pid 1000000001");
	/* The first user-mode sample of the new image: the old vDSO goes. */
	ck_assert_int_eq(maplog__sample(m, 41, (int32_t)(NOPID + 2), true, 0x7f0000001100), 0);
	expect((const char *[]){ "map_out 1000000001 0x7f000000b000 0x7f000000c000" }, 1);

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
/*
 * Our executable's path (@self) and its first executable mapping in
 * /proc/self/maps: start, file offset, device and inode; *@ret_lo: its first mapping.
 */
static void self_exec_mapping(char self[4096], unsigned long long *ret_lo,
			      unsigned long long *ret_start, unsigned long long *ret_off,
			      unsigned *ret_maj, unsigned *ret_min, unsigned long long *ret_ino)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[8200];
	ssize_t n = readlink("/proc/self/exe", self, 4095);

	ck_assert_int_gt(n, 0);
	self[n] = '\0';
	*ret_lo = *ret_start = 0;
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, o, in;
		unsigned a, b;
		char perms[8], path[4096] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &s, &e, perms, &o, &a, &b,
			   &in, path) < 7 || strcmp(path, self) != 0)
			continue;
		if (!*ret_lo)
			*ret_lo = s;
		if (perms[2] == 'x' && !*ret_start) {
			*ret_start = s;
			*ret_off = o;
			*ret_maj = a;
			*ret_min = b;
			*ret_ino = in;
		}
	}
	fclose(f);
	ck_assert_uint_ne(*ret_start, 0);
}

START_TEST(test_real_mapping)
{
	struct maplog *m;
	char line[8200], self[4096];
	unsigned long long lo = 0, start = 0, off = 0, ino = 0;
	unsigned maj = 0, min = 0;
	struct rec r;

	self_exec_mapping(self, &lo, &start, &off, &maj, &min, &ino);
	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops, NULL, &m), 0);
	r = mmap_rec((uint32_t)getpid(), start, off, 5, ino, self);
	r.u.mmap.dev_major = maj;
	r.u.mmap.dev_minor = min;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ck_assert_int_eq(ncalls, 1);
	/* FreeBSD main's rule: pl_start is the start of the first executable mapping. */
	ck_assert_uint_ne(start, lo);
	snprintf(line, sizeof(line), "map_in %d 0x%llx %s", (int)getpid(), start, self);
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

/* Build ids (ops->build_id): said before a MAP_IN, once per path and id, again after a replay. */
static int o_bid(void *c, uint64_t t, const uint8_t *id, size_t len)
{
	char hex[41] = "";

	(void)c;
	(void)t;
	for (size_t i = 0; i < len && i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	add("build_id %s", hex);
	return 0;
}

static const struct maplog_ops ops_bid = { .proc_create = o_proc, .thr_create = o_thr,
					   .map_in = o_in, .map_out = o_out, .procfork = o_fork,
					   .sysexit = o_sysexit, .thr_exit = o_threxit,
					   .build_id = o_bid };

START_TEST(test_build_id)
{
	struct maplog *m;
	char self[4096], want[200], hex[41] = "";
	unsigned long long lo = 0, start = 0, off = 0, ino = 0;
	unsigned maj = 0, min = 0;
	struct maplog_elf_info info;
	struct rec r;
	int fd;

	self_exec_mapping(self, &lo, &start, &off, &maj, &min, &ino);
	fd = open(self, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(maplog_elf_info_fd(fd, &info), 0);
	close(fd);
	ck_assert_uint_gt(info.build_id_len, 0); /* the test is linked with --build-id */
	for (size_t i = 0; i < info.build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", info.build_id[i]);
	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops_bid, NULL, &m), 0);
	r = mmap_rec((uint32_t)getpid(), start, off, 5, ino, self);
	r.u.mmap.dev_major = maj;
	r.u.mmap.dev_minor = min;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ck_assert_int_eq(ncalls, 2);
	snprintf(want, sizeof(want), "build_id %s", hex);
	ck_assert_str_eq(calls[0], want);
	ck_assert_str_eq(calls[1] + strlen(calls[1]) - strlen(self), self);
	/* The same file in another process: its id was said for this path already. */
	ncalls = 0;
	r.pid = r.tid = (uint32_t)getpid() + 100000;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ck_assert_int_eq(ncalls, 1);
	ck_assert_int_eq(strncmp(calls[0], "map_in ", 7), 0);
	/* A new log (replay): said again before the first MAP_IN of the path. */
	ncalls = 0;
	ck_assert_int_eq(maplog__replay(m, 20), 0);
	{
		int i = 0;

		while (i < ncalls && strcmp(calls[i], want) != 0)
			i++;
		ck_assert_int_lt(i + 1, ncalls);
		ck_assert_str_eq(calls[i + 1] + strlen(calls[i + 1]) - strlen(self), self);
	}
	/* A file that cannot be read (no such pid, no such path): no id to say. */
	ncalls = 0;
	r = mmap_rec(NOPID, 0x400000, 0, 5, 4242, "/nonexistent/prog");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ck_assert_int_eq(ncalls, 1);
	ck_assert_int_eq(strncmp(calls[0], "map_in ", 7), 0);
	maplog__free(m);
}
END_TEST

/*
 * The vDSO named by hwpmcd's saved copy (pmclog-format.md 11.15): its MAP_IN has the
 * path set, after the build id mark, once per log; without a path set, "[vdso]".
 */
START_TEST(test_vdso_path)
{
	static const uint8_t id[4] = { 0xde, 0xad, 0xbe, 0xef };
	struct maplog *m;
	struct rec r;

	ck_assert_int_eq(maplog_vdso_set_path("relative/linux-vdso.so.1", id, 4), -EINVAL);
	ck_assert_int_eq(maplog_vdso_set_path("/s/vdso/deadbeef/linux-vdso.so.1", id, 4), 0);
	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops_bid, NULL, &m), 0);
	r = mmap_rec(NOPID, 0x7f000000b000, 0x0, 5, 0, "[vdso]");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect((const char *[]){ "build_id deadbeef",
				 "map_in 999999999 0x7f000000b000 /s/vdso/deadbeef/linux-vdso.so.1" },
	       2);
	/* Another process: the id was said for the path. */
	ncalls = 0;
	r.pid = r.tid = NOPID + 7;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect((const char *[]){ "map_in 1000000006 0x7f000000b000 /s/vdso/deadbeef/linux-vdso.so.1" },
	       1);
	/* A new log says it again. */
	ncalls = 0;
	ck_assert_int_eq(maplog__replay(m, 20), 0);
	{
		int i = 0;

		while (i < ncalls && strcmp(calls[i], "build_id deadbeef") != 0)
			i++;
		ck_assert_int_lt(i + 1, ncalls);
		ck_assert_int_eq(strncmp(calls[i + 1], "map_in ", 7), 0);
		ck_assert_ptr_nonnull(strstr(calls[i + 1], " /s/vdso/deadbeef/linux-vdso.so.1"));
	}
	maplog__free(m);
	ck_assert_int_eq(maplog_vdso_set_path(NULL, NULL, 0), 0);
	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops_bid, NULL, &m), 0);
	r = mmap_rec(NOPID, 0x7f000000b000, 0x0, 5, 0, "[vdso]");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect((const char *[]){ "map_in 999999999 0x7f000000b000 [vdso]" }, 1);
	maplog__free(m);
}
END_TEST

/*
 * Remapped code (issue 33, item 5): a page of this program's text mapped a second
 * time elsewhere, as node maps its builtins again, is a placement of its own: a
 * MAP_IN at its pl_start and MAP_OUTs of the rest of the image's executable
 * sections placed there; a third placement whose range would meet another object
 * is not written; a new log (replay) writes both placements again.
 */
START_TEST(test_remap)
{
	struct maplog *m;
	char self[4096], want[4200];
	unsigned long long lo = 0, start = 0, off = 0, ino = 0;
	unsigned maj = 0, min = 0;
	struct maplog_elf_info info;
	uint64_t pl1, pl2, lo2, hi2, v, page = (uint64_t)sysconf(_SC_PAGESIZE);
	void *res, *a2, *a3;
	struct rec r;
	int fd, nin = 0, nout = 0;

	self_exec_mapping(self, &lo, &start, &off, &maj, &min, &ino);
	fd = open(self, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(maplog_elf_info_fd(fd, &info), 0);
	ck_assert(info.has_exec_section);
	ck_assert_int_eq(maplog_elf_pl_start(fd, start, off, page, true, &pl1, &v), 0);
	v = pl1 - v; /* V = pl_start - bias */
	/*
	 * One page of the text, the one after the mapping's first, mapped again twice
	 * elsewhere, 32 MiB apart in a reservation (the image's text is far smaller, so
	 * neither placement's range reaches the other).
	 */
	res = mmap(NULL, (size_t)64 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		   -1, 0);
	ck_assert(res != MAP_FAILED);
	a2 = mmap((char *)res + (16 << 20), page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd,
		  (off_t)(off + page));
	a3 = mmap((char *)res + (48 << 20), page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd,
		  (off_t)(off + page));
	ck_assert(a2 != MAP_FAILED && a3 != MAP_FAILED);
	close(fd);
	pl2 = (uint64_t)(uintptr_t)a2 - (off + page - off) - (start - pl1);
	lo2 = info.exec_start + pl2 - v;
	hi2 = info.exec_end + pl2 - v;

	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops, NULL, &m), 0);
	r = mmap_rec((uint32_t)getpid(), start, off, 5, ino, self);
	r.u.mmap.dev_major = maj;
	r.u.mmap.dev_minor = min;
	r.u.mmap.len = page;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ck_assert_int_eq(ncalls, 1);
	snprintf(want, sizeof(want), "map_in %d 0x%" PRIx64 " %s", getpid(), pl1, self);
	ck_assert_str_eq(calls[0], want);
	/* The second placement: its MAP_IN, then its ghost on both sides of the page. */
	ncalls = 0;
	r.u.mmap.addr = (uint64_t)(uintptr_t)a2;
	r.u.mmap.pgoff = off + page;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	snprintf(want, sizeof(want), "map_in %d 0x%" PRIx64 " %s", getpid(), pl2, self);
	ck_assert_int_ge(ncalls, 2);
	ck_assert_str_eq(calls[0], want);
	if (lo2 < (uint64_t)(uintptr_t)a2) {
		snprintf(want, sizeof(want), "map_out %d 0x%" PRIx64 " 0x%" PRIx64, getpid(), lo2,
			 (uint64_t)(uintptr_t)a2);
		ck_assert_str_eq(calls[1], want);
	}
	snprintf(want, sizeof(want), "map_out %d 0x%" PRIx64 " 0x%" PRIx64, getpid(),
		 (uint64_t)(uintptr_t)a2 + page, hi2);
	ck_assert_str_eq(calls[ncalls - 1], want);
	ck_assert_uint_eq(maplog__stats(m)->remapped, 1);
	/* A range of that placement again: written again, its ghost from all its ranges. */
	nin = ncalls;
	ncalls = 0;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ck_assert_int_eq(ncalls, nin);
	snprintf(want, sizeof(want), "map_in %d 0x%" PRIx64 " %s", getpid(), pl2, self);
	ck_assert_str_eq(calls[0], want);
	nin = 0;
	/* A third placement whose range would cover another object's mapping: not written. */
	r = mmap_rec((uint32_t)getpid(), (uint64_t)(uintptr_t)a3 + page, 0, 5, 4242,
		     "/nonexistent/other.so");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ncalls = 0;
	r = mmap_rec((uint32_t)getpid(), (uint64_t)(uintptr_t)a3, off + page, 5, ino, self);
	r.u.mmap.dev_major = maj;
	r.u.mmap.dev_minor = min;
	r.u.mmap.len = page;
	/* (its range reaches past the page: the text goes on past link address off + 2 pages + d) */
	ck_assert_uint_gt(info.exec_end, off + 2 * page + (start - off + v - pl1));
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ck_assert_int_eq(ncalls, 0);
	ck_assert_uint_eq(maplog__stats(m)->remap_overlap, 1);
	/* A new log: the object's placements again, the first and the second. */
	ncalls = 0;
	ck_assert_int_eq(maplog__replay(m, 20), 0);
	for (int i = 0; i < ncalls; i++) {
		nin += strncmp(calls[i], "map_in ", 7) == 0 && strstr(calls[i], self) != NULL;
		nout += strncmp(calls[i], "map_out ", 8) == 0;
	}
	ck_assert_int_eq(nin, 2);
	ck_assert_int_ge(nout, 1);
	maplog__free(m);
	munmap(res, (size_t)64 << 20);
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

static int changed[16];
static int nchanged;

static void o_changed(void *c, int32_t pid)
{
	(void)c;
	if (nchanged < 16)
		changed[nchanged] = pid;
	nchanged++;
}

static const struct maplog_ops ops_changed = { o_proc, o_thr, o_in, o_out, o_fork, o_sysexit,
					       o_threxit, o_changed };

static struct rec range_rec(uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff,
			    uint64_t inode, const char *path)
{
	struct rec r = mmap_rec(pid, addr, pgoff, 5, inode, path);

	r.u.mmap.len = len;
	return r;
}

/* The range of @pid holding @addr, as "start-end pgoff inode path", or "none". */
static const char *range_at(const struct maplog *m, int32_t pid, uint64_t addr)
{
	static char buf[256];
	const struct maplog_map *mm = maplog__find_map(m, pid, addr);

	if (!mm)
		return "none";
	snprintf(buf, sizeof(buf), "%" PRIx64 "-%" PRIx64 " %" PRIx64 " %" PRIu64 " %s pid %d",
		 mm->start, mm->end, mm->pgoff, mm->inode, mm->path, mm->pid);
	return buf;
}

/* The unwinder's view: executable ranges trimmed, split, replaced, inherited, dropped. */
START_TEST(test_ranges)
{
	struct maplog *m;
	struct rec r;

	ncalls = 0;
	nchanged = 0;
	ck_assert_int_eq(maplog__new(&ops_changed, NULL, &m), 0);
	r = mk(REC_FORK, NOPID, NOPID, 5);
	r.u.task.ppid = 1;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ck_assert_str_eq(range_at(m, NOPID, 0x10000), "none");
	ck_assert_int_eq(nchanged, 1); /* a new (maybe reused) pid: no stale caches */
	nchanged = 0;

	/* Three ranges, out of address order; a non-executable one adds nothing. */
	r = range_rec(NOPID, 0x30000, 0x10000, 0x3000, 3, "/c");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = range_rec(NOPID, 0x10000, 0x10000, 0x1000, 1, "/a (deleted)");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = range_rec(NOPID, 0x20000, 0x8000, 0x2000, 2, "[vdso]");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = range_rec(NOPID, 0x50000, 0x1000, 0, 9, "/data");
	r.u.mmap.prot = 3;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ck_assert_str_eq(range_at(m, NOPID, 0x10000), "10000-20000 1000 1 /a pid 999999999");
	ck_assert_str_eq(range_at(m, NOPID, 0x1ffff), "10000-20000 1000 1 /a pid 999999999");
	ck_assert_str_eq(range_at(m, NOPID, 0x20000), "20000-28000 2000 2 [vdso] pid 999999999");
	ck_assert_str_eq(range_at(m, NOPID, 0x28000), "none");
	ck_assert_str_eq(range_at(m, NOPID, 0x3ffff), "30000-40000 3000 3 /c pid 999999999");
	ck_assert_str_eq(range_at(m, NOPID, 0x40000), "none");
	ck_assert_str_eq(range_at(m, NOPID, 0x50000), "none");
	ck_assert_str_eq(range_at(m, NOPID, 0x0), "none");
	ck_assert_int_eq(nchanged, 3);
	ck_assert_int_eq(changed[0], (int)NOPID);

	/* A mapping inside /c splits it; the tail keeps its file offset. */
	r = range_rec(NOPID, 0x34000, 0x4000, 0, 4, "/d");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ck_assert_str_eq(range_at(m, NOPID, 0x33fff), "30000-34000 3000 3 /c pid 999999999");
	ck_assert_str_eq(range_at(m, NOPID, 0x34000), "34000-38000 0 4 /d pid 999999999");
	ck_assert_str_eq(range_at(m, NOPID, 0x38000), "38000-40000 b000 3 /c pid 999999999");

	/* One over the tail of /a, all of [vdso] and the head of /c: trimmed, gone, cut. */
	r = range_rec(NOPID, 0x18000, 0x1a000, 0x100000, 5, "/e");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ck_assert_str_eq(range_at(m, NOPID, 0x17fff), "10000-18000 1000 1 /a pid 999999999");
	ck_assert_str_eq(range_at(m, NOPID, 0x20000), "18000-32000 100000 5 /e pid 999999999");
	ck_assert_str_eq(range_at(m, NOPID, 0x32000), "32000-34000 5000 3 /c pid 999999999");
	ck_assert_str_eq(range_at(m, NOPID, 0x34000), "34000-38000 0 4 /d pid 999999999");

	/* Exactly over an existing range: replaced. */
	r = range_rec(NOPID, 0x34000, 0x4000, 0x7000, 6, "/f");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ck_assert_str_eq(range_at(m, NOPID, 0x37fff), "34000-38000 7000 6 /f pid 999999999");
	ck_assert_str_eq(range_at(m, NOPID, 0x38000), "38000-40000 b000 3 /c pid 999999999");

	/* A child starts with a copy of the parent's ranges, under its own pid. */
	nchanged = 0;
	r = mk(REC_FORK, NOPID + 2, NOPID + 2, 30);
	r.u.task.ppid = NOPID;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ck_assert_str_eq(range_at(m, NOPID + 2, 0x10000), "10000-18000 1000 1 /a pid 1000000001");
	ck_assert_str_eq(range_at(m, NOPID + 2, 0x38000), "38000-40000 b000 3 /c pid 1000000001");
	ck_assert_int_eq(nchanged, 1);
	ck_assert_int_eq(changed[0], (int)(NOPID + 2));

	/* exec drops the child's ranges once it runs the new image, never the parent's. */
	record_exec(m, NOPID + 2, 40, "true");
	ck_assert_int_eq(maplog__sample(m, 41, (int32_t)(NOPID + 2), true, 0x99000), 0);
	ck_assert_str_eq(range_at(m, NOPID + 2, 0x10000), "none");
	ck_assert_str_eq(range_at(m, NOPID, 0x10000), "10000-18000 1000 1 /a pid 999999999");
	ck_assert_int_eq(nchanged, 3);

	/* exit drops them, and the path pointer of a lookup made before stays valid. */
	{
		const struct maplog_map *mm = maplog__find_map(m, NOPID, 0x10000);
		const char *path = mm->path;

		r = mk(REC_EXIT, NOPID, NOPID, 60);
		ck_assert_int_eq(maplog__record(m, &r), 0);
		ck_assert_str_eq(range_at(m, NOPID, 0x10000), "none");
		ck_assert_str_eq(path, "/a");
	}
	ck_assert_int_eq(nchanged, 4);
	ck_assert_int_eq(changed[3], (int)NOPID);
	/* The kernel's pid and pids never seen have no ranges. */
	ck_assert_ptr_null(maplog__find_map(m, -1, 0xffffffff81000000));
	ck_assert_ptr_null(maplog__find_map(m, 12345, 0x10000));
	maplog__free(m);
}
END_TEST

/* A model with one process (NOPID, forked from 1); the call log emptied. */
static struct maplog *model_one_proc(void)
{
	struct maplog *m;
	struct rec r;

	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops, NULL, &m), 0);
	r = mk(REC_FORK, NOPID, NOPID, 5);
	r.u.task.ppid = 1;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	return m;
}

/* An executable range of NOPID, recorded. */
static void map_range(struct maplog *m, uint64_t addr, uint64_t len, uint64_t pgoff, uint64_t inode,
		      const char *path)
{
	struct rec r = range_rec(NOPID, addr, len, pgoff, inode, path);

	ck_assert_int_eq(maplog__record(m, &r), 0);
}

/*
 * An exec (issue 12): the samples the kernel takes while it loads the new image
 * carry the old image's user registers, so the old ranges answer lookups and
 * stay in the log until the process shows that it runs the new image.
 */
START_TEST(test_exec_window)
{
	struct maplog *m = model_one_proc();
	struct rec r;

	/* The old image: an executable (two executable mappings) and a library. */
	map_range(m, 0x555500001000, 0x1000, 0x1000, 1, "/bin/old");
	map_range(m, 0x555500005000, 0x1000, 0x5000, 1, "/bin/old");
	map_range(m, 0x7f0000010000, 0x10000, 0x10000, 2, "/lib/libc.so");
	map_range(m, 0x7fff00000000, 0x2000, 0, 0, "[vdso]");
	ncalls = 0;

	record_exec(m, NOPID, 20, "new");
	expect((const char *[]){ "proc_create 20 999999999 0 new",
				 "thr_create 999999999 999999999 0 new" }, 2);
	/* The kernel maps the new executable and its interpreter: the old image stays. */
	map_range(m, 0x560000001000, 0x4000, 0x1000, 3, "/bin/new");
	map_range(m, 0x7f1000001000, 0x20000, 0x1000, 4, "/lib/ld.so");
	expect((const char *[]){ "map_in 999999999 0x560000001000 /bin/new",
				 "map_in 999999999 0x7f1000001000 /lib/ld.so" }, 2);
	ck_assert_str_eq(range_at(m, NOPID, 0x7f0000010040),
			 "7f0000010000-7f0000020000 10000 2 /lib/libc.so pid 999999999");
	ck_assert_str_eq(range_at(m, NOPID, 0x560000002000),
			 "560000001000-560000005000 1000 3 /bin/new pid 999999999");
	/*
	 * Kernel-mode samples inside execve(), user IP in the old libc or unknown:
	 * nothing changes, and their user stacks are not theirs (1).
	 */
	ck_assert_int_eq(maplog__sample(m, 21, (int32_t)NOPID, false, 0x7f0000010040), 1);
	ck_assert_int_eq(maplog__sample(m, 22, (int32_t)NOPID, false, 0), 1);
	/* Other processes' samples change nothing either. */
	ck_assert_int_eq(maplog__sample(m, 22, 12345, true, 0x7f0000010040), 0);
	expect(NULL, 0);
	ck_assert_str_eq(range_at(m, NOPID, 0x555500005000),
			 "555500005000-555500006000 5000 1 /bin/old pid 999999999");
	/* A kernel-mode sample at the new entry point: the exec is over. */
	ck_assert_int_eq(maplog__sample(m, 23, (int32_t)NOPID, false, 0x7f1000001100), 0);
	expect((const char *[]){ "map_out 999999999 0x555500001000 0x555500006000",
				 "map_out 999999999 0x7f0000010000 0x7f0000020000",
				 "map_out 999999999 0x7fff00000000 0x7fff00002000" }, 3);
	ck_assert_str_eq(range_at(m, NOPID, 0x7f0000010040), "none");
	ck_assert_str_eq(range_at(m, NOPID, 0x7f1000001100),
			 "7f1000001000-7f1000021000 1000 4 /lib/ld.so pid 999999999");
	ck_assert_int_eq(maplog__sample(m, 24, (int32_t)NOPID, true, 0x7f1000001100), 0);
	expect(NULL, 0);

	/* A second exec; a fork of the process ends it too (only running code forks). */
	record_exec(m, NOPID, 30, "third");
	ncalls = 0;
	ck_assert_str_eq(range_at(m, NOPID, 0x560000001000),
			 "560000001000-560000005000 1000 3 /bin/new pid 999999999");
	r = mk(REC_FORK, NOPID + 1, NOPID + 1, 31);
	r.u.task.ppid = NOPID;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect((const char *[]){ "map_out 999999999 0x560000001000 0x560000005000",
				 "map_out 999999999 0x7f1000001000 0x7f1000021000",
				 "procfork 999999999 1000000000", "proc_create 31 1000000000 0 third",
				 "thr_create 1000000000 1000000000 0 third" }, 5);
	ck_assert_str_eq(range_at(m, NOPID, 0x560000001000), "none");
	ck_assert_str_eq(range_at(m, NOPID + 1, 0x560000001000), "none");
	maplog__free(m);
}
END_TEST

/*
 * An exec without address space randomisation (gdb, setarch -R): the new image
 * lands where the old one was.  Each new mapping over an old object retires that
 * object alone; the old libc, whose execve the exec's samples still show, stays
 * until the new image runs.
 */
START_TEST(test_exec_in_place)
{
	struct maplog *m = model_one_proc();
	struct rec r;

	/* The old image: executable (two ranges of one file), libc, loader, vDSO. */
	map_range(m, 0x555555555000, 0x1000, 0x1000, 1, "/bin/prog");
	map_range(m, 0x555555558000, 0x1000, 0x4000, 1, "/bin/prog");
	map_range(m, 0x7ffff7df4000, 0x156000, 0x26000, 2, "/lib/libc.so.6");
	map_range(m, 0x7ffff7fc8000, 0x2000, 0, 0, "[vdso]");
	map_range(m, 0x7ffff7fcb000, 0x26000, 0x1000, 4, "/lib/ld.so");
	ncalls = 0;

	record_exec(m, NOPID, 20, "prog");
	ncalls = 0;
	/* The same executable at the same place: only the old executable goes, its whole span. */
	r = range_rec(NOPID, 0x555555555000, 0x1000, 0x1000, 1, "/bin/prog");
	r.time = 21;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect((const char *[]){ "map_out 999999999 0x555555555000 0x555555559000",
				 "map_in 999999999 0x555555555000 /bin/prog" }, 2);
	ck_assert_str_eq(range_at(m, NOPID, 0x555555558100), "none");
	/* The loader and the vDSO over theirs. */
	r = range_rec(NOPID, 0x7ffff7fcb000, 0x26000, 0x1000, 4, "/lib/ld.so");
	r.time = 22;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = range_rec(NOPID, 0x7ffff7fc8000, 0x2000, 0, 0, "[vdso]");
	r.time = 23;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect((const char *[]){ "map_out 999999999 0x7ffff7fcb000 0x7ffff7ff1000",
				 "map_in 999999999 0x7ffff7fcb000 /lib/ld.so",
				 "map_out 999999999 0x7ffff7fc8000 0x7ffff7fca000",
				 "map_in 999999999 0x7ffff7fc8000 [vdso]" }, 4);
	/* The exec's samples still find the old libc's execve, their stacks not theirs. */
	ck_assert_str_eq(range_at(m, NOPID, 0x7ffff7ea2ad7),
			 "7ffff7df4000-7ffff7f4a000 26000 2 /lib/libc.so.6 pid 999999999");
	ck_assert_int_eq(maplog__sample(m, 24, (int32_t)NOPID, false, 0x7ffff7ea2ad7), 1);
	expect(NULL, 0);
	/* The new loader's entry: the exec is over, the old libc goes too. */
	ck_assert_int_eq(maplog__sample(m, 25, (int32_t)NOPID, false, 0x7ffff7fe3a00), 0);
	expect((const char *[]){ "map_out 999999999 0x7ffff7df4000 0x7ffff7f4a000" }, 1);
	ck_assert_str_eq(range_at(m, NOPID, 0x7ffff7ea2ad7), "none");
	ck_assert_int_eq(maplog__sample(m, 26, (int32_t)NOPID, false, 0x7ffff7fe3a00), 0);
	expect(NULL, 0);
	maplog__free(m);
}
END_TEST

/*
 * A new file of a rotated log must read alone: replay announces every process
 * and each object it maps once (its lowest range), the old image too while an
 * exec is pending, and changes nothing in the model.
 */
START_TEST(test_replay)
{
	struct maplog *m;
	struct rec r;
	char longpath[1100];
	static const char *const first[] = {
		"proc_create 99 999999999 0 ?", "map_in 999999999 0x7f000000b000 [vdso]",
		"map_in 999999999 0x7f0000001000 /usr/lib/libx.so",
		"map_in 999999999 0x7f0000020000 /usr/lib/libz.so",
	};

	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops, NULL, &m), 0);
	r = mk(REC_FORK, NOPID, NOPID, 5);
	r.u.task.ppid = 1;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	/* libz's range comes first, libx's two ranges out of order, with the rest between. */
	r = mmap_rec(NOPID, 0x7f0000020000, 0x1000, 5, 103, "/usr/lib/libz.so");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = mmap_rec(NOPID, 0x7f0000005000, 0x5000, 5, 100, "/usr/lib/libx.so");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = mmap_rec(NOPID, 0x7f000000a000, 0x0, 5, 0, "//anon");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = mmap_rec(NOPID, 0x7f000000b000, 0x0, 5, 0, "[vdso]");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	memset(longpath, 'a', sizeof(longpath));
	longpath[0] = '/';
	longpath[1099] = '\0';
	r = mmap_rec(NOPID, 0x7f000000d000, 0x0, 5, 102, longpath);
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = mmap_rec(NOPID, 0x7f0000001000, 0x1000, 5, 100, "/usr/lib/libx.so");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ncalls = 0;

	/* vDSO (device 0) first, then by device and inode; each object once, at its lowest range. */
	ck_assert_int_eq(maplog__replay(m, 99), 0);
	expect(first, 4);
	/* The model is as it was: the same again, and lookups unchanged. */
	ck_assert_int_eq(maplog__replay(m, 99), 0);
	expect(first, 4);
	ck_assert_str_eq(range_at(m, NOPID, 0x7f0000005000),
			 "7f0000005000-7f0000006000 5000 100 /usr/lib/libx.so pid 999999999");

	/* An exec still pending: the old image is in the log, so it is replayed too. */
	record_exec(m, NOPID, 100, "new");
	r = range_rec(NOPID, 0x560000001000, 0x4000, 0x1000, 3, "/bin/new");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ncalls = 0;
	ck_assert_int_eq(maplog__replay(m, 110), 0);
	expect((const char *[]){ "proc_create 110 999999999 0 new",
				 "map_in 999999999 0x7f000000b000 [vdso]",
				 "map_in 999999999 0x7f0000001000 /usr/lib/libx.so",
				 "map_in 999999999 0x7f0000020000 /usr/lib/libz.so",
				 "map_in 999999999 0x560000001000 /bin/new" }, 5);
	/* ... and still retired by the first sample of the new image, as without a replay. */
	ck_assert_int_eq(maplog__sample(m, 111, (int32_t)NOPID, true, 0x560000001100), 0);
	ck_assert_int_eq(ncalls, 3);
	ncalls = 0;
	ck_assert_int_eq(maplog__replay(m, 120), 0);
	expect((const char *[]){ "proc_create 120 999999999 0 new",
				 "map_in 999999999 0x560000001000 /bin/new" }, 2);

	/* An exited process is not replayed. */
	r = mk(REC_EXIT, NOPID, NOPID, 130);
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ncalls = 0;
	ck_assert_int_eq(maplog__replay(m, 140), 0);
	expect(NULL, 0);
	maplog__free(m);
}
END_TEST

/* Many ranges in one process: lookups find each, in any insertion order. */
START_TEST(test_ranges_many)
{
	struct maplog *m;
	struct rec r;
	int bad = 0;

	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops, NULL, &m), 0);
	r = mk(REC_FORK, NOPID, NOPID, 5);
	r.u.task.ppid = 1;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	for (uint64_t i = 0; i < 1000; i++) {
		uint64_t k = (i * 389) % 1000; /* a permutation of 0..999 */

		r = range_rec(NOPID, 0x100000 + k * 0x2000, 0x1000, k * 0x1000, 1000 + k, "//anon");
		bad += maplog__record(m, &r) != 0;
		ncalls = 0;
	}
	ck_assert_int_eq(bad, 0);
	for (uint64_t k = 0; k < 1000; k++) {
		const struct maplog_map *mm = maplog__find_map(m, NOPID, 0x100000 + k * 0x2000 + 5);

		bad += !mm || mm->inode != 1000 + k || mm->start != 0x100000 + k * 0x2000;
		bad += maplog__find_map(m, NOPID, 0x101000 + k * 0x2000) != NULL; /* the gaps */
	}
	ck_assert_int_eq(bad, 0);
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
	expect((const char *[]){ "map_in -1 0xffffffff9a000000 vmlinux",
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


static pid_t refused_pid;
static bool o_may_scan(void *c, int32_t pid)
{
	(void)c;
	return pid != refused_pid;
}
static const struct maplog_ops ops_may_scan = { .proc_create = o_proc, .thr_create = o_thr,
						.map_in = o_in, .map_out = o_out,
						.procfork = o_fork, .sysexit = o_sysexit,
						.thr_exit = o_threxit, .may_scan = o_may_scan };

/* Whether the calls so far name @pid in a proc_create, thr_create or map_in. */
static bool calls_name(pid_t pid)
{
	char a[64], b[64], c[64];

	snprintf(a, sizeof(a), "proc_create 7 %d ", (int)pid);
	snprintf(b, sizeof(b), "thr_create %d %d ", (int)pid, (int)pid);
	snprintf(c, sizeof(c), "map_in %d ", (int)pid);
	for (int i = 0; i < ncalls; i++)
		if (strncmp(calls[i], a, strlen(a)) == 0 || strncmp(calls[i], b, strlen(b)) == 0 ||
		    strncmp(calls[i], c, strlen(c)) == 0)
			return true;
	return false;
}

/*
 * The scan of a pid and its descendants asks ops->may_scan for each (issue 13,
 * item 1: a user's shell's setuid child entered the user's log).
 */
START_TEST(test_scan_may_scan)
{
	struct maplog *m;
	pid_t me = getpid(), child = fork();

	ck_assert_int_ge(child, 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	refused_pid = child;
	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops_may_scan, NULL, &m), 0);
	ck_assert_int_eq(maplog__scan_procs(m, 7, &me, 1, true), 0);
	ck_assert(calls_name(me));
	ck_assert(!calls_name(child));
	ck_assert_uint_eq(maplog__stats(m)->scan_refused, 1);
	maplog__free(m);
	/* Allowed, the same child is scanned as our descendant. */
	refused_pid = -1;
	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops_may_scan, NULL, &m), 0);
	ck_assert_int_eq(maplog__scan_procs(m, 7, &me, 1, true), 0);
	ck_assert(calls_name(me));
	ck_assert(calls_name(child));
	ck_assert_uint_eq(maplog__stats(m)->scan_refused, 0);
	maplog__free(m);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}
END_TEST

/*
 * The scan's proof (issue 32, finding 2): what it reads of a process is bracketed
 * by ops->open_maps(), which the daemon makes the kernel's own ptrace check, and
 * the maps are read from the fd that check gave.
 */
static int proof_mode, proof_calls;
static pid_t proof_pid;
static int o_open_maps(void *c, int32_t pid)
{
	char path[64];
	int fd;

	(void)c;
	if (pid != proof_pid)
		return -EACCES;
	proof_calls++;
	if (proof_mode == 1 && proof_calls == 2)
		return -EACCES; /* the second check fails: it exec'd a setuid program */
	if (proof_mode == 2 && proof_calls == 1) {
		/* An exec between the name and the check: another name (the child renames itself). */
		char comm[64] = "";

		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		ck_assert_int_eq(kill(pid, SIGUSR1), 0);
		for (int i = 0; i < 1000 && strncmp(comm, "renamed", 7) != 0; i++) {
			usleep(2000);
			(void)util_read_small(path, comm, sizeof(comm));
		}
		ck_assert_str_eq(comm, "renamed\n");
	}
	if (proof_mode == 3)
		return -EACCES; /* refused at once */
	/* The maps of this test process, not of @pid: what the scan reads is the fd's. */
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}
static void on_rename(int sig)
{
	(void)sig;
	(void)prctl(PR_SET_NAME, "renamed", 0, 0, 0);
}
static const struct maplog_ops ops_proof = { .proc_create = o_proc, .thr_create = o_thr,
					     .map_in = o_in, .map_out = o_out,
					     .procfork = o_fork, .sysexit = o_sysexit,
					     .thr_exit = o_threxit, .open_maps = o_open_maps };

START_TEST(test_scan_proof)
{
	char self[4096];
	struct maplog *m;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t child = fork();
	bool named_self;

	ck_assert_int_gt(n, 0);
	self[n] = '\0';
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		execl("/bin/sleep", "sleep", "60", (char *)NULL);
		_exit(127);
	}
	/* Wait for the exec: the child is named sleep. */
	for (int i = 0; i < 500; i++) {
		char comm[64] = "";
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/comm", (int)child);
		if (util_read_small(path, comm, sizeof(comm)) > 0 && strncmp(comm, "sleep", 5) == 0)
			break;
		usleep(10000);
	}
	proof_pid = child;
	/* Both checks pass: the process enters, with the maps of the fd the check gave. */
	proof_mode = 0;
	proof_calls = 0;
	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops_proof, NULL, &m), 0);
	ck_assert_int_eq(maplog__scan_procs(m, 7, &child, 1, false), 0);
	ck_assert_int_eq(proof_calls, 2);
	ck_assert(calls_name(child));
	named_self = false;
	for (int i = 0; i < ncalls; i++)
		if (strstr(calls[i], "map_in") && strstr(calls[i], self))
			named_self = true;
		else
			ck_assert_msg(!strstr(calls[i], "/sleep"), "read around the fd: %s", calls[i]);
	ck_assert(named_self);
	ck_assert_uint_eq(maplog__stats(m)->scan_refused, 0);
	maplog__free(m);
	/*
	 * The second check fails (1: it exec'd a setuid program meanwhile), or the
	 * first (3): nothing of it enters the model or the log.
	 */
	for (int mode = 1; mode <= 3; mode += 2) {
		proof_mode = mode;
		proof_calls = 0;
		ncalls = 0;
		ck_assert_int_eq(maplog__new(&ops_proof, NULL, &m), 0);
		ck_assert_int_eq(maplog__scan_procs(m, 7, &child, 1, false), 0);
		ck_assert(!calls_name(child));
		ck_assert_uint_eq(maplog__stats(m)->scan_refused, 1);
		ck_assert_uint_eq(maplog__stats(m)->tracked, 0);
		ck_assert_int_eq(proof_calls, mode == 1 ? 2 : 1);
		maplog__free(m);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* The name changed between the reads: read again, as it is now. */
	{
		int ready[2];
		char b;

		ck_assert_int_eq(pipe(ready), 0);
		child = fork();
		ck_assert_int_ge(child, 0);
		if (child == 0) {
			signal(SIGUSR1, on_rename);
			(void)!write(ready[1], "r", 1); /* its handler is set */
			for (;;)
				pause();
		}
		close(ready[1]);
		ck_assert_int_eq(read(ready[0], &b, 1), 1);
		close(ready[0]);
	}
	proof_pid = child;
	proof_mode = 2;
	proof_calls = 0;
	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops_proof, NULL, &m), 0);
	ck_assert_int_eq(maplog__scan_procs(m, 7, &child, 1, false), 0);
	ck_assert_int_eq(proof_calls, 4);
	{
		char want[64];

		snprintf(want, sizeof(want), "proc_create 7 %d 0 renamed", (int)child);
		ck_assert_str_eq(calls[0], want);
	}
	maplog__free(m);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}
END_TEST

static uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Whether the calls so far have a proc_create of @pid at time @t. */
static bool created_at(pid_t pid, uint64_t t)
{
	char want[64];

	snprintf(want, sizeof(want), "proc_create %" PRIu64 " %d ", t, (int)pid);
	for (int i = 0; i < ncalls; i++)
		if (strncmp(calls[i], want, strlen(want)) == 0)
			return true;
	return false;
}

/*
 * A process first met in a sample (its PROCFORK lost) is scanned into the log if
 * it is still the sample's: begun by the sample's time, the sample's user IP in
 * one of its executable mappings, allowed by may_scan; bounded per second.
 */
START_TEST(test_adopt)
{
	struct maplog *m;
	pid_t child = fork();
	uint64_t ip = (uint64_t)(uintptr_t)&created_at, now;

	ck_assert_int_ge(child, 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	refused_pid = -1;
	now = mono_now();
	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops_may_scan, NULL, &m), 0);
	/* nothing for pid 0, an unknown user IP, or a pid the model knows */
	ck_assert_int_eq(maplog__adopt(m, now, 0, ip), 0);
	ck_assert_int_eq(maplog__adopt(m, now, child, 0), 0);
	ck_assert_int_eq(ncalls, 0);
	/* the fork of us: our text is its text */
	ck_assert_int_eq(maplog__adopt(m, now, child, ip), 1);
	ck_assert(created_at(child, now));
	ck_assert(calls_name(child) || ncalls > 1);
	ck_assert_uint_eq(maplog__stats(m)->adopted, 1);
	{
		int n = ncalls;

		ck_assert_int_eq(maplog__adopt(m, now + 1, child, ip), 0); /* known now */
		ck_assert_int_eq(ncalls, n);
	}
	maplog__free(m);

	/* A sample from before the process began (its pid reused since): refused. */
	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops_may_scan, NULL, &m), 0);
	ck_assert_int_eq(maplog__adopt(m, 1000, child, ip), 0);
	ck_assert_uint_eq(maplog__stats(m)->adopt_refused, 1);
	/* refused: not tried again within a second */
	ck_assert_int_eq(maplog__adopt(m, 2000, child, ip), 0);
	ck_assert_uint_eq(maplog__stats(m)->adopt_refused, 1);
	/* a user IP in none of its executable mappings (it exec'd since): refused */
	ck_assert_int_eq(maplog__adopt(m, now, child, 0x1000), 0);
	ck_assert_uint_eq(maplog__stats(m)->adopt_refused, 2);
	ck_assert_int_eq(ncalls, 0);
	maplog__free(m);

	/* may_scan says no: refused */
	refused_pid = child;
	ck_assert_int_eq(maplog__new(&ops_may_scan, NULL, &m), 0);
	ck_assert_int_eq(maplog__adopt(m, now, child, ip), 0);
	ck_assert_uint_eq(maplog__stats(m)->adopt_refused, 1);
	ck_assert_int_eq(ncalls, 0);
	maplog__free(m);
	refused_pid = -1;

	/* gated: never (maplog__vouch() does it there) */
	ck_assert_int_eq(maplog__new(&ops_may_scan, NULL, &m), 0);
	maplog__gate(m);
	ck_assert_int_eq(maplog__adopt(m, now, child, ip), 0);
	ck_assert_int_eq(ncalls, 0);
	maplog__free(m);

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* gone: refused; and at most 20 tries in a second of sample time */
	ck_assert_int_eq(maplog__new(&ops_may_scan, NULL, &m), 0);
	ck_assert_int_eq(maplog__adopt(m, now, child, ip), 0);
	ck_assert_uint_eq(maplog__stats(m)->adopt_refused, 1);
	for (int i = 0; i < 30; i++)
		ck_assert_int_eq(maplog__adopt(m, now, 4194304 + i, ip), 0); /* past pid_max */
	ck_assert_uint_eq(maplog__stats(m)->adopt_refused, 20);
	ck_assert_uint_eq(maplog__stats(m)->adopt_deferred, 11);
	ck_assert_int_eq(maplog__adopt(m, now + 1000000000ull, 4194304 + 29, ip), 0);
	ck_assert_uint_eq(maplog__stats(m)->adopt_refused, 21); /* the next second: tried */
	ck_assert_int_eq(ncalls, 0);
	maplog__free(m);
}
END_TEST


/* Record @r, at time @t. */
static struct rec at_time(struct rec r, uint64_t t)
{
	r.time = t;
	return r;
}

/*
 * Gated (a user's system-wide session): nothing of a process is written until a
 * sample the kernel kept vouches for it, and then only what it had mapped by the
 * sample's time; another user's process (never vouched), a pid's earlier holder
 * (a record older than the fork), what a process maps after it exec'ed a setuid
 * program (no sample of it is kept) never reach the log.
 */
START_TEST(test_gated)
{
	const int32_t a = (int32_t)NOPID, other = a + 5, re = a + 6, kid = a + 8;
	struct maplog *m;
	struct rec r;

	ncalls = 0;
	ck_assert_int_eq(maplog__new(&ops, NULL, &m), 0);
	maplog__gate(m);
	r = mk(REC_FORK, (uint32_t)a, (uint32_t)a, 5);
	r.u.task.ppid = 1;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = at_time(mmap_rec((uint32_t)a, 0x555500001000, 0x1000, 5, 1, "/bin/a"), 10);
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = at_time(mmap_rec((uint32_t)a, 0x7fff00000000, 0, 5, 0, "[vdso]"), 10);
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = mk(REC_FORK, (uint32_t)a, (uint32_t)a + 1, 11); /* a thread */
	r.u.task.ppid = (uint32_t)a;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect(NULL, 0);
	/* Its first kept sample: PROC_CREATE and what it maps, at the sample's time. */
	ck_assert_int_eq(maplog__vouch(m, a, 12, 12), 1);
	expect((const char *[]){ "proc_create 12 999999999 0 ?",
				 "map_in 999999999 0x7fff00000000 [vdso]",
				 "map_in 999999999 0x555500001000 /bin/a" }, 3);
	ck_assert_int_eq(maplog__vouch(m, a, 13, 13), 1);
	expect(NULL, 0);
	/* A library mapped at 20 is not shown by a sample taken at 15, but by one at 25. */
	r = at_time(mmap_rec((uint32_t)a, 0x7f0000010000, 0, 5, 2, "/lib/b"), 20);
	ck_assert_int_eq(maplog__record(m, &r), 0);
	ck_assert_int_eq(maplog__vouch(m, a, 15, 21), 1);
	expect(NULL, 0);
	ck_assert_int_eq(maplog__vouch(m, a, 25, 25), 1);
	expect((const char *[]){ "map_in 999999999 0x7f0000010000 /lib/b" }, 1);

	/* Another user's process: followed, never written. */
	r = mk(REC_FORK, (uint32_t)other, (uint32_t)other, 30);
	r.u.task.ppid = 1;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = at_time(mmap_rec((uint32_t)other, 0x600000001000, 0, 5, 9, "/bin/secret"), 31);
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = mk(REC_EXIT, (uint32_t)other, (uint32_t)other, 40);
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect(NULL, 0);

	/* A pid taken again at 50: a sample of 45 was its earlier holder's. */
	r = mk(REC_FORK, (uint32_t)re, (uint32_t)re, 50);
	r.u.task.ppid = (uint32_t)a;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	r = at_time(mmap_rec((uint32_t)re, 0x600000001000, 0, 5, 9, "/bin/stale"), 48);
	ck_assert_int_eq(maplog__record(m, &r), 0); /* older than the fork: not its */
	ck_assert_int_eq(maplog__vouch(m, re, 45, 52), 0);
	ck_assert_uint_eq(maplog__stats(m)->unvouched, 1);
	expect(NULL, 0);
	ck_assert_str_eq(range_at(m, re, 0x600000001000), "none");
	/* Its own sample: it is a copy of its parent, under the parent's name. */
	ck_assert_int_eq(maplog__vouch(m, re, 55, 55), 1);
	expect((const char *[]){ "proc_create 55 1000000005 0 ?",
				 "map_in 1000000005 0x7fff00000000 [vdso]",
				 "map_in 1000000005 0x555500001000 /bin/a",
				 "map_in 1000000005 0x7f0000010000 /lib/b" }, 4);

	/*
	 * An exec (a setuid program, say): what was shown goes out at once (user mode
	 * only: no sample of the old image follows); the new image stays unwritten
	 * until a sample of it is kept, which for a setuid program never happens.
	 */
	record_exec(m, (uint32_t)a, 60, "su");
	r = at_time(mmap_rec((uint32_t)a, 0x560000001000, 0x1000, 5, 50, "/bin/su"), 61);
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect((const char *[]){ "map_out 999999999 0x555500001000 0x555500002000",
				 "map_out 999999999 0x7f0000010000 0x7f0000011000",
				 "map_out 999999999 0x7fff00000000 0x7fff00001000" }, 3);
	ck_assert_int_eq(maplog__vouch(m, a, 59, 62), 0); /* taken before the exec */
	expect(NULL, 0);
	r = mk(REC_EXIT, (uint32_t)a, (uint32_t)a, 70);
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect(NULL, 0);

	/* A child of a shown process; exits of shown processes. */
	r = mk(REC_FORK, (uint32_t)kid, (uint32_t)kid, 75);
	r.u.task.ppid = (uint32_t)re;
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect(NULL, 0);
	ck_assert_int_eq(maplog__vouch(m, kid, 76, 76), 1);
	ck_assert_int_eq(ncalls, 4);
	ck_assert_str_eq(calls[0], "proc_create 76 1000000007 0 ?");
	ncalls = 0;
	r = mk(REC_EXIT, (uint32_t)re, (uint32_t)re, 80);
	ck_assert_int_eq(maplog__record(m, &r), 0);
	expect((const char *[]){ "sysexit 1000000005" }, 1);

	/* A loss: every process leaves (SYSEXIT if shown) and vouches for nothing. */
	ck_assert_int_eq(maplog__forget_all(m, 90), 0);
	expect((const char *[]){ "sysexit 1000000007" }, 1);
	ck_assert_int_eq(maplog__vouch(m, kid, 95, 95), 0);
	expect(NULL, 0);
	/* A rotated log's replay writes nothing: the next vouched sample does. */
	ck_assert_int_eq(maplog__replay(m, 99), 0);
	expect(NULL, 0);
	maplog__free(m);
}
END_TEST

static int q_proc(void *c, uint64_t t, int32_t pid, uint32_t f, const char *n)
{
	(void)c, (void)t, (void)pid, (void)f, (void)n;
	return 0;
}
static int q_thr(void *c, uint64_t t, int32_t tid, int32_t pid, uint32_t f, const char *n)
{
	(void)c, (void)t, (void)tid, (void)pid, (void)f, (void)n;
	return 0;
}
static int q_in(void *c, uint64_t t, int32_t pid, uint64_t start, const char *path)
{
	(void)c, (void)t, (void)pid, (void)start, (void)path;
	return 0;
}
static int q_out(void *c, uint64_t t, int32_t pid, uint64_t s, uint64_t e)
{
	(void)c, (void)t, (void)pid, (void)s, (void)e;
	return 0;
}
static int q_fork(void *c, uint64_t t, int32_t a, int32_t b)
{
	(void)c, (void)t, (void)a, (void)b;
	return 0;
}
static int q_pid(void *c, uint64_t t, int32_t pid)
{
	(void)c, (void)t, (void)pid;
	return 0;
}

/*
 * Paths of processes long gone do not stay: 20,000 short-lived processes each map
 * a file of a new 230-byte name (a build farm's test binaries, or a user naming
 * files to grow the daemon); the table is compacted to the paths live ranges hold,
 * and a long-lived process's path survives it.
 */
START_TEST(test_paths_compact)
{
	static const struct maplog_ops quiet = { q_proc, q_thr, q_in, q_out, q_fork, q_pid, q_pid };
	const int32_t keep = (int32_t)NOPID, churn = keep + 1;
	char name[300];
	struct maplog *m;
	struct rec r;

	ck_assert_int_eq(maplog__new(&quiet, NULL, &m), 0);
	r = mmap_rec((uint32_t)keep, 0x7f0000001000, 0, 5, 7, "/usr/lib/libkeep.so");
	ck_assert_int_eq(maplog__record(m, &r), 0);
	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "/tmp/build-%06d/%0200d.test", i, 0);
		r = mk(REC_FORK, (uint32_t)churn, (uint32_t)churn, 20 + 3 * (uint64_t)i);
		r.u.task.ppid = 1;
		ck_assert_int_eq(maplog__record(m, &r), 0);
		r = mmap_rec((uint32_t)churn, 0x555500001000, 0, 5, 1000 + (uint64_t)i, name);
		ck_assert_int_eq(maplog__record(m, &r), 0);
		r = mk(REC_EXIT, (uint32_t)churn, (uint32_t)churn, 22 + 3 * (uint64_t)i);
		ck_assert_int_eq(maplog__record(m, &r), 0);
	}
	/* 20,000 x 230 bytes is 4.6 MB; live, one path: compacted below 2 MiB. */
	ck_assert_uint_ge(maplog__stats(m)->path_compactions, 1);
	ck_assert_uint_lt(maplog__stats(m)->path_bytes, 2u << 20);
	ck_assert_str_eq(range_at(m, keep, 0x7f0000001000),
			 "7f0000001000-7f0000002000 0 7 /usr/lib/libkeep.so pid 999999999");
	maplog__free(m);
}
END_TEST

/* Whether @ifd saw an open of a watched file since the last call. */
static bool opened(int ifd)
{
	char buf[4096];
	bool any = false;

	while (read(ifd, buf, sizeof(buf)) > 0)
		any = true;
	return any;
}

/*
 * maplog_open_mapped() by name: no symbolic link is followed anywhere in the path,
 * and nothing that is not the mapping's regular file is ever opened (issue 13, item
 * 6: a user swapped a mapped file's name for a link to a root-only FIFO).
 */
START_TEST(test_open_mapped_by_name)
{
	char dir[] = "/tmp/hwpmc-test-om.XXXXXX", f[128], l[128], d[128], dl[128], q[128], ql[128];
	struct stat st, fst, qst;
	uint64_t size = 0, fdev, qdev;
	int fd, ifd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(f, sizeof(f), "%s/lib.so", dir);
	fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ck_assert_int_eq(write(fd, "\177ELF-and-more!", 15), 15);
	close(fd);
	ck_assert_int_eq(stat(f, &fst), 0);
	fdev = makedev(major(fst.st_dev), minor(fst.st_dev));
	/* A process that is gone: the name in our root.  The file itself opens. */
	fd = maplog_open_mapped((int32_t)NOPID, 0x1000, 0x2000, f, fdev, fst.st_ino, &size);
	ck_assert_int_ge(fd, 0);
	ck_assert_uint_eq(size, 15);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	close(fd);
	/* Another file at that name: -ESTALE. */
	ck_assert_int_eq(maplog_open_mapped((int32_t)NOPID, 0x1000, 0x2000, f, fdev, fst.st_ino + 1,
					    NULL),
			 -ESTALE);
	/* A link to the very file, as the last component or on the way: refused. */
	snprintf(l, sizeof(l), "%s/link.so", dir);
	ck_assert_int_eq(symlink(f, l), 0);
	ck_assert_int_eq(maplog_open_mapped((int32_t)NOPID, 0x1000, 0x2000, l, fdev, fst.st_ino, NULL),
			 -ELOOP);
	snprintf(d, sizeof(d), "%s/sub", dir);
	ck_assert_int_eq(symlink(dir, d), 0);
	snprintf(dl, sizeof(dl), "%s/sub/lib.so", dir);
	ck_assert_int_eq(maplog_open_mapped((int32_t)NOPID, 0x1000, 0x2000, dl, fdev, fst.st_ino, NULL),
			 -ELOOP);
	/* The same through a live process's root (ours): the file, and not the link. */
	fd = maplog_open_mapped((int32_t)getpid(), 0x1000, 0x2000, f, fdev, fst.st_ino, NULL);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(maplog_open_mapped((int32_t)getpid(), 0x1000, 0x2000, l, fdev, fst.st_ino,
					    NULL),
			 -ELOOP);
	/* A FIFO, named or linked, even with its own dev/inode: never opened. */
	snprintf(q, sizeof(q), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(q, 0600), 0);
	ck_assert_int_eq(stat(q, &qst), 0);
	qdev = makedev(major(qst.st_dev), minor(qst.st_dev));
	snprintf(ql, sizeof(ql), "%s/fifo-link", dir);
	ck_assert_int_eq(symlink(q, ql), 0);
	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ck_assert_int_ge(ifd, 0);
	ck_assert_int_ge(inotify_add_watch(ifd, q, IN_OPEN), 0);
	ck_assert_int_eq(maplog_open_mapped((int32_t)NOPID, 0x1000, 0x2000, q, qdev, qst.st_ino, NULL),
			 -ENOEXEC);
	ck_assert_int_eq(maplog_open_mapped((int32_t)NOPID, 0x1000, 0x2000, ql, qdev, qst.st_ino, NULL),
			 -ELOOP);
	ck_assert_int_eq(maplog_open_mapped((int32_t)getpid(), 0x1000, 0x2000, q, qdev, qst.st_ino,
					    NULL),
			 -ENOEXEC);
	ck_assert(!opened(ifd));
	/* The watch works: an open of the FIFO is seen. */
	fd = open(q, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert(opened(ifd));
	close(ifd);
	unlink(ql);
	unlink(q);
	unlink(d);
	unlink(l);
	unlink(f);
	ck_assert_int_eq(rmdir(dir), 0);
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
	tcase_add_test(tc, test_build_id);
	tcase_add_test(tc, test_vdso_path);
	tcase_add_test(tc, test_remap);
	tcase_add_test(tc, test_kernel_maps);
	tcase_add_test(tc, test_storm_forgets);
	tcase_add_test(tc, test_ranges);
	tcase_add_test(tc, test_exec_window);
	tcase_add_test(tc, test_exec_in_place);
	tcase_add_test(tc, test_replay);
	tcase_add_test(tc, test_ranges_many);
	tcase_add_test(tc, test_open_mapped_by_name);
	tcase_add_test(tc, test_scan_may_scan);
	tcase_add_test(tc, test_scan_proof);
	tcase_add_test(tc, test_adopt);
	tcase_add_test(tc, test_gated);
	tcase_add_test(tc, test_paths_compact);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
