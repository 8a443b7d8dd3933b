/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-clientfd.c: the fds clients send with their requests (SCM_RIGHTS):
 * what kind each is, whether it may be a session's output, and its close, which
 * never blocks main.
 *
 * PUBLIC INTERFACES (daemon-internal, daemon-int.h)
 *   daemon_fd_release()        close an fd a client gave, always on a closer thread
 *   daemon_client_drop_fds()   the fds that came with a request that did not take them
 *   daemon_closer_event()      a close returned: more closers, read paused clients
 *   daemon_closing_over()      a uid's closers are all busy: read none of its lines
 *   daemon_check_output_fd()   whether an fd may be a session's log or kernel symbols
 *   daemon_closer_efd          the closer threads' eventfd, in main's epoll set
 *
 * IMPLEMENTATION NOTES
 *   Main's, but for the closer threads, which share with it only the per-uid
 *   queues (closing_lock) and daemon_closer_efd.  What an fd is, is asked of its
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
#include "hwpmcd/log.h"

/* ---- closing the fds clients gave ---- */

/*
 * An fd a client sent may be of a kind whose close(2) waits for someone the
 * client controls: a file on a FUSE file system (the kernel's fuse_flush() waits
 * for the FUSE server's answer, forever if it never comes), a TCP socket with
 * SO_LINGER, a terminal draining its output.  What it is cannot always be told
 * (statx(2) of a FUSE file in the user's own user and mount namespace fails with
 * EACCES, and a guess from that once made main close it itself), so main closes
 * none of them: each goes into its uid's queue, which at most CLOSING_USER_MAX
 * detached threads of that uid empty, closing one fd after another and ending
 * when the queue is.  While all of a uid's threads are busy and fds wait, that
 * uid's connections are not read (no new fds come in), until one close returns.
 */
#define CLOSING_USER_MAX 4
#define CLOSING_UIDS	 256 /* uids with closes under way at once (max_clients is 128) */

struct closing {
	int fd;
	struct closing *next;
};

/* One uid's closes: its queue and its threads (under closing_lock). */
struct closer_uid {
	uid_t uid;
	unsigned threads; /* closer threads of this uid alive */
	unsigned queued;
	struct closing *head, **tail;
};

static pthread_mutex_t closing_lock = PTHREAD_MUTEX_INITIALIZER;
static struct closer_uid closers[CLOSING_UIDS]; /* a slot is free when threads == queued == 0 */
int daemon_closer_efd = -1; /* a closer thread -> main: a close returned */

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

/* The slot of @uid (under closing_lock), made if @make; NULL if none (or the table is full). */
static struct closer_uid *closer_slot(uid_t uid, bool make)
{
	struct closer_uid *free_slot = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(closers); i++) {
		struct closer_uid *k = &closers[i];

		if (k->threads || k->queued) {
			if (k->uid == uid)
				return k;
		} else if (!free_slot) {
			free_slot = k;
		}
	}
	if (!make || !free_slot)
		return NULL;
	*free_slot = (struct closer_uid){ .uid = uid };
	free_slot->tail = &free_slot->head;
	return free_slot;
}

bool daemon_closing_over(uid_t uid)
{
	struct closer_uid *k;
	bool over;

	pthread_mutex_lock(&closing_lock);
	k = closer_slot(uid, false);
	over = k && k->threads >= CLOSING_USER_MAX && k->queued > 0;
	pthread_mutex_unlock(&closing_lock);
	return over;
}

/* A closer of uid @arg: closes its uid's queued fds one after another, then ends. */
static void *closer_main(void *arg)
{
	uid_t uid = (uid_t)(uintptr_t)arg;
	uint64_t one = 1;

	pthread_mutex_lock(&closing_lock);
	for (;;) {
		struct closer_uid *k = closer_slot(uid, false);
		struct closing *c = k ? k->head : NULL;

		if (!c) {
			if (k)
				k->threads--;
			break;
		}
		k->head = c->next;
		if (!k->head)
			k->tail = &k->head;
		k->queued--;
		pthread_mutex_unlock(&closing_lock);
		close(c->fd); /* may wait for whoever serves the file: this thread's alone */
		free(c);
		pthread_mutex_lock(&closing_lock);
	}
	pthread_mutex_unlock(&closing_lock);
	(void)!write(daemon_closer_efd, &one, sizeof(one));
	return NULL;
}

/* Under closing_lock: another closer for @k if it has queued fds and room for one. */
static void closer_start(struct closer_uid *k)
{
	pthread_attr_t attr;
	pthread_t t;

	if (!k->queued || k->threads >= CLOSING_USER_MAX || k->threads >= k->queued ||
	    pthread_attr_init(&attr) != 0)
		return;
	(void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	(void)pthread_attr_setstacksize(&attr, 64 << 10);
	if (pthread_create(&t, &attr, closer_main, (void *)(uintptr_t)k->uid) == 0)
		k->threads++;
	/* else: tried again at the next release or close of this uid */
	pthread_attr_destroy(&attr);
}

void daemon_fd_release(int fd, uid_t uid)
{
	struct closing *c;
	struct closer_uid *k;

	if (fd < 0)
		return;
	c = malloc(sizeof(*c));
	pthread_mutex_lock(&closing_lock);
	k = c ? closer_slot(uid, true) : NULL;
	if (k) {
		c->fd = fd;
		c->next = NULL;
		*k->tail = c;
		k->tail = &c->next;
		k->queued++;
		closer_start(k);
	}
	pthread_mutex_unlock(&closing_lock);
	if (!k) {
		/*
		 * No memory, or 256 uids' closes under way: the fd is kept open rather
		 * than closed here, where its close could hold up every client.
		 */
		free(c);
		log_error("uid %u: cannot queue the close of fd %d (%s): it stays open", (unsigned)uid,
			  fd, c ? "256 users' closes under way" : "out of memory");
	}
}

/* A close returned: more closers where fds wait, then read the connections that were paused. */
void daemon_closer_event(void)
{
	uint64_t v;

	(void)!read(daemon_closer_efd, &v, sizeof(v));
	pthread_mutex_lock(&closing_lock);
	for (size_t i = 0; i < ARRAY_SIZE(closers); i++)
		closer_start(&closers[i]);
	pthread_mutex_unlock(&closing_lock);
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
