/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-report.c: the aggregation of `hwpmc report`: reads a pmclog into the
 * report model (include/hwpmcd/report.h), resolves the PCs of every sample it
 * keeps and counts them per event: self and total counts per function and the
 * call trees the outputs ask for.
 *
 * PUBLIC INTERFACES
 *   tools_report_load(), tools_report_free(), tools_report_func_name(),
 *   tools_report_func_image() (tools-report.h)
 *
 * IMPLEMENTATION NOTES
 *   A chain is kernel PCs first (pc >= REPORT_KERNEL_MIN) and user PCs after
 *   (pmclog-format.md 10.3).  Every PC after the first is a return address and
 *   is looked up at pc - 1, as perf does, so a call at a function's end is not
 *   charged to the next function; the first user PC of a kernel-mode sample is
 *   where the thread was stopped (the instruction after a system call, or the
 *   one that faulted), not a return address, and is looked up as it is.
 *   Every PC is counted: resolved, without symbol, or in no mapping.
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwpmcd/common-open.h"
#include "hwpmcd/common.h"
#include "hwpmcd/log.h"
#include "tools-int.h"
#include "tools-report.h"

const char *tools_report_func_name(struct tools_report *r, uint32_t f)
{
	return report_model__func_name(r->m, f);
}

const char *tools_report_func_image(const struct tools_report *r, uint32_t f)
{
	return report_model__func_image(r->m, f);
}

/* Whether function @f matches --callers/--callees (decided once per function). */
static bool focus_of(struct tools_report *r, uint32_t f)
{
	if (f >= r->focus_cap) {
		size_t n = r->focus_cap ? r->focus_cap : 1024;
		uint8_t *nf;

		while (n <= f)
			n *= 2;
		nf = realloc(r->focus, n);
		if (!nf)
			return false;
		memset(nf + r->focus_cap, 0, n - r->focus_cap);
		r->focus = nf;
		r->focus_cap = n;
	}
	if (!r->focus[f]) {
		const struct report_func *fn = &r->m->funcs[f];
		bool yes = fn->name && fn->kind != REPORT_F_COMM &&
			   (strcmp(fn->name, r->o.focus) == 0 ||
			    strcmp(tools_report_func_name(r, f), r->o.focus) == 0);

		r->focus[f] = yes ? 1 : 2;
	}
	return r->focus[f] == 1;
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
	return util_mix64((uint64_t)parent << 32 | func) & (t->htcap - 1);
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

/* Weighted counts (TOOLS_REP_W_ONE a sample) come from hostile logs: saturate. */
static uint64_t wadd(uint64_t a, uint64_t b)
{
	uint64_t c;

	return __builtin_add_overflow(a, b, &c) ? UINT64_MAX : c;
}

static uint64_t wmul(uint64_t a, uint64_t b)
{
	uint64_t c;

	return __builtin_mul_overflow(a, b, &c) ? UINT64_MAX : c;
}

/* Add one path (@ids, @n functions, in the order given) below the root, weighing @w. */
static int tree_add(struct tools_rep_tree *t, const uint32_t *ids, size_t n, int step, uint64_t w)
{
	uint32_t node = 0;

	t->n[0].count = wadd(t->n[0].count, w);
	for (size_t k = 0; k < n; k++) {
		node = tree_child(t, node, ids[step > 0 ? k : n - 1 - k]);
		if (!node)
			return -ENOMEM;
		t->n[node].count = wadd(t->n[node].count, w);
	}
	t->n[node].self = wadd(t->n[node].self, w);
	return 0;
}

/* Events ------------------------------------------------------------------ */

/* The event of PMC id @pmcid in the file being read, or NULL if unannounced. */
static struct tools_rep_event *event_find(struct tools_report *r, uint32_t pmcid)
{
	for (size_t i = 0; i < r->npmcmap; i++)
		if (r->pmcmap[i].pmcid == pmcid)
			return &r->ev[r->pmcmap[i].ev];
	return NULL;
}

/* Weights ----------------------------------------------------------------- */

/*
 * A sample stands for its event's period (pmclog-format.md 11.13): every count is
 * of weights, TOOLS_REP_W_ONE for a sample of the event's first period, so that a
 * rate that changed within the log (a budget's rate marks, 11.9) or between its
 * files is summed by time, not by count (perf report sums periods likewise).  At
 * the end weights_finish() turns them into samples at the first period: a log of
 * one period reads exactly as counts.  A weight is kept within 2^-20..2^20 of a
 * first-period sample (weight_capped counts the samples beyond).
 */
#define TOOLS_REP_W_MAX (TOOLS_REP_W_ONE << 20)

/* Event @e samples from now on every @period (ns when @by_freq: 10^9 / its frequency). */
static void event_set_period(struct tools_rep_event *e, double period, bool by_freq)
{
	double w;

	if (!(period > 0))
		return;
	e->period = period;
	e->by_freq = by_freq;
	if (!(e->period0 > 0))
		e->period0 = period;
	w = (double)TOOLS_REP_W_ONE * period / e->period0 + 0.5;
	e->capped = w < 1 || w > (double)TOOLS_REP_W_MAX;
	e->wcur = w < 1 ? 1 : w > (double)TOOLS_REP_W_MAX ? TOOLS_REP_W_MAX : (uint64_t)w;
}

/* A rate mark's @hz (11.9): of the events of this file that follow the rate marks. */
static void rate_apply(struct tools_report *r, uint32_t hz)
{
	if (!hz)
		return;
	for (size_t i = 0; i < r->npmcmap; i++) {
		struct tools_rep_event *e = &r->ev[r->pmcmap[i].ev];

		if (e->marked && e->follows_rate)
			event_set_period(e, 1e9 / hz, true);
	}
}

/*
 * One USERDATA word of a sampling mark (11.13): the mark, the PMC id, the kind and
 * flags, VALUE's low and high words.  A mark cut short by another record, of an
 * unknown kind or a zero VALUE is dropped.
 */
static void sampling_word(struct tools_report *r, uint32_t w)
{
	struct tools_rep_event *e;
	uint32_t kind;
	uint64_t v;

	if (r->samp_state > 0)
		r->samp_word[r->samp_state - 1] = w;
	if (++r->samp_state < 5)
		return;
	r->samp_state = 0;
	kind = r->samp_word[1] & PLOG_SAMPLING_KIND_MASK;
	v = (uint64_t)r->samp_word[3] << 32 | r->samp_word[2];
	e = event_find(r, r->samp_word[0]);
	if (!e || !v || (kind != PLOG_SAMPLING_PERIOD && kind != PLOG_SAMPLING_FREQ))
		return;
	e->marked = true;
	e->follows_rate = kind == PLOG_SAMPLING_FREQ && (r->samp_word[1] & PLOG_SAMPLING_F_RATE);
	if (kind == PLOG_SAMPLING_FREQ)
		event_set_period(e, 1e9 / (double)v, true);
	else
		event_set_period(e, (double)v, false);
}

/* Weighted counts to samples of the first period, rounded. */
static uint64_t wsamples(uint64_t w)
{
	return w / TOOLS_REP_W_ONE + (w % TOOLS_REP_W_ONE >= TOOLS_REP_W_ONE / 2);
}

static void tree_finish(struct tools_rep_tree *t)
{
	for (size_t i = 0; t->n && i < t->len; i++) {
		t->n[i].count = wsamples(t->n[i].count);
		t->n[i].self = wsamples(t->n[i].self);
	}
}

/* Every event's counts from weights to samples at its first period. */
static void weights_finish(struct tools_report *r)
{
	for (size_t i = 0; i < r->nev; i++) {
		struct tools_rep_event *e = &r->ev[i];

		e->sampled = e->samples;
		e->samples = wsamples(e->wsum);
		e->focus_samples = wsamples(e->focus_samples);
		for (size_t f = 0; f < e->ncounts; f++) {
			e->self[f] = wsamples(e->self[f]);
			e->total[f] = wsamples(e->total[f]);
		}
		tree_finish(&e->callers);
		tree_finish(&e->callees);
		tree_finish(&e->children);
		for (size_t k = 0; k < e->rows.n; k++) {
			e->rows.row[k].self = wsamples(e->rows.row[k].self);
			e->rows.row[k].total = wsamples(e->rows.row[k].total);
		}
		tree_finish(&e->focus_callers);
		tree_finish(&e->focus_callees);
	}
}

/*
 * PMC ids are a file's own: an event keeps the id of the file that announced it
 * first, and the next files' ids of the same name map to it (rotated logs of a
 * session allocate the same events, not always with the same ids).  Within one
 * file, ids are distinct events as they always were, even with one name.
 */
static int event_announce(struct tools_report *r, uint32_t pmcid, const char *name)
{
	struct tools_rep_event *e = event_find(r, pmcid), *n;
	size_t file_no = r->cur + 1;

	if (!e) {
		void *nm;

		for (size_t i = 0; i < r->nev && !e; i++)
			if (r->ev[i].file_no != file_no && strcmp(r->ev[i].name, name) == 0)
				e = &r->ev[i];
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
			e->wcur = TOOLS_REP_W_ONE;
			/* Only the trees an output needs (an unbuilt tree has no nodes, n == NULL). */
			if ((r->o.want_callers && tree_init(&e->callers) < 0) ||
			    (r->o.want_callees && tree_init(&e->callees) < 0) ||
			    (r->o.want_children && tree_init(&e->children) < 0) ||
			    (r->o.want_focus && (tree_init(&e->focus_callers) < 0 ||
						 tree_init(&e->focus_callees) < 0)))
				return -ENOMEM;
		}
		if (r->npmcmap >= 4096)
			return -E2BIG;
		nm = realloc(r->pmcmap, (r->npmcmap + 1) * sizeof(*r->pmcmap));
		if (!nm)
			return -ENOMEM;
		r->pmcmap = nm;
		r->pmcmap[r->npmcmap].pmcid = pmcid;
		r->pmcmap[r->npmcmap].ev = (uint32_t)(e - r->ev);
		r->npmcmap++;
	}
	e->file_no = file_no;
	e->marked = false;
	e->legacy_hz = 0;
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->selected = r->o.nevents == 0;
	for (size_t i = 0; i < r->o.nevents; i++)
		e->selected |= strcmp(r->o.events[i], name) == 0;
	return 0;
}

/* Count function @f of @w samples alike (r->sample_no names them) for event @e. */
static int event_count(struct tools_report *r, struct tools_rep_event *e, uint32_t f, bool self,
		       uint64_t w)
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
		e->self[f] = wadd(e->self[f], w);
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
		e->total[f] = wadd(e->total[f], w);
	}
	return 0;
}

/* Records ----------------------------------------------------------------- */

/* Times come from hostile files: saturate rather than overflow. */
static int64_t clamp_ns(__int128 x)
{
	return x > INT64_MAX ? INT64_MAX : x < INT64_MIN ? INT64_MIN : (int64_t)x;
}

/* INITIALIZE's wall clock (seconds and nanoseconds) as ns since the epoch. */
static int64_t wall_ns(int64_t sec, int64_t nsec)
{
	return clamp_ns((__int128)sec * 1000000000 + nsec);
}

/*
 * Seconds from the start of the (first) log (if @ret_s is not NULL: a division, per
 * sample only with --since/--until) and wall clock of the record at @tsc.
 */
static void record_times(const struct tools_report *r, uint64_t tsc, double *ret_s,
			 int64_t *ret_ns)
{
	const struct tools_rep_file *f = &r->files[r->cur];
	int64_t d = (int64_t)(tsc - f->init_tsc);

	/* Unordered or pre-INITIALIZE records (FreeBSD's per-CPU buffers) may be negative. */
	if (!f->have_head)
		*ret_ns = 0;
	else if (f->tsc_freq == 0)
		*ret_ns = f->start_ns;
	else if (f->tsc_freq == 1000000000) /* hwpmcd's nanosecond clock: no division */
		*ret_ns = clamp_ns((__int128)f->start_ns + d);
	else if (d > -(INT64_MAX / 1000000000) && d < INT64_MAX / 1000000000 &&
		 f->tsc_freq <= INT64_MAX)
		/* 64-bit arithmetic for the 292 years either side of INITIALIZE (per sample) */
		*ret_ns = clamp_ns((__int128)f->start_ns + d * 1000000000 / (int64_t)f->tsc_freq);
	else
		*ret_ns = clamp_ns((__int128)f->start_ns +
				   (__int128)d * 1000000000 / (__int128)f->tsc_freq);
	if (!ret_s)
		return;
	if (r->cur == 0 || !r->files[0].have_head)
		*ret_s = r->m->tsc_freq ? (double)(tsc - r->first_tsc) / (double)r->m->tsc_freq : 0;
	else
		*ret_s = (double)(*ret_ns - r->files[0].start_ns) / 1e9;
}

static bool time_pass(const struct tools_report *r, double t, int64_t ns)
{
	const struct tools_rep_opts *o = &r->o;

	if (o->since.kind == TOOLS_REP_TIME_LOG && t < o->since.log_s)
		return false;
	if (o->since.kind == TOOLS_REP_TIME_WALL && ns < o->since.wall_ns)
		return false;
	if (o->until.kind == TOOLS_REP_TIME_LOG && t > o->until.log_s)
		return false;
	if (o->until.kind == TOOLS_REP_TIME_WALL && ns > o->until.wall_ns)
		return false;
	return true;
}

static bool filter_pass(const struct tools_report *r, const struct plog_record *rec,
			const struct report_proc *p)
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
	if (o->ncgroups) {
		const struct report_cgroup *cg = report_model__proc_cgroup(p);

		ok = false;
		for (size_t i = 0; i < o->ncgroups && !ok && cg; i++)
			ok = report_cgroup_under(cg->path, o->cgroups[i]);
		if (!ok)
			return false;
	}
	if (o->ncomms) {
		const char *th = report_model__thread_name(r->m, rec->u.callchain.tid);

		ok = false;
		for (size_t i = 0; i < o->ncomms && !ok; i++)
			ok = (p && strcmp(report_model__proc_name(p), o->comms[i]) == 0) ||
			     (th && strcmp(th, o->comms[i]) == 0);
		if (!ok)
			return false;
	}
	return true;
}

/*
 * Samples.  Most samples repeat one another: a hot loop gives the same PCs in the
 * same thread again and again.  Two samples of one epoch (no record but samples
 * between them, so the model is the same: processes, mappings, thread names) with
 * the same event, pid, tid, mode and PCs are resolved into the same frames and
 * counted the same way, so each distinct one is resolved once, when first seen,
 * into an entry of r->sc, which counts the samples alike (hits).  The counts and
 * trees get them at flush: at the end, or when the arena holds TOOLS_REP_SC_BYTES.
 * Entries are flushed in the order first seen, so functions, tree nodes and
 * every output come out as if each sample were counted when read.  The PCs a
 * sample's resolution counts per function (report_model__finish()'s statistics)
 * are counted for its first sample at resolution and for the others at flush.
 */
#define TOOLS_REP_SC_BYTES ((size_t)16 << 20)

struct sc_ent {
	uint64_t hash;
	uint64_t hits;	 /* samples alike since it was made */
	uint64_t w;	 /* the weight of each (its event's, constant within an epoch) */
	uint64_t epoch;
	int32_t pid, tid;
	uint32_t cpu;	 /* the CPU: part of the key with --sort cpu only */
	uint32_t ev;	 /* index in r->ev */
	uint32_t user;	 /* a user-mode sample */
	uint32_t npc;	 /* the PCs (key) */
	uint32_t n;	 /* frames: ids[n] (innermost first), 0: no frame kept */
	uint32_t npf;	 /* PCs counted for a function: pf[npf] */
	uint32_t nloc;	 /* want_pcs: the locations of the PCs counted: locs[nloc] */
	uint32_t pcs_kernel;
	uint32_t unknown; /* a frame of it is [unknown] (in no mapping) */
	uint32_t timed;	  /* a JIT PC of it was named by the sample's time: never reused */
	/*
	 * then: uint64_t pc[npc]; uint32_t ids[n + 2] (ids[n]: the process name, ids[n + 1]
	 * its cgroup or 0); pf[npf]; locs[nloc]
	 */
};

static uint64_t *sc_pcs(struct sc_ent *x)
{
	return (uint64_t *)(x + 1);
}

static uint32_t *sc_ids(struct sc_ent *x)
{
	return (uint32_t *)(sc_pcs(x) + x->npc);
}

static size_t sc_size(uint32_t npc, uint32_t n, uint32_t npf, uint32_t nloc)
{
	size_t b = sizeof(struct sc_ent) + npc * sizeof(uint64_t) +
		   (n + 2 + npf + nloc) * sizeof(uint32_t);

	return (b + 7) & ~(size_t)7;
}

static uint64_t sc_hash(uint64_t epoch, const struct plog_record *c, uint32_t ev, bool user,
		       uint32_t cpu)
{
	/*
	 * Of the PCs, the first three (the leaf, where samples differ most) and the last:
	 * a fixed cost whatever the depth; chains alike there are told apart by the full
	 * comparison in sc_find().
	 */
	const uint64_t *pc = c->u.callchain.pc;
	uint32_t n = c->u.callchain.npc;
	uint64_t h = epoch * 0x9e3779b97f4a7c15ull ^ (uint32_t)c->u.callchain.pid ^
		     ((uint64_t)(uint32_t)c->u.callchain.tid << 32 | ev << 1 | user) * 31 ^
		     (uint64_t)n << 56 ^ (uint64_t)cpu << 40;

	h ^= util_mix64(pc[0] ^ (n > 1 ? pc[1] * 31 : 0)) +
	     util_mix64((n > 2 ? pc[2] : 0) ^ pc[n - 1] * 7);
	return util_mix64(h);
}

/* Count entry @x's samples into its event (tools_rep_event) and trees. */
static int sc_count(struct tools_report *r, struct sc_ent *x)
{
	struct tools_rep_event *e = &r->ev[x->ev];
	uint32_t *ids = sc_ids(x), *pf = ids + x->n + 2;
	size_t n = x->n;
	uint64_t w = wmul(x->hits, x->w);
	int err;

	for (uint32_t j = 0; j < x->npf; j++)
		r->m->funcs[pf[j]].pcs += x->hits - 1; /* the first at its resolution */
	if (n == 0)
		return 0;
	r->unknown_samples += x->unknown ? x->hits : 0;
	r->sample_no++;
	if ((uint32_t)r->sample_no == 0)
		r->sample_no++, memset(r->stamp, 0, r->stamp_cap * sizeof(*r->stamp));
	for (size_t i = 0; i < n; i++)
		if ((err = event_count(r, e, ids[i], i == 0, w)) < 0)
			return err;
	if (r->o.want_callers && (err = tree_add(&e->callers, ids, n, 1, w)) < 0)
		return err;
	/* ids[n] is the process name: the outermost frame; above it its cgroup, if known */
	if (r->o.want_callees && (err = tree_add(&e->callees, ids, n + 1, -1, w)) < 0)
		return err;
	if (r->o.want_children && (err = tree_add(&e->children, ids, n, -1, w)) < 0)
		return err;
	if (r->o.sort.generic) {
		struct tools_sort_sample s = {
			.pid = x->pid, .tid = x->tid, .cpu = x->cpu, .comm = ids[n],
			.cgroup = ids[n + 1], .ids = ids, .n = n, .w = w, .no = ++r->sort_no,
		};

		if ((err = tools_sort_count(r, e, &s)) < 0)
			return err;
	}
	if (r->o.want_pcs &&
	    (err = tools_pcs_add(&r->bypc, x->ev, x->pid, x->tid, ids[n], ids[n + 1],
				 r->o.sort.has[TOOLS_SORT_CPU] ? (int32_t)x->cpu : -1, pf + x->npf,
				 x->nloc, w)) < 0)
		return err;
	if (r->o.want_focus) {
		size_t in = n, out = n;

		for (size_t i = 0; i < n; i++) {
			if (focus_of(r, ids[i])) {
				if (in == n)
					in = i;
				out = i;
			}
		}
		if (in < n) {
			e->focus_samples = wadd(e->focus_samples, w);
			/* callers of F: from its innermost occurrence outwards */
			if ((err = tree_add(&e->focus_callers, ids + in, n - in, 1, w)) < 0)
				return err;
			/* callees of F: from its outermost occurrence inwards */
			if ((err = tree_add(&e->focus_callees, ids, out + 1, -1, w)) < 0)
				return err;
		}
	}
	return 0;
}

/* Count every entry, in the order made, and empty the cache. */
static int sc_flush(struct tools_report *r)
{
	struct tools_rep_samples *sc = &r->sc;
	int err;

	for (size_t off = 0; off < sc->len;) {
		struct sc_ent *x = (struct sc_ent *)(sc->arena + off);

		if ((err = sc_count(r, x)) < 0)
			return err;
		off += sc_size(x->npc, x->n, x->npf, x->nloc);
	}
	if (sc->n)
		memset(sc->ht, 0, sc->htcap * sizeof(*sc->ht));
	sc->len = sc->n = 0;
	sc->flushes++;
	return 0;
}

/* The entry of sample @c (hashed @h) in the cache, or NULL. */
static struct sc_ent *sc_find(struct tools_report *r, const struct plog_record *c, uint64_t h,
			      uint32_t ev, bool user, uint32_t cpu)
{
	struct tools_rep_samples *sc = &r->sc;

	if (!sc->htcap)
		return NULL;
	for (size_t s = h & (sc->htcap - 1); sc->ht[s]; s = (s + 1) & (sc->htcap - 1)) {
		struct sc_ent *x = (struct sc_ent *)(sc->arena + ((size_t)sc->ht[s] - 1) * 8);

		const uint64_t *pc = sc_pcs(x);
		uint32_t i = 0;

		if (x->hash != h || x->epoch != sc->epoch || x->timed || x->pid != c->u.callchain.pid ||
		    x->tid != c->u.callchain.tid || x->ev != ev || x->user != user ||
		    x->npc != c->u.callchain.npc || x->cpu != cpu)
			continue;
		while (i < x->npc && pc[i] == c->u.callchain.pc[i]) /* a few PCs: no memcmp call */
			i++;
		if (i == x->npc)
			return x;
	}
	return NULL;
}

/*
 * Resolve sample @c of event @e (process @p, NULL if unknown) into r->chain: its
 * frames (*ret_n), the outermost function of each counted PC (pf, *ret_npf) and
 * the number of kernel PCs counted (*ret_kernel).  0 or -ENOMEM.
 */
static int sample_resolve(struct tools_report *r, const struct plog_record *c,
			  struct report_proc *p, bool user_mode, uint32_t *pf, size_t *ret_n,
			  size_t *ret_npf, uint32_t *ret_kernel)
{
	size_t n = 0, k = 0, npf = 0, npc = c->u.callchain.npc;
	uint32_t *ids = r->chain, f;
	struct report_where wh;

	*ret_kernel = 0;
	if (!user_mode) {
		for (; k < npc && c->u.callchain.pc[k] >= TOOLS_REP_KERNEL_MIN; k++) {
			uint64_t pc = c->u.callchain.pc[k];

			if (!r->o.user_only) {
				(*ret_kernel)++;
				ids[n++] = f = report_model__resolve(r->m, NULL, k ? pc - 1 : pc);
				if (r->o.want_pcs && f &&
				    (report_model__locate(r->m, NULL, k ? pc - 1 : pc, &wh) < 0 ||
				     !(r->locs[npf] = tools_pcs_loc(&r->bypc, wh.img, wh.addr, f, k > 0))))
					return -ENOMEM;
				pf[npf++] = f;
			}
		}
	}
	if (!r->o.kernel_only) {
		/* The first user PC is where the thread stopped, in user and kernel mode alike. */
		size_t first = k;

		for (; k < npc; k++) {
			uint64_t pc = c->u.callchain.pc[k], look = k == first ? pc : pc - 1;
			size_t got;

			if (!p) {
				ids[n++] = f = r->m->unknown_func;
				r->m->funcs[f].pcs++;
				if (r->o.want_pcs &&
				    !(r->locs[npf] = tools_pcs_loc(&r->bypc, NULL, look, f, k != first)))
					return -ENOMEM;
				pf[npf++] = f;
				continue;
			}
			/* --inline: the functions inlined at the PC first (room: chain_cap) */
			got = report_model__resolve_frames(r->m, p, look, ids + n,
							   r->chain_cap - n - 1, &f);
			if (got == 0)
				return -ENOMEM;
			if (r->o.want_pcs &&
			    (report_model__locate(r->m, p, look, &wh) < 0 ||
			     !(r->locs[npf] = tools_pcs_loc(&r->bypc, wh.img, wh.addr, f, k != first))))
				return -ENOMEM;
			pf[npf++] = f;
			n += got < r->chain_cap - n - 1 ? got : r->chain_cap - n - 1;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (!ids[i])
			return -ENOMEM;
	*ret_n = n;
	*ret_npf = npf;
	return 0;
}

/* A new entry for sample @c (hashed @h), resolved; NULL when out of memory. */
static struct sc_ent *sc_new(struct tools_report *r, const struct plog_record *c, uint64_t h,
			     uint32_t ev, struct report_proc *p, bool user, uint32_t cpu)
{
	struct tools_rep_samples *sc = &r->sc;
	uint32_t pf[PLOG_CALLCHAIN_DEPTH_MAX + 1], kernel, cf = 0, cg = 0;
	size_t n, npf, nloc, need, s;
	uint64_t timed = r->m->jit_timed;
	struct sc_ent *x;

	if (sample_resolve(r, c, p, user, pf, &n, &npf, &kernel) < 0)
		return NULL;
	timed = r->m->jit_timed != timed;
	if (n && (r->o.want_callees || r->o.want_pcs || r->o.sort.has[TOOLS_SORT_COMM]) &&
	    !(cf = report_model__comm_func(r->m, p, c->u.callchain.pid, c->u.callchain.tid)))
		return NULL;
	if (n && r->o.want_cgroups && report_model__proc_cgroup(p) &&
	    !(cg = report_model__cgroup_func(r->m, p)))
		return NULL;
	nloc = r->o.want_pcs ? npf : 0; /* a location per PC counted */
	need = sc_size(c->u.callchain.npc, (uint32_t)n, (uint32_t)npf, (uint32_t)nloc);
	if (sc->len + need > TOOLS_REP_SC_BYTES && sc_flush(r) < 0)
		return NULL;
	if (sc->len + need > sc->cap) {
		size_t cap = sc->cap ? sc->cap : (size_t)256 << 10;
		uint8_t *a;

		while (cap < sc->len + need)
			cap *= 2;
		if (!(a = realloc(sc->arena, cap)))
			return NULL;
		sc->arena = a;
		sc->cap = cap;
	}
	if ((sc->n + 1) * 2 > sc->htcap) {
		size_t cap = sc->htcap ? sc->htcap * 2 : 4096;
		uint32_t *ht = calloc(cap, sizeof(*ht));

		if (!ht)
			return NULL;
		for (size_t i = 0; i < sc->htcap; i++) {
			const struct sc_ent *y;

			if (!sc->ht[i])
				continue;
			y = (const struct sc_ent *)(sc->arena + ((size_t)sc->ht[i] - 1) * 8);
			for (s = y->hash & (cap - 1); ht[s]; s = (s + 1) & (cap - 1))
				;
			ht[s] = sc->ht[i];
		}
		free(sc->ht);
		sc->ht = ht;
		sc->htcap = cap;
	}
	x = (struct sc_ent *)(sc->arena + sc->len);
	memset(x, 0, sizeof(*x));
	x->hash = h;
	x->hits = 1;
	x->w = r->ev[ev].wcur;
	x->epoch = sc->epoch;
	x->pid = c->u.callchain.pid;
	x->tid = c->u.callchain.tid;
	x->cpu = cpu;
	x->ev = ev;
	x->user = user;
	x->npc = c->u.callchain.npc;
	x->n = (uint32_t)n;
	x->npf = (uint32_t)npf;
	x->nloc = (uint32_t)nloc;
	x->pcs_kernel = kernel;
	x->timed = (uint32_t)timed;
	for (size_t i = 0; i < n && !x->unknown; i++)
		x->unknown = r->chain[i] == r->m->unknown_func;
	memcpy(sc_pcs(x), c->u.callchain.pc, x->npc * sizeof(uint64_t));
	memcpy(sc_ids(x), r->chain, n * sizeof(uint32_t));
	sc_ids(x)[n] = cf;
	sc_ids(x)[n + 1] = cg;
	memcpy(sc_ids(x) + n + 2, pf, npf * sizeof(uint32_t));
	memcpy(sc_ids(x) + n + 2 + npf, r->locs, nloc * sizeof(uint32_t));
	for (s = h & (sc->htcap - 1); sc->ht[s]; s = (s + 1) & (sc->htcap - 1))
		;
	sc->ht[s] = (uint32_t)(sc->len / 8 + 1);
	sc->len += need;
	sc->n++;
	return x;
}

static int on_sample(struct tools_report *r, const struct plog_record *rec)
{
	const struct plog_record *c = rec;
	struct tools_rep_event *e = event_find(r, c->u.callchain.pmcid);
	struct report_proc *p;
	bool user_mode = PLOG_CC_FLAGS(c->u.callchain.cpuflags) & PLOG_CC_F_USERSPACE;
	struct sc_ent *x;
	uint32_t ev, cpu;
	uint64_t h;
	double t = 0;
	int64_t ns;

	r->samples++;
	r->files[r->cur].samples++;
	record_times(r, rec->tsc, r->o.since.kind || r->o.until.kind ? &t : NULL, &ns);
	if (!e) {
		r->unannounced++;
		return 0;
	}
	if (!e->selected) {
		r->filtered++;
		return 0;
	}
	p = report_model__proc(r->m, c->u.callchain.pid);
	if ((r->o.since.kind || r->o.until.kind) && !time_pass(r, t, ns)) {
		r->filtered++;
		return 0;
	}
	r->in_window++;
	if (!filter_pass(r, rec, p) || (r->o.kernel_only && user_mode)) {
		r->filtered++;
		return 0;
	}
	/*
	 * An event no sampling mark spoke of in this file, in a file with rate marks: an
	 * earlier hwpmcd's budgeted profile, whose events all followed them.  Taken at
	 * its sample (the file's head says the rate before its events).
	 */
	if (!e->marked && r->file_rate_hz && e->legacy_hz != r->file_rate_hz) {
		e->legacy_hz = r->file_rate_hz;
		event_set_period(e, 1e9 / r->file_rate_hz, true);
	}
	ev = (uint32_t)(e - r->ev);
	report_model__set_time(r->m, ns); /* JIT code named by the entry of its time */
	if (r->o.script) { /* hwpmc script: the sample as read, then counted as usual */
		int err = tools_script_sample(r, c, e, p, user_mode, ns);

		if (err < 0)
			return err;
	}
	/* the CPU is a key of the samples alike only when the report sorts by it */
	cpu = r->o.sort.has[TOOLS_SORT_CPU] ? PLOG_CC_CPU(c->u.callchain.cpuflags) : 0;
	h = sc_hash(r->sc.epoch, c, ev, user_mode, cpu);
	if ((x = sc_find(r, c, h, ev, user_mode, cpu)))
		x->hits++;
	else if (!(x = sc_new(r, c, h, ev, p, user_mode, cpu)))
		return -ENOMEM;
	r->pcs += c->u.callchain.npc;
	r->pcs_kernel += x->pcs_kernel;
	if (x->n == 0) {
		r->no_frames++; /* a kernel-only sample under --user */
		return 0;
	}
	r->kept++;
	if (!r->have_span || ns < r->span_lo)
		r->span_lo = ns;
	if (!r->have_span || ns > r->span_hi)
		r->span_hi = ns;
	r->have_span = true;
	e->samples++;
	e->wsum = wadd(e->wsum, e->wcur);
	if (e->wcur != TOOLS_REP_W_ONE)
		e->varied = true;
	if (e->period > 0 && (!(e->period_lo > 0) || e->period < e->period_lo))
		e->period_lo = e->period;
	if (e->period > e->period_hi)
		e->period_hi = e->period;
	r->weight_capped += e->capped;
	if (p && report_proc__note_sample(p) == 0)
		r->sampled_pids++;
	return 0;
}

/*
 * One USERDATA word of a filter mark (pmclog-format.md 11.10): the mark, its
 * length, then the text 4 bytes a word.  A whole text that differs from the last
 * one kept is a change; control bytes of a hostile log are shown as '?', and a
 * length past TOOLS_REP_FILTER_TEXT drops the mark.
 */
static int filter_word(struct tools_report *r, const struct plog_record *rec)
{
	uint32_t w = rec->u.userdata.userdata;
	struct tools_rep_filter *v;
	double t;

	if (r->filt_state == 0) {
		record_times(r, rec->tsc, &t, &r->filt_ns);
		r->filt_state = 1;
		return 0;
	}
	if (r->filt_state == 1) {
		r->filt_len = w;
		r->filt_got = 0;
		r->filt_state = w < TOOLS_REP_FILTER_TEXT ? 2 : 0;
		if (r->filt_state == 0 || w > 0)
			return 0;
	} else {
		for (int i = 0; i < 4 && r->filt_got < r->filt_len; i++) {
			unsigned char c = (unsigned char)(w >> (8 * i));

			r->filt_buf[r->filt_got++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
		}
		if (r->filt_got < r->filt_len)
			return 0;
	}
	r->filt_state = 0;
	r->filt_buf[r->filt_len] = '\0';
	if (r->nfilters && strcmp(r->filters[r->nfilters - 1].text, r->filt_buf) == 0)
		return 0;
	v = util_grow(r->filters, &r->filters_cap, r->nfilters + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	r->filters = v;
	v[r->nfilters].text = strdup(r->filt_buf);
	if (!v[r->nfilters].text)
		return -ENOMEM;
	v[r->nfilters++].wall_ns = r->filt_ns;
	return 0;
}

static int on_record(struct tools_report *r, const struct plog_record *rec)
{
	r->records++;
	if (rec->type != PLOG_TYPE_CALLCHAIN)
		r->sc.epoch++; /* the model may change: samples alike only within an epoch */
	if (rec->type != PLOG_TYPE_USERDATA) {
		/* a mark cut short by another record is dropped */
		r->filt_state = r->samp_state = 0;
		r->lost_next = false;
	}
	if (rec->type != PLOG_TYPE_INITIALIZE && r->records == 1)
		r->first_tsc = rec->tsc;
	if (rec->type == PLOG_TYPE_INITIALIZE && !r->m->have_init) {
		struct tools_rep_file *f = &r->files[r->cur];

		r->file_rate_hz = 0;
		if (r->cur == 0)
			r->first_tsc = rec->tsc;
		f->have_head = true;
		f->start_ns = wall_ns(rec->u.initialize.ts_sec, rec->u.initialize.ts_nsec);
		f->init_tsc = rec->tsc;
		f->tsc_freq = rec->u.initialize.tsc_freq;
	}
	if (rec->tsc > r->files[r->cur].end_tsc)
		r->files[r->cur].end_tsc = rec->tsc;
	/* last_tsc is of the first file: the header's span of a single file is of it. */
	if (r->cur == 0 && rec->tsc > r->last_tsc)
		r->last_tsc = rec->tsc;
	switch (rec->type) {
	case PLOG_TYPE_DROPNOTIFY:
		r->dropnotify++;
		break;
	case PLOG_TYPE_PMCALLOCATE: {
		char name[32];
		int e = report_model__record(r->m, rec);

		if (e < 0)
			return e;
		snprintf(name, sizeof(name), "event-0x%x", rec->u.pmcallocate.event);
		if ((e = event_announce(r, rec->u.pmcallocate.pmcid, name)) < 0)
			return e;
		/* FreeBSD's own logs: pl_rate is the reload count (0: a counting PMC) */
		if (rec->u.pmcallocate.rate)
			event_set_period(event_find(r, rec->u.pmcallocate.pmcid),
					 (double)rec->u.pmcallocate.rate, false);
		return 0;
	}
	case PLOG_TYPE_PMCALLOCATEDYN: {
		int e = report_model__record(r->m, rec);

		if (e < 0)
			return e;
		return event_announce(r, rec->u.pmcallocatedyn.pmcid, rec->u.pmcallocatedyn.evname);
	}
	case PLOG_TYPE_PROC_CREATE:
		r->proc_creates++;
		break;
	case PLOG_TYPE_CALLCHAIN:
		return on_sample(r, rec);
	case PLOG_TYPE_USERDATA:
		if (r->filt_state || rec->u.userdata.userdata == PLOG_USERDATA_HWPMCD_FILTER)
			return filter_word(r, rec);
		if (r->lost_next) {
			r->lost_next = false;
			r->lost_samples += rec->u.userdata.userdata;
			return 0;
		}
		if (rec->u.userdata.userdata == PLOG_USERDATA_HWPMCD_LOST) {
			r->lost_next = true;
			return 0;
		}
		if (r->samp_state || rec->u.userdata.userdata == PLOG_USERDATA_HWPMCD_SAMPLING) {
			sampling_word(r, rec->u.userdata.userdata);
			return 0;
		}
		if (r->rate_next) {
			/* The word after the rate mark is the rate: keep it, with its time. */
			double t;
			int64_t ns;
			struct tools_rep_rate *v = util_grow(r->rates, &r->rates_cap, r->nrates + 1,
							     sizeof(*v));

			r->rate_next = false;
			if (!v)
				return -ENOMEM;
			r->rates = v;
			record_times(r, rec->tsc, &t, &ns);
			r->file_rate_hz = rec->u.userdata.userdata;
			rate_apply(r, rec->u.userdata.userdata);
			/* A file's starting rate that repeats the last one is no change. */
			if (!r->nrates || r->rates[r->nrates - 1].hz != rec->u.userdata.userdata)
				r->rates[r->nrates++] = (struct tools_rep_rate){
					.wall_ns = ns, .hz = rec->u.userdata.userdata };
			return 0;
		}
		if (rec->u.userdata.userdata == PLOG_USERDATA_HWPMCD_RATE) {
			r->rate_next = true;
			return 0;
		}
		break;
	default:
		r->rate_next = false;
		break;
	}
	return report_model__record(r->m, rec);
}

/* Files ------------------------------------------------------------------- */

/* Keep @s until tools_report_free(); consumed even on failure. */
static int own_take(struct tools_report *r, char *s)
{
	char **o = realloc(r->owned, (r->nowned + 1) * sizeof(*o));

	if (!o) {
		free(s);
		return -ENOMEM;
	}
	r->owned = o;
	r->owned[r->nowned++] = s;
	return 0;
}

/* Add @path (borrowed), or @owned (taken), as the next file of the profile. */
static int file_add(struct tools_report *r, const char *path, char *owned)
{
	struct tools_rep_file *n;
	char *esc;

	if (owned) {
		if (own_take(r, owned) < 0)
			return -ENOMEM;
		path = owned;
	}
	n = realloc(r->files, (r->nfiles + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	r->files = n;
	memset(&r->files[r->nfiles], 0, sizeof(*n));
	r->files[r->nfiles].path = path;
	/* A name read from a directory is anyone's bytes: printed escaped, as every name. */
	esc = malloc(strlen(path) * 4 + 4);
	if (!esc || own_take(r, esc) < 0)
		return -ENOMEM;
	r->files[r->nfiles++].shown = util_escape(path, strlen(path), esc, strlen(path) * 4 + 4);
	return 0;
}

/* The *.pmclog files of directory @dir (not recursing; side files end otherwise). */
static int dir_add(struct tools_report *r, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t before = r->nfiles;
	int e = 0;

	if (!d) {
		e = -errno;
		log_error("%s: %s", dir, strerror(-e));
		return e;
	}
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		struct stat st;
		char *path;

		if (len <= 7 || strcmp(de->d_name + len - 7, ".pmclog") != 0)
			continue;
		/* "DIR/" as given (shell completion adds it) gives no "DIR//FILE". */
		if (asprintf(&path, "%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/",
			     de->d_name) < 0) {
			e = -ENOMEM;
			break;
		}
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
			free(path);
			continue;
		}
		if ((e = file_add(r, NULL, path)) < 0)
			break;
	}
	closedir(d);
	if (e == 0 && r->nfiles == before) {
		log_error("%s: no *.pmclog file in this directory", dir);
		e = -ENOENT;
	}
	return e;
}

/*
 * The start of @f from its head (INITIALIZE, the first record) and, when the file
 * ends with a CLOSELOG, its end from that record's time stamp, which hwpmcd writes
 * no earlier than any record before it: 16 bytes from each end, not the samples.
 */
static int file_head(struct tools_report *r, struct tools_rep_file *f)
{
	struct plog_reader *rd = NULL;
	struct plog_record rec;
	uint8_t buf[4096], tail[PLOG_HEADER_SIZE];
	struct stat st;
	ssize_t n;
	int fd, e;

	fd = util_open_read(f->path, 0, NULL);
	if (fd < 0) {
		e = fd;
		log_error("%s: %s", f->shown, strerror(-e));
		return e;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		return dir_add(r, f->path) < 0 ? -ENOENT : 1; /* 1: replaced by its files */
	}
	n = util_read_some(fd, buf, sizeof(buf));
	e = plog_reader__new(PLOG_READER_SKIP_UNKNOWN, &rd);
	if (e == 0 && n > 0 && plog_reader__feed(rd, buf, (size_t)n) == 0 &&
	    plog_reader__next(rd, &rec) > 0 && rec.type == PLOG_TYPE_INITIALIZE) {
		f->have_head = true;
		f->start_ns = wall_ns(rec.u.initialize.ts_sec, rec.u.initialize.ts_nsec);
		f->init_tsc = rec.tsc;
		f->tsc_freq = rec.u.initialize.tsc_freq;
	}
	plog_reader__free(rd);
	if (f->have_head && f->tsc_freq && st.st_size >= (off_t)(2 * PLOG_HEADER_SIZE) &&
	    pread(fd, tail, sizeof(tail), st.st_size - PLOG_HEADER_SIZE) == (ssize_t)sizeof(tail)) {
		uint32_t h;
		uint64_t tsc;

		memcpy(&h, tail, sizeof(h));
		memcpy(&tsc, tail + 8, sizeof(tsc));
		h = le32toh(h);
		tsc = le64toh(tsc);
		if (h == PLOG_HEADER(PLOG_TYPE_CLOSELOG, PLOG_HEADER_SIZE) && tsc >= f->init_tsc) {
			f->have_end = true;
			f->end_ns = clamp_ns((__int128)f->start_ns + (__int128)(tsc - f->init_tsc) *
									1000000000 / f->tsc_freq);
		}
	}
	close(fd);
	return e < 0 ? e : 0;
}

static int cmp_files(const void *pa, const void *pb)
{
	const struct tools_rep_file *a = pa, *b = pb;

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return strcmp(a->path, b->path);
}

/* The window's wall-clock bounds, as far as they are known before reading. */
static void window_ns(const struct tools_report *r, int64_t *ret_lo, int64_t *ret_hi)
{
	const struct tools_rep_time *t[2] = { &r->o.since, &r->o.until };
	int64_t v[2] = { INT64_MIN, INT64_MAX };

	for (int i = 0; i < 2; i++) {
		if (t[i]->kind == TOOLS_REP_TIME_WALL)
			v[i] = t[i]->wall_ns;
		else if (t[i]->kind == TOOLS_REP_TIME_LOG && r->nfiles && r->files[0].have_head)
			v[i] = clamp_ns((__int128)r->files[0].start_ns +
					(__int128)(t[i]->log_s * 1e9));
	}
	*ret_lo = v[0];
	*ret_hi = v[1];
}

/*
 * The arguments as files in time order: directories expanded, the heads read,
 * files without INITIALIZE left out (a rotated file just created is empty), and
 * files wholly outside a time window marked skipped.  One file alone and "-" are
 * read as they are, without this.
 */
static int files_prepare(struct tools_report *r)
{
	bool timed = r->o.since.kind != TOOLS_REP_TIME_NONE || r->o.until.kind != TOOLS_REP_TIME_NONE;
	bool wall = r->o.since.kind == TOOLS_REP_TIME_WALL || r->o.until.kind == TOOLS_REP_TIME_WALL;
	int64_t lo, hi;
	size_t k = 0;
	int e;

	for (size_t i = 0; i < r->npaths; i++) {
		if (strcmp(r->paths[i], "-") == 0 && r->npaths > 1) {
			log_error("report: '-' (standard input) is read alone, not with other logs");
			return -EINVAL; /* tools_report_main() refuses it first */
		}
		if ((e = file_add(r, r->paths[i], NULL)) < 0)
			return e;
	}
	if (r->nfiles == 1 && strcmp(r->files[0].path, "-") == 0)
		return 0;
	/* Heads (directories expand in place of their entry, appended). */
	for (size_t i = 0; i < r->nfiles; i++) {
		struct stat st;

		if (r->nfiles == 1 && !wall && stat(r->files[0].path, &st) == 0 &&
		    !S_ISDIR(st.st_mode))
			return 0; /* one file: read as it always was */
		e = file_head(r, &r->files[i]);
		if (e < 0)
			return e;
		if (e == 1) {
			memmove(&r->files[i], &r->files[i + 1], (r->nfiles - i - 1) * sizeof(*r->files));
			r->nfiles--;
			i--;
		}
	}
	for (size_t i = 0; i < r->nfiles; i++) {
		if (r->files[i].have_head) {
			r->files[k++] = r->files[i];
		} else if (r->nfiles > 1) {
			log_warn("%s: no INITIALIZE record at its start (empty, or not a pmclog), "
				 "ignoring",
				 r->files[i].shown);
		} else {
			k++; /* alone: read it, and let the report say what it holds */
		}
	}
	if (k == 0) {
		log_error("report: none of the %zu files is a pmclog with an INITIALIZE record",
			  r->nfiles);
		return -ENOENT;
	}
	r->nfiles = k;
	qsort(r->files, r->nfiles, sizeof(*r->files), cmp_files);
	if (!timed)
		return 0;
	window_ns(r, &lo, &hi);
	for (size_t i = 0; i < r->nfiles; i++) {
		struct tools_rep_file *f = &r->files[i];

		if (!f->have_head)
			continue;
		/* Records of a file are no older than its INITIALIZE, no newer than its CLOSELOG. */
		f->skipped = f->start_ns > hi || (f->have_end && f->end_ns < lo);
		r->nskipped += f->skipped;
	}
	if (r->nskipped == r->nfiles) {
		char a[40], b[40];
		const struct tools_rep_file *last = &r->files[r->nfiles - 1];

		tools_report_format_time(r->files[0].start_ns, a, sizeof(a));
		if (last->have_end)
			tools_report_format_time(last->end_ns, b, sizeof(b));
		else
			tools_report_format_time(last->start_ns, b, sizeof(b));
		log_error("report: no file has samples in the window%s%s%s%s (%zu file%s from %s to "
			  "%s%s)",
			  r->o.since.kind ? " --since " : "", r->o.since_arg ? r->o.since_arg : "",
			  r->o.until.kind ? " --until " : "", r->o.until_arg ? r->o.until_arg : "",
			  r->nfiles, r->nfiles == 1 ? "" : "s", a, last->have_end ? "" : "at least ",
			  b);
		return -ENODATA;
	}
	return 0;
}

/* Loading ------------------------------------------------------------------- */

/* Read file @i (its status into it and r->status) into the model. */
static int file_read(struct tools_report *r, size_t i)
{
	struct tools_rep_file *f = &r->files[i];
	struct plog_reader *rd = NULL;
	struct plog_record rec;
	void *buf;
	int fd = -1, e = 0;
	ssize_t n;
	uint64_t total = 0;
	const struct plog_error *pe;

	r->cur = i;
	r->file = f->path;
	r->npmcmap = 0;
	if (strcmp(f->path, "-") == 0) {
		fd = STDIN_FILENO;
	} else {
		struct stat st;

		fd = util_open_read(f->path, 0, NULL);
		if (fd < 0) {
			e = fd;
			log_error("%s: %s", f->shown, strerror(-e));
			goto out;
		}
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			e = -EISDIR;
			log_error("%s: is a directory, not a pmclog file", f->shown);
			goto out;
		}
	}
	e = plog_reader__new(PLOG_READER_SKIP_UNKNOWN, &rd);
	if (e < 0)
		goto out;
	for (;;) {
		/* Read into the reader's own buffer: the bytes are copied once, by read(2). */
		if ((e = plog_reader__space(rd, TOOLS_LOG_READ_CHUNK, &buf)) < 0)
			goto out;
		n = util_read_some(fd, buf, TOOLS_LOG_READ_CHUNK);
		if (n < 0) {
			e = (int)n;
			log_error("%s: read: %s", f->shown, strerror(-e));
			goto out;
		}
		total += (uint64_t)n;
		if (n == 0)
			plog_reader__finish(rd);
		else if ((e = plog_reader__commit(rd, (size_t)n)) < 0)
			goto out;
		while ((e = plog_reader__next(rd, &rec)) > 0) {
			if ((e = on_record(r, &rec)) < 0) {
				log_error("%s: %s", f->shown, strerror(-e));
				goto out;
			}
		}
		if (e < 0 || n == 0)
			break;
		if (plog_reader__status(rd) == PLOG_STATUS_COMPLETE)
			break;
	}
	e = 0;
	f->read = true;
	f->status = plog_reader__status(rd);
	pe = plog_reader__error(rd);
	switch (f->status) {
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
	if (!r->m->have_init && r->records == 0) {
		/*
		 * Nothing a pmclog holds: an empty file, or another kind (a perf.data, a
		 * text file).  Alone it is the report's error; among others a warning, and
		 * it adds nothing (a profile's newest file may be 0 bytes for a moment).
		 */
		char magic[8];

		if (total == 0)
			snprintf(r->status_msg, sizeof(r->status_msg),
				 "empty (0 bytes): not a pmclog log");
		else if (fd > STDIN_FILENO && pread(fd, magic, 8, 0) == 8 &&
			 memcmp(magic, "PERFILE2", 8) == 0)
			snprintf(r->status_msg, sizeof(r->status_msg),
				 "a perf.data file, not a pmclog log: 'perf report -i' reads it");
		else
			snprintf(r->status_msg, sizeof(r->status_msg), "not a pmclog log: %s",
				 f->status == PLOG_STATUS_ERROR && pe ? pe->message
				 : f->status == PLOG_STATUS_TORN ? "shorter than one record"
								 : "no record");
		if (r->nfiles == 1) {
			log_error("%s: %s", f->shown, r->status_msg);
			e = -ENOEXEC;
			goto out;
		}
		log_warn("%s: %s; left out", f->shown, r->status_msg);
	} else if (f->status == PLOG_STATUS_ERROR || f->status == PLOG_STATUS_TORN) {
		log_warn("%s: %s", f->shown, r->status_msg);
	}
out:
	if (fd > STDIN_FILENO)
		close(fd);
	plog_reader__free(rd);
	return e;
}

/* Several files: the status of the whole, worst first. */
static void status_sum(struct tools_report *r)
{
	size_t by[PLOG_STATUS_MAX] = { 0 };
	char *p = r->status_msg;
	size_t left = sizeof(r->status_msg);
	int w;

	r->status = PLOG_STATUS_COMPLETE;
	for (size_t i = 0; i < r->nfiles; i++) {
		if (!r->files[i].read)
			continue;
		by[r->files[i].status]++;
		if (r->files[i].status == PLOG_STATUS_ERROR)
			r->status = PLOG_STATUS_ERROR;
	}
	w = snprintf(p, left, "%zu files read: %zu complete", r->nread, by[PLOG_STATUS_COMPLETE]);
	if (w > 0 && (size_t)w < left && by[PLOG_STATUS_TORN])
		p += w, left -= (size_t)w,
			w = snprintf(p, left, ", %zu torn (read up to the last whole record)",
				     by[PLOG_STATUS_TORN]);
	if (w > 0 && (size_t)w < left && by[PLOG_STATUS_NEED_DATA])
		p += w, left -= (size_t)w,
			w = snprintf(p, left, ", %zu without CLOSELOG", by[PLOG_STATUS_NEED_DATA]);
	if (w > 0 && (size_t)w < left && by[PLOG_STATUS_ERROR])
		p += w, left -= (size_t)w,
			w = snprintf(p, left, ", %zu malformed (read up to the error)",
				     by[PLOG_STATUS_ERROR]);
	if (w > 0 && (size_t)w < left && r->nskipped)
		(void)snprintf(p + w, left - (size_t)w, "; %zu outside the time window, not read",
			       r->nskipped);
}

int tools_report_load(struct tools_report *r)
{
	struct report_model_opts mo = { .symfs = r->o.symfs, .debugdir = r->o.debugdir,
					.kallsyms = r->o.kallsyms, .vdso = r->o.vdso,
					.rule = r->o.rule, .debuginfod = !r->o.no_debuginfod,
					.inline_frames = r->o.inline_frames, .srcline = r->o.srcline,
					.jit_dir = r->o.jit_dir };
	int e;

	/* Each PC is one frame, or with --inline up to REPORT_DWARF_DEPTH_MAX + 1. */
	r->chain_cap = (PLOG_CALLCHAIN_DEPTH_MAX + 2) *
		       (r->o.inline_frames ? REPORT_DWARF_DEPTH_MAX + 1 : 1);
	r->chain = malloc(r->chain_cap * sizeof(*r->chain));
	if (!r->chain)
		return -ENOMEM;
	r->o.want_focus = r->o.focus != NULL;
	if ((e = files_prepare(r)) < 0)
		return e;
	/* The vDSO is the kernel's, one image for all: any file's FILE.vdso. */
	for (size_t i = 0; !mo.vdso && r->nfiles > 1 && i < r->nfiles; i++) {
		char *v;
		int fd;

		if (asprintf(&v, "%s.vdso", r->files[i].path) < 0)
			return -ENOMEM;
		/* Readable (a confined report: its broker's answer)?  The model opens it later. */
		fd = util_open_read(v, UTIL_OPEN_REGULAR, NULL);
		if (fd < 0) {
			free(v);
			continue;
		}
		close(fd);
		if ((e = own_take(r, v)) < 0)
			return e;
		mo.vdso = v;
	}
	for (size_t i = 0; i < r->nfiles; i++) {
		if (r->files[i].skipped)
			continue;
		if (!r->m) {
			mo.log = r->files[i].path;
			if (report_model__new(&mo, &r->m) < 0)
				return -ENOMEM;
		} else if (report_model__next_log(r->m, r->files[i].path) < 0) {
			return -ENOMEM;
		}
		if ((e = file_read(r, i)) < 0)
			return e;
		r->nread++;
	}
	if ((e = sc_flush(r)) < 0)
		return e;
	weights_finish(r);
	report_model__finish(r->m);
	if (r->nfiles == 1)
		r->status = r->files[0].status;
	else
		status_sum(r);
	if ((r->o.since.kind || r->o.until.kind) && r->in_window == 0) {
		char a[40] = "?", b[40] = "?";
		const struct tools_rep_file *f0 = &r->files[0], *fl = &r->files[r->nfiles - 1];

		if (f0->have_head)
			tools_report_format_time(f0->start_ns, a, sizeof(a));
		if (fl->have_head)
			tools_report_format_time(
				clamp_ns((__int128)fl->start_ns +
					 (fl->tsc_freq ? (__int128)(int64_t)(fl->end_tsc - fl->init_tsc) *
								 1000000000 / fl->tsc_freq
						       : 0)),
				b, sizeof(b));
		log_error("report: no sample in the window%s%s%s%s (%zu file%s from %s to %s)",
			  r->o.since.kind ? " --since " : "", r->o.since_arg ? r->o.since_arg : "",
			  r->o.until.kind ? " --until " : "", r->o.until_arg ? r->o.until_arg : "",
			  r->nfiles, r->nfiles == 1 ? "" : "s", a, b);
		return -ENODATA;
	}
	return 0;
}

void tools_report_free(struct tools_report *r)
{
	free(r->rates);
	free(r->dup_base);
	r->dup_base = NULL;
	for (size_t i = 0; i < r->nfilters; i++)
		free(r->filters[i].text);
	free(r->filters);
	r->rates = NULL;
	for (size_t i = 0; i < r->nev; i++) {
		struct tools_rep_event *e = &r->ev[i];

		free(e->self);
		free(e->total);
		tree_exit(&e->callers);
		tree_exit(&e->callees);
		tree_exit(&e->focus_callers);
		tree_exit(&e->focus_callees);
		tree_exit(&e->children);
		tools_sort_rows_free(&e->rows);
	}
	free(r->ev);
	tools_sort_free(&r->sortst);
	report_model__free(r->m);
	r->m = NULL;
	free(r->focus);
	free(r->chain);
	tools_pcs_free(&r->bypc);
	free(r->sc.arena);
	free(r->sc.ht);
	free(r->stamp);
	free(r->pmcmap);
	free(r->files);
	for (size_t i = 0; i < r->nowned; i++)
		free(r->owned[i]);
	free(r->owned);
}
