/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-confine.c: `hwpmc report --confine`: what reading logs and ELF files
 * needs, nothing more, taken before any input is read (hwpmcd's push child
 * parses users' ELF files with it).
 *
 * PUBLIC INTERFACES (tools-int.h)
 *   tools_confine(), tools_confine_landlock()
 *
 * IMPLEMENTATION NOTES
 *   Two ways to run.  By hand (no broker), the report opens its files itself,
 *   read-only.  With a broker (--broker-fd N: hwpmcd's push), it opens none: each
 *   file is asked from the daemon over socket N (util_open_use_broker(), common-open.h),
 *   which opens only what the log names, and the report can reach no path at all.
 *
 *   Credentials.  No new privileges (no setuid exec).  By hand, as root with
 *   CAP_SETUID and CAP_SETGID, the user and group nobody (root without them, as
 *   under a sandbox that lacks them, stays uid 0); every capability but
 *   CAP_DAC_READ_SEARCH (read any file) dropped from the permitted, effective,
 *   inheritable and ambient sets.  With a broker no capability at all, and never
 *   uid 0: the daemon starts the report as nobody already, and a report that is
 *   still root becomes nobody here or refuses to run; it is made non-dumpable too,
 *   so that no other process of user nobody may ptrace it or take its broker's
 *   socket (pidfd_getfd).  The raw capget/capset calls rather than libcap: one
 *   library less at every start.
 *
 *   Landlock (tools_confine_landlock(), raw system calls of <linux/landlock.h>, as
 *   far as the kernel's ABI goes): a ruleset that handles every right to write,
 *   make, remove, rename or link files, truncate them (ABI 3), and use ioctls of
 *   devices opened later (ABI 5), to execute, and with a broker to read files and
 *   directories, and that grants none of them anywhere; TCP bind and connect
 *   handled with no port granted (ABI 4); signals (fown SIGIO/F_SETSIG ones
 *   included) and abstract unix sockets scoped to the sandbox (ABI 6): nothing
 *   outside it can be signalled.  Its ABI is said at debug level; a kernel without
 *   Landlock (ENOSYS, EOPNOTSUPP) or a sandbox that refuses its calls (EPERM) gets
 *   a warning, and the seccomp filter alone then confines the report.
 *
 *   System calls.  Last, a seccomp filter (libseccomp, loaded by dlopen() here
 *   only) that allows the calls a report makes and refuses all else with EPERM:
 *   an allow-list, so that a call added to the kernel after it was written is
 *   refused too.  The list is what strace -f showed of real confined reports of a
 *   system-wide log (--top, --callgraph, --folded, --json, --pprof, --flame and
 *   --calltree to /dev/fd/N, --inline, --srcline) after the filter is in, plus
 *   what glibc's abort() needs (rt_sigprocmask, rt_sigaction, tgkill of itself):
 *     reading and writing descriptors it has: read, write, writev, pread64,
 *       lseek, close, fstat, newfstatat (also stat(2) of a path: metadata only);
 *     memory: brk, mmap and mprotect without PROT_EXEC (no code made or loaded
 *       after the filter: libdw, the one library a report loads late, for
 *       --inline and --srcline, is loaded before it), munmap, mremap, madvise;
 *     getrandom (malloc, the report's seed), sysinfo (qsort), clock_gettime, the
 *       ids (getpid, gettid, getuid, geteuid, getgid, getegid), exit_group,
 *       signals of its own (rt_sigaction, rt_sigprocmask, rt_sigreturn,
 *       restart_syscall, tgkill of its own pid only);
 *     fcntl F_GETFD (libelf), F_GETFL and F_DUPFD_CLOEXEC (util_output_open() of
 *       /dev/fd/N) only: never F_SETOWN, F_SETOWN_EX, F_SETSIG, F_SETFL (O_ASYNC),
 *       F_SETLEASE, F_NOTIFY, locks or pipe sizes;
 *     ioctl TCGETS (isatty) and TIOCGWINSZ (the terminal's width) only, compared
 *       on the 32 bits the kernel reads;
 *     by hand: openat to read only (no O_WRONLY, O_RDWR, O_CREAT, O_TRUNC,
 *       O_APPEND, O_TMPFILE), getdents64 (a directory of logs), readlink (libdw);
 *     with a broker: sendmsg and recvmsg on the broker's socket only, and no
 *       open of any kind.
 *   So no socket, no exec, no process or thread (fork, clone, clone3), no pipe, no
 *   signal to anyone else (kill, tkill, fown), nothing that names another process
 *   (ptrace, process_vm_*, pidfd_*, prlimit64, setpriority, sched_set*), no file
 *   made or changed (chmod, fchmodat2, chown, rename, link, unlink, utimes...),
 *   no kernel interface (bpf, perf_event_open, io_uring, userfaultfd, keyrings,
 *   mounts, namespaces, open_by_handle_at).  A call of another architecture's
 *   ABI kills the process (libseccomp's default); x32's numbers get EPERM.
 *
 *   A kernel without seccomp filters (no seccomp(2), or ENOSYS, EINVAL from
 *   libseccomp's load; valgrind does not know seccomp(2), and with its prctl()
 *   fallback the filter would apply to valgrind itself) gets a warning, and the report runs with its
 *   credentials (and Landlock) alone; any other failure is an error.  Built with
 *   AddressSanitizer, LeakSanitizer's exit check needs more: clone of its tracer
 *   (with those exact flags), ptrace of the report's threads, wait4, futex, exit,
 *   sched_yield, sigaltstack, getppid, prctl of the dumpable flag, the ptracer and
 *   the parent-death signal, and reading /proc/self (open and openat to read,
 *   getdents, getdents64, readlink), so with a broker Landlock leaves reading
 *   alone; test builds only (found with SCMP_ACT_LOG and the kernel's log).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <pwd.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hwpmcd/common-open.h"
#include "hwpmcd/common.h"
#include "hwpmcd/log.h"
#include "tools-int.h"

#if defined(__SANITIZE_ADDRESS__)
#define TOOLS_CONFINE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TOOLS_CONFINE_LSAN 1
#endif
#endif

static int drop_credentials(bool brokered)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	/* By hand: in d[0], its number is 2.  With a broker: nothing. */
	const uint32_t keep = brokered ? 0 : 1u << CAP_DAC_READ_SEARCH;
	bool have;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (geteuid() == 0) {
		const struct passwd *pw = getpwnam("nobody");
		uid_t uid = pw ? pw->pw_uid : 65534;
		gid_t gid = pw ? pw->pw_gid : 65534;

		/* Keep the permitted set across the uid change; trimmed below. */
		if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
			return -errno;
		if (setgroups(0, NULL) == 0) {
			if (setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
				return -errno;
		} else if (errno != EPERM) {
			return -errno;
		} else if (brokered) {
			log_error("--confine: a report with a broker never runs as root, and this "
				  "one cannot become nobody (no CAP_SETUID)");
			return -EPERM;
		}
		if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
			return -errno;
	}
	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	have = keep && (d[0].permitted & keep) != 0;
	memset(d, 0, sizeof(d));
	d[0].permitted = d[0].effective = have ? keep : 0;
	if (syscall(SYS_capset, &h, d) < 0)
		return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	/* Its /proc files root's: no process of user nobody may ptrace it. */
	if (brokered && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

/* ---- Landlock ------------------------------------------------------------------------ */

/* Rights and fields of ABIs newer than the system's <linux/landlock.h> may know. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#define CONFINE_LL_NET_BIND_TCP (1ULL << 0)
#define CONFINE_LL_NET_CONNECT_TCP (1ULL << 1)
#define CONFINE_LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define CONFINE_LL_SCOPE_SIGNAL (1ULL << 1)

/* struct landlock_ruleset_attr as of ABI 6; older kernels take its first fields. */
struct confine_ll_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;	     /* ABI 6 */
};

int tools_confine_landlock(bool no_paths, int *ret_abi)
{
	struct confine_ll_attr a = { 0 };
	size_t size;
	long abi;
	int fd, e;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0)
		return -errno;
	/* ABI 1: EXECUTE (bit 0) to MAKE_SYM (bit 12), reading included. */
	a.handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_SYM | (LANDLOCK_ACCESS_FS_MAKE_SYM - 1);
	if (abi >= 2)
		a.handled_access_fs |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		a.handled_access_fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		a.handled_access_fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	if (!no_paths)
		a.handled_access_fs &= ~(LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR);
	size = sizeof(a.handled_access_fs);
	if (abi >= 4) {
		a.handled_access_net = CONFINE_LL_NET_BIND_TCP | CONFINE_LL_NET_CONNECT_TCP;
		size = offsetof(struct confine_ll_attr, scoped);
	}
	if (abi >= 6) {
		a.scoped = CONFINE_LL_SCOPE_ABSTRACT_UNIX_SOCKET | CONFINE_LL_SCOPE_SIGNAL;
		size = sizeof(a);
	}
	/* No rule: nothing handled is granted anywhere. */
	fd = (int)syscall(SYS_landlock_create_ruleset, &a, size, 0);
	if (fd < 0)
		return -errno;
	e = syscall(SYS_landlock_restrict_self, fd, 0) < 0 ? -errno : 0;
	(void)close(fd);
	if (e == 0 && ret_abi)
		*ret_abi = (int)abi;
	return e;
}

static int confine_landlock(bool brokered)
{
	bool no_paths = brokered;
	int abi = 0, e;

#ifdef TOOLS_CONFINE_LSAN
	no_paths = false; /* LeakSanitizer reads /proc/self at exit */
#endif
	e = tools_confine_landlock(no_paths, &abi);
	if (e == -ENOSYS || e == -EOPNOTSUPP || e == -EPERM) {
		log_warn("--confine: no Landlock here (%s): the seccomp filter alone confines the "
			 "report",
			 e == -EPERM ? "refused by a sandbox" : strerror(-e));
		return 0;
	}
	if (e < 0)
		return e;
	log_debug("--confine: Landlock ABI %d: no file written, made or removed, no TCP%s%s", abi,
		  abi >= 6 ? ", no signal out of the sandbox" : "",
		  no_paths ? ", no path read" : "");
	return 0;
}

/* ---- seccomp ------------------------------------------------------------------------- */

/*
 * Flags of a file opened to change it: O_TMPFILE's own bit (glibc's __O_TMPFILE
 * has O_DIRECTORY in it, which would refuse opendir()).  The filter refuses
 * them: no file is created here (check-includes.sh: files.h-exempt).
 */
#define CONFINE_O_WRITING (O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND | 020000000) /* files.h-exempt */

/* Which way of running a rule is for. */
enum { CONFINE_HAND = 1, CONFINE_BROKER = 2, CONFINE_BOTH = 3 };

/* What a conditional rule compares its argument with, beyond a constant. */
enum { DATUM_CONST, DATUM_SELF, DATUM_BROKER };

/*
 * Allowed: @nr when argument @arg compares so (@op against @a, and for
 * SCMP_CMP_MASKED_EQ (arg & @a) == @b), or always if @op is 0.  @datum: @a is the
 * report's own pid, or the broker's socket.  Several rules of one call: any may
 * allow it.  A name this architecture lacks is skipped.
 */
static const struct confine_allow {
	int nr;
	unsigned char modes;
	unsigned char datum;
	unsigned char arg;
	enum scmp_compare op;
	scmp_datum_t a, b;
} confine_allow[] = {
	/* descriptors it has */
	{ SCMP_SYS(read), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(write), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(writev), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(pread64), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(lseek), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(close), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(fstat), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(newfstatat), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	/* memory: nothing executable made after the filter */
	{ SCMP_SYS(brk), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(mmap), CONFINE_BOTH, 0, 2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0 },
	{ SCMP_SYS(mprotect), CONFINE_BOTH, 0, 2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0 },
	{ SCMP_SYS(munmap), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(mremap), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(madvise), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	/* glibc and the report's own */
	{ SCMP_SYS(getrandom), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(sysinfo), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(clock_gettime), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(getpid), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(gettid), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(getuid), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(geteuid), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(getgid), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(getegid), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(exit_group), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	/* its own signals (abort()) */
	{ SCMP_SYS(rt_sigaction), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(rt_sigprocmask), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(rt_sigreturn), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(restart_syscall), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	/* The kernel reads the pid as 32 bits; all 64 are compared, so high bits refuse it. */
	{ SCMP_SYS(tgkill), CONFINE_BOTH, DATUM_SELF, 0, SCMP_CMP_EQ, 0, 0 },
	/*
	 * fcntl and ioctl: the kernel reads the command and request as 32 bits; only
	 * those are compared, or one with other high bits set would pass the filter as
	 * something else.
	 */
	{ SCMP_SYS(fcntl), CONFINE_BOTH, 0, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, F_GETFD },
	{ SCMP_SYS(fcntl), CONFINE_BOTH, 0, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, F_GETFL },
	{ SCMP_SYS(fcntl), CONFINE_BOTH, 0, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, F_DUPFD_CLOEXEC },
	{ SCMP_SYS(ioctl), CONFINE_BOTH, 0, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TCGETS },
	{ SCMP_SYS(ioctl), CONFINE_BOTH, 0, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCGWINSZ },
	/* By hand: files opened to read only (the flags are openat's argument 2). */
	{ SCMP_SYS(openat), CONFINE_HAND, 0, 2, SCMP_CMP_MASKED_EQ,
	  CONFINE_O_WRITING, 0 },
	{ SCMP_SYS(getdents64), CONFINE_HAND, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(readlink), CONFINE_HAND, 0, 0, 0, 0, 0 },
	/* With a broker: its socket, and no other. */
	{ SCMP_SYS(sendmsg), CONFINE_BROKER, DATUM_BROKER, 0, SCMP_CMP_EQ, 0, 0 },
	{ SCMP_SYS(recvmsg), CONFINE_BROKER, DATUM_BROKER, 0, SCMP_CMP_EQ, 0, 0 },
#ifdef TOOLS_CONFINE_LSAN
	/*
	 * LeakSanitizer's exit check (test builds): its tracer task, cloned with these
	 * flags, ptraces the report's threads and reads /proc/self.
	 */
	{ SCMP_SYS(clone), CONFINE_BOTH, 0, 0, SCMP_CMP_EQ,
	  CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED, 0 },
	{ SCMP_SYS(ptrace), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(wait4), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(futex), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(exit), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(sched_yield), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(sigaltstack), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(getppid), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(prctl), CONFINE_BOTH, 0, 0, SCMP_CMP_EQ, PR_GET_DUMPABLE, 0 },
	{ SCMP_SYS(prctl), CONFINE_BOTH, 0, 0, SCMP_CMP_EQ, PR_SET_DUMPABLE, 0 },
	{ SCMP_SYS(prctl), CONFINE_BOTH, 0, 0, SCMP_CMP_EQ, PR_SET_PTRACER, 0 },
	{ SCMP_SYS(prctl), CONFINE_BOTH, 0, 0, SCMP_CMP_EQ, PR_SET_PDEATHSIG, 0 },
	/* /proc/self/task and maps, with open(2) and getdents(2), not their *at forms */
	{ SCMP_SYS(open), CONFINE_BOTH, 0, 1, SCMP_CMP_MASKED_EQ,
	  CONFINE_O_WRITING, 0 },
	{ SCMP_SYS(getdents), CONFINE_BOTH, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(openat), CONFINE_BROKER, 0, 2, SCMP_CMP_MASKED_EQ,
	  CONFINE_O_WRITING, 0 },
	{ SCMP_SYS(getdents64), CONFINE_BROKER, 0, 0, 0, 0, 0 },
	{ SCMP_SYS(readlink), CONFINE_BROKER, 0, 0, 0, 0, 0 },
#endif
};

#define SECCOMP_FUNCS(X) X(init) X(rule_add) X(load) X(release)

static struct {
#define SC_MEMBER(f) __typeof__(seccomp_##f) *f;
	SECCOMP_FUNCS(SC_MEMBER)
#undef SC_MEMBER
} sc;

/* libseccomp's functions: 0, or -ELIBACC with *ret_why set. */
static int seccomp_lib(const char **ret_why)
{
	void *h = dlopen("libseccomp.so.2", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		*ret_why = dlerror();
		return -ELIBACC;
	}
#define SC_LOAD(f)                                                                                 \
	if (!(*(void **)&sc.f = dlsym(h, "seccomp_" #f))) {                                        \
		*ret_why = "libseccomp.so.2 has no seccomp_" #f;                                   \
		return -ELIBACC;                                                                   \
	}
	SECCOMP_FUNCS(SC_LOAD)
#undef SC_LOAD
	return 0; /* the library stays loaded: nothing is freed under a filter */
}

/* The rules of @modes into @ctx (@broker_fd: the broker's socket): 0 or a negative errno. */
static int seccomp_rules(scmp_filter_ctx ctx, unsigned modes, int broker_fd)
{
	const scmp_datum_t self = (scmp_datum_t)getpid();
	int e;

	for (size_t i = 0; i < ARRAY_SIZE(confine_allow); i++) {
		const struct confine_allow *r = &confine_allow[i];
		struct scmp_arg_cmp c = { .arg = r->arg, .op = r->op, .datum_a = r->a,
					  .datum_b = r->b };

		if (r->nr < 0 || !(r->modes & modes))
			continue;
		if (r->datum == DATUM_SELF)
			c.datum_a = self;
		else if (r->datum == DATUM_BROKER)
			c.datum_a = (scmp_datum_t)broker_fd;
		e = r->op ? sc.rule_add(ctx, SCMP_ACT_ALLOW, r->nr, 1, c)
			  : sc.rule_add(ctx, SCMP_ACT_ALLOW, r->nr, 0);
		if (e < 0)
			return e;
	}
	return 0;
}

static int install_filter(int broker_fd)
{
	uint32_t action = SECCOMP_RET_ERRNO;
	scmp_filter_ctx ctx;
	int e;

	/*
	 * No seccomp(2) at all: no filter (valgrind, which does not know the call,
	 * would otherwise take libseccomp's prctl() fallback on itself, and its own
	 * calls would be refused).  A sandbox that refuses the call (EPERM, as
	 * hwpmcd.service does) leaves that fallback to libseccomp.
	 */
	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) < 0 && errno == ENOSYS) {
		log_warn("--confine: this kernel takes no seccomp filter (no seccomp(2)): the "
			 "report runs with its credentials alone");
		return 0;
	}
	/* All else EPERM; another architecture's calls kill (libseccomp's bad-arch default). */
	ctx = sc.init(SCMP_ACT_ERRNO(EPERM));
	if (!ctx)
		return -ENOMEM;
	e = seccomp_rules(ctx, broker_fd >= 0 ? CONFINE_BROKER : CONFINE_HAND, broker_fd);
	if (e < 0) {
		sc.release(ctx);
		return e;
	}
	e = sc.load(ctx);
	sc.release(ctx);
	if (e == -ENOSYS || e == -EINVAL) {
		/* libseccomp's errors are the kernel's here: no seccomp filters (or valgrind). */
		log_warn("--confine: this kernel takes no seccomp filter (%s): the report runs "
			 "with its credentials alone",
			 strerror(-e));
		return 0;
	}
	return e < 0 ? e : 0;
}

int tools_confine(int broker_fd)
{
	bool brokered = broker_fd >= 0;
	const char *why = NULL;
	int e;

	/* First: with a broker, Landlock leaves no path to load it from. */
	if ((e = seccomp_lib(&why)) < 0) {
		log_error("--confine: libseccomp cannot be loaded (%s): install libseccomp2", why);
		return e;
	}
	if ((e = drop_credentials(brokered)) < 0 || (e = confine_landlock(brokered)) < 0)
		return e;
	if (brokered)
		util_open_use_broker(broker_fd);
	return install_filter(broker_fd);
}
