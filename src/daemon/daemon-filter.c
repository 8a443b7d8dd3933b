/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-filter.c: where a session filter's cgroups and units are (daemon-ctl.h).
 *
 * PUBLIC INTERFACES
 *   daemon_filter_resolve(), daemon_cgroup2_root()
 *
 * IMPLEMENTATION NOTES
 *   The filter program matches cgroup ids (the kernel's kernfs node ids, which are
 *   the inode numbers of cgroup v2 directories).  A path is looked up below the
 *   cgroup v2 mount with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV)
 *   so that it cannot leave it; a unit is the directory of its name: first
 *   system.slice/NAME (where systemd puts system units), else a breadth-first
 *   search at most UNIT_DEPTH levels deep over at most UNIT_DIRS directories, which
 *   must find exactly one.  Without systemd's D-Bus API (no systemd here to test
 *   it against) that is how a unit is found; it finds user units too.  Runs in
 *   main: each lookup is bounded, whatever the machine holds.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon-ctl.h"

/* A unit searched this deep below the root, over at most this many directories. */
#define UNIT_DEPTH 4
#define UNIT_DIRS  4096

int daemon_cgroup2_root(const char *mounts, char *buf, size_t len)
{
	char dev[256], dir[512], type[64];
	FILE *f = fopen(mounts, "re");
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (r < 0 && fscanf(f, "%255s %511s %63s %*[^\n]", dev, dir, type) == 3) {
		if (strcmp(type, "cgroup2") == 0 && strlen(dir) < len) {
			snprintf(buf, len, "%s", dir);
			r = 0;
		}
	}
	fclose(f);
	return r;
}

/* The id of the cgroup directory @path below @rootfd, or -errno. */
static int cgroup_id_at(int rootfd, const char *path, bool check_fs, uint64_t *ret_id)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
	struct statfs sf;
	struct stat st;
	int fd, r = 0;

	while (*path == '/')
		path++;
	fd = *path ? (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how))
		   : fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (check_fs && (fstatfs(fd, &sf) < 0 || sf.f_type != CGROUP2_SUPER_MAGIC))
		r = -ENOTDIR;
	close(fd);
	if (r == 0)
		*ret_id = (uint64_t)st.st_ino;
	return r;
}

/* Find the directory named @unit below @root: its path relative to @root in @path. */
static int find_unit(int rootfd, const char *unit, char *path, size_t len)
{
	char (*queue)[DAEMON_CGROUP_NAME] = calloc(UNIT_DIRS, sizeof(*queue));
	unsigned int depth[UNIT_DIRS];
	size_t head = 0, tail = 0, found = 0;

	if (!queue)
		return -ENOMEM;
	snprintf(path, len, "system.slice/%s", unit);
	if (faccessat(rootfd, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		free(queue);
		return 0;
	}
	queue[tail][0] = '\0';
	depth[tail++] = 0;
	while (head < tail && found < 2) {
		const char *dir = queue[head];
		unsigned int d = depth[head++];
		/* rootfd is O_PATH: a directory to read is opened from it, the root as ".". */
		int fd = openat(rootfd, *dir ? dir : ".",
				O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
		struct dirent *de;

		if (!dp) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		while ((de = readdir(dp)) != NULL) {
			char sub[DAEMON_CGROUP_NAME];

			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", dir, *dir ? "/" : "",
					     de->d_name) >= sizeof(sub))
				continue;
			if (strcmp(de->d_name, unit) == 0) {
				if (found++ == 0)
					snprintf(path, len, "%s", sub);
				continue;
			}
			if (d + 1 < UNIT_DEPTH && tail < UNIT_DIRS) {
				snprintf(queue[tail], DAEMON_CGROUP_NAME, "%s", sub);
				depth[tail++] = d + 1;
			}
		}
		closedir(dp);
	}
	free(queue);
	if (found == 0)
		return -ENOENT;
	return found == 1 ? 0 : -ENOTUNIQ;
}

int daemon_filter_resolve(struct daemon_filter *f, const char *root, bool check_fs, char *err,
			  size_t errlen)
{
	char text[sizeof(f->text)], path[DAEMON_CGROUP_NAME];
	int rootfd, r = 0;

	f->spec.ncgroups = 0;
	/* Again and again for a profile: the text resolved last time goes. */
	if (f->base_len < sizeof(f->text))
		f->text[f->base_len] = '\0';
	if (f->ncgroups + f->nunits == 0)
		return 0;
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		r = -errno;
		snprintf(err, errlen, "filter: cannot open the cgroup v2 hierarchy at '%s': %s", root,
			 strerror(-r));
		return r;
	}
	/* The text so far has the other kinds; cgroups and units follow, resolved. */
	snprintf(text, sizeof(text), "%s", f->text);
	for (uint32_t i = 0; r == 0 && i < f->ncgroups + f->nunits; i++) {
		const char *name = f->cgroups[i];
		bool unit = i >= f->ncgroups;
		uint64_t id = 0;
		size_t n = strlen(text);

		bool located = true; /* a unit's directory found (a cgroup's is its path) */

		if (unit) {
			r = find_unit(rootfd, name, path, sizeof(path));
			located = r == 0;
		} else {
			snprintf(path, sizeof(path), "%s", name);
		}
		if (located)
			r = cgroup_id_at(rootfd, path, check_fs, &id);
		if (r == -ENOENT && f->missing_ok) {
			/* Id 0 is no cgroup's: nothing matches until it is there (again). */
			f->spec.cgroups[f->spec.ncgroups++] = 0;
			snprintf(text + n, sizeof(text) - n, "%s%s=%s(%s)", n ? " " : "",
				 unit ? "unit" : "cgroup", name, unit ? "not running" : "absent");
			r = 0;
			continue;
		}
		if (r < 0 && !located) {
			snprintf(err, errlen, r == -ENOTUNIQ ? "filter: more than one cgroup "
				 "is named '%s' below %s: name it with --cgroup PATH"
				 : "filter: unit '%s' has no cgroup below %s (is it running?)",
				 name, root);
			break;
		}
		if (r < 0) {
			snprintf(err, errlen, "filter: %s '%s': %s%s", unit ? "unit" : "cgroup", path,
				 r == -ENOTDIR ? "not a cgroup v2 directory below " : strerror(-r),
				 r == -ENOTDIR ? root : "");
			break;
		}
		f->spec.cgroups[f->spec.ncgroups++] = id;
		snprintf(text + n, sizeof(text) - n, "%s%s=%s%s%s%s", n ? " " : "",
			 unit ? "unit" : "cgroup", name, unit ? "(" : "", unit ? path : "",
			 unit ? ")" : "");
	}
	close(rootfd);
	if (r == 0)
		snprintf(f->text, sizeof(f->text), "%s", text);
	return r;
}
