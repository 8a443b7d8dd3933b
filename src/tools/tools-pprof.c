/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-pprof.c: `hwpmc report --pprof FILE`: the report as a gzip-compressed pprof
 * profile (pprof.proto, encoded by protobuf-c, compressed by zlib).
 *
 * PUBLIC INTERFACES
 *   tools_report_write_pprof()
 *
 * IMPLEMENTATION NOTES
 *   One sample type per selected event ("EVENT", unit "count"), so a profile of two
 *   events carries both and pprof's -sample_index picks one.  The samples are the
 *   paths of each event's callees tree (folded stacks, process name first) that end
 *   in a node with self samples: location ids leaf first, the process name not a
 *   frame but a label "comm" (pprof -tagfocus), and the cgroup the log said for the
 *   process (pmclog-format.md 11.12; the callees_cg tree) a label "cgroup", which
 *   Pyroscope and pprof's -tagfocus select containers by.  The report works per function, so
 *   a location is a function: location id = function id = the model's function
 *   index (never 0), at the function's address in its image, with one line naming
 *   the function.  With --srcline a function of the model is a function at one
 *   source line: its pprof function has the source file as filename and its line
 *   the line; with --inline the inlined functions are locations of their own
 *   (pprof's -traces and -top see the same frames as the report).  A mapping per image (its path and GNU build id in hex); the
 *   kernel's functions have the mapping of their module ("[kernel.kallsyms]" or
 *   "[MODULE]").  Strings are interned once; entry 0 is "".  The span is the
 *   reported samples' wall clock.  Everything is built in memory from what the
 *   report holds (bounded by the log's distinct functions and stacks), packed once
 *   and deflated into the file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "pprof.pb-c.h"
#include "tools-report.h"
#include "hwpmcd/common.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_valuetype;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* The string table: an array and an open-addressing index of it. */
struct strtab {
	char **s;
	size_t n, cap;
	uint32_t *ht; /* index + 1 */
	size_t htcap;
};

/* The index of @s, added if new; -1 when out of memory. */
static int64_t str_id(struct strtab *t, const char *s)
{
	size_t i;

	if ((t->n + 1) * 2 > t->htcap) {
		size_t ncap = t->htcap ? t->htcap * 2 : 1024;
		uint32_t *nh = calloc(ncap, sizeof(*nh));

		if (!nh)
			return -1;
		for (size_t k = 0; k < t->n; k++) {
			i = util_hash_str(t->s[k]) & (ncap - 1);
			while (nh[i])
				i = (i + 1) & (ncap - 1);
			nh[i] = (uint32_t)k + 1;
		}
		free(t->ht);
		t->ht = nh;
		t->htcap = ncap;
	}
	i = util_hash_str(s) & (t->htcap - 1);
	for (; t->ht[i]; i = (i + 1) & (t->htcap - 1))
		if (strcmp(t->s[t->ht[i] - 1], s) == 0)
			return t->ht[i] - 1;
	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 256;
		char **ns = realloc(t->s, ncap * sizeof(*ns));

		if (!ns)
			return -1;
		t->s = ns;
		t->cap = ncap;
	}
	t->s[t->n] = strdup(s);
	if (!t->s[t->n])
		return -1;
	t->ht[i] = (uint32_t)++t->n;
	return (int64_t)t->n - 1;
}

static void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->ht);
}

/* Everything the profile points to, freed at once. */
struct pp {
	struct tools_report *r;
	struct strtab st;
	pb_profile prof;
	pb_valuetype *types, period_type;
	pb_valuetype **type_ptrs;
	pb_function *funcs;
	pb_function **func_ptrs;
	pb_location *locs;
	pb_location **loc_ptrs;
	pb_line *lines;
	pb_line **line_ptrs;
	pb_mapping *maps;
	pb_mapping **map_ptrs;
	size_t nmaps;
	uintptr_t *map_keys; /* each mapping's image, or its module name's string index */
	uint32_t *map_ht;    /* mapping index + 1 by util_mix64(key): map_htcap slots */
	size_t map_htcap;
	pb_sample **samples;
	size_t nsamples, samples_cap;
	int64_t comm_key, cgroup_key;
};

/*
 * The mapping id of @key (an image's address, or a kernel module name's string
 * index: far below any address), named @name with @build_id; 0 out of memory.
 */
static uint64_t mapping_id(struct pp *p, uintptr_t key, const char *name, const char *build_id)
{
	int64_t fn, bid;
	size_t s;

	/* By hash: a linear search per function was O(functions x images). */
	for (s = util_mix64(key) & (p->map_htcap - 1); p->map_ht[s]; s = (s + 1) & (p->map_htcap - 1))
		if (p->map_keys[p->map_ht[s] - 1] == key)
			return p->map_ht[s];
	fn = str_id(&p->st, name);
	bid = str_id(&p->st, build_id);
	if (fn < 0 || bid < 0)
		return 0;
	perftools__profiles__mapping__init(&p->maps[p->nmaps]);
	p->maps[p->nmaps].id = p->nmaps + 1;
	p->maps[p->nmaps].filename = fn;
	p->maps[p->nmaps].build_id = bid;
	p->maps[p->nmaps].has_functions = true;
	p->map_ptrs[p->nmaps] = &p->maps[p->nmaps];
	p->map_keys[p->nmaps] = key;
	p->map_ht[s] = (uint32_t)p->nmaps + 1;
	return ++p->nmaps;
}

/* Functions, locations and mappings: one function and one location per model function. */
static int build_funcs(struct pp *p)
{
	struct report_model *m = p->r->m;
	size_t n = m->nfuncs > 1 ? m->nfuncs - 1 : 0;

	p->funcs = calloc(n + 1, sizeof(*p->funcs));
	p->func_ptrs = calloc(n + 1, sizeof(*p->func_ptrs));
	p->locs = calloc(n + 1, sizeof(*p->locs));
	p->loc_ptrs = calloc(n + 1, sizeof(*p->loc_ptrs));
	p->lines = calloc(n + 1, sizeof(*p->lines));
	p->line_ptrs = calloc(n + 1, sizeof(*p->line_ptrs));
	p->maps = calloc(n + 1, sizeof(*p->maps));
	p->map_ptrs = calloc(n + 1, sizeof(*p->map_ptrs));
	p->map_keys = calloc(n + 1, sizeof(*p->map_keys));
	for (p->map_htcap = 16; p->map_htcap < 2 * (n + 1); p->map_htcap *= 2)
		;
	p->map_ht = calloc(p->map_htcap, sizeof(*p->map_ht));
	if (!p->funcs || !p->func_ptrs || !p->locs || !p->loc_ptrs || !p->lines || !p->line_ptrs ||
	    !p->maps || !p->map_ptrs || !p->map_keys || !p->map_ht)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		uint32_t f = (uint32_t)k + 1;
		const struct report_func *fn = &m->funcs[f];
		const char *name = report_model__func_plain_name(m, f);
		int64_t ni = str_id(&p->st, name);
		int64_t si = str_id(&p->st, fn->name && fn->kind != REPORT_F_COMM ? fn->name : name);
		/* --srcline: the source file and line; else the image is the function's file */
		int64_t fi = str_id(&p->st, fn->file && fn->line ? fn->file
								   : tools_report_func_image(p->r, f));
		uint64_t mid = 0;

		if (ni < 0 || si < 0 || fi < 0)
			return -ENOMEM;
		if (fn->img) {
			char bid[2 * MAPLOG_BUILD_ID_MAX + 1] = "";

			for (size_t b = 0; b < fn->img->info.build_id_len && !fn->img->info_err; b++)
				snprintf(bid + 2 * b, 3, "%02x", fn->img->info.build_id[b]);
			mid = mapping_id(p, (uintptr_t)fn->img, fn->img->path, bid);
		} else if (fn->kind == REPORT_F_KERNEL) {
			const char *mod = fn->module_img ? fn->module_img : "[kernel.kallsyms]";
			int64_t key = str_id(&p->st, mod);

			/* Kernel functions of one module share a mapping: keyed by its name. */
			if (key < 0)
				return -ENOMEM;
			mid = mapping_id(p, (uintptr_t)key, mod, "");
		}
		perftools__profiles__function__init(&p->funcs[k]);
		p->funcs[k].id = f;
		p->funcs[k].name = ni;
		p->funcs[k].system_name = si;
		p->funcs[k].filename = fi;
		p->func_ptrs[k] = &p->funcs[k];
		perftools__profiles__line__init(&p->lines[k]);
		p->lines[k].function_id = f;
		p->lines[k].line = fn->line;
		p->line_ptrs[k] = &p->lines[k];
		perftools__profiles__location__init(&p->locs[k]);
		p->locs[k].id = f;
		p->locs[k].mapping_id = mid;
		p->locs[k].address = fn->addr;
		p->locs[k].n_line = 1;
		p->locs[k].line = &p->line_ptrs[k];
		p->loc_ptrs[k] = &p->locs[k];
	}
	p->prof.n_function = n;
	p->prof.function = p->func_ptrs;
	p->prof.n_location = n;
	p->prof.location = p->loc_ptrs;
	p->prof.n_mapping = p->nmaps;
	p->prof.mapping = p->map_ptrs;
	return 0;
}

/*
 * One sample: the path from @node up to (not including) the process name, for value
 * @ev.  The process name above it is the label "comm", and a cgroup above that (the
 * callees_cg tree) the label "cgroup".
 */
static int add_sample(struct pp *p, const struct tools_rep_tree *t, uint32_t node, size_t ev,
		      size_t nev)
{
	struct {
		pb_sample s;
		pb_label l[2];
		pb_label *lp[2];
	} *x;
	size_t depth = 0, nl = 0;
	uint32_t top = node, below = 0, cg = 0;
	uint64_t *ids;
	int64_t *vals;
	const struct report_func *fn;

	for (uint32_t y = node; y; y = t->n[y].parent) {
		below = top;
		top = y;
		depth++;
	}
	fn = &p->r->m->funcs[t->n[top].func];
	if (fn->kind == REPORT_F_CGROUP && below != top &&
	    p->r->m->funcs[t->n[below].func].kind == REPORT_F_COMM) {
		cg = top; /* the root's child names the cgroup, its child the process: labels */
		top = below;
		depth -= 2;
	} else if (fn->kind == REPORT_F_COMM) {
		depth--; /* the root's child names the process: a label, not a frame */
	} else {
		top = 0;
	}
	x = calloc(1, sizeof(*x));
	ids = calloc(depth ? depth : 1, sizeof(*ids));
	vals = calloc(nev, sizeof(*vals));
	if (!x || !ids || !vals) {
		free(x);
		free(ids);
		free(vals);
		return -ENOMEM;
	}
	depth = 0;
	for (uint32_t y = node; y && y != top; y = t->n[y].parent)
		ids[depth++] = t->n[y].func;
	vals[ev] = (int64_t)t->n[node].self;
	perftools__profiles__sample__init(&x->s);
	x->s.n_location_id = depth;
	x->s.location_id = ids;
	x->s.n_value = nev;
	x->s.value = vals;
	for (int k = 0; k < 2; k++) {
		uint32_t at = k == 0 ? top : cg;
		int64_t v;

		if (!at)
			continue;
		v = str_id(&p->st, tools_report_func_name(p->r, t->n[at].func));
		if (v < 0) {
			free(x);
			free(ids);
			free(vals);
			return -ENOMEM;
		}
		perftools__profiles__label__init(&x->l[nl]);
		x->l[nl].key = k == 0 ? p->comm_key : p->cgroup_key;
		x->l[nl].str = v;
		x->lp[nl] = &x->l[nl];
		nl++;
	}
	x->s.n_label = nl;
	x->s.label = nl ? x->lp : NULL;
	if (p->nsamples == p->samples_cap) {
		size_t ncap = p->samples_cap ? 2 * p->samples_cap : 1024;
		pb_sample **ns = realloc(p->samples, ncap * sizeof(*ns));

		if (!ns) {
			free(x);
			free(ids);
			free(vals);
			return -ENOMEM;
		}
		p->samples = ns;
		p->samples_cap = ncap;
	}
	p->samples[p->nsamples++] = &x->s; /* x->s is first: freeing it frees x */
	return 0;
}

/* Every path of event @ev's callees tree that ends in self samples. */
static int build_samples(struct pp *p, const struct tools_rep_tree *t, size_t ev, size_t nev)
{
	uint32_t *stack;
	size_t sp = 0;
	int e = 0;

	if (!t->n || !t->len)
		return 0;
	stack = malloc((t->len + 1) * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	for (uint32_t c = t->n[0].child; c; c = t->n[c].sibling)
		stack[sp++] = c;
	while (sp && e == 0) {
		uint32_t node = stack[--sp];

		for (uint32_t c = t->n[node].child; c; c = t->n[c].sibling)
			stack[sp++] = c;
		if (t->n[node].self)
			e = add_sample(p, t, node, ev, nev);
	}
	free(stack);
	return e;
}

static void pp_free(struct pp *p)
{
	for (size_t i = 0; i < p->nsamples; i++) {
		free(p->samples[i]->location_id);
		free(p->samples[i]->value);
		free(p->samples[i]);
	}
	free(p->samples);
	free(p->types);
	free(p->type_ptrs);
	free(p->funcs);
	free(p->func_ptrs);
	free(p->locs);
	free(p->loc_ptrs);
	free(p->lines);
	free(p->line_ptrs);
	free(p->maps);
	free(p->map_ptrs);
	free(p->map_keys);
	free(p->map_ht);
	strtab_free(&p->st);
}

/* gzip @len bytes of @buf onto @fd.  0 or -errno. */
static int write_gzip(int fd, const uint8_t *buf, size_t len)
{
	z_stream z = { 0 };
	uint8_t out[65536];
	int zr, r = 0;

	/* windowBits 15 + 16: a gzip header and trailer around the deflate stream. */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)(uintptr_t)buf;
	z.avail_in = (uInt)len; /* a profile is far below 4 GiB: pack refused above */
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			r = -EIO;
			break;
		}
		r = util_write_all(fd, out, sizeof(out) - z.avail_out, NULL);
	} while (r == 0 && zr != Z_STREAM_END);
	deflateEnd(&z);
	return r;
}

int tools_report_write_pprof(struct tools_report *r, int fd)
{
	struct pp p = { .r = r };
	size_t nev = 0, k = 0, len;
	uint8_t *buf;
	int e = 0;

	perftools__profiles__profile__init(&p.prof);
	for (size_t i = 0; i < r->nev; i++)
		nev += r->ev[i].selected;
	if (str_id(&p.st, "") != 0 || (p.comm_key = str_id(&p.st, "comm")) < 0 ||
	    (p.cgroup_key = str_id(&p.st, "cgroup")) < 0) {
		e = -ENOMEM;
		goto out;
	}
	p.types = calloc(nev ? nev : 1, sizeof(*p.types));
	p.type_ptrs = calloc(nev ? nev : 1, sizeof(*p.type_ptrs));
	if (!p.types || !p.type_ptrs) {
		e = -ENOMEM;
		goto out;
	}
	e = build_funcs(&p);
	for (size_t i = 0; i < r->nev && e == 0; i++) {
		int64_t ti, ui;

		if (!r->ev[i].selected)
			continue;
		ti = str_id(&p.st, r->ev[i].name);
		ui = str_id(&p.st, "count");
		if (ti < 0 || ui < 0) {
			e = -ENOMEM;
			break;
		}
		perftools__profiles__value_type__init(&p.types[k]);
		p.types[k].type = ti;
		p.types[k].unit = ui;
		p.type_ptrs[k] = &p.types[k];
		/* with each sample's cgroup when the report built that tree (--pprof does) */
		e = build_samples(&p, r->ev[i].callees_cg.n ? &r->ev[i].callees_cg : &r->ev[i].callees,
				  k, nev);
		k++;
	}
	if (e < 0)
		goto out;
	p.prof.n_sample_type = nev;
	p.prof.sample_type = p.type_ptrs;
	p.prof.n_sample = p.nsamples;
	p.prof.sample = p.samples;
	if (nev) {
		/* One sample is one period of the first event. */
		p.period_type = p.types[0];
		p.prof.period_type = &p.period_type;
		p.prof.period = 1;
	}
	if (r->have_span) {
		p.prof.time_nanos = r->span_lo;
		/* A hostile log's times can be far apart: saturate, never overflow. */
		if (__builtin_sub_overflow(r->span_hi, r->span_lo, &p.prof.duration_nanos))
			p.prof.duration_nanos = INT64_MAX;
	}
	p.prof.n_string_table = p.st.n;
	p.prof.string_table = p.st.s;
	len = perftools__profiles__profile__get_packed_size(&p.prof);
	if (len > UINT32_MAX) {
		e = -EFBIG;
		goto out;
	}
	buf = malloc(len ? len : 1);
	if (!buf) {
		e = -ENOMEM;
		goto out;
	}
	perftools__profiles__profile__pack(&p.prof, buf);
	e = write_gzip(fd, buf, len);
	free(buf);
out:
	pp_free(&p);
	return e;
}
