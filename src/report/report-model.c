/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * report-model.c: the report model: processes, threads, images placed by MAP_IN,
 * functions, kernel symbols, and the resolution of a PC to its function.
 *
 * PUBLIC INTERFACES
 *   see include/hwpmcd/report.h
 *
 * IMPLEMENTATION NOTES
 *   Processes and threads are chained hash tables keyed by pid and tid; a
 *   process holds two sorted, disjoint range arrays: exact ranges (an image's
 *   executable sections placed with its load bias) and fallback ranges of
 *   images whose file cannot be read.  Images are interned by (path, kernel),
 *   read once (ELF facts when a process that maps them is first settled, symbols
 *   at the first PC that needs them); a user process's MAP_INs wait in its pend
 *   list until proc_settle() places them, before its ranges are read, shared or
 *   cut.  Functions are interned in an open-addressing table keyed by (kind,
 *   image or module, address, and for process names the name).  The PC cache is
 *   direct-mapped and tagged with the model generation, which every record that
 *   changes the model bumps.
 *
 *   The MAP_IN rule (report.h) is decided at the first MAP_IN or PROCEXEC, from
 *   what the log said before it: the USERDATA mark hwpmcd writes right after
 *   INITIALIZE, the CPU type and the PMC ids.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hwpmcd/common-open.h"
#include "hwpmcd/common.h"
#include "hwpmcd/log.h"
#include "hwpmcd/maplog-jit.h"
#include "hwpmcd/report.h"

#define REPORT_FALLBACK_SPAN (256ull << 20)
/* An x86-64 vmlinux's first executable PT_LOAD (V of the rule for "vmlinux"): _text. */
#define REPORT_X86_64_KERNEL_V 0xffffffff81000000ull
/* The PC cache's first and largest sizes (entries of 32 bytes). */
#define REPORT_PCC_MIN 512
#define REPORT_PCC_MAX 16384

struct report_range {
	uint64_t lo, hi, bias;
	struct report_image *img;
};

/*
 * A process's ranges: a treap keyed by lo (ranges never overlap), persistent and
 * reference-counted, so that a PROCFORK shares its parent's tree in O(1) and an
 * add or a cut copies only the O(log n) nodes on the paths it changes that are
 * shared (a node referenced once is changed in place).  A hostile log of 5,000
 * MAP_INs and then 5,000 PROCFORKs took 161 s and 804 MB with copied arrays, and
 * 80,000 MAP_INs in one pid 19 s with linear cuts (issue 13, item 8).
 */
struct report_rnode {
	struct report_range r;
	uint64_t prio;
	uint32_t refs;
	struct report_rnode *left, *right;
};

struct report_rset {
	struct report_rnode *root;
	size_t n;
};

static void rset_clear(struct report_model *m, struct report_rset *t);

/*
 * A MAP_IN (or the PROCEXEC's executable) not yet placed: its image's file is read
 * only when the process's ranges are needed (proc_settle()).
 */
struct report_pend {
	struct report_image *img;
	uint64_t start; /* pl_start; for the executable of a PROCEXEC, its bias pl_dyn */
	bool exec;
};

struct report_proc {
	int32_t pid;
	bool zombie;
	char name[PLOG_MAXCOMLEN + 1];
	struct report_rset exact, approx;
	struct report_pend *pend; /* in log order, applied before anything reads the ranges */
	size_t npend, pendcap;
	uint64_t samples; /* report_proc__note_sample() */
	struct report_cgroup *cg; /* the cgroup mark's (NULL: none said) */
	struct report_proc *hnext;
};

struct report_thread {
	int32_t tid;
	char name[PLOG_MAXCOMLEN + 1];
	struct report_thread *hnext;
};

/* One entry of the PC resolution cache. */
struct report_pcc {
	uint64_t pc;
	uintptr_t key; /* the process (1: the kernel) */
	uint32_t gen;  /* the model generation it was resolved in */
	uint32_t func; /* 0: empty */
	uint32_t chain; /* --inline: the frames (an index into chains), 0: func alone */
};

/* The build id a log said last for a path (report.h: path_ids). */
struct report_pathid {
	char *path; /* NULL: empty slot */
	uint8_t id[MAPLOG_BUILD_ID_MAX];
	size_t len;
};

/* A pid's JIT map (report.h: jits). */
struct report_jit {
	int32_t pid;
	bool used;
	struct report_symtab *t; /* NULL: none, or not readable */
	struct report_jithist *h; /* its entries by time (perf-PID.map.times), or NULL */
};

/*
 * A JIT map with the times its lines appeared (perf-PID.map.times, written line for
 * line by the recorder: maplog-jit.h): every entry, sorted by start (then line), so
 * that a PC that two entries covered (code space the JIT reused) is named by the one
 * that was current at the sample's time.  Kept for the model's life (functions
 * borrow the names).
 */
struct report_jithist {
	struct jh_ent {
		uint64_t start, end;
		int64_t ns;
		uint32_t line;
		const char *name; /* in pool */
	} *e;
	uint64_t *maxend; /* the largest end of e[0..i] */
	size_t n;
	char *pool; /* the map's bytes, lines cut at their newlines */
	struct report_jithist *next;
};

/* The longest walk back over entries that may cover a PC (a hostile map's overlaps). */
#define REPORT_JITHIST_SCAN 4096

/* --inline/--srcline: what DWARF said of one (image, link address). */
struct report_dwc {
	const struct report_image *img; /* NULL: empty slot */
	uint64_t link;
	uint32_t func, chain;
};

const char *report_map_rule_name(enum report_map_rule rule)
{
	static const char *const names[REPORT_RULE_MAX] = {
		[REPORT_RULE_AUTO] = "auto",
		[REPORT_RULE_FREEBSD] = "freebsd",
		[REPORT_RULE_HWPMCD_V1] = "hwpmcd-1",
	};

	return (unsigned)rule < REPORT_RULE_MAX ? names[rule] : "?";
}

uint64_t report_pl_start_v(enum report_map_rule rule, const struct maplog_elf_info *in)
{
	uint64_t v = 0;

	if (rule != REPORT_RULE_HWPMCD_V1)
		return in->v; /* maplog_pl_start_v(): the one rule of pmclog-format.md 11.5 */
	/* Earlier hwpmcd logs: pmcstat's rule before FreeBSD main (pmclog-format.md 10.2). */
	if (in->e_type != ET_EXEC)
		return 0;
	for (size_t i = 0; i < in->n_load; i++) {
		const struct maplog_phdr *p = &in->load[i];

		if ((p->p_flags & PF_X) && (p->p_offset & -p->p_align) == 0)
			v = p->p_vaddr & -p->p_align;
	}
	return v;
}

/* Processes and threads ---------------------------------------------------- */

struct report_proc *report_model__proc(const struct report_model *m, int32_t pid)
{
	struct report_proc *p;

	if (!m->pht)
		return NULL;
	for (p = m->pht[util_mix64((uint64_t)(uint32_t)pid) & (m->phtcap - 1)]; p; p = p->hnext)
		if (p->pid == pid)
			return p;
	return NULL;
}

const char *report_model__proc_name(const struct report_proc *p)
{
	return p->name;
}

uint64_t report_proc__note_sample(struct report_proc *p)
{
	if (p->cg)
		p->cg->samples++;
	return p->samples++;
}

const struct report_cgroup *report_model__proc_cgroup(const struct report_proc *p)
{
	return p ? p->cg : NULL;
}

bool report_cgroup_under(const char *path, const char *top)
{
	size_t n = strlen(top);

	while (n > 1 && top[n - 1] == '/')
		n--;
	if (n == 1 && top[0] == '/')
		return path[0] == '/';
	return strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static void proc_reset(struct report_model *m, struct report_proc *p)
{
	rset_clear(m, &p->exact);
	rset_clear(m, &p->approx);
	p->npend = 0;
	p->zombie = false;
	p->cg = NULL;
}

/* The live process @pid, made if new; a zombie is replaced (pid reuse). */
static struct report_proc *proc_get(struct report_model *m, int32_t pid)
{
	struct report_proc *p = report_model__proc(m, pid);
	size_t b;

	if (p) {
		if (p->zombie) {
			proc_reset(m, p);
			p->name[0] = '\0';
		}
		return p;
	}
	if (!m->pht || m->nprocs >= m->phtcap) {
		size_t ncap = m->phtcap ? m->phtcap * 2 : 1024;
		struct report_proc **n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t i = 0; i < m->phtcap; i++) {
			while (m->pht[i]) {
				struct report_proc *q = m->pht[i];

				m->pht[i] = q->hnext;
				b = util_mix64((uint64_t)(uint32_t)q->pid) & (ncap - 1);
				q->hnext = n[b];
				n[b] = q;
			}
		}
		free(m->pht);
		m->pht = n;
		m->phtcap = ncap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	b = util_mix64((uint64_t)(uint32_t)pid) & (m->phtcap - 1);
	p->hnext = m->pht[b];
	m->pht[b] = p;
	m->nprocs++;
	m->nprocs_logged++;
	return p;
}

static struct report_thread *thread_find(const struct report_model *m, int32_t tid)
{
	struct report_thread *t;

	if (!m->tht)
		return NULL;
	for (t = m->tht[util_mix64((uint64_t)(uint32_t)tid) & (m->thtcap - 1)]; t; t = t->hnext)
		if (t->tid == tid)
			return t;
	return NULL;
}

const char *report_model__thread_name(const struct report_model *m, int32_t tid)
{
	const struct report_thread *t = thread_find(m, tid);

	return t ? t->name : NULL;
}

static int thread_set(struct report_model *m, int32_t tid, const char *name)
{
	struct report_thread *t = thread_find(m, tid);
	size_t b;

	if (!t) {
		if (!m->tht) {
			m->thtcap = 4096;
			m->tht = calloc(m->thtcap, sizeof(*m->tht));
			if (!m->tht)
				return -ENOMEM;
		}
		t = calloc(1, sizeof(*t));
		if (!t)
			return -ENOMEM;
		t->tid = tid;
		b = util_mix64((uint64_t)(uint32_t)tid) & (m->thtcap - 1);
		t->hnext = m->tht[b];
		m->tht[b] = t;
	}
	snprintf(t->name, sizeof(t->name), "%s", name);
	return 0;
}

/* Range trees (struct report_rset) ------------------------------------------ */

/* Spare nodes kept beyond an operation's needs; more are given back to malloc. */
#define RNODE_SPARE_MAX 4096

static void rnode_give(struct report_model *m, struct report_rnode *x)
{
	if (m->nrfree >= RNODE_SPARE_MAX) {
		free(x);
		return;
	}
	x->left = m->rfree;
	m->rfree = x;
	m->nrfree++;
}

/*
 * Every node an operation may take comes from m->rfree, filled first by
 * rset_reserve(): an add or a cut copies at most the nodes of two root-to-leaf
 * paths plus three new ones, so 4 log2(n) + 16 (a treap's height stays within a
 * small multiple of log2(n): its priorities are random, not the log's) is plenty.
 * If an operation still runs dry, it takes from malloc and aborts only when that
 * fails too, as a reserve cannot be undone half-way.  A failed reserve changes
 * nothing (-ENOMEM).
 */
static int rset_reserve(struct report_model *m, const struct report_rset *t)
{
	size_t want = 16;

	for (size_t n = t->n + 2; n > 1; n >>= 1)
		want += 4;
	while (m->nrfree < want) {
		struct report_rnode *x = malloc(sizeof(*x));

		if (!x)
			return -ENOMEM;
		rnode_give(m, x);
	}
	return 0;
}

static struct report_rnode *rnode_take(struct report_model *m)
{
	struct report_rnode *x = m->rfree;

	if (x) {
		m->rfree = x->left;
		m->nrfree--;
	} else if (!(x = malloc(sizeof(*x)))) {
		fprintf(stderr, "hwpmc: out of memory in the process model\n");
		abort();
	}
	memset(x, 0, sizeof(*x));
	x->refs = 1;
	return x;
}

/* Drop one reference to @x (and, at the last one, to its children). */
static void rnode_unref(struct report_model *m, struct report_rnode *x)
{
	while (x && --x->refs == 0) {
		struct report_rnode *l = x->left, *r = x->right;

		rnode_unref(m, l);
		rnode_give(m, x);
		x = r;
	}
}

static struct report_rnode *rnode_new(struct report_model *m, struct report_range r)
{
	struct report_rnode *x = rnode_take(m);

	x->r = r;
	m->rseed = m->rseed * 6364136223846793005ull + 1442695040888963407ull;
	x->prio = util_mix64(m->rseed);
	return x;
}

/*
 * @x, one of whose references the caller holds and gives up, as a node only the
 * caller references: itself if it has no other reference, else a copy (which
 * references @x's children).
 */
static struct report_rnode *rnode_own(struct report_model *m, struct report_rnode *x)
{
	struct report_rnode *c;

	if (x->refs == 1)
		return x;
	c = rnode_take(m);
	c->r = x->r;
	c->prio = x->prio;
	c->left = x->left;
	c->right = x->right;
	if (c->left)
		c->left->refs++;
	if (c->right)
		c->right->refs++;
	x->refs--;
	return c;
}

/* Split @t (consumed) into *@l (ranges with lo < @k) and *@r (lo >= @k). */
static void rnode_split(struct report_model *m, struct report_rnode *t, uint64_t k,
			struct report_rnode **l, struct report_rnode **r)
{
	if (!t) {
		*l = *r = NULL;
		return;
	}
	t = rnode_own(m, t);
	if (t->r.lo < k) {
		rnode_split(m, t->right, k, &t->right, r);
		*l = t;
	} else {
		rnode_split(m, t->left, k, l, &t->left);
		*r = t;
	}
}

/* @a and @b (consumed; every lo of @a below every lo of @b) as one tree. */
static struct report_rnode *rnode_merge(struct report_model *m, struct report_rnode *a,
					struct report_rnode *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (a->prio > b->prio) {
		a = rnode_own(m, a);
		a->right = rnode_merge(m, a->right, b);
		return a;
	}
	b = rnode_own(m, b);
	b->left = rnode_merge(m, a, b->left);
	return b;
}

/* @t (consumed) without its greatest range, which goes to *@out; *@had: there was one. */
static struct report_rnode *rnode_pop_max(struct report_model *m, struct report_rnode *t,
					  struct report_range *out, bool *had)
{
	struct report_rnode *l;

	if (!t) {
		*had = false;
		return NULL;
	}
	t = rnode_own(m, t);
	if (t->right) {
		t->right = rnode_pop_max(m, t->right, out, had);
		return t;
	}
	*out = t->r;
	*had = true;
	l = t->left;
	t->left = NULL;
	rnode_unref(m, t);
	return l;
}

static size_t rnode_count(const struct report_rnode *t)
{
	size_t n = 0;

	for (; t; t = t->right)
		n += 1 + rnode_count(t->left);
	return n;
}

/* The greatest range of @t, or NULL (read only). */
static const struct report_range *rnode_max(const struct report_rnode *t)
{
	if (!t)
		return NULL;
	while (t->right)
		t = t->right;
	return &t->r;
}

/*
 * Remove [lo, hi) from @t: ranges inside it go, ranges across its ends are trimmed.
 * O(log n) plus the ranges removed (each range is removed at most once).
 */
static int rset_cut(struct report_model *m, struct report_rset *t, uint64_t lo, uint64_t hi)
{
	struct report_rnode *a, *b, *mid, *c, *piece = NULL;
	const struct report_range *mx;
	struct report_range x, tail = { 0 };
	bool had, have_tail = false;
	int e = rset_reserve(m, t);

	if (e < 0)
		return e;
	if (lo >= hi || !t->root)
		return 0;
	rnode_split(m, t->root, lo, &a, &b);
	rnode_split(m, b, hi, &mid, &c);
	/* Every range starting inside [lo, hi) goes; the last may leave a tail past hi. */
	mx = rnode_max(mid);
	if (mx && mx->hi > hi) {
		tail = *mx;
		tail.lo = hi;
		have_tail = true;
	}
	t->n -= rnode_count(mid);
	rnode_unref(m, mid);
	/* The last range starting before lo may reach into [lo, hi), or across it. */
	mx = rnode_max(a);
	if (mx && mx->hi > lo) {
		a = rnode_pop_max(m, a, &x, &had);
		if (x.hi > hi) { /* across [lo, hi): then nothing started inside it */
			tail = x;
			tail.lo = hi;
			have_tail = true;
		}
		x.hi = lo;
		a = rnode_merge(m, a, rnode_new(m, x));
	}
	if (have_tail) {
		piece = rnode_new(m, tail);
		t->n++;
	}
	t->root = rnode_merge(m, rnode_merge(m, a, piece), c);
	return 0;
}

/* Add @add, replacing whatever it overlaps. */
static int rset_add(struct report_model *m, struct report_rset *t, struct report_range add)
{
	struct report_rnode *l, *r;
	int e;

	if (add.lo >= add.hi)
		return 0;
	e = rset_cut(m, t, add.lo, add.hi);
	if (e < 0 || (e = rset_reserve(m, t)) < 0)
		return e;
	rnode_split(m, t->root, add.lo, &l, &r);
	t->root = rnode_merge(m, rnode_merge(m, l, rnode_new(m, add)), r);
	t->n++;
	return 0;
}

static void rset_clear(struct report_model *m, struct report_rset *t)
{
	rnode_unref(m, t->root);
	t->root = NULL;
	t->n = 0;
}

/* @to (emptied first) shares @from's tree: O(1), copy-on-write. */
static void rset_share(struct report_model *m, struct report_rset *to, const struct report_rset *from)
{
	if (to->root == from->root)
		return;
	rset_clear(m, to);
	to->root = from->root;
	to->n = from->n;
	if (to->root)
		to->root->refs++;
}

static const struct report_range *rset_find(const struct report_rset *t, uint64_t pc)
{
	const struct report_rnode *x = t->root, *best = NULL;

	while (x) { /* the range with the greatest lo <= pc */
		if (x->r.lo <= pc) {
			best = x;
			x = x->right;
		} else {
			x = x->left;
		}
	}
	return best && pc < best->r.hi ? &best->r : NULL;
}

/* Images ------------------------------------------------------------------ */

/*
 * The file an image is read from: a "[vdso]" image from the vDSO file beside the
 * log (or --vdso); a kernel image named without a directory from
 * <symfs>/boot/kernel/NAME; anything else as <symfs>PATH.  Empty if none.
 */
static void image_file(const struct report_model *m, const struct report_image *img, char *out,
		       size_t outsize)
{
	const char *symfs = m->o.symfs ? m->o.symfs : "";

	out[0] = '\0';
	if (img->file) {
		snprintf(out, outsize, "%s", img->file);
	} else if (!img->kernel && strcmp(img->path, "[vdso]") == 0) {
		if (m->o.vdso)
			snprintf(out, outsize, "%s", m->o.vdso);
		else if (m->o.log && strcmp(m->o.log, "-") != 0)
			snprintf(out, outsize, "%s.vdso", m->o.log);
	} else if (img->kernel && !strchr(img->path, '/')) {
		snprintf(out, outsize, "%s/boot/kernel/%s", symfs, img->path);
	} else {
		snprintf(out, outsize, "%s%s", symfs, img->path);
	}
}

void report_model__image_file(const struct report_model *m, const struct report_image *img,
			      char *out, size_t outsize)
{
	image_file(m, img, out, outsize);
}

static void image_open_info(struct report_model *m, struct report_image *img)
{
	char path[4096];
	int fd;

	image_file(m, img, path, sizeof(path));
	if (!path[0]) {
		img->info_err = -ENOENT;
		return;
	}
	/* Never open a device or FIFO a hostile log names (a watchdog acts when opened). */
	fd = report_open_regular(path, NULL);
	if (fd < 0) {
		img->info_err = fd;
		return;
	}
	img->info_err = maplog_elf_info_fd(fd, &img->info);
	close(fd);
}

/* Whether the file @path is the build @img wants: 0 with img->file and img->info set. */
static int image_try_id(struct report_image *img, const char *path)
{
	struct maplog_elf_info in;
	int fd, r;

	fd = report_open_regular(path, NULL);
	if (fd < 0)
		return fd;
	r = maplog_elf_info_fd(fd, &in);
	close(fd);
	if (r < 0)
		return r;
	if (in.build_id_len != img->want_id_len ||
	    memcmp(in.build_id, img->want_id, img->want_id_len) != 0)
		return -ESTALE;
	img->file = strdup(path);
	if (!img->file)
		return -ENOMEM;
	img->info = in;
	return 0;
}

/*
 * The file at @img's path is not the build the log names (or is missing): look for
 * that build by its id, as a debug file of the debug directory holds it (its program
 * headers and symbols are the image's), or as the vDSO image beside the log is it
 * (a vDSO named by its saved copy, pmclog-format.md 11.15, reported where that copy
 * is not).  0 with img->file and img->info set, or < 0.
 */
static int image_by_id(struct report_model *m, struct report_image *img)
{
	char hex[2 * MAPLOG_BUILD_ID_MAX + 1], path[4096];
	int r;

	for (size_t i = 0; i < img->want_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", img->want_id[i]);
	snprintf(path, sizeof(path), "%s%s/.build-id/%.2s/%s.debug", m->o.symfs ? m->o.symfs : "",
		 m->o.debugdir ? m->o.debugdir : "/usr/lib/debug", hex, hex + 2);
	r = image_try_id(img, path);
	if (r < 0 && r != -ENOMEM && !img->kernel) {
		path[0] = '\0';
		if (m->o.vdso)
			snprintf(path, sizeof(path), "%s", m->o.vdso);
		else if (m->o.log && strcmp(m->o.log, "-") != 0)
			snprintf(path, sizeof(path), "%s.vdso", m->o.log);
		if (path[0] && image_try_id(img, path) == 0)
			return 0;
	}
	return r;
}

static struct report_image *image_get(struct report_model *m, const char *path, bool kernel,
				      const uint8_t *id, size_t idlen)
{
	struct report_image *img;
	uint64_t h = util_hash_str(path) ^ (kernel ? 0x9e3779b97f4a7c15ull : 0);
	size_t b;

	for (size_t i = 0; i < idlen; i++)
		h = (h ^ id[i]) * 1099511628211ull;
	if (!m->iht) {
		m->ihtcap = 4096;
		m->iht = calloc(m->ihtcap, sizeof(*m->iht));
		if (!m->iht)
			return NULL;
	}
	b = util_mix64(h) & (m->ihtcap - 1);
	for (img = m->iht[b]; img; img = img->hnext)
		if (img->kernel == kernel && strcmp(img->path, path) == 0 &&
		    img->want_id_len == idlen && (!idlen || memcmp(img->want_id, id, idlen) == 0))
			return img;
	img = calloc(1, sizeof(*img));
	if (!img || !(img->path = strdup(path))) {
		free(img);
		return NULL;
	}
	img->kernel = kernel;
	img->want_id_len = idlen;
	if (idlen)
		memcpy(img->want_id, id, idlen);
	{
		/* Paths from the log are hostile: printed only escaped. */
		size_t len = strlen(path), cap = len * 4 + 4;

		img->shown = malloc(cap);
		if (!img->shown) {
			free(img->path);
			free(img);
			return NULL;
		}
		util_escape(path, len, img->shown, cap);
	}
	img->base = strrchr(img->shown, '/') ? strrchr(img->shown, '/') + 1 : img->shown;
	if (!*img->base)
		img->base = img->shown;
	img->hnext = m->iht[b];
	m->iht[b] = img;
	m->nimages++;
	return img;
}

/*
 * The ELF facts of @img's file (img->info, or img->info_err), read once: at the
 * first need, so that the images of processes without samples are never opened
 * (a system-wide log names every image of every process).
 */
static void image_info(struct report_model *m, struct report_image *img)
{
	if (img->info_tried)
		return;
	img->info_tried = true;
	m->images_read++;
	/* Linux kernel images have no file here: they resolve through kallsyms. */
	if (img->kernel && (strcmp(img->path, "vmlinux") == 0 || strstr(img->path, ".ko"))) {
		img->info_err = -ENOENT;
		return;
	}
	image_open_info(m, img);
	if (img->want_id_len && (img->info_err || img->info.build_id_len != img->want_id_len ||
				 memcmp(img->info.build_id, img->want_id, img->want_id_len) != 0)) {
		/* Not the build the log names (a container's file, a rebuilt one). */
		bool other = !img->info_err;

		if (image_by_id(m, img) == 0) {
			img->info_err = 0;
			m->images_by_id++;
		} else if (other) {
			img->info_err = -ESTALE; /* never resolve through another build */
			m->images_other_build++;
		}
	}
	if (img->info_err)
		m->images_missing++;
}

static void image_load_syms(struct report_model *m, struct report_image *img)
{
	struct report_sym_opts so = { .symfs = m->o.symfs,
				      .debugdir = m->o.debugdir,
				      .debuginfod = m->o.debuginfod,
				      .memo = m->debug_memo };
	char path[4096];

	img->syms_tried = true;
	if (img->info_err)
		return;
	if (!img->kernel && strcmp(img->path, "[vdso]") == 0) {
		/* The vDSO file is named as it is, not under the symfs. */
		so.symfs = NULL;
		image_file(m, img, path, sizeof(path));
		(void)report_symtab__open(path, &so, &img->syms);
	} else if (img->kernel && !strchr(img->path, '/')) {
		snprintf(path, sizeof(path), "/boot/kernel/%s", img->path);
		(void)report_symtab__open(path, &so, &img->syms);
	} else if (img->file) {
		/* Found by build id: the file itself, not under the symfs. */
		so.symfs = NULL;
		(void)report_symtab__open(img->file, &so, &img->syms);
	} else {
		(void)report_symtab__open(img->path, &so, &img->syms);
	}
}

/* Where the image's executable code lies when placed with load bias @bias. */
static int image_range(struct report_image *img, uint64_t bias, struct report_range *ret)
{
	const struct maplog_elf_info *in = &img->info;
	uint64_t lo = UINT64_MAX, hi = 0;

	if (in->has_exec_section) {
		lo = in->exec_start;
		hi = in->exec_end;
	} else {
		for (size_t i = 0; i < in->n_load; i++) {
			if (!(in->load[i].p_flags & PF_X))
				continue;
			if (in->load[i].p_vaddr < lo)
				lo = in->load[i].p_vaddr;
			if (in->load[i].p_vaddr + in->load[i].p_memsz > hi)
				hi = in->load[i].p_vaddr + in->load[i].p_memsz;
		}
	}
	if (lo >= hi)
		return -ENOEXEC;
	ret->lo = lo + bias;
	ret->hi = hi + bias;
	ret->bias = bias;
	ret->img = img;
	return ret->lo < ret->hi ? 0 : -ERANGE;
}

/* Functions --------------------------------------------------------------- */

/* Names compared by content: process names, and inlined functions (named by DWARF). */
static bool named_kind(enum report_func_kind kind)
{
	return kind == REPORT_F_COMM || kind == REPORT_F_INLINE || kind == REPORT_F_JIT ||
	       kind == REPORT_F_CGROUP;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/*
 * --srcline: a user function with a source line is its image, name, file and line,
 * whether it ran out of line or inlined (glibc's brk is both): what prints the same
 * is one function, as pprof -lines makes it one node.
 */
static bool by_line(enum report_func_kind kind, const char *file, uint32_t line)
{
	return file && line && (kind == REPORT_F_USER || kind == REPORT_F_INLINE);
}

static uint64_t func_key(enum report_func_kind kind, const struct report_image *img,
			 const char *module, const char *name, uint64_t addr, const char *file,
			 uint32_t line)
{
	if (by_line(kind, file, line))
		return util_mix64((uint64_t)(uintptr_t)img * 31 ^ (name ? util_hash_str(name) : 0) ^
				  util_hash_str(file) * 7 ^ (uint64_t)line << 32 ^ 1ull << 59);
	/*
	 * Modules by name: two logs' kallsyms tables intern their names apart; source
	 * files by name, as each compilation unit of a DWARF names them apart.
	 */
	return util_mix64(addr ^ (uint64_t)(uintptr_t)img * 31 ^
			  (module ? util_hash_str(module) : 0) ^ (uint64_t)kind << 60 ^
			  (named_kind(kind) && name ? util_hash_str(name) : 0) ^
			  (file ? util_hash_str(file) * 7 : 0) ^ (uint64_t)line << 32);
}

static uint32_t func_intern_at(struct report_model *m, enum report_func_kind kind,
			       struct report_image *img, const char *module, const char *name,
			       uint64_t addr, const char *file, uint32_t line)
{
	uint64_t key = func_key(kind, img, module, name, addr, file, line);
	size_t slot;
	struct report_func *f;

	if (m->nfuncs * 2 + 2 >= m->fhtcap) {
		size_t ncap = m->fhtcap ? m->fhtcap * 2 : 4096;
		uint32_t *n = calloc(ncap, sizeof(*n));

		if (!n)
			return 0;
		for (size_t i = 0; i < m->fhtcap; i++) {
			uint32_t id = m->fht[i];
			const struct report_func *g;

			if (!id)
				continue;
			g = &m->funcs[id];
			for (slot = func_key(g->kind, g->img, g->module, g->name, g->addr, g->file,
					     g->line) &
				    (ncap - 1);
			     n[slot]; slot = (slot + 1) & (ncap - 1))
				;
			n[slot] = id;
		}
		free(m->fht);
		m->fht = n;
		m->fhtcap = ncap;
	}
	for (slot = key & (m->fhtcap - 1); m->fht[slot]; slot = (slot + 1) & (m->fhtcap - 1)) {
		f = &m->funcs[m->fht[slot]];
		if (by_line(kind, file, line)) {
			if (!by_line(f->kind, f->file, f->line) || f->img != img || f->line != line ||
			    !same_str(f->file, file) || !same_str(f->name, name))
				continue;
			if (kind == REPORT_F_USER && f->kind == REPORT_F_INLINE) {
				/* met inlined first: it has an address now */
				f->kind = REPORT_F_USER;
				f->addr = addr;
			}
			return m->fht[slot];
		}
		if (f->kind == kind && f->img == img && f->addr == addr && f->line == line &&
		    same_str(f->module, module) && same_str(f->file, file) &&
		    (!named_kind(kind) || same_str(f->name, name)))
			return m->fht[slot];
	}
	if (m->nfuncs + 1 >= UINT32_MAX)
		return 0;
	{
		struct report_func *nf = util_grow(m->funcs, &m->funcs_cap, m->nfuncs + 2, sizeof(*nf));

		if (!nf)
			return 0;
		m->funcs = nf;
	}
	if (m->nfuncs == 0)
		m->nfuncs = 1; /* index 0 is "none" */
	f = &m->funcs[m->nfuncs];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->img = img;
	f->module = module;
	f->addr = addr;
	f->file = file;
	f->line = line;
	if (module && kind != REPORT_F_NOSYM) {
		char b[300];

		snprintf(b, sizeof(b), "[%s]", module);
		f->module_img = strdup(b);
		if (!f->module_img)
			return 0;
	}
	if (kind == REPORT_F_COMM || kind == REPORT_F_CGROUP) {
		size_t len = strlen(name);

		f->raw = strdup(name);
		f->pretty = malloc(len * 4 + 4);
		if (!f->raw || !f->pretty)
			return 0;
		util_escape(name, len, f->pretty, len * 4 + 4);
		f->name = f->raw;
	} else {
		f->name = name;
	}
	m->fht[slot] = (uint32_t)m->nfuncs;
	return (uint32_t)m->nfuncs++;
}

static uint32_t func_intern(struct report_model *m, enum report_func_kind kind,
			    struct report_image *img, const char *module, const char *name,
			    uint64_t addr)
{
	return func_intern_at(m, kind, img, module, name, addr, NULL, 0);
}

/* DWARF (--inline, --srcline) ------------------------------------------------ */

static void image_load_dwarf(struct report_model *m, struct report_image *img)
{
	const char *dpath = img->syms ? report_symtab__debug_path(img->syms) : NULL;
	char path[4096];

	img->dwarf_tried = true;
	/* A separate debug file holds the DWARF of a stripped image; else the image. */
	if (dpath && report_dwarf__open(dpath, &img->dwarf) == 0)
		return;
	image_file(m, img, path, sizeof(path));
	if (path[0])
		(void)report_dwarf__open(path, &img->dwarf);
}

/* A chain of @n functions (innermost first): its index in m->chains, or 0. */
static uint32_t chain_add(struct report_model *m, const uint32_t *ids, size_t n)
{
	uint32_t *nc;
	size_t at = m->nchains ? m->nchains : 1; /* index 0 means "no chain" */

	if (at + n + 1 >= UINT32_MAX)
		return 0;
	nc = util_grow(m->chains, &m->chains_cap, at + n + 1, sizeof(*nc));
	if (!nc)
		return 0;
	m->chains = nc;
	m->chains[at] = (uint32_t)n;
	memcpy(&m->chains[at + 1], ids, n * sizeof(*ids));
	m->nchains = at + n + 1;
	return (uint32_t)at;
}

static struct report_dwc *dwc_slot(struct report_model *m, const struct report_image *img,
				   uint64_t link)
{
	size_t i;

	if ((m->ndwc + 1) * 2 > m->dwccap) {
		size_t ncap = m->dwccap ? m->dwccap * 2 : 4096;
		struct report_dwc *n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t k = 0; k < m->dwccap; k++) {
			const struct report_dwc *e = &m->dwc[k];

			if (!e->img)
				continue;
			i = util_mix64(e->link ^ (uint64_t)(uintptr_t)e->img * 31) & (ncap - 1);
			while (n[i].img)
				i = (i + 1) & (ncap - 1);
			n[i] = *e;
		}
		free(m->dwc);
		m->dwc = n;
		m->dwccap = ncap;
	}
	i = util_mix64(link ^ (uint64_t)(uintptr_t)img * 31) & (m->dwccap - 1);
	while (m->dwc[i].img && (m->dwc[i].img != img || m->dwc[i].link != link))
		i = (i + 1) & (m->dwccap - 1);
	return &m->dwc[i];
}

/*
 * The frames of link address @link of user image @img, in function @s: the
 * out-of-line function (with its line under --srcline), and under --inline a
 * chain of the functions inlined there (*@ret_chain).  Looked up in DWARF once
 * per (image, address).  0 when out of memory.
 */
static uint32_t dwarf_resolve(struct report_model *m, struct report_image *img,
			      const struct report_sym *s, uint64_t link, uint32_t *ret_chain)
{
	struct report_dwarf_frame fr[REPORT_DWARF_DEPTH_MAX + 1];
	uint32_t ids[REPORT_DWARF_DEPTH_MAX + 1];
	struct report_dwc *c = dwc_slot(m, img, link);
	size_t n = 0;
	uint32_t f;

	if (!c)
		return 0;
	if (c->img) {
		*ret_chain = c->chain;
		return c->func;
	}
	if (!img->dwarf_tried)
		image_load_dwarf(m, img);
	if (img->dwarf)
		n = report_dwarf__frames(img->dwarf, link, fr, REPORT_DWARF_DEPTH_MAX + 1);
	if (n > REPORT_DWARF_DEPTH_MAX) {
		m->inline_cut++;
		n = REPORT_DWARF_DEPTH_MAX + 1;
	}
	if (n == 0) {
		m->pcs_nodwarf++;
		f = func_intern(m, REPORT_F_USER, img, NULL, s->name, s->start);
	} else {
		/* The out-of-line function keeps its ELF symbol, as without DWARF. */
		m->pcs_dwarf++;
		f = func_intern_at(m, REPORT_F_USER, img, NULL, s->name, s->start,
				   m->o.srcline ? fr[n - 1].file : NULL,
				   m->o.srcline ? fr[n - 1].line : 0);
	}
	*ret_chain = 0;
	if (f && n > 1 && m->o.inline_frames) {
		for (size_t j = 0; j + 1 < n; j++) {
			ids[j] = func_intern_at(m, REPORT_F_INLINE, img, NULL,
						fr[j].name ? fr[j].name : "?", 0,
						m->o.srcline ? fr[j].file : NULL,
						m->o.srcline ? fr[j].line : 0);
			if (!ids[j])
				return 0;
		}
		ids[n - 1] = f;
		if (!(*ret_chain = chain_add(m, ids, n)))
			return 0;
	}
	if (!f)
		return 0;
	/* dwc_slot() may have moved the table: find the slot again. */
	c = dwc_slot(m, img, link);
	if (!c)
		return 0;
	c->img = img;
	c->link = link;
	c->func = f;
	c->chain = *ret_chain;
	m->ndwc++;
	return f;
}

/* The function of PC @look in range @rg of a user or kernel image (and its frames). */
static uint32_t resolve_in(struct report_model *m, const struct report_range *rg, uint64_t look,
			   uint32_t *ret_chain)
{
	struct report_image *img = rg->img;
	uint64_t link = look - rg->bias;
	const struct report_sym *s;

	if (!img->syms_tried)
		image_load_syms(m, img);
	s = img->syms ? report_symtab__lookup(img->syms, link) : NULL;
	if (!s)
		return func_intern(m, REPORT_F_NOSYM, img, NULL, NULL, link);
	if (!img->kernel && (m->o.inline_frames || m->o.srcline))
		return dwarf_resolve(m, img, s, link, ret_chain);
	return func_intern(m, img->kernel ? REPORT_F_KERNEL : REPORT_F_USER, img, NULL, s->name,
			   s->start);
}

static void load_kallsyms(struct report_model *m);
static int proc_settle(struct report_model *m, struct report_proc *p);

static uint32_t resolve_kernel(struct report_model *m, uint64_t look, uint32_t *ret_chain)
{
	struct report_proc *k;
	const struct report_range *rg;

	if (!m->ksyms_tried) {
		/* Read at the first kernel PC: user-only logs never pay for it. */
		m->ksyms_tried = true;
		load_kallsyms(m);
	}
	if (m->ksyms) {
		const struct report_sym *s = report_symtab__lookup(m->ksyms, look);

		if (s)
			return func_intern(m, REPORT_F_KERNEL, NULL, s->module, s->name, s->start);
	}
	k = report_model__proc(m, -1);
	if (k && k->npend && proc_settle(m, k) < 0)
		return 0; /* a PROCEXEC of pid -1 (a hostile log) waits as a user one would */
	if (k && ((rg = rset_find(&k->exact, look)) != NULL))
		return resolve_in(m, rg, look, ret_chain);
	return func_intern(m, REPORT_F_NOSYM, NULL, NULL, NULL,
			   look - (m->have_kslide ? m->kslide : 0));
}

/*
 * Where the JIT maps of this log are: --jit-maps, else LOG.jit/ beside the log, else
 * /tmp when the log was written during this boot (its INITIALIZE is after the boot
 * time): what a JIT wrote there is still there, for a process that is gone too.
 */
static void jit_dir_decide(struct report_model *m)
{
	char path[1100];
	struct stat st;
	FILE *f;

	m->jit_dir_decided = true;
	m->jit_dir_used[0] = '\0';
	if (m->o.jit_dir) {
		snprintf(m->jit_dir_used, sizeof(m->jit_dir_used), "%s", m->o.jit_dir);
		return;
	}
	if (m->o.log && strcmp(m->o.log, "-") != 0 &&
	    snprintf(path, sizeof(path), "%s.jit", m->o.log) < (int)sizeof(path) &&
	    stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(m->jit_dir_used, sizeof(m->jit_dir_used), "%s", path);
		return;
	}
	f = NULL;
	if (m->have_init) {
		/* Through util_open_read(), as every file a (confined) report reads. */
		int fd = util_open_read("/proc/stat", UTIL_OPEN_REGULAR, NULL);

		f = fd >= 0 ? fdopen(fd, "re") : NULL;
		if (fd >= 0 && !f)
			close(fd);
	}
	if (f) {
		char line[256];
		long long btime = -1;

		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "btime %lld", &btime) == 1)
				break;
		fclose(f);
		if (btime > 0 && m->ts_sec >= btime)
			snprintf(m->jit_dir_used, sizeof(m->jit_dir_used), "/tmp");
	}
}

/* The whole of the regular file @path of the reporting user or root, NUL-terminated. */
static int read_own_file(const char *path, char **ret_buf, size_t *ret_len)
{
	uint64_t size;
	struct stat st;
	char *buf;
	size_t len = 0;
	int fd = util_open_read(path, UTIL_OPEN_REGULAR, &size);

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || (st.st_uid != getuid() && st.st_uid != 0) ||
	    size > ((uint64_t)1 << 30)) {
		close(fd);
		return -EPERM;
	}
	buf = malloc((size_t)size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (len < size) {
		ssize_t n = read(fd, buf + len, (size_t)size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

static int jh_cmp(const void *a, const void *b)
{
	const struct jh_ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * The entries of map @path with the times of perf-PID.map.times beside it, or NULL
 * (no times, not the reporting user's or root's, or not line for line: the map
 * names PCs as before).
 */
static struct report_jithist *jithist_load(struct report_model *m, const char *path)
{
	char tpath[1300], *tbuf = NULL, *tp, *lp;
	struct report_jithist *h = calloc(1, sizeof(*h));
	size_t mlen, tlen, cap = 0;

	if (!h || snprintf(tpath, sizeof(tpath), "%s.times", path) >= (int)sizeof(tpath) ||
	    read_own_file(tpath, &tbuf, &tlen) < 0 || read_own_file(path, &h->pool, &mlen) < 0)
		goto fail;
	tp = tbuf;
	for (lp = h->pool; lp < h->pool + mlen;) {
		char *eol = memchr(lp, '\n', (size_t)(h->pool + mlen - lp)), *tend;
		uint64_t start, size;
		size_t name;
		long long ns;
		struct jh_ent *ne;

		if (!eol)
			eol = h->pool + mlen;
		*eol = '\0';
		if (maplog_jit_parse_line(lp, (size_t)(eol - lp), &start, &size, &name)) {
			/* its time: the next line of the times file, or the map is not theirs */
			errno = 0;
			ns = strtoll(tp, &tend, 10);
			if (tend == tp || *tend != '\n' || errno || h->n >= UINT32_MAX)
				goto fail;
			tp = tend + 1;
			ne = util_grow(h->e, &cap, h->n + 1, sizeof(*ne));
			if (!ne)
				goto fail;
			h->e = ne;
			h->e[h->n] = (struct jh_ent){ .start = start, .end = start + size, .ns = ns,
						      .line = (uint32_t)h->n, .name = lp + name };
			h->n++;
		}
		lp = eol + 1;
	}
	if (tp != tbuf + tlen || !h->n || !(h->maxend = malloc(h->n * sizeof(*h->maxend))))
		goto fail;
	qsort(h->e, h->n, sizeof(*h->e), jh_cmp);
	for (size_t i = 0; i < h->n; i++)
		h->maxend[i] = i && h->maxend[i - 1] > h->e[i].end ? h->maxend[i - 1] : h->e[i].end;
	free(tbuf);
	h->next = m->jit_hists;
	m->jit_hists = h;
	m->jit_timed_maps++;
	return h;
fail:
	free(tbuf);
	if (h) {
		free(h->e);
		free(h->pool);
		free(h);
	}
	return NULL;
}

/*
 * The name of the entry of @h current at @ns for @pc: of those covering it, the
 * latest that had appeared by then (later in the map among those of one time), or,
 * if none had, the first to appear.  NULL if no entry covers it.  *@ret_timed: more
 * than one covered it (the answer depends on the time).
 */
static const char *jithist_lookup(const struct report_jithist *h, uint64_t pc, int64_t ns,
				  bool *ret_timed)
{
	const struct jh_ent *best = NULL, *first = NULL;
	size_t lo = 0, hi = h->n, steps = 0, found = 0;

	*ret_timed = false;
	while (lo < hi) { /* the first entry starting above pc */
		size_t mid = lo + (hi - lo) / 2;

		if (h->e[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && h->maxend[i] > pc && steps < REPORT_JITHIST_SCAN; steps++) {
		const struct jh_ent *x = &h->e[i];

		if (x->end <= pc)
			continue;
		found++;
		if (x->ns <= ns && (!best || x->ns > best->ns || (x->ns == best->ns && x->line > best->line)))
			best = x;
		if (!first || x->ns < first->ns || (x->ns == first->ns && x->line < first->line))
			first = x;
	}
	*ret_timed = found > 1;
	return best ? best->name : first ? first->name : NULL;
}

/* The JIT map of @pid (read at the first PC that needs it), or NULL. */
static const struct report_symtab *jit_table(struct report_model *m, int32_t pid)
{
	char path[1200];
	size_t i, bad = 0;
	int r;

	if (!m->jit_dir_decided)
		jit_dir_decide(m);
	if (!m->jit_dir_used[0] || pid <= 0)
		return NULL;
	if ((m->njits + 1) * 2 > m->jitscap) {
		size_t ncap = m->jitscap ? m->jitscap * 2 : 64;
		struct report_jit *n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t k = 0; k < m->jitscap; k++) {
			if (!m->jits[k].used)
				continue;
			for (i = util_mix64((uint64_t)(uint32_t)m->jits[k].pid) & (ncap - 1); n[i].used;
			     i = (i + 1) & (ncap - 1))
				;
			n[i] = m->jits[k];
		}
		free(m->jits);
		m->jits = n;
		m->jitscap = ncap;
	}
	for (i = util_mix64((uint64_t)(uint32_t)pid) & (m->jitscap - 1); m->jits[i].used;
	     i = (i + 1) & (m->jitscap - 1))
		if (m->jits[i].pid == pid)
			return m->jits[i].t;
	m->jits[i].used = true;
	m->jits[i].pid = pid;
	m->njits++;
	snprintf(path, sizeof(path), "%s/perf-%d.map", m->jit_dir_used, (int)pid);
	/* As perf: only a map of the user who reports, or of root (report-sym.h). */
	r = report_symtab__perfmap(path, true, &bad, &m->jits[i].t);
	if (r == -EPERM) {
		m->jit_refused++;
		log_warn("%s: not owned by you or root: ignored (anyone can write to %s)", path,
			 m->jit_dir_used);
	} else if (r == 0) {
		m->jit_maps++;
		m->jit_bad_lines += bad;
		m->jits[i].h = jithist_load(m, path);
	}
	return m->jits[i].t;
}

/* The times of @pid's JIT map (after jit_table() read it), or NULL. */
static const struct report_jithist *jit_hist(const struct report_model *m, int32_t pid)
{
	if (!m->jitscap)
		return NULL;
	for (size_t i = util_mix64((uint64_t)(uint32_t)pid) & (m->jitscap - 1); m->jits[i].used;
	     i = (i + 1) & (m->jitscap - 1))
		if (m->jits[i].pid == pid)
			return m->jits[i].h;
	return NULL;
}

void report_model__set_time(struct report_model *m, int64_t ns)
{
	m->now_ns = ns;
}

/* Forget the JIT maps of the log read so far; their tables stay for the names. */
static int jits_forget(struct report_model *m)
{
	for (size_t i = 0; i < m->jitscap; i++) {
		struct report_symtab **n;

		if (!m->jits[i].t)
			continue;
		n = realloc(m->jit_old, (m->njit_old + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		m->jit_old = n;
		m->jit_old[m->njit_old++] = m->jits[i].t;
	}
	free(m->jits);
	m->jits = NULL;
	m->njits = m->jitscap = 0;
	m->jit_dir_decided = false;
	return 0;
}

static uint32_t resolve_user(struct report_model *m, struct report_proc *p, uint64_t look,
			     uint32_t *ret_chain)
{
	const struct report_range *rg;

	if (p->npend && proc_settle(m, p) < 0)
		return 0;
	rg = rset_find(&p->exact, look);

	if (!rg) {
		/* In no image: JIT code its perf-PID.map names? */
		const struct report_symtab *jt = jit_table(m, p->pid);
		const struct report_jithist *h = jt && m->now_ns ? jit_hist(m, p->pid) : NULL;
		const struct report_sym *s = jt && !h ? report_symtab__lookup(jt, look) : NULL;
		bool timed;
		const char *name = h ? jithist_lookup(h, look, m->now_ns, &timed) : NULL;

		if (name) {
			/* Code space reused: the entry of the sample's time, never cached. */
			if (timed) {
				m->pcc_skip = true;
				m->jit_timed++;
			}
			return func_intern(m, REPORT_F_JIT, NULL, NULL, name, 0);
		}
		if (s)
			return func_intern(m, REPORT_F_JIT, NULL, NULL, s->name, 0);
	}
	/* Fallback ranges: the nearest one below, within its span. */
	if (!rg)
		rg = rset_find(&p->approx, look);
	if (!rg)
		return m->unknown_func;
	return resolve_in(m, rg, look, ret_chain);
}

/* The PC cache's slot of (@look, @key). */
static struct report_pcc *pcc_slot(struct report_model *m, uint64_t look, uintptr_t key)
{
	return &m->pcc[util_mix64(look ^ (uint64_t)key * 0x9e3779b97f4a7c15ull) & (m->pcc_size - 1)];
}

/* The (outermost) function of @look, and its chain of frames (0: the function alone). */
static uint32_t resolve_cached(struct report_model *m, struct report_proc *p, uint64_t look,
			       uint32_t *ret_chain)
{
	uintptr_t key = p ? (uintptr_t)p : 1;
	struct report_pcc *c = pcc_slot(m, look, key);
	uint32_t f;

	*ret_chain = 0;
	if (c->pc == look && c->key == key && c->gen == m->gen && c->func) {
		f = c->func;
		*ret_chain = c->chain;
	} else {
		m->pcc_skip = false;
		f = p ? resolve_user(m, p, look, ret_chain) : resolve_kernel(m, look, ret_chain);
		if (m->pcc_skip) {
			/* named by the sample's time: not for the next sample of that PC */
			if (f)
				m->funcs[f].pcs++;
			return f;
		}
		if (f && ++m->pcc_fills > 2 * m->pcc_size && m->pcc_size < REPORT_PCC_MAX) {
			/* Many more misses than entries: four times the room, empty. */
			struct report_pcc *n = calloc(m->pcc_size * 4, sizeof(*n));

			if (n) {
				free(m->pcc);
				m->pcc = n;
				m->pcc_size *= 4;
				m->pcc_fills = 0;
				c = pcc_slot(m, look, key);
			}
		}
		if (f) {
			c->pc = look;
			c->key = key;
			c->gen = m->gen;
			c->func = f;
			c->chain = *ret_chain;
		}
	}
	if (f)
		m->funcs[f].pcs++;
	return f;
}

uint32_t report_model__resolve(struct report_model *m, struct report_proc *p, uint64_t look)
{
	uint32_t chain;

	return resolve_cached(m, p, look, &chain);
}

size_t report_model__resolve_frames(struct report_model *m, struct report_proc *p,
				    uint64_t look, uint32_t *out, size_t max, uint32_t *ret_func)
{
	uint32_t chain;
	uint32_t f = resolve_cached(m, p, look, &chain);
	size_t n;

	*ret_func = f;
	if (!f || max == 0)
		return 0;
	if (!chain) {
		out[0] = f;
		return 1;
	}
	n = m->chains[chain];
	memcpy(out, &m->chains[chain + 1], (n < max ? n : max) * sizeof(*out));
	return n;
}

int report_model__locate(struct report_model *m, struct report_proc *p, uint64_t look,
			 struct report_where *ret)
{
	const struct report_range *rg = NULL;

	memset(ret, 0, sizeof(*ret));
	ret->addr = look;
	if (!p) {
		/* As resolve_kernel(): the symbol file first, then pid -1's images. */
		struct report_proc *k = report_model__proc(m, -1);

		if (m->ksyms && report_symtab__lookup(m->ksyms, look))
			return 0;
		if (k && k->npend && proc_settle(m, k) < 0)
			return -ENOMEM;
		if (k)
			rg = rset_find(&k->exact, look);
	} else {
		if (p->npend && proc_settle(m, p) < 0)
			return -ENOMEM;
		rg = rset_find(&p->exact, look);
		if (!rg) {
			const struct report_symtab *jt = jit_table(m, p->pid);

			if (jt && report_symtab__lookup(jt, look))
				return 0;
			rg = rset_find(&p->approx, look);
		}
	}
	if (rg) {
		ret->img = rg->img;
		ret->addr = look - rg->bias;
	}
	return 0;
}

size_t report_model__lines(struct report_model *m, struct report_image *img, uint64_t link,
			   struct report_dwarf_frame *out, size_t max)
{
	if (!img || img->kernel || img->info_err)
		return 0;
	if (!img->syms_tried)
		image_load_syms(m, img); /* its debug file holds the DWARF of a stripped image */
	if (!img->dwarf_tried)
		image_load_dwarf(m, img);
	return img->dwarf ? report_dwarf__frames(img->dwarf, link, out, max) : 0;
}

uint32_t report_model__comm_func(struct report_model *m, struct report_proc *p, int32_t pid,
				 int32_t tid)
{
	const struct report_thread *th = thread_find(m, tid);
	char buf[64];

	if (th && th->name[0])
		return func_intern(m, REPORT_F_COMM, NULL, NULL, th->name, 0);
	if (p && p->name[0])
		return func_intern(m, REPORT_F_COMM, NULL, NULL, p->name, 0);
	snprintf(buf, sizeof(buf), pid == 0 ? "[idle]" : "[pid %d]", (int)pid);
	return func_intern(m, REPORT_F_COMM, NULL, NULL, buf, 0);
}

uint32_t report_model__cgroup_func(struct report_model *m, const struct report_proc *p)
{
	if (!p || !p->cg)
		return 0;
	return func_intern(m, REPORT_F_CGROUP, NULL, NULL, p->cg->path, 0);
}

const char *report_model__func_name(struct report_model *m, uint32_t id)
{
	struct report_func *f = &m->funcs[id];
	char buf[600];

	if (f->pretty)
		return f->pretty;
	switch (f->kind) {
	case REPORT_F_UNKNOWN:
		return "[unknown]";
	case REPORT_F_NOSYM:
		snprintf(buf, sizeof(buf), "%s+0x%llx", f->img ? f->img->base : "[kernel]",
			 (unsigned long long)f->addr);
		f->pretty = strdup(buf);
		break;
	default:
		if (f->name && f->name[0] == '_') { /* C++ "_Z", Rust "_R" and legacy */
			f->pretty = report_demangle(f->name);
		}
		if (!f->pretty)
			f->pretty = strdup(f->name ? f->name : "?");
		break;
	}
	if (f->pretty) {
		/* Names come from hostile files: escape what a terminal or JSON must not see. */
		size_t len = strlen(f->pretty), cap = len * 4 + 4;
		char *esc = malloc(cap);

		if (esc) {
			util_escape(f->pretty, len, esc, cap);
			free(f->pretty);
			f->pretty = esc;
		}
	}
	if (f->pretty && f->file && f->line) {
		/* --srcline: "NAME FILE:LINE", the file's last component (escaped too) */
		const char *base = strrchr(f->file, '/') ? strrchr(f->file, '/') + 1 : f->file;
		size_t blen = strlen(base), cap = blen * 4 + 4;
		char *esc = malloc(cap), *full = NULL;

		if (esc) {
			util_escape(base, blen, esc, cap);
			if (asprintf(&full, "%s %s:%u", f->pretty, esc, f->line) < 0)
				full = NULL;
			free(esc);
		}
		if (full) {
			f->plain = f->pretty;
			f->pretty = full;
		}
	}
	return f->pretty ? f->pretty : "?";
}

const char *report_model__func_plain_name(struct report_model *m, uint32_t id)
{
	const char *name = report_model__func_name(m, id);

	return m->funcs[id].plain ? m->funcs[id].plain : name;
}

const char *report_model__func_image(const struct report_model *m, uint32_t id)
{
	const struct report_func *f = &m->funcs[id];

	if (f->kind == REPORT_F_COMM || f->kind == REPORT_F_CGROUP)
		return "";
	if (f->kind == REPORT_F_UNKNOWN)
		return "[unknown]";
	if (f->kind == REPORT_F_JIT)
		return "[jit]";
	if (f->img)
		return f->img->shown;
	if (f->module)
		return f->module_img ? f->module_img : f->module;
	return "[kernel.kallsyms]";
}

/* Kernel symbols ------------------------------------------------------------ */

/* The run-time _stext of a kallsyms table (aliases at one address keep one name). */
static const struct report_sym *ksyms_stext(const struct report_symtab *t)
{
	const struct report_sym *s = report_symtab__find(t, "_stext");

	return s ? s : report_symtab__find(t, "_text");
}

static void load_kallsyms(struct report_model *m)
{
	char path[1100];
	const struct report_sym *st;
	int e;

	if (m->o.kallsyms) {
		e = report_symtab__kallsyms(m->o.kallsyms, &m->ksyms);
		if (e < 0) {
			log_warn("%s: cannot read kernel symbols: %s; kernel PCs print as addresses",
				 m->o.kallsyms, strerror(-e));
			snprintf(m->ksyms_note, sizeof(m->ksyms_note), "%s unreadable (%s)",
				 m->o.kallsyms, strerror(-e));
			return;
		}
		snprintf(m->ksyms_source, sizeof(m->ksyms_source), "%s", m->o.kallsyms);
	} else if (m->o.log && strcmp(m->o.log, "-") != 0 &&
		   snprintf(path, sizeof(path), "%s.kallsyms", m->o.log) < (int)sizeof(path) &&
		   /* missing or unreadable: the next source (a confined report asks its broker) */
		   report_symtab__kallsyms(path, &m->ksyms) == 0) {
		/* Rotated logs: each has its own compact table; the header names the first. */
		if (m->ksyms_source[0])
			m->ksyms_more++;
		else
			snprintf(m->ksyms_source, sizeof(m->ksyms_source), "%s", path);
	} else if (m->have_kslide &&
		   (m->ksyms_proc || report_symtab__kallsyms("/proc/kallsyms", &m->ksyms_proc) == 0)) {
		/*
		 * Read once: every rotated log that has no FILE.kallsyms of its own (a
		 * profile with kallsyms = no) would otherwise hold a copy of its 5 MB.
		 */
		m->ksyms = m->ksyms_proc;
		st = ksyms_stext(m->ksyms);
		if (!st || st->start - REPORT_X86_64_KERNEL_V != m->kslide) {
			m->ksyms = NULL;
			snprintf(m->ksyms_note, sizeof(m->ksyms_note),
				 "none: /proc/kallsyms is of another boot (pass --kallsyms FILE)");
			return;
		}
		snprintf(m->ksyms_source, sizeof(m->ksyms_source), "/proc/kallsyms (same boot)");
	} else {
		snprintf(m->ksyms_note, sizeof(m->ksyms_note), "none (pass --kallsyms FILE)");
		return;
	}
	if (m->have_kslide && (st = ksyms_stext(m->ksyms)) != NULL &&
	    st->start - REPORT_X86_64_KERNEL_V != m->kslide)
		snprintf(m->ksyms_note, sizeof(m->ksyms_note),
			 "warning: its _stext does not match the log's kernel (another boot?)");
}

/* Records ----------------------------------------------------------------- */

/*
 * The rule is decided when the first image is placed, from what came before:
 * the mark of hwpmcd (written right after INITIALIZE), else the CPU type and
 * PMC ids of a log of an earlier hwpmcd, else FreeBSD's own rule.
 */
static void rule_decide(struct report_model *m)
{
	if (m->rule_fixed)
		return;
	m->rule_fixed = true;
	if (m->o.rule != REPORT_RULE_AUTO) {
		m->rule = m->o.rule;
		m->rule_why = "as asked (--map-rule)";
	} else if (m->marked) {
		m->rule = REPORT_RULE_FREEBSD;
		m->rule_why = "the log's hwpmcd mark";
	} else if (m->cpu_type == PLOG_CPU_GENERIC && m->npmcids > 0 && m->hwpmcd_pmcids) {
		m->rule = REPORT_RULE_HWPMCD_V1;
		m->rule_why = "a log of hwpmcd before its rule mark";
	} else {
		m->rule = REPORT_RULE_FREEBSD;
		m->rule_why = m->have_init && m->cpu_type != PLOG_CPU_GENERIC ? "a FreeBSD log"
									    : "no hwpmcd mark";
	}
}

static void note_pmcid(struct report_model *m, uint32_t pmcid)
{
	if (m->npmcids++ == 0)
		m->hwpmcd_pmcids = true;
	/* hwpmcd's ids: any CPU, mode SS, class SOFT, row = the event index (11.2). */
	if ((pmcid & 0xffffff00u) != PLOG_PMCID_SOFT_ANYCPU(0) || pmcid == PLOG_PMCID_INVALID)
		m->hwpmcd_pmcids = false;
}

/* The build id the log said last for @path (set: @id of @len bytes), or NULL. */
static struct report_pathid *path_id(struct report_model *m, const char *path, const uint8_t *id,
				     size_t len)
{
	size_t i;

	if (len && (m->npath_ids + 1) * 2 > m->path_ids_cap) {
		size_t ncap = m->path_ids_cap ? m->path_ids_cap * 2 : 256;
		struct report_pathid *n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t k = 0; k < m->path_ids_cap; k++) {
			if (!m->path_ids[k].path)
				continue;
			for (i = util_hash_str(m->path_ids[k].path) & (ncap - 1); n[i].path;
			     i = (i + 1) & (ncap - 1))
				;
			n[i] = m->path_ids[k];
		}
		free(m->path_ids);
		m->path_ids = n;
		m->path_ids_cap = ncap;
	}
	if (!m->path_ids_cap)
		return NULL;
	for (i = util_hash_str(path) & (m->path_ids_cap - 1); m->path_ids[i].path;
	     i = (i + 1) & (m->path_ids_cap - 1))
		if (strcmp(m->path_ids[i].path, path) == 0)
			break;
	if (len) {
		if (!m->path_ids[i].path) {
			if (!(m->path_ids[i].path = strdup(path)))
				return NULL;
			m->npath_ids++;
		}
		memcpy(m->path_ids[i].id, id, len);
		m->path_ids[i].len = len;
	}
	return m->path_ids[i].path ? &m->path_ids[i] : NULL;
}

static void path_ids_forget(struct report_model *m)
{
	for (size_t i = 0; i < m->path_ids_cap; i++)
		free(m->path_ids[i].path);
	free(m->path_ids);
	m->path_ids = NULL;
	m->npath_ids = m->path_ids_cap = 0;
	m->bid_state = 0;
}

/* One USERDATA word of a build id mark (pmclog-format.md 11.11); false if not one. */
static bool bid_word(struct report_model *m, uint32_t w)
{
	switch (m->bid_state) {
	case 1:
		m->bid_state = w >= 1 && w <= MAPLOG_BUILD_ID_MAX ? 2 : 0;
		m->bid_len = w;
		m->bid_got = 0;
		return true;
	case 2:
		for (int k = 0; k < 4 && m->bid_got < m->bid_len; k++)
			m->bid[m->bid_got++] = (uint8_t)(w >> (8 * k));
		if (m->bid_got == m->bid_len)
			m->bid_state = 3;
		return true;
	default:
		if (w != PLOG_USERDATA_HWPMCD_BUILDID)
			return false;
		m->bid_state = 1;
		return true;
	}
}

/* The model's cgroup of path @path (@n bytes), added if new; NULL if none may be. */
static struct report_cgroup *cgroup_get(struct report_model *m, const uint8_t *path, size_t n)
{
	struct report_cgroup *cg;
	char shown[4 + PLOG_CGROUP_PATH_MAX];
	uint64_t h;
	size_t i;

	for (size_t k = 0; k < n; k++)
		shown[k] = path[k] < 0x20 || path[k] >= 0x7f ? '?' : (char)path[k];
	shown[n] = '\0';
	h = util_hash_str(shown);
	if ((m->ncgroups + 1) * 2 > m->cghtcap) {
		size_t ncap = m->cghtcap ? m->cghtcap * 2 : 64;
		uint32_t *nh = calloc(ncap, sizeof(*nh));

		if (!nh)
			return NULL;
		for (size_t k = 0; k < m->ncgroups; k++) {
			i = util_hash_str(m->cgroups[k]->path) & (ncap - 1);
			while (nh[i])
				i = (i + 1) & (ncap - 1);
			nh[i] = (uint32_t)k + 1;
		}
		free(m->cght);
		m->cght = nh;
		m->cghtcap = ncap;
	}
	for (i = h & (m->cghtcap - 1); m->cght[i]; i = (i + 1) & (m->cghtcap - 1))
		if (strcmp(m->cgroups[m->cght[i] - 1]->path, shown) == 0)
			return m->cgroups[m->cght[i] - 1];
	if (m->ncgroups >= REPORT_CGROUPS_MAX) {
		m->cgroups_over++;
		return NULL;
	}
	if (m->ncgroups == m->cgroups_cap) {
		size_t ncap = m->cgroups_cap ? m->cgroups_cap * 2 : 16;
		struct report_cgroup **nc = realloc(m->cgroups, ncap * sizeof(*nc));

		if (!nc)
			return NULL;
		m->cgroups = nc;
		m->cgroups_cap = ncap;
	}
	cg = calloc(1, sizeof(*cg));
	if (cg)
		cg->path = strdup(shown);
	if (!cg || !cg->path) {
		free(cg);
		return NULL;
	}
	m->cgroups[m->ncgroups++] = cg;
	m->cght[i] = (uint32_t)m->ncgroups;
	return cg;
}

/* One USERDATA word of a cgroup mark (pmclog-format.md 11.12); false if not one. */
static bool cg_word(struct report_model *m, uint32_t w)
{
	switch (m->cg_state) {
	case 1:
		if (w < 5 || w > 4 + PLOG_CGROUP_PATH_MAX) {
			m->cg_state = 0;
			return true;
		}
		if (!m->cg_buf && !(m->cg_buf = malloc(4 + PLOG_CGROUP_PATH_MAX))) {
			m->cg_state = 0;
			return true;
		}
		m->cg_len = w;
		m->cg_got = 0;
		m->cg_state = 2;
		return true;
	case 2:
		for (int k = 0; k < 4 && m->cg_got < m->cg_len; k++)
			m->cg_buf[m->cg_got++] = (uint8_t)(w >> (8 * k));
		if (m->cg_got == m->cg_len) {
			int32_t pid = (int32_t)((uint32_t)m->cg_buf[0] | (uint32_t)m->cg_buf[1] << 8 |
						(uint32_t)m->cg_buf[2] << 16 |
						(uint32_t)m->cg_buf[3] << 24);
			struct report_proc *p = pid > 0 ? report_model__proc(m, pid) : NULL;

			m->cg_state = 0;
			m->cgroup_marks++;
			if (p)
				p->cg = cgroup_get(m, m->cg_buf + 4, m->cg_len - 4);
		}
		return true;
	default:
		if (w != PLOG_USERDATA_HWPMCD_CGROUP)
			return false;
		m->cg_state = 1;
		return true;
	}
}

/*
 * Place @img in @p's ranges: at pl_start @start by the MAP_IN rule, or (@exec, a
 * PROCEXEC's executable) with load bias @start.  An image whose file cannot be read
 * gets a fallback range from @start (a kernel image none: kallsyms names it).
 */
static int place(struct report_model *m, struct report_proc *p, struct report_image *img,
		 uint64_t start, bool exec)
{
	struct report_range rg;

	image_info(m, img);
	if (exec) {
		/* PROCEXEC places the executable with bias pl_dyn (10.2), whatever the MAP_IN rule. */
		if (!img->info_err && image_range(img, start, &rg) == 0)
			return rset_add(m, &p->exact, rg);
		return 0;
	}
	if (!img->info_err &&
	    image_range(img, start - report_pl_start_v(m->rule, &img->info), &rg) == 0)
		return rset_add(m, &p->exact, rg);
	if (p->pid == -1)
		return 0; /* kernel images without a file: kallsyms */
	rg.lo = start;
	rg.hi = rg.lo + REPORT_FALLBACK_SPAN < rg.lo ? UINT64_MAX : rg.lo + REPORT_FALLBACK_SPAN;
	rg.bias = rg.lo;
	rg.img = img;
	return rset_add(m, &p->approx, rg);
}

/* A user image's placing waits until @p's ranges are needed (proc_settle()). */
static int pend_add(struct report_proc *p, struct report_image *img, uint64_t start, bool exec)
{
	struct report_pend *n = util_grow(p->pend, &p->pendcap, p->npend + 1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	p->pend = n;
	p->pend[p->npend++] = (struct report_pend){ .img = img, .start = start, .exec = exec };
	return 0;
}

/*
 * @p's pending MAP_INs into its ranges, in log order: before a PC of @p is
 * resolved, a fork shares its ranges, or a MAP_OUT cuts them.  0 or -ENOMEM.
 */
static int proc_settle(struct report_model *m, struct report_proc *p)
{
	size_t n = p->npend;

	p->npend = 0;
	for (size_t i = 0; i < n; i++) {
		int e = place(m, p, p->pend[i].img, p->pend[i].start, p->pend[i].exec);

		if (e < 0)
			return e;
	}
	return 0;
}

static int on_map_in(struct report_model *m, const struct plog_record *rec)
{
	struct report_proc *p = proc_get(m, rec->u.map_in.pid);
	const struct report_pathid *said =
		path_id(m, rec->u.map_in.path, m->bid, m->bid_state == 3 ? m->bid_len : 0);
	struct report_image *img = image_get(m, rec->u.map_in.path, rec->u.map_in.pid == -1,
					     said ? said->id : NULL, said ? said->len : 0);

	m->bid_state = 0;
	if (!p || !img)
		return -ENOMEM;
	rule_decide(m);
	if (rec->u.map_in.pid != -1)
		return pend_add(p, img, rec->u.map_in.start, false);
	if (strcmp(img->path, "vmlinux") == 0) {
		/* A Linux kernel has no file here: V of the rule for an x86-64 vmlinux. */
		m->have_kslide = true;
		m->kslide = rec->u.map_in.start -
			    (m->rule == REPORT_RULE_FREEBSD ? REPORT_X86_64_KERNEL_V : 0);
	}
	return place(m, p, img, rec->u.map_in.start, false);
}

static int on_procfork(struct report_model *m, const struct plog_record *rec)
{
	struct report_proc *parent = report_model__proc(m, rec->u.procfork.oldpid);
	struct report_proc *p = proc_get(m, rec->u.procfork.newpid);

	if (!p)
		return -ENOMEM;
	if (parent && parent != p) {
		int e = proc_settle(m, parent);

		if (e < 0)
			return e;
		/* The child shares its parent's trees until either changes (O(1)). */
		p->zombie = false;
		snprintf(p->name, sizeof(p->name), "%s", parent->name);
		p->cg = parent->cg;
		rset_share(m, &p->exact, &parent->exact);
		rset_share(m, &p->approx, &parent->approx);
	} else {
		proc_reset(m, p);
	}
	return 0;
}

int report_model__record(struct report_model *m, const struct plog_record *rec)
{
	struct report_proc *p;
	struct report_image *img;
	int e;

	/* A build id mark holds for the MAP_IN right after it: any other record ends it. */
	if (m->bid_state && rec->type != PLOG_TYPE_USERDATA && rec->type != PLOG_TYPE_MAP_IN)
		m->bid_state = 0;
	/* A cgroup mark is a run of USERDATA: any other record cuts it (dropped). */
	if (m->cg_state && rec->type != PLOG_TYPE_USERDATA)
		m->cg_state = 0;
	switch (rec->type) {
	case PLOG_TYPE_MAP_IN:
	case PLOG_TYPE_MAP_OUT:
	case PLOG_TYPE_PROCEXEC:
	case PLOG_TYPE_PROCFORK:
	case PLOG_TYPE_PROC_CREATE: /* may replace a zombie */
		m->gen++; /* every cached PC resolution is stale */
		break;
	default:
		break;
	}
	switch (rec->type) {
	case PLOG_TYPE_INITIALIZE:
		if (m->have_init)
			break;
		m->have_init = true;
		m->cpu_type = rec->u.initialize.cpu;
		/* The log's bytes: escaped, as every name a log gives is before it is printed. */
		util_escape(rec->u.initialize.cpuid,
			    strnlen(rec->u.initialize.cpuid, sizeof(rec->u.initialize.cpuid)), m->cpuid,
			    sizeof(m->cpuid));
		m->tsc_freq = rec->u.initialize.tsc_freq;
		m->ts_sec = rec->u.initialize.ts_sec;
		m->ts_nsec = rec->u.initialize.ts_nsec;
		break;
	case PLOG_TYPE_USERDATA:
		if (bid_word(m, rec->u.userdata.userdata) || cg_word(m, rec->u.userdata.userdata))
			break;
		if ((rec->u.userdata.userdata & PLOG_USERDATA_HWPMCD_MASK) == PLOG_USERDATA_HWPMCD_RULE)
			m->marked = true;
		break;
	case PLOG_TYPE_PMCALLOCATE:
		note_pmcid(m, rec->u.pmcallocate.pmcid);
		break;
	case PLOG_TYPE_PMCALLOCATEDYN:
		note_pmcid(m, rec->u.pmcallocatedyn.pmcid);
		break;
	case PLOG_TYPE_PROC_CREATE:
		p = proc_get(m, rec->u.proc_create.pid);
		if (!p)
			return -ENOMEM;
		snprintf(p->name, sizeof(p->name), "%s", rec->u.proc_create.name);
		break;
	case PLOG_TYPE_THR_CREATE:
		return thread_set(m, rec->u.thr_create.tid, rec->u.thr_create.name);
	case PLOG_TYPE_MAP_IN:
		return on_map_in(m, rec);
	case PLOG_TYPE_MAP_OUT:
		p = report_model__proc(m, rec->u.map_out.pid);
		if (!p)
			break;
		e = proc_settle(m, p);
		if (e == 0)
			e = rset_cut(m, &p->exact, rec->u.map_out.start, rec->u.map_out.end);
		if (e == 0)
			e = rset_cut(m, &p->approx, rec->u.map_out.start, rec->u.map_out.end);
		return e;
	case PLOG_TYPE_PROCEXEC:
		p = proc_get(m, rec->u.procexec.pid);
		img = image_get(m, rec->u.procexec.path, false, NULL, 0);
		if (!p || !img)
			return -ENOMEM;
		rule_decide(m);
		rset_clear(m, &p->exact);
		rset_clear(m, &p->approx);
		p->npend = 0;
		return pend_add(p, img, rec->u.procexec.dyn, true);
	case PLOG_TYPE_PROCFORK:
		return on_procfork(m, rec);
	case PLOG_TYPE_SYSEXIT:
		p = report_model__proc(m, rec->u.sysexit.pid);
		if (p)
			p->zombie = true;
		break;
	case PLOG_TYPE_PROCEXIT:
		p = report_model__proc(m, rec->u.procexit.pid);
		if (p)
			p->zombie = true;
		break;
	default:
		break;
	}
	return 0;
}

void report_model__finish(struct report_model *m)
{
	rule_decide(m);
	for (size_t f = 1; f < m->nfuncs; f++) {
		const struct report_func *fn = &m->funcs[f];

		if (fn->img)
			fn->img->pcs += fn->pcs;
		if (fn->kind == REPORT_F_JIT)
			m->pcs_jit += fn->pcs;
		if (fn->kind == REPORT_F_UNKNOWN) {
			m->pcs_unknown += fn->pcs;
		} else if (fn->kind == REPORT_F_NOSYM) {
			if (fn->img) {
				fn->img->pcs_nosym += fn->pcs;
				m->pcs_nosym += fn->pcs;
			} else {
				m->pcs_kernel_nosym += fn->pcs;
			}
		}
	}
	if (!m->ksyms && !m->nksyms_old && !m->ksyms_note[0])
		snprintf(m->ksyms_note, sizeof(m->ksyms_note), "not needed (no kernel PCs)");
}

/* Life ---------------------------------------------------------------------- */

/* Free every process (their range trees too) and thread; the tables stay. */
static void procs_forget(struct report_model *m)
{
	for (size_t i = 0; i < m->phtcap; i++) {
		while (m->pht[i]) {
			struct report_proc *p = m->pht[i];

			m->pht[i] = p->hnext;
			rset_clear(m, &p->exact);
			rset_clear(m, &p->approx);
			free(p->pend);
			free(p);
		}
	}
	m->nprocs = 0;
}

static void threads_forget(struct report_model *m)
{
	for (size_t i = 0; i < m->thtcap; i++) {
		while (m->tht[i]) {
			struct report_thread *t = m->tht[i];

			m->tht[i] = t->hnext;
			free(t);
		}
	}
}

int report_model__next_log(struct report_model *m, const char *log)
{
	/*
	 * A rotated log re-declares every live process and mapping at its start, and a
	 * PC must resolve by the mappings of its own log: a process that exited
	 * between two files (no SYSEXIT in either) must not lend its ranges to a
	 * later process with the same pid.  So the processes go, with the cache.
	 */
	procs_forget(m);
	threads_forget(m);
	path_ids_forget(m);
	m->cg_state = 0;
	if (jits_forget(m) < 0)
		return -ENOMEM;
	m->gen++;
	m->o.log = log;
	m->have_init = false;
	m->marked = false;
	m->rule_fixed = false;
	m->hwpmcd_pmcids = false;
	m->npmcids = 0;
	m->rule = m->o.rule == REPORT_RULE_AUTO ? REPORT_RULE_FREEBSD : m->o.rule;
	m->rule_why = "no image placed";
	m->have_kslide = false;
	m->kslide = 0;
	/*
	 * Each log's FILE.kallsyms holds only the symbols its own PCs need, so the next
	 * log reads its own; the old table stays alive for the names its functions
	 * borrow.  One --kallsyms file serves every log.
	 */
	if (!m->o.kallsyms && m->ksyms_tried) {
		if (m->ksyms == m->ksyms_proc) {
			m->ksyms = NULL; /* stays in ksyms_proc for the next log that needs it */
		} else if (m->ksyms) {
			struct report_symtab **n =
				realloc(m->ksyms_old, (m->nksyms_old + 1) * sizeof(*n));

			if (!n)
				return -ENOMEM;
			m->ksyms_old = n;
			m->ksyms_old[m->nksyms_old++] = m->ksyms;
			m->ksyms = NULL;
		}
		m->ksyms_tried = false;
	}
	return 0;
}

int report_model__new(const struct report_model_opts *o, struct report_model **ret_m)
{
	struct report_model *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->o = *o;
	m->rule = o->rule == REPORT_RULE_AUTO ? REPORT_RULE_FREEBSD : o->rule;
	m->rule_why = "no image placed";
	/*
	 * The range trees' priorities must be unknown to the log's writer: with a known
	 * sequence, a log could order its MAP_INs into a degenerate tree (a chain as
	 * deep as the log is long).  Without getrandom(), time and address stand in.
	 */
	if (getrandom(&m->rseed, sizeof(m->rseed), GRND_NONBLOCK) != (ssize_t)sizeof(m->rseed))
		m->rseed = util_mix64((uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)m);
	m->pcc_size = REPORT_PCC_MIN;
	m->pcc = calloc(m->pcc_size, sizeof(*m->pcc));
	if (!m->pcc)
		goto err;
	m->unknown_func = func_intern(m, REPORT_F_UNKNOWN, NULL, NULL, NULL, 0);
	if (!m->unknown_func)
		goto err;
	if (report_debug_memo__new(&m->debug_memo) < 0)
		goto err;
	*ret_m = m;
	return 0;
err:
	report_model__free(m);
	return -ENOMEM;
}

void report_model__free(struct report_model *m)
{
	if (!m)
		return;
	for (size_t i = 1; i < m->nfuncs; i++) {
		free(m->funcs[i].pretty);
		free(m->funcs[i].plain);
		free(m->funcs[i].module_img);
		free(m->funcs[i].raw);
	}
	free(m->funcs);
	free(m->fht);
	for (size_t i = 0; i < m->ihtcap; i++) {
		while (m->iht[i]) {
			struct report_image *img = m->iht[i];

			m->iht[i] = img->hnext;
			report_symtab__free(img->syms);
			report_dwarf__free(img->dwarf);
			free(img->file);
			free(img->shown);
			free(img->path);
			free(img);
		}
	}
	free(m->iht);
	procs_forget(m);
	free(m->pht);
	while (m->rfree) {
		struct report_rnode *x = m->rfree;

		m->rfree = x->left;
		free(x);
	}
	threads_forget(m);
	free(m->tht);
	if (m->ksyms != m->ksyms_proc)
		report_symtab__free(m->ksyms);
	report_symtab__free(m->ksyms_proc);
	for (size_t i = 0; i < m->nksyms_old; i++)
		report_symtab__free(m->ksyms_old[i]);
	free(m->ksyms_old);
	free(m->pcc);
	report_debug_memo__free(m->debug_memo);
	free(m->dwc);
	free(m->chains);
	path_ids_forget(m);
	for (size_t i = 0; i < m->ncgroups; i++) {
		free(m->cgroups[i]->path);
		free(m->cgroups[i]);
	}
	free(m->cgroups);
	free(m->cght);
	free(m->cg_buf);
	for (size_t i = 0; i < m->jitscap; i++)
		report_symtab__free(m->jits[i].t);
	free(m->jits);
	for (size_t i = 0; i < m->njit_old; i++)
		report_symtab__free(m->jit_old[i]);
	free(m->jit_old);
	for (struct report_jithist *h = m->jit_hists, *nh; h; h = nh) {
		nh = h->next;
		free(h->e);
		free(h->maxend);
		free(h->pool);
		free(h);
	}
	free(m);
}
