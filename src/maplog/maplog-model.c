/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * maplog-model.c: the process/thread/mapping model and its bookkeeping records.
 *
 * PUBLIC INTERFACES
 *   see include/hwpmcd/maplog.h
 *
 * IMPLEMENTATION NOTES
 *   Processes live in an open-addressing hash table keyed by pid; each holds the
 *   (device, inode) pairs it has announced with MAP_IN, in a small array (a
 *   process maps tens of objects, so a linear search is cheaper than a table).
 *   A fork copies the parent's set, because pmcstat copies the parent's ranges on
 *   PROCFORK and the kernel reports no MMAP2 for inherited mappings.  An exited
 *   process is forgotten at its EXIT record (a tombstone in the table): the
 *   session merges records in time order, so no sample of it comes later, and a
 *   storm of short-lived processes does not grow the model.  An exec moves the
 *   process's ranges to p->old, where they answer lookups and stay in the log
 *   until exec_retire() (the exec is over) writes one MAP_OUT per old object (a
 *   new mapping over an old object retires that one alone, old_retire()).
 *   pl_start results are cached by (device, inode, file offset) as the constant addr - pl_start, so each object's ELF
 *   headers are read once per session, not once per process.
 *   Each process also has its executable mappings as a sorted array of
 *   non-overlapping struct maplog_map ranges, found by binary search for the
 *   unwinder.  A new range first cuts what it overlaps (the kernel replaced those
 *   pages), so the array always describes the address space as of the last
 *   record merged.  Paths live in an intern table (one copy per distinct path for
 *   the session), so copying a parent's ranges on fork copies pointers only.
 *   /proc is hostile input like any other: every line is bounded and parsed
 *   defensively, and a process that exits in the middle of the scan is skipped.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "hwpmcd/common.h"
#include "hwpmcd/maplog-elf.h"
#include "hwpmcd/maplog-proc.h"
#include "hwpmcd/maplog.h"
#include "maplog-int.h"

#define PF_KTHREAD 0x00200000u
/*
 * The link address of an x86-64 kernel's _text and _stext, which is also V of the
 * MAP_IN rule for vmlinux: its first PT_LOAD with PF_X starts there (2 MiB aligned).
 */
#define X86_64_LINK_STEXT 0xffffffff81000000ull

/*
 * An object of a process with a MAP_IN in the log, at pl_start @pl (0: not known, as
 * for a path too long or a file that could not be read); @extra: a placement beyond
 * its first, a mapping of the file elsewhere that the first does not explain (see
 * remap_live()).
 */
struct maplog_obj {
	uint64_t dev;
	uint64_t inode;
	uint64_t pl;
	bool extra;
};

#define SLOT_EMPTY 0
#define SLOT_DEAD (-1) /* a tombstone: a process that exited, its slot reusable */

struct maplog_proc {
	int32_t pid; /* SLOT_EMPTY, SLOT_DEAD, or the pid */
	bool exited;
	uint32_t flags;
	char name[20];
	struct maplog_obj *objs;
	size_t nobjs, capobjs;
	bool vdso_announced; /* a MAP_IN for its [vdso] was written */
	struct maplog_map *maps; /* executable ranges, sorted by start, disjoint */
	size_t nmaps, capmaps;
	/*
	 * The ranges of the image an exec replaced, kept while the exec may still be
	 * running: until the process shows that it runs the new image (see
	 * exec_retire()).  Sorted and disjoint like maps; nold 0 when none.
	 */
	struct maplog_map *old;
	size_t nold, capold;
	/*
	 * Gated (maplog__gate()): shown, the log has its PROC_CREATE (objs and
	 * vdso_announced then say which MAP_INs it has); dirty, the model has ranges
	 * the log may not show yet; since, the time of its fork, exec or scan, before
	 * which no sample and no record is of this process.
	 */
	bool shown, dirty;
	uint64_t since;
	/* Its cgroup (an index into maplog.cgs + 1; 0: not known), and whether the log has it. */
	uint32_t cg;
	bool cg_said;
};

/* One interned path (a chain of a hash table that lives as long as the maplog). */
struct maplog_str {
	struct maplog_str *next;
	char s[];
};

#define STR_HASH_SIZE 1024
/* Interned paths are compacted when they exceed twice what was live, and this. */
#define STR_COMPACT_MIN (1u << 20)

struct maplog_plcache {
	uint64_t dev, inode, pgoff;
	uint64_t k; /* addr - pl_start */
	bool used;
	/* the executable sections as linked, and V: a reader's range is exec + pl - v */
	bool has_exec;
	uint64_t exec_lo, exec_hi, v;
	uint8_t build_id_len; /* 0: none */
	uint8_t build_id[MAPLOG_BUILD_ID_MAX];
};

#define PLCACHE_SIZE 1024

/* Per path (a slot of its hash): the build id last said for it in this log (ops->build_id). */
struct maplog_bidsaid {
	uint64_t path_hash, id_hash; /* path_hash 0: empty */
};

#define BIDSAID_SIZE 4096

/* maplog__adopt(): pids remembered as refused. */
#define ADOPT_MISS_SLOTS 64

struct maplog {
	const struct maplog_ops *ops;
	void *ctx;
	struct maplog_proc *procs;
	size_t cap, used; /* used counts live and dead slots (the probe length) */
	struct maplog_plcache plcache[PLCACHE_SIZE];
	struct maplog_bidsaid bidsaid[BIDSAID_SIZE];
	uint64_t pagesize;
	uint64_t vdso_v; /* V of the rule for the vDSO image (0 if unknown) */
	struct maplog_stats stats;
	struct maplog_str *strs[STR_HASH_SIZE];
	size_t str_limit; /* compact_paths() when stats.path_bytes would pass it */
	bool gated;	  /* maplog__gate() */
	char **cgs;	  /* distinct cgroup paths (ops->cgroup), at most MAPLOG_CGROUPS_MAX */
	size_t ncgs, capcgs;
	uint16_t *cght;	  /* CG_HASH_SIZE slots: index + 1 into cgs, by util_hash_str() */
	/* maplog__adopt(): attempts in the current second, and pids recently refused */
	uint64_t adopt_second;
	uint32_t adopt_tries;
	struct {
		int32_t pid;
		uint64_t time;
	} adopt_miss[ADOPT_MISS_SLOTS];
};

static void strs_free(struct maplog_str **strs);

int maplog__new(const struct maplog_ops *ops, void *ctx, struct maplog **ret_m)
{
	struct maplog *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->cap = 1024;
	m->procs = calloc(m->cap, sizeof(*m->procs));
	if (!m->procs) {
		free(m);
		return -ENOMEM;
	}
	m->ops = ops;
	m->ctx = ctx;
	m->str_limit = STR_COMPACT_MIN;
	m->pagesize = (uint64_t)sysconf(_SC_PAGESIZE);
	(void)maplog_vdso_v(&m->vdso_v); /* none (valgrind): 0, as for x86-64's vDSO */
	*ret_m = m;
	return 0;
}

void maplog__free(struct maplog *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++) {
		if (m->procs[i].pid > 0) {
			free(m->procs[i].objs);
			free(m->procs[i].maps);
			free(m->procs[i].old);
		}
	}
	strs_free(m->strs);
	for (size_t i = 0; i < m->ncgs; i++)
		free(m->cgs[i]);
	free(m->cgs);
	free(m->cght);
	free(m->procs);
	free(m);
}

/* ---- cgroups (ops->cgroup) ---- */

/*
 * @pid's cgroup path into @buf: the "0::" (cgroup v2) line of /proc/PID/cgroup;
 * on a hybrid or v1 system, where that is "/" or missing, the "name=systemd" v1
 * hierarchy's when it is deeper (the unit or container systemd put it in).  0, or
 * -errno (the process is gone, or neither line is there).
 */
static int read_cgroup(int32_t pid, char *buf, size_t size)
{
	char path[64], text[4096 + 64];
	const char *v2 = NULL, *sd = NULL;
	size_t v2n = 0, sdn = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	text[n] = '\0';
	/* One pass over the lines: the v2 path, and systemd's v1 one. */
	for (char *l = text; *l;) {
		size_t len = strcspn(l, "\n");
		char *k = memmem(l, len, ":name=systemd:", 14);

		if (!strncmp(l, "0::", 3)) {
			v2 = l + 3;
			v2n = len - 3;
		} else if (k) {
			sd = k + 14;
			sdn = (size_t)(l + len - sd);
		}
		l += len + (l[len] == '\n');
	}
	if (v2 && (!v2n || v2n >= size))
		return -ENAMETOOLONG;
	if ((!v2 || (v2n == 1 && v2[0] == '/')) && sd) {
		/* v2's is missing or "/": systemd's, when it is deeper. */
		if (!sdn || sdn >= size)
			return -ENAMETOOLONG;
		if (sdn > 1) {
			v2 = sd;
			v2n = sdn;
		}
	}
	if (!v2)
		return -ENODATA;
	memcpy(buf, v2, v2n);
	buf[v2n] = '\0';
	return 0;
}

/* Twice MAPLOG_CGROUPS_MAX: a probe ends at an empty slot well before it wraps. */
#define CG_HASH_SIZE (2 * MAPLOG_CGROUPS_MAX)

/*
 * The index + 1 of @path among the model's cgroups, added if new; 0 if there is no
 * room.  Looked up at every scan and exec: by hash (a linear strcmp over thousands
 * of containers' paths was the cost of an exec on a busy host).
 */
static uint32_t cg_intern(struct maplog *m, const char *path)
{
	size_t s;
	char *dup;

	if (!m->cght && !(m->cght = calloc(CG_HASH_SIZE, sizeof(*m->cght))))
		return 0;
	for (s = util_hash_str(path) & (CG_HASH_SIZE - 1); m->cght[s];
	     s = (s + 1) & (CG_HASH_SIZE - 1))
		if (strcmp(m->cgs[m->cght[s] - 1], path) == 0)
			return m->cght[s];
	if (m->ncgs == MAPLOG_CGROUPS_MAX)
		return 0;
	if (m->ncgs == m->capcgs) {
		size_t ncap = m->capcgs ? m->capcgs * 2 : 16;
		char **n = realloc(m->cgs, ncap * sizeof(*n));

		if (!n)
			return 0;
		m->cgs = n;
		m->capcgs = ncap;
	}
	dup = strdup(path);
	if (!dup)
		return 0;
	m->cgs[m->ncgs++] = dup;
	m->cght[s] = (uint16_t)m->ncgs;
	m->stats.cgroups = m->ncgs;
	return (uint32_t)m->ncgs;
}

/* Say @p's cgroup at @time if the log does not have it. */
static int cg_say(struct maplog *m, uint64_t time, struct maplog_proc *p)
{
	int r;

	if (!m->ops->cgroup || !p->cg || p->cg_said)
		return 0;
	r = m->ops->cgroup(m->ctx, time, p->pid, m->cgs[p->cg - 1]);
	if (r == 0)
		p->cg_said = true;
	return r;
}

/* @p's cgroup is @path (read by the caller); a new one replaces what was said. */
static void cg_set(struct maplog *m, struct maplog_proc *p, const char *path)
{
	uint32_t cg;

	if (!m->ops->cgroup || (p->flags & MAPLOG_F_KPROC) || !path[0])
		return;
	cg = cg_intern(m, path);
	if (!cg) {
		m->stats.cgroups_over++;
		return;
	}
	if (cg != p->cg) {
		p->cg = cg;
		p->cg_said = false;
	}
}

/* Read @p's cgroup now; a new one replaces what was said. */
static void cg_read(struct maplog *m, struct maplog_proc *p)
{
	char path[4096];

	if (m->ops->cgroup && !(p->flags & MAPLOG_F_KPROC) &&
	    read_cgroup(p->pid, path, sizeof(path)) == 0)
		cg_set(m, p, path);
}

void maplog__gate(struct maplog *m)
{
	m->gated = true;
}

const struct maplog_stats *maplog__stats(const struct maplog *m)
{
	return &m->stats;
}

static size_t slot_of(const struct maplog *m, int32_t pid)
{
	return ((uint32_t)pid * 2654435761u) & (m->cap - 1);
}

static struct maplog_proc *proc_find(const struct maplog *m, int32_t pid)
{
	for (size_t i = slot_of(m, pid), n = 0; n < m->cap; i = (i + 1) & (m->cap - 1), n++) {
		if (m->procs[i].pid == pid)
			return &m->procs[i];
		if (m->procs[i].pid == SLOT_EMPTY)
			return NULL;
	}
	return NULL;
}

static int rehash(struct maplog *m, size_t ncap)
{
	struct maplog_proc *old = m->procs, *n;
	size_t oldcap = m->cap;

	n = calloc(ncap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	m->procs = n;
	m->cap = ncap;
	for (size_t i = 0; i < oldcap; i++) {
		if (old[i].pid > 0) {
			size_t j = slot_of(m, old[i].pid);

			while (m->procs[j].pid != SLOT_EMPTY)
				j = (j + 1) & (m->cap - 1);
			m->procs[j] = old[i];
		}
	}
	free(old);
	m->used = m->stats.tracked; /* tombstones are gone */
	return 0;
}

static int grow_or_clean(struct maplog *m)
{
	return rehash(m, (m->stats.tracked + 1) * 4 > m->cap ? m->cap * 2 : m->cap);
}

/*
 * A process that exited: its objects are freed now.  The merge is in time
 * order, so no sample of it can come after its EXIT record.
 */
static void proc_forget(struct maplog *m, struct maplog_proc *p)
{
	free(p->objs);
	free(p->maps);
	free(p->old);
	memset(p, 0, sizeof(*p));
	p->pid = SLOT_DEAD;
	m->stats.tracked--;
}

/* Find or create; a re-created (pid reused) entry starts empty. */
static int proc_get(struct maplog *m, int32_t pid, struct maplog_proc **ret)
{
	struct maplog_proc *p = proc_find(m, pid);
	size_t i;

	if (p) {
		*ret = p;
		return 0;
	}
	if (pid <= 0)
		return -EINVAL;
	if ((m->used + 1) * 2 > m->cap) {
		/* Rehash: twice the size only if the live entries need it. */
		int r = grow_or_clean(m);

		if (r < 0)
			return r;
	}
	i = slot_of(m, pid);
	while (m->procs[i].pid > 0)
		i = (i + 1) & (m->cap - 1);
	if (m->procs[i].pid == SLOT_EMPTY)
		m->used++;
	memset(&m->procs[i], 0, sizeof(m->procs[i]));
	m->procs[i].pid = pid;
	m->stats.tracked++;
	*ret = &m->procs[i];
	return 0;
}

static bool obj_known(const struct maplog_proc *p, uint64_t dev, uint64_t inode)
{
	for (size_t i = 0; i < p->nobjs; i++)
		if (p->objs[i].dev == dev && p->objs[i].inode == inode)
			return true;
	return false;
}

static int obj_add_at(struct maplog_proc *p, uint64_t dev, uint64_t inode, uint64_t pl,
		      bool extra)
{
	if (p->nobjs == p->capobjs) {
		size_t ncap = p->capobjs ? 2 * p->capobjs : 16;
		struct maplog_obj *n = realloc(p->objs, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->objs = n;
		p->capobjs = ncap;
	}
	p->objs[p->nobjs].dev = dev;
	p->objs[p->nobjs].inode = inode;
	p->objs[p->nobjs].pl = pl;
	p->objs[p->nobjs].extra = extra;
	p->nobjs++;
	return 0;
}

static int obj_add(struct maplog_proc *p, uint64_t dev, uint64_t inode)
{
	return obj_add_at(p, dev, inode, 0, false);
}

/* The entry of the object's placement at @pl, or NULL. */
static struct maplog_obj *obj_placed(struct maplog_proc *p, uint64_t dev, uint64_t inode,
				     uint64_t pl)
{
	for (size_t i = 0; i < p->nobjs; i++)
		if (p->objs[i].dev == dev && p->objs[i].inode == inode && p->objs[i].pl == pl)
			return &p->objs[i];
	return NULL;
}

static size_t str_hash(const char *path)
{
	uint32_t h = 2166136261u;

	for (const char *c = path; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	return h & (STR_HASH_SIZE - 1);
}

/* The copy of @path in the table @strs (added if @add), or NULL (none, out of memory). */
static const char *str_in(struct maplog_str **strs, const char *path, bool add, size_t *bytes)
{
	size_t h = str_hash(path), n;
	struct maplog_str *x;

	for (x = strs[h]; x; x = x->next)
		if (strcmp(x->s, path) == 0)
			return x->s;
	if (!add)
		return NULL;
	n = strlen(path);
	x = malloc(sizeof(*x) + n + 1);
	if (!x)
		return NULL;
	memcpy(x->s, path, n + 1);
	x->next = strs[h];
	strs[h] = x;
	*bytes += sizeof(*x) + n + 1;
	return x->s;
}

static void strs_free(struct maplog_str **strs)
{
	for (size_t i = 0; i < STR_HASH_SIZE; i++) {
		struct maplog_str *n;

		for (struct maplog_str *x = strs[i]; x; x = n) {
			n = x->next;
			free(x);
		}
		strs[i] = NULL;
	}
}

/* Each live range's path into @fresh (@add), or onto its copy there.  0 or -ENOMEM. */
static int paths_pass(struct maplog *m, struct maplog_str **fresh, bool add, size_t *bytes)
{
	for (size_t i = 0; i < m->cap; i++) {
		struct maplog_proc *p = &m->procs[i];

		if (p->pid <= 0)
			continue;
		for (size_t k = 0; k < p->nmaps + p->nold; k++) {
			struct maplog_map *x = k < p->nmaps ? &p->maps[k] : &p->old[k - p->nmaps];
			const char *s = str_in(fresh, x->path, add, bytes);

			if (!s)
				return -ENOMEM;
			if (!add)
				x->path = s;
		}
	}
	return 0;
}

/*
 * Intern again only the paths that ranges of the model hold, and free the rest: the
 * paths of processes long gone (a machine that runs new programs from new paths,
 * or a user who maps files of new names, would grow the table without bound).
 * Nothing outside the model keeps an interned path across a record (the unwinder
 * copies what it keeps), and the only caller, intern(), runs before the range it
 * interns for exists.  Best effort: out of memory, the table stays as it was.
 */
static void compact_paths(struct maplog *m)
{
	struct maplog_str *fresh[STR_HASH_SIZE] = { 0 };
	size_t bytes = 0;

	/* First every live path into the new table, then every range onto its copy. */
	if (paths_pass(m, fresh, true, &bytes) < 0) {
		strs_free(fresh);
		return;
	}
	(void)paths_pass(m, fresh, false, NULL); /* finds every one: no allocation */
	strs_free(m->strs);
	memcpy(m->strs, fresh, sizeof(fresh));
	m->stats.path_bytes = bytes;
	m->stats.path_compactions++;
}

/* The one copy of @path for this maplog, or NULL (out of memory). */
static const char *intern(struct maplog *m, const char *path)
{
	const char *s = str_in(m->strs, path, false, NULL);
	size_t bytes;

	if (s)
		return s;
	if (m->stats.path_bytes >= m->str_limit) {
		compact_paths(m);
		bytes = 2 * (size_t)m->stats.path_bytes;
		m->str_limit = bytes > STR_COMPACT_MIN ? bytes : STR_COMPACT_MIN;
	}
	bytes = (size_t)m->stats.path_bytes;
	s = str_in(m->strs, path, true, &bytes);
	m->stats.path_bytes = bytes;
	return s;
}

static int maps_reserve(struct maplog_proc *p, size_t extra)
{
	size_t ncap;
	struct maplog_map *n;

	if (p->nmaps + extra <= p->capmaps)
		return 0;
	ncap = p->capmaps ? 2 * p->capmaps : 16;
	while (ncap < p->nmaps + extra)
		ncap *= 2;
	n = realloc(p->maps, ncap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	p->maps = n;
	p->capmaps = ncap;
	return 0;
}

/* Index of the first of the @n sorted ranges @v whose end is above @addr (@n if none). */
static size_t ranges_lower(const struct maplog_map *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t maps_lower(const struct maplog_proc *p, uint64_t addr)
{
	return ranges_lower(p->maps, p->nmaps, addr);
}

/* The range of the @n sorted ranges @v that holds @addr, or NULL. */
static const struct maplog_map *ranges_find(const struct maplog_map *v, size_t n, uint64_t addr)
{
	size_t i = ranges_lower(v, n, addr);

	return i < n && v[i].start <= addr ? &v[i] : NULL;
}

/*
 * Add the range @nm (path already interned) to @p: the parts of older ranges it
 * overlaps are cut away first (trimmed, split or removed), as the kernel
 * replaced those pages.
 */
static int maps_insert(struct maplog_proc *p, const struct maplog_map *nm)
{
	size_t i, j;
	int r;

	if (nm->end <= nm->start)
		return 0;
	r = maps_reserve(p, 2);
	if (r < 0)
		return r;
	i = maps_lower(p, nm->start);
	if (i < p->nmaps && p->maps[i].start < nm->start && p->maps[i].end > nm->end) {
		/* Inside one older range: split it around the new one. */
		struct maplog_map tail = p->maps[i];

		tail.pgoff += nm->end - tail.start;
		tail.start = nm->end;
		p->maps[i].end = nm->start;
		memmove(&p->maps[i + 3], &p->maps[i + 1], (p->nmaps - i - 1) * sizeof(*p->maps));
		p->maps[i + 1] = *nm;
		p->maps[i + 2] = tail;
		p->nmaps += 2;
		return 0;
	}
	if (i < p->nmaps && p->maps[i].start < nm->start) {
		p->maps[i].end = nm->start; /* its tail is replaced */
		i++;
	}
	for (j = i; j < p->nmaps && p->maps[j].end <= nm->end; j++)
		; /* wholly replaced */
	if (j < p->nmaps && p->maps[j].start < nm->end) {
		p->maps[j].pgoff += nm->end - p->maps[j].start; /* its head is replaced */
		p->maps[j].start = nm->end;
	}
	/* Ranges [i, j) go; the new one takes index i. */
	memmove(&p->maps[i + 1], &p->maps[j], (p->nmaps - j) * sizeof(*p->maps));
	p->nmaps = p->nmaps - (j - i) + 1;
	p->maps[i] = *nm;
	return 0;
}

/* Record an executable range of @pid for the unwinder. */
static int note_range(struct maplog *m, struct maplog_proc *p, uint64_t time, uint64_t start,
		      uint64_t end, uint64_t pgoff, const char *path, uint64_t dev, uint64_t inode)
{
	struct maplog_map nm = {
		.start = start, .end = end, .pgoff = pgoff, .dev = dev, .inode = inode,
		.pid = p->pid, .time = time,
	};
	int r;

	nm.path = intern(m, path);
	if (!nm.path)
		return -ENOMEM;
	r = maps_insert(p, &nm);
	if (r == 0 && m->ops->maps_changed)
		m->ops->maps_changed(m->ctx, p->pid);
	return r;
}

const struct maplog_map *maplog__find_map(const struct maplog *m, int32_t pid, uint64_t addr)
{
	const struct maplog_proc *p = proc_find(m, pid);
	const struct maplog_map *r;

	if (!p || pid <= 0)
		return NULL;
	r = ranges_find(p->maps, p->nmaps, addr);
	/* During an exec, the user registers of a sample still point into the old image. */
	return r ? r : ranges_find(p->old, p->nold, addr);
}

/*
 * Whether a mapping of @path is a file that pmcstat can open, so that its object
 * gets a MAP_IN ([vdso], anonymous JIT code and memfd: no; paths pmclog cannot
 * hold: no, counted by the caller).
 */
static bool is_file_path(const char *path)
{
	return path[0] == '/' && strncmp(path, "/memfd:", 7) != 0 && strncmp(path, "//anon", 6) != 0;
}

static bool is_announced_path(const char *path)
{
	return is_file_path(path) && strlen(path) < 1024;
}

/* Whether a mapping of @path got a MAP_IN: a file of a length a MAP_IN takes, or the vDSO. */
static bool has_map_in(const char *path)
{
	return is_announced_path(path) || strcmp(path, "[vdso]") == 0;
}

/*
 * The span of the old image's object that range @i of p->old belongs to: from
 * the lowest start to the highest end of the old ranges of the same file.  A
 * reader places an object over all its executable sections, which may cross the
 * gaps between its executable mappings, so a MAP_OUT must cover the span.
 */
static void old_span(const struct maplog_proc *p, size_t i, uint64_t *ret_lo, uint64_t *ret_hi)
{
	uint64_t lo = p->old[i].start, hi = p->old[i].end;

	for (size_t j = 0; j < p->nold; j++) {
		if (p->old[j].dev != p->old[i].dev || p->old[j].inode != p->old[i].inode ||
		    p->old[j].path != p->old[i].path)
			continue;
		if (p->old[j].start < lo)
			lo = p->old[j].start;
		if (p->old[j].end > hi)
			hi = p->old[j].end;
	}
	*ret_lo = lo;
	*ret_hi = hi;
}

/* Whether [start, end) overlaps the span of an object of the old image. */
static bool old_overlaps(const struct maplog_proc *p, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < p->nold; i++) {
		uint64_t lo, hi;

		old_span(p, i, &lo, &hi);
		if (start < hi && end > lo)
			return true;
	}
	return false;
}

/* Gated: whether the log has the MAP_IN of range @x's object for @p. */
static bool shown_obj(const struct maplog_proc *p, const struct maplog_map *x)
{
	if (!p->shown)
		return false;
	if (strcmp(x->path, "[vdso]") == 0)
		return p->vdso_announced;
	return obj_known(p, x->dev, x->inode);
}

static bool same_obj(const struct maplog_map *a, const struct maplog_map *b)
{
	return a->dev == b->dev && a->inode == b->inode && a->path == b->path;
}

/*
 * The old image's objects whose span overlaps [lo, hi) leave the log with one
 * MAP_OUT per object span (the new image's MAP_INs are in place already, so no
 * MAP_OUT(0, 2^64-1) here) and leave the model; the others stay.
 */
static int old_retire(struct maplog *m, uint64_t time, struct maplog_proc *p, uint64_t lo,
		      uint64_t hi)
{
	size_t kept = 0, n = p->nold;
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		uint64_t a, b;
		bool first = true;

		old_span(p, i, &a, &b);
		if (!(a < hi && b > lo))
			continue;
		if (!has_map_in(p->old[i].path))
			continue;
		if (m->gated && !shown_obj(p, &p->old[i]))
			continue; /* the log never had it */
		/* One MAP_OUT per object: only at the object's first range. */
		for (size_t j = 0; j < i && first; j++)
			first = !same_obj(&p->old[j], &p->old[i]);
		if (!first)
			continue;
		r = m->ops->map_out(m->ctx, time, p->pid, a, b);
		if (r == 0)
			m->stats.map_out++;
	}
	/* Spans are decided before anything moves: keep the ranges of untouched objects. */
	for (size_t i = 0; i < n; i++) {
		uint64_t a, b;

		old_span(p, i, &a, &b);
		if (a < hi && b > lo)
			continue;
		p->old[kept++] = p->old[i];
	}
	p->nold = kept;
	if (m->ops->maps_changed)
		m->ops->maps_changed(m->ctx, p->pid);
	return r;
}

/*
 * The exec of @p is over: the process runs the new image (a user-mode sample, a
 * kernel-mode sample whose user registers are outside the old image, a fork or
 * new thread, another exec).  Every object of the old image goes (old_retire()).
 */
static int exec_retire(struct maplog *m, uint64_t time, struct maplog_proc *p)
{
	return old_retire(m, time, p, 0, UINT64_MAX);
}

int maplog__sample(struct maplog *m, uint64_t time, int32_t pid, bool user_mode, uint64_t user_ip)
{
	struct maplog_proc *p = pid > 0 ? proc_find(m, pid) : NULL;

	if (!p || p->nold == 0)
		return 0;
	/*
	 * A kernel-mode sample whose user IP lies in the old image (or is unknown)
	 * is still inside execve(): keep the old image for it.  The exec is known
	 * from its COMM record, which the kernel writes once the old address space
	 * is gone: the user stack the kernel copied for this sample (and any user
	 * frames it walked) are the new address space's memory at the old stack
	 * pointer, not the old image's frames.
	 */
	if (!user_mode && (user_ip == 0 || ranges_find(p->old, p->nold, user_ip)))
		return 1;
	return exec_retire(m, time, p);
}

static void set_name(char *dst, const char *src)
{
	size_t n = strnlen(src, 19);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/*
 * What openat2(RESOLVE_NO_SYMLINKS) does, by hand, for kernels before 5.6 (and
 * valgrind, which does not know openat2): the absolute @path walked from @root one
 * component at a time, each opened O_PATH|O_NOFOLLOW and refused (-ELOOP) if it is a
 * symbolic link; "." and ".." are refused (-EINVAL: a /proc/PID/maps path has
 * neither).  Returns an O_PATH fd or a negative errno.
 */
static int walk_nofollow(int root, const char *path)
{
	char comp[256];
	int dir = fcntl(root, F_DUPFD_CLOEXEC, 3);

	if (dir < 0)
		return -errno;
	for (const char *p = path;;) {
		const char *q;
		struct stat st;
		size_t len;
		int next;

		while (*p == '/')
			p++;
		q = strchr(p, '/');
		len = q ? (size_t)(q - p) : strlen(p);
		if (len == 0)
			return dir; /* the path ended (a trailing slash) */
		if (len >= sizeof(comp) || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.')) {
			close(dir);
			return len >= sizeof(comp) ? -ENAMETOOLONG : -EINVAL;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		next = openat(dir, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		close(dir);
		if (next < 0)
			return -errno;
		if (fstat(next, &st) < 0 || S_ISLNK(st.st_mode)) {
			int r = S_ISLNK(st.st_mode) ? -ELOOP : -errno;

			close(next);
			return r;
		}
		dir = next;
		if (!q)
			return dir;
		p = q;
	}
}

/*
 * An O_PATH fd of the absolute @path: relative to @dirfd as its root if @in_root,
 * else from our root (@dirfd AT_FDCWD); no symbolic link is followed anywhere in it
 * (the kernel's /proc/PID/maps paths have none: d_path() resolves them), nor any
 * /proc magic link.  An O_PATH open reads nothing and opens no device or FIFO, so
 * nothing happens until the fd is checked.
 */
int maplog_open_path_nofollow(int dirfd, const char *path, bool in_root)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | (in_root ? RESOLVE_IN_ROOT : 0),
	};
	long fd = util_openat2(dirfd, path, &how);
	int r, root;

	if (fd >= 0)
		return (int)fd;
	if (errno != ENOSYS)
		return -errno;
	root = in_root ? fcntl(dirfd, F_DUPFD_CLOEXEC, 3) : open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	r = walk_nofollow(root, path);
	close(root);
	return r;
}

/*
 * Open for reading the file an O_PATH fd @pfd names (closed here), only if it is the
 * mapping's (@dev, @inode) and a non-empty regular file: a FIFO, a device or another
 * file at that name is never opened.
 */
static int reopen_mapped(int pfd, uint64_t dev, uint64_t inode, uint64_t *ret_size)
{
	char p[64];
	struct stat st, st2;
	int fd, r = 0;

	if (fstat(pfd, &st) < 0)
		r = -errno;
	else if ((uint64_t)st.st_dev != dev || (uint64_t)st.st_ino != inode)
		r = -ESTALE; /* a different file now has that name: never use it for this mapping */
	else if (!S_ISREG(st.st_mode) || st.st_size <= 0)
		r = -ENOEXEC;
	if (r < 0) {
		close(pfd);
		return r;
	}
	snprintf(p, sizeof(p), "/proc/self/fd/%d", pfd);
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	r = fd < 0 ? -errno : 0;
	close(pfd);
	if (r < 0)
		return r;
	if (fstat(fd, &st2) < 0 || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
		close(fd);
		return -ESTALE;
	}
	if (ret_size)
		*ret_size = (uint64_t)st2.st_size;
	return fd;
}

int maplog_open_mapped(int32_t pid, uint64_t start, uint64_t end, const char *path, uint64_t dev,
		       uint64_t inode, uint64_t *ret_size)
{
	char p[96];
	int pfd, rootfd;

	/*
	 * /proc/PID/map_files/START-END names the mapped file itself (a magic link
	 * the kernel resolves to it, deleted or renamed or not), never what a name
	 * now points to.
	 */
	snprintf(p, sizeof(p), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, start, end);
	pfd = open(p, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		pfd = -errno;
	if (pfd < 0 && path[0] == '/') {
		/* The path inside the process's root, with no symbolic link on the way. */
		snprintf(p, sizeof(p), "/proc/%d/root", (int)pid);
		rootfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rootfd < 0) {
			pfd = -errno;
		} else {
			pfd = maplog_open_path_nofollow(rootfd, path, true);
			close(rootfd);
		}
	}
	if (pfd < 0 && path[0] == '/') {
		/*
		 * The process has exited (its records are merged a little later than
		 * they happen, and short-lived processes are gone by then): the path in
		 * our own file system, which reopen_mapped() accepts only if it is
		 * still the very file that was mapped.
		 */
		pfd = maplog_open_path_nofollow(AT_FDCWD, path, false);
	}
	if (pfd < 0)
		return pfd;
	return reopen_mapped(pfd, dev, inode, ret_size);
}

/*
 * pl_start of a mapping of a file, and (*@ret_c, NULL if the file could not be
 * read) the cache entry that holds its build id.
 */
static uint64_t compute_pl_start(struct maplog *m, int32_t pid, uint64_t start, uint64_t end,
				 uint64_t pgoff, const char *path, uint64_t dev, uint64_t inode,
				 const struct maplog_plcache **ret_c)
{
	size_t h = (size_t)((dev * 31 + inode * 131 + pgoff) % PLCACHE_SIZE);
	struct maplog_plcache *c = &m->plcache[h];
	struct maplog_elf_info info;
	uint64_t pl = 0, bias = 0;
	int fd, r = -ENOENT;

	*ret_c = NULL;
	if (c->used && c->dev == dev && c->inode == inode && c->pgoff == pgoff) {
		*ret_c = c;
		return start - c->k;
	}
	fd = maplog_open_mapped(pid, start, end, path, dev, inode, NULL);
	if (fd >= 0) {
		r = maplog_elf_pl_start(fd, start, pgoff, m->pagesize, true, &pl, &bias);
		/* The build id and the executable sections: one more read of the headers. */
		c->build_id_len = 0;
		c->has_exec = false;
		if (r == -EINVAL && maplog_elf_info_fd(fd, &info) == 0 && info.e_type == ET_EXEC) {
			/*
			 * A non-PIE executable runs where it was linked (bias 0, which the rule
			 * checks), but its code can be mapped again elsewhere (node's builtins:
			 * /usr/bin/node is ET_EXEC).  The file is the mapped one (its device
			 * and inode), so that mapping's bias is taken as the rule gives it for
			 * a position-independent object (the same V).
			 */
			info.e_type = ET_DYN;
			r = maplog_elf_info_pl_start(&info, start, pgoff, m->pagesize, true, &pl,
						     &bias);
			info.e_type = ET_EXEC;
		}
		if (r == 0 && maplog_elf_info_fd(fd, &info) == 0) {
			if (m->ops->build_id && info.build_id_len <= MAPLOG_BUILD_ID_MAX) {
				c->build_id_len = (uint8_t)info.build_id_len;
				memcpy(c->build_id, info.build_id, info.build_id_len);
			}
			c->has_exec = info.has_exec_section && info.exec_start < info.exec_end;
			c->exec_lo = info.exec_start;
			c->exec_hi = info.exec_end;
			c->v = pl - bias;
		}
		close(fd);
	}
	if (r < 0) {
		/*
		 * Without the file: the start of this, the object's first executable
		 * mapping, which is what the rule gives whenever p_align is the page size
		 * (the callers that write it count it: stats.elf_fallback).
		 */
		return start;
	}
	c->used = true;
	c->dev = dev;
	c->inode = inode;
	c->pgoff = pgoff;
	c->k = start - pl;
	*ret_c = c;
	return pl;
}

/*
 * The MAP_IN of a file at @pl, after its build id (ops->build_id) when the log has
 * not said that one last for @path.
 */
static int file_map_in(struct maplog *m, uint64_t time, int32_t pid, uint64_t pl,
		       const char *path, const struct maplog_plcache *c)
{
	if (m->ops->build_id && c && c->build_id_len) {
		uint64_t ph = util_hash_str(path) | 1, ih = 1469598103934665603ull;
		struct maplog_bidsaid *b = &m->bidsaid[util_mix64(ph) & (BIDSAID_SIZE - 1)];
		int r;

		for (size_t i = 0; i < c->build_id_len; i++)
			ih = (ih ^ c->build_id[i]) * 1099511628211ull;
		if (b->path_hash != ph || b->id_hash != ih) {
			r = m->ops->build_id(m->ctx, time, c->build_id, c->build_id_len);
			if (r < 0)
				return r;
			b->path_hash = ph;
			b->id_hash = ih;
		}
	}
	return m->ops->map_in(m->ctx, time, pid, pl, path);
}

/*
 * The MAP_IN of a "[vdso]" mapping, pl_start @pl: named by the saved copy of the
 * vDSO image and preceded by its build id when hwpmcd set one (pmclog-format.md
 * 11.15), else "[vdso]".
 */
static int vdso_map_in(struct maplog *m, uint64_t time, int32_t pid, uint64_t pl)
{
	struct maplog_plcache c = { 0 };
	const uint8_t *id;
	size_t idlen;
	const char *path = maplog_vdso_path(&id, &idlen);

	c.build_id_len = (uint8_t)idlen;
	memcpy(c.build_id, id, idlen);
	return file_map_in(m, time, pid, pl, path, &c);
}

/*
 * Remapped code.  A file can be mapped executable a second time elsewhere, at a file
 * offset its own layout puts at another address: node maps the builtins embedded in
 * /usr/bin/node again inside V8's code range.  pl_start by the rule (11.5) of such a
 * mapping differs from the object's first, so it is a placement of its own: a MAP_IN
 * at its pl_start, after which a reader holds the image's executable sections placed
 * there, most of which the mapping does not map (JIT code lies around it).  Those
 * parts, the placement's ghost, get MAP_OUTs (a reader removes, trims or splits
 * ranges there), so that only what the file maps there resolves into it.  A
 * placement whose range would meet another object with a MAP_IN is not written
 * (stats.remap_overlap): readers would lose that object's ranges.
 */

/* The range a reader gives the object of @c placed at @pl: its executable sections. */
static bool reader_range(const struct maplog_plcache *c, uint64_t pl, uint64_t *ret_lo,
			 uint64_t *ret_hi)
{
	if (!c || !c->has_exec)
		return false;
	*ret_lo = c->exec_lo + pl - c->v;
	*ret_hi = c->exec_hi + pl - c->v;
	return *ret_lo < *ret_hi;
}

/* pl_start of range @y of @p by the rule (without the file: its start). */
static uint64_t range_pl(struct maplog *m, const struct maplog_proc *p, const struct maplog_map *y,
			 const struct maplog_plcache **ret_c)
{
	return compute_pl_start(m, p->pid, y->start, y->end, y->pgoff, y->path, y->dev, y->inode,
				ret_c);
}

/*
 * Whether a range of @r (@n) with a MAP_IN meets [lo, hi), other than those of the
 * placement at @pl of object (@dev, @inode) itself (another placement of the same
 * file counts: its ranges must not be cut either).
 */
static bool others_meet(struct maplog *m, const struct maplog_proc *p, const struct maplog_map *r,
			size_t n, uint64_t dev, uint64_t inode, uint64_t pl, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < n; i++) {
		const struct maplog_map *y = &r[i];
		const struct maplog_plcache *c;

		if (!has_map_in(y->path) || y->start >= hi || lo >= y->end)
			continue;
		if (y->dev == dev && y->inode == inode && strcmp(y->path, "[vdso]") != 0 &&
		    range_pl(m, p, y, &c) == pl && c)
			continue;
		return true;
	}
	return false;
}

/*
 * The MAP_OUTs of the ghost of the placement at @pl of object (@dev, @inode): what
 * its reader range [lo, hi) holds that none of its ranges in @r (@n, sorted by start)
 * with that pl_start maps.
 */
static int trim_ghost(struct maplog *m, uint64_t time, const struct maplog_proc *p,
		      const struct maplog_map *r, size_t n, uint64_t dev, uint64_t inode,
		      uint64_t pl, uint64_t lo, uint64_t hi)
{
	uint64_t cur = lo;
	int e;

	for (size_t i = 0; i < n && cur < hi; i++) {
		const struct maplog_map *y = &r[i];
		const struct maplog_plcache *c;

		if (y->dev != dev || y->inode != inode || y->end <= cur || y->start >= hi ||
		    strcmp(y->path, "[vdso]") == 0 || range_pl(m, p, y, &c) != pl || !c)
			continue;
		if (y->start > cur) {
			if ((e = m->ops->map_out(m->ctx, time, p->pid, cur, y->start)) < 0)
				return e;
			m->stats.map_out++;
		}
		cur = y->end;
	}
	if (cur < hi) {
		if ((e = m->ops->map_out(m->ctx, time, p->pid, cur, hi)) < 0)
			return e;
		m->stats.map_out++;
	}
	return 0;
}

/*
 * Write the placement at @pl (reader range [lo, hi)) of range @x's object: its MAP_IN
 * and the MAP_OUTs of its ghost (@r, @n: @p's ranges, sorted by start); not if that
 * range meets another object's ranges (counted).  1 if written, 0 if not, or -errno.
 */
static int place_write(struct maplog *m, uint64_t time, struct maplog_proc *p,
		       const struct maplog_map *x, const struct maplog_plcache *c, uint64_t pl,
		       uint64_t lo, uint64_t hi, const struct maplog_map *r, size_t n)
{
	int e;

	if (others_meet(m, p, r, n, x->dev, x->inode, pl, lo, hi)) {
		m->stats.remap_overlap++;
		return 0;
	}
	if ((e = file_map_in(m, time, p->pid, pl, x->path, c)) < 0)
		return e;
	m->stats.map_in++;
	m->stats.remapped++;
	e = trim_ghost(m, time, p, r, n, x->dev, x->inode, pl, lo, hi);
	return e < 0 ? e : 1;
}

/*
 * Range @x of @p, of an object with a MAP_IN in this log, written as a placement of
 * its own if its pl_start is not that of one of @earlier (@nearlier: the object's
 * ranges written before in this pass): MAP_IN and ghost (@r, @n: the ranges being
 * written, sorted by start).  1 if written, 0 if not, or -errno.
 */
static int place_more(struct maplog *m, uint64_t time, struct maplog_proc *p,
		      const struct maplog_map *x, const struct maplog_map *const *earlier,
		      size_t nearlier, const struct maplog_map *r, size_t n)
{
	const struct maplog_plcache *c, *c2;
	uint64_t pl, lo, hi;

	if (strcmp(x->path, "[vdso]") == 0 || !is_announced_path(x->path))
		return 0;
	pl = range_pl(m, p, x, &c);
	if (!reader_range(c, pl, &lo, &hi))
		return 0;
	for (size_t i = 0; i < nearlier; i++)
		if (range_pl(m, p, earlier[i], &c2) == pl)
			return 0; /* a placement written in this pass */
	return place_write(m, time, p, x, c, pl, lo, hi, r, n);
}

/*
 * A new range of an object @p has a MAP_IN of: a placement of its own if the object's
 * first does not explain it (and again if it adds to one such, whose ghost then
 * shrinks).  0 or -errno.
 */
static int remap_live(struct maplog *m, uint64_t time, struct maplog_proc *p,
		      const struct maplog_map *x)
{
	const struct maplog_plcache *c;
	struct maplog_obj *o;
	uint64_t pl, lo, hi;
	int e;

	if (!is_announced_path(x->path))
		return 0;
	pl = range_pl(m, p, x, &c);
	if (!reader_range(c, pl, &lo, &hi))
		return 0;
	o = obj_placed(p, x->dev, x->inode, pl);
	if (o && !o->extra)
		return 0; /* the object's first placement: explained */
	if ((e = place_write(m, time, p, x, c, pl, lo, hi, p->maps, p->nmaps)) <= 0)
		return e;
	return o ? 0 : obj_add_at(p, x->dev, x->inode, pl, true);
}

/* Strip " (deleted)" (11.6): the file is identified by device and inode anyway. */
static void clean_path(const char *in, char *out, size_t outsize)
{
	size_t n = strnlen(in, outsize - 1);
	static const char deleted[] = " (deleted)";

	memcpy(out, in, n);
	out[n] = '\0';
	if (n >= sizeof(deleted) - 1 && strcmp(out + n - (sizeof(deleted) - 1), deleted) == 0)
		out[n - (sizeof(deleted) - 1)] = '\0';
}

/*
 * One executable mapping: a range for the unwinder always, and MAP_IN once per
 * (process, object) for files pmcstat can open.
 */
static int note_mapping(struct maplog *m, uint64_t time, int32_t pid, uint64_t start,
			uint64_t end, uint64_t pgoff, const char *rawpath, uint64_t dev,
			uint64_t inode)
{
	struct maplog_proc *p;
	char path[4096];
	const struct maplog_plcache *pc;
	uint64_t pl;
	int r;

	r = proc_get(m, pid, &p);
	if (r < 0)
		return r;
	if (p->nold && old_overlaps(p, start, end)) {
		/*
		 * Never two objects over one address in the log: the old objects under
		 * the new mapping go first.  The rest of the old image stays, for the
		 * samples the exec still takes (without address space randomisation,
		 * under gdb or setarch -R, the new image lands on the old one's
		 * executable and loader while the old libc's execve is still the user IP).
		 */
		r = old_retire(m, time, p, start, end);
		if (r < 0)
			return r;
	}
	clean_path(rawpath[0] ? rawpath : "//anon", path, sizeof(path));
	r = note_range(m, p, time, start, end, pgoff, path, dev, inode);
	if (r < 0)
		return r;
	if (m->gated) {
		/* Written by maplog__vouch(), if ever. */
		if (!is_file_path(path) && strcmp(path, "[vdso]") != 0)
			m->stats.anon_exec++;
		p->dirty = true;
		return 0;
	}
	if (strcmp(path, "[vdso]") == 0) {
		/*
		 * The vDSO: the kernel's image, the same in every process, saved beside
		 * the log (FILE.vdso) for readers to name its functions.  One per process.
		 */
		if (p->vdso_announced)
			return 0;
		p->vdso_announced = true;
		r = vdso_map_in(m, time, pid, start + m->vdso_v);
		if (r == 0)
			m->stats.map_in++;
		return r;
	}
	if (!is_file_path(path)) {
		/* Anonymous JIT code, memfd: no file for pmcstat to open. */
		m->stats.anon_exec++;
		return 0;
	}
	if (obj_known(p, dev, inode)) {
		struct maplog_map x = { .start = start, .end = end, .pgoff = pgoff, .dev = dev,
					.inode = inode, .path = path, .pid = pid, .time = time };

		return remap_live(m, time, p, &x);
	}
	if (!is_announced_path(path)) {
		m->stats.path_too_long++;
		return obj_add(p, dev, inode);
	}
	pl = compute_pl_start(m, pid, start, end, pgoff, path, dev, inode, &pc);
	r = file_map_in(m, time, pid, pl, path, pc);
	if (r < 0)
		return r;
	m->stats.map_in++;
	m->stats.elf_fallback += !pc;
	return obj_add_at(p, dev, inode, pc ? pl : 0, false);
}

/* replay(): the order of a process's ranges by object, then address. */
struct replay_ref {
	const struct maplog_map *m;
};

static int replay_cmp(const void *a, const void *b)
{
	const struct maplog_map *x = ((const struct replay_ref *)a)->m;
	const struct maplog_map *y = ((const struct replay_ref *)b)->m;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->inode != y->inode)
		return x->inode < y->inode ? -1 : 1;
	if (x->path != y->path)
		return x->path < y->path ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The MAP_INs of one process's ranges @r (@n): one per object, at its lowest range. */
static int replay_ranges(struct maplog *m, uint64_t time, struct maplog_proc *p,
			 struct replay_ref *refs, const struct maplog_map *r, size_t n, bool *vdso)
{
	size_t k = 0;
	int e;

	for (size_t i = 0; i < n; i++)
		if (has_map_in(r[i].path))
			refs[k++].m = &r[i];
	/* A process without mappings has no refs array at all (qsort must not see NULL). */
	if (k > 1)
		qsort(refs, k, sizeof(*refs), replay_cmp);
	for (size_t i = 0, first = 0; i < k; i++) {
		const struct maplog_map *x = refs[i].m;
		const struct maplog_plcache *pc = NULL;
		uint64_t pl, lo, hi;

		if (i && same_obj(refs[i - 1].m, x)) {
			/* Another placement of the object (remapped code), if it is one. */
			const struct maplog_map *earlier[64];
			size_t ne = 0;

			for (size_t j = first; j < i && ne < 64; j++)
				earlier[ne++] = refs[j].m;
			if ((e = place_more(m, time, p, x, earlier, ne, r, n)) < 0)
				return e;
			continue;
		}
		first = i;
		if (strcmp(x->path, "[vdso]") == 0) {
			if (*vdso)
				continue;
			*vdso = true;
			e = vdso_map_in(m, time, p->pid, x->start + m->vdso_v);
		} else {
			pl = compute_pl_start(m, p->pid, x->start, x->end, x->pgoff, x->path, x->dev,
					      x->inode, &pc);
			e = pc ? file_map_in(m, time, p->pid, pl, x->path, pc)
			       : m->ops->map_in(m->ctx, time, p->pid, pl, x->path);
			m->stats.elf_fallback += !pc;
			/*
			 * Every range of the process is known here: the first placement's
			 * ghost too (remapped code at a lower address than the file's own).
			 */
			if (e == 0 && reader_range(pc, pl, &lo, &hi) &&
			    !others_meet(m, p, r, n, x->dev, x->inode, pl, lo, hi))
				e = trim_ghost(m, time, p, r, n, x->dev, x->inode, pl, lo, hi);
		}
		if (e < 0)
			return e;
		m->stats.map_in++;
	}
	return 0;
}

int maplog__replay(struct maplog *m, uint64_t time)
{
	struct replay_ref *refs = NULL;
	size_t cap = 0;
	int r = 0;

	/* A new log: it has said no build id yet. */
	memset(m->bidsaid, 0, sizeof(m->bidsaid));
	if (m->gated) {
		/* A new log shows nothing yet: the next vouched sample of each writes it. */
		for (size_t i = 0; i < m->cap; i++) {
			m->procs[i].shown = false;
			m->procs[i].cg_said = false;
			m->procs[i].nobjs = 0;
			m->procs[i].vdso_announced = false;
		}
		return 0;
	}

	for (size_t i = 0; i < m->cap && r == 0; i++) {
		struct maplog_proc *p = &m->procs[i];
		bool vdso = false;
		size_t need;

		if (p->pid <= 0)
			continue;
		need = p->nmaps > p->nold ? p->nmaps : p->nold;
		if (need > cap) {
			struct replay_ref *n = realloc(refs, need * sizeof(*n));

			if (!n) {
				r = -ENOMEM;
				break;
			}
			refs = n;
			cap = need;
		}
		r = m->ops->proc_create(m->ctx, time, p->pid, p->flags, p->name);
		if (r < 0)
			break;
		m->stats.processes++;
		p->cg_said = false;
		r = cg_say(m, time, p);
		if (r < 0)
			break;
		/* While an exec is pending its old image is in the log too (exec_retire()). */
		r = replay_ranges(m, time, p, refs, p->old, p->nold, &vdso);
		if (r == 0) {
			vdso = false;
			r = replay_ranges(m, time, p, refs, p->maps, p->nmaps, &vdso);
		}
	}
	free(refs);
	return r;
}

int maplog_kernel_slide(const char *procfs, uint64_t *ret_slide)
{
	char path[256], line[512];
	FILE *f;
	int r = -ENOENT;

	snprintf(path, sizeof(path), "%s/kallsyms", procfs ? procfs : "/proc");
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[256];

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (strcmp(name, "_stext") == 0) {
			if (addr == 0)
				break; /* kptr_restrict hides addresses */
			*ret_slide = (uint64_t)addr - X86_64_LINK_STEXT;
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

int maplog__scan_kernel(struct maplog *m, uint64_t time, const char *procfs, const char *sysfs)
{
	char path[512], line[512];
	uint64_t slide = 0;
	FILE *f;
	int r;

	/* pl_start = slide + V(vmlinux): the run-time _text (11.6); slide 0 if hidden. */
	(void)maplog_kernel_slide(procfs, &slide);
	r = m->ops->map_in(m->ctx, time, MAPLOG_PID_KERNEL, X86_64_LINK_STEXT + slide, "vmlinux");
	if (r < 0)
		return r;
	m->stats.map_in++;

	snprintf(path, sizeof(path), "%s/modules", procfs ? procfs : "/proc");
	f = fopen(path, "re");
	if (!f)
		return 0; /* a kernel without modules */
	while (fgets(line, sizeof(line), f)) {
		char name[64], text[64], ko[80];
		unsigned long long addr = 0;
		uint64_t v;

		if (sscanf(line, "%63s", name) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/module/%s/sections/.text", sysfs ? sysfs : "/sys",
			 name);
		if (util_read_small(path, text, sizeof(text)) > 0) {
			text[strcspn(text, "\n")] = '\0';
			if (util_parse_u64(text, &v) == 0)
				addr = v;
		}
		if (addr == 0) {
			/* Fall back to the module's base address from /proc/modules. */
			char *p = strstr(line, " 0x");

			if (p)
				addr = strtoull(p + 1, NULL, 16);
		}
		if (addr == 0)
			continue; /* addresses hidden: nothing pmcstat could place */
		snprintf(ko, sizeof(ko), "%s.ko", name);
		r = m->ops->map_in(m->ctx, time, MAPLOG_PID_KERNEL, addr, ko);
		if (r < 0) {
			fclose(f);
			return r;
		}
		m->stats.map_in++;
	}
	fclose(f);
	return 0;
}

/*
 * /proc/PID/stat, after the parenthesised comm: ppid (field 4), flags (field 9)
 * and, if @ret_start, starttime (field 22: clock ticks since boot).
 */
static int read_stat(int32_t pid, int32_t *ret_ppid, uint32_t *ret_flags,
		     unsigned long long *ret_start)
{
	char path[64], buf[1024], *p;
	int ppid;
	unsigned flags;
	unsigned long long start = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (util_read_small(path, buf, sizeof(buf)) <= 0)
		return -ENOENT;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1,
			 " %*c %d %*d %*d %*d %*d %u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
			 "%*d %llu",
			 &ppid, &flags, &start) < (ret_start ? 3 : 2))
		return -EINVAL;
	*ret_ppid = ppid;
	*ret_flags = flags;
	if (ret_start)
		*ret_start = start;
	return 0;
}

/*
 * What a scan of one process read, before any of it enters the model or the log:
 * its name, its threads (not gated), its cgroup and its executable mappings (the
 * lines of /proc/PID/maps, '\n' after each).
 */
struct scan_stage {
	char name[20];
	struct scan_thr {
		int32_t tid;
		char name[20];
	} *thr;
	size_t nthr, cap_thr;
	char *maps;
	size_t len, cap;
	char cg[4096];
};

static void stage_free(struct scan_stage *st)
{
	free(st->thr);
	free(st->maps);
}

static void read_comm(const char *path, char *name)
{
	char buf[64];

	if (util_read_small(path, buf, sizeof(buf)) <= 0) {
		strcpy(name, "?");
		return;
	}
	buf[strcspn(buf, "\n")] = '\0';
	set_name(name, buf);
}

/* The executable lines of the maps open on @fd (closed) into @st.  0 or -ENOMEM. */
static int stage_maps(struct scan_stage *st, int fd)
{
	char line[4096 + 256];
	FILE *f = fdopen(fd, "re");
	int r = 0;

	if (!f) {
		close(fd);
		return -errno;
	}
	while (r == 0 && fgets(line, sizeof(line), f)) {
		struct maplog_maps_entry e;
		size_t n;

		line[strcspn(line, "\n")] = '\0';
		if (maplog_maps_parse_line(line, &e) < 0 || !e.x)
			continue;
		n = strlen(line) + 1;
		if (st->len + n > st->cap) {
			size_t cap = st->cap ? st->cap * 2 : 4096;
			char *q;

			while (cap < st->len + n)
				cap *= 2;
			q = realloc(st->maps, cap);
			if (!q) {
				r = -ENOMEM;
				break;
			}
			st->maps = q;
			st->cap = cap;
		}
		memcpy(st->maps + st->len, line, n - 1);
		st->maps[st->len + n - 1] = '\n';
		st->len += n;
	}
	fclose(f);
	return r;
}

/* @pid's threads and their names into @st (those that vanish meanwhile are left out). */
static int stage_threads(struct scan_stage *st, int32_t pid)
{
	char path[128];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		int tid = atoi(de->d_name);

		if (tid <= 0)
			continue;
		if (st->nthr == st->cap_thr) {
			size_t cap = st->cap_thr ? st->cap_thr * 2 : 16;
			struct scan_thr *q = realloc(st->thr, cap * sizeof(*q));

			if (!q) {
				closedir(d);
				return -ENOMEM;
			}
			st->thr = q;
			st->cap_thr = cap;
		}
		st->thr[st->nthr].tid = tid;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, tid);
		read_comm(path, st->thr[st->nthr].name);
		st->nthr++;
	}
	closedir(d);
	return 0;
}

/* /proc/PID/maps for a scan: through ops->open_maps (the proof, see maplog.h) if set. */
static int open_maps(struct maplog *m, int32_t pid)
{
	char path[64];
	int fd;

	if (m->ops->open_maps)
		return m->ops->open_maps(m->ctx, pid);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * Read process @pid into @st.  With ops->open_maps, what is read is bracketed:
 * the name before, the maps opened through open_maps() (where the kernel checks
 * the process and takes hold of its address space, in one step that an exec
 * cannot split), the threads, cgroup and mappings, then the name again and
 * open_maps() a second time.  The reads are the checked process's only if the
 * name did not change and the second check passes too: an exec in between (a
 * setuid program, say) changes the name or fails the check, and the maps read
 * are the address space the first check took hold of, never a later one.
 * 0; -ESRCH (gone), -EACCES/-EPERM (refused), -EAGAIN (it changed meanwhile), or
 * -ENOMEM.
 */
static int stage_read(struct maplog *m, int32_t pid, uint32_t pflags, struct scan_stage *st)
{
	char path[64], again[20];
	int fd, r = 0;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	read_comm(path, st->name);
	if (pflags & PF_KTHREAD)
		return m->gated ? 0 : stage_threads(st, pid); /* no mappings, nothing to prove */
	fd = open_maps(m, pid);
	if (fd < 0)
		return fd == -ENOENT ? -ESRCH : fd;
	if (!m->gated && (r = stage_threads(st, pid)) < 0) {
		close(fd);
		return r;
	}
	if (m->ops->cgroup && read_cgroup(pid, st->cg, sizeof(st->cg)) < 0)
		st->cg[0] = '\0';
	r = stage_maps(st, fd);
	if (r < 0 || !m->ops->open_maps)
		return r;
	read_comm(path, again);
	fd = m->ops->open_maps(m->ctx, pid);
	if (fd < 0)
		return fd == -ENOENT ? -ESRCH : fd;
	close(fd);
	return strcmp(again, st->name) == 0 ? 0 : -EAGAIN;
}

/* Whether @ip lies in one of @st's executable mappings. */
static bool stage_holds(const struct scan_stage *st, uint64_t ip)
{
	for (size_t o = 0; o < st->len;) {
		char *nl = memchr(st->maps + o, '\n', st->len - o);
		struct maplog_maps_entry e;

		*nl = '\0';
		if (maplog_maps_parse_line(st->maps + o, &e) == 0 && e.start <= ip && ip < e.end) {
			*nl = '\n';
			return true;
		}
		*nl = '\n';
		o = (size_t)(nl - st->maps) + 1;
	}
	return false;
}

/* What stage_read() read of @pid into the model and the log, at @time. */
static int stage_apply(struct maplog *m, uint64_t time, int32_t pid, uint32_t pflags,
		       struct scan_stage *st)
{
	struct maplog_proc *p;
	bool fresh = !proc_find(m, pid);
	int r = proc_get(m, pid, &p);

	if (r < 0)
		return r;
	p->flags = (pflags & PF_KTHREAD) ? MAPLOG_F_KPROC : 0;
	set_name(p->name, st->name);
	if (m->gated) {
		/*
		 * A process new to the model begins at the scan; one the model has
		 * (records since a loss made it) gets the ranges it lacks added, and
		 * the records still to come apply to it as they are.
		 */
		if (fresh)
			p->since = time;
		cg_set(m, p, st->cg);
		goto maps;
	}
	r = m->ops->proc_create(m->ctx, time, pid, p->flags, st->name);
	if (r < 0)
		return r;
	m->stats.processes++;
	cg_set(m, p, st->cg);
	p->cg_said = false;
	r = cg_say(m, time, p);
	if (r < 0)
		return r;
	for (size_t i = 0; i < st->nthr; i++) {
		r = m->ops->thr_create(m->ctx, time, st->thr[i].tid, pid, p->flags, st->thr[i].name);
		if (r < 0)
			return r;
		m->stats.threads++;
	}
maps:
	/* A MAP_IN for each mapping of a file, the vDSO, anon or memfd. */
	for (size_t o = 0; o < st->len;) {
		char *nl = memchr(st->maps + o, '\n', st->len - o);
		struct maplog_maps_entry e;

		*nl = '\0';
		if (maplog_maps_parse_line(st->maps + o, &e) == 0 &&
		    (e.kind == MAPLOG_MAP_FILE || e.kind == MAPLOG_MAP_VDSO ||
		     e.kind == MAPLOG_MAP_ANON || e.kind == MAPLOG_MAP_MEMFD)) {
			r = note_mapping(m, time, pid, e.start, e.end, e.pgoff, e.path,
					 makedev(e.dev_major, e.dev_minor), e.inode);
			if (r < 0)
				return r;
		}
		o = (size_t)(nl - st->maps) + 1;
	}
	return 0;
}

/*
 * Scan process @pid into the model and the log at @time: 0 (done, or the process
 * is gone or was refused: counted), or a callback's -errno / -ENOMEM.
 */
static int scan_one(struct maplog *m, uint64_t time, int32_t pid, uint32_t pflags)
{
	struct scan_stage st = { .cg = "" };
	int r = stage_read(m, pid, pflags, &st);

	if (r == -EAGAIN) {
		/* It exec'd while it was read: once more, as it is now. */
		stage_free(&st);
		st = (struct scan_stage){ .cg = "" };
		r = stage_read(m, pid, pflags, &st);
	}
	if (r == 0)
		r = stage_apply(m, time, pid, pflags, &st);
	else if (r != -ENOMEM && r != -ESRCH)
		m->stats.scan_refused++;
	stage_free(&st);
	return r == -ENOMEM || r >= 0 ? r : 0;
}

struct pidinfo {
	int32_t pid, ppid;
	uint32_t flags;
	bool in;
};

static int cmp_pid(const void *a, const void *b)
{
	const struct pidinfo *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

int maplog__scan_procs(struct maplog *m, uint64_t time, const pid_t *pids, size_t npids,
		       bool children)
{
	struct pidinfo *all = NULL;
	size_t n = 0, cap = 0;
	DIR *d = opendir("/proc");
	struct dirent *de;
	bool changed;
	int r = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		int32_t pid = (int32_t)atoi(de->d_name), ppid;
		uint32_t flags;

		if (pid <= 0 || read_stat(pid, &ppid, &flags, NULL) < 0)
			continue;
		if (n == cap) {
			struct pidinfo *nn = realloc(all, (cap ? 2 * cap : 512) * sizeof(*nn));

			if (!nn) {
				r = -ENOMEM;
				goto out;
			}
			all = nn;
			cap = cap ? 2 * cap : 512;
		}
		all[n].pid = pid;
		all[n].ppid = ppid;
		all[n].flags = flags;
		all[n].in = npids == 0;
		for (size_t i = 0; i < npids; i++)
			if (pids[i] == pid)
				all[n].in = true;
		n++;
	}
	if (n)
		qsort(all, n, sizeof(*all), cmp_pid);
	/* Descendants of the chosen pids, to a fixed point. */
	do {
		changed = false;
		for (size_t i = 0; children && npids && i < n; i++) {
			struct pidinfo key = { .pid = all[i].ppid }, *parent;

			if (all[i].in)
				continue;
			parent = bsearch(&key, all, n, sizeof(*all), cmp_pid);
			if (parent && parent->in) {
				all[i].in = true;
				changed = true;
			}
		}
	} while (changed);
	for (size_t i = 0; i < n; i++) {
		if (!all[i].in)
			continue;
		if (m->ops->may_scan && !m->ops->may_scan(m->ctx, all[i].pid)) {
			m->stats.scan_refused++;
			continue;
		}
		r = scan_one(m, time, all[i].pid, all[i].flags);
		if (r < 0)
			goto out;
	}
out:
	closedir(d);
	free(all);
	return r;
}

/* A clock tick of /proc's times (USER_HZ), in ns. */
static uint64_t tick_ns(void)
{
	long hz = sysconf(_SC_CLK_TCK);

	return 1000000000ull / (uint64_t)(hz > 0 ? hz : 100);
}

/*
 * @ticks since boot (stat's starttime, on CLOCK_BOOTTIME) on CLOCK_MONOTONIC, the
 * samples' clock, in ns: CLOCK_BOOTTIME runs ahead by the time the machine was
 * suspended.
 */
static uint64_t boot_ticks_to_mono_ns(unsigned long long ticks)
{
	uint64_t mono = util_now_ns(CLOCK_MONOTONIC), boot = util_now_ns(CLOCK_BOOTTIME);
	/* read in that order, boot >= mono; the difference is the time suspended */
	uint64_t ahead = boot > mono ? boot - mono : 0;
	uint64_t ns = (uint64_t)ticks * tick_ns();

	return ns > ahead ? ns - ahead : 0;
}

int maplog__adopt(struct maplog *m, uint64_t time, int32_t pid, uint64_t user_ip)
{
	size_t slot = (uint32_t)pid % ADOPT_MISS_SLOTS;
	struct scan_stage st = { .cg = "" };
	unsigned long long ticks, ticks2;
	int32_t ppid;
	uint32_t flags;
	int r;

	if (m->gated || pid <= 0 || user_ip == 0 || proc_find(m, pid))
		return 0;
	if (m->adopt_miss[slot].pid == pid && time - m->adopt_miss[slot].time < 1000000000ull)
		return 0; /* refused less than a second ago */
	if (time / 1000000000ull != m->adopt_second) {
		m->adopt_second = time / 1000000000ull;
		m->adopt_tries = 0;
	}
	if (m->adopt_tries >= MAPLOG_ADOPT_PER_SECOND) {
		m->stats.adopt_deferred++;
		return 0;
	}
	m->adopt_tries++;
	m->adopt_miss[slot].pid = pid;
	m->adopt_miss[slot].time = time;
	/*
	 * The pid's process now must be the sample's: begun by the sample's time (else
	 * the pid was reused), and with the sample's user IP in an executable mapping
	 * (else it has exec'd since, its address space is another).
	 */
	if (read_stat(pid, &ppid, &flags, &ticks) < 0 ||
	    boot_ticks_to_mono_ns(ticks) > time + tick_ns() ||
	    (m->ops->may_scan && !m->ops->may_scan(m->ctx, pid)))
		goto refused;
	r = stage_read(m, pid, flags, &st);
	if (r == -ENOMEM)
		goto out;
	/* Still the process whose start time was read (not a new one at the pid). */
	if (r < 0 || !stage_holds(&st, user_ip) || read_stat(pid, &ppid, &flags, &ticks2) < 0 ||
	    ticks2 != ticks)
		goto refused;
	r = stage_apply(m, time, pid, flags, &st);
	if (r < 0)
		goto out;
	m->adopt_miss[slot].pid = 0;
	m->stats.adopted++;
	r = 1;
	goto out;
refused:
	m->stats.adopt_refused++;
	r = 0;
out:
	stage_free(&st);
	return r;
}

/* An exec: @p's ranges become the old image's (p->old, which must be empty), none are new. */
static void maps_to_old(struct maplog_proc *p)
{
	struct maplog_map *t = p->old;
	size_t tc = p->capold;

	p->old = p->maps;
	p->nold = p->nmaps;
	p->capold = p->capmaps;
	p->maps = t;
	p->capmaps = tc;
	p->nmaps = 0;
}

/*
 * A fork: child @p (pid @pid) gets @parent's flags, name and ranges; with no parent
 * known (NULL), the name "?".  0 or -ENOMEM.
 */
static int inherit(struct maplog_proc *p, const struct maplog_proc *parent, int32_t pid)
{
	int r;

	if (!parent) {
		strcpy(p->name, "?");
		return 0;
	}
	p->flags = parent->flags;
	memcpy(p->name, parent->name, sizeof(p->name));
	r = maps_reserve(p, parent->nmaps);
	if (r < 0)
		return r;
	for (size_t i = 0; i < parent->nmaps; i++) {
		p->maps[i] = parent->maps[i];
		p->maps[i].pid = pid;
	}
	p->nmaps = parent->nmaps;
	return 0;
}

/* Gated: find or create @pid's process; one created now begins at @time. */
static int get_gated(struct maplog *m, int32_t pid, uint64_t time, struct maplog_proc **ret)
{
	struct maplog_proc *p = proc_find(m, pid);
	int r;

	if (p) {
		*ret = p;
		return 0;
	}
	r = proc_get(m, pid, ret);
	if (r == 0)
		(*ret)->since = time;
	return r;
}

/*
 * A gated maplog's side-band record: the model changes as always, the log only
 * hears of a shown process's exec (MAP_OUTs) and exit (SYSEXIT).  A record older
 * than its process's fork, exec or scan belongs to an earlier holder of the pid.
 */
static int record_gated(struct maplog *m, const struct rec *rec)
{
	struct maplog_proc *p;
	int32_t pid = (int32_t)rec->pid, tid = (int32_t)rec->tid;
	bool shown;
	int r;

	p = pid > 0 ? proc_find(m, pid) : NULL;
	if (p && rec->time < p->since)
		return 0;
	switch (rec->type) {
	case REC_MMAP:
		if (!(rec->u.mmap.prot & 0x4 /* PROT_EXEC */))
			return 0;
		r = get_gated(m, pid, rec->time, &p);
		if (r < 0)
			return r;
		return note_mapping(m, rec->time, pid, rec->u.mmap.addr,
				    rec->u.mmap.addr + rec->u.mmap.len, rec->u.mmap.pgoff,
				    rec->u.mmap.filename,
				    makedev(rec->u.mmap.dev_major, rec->u.mmap.dev_minor),
				    rec->u.mmap.inode);
	case REC_COMM:
		r = get_gated(m, pid, rec->time, &p);
		if (r < 0)
			return r;
		if (rec->u.comm.exec) {
			/*
			 * User mode only (a gated session's events exclude the kernel): no
			 * sample of the old image comes after its exec, so it goes now.
			 */
			maps_to_old(p);
			r = exec_retire(m, rec->time, p);
			p->nobjs = 0;
			p->vdso_announced = false;
			p->shown = p->dirty = false;
			p->since = rec->time;
			if (r < 0)
				return r;
			cg_read(m, p); /* said with its PROC_CREATE, when a sample vouches */
			p->cg_said = false;
		}
		if (tid == pid || rec->u.comm.exec)
			set_name(p->name, rec->u.comm.comm);
		return 0;
	case REC_FORK:
		if (pid == (int32_t)rec->u.task.ppid)
			return get_gated(m, pid, rec->time, &p); /* a new thread */
		shown = p && p->shown;
		if (p)
			proc_forget(m, p); /* a reused pid whose exit was not seen */
		r = shown ? m->ops->sysexit(m->ctx, rec->time, pid) : 0;
		if (r == 0)
			r = proc_get(m, pid, &p);
		if (r < 0)
			return r;
		p->since = rec->time;
		/* The parent's address space, not what the log shows of it. */
		r = inherit(p, proc_find(m, (int32_t)rec->u.task.ppid), pid);
		if (r < 0)
			return r;
		{
			/* Its cgroup too: said when a sample vouches for it (no PROCFORK here). */
			const struct maplog_proc *parent = proc_find(m, (int32_t)rec->u.task.ppid);

			p->cg = parent ? parent->cg : 0;
			p->cg_said = false;
		}
		if (m->ops->maps_changed)
			m->ops->maps_changed(m->ctx, pid);
		return 0;
	case REC_EXIT:
		if (tid != pid || !p)
			return 0;
		shown = p->shown;
		proc_forget(m, p);
		if (m->ops->maps_changed)
			m->ops->maps_changed(m->ctx, pid);
		return shown ? m->ops->sysexit(m->ctx, rec->time, pid) : 0;
	default:
		return 0;
	}
}

/* Gated: whether range @x of a shown object is a placement of it the log lacks. */
static bool unplaced(struct maplog *m, struct maplog_proc *p, const struct maplog_map *x)
{
	const struct maplog_plcache *c;
	uint64_t pl, lo, hi;

	if (strcmp(x->path, "[vdso]") == 0 || !is_announced_path(x->path))
		return false;
	pl = range_pl(m, p, x, &c);
	return reader_range(c, pl, &lo, &hi) && !obj_placed(p, x->dev, x->inode, pl);
}

/*
 * Gated: write what the log may show of @p as of @taken, at @at: the MAP_IN of
 * each object not shown yet, at its lowest range mapped by then (a range mapped
 * later keeps @p dirty for a later sample).
 */
static int publish(struct maplog *m, struct maplog_proc *p, uint64_t taken, uint64_t at)
{
	struct replay_ref *refs;
	size_t k = 0;
	bool later = false;
	int e = 0;

	if (!p->nmaps) {
		p->dirty = false;
		return 0;
	}
	refs = malloc(p->nmaps * sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct maplog_map *x = &p->maps[i];

		if (!is_file_path(x->path) && strcmp(x->path, "[vdso]") != 0)
			continue;
		if (x->time > taken)
			later = true;
		else if (!shown_obj(p, x) || unplaced(m, p, x))
			refs[k++].m = x;
	}
	if (k > 1)
		qsort(refs, k, sizeof(*refs), replay_cmp);
	for (size_t i = 0, first = 0; i < k && e == 0; i++) {
		const struct maplog_map *x = refs[i].m;
		bool same = i && same_obj(refs[i - 1].m, x);
		uint64_t pl;

		if (!same)
			first = i;
		if ((same || obj_known(p, x->dev, x->inode)) && strcmp(x->path, "[vdso]") != 0) {
			/* Another placement of a file (remapped code), if it is one. */
			const struct maplog_map *earlier[64];
			const struct maplog_plcache *c;
			size_t ne = 0;

			if (!is_announced_path(x->path))
				continue;
			pl = range_pl(m, p, x, &c);
			if (c && obj_placed(p, x->dev, x->inode, pl))
				continue;
			for (size_t j = first; j < i && ne < 64; j++)
				earlier[ne++] = refs[j].m;
			e = place_more(m, at, p, x, earlier, ne, p->maps, p->nmaps);
			if (e > 0)
				e = obj_add_at(p, x->dev, x->inode, pl, true);
			continue;
		}
		if (same)
			continue;
		if (strcmp(x->path, "[vdso]") == 0) {
			if (p->vdso_announced)
				continue;
			p->vdso_announced = true;
			e = vdso_map_in(m, at, p->pid, x->start + m->vdso_v);
		} else if (!is_announced_path(x->path)) {
			m->stats.path_too_long++;
			e = obj_add(p, x->dev, x->inode);
			continue;
		} else {
			const struct maplog_plcache *pc;

			pl = compute_pl_start(m, p->pid, x->start, x->end, x->pgoff, x->path, x->dev,
					      x->inode, &pc);
			e = file_map_in(m, at, p->pid, pl, x->path, pc);
			m->stats.elf_fallback += !pc;
			if (e == 0)
				e = obj_add_at(p, x->dev, x->inode, pc ? pl : 0, false);
		}
		if (e == 0)
			m->stats.map_in++;
	}
	free(refs);
	p->dirty = later;
	return e;
}

int maplog__vouch(struct maplog *m, int32_t pid, uint64_t taken, uint64_t at)
{
	struct maplog_proc *p;
	int r;

	if (!m->gated)
		return 1;
	p = pid > 0 ? proc_find(m, pid) : NULL;
	if (!p || p->since > taken || (p->flags & MAPLOG_F_KPROC)) {
		m->stats.unvouched++;
		return 0;
	}
	if (p->shown && !p->dirty)
		return 1;
	if (!p->shown) {
		r = m->ops->proc_create(m->ctx, at, pid, p->flags, p->name);
		if (r < 0)
			return r;
		m->stats.processes++;
		p->shown = true;
		p->nobjs = 0;
		p->vdso_announced = false;
		p->cg_said = false;
		r = cg_say(m, at, p);
		if (r < 0)
			return r;
	}
	r = publish(m, p, taken, at);
	return r < 0 ? r : 1;
}

int maplog__forget_all(struct maplog *m, uint64_t time)
{
	int r = 0;

	for (size_t i = 0; i < m->cap; i++) {
		struct maplog_proc *p = &m->procs[i];
		int32_t pid = p->pid;
		bool shown = p->shown;

		if (pid <= 0)
			continue;
		proc_forget(m, p);
		if (m->ops->maps_changed)
			m->ops->maps_changed(m->ctx, pid);
		if (shown && r == 0)
			r = m->ops->sysexit(m->ctx, time, pid);
	}
	return r;
}

int maplog__record(struct maplog *m, const struct rec *rec)
{
	struct maplog_proc *p, *parent;
	int32_t pid = (int32_t)rec->pid, tid = (int32_t)rec->tid;
	int r;

	if (m->gated)
		return record_gated(m, rec);
	switch (rec->type) {
	case REC_MMAP:
		if (!(rec->u.mmap.prot & 0x4 /* PROT_EXEC */))
			return 0;
		return note_mapping(m, rec->time, pid, rec->u.mmap.addr,
				    rec->u.mmap.addr + rec->u.mmap.len, rec->u.mmap.pgoff,
				    rec->u.mmap.filename,
				    makedev(rec->u.mmap.dev_major, rec->u.mmap.dev_minor),
				    rec->u.mmap.inode);
	case REC_COMM:
		r = proc_get(m, pid, &p);
		if (r < 0)
			return r;
		if (rec->u.comm.exec) {
			/*
			 * The kernel reports the exec once the old address space is gone,
			 * but until the new image starts, the samples of the exec (the
			 * loading of the new image takes milliseconds) carry the user
			 * registers of the old one.  So its ranges stay, as p->old, both
			 * here (for the unwinder) and in the log (no MAP_OUT yet), until
			 * exec_retire(); the new image is announced afresh meanwhile.
			 */
			if (p->nold) {
				r = exec_retire(m, rec->time, p); /* a second exec before any sample */
				if (r < 0)
					return r;
			}
			maps_to_old(p);
			p->nobjs = 0;
			p->vdso_announced = false;
			p->exited = false;
			if (m->ops->maps_changed)
				m->ops->maps_changed(m->ctx, pid);
		}
		if (tid == pid || rec->u.comm.exec) {
			set_name(p->name, rec->u.comm.comm);
			r = m->ops->proc_create(m->ctx, rec->time, pid, p->flags, p->name);
			if (r < 0)
				return r;
			m->stats.processes++;
		}
		if (rec->u.comm.exec) {
			/* Moved into a container's cgroup before its exec? */
			cg_read(m, p);
			r = cg_say(m, rec->time, p);
			if (r < 0)
				return r;
		}
		r = m->ops->thr_create(m->ctx, rec->time, tid, pid, p->flags, rec->u.comm.comm);
		if (r == 0)
			m->stats.threads++;
		return r;
	case REC_FORK:
		parent = proc_find(m, (int32_t)rec->u.task.ppid);
		if (parent && parent->nold) {
			/* Only a process that runs its new image forks or makes threads. */
			r = exec_retire(m, rec->time, parent);
			if (r < 0)
				return r;
		}
		if (pid != (int32_t)rec->u.task.ppid) {
			/* A new process: it starts as a copy of its parent. */
			p = proc_find(m, pid);
			if (p) {
				p->nobjs = 0; /* a reused pid */
				p->nmaps = 0;
				p->vdso_announced = false;
				p->nold = 0;
				p->exited = false;
			} else {
				r = proc_get(m, pid, &p);
				if (r < 0)
					return r;
				/* proc_get may have moved the table: find the parent again. */
				parent = proc_find(m, (int32_t)rec->u.task.ppid);
			}
			if (parent) {
				p->vdso_announced = parent->vdso_announced; /* PROCFORK copies it */
				for (size_t i = 0; i < parent->nobjs; i++) {
					const struct maplog_obj *o = &parent->objs[i];

					r = obj_add_at(p, o->dev, o->inode, o->pl, o->extra);
					if (r < 0)
						return r;
				}
			}
			r = inherit(p, parent, pid);
			if (r < 0)
				return r;
			/* The log's PROCFORK gives the child its parent's cgroup, as the kernel does. */
			p->cg = parent ? parent->cg : 0;
			p->cg_said = parent && parent->cg_said;
			if (m->ops->maps_changed)
				m->ops->maps_changed(m->ctx, pid); /* a reused pid's caches go */
			r = m->ops->procfork(m->ctx, rec->time, (int32_t)rec->u.task.ppid, pid);
			if (r == 0)
				r = m->ops->proc_create(m->ctx, rec->time, pid, p->flags, p->name);
			if (r < 0)
				return r;
			m->stats.processes++;
		} else {
			r = proc_get(m, pid, &p);
			if (r < 0)
				return r;
		}
		r = m->ops->thr_create(m->ctx, rec->time, tid, pid, p->flags, p->name);
		if (r == 0)
			m->stats.threads++;
		return r;
	case REC_EXIT:
		r = m->ops->thr_exit(m->ctx, rec->time, tid);
		if (r < 0 || tid != pid)
			return r;
		p = proc_find(m, pid);
		if (p) {
			proc_forget(m, p);
			if (m->ops->maps_changed)
				m->ops->maps_changed(m->ctx, pid);
		}
		return m->ops->sysexit(m->ctx, rec->time, pid);
	default:
		return 0;
	}
}
