/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-calltree.c: `hwpmc report --calltree FILE`: the report in the callgrind
 * format (Valgrind's "Callgrind Format Specification"), as pmcstat -F writes it,
 * for KCachegrind and callgrind_annotate.
 *
 * PUBLIC INTERFACES
 *   tools_report_write_calltree()
 *
 * IMPLEMENTATION NOTES
 *   One cost column per selected event.  The report works per function, so a
 *   function is one position (line 0) of its image: ob= and fl= name the image (the
 *   kernel's functions their module), fn= the function with its self cost, then one
 *   cfn=/calls= pair per function it calls, whose cost is what the callee's
 *   subtree holds under this caller (the sum of the callees-tree nodes of that
 *   edge), calls= the samples on that edge (the count of calls is not sampled).
 *   Each process name is a function of its own (file "[process]") that calls the
 *   outermost frames of its stacks: callgrind's readers take a called function's
 *   inclusive cost from the calls into it, so every frame needs its caller, as
 *   "(below main)" in Callgrind's own files.
 *   Names are written in full on every line (no name compression): a file that
 *   any tool reads line by line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools-report.h"

struct edge {
	uint32_t caller, callee;
	uint64_t *cost; /* per selected event */
};

struct edges {
	struct edge *v;
	size_t n, cap;
	uint32_t *ht; /* index + 1 */
	size_t htcap;
	size_t nev;
};

static size_t edge_slot(const struct edges *es, uint32_t a, uint32_t b)
{
	return (size_t)(((uint64_t)a * 2654435761u) ^ ((uint64_t)b * 40503u)) & (es->htcap - 1);
}

/* The edge @a -> @b (added if new), or NULL out of memory. */
static struct edge *edge_get(struct edges *es, uint32_t a, uint32_t b)
{
	size_t i;

	if ((es->n + 1) * 2 > es->htcap) {
		size_t ncap = es->htcap ? es->htcap * 2 : 1024;
		uint32_t *nh = calloc(ncap, sizeof(*nh));

		if (!nh)
			return NULL;
		free(es->ht);
		es->ht = nh;
		es->htcap = ncap;
		for (size_t k = 0; k < es->n; k++) {
			i = edge_slot(es, es->v[k].caller, es->v[k].callee);
			while (es->ht[i])
				i = (i + 1) & (es->htcap - 1);
			es->ht[i] = (uint32_t)k + 1;
		}
	}
	for (i = edge_slot(es, a, b); es->ht[i]; i = (i + 1) & (es->htcap - 1)) {
		struct edge *e = &es->v[es->ht[i] - 1];

		if (e->caller == a && e->callee == b)
			return e;
	}
	if (es->n == es->cap) {
		size_t ncap = es->cap ? es->cap * 2 : 1024;
		struct edge *nv = realloc(es->v, ncap * sizeof(*nv));

		if (!nv)
			return NULL;
		es->v = nv;
		es->cap = ncap;
	}
	es->v[es->n].caller = a;
	es->v[es->n].callee = b;
	es->v[es->n].cost = calloc(es->nev, sizeof(uint64_t));
	if (!es->v[es->n].cost)
		return NULL;
	es->ht[i] = (uint32_t)++es->n;
	return &es->v[es->n - 1];
}

static int edge_cmp(const void *x, const void *y)
{
	const struct edge *a = x, *b = y;

	if (a->caller != b->caller)
		return a->caller < b->caller ? -1 : 1;
	return (a->callee > b->callee) - (a->callee < b->callee);
}

/* The image (or module, "[process]", or "[unknown]") a function's position is in. */
static const char *func_file(struct tools_report *r, uint32_t f)
{
	const char *img = tools_report_func_image(r, f);

	if (r->m->funcs[f].kind == REPORT_F_COMM)
		return "[process]";
	return img && img[0] ? img : "[unknown]";
}

/* One line of names: the report's names are escaped, but never trust a newline. */
static void put_name(FILE *out, const char *key, const char *name)
{
	fprintf(out, "%s%s", key, strcmp(key, "cmd") == 0 ? ": " : "=");
	for (; *name; name++)
		fputc(*name == '\n' || *name == '\r' ? '?' : *name, out);
	fputc('\n', out);
}

int tools_report_write_calltree(struct tools_report *r, FILE *out, const char *cmd)
{
	const struct report_model *m = r->m;
	struct edges es = { 0 };
	size_t nev = 0, k = 0, j = 0;
	int e = 0;

	for (size_t i = 0; i < r->nev; i++)
		nev += r->ev[i].selected;
	es.nev = nev ? nev : 1;
	/* Each edge of each event's callees tree below the process name. */
	for (size_t i = 0; i < r->nev && e == 0; i++) {
		const struct tools_rep_tree *t = &r->ev[i].callees;

		if (!r->ev[i].selected)
			continue;
		for (size_t n = 1; n < t->len && e == 0 && t->n; n++) {
			uint32_t p = t->n[n].parent;
			struct edge *ed;

			if (!p)
				continue;
			ed = edge_get(&es, t->n[p].func, t->n[n].func);
			if (!ed)
				e = -ENOMEM;
			else
				ed->cost[k] += t->n[n].count;
		}
		k++;
	}
	if (e < 0)
		goto out;
	if (es.n > 1)
		qsort(es.v, es.n, sizeof(*es.v), edge_cmp);
	fprintf(out, "# callgrind format\nversion: 1\ncreator: hwpmc report %s\n", HWPMCD_VERSION);
	put_name(out, "cmd", cmd);
	fprintf(out, "positions: line\nevents:");
	for (size_t i = 0; i < r->nev; i++)
		if (r->ev[i].selected)
			fprintf(out, " %s", r->ev[i].name);
	fputc('\n', out);
	for (uint32_t f = 1; f < m->nfuncs; f++) {
		bool any = false;

		for (size_t i = 0; i < r->nev; i++)
			any |= r->ev[i].selected && f < r->ev[i].ncounts && r->ev[i].self[f];
		while (j < es.n && es.v[j].caller < f)
			j++;
		if (!any && (j == es.n || es.v[j].caller != f))
			continue;
		fputc('\n', out);
		put_name(out, "ob", func_file(r, f));
		put_name(out, "fl", func_file(r, f));
		put_name(out, "fn", tools_report_func_name(r, f));
		fprintf(out, "0");
		for (size_t i = 0; i < r->nev; i++)
			if (r->ev[i].selected)
				fprintf(out, " %" PRIu64,
					f < r->ev[i].ncounts ? r->ev[i].self[f] : (uint64_t)0);
		fputc('\n', out);
		for (; j < es.n && es.v[j].caller == f; j++) {
			uint64_t calls = 0;

			for (size_t i = 0; i < nev; i++)
				calls += es.v[j].cost[i];
			put_name(out, "cob", func_file(r, es.v[j].callee));
			put_name(out, "cfl", func_file(r, es.v[j].callee));
			put_name(out, "cfn", tools_report_func_name(r, es.v[j].callee));
			fprintf(out, "calls=%" PRIu64 " 0\n0", calls);
			for (size_t i = 0; i < nev; i++)
				fprintf(out, " %" PRIu64, es.v[j].cost[i]);
			fputc('\n', out);
		}
	}
	e = ferror(out) ? -EIO : 0;
out:
	for (size_t i = 0; i < es.n; i++)
		free(es.v[i].cost);
	free(es.v);
	free(es.ht);
	return e;
}
