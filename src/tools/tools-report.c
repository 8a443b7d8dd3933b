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
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwpmcd/common.h"
#include "hwpmcd/log.h"
#include "tools-report.h"

#define TOOLS_REP_READ_CHUNK (64u << 10)

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
			const struct report_proc *p, double t)
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

static int on_sample(struct tools_report *r, const struct plog_record *rec)
{
	const struct plog_record *c = rec;
	struct tools_rep_event *e = event_find(r, c->u.callchain.pmcid);
	struct report_proc *p;
	bool user_mode = PLOG_CC_FLAGS(c->u.callchain.cpuflags) & PLOG_CC_F_USERSPACE;
	double t = r->m->tsc_freq ? (double)(rec->tsc - r->first_tsc) / (double)r->m->tsc_freq : 0;
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
	p = report_model__proc(r->m, c->u.callchain.pid);
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
				ids[n++] = report_model__resolve(r->m, NULL, k ? pc - 1 : pc);
			}
		}
	}
	if (!r->o.kernel_only) {
		/* The first user PC is where the thread stopped, in user and kernel mode alike. */
		size_t first = k;

		for (; k < npc; k++) {
			uint64_t pc = c->u.callchain.pc[k];

			r->pcs++;
			ids[n++] = p ? report_model__resolve(r->m, p, k == first ? pc : pc - 1)
				     : r->m->unknown_func;
			if (!p)
				r->m->funcs[r->m->unknown_func].pcs++;
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
	if (p && report_proc__note_sample(p) == 0)
		r->sampled_pids++;
	for (size_t i = 0; i < n; i++)
		if ((err = event_count(r, e, ids[i], i == 0)) < 0)
			return err;
	if (r->o.want_callers && (err = tree_add(&e->callers, ids, n, 1)) < 0)
		return err;
	if (r->o.want_callees) {
		uint32_t cf = report_model__comm_func(r->m, p, c->u.callchain.pid, c->u.callchain.tid);

		if (!cf)
			return -ENOMEM;
		ids[n] = cf; /* the process name is the outermost frame */
		if ((err = tree_add(&e->callees, ids, n + 1, -1)) < 0)
			return err;
	}
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
	r->records++;
	if (rec->type != PLOG_TYPE_INITIALIZE && r->records == 1)
		r->first_tsc = rec->tsc;
	if (rec->type == PLOG_TYPE_INITIALIZE && !r->m->have_init)
		r->first_tsc = rec->tsc;
	if (rec->tsc > r->last_tsc)
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
		return event_announce(r, rec->u.pmcallocate.pmcid, name);
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
	default:
		break;
	}
	return report_model__record(r->m, rec);
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

	const struct report_model_opts mo = { .symfs = r->o.symfs, .debugdir = r->o.debugdir,
					      .kallsyms = r->o.kallsyms, .vdso = r->o.vdso,
					      .log = r->file, .rule = r->o.rule };

	r->chain = malloc((PLOG_CALLCHAIN_DEPTH_MAX + 2) * sizeof(*r->chain));
	buf = malloc(TOOLS_REP_READ_CHUNK);
	if (!r->chain || !buf || report_model__new(&mo, &r->m) < 0) {
		e = -ENOMEM;
		goto out;
	}
	r->o.want_focus = r->o.focus != NULL;
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
	report_model__finish(r->m);
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
	if (!r->m->have_init && r->records == 0)
		snprintf(r->status_msg, sizeof(r->status_msg), "empty: no record");
	if (r->status == PLOG_STATUS_ERROR || r->status == PLOG_STATUS_TORN)
		log_warn("%s: %s", r->file, r->status_msg);
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
	report_model__free(r->m);
	r->m = NULL;
	free(r->focus);
	free(r->chain);
	free(r->stamp);
}
