/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-filter.c: where a session filter's cgroups and units are (daemon-ctl.h).
 *
 * PUBLIC INTERFACES
 *   daemon_filter_resolve(), daemon_filter_lookup(), daemon_cgroup2_root()
 *
 * IMPLEMENTATION NOTES
 *   The filter program matches cgroup ids (the kernel's kernfs node ids, which are
 *   the inode numbers of cgroup v2 directories).  A path is looked up below the
 *   cgroup v2 mount with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV)
 *   so that it cannot leave it; a unit is the directory of its name: first
 *   system.slice/NAME (where systemd puts system units), else the index of the
 *   tree: one breadth-first walk at most UNIT_DEPTH levels deep over at most
 *   UNIT_DIRS directories, which must name it exactly once.  The index serves
 *   every unit of every lookup for UNIT_INDEX_MS (one walk, however many units a
 *   request names and however many sessions follow theirs), under a mutex held
 *   only to read or swap it, never while walking.  Without systemd's D-Bus API (no
 *   systemd here to test it against) that is how a unit is found; it finds user
 *   units too.  Never on main: a session's worker resolves its filter when it
 *   starts, when a filter request changes it and when it follows its units
 *   (issue 32: a user's request naming 64 units once made main walk the tree 64
 *   times).
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
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
#include "hwpmcd/common.h"

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
	fd = *path ? util_openat2(rootfd, path, &how)
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

/* How long one walk of the tree serves lookups of units. */
#define UNIT_INDEX_MS 1000

/*
 * The directories of the tree by name (one walk): for each, its path below the
 * root, or dup set when the name is not unique.  Sorted by name for bsearch.
 */
struct unit_dir {
	char name[256];
	char path[DAEMON_CGROUP_NAME];
	bool dup;
};

struct unit_index {
	char root[512];
	int64_t made_ms;
	struct unit_dir *v;
	size_t n;
};

static pthread_mutex_t unit_lock = PTHREAD_MUTEX_INITIALIZER;
static struct unit_index *unit_cached; /* under unit_lock */

static void unit_index_free(struct unit_index *ix)
{
	if (ix) {
		free(ix->v);
		free(ix);
	}
}

static int cmp_unit_dir(const void *a, const void *b)
{
	return strcmp(((const struct unit_dir *)a)->name, ((const struct unit_dir *)b)->name);
}

/* One breadth-first walk below @rootfd (root @root): every directory's name and path. */
static int unit_index_make(int rootfd, const char *root, struct unit_index **ret)
{
	char (*queue)[DAEMON_CGROUP_NAME] = calloc(UNIT_DIRS, sizeof(*queue));
	unsigned int depth[UNIT_DIRS];
	struct unit_index *ix = calloc(1, sizeof(*ix));
	size_t head = 0, tail = 0, cap = 0, k = 0;

	if (!queue || !ix) {
		free(queue);
		free(ix);
		return -ENOMEM;
	}
	snprintf(ix->root, sizeof(ix->root), "%s", root);
	queue[tail][0] = '\0';
	depth[tail++] = 0;
	while (head < tail) {
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

			if (de->d_type != DT_DIR || de->d_name[0] == '.' ||
			    strlen(de->d_name) >= sizeof(ix->v->name))
				continue;
			if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", dir, *dir ? "/" : "",
					     de->d_name) >= sizeof(sub))
				continue;
			if (ix->n == cap) {
				struct unit_dir *nv = realloc(ix->v, (cap ? cap * 2 : 256) * sizeof(*nv));

				if (!nv) {
					closedir(dp);
					free(queue);
					unit_index_free(ix);
					return -ENOMEM;
				}
				ix->v = nv;
				cap = cap ? cap * 2 : 256;
			}
			snprintf(ix->v[ix->n].name, sizeof(ix->v->name), "%s", de->d_name);
			snprintf(ix->v[ix->n].path, sizeof(ix->v->path), "%s", sub);
			ix->v[ix->n++].dup = false;
			if (d + 1 < UNIT_DEPTH && tail < UNIT_DIRS) {
				snprintf(queue[tail], DAEMON_CGROUP_NAME, "%s", sub);
				depth[tail++] = d + 1;
			}
		}
		closedir(dp);
	}
	free(queue);
	if (ix->n)
		qsort(ix->v, ix->n, sizeof(*ix->v), cmp_unit_dir);
	/* One entry per name, marked when there were more. */
	for (size_t i = 0; i < ix->n; i++) {
		if (k && strcmp(ix->v[k - 1].name, ix->v[i].name) == 0) {
			ix->v[k - 1].dup = true;
			continue;
		}
		ix->v[k++] = ix->v[i];
	}
	ix->n = k;
	ix->made_ms = util_mono_ms();
	*ret = ix;
	return 0;
}

/*
 * Find the directory named @unit below @root (@rootfd): its path relative to @root
 * in @path.  0, -ENOENT, -ENOTUNIQ or -ENOMEM.
 */
static int find_unit(int rootfd, const char *root, const char *unit, char *path, size_t len)
{
	struct unit_index *ix = NULL, *old = NULL;
	struct unit_dir key, *hit;
	int r = 0;

	snprintf(path, len, "system.slice/%s", unit);
	if (faccessat(rootfd, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	if (strlen(unit) >= sizeof(key.name))
		return -ENOENT;
	pthread_mutex_lock(&unit_lock);
	if (unit_cached && strcmp(unit_cached->root, root) == 0 &&
	    util_mono_ms() - unit_cached->made_ms < UNIT_INDEX_MS)
		ix = unit_cached;
	pthread_mutex_unlock(&unit_lock);
	if (!ix) {
		/* The walk without the lock; the newest index is kept, the other freed. */
		r = unit_index_make(rootfd, root, &ix);
		if (r < 0)
			return r;
		pthread_mutex_lock(&unit_lock);
		old = unit_cached;
		unit_cached = ix;
		pthread_mutex_unlock(&unit_lock);
	}
	/* An index is never changed once made, and freed only once none looks at it. */
	pthread_mutex_lock(&unit_lock);
	snprintf(key.name, sizeof(key.name), "%s", unit);
	hit = unit_cached->n ? bsearch(&key, unit_cached->v, unit_cached->n, sizeof(key),
				       cmp_unit_dir) : NULL;
	if (!hit)
		r = -ENOENT;
	else if (hit->dup)
		r = -ENOTUNIQ;
	else
		snprintf(path, len, "%s", hit->path);
	pthread_mutex_unlock(&unit_lock);
	unit_index_free(old);
	return r;
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
			r = find_unit(rootfd, root, name, path, sizeof(path));
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

int daemon_filter_lookup(struct daemon_filter *f, char *err, size_t errlen)
{
	char root[512];

	if (f->ncgroups + f->nunits == 0)
		return 0;
	if (daemon_cgroup2_root("/proc/self/mounts", root, sizeof(root)) < 0) {
		snprintf(err, errlen, "filter: no cgroup v2 hierarchy is mounted here, so cgroups "
			 "and units cannot be filtered on");
		return -EOPNOTSUPP;
	}
	return daemon_filter_resolve(f, root, true, err, errlen);
}
