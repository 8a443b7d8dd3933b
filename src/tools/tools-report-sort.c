/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-report-sort.c: `hwpmc report --sort KEYS`, the top list by any keys in any
 * order (perf report --sort comm,dso,sym): comm, pid, tid, dso, sym, srcline, cpu,
 * cgroup.
 *
 * PUBLIC INTERFACES
 *   tools_sort_parse(), tools_sort_count(), tools_sort_rows(), tools_sort_value(),
 *   tools_sort_free() (tools-report.h)
 *
 * IMPLEMENTATION NOTES
 *   A row is a tuple of key values with its self and total weights, per event.  The
 *   sample's keys (comm, pid, tid, cpu, cgroup) are one value for all its frames;
 *   the frame's keys (dso, sym, srcline) one per frame.  Self goes to the tuple of
 *   the leaf frame, total once per sample to each distinct tuple of its frames (a
 *   row's stamp is the last sample that counted it), so with only sample keys
 *   total equals self.  Values are numbers (pid, tid, cpu), the model's functions
 *   (comm, cgroup, sym) or ids of names interned here (dso: the image's path;
 *   srcline: "FILE:LINE"; sym under srcline, where the model keeps a function per
 *   line: image and plain name).  A function's values are looked up once (memo
 *   per function).  Rows are weighted as every count of the report
 *   (TOOLS_REP_W_ONE a sample while reading; weights_finish() rounds them).
 *   What this holds is bounded by the distinct tuples of the log's samples.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwpmcd/common.h"
#include "hwpmcd/log.h"
#include "tools-report.h"

static const char *const key_names[TOOLS_SORT_NKEYS] = {
	[TOOLS_SORT_COMM] = "comm", [TOOLS_SORT_PID] = "pid",	  [TOOLS_SORT_TID] = "tid",
	[TOOLS_SORT_DSO] = "dso",   [TOOLS_SORT_SYM] = "sym",	  [TOOLS_SORT_SRCLINE] = "srcline",
	[TOOLS_SORT_CPU] = "cpu",   [TOOLS_SORT_CGROUP] = "cgroup",
};

const char *tools_sort_key_name(enum tools_sort_key k)
{
	return k > 0 && k < TOOLS_SORT_NKEYS ? key_names[k] : "?";
}

int tools_sort_parse(const char *arg, struct tools_rep_sort *s)
{
	const char *p = arg;

	memset(s, 0, sizeof(*s));
	while (*p) {
		size_t len = strcspn(p, ",");
		int k = 0;

		for (int i = 1; i < TOOLS_SORT_NKEYS && !k; i++)
			if (strlen(key_names[i]) == len && strncmp(p, key_names[i], len) == 0)
				k = i;
		/* perf's names for two of them */
		if (!k && len == 6 && strncmp(p, "symbol", 6) == 0)
			k = TOOLS_SORT_SYM;
		if (!k && (len == 5 && strncmp(p, "image", 5) == 0))
			k = TOOLS_SORT_DSO;
		if (!k) {
			log_error("report: --sort '%s': unknown key '%.*s' (keys: comm, pid, tid, dso, "
				  "sym, srcline, cpu, cgroup, comma-separated in the order wanted)",
				  arg, (int)(len > 64 ? 64 : len), p);
			return -EINVAL;
		}
		for (size_t i = 0; i < s->n; i++) {
			if (s->key[i] == k) {
				log_error("report: --sort '%s': '%s' is given twice", arg, key_names[k]);
				return -EINVAL;
			}
		}
		s->key[s->n++] = (uint8_t)k;
		s->has[k] = true;
		s->frames |= k == TOOLS_SORT_DSO || k == TOOLS_SORT_SYM || k == TOOLS_SORT_SRCLINE;
		p += len;
		if (*p == ',' && *++p == '\0') {
			log_error("report: --sort '%s': a key is missing after the last ','", arg);
			return -EINVAL;
		}
	}
	if (s->n == 0) {
		log_error("report: --sort '': name one key or more (comm, pid, tid, dso, sym, "
			  "srcline, cpu, cgroup)");
		return -EINVAL;
	}
	/* the default, sym alone, is the per-function top list */
	s->generic = !(s->n == 1 && s->key[0] == TOOLS_SORT_SYM);
	return 0;
}

/* Names ------------------------------------------------------------------- */

static uint64_t str_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return util_mix64(h);
}

static uint64_t name_hash_of(const void *ctx, uint32_t id)
{
	return ((const struct tools_rep_sortstate *)ctx)->names[id - 1].hash;
}

/* The id (>= 1) of name @s (@len bytes; may hold NULs), first seen with function @f; 0: no memory. */
static uint32_t name_id(struct tools_rep_sortstate *st, const char *s, size_t len, uint32_t f)
{
	uint64_t h = str_hash(s, len);
	size_t slot;

	if (util_index_reserve(&st->nidx, st->nnames + 1, 1024, name_hash_of, st) < 0)
		return 0;
	for (slot = util_index_first(&st->nidx, h); st->nidx.slot[slot];
	     slot = util_index_next(&st->nidx, slot)) {
		const struct tools_rep_sortname *x = &st->names[st->nidx.slot[slot] - 1];

		if (x->hash == h && x->len == len && memcmp(x->s, s, len) == 0)
			return st->nidx.slot[slot];
	}
	if (st->nnames == st->namecap) {
		size_t cap = st->namecap ? st->namecap * 2 : 256;
		struct tools_rep_sortname *v = realloc(st->names, cap * sizeof(*v));

		if (!v)
			return 0;
		st->names = v;
		st->namecap = cap;
	}
	{
		struct tools_rep_sortname *x = &st->names[st->nnames];

		if (!(x->s = malloc(len + 1)))
			return 0;
		memcpy(x->s, s, len);
		x->s[len] = '\0';
		x->len = len;
		x->hash = h;
		x->func = f;
	}
	st->nidx.slot[slot] = (uint32_t)++st->nnames;
	return (uint32_t)st->nnames;
}

/* The value of frame key @k (dso, sym, srcline) of function @f; 0 when out of memory. */
static uint32_t frame_value(struct tools_report *r, int k, uint32_t f)
{
	struct tools_rep_sortstate *st = &r->sortst;
	int m = k == TOOLS_SORT_DSO ? 0 : k == TOOLS_SORT_SYM ? 1 : 2;
	char buf[4096];
	const struct report_func *fn;
	const char *img, *plain, *file;
	uint32_t v;
	int len;

	if (k == TOOLS_SORT_SYM && !r->o.srcline)
		return f; /* a function is a symbol */
	if (f >= st->memocap) {
		size_t cap = st->memocap ? st->memocap : 1024;

		while (cap <= f)
			cap *= 2;
		for (int i = 0; i < 3; i++) {
			uint32_t *a = realloc(st->memo[i], cap * sizeof(*a));

			if (!a)
				return 0;
			memset(a + st->memocap, 0, (cap - st->memocap) * sizeof(*a));
			st->memo[i] = a;
		}
		st->memocap = cap;
	}
	if (st->memo[m][f])
		return st->memo[m][f];
	fn = &r->m->funcs[f];
	img = tools_report_func_image(r, f);
	plain = report_model__func_plain_name(r->m, f);
	if (k == TOOLS_SORT_DSO) {
		len = snprintf(buf, sizeof(buf), "%s", img);
	} else if (k == TOOLS_SORT_SYM) {
		/* the image, a NUL, the name: a function, whatever line the model split it by */
		len = snprintf(buf, sizeof(buf), "%s%c%s", img, '\0', plain);
	} else if (fn->file && fn->line) {
		file = strrchr(fn->file, '/');
		len = snprintf(buf, sizeof(buf), "%s:%" PRIu32, file ? file + 1 : fn->file, fn->line);
	} else {
		/* no line: the function, so that such rows still say where */
		len = snprintf(buf, sizeof(buf), "?? (%s)", plain);
	}
	if (len < 0)
		return 0;
	if ((size_t)len >= sizeof(buf))
		len = sizeof(buf) - 1;
	v = name_id(st, buf, (size_t)len, f);
	st->memo[m][f] = v;
	return v;
}

/* Rows -------------------------------------------------------------------- */

static uint64_t row_hash(const uint32_t *v, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < n; i++)
		h = util_mix64(h ^ v[i]) + i;
	return h;
}

static uint64_t row_hash_of(const void *ctx, uint32_t id)
{
	return ((const struct tools_rep_rows *)ctx)->row[id - 1].hash;
}

static struct tools_rep_row *row_find(struct tools_rep_rows *t, const uint32_t *v, size_t n)
{
	uint64_t h = row_hash(v, n);
	size_t slot;

	if (util_index_reserve(&t->idx, t->n + 1, 1024, row_hash_of, t) < 0)
		return NULL;
	for (slot = util_index_first(&t->idx, h); t->idx.slot[slot];
	     slot = util_index_next(&t->idx, slot)) {
		struct tools_rep_row *x = &t->row[t->idx.slot[slot] - 1];

		if (x->hash == h && memcmp(x->v, v, n * sizeof(*v)) == 0)
			return x;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct tools_rep_row *a = realloc(t->row, cap * sizeof(*a));

		if (!a)
			return NULL;
		t->row = a;
		t->cap = cap;
	}
	t->idx.slot[slot] = (uint32_t)t->n + 1;
	memset(&t->row[t->n], 0, sizeof(t->row[t->n]));
	t->row[t->n].hash = h;
	memcpy(t->row[t->n].v, v, n * sizeof(*v));
	return &t->row[t->n++];
}

static uint64_t sadd(uint64_t a, uint64_t b)
{
	uint64_t c;

	return __builtin_add_overflow(a, b, &c) ? UINT64_MAX : c;
}

int tools_sort_count(struct tools_report *r, struct tools_rep_event *e,
		     const struct tools_sort_sample *s)
{
	const struct tools_rep_sort *so = &r->o.sort;
	uint32_t v[TOOLS_SORT_MAX];
	size_t nf = so->frames ? s->n : 1;

	for (size_t i = 0; i < nf; i++) {
		struct tools_rep_row *row;

		for (size_t k = 0; k < so->n; k++) {
			switch (so->key[k]) {
			case TOOLS_SORT_COMM:
				v[k] = s->comm;
				break;
			case TOOLS_SORT_PID:
				v[k] = (uint32_t)s->pid;
				break;
			case TOOLS_SORT_TID:
				v[k] = (uint32_t)s->tid;
				break;
			case TOOLS_SORT_CPU:
				v[k] = s->cpu;
				break;
			case TOOLS_SORT_CGROUP:
				v[k] = s->cgroup;
				break;
			default:
				if (!(v[k] = frame_value(r, so->key[k], s->ids[i])))
					return -ENOMEM;
			}
		}
		if (!(row = row_find(&e->rows, v, so->n)))
			return -ENOMEM;
		if (i == 0)
			row->self = sadd(row->self, s->w);
		if (row->stamp != s->no) { /* each tuple once per sample */
			row->stamp = s->no;
			row->total = sadd(row->total, s->w);
		}
	}
	return 0;
}

/* Printing ---------------------------------------------------------------- */

const char *tools_sort_value(struct tools_report *r, int k, uint32_t v, char *buf, size_t len)
{
	const struct tools_rep_sortstate *st = &r->sortst;

	switch (k) {
	case TOOLS_SORT_PID:
	case TOOLS_SORT_TID:
		snprintf(buf, len, "%" PRId32, (int32_t)v);
		return buf;
	case TOOLS_SORT_CPU:
		snprintf(buf, len, "%" PRIu32, v);
		return buf;
	case TOOLS_SORT_CGROUP:
		return v ? tools_report_func_name(r, v) : "-";
	case TOOLS_SORT_COMM:
		return v ? tools_report_func_name(r, v) : "[unknown]";
	case TOOLS_SORT_SYM:
		if (!r->o.srcline)
			return tools_report_func_name(r, v);
		return v && v <= st->nnames ? report_model__func_plain_name(r->m, st->names[v - 1].func)
					    : "?";
	default:
		return v && v <= st->nnames ? st->names[v - 1].s : "?";
	}
}

uint32_t tools_sort_value_func(const struct tools_report *r, int k, uint32_t v)
{
	if (k != TOOLS_SORT_SYM || !r->o.srcline)
		return k == TOOLS_SORT_SYM ? v : 0;
	return v && v <= r->sortst.nnames ? r->sortst.names[v - 1].func : 0;
}

static struct tools_report *cmp_rep;
static const struct tools_rep_event *cmp_ev;

static int cmp_rows(const void *pa, const void *pb)
{
	const struct tools_rep_row *a = &cmp_ev->rows.row[*(const uint32_t *)pa];
	const struct tools_rep_row *b = &cmp_ev->rows.row[*(const uint32_t *)pb];
	const struct tools_rep_sort *so = &cmp_rep->o.sort;
	char ba[32], bb[32];

	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	for (size_t k = 0; k < so->n; k++) {
		int c;

		if (a->v[k] == b->v[k])
			continue;
		if (so->key[k] == TOOLS_SORT_PID || so->key[k] == TOOLS_SORT_TID ||
		    so->key[k] == TOOLS_SORT_CPU)
			return (int32_t)a->v[k] < (int32_t)b->v[k] ? -1 : 1;
		c = strcmp(tools_sort_value(cmp_rep, so->key[k], a->v[k], ba, sizeof(ba)),
			   tools_sort_value(cmp_rep, so->key[k], b->v[k], bb, sizeof(bb)));
		if (c)
			return c;
	}
	return 0;
}

uint32_t *tools_sort_rows(struct tools_report *r, const struct tools_rep_event *e, size_t *ret_n)
{
	uint32_t *v = malloc((e->rows.n + 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < e->rows.n; i++)
		if (e->rows.row[i].total)
			v[n++] = (uint32_t)i;
	cmp_rep = r;
	cmp_ev = e;
	qsort(v, n, sizeof(*v), cmp_rows);
	*ret_n = n;
	return v;
}

void tools_sort_rows_free(struct tools_rep_rows *t)
{
	free(t->row);
	util_index_free(&t->idx);
	memset(t, 0, sizeof(*t));
}

void tools_sort_free(struct tools_rep_sortstate *st)
{
	for (size_t i = 0; i < st->nnames; i++)
		free(st->names[i].s);
	free(st->names);
	util_index_free(&st->nidx);
	for (int i = 0; i < 3; i++)
		free(st->memo[i]);
	memset(st, 0, sizeof(*st));
}
