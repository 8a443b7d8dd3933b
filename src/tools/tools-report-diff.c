/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-report-diff.c: `hwpmc diff BASE NEW`: what changed between two profiles
 * (perf diff, pprof -diff_base), per function or per --sort key tuple.
 *
 * PUBLIC INTERFACES
 *   tools_diff_print(), tools_diff_json() (tools-report.h)
 *
 * IMPLEMENTATION NOTES
 *   Each profile is its own report (its own model: function ids differ), so rows are
 *   matched by what they print: a function by its name and image path, a --sort row
 *   by its values.  A row's self and total are shares of its profile's samples of
 *   the event, so profiles of different lengths or rates compare; the delta is NEW's
 *   share minus BASE's, in percentage points.  Rows sort by the absolute self delta,
 *   then the absolute total delta, then name.  Events are matched by name; one only
 *   one profile has is said, not diffed.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwpmcd/log.h"
#include "tools-report.h"

struct drow {
	char *key;   /* what matches it across profiles (NUL-separated fields, joined by \x1f) */
	char *label; /* as printed: fields separated by two spaces */
	uint64_t self[2], total[2];
	double dself, dtotal; /* percentage points, NEW - BASE */
};

struct dtab {
	struct drow *v;
	size_t n, cap;
};

static int dtab_add(struct dtab *t, const char *key, const char *label, int side, uint64_t self,
		    uint64_t total)
{
	struct drow *v = util_grow(t->v, &t->cap, t->n + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	t->v = v;
	memset(&v[t->n], 0, sizeof(v[t->n]));
	v[t->n].key = strdup(key);
	v[t->n].label = strdup(label);
	if (!v[t->n].key || !v[t->n].label) {
		free(v[t->n].key);
		free(v[t->n].label);
		return -ENOMEM;
	}
	v[t->n].self[side] = self;
	v[t->n].total[side] = total;
	t->n++;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* The rows of event @e of report @r into @t as side @side (0 BASE, 1 NEW). */
static int collect(struct tools_report *r, const struct tools_rep_event *e, int side,
		   struct dtab *t)
{
	char key[8192], label[8192], num[32];
	int err = 0;

	if (!r->o.sort.generic) {
		for (size_t f = 1; f < e->ncounts && !err; f++) {
			const char *name, *img;

			if (!e->total[f])
				continue;
			name = tools_report_func_name(r, (uint32_t)f);
			img = tools_report_func_image(r, (uint32_t)f);
			snprintf(key, sizeof(key), "%s\x1f%s", name, img);
			snprintf(label, sizeof(label), "%s  %s", name, base_name(img));
			err = dtab_add(t, key, label, side, e->self[f], e->total[f]);
		}
		return err;
	}
	for (size_t i = 0; i < e->rows.n && !err; i++) {
		const struct tools_rep_row *x = &e->rows.row[i];
		size_t kl = 0, ll = 0;

		if (!x->total)
			continue;
		key[0] = label[0] = '\0';
		for (size_t k = 0; k < r->o.sort.n; k++) {
			int kk = r->o.sort.key[k];
			const char *v = tools_sort_value(r, kk, x->v[k], num, sizeof(num));
			uint32_t f = tools_sort_value_func(r, kk, x->v[k]);

			kl += (size_t)snprintf(key + kl, kl < sizeof(key) ? sizeof(key) - kl : 0, "%s%s",
					       k ? "\x1f" : "", v);
			ll += (size_t)snprintf(label + ll, ll < sizeof(label) ? sizeof(label) - ll : 0,
					       "%s%s", k ? "  " : "",
					       kk == TOOLS_SORT_DSO ? base_name(v) : v);
			/* sym without dso: the image tells two functions of one name apart */
			if (f && !r->o.sort.has[TOOLS_SORT_DSO]) {
				const char *img = tools_report_func_image(r, f);

				kl += (size_t)snprintf(key + kl, kl < sizeof(key) ? sizeof(key) - kl : 0,
						       "\x1e%s", img);
				ll += (size_t)snprintf(label + ll,
						       ll < sizeof(label) ? sizeof(label) - ll : 0,
						       "  %s", base_name(img));
			}
		}
		err = dtab_add(t, key, label, side, x->self, x->total);
	}
	return err;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct drow *)a)->key, ((const struct drow *)b)->key);
}

static double mag(double x)
{
	return x < 0 ? -x : x;
}

static int cmp_delta(const void *pa, const void *pb)
{
	const struct drow *a = pa, *b = pb;
	double x = mag(a->dself), y = mag(b->dself);

	if (x != y)
		return x > y ? -1 : 1;
	x = mag(a->dtotal), y = mag(b->dtotal);
	if (x != y)
		return x > y ? -1 : 1;
	return strcmp(a->label, b->label);
}

static double share(uint64_t n, uint64_t of)
{
	return of ? 100.0 * (double)n / (double)of : 0.0;
}

/* The rows of the event both reports call @name: merged, with deltas, sorted. */
static int diff_rows(struct tools_report *rb, const struct tools_rep_event *eb,
		     struct tools_report *rn, const struct tools_rep_event *en, struct dtab *t)
{
	int err;
	size_t w = 0;

	if ((err = collect(rb, eb, 0, t)) < 0 || (err = collect(rn, en, 1, t)) < 0)
		return err;
	if (t->n == 0)
		return 0;
	qsort(t->v, t->n, sizeof(*t->v), cmp_key);
	for (size_t i = 0; i < t->n; i++) {
		if (w && strcmp(t->v[w - 1].key, t->v[i].key) == 0) {
			/* the same row in the other profile (a key is once per side) */
			t->v[w - 1].self[1] += t->v[i].self[1];
			t->v[w - 1].total[1] += t->v[i].total[1];
			t->v[w - 1].self[0] += t->v[i].self[0];
			t->v[w - 1].total[0] += t->v[i].total[0];
			free(t->v[i].key);
			free(t->v[i].label);
			continue;
		}
		t->v[w++] = t->v[i];
	}
	t->n = w;
	for (size_t i = 0; i < t->n; i++) {
		struct drow *x = &t->v[i];

		x->dself = share(x->self[1], en->samples) - share(x->self[0], eb->samples);
		x->dtotal = share(x->total[1], en->samples) - share(x->total[0], eb->samples);
	}
	qsort(t->v, t->n, sizeof(*t->v), cmp_delta);
	return 0;
}

static void dtab_free(struct dtab *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].key);
		free(t->v[i].label);
	}
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* Base node @j's hash: its parent, name and image. */
struct bnodes {
	const uint64_t *h;
};

static uint64_t node_hash(uint32_t parent, const char *name, const char *img)
{
	return util_mix64(parent * 0x9e3779b97f4a7c15ull ^ util_hash_str(name) ^
			  util_hash_str(img) * 31);
}

static uint64_t bnode_hash_of(const void *ctx, uint32_t id)
{
	return ((const struct bnodes *)ctx)->h[id];
}

int tools_diff_base_counts(struct tools_report *rb, const struct tools_rep_tree *bt,
			   struct tools_report *rn, const struct tools_rep_tree *nt, uint64_t *out)
{
	struct util_index idx = { 0 };
	uint64_t *h = calloc(bt->len + 1, sizeof(*h));
	uint32_t *map = calloc(nt->len + 1, sizeof(*map));
	struct bnodes ctx = { h };
	int err = 0;

	if (!h || !map || util_index_reserve(&idx, bt->len, 1024, bnode_hash_of, &ctx) < 0) {
		err = -ENOMEM;
		goto out;
	}
	/* BASE's nodes by (parent, name, image): one lookup per NEW node */
	for (uint32_t j = 1; j < bt->len; j++) {
		const struct tools_rep_node *b = &bt->n[j];
		size_t s;

		h[j] = node_hash(b->parent, tools_report_func_name(rb, b->func),
				 tools_report_func_image(rb, b->func));
		for (s = util_index_first(&idx, h[j]); idx.slot[s]; s = util_index_next(&idx, s))
			;
		idx.slot[s] = j;
	}
	/* a node's parent comes before it: map[] holds BASE's node of each NEW node + 1 */
	map[0] = 1;
	out[0] = bt->len ? bt->n[0].count : 0;
	for (uint32_t i = 1; i < nt->len; i++) {
		const struct tools_rep_node *n = &nt->n[i];
		uint32_t p = map[n->parent];
		const char *name, *img;
		uint64_t hn;

		out[i] = 0;
		if (!p)
			continue;
		name = tools_report_func_name(rn, n->func);
		img = tools_report_func_image(rn, n->func);
		hn = node_hash(p - 1, name, img);
		for (size_t s = util_index_first(&idx, hn); idx.slot[s]; s = util_index_next(&idx, s)) {
			const struct tools_rep_node *b = &bt->n[idx.slot[s]];

			if (h[idx.slot[s]] == hn && b->parent == p - 1 &&
			    strcmp(tools_report_func_name(rb, b->func), name) == 0 &&
			    strcmp(tools_report_func_image(rb, b->func), img) == 0) {
				map[i] = idx.slot[s] + 1;
				out[i] = b->count;
				break;
			}
		}
	}
out:
	util_index_free(&idx);
	free(h);
	free(map);
	return err;
}

static const struct tools_rep_event *event_named(const struct tools_report *r, const char *name)
{
	for (size_t i = 0; i < r->nev; i++)
		if (r->ev[i].selected && strcmp(r->ev[i].name, name) == 0)
			return &r->ev[i];
	return NULL;
}

static void say_unmatched(const struct tools_report *a, const struct tools_report *b,
			  const char *which, FILE *out)
{
	for (size_t i = 0; i < a->nev; i++)
		if (a->ev[i].selected && a->ev[i].samples && !event_named(b, a->ev[i].name))
			fprintf(out, "\n# %s: only in %s (%" PRIu64 " samples): not compared\n",
				a->ev[i].name, which, a->ev[i].samples);
}

int tools_diff_print(struct tools_report *rb, struct tools_report *rn, FILE *out,
		     const struct tools_rep_print_opts *po)
{
	int err = 0;

	for (size_t i = 0; i < rn->nev && !err; i++) {
		const struct tools_rep_event *en = &rn->ev[i], *eb;
		struct dtab t = { 0 };
		size_t shown;

		if (!en->selected || !(eb = event_named(rb, en->name)))
			continue;
		fprintf(out,
			"\n# %s: base %" PRIu64 " samples, new %" PRIu64 " samples; shares of each "
			"profile's samples, delta = new - base (points)\n",
			en->name, eb->samples, en->samples);
		if ((err = diff_rows(rb, eb, rn, en, &t)) < 0)
			break;
		fprintf(out, "#    self%%: base      new    delta   total%%: base      new    delta  ");
		for (size_t k = 0; rn->o.sort.generic && k < rn->o.sort.n; k++)
			fprintf(out, "%s%s", k ? "  " : "", tools_sort_key_name(rn->o.sort.key[k]));
		fprintf(out, "%s\n",
			!rn->o.sort.generic ? "function  image"
			: rn->o.sort.has[TOOLS_SORT_SYM] && !rn->o.sort.has[TOOLS_SORT_DSO] ? "  image"
											     : "");
		shown = po->limit && po->limit < t.n ? po->limit : t.n;
		for (size_t k = 0; k < shown; k++) {
			const struct drow *x = &t.v[k];

			fprintf(out, "%15.2f %8.2f %+8.2f %15.2f %8.2f %+8.2f  %s\n",
				share(x->self[0], eb->samples), share(x->self[1], en->samples), x->dself,
				share(x->total[0], eb->samples), share(x->total[1], en->samples),
				x->dtotal, x->label);
		}
		if (shown < t.n)
			fprintf(out, "# ... %zu more rows whose shares changed less; --limit 0 lists all\n",
				t.n - shown);
		dtab_free(&t);
	}
	say_unmatched(rb, rn, "BASE", out);
	say_unmatched(rn, rb, "NEW", out);
	return err;
}

int tools_diff_json(struct tools_report *rb, struct tools_report *rn, FILE *out,
		    const struct tools_rep_print_opts *po)
{
	json_t *root = json_object(), *evs = json_array();
	int err = 0;

	if (!root || !evs) {
		json_decref(root);
		json_decref(evs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < rn->nev && !err; i++) {
		const struct tools_rep_event *en = &rn->ev[i], *eb;
		struct dtab t = { 0 };
		json_t *rows, *eo;

		if (!en->selected || !(eb = event_named(rb, en->name)))
			continue;
		if ((err = diff_rows(rb, eb, rn, en, &t)) < 0)
			break;
		rows = json_array();
		for (size_t k = 0; rows && k < t.n && (!po->limit || k < po->limit); k++) {
			const struct drow *x = &t.v[k];
			json_t *keys = json_array();
			const char *p = x->key;

			/* the fields of the key (a function: name and image path) */
			while (keys) {
				size_t len = strcspn(p, "\x1f\x1e");

				json_array_append_new(keys, json_stringn(p, len));
				if (!p[len])
					break;
				p += len + 1;
			}
			json_array_append_new(
				rows, json_pack("{s:o?, s:s, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f}",
						"key", keys, "label", x->label, "base_self",
						(json_int_t)x->self[0], "new_self", (json_int_t)x->self[1],
						"base_total", (json_int_t)x->total[0], "new_total",
						(json_int_t)x->total[1], "base_self_percent",
						share(x->self[0], eb->samples), "new_self_percent",
						share(x->self[1], en->samples), "delta_self", x->dself,
						"base_total_percent", share(x->total[0], eb->samples),
						"new_total_percent", share(x->total[1], en->samples),
						"delta_total", x->dtotal));
		}
		eo = json_pack("{s:s, s:I, s:I, s:o}", "event", en->name, "base_samples",
			       (json_int_t)eb->samples, "new_samples", (json_int_t)en->samples, "rows",
			       rows ? rows : json_array());
		if (eo)
			json_array_append_new(evs, eo);
		dtab_free(&t);
	}
	json_object_set_new(root, "events", evs);
	json_object_set_new(root, "base", json_string(rb->file));
	json_object_set_new(root, "new", json_string(rn->file));
	if (!err && (json_dumpf(root, out, JSON_INDENT(1) | JSON_SORT_KEYS) < 0 ||
		     fputc('\n', out) == EOF))
		err = -EIO;
	json_decref(root);
	return err;
}
