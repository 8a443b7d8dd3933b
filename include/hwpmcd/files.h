/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * files.h: the one way hwpmc and hwpmcd create files and directories (module
 * common).
 *
 * PUBLIC INTERFACES
 *   struct util_dir: util_dir__open(), util_dir__open_parent(), util_dir__make(),
 *   util_dir__close(), util_dir_ensure(), util_file_new()
 *   util_file_create(), util_file_create_temp(), util_file_commit(),
 *   util_file_remove(), util_file_append(), util_dir_commit(), util_dir_remove(),
 *   util_output_open(), util_output__commit(), util_output__abandon(),
 *   util_output__close(), util_parse_mode(), util_files_strerror()
 *
 * IMPLEMENTATION NOTES
 *   Every file and directory is created inside a directory opened once and
 *   checked (struct util_dir), by a single name relative to its descriptor:
 *   openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) with
 *   O_CREAT | O_EXCL, so no link is ever followed and nothing that exists is ever
 *   opened for writing by a create.  A directory is used only if it is the
 *   caller's (its effective uid) or root's and nobody else may write it, or if it
 *   is sticky (/tmp): then it is "shared", and only new files are made in it (in a
 *   sticky directory nobody else may rename or remove them).  A directory another
 *   user owns, or one others may write that is not sticky, is refused (-EACCES,
 *   util_files_strerror() says which): whoever can write it could rename what
 *   was made there and put their own in its place.
 *
 *   Files are 0600 and directories 0700 unless the caller asks otherwise.  An
 *   output that replaces an older file is written under a temporary name and
 *   renamed over the old one only when it is complete enough to keep
 *   (util_file_commit(): an old name that is another user's, a symbolic link or
 *   not a regular file is never replaced), so a refused or failed run leaves the
 *   previous file as it was.
 */
#ifndef HWPMCD_FILES_H
#define HWPMCD_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define UTIL_FILE_MODE 0600
#define UTIL_DIR_MODE  0700
/* Room for a temporary name beside a name of NAME_MAX - 16 bytes at most. */
#define UTIL_TEMP_NAME_MAX 256

/* A directory to create files in, opened and checked. */
struct util_dir {
	int fd;	     /* O_RDONLY | O_DIRECTORY, -1: none */
	bool shared; /* others may write it: it is sticky, only new files are made */
};

#define UTIL_DIR_NONE ((struct util_dir){ .fd = -1 })

/*
 * util_dir__open: open the directory @path (resolved as the caller's own path,
 * symbolic links included: the kernel's protected_symlinks rule applies) and
 * check it as above.  With @private, a shared (sticky) directory is refused too
 * (the daemon's state directory).  0 with *@ret_d set, or a negative errno with
 * a message naming @path in @err (@errlen bytes): -EPERM (another user's, or
 * writable by others and not sticky), -ENOTDIR, or what open(2) says.
 */
int util_dir__open(const char *path, bool private, struct util_dir *ret_d, char *err,
		   size_t errlen);

/*
 * util_dir__open_parent: util_dir__open() of the directory of the file @path
 * ("." for a bare name), with the last component of @path in *@ret_name
 * (pointing into @path).  -EINVAL for a path that ends in '/' or names "." or "..".
 */
int util_dir__open_parent(const char *path, struct util_dir *ret_d, const char **ret_name,
			  char *err, size_t errlen);

/*
 * util_dir__make: a new directory @name (one component) in @d with @mode (0:
 * UTIL_DIR_MODE), opened as a util_dir of its own in *@ret (never shared).
 * -EEXIST if the name exists, whatever it is.
 */
int util_dir__make(const struct util_dir *d, const char *name, mode_t mode, struct util_dir *ret);

/*
 * util_dir_ensure: the directory @path, made (mkdirat in its checked parent, @mode)
 * if it is missing, then opened and checked as private (util_dir__open()): the
 * daemon's state and profile directories.  0 with *@ret_d (NULL: closed again), or
 * -errno with a message naming @path in @err.
 */
int util_dir_ensure(const char *path, mode_t mode, struct util_dir *ret_d, char *err,
		    size_t errlen);

/*
 * util_file_new: a new file at @path (O_EXCL, @mode, 0: UTIL_FILE_MODE) whose
 * directory must be private to the caller (util_dir__open() with private): the
 * daemon's logs and side files in its own directories.  The fd, or -errno with
 * @err.
 */
int util_file_new(const char *path, mode_t mode, char *err, size_t errlen);

/* util_dir__close: close @d's descriptor (a NONE or closed one is left alone). */
void util_dir__close(struct util_dir *d);

/*
 * util_file_create: a new file @name (one component) in @d, O_WRONLY | O_CREAT |
 * O_EXCL | O_CLOEXEC plus @flags (O_APPEND, O_RDWR instead of O_WRONLY...), with
 * @mode (0: UTIL_FILE_MODE).  The fd, or a negative errno (-EEXIST: the name is
 * taken, whatever it is).
 */
int util_file_create(const struct util_dir *d, const char *name, mode_t mode, int flags);

/*
 * util_file_create_temp: a new file in @d under a fresh name ".NAME.XXXXXX"
 * (written into @tmp, UTIL_TEMP_NAME_MAX bytes), to be renamed over @name with
 * util_file_commit() or removed with util_file_remove().  The fd or -errno.
 */
int util_file_create_temp(const struct util_dir *d, const char *name, mode_t mode, int flags,
			  char *tmp);

/*
 * util_file_commit: rename @tmp over @name in @d.  @name may be absent, or a
 * regular file of the caller's effective uid (its other hard links, if any, keep
 * the old file); anything else there (a symbolic link, another user's file, a
 * FIFO, a directory) is not replaced: -ELOOP, -EPERM or -EINVAL, and @tmp stays.
 */
int util_file_commit(const struct util_dir *d, const char *tmp, const char *name);

/* util_file_remove: unlink @name in @d (a file this caller made there).  0 or -errno. */
int util_file_remove(const struct util_dir *d, const char *name);

/*
 * util_file_append: open @name in the private (not shared) directory @d for
 * appending, created if missing: an existing @name must be a regular file of the
 * caller's uid with one link (a directory only the caller writes has no other).
 * Opened O_NONBLOCK | O_NOFOLLOW, so that nothing there can make it wait.  The fd
 * or -errno (-EPERM for a shared @d or a file that is not the caller's).
 */
int util_file_append(const struct util_dir *d, const char *name, mode_t mode);

/*
 * util_dir_commit: rename the directory @tmp over @name in @d: @name may be
 * absent, or a directory of the caller's uid, which is emptied and removed
 * first (util_dir_remove()).  0 or -errno (@tmp stays).
 */
int util_dir_commit(const struct util_dir *d, const char *tmp, const char *name);

/*
 * util_dir_remove: remove the directory @name in @d and the files in it (one
 * level: a directory below makes it fail with -ENOTEMPTY), if it is the caller's
 * and not shared.  Never follows a link: entries are unlinked by name.
 */
int util_dir_remove(const struct util_dir *d, const char *name);

/*
 * An output file given by name (-o FILE, --flame FILE...): util_output_open()
 * opens it; its fd is written; util_output__commit() puts it in place at the end
 * (or at once, for an output that must be visible while written), and
 * util_output__abandon() leaves the old file (if any) as it was.
 */
struct util_output {
	int fd;			       /* where to write; -1: none */
	struct util_dir dir;	       /* the file's directory (NONE: a descriptor's name) */
	char name[UTIL_TEMP_NAME_MAX]; /* the name asked for, in dir */
	char tmp[UTIL_TEMP_NAME_MAX];  /* the temporary name, "" if written in place */
};

/*
 * util_output_open: an output for @path: /dev/stdout, /dev/stderr, /dev/fd/N and
 * /proc/self/fd/N name the caller's own descriptor (duplicated, if open for
 * writing: -EBADF otherwise); a FIFO of the caller's (waited for, as any writer
 * waits for a reader) or a character device (only root makes those: /dev/null)
 * is opened and written in place; otherwise a new temporary file is made in the
 * file's directory (checked: util_dir__open()), to be renamed over @path, which
 * must be absent or a regular file of the caller's, by util_output__commit().
 * An existing @path is checked at once so that a run is not made for nothing:
 * -ELOOP (a symbolic link), -EPERM (another user's), -EINVAL (a directory, a
 * socket...).  @mode 0: UTIL_FILE_MODE.  0 with *@ret_o filled, or -errno with
 * a message naming what was refused and why in @err (@errlen bytes).
 */
int util_output_open(const char *path, mode_t mode, struct util_output *ret_o, char *err,
		     size_t errlen);

/*
 * util_output__commit: rename the temporary file over the name (nothing for an
 * output written in place).  The fd stays open (and -1 stays -1): closing is the
 * caller's.  0 or -errno (the temporary file is then removed).
 */
int util_output__commit(struct util_output *o);

/*
 * util_output__abandon: remove the temporary file (if not yet committed), close
 * the fd and the directory.  Safe on a zeroed, failed or committed output.
 */
void util_output__abandon(struct util_output *o);

/* util_output__close: close the fd and the directory (after a commit). */
void util_output__close(struct util_output *o);

/*
 * util_parse_mode: an octal file mode of permission bits (--mode 0640): at most
 * 0777, with the owner's read and write bits (an output its owner cannot read or
 * rewrite is a mistake).  0 with *@ret_mode, or -EINVAL.
 */
int util_parse_mode(const char *s, mode_t *ret_mode);

/* util_files_strerror: a message for an error @r (negative) of these functions. */
const char *util_files_strerror(int r);

#endif /* HWPMCD_FILES_H */
