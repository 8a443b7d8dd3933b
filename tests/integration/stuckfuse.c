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
#include <stdlib.h>

#include "fuse-proto.h"

static char buf[FUSE_MIN_READ_BUFFER + (1 << 20)];

int main(int argc, char **argv)
{
	int fd, stuck = 0;
	unsigned held = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: stuckfuse MOUNTPOINT\n");
		return 2;
	}
	fd = fuse_mount(argv[1], "stuckfuse");
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
		case FUSE_INIT:
			fuse_init_reply(fd, in, arg);
			break;
		case FUSE_LOOKUP: {
			struct fuse_entry_out e;

			if (strcmp((const char *)arg, "f") != 0) {
				fuse_reply(fd, in->unique, -ENOENT, NULL, 0);
				break;
			}
			memset(&e, 0, sizeof(e));
			e.nodeid = 2;
			e.generation = 1;
			fuse_fill_attr(2, &e.attr);
			fuse_reply(fd, in->unique, 0, &e, sizeof(e));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out a;

			memset(&a, 0, sizeof(a));
			fuse_fill_attr(in->nodeid, &a.attr);
			fuse_reply(fd, in->unique, 0, &a, sizeof(a));
			break;
		}
		case FUSE_OPEN: {
			struct fuse_open_out o = { .fh = 1 };

			fuse_reply(fd, in->unique, 0, &o, sizeof(o));
			stuck = 1;
			fprintf(stderr, "stuckfuse: opened; answering nothing from now on\n");
			break;
		}
		default:
			fuse_reply(fd, in->unique, -ENOSYS, NULL, 0);
			break;
		}
	}
	return 0;
}
