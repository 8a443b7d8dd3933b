/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tools-confine.c: Check suite for src/tools/tools-confine.c (`hwpmc report
 * --confine`).
 *
 * Each case confines a forked child and has it try what the filter must refuse
 * (EPERM; clone3 and openat2 ENOSYS) and what a report needs (reading files, a
 * pipe, a thread, mmap, an output to a descriptor named /dev/fd/N); it must leave
 * the test's file and directory as they were.  The child sends back the first
 * check that went wrong, or "ok".  As root it must also have become nobody with
 * CAP_DAC_READ_SEARCH alone (the integration test reads that from /proc too).
 * Under valgrind, which has no seccomp, the filter is not there to test: those
 * checks are skipped (the plain run makes them).  Built with AddressSanitizer,
 * clone and ptrace stay allowed (LeakSanitizer needs them at exit), and are not
 * checked.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <valgrind/valgrind.h>

#include "hwpmcd/common.h"
#include "hwpmcd/files.h"
#include "tools-int.h"

#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN 1
#endif
#endif

static char dir[64];

/* The field @name of /proc/self/status as a number (base @base), or -1. */
static long status_field(const char *name, int base)
{
	char line[256];
	long v = -1;
	size_t n = strlen(name);
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, name, n) == 0 && line[n] == ':')
			v = strtol(line + n + 1, NULL, base);
	fclose(f);
	return v;
}

static void *thread_fn(void *arg)
{
	return arg;
}

/* errno of a call that must fail with @want, or a description of what happened. */
#define REFUSED(call, want, what)                                                                  \
	do {                                                                                       \
		errno = 0;                                                                         \
		long rc_ = (long)(call);                                                           \
		if (rc_ != -1 || errno != (want)) {                                                \
			snprintf(msg, sizeof(msg), "%s: returned %ld, errno %d (%s)", what, rc_,   \
				 errno, strerror(errno));                                          \
			return;                                                                    \
		}                                                                                  \
	} while (0)
#define NEEDED(cond, what)                                                                         \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			snprintf(msg, sizeof(msg), "%s: %s", what, strerror(errno));               \
			return;                                                                    \
		}                                                                                  \
	} while (0)

static char msg[512];

/* Runs in the child: confine, then every check; msg says the first failure, or "ok". */
static void child_checks(bool root)
{
	int p[2], held[2], fd, e;
	char b[16], path[128];
	pid_t peer;
	pthread_t t;
	void *m;
	bool filter = !RUNNING_ON_VALGRIND;

	/*
	 * A process of the same user as the confined one (nobody, when root runs the
	 * test): its credentials alone would let the child signal it, change its limits
	 * and priority.  It ends when the child does (its pipe's last writer).
	 */
	NEEDED(pipe(held) == 0, "a pipe");
	peer = fork();
	NEEDED(peer >= 0, "fork");
	if (peer == 0) {
		close(held[1]);
		if (root &&
		    (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0))
			_exit(1);
		(void)!read(held[0], b, 1);
		_exit(0);
	}
	close(held[0]); /* held[1] stays open until the child exits */
	e = tools_confine();
	NEEDED(e == 0, "tools_confine");
	NEEDED(status_field("NoNewPrivs", 10) == 1, "no new privileges");
	if (root) {
		NEEDED(getuid() == 65534 && geteuid() == 65534 && getgid() == 65534, "user nobody");
		NEEDED(status_field("CapEff", 16) == 1L << CAP_DAC_READ_SEARCH,
		       "CAP_DAC_READ_SEARCH alone");
	} else {
		NEEDED(status_field("CapEff", 16) == 0, "no capability");
	}
	/* What a report needs. */
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	NEEDED(fd >= 0 && read(fd, b, 4) == 4 && memcmp(b, "\177ELF", 4) == 0, "reading a file");
	close(fd);
	NEEDED(pipe(p) == 0 && write(p[1], "x", 1) == 1 && read(p[0], b, 1) == 1, "a pipe");
	m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	NEEDED(m != MAP_FAILED && munmap(m, 1 << 20) == 0, "mmap");
	NEEDED(pthread_create(&t, NULL, thread_fn, NULL) == 0 && pthread_join(t, NULL) == 0,
	       "a thread");
	/* An output: a descriptor it was given, named as the push names it. */
	snprintf(path, sizeof(path), "/dev/fd/%d", p[1]);
	{
		struct util_output o;
		char err[256];

		fd = util_output_open(path, 0, &o, err, sizeof(err));
		NEEDED(fd == 0 && write(o.fd, "y", 1) == 1 && read(p[0], b, 1) == 1 && b[0] == 'y',
		       "an output to a descriptor (util_output_open of /dev/fd/N)");
		if (fd == 0)
			util_output__abandon(&o);
	}
	snprintf(path, sizeof(path), "%s/kept", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	NEEDED(fd >= 0 && read(fd, b, 4) == 4, "reading a file of the test's");
	close(fd);
	if (!filter) {
		snprintf(msg, sizeof(msg), "ok");
		return;
	}
	NEEDED(status_field("Seccomp", 10) == 2, "a seccomp filter (Seccomp: 2)");
	/* What it refuses. */
	REFUSED(socket(AF_INET, SOCK_STREAM, 0), EPERM, "socket(AF_INET)");
	REFUSED(socket(AF_UNIX, SOCK_DGRAM, 0), EPERM, "socket(AF_UNIX)");
	REFUSED(socketpair(AF_UNIX, SOCK_STREAM, 0, p), EPERM, "socketpair");
	REFUSED(sendto(1, "x", 1, 0, NULL, 0), EPERM, "sendto");
	{
		char *const argv[] = { "true", NULL };

		REFUSED(execve("/bin/true", argv, argv + 1), EPERM, "execve");
	}
	REFUSED(syscall(SYS_open_by_handle_at, AT_FDCWD, NULL, O_RDONLY), EPERM,
		"open_by_handle_at");
	/* Its own pid: what credentials allow, so that EPERM is the filter's. */
	REFUSED(syscall(SYS_process_vm_readv, getpid(), NULL, 0, NULL, 0, 0), EPERM,
		"process_vm_readv");
	REFUSED(syscall(SYS_pidfd_open, getpid(), 0), EPERM, "pidfd_open");
	REFUSED(kill(getpid(), 0), EPERM, "kill");
	NEEDED(syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), 0) == 0, "tgkill of itself");
	REFUSED(syscall(SYS_tgkill, peer, peer, 0), EPERM, "tgkill of another process");
	REFUSED(syscall(SYS_tgkill, (long)peer | 1l << 32, peer, 0), EPERM,
		"tgkill of another process, high bits set");
	REFUSED(syscall(SYS_tkill, peer, 0), EPERM, "tkill");
	{
		struct rlimit rl;

		NEEDED(getrlimit(RLIMIT_NOFILE, &rl) == 0, "its own limits");
		REFUSED(prlimit(peer, RLIMIT_NOFILE, NULL, &rl), EPERM,
			"prlimit of another process");
	}
	REFUSED(setpriority(PRIO_PROCESS, (id_t)peer, 19), EPERM, "setpriority of another process");
	REFUSED(unshare(CLONE_NEWUSER), EPERM, "unshare");
	REFUSED(syscall(SYS_bpf, 0, NULL, 0), EPERM, "bpf");
	REFUSED(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0), EPERM, "perf_event_open");
	REFUSED(syscall(SYS_io_uring_setup, 1, NULL), EPERM, "io_uring_setup");
	REFUSED(syscall(SYS_userfaultfd, 0), EPERM, "userfaultfd");
	REFUSED(ioctl(0, TIOCSTI, "x"), EPERM, "ioctl(TIOCSTI)");
	/* The kernel takes 32 bits of the request: high bits must not get it past. */
	REFUSED(syscall(SYS_ioctl, 0, 0xffffffff00000000ul | TIOCSTI, "x"), EPERM,
		"ioctl(TIOCSTI with high bits set)");
	/*
	 * The file is the test's, mode 0666 in a directory of mode 0777: its
	 * credentials alone would let the child change it or make others.
	 */
	REFUSED(open(path, O_WRONLY | O_CLOEXEC), EPERM, "open(O_WRONLY)");
	REFUSED(open(path, O_RDWR | O_CLOEXEC), EPERM, "open(O_RDWR)");
	REFUSED(open(path, O_RDONLY | O_TRUNC | O_CLOEXEC), EPERM, "open(O_TRUNC)");
	REFUSED(openat(AT_FDCWD, path, O_WRONLY | O_APPEND | O_CLOEXEC), EPERM, "openat(O_WRONLY)");
	{
		char made[160];

		snprintf(made, sizeof(made), "%s/made", dir);
		REFUSED(openat(AT_FDCWD, made, O_RDONLY | O_CREAT | O_CLOEXEC, 0644), EPERM,
			"openat(O_CREAT)");
		REFUSED(creat(made, 0644), EPERM, "creat");
		REFUSED(mkdir(made, 0755), EPERM, "mkdir");
	}
	REFUSED(syscall(SYS_openat2, AT_FDCWD, path, NULL, 0), ENOSYS, "openat2");
	REFUSED(truncate(path, 0), EPERM, "truncate");
	REFUSED(unlink(path), EPERM, "unlink");
	{
		char to[160];

		snprintf(to, sizeof(to), "%s/moved", dir);
		REFUSED(rename(path, to), EPERM, "rename");
		REFUSED(link(path, to), EPERM, "link");
		REFUSED(symlink(path, to), EPERM, "symlink");
	}
	REFUSED(chmod(path, 0777), EPERM, "chmod");
	REFUSED(syscall(SYS_clone3, NULL, 0), ENOSYS, "clone3");
#ifndef ASAN
	REFUSED(fork(), EPERM, "fork");
	REFUSED(ptrace(PTRACE_TRACEME, 0, NULL, NULL), EPERM, "ptrace");
#endif
	snprintf(msg, sizeof(msg), "ok");
}

/* Fork, run the checks confined in the child, return what it said. */
static const char *run_confined(void)
{
	static char got[sizeof(msg)];
	int p[2], st;
	ssize_t n;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[0]);
		snprintf(msg, sizeof(msg), "no result");
		child_checks(getuid() == 0);
		(void)!write(p[1], msg, strlen(msg));
		_exit(0);
	}
	close(p[1]);
	n = read(p[0], got, sizeof(got) - 1);
	got[n > 0 ? n : 0] = '\0';
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the confined child died: status %d",
		      st);
	return got;
}

START_TEST(test_confine)
{
	const char *got = run_confined();

	ck_assert_msg(strcmp(got, "ok") == 0, "confined: %s", got);
}
END_TEST

/* The test's file as it was, under its name, and nothing else in the directory. */
START_TEST(test_confine_files_kept)
{
	char path[128], b[8] = { 0 };
	struct stat st;
	int fd;

	ck_assert_str_eq(run_confined(), "ok");
	snprintf(path, sizeof(path), "%s/kept", dir);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(read(fd, b, sizeof(b)), 4);
	ck_assert_str_eq(b, "kept");
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0666);
	close(fd);
	snprintf(path, sizeof(path), "%s/made", dir);
	ck_assert_int_eq(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/moved", dir);
	ck_assert_int_eq(access(path, F_OK), -1);
}
END_TEST

static void setup(void)
{
	char path[128];
	int fd;

	snprintf(dir, sizeof(dir), "/tmp/test-confine.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* What nobody could change, make or remove here without the filter. */
	ck_assert_int_eq(chmod(dir, 0777), 0);
	snprintf(path, sizeof(path), "%s/kept", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "kept", 4), 4);
	ck_assert_int_eq(fchmod(fd, 0666), 0);
	close(fd);
}

static void teardown(void)
{
	char path[128];

	static const char *const names[] = { "kept", "made", "moved" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		(void)unlink(path);
		(void)rmdir(path);
	}
	(void)rmdir(dir);
}

static Suite *confine_suite(void)
{
	Suite *s = suite_create("tools-confine");
	TCase *tc = tcase_create("confine");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_confine);
	tcase_add_test(tc, test_confine_files_kept);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(confine_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
