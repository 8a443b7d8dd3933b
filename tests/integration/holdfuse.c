/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * holdfuse.c: a FUSE file system whose FLUSH waits for the test, for the security
 * tests: a user holds their own exec with it (close-on-exec fds are closed inside
 * execve(2), after the new address space is in place and before the new
 * credentials are), as a hostile user serving their own FUSE file system can.
 *
 * usage: holdfuse MOUNTPOINT
 *
 * Mounts (as root, with allow_other) a file system of two files, "q" and "p"
 * (mode 0666), speaking the kernel's FUSE protocol on /dev/fuse directly.  Every
 * request is answered at once but FLUSH, which is held: SIGUSR1 answers the held
 * FLUSHes of "q", SIGUSR2 those of "p".  Prints "ready" once mounted and "held q"
 * or "held p" (flushed at once) as it holds each, so that a test can wait for it.
 * It ends on SIGTERM/SIGINT: closing /dev/fuse aborts the connection.
 */
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/signalfd.h>

#include "fuse-proto.h"

static char buf[FUSE_MIN_READ_BUFFER + (1 << 20)];

#define NODE_Q 2
#define NODE_P 3
#define HELD_MAX 64

static uint64_t held[2][HELD_MAX];
static unsigned nheld[2];

static void release_held(int fd, int k)
{
	for (unsigned i = 0; i < nheld[k]; i++)
		fuse_reply(fd, held[k][i], 0, NULL, 0);
	nheld[k] = 0;
}

int main(int argc, char **argv)
{
	struct pollfd pf[2];
	sigset_t sigs;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: holdfuse MOUNTPOINT\n");
		return 2;
	}
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGUSR2);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	pf[1].fd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (pf[1].fd < 0) {
		perror("holdfuse: signalfd");
		return 77;
	}
	fd = fuse_mount(argv[1], "holdfuse");
	pf[0].fd = fd;
	pf[0].events = pf[1].events = POLLIN;
	for (;;) {
		struct fuse_in_header *in = (struct fuse_in_header *)buf;
		void *arg = buf + sizeof(*in);
		ssize_t n;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(pf[1].fd, &si, sizeof(si)) == sizeof(si))
				release_held(fd, si.ssi_signo == SIGUSR1 ? 0 : 1);
		}
		if (!(pf[0].revents & (POLLIN | POLLERR | POLLHUP)))
			continue;
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == ENOENT || errno == EAGAIN))
			continue;
		if (n < (ssize_t)sizeof(*in))
			break; /* unmounted (ENODEV) */
		switch (in->opcode) {
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
		case FUSE_INTERRUPT:
			break; /* no reply is ever due */
		case FUSE_INIT:
			fuse_init_reply(fd, in, arg);
			break;
		case FUSE_LOOKUP: {
			struct fuse_entry_out e;
			const char *name = arg;
			uint64_t node = strcmp(name, "q") == 0 ? NODE_Q
					: strcmp(name, "p") == 0 ? NODE_P : 0;

			if (!node) {
				fuse_reply(fd, in->unique, -ENOENT, NULL, 0);
				break;
			}
			memset(&e, 0, sizeof(e));
			e.nodeid = node;
			e.generation = 1;
			fuse_fill_attr(node, &e.attr);
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
			struct fuse_open_out o = { .fh = in->nodeid };

			fuse_reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_FLUSH: {
			int k = in->nodeid == NODE_Q ? 0 : 1;

			if (nheld[k] == HELD_MAX) {
				fuse_reply(fd, in->unique, 0, NULL, 0);
				break;
			}
			held[k][nheld[k]++] = in->unique;
			printf("held %c\n", k ? 'p' : 'q');
			fflush(stdout);
			break;
		}
		case FUSE_RELEASE:
			fuse_reply(fd, in->unique, 0, NULL, 0);
			break;
		default:
			fuse_reply(fd, in->unique, -ENOSYS, NULL, 0);
			break;
		}
	}
	return 0;
}
