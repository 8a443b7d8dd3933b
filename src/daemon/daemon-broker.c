/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-broker.c: the files a push's confined report may read, opened for it by
 * the daemon (the report opens none itself).
 *
 * PUBLIC INTERFACES (daemon-int.h)
 *   daemon_broker__new(), __free(), __open(), __serve(), daemon_broker_main()
 *
 * IMPLEMENTATION NOTES
 *   A push runs `hwpmc report --confine --broker-fd 3 ... -- FILE` as user nobody,
 *   with no capability, under a seccomp filter that refuses open(2) and openat(2)
 *   altogether (docs/security.md, "Under systemd").  It asks the daemon for each
 *   file over a socket pair (common-open.h), and the daemon, root, opens only:
 *     (a) FILE itself and its side files by their exact names: FILE.kallsyms,
 *         FILE.vdso, FILE.jit/perf-PID.map and FILE.jit/perf-PID.map.times;
 *     (b) the images FILE names: the paths of its MAP_IN and PROCEXEC records
 *         (read once here with the pmclog reader; a kernel image named without a
 *         directory as /boot/kernel/NAME, where the report looks for it);
 *     (c) debug files of those images: anything under /usr/lib/debug/ (the
 *         report's debug directory; a push never names another), and
 *         DIR/NAME or DIR/.debug/NAME for DIR the directory of an image of (b),
 *         NAME without '/' and ending in ".debug" (the debuglink convention);
 *     (d) what the report reads for JIT maps when FILE.jit is not there (a log of
 *         this boot): /proc/stat and /tmp/perf-PID.map.
 *   Anything else is refused with EACCES.  So a report taken over through a
 *   hostile ELF file reads, with root's rights, only ELF images (and their debug
 *   files) that some process mapped while the profile ran, plus the profile's
 *   own files: never /etc/shadow, another profile, or a user's private files.
 *   Images and debug files of (b) and (c) must start with the ELF magic (a
 *   process in its own mount namespace may have mapped a file at a path that is
 *   /etc/shadow here), or the answer is ENOEXEC, as the report's own open would
 *   have found.  NAME must end in ".debug" in (c) because any other name would
 *   let the report read every ELF file beside any mapped image.
 *
 *   How.  A path must be absolute and plain (no empty, "." or ".." component).
 *   It is refused if it lies under a FUSE mount of the daemon's mount namespace
 *   (read at each push: a user's FUSE server could hold the lookup forever).
 *   Then it is opened O_PATH with openat2(): (a) and (d) with no symbolic link
 *   as their last component and no magic link; (b) and (c) beside an image with
 *   no symbolic link anywhere (RESOLVE_NO_SYMLINKS: the paths of mapped files are
 *   canonical); (c) under /usr/lib/debug beneath that directory (RESOLVE_BENEATH:
 *   distributions' .build-id links stay inside it).  Only a regular file is
 *   opened again for reading, through /proc/self/fd/N (the same inode), with
 *   O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC: never a FIFO, device or
 *   directory (ENOEXEC, as the report itself answers).  Without openat2 (kernels
 *   before 5.6, valgrind) each component is opened O_PATH | O_NOFOLLOW by hand
 *   and no symbolic link is followed at all.  Missing files get what open(2)
 *   says (ENOENT): the report counts them as it always did.
 *
 *   The broker is a process of its own per push, `hwpmcd --push-broker FILE`
 *   with the socket as descriptor 3 (daemon_broker_main()), started by the push
 *   thread beside the report: it keeps CAP_DAC_READ_SEARCH alone of the daemon's
 *   capabilities (read any file; no CAP_PERFMON, CAP_SYS_PTRACE, CAP_BPF...), sets
 *   no new privileges, reads the log for its images, and answers one request at
 *   a time, at most DAEMON_BROKER_REQUESTS_MAX per push (then EACCES), until the
 *   report closes its end.  An open that does not return (an NFS server gone, a
 *   FUSE mount made after the mount table was read) holds that process only, and
 *   the push thread kills it with the report at its deadline, or
 *   DAEMON_BROKER_END_MS after the report ended.  A process rather than a thread
 *   of the daemon: it can be killed in any call, holds fewer capabilities, and a
 *   busy daemon (or valgrind's lock over its threads) never slows its answers.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon-int.h"
#include "hwpmcd/common-open.h"
#include "hwpmcd/common.h"
#include "hwpmcd/log.h"
#include "hwpmcd/pmclog.h"

#define DEBUG_DIR "/usr/lib/debug"

/* What a request is, once allowed. */
enum broker_kind { KIND_SIDE, KIND_IMAGE, KIND_NEAR_IMAGE, KIND_DEBUG_DIR };

struct strset {
	char **v;
	size_t n, cap;
};

struct daemon_broker {
	char *log;		/* FILE, as the report was told it */
	struct strset images;	/* (b), sorted, unique */
	struct strset dirs;	/* their directories ("" for "/"), sorted, unique */
	struct strset fuse;	/* FUSE mount points (a prefix refuses) */
	int debugfd;		/* O_PATH of DEBUG_DIR, or -1 */
	unsigned images_over;	/* images beyond DAEMON_BROKER_IMAGES_MAX, left out */
};


/* ---- string sets ---- */

static int set_add(struct strset *s, const char *str, size_t len)
{
	char *c;

	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 64;
		char **nv = realloc(s->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = ncap;
	}
	c = strndup(str, len);
	if (!c)
		return -ENOMEM;
	s->v[s->n++] = c;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort @s and drop its duplicates. */
static void set_seal(struct strset *s)
{
	size_t k = 0;

	if (!s->n)
		return;
	qsort(s->v, s->n, sizeof(*s->v), cmp_str);
	for (size_t i = 1; i < s->n; i++) {
		if (strcmp(s->v[i], s->v[k]) == 0)
			free(s->v[i]);
		else
			s->v[++k] = s->v[i];
	}
	s->n = k + 1;
}

static bool set_has(const struct strset *s, const char *str, size_t len)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strncmp(s->v[mid], str, len);

		if (c == 0)
			c = s->v[mid][len] ? 1 : 0;
		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static void set_free(struct strset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	*s = (struct strset){ 0 };
}

/* ---- the policy ---- */

/* Absolute, no empty, "." or ".." component, no trailing '/'. */
static bool plain_path(const char *p)
{
	if (p[0] != '/' || !p[1])
		return false;
	for (const char *c = p; *c;) {
		const char *e;
		size_t n;

		c++; /* past '/' */
		e = strchrnul(c, '/');
		n = (size_t)(e - c);
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c = e;
	}
	return true;
}

/* "perf-DIGITS.map" */
static bool perf_map_name(const char *n)
{
	size_t len = strlen(n), d = 0;

	/* perf-PID.map, or the times of its lines beside it (perf-PID.map.times) */
	if (len > 6 && strcmp(n + len - 6, ".times") == 0)
		len -= 6;
	if (len < 10 || strncmp(n, "perf-", 5) != 0 || strncmp(n + len - 4, ".map", 4) != 0)
		return false;
	for (const char *c = n + 5; c < n + len - 4; c++, d++)
		if (*c < '0' || *c > '9')
			return false;
	return d > 0 && d <= 10;
}

static int add_image(struct daemon_broker *b, const char *path, bool kernel)
{
	char buf[UTIL_BROKER_PATH_MAX];
	const char *p = path;
	const char *slash;
	int r;

	if (kernel && !strchr(path, '/')) {
		/* The report reads a kernel image named without a directory there. */
		if (snprintf(buf, sizeof(buf), "/boot/kernel/%s", path) >= (int)sizeof(buf))
			return 0;
		p = buf;
	}
	if (strlen(p) >= UTIL_BROKER_PATH_MAX || !plain_path(p))
		return 0; /* "[vdso]" (FILE.vdso stands for it), relative names: nothing to open */
	if (b->images.n >= DAEMON_BROKER_IMAGES_MAX) {
		b->images_over++;
		return 0;
	}
	if ((r = set_add(&b->images, p, strlen(p))) < 0)
		return r;
	slash = strrchr(p, '/');
	return set_add(&b->dirs, p, (size_t)(slash - p));
}

/* The images of the log at @path: MAP_IN and PROCEXEC paths. */
static int read_images(struct daemon_broker *b, const char *path)
{
	struct plog_reader *rd = NULL;
	struct plog_record rec;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	r = plog_reader__new(PLOG_READER_SKIP_UNKNOWN, &rd);
	while (r == 0) {
		void *space;
		ssize_t n;
		int k = 0;

		if ((r = plog_reader__space(rd, 64u << 10, &space)) < 0)
			break;
		n = util_read_some(fd, space, 64u << 10);
		if (n <= 0) {
			r = (int)n;
			plog_reader__finish(rd);
		} else if ((r = plog_reader__commit(rd, (size_t)n)) < 0) {
			break;
		}
		while ((k = plog_reader__next(rd, &rec)) > 0) {
			int e = 0;

			if (rec.type == PLOG_TYPE_MAP_IN && rec.u.map_in.path)
				e = add_image(b, rec.u.map_in.path, rec.u.map_in.pid == PLOG_PID_KERNEL);
			else if (rec.type == PLOG_TYPE_PROCEXEC && rec.u.procexec.path)
				e = add_image(b, rec.u.procexec.path, false);
			if (e < 0) {
				r = e;
				break;
			}
		}
		if (n <= 0 || k < 0)
			break; /* the end, or a malformed record: the report stops there too */
	}
	/* A malformed tail: what came before it is what the report reads too. */
	plog_reader__free(rd);
	(void)close(fd);
	return r == -ENOMEM ? r : 0;
}

/* Undo mountinfo's octal escapes (\040 a space, ...) in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* The FUSE mount points of the daemon's mount namespace (fuse, fuse.*, fuseblk). */
static int read_fuse_mounts(struct daemon_broker *b)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int r = 0;

	if (!f)
		return 0; /* no /proc: nothing known to refuse */
	while (r == 0 && getline(&line, &cap, f) > 0) {
		char *fields[5], *sep, *fstype, *save = NULL, *t;
		int k = 0;

		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		fstype = strtok_r(sep + 3, " \n", &save);
		if (!fstype || (strcmp(fstype, "fuse") != 0 && strcmp(fstype, "fuseblk") != 0 &&
				strncmp(fstype, "fuse.", 5) != 0))
			continue;
		save = NULL;
		for (t = strtok_r(line, " ", &save); t && k < 5; t = strtok_r(NULL, " ", &save))
			fields[k++] = t;
		if (k < 5)
			continue;
		unescape(fields[4]);
		r = set_add(&b->fuse, fields[4], strlen(fields[4]));
	}
	free(line);
	fclose(f);
	return r;
}

static bool under_fuse(const struct daemon_broker *b, const char *p)
{
	for (size_t i = 0; i < b->fuse.n; i++) {
		const char *m = b->fuse.v[i];
		size_t n = strlen(m);

		if (strcmp(m, "/") == 0 || (strncmp(p, m, n) == 0 && (p[n] == '/' || !p[n])))
			return true;
	}
	return false;
}

int daemon_broker__new(const char *log, struct daemon_broker **ret_b)
{
	struct daemon_broker *b = calloc(1, sizeof(*b));
	int r;

	if (!b)
		return -ENOMEM;
	b->debugfd = -1;
	b->log = strdup(log);
	if (!b->log) {
		r = -ENOMEM;
		goto err;
	}
	if ((r = read_images(b, log)) < 0 || (r = read_fuse_mounts(b)) < 0)
		goto err;
	set_seal(&b->images);
	set_seal(&b->dirs);
	b->debugfd = open(DEBUG_DIR, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (b->images_over)
		log_warn("push: '%s' names more than %u images: the others get no symbols", log,
			 DAEMON_BROKER_IMAGES_MAX);
	*ret_b = b;
	return 0;
err:
	daemon_broker__free(b);
	return r;
}

void daemon_broker__free(struct daemon_broker *b)
{
	if (!b)
		return;
	set_free(&b->images);
	set_free(&b->dirs);
	set_free(&b->fuse);
	if (b->debugfd >= 0)
		(void)close(b->debugfd);
	free(b->log);
	free(b);
}

/* Whether @p may be opened, and as what: 0 with *ret_kind, or -EACCES. */
static int allowed(const struct daemon_broker *b, const char *p, enum broker_kind *ret_kind)
{
	size_t ll = strlen(b->log), len = strlen(p);
	const char *slash, *name;

	/* (a) the log and its side files, by their exact names */
	if (strncmp(p, b->log, ll) == 0) {
		const char *rest = p + ll;

		if (!*rest || strcmp(rest, ".kallsyms") == 0 || strcmp(rest, ".vdso") == 0 ||
		    (strncmp(rest, ".jit/", 5) == 0 && perf_map_name(rest + 5))) {
			*ret_kind = KIND_SIDE;
			return 0;
		}
	}
	/* (d) what the report reads for JIT maps of a log of this boot without FILE.jit */
	if (strcmp(p, "/proc/stat") == 0 ||
	    (strncmp(p, "/tmp/", 5) == 0 && perf_map_name(p + 5))) {
		*ret_kind = KIND_SIDE;
		return 0;
	}
	if (!plain_path(p))
		return -EACCES;
	/* (b) an image the log names */
	if (set_has(&b->images, p, len)) {
		*ret_kind = KIND_IMAGE;
		return 0;
	}
	/* (c) under the debug directory */
	if (strncmp(p, DEBUG_DIR "/", sizeof(DEBUG_DIR)) == 0) {
		*ret_kind = KIND_DEBUG_DIR;
		return 0;
	}
	/* (c) DIR/NAME or DIR/.debug/NAME beside an image, NAME ending in ".debug" */
	slash = strrchr(p, '/');
	name = slash + 1;
	if (strlen(name) <= 6 || strcmp(name + strlen(name) - 6, ".debug") != 0)
		return -EACCES;
	if (set_has(&b->dirs, p, (size_t)(slash - p))) {
		*ret_kind = KIND_NEAR_IMAGE;
		return 0;
	}
	if ((size_t)(slash - p) >= 7 && strncmp(slash - 7, "/.debug", 7) == 0 &&
	    set_has(&b->dirs, p, (size_t)(slash - 7 - p))) {
		*ret_kind = KIND_NEAR_IMAGE;
		return 0;
	}
	return -EACCES;
}

/*
 * An O_PATH fd of @path, no symbolic link followed, by hand: each component opened
 * O_PATH | O_NOFOLLOW from @dirfd (@path relative to it) or from "/" (@path
 * absolute); a link on the way is -ELOOP, a link at the end is returned itself,
 * as openat2() with O_PATH | O_NOFOLLOW does.
 */
static int walk_nofollow(int dirfd, const char *path)
{
	char comp[256];
	const char *c = path;
	int cur, r;

	cur = path[0] == '/' ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)
			     : fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return -errno;
	while (*c) {
		struct stat st;
		const char *e;
		size_t n;
		int next;

		while (*c == '/')
			c++;
		e = strchrnul(c, '/');
		n = (size_t)(e - c);
		if (n == 0)
			break;
		if (n >= sizeof(comp) || (n <= 2 && strncmp(c, "..", n) == 0)) {
			(void)close(cur);
			return -EACCES;
		}
		memcpy(comp, c, n);
		comp[n] = '\0';
		next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		r = next < 0 ? -errno : 0;
		(void)close(cur);
		if (r < 0)
			return r;
		c = e;
		while (*c == '/')
			c++;
		/* A link as the last component is the caller's to refuse (not regular). */
		if (*c && (fstat(next, &st) < 0 || S_ISLNK(st.st_mode))) {
			(void)close(next);
			return -ELOOP;
		}
		cur = next;
	}
	return cur;
}

/* An O_PATH fd of @p as its kind allows (see the notes), or a negative errno. */
static int open_path(const struct daemon_broker *b, const char *p, enum broker_kind kind)
{
	struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_NO_MAGICLINKS };
	int dirfd = AT_FDCWD;
	const char *rel = p;
	long fd;

	if (kind == KIND_IMAGE || kind == KIND_NEAR_IMAGE) {
		how.resolve |= RESOLVE_NO_SYMLINKS;
	} else if (kind == KIND_DEBUG_DIR) {
		if (b->debugfd < 0)
			return -ENOENT;
		dirfd = b->debugfd;
		rel = p + sizeof(DEBUG_DIR); /* past "/usr/lib/debug/" */
		how.flags = O_PATH | O_CLOEXEC; /* .build-id/xx/yyyy.debug may be a link */
		how.resolve |= RESOLVE_BENEATH;
	}
	fd = util_openat2(dirfd, rel, &how);
	if (fd >= 0)
		return (int)fd;
	if (errno != ENOSYS)
		return -errno;
	/* No openat2: no symbolic link at all. */
	return walk_nofollow(dirfd, rel);
}

int daemon_broker__open(struct daemon_broker *b, const char *path)
{
	enum broker_kind kind;
	struct stat st, st2;
	char self[64];
	bool reopened;
	int pfd, fd, r;

	if ((r = allowed(b, path, &kind)) < 0)
		return r;
	if (under_fuse(b, path))
		return -EACCES;
	pfd = open_path(b, path, kind);
	if (pfd < 0)
		return pfd;
	if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode)) {
		(void)close(pfd);
		return -ENOEXEC; /* never a FIFO, device, directory or link */
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	reopened = fd >= 0;
	if (!reopened) {
		/* No /proc: by the path again, and it must be the same inode. */
		(void)close(pfd);
		pfd = open_path(b, path, kind);
		if (pfd < 0)
			return pfd;
		(void)close(pfd);
		fd = kind == KIND_DEBUG_DIR
			     ? openat(b->debugfd, path + sizeof(DEBUG_DIR),
				      O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
			     : open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (fstat(fd, &st2) < 0 || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
			(void)close(fd);
			return -EAGAIN;
		}
	} else {
		(void)close(pfd);
	}
	if (kind != KIND_SIDE) {
		char magic[4];

		if (pread(fd, magic, sizeof(magic), 0) != (ssize_t)sizeof(magic) ||
		    memcmp(magic, "\177ELF", 4) != 0) {
			(void)close(fd);
			return -ENOEXEC;
		}
	}
	return fd;
}

/* ---- serving ---- */

void daemon_broker__serve(struct daemon_broker *b, int sock, unsigned *ret_served,
			  unsigned *ret_refused)
{
	char path[UTIL_BROKER_PATH_MAX];
	unsigned served = 0, refused = 0;
	int r;

	for (;;) {
		int fd;

		r = util_broker_recv(sock, path, sizeof(path));
		if (r == 0 || (r < 0 && r != -EPROTO))
			break;
		if (r == -EPROTO)
			fd = -EINVAL;
		else if (served + refused >= DAEMON_BROKER_REQUESTS_MAX)
			fd = -EACCES;
		else
			fd = daemon_broker__open(b, path);
		if (fd == -EACCES)
			refused++;
		else
			served++;
		r = util_broker_reply(sock, fd);
		if (fd >= 0)
			(void)close(fd);
		if (r < 0)
			break;
	}
	*ret_served = served;
	*ret_refused = refused;
}

/* The capability to read any file, and no other; no new privileges. */
static int keep_read_search(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	bool have;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(SYS_capget, &h, d) < 0)
		return -errno;
	have = (d[0].permitted & (1u << CAP_DAC_READ_SEARCH)) != 0;
	memset(d, 0, sizeof(d));
	if (have)
		d[0].permitted = d[0].effective = 1u << CAP_DAC_READ_SEARCH;
	if (syscall(SYS_capset, &h, d) < 0)
		return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	return 0;
}

int daemon_broker_main(const char *log)
{
	struct daemon_broker *b;
	unsigned served = 0, refused = 0;
	int r;

	log_open("hwpmcd-broker", LOG_TARGET_PLAIN);
	if ((r = keep_read_search()) < 0) {
		log_error("push broker: dropping capabilities: %s", strerror(-r));
		return 1;
	}
	if ((r = daemon_broker__new(log, &b)) < 0) {
		log_error("push broker: '%s': %s", log, strerror(-r));
		return 1;
	}
	daemon_broker__serve(b, DAEMON_BROKER_FD, &served, &refused);
	log_debug("push broker: '%s': %u files opened or missing, %u refused", log, served,
		  refused);
	daemon_broker__free(b);
	return 0;
}
