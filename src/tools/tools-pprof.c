/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-pprof.c: `hwpmc report --pprof FILE`: the report as a gzip-compressed pprof
 * profile (pprof.proto, encoded by protobuf-c, compressed by zlib).
 *
 * PUBLIC INTERFACES
 *   tools_report_write_pprof()
 *
 * IMPLEMENTATION NOTES
 *   Built from the report's samples by PC (tools-report-pcs.c), not its function
 *   trees, so that `go tool pprof -disasm` puts samples on their instructions:
 *
 *   - A Location per distinct code address: a PC of an image is its link address
 *     (the address in the ELF file, the same in every process that maps it), with
 *     the image's Mapping; a return address is kept as it is (pprof's convention)
 *     and its lines are those of the call (PC - 1).  Its Lines are the inline chain
 *     from the image's DWARF (report_model__lines(): innermost first, the out-of-line
 *     function last, each with its file and line); without DWARF one Line naming the
 *     report's function with no file (so `-list` never prints a binary as source).
 *     Kernel PCs keep their run-time address in the mapping of their module
 *     ("[kernel.kallsyms]", "[MODULE]"); JIT and unknown PCs have no mapping.
 *   - A Mapping per image: memory_start..memory_limit and file_offset are its
 *     executable PT_LOADs as linked (p_vaddr, p_vaddr + p_memsz, p_offset), so that
 *     pprof's base for the file is 0 and a Location's address is the file's own;
 *     an image whose file could not be read has 0, 0, 0 (pprof's "already adjusted").
 *     The main binary's Mapping comes first (pprof names the profile after it): of
 *     the images that are not shared libraries ("*.so", "*.so.N") nor "[...]", the one
 *     in the most samples' stacks.
 *   - Sample types: with one event "samples"/"count" (the report's counts: samples
 *     at the event's first period, weighted by period, pmclog-format.md 11.13) and,
 *     for a clock event (cpu-clock, task-clock) whose period the log says,
 *     "cpu"/"nanoseconds" (the same weights times that period), the default type;
 *     with several events "EVENT"/"count" and "EVENT-cpu"/"nanoseconds" each.  The
 *     period type is the first event's cpu type (period: its first period in ns), or
 *     its count type with period 1.
 *   - Labels: "comm" (the thread's name), "pid" and "tid" (numbers; none for the idle
 *     task, pid 0, as pprof drops a number label of 0) and "cgroup" (the
 *     process's cgroup when the log said one, pmclog-format.md 11.12), which pprof's
 *     -tagfocus and Pyroscope select by; with --sort cpu also "cpu" (a string, for
 *     CPU 0 is a number pprof would drop).
 *
 *   Functions are interned by (name, system name, file); names are the report's
 *   (demangled, escaped), system names the raw symbols.  Strings are interned once;
 *   entry 0 is "".  The span is the reported samples' wall clock.  Everything is
 *   built in memory from what the report holds (bounded by the log's distinct PCs
 *   and samples), packed once and deflated into the file.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
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
	struct util_index idx; /* index + 1 */
};

static uint64_t str_hash_of(const void *ctx, uint32_t id)
{
	return util_hash_str(((const struct strtab *)ctx)->s[id - 1]);
}

/* The index of @s, added if new; -1 when out of memory. */
static int64_t str_id(struct strtab *t, const char *s)
{
	size_t i;

	if (util_index_reserve(&t->idx, t->n + 1, 1024, str_hash_of, t) < 0)
		return -1;
	for (i = util_index_first(&t->idx, util_hash_str(s)); t->idx.slot[i];
	     i = util_index_next(&t->idx, i))
		if (strcmp(t->s[t->idx.slot[i] - 1], s) == 0)
			return t->idx.slot[i] - 1;
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
	t->idx.slot[i] = (uint32_t)++t->n;
	return (int64_t)t->n - 1;
}

static void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	util_index_free(&t->idx);
}

/* Everything the profile points to, freed at once. */
struct pp {
	struct tools_report *r;
	struct strtab st;
	pb_profile prof;
	pb_valuetype *types, period_type;
	pb_valuetype **type_ptrs;
	size_t ntypes;
	int *ev_type; /* per event of the report: its first sample type, or -1 */
	bool *ev_cpu; /* per event: it has a cpu/nanoseconds type after its count */
	pb_function *funcs;
	pb_function **func_ptrs;
	size_t nfuncs, funcs_cap;
	struct util_index fidx; /* function index + 1, by (name, system name, file) */
	pb_location *locs;
	pb_location **loc_ptrs;
	pb_line *lines;
	pb_line **line_ptrs;
	size_t nlines, lines_cap;
	size_t *line_at; /* per location: its first line in lines */
	pb_mapping *maps;
	pb_mapping **map_ptrs;
	size_t nmaps;
	uintptr_t *map_keys; /* each mapping's image, or its module name's string index */
	const struct report_image **map_img; /* each mapping's image, NULL for a module */
	uint64_t *map_w;     /* the weight of the samples whose stacks pass through it */
	uint64_t *map_stamp; /* the last sample that counted it (1 + its number) */
	uint32_t *map_ht;    /* mapping index + 1 by util_mix64(key): map_htcap slots */
	size_t map_htcap;
	uint32_t *loc_map; /* per location: its mapping index + 1, 0: none */
	pb_sample **samples;
	size_t nsamples;
	int64_t comm_key, cgroup_key, pid_key, tid_key, cpu_key;
};

/* The mapping index + 1 of @key (an image's address, or a module name's string index). */
static uint32_t mapping_get(struct pp *p, uintptr_t key, const struct report_image *img,
			    const char *name)
{
	char bid[2 * MAPLOG_BUILD_ID_MAX + 1] = "";
	int64_t fn, bi;
	pb_mapping *mp;
	size_t s;

	/* By hash: a linear search per location was O(locations x images). */
	for (s = util_mix64(key) & (p->map_htcap - 1); p->map_ht[s]; s = (s + 1) & (p->map_htcap - 1))
		if (p->map_keys[p->map_ht[s] - 1] == key)
			return p->map_ht[s];
	for (size_t b = 0; img && !img->info_err && b < img->info.build_id_len; b++)
		snprintf(bid + 2 * b, 3, "%02x", img->info.build_id[b]);
	fn = str_id(&p->st, name);
	bi = str_id(&p->st, bid);
	if (fn < 0 || bi < 0)
		return 0;
	mp = &p->maps[p->nmaps];
	perftools__profiles__mapping__init(mp);
	mp->filename = fn;
	mp->build_id = bi;
	mp->has_functions = true;
	if (img && !img->info_err) {
		const struct maplog_elf_info *in = &img->info;
		bool first = true;

		/* The executable PT_LOADs as linked: pprof's base for the file is then 0. */
		for (size_t i = 0; i < in->n_load; i++) {
			const struct maplog_phdr *ph = &in->load[i];

			if (!(ph->p_flags & PF_X) || ph->p_memsz == 0)
				continue;
			if (first || ph->p_vaddr < mp->memory_start) {
				mp->memory_start = ph->p_vaddr;
				mp->file_offset = ph->p_offset;
			}
			if (first || ph->p_vaddr + ph->p_memsz > mp->memory_limit)
				mp->memory_limit = ph->p_vaddr + ph->p_memsz;
			first = false;
		}
		if (mp->memory_limit <= mp->memory_start)
			mp->memory_start = mp->memory_limit = mp->file_offset = 0;
	}
	p->map_keys[p->nmaps] = key;
	p->map_img[p->nmaps] = img;
	p->map_ht[s] = (uint32_t)p->nmaps + 1;
	return (uint32_t)++p->nmaps;
}

static uint64_t func_hash(int64_t name, int64_t sys, int64_t file)
{
	return util_mix64((uint64_t)name * 31 ^ (uint64_t)sys << 21 ^ (uint64_t)file << 42);
}

static uint64_t func_hash_of(const void *ctx, uint32_t id)
{
	const pb_function *f = &((const struct pp *)ctx)->funcs[id - 1];

	return func_hash(f->name, f->system_name, f->filename);
}

/* The id of the function (@name, @sys, @file), made if new; 0 out of memory. */
static uint64_t func_id(struct pp *p, const char *name, const char *sys, const char *file)
{
	int64_t ni = str_id(&p->st, name), si = str_id(&p->st, sys), fi = str_id(&p->st, file);
	pb_function *nf;
	size_t s;

	if (ni < 0 || si < 0 || fi < 0)
		return 0;
	if (util_index_reserve(&p->fidx, p->nfuncs + 1, 4096, func_hash_of, p) < 0)
		return 0;
	for (s = util_index_first(&p->fidx, func_hash(ni, si, fi)); p->fidx.slot[s];
	     s = util_index_next(&p->fidx, s)) {
		const pb_function *f = &p->funcs[p->fidx.slot[s] - 1];

		if (f->name == ni && f->system_name == si && f->filename == fi)
			return f->id;
	}
	nf = util_grow(p->funcs, &p->funcs_cap, p->nfuncs + 1, sizeof(*nf));
	if (!nf)
		return 0;
	p->funcs = nf;
	perftools__profiles__function__init(&p->funcs[p->nfuncs]);
	p->funcs[p->nfuncs].id = p->nfuncs + 1;
	p->funcs[p->nfuncs].name = ni;
	p->funcs[p->nfuncs].system_name = si;
	p->funcs[p->nfuncs].filename = fi;
	p->fidx.slot[s] = (uint32_t)++p->nfuncs;
	return p->nfuncs;
}

/* One more Line of the location being built: function (@name, @sys, @file) at @line. */
static int line_add(struct pp *p, const char *name, const char *sys, const char *file,
		    uint32_t line)
{
	uint64_t fid = func_id(p, name, sys, file ? file : "");
	pb_line *nl;

	if (!fid)
		return -ENOMEM;
	nl = util_grow(p->lines, &p->lines_cap, p->nlines + 1, sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	p->lines = nl;
	perftools__profiles__line__init(&p->lines[p->nlines]);
	p->lines[p->nlines].function_id = fid;
	p->lines[p->nlines].line = line;
	p->nlines++;
	return 0;
}

/* A DWARF name as printed: demangled, and escaped (it comes from a hostile file). */
static char *dwarf_name(const char *raw)
{
	char *d = report_demangle(raw);
	const char *s = d ? d : raw;
	size_t len = strlen(s), cap = 4 * len + 4;
	char *esc = malloc(cap);

	if (esc)
		util_escape(s, len, esc, cap);
	free(d);
	return esc;
}

/* Location @k (id k + 1) of the report's table: its mapping, address and lines. */
static int build_loc(struct pp *p, size_t k)
{
	struct report_model *m = p->r->m;
	const struct tools_rep_loc *l = &p->r->bypc.loc[k];
	const struct report_func *fn = &m->funcs[l->func];
	struct report_dwarf_frame fr[REPORT_DWARF_DEPTH_MAX + 1];
	pb_location *loc = &p->locs[k];
	size_t n = 0;
	uint32_t mi = 0;

	perftools__profiles__location__init(loc);
	loc->id = k + 1;
	loc->address = l->addr + l->ret;
	if (l->img) {
		mi = mapping_get(p, (uintptr_t)l->img, l->img, l->img->path);
	} else if (fn->kind == REPORT_F_KERNEL || (fn->kind == REPORT_F_NOSYM && !fn->img)) {
		const char *mod = fn->module_img ? fn->module_img : "[kernel.kallsyms]";
		int64_t key = str_id(&p->st, mod);

		/* Kernel functions of one module share a mapping: keyed by its name. */
		if (key < 0)
			return -ENOMEM;
		mi = mapping_get(p, (uintptr_t)key, NULL, mod);
	}
	if (!mi && (l->img || fn->kind == REPORT_F_KERNEL))
		return -ENOMEM;
	p->loc_map[k] = mi;
	p->line_at[k] = p->nlines;
	if (l->img && fn->kind == REPORT_F_USER && !p->r->o.pprof_no_lines)
		n = report_model__lines(m, l->img, l->addr, fr, REPORT_DWARF_DEPTH_MAX + 1);
	if (n > REPORT_DWARF_DEPTH_MAX + 1)
		n = REPORT_DWARF_DEPTH_MAX + 1; /* the innermost ones, as --inline */
	if (n) {
		/* pprof then never looks for the file's symbols itself */
		p->maps[mi - 1].has_filenames = true;
		p->maps[mi - 1].has_line_numbers = true;
		p->maps[mi - 1].has_inline_frames = true;
	}
	for (size_t j = 0; j + 1 < n; j++) {
		char *name = fr[j].name ? dwarf_name(fr[j].name) : NULL;
		int e;

		if (fr[j].name && !name)
			return -ENOMEM;
		e = line_add(p, name ? name : "?", fr[j].name ? fr[j].name : "", fr[j].file,
			     fr[j].line);
		free(name);
		if (e < 0)
			return e;
	}
	/* The out-of-line function keeps the report's name (its ELF symbol, demangled). */
	return line_add(p, report_model__func_plain_name(m, l->func),
			fn->name && fn->kind != REPORT_F_COMM ? fn->name : "",
			n ? fr[n - 1].file : NULL, n ? fr[n - 1].line : 0);
}

/* Whether the base name of @path is a shared library's, as pprof judges it. */
static bool is_library(const char *path)
{
	const char *b = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	const char *so;

	if (b[0] == '[')
		return true;
	for (so = strstr(b, ".so"); so; so = strstr(so + 1, ".so"))
		if (so[3] == '\0' || ((so[3] == '.' || so[3] == '_') && so[4] >= '0' && so[4] <= '9'))
			return true;
	return false;
}

/* Locations and mappings, the main binary's mapping first. */
static int build_locs(struct pp *p)
{
	const struct tools_rep_pcs *t = &p->r->bypc;
	const struct tools_rep_pcsample *x;
	size_t n = t->nloc, main_map = SIZE_MAX, off = 0, no = 0;
	uint32_t *order;
	int e;

	p->locs = calloc(n + 1, sizeof(*p->locs));
	p->loc_ptrs = calloc(n + 1, sizeof(*p->loc_ptrs));
	p->line_at = calloc(n + 1, sizeof(*p->line_at));
	p->loc_map = calloc(n + 1, sizeof(*p->loc_map));
	p->maps = calloc(n + 1, sizeof(*p->maps));
	p->map_ptrs = calloc(n + 1, sizeof(*p->map_ptrs));
	p->map_keys = calloc(n + 1, sizeof(*p->map_keys));
	p->map_img = calloc(n + 1, sizeof(*p->map_img));
	p->map_w = calloc(n + 1, sizeof(*p->map_w));
	p->map_stamp = calloc(n + 1, sizeof(*p->map_stamp));
	for (p->map_htcap = 16; p->map_htcap < 2 * (n + 1); p->map_htcap *= 2)
		;
	p->map_ht = calloc(p->map_htcap, sizeof(*p->map_ht));
	if (!p->locs || !p->loc_ptrs || !p->line_at || !p->loc_map || !p->maps || !p->map_ptrs ||
	    !p->map_keys || !p->map_img || !p->map_w || !p->map_stamp || !p->map_ht)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++)
		if ((e = build_loc(p, k)) < 0)
			return e;
	p->line_ptrs = calloc(p->nlines + 1, sizeof(*p->line_ptrs));
	p->func_ptrs = calloc(p->nfuncs + 1, sizeof(*p->func_ptrs));
	if (!p->line_ptrs || !p->func_ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < p->nlines; i++)
		p->line_ptrs[i] = &p->lines[i];
	for (size_t i = 0; i < p->nfuncs; i++)
		p->func_ptrs[i] = &p->funcs[i];
	/* The weight of the samples whose stacks pass through each mapping. */
	while ((x = tools_pcs_next(t, &off))) {
		no++;
		for (uint32_t i = 0; i < x->n; i++) {
			uint32_t mi = p->loc_map[x->locs[i] - 1];

			if (mi && p->map_stamp[mi - 1] != no) {
				p->map_stamp[mi - 1] = no;
				p->map_w[mi - 1] += x->w;
			}
		}
	}
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct report_image *img = p->map_img[i];

		if (img && !img->kernel && p->map_w[i] && !is_library(img->path) &&
		    (main_map == SIZE_MAX || p->map_w[i] > p->map_w[main_map]))
			main_map = i;
	}
	/* Ids in order, the main binary's first. */
	order = calloc(p->nmaps + 1, sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0, id = 2; i < p->nmaps; i++)
		order[i] = i == main_map ? 1 : main_map == SIZE_MAX ? (uint32_t)i + 1 : (uint32_t)id++;
	for (size_t i = 0; i < p->nmaps; i++) {
		p->maps[i].id = order[i];
		p->map_ptrs[order[i] - 1] = &p->maps[i];
	}
	for (size_t k = 0; k < n; k++) {
		p->locs[k].mapping_id = p->loc_map[k] ? order[p->loc_map[k] - 1] : 0;
		p->locs[k].n_line = (k + 1 < n ? p->line_at[k + 1] : p->nlines) - p->line_at[k];
		p->locs[k].line = &p->line_ptrs[p->line_at[k]];
		p->loc_ptrs[k] = &p->locs[k];
	}
	free(order);
	p->prof.n_function = p->nfuncs;
	p->prof.function = p->func_ptrs;
	p->prof.n_location = n;
	p->prof.location = p->loc_ptrs;
	p->prof.n_mapping = p->nmaps;
	p->prof.mapping = p->map_ptrs;
	return 0;
}
/* Whether event @name counts CPU time in nanoseconds (a software clock). */
static bool clock_event(const char *name)
{
	static const char *const clocks[] = { "cpu-clock", "task-clock" };

	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
		size_t n = strlen(clocks[i]);

		if (strncmp(name, clocks[i], n) == 0 && (name[n] == '\0' || name[n] == ':'))
			return true;
	}
	return false;
}

/* One sample type (@type, @unit); its index, or -1 out of memory. */
static int type_add(struct pp *p, const char *type, const char *unit)
{
	int64_t ti = str_id(&p->st, type), ui = str_id(&p->st, unit);

	if (ti < 0 || ui < 0)
		return -1;
	perftools__profiles__value_type__init(&p->types[p->ntypes]);
	p->types[p->ntypes].type = ti;
	p->types[p->ntypes].unit = ui;
	p->type_ptrs[p->ntypes] = &p->types[p->ntypes];
	return (int)p->ntypes++;
}

/* The sample types of the selected events (see the notes above). */
static int build_types(struct pp *p)
{
	struct tools_report *r = p->r;
	size_t nsel = 0;
	char name[PLOG_NAME_MAX + 8];

	for (size_t i = 0; i < r->nev; i++)
		nsel += r->ev[i].selected;
	p->types = calloc(2 * nsel + 1, sizeof(*p->types));
	p->type_ptrs = calloc(2 * nsel + 1, sizeof(*p->type_ptrs));
	p->ev_type = calloc(r->nev + 1, sizeof(*p->ev_type));
	p->ev_cpu = calloc(r->nev + 1, sizeof(*p->ev_cpu));
	if (!p->types || !p->type_ptrs || !p->ev_type || !p->ev_cpu)
		return -ENOMEM;
	for (size_t i = 0; i < r->nev; i++) {
		const struct tools_rep_event *e = &r->ev[i];

		p->ev_type[i] = -1;
		if (!e->selected)
			continue;
		p->ev_cpu[i] = clock_event(e->name) && e->period0 > 0;
		snprintf(name, sizeof(name), "%s", e->name);
		if ((p->ev_type[i] = type_add(p, nsel == 1 ? "samples" : name, "count")) < 0)
			return -ENOMEM;
		snprintf(name, sizeof(name), "%s-cpu", e->name);
		if (p->ev_cpu[i] && type_add(p, nsel == 1 ? "cpu" : name, "nanoseconds") < 0)
			return -ENOMEM;
		if (p->ntypes == (p->ev_cpu[i] ? 2u : 1u)) {
			/* The first event's: one sample is one period of it. */
			p->period_type = p->types[p->ntypes - 1];
			p->prof.period_type = &p->period_type;
			p->prof.period = p->ev_cpu[i] ? (int64_t)(e->period0 < 9e18 ? e->period0 + 0.5
										 : 9e18)
						      : 1;
			if (p->ev_cpu[i])
				p->prof.default_sample_type = p->types[p->ntypes - 1].type;
		}
	}
	p->prof.n_sample_type = p->ntypes;
	p->prof.sample_type = p->type_ptrs;
	return 0;
}

/* Weights (TOOLS_REP_W_ONE a sample at the first period) as samples, rounded. */
static int64_t w_samples(uint64_t w)
{
	uint64_t n = w / TOOLS_REP_W_ONE + (w % TOOLS_REP_W_ONE >= TOOLS_REP_W_ONE / 2);

	return n > INT64_MAX ? INT64_MAX : (int64_t)n;
}

/* Weights as nanoseconds of a clock event of first period @period0 ns (saturated). */
static int64_t w_ns(uint64_t w, double period0)
{
	double ns = (double)w / TOOLS_REP_W_ONE * period0 + 0.5;

	return ns >= 9.2e18 ? INT64_MAX : (int64_t)ns;
}

/* One sample per PC sample of the report: its locations, values and labels. */
static int build_samples(struct pp *p)
{
	const struct tools_rep_pcs *t = &p->r->bypc;
	const struct tools_rep_pcsample *x;
	size_t off = 0;

	p->samples = calloc(t->n + 1, sizeof(*p->samples));
	if (!p->samples)
		return -ENOMEM;
	while ((x = tools_pcs_next(t, &off))) {
		struct {
			pb_sample s;
			pb_label l[5];
			pb_label *lp[5];
		} *y;
		uint64_t *ids;
		int64_t *vals;
		int at = x->ev < p->r->nev ? p->ev_type[x->ev] : -1;
		size_t nl = 0;

		if (at < 0)
			continue; /* an event not selected (none is kept) */
		y = calloc(1, sizeof(*y));
		ids = calloc(x->n ? x->n : 1, sizeof(*ids));
		vals = calloc(p->ntypes, sizeof(*vals));
		if (!y || !ids || !vals) {
			free(y);
			free(ids);
			free(vals);
			return -ENOMEM;
		}
		perftools__profiles__sample__init(&y->s);
		p->samples[p->nsamples++] = &y->s; /* y->s is first: freeing it frees y */
		y->s.n_location_id = x->n;
		y->s.location_id = ids;
		y->s.n_value = p->ntypes;
		y->s.value = vals;
		for (uint32_t i = 0; i < x->n; i++)
			ids[i] = x->locs[i]; /* leaf first, as pprof wants */
		vals[at] = w_samples(x->w);
		if (p->ev_cpu[x->ev])
			vals[at + 1] = w_ns(x->w, p->r->ev[x->ev].period0);
		for (int k = 0; k < 5; k++) {
			pb_label *l = &y->l[nl];
			int64_t v = 0;
			char cpu[16];

			perftools__profiles__label__init(l);
			if (k == 4 && x->cpu >= 0) {
				/* a string: pprof drops a number label of 0, and CPU 0 is one */
				snprintf(cpu, sizeof(cpu), "%" PRId32, x->cpu);
				if ((v = str_id(&p->st, cpu)) < 0)
					return -ENOMEM;
				l->key = p->cpu_key;
				l->str = v;
			} else if (k == 4) {
				continue;
			} else if (k == 0 || (k == 1 && x->cgroup)) {
				v = str_id(&p->st, tools_report_func_name(p->r, k ? x->cgroup : x->comm));
				if (v < 0)
					return -ENOMEM;
				l->key = k ? p->cgroup_key : p->comm_key;
				l->str = v;
			} else if (k >= 2 && (k == 2 ? x->pid : x->tid) > 0) {
				/* (pprof drops a number label of 0: the idle task has none) */
				l->key = k == 2 ? p->pid_key : p->tid_key;
				l->num = k == 2 ? x->pid : x->tid;
			} else {
				continue;
			}
			y->lp[nl++] = l;
		}
		y->s.n_label = nl;
		y->s.label = y->lp;
	}
	p->prof.n_sample = p->nsamples;
	p->prof.sample = p->samples;
	return 0;
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
	free(p->ev_type);
	free(p->ev_cpu);
	free(p->funcs);
	free(p->func_ptrs);
	util_index_free(&p->fidx);
	free(p->locs);
	free(p->loc_ptrs);
	free(p->lines);
	free(p->line_ptrs);
	free(p->line_at);
	free(p->maps);
	free(p->map_ptrs);
	free(p->map_keys);
	free(p->map_img);
	free(p->map_w);
	free(p->map_stamp);
	free(p->map_ht);
	free(p->loc_map);
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
	size_t len;
	uint8_t *buf;
	int e = 0;

	perftools__profiles__profile__init(&p.prof);
	if (str_id(&p.st, "") != 0 || (p.comm_key = str_id(&p.st, "comm")) < 0 ||
	    (p.cgroup_key = str_id(&p.st, "cgroup")) < 0 || (p.pid_key = str_id(&p.st, "pid")) < 0 ||
	    (p.tid_key = str_id(&p.st, "tid")) < 0 ||
	    (r->o.sort.has[TOOLS_SORT_CPU] && (p.cpu_key = str_id(&p.st, "cpu")) < 0)) {
		e = -ENOMEM;
		goto out;
	}
	if ((e = build_types(&p)) < 0 || (e = build_locs(&p)) < 0 || (e = build_samples(&p)) < 0)
		goto out;
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
