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
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

static char buf[FUSE_MIN_READ_BUFFER + (1 << 20)];

#define NODE_Q 2
#define NODE_P 3
#define HELD_MAX 64

static uint64_t held[2][HELD_MAX];
static unsigned nheld[2];

static void reply(int fd, uint64_t unique, int error, const void *arg, size_t len)
{
	char out[sizeof(struct fuse_out_header) + 4096];
	struct fuse_out_header *h = (struct fuse_out_header *)out;

	h->len = (uint32_t)(sizeof(*h) + len);
	h->error = error;
	h->unique = unique;
	memcpy(out + sizeof(*h), arg, len);
	if (write(fd, out, h->len) < 0 && errno != ENOENT)
		perror("holdfuse: write");
}

static void fill_attr(uint64_t node, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = node;
	a->mode = node == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0666;
	a->nlink = node == FUSE_ROOT_ID ? 2 : 1;
	a->blksize = 4096;
}

static void release_held(int fd, int k)
{
	for (unsigned i = 0; i < nheld[k]; i++)
		reply(fd, held[k][i], 0, NULL, 0);
	nheld[k] = 0;
}

int main(int argc, char **argv)
{
	char opts[256];
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
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0 || pf[1].fd < 0) {
		perror("holdfuse: /dev/fuse");
		return 77;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fd);
	if (mount("holdfuse", argv[1], "fuse.holdfuse", MS_NOSUID | MS_NODEV, opts) < 0) {
		perror("holdfuse: mount");
		return 77;
	}
	printf("ready\n");
	fflush(stdout);
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
			const char *name = arg;
			uint64_t node = strcmp(name, "q") == 0 ? NODE_Q
					: strcmp(name, "p") == 0 ? NODE_P : 0;

			if (!node) {
				reply(fd, in->unique, -ENOENT, NULL, 0);
				break;
			}
			memset(&e, 0, sizeof(e));
			e.nodeid = node;
			e.generation = 1;
			fill_attr(node, &e.attr);
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
			struct fuse_open_out o = { .fh = in->nodeid };

			reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_FLUSH: {
			int k = in->nodeid == NODE_Q ? 0 : 1;

			if (nheld[k] == HELD_MAX) {
				reply(fd, in->unique, 0, NULL, 0);
				break;
			}
			held[k][nheld[k]++] = in->unique;
			printf("held %c\n", k ? 'p' : 'q');
			fflush(stdout);
			break;
		}
		case FUSE_RELEASE:
			reply(fd, in->unique, 0, NULL, 0);
			break;
		default:
			reply(fd, in->unique, -ENOSYS, NULL, 0);
			break;
		}
	}
	return 0;
}
