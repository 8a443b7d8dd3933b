/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-daemon-broker.c: Check suite for src/daemon/daemon-broker.c, the files a
 * push's confined report may read.
 *
 * A log is written by hand (plog_encode) with MAP_IN and PROCEXEC records of
 * files made here: ELF images (a copy of /proc/self/exe), one beside debug files
 * and a secret, a non-ELF file, a FIFO, a directory, an image behind a symbolic
 * link, and a kernel image without a directory.  The broker must open exactly
 * what its policy names (the log, its side files, the images, their debug
 * files, /proc/stat and /tmp/perf-PID.map), each only if it is a regular file
 * (ENOEXEC otherwise, as the report's own open answers) and an image or debug
 * file only if it is ELF, refuse everything else with EACCES, and serve a socket
 * as a confined report asks (common-open.h), within its bound of requests; as
 * `hwpmcd --push-broker` it keeps CAP_DAC_READ_SEARCH alone.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon-int.h"
#include "hwpmcd/common-open.h"
#include "hwpmcd/pmclog.h"

static char dir[64], logp[128];

/* @path made a copy of this ELF executable (the first @n bytes; 0: all). */
static void copy_exe(const char *path, size_t n)
{
	char buf[65536];
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), out;
	ssize_t k;
	size_t done = 0;

	ck_assert_int_ge(in, 0);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ck_assert_int_ge(out, 0);
	while ((k = read(in, buf, sizeof(buf))) > 0 && (!n || done < n)) {
		size_t w = n && done + (size_t)k > n ? n - done : (size_t)k;

		ck_assert_int_eq(write(out, buf, w), (ssize_t)w);
		done += w;
	}
	close(in);
	close(out);
}

static void put_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void append(int fd, const struct plog_record *rec)
{
	uint8_t buf[PLOG_RECORD_MAX];
	int n = plog_encode(rec, buf);

	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(write(fd, buf, (size_t)n), n);
}

static void map_in(int fd, int32_t pid, const char *path)
{
	struct plog_record rec = { .type = PLOG_TYPE_MAP_IN, .tsc = 2 };

	rec.u.map_in.pid = pid;
	rec.u.map_in.start = 0x400000;
	rec.u.map_in.path = path;
	append(fd, &rec);
}

static char *at(const char *name)
{
	static char p[8][256];
	static int k;

	k = (k + 1) % 8;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

static void setup(void)
{
	struct plog_record rec = { .type = PLOG_TYPE_INITIALIZE, .tsc = 1 };
	int fd;

	snprintf(dir, sizeof(dir), "/tmp/test-broker.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(mkdir(at("img"), 0755), 0);
	ck_assert_int_eq(mkdir(at("img/.debug"), 0755), 0);
	copy_exe(at("img/prog"), 0);
	copy_exe(at("img/prog.debug"), 0);     /* its debuglink */
	copy_exe(at("img/.debug/prog.debug"), 0);
	copy_exe(at("img/other"), 0);	       /* an ELF file beside, not named */
	put_file(at("img/secret"), "secret\n"); /* a file beside, not named */
	put_file(at("img/notelf.debug"), "not ELF\n");
	put_file(at("notelf"), "not ELF\n");
	ck_assert_int_eq(mkfifo(at("fifo"), 0644), 0);
	ck_assert_int_eq(mkdir(at("adir"), 0755), 0);
	ck_assert_int_eq(symlink("img", at("link")), 0);
	ck_assert_int_eq(symlink("/etc/passwd", at("img/lnk.debug")), 0);
	snprintf(logp, sizeof(logp), "%s/p.pmclog", dir);
	fd = open(logp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	ck_assert_int_ge(fd, 0);
	rec.u.initialize.version = 0x0A000000;
	rec.u.initialize.tsc_freq = 1000000000;
	append(fd, &rec);
	map_in(fd, 42, at("img/prog"));
	map_in(fd, 42, at("notelf"));
	map_in(fd, 42, at("fifo"));
	map_in(fd, 42, at("adir"));
	map_in(fd, 42, at("link/other"));	/* through a symbolic link */
	map_in(fd, 42, "[vdso]");		/* FILE.vdso stands for it */
	map_in(fd, 42, "relative/path");	/* nothing to open */
	map_in(fd, 42, "/a/../etc/shadow");	/* not a plain path */
	map_in(fd, PLOG_PID_KERNEL, "vmlinux"); /* /boot/kernel/vmlinux */
	rec = (struct plog_record){ .type = PLOG_TYPE_PROCEXEC, .tsc = 3 };
	rec.u.procexec.pid = 43;
	rec.u.procexec.path = at("img/other2");
	append(fd, &rec);
	close(fd);
	put_file(at("p.pmclog.kallsyms"), "ffffffff81000000 T _stext\n");
	ck_assert_int_eq(mkdir(at("p.pmclog.jit"), 0755), 0);
	put_file(at("p.pmclog.jit/perf-42.map"), "1000 10 f\n");
	put_file(at("p.pmclog.jit/perf-42.map.times"), "1764750000000000000\n");
	put_file(at("p.pmclog.jit/other.map"), "1000 10 f\n");
}

static void teardown(void)
{
	static const char *const names[] = {
		"img/prog",	     "img/prog.debug", "img/.debug/prog.debug", "img/other",
		"img/secret",	     "img/notelf.debug", "img/lnk.debug",     "notelf",
		"fifo",		     "link",	       "p.pmclog",	      "p.pmclog.kallsyms",
		"p.pmclog.jit/perf-42.map", "p.pmclog.jit/other.map",
	};
	static const char *const dirs[] = { "img/.debug", "img", "adir", "p.pmclog.jit" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		(void)unlink(at(names[i]));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		(void)rmdir(at(dirs[i]));
	(void)rmdir(dir);
}

/* What the broker answers for @path: "fd" (open), or the errno's name. */
static const char *ask(struct daemon_broker *b, const char *path)
{
	int fd = daemon_broker__open(b, path);

	if (fd >= 0) {
		int fl = fcntl(fd, F_GETFL);

		ck_assert_int_eq(fl & O_ACCMODE, O_RDONLY);
		ck_assert_int_ne(fl & O_NONBLOCK, 0);
		ck_assert_int_ne(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
		close(fd);
		return "fd";
	}
	switch (fd) {
	case -EACCES:
		return "EACCES";
	case -ENOEXEC:
		return "ENOEXEC";
	case -ENOENT:
		return "ENOENT";
	case -ELOOP:
		return "ELOOP";
	default:
		return strerror(-fd);
	}
}

START_TEST(test_policy)
{
	struct daemon_broker *b;
	char path[PATH_MAX];

	ck_assert_int_eq(daemon_broker__new(logp, &b), 0);
	/* (a) the log and its side files, by their names */
	ck_assert_str_eq(ask(b, logp), "fd");
	ck_assert_str_eq(ask(b, at("p.pmclog.kallsyms")), "fd");
	ck_assert_str_eq(ask(b, at("p.pmclog.vdso")), "ENOENT");
	ck_assert_str_eq(ask(b, at("p.pmclog.jit/perf-42.map")), "fd");
	ck_assert_str_eq(ask(b, at("p.pmclog.jit/perf-42.map.times")), "fd");
	ck_assert_str_eq(ask(b, at("p.pmclog.jit/perf-42.times")), "EACCES");
	ck_assert_str_eq(ask(b, at("p.pmclog.jit/perf-42.map.times.x")), "EACCES");
	ck_assert_str_eq(ask(b, at("p.pmclog.jit/perf-43.map")), "ENOENT");
	ck_assert_str_eq(ask(b, at("p.pmclog.jit/other.map")), "EACCES");
	ck_assert_str_eq(ask(b, at("p.pmclog.x")), "EACCES");
	ck_assert_str_eq(ask(b, at("p.pmclo")), "EACCES");
	/* (b) its images: regular ELF files only, no symbolic link on the way */
	ck_assert_str_eq(ask(b, at("img/prog")), "fd");
	ck_assert_str_eq(ask(b, at("notelf")), "ENOEXEC");
	ck_assert_str_eq(ask(b, at("fifo")), "ENOEXEC");
	ck_assert_str_eq(ask(b, at("adir")), "ENOEXEC");
	ck_assert_str_eq(ask(b, at("link/other")), "ELOOP");
	ck_assert_str_eq(ask(b, at("img/other2")), "ENOENT"); /* PROCEXEC's, gone */
	ck_assert_str_eq(ask(b, "/boot/kernel/vmlinux"), "ENOENT");
	ck_assert_str_eq(ask(b, "/a/../etc/shadow"), "EACCES");
	ck_assert_str_eq(ask(b, "relative/path"), "EACCES");
	ck_assert_str_eq(ask(b, "[vdso]"), "EACCES");
	/* not named: an ELF file and a secret beside an image, the system's files */
	ck_assert_str_eq(ask(b, at("img/other")), "EACCES");
	ck_assert_str_eq(ask(b, at("img/secret")), "EACCES");
	ck_assert_str_eq(ask(b, "/etc/passwd"), "EACCES");
	ck_assert_str_eq(ask(b, "/etc/shadow"), "EACCES");
	ck_assert_str_eq(ask(b, "/proc/self/environ"), "EACCES");
	/* (c) debug files beside an image: NAME.debug, ELF, no link */
	ck_assert_str_eq(ask(b, at("img/prog.debug")), "fd");
	ck_assert_str_eq(ask(b, at("img/.debug/prog.debug")), "fd");
	ck_assert_str_eq(ask(b, at("img/notelf.debug")), "ENOEXEC");
	ck_assert_str_eq(ask(b, at("img/lnk.debug")), "ENOEXEC"); /* the link itself */
	ck_assert_str_eq(ask(b, at("img/.debug/secret")), "EACCES");
	ck_assert_str_eq(ask(b, at("img/sub/x.debug")), "EACCES");
	ck_assert_str_eq(ask(b, at("img/./prog.debug")), "EACCES");
	ck_assert_str_eq(ask(b, at("img/../img/prog.debug")), "EACCES");
	ck_assert_str_eq(ask(b, at("x.debug")), "ENOENT"); /* beside notelf, fifo, adir */
	ck_assert_str_eq(ask(b, at("adir/x.debug")), "EACCES"); /* adir is no image's directory */
	/* (c) the debug directory, beneath it only */
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/00/%s.debug", "0000hwpmcd-none");
	ck_assert_str_eq(ask(b, path), "ENOENT");
	ck_assert_str_eq(ask(b, "/usr/lib/debug/../../../etc/passwd"), "EACCES");
	ck_assert_str_eq(ask(b, "/usr/lib/debugx/a.debug"), "EACCES");
	/* (d) JIT maps of a log of this boot without FILE.jit */
	ck_assert_str_eq(ask(b, "/proc/stat"), "fd");
	ck_assert_str_eq(ask(b, "/tmp/perf-999999999.map"), "ENOENT");
	ck_assert_str_eq(ask(b, "/tmp/perf-.map"), "EACCES");
	ck_assert_str_eq(ask(b, "/tmp/perf-1/../../etc/passwd.map"), "EACCES");
	daemon_broker__free(b);
}
END_TEST

struct served {
	struct daemon_broker *b;
	int sock;
	unsigned served, refused;
};

static void *serve_fn(void *arg)
{
	struct served *sv = arg;

	daemon_broker__serve(sv->b, sv->sock, &sv->served, &sv->refused);
	return NULL;
}

/* The broker on a socket, as a confined report asks it. */
START_TEST(test_serve)
{
	struct served sv = { 0 };
	pthread_t t;
	int sp[2], fd;
	char m[4];

	ck_assert_int_eq(daemon_broker__new(logp, &sv.b), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	sv.sock = sp[1];
	ck_assert_int_eq(pthread_create(&t, NULL, serve_fn, &sv), 0);
	fd = util_broker_ask(sp[0], at("img/prog"));
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(read(fd, m, 4), 4);
	ck_assert_int_eq(memcmp(m, "\177ELF", 4), 0);
	close(fd);
	ck_assert_int_eq(util_broker_ask(sp[0], "/etc/shadow"), -EACCES);
	ck_assert_int_eq(util_broker_ask(sp[0], at("fifo")), -ENOEXEC);
	/* Its bound: DAEMON_BROKER_REQUESTS_MAX answers, then EACCES for anything. */
	for (unsigned i = 3; i < DAEMON_BROKER_REQUESTS_MAX; i++)
		ck_assert_int_eq(util_broker_ask(sp[0], "/x"), -EACCES);
	ck_assert_int_eq(util_broker_ask(sp[0], at("img/prog")), -EACCES);
	close(sp[0]); /* the report's end: the broker returns */
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_uint_eq(sv.served, 2);
	ck_assert_uint_eq(sv.refused, DAEMON_BROKER_REQUESTS_MAX - 1);
	close(sp[1]);
	daemon_broker__free(sv.b);
}
END_TEST

/*
 * `hwpmcd --push-broker FILE` (daemon_broker_main()) in a child with its socket
 * as descriptor 3: serves, and holds CAP_DAC_READ_SEARCH alone (as root), no new
 * privileges, while it does.
 */
START_TEST(test_main)
{
	int sp[2], st, fd;
	char line[256], want[64];
	pid_t pid;
	FILE *f;
	long eff = -1, nnp = -1;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (dup2(sp[1], DAEMON_BROKER_FD) < 0)
			_exit(3);
		close(sp[0]);
		_exit(daemon_broker_main(logp));
	}
	close(sp[1]);
	fd = util_broker_ask(sp[0], at("img/prog")); /* it serves: it has dropped by now */
	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(want, sizeof(want), "/proc/%d/status", (int)pid);
	f = fopen(want, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "CapEff:", 7) == 0)
			eff = strtol(line + 7, NULL, 16);
		if (strncmp(line, "NoNewPrivs:", 11) == 0)
			nnp = strtol(line + 11, NULL, 10);
	}
	fclose(f);
	ck_assert_int_eq(nnp, 1);
	ck_assert_int_eq(eff, geteuid() == 0 ? 1l << 2 /* CAP_DAC_READ_SEARCH */ : 0);
	close(sp[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("daemon-broker");
	TCase *tc = tcase_create("broker");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_policy);
	tcase_add_test(tc, test_serve);
	tcase_add_test(tc, test_main);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
