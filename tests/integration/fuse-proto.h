/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuse-proto.h: what the security tests' FUSE servers (stuckfuse.c, holdfuse.c)
 * share of the kernel's FUSE protocol, spoken on /dev/fuse directly: a reply, the
 * attributes of the root and of a file (mode 0666, zero timeouts, so that every
 * stat(2) that may ask the server does), INIT's answer and the mount.
 */
#ifndef HWPMCD_TEST_FUSE_PROTO_H
#define HWPMCD_TEST_FUSE_PROTO_H

#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static void fuse_reply(int fd, uint64_t unique, int error, const void *arg, size_t len)
{
	char out[sizeof(struct fuse_out_header) + 4096];
	struct fuse_out_header *h = (struct fuse_out_header *)out;

	h->len = (uint32_t)(sizeof(*h) + len);
	h->error = error;
	h->unique = unique;
	memcpy(out + sizeof(*h), arg, len);
	if (write(fd, out, h->len) < 0 && errno != ENOENT)
		perror("fuse: write");
}

static void fuse_fill_attr(uint64_t node, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = node;
	a->mode = node == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0666;
	a->nlink = node == FUSE_ROOT_ID ? 2 : 1;
	a->blksize = 4096;
}

static void fuse_init_reply(int fd, const struct fuse_in_header *in, const void *arg)
{
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

	fuse_reply(fd, in->unique, 0, &o, sizeof(o));
}

/* /dev/fuse opened and mounted at @mnt as "fuse.@name" (allow_other): the fd, or exit 77. */
static int fuse_mount(const char *mnt, const char *name)
{
	char opts[256], type[64];
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		perror("fuse: /dev/fuse");
		_exit(77);
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fd);
	snprintf(type, sizeof(type), "fuse.%s", name);
	if (mount(name, mnt, type, MS_NOSUID | MS_NODEV, opts) < 0) {
		perror("fuse: mount");
		_exit(77);
	}
	printf("ready\n");
	fflush(stdout);
	return fd;
}

#endif /* HWPMCD_TEST_FUSE_PROTO_H */
