/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tools-confine.c: Check suite for src/tools/tools-confine.c (`hwpmc report
 * --confine`, by hand and with a broker as hwpmcd's push runs it).
 *
 * Each case confines a forked child and has it try what must be refused and what
 * a report needs; the child sends back the first check that went wrong, or "ok".
 *
 *   - Every system call number of x86-64 (0 to CONFINE_NR_END, gaps and numbers no
 *     kernel has yet included) is made by a confined child with harmless arguments
 *     under a second seccomp filter that hands a call to this test (a user
 *     notification) only if the confinement's filter let it through, so nothing is
 *     ever run: the numbers that got through must be exactly the allow-list below
 *     (written out here, not taken from tools-confine.c), all others EPERM.  The
 *     calls allowed on their arguments alone (fcntl, ioctl, mmap, mprotect, tgkill,
 *     openat, sendmsg, recvmsg, clone) are then made with the arguments that must
 *     pass and those that must not.
 *   - The review's two exploits: F_SETOWN + F_SETSIG(SIGKILL) + O_ASYNC on a pipe
 *     aimed at a process of the child's own uid (and, as root, at a root process
 *     from a child left uid 0, the daemon's case under the unit), which must live;
 *     fchmodat2 (452) of a file the child owns, whose mode must stay.  Both got
 *     through the deny-list this replaced (see the commit).
 *   - Landlock alone (without the seccomp filter): no file made, no signal (fown
 *     included) out of the sandbox, no path read when brokered.
 *   - The broker: a brokered child opens nothing itself, and reads what the broker
 *     (this test) gives it; as root it is nobody with no capability, not dumpable.
 *
 * Under valgrind, which has no seccomp (nor Landlock), the filters are not there to
 * test: those checks are skipped (the plain run makes them).  Built with
 * AddressSanitizer, LeakSanitizer's exit check needs a few more calls (clone of its
 * tracer, ptrace, wait4, futex, ...); the allow-list below has them too then.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <valgrind/valgrind.h>

#include "hwpmcd/common-open.h"
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

/*
 * Numbers enumerated: every x86-64 system call is below 512 (512..547 are x32's
 * own, reached only with the x32 bit), the highest today near 470.
 */
#define CONFINE_NR_END 600
/* args[5] of an enumerated call: the notification filter hands only such calls on. */
#define COOKIE 0x5eccc0de600dd00dull
/* What this test answers a call the confinement let through. */
#define PASSED_ERRNO ECHRNG

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

static char dir[64];
static bool root;
static uid_t child_uid; /* what the confined child's uid will be */

/*
 * The allow-list, as a confined report may make them with any arguments (or with
 * all zero, for those allowed on their arguments: mmap and mprotect without
 * PROT_EXEC, and by hand openat for reading).  Keep in step with tools-confine.c:
 * a call added there fails here until it is added here, on purpose.
 */
static const long allowed_both[] = {
	SYS_read, SYS_write, SYS_writev, SYS_pread64, SYS_lseek, SYS_close, SYS_fstat,
	SYS_newfstatat, SYS_brk, SYS_mmap, SYS_mprotect, SYS_munmap, SYS_mremap, SYS_madvise,
	SYS_getrandom, SYS_sysinfo, SYS_exit_group, SYS_rt_sigreturn, SYS_rt_sigprocmask,
	SYS_rt_sigaction, SYS_getpid, SYS_gettid, SYS_getuid, SYS_geteuid, SYS_getgid,
	SYS_getegid, SYS_clock_gettime, SYS_restart_syscall,
#ifdef ASAN
	/* LeakSanitizer at exit (tools-confine.c says which does what) */
	SYS_ptrace, SYS_wait4, SYS_futex, SYS_exit, SYS_sched_yield, SYS_sigaltstack,
	SYS_getppid, SYS_open, SYS_getdents, SYS_openat, SYS_getdents64, SYS_readlink,
#endif
};
static const long allowed_by_hand[] = { SYS_openat, SYS_getdents64, SYS_readlink };

static bool listed(const long *v, size_t n, long nr)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == nr)
			return true;
	return false;
}

static bool expect_allowed(long nr, bool brokered)
{
	return listed(allowed_both, ARRAY_SIZE(allowed_both), nr) ||
	       (!brokered && listed(allowed_by_hand, ARRAY_SIZE(allowed_by_hand), nr));
}

/* ---- helpers -------------------------------------------------------------------------- */

/* The field @name of /proc/@pid/status as a number (base @base), or -1. */
static long status_field(pid_t pid, const char *name, int base)
{
	char line[256], path[64];
	long v = -1;
	size_t n = strlen(name);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, name, n) == 0 && line[n] == ':')
			v = strtol(line + n + 1, NULL, base);
	fclose(f);
	return v;
}

static char msg[2048];

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

/*
 * A process of the uid the confined child will have (nobody as root, else the
 * test's own), or root's if @as_root: its credentials alone would let the child
 * signal it, change its limits and priority.  It waits for the end of *@hold
 * (closed by the caller) and exits 0; killed, it did not live.
 */
static pid_t peer_start(bool as_root, int *hold)
{
	int p[2];
	pid_t pid;
	char b;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[1]);
		if (root && !as_root &&
		    (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0))
			_exit(3);
		(void)!read(p[0], &b, 1);
		_exit(0);
	}
	close(p[0]);
	*hold = p[1];
	return pid;
}

/* The peer's end: 0 if it lived to exit 0, else its wait status. */
static int peer_end(pid_t pid, int hold)
{
	int st;

	close(hold);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : st;
}

/*
 * The test's broker: the file "kept" of the test directory, by that path, and
 * nothing else (EACCES), as hwpmcd's push thread answers a confined report.
 */
static void serve_one(int sock, bool *gone)
{
	char path[UTIL_BROKER_PATH_MAX], kept[128];
	int r, fd;

	r = util_broker_recv(sock, path, sizeof(path));
	if (r == 0 || (r < 0 && r != -EPROTO)) {
		*gone = true;
		return;
	}
	snprintf(kept, sizeof(kept), "%s/kept", dir);
	fd = r == 1 && strcmp(path, kept) == 0 ? open(kept, O_RDONLY | O_CLOEXEC) : -EACCES;
	(void)util_broker_reply(sock, fd);
	if (fd >= 0)
		close(fd);
}

struct run;
typedef void child_fn(struct run *r, int broker);

struct run {
	bool brokered;
	child_fn *fn;
	void *arg;
	/* After the child said "C" (confined), while it waits: a look at /proc/PID. */
	void (*look)(pid_t pid, void *arg);
	int go[2]; /* the child waits on go[0] for the look to be over */
	/*
	 * With @notify, the child sends a seccomp listener on lsp[1] before it confines
	 * itself; the test answers each call it is handed PASSED_ERRNO and marks it in
	 * seen[] (numbers below CONFINE_NR_END).
	 */
	bool notify;
	int lsp[2];
	bool *seen;
};

static int recv_fd(int sock);

/* Answer one notification on @lfd: PASSED_ERRNO, and the number marked seen. */
static void answer(int lfd, bool *seen)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;

	memset(&req, 0, sizeof(req));
	if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return; /* the child went away meanwhile */
	memset(&resp, 0, sizeof(resp));
	resp.id = req.id;
	if (req.data.args[5] == COOKIE) {
		bool zero = true; /* the enumeration's calls, not the conditional ones after */

		for (int i = 0; i < 5; i++)
			zero &= req.data.args[i] == 0;
		if (zero && req.data.nr >= 0 && req.data.nr < CONFINE_NR_END && seen)
			seen[req.data.nr] = true;
		resp.error = -PASSED_ERRNO;
	} else {
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	}
	(void)ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

/*
 * Fork, run @r->fn in the child (it confines itself, then checks), serve its
 * broker if @r->brokered and its notifications if @r->notify; return what it said.
 */
static const char *run_child(struct run *r)
{
	static char got[8192];
	int res[2], sp[2] = { -1, -1 }, st, lfd = -1;
	size_t len = 0;
	bool gone = false;
	pid_t pid;

	ck_assert_int_eq(pipe2(res, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(r->go, O_CLOEXEC), 0);
	r->lsp[0] = r->lsp[1] = -1;
	if (r->notify)
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, r->lsp), 0);
	if (r->brokered)
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(res[0]);
		close(r->go[1]);
		if (sp[0] >= 0)
			close(sp[0]);
		if (r->lsp[0] >= 0)
			close(r->lsp[0]);
		snprintf(msg, sizeof(msg), "no result");
		/* The result goes to fd 100, out of the way of the report's own. */
		if (dup2(res[1], 100) < 0)
			_exit(2);
		r->fn(r, sp[1]);
		(void)!write(100, msg, strlen(msg));
		_exit(0);
	}
	close(res[1]);
	close(r->go[0]);
	if (sp[1] >= 0)
		close(sp[1]);
	if (r->lsp[1] >= 0)
		close(r->lsp[1]);
	for (;;) {
		struct pollfd pf[4] = { { res[0], POLLIN, 0 },
					{ gone ? -1 : sp[0], POLLIN, 0 },
					{ r->lsp[0], POLLIN, 0 },
					{ lfd, POLLIN, 0 } };
		ssize_t n;

		ck_assert_int_ge(poll(pf, 4, -1), 0);
		if (pf[1].revents)
			serve_one(sp[0], &gone);
		if (pf[2].revents) { /* the listener, or the child's end gone */
			lfd = recv_fd(r->lsp[0]);
			close(r->lsp[0]);
			r->lsp[0] = -1;
		}
		if (pf[3].revents & POLLIN)
			answer(lfd, r->seen);
		else if (pf[3].revents) { /* POLLHUP: no task of the filter is left */
			close(lfd);
			lfd = -1;
		}
		if (!pf[0].revents)
			continue;
		n = read(res[0], got + len, sizeof(got) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == 1 && got[0] == 'C') { /* confined: look at it, then let it go on */
			if (r->look)
				r->look(pid, r->arg);
			len = 0;
			close(r->go[1]);
			r->go[1] = -1;
		}
	}
	got[len] = '\0';
	close(res[0]);
	if (r->go[1] >= 0)
		close(r->go[1]);
	if (sp[0] >= 0)
		close(sp[0]);
	if (r->lsp[0] >= 0)
		close(r->lsp[0]);
	if (lfd >= 0)
		close(lfd);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the confined child died: status %d",
		      st);
	return got;
}

/* In the child: say "confined", wait until the test has looked. */
static void confined_wait(struct run *r)
{
	char b;

	(void)!write(100, "C", 1);
	(void)!read(r->go[0], &b, 1);
}

/* ---- by hand ------------------------------------------------------------------------- */

static void *thread_fn(void *arg)
{
	return arg;
}

/* By hand (no broker): what a report needs works, the rest is refused. */
static void child_by_hand(struct run *r, int broker)
{
	struct { pid_t peer; } *a = r->arg;
	int p[2], fd, e;
	char b[16], path[128];
	pthread_t t;
	void *m;
	bool filter = !RUNNING_ON_VALGRIND;

	(void)broker;
	NEEDED(pipe2(p, O_CLOEXEC) == 0, "a pipe made before");
	e = tools_confine(-1);
	NEEDED(e == 0, "tools_confine");
	NEEDED(status_field(getpid(), "NoNewPrivs", 10) == 1, "no new privileges");
	if (root) {
		NEEDED(getuid() == 65534 && geteuid() == 65534 && getgid() == 65534, "user nobody");
		NEEDED(status_field(getpid(), "CapEff", 16) == 1L << CAP_DAC_READ_SEARCH,
		       "CAP_DAC_READ_SEARCH alone");
	} else {
		NEEDED(status_field(getpid(), "CapEff", 16) == 0, "no capability");
	}
	/* What a report needs. */
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	NEEDED(fd >= 0 && read(fd, b, 4) == 4 && memcmp(b, "\177ELF", 4) == 0, "reading a file");
	close(fd);
	fd = util_open_read("/proc/self/exe", UTIL_OPEN_REGULAR, NULL);
	NEEDED(fd >= 0 && read(fd, b, 4) == 4, "util_open_read of a regular file");
	close(fd);
	NEEDED(write(p[1], "x", 1) == 1 && read(p[0], b, 1) == 1, "a pipe it was given");
	m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	NEEDED(m != MAP_FAILED && munmap(m, 1 << 20) == 0, "mmap");
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
	{
		DIR *d = opendir(dir); /* a directory of logs */
		bool found = false;
		struct dirent *de;

		NEEDED(d != NULL, "opendir");
		while ((de = readdir(d)) != NULL)
			found |= strcmp(de->d_name, "kept") == 0;
		closedir(d);
		NEEDED(found, "readdir");
	}
	if (!filter) {
		snprintf(msg, sizeof(msg), "ok");
		return;
	}
	NEEDED(status_field(getpid(), "Seccomp", 10) == 2, "a seccomp filter (Seccomp: 2)");
	/* What it refuses: a report makes no pipe, no thread, no process. */
	REFUSED(pipe(p), EPERM, "pipe");
	NEEDED(pthread_create(&t, NULL, thread_fn, NULL) != 0, "a thread refused");
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
	REFUSED(syscall(SYS_tgkill, a->peer, a->peer, 0), EPERM, "tgkill of another process");
	REFUSED(syscall(SYS_tgkill, (long)a->peer | 1l << 32, a->peer, 0), EPERM,
		"tgkill of another process, high bits set");
	REFUSED(syscall(SYS_tkill, a->peer, 0), EPERM, "tkill");
	{
		struct rlimit rl = { 0, 0 };

		REFUSED(prlimit(a->peer, RLIMIT_NOFILE, NULL, &rl), EPERM,
			"prlimit of another process");
	}
	REFUSED(setpriority(PRIO_PROCESS, (id_t)a->peer, 19), EPERM,
		"setpriority of another process");
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
	REFUSED(openat(AT_FDCWD, path, O_RDONLY | O_APPEND | O_CLOEXEC), EPERM, "openat(O_APPEND)");
	REFUSED(openat(AT_FDCWD, dir, O_TMPFILE | O_RDWR, 0600), EPERM, "openat(O_TMPFILE)");
	{
		char made[160];

		snprintf(made, sizeof(made), "%s/made", dir);
		REFUSED(openat(AT_FDCWD, made, O_RDONLY | O_CREAT | O_CLOEXEC, 0644), EPERM,
			"openat(O_CREAT)");
		REFUSED(creat(made, 0644), EPERM, "creat");
		REFUSED(mkdir(made, 0755), EPERM, "mkdir");
	}
	REFUSED(syscall(SYS_openat2, AT_FDCWD, path, NULL, 0), EPERM, "openat2");
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
	REFUSED(syscall(SYS_fchmodat2, AT_FDCWD, path, 0777, 0), EPERM, "fchmodat2");
	REFUSED(syscall(SYS_clone3, NULL, 0), EPERM, "clone3");
	REFUSED(fork(), EPERM, "fork");
#ifndef ASAN
	REFUSED(ptrace(PTRACE_TRACEME, 0, NULL, NULL), EPERM, "ptrace");
#endif
	snprintf(msg, sizeof(msg), "ok");
}

START_TEST(test_confine)
{
	struct { pid_t peer; } a;
	int hold;
	struct run r = { .brokered = false, .fn = child_by_hand, .arg = &a };
	const char *got;

	a.peer = peer_start(false, &hold);
	got = run_child(&r);
	ck_assert_int_eq(peer_end(a.peer, hold), 0);
	ck_assert_msg(strcmp(got, "ok") == 0, "confined: %s", got);
}
END_TEST

/* The test's file as it was, under its name, and nothing else in the directory. */
START_TEST(test_confine_files_kept)
{
	struct { pid_t peer; } a;
	char path[128], b[8] = { 0 };
	struct run r = { .brokered = false, .fn = child_by_hand, .arg = &a };
	struct stat st;
	int fd, hold;

	a.peer = peer_start(false, &hold);
	ck_assert_str_eq(run_child(&r), "ok");
	ck_assert_int_eq(peer_end(a.peer, hold), 0);
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

/* ---- brokered ------------------------------------------------------------------------ */

static void child_brokered(struct run *r, int broker)
{
	char b[8], path[128];
	int fd, p[2];
	bool filter = !RUNNING_ON_VALGRIND;

	NEEDED(tools_confine(broker) == 0, "tools_confine with a broker");
	confined_wait(r);
	snprintf(path, sizeof(path), "%s/kept", dir);
	fd = util_open_read(path, UTIL_OPEN_REGULAR, NULL);
	NEEDED(fd >= 0 && read(fd, b, 4) == 4 && memcmp(b, "kept", 4) == 0,
	       "the broker's file through util_open_read()");
	close(fd);
	NEEDED(util_open_read("/proc/self/exe", UTIL_OPEN_REGULAR, NULL) == -EACCES,
	       "what the broker refuses: EACCES");
	if (!filter) {
		snprintf(msg, sizeof(msg), "ok");
		return;
	}
	/* Nothing opened by itself: the broker's socket is its only way to a file. */
#ifndef ASAN
	REFUSED(open(path, O_RDONLY | O_CLOEXEC), EPERM, "open(O_RDONLY)");
	REFUSED(openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC), EPERM, "openat(O_RDONLY)");
	REFUSED(openat(AT_FDCWD, path, O_PATH | O_CLOEXEC), EPERM, "openat(O_PATH)");
#endif
	REFUSED(syscall(SYS_openat2, AT_FDCWD, path, NULL, 0), EPERM, "openat2");
	REFUSED(pipe(p), EPERM, "pipe");
	REFUSED(socket(AF_UNIX, SOCK_STREAM, 0), EPERM, "socket");
	REFUSED(syscall(SYS_fchmodat2, AT_FDCWD, path, 0777, 0), EPERM, "fchmodat2");
	snprintf(msg, sizeof(msg), "ok");
}

/* While the brokered child waits, confined: its credentials from /proc. */
static char looked[256];

static void look_brokered(pid_t pid, void *arg)
{
	struct stat st;
	char p[64];

	(void)arg;
	/* Not the /proc/PID directory: that stays its euid's whatever the dumpable flag. */
	snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
	snprintf(looked, sizeof(looked), "uid %ld caps %lx/%lx nnp %ld seccomp %ld owner %ld",
		 status_field(pid, "Uid", 10), (unsigned long)status_field(pid, "CapEff", 16),
		 (unsigned long)status_field(pid, "CapPrm", 16), status_field(pid, "NoNewPrivs", 10),
		 status_field(pid, "Seccomp", 10), stat(p, &st) == 0 ? (long)st.st_uid : -1l);
}

START_TEST(test_confine_brokered)
{
	struct run r = { .brokered = true, .fn = child_brokered, .look = look_brokered };
	char want[256];
	const char *got;

	got = run_child(&r);
	ck_assert_msg(strcmp(got, "ok") == 0, "brokered: %s", got);
	/*
	 * nobody (as root) with no capability at all; not dumpable, so its /proc files
	 * are root's and no process of its uid may ptrace it or take its descriptors.
	 */
	snprintf(want, sizeof(want), "uid %ld caps 0/0 nnp 1 seccomp %d owner 0", (long)child_uid,
		 RUNNING_ON_VALGRIND ? 0 : 2);
	ck_assert_str_eq(looked, want);
}
END_TEST

/* ---- every system call number ------------------------------------------------------- */

/* The notification filter: a call whose args[5] is COOKIE goes to the test, others pass. */
static int notify_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[5])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)COOKIE, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[5]) + 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(COOKIE >> 32), 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(f), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			    &prog);
}

static int send_fd(int sock, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	char b = 'L';
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;

	memset(&ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	char b;
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	int fd = -1;

	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	return fd;
}

/* One call with COOKIE as args[5]: 'A' if it got through the confinement, 'P' if EPERM. */
static char try6(long nr, long a0, long a1, long a2, long a3, long a4)
{
	long r;

	errno = 0;
	r = syscall(nr, a0, a1, a2, a3, a4, (long)COOKIE);
	if (r == -1 && errno == PASSED_ERRNO)
		return 'A';
	if (r == -1 && errno == EPERM)
		return 'P';
	return 'X';
}

/*
 * Numbers this kernel answers before any seccomp filter runs (x86-64's uretprobe
 * 335 and uprobe 336, since 6.11 and 6.16; 335 raises SIGILL outside a uprobe
 * trampoline): no filter can refuse them, so the enumeration leaves those two
 * out and says so, and fails on any other number found so.  Found by making
 * every number under a filter that answers all but write and exit_group with
 * errno 4000: anything else did not go through it.  A probe the call killed is
 * started again after that number.
 */
static bool bypass[CONFINE_NR_END];

static void find_bypass(void)
{
	long nr = 0;

	memset(bypass, 0, sizeof(bypass));
	while (nr < CONFINE_NR_END) {
		int p[2], st;
		pid_t pid;
		char c;

		ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			struct sock_filter f[] = {
				BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
				BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 2, 0),
				BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 1, 0),
				BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 4000),
				BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
			};
			struct sock_fprog prog = { .len = ARRAY_SIZE(f), .filter = f };

			close(p[0]);
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
			    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
				_exit(2);
			for (long n = nr; n < CONFINE_NR_END; n++) {
				long r = 0;

				errno = 0;
				if (n != SYS_write && n != SYS_exit_group)
					r = syscall(n, 0, 0, 0, 0, 0, 0);
				c = n == SYS_write || n == SYS_exit_group || (r == -1 && errno == 4000)
					    ? '.'
					    : 'B';
				(void)!write(p[1], &c, 1);
			}
			/* Not _exit(): AddressSanitizer's would run its exit check here. */
			syscall(SYS_exit_group, 0);
		}
		close(p[1]);
		while (nr < CONFINE_NR_END && read(p[0], &c, 1) == 1)
			bypass[nr++] = c == 'B';
		close(p[0]);
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_int_ne(WIFEXITED(st) && WEXITSTATUS(st) == 2, 1);
		if (nr < CONFINE_NR_END && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
			bypass[nr++] = true; /* it killed the probe */
	}
}

/* The confined child of the enumeration: every number, then the conditional calls. */
static void child_enumerate(struct run *r, int broker)
{
	static char got[CONFINE_NR_END + 1], cond[128];
	char path[128], *c = cond;
	int lfd, p[2];
	pid_t self = getpid();

	lfd = notify_filter();
	NEEDED(lfd >= 0, "the notification filter");
	NEEDED(send_fd(r->lsp[1], lfd) == 0, "sending the listener");
	close(lfd);
	close(r->lsp[1]);
	NEEDED(pipe2(p, O_CLOEXEC) == 0, "a pipe");
	NEEDED(tools_confine(r->brokered ? broker : -1) == 0, "tools_confine");
	for (long nr = 0; nr < CONFINE_NR_END; nr++)
		got[nr] = bypass[nr] ? 'S' : try6(nr, 0, 0, 0, 0, 0);
	got[CONFINE_NR_END] = '\0';
	/* The conditional ones: the result letters in the order cond_want() lists them. */
	snprintf(path, sizeof(path), "%s/kept", dir);
#define T(...) (*c++ = try6(__VA_ARGS__))
	T(SYS_fcntl, p[0], F_GETFD, 0, 0, 0);
	T(SYS_fcntl, p[0], F_GETFL, 0, 0, 0);
	T(SYS_fcntl, p[0], F_DUPFD_CLOEXEC, 3, 0, 0);
	T(SYS_fcntl, p[0], 1l << 32 | F_GETFD, 0, 0, 0);
	T(SYS_fcntl, p[0], F_SETOWN, 1, 0, 0);
	T(SYS_fcntl, p[0], F_SETOWN_EX, 0, 0, 0);
	T(SYS_fcntl, p[0], F_SETSIG, SIGKILL, 0, 0);
	T(SYS_fcntl, p[0], F_SETFL, O_ASYNC, 0, 0);
	T(SYS_fcntl, p[0], F_SETLEASE, F_RDLCK, 0, 0);
	T(SYS_fcntl, p[0], F_NOTIFY, 0, 0, 0);
	T(SYS_fcntl, p[0], F_SETPIPE_SZ, 4096, 0, 0);
	T(SYS_fcntl, p[0], F_DUPFD, 3, 0, 0);
	T(SYS_fcntl, p[0], F_SETFD, 0, 0, 0);
	T(SYS_fcntl, p[0], F_SETLK, 0, 0, 0);
	T(SYS_fcntl, p[0], 1l << 32 | F_SETOWN, 1, 0, 0);
	T(SYS_ioctl, 1, TCGETS, 0, 0, 0);
	T(SYS_ioctl, 1, TIOCGWINSZ, 0, 0, 0);
	T(SYS_ioctl, 1, TIOCSTI, 0, 0, 0);
	T(SYS_ioctl, 1, TIOCLINUX, 0, 0, 0);
	T(SYS_ioctl, 1, FIONREAD, 0, 0, 0);
	T(SYS_ioctl, 1, 0xffffffff00000000l | TIOCSTI, 0, 0, 0);
	T(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	T(SYS_mmap, 0, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	T(SYS_mprotect, 0, 4096, PROT_READ | PROT_WRITE, 0, 0);
	T(SYS_mprotect, 0, 4096, PROT_READ | PROT_EXEC, 0, 0);
	T(SYS_tgkill, self, self, 0, 0, 0);
	T(SYS_tgkill, self | 1l << 32, self, 0, 0, 0);
	T(SYS_tgkill, 1, 1, 0, 0, 0);
	T(SYS_sendmsg, broker >= 0 ? broker : 99, 0, 0, 0, 0);
	T(SYS_sendmsg, 1, 0, 0, 0, 0);
	T(SYS_recvmsg, broker >= 0 ? broker : 99, 0, 0, 0, 0);
	T(SYS_recvmsg, 1, 0, 0, 0, 0);
	T(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0);
	T(SYS_openat, AT_FDCWD, (long)path, O_PATH | O_CLOEXEC, 0, 0);
	T(SYS_openat, AT_FDCWD, (long)dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, 0);
	T(SYS_openat, AT_FDCWD, (long)path, O_WRONLY, 0, 0);
	T(SYS_openat, AT_FDCWD, (long)path, O_RDWR, 0, 0);
	T(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CREAT, 0600, 0);
	T(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_TRUNC, 0, 0);
	T(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_APPEND, 0, 0);
	T(SYS_openat, AT_FDCWD, (long)dir, O_TMPFILE | O_RDWR, 0600, 0);
	T(SYS_clone, CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD, 0, 0, 0, 0);
	T(SYS_clone, SIGCHLD, 0, 0, 0, 0);
#undef T
	*c = '\0';
	/* r9 (args[5]) still holds the cookie: a call with six zero arguments clears it. */
	(void)syscall(SYS_getpid, 0, 0, 0, 0, 0, 0);
	snprintf(msg, sizeof(msg), "ok %s %s", got, cond);
}

/*
 * The conditional calls of child_enumerate(), what each must give: A got
 * through, P refused; "b"/"h" first: A only brokered / by hand, else P.
 */
static const char *cond_want(bool brokered)
{
	static char w[128];
	const char *const v[] = {
		/* fcntl: F_GETFD, F_GETFL, F_DUPFD_CLOEXEC (and with high bits); none else */
		"A", "A", "A", "A", "P", "P", "P", "P", "P", "P", "P", "P", "P", "P", "P",
		/* ioctl: TCGETS and TIOCGWINSZ only, 32 bits compared */
		"A", "A", "P", "P", "P", "P",
		/* mmap and mprotect without PROT_EXEC */
		"A", "P", "A", "P",
		/* tgkill of itself only, 64 bits compared */
		"A", "P", "P",
		/* sendmsg and recvmsg on the broker's socket only */
		"bA", "P", "bA", "P",
#ifdef ASAN
		"A", "A", "A", /* openat to read: LeakSanitizer reads /proc at exit */
#else
		"hA", "hA", "hA", /* openat to read (a file, O_PATH, a directory): by hand only */
#endif
		/* openat to write, make, truncate, append; no thread, no process */
		"P", "P", "P", "P", "P", "P", "P", "P",
	};
	size_t k = 0;

	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		const char *s = v[i];

		if (s[0] == 'b' || s[0] == 'h')
			w[k++] = (s[0] == 'b') == brokered ? s[1] : 'P';
		else
			w[k++] = s[0];
	}
	w[k] = '\0';
	return w;
}

static void run_enumeration(bool brokered)
{
	static bool seen[CONFINE_NR_END];
	struct run r = { .brokered = brokered, .fn = child_enumerate, .notify = true,
			 .seen = seen };
	char bad[4096] = "", cond[128];
	const char *got, *want = cond_want(brokered);
	size_t nbad = 0;

	if (RUNNING_ON_VALGRIND)
		return; /* no seccomp under valgrind: nothing to enumerate */
	memset(seen, 0, sizeof(seen));
	find_bypass();
	got = run_child(&r);
	ck_assert_msg(strncmp(got, "ok ", 3) == 0 && strlen(got) > 3 + CONFINE_NR_END,
		      "enumeration: %s", got);
	for (long nr = 0; nr < CONFINE_NR_END; nr++) {
		bool allow = expect_allowed(nr, brokered);
		char c = got[3 + nr];

		if (bypass[nr] && (nr == 335 || nr == 336)) {
			fprintf(stderr, "# system call %ld: this kernel runs it before seccomp "
					"filters; left out\n", nr);
			continue;
		}
		if (bypass[nr]) { /* a call no filter can refuse, and not a known one: a hole */
			nbad++;
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), " %ld:bypass", nr);
			continue;
		}
		if ((allow && c == 'A' && seen[nr]) || (!allow && c == 'P' && !seen[nr]))
			continue;
		nbad++;
		if (strlen(bad) < 1200)
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), " %ld:%c", nr, c);
	}
	ck_assert_msg(nbad == 0,
		      "%s: %zu numbers not as the allow-list says (A passed, P EPERM):%s ...",
		      brokered ? "brokered" : "by hand", nbad, bad);
	snprintf(cond, sizeof(cond), "%s", got + 3 + CONFINE_NR_END + 1);
	ck_assert_msg(strcmp(cond, want) == 0, "%s: conditional calls %s, want %s",
		      brokered ? "brokered" : "by hand", cond, want);
}

START_TEST(test_syscalls_brokered)
{
	run_enumeration(true);
}
END_TEST

START_TEST(test_syscalls_by_hand)
{
	run_enumeration(false);
}
END_TEST

/* x32's numbers (the x32 bit set): refused (EPERM) or the caller killed (SIGSYS). */
static void child_x32(struct run *r, int broker)
{
	NEEDED(tools_confine(r->brokered ? broker : -1) == 0, "tools_confine");
	REFUSED(syscall(0x40000000 | SYS_getpid), EPERM, "x32 getpid");
	REFUSED(syscall(0x40000000 | SYS_openat, AT_FDCWD, "/", O_RDONLY), EPERM, "x32 openat");
	snprintf(msg, sizeof(msg), "ok");
}

START_TEST(test_x32)
{
	int res[2], st;
	pid_t pid;
	char got[256] = "";
	ssize_t n;

	if (RUNNING_ON_VALGRIND)
		return;
	/* The child may die of it: not through run_child(), which wants it to live. */
	ck_assert_int_eq(pipe2(res, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct run r = { .brokered = false };

		close(res[0]);
		child_x32(&r, -1);
		(void)!write(res[1], msg, strlen(msg));
		_exit(0);
	}
	close(res[1]);
	n = read(res[0], got, sizeof(got) - 1);
	got[n > 0 ? n : 0] = '\0';
	close(res[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg((WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS) ||
			      (WIFEXITED(st) && strcmp(got, "ok") == 0),
		      "x32: status %#x, %s", st, got);
}
END_TEST

/* ---- the review's exploits ------------------------------------------------------------ */

struct exploit {
	pid_t peer;
	bool stay_root; /* as root: keep uid 0 (no CAP_SETUID, as under the unit) */
};

/* Without CAP_SETUID and CAP_SETGID, as the daemon under the unit was: root stays root. */
static int drop_setuid(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	const uint32_t bits = 1u << CAP_SETUID | 1u << CAP_SETGID;

	if (syscall(SYS_capget, &h, d) < 0)
		return -1;
	d[0].effective &= ~bits;
	d[0].permitted &= ~bits;
	d[0].inheritable &= ~bits;
	return (int)syscall(SYS_capset, &h, d);
}

/*
 * F_SETOWN + F_SETSIG + O_ASYNC on a pipe: the next write sends the signal, here
 * SIGKILL, to the owner, with the credentials of the process that set it.
 */
static void child_fasync(struct run *r, int broker)
{
	struct exploit *x = r->arg;
	int p[2];

	NEEDED(pipe2(p, O_CLOEXEC) == 0, "a pipe");
	if (x->stay_root)
		NEEDED(drop_setuid() == 0, "no CAP_SETUID");
	NEEDED(tools_confine(r->brokered ? broker : -1) == 0, "tools_confine");
	/* All of it, whatever fails, as an exploit would; the first that passed is said. */
	{
		struct f_owner_ex o = { .type = F_OWNER_PID, .pid = x->peer };
		const char *passed = NULL;

		errno = 0;
		if (fcntl(p[0], F_SETOWN, x->peer) == 0 || errno != EPERM)
			passed = "F_SETOWN to another process";
		errno = 0;
		if ((fcntl(p[0], F_SETOWN_EX, &o) == 0 || errno != EPERM) && !passed)
			passed = "F_SETOWN_EX";
		errno = 0;
		if ((fcntl(p[0], F_SETSIG, SIGKILL) == 0 || errno != EPERM) && !passed)
			passed = "F_SETSIG";
		errno = 0;
		if ((fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK) == 0 || errno != EPERM) && !passed)
			passed = "F_SETFL O_ASYNC";
		/* The write that sends the signal, had those passed. */
		NEEDED(write(p[1], "x", 1) == 1, "writing to its pipe");
		if (passed) {
			snprintf(msg, sizeof(msg), "%s was not refused (EPERM)", passed);
			return;
		}
	}
	snprintf(msg, sizeof(msg), "ok");
}

static void run_fasync(bool brokered, bool stay_root)
{
	struct exploit x = { .stay_root = stay_root };
	struct run r = { .brokered = brokered, .fn = child_fasync, .arg = &x };
	const char *got;
	int hold, st;

	if (RUNNING_ON_VALGRIND)
		return; /* no filter to stop it under valgrind */
	x.peer = peer_start(stay_root, &hold);
	got = run_child(&r);
	st = peer_end(x.peer, hold);
	ck_assert_msg(st == 0, "%s%s: the peer (uid %d) died: status %#x (signal %d); the child said %s",
		      brokered ? "brokered" : "by hand", stay_root ? ", uid 0" : "",
		      stay_root ? 0 : (int)child_uid, st, WIFSIGNALED(st) ? WTERMSIG(st) : 0, got);
	if (!RUNNING_ON_VALGRIND)
		ck_assert_msg(strcmp(got, "ok") == 0, "fasync: %s", got);
}

START_TEST(test_exploit_fasync)
{
	run_fasync(true, false);
	run_fasync(false, false);
	if (root) /* the review's case: uid 0 under the unit, the daemon uid 0 too */
		run_fasync(false, true);
}
END_TEST

/* fchmodat2 (452, Linux 6.6) of a file whose owner the child is. */
static void child_fchmodat2(struct run *r, int broker)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/owned", dir);
	NEEDED(tools_confine(r->brokered ? broker : -1) == 0, "tools_confine");
	REFUSED(syscall(SYS_fchmodat2, AT_FDCWD, path, 0777, 0), EPERM, "fchmodat2");
	REFUSED(syscall(SYS_fchmodat, AT_FDCWD, path, 0777), EPERM, "fchmodat");
	snprintf(msg, sizeof(msg), "ok");
}

START_TEST(test_exploit_fchmodat2)
{
	struct run r = { .fn = child_fchmodat2 };
	char path[128];
	struct stat st;
	const char *got;
	int fd;

	if (RUNNING_ON_VALGRIND)
		return; /* no filter to stop it under valgrind */
	snprintf(path, sizeof(path), "%s/owned", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	if (root)
		ck_assert_int_eq(fchown(fd, child_uid, child_uid), 0);
	close(fd);
	for (int brokered = 0; brokered < 2; brokered++) {
		r.brokered = brokered;
		got = run_child(&r);
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_msg((st.st_mode & 07777) == 0600, "%s: the mode became %o; the child said %s",
			      brokered ? "brokered" : "by hand", st.st_mode & 07777, got);
		if (!RUNNING_ON_VALGRIND)
			ck_assert_msg(strcmp(got, "ok") == 0, "fchmodat2: %s", got);
	}
	unlink(path);
}
END_TEST

/* ---- Landlock alone ----------------------------------------------------------------- */

static void child_landlock(struct run *r, int broker)
{
	struct exploit *x = r->arg;
	char path[128];
	int abi = 0, e, p[2], fd;

	(void)broker;
	NEEDED(pipe2(p, O_CLOEXEC) == 0, "a pipe");
	NEEDED(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "no new privileges");
	e = tools_confine_landlock(r->brokered, &abi);
	if (e == -ENOSYS || e == -EOPNOTSUPP) {
		snprintf(msg, sizeof(msg), "skip: no Landlock");
		return;
	}
	NEEDED(e == 0, "tools_confine_landlock");
	snprintf(path, sizeof(path), "%s/made", dir);
	REFUSED(open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644), EACCES, "making a file");
	snprintf(path, sizeof(path), "%s/kept", dir);
	REFUSED(open(path, O_WRONLY | O_CLOEXEC), EACCES, "writing a file");
	if (abi >= 3)
		REFUSED(truncate(path, 0), EACCES, "truncating a file");
	REFUSED(unlink(path), EACCES, "removing a file");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->brokered) {
		NEEDED(fd < 0 && errno == EACCES, "no file read by its path (brokered)");
	} else {
		NEEDED(fd >= 0, "reading a file by hand");
		close(fd);
	}
	if (abi >= 6) {
		/* No signal out of the sandbox, a fown one (SIGIO's path) included. */
		REFUSED(kill(x->peer, 0), EPERM, "kill(0) of a process outside");
		NEEDED(fcntl(p[0], F_SETOWN, x->peer) == 0 && fcntl(p[0], F_SETSIG, SIGKILL) == 0 &&
			       fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK) == 0,
		       "fcntl (no seccomp filter here)");
		NEEDED(write(p[1], "x", 1) == 1, "the write that sends SIGIO");
	}
	snprintf(msg, sizeof(msg), "ok abi %d", abi);
}

START_TEST(test_landlock)
{
	struct exploit x = { 0 };
	struct run r = { .fn = child_landlock, .arg = &x };
	const char *got;
	int hold;

	if (RUNNING_ON_VALGRIND)
		return; /* valgrind does not know the Landlock calls */
	for (int brokered = 0; brokered < 2; brokered++) {
		r.brokered = brokered;
		x.peer = peer_start(false, &hold);
		got = run_child(&r);
		ck_assert_int_eq(peer_end(x.peer, hold), 0);
		if (strncmp(got, "skip", 4) == 0)
			return;
		ck_assert_msg(strncmp(got, "ok abi ", 7) == 0, "landlock: %s", got);
	}
}
END_TEST

static void setup(void)
{
	char path[128];
	int fd;

	root = geteuid() == 0;
	child_uid = root ? 65534 : geteuid();
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

	static const char *const names[] = { "kept", "made", "moved", "owned" };

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
	tcase_add_test(tc, test_confine_brokered);
	tcase_add_test(tc, test_syscalls_brokered);
	tcase_add_test(tc, test_syscalls_by_hand);
	tcase_add_test(tc, test_x32);
	tcase_add_test(tc, test_exploit_fasync);
	tcase_add_test(tc, test_exploit_fchmodat2);
	tcase_add_test(tc, test_landlock);
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
