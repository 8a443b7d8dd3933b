/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common-files.c: the one way files and directories are created (files.h).
 *
 * PUBLIC INTERFACES
 *   see include/hwpmcd/files.h
 *
 * IMPLEMENTATION NOTES
 *   Names are always one component relative to a checked directory's
 *   descriptor, so the directory is looked up once: a rename of one of its
 *   parents, or a link planted in the path after the check, changes nothing.
 *   Creation is openat2() with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 *   RESOLVE_NO_MAGICLINKS and O_CREAT | O_EXCL (openat() with O_NOFOLLOW where
 *   openat2 is refused: a seccomp filter's ENOSYS), mkdirat() for directories
 *   (it never follows a link either).  A rename over an old name is
 *   renameat2(RENAME_NOREPLACE) when the name was absent, so that a file planted
 *   after the look is not replaced silently.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hwpmcd/common.h"
#include "hwpmcd/files.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* A name that is one component: not empty, no '/', not "." or "..". */
static int check_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	return n > NAME_MAX ? -ENAMETOOLONG : 0;
}

/* openat2() of the one component @name below @dfd, no link of any kind followed. */
static int open_beneath(int dfd, const char *name, int flags, mode_t mode)
{
	struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC | O_NOCTTY),
				.mode = flags & O_CREAT ? mode : 0,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS };
	int fd, r = check_name(name);

	if (r < 0)
		return r;
	fd = util_openat2(dfd, name, &how);
	if (fd < 0 && (errno == ENOSYS || errno == EPERM)) /* a filter's refusal of openat2 */
		fd = openat(dfd, name, flags | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, mode);
	return fd < 0 ? -errno : fd;
}

/* Whether the directory @st may be created in by this caller: 0, or -EPERM with @err. */
static int dir_check(const struct stat *st, const char *path, bool private, bool *ret_shared,
		     char *err, size_t errlen)
{
	uid_t me = geteuid();

	if (!S_ISDIR(st->st_mode)) {
		snprintf(err, errlen, "'%s' is not a directory", path);
		return -ENOTDIR;
	}
	if (st->st_uid != me && st->st_uid != 0) {
		snprintf(err, errlen, "'%s' is the directory of uid %u, another user: refusing to "
			 "create files in it (its owner could replace them); write to a directory "
			 "of your own", path, (unsigned)st->st_uid);
		return -EPERM;
	}
	if (st->st_mode & 022) {
		if (!(st->st_mode & S_ISVTX)) {
			snprintf(err, errlen, "'%s' is a directory others may write and it is not "
				 "sticky: refusing to create files in it (another user could replace "
				 "them); write to a directory of your own, or make it sticky "
				 "(chmod +t) or not writable by others (chmod go-w)", path);
			return -EPERM;
		}
		if (private) {
			snprintf(err, errlen, "'%s' is a directory others may write: it must be a "
				 "directory of uid %u that only it may write", path, (unsigned)me);
			return -EPERM;
		}
		*ret_shared = true;
	} else {
		*ret_shared = false;
	}
	return 0;
}

int util_dir__open(const char *path, bool private, struct util_dir *ret_d, char *err,
		   size_t errlen)
{
	struct stat st;
	bool shared = false;
	int fd, r;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "directory '%s': %s", path, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "directory '%s': %s", path, strerror(-r));
	} else {
		r = dir_check(&st, path, private, &shared, err, errlen);
	}
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret_d = (struct util_dir){ .fd = fd, .shared = shared };
	return 0;
}

static int dir_of(const char *path, char *dir, size_t size, const char **ret_name);

int util_dir__open_parent(const char *path, struct util_dir *ret_d, const char **ret_name,
			  char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	char dir[4096];
	int r;

	if (check_name(name) < 0 || strlen(name) + 16 > NAME_MAX) {
		r = check_name(name) < 0 ? -EINVAL : -ENAMETOOLONG;
		snprintf(err, errlen, "'%s': %s", path,
			 r == -EINVAL ? "names no file (it ends in '/', '.' or '..')"
				      : "its last component is too long");
		return r;
	}
	if (dir_of(path, dir, sizeof(dir), &name) < 0)
		return snprintf(err, errlen, "'%s': too long", path), -ENAMETOOLONG;
	r = util_dir__open(dir, false, ret_d, err, errlen);
	if (r == 0)
		*ret_name = name;
	return r;
}

int util_dir__make(const struct util_dir *d, const char *name, mode_t mode, struct util_dir *ret)
{
	struct stat st;
	int fd, r = check_name(name);

	if (r < 0)
		return r;
	if (mkdirat(d->fd, name, mode ? mode : UTIL_DIR_MODE) < 0)
		return -errno;
	fd = open_beneath(d->fd, name, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return fd;
	/*
	 * In a shared directory nobody else may rename ours; still, it must be ours,
	 * and writable by others only as far as the caller asked for it (--mode).
	 */
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (st.st_uid != geteuid() || (st.st_mode & 022 & ~(mode ? mode : UTIL_DIR_MODE)))
		r = -EPERM;
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret = (struct util_dir){ .fd = fd, .shared = false };
	return 0;
}

/* The directory of @path ("." for a bare name) into @dir (@size bytes). */
static int dir_of(const char *path, char *dir, size_t size, const char **ret_name)
{
	const char *slash = strrchr(path, '/');

	*ret_name = slash ? slash + 1 : path;
	if (!slash)
		return snprintf(dir, size, ".") < 0 ? -EINVAL : 0;
	if (slash == path)
		return snprintf(dir, size, "/") < 0 ? -EINVAL : 0;
	if ((size_t)(slash - path) >= size)
		return -ENAMETOOLONG;
	snprintf(dir, size, "%.*s", (int)(slash - path), path);
	return 0;
}

int util_dir_ensure(const char *path, mode_t mode, struct util_dir *ret_d, char *err,
		    size_t errlen)
{
	struct util_dir parent, d;
	const char *name;
	char dir[4096];
	int r = dir_of(path, dir, sizeof(dir), &name);

	if (r == 0 && check_name(name) < 0)
		r = -EINVAL;
	if (r < 0) {
		snprintf(err, errlen, "'%s': not a directory path", path);
		return r;
	}
	r = util_dir__open(dir, false, &parent, err, errlen);
	if (r < 0)
		return r;
	if (mkdirat(parent.fd, name, mode ? mode : UTIL_DIR_MODE) < 0 && errno != EEXIST) {
		r = -errno;
		snprintf(err, errlen, "cannot make the directory '%s': %s", path, strerror(-r));
	}
	util_dir__close(&parent);
	if (r == 0)
		r = util_dir__open(path, true, &d, err, errlen);
	if (r < 0)
		return r;
	if (ret_d)
		*ret_d = d;
	else
		util_dir__close(&d);
	return 0;
}

int util_file_new(const char *path, mode_t mode, char *err, size_t errlen)
{
	struct util_dir d;
	const char *name;
	char dir[4096];
	int fd, r = dir_of(path, dir, sizeof(dir), &name);

	if (r < 0) {
		snprintf(err, errlen, "'%s': %s", path, strerror(-r));
		return r;
	}
	r = util_dir__open(dir, true, &d, err, errlen);
	if (r < 0)
		return r;
	fd = util_file_create(&d, name, mode, 0);
	util_dir__close(&d);
	if (fd < 0)
		snprintf(err, errlen, "cannot create '%s': %s", path, strerror(-fd));
	return fd;
}

void util_dir__close(struct util_dir *d)
{
	if (d && d->fd >= 0) {
		close(d->fd);
		d->fd = -1;
	}
}

int util_file_create(const struct util_dir *d, const char *name, mode_t mode, int flags)
{
	if (!(flags & O_ACCMODE))
		flags |= O_WRONLY;
	return open_beneath(d->fd, name, flags | O_CREAT | O_EXCL, mode ? mode : UTIL_FILE_MODE);
}

int util_file_create_temp(const struct util_dir *d, const char *name, mode_t mode, int flags,
			  char *tmp)
{
	int r = check_name(name);

	if (r < 0)
		return r;
	if (strlen(name) + 9 > NAME_MAX)
		return -ENAMETOOLONG;
	for (int tries = 0; tries < 64; tries++) {
		uint32_t x = 0;

		if (getrandom(&x, sizeof(x), 0) != sizeof(x))
			x = (uint32_t)util_now_ns(CLOCK_MONOTONIC) ^ (uint32_t)getpid() * 2654435761u;
		snprintf(tmp, UTIL_TEMP_NAME_MAX, ".%s.%06x", name, x & 0xffffff);
		r = util_file_create(d, tmp, mode, flags);
		if (r != -EEXIST)
			break;
	}
	if (r < 0)
		tmp[0] = '\0';
	return r;
}

/* Whether @name in @d may be replaced: 0 (ours, a regular file), 1 (absent) or -errno. */
static int replaceable(const struct util_dir *d, const char *name, bool dir)
{
	struct stat st;

	if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 1 : -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
		return -EINVAL;
	return st.st_uid == geteuid() ? 0 : -EPERM;
}

static int rename_in(const struct util_dir *d, const char *tmp, const char *name, bool absent)
{
	if (absent)
		return syscall(SYS_renameat2, d->fd, tmp, d->fd, name, RENAME_NOREPLACE) < 0 ? -errno
											: 0;
	return renameat(d->fd, tmp, d->fd, name) < 0 ? -errno : 0;
}

int util_file_commit(const struct util_dir *d, const char *tmp, const char *name)
{
	int r = check_name(name);

	if (r == 0)
		r = replaceable(d, name, false);
	return r < 0 ? r : rename_in(d, tmp, name, r == 1);
}

int util_file_remove(const struct util_dir *d, const char *name)
{
	int r = check_name(name);

	if (r < 0)
		return r;
	return unlinkat(d->fd, name, 0) < 0 ? -errno : 0;
}

int util_file_append(const struct util_dir *d, const char *name, mode_t mode)
{
	struct stat st;
	int fd;

	if (d->shared)
		return -EPERM;
	fd = open_beneath(d->fd, name, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK,
			  mode ? mode : UTIL_FILE_MODE);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_nlink != 1) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int util_dir_remove(const struct util_dir *d, const char *name)
{
	struct stat st;
	struct dirent *de;
	DIR *dp;
	int fd, r = 0;

	fd = open_beneath(d->fd, name, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return -EPERM; /* someone else's, or others could have put anything in it */
	}
	dp = fdopendir(fd);
	if (!dp) {
		r = -errno;
		close(fd);
		return r;
	}
	while (r == 0 && (de = readdir(dp)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(dp), de->d_name, 0) < 0)
			r = errno == EISDIR ? -ENOTEMPTY : -errno;
	}
	closedir(dp);
	if (r == 0 && unlinkat(d->fd, name, AT_REMOVEDIR) < 0)
		r = -errno;
	return r;
}

int util_dir_commit(const struct util_dir *d, const char *tmp, const char *name)
{
	int r = check_name(name);

	if (r == 0)
		r = replaceable(d, name, true);
	if (r == 0) /* our old one: emptied and removed, then the name is free */
		r = util_dir_remove(d, name);
	return r < 0 ? r : rename_in(d, tmp, name, true);
}

/* Open our own FIFO or a character device @name in @d for writing, in place. */
static int open_in_place(const struct util_dir *d, const char *name, const struct stat *lst)
{
	struct stat st;
	int fd, flags;

	fd = open_beneath(d->fd, name, O_WRONLY | O_NONBLOCK, 0);
	if (fd == -ENXIO && S_ISFIFO(lst->st_mode)) {
		/* Our own FIFO without a reader yet: wait for it, as any writer of one does. */
		fd = open_beneath(d->fd, name, O_WRONLY, 0);
	}
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || st.st_dev != lst->st_dev || st.st_ino != lst->st_ino ||
	    (flags = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		close(fd);
		return -EAGAIN; /* another file took its place meanwhile */
	}
	return fd;
}

int util_output_open(const char *path, mode_t mode, struct util_output *ret_o, char *err,
		     size_t errlen)
{
	struct util_output o = { .fd = -1, .dir = UTIL_DIR_NONE };
	int own = util_own_fd_name(path), r;
	const char *name;
	struct stat lst;

	if (own >= 0) {
		/* A name of one of our own descriptors (a pipe, say): that descriptor. */
		o.fd = fcntl(own, F_DUPFD_CLOEXEC, 3);
		if (o.fd < 0 || (fcntl(o.fd, F_GETFL) & O_ACCMODE) == O_RDONLY) {
			r = o.fd < 0 ? -errno : -EBADF;
			if (o.fd >= 0)
				close(o.fd);
			snprintf(err, errlen, "%s: %s", path,
				 r == -EBADF ? "not open for writing" : strerror(-r));
			return r;
		}
		snprintf(o.name, sizeof(o.name), "%s", path);
		*ret_o = o;
		return 0;
	}
	r = util_dir__open_parent(path, &o.dir, &name, err, errlen);
	if (r < 0)
		return r;
	snprintf(o.name, sizeof(o.name), "%s", name);
	if (fstatat(o.dir.fd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(lst.st_mode))
			r = -ELOOP;
		else if (!S_ISREG(lst.st_mode) && !S_ISFIFO(lst.st_mode) && !S_ISCHR(lst.st_mode))
			r = -EINVAL;
		else if (!S_ISCHR(lst.st_mode) && lst.st_uid != geteuid())
			r = -EPERM; /* another user's file or FIFO: never replaced, never waited for */
		else if (!S_ISREG(lst.st_mode))
			o.fd = r = open_in_place(&o.dir, name, &lst);
	} else if (errno != ENOENT) {
		r = -errno;
	}
	if (r == 0 && o.fd < 0)
		o.fd = r = util_file_create_temp(&o.dir, name, mode, 0, o.tmp);
	if (r < 0) {
		snprintf(err, errlen, "%s: %s", path, util_files_strerror(r));
		util_dir__close(&o.dir);
		return r;
	}
	*ret_o = o;
	return 0;
}

int util_output__commit(struct util_output *o)
{
	int r;

	if (!o->tmp[0])
		return 0;
	r = util_file_commit(&o->dir, o->tmp, o->name);
	if (r < 0)
		(void)util_file_remove(&o->dir, o->tmp);
	o->tmp[0] = '\0';
	return r;
}

void util_output__close(struct util_output *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	util_dir__close(&o->dir);
}

void util_output__abandon(struct util_output *o)
{
	if (o->tmp[0] && o->dir.fd >= 0)
		(void)util_file_remove(&o->dir, o->tmp);
	o->tmp[0] = '\0';
	util_output__close(o);
}

int util_parse_mode(const char *s, mode_t *ret_mode)
{
	char *end;
	unsigned long v;

	if (!s || !*s || strspn(s, "01234567") != strlen(s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 8);
	if (errno || *end || v > 0777 || (v & 0600) != 0600)
		return -EINVAL;
	*ret_mode = (mode_t)v;
	return 0;
}

const char *util_files_strerror(int r)
{
	switch (r) {
	case -ELOOP:
		return "a symbolic link: refusing to write through it or replace it";
	case -EPERM:
		return "exists and is another user's: refusing to replace it";
	case -EINVAL:
		return "exists and is not a regular file, FIFO or character device";
	case -EAGAIN:
		return "was replaced while it was being opened";
	case -EEXIST:
		return "appeared meanwhile: refusing to replace it";
	default:
		return strerror(-r);
	}
}
