/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-auth.c: who is an administrator, and whom a user may profile.
 *
 * PUBLIC INTERFACES (daemon-internal, daemon-ctl.h)
 *   daemon_auth_admin(), daemon_auth_target(), daemon_auth_tids(), daemon_auth_open_as()
 *
 * IMPLEMENTATION NOTES
 *   perf_event_open(2) lets a user attach to a process it may ptrace in "read"
 *   mode with its real credentials (ptrace_may_access(PTRACE_MODE_READ_REALCREDS)):
 *   the caller's uid equals the target's real, effective and saved uid, its gid
 *   the target's real, effective and saved gid, and the target is dumpable.  The
 *   daemon opens the counters as root, so it asks the same question itself, from
 *   /proc: the Uid:/Gid: lines of every thread's status, and the owner of
 *   those status files, which the kernel sets to root for a task that is not
 *   dumpable (the /proc/PID directory itself keeps its owner)
 *   (prctl(PR_SET_DUMPABLE, 0), or an exec of a setuid/setgid or unreadable
 *   binary).  Yama's ptrace_scope does not apply to read-mode access, as for perf.
 *   The caller asks before opening the counters (for a clear error,
 *   daemon-cmd.c) and again after (daemon-session.c), so a pid that was reused
 *   or a process that changed credentials in between is caught; a later exec of
 *   a setuid binary makes the kernel itself detach the counters
 *   (begin_new_exec() calls perf_event_exit_task() for a task that is no longer
 *   dumpable).
 */
#include <dirent.h>
#include <errno.h>
#include <linux/capability.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon-ctl.h"
#include "hwpmcd/common.h"

bool daemon_auth_admin(uid_t uid, gid_t gid, const gid_t *groups, size_t ngroups,
		       gid_t admin_gid)
{
	if (uid == 0)
		return true;
	if (admin_gid == (gid_t)-1)
		return false;
	if (gid == admin_gid)
		return true;
	for (size_t i = 0; i < ngroups; i++)
		if (groups[i] == admin_gid)
			return true;
	return false;
}

/* The four ids of the status line starting with @tag ("Uid:" or "Gid:"). */
static int status_ids(const char *status, const char *tag, unsigned long ids[4])
{
	const char *l = status;

	while (l && *l) {
		if (strncmp(l, tag, strlen(tag)) == 0) {
			return sscanf(l + strlen(tag), "%lu %lu %lu %lu", &ids[0], &ids[1], &ids[2],
				      &ids[3]) == 4 ? 0 : -EIO;
		}
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return -EIO;
}

/* One task's status file under @dirfd: 0 if its real/effective/saved ids are @who's. */
static int check_status(int dirfd, const char *rel, const struct daemon_who *who, pid_t pid,
			char *err, size_t errlen)
{
	char buf[4096];
	unsigned long u[4], g[4];
	int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC), r;
	ssize_t n;

	struct stat st;

	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ESRCH : -errno;
	n = util_read_some(fd, buf, sizeof(buf) - 1);
	r = n < 0 ? (int)n : fstat(fd, &st) < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return r == -ESRCH ? -ESRCH : r;
	buf[n] = '\0';
	if (status_ids(buf, "Uid:", u) < 0 || status_ids(buf, "Gid:", g) < 0) {
		snprintf(err, errlen, "process %d: cannot read its credentials", (int)pid);
		return -EACCES;
	}
	for (int i = 0; i < 3; i++) {
		if (u[i] != (unsigned long)who->uid) {
			snprintf(err, errlen, "process %d belongs to uid %lu (real %lu, saved %lu); "
				 "uid %u may profile only its own processes", (int)pid, u[1], u[0],
				 u[2], (unsigned)who->uid);
			return -EACCES;
		}
		if (g[i] != (unsigned long)who->gid) {
			snprintf(err, errlen, "process %d runs with gid %lu (real %lu, saved %lu), "
				 "not your gid %u (a setgid program?)", (int)pid, g[1], g[0], g[2],
				 (unsigned)who->gid);
			return -EACCES;
		}
	}
	if (st.st_uid != who->uid) {
		/* The kernel gives a non-dumpable task's /proc files to root (not the dir). */
		snprintf(err, errlen, "process %d is not dumpable (a setuid/setgid program, or "
			 "prctl(PR_SET_DUMPABLE, 0)); perf would not let uid %u profile it either",
			 (int)pid, (unsigned)who->uid);
		return -EACCES;
	}
	return 0;
}

int daemon_auth_target(const char *procroot, const struct daemon_who *who, pid_t pid,
		       char *err, size_t errlen)
{
	char path[256];
	int dfd, tfd, r;
	DIR *d;
	struct dirent *de;
	size_t ntasks = 0;

	err[0] = '\0';
	if (pid <= 0) {
		snprintf(err, errlen, "process %d does not exist", (int)pid);
		return -ESRCH;
	}
	snprintf(path, sizeof(path), "%s/%d", procroot, (int)pid);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		snprintf(err, errlen, "process %d does not exist", (int)pid);
		return -ESRCH;
	}
	r = check_status(dfd, "status", who, pid, err, errlen);
	/* Threads may have credentials of their own (setresuid(2) is per thread). */
	tfd = r == 0 ? openat(dfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	d = tfd >= 0 ? fdopendir(tfd) : NULL;
	if (r == 0 && !d) {
		if (tfd >= 0)
			close(tfd);
		r = -ESRCH;
	}
	while (r == 0 && (de = readdir(d))) {
		char rel[300];
		int q;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(rel, sizeof(rel), "%s/status", de->d_name);
		q = check_status(tfd, rel, who, pid, err, errlen);
		if (q == -ESRCH)
			continue; /* that thread exited meanwhile */
		r = q;
		ntasks++;
	}
	if (d)
		closedir(d);
	close(dfd);
	if (r == 0 && ntasks == 0)
		r = -ESRCH;
	if (r == -ESRCH)
		snprintf(err, errlen, "process %d does not exist", (int)pid);
	else if (r < 0 && !err[0])
		snprintf(err, errlen, "process %d: %s", (int)pid, strerror(-r));
	return r;
}

int daemon_auth_tids(const char *procroot, const pid_t *tids, const pid_t *owners,
		     const int *pidfds, size_t n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		char path[256];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%d/task/%d", procroot, (int)owners[i], (int)tids[i]);
		if (stat(path, &st) == 0) {
			/*
			 * Still its process's thread now, and (pidfd alive) the same task
			 * since before its counter was opened: the counter is that task's.
			 */
			if (!pidfds || pidfds[i] < 0 ||
			    syscall(SYS_pidfd_send_signal, pidfds[i], 0, NULL, 0) == 0 ||
			    errno != ESRCH)
				continue;
		} else {
			snprintf(path, sizeof(path), "%s/%d", procroot, (int)tids[i]);
			if (stat(path, &st) < 0 && errno == ENOENT)
				continue;
		}
		snprintf(err, errlen,
			 "thread %d of process %d exited during the start and its id now names "
			 "another task; try again",
			 (int)tids[i], (int)owners[i]);
		return -EAGAIN;
	}
	return 0;
}

/*
 * A thread's credentials for one open(2) as @who: the file system ids (setfsuid
 * and setfsgid act on the calling thread alone, at the system call level) and an
 * effective set without the capabilities that override the ptrace check
 * (CAP_SYS_PTRACE) and file permissions (leaving fsuid 0 drops the file system
 * ones by itself; they are put back from the permitted set on the way back).
 * Raw system calls, as glibc's wrappers might act on every thread.
 */
int daemon_auth_open_as(const struct daemon_who *who, const char *path, int flags)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	/* Zeroed: valgrind marks only the first of the two words capget(2) fills as written. */
	struct __user_cap_data_struct saved[_LINUX_CAPABILITY_U32S_3] = { { 0 } },
				      less[_LINUX_CAPABILITY_U32S_3];
	int fd, err;

	if (syscall(SYS_capget, &h, saved) < 0)
		return -errno;
	memcpy(less, saved, sizeof(less));
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		less[i].effective = 0;
	/*
	 * fsgid first, while fsuid is still 0 (CAP_SETGID); setfsuid/setfsgid return the
	 * previous value whatever happens, so the change is read back to be sure.
	 */
	(void)syscall(SYS_setfsgid, who->gid);
	(void)syscall(SYS_setfsuid, who->uid);
	if ((uid_t)syscall(SYS_setfsuid, -1) != who->uid ||
	    (gid_t)syscall(SYS_setfsgid, -1) != who->gid) {
		err = -EPERM; /* no CAP_SETUID/CAP_SETGID: never open as root instead */
		fd = -1;
		goto restore;
	}
	h.pid = 0;
	if (syscall(SYS_capset, &h, less) < 0) {
		err = -errno;
		fd = -1;
		goto restore;
	}
	fd = open(path, flags | O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
restore:
	(void)syscall(SYS_setfsuid, 0);
	(void)syscall(SYS_setfsgid, 0);
	h.pid = 0;
	if (syscall(SYS_capset, &h, saved) < 0 && fd >= 0) {
		/* This thread could not get its own capabilities back: a bug, said loudly. */
		close(fd);
		return -EPERM;
	}
	return fd >= 0 ? fd : err;
}
