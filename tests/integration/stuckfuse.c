/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stuckfuse.c: a FUSE file system that stops answering, for the security tests.
 *
 * usage: stuckfuse MOUNTPOINT
 *
 * Mounts (as root, with allow_other) a file system holding one file, "f" (mode
 * 0666), speaking the kernel's FUSE protocol on /dev/fuse directly.  It answers
 * INIT, LOOKUP, GETATTR and OPEN until the first OPEN; from then on it answers
 * nothing at all (FLUSH, WRITE, GETATTR, STATFS, IOCTL, RELEASE...): every
 * process that asks the file system anything waits, as with a hostile user's
 * FUSE server.  Attributes are given with a zero timeout, so every stat(2) that
 * may ask the server does.  The requests it holds are counted on stderr.  It
 * ends on SIGTERM/SIGINT: closing /dev/fuse aborts the connection, and every
 * waiter gets ENOTCONN.  Prints "ready" on stdout once mounted.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static char buf[FUSE_MIN_READ_BUFFER + (1 << 20)];

static void reply(int fd, uint64_t unique, int error, const void *arg, size_t len)
{
	char out[sizeof(struct fuse_out_header) + 4096];
	struct fuse_out_header *h = (struct fuse_out_header *)out;

	h->len = (uint32_t)(sizeof(*h) + len);
	h->error = error;
	h->unique = unique;
	memcpy(out + sizeof(*h), arg, len);
	if (write(fd, out, h->len) < 0 && errno != ENOENT)
		perror("stuckfuse: write");
}

static void fill_attr(uint64_t node, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = node;
	a->mode = node == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0666;
	a->nlink = node == FUSE_ROOT_ID ? 2 : 1;
	a->blksize = 4096;
}

int main(int argc, char **argv)
{
	char opts[256];
	int fd, stuck = 0;
	unsigned held = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: stuckfuse MOUNTPOINT\n");
		return 2;
	}
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("stuckfuse: /dev/fuse");
		return 77;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fd);
	if (mount("stuckfuse", argv[1], "fuse.stuckfuse", MS_NOSUID | MS_NODEV, opts) < 0) {
		perror("stuckfuse: mount");
		return 77;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		struct fuse_in_header *in = (struct fuse_in_header *)buf;
		void *arg = buf + sizeof(*in);

		if (n < 0 && (errno == EINTR || errno == ENOENT || errno == EAGAIN))
			continue;
		if (n < (ssize_t)sizeof(*in))
			break; /* unmounted (ENODEV) */
		if (in->opcode == FUSE_FORGET || in->opcode == FUSE_BATCH_FORGET ||
		    in->opcode == FUSE_INTERRUPT)
			continue; /* no reply is ever due */
		if (stuck) {
			fprintf(stderr, "stuckfuse: holding request %u (opcode %u), %u held\n",
				(unsigned)in->unique, in->opcode, ++held);
			continue;
		}
		switch (in->opcode) {
		case FUSE_INIT: {
			const struct fuse_init_in *ii = arg;
			struct fuse_init_out o = { .major = FUSE_KERNEL_VERSION,
						   .minor = ii->minor < FUSE_KERNEL_MINOR_VERSION
								    ? ii->minor
								    : FUSE_KERNEL_MINOR_VERSION,
						   .max_readahead = ii->max_readahead,
						   .max_write = 4096,
						   .max_background = 16,
						   .congestion_threshold = 12,
						   .time_gran = 1 };

			reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_LOOKUP: {
			struct fuse_entry_out e;

			if (strcmp((const char *)arg, "f") != 0) {
				reply(fd, in->unique, -ENOENT, NULL, 0);
				break;
			}
			memset(&e, 0, sizeof(e));
			e.nodeid = 2;
			e.generation = 1;
			fill_attr(2, &e.attr);
			reply(fd, in->unique, 0, &e, sizeof(e));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out a;

			memset(&a, 0, sizeof(a));
			fill_attr(in->nodeid, &a.attr);
			reply(fd, in->unique, 0, &a, sizeof(a));
			break;
		}
		case FUSE_OPEN: {
			struct fuse_open_out o = { .fh = 1 };

			reply(fd, in->unique, 0, &o, sizeof(o));
			stuck = 1;
			fprintf(stderr, "stuckfuse: opened; answering nothing from now on\n");
			break;
		}
		default:
			reply(fd, in->unique, -ENOSYS, NULL, 0);
			break;
		}
	}
	return 0;
}
