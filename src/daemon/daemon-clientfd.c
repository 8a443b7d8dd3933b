/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-clientfd.c: the fds clients send with their requests (SCM_RIGHTS):
 * what kind each is, whether it may be a session's output, and its close, which
 * never blocks main.
 *
 * PUBLIC INTERFACES (daemon-internal, daemon-int.h)
 *   daemon_fd_release()        close an fd a client gave, on a thread if that could block
 *   daemon_client_drop_fds()   the fds that came with a request that did not take them
 *   daemon_closer_event()      a close returned: start what waited, read paused clients
 *   daemon_closing_over()      a uid's closes are at their bound: read none of its lines
 *   daemon_check_output_fd()   whether an fd may be a session's log or kernel symbols
 *   daemon_closer_efd          the closer threads' eventfd, in main's epoll set
 *
 * IMPLEMENTATION NOTES
 *   Main's, but for the closer threads, which share with it only the per-uid
 *   counts (closing_lock) and daemon_closer_efd.  What an fd is, is asked of its
 *   inode as cached (fd_kind()), never of a file system server that a user may
 *   run (FUSE), so that neither the check of an output nor a close can hold up
 *   the main loop (docs/security.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "daemon-int.h"
#include "hwpmcd/common.h"

/* ---- closing the fds clients gave ---- */

/*
 * An fd a client sent may be of a kind whose close(2) waits for someone the
 * client controls: a file on a FUSE file system (the kernel's fuse_flush() waits
 * for the FUSE server's answer, forever if it never comes), a TCP socket with
 * SO_LINGER, a terminal draining its output.  Main closes an fd itself only when
 * its kind cannot block there; any other is closed by a detached thread of its
 * own, at most CLOSING_USER_MAX at a time per uid.  Beyond that the fds wait in
 * a list and that uid's connections are not read (no new fds come in), until
 * one of its closes returns.
 */
#define CLOSING_USER_MAX 4

struct closing {
	int fd;
	uid_t uid;
	struct closing *next;
};

static pthread_mutex_t closing_lock = PTHREAD_MUTEX_INITIALIZER;
static struct closing *closing_waiting; /* main's: fds over their uid's bound */
static struct {
	uid_t uid;
	unsigned n;
} closing_users[64]; /* under closing_lock */
static unsigned closing_total;
int daemon_closer_efd = -1; /* a closer thread -> main: one close returned */

/* Where a client's fd lives, as far as the daemon can tell without asking it. */
enum fd_fs {
	FD_FS_LOCAL = 0, /* a file system mounted in the daemon's namespace, not FUSE */
	FD_FS_FUSE,	 /* a FUSE mount (fuse, fuseblk, fuse.*) */
	FD_FS_UNSEEN,	 /* no mount of the daemon's has its device (another namespace's) */
	FD_FS_MAX
};

/* The mount of device @dev in /proc/self/mountinfo: FUSE, another, or none. */
static enum fd_fs mount_kind(dev_t dev)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	enum fd_fs k = FD_FS_UNSEEN;

	if (!f)
		return FD_FS_UNSEEN;
	while (k == FD_FS_UNSEEN && fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		char *sep = strstr(line, " - "), type[64];

		if (!sep || sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2 ||
		    makedev(maj, min) != dev || sscanf(sep + 3, "%63s", type) != 1)
			continue;
		k = strcmp(type, "fuse") == 0 || strcmp(type, "fuseblk") == 0 ||
		    strncmp(type, "fuse.", 5) == 0 ? FD_FS_FUSE : FD_FS_LOCAL;
	}
	fclose(f);
	return k;
}

/*
 * What @fd is, asking no file system server: fstat(2), and so isatty() or
 * fstatfs(), would send a FUSE file's GETATTR (or IOCTL, STATFS) to its server,
 * which may never answer; statx(2) with AT_STATX_DONT_SYNC answers from the
 * inode as cached.  Sockets and pipes are not looked up in mountinfo (their
 * internal mounts are in none).  0 or -errno.
 */
static int fd_kind(int fd, mode_t *ret_mode, dev_t *ret_rdev, enum fd_fs *ret_fs)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_MODE, &sx) < 0)
		return -errno;
	*ret_mode = sx.stx_mode;
	*ret_rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
	*ret_fs = S_ISSOCK(sx.stx_mode) || S_ISFIFO(sx.stx_mode)
			  ? FD_FS_LOCAL
			  : mount_kind(makedev(sx.stx_dev_major, sx.stx_dev_minor));
	return 0;
}

static bool close_cannot_block(int fd)
{
	mode_t mode;
	dev_t rdev;
	enum fd_fs fs;
	int dom = 0;
	socklen_t len = sizeof(dom);

	if (fd_kind(fd, &mode, &rdev, &fs) < 0)
		return true; /* not an fd at all: its close is EBADF */
	if (S_ISFIFO(mode))
		return true; /* pipe_release(), wherever the FIFO's inode lives */
	if (fs != FD_FS_LOCAL)
		return false;
	if (S_ISREG(mode) || S_ISDIR(mode))
		return true;
	if (S_ISCHR(mode) && major(rdev) == 1)
		return true;
	return S_ISSOCK(mode) && getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) == 0 &&
	       dom == AF_UNIX;
}

/* The slot of @uid's count (under closing_lock); NULL when the table is full. */
static unsigned *closing_slot(uid_t uid)
{
	for (size_t i = 0; i < ARRAY_SIZE(closing_users); i++)
		if (closing_users[i].n && closing_users[i].uid == uid)
			return &closing_users[i].n;
	for (size_t i = 0; i < ARRAY_SIZE(closing_users); i++)
		if (!closing_users[i].n) {
			closing_users[i].uid = uid;
			return &closing_users[i].n;
		}
	return NULL;
}

bool daemon_closing_over(uid_t uid)
{
	unsigned *n;
	bool over;

	pthread_mutex_lock(&closing_lock);
	n = closing_slot(uid);
	over = !n || *n >= CLOSING_USER_MAX;
	pthread_mutex_unlock(&closing_lock);
	return over;
}

static void *closer_main(void *arg)
{
	struct closing *c = arg;
	uint64_t one = 1;
	unsigned *n;

	close(c->fd);
	pthread_mutex_lock(&closing_lock);
	n = closing_slot(c->uid);
	if (n && *n)
		(*n)--;
	closing_total--;
	pthread_mutex_unlock(&closing_lock);
	(void)!write(daemon_closer_efd, &one, sizeof(one));
	free(c);
	return NULL;
}

/* A thread for the close of @c, if @c's uid is under its bound: true if it took @c. */
static bool closer_start(struct closing *c)
{
	pthread_attr_t attr;
	pthread_t t;
	unsigned *n;
	bool ok = false;

	pthread_mutex_lock(&closing_lock);
	n = closing_slot(c->uid);
	if (n && *n < CLOSING_USER_MAX && pthread_attr_init(&attr) == 0) {
		(void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		(void)pthread_attr_setstacksize(&attr, 64 << 10);
		ok = pthread_create(&t, &attr, closer_main, c) == 0;
		pthread_attr_destroy(&attr);
		if (ok) {
			(*n)++;
			closing_total++;
		}
	}
	pthread_mutex_unlock(&closing_lock);
	return ok;
}

/* Close an fd client @uid gave us, never waiting for it on main. */
void daemon_fd_release(int fd, uid_t uid)
{
	struct closing *c;

	if (fd < 0)
		return;
	if (close_cannot_block(fd)) {
		close(fd);
		return;
	}
	c = malloc(sizeof(*c));
	if (!c) {
		close(fd); /* no memory for a list entry: the one thing left to do */
		return;
	}
	c->fd = fd;
	c->uid = uid;
	c->next = NULL;
	if (closer_start(c))
		return;
	/* Waits for a slot; in order, so that no fd waits for ever. */
	{
		struct closing **pp = &closing_waiting;

		while (*pp)
			pp = &(*pp)->next;
		*pp = c;
	}
}

/* A close returned: start what waited, then read the connections that were paused. */
void daemon_closer_event(void)
{
	uint64_t v;

	(void)!read(daemon_closer_efd, &v, sizeof(v));
	for (struct closing **pp = &closing_waiting; *pp;) {
		struct closing *c = *pp, *next = c->next; /* c is the thread's once started */

		if (closer_start(c))
			*pp = next;
		else
			pp = &c->next;
	}
	daemon_client_rearm();
}

/* The fds that came with a request that did not take them: never kept for a later one. */
void daemon_client_drop_fds(struct daemon_client *c)
{
	for (size_t i = 0; i < c->nfds; i++)
		daemon_fd_release(c->fds[i], c->who.uid);
	c->nfds = 0;
}

/* ---- an fd as a session's output ---- */

/*
 * An output fd must be open for writing (not O_PATH, not read-only), and of a kind
 * whose writes the session can bound: a regular file, a pipe or a socket (polled,
 * never blocking: plog_writer__set_nowait), or a memory device (/dev/null, /dev/zero,
 * /dev/full, major 1).  A terminal (a pty whose master nobody reads blocked the
 * session's writer, and the stop with it: issue 13, item 5), any other device, a
 * directory, any fd on a FUSE file system (fuse_flush() in its close waited for
 * the user's FUSE server forever): refused.
 */
int daemon_check_output_fd(int fd, const char *what, char *err, size_t errlen)
{
	int fl = fcntl(fd, F_GETFL), r;
	mode_t mode;
	dev_t rdev;
	enum fd_fs fs;

	if (fl < 0 || (fl & O_PATH) || (fl & O_ACCMODE) == O_RDONLY) {
		snprintf(err, errlen, "the %s fd that came with the request is not open for "
			 "writing", what);
		return -EBADF;
	}
	r = fd_kind(fd, &mode, &rdev, &fs);
	if (r < 0) {
		snprintf(err, errlen, "the %s fd that came with the request: %s", what,
			 strerror(-r));
		return -EBADF;
	}
	if (fs == FD_FS_FUSE && !S_ISFIFO(mode)) {
		snprintf(err, errlen, "the %s fd that came with the request is on a FUSE file "
			 "system: its writes and its close wait for the FUSE server, which could "
			 "hold the session for ever; write to a local file, a pipe or a socket",
			 what);
		return -EINVAL;
	}
	/* isatty() only now: on a FUSE file its TCGETS would go to the server. */
	if (S_ISREG(mode) || S_ISFIFO(mode) || S_ISSOCK(mode) ||
	    (S_ISCHR(mode) && major(rdev) == 1 && !isatty(fd)))
		return 0;
	snprintf(err, errlen, "the %s fd that came with the request is %s: an output must be a "
		 "file, a pipe or a socket (writes to it could block the daemon)", what,
		 S_ISCHR(mode) && isatty(fd) ? "a terminal" : S_ISCHR(mode) ? "a device"
		 : S_ISDIR(mode) ? "a directory" : "neither a file, a pipe nor a socket");
	return -EINVAL;
}
