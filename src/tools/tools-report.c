/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-report.c: the model of `hwpmc report`: reads a pmclog, keeps pmcstat's
 * process model, resolves every PC to a function and aggregates per event.
 *
 * PUBLIC INTERFACES
 *   tools_report_load(), tools_report_free(), tools_report_func_name(), tools_report_func_image()
 * (tools-report.h)
 *
 * IMPLEMENTATION NOTES
 *   The model is pmcstat's (docs/pmclog-format.md 10.1): per pid a sorted list of
 *   ranges, each an image placed with a load bias, filled by MAP_IN, trimmed by
 *   MAP_OUT, copied by PROCFORK; SYSEXIT makes the process a zombie that the next
 *   record naming the pid replaces.  The kernel is pid -1.  A MAP_IN covers the
 *   executable sections of its image (pi_start..pi_end) placed with bias
 *   start - V (10.2) in hwpmcd logs; FreeBSD's kernel sends the start of the
 *   first executable mapping instead, so logs not written by hwpmcd (cpu type
 *   other than GENERIC) are placed by that rule (--map-rule overrides).  An image
 *   whose file cannot be read still covers [start, start + 256 MiB) as a fallback
 *   range, consulted only where no exact range holds a PC, so its PCs print as
 *   image+0xoffset rather than vanish.
 *   A chain is kernel PCs first (pc >= 0xffff800000000000, the x86-64 kernel half)
 *   and user PCs after (10.3); PCs after the first are return addresses and are
 *   looked up at pc - 1, as perf does, so a call at a function's end is not
 *   charged to the next function.  Kernel PCs resolve through the kernel symbol
 *   file (--kallsyms, else FILE.kallsyms beside the log, else /proc/kallsyms if
 *   its _stext matches the log's kernel MAP_IN), else through pid -1 images
 *   (FreeBSD kernels under --symfs), else print as [kernel]+0xaddress.
 *   Every PC is counted: resolved, without symbol, or in no mapping.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwpmcd/common.h"
#include "hwpmcd/log.h"
#include "hwpmcd/report-sym.h"
#include "tools-report.h"

#define TOOLS_REP_READ_CHUNK	(64u << 10)
#define TOOLS_REP_FALLBACK_SPAN (256ull << 20)
#define TOOLS_REP_PAGE		4096ull

struct tools_rep_range {
	uint64_t lo, hi, bias;
	struct tools_rep_image *img;
};

struct tools_rep_proc {
	int32_t pid;
	bool zombie;
	char name[PLOG_MAXCOMLEN + 1];
	uint32_t comm_func; /* TOOLS_REP_F_COMM function of the name, 0: not made yet */
	struct tools_rep_range *exact, *approx;
	size_t nexact, napprox, cap_exact, cap_approx;
	uint64_t samples;
	struct tools_rep_proc *hnext;
};

struct tools_rep_thread {
	int32_t tid;
	char name[PLOG_MAXCOMLEN + 1];
	struct tools_rep_thread *hnext;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

static void *xgrow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	q = realloc(p, n * elem);
	if (!q)
		return NULL;
	*cap = n;
	return q;
}

/* Processes and threads ---------------------------------------------------- */

static struct tools_rep_proc *proc_find(struct tools_report *r, int32_t pid)
{
	struct tools_rep_proc *p;

	if (!r->pht)
		return NULL;
	for (p = r->pht[mix64((uint64_t)(uint32_t)pid) & (r->phtcap - 1)]; p; p = p->hnext)
		if (p->pid == pid)
			return p;
	return NULL;
}

static void proc_reset(struct tools_rep_proc *p)
{
	p->nexact = p->napprox = 0;
	p->zombie = false;
	p->comm_func = 0;
}

/* The live process @pid, made if new; a zombie is replaced (pid reuse). */
static struct tools_rep_proc *proc_get(struct tools_report *r, int32_t pid)
{
	struct tools_rep_proc *p = proc_find(r, pid);
	size_t b;

	if (p) {
		if (p->zombie) {
			proc_reset(p);
			p->name[0] = '\0';
		}
		return p;
	}
	if (!r->pht || r->nprocs >= r->phtcap) {
		size_t ncap = r->phtcap ? r->phtcap * 2 : 1024;
		struct tools_rep_proc **n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t i = 0; i < r->phtcap; i++) {
			while (r->pht[i]) {
				struct tools_rep_proc *q = r->pht[i];

				r->pht[i] = q->hnext;
				b = mix64((uint64_t)(uint32_t)q->pid) & (ncap - 1);
				q->hnext = n[b];
				n[b] = q;
			}
		}
		free(r->pht);
		r->pht = n;
		r->phtcap = ncap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	b = mix64((uint64_t)(uint32_t)pid) & (r->phtcap - 1);
	p->hnext = r->pht[b];
	r->pht[b] = p;
	r->nprocs++;
	return p;
}

static struct tools_rep_thread *thread_find(const struct tools_report *r, int32_t tid)
{
	struct tools_rep_thread *t;

	if (!r->tht)
		return NULL;
	for (t = r->tht[mix64((uint64_t)(uint32_t)tid) & (r->thtcap - 1)]; t; t = t->hnext)
		if (t->tid == tid)
			return t;
	return NULL;
}

static int thread_set(struct tools_report *r, int32_t tid, const char *name)
{
	struct tools_rep_thread *t = thread_find(r, tid);
	size_t b;

	if (!t) {
		if (!r->tht) {
			r->thtcap = 4096;
			r->tht = calloc(r->thtcap, sizeof(*r->tht));
			if (!r->tht)
				return -ENOMEM;
		}
		t = calloc(1, sizeof(*t));
		if (!t)
			return -ENOMEM;
		t->tid = tid;
		b = mix64((uint64_t)(uint32_t)tid) & (r->thtcap - 1);
		t->hnext = r->tht[b];
		r->tht[b] = t;
	}
	snprintf(t->name, sizeof(t->name), "%s", name);
	return 0;
}

/* Ranges: sorted by lo, not overlapping. Remove [lo, hi) from @v (trim or split). */
static int ranges_cut(struct tools_rep_range **v, size_t *n, size_t *cap, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < *n;) {
		struct tools_rep_range *x = &(*v)[i];

		if (x->hi <= lo || x->lo >= hi) {
			i++;
			continue;
		}
		if (x->lo < lo && x->hi > hi) { /* split */
			struct tools_rep_range tail = *x;
			struct tools_rep_range *nv = xgrow(*v, cap, *n + 1, sizeof(**v));

			if (!nv)
				return -ENOMEM;
			*v = nv;
			x = &(*v)[i];
			tail.lo = hi;
			x->hi = lo;
			memmove(&(*v)[i + 2], &(*v)[i + 1], (*n - i - 1) * sizeof(**v));
			(*v)[i + 1] = tail;
			(*n)++;
			return 0;
		}
		if (x->lo < lo) {
			x->hi = lo;
			i++;
		} else if (x->hi > hi) {
			x->lo = hi;
			i++;
		} else {
			memmove(x, x + 1, (*n - i - 1) * sizeof(*x));
			(*n)--;
		}
	}
	return 0;
}

static int ranges_add(struct tools_rep_range **v, size_t *n, size_t *cap,
		      struct tools_rep_range add)
{
	struct tools_rep_range *nv;
	size_t i;
	int e = ranges_cut(v, n, cap, add.lo, add.hi);

	if (e < 0)
		return e;
	nv = xgrow(*v, cap, *n + 1, sizeof(**v));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	for (i = *n; i > 0 && (*v)[i - 1].lo > add.lo; i--)
		;
	memmove(&(*v)[i + 1], &(*v)[i], (*n - i) * sizeof(**v));
	(*v)[i] = add;
	(*n)++;
	return 0;
}

static const struct tools_rep_range *ranges_find(const struct tools_rep_range *v, size_t n,
						 uint64_t pc)
{
	size_t lo = 0, hi = n;

	while (lo < hi) { /* first range with lo > pc */
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || pc >= v[lo - 1].hi)
		return NULL;
	return &v[lo - 1];
}

/* Images ------------------------------------------------------------------ */

static void image_open_info(struct tools_report *r, struct tools_rep_image *img)
{
	char path[4096];
	int fd;

	if (img->kernel && !strchr(img->path, '/'))
		snprintf(path, sizeof(path), "%s/boot/kernel/%s", r->o.symfs ? r->o.symfs : "",
			 img->path);
	else
		snprintf(path, sizeof(path), "%s%s", r->o.symfs ? r->o.symfs : "", img->path);
	/* Never open a device or FIFO a hostile log names (a watchdog acts when opened). */
	fd = report_open_regular(path, NULL);
	if (fd < 0) {
		img->info_err = fd;
		return;
	}
	img->info_err = maplog_elf_info_fd(fd, &img->info);
	close(fd);
}

static struct tools_rep_image *image_get(struct tools_report *r, const char *path, bool kernel)
{
	struct tools_rep_image *img;
	uint64_t h = hash_str(path) ^ (kernel ? 0x9e3779b97f4a7c15ull : 0);
	size_t b;

	if (!r->iht) {
		r->ihtcap = 4096;
		r->iht = calloc(r->ihtcap, sizeof(*r->iht));
		if (!r->iht)
			return NULL;
	}
	b = mix64(h) & (r->ihtcap - 1);
	for (img = r->iht[b]; img; img = img->hnext)
		if (img->kernel == kernel && strcmp(img->path, path) == 0)
			return img;
	img = calloc(1, sizeof(*img));
	if (!img || !(img->path = strdup(path))) {
		free(img);
		return NULL;
	}
	img->kernel = kernel;
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
	/* Linux kernel images have no file here: they resolve through kallsyms. */
	if (kernel && (strcmp(path, "vmlinux") == 0 || strstr(path, ".ko"))) {
		img->info_err = -ENOENT;
	} else {
		image_open_info(r, img);
		if (img->info_err)
			r->images_missing++;
	}
	img->hnext = r->iht[b];
	r->iht[b] = img;
	r->nimages++;
	return img;
}

static void image_load_syms(struct tools_report *r, struct tools_rep_image *img)
{
	struct report_sym_opts so = { .symfs = r->o.symfs, .debugdir = r->o.debugdir };
	char path[4096];

	img->syms_tried = true;
	if (img->info_err)
		return;
	if (img->kernel && !strchr(img->path, '/')) {
		snprintf(path, sizeof(path), "/boot/kernel/%s", img->path);
		(void)report_symtab__open(path, &so, &img->syms);
	} else {
		(void)report_symtab__open(img->path, &so, &img->syms);
	}
}

/* Where the image's executable code lies when placed with @start under @rule. */
static int image_range(enum tools_rep_map_rule rule, struct tools_rep_image *img, uint64_t start,
		       struct tools_rep_range *ret)
{
	const struct maplog_elf_info *in = &img->info;
	uint64_t lo = UINT64_MAX, hi = 0, bias = start - in->v;

	if (rule == TOOLS_REP_RULE_FIRST_EXEC) {
		for (size_t i = 0; i < in->n_load; i++) {
			if (in->load[i].p_flags & 1u) { /* PF_X */
				bias = start - (in->load[i].p_vaddr & ~(TOOLS_REP_PAGE - 1));
				break;
			}
		}
	}
	if (in->has_exec_section) {
		lo = in->exec_start;
		hi = in->exec_end;
	} else {
		for (size_t i = 0; i < in->n_load; i++) {
			if (!(in->load[i].p_flags & 1u))
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

static uint32_t func_intern(struct tools_report *r, enum tools_rep_func_kind kind,
			    struct tools_rep_image *img, const char *module, const char *name,
			    uint64_t addr)
{
	uint64_t key =
		mix64(addr ^ (uint64_t)(uintptr_t)img * 31 ^ (uint64_t)(uintptr_t)module ^
		      (uint64_t)kind << 60 ^ (kind == TOOLS_REP_F_COMM ? hash_str(name) : 0));
	size_t slot;
	struct tools_rep_func *f;

	if (r->nfuncs * 2 + 2 >= r->fhtcap) {
		size_t ncap = r->fhtcap ? r->fhtcap * 2 : 4096;
		uint32_t *n = calloc(ncap, sizeof(*n));

		if (!n)
			return 0;
		for (size_t i = 0; i < r->fhtcap; i++) {
			uint32_t id = r->fht[i];
			const struct tools_rep_func *g;
			uint64_t k;

			if (!id)
				continue;
			g = &r->funcs[id];
			k = mix64(g->addr ^ (uint64_t)(uintptr_t)g->img * 31 ^
				  (uint64_t)(uintptr_t)g->module ^ (uint64_t)g->kind << 60 ^
				  (g->kind == TOOLS_REP_F_COMM ? hash_str(g->name) : 0));
			for (slot = k & (ncap - 1); n[slot]; slot = (slot + 1) & (ncap - 1))
				;
			n[slot] = id;
		}
		free(r->fht);
		r->fht = n;
		r->fhtcap = ncap;
	}
	for (slot = key & (r->fhtcap - 1); r->fht[slot]; slot = (slot + 1) & (r->fhtcap - 1)) {
		f = &r->funcs[r->fht[slot]];
		if (f->kind == kind && f->img == img && f->module == module && f->addr == addr &&
		    (kind != TOOLS_REP_F_COMM || strcmp(f->name, name) == 0))
			return r->fht[slot];
	}
	if (r->nfuncs + 1 >= UINT32_MAX)
		return 0;
	{
		struct tools_rep_func *nf =
			xgrow(r->funcs, &r->funcs_cap, r->nfuncs + 2, sizeof(*nf));

		if (!nf)
			return 0;
		r->funcs = nf;
	}
	if (r->nfuncs == 0)
		r->nfuncs = 1; /* index 0 is "none" */
	f = &r->funcs[r->nfuncs];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->img = img;
	f->module = module;
	f->addr = addr;
	if (module && kind != TOOLS_REP_F_NOSYM) {
		char b[300];

		snprintf(b, sizeof(b), "[%s]", module);
		f->module_img = strdup(b);
		if (!f->module_img)
			return 0;
	}
	if (kind == TOOLS_REP_F_COMM) {
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
	if (r->o.focus && name && kind != TOOLS_REP_F_COMM)
		f->focus = strcmp(name, r->o.focus) == 0 ||
			   strcmp(tools_report_func_name(r, (uint32_t)r->nfuncs), r->o.focus) == 0;
	r->fht[slot] = (uint32_t)r->nfuncs;
	return (uint32_t)r->nfuncs++;
}

/* The function of user-or-kernel-image PC @pc (looked up at @look) in @rg. */
static uint32_t resolve_in(struct tools_report *r, const struct tools_rep_range *rg, uint64_t look)
{
	struct tools_rep_image *img = rg->img;
	uint64_t link = look - rg->bias;
	const struct report_sym *s;

	if (!img->syms_tried)
		image_load_syms(r, img);
	s = img->syms ? report_symtab__lookup(img->syms, link) : NULL;
	if (!s)
		return func_intern(r, TOOLS_REP_F_NOSYM, img, NULL, NULL, link);
	return func_intern(r, img->kernel ? TOOLS_REP_F_KERNEL : TOOLS_REP_F_USER, img, NULL,
			   s->name, s->start);
}

static void load_kallsyms(struct tools_report *r);

static uint32_t resolve_kernel(struct tools_report *r, uint64_t look)
{
	struct tools_rep_proc *k;
	const struct tools_rep_range *rg;

	if (!r->ksyms_tried) {
		/* Read at the first kernel PC: user-only logs never pay for it. */
		r->ksyms_tried = true;
		load_kallsyms(r);
	}
	if (r->ksyms) {
		const struct report_sym *s = report_symtab__lookup(r->ksyms, look);

		if (s)
			return func_intern(r, TOOLS_REP_F_KERNEL, NULL, s->module, s->name,
					   s->start);
	}
	k = proc_find(r, -1);
	if (k && ((rg = ranges_find(k->exact, k->nexact, look)) != NULL))
		return resolve_in(r, rg, look);
	return func_intern(r, TOOLS_REP_F_NOSYM, NULL, NULL, NULL,
			   look - (r->have_kslide ? r->kslide : 0));
}

static uint32_t resolve_user(struct tools_report *r, struct tools_rep_proc *p, uint64_t look)
{
	const struct tools_rep_range *rg = NULL;

	if (p) {
		rg = ranges_find(p->exact, p->nexact, look);
		if (!rg) {
			/* Fallback ranges: the nearest one below, within its span. */
			rg = ranges_find(p->approx, p->napprox, look);
		}
	}
	if (!rg)
		return r->unknown_func;
	return resolve_in(r, rg, look);
}

/*
 * Fold the PCs counted per function into the header's and the images' counts
 * (once, at the end: the hot path touches only the function's own counter).
 */
static void pc_totals(struct tools_report *r)
{
	for (size_t f = 1; f < r->nfuncs; f++) {
		const struct tools_rep_func *fn = &r->funcs[f];

		if (fn->img)
			fn->img->pcs += fn->pcs;
		if (fn->kind == TOOLS_REP_F_UNKNOWN) {
			r->pcs_unknown += fn->pcs;
		} else if (fn->kind == TOOLS_REP_F_NOSYM) {
			if (fn->img) {
				fn->img->pcs_nosym += fn->pcs;
				r->pcs_nosym += fn->pcs;
			} else {
				r->pcs_kernel_nosym += fn->pcs;
			}
		}
	}
}

/*
 * The function of PC @look in process @p (NULL: the kernel).  Most PCs of a log
 * recur, so the answer is cached per (process, PC) in a direct-mapped table;
 * any change of the model (MAP_IN, MAP_OUT, fork, exec, exit, pid reuse) bumps
 * r->model_gen, which invalidates every entry at once.
 */
static uint32_t resolve_pc(struct tools_report *r, struct tools_rep_proc *p, uint64_t look)
{
	uintptr_t key = p ? (uintptr_t)p : 1;
	struct tools_rep_pcc *c = &r->pcc[mix64(look ^ (uint64_t)key * 0x9e3779b97f4a7c15ull) &
					  (TOOLS_REP_PCC_SIZE - 1)];
	uint32_t f;

	if (c->pc == look && c->key == key && c->gen == r->model_gen && c->func) {
		f = c->func;
	} else {
		f = p ? resolve_user(r, p, look) : resolve_kernel(r, look);
		if (f) {
			c->pc = look;
			c->key = key;
			c->gen = r->model_gen;
			c->func = f;
		}
	}
	if (f)
		r->funcs[f].pcs++;
	return f;
}

const char *tools_report_func_name(struct tools_report *r, uint32_t id)
{
	struct tools_rep_func *f = &r->funcs[id];
	extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);
	char buf[600];

	if (f->pretty)
		return f->pretty;
	switch (f->kind) {
	case TOOLS_REP_F_UNKNOWN:
		return "[unknown]";
	case TOOLS_REP_F_NOSYM:
		snprintf(buf, sizeof(buf), "%s+0x%llx", f->img ? f->img->base : "[kernel]",
			 (unsigned long long)f->addr);
		f->pretty = strdup(buf);
		break;
	default:
		if (f->name && f->name[0] == '_' && f->name[1] == 'Z') {
			int st = 0;

			f->pretty = __cxa_demangle(f->name, NULL, NULL, &st);
			if (st != 0) {
				free(f->pretty);
				f->pretty = NULL;
			}
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
	return f->pretty ? f->pretty : "?";
}

const char *tools_report_func_image(const struct tools_report *r, uint32_t id)
{
	const struct tools_rep_func *f = &r->funcs[id];

	if (f->kind == TOOLS_REP_F_COMM)
		return "";
	if (f->kind == TOOLS_REP_F_UNKNOWN)
		return "[unknown]";
	if (f->img)
		return f->img->shown;
	if (f->module)
		return f->module_img ? f->module_img : f->module;
	return "[kernel.kallsyms]";
}

/* Trees ------------------------------------------------------------------- */

static int tree_init(struct tools_rep_tree *t)
{
	t->cap = 1024;
	t->n = calloc(t->cap, sizeof(*t->n));
	t->htcap = 4096;
	t->ht = calloc(t->htcap, sizeof(*t->ht));
	if (!t->n || !t->ht)
		return -ENOMEM;
	t->len = 1; /* the root */
	return 0;
}

static void tree_exit(struct tools_rep_tree *t)
{
	free(t->n);
	free(t->ht);
	memset(t, 0, sizeof(*t));
}

static size_t tree_slot(const struct tools_rep_tree *t, uint32_t parent, uint32_t func)
{
	return mix64((uint64_t)parent << 32 | func) & (t->htcap - 1);
}

/* The child of @parent for @func, made if new; 0 when out of memory. */
static uint32_t tree_child(struct tools_rep_tree *t, uint32_t parent, uint32_t func)
{
	size_t s;
	struct tools_rep_node *n;

	for (s = tree_slot(t, parent, func); t->ht[s]; s = (s + 1) & (t->htcap - 1)) {
		n = &t->n[t->ht[s] - 1];
		if (n->parent == parent && n->func == func)
			return t->ht[s] - 1;
	}
	if (t->len >= UINT32_MAX - 1)
		return 0;
	if (t->len + 1 > t->cap) {
		struct tools_rep_node *nn = realloc(t->n, t->cap * 2 * sizeof(*nn));

		if (!nn)
			return 0;
		t->n = nn;
		t->cap *= 2;
	}
	if ((t->len + 1) * 2 > t->htcap) {
		size_t ncap = t->htcap * 2;
		uint32_t *nh = calloc(ncap, sizeof(*nh));

		if (!nh)
			return 0;
		free(t->ht);
		t->ht = nh;
		t->htcap = ncap;
		for (size_t i = 1; i < t->len; i++) {
			for (s = tree_slot(t, t->n[i].parent, t->n[i].func); t->ht[s];
			     s = (s + 1) & (t->htcap - 1))
				;
			t->ht[s] = (uint32_t)i + 1;
		}
		for (s = tree_slot(t, parent, func); t->ht[s]; s = (s + 1) & (t->htcap - 1))
			;
	}
	n = &t->n[t->len];
	memset(n, 0, sizeof(*n));
	n->func = func;
	n->parent = parent;
	n->sibling = t->n[parent].child;
	t->n[parent].child = (uint32_t)t->len;
	t->ht[s] = (uint32_t)t->len + 1;
	return (uint32_t)t->len++;
}

/* Add one path (@ids, @n functions, in the order given) below the root. */
static int tree_add(struct tools_rep_tree *t, const uint32_t *ids, size_t n, int step)
{
	uint32_t node = 0;

	t->n[0].count++;
	for (size_t k = 0; k < n; k++) {
		node = tree_child(t, node, ids[step > 0 ? k : n - 1 - k]);
		if (!node)
			return -ENOMEM;
		t->n[node].count++;
	}
	t->n[node].self++;
	return 0;
}

/* Events ------------------------------------------------------------------ */

static struct tools_rep_event *event_find(struct tools_report *r, uint32_t pmcid)
{
	for (size_t i = 0; i < r->nev; i++)
		if (r->ev[i].pmcid == pmcid)
			return &r->ev[i];
	return NULL;
}

static int event_announce(struct tools_report *r, uint32_t pmcid, const char *name)
{
	struct tools_rep_event *e = event_find(r, pmcid), *n;

	if (!e) {
		if (r->nev >= 4096)
			return -E2BIG;
		n = realloc(r->ev, (r->nev + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		r->ev = n;
		e = &r->ev[r->nev++];
		memset(e, 0, sizeof(*e));
		e->pmcid = pmcid;
		/* Only the trees an output needs (an unbuilt tree has no nodes, n == NULL). */
		if ((r->o.want_callers && tree_init(&e->callers) < 0) ||
		    (r->o.want_callees && tree_init(&e->callees) < 0) ||
		    (r->o.want_focus && (tree_init(&e->focus_callers) < 0 ||
					 tree_init(&e->focus_callees) < 0)))
			return -ENOMEM;
	}
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->selected = r->o.nevents == 0;
	for (size_t i = 0; i < r->o.nevents; i++)
		e->selected |= strcmp(r->o.events[i], name) == 0;
	return 0;
}

static int event_count(struct tools_report *r, struct tools_rep_event *e, uint32_t f, bool self)
{
	if (f >= e->ncounts) {
		size_t n = e->ncounts ? e->ncounts : 1024;
		uint64_t *a, *b;

		while (n <= f)
			n *= 2;
		a = realloc(e->self, n * sizeof(*a));
		if (!a)
			return -ENOMEM;
		e->self = a;
		b = realloc(e->total, n * sizeof(*b));
		if (!b)
			return -ENOMEM;
		e->total = b;
		memset(e->self + e->ncounts, 0, (n - e->ncounts) * sizeof(*a));
		memset(e->total + e->ncounts, 0, (n - e->ncounts) * sizeof(*b));
		e->ncounts = n;
	}
	if (self)
		e->self[f]++;
	if (f >= r->stamp_cap) {
		size_t n = r->stamp_cap ? r->stamp_cap : 1024;
		uint32_t *s;

		while (n <= f)
			n *= 2;
		s = realloc(r->stamp, n * sizeof(*s));
		if (!s)
			return -ENOMEM;
		memset(s + r->stamp_cap, 0, (n - r->stamp_cap) * sizeof(*s));
		r->stamp = s;
		r->stamp_cap = n;
	}
	if (r->stamp[f] != (uint32_t)r->sample_no) { /* each function once per sample */
		r->stamp[f] = (uint32_t)r->sample_no;
		e->total[f]++;
	}
	return 0;
}

/* Records ----------------------------------------------------------------- */

static bool filter_pass(const struct tools_report *r, const struct plog_record *rec,
			const struct tools_rep_proc *p, double t)
{
	const struct tools_rep_opts *o = &r->o;
	bool ok;

	if (o->npids) {
		ok = false;
		for (size_t i = 0; i < o->npids && !ok; i++)
			ok = o->pids[i] == rec->u.callchain.pid;
		if (!ok)
			return false;
	}
	if (o->ntids) {
		ok = false;
		for (size_t i = 0; i < o->ntids && !ok; i++)
			ok = o->tids[i] == rec->u.callchain.tid;
		if (!ok)
			return false;
	}
	if (o->cpus) {
		uint32_t cpu = PLOG_CC_CPU(rec->u.callchain.cpuflags);

		if (!(o->cpus[cpu / 8] & (1u << (cpu % 8))))
			return false;
	}
	if (t < o->since || (o->until >= 0 && t > o->until))
		return false;
	if (o->ncomms) {
		const struct tools_rep_thread *th = thread_find(r, rec->u.callchain.tid);

		ok = false;
		for (size_t i = 0; i < o->ncomms && !ok; i++)
			ok = (p && strcmp(p->name, o->comms[i]) == 0) ||
			     (th && strcmp(th->name, o->comms[i]) == 0);
		if (!ok)
			return false;
	}
	return true;
}

static uint32_t comm_func(struct tools_report *r, struct tools_rep_proc *p, int32_t pid,
			  int32_t tid)
{
	const struct tools_rep_thread *th = thread_find(r, tid);
	char buf[64];

	if (th && th->name[0])
		return func_intern(r, TOOLS_REP_F_COMM, NULL, NULL, th->name, 0);
	if (p && p->name[0])
		return func_intern(r, TOOLS_REP_F_COMM, NULL, NULL, p->name, 0);
	snprintf(buf, sizeof(buf), pid == 0 ? "[idle]" : "[pid %d]", (int)pid);
	return func_intern(r, TOOLS_REP_F_COMM, NULL, NULL, buf, 0);
}

static int on_sample(struct tools_report *r, const struct plog_record *rec)
{
	const struct plog_record *c = rec;
	struct tools_rep_event *e = event_find(r, c->u.callchain.pmcid);
	struct tools_rep_proc *p;
	bool user_mode = PLOG_CC_FLAGS(c->u.callchain.cpuflags) & PLOG_CC_F_USERSPACE;
	double t = r->tsc_freq ? (double)(rec->tsc - r->first_tsc) / (double)r->tsc_freq : 0;
	size_t n = 0, k = 0, npc = c->u.callchain.npc;
	uint32_t *ids = r->chain;
	int err;

	r->samples++;
	if (!e) {
		r->unannounced++;
		return 0;
	}
	if (!e->selected) {
		r->filtered++;
		return 0;
	}
	p = proc_find(r, c->u.callchain.pid);
	if (!filter_pass(r, rec, p, t) || (r->o.kernel_only && user_mode)) {
		r->filtered++;
		return 0;
	}
	if (!user_mode) {
		for (; k < npc && c->u.callchain.pc[k] >= TOOLS_REP_KERNEL_MIN; k++) {
			uint64_t pc = c->u.callchain.pc[k];

			r->pcs++;
			if (!r->o.user_only) {
				r->pcs_kernel++;
				ids[n++] = resolve_pc(r, NULL, k ? pc - 1 : pc);
			}
		}
	}
	if (!r->o.kernel_only) {
		for (; k < npc; k++) {
			uint64_t pc = c->u.callchain.pc[k];

			r->pcs++;
			ids[n++] = p ? resolve_pc(r, p, k ? pc - 1 : pc) : r->unknown_func;
			if (!p)
				r->funcs[r->unknown_func].pcs++;
		}
	} else {
		r->pcs += npc - k;
	}
	for (size_t i = 0; i < n; i++)
		if (!ids[i])
			return -ENOMEM;
	if (n == 0) {
		r->no_frames++; /* a kernel-only sample under --user */
		return 0;
	}
	r->kept++;
	r->sample_no++;
	if ((uint32_t)r->sample_no == 0)
		r->sample_no++, memset(r->stamp, 0, r->stamp_cap * sizeof(*r->stamp));
	e->samples++;
	if (p && p->samples++ == 0)
		r->sampled_pids++;
	for (size_t i = 0; i < n; i++)
		if ((err = event_count(r, e, ids[i], i == 0)) < 0)
			return err;
	if (r->o.want_callers && (err = tree_add(&e->callers, ids, n, 1)) < 0)
		return err;
	if (r->o.want_callees) {
		uint32_t cf = comm_func(r, p, c->u.callchain.pid, c->u.callchain.tid);

		if (!cf)
			return -ENOMEM;
		ids[n] = cf; /* the process name is the outermost frame */
		if ((err = tree_add(&e->callees, ids, n + 1, -1)) < 0)
			return err;
	}
	if (r->o.want_focus) {
		size_t in = n, out = n;

		for (size_t i = 0; i < n; i++) {
			if (r->funcs[ids[i]].focus) {
				if (in == n)
					in = i;
				out = i;
			}
		}
		if (in < n) {
			e->focus_samples++;
			/* callers of F: from its innermost occurrence outwards */
			if ((err = tree_add(&e->focus_callers, ids + in, n - in, 1)) < 0)
				return err;
			/* callees of F: from its outermost occurrence inwards */
			if ((err = tree_add(&e->focus_callees, ids, out + 1, -1)) < 0)
				return err;
		}
	}
	return 0;
}

static int on_record(struct tools_report *r, const struct plog_record *rec)
{
	struct tools_rep_proc *p;
	struct tools_rep_image *img;
	struct tools_rep_range rg;
	int e;

	r->records++;
	switch (rec->type) {
	case PLOG_TYPE_MAP_IN:
	case PLOG_TYPE_MAP_OUT:
	case PLOG_TYPE_PROCEXEC:
	case PLOG_TYPE_PROCFORK:
	case PLOG_TYPE_PROC_CREATE: /* may replace a zombie */
		r->model_gen++; /* every cached PC resolution is stale */
		break;
	default:
		break;
	}
	if (rec->type != PLOG_TYPE_INITIALIZE && r->records == 1)
		r->first_tsc = rec->tsc;
	if (rec->tsc > r->last_tsc)
		r->last_tsc = rec->tsc;
	switch (rec->type) {
	case PLOG_TYPE_INITIALIZE:
		if (r->have_init)
			break;
		r->have_init = true;
		r->cpu_type = rec->u.initialize.cpu;
		snprintf(r->cpuid, sizeof(r->cpuid), "%s", rec->u.initialize.cpuid);
		r->tsc_freq = rec->u.initialize.tsc_freq;
		r->ts_sec = rec->u.initialize.ts_sec;
		r->ts_nsec = rec->u.initialize.ts_nsec;
		r->first_tsc = rec->tsc;
		if (r->o.rule == TOOLS_REP_RULE_AUTO)
			r->rule = r->cpu_type == PLOG_CPU_GENERIC ? TOOLS_REP_RULE_BIAS_V
								  : TOOLS_REP_RULE_FIRST_EXEC;
		break;
	case PLOG_TYPE_DROPNOTIFY:
		r->dropnotify++;
		break;
	case PLOG_TYPE_PMCALLOCATE: {
		char name[32];

		snprintf(name, sizeof(name), "event-0x%x", rec->u.pmcallocate.event);
		return event_announce(r, rec->u.pmcallocate.pmcid, name);
	}
	case PLOG_TYPE_PMCALLOCATEDYN:
		return event_announce(r, rec->u.pmcallocatedyn.pmcid, rec->u.pmcallocatedyn.evname);
	case PLOG_TYPE_PROC_CREATE:
		r->proc_creates++;
		p = proc_get(r, rec->u.proc_create.pid);
		if (!p)
			return -ENOMEM;
		snprintf(p->name, sizeof(p->name), "%s", rec->u.proc_create.name);
		break;
	case PLOG_TYPE_THR_CREATE:
		return thread_set(r, rec->u.thr_create.tid, rec->u.thr_create.name);
	case PLOG_TYPE_MAP_IN:
		p = proc_get(r, rec->u.map_in.pid);
		img = image_get(r, rec->u.map_in.path, rec->u.map_in.pid == -1);
		if (!p || !img)
			return -ENOMEM;
		if (rec->u.map_in.pid == -1 && strcmp(img->path, "vmlinux") == 0) {
			r->have_kslide = true;
			r->kslide = rec->u.map_in.start;
		}
		if (!img->info_err && image_range(r->rule, img, rec->u.map_in.start, &rg) == 0)
			return ranges_add(&p->exact, &p->nexact, &p->cap_exact, rg);
		if (rec->u.map_in.pid == -1)
			return 0; /* kernel images without a file: kallsyms */
		rg.lo = rec->u.map_in.start;
		rg.hi = rg.lo + TOOLS_REP_FALLBACK_SPAN < rg.lo ? UINT64_MAX
								: rg.lo + TOOLS_REP_FALLBACK_SPAN;
		rg.bias = rg.lo;
		rg.img = img;
		return ranges_add(&p->approx, &p->napprox, &p->cap_approx, rg);
	case PLOG_TYPE_MAP_OUT:
		p = proc_find(r, rec->u.map_out.pid);
		if (!p)
			break;
		e = ranges_cut(&p->exact, &p->nexact, &p->cap_exact, rec->u.map_out.start,
			       rec->u.map_out.end);
		if (e == 0)
			e = ranges_cut(&p->approx, &p->napprox, &p->cap_approx,
				       rec->u.map_out.start, rec->u.map_out.end);
		return e;
	case PLOG_TYPE_PROCEXEC:
		p = proc_get(r, rec->u.procexec.pid);
		img = image_get(r, rec->u.procexec.path, false);
		if (!p || !img)
			return -ENOMEM;
		p->nexact = p->napprox = 0;
		/* PROCEXEC places the executable with bias pl_dyn (10.2), whatever the MAP_IN rule. */
		if (!img->info_err && image_range(TOOLS_REP_RULE_BIAS_V, img,
						  rec->u.procexec.dyn + img->info.v, &rg) == 0)
			return ranges_add(&p->exact, &p->nexact, &p->cap_exact, rg);
		break;
	case PLOG_TYPE_PROCFORK: {
		struct tools_rep_proc *parent = proc_find(r, rec->u.procfork.oldpid);

		p = proc_get(r, rec->u.procfork.newpid);
		if (!p)
			return -ENOMEM;
		proc_reset(p);
		if (parent && parent != p) {
			snprintf(p->name, sizeof(p->name), "%s", parent->name);
			for (size_t i = 0; i < parent->nexact; i++)
				if ((e = ranges_add(&p->exact, &p->nexact, &p->cap_exact,
						    parent->exact[i])) < 0)
					return e;
			for (size_t i = 0; i < parent->napprox; i++)
				if ((e = ranges_add(&p->approx, &p->napprox, &p->cap_approx,
						    parent->approx[i])) < 0)
					return e;
		}
		break;
	}
	case PLOG_TYPE_SYSEXIT:
		p = proc_find(r, rec->u.sysexit.pid);
		if (p)
			p->zombie = true;
		break;
	case PLOG_TYPE_PROCEXIT:
		p = proc_find(r, rec->u.procexit.pid);
		if (p)
			p->zombie = true;
		break;
	case PLOG_TYPE_CALLCHAIN:
		return on_sample(r, rec);
	default:
		break;
	}
	return 0;
}

/* Kernel symbols ------------------------------------------------------------ */

/* The run-time _stext of a kallsyms table (aliases at one address keep one name). */
static const struct report_sym *ksyms_stext(const struct report_symtab *t)
{
	const struct report_sym *s = report_symtab__find(t, "_stext");

	return s ? s : report_symtab__find(t, "_text");
}

static void load_kallsyms(struct tools_report *r)
{
	char path[1100];
	const struct report_sym *st;
	int e;

	if (r->o.kallsyms) {
		e = report_symtab__kallsyms(r->o.kallsyms, &r->ksyms);
		if (e < 0) {
			log_warn(
				"%s: cannot read kernel symbols: %s; kernel PCs print as addresses",
				r->o.kallsyms, strerror(-e));
			snprintf(r->ksyms_note, sizeof(r->ksyms_note), "%s unreadable (%s)",
				 r->o.kallsyms, strerror(-e));
			return;
		}
		snprintf(r->ksyms_source, sizeof(r->ksyms_source), "%s", r->o.kallsyms);
	} else if (strcmp(r->file, "-") != 0 &&
		   snprintf(path, sizeof(path), "%s.kallsyms", r->file) < (int)sizeof(path) &&
		   access(path, R_OK) == 0 && report_symtab__kallsyms(path, &r->ksyms) == 0) {
		snprintf(r->ksyms_source, sizeof(r->ksyms_source), "%s", path);
	} else if (r->have_kslide && report_symtab__kallsyms("/proc/kallsyms", &r->ksyms) == 0) {
		st = ksyms_stext(r->ksyms);
		if (!st || st->start - 0xffffffff81000000ull != r->kslide) {
			report_symtab__free(r->ksyms);
			r->ksyms = NULL;
			snprintf(r->ksyms_note, sizeof(r->ksyms_note),
				 "none: /proc/kallsyms is of another boot (pass --kallsyms FILE)");
			return;
		}
		snprintf(r->ksyms_source, sizeof(r->ksyms_source), "/proc/kallsyms (same boot)");
	} else {
		snprintf(r->ksyms_note, sizeof(r->ksyms_note), "none (pass --kallsyms FILE)");
		return;
	}
	if (r->have_kslide && (st = ksyms_stext(r->ksyms)) != NULL &&
	    st->start - 0xffffffff81000000ull != r->kslide)
		snprintf(r->ksyms_note, sizeof(r->ksyms_note),
			 "warning: its _stext does not match the log's kernel (another boot?)");
}

/* Loading ------------------------------------------------------------------- */

int tools_report_load(struct tools_report *r)
{
	struct plog_reader *rd = NULL;
	struct plog_record rec;
	uint8_t *buf = NULL;
	int fd = -1, e = 0;
	ssize_t n;
	const struct plog_error *pe;

	r->chain = malloc((PLOG_CALLCHAIN_DEPTH_MAX + 2) * sizeof(*r->chain));
	r->pcc = calloc(TOOLS_REP_PCC_SIZE, sizeof(*r->pcc));
	buf = malloc(TOOLS_REP_READ_CHUNK);
	if (!r->chain || !r->pcc || !buf) {
		e = -ENOMEM;
		goto out;
	}
	r->o.want_focus = r->o.focus != NULL;
	r->rule = r->o.rule == TOOLS_REP_RULE_AUTO ? TOOLS_REP_RULE_BIAS_V : r->o.rule;
	r->unknown_func = func_intern(r, TOOLS_REP_F_UNKNOWN, NULL, NULL, NULL, 0);
	if (!r->unknown_func) {
		e = -ENOMEM;
		goto out;
	}
	if (strcmp(r->file, "-") == 0) {
		fd = STDIN_FILENO;
	} else {
		struct stat st;

		fd = open(r->file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0) {
			e = -errno;
			log_error("%s: %s", r->file, strerror(-e));
			goto out;
		}
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			e = -EISDIR;
			log_error("%s: is a directory, not a pmclog file", r->file);
			goto out;
		}
	}
	e = plog_reader__new(PLOG_READER_SKIP_UNKNOWN, &rd);
	if (e < 0)
		goto out;
	for (;;) {
		n = util_read_some(fd, buf, TOOLS_REP_READ_CHUNK);
		if (n < 0) {
			e = (int)n;
			log_error("%s: read: %s", r->file, strerror(-e));
			goto out;
		}
		if (n == 0)
			plog_reader__finish(rd);
		else if ((e = plog_reader__feed(rd, buf, (size_t)n)) < 0)
			goto out;
		while ((e = plog_reader__next(rd, &rec)) > 0) {
			if ((e = on_record(r, &rec)) < 0) {
				log_error("%s: %s", r->file, strerror(-e));
				goto out;
			}
		}
		if (e < 0 || n == 0)
			break;
		if (plog_reader__status(rd) == PLOG_STATUS_COMPLETE)
			break;
	}
	e = 0;
	pc_totals(r);
	r->status = plog_reader__status(rd);
	pe = plog_reader__error(rd);
	switch (r->status) {
	case PLOG_STATUS_COMPLETE:
		snprintf(r->status_msg, sizeof(r->status_msg), "complete");
		break;
	case PLOG_STATUS_TORN:
		snprintf(r->status_msg, sizeof(r->status_msg),
			 "torn: the last record (at byte %llu) is cut short; reported up to it",
			 (unsigned long long)plog_reader__offset(rd));
		break;
	case PLOG_STATUS_ERROR:
		snprintf(r->status_msg, sizeof(r->status_msg),
			 "malformed at byte %llu (%s); reported up to there",
			 pe ? (unsigned long long)pe->offset : 0ull, pe ? pe->message : "?");
		break;
	default:
		snprintf(r->status_msg, sizeof(r->status_msg),
			 "no CLOSELOG: the recording did not end cleanly (or is still running)");
		break;
	}
	if (!r->have_init && r->records == 0)
		snprintf(r->status_msg, sizeof(r->status_msg), "empty: no record");
	if (r->status == PLOG_STATUS_ERROR || r->status == PLOG_STATUS_TORN)
		log_warn("%s: %s", r->file, r->status_msg);
	if (!r->ksyms && !r->ksyms_note[0])
		snprintf(r->ksyms_note, sizeof(r->ksyms_note), "not needed (no kernel PCs)");
out:
	if (fd > STDIN_FILENO)
		close(fd);
	plog_reader__free(rd);
	free(buf);
	return e;
}

void tools_report_free(struct tools_report *r)
{
	for (size_t i = 0; i < r->nev; i++) {
		struct tools_rep_event *e = &r->ev[i];

		free(e->self);
		free(e->total);
		tree_exit(&e->callers);
		tree_exit(&e->callees);
		tree_exit(&e->focus_callers);
		tree_exit(&e->focus_callees);
	}
	free(r->ev);
	for (size_t i = 1; i < r->nfuncs; i++) {
		free(r->funcs[i].pretty);
		free(r->funcs[i].module_img);
		free(r->funcs[i].raw);
	}
	free(r->funcs);
	free(r->fht);
	for (size_t i = 0; i < r->ihtcap; i++) {
		while (r->iht[i]) {
			struct tools_rep_image *img = r->iht[i];

			r->iht[i] = img->hnext;
			report_symtab__free(img->syms);
			free(img->shown);
			free(img->path);
			free(img);
		}
	}
	free(r->iht);
	for (size_t i = 0; i < r->phtcap; i++) {
		while (r->pht[i]) {
			struct tools_rep_proc *p = r->pht[i];

			r->pht[i] = p->hnext;
			free(p->exact);
			free(p->approx);
			free(p);
		}
	}
	free(r->pht);
	for (size_t i = 0; i < r->thtcap; i++) {
		while (r->tht[i]) {
			struct tools_rep_thread *t = r->tht[i];

			r->tht[i] = t->hnext;
			free(t);
		}
	}
	free(r->tht);
	report_symtab__free(r->ksyms);
	free(r->chain);
	free(r->pcc);
	free(r->stamp);
}
