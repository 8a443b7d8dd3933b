/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-confine.c: `hwpmc report --confine`: what reading logs and ELF files
 * needs, nothing more, taken before any input is read (hwpmcd's push child
 * parses users' ELF files with it).
 *
 * PUBLIC INTERFACES (tools-int.h)
 *   tools_confine()
 *
 * IMPLEMENTATION NOTES
 *   Credentials.  No new privileges (no setuid exec); as root with CAP_SETUID and
 *   CAP_SETGID, the user and group nobody; every capability but
 *   CAP_DAC_READ_SEARCH (read any file) dropped from the permitted, effective,
 *   inheritable and ambient sets.  Under hwpmcd.service, whose sandbox has no
 *   CAP_SETUID, the uid stays 0 (its mounts are read-only but for its state
 *   directory: ProtectSystem=strict).  The raw capget/capset calls rather than
 *   libcap: one library less at every start.
 *
 *   System calls.  Then a seccomp filter refuses, with EPERM, what a report never
 *   does and what code taken over through a hostile ELF file would want, holding
 *   CAP_DAC_READ_SEARCH: sockets and sending (no network: a pushed profile leaves
 *   through the daemon's pipe only; so no debuginfod either), exec, new processes
 *   (fork, vfork, clone without CLONE_THREAD; clone3, whose flags a filter cannot
 *   read, is ENOSYS, from which glibc falls back to clone), other processes
 *   (ptrace, process_vm_readv/writev, pidfd_open/getfd/send_signal, kcmp, kill,
 *   tkill, process_madvise; tgkill, rt_sigqueueinfo, prlimit64, setpriority,
 *   sched_set*, ioprio_set, move_pages, migrate_pages, get_robust_list but on
 *   itself: under the unit the report is uid 0, as the daemon is), System V and
 *   POSIX IPC, files by handle (open_by_handle_at: any file of a file system,
 *   whatever the path, with CAP_DAC_READ_SEARCH), namespaces and mounts, kernel
 *   interfaces no report uses (bpf, perf_event_open, io_uring, userfaultfd,
 *   keyrings, modules, kexec), typing into a terminal (ioctl TIOCSTI, TIOCLINUX), and making or
 *   changing files: open and openat with O_WRONLY, O_RDWR, O_CREAT or O_TRUNC
 *   (openat2, whose flags a filter cannot read, is ENOSYS), creat, truncate,
 *   mkdir, unlink, rename, link, symlink, mknod, chmod, chown, utimes.  Under
 *   the unit the uid stays 0, and the state directory holds every user's logs:
 *   the confined report writes only to descriptors it was given (its outputs
 *   name one: /dev/stdout, /dev/fd/N, which util_output_open() duplicates).  A
 *   call of another architecture's ABI (int 0x80) kills the process
 *   (libseccomp's default), so the filter cannot be gone around.
 *   libseccomp is loaded here, with dlopen(), and only here: no other command pays
 *   for it at start-up (systemd depends on libseccomp2, so it is there).
 *
 *   A kernel without seccomp filters (ENOSYS, EINVAL from the kernel; valgrind
 *   has no seccomp either) gets a warning, and the report runs with its
 *   credentials alone; any other failure is an error.  Built with
 *   AddressSanitizer, clone and ptrace stay allowed: LeakSanitizer checks at exit
 *   from a clone()d task that ptrace()s the process.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

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

static int drop_credentials(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	const uint32_t keep = 1u << CAP_DAC_READ_SEARCH; /* in d[0]: its number is 2 */
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
		}
		if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
			return -errno;
	}
	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	have = (d[0].permitted & keep) != 0;
	memset(d, 0, sizeof(d));
	d[0].permitted = d[0].effective = have ? keep : 0;
	if (syscall(SYS_capset, &h, d) < 0)
		return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	return 0;
}

/* Refused outright (EPERM); a name this architecture lacks is skipped. */
static const int confine_denied[] = {
	/* the network, and sending on a socket handed down by mistake */
	SCMP_SYS(socket),
	SCMP_SYS(socketpair),
	SCMP_SYS(connect),
	SCMP_SYS(bind),
	SCMP_SYS(listen),
	SCMP_SYS(accept),
	SCMP_SYS(accept4),
	SCMP_SYS(sendto),
	SCMP_SYS(sendmsg),
	SCMP_SYS(sendmmsg),
	/* programs and processes */
	SCMP_SYS(execve),
	SCMP_SYS(execveat),
	SCMP_SYS(fork),
	SCMP_SYS(vfork),
	SCMP_SYS(process_vm_readv),
	SCMP_SYS(process_vm_writev),
	SCMP_SYS(pidfd_open),
	SCMP_SYS(pidfd_getfd),
	SCMP_SYS(pidfd_send_signal),
	SCMP_SYS(kcmp),
	SCMP_SYS(kill),
	SCMP_SYS(tkill),
	SCMP_SYS(process_madvise),
	SCMP_SYS(process_mrelease),
	/* System V and POSIX IPC */
	SCMP_SYS(shmget),
	SCMP_SYS(shmat),
	SCMP_SYS(shmctl),
	SCMP_SYS(msgget),
	SCMP_SYS(msgsnd),
	SCMP_SYS(msgrcv),
	SCMP_SYS(msgctl),
	SCMP_SYS(semget),
	SCMP_SYS(semop),
	SCMP_SYS(semtimedop),
	SCMP_SYS(semctl),
	SCMP_SYS(mq_open),
	/* files by handle, namespaces, mounts */
	SCMP_SYS(open_by_handle_at),
	SCMP_SYS(name_to_handle_at),
	SCMP_SYS(unshare),
	SCMP_SYS(setns),
	SCMP_SYS(mount),
	SCMP_SYS(umount2),
	SCMP_SYS(pivot_root),
	SCMP_SYS(chroot),
	SCMP_SYS(open_tree),
	SCMP_SYS(move_mount),
	SCMP_SYS(fsopen),
	SCMP_SYS(fsconfig),
	SCMP_SYS(fsmount),
	SCMP_SYS(fspick),
	SCMP_SYS(mount_setattr),
	/* kernel interfaces */
	SCMP_SYS(bpf),
	SCMP_SYS(perf_event_open),
	SCMP_SYS(userfaultfd),
	SCMP_SYS(io_uring_setup),
	SCMP_SYS(io_uring_enter),
	SCMP_SYS(io_uring_register),
	SCMP_SYS(keyctl),
	SCMP_SYS(add_key),
	SCMP_SYS(request_key),
	SCMP_SYS(init_module),
	SCMP_SYS(finit_module),
	SCMP_SYS(delete_module),
	SCMP_SYS(kexec_load),
	SCMP_SYS(kexec_file_load),
	/* files made or changed (opening one for writing: seccomp_rules()) */
	SCMP_SYS(creat),
	SCMP_SYS(truncate),
	SCMP_SYS(mkdir),
	SCMP_SYS(mkdirat),
	SCMP_SYS(unlink),
	SCMP_SYS(unlinkat),
	SCMP_SYS(rename),
	SCMP_SYS(renameat),
	SCMP_SYS(renameat2),
	SCMP_SYS(link),
	SCMP_SYS(linkat),
	SCMP_SYS(symlink),
	SCMP_SYS(symlinkat),
	SCMP_SYS(rmdir),
	SCMP_SYS(mknod),
	SCMP_SYS(mknodat),
	SCMP_SYS(chmod),
	SCMP_SYS(fchmod),
	SCMP_SYS(fchmodat),
	SCMP_SYS(chown),
	SCMP_SYS(fchown),
	SCMP_SYS(lchown),
	SCMP_SYS(fchownat),
	SCMP_SYS(utime),
	SCMP_SYS(utimes),
	SCMP_SYS(utimensat),
	SCMP_SYS(futimesat),
#ifndef TOOLS_CONFINE_LSAN
	SCMP_SYS(ptrace),
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

/*
 * Refused (EPERM) when argument @arg compares so: @op against @a (and @b, for
 * SCMP_CMP_MASKED_EQ: (arg & @a) == @b); @self: @a is the report's own pid.
 */
static const struct confine_cond {
	int nr;
	unsigned arg;
	enum scmp_compare op;
	scmp_datum_t a, b;
	bool self;
} confine_conds[] = {
	/*
	 * The kernel reads an ioctl's request as 32 bits: compare those only, or one
	 * with other high bits set would pass the filter and still be TIOCSTI.
	 */
	{ SCMP_SYS(ioctl), 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI, false },
	{ SCMP_SYS(ioctl), 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX, false },
	/*
	 * open and openat only to read: not with O_WRONLY, O_RDWR, O_CREAT or O_TRUNC
	 * (the flags are argument 1 of open, 2 of openat).
	 */
	{ SCMP_SYS(open), 1, SCMP_CMP_MASKED_EQ, O_ACCMODE, O_WRONLY, false },
	{ SCMP_SYS(open), 1, SCMP_CMP_MASKED_EQ, O_ACCMODE, O_RDWR, false },
	{ SCMP_SYS(open), 1, SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT, false },
	{ SCMP_SYS(open), 1, SCMP_CMP_MASKED_EQ, O_TRUNC, O_TRUNC, false },
	{ SCMP_SYS(openat), 2, SCMP_CMP_MASKED_EQ, O_ACCMODE, O_WRONLY, false },
	{ SCMP_SYS(openat), 2, SCMP_CMP_MASKED_EQ, O_ACCMODE, O_RDWR, false },
	{ SCMP_SYS(openat), 2, SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT, false },
	{ SCMP_SYS(openat), 2, SCMP_CMP_MASKED_EQ, O_TRUNC, O_TRUNC, false },
	/*
	 * Calls that name a process act on this one only: its pid, or 0 ("the caller")
	 * where the call takes it so.  Under the unit the report is uid 0, as the daemon
	 * is: signals, limits and priorities of the daemon would otherwise be its.  Any
	 * other value is refused, also one whose low 32 bits (what the kernel reads) name
	 * this process.
	 */
	{ SCMP_SYS(tgkill), 0, SCMP_CMP_NE, 0, 0, true },
	{ SCMP_SYS(rt_sigqueueinfo), 0, SCMP_CMP_NE, 0, 0, true },
	{ SCMP_SYS(rt_tgsigqueueinfo), 0, SCMP_CMP_NE, 0, 0, true },
	{ SCMP_SYS(prlimit64), 0, SCMP_CMP_NE, 0, 0, false },
	{ SCMP_SYS(setpriority), 1, SCMP_CMP_NE, 0, 0, false },
	{ SCMP_SYS(ioprio_set), 1, SCMP_CMP_NE, 0, 0, false },
	{ SCMP_SYS(sched_setaffinity), 0, SCMP_CMP_NE, 0, 0, false },
	{ SCMP_SYS(sched_setscheduler), 0, SCMP_CMP_NE, 0, 0, false },
	{ SCMP_SYS(sched_setparam), 0, SCMP_CMP_NE, 0, 0, false },
	{ SCMP_SYS(sched_setattr), 0, SCMP_CMP_NE, 0, 0, false },
	{ SCMP_SYS(move_pages), 0, SCMP_CMP_NE, 0, 0, false },
	{ SCMP_SYS(migrate_pages), 0, SCMP_CMP_NE, 0, 0, false },
	{ SCMP_SYS(get_robust_list), 0, SCMP_CMP_NE, 0, 0, false },
#ifndef TOOLS_CONFINE_LSAN
	/* A thread (CLONE_THREAD) may start; a process may not. */
	{ SCMP_SYS(clone), 0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0, false },
#endif
};

/* The rules into @ctx: 0 or a negative errno. */
static int seccomp_rules(scmp_filter_ctx ctx)
{
	const uint32_t deny = SCMP_ACT_ERRNO(EPERM);
	const scmp_datum_t self = (scmp_datum_t)getpid();
	int e;

	for (size_t i = 0; i < ARRAY_SIZE(confine_denied); i++)
		if (confine_denied[i] >= 0 &&
		    (e = sc.rule_add(ctx, deny, confine_denied[i], 0)) < 0)
			return e;
	for (size_t i = 0; i < ARRAY_SIZE(confine_conds); i++) {
		const struct confine_cond *r = &confine_conds[i];
		struct scmp_arg_cmp c = { .arg = r->arg,
					  .op = r->op,
					  .datum_a = r->self ? self : r->a,
					  .datum_b = r->b };

		if (r->nr >= 0 && (e = sc.rule_add(ctx, deny, r->nr, 1, c)) < 0)
			return e;
	}
	/* Calls whose arguments a filter cannot read: ENOSYS, as on kernels before them. */
	if ((e = sc.rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0)) < 0 ||
	    (e = sc.rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) < 0)
		return e;
	return 0;
}

static int install_filter(void)
{
	const char *why = NULL;
	scmp_filter_ctx ctx;
	int e;

	if ((e = seccomp_lib(&why)) < 0) {
		log_error("--confine: libseccomp cannot be loaded (%s): install libseccomp2", why);
		return e;
	}
	ctx = sc.init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
	if ((e = seccomp_rules(ctx)) < 0) {
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

int tools_confine(void)
{
	int e = drop_credentials();

	return e < 0 ? e : install_filter();
}
