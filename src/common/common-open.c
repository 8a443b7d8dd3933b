/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common-open.c: the files a report reads, opened by itself or by a broker.
 *
 * PUBLIC INTERFACES
 *   see include/hwpmcd/common-open.h
 *
 * IMPLEMENTATION NOTES
 *   The hook is a pair of globals written once before the report reads anything
 *   (util_open_set_hook()) and only read afterwards.  The broker's client holds a
 *   mutex from its request to the answer, so that two threads could never take
 *   each other's descriptor (the report has one thread; the lock costs nothing).
 *
 *   Answers are read with MSG_CMSG_CLOEXEC into a control buffer with room for a
 *   few descriptors: any beyond the one expected, or any with an error answer, are
 *   closed, never leaked.  Requests are read without a control buffer at all, so
 *   the kernel closes whatever descriptors a client sends (a confined report has
 *   no business sending any).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "hwpmcd/common-open.h"
#include "hwpmcd/common.h"

static const char broker_magic[4] = { 'H', 'W', 'B', '1' };

static struct {
	util_open_fn *fn;
	void *ctx;
	int sock;
	pthread_mutex_t lock;
} hook = { .sock = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

void util_open_set_hook(util_open_fn *fn, void *ctx)
{
	hook.fn = fn;
	hook.ctx = ctx;
}

static int broker_hook(const char *path, unsigned flags, void *ctx)
{
	int r;

	(void)flags; /* the broker opens regular files only, whatever is asked */
	(void)ctx;
	pthread_mutex_lock(&hook.lock);
	r = util_broker_ask(hook.sock, path);
	pthread_mutex_unlock(&hook.lock);
	return r;
}

void util_open_use_broker(int sock)
{
	hook.sock = sock;
	util_open_set_hook(broker_hook, NULL);
}

/* The file open on @fd as util_open_read() returns it: regular if @flags say so. */
static int checked(int fd, unsigned flags, uint64_t *ret_size)
{
	struct stat st;
	int r;

	if (fstat(fd, &st) < 0) {
		r = -errno;
		(void)close(fd);
		return r;
	}
	if ((flags & UTIL_OPEN_REGULAR) && !S_ISREG(st.st_mode)) {
		(void)close(fd);
		return -ENOEXEC;
	}
	if (ret_size)
		*ret_size = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
	return fd;
}

/* A regular file at @path, never opened for reading if it is anything else. */
static int open_regular(const char *path, uint64_t *ret_size)
{
	struct stat st, st2;
	char self[64];
	bool reopened;
	int pfd, fd, r;

	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &st) < 0) {
		r = -errno;
		(void)close(pfd);
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		(void)close(pfd);
		return -ENOEXEC;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	reopened = fd >= 0; /* the O_PATH fd's own inode: nothing to check again */
	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	r = fd < 0 ? -errno : 0;
	(void)close(pfd);
	if (r < 0)
		return r;
	if (!reopened && (fstat(fd, &st2) < 0 || !S_ISREG(st2.st_mode) ||
			  st2.st_dev != st.st_dev || st2.st_ino != st.st_ino)) {
		(void)close(fd);
		return -ENOEXEC;
	}
	if (ret_size)
		*ret_size = (uint64_t)st.st_size;
	return fd;
}

int util_open_read(const char *path, unsigned flags, uint64_t *ret_size)
{
	int fd;

	if (hook.fn) {
		fd = hook.fn(path, flags, hook.ctx);
		return fd < 0 ? fd : checked(fd, flags, ret_size);
	}
	if (flags & UTIL_OPEN_REGULAR)
		return open_regular(path, ret_size);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	return checked(fd, flags, ret_size);
}

/* ---- the protocol ---- */

/* Close every descriptor an SCM_RIGHTS message of @m carries but @keep (-1: all). */
static void close_passed(struct msghdr *m, int keep)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (fd != keep)
				(void)close(fd);
		}
	}
}

int util_broker_ask(int sock, const char *path)
{
	char req[sizeof(broker_magic) + UTIL_BROKER_PATH_MAX];
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	size_t len = strlen(path);
	int32_t err;
	struct iovec iov;
	struct msghdr m;
	int fd = -1;
	ssize_t n;

	/* sendmsg and recvmsg alone: the confined report's filter allows nothing else. */
	if (len == 0)
		return -ENOENT;
	if (len >= UTIL_BROKER_PATH_MAX)
		return -ENAMETOOLONG;
	memcpy(req, broker_magic, sizeof(broker_magic));
	memcpy(req + sizeof(broker_magic), path, len);
	iov = (struct iovec){ .iov_base = req, .iov_len = sizeof(broker_magic) + len };
	m = (struct msghdr){ .msg_iov = &iov, .msg_iovlen = 1 };
	do
		n = sendmsg(sock, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == ECONNRESET ? -EPIPE : -errno;
	iov = (struct iovec){ .iov_base = &err, .iov_len = sizeof(err) };
	for (;;) {
		m = (struct msghdr){ .msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = ctl.buf,
				     .msg_controllen = sizeof(ctl.buf) };
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
		if (n >= 0 || errno != EINTR)
			break;
	}
	if (n < 0)
		return errno == ECONNRESET ? -EPIPE : -errno;
	if (n == 0)
		return -EPIPE;
	/* The one descriptor of a good answer; anything else sent along is closed. */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c && fd < 0; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	if (n != (ssize_t)sizeof(err) || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    (err == 0) != (fd >= 0) || err > 0) {
		close_passed(&m, -1);
		return -EPROTO;
	}
	close_passed(&m, fd);
	return err < 0 ? err : fd;
}

int util_broker_recv(int sock, char *path, size_t size)
{
	char req[sizeof(broker_magic) + UTIL_BROKER_PATH_MAX];
	ssize_t n;
	size_t len;

	if (size < UTIL_BROKER_PATH_MAX)
		return -EINVAL;
	do
		n = recv(sock, req, sizeof(req), MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	path[0] = '\0';
	if ((size_t)n > sizeof(req) || (size_t)n <= sizeof(broker_magic) ||
	    memcmp(req, broker_magic, sizeof(broker_magic)) != 0)
		return -EPROTO;
	len = (size_t)n - sizeof(broker_magic);
	if (len >= UTIL_BROKER_PATH_MAX || memchr(req + sizeof(broker_magic), '\0', len))
		return -EPROTO;
	memcpy(path, req + sizeof(broker_magic), len);
	path[len] = '\0';
	return 1;
}

int util_broker_reply(int sock, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	int32_t err = fd < 0 ? fd : 0;
	struct iovec iov = { .iov_base = &err, .iov_len = sizeof(err) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		m.msg_control = ctl.buf;
		m.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	}
	do
		n = sendmsg(sock, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == ECONNRESET ? -EPIPE : -errno;
	return 0;
}
