/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * maplog-jit.c: the JIT symbol maps (perf-PID.map) of a session's processes, kept
 * open while they run and saved when they exit; see include/hwpmcd/maplog-jit.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwpmcd/common.h"
#include "hwpmcd/files.h"
#include "hwpmcd/maplog-jit.h"
#include "maplog-int.h"

#define JIT_MAX_OPEN 256
#define JIT_MAX_MAP_BYTES ((uint64_t)256 << 20)
#define JIT_MAX_BYTES ((uint64_t)1 << 30)
#define JIT_MAX_USER_BYTES ((uint64_t)64 << 20)
#define JIT_USERS_MAX 64 /* uids whose bytes one directory counts; more get none */
#define JIT_ANCESTRY_MAX 64 /* parents followed to find a target */

/*
 * When a map's lines appeared: at each poll whose fstat found it larger, its size
 * and the wall clock (the bytes below @size were there by @ns).  At most
 * JIT_GROWTH_MAX points, every other one dropped when full (the times coarsen).
 */
#define JIT_GROWTH_MAX 1024 /* 16 KiB a map, at most max_open (256) of them */

/* A process with a map: kept open (fd >= 0), or one not to try again (fd -1). */
struct jit_ent {
	struct maplog_jit_growth *grow;
	size_t ngrow;
	pid_t pid;
	uid_t uid; /* its owner's (the effective uid /proc/PID shows): whose quota it spends */
	uint64_t start; /* its start time (/proc/PID/stat field 22): the process, not the pid */
	int fd;
};

/*
 * A process seen without a map (or out of scope): looked at again only at poll
 * @next, each time twice as late (1, 2, 4, 8, then every 16 polls), so that a
 * walk of a busy machine costs a readdir and a lookup per such process, and a
 * young process (a JIT writes its map soon after it starts) is looked at soon.
 */
struct jit_neg {
	pid_t pid; /* 0: an empty slot */
	uint32_t next, gap;
};

struct jit_negs {
	struct jit_neg *v;
	size_t cap, n;
};

#define JIT_NEG_GAP_MAX 16

struct maplog_jit {
	struct util_dir dir; /* borrowed */
	pid_t *targets;
	size_t ntargets;
	size_t max_open, nopen;
	uint64_t max_map, max_bytes, max_user;
	struct {
		uid_t uid;
		uint64_t bytes;
	} users[JIT_USERS_MAX]; /* bytes written into the current directory, per owner */
	size_t nusers;
	int64_t only_uid;
	bool strict_owner;
	uint64_t dir_bytes; /* written into the current directory: max_bytes bounds it */
	struct jit_negs neg; /* of the last walk */
	uint32_t polls;
	struct jit_ent *v;
	size_t n, cap;
	struct maplog_jit_stats st;
};

int maplog_jit__new(const struct util_dir *dir, const struct maplog_jit_opts *o,
		    struct maplog_jit **ret_j)
{
	struct maplog_jit *j;

	if (!dir || dir->fd < 0 || !ret_j)
		return -EINVAL;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->dir = *dir;
	j->max_open = o && o->max_open ? o->max_open : JIT_MAX_OPEN;
	j->max_map = o && o->max_map_bytes ? o->max_map_bytes : JIT_MAX_MAP_BYTES;
	j->max_bytes = o && o->max_bytes ? o->max_bytes : JIT_MAX_BYTES;
	j->max_user = o && o->max_user_bytes ? o->max_user_bytes : JIT_MAX_USER_BYTES;
	j->only_uid = o && o->by_uid ? (int64_t)o->uid : -1;
	j->strict_owner = o && o->strict_owner;
	if (o && o->npids) {
		j->targets = calloc(o->npids, sizeof(*j->targets));
		if (!j->targets) {
			free(j);
			return -ENOMEM;
		}
		memcpy(j->targets, o->pids, o->npids * sizeof(*j->targets));
		j->ntargets = o->npids;
	}
	*ret_j = j;
	return 0;
}

static void ent_forget(struct jit_ent *e)
{
	free(e->grow);
	e->grow = NULL;
	e->ngrow = 0;
}

void maplog_jit__free(struct maplog_jit *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++) {
		if (j->v[i].fd >= 0)
			close(j->v[i].fd);
		ent_forget(&j->v[i]);
	}
	free(j->v);
	free(j->targets);
	free(j->neg.v);
	free(j);
}

/* The bytes @uid's maps wrote into the current directory; NULL: no slot left for it. */
static uint64_t *user_bytes(struct maplog_jit *j, uid_t uid)
{
	for (size_t i = 0; i < j->nusers; i++)
		if (j->users[i].uid == uid)
			return &j->users[i].bytes;
	if (j->nusers == JIT_USERS_MAX)
		return NULL;
	j->users[j->nusers].uid = uid;
	j->users[j->nusers].bytes = 0;
	return &j->users[j->nusers++].bytes;
}

static struct jit_neg *neg_find(const struct jit_negs *t, pid_t pid)
{
	if (!t->cap)
		return NULL;
	for (size_t i = util_mix64((uint64_t)(uint32_t)pid) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		if (t->v[i].pid == pid)
			return &t->v[i];
		if (!t->v[i].pid)
			return NULL;
	}
}

/* Remember @pid's next look (a table that cannot grow just forgets: the next walk looks). */
static void neg_put(struct jit_negs *t, pid_t pid, uint32_t next, uint32_t gap)
{
	size_t i;

	if ((t->n + 1) * 2 > t->cap) {
		struct jit_negs g = { .cap = t->cap ? t->cap * 2 : 256 };

		g.v = calloc(g.cap, sizeof(*g.v));
		if (!g.v)
			return;
		for (size_t k = 0; k < t->cap; k++)
			if (t->v[k].pid)
				neg_put(&g, t->v[k].pid, t->v[k].next, t->v[k].gap);
		free(t->v);
		*t = g;
	}
	for (i = util_mix64((uint64_t)(uint32_t)pid) & (t->cap - 1); t->v[i].pid; i = (i + 1) & (t->cap - 1))
		;
	t->v[i] = (struct jit_neg){ pid, next, gap };
	t->n++;
}

void maplog_jit__stats(const struct maplog_jit *j, struct maplog_jit_stats *ret)
{
	*ret = j->st;
}

/* Start time and parent of @pid from /proc/PID/stat; false if it is gone. */
static bool proc_stat(pid_t pid, uint64_t *ret_start, pid_t *ret_ppid)
{
	char path[64], buf[1024];
	unsigned long long start = 0;
	int ppid = 0;
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (util_read_small(path, buf, sizeof(buf)) < 0)
		return false;
	/* The name may hold spaces and parentheses: fields count from the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
				"%*d %*d %llu",
			 &ppid, &start) != 2)
		return false;
	*ret_start = start;
	if (ret_ppid)
		*ret_ppid = ppid;
	return true;
}

/* @pid's pid in its own pid namespace (the last NSpid field), or @pid. */
static pid_t ns_pid(pid_t pid)
{
	char path[64], buf[4096];
	const char *p;
	long v = pid;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (util_read_small(path, buf, sizeof(buf)) < 0 || !(p = strstr(buf, "\nNSpid:")))
		return pid;
	for (p += 7; *p && *p != '\n';) {
		char *end;
		long x = strtol(p, &end, 10);

		if (end == p)
			break;
		v = x;
		p = end;
	}
	return v > 0 ? (pid_t)v : pid;
}

/* Is @pid a target or a descendant of one (or is every process in scope)? */
static bool in_scope(const struct maplog_jit *j, pid_t pid)
{
	uint64_t start;

	if (j->ntargets == 0)
		return true;
	for (int depth = 0; depth < JIT_ANCESTRY_MAX && pid > 1; depth++) {
		for (size_t i = 0; i < j->ntargets; i++)
			if (j->targets[i] == pid)
				return true;
		if (!proc_stat(pid, &start, &pid))
			return false;
	}
	return false;
}

static struct jit_ent *ent_find(struct maplog_jit *j, pid_t pid)
{
	for (size_t i = 0; i < j->n; i++)
		if (j->v[i].pid == pid)
			return &j->v[i];
	return NULL;
}

static int ent_add(struct maplog_jit *j, pid_t pid, uid_t uid, uint64_t start, int fd)
{
	struct jit_ent *nv = util_grow(j->v, &j->cap, j->n + 1, sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	j->v = nv;
	j->v[j->n++] = (struct jit_ent){ .pid = pid, .uid = uid, .start = start, .fd = fd };
	if (fd >= 0)
		j->nopen++;
	return 0;
}

/* Note how large @e's map is now, if it grew (struct jit_growth). */
static void ent_grew(struct jit_ent *e)
{
	struct timespec ts;
	struct stat st;

	if (e->fd < 0 || fstat(e->fd, &st) < 0 || st.st_size <= 0 ||
	    (e->ngrow && (uint64_t)st.st_size <= e->grow[e->ngrow - 1].size))
		return;
	if (!e->grow && !(e->grow = calloc(JIT_GROWTH_MAX, sizeof(*e->grow))))
		return;
	if (e->ngrow == JIT_GROWTH_MAX) {
		/* Full: every other point goes, the last stays. */
		size_t k = 0;

		for (size_t i = 1; i < e->ngrow; i += 2)
			e->grow[k++] = e->grow[i];
		e->ngrow = k;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	e->grow[e->ngrow].size = (uint64_t)st.st_size;
	e->grow[e->ngrow].ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	e->ngrow++;
}



/*
 * Open the map of process @pid (start time @start) if it has one we may keep:
 * the fd, -1 (none now: try again later), or -2 (one not to take: remembered).
 */
static int map_open(struct maplog_jit *j, pid_t pid, uint64_t start, uid_t *ret_uid)
{
	char path[96];
	struct stat pst, st, st2;
	uint64_t start2;
	int procfd, rootfd, pfd, fd;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	procfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return -1;
	/* The owner of /proc/PID is the process's effective uid (root if not dumpable). */
	if (fstat(procfd, &pst) < 0) {
		close(procfd);
		return -1;
	}
	if (j->only_uid >= 0 && pst.st_uid != (uid_t)j->only_uid) {
		close(procfd);
		return -2; /* not the session's user's: never looked into */
	}
	*ret_uid = pst.st_uid;
	rootfd = openat(procfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	close(procfd);
	if (rootfd < 0)
		return errno == EACCES || errno == EPERM ? -2 : -1; /* not ours to look into */
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)ns_pid(pid));
	pfd = maplog_open_path_nofollow(rootfd, path, true);
	close(rootfd);
	if (pfd < 0)
		return -1;
	if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(pfd);
		return -2; /* a FIFO, a device, a directory: never opened */
	}
	if (st.st_uid != pst.st_uid && (st.st_uid != 0 || j->strict_owner)) {
		close(pfd);
		j->st.refused++;
		return -2;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", pfd);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	close(pfd);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st2) < 0 || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino ||
	    !proc_stat(pid, &start2, NULL) || start2 != start) {
		/* Another file, or the pid is another process's now. */
		close(fd);
		return -1;
	}
	return fd;
}

static void map_copy(struct maplog_jit *j, struct jit_ent *e, bool keep);
/* A walk of /proc; @full looks at every process, else the negative cache is obeyed. */
static int poll_walk(struct maplog_jit *j, bool full);

/* Copy the map of @e into DIR/perf-PID.map and close it. */
static void map_save(struct maplog_jit *j, struct jit_ent *e)
{
	map_copy(j, e, false);
}

/* The copy of one map: its well-formed lines, buffered, within @room bytes. */
struct jit_copy {
	int out;
	/* with the times of the lines (tout >= 0): when the source had each line's end */
	int tout;
	const struct maplog_jit_growth *grow;
	size_t ngrow, gi;
	int64_t now_ns;
	uint64_t at; /* the source offset just past the byte being copied */
	char tbuf[8192];
	size_t tlen;
	uint64_t room, written, read, bad;
	bool full; /* a line did not fit in room */
	int err;
	char line[MAPLOG_JIT_LINE_MAX + 1];
	size_t len;
	bool overlong; /* the line being read is past MAPLOG_JIT_LINE_MAX: dropped */
	char buf[65536];
	size_t blen;
};

static void copy_flush(struct jit_copy *c)
{
	int r;

	if (c->blen && !c->err && (r = util_write_all(c->out, c->buf, c->blen, NULL)) < 0)
		c->err = -r;
	c->blen = 0;
	if (c->tlen && c->tout >= 0 && util_write_all(c->tout, c->tbuf, c->tlen, NULL) < 0)
		c->tout = -1; /* the times are only a help: the map goes on */
	c->tlen = 0;
}

/* The wall clock by which the source held the line that ends at c->at. */
static int64_t copy_time(struct jit_copy *c)
{
	while (c->gi < c->ngrow && c->grow[c->gi].size < c->at)
		c->gi++;
	return c->gi < c->ngrow ? c->grow[c->gi].ns : c->now_ns;
}

/* The line gathered so far is whole: kept (with a '\n') if it is one. */
static void copy_line(struct jit_copy *c)
{
	uint64_t start, size;
	size_t name;

	if (c->overlong || !maplog_jit_parse_line(c->line, c->len, &start, &size, &name)) {
		c->bad += c->len || c->overlong;
	} else if (c->written + c->len + 1 + (c->tout >= 0 ? 21 : 0) > c->room) {
		c->full = true; /* a line and its time count against the room alike */
	} else {
		if (c->blen + c->len + 1 > sizeof(c->buf) || c->tlen + 24 > sizeof(c->tbuf))
			copy_flush(c);
		if (c->tout >= 0) {
			size_t t = (size_t)snprintf(c->tbuf + c->tlen, sizeof(c->tbuf) - c->tlen,
						    "%lld\n", (long long)copy_time(c));

			c->tlen += t;
			c->written += t;
		}
		memcpy(c->buf + c->blen, c->line, c->len);
		c->buf[c->blen + c->len] = '\n';
		c->blen += c->len + 1;
		c->written += c->len + 1;
	}
	c->len = 0;
	c->overlong = false;
}

static void copy_bytes(struct jit_copy *c, const char *p, size_t n)
{
	for (size_t i = 0; i < n && !c->full; i++) {
		c->at++;
		if (p[i] == '\n')
			copy_line(c);
		else if (c->len < MAPLOG_JIT_LINE_MAX)
			c->line[c->len++] = p[i];
		else
			c->overlong = true;
	}
}

int maplog_jit_copy(int in, int out, uint64_t room, struct maplog_jit_copied *ret)
{
	return maplog_jit_copy_timed(in, out, -1, NULL, 0, room, ret);
}

int maplog_jit_copy_timed(int in, int out, int tout, const struct maplog_jit_growth *grow,
			  size_t ngrow, uint64_t room, struct maplog_jit_copied *ret)
{
	struct jit_copy *c = malloc(sizeof(*c));
	struct timespec ts;
	uint64_t limit = 2 * room + (1u << 20);
	off_t off = 0;
	int r;

	if (!c)
		return -ENOMEM;
	memset(ret, 0, sizeof(*ret));
	c->out = out;
	c->tout = tout;
	c->grow = grow;
	c->ngrow = grow ? ngrow : 0;
	c->gi = 0;
	c->at = 0;
	c->tlen = 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	c->now_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	c->room = room;
	c->written = c->read = c->bad = 0;
	c->full = c->overlong = false;
	c->err = 0;
	c->len = c->blen = 0;
	while (!c->full && !c->err && c->read < limit) {
		off_t d = lseek(in, off, SEEK_DATA), h;

		if (d < 0 && errno == ENXIO)
			break; /* no data after @off: the end */
		if (d < 0 && errno != EINVAL) {
			c->err = errno;
			break;
		}
		if (d < 0)
			d = off; /* a file system without SEEK_DATA: all of it is data */
		h = lseek(in, d, SEEK_HOLE);
		if (h < 0 || h <= d)
			h = INT64_MAX;
		if (d > off) {
			/* A hole: no line goes across it. */
			c->bad += c->len || c->overlong;
			c->len = 0;
			c->overlong = false;
		}
		c->at = (uint64_t)d;
		for (off = d; off < h && !c->full && c->read < limit;) {
			char chunk[65536];
			size_t want = (uint64_t)(h - off) < sizeof(chunk) ? (size_t)(h - off) : sizeof(chunk);
			ssize_t n = pread(in, chunk, want, off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				c->err = errno;
				break;
			}
			if (n == 0) {
				h = off; /* the end of the file */
				break;
			}
			copy_bytes(c, chunk, (size_t)n);
			off += n;
			c->read += (uint64_t)n;
		}
		if (h == INT64_MAX || off < h)
			break;
	}
	if (!c->full && !c->err && (c->len || c->overlong))
		copy_line(c); /* a last line without its newline */
	copy_flush(c);
	ret->written = c->written;
	ret->read = c->read;
	ret->bad_lines = c->bad;
	ret->truncated = c->full || c->read >= limit;
	r = -c->err;
	free(c);
	return r;
}

/*
 * Copy the map of @e into DIR/perf-PID.map (maplog_jit_copy()); close it unless
 * @keep.  What a sparse or garbage map makes the copy cost is what its data holds
 * of JIT symbols, within max_map_bytes, the directory's max_bytes and its owner's
 * max_user_bytes.
 */
static void map_copy(struct maplog_jit *j, struct jit_ent *e, bool keep)
{
	struct maplog_jit_copied cp;
	char name[64];
	uint64_t *used = user_bytes(j, e->uid), room;
	int out, tout, r;

	if (e->fd < 0)
		return;
	room = j->max_bytes - j->dir_bytes < j->max_map ? j->max_bytes - j->dir_bytes : j->max_map;
	if (!used)
		room = 0; /* no slot for another uid: as if its quota were spent */
	else if (j->max_user - *used < room)
		room = j->max_user - *used;
	if (room == 0) {
		/* max_bytes or the owner's max_user_bytes reached: not even a file for it */
		j->st.truncated++;
		if (!used || *used >= j->max_user)
			j->st.over_quota++;
		goto done;
	}
	snprintf(name, sizeof(name), "perf-%d.map", (int)e->pid);
	/* A process before it with the same pid saved one: this one's lines follow. */
	out = util_file_append(&j->dir, name, 0);
	if (out < 0) {
		j->st.errors++;
		j->st.last_error = -out;
		goto done;
	}
	/*
	 * Beside it, when each line appeared (perf-PID.map.times, line for line: a
	 * report names a sample by the entry current at its time); the times are a
	 * help, the map is complete without them.
	 */
	snprintf(name, sizeof(name), "perf-%d.map.times", (int)e->pid);
	tout = util_file_append(&j->dir, name, 0);
	r = maplog_jit_copy_timed(e->fd, out, tout, e->grow,
				  e->ngrow, room, &cp);
	if (tout >= 0)
		close(tout);
	close(out);
	if (r < 0) {
		j->st.errors++;
		j->st.last_error = -r;
	} else {
		j->st.saved++;
	}
	j->st.truncated += cp.truncated;
	j->st.bad_lines += cp.bad_lines;
	j->st.bytes += cp.written;
	j->dir_bytes += cp.written;
	*used += cp.written;
done:
	if (keep)
		return;
	close(e->fd);
	e->fd = -1;
	j->nopen--;
}

int maplog_jit__snapshot(struct maplog_jit *j, const struct util_dir *dir)
{
	int r = poll_walk(j, true);

	for (size_t i = 0; i < j->n; i++)
		map_copy(j, &j->v[i], true);
	if (dir && dir->fd >= 0) {
		j->dir = *dir;
		j->dir_bytes = 0;
		j->nusers = 0;
	}
	return r;
}

int maplog_jit__poll(struct maplog_jit *j)
{
	return poll_walk(j, false);
}

static int poll_walk(struct maplog_jit *j, bool full)
{
	DIR *d;
	struct dirent *de;
	struct jit_negs next = { 0 };
	int r = 0;

	/* Those that exited (or whose pid is another process's now): saved, forgotten. */
	for (size_t i = 0; i < j->n;) {
		uint64_t start;

		if (proc_stat(j->v[i].pid, &start, NULL) && start == j->v[i].start) {
			ent_grew(&j->v[i]); /* when its lines appeared */
			i++;
			continue;
		}
		map_save(j, &j->v[i]);
		ent_forget(&j->v[i]);
		j->v[i] = j->v[--j->n];
	}
	d = opendir("/proc");
	if (!d)
		return 0;
	while (r == 0 && (de = readdir(d)) != NULL) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		pid_t pid = (pid_t)v;
		uint64_t start;
		uid_t uid = 0;
		int fd;

		const struct jit_neg *ng;
		uint32_t gap;

		if (*end || v <= 0 || v > INT32_MAX || pid == getpid() || ent_find(j, pid))
			continue;
		ng = neg_find(&j->neg, pid);
		if (ng && !full && (int32_t)(ng->next - j->polls) > 0) {
			neg_put(&next, pid, ng->next, ng->gap); /* not yet: kept for later */
			continue;
		}
		gap = ng ? (ng->gap * 2 > JIT_NEG_GAP_MAX ? JIT_NEG_GAP_MAX : ng->gap * 2) : 1;
		if (!in_scope(j, pid) || !proc_stat(pid, &start, NULL)) {
			neg_put(&next, pid, j->polls + gap, gap);
			continue;
		}
		fd = map_open(j, pid, start, &uid);
		if (fd == -1) {
			/*
			 * A target of a recording (or its descendant) without a map yet: at
			 * every poll, for a short-lived JIT process writes its map at once and
			 * may be gone before a later look (a 2 s node was missed so).
			 */
			if (j->ntargets)
				gap = 1;
			neg_put(&next, pid, j->polls + gap, gap);
			continue;
		}
		if (fd >= 0 && j->nopen >= j->max_open) {
			close(fd);
			j->st.over_open++;
			fd = -2;
		}
		r = ent_add(j, pid, uid, start, fd < 0 ? -1 : fd);
		if (r < 0 && fd >= 0)
			close(fd);
		if (r == 0)
			ent_grew(&j->v[j->n - 1]);
	}
	closedir(d);
	/* The pids not seen in this walk are gone: the new table forgets them. */
	free(j->neg.v);
	j->neg = next;
	j->polls++;
	return r;
}

int maplog_jit__finish(struct maplog_jit *j)
{
	int r = poll_walk(j, true);

	for (size_t i = 0; i < j->n; i++) {
		map_save(j, &j->v[i]);
		ent_forget(&j->v[i]);
	}
	j->n = 0;
	return r;
}
