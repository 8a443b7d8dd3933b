/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * report-dwarf.c: inline chains and source lines from DWARF (libdw); see
 * include/hwpmcd/report-dwarf.h.
 */
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwpmcd/common.h"
#include "hwpmcd/log.h"
#include "hwpmcd/report-dwarf.h"
#include "hwpmcd/report-sym.h"

/*
 * libdw, loaded on first use (report_dwarf__open(): --inline and --srcline only): it
 * and its liblzma and libbz2 cost every hwpmc run ~0.9 ms of dynamic linking at
 * start-up (2.7 ms with them for an empty program, 1.8 ms without).  The header's
 * prototypes type the pointers; the dwarf_* names below call through them.
 */
#define DW_FUNCS(X) \
	X(begin_elf) \
	X(end) \
	X(get_units) \
	X(tag) \
	X(attr) \
	X(attr_integrate) \
	X(hasattr) \
	X(siblingof) \
	X(child) \
	X(formudata) \
	X(formstring) \
	X(ranges) \
	X(offdie) \
	X(haspc) \
	X(dieoffset) \
	X(diename) \
	X(getsrc_die) \
	X(linesrc) \
	X(lineno) \
	X(getsrcfiles) \
	X(filesrc)

static struct {
	bool tried, ok;
#define DW_MEMBER(f) __typeof__(dwarf_##f) *f;
	DW_FUNCS(DW_MEMBER)
#undef DW_MEMBER
} dw_lib;

static bool dw_lib_load(void)
{
	const char *missing = NULL;
	void *h;

	if (dw_lib.tried)
		return dw_lib.ok;
	dw_lib.tried = true;
	h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		log_warn("--inline/--srcline: elfutils' libdw cannot be loaded (%s): no DWARF",
			 dlerror());
		return false;
	}
#define DW_LOAD(f)                                                 \
	if (!(*(void **)&dw_lib.f = dlsym(h, "dwarf_" #f)) && !missing) \
		missing = "dwarf_" #f;
	DW_FUNCS(DW_LOAD)
#undef DW_LOAD
	if (missing) {
		log_warn("--inline/--srcline: libdw.so.1 has no %s: no DWARF", missing);
		return false;
	}
	dw_lib.ok = true;
	return true; /* the library stays loaded for the process's life */
}

int report_dwarf_load(void)
{
	return dw_lib_load() ? 0 : -ENOTSUP;
}

#define dwarf_begin_elf (*dw_lib.begin_elf)
#define dwarf_end (*dw_lib.end)
#define dwarf_get_units (*dw_lib.get_units)
#define dwarf_tag (*dw_lib.tag)
#define dwarf_attr (*dw_lib.attr)
#define dwarf_attr_integrate (*dw_lib.attr_integrate)
#define dwarf_hasattr (*dw_lib.hasattr)
#define dwarf_siblingof (*dw_lib.siblingof)
#define dwarf_child (*dw_lib.child)
#define dwarf_formudata (*dw_lib.formudata)
#define dwarf_formstring (*dw_lib.formstring)
#define dwarf_ranges (*dw_lib.ranges)
#define dwarf_offdie (*dw_lib.offdie)
#define dwarf_haspc (*dw_lib.haspc)
#define dwarf_dieoffset (*dw_lib.dieoffset)
#define dwarf_diename (*dw_lib.diename)
#define dwarf_getsrc_die (*dw_lib.getsrc_die)
#define dwarf_linesrc (*dw_lib.linesrc)
#define dwarf_lineno (*dw_lib.lineno)
#define dwarf_getsrcfiles (*dw_lib.getsrcfiles)
#define dwarf_filesrc (*dw_lib.filesrc)

/* An address range and what holds it: a unit (index) or a function (DIE offset). */
struct dw_range {
	uint64_t lo, hi;
	uint64_t what;
};

struct dw_ranges {
	struct dw_range *v;
	size_t n, cap;
};

struct dw_unit {
	Dwarf_Die cu;
	bool indexed;
	struct dw_ranges fns; /* what: the DIE offset of a DW_TAG_subprogram */
};

struct report_dwarf {
	Elf *elf;
	Dwarf *dw;
	struct dw_unit *units;
	size_t nunits, units_cap, nindexed;
	struct dw_ranges cus; /* what: the index of a unit */
	/* source paths made absolute (comp_dir/name), interned: frames borrow them */
	char **paths;
	size_t npaths, pathscap;
};

static int ranges_add(struct dw_ranges *r, uint64_t lo, uint64_t hi, uint64_t what)
{
	struct dw_range *nv;

	if (lo >= hi)
		return 0;
	nv = util_grow(r->v, &r->cap, r->n + 1, sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	r->v = nv;
	r->v[r->n++] = (struct dw_range){ lo, hi, what };
	return 0;
}

static int cmp_range(const void *pa, const void *pb)
{
	const struct dw_range *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	/* Of ranges that start together, the narrower (the nested one) first. */
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	return a->what < b->what ? -1 : a->what > b->what;
}

/*
 * The range holding @addr: of those that start at or below it, the nearest ones
 * are tried (ranges of well-formed DWARF do not overlap; a few overlapping ones of
 * a hostile or odd file are tolerated, never searched without bound).
 */
static const struct dw_range *ranges_find(const struct dw_ranges *r, uint64_t addr)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = 0; k < 16 && lo > 0; k++, lo--)
		if (addr < r->v[lo - 1].hi)
			return &r->v[lo - 1];
	return NULL;
}

/* Add every range of @die (low/high pc or DW_AT_ranges) for @what. */
static int die_ranges(Dwarf_Die *die, struct dw_ranges *r, uint64_t what)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	int e;

	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0)
		if ((e = ranges_add(r, start, end, what)) < 0)
			return e;
	return 0;
}

/* Index the functions of @u: DW_TAG_subprogram with code, also within scopes of types. */
static int index_scope(struct dw_unit *u, Dwarf_Die *parent, int depth)
{
	Dwarf_Die c;
	int e;

	if (depth > REPORT_DWARF_DEPTH_MAX || dwarf_child(parent, &c) != 0)
		return 0;
	do {
		switch (dwarf_tag(&c)) {
		case DW_TAG_subprogram:
			if ((e = die_ranges(&c, &u->fns, dwarf_dieoffset(&c))) < 0)
				return e;
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_interface_type:
			if ((e = index_scope(u, &c, depth + 1)) < 0)
				return e;
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

static int unit_index(struct report_dwarf *d, struct dw_unit *u)
{
	int e;

	if (u->indexed)
		return 0;
	e = index_scope(u, &u->cu, 0);
	if (e < 0)
		return e;
	qsort(u->fns.v, u->fns.n, sizeof(*u->fns.v), cmp_range);
	u->indexed = true;
	d->nindexed++;
	return 0;
}

void report_dwarf__free(struct report_dwarf *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nunits; i++)
		free(d->units[i].fns.v);
	free(d->units);
	free(d->cus.v);
	for (size_t i = 0; i < d->pathscap; i++)
		free(d->paths[i]);
	free(d->paths);
	if (d->dw)
		(void)dwarf_end(d->dw);
	if (d->elf)
		(void)elf_end(d->elf);
	free(d);
}

int report_dwarf__open(const char *path, struct report_dwarf **ret_d)
{
	struct report_dwarf *d;
	Dwarf_CU *cu = NULL;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, subdie;
	int fd, e = 0, r;

	*ret_d = NULL;
	if (!dw_lib_load())
		return -ENOTSUP;
	fd = report_open_regular(path, NULL);
	if (fd < 0)
		return fd;
	d = calloc(1, sizeof(*d));
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		e = -ENOTSUP;
		goto out;
	}
	d->elf = elf_begin(fd, ELF_C_READ, NULL);
	/* Everything into memory, so that the fd can go. */
	if (!d->elf || elf_kind(d->elf) != ELF_K_ELF || elf_cntl(d->elf, ELF_C_FDREAD) != 0) {
		e = -ENOEXEC;
		goto out;
	}
	close(fd);
	fd = -1;
	d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
	if (!d->dw) {
		e = -ENODATA;
		goto out;
	}
	while ((r = dwarf_get_units(d->dw, cu, &cu, &version, &unit_type, &cudie, &subdie)) == 0) {
		struct dw_unit *nu;
		size_t before = d->cus.n;

		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial &&
		    unit_type != DW_UT_skeleton)
			continue;
		if (unit_type == DW_UT_skeleton && dwarf_tag(&subdie) == DW_TAG_compile_unit)
			cudie = subdie; /* split DWARF: the functions are in the .dwo unit */
		if ((e = die_ranges(&cudie, &d->cus, d->nunits)) < 0)
			goto out;
		if (d->cus.n == before)
			continue; /* no code: types only */
		nu = util_grow(d->units, &d->units_cap, d->nunits + 1, sizeof(*nu));
		if (!nu) {
			e = -ENOMEM;
			goto out;
		}
		d->units = nu;
		memset(&d->units[d->nunits], 0, sizeof(*d->units));
		d->units[d->nunits++].cu = cudie;
	}
	if (d->nunits == 0) {
		e = -ENODATA;
		goto out;
	}
	qsort(d->cus.v, d->cus.n, sizeof(*d->cus.v), cmp_range);
	*ret_d = d;
	return 0;
out:
	if (fd >= 0)
		close(fd);
	report_dwarf__free(d);
	return e;
}

void report_dwarf__stats(const struct report_dwarf *d, size_t *ret_units, size_t *ret_indexed)
{
	*ret_units = d ? d->nunits : 0;
	*ret_indexed = d ? d->nindexed : 0;
}

/* The linkage (mangled) name of @die, else its name, following abstract origins. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *s = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		s = dwarf_formstring(&a);
	if (!s || !*s)
		s = dwarf_diename(die);
	return s && *s ? s : NULL;
}

static bool has_pc_attrs(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
}

/*
 * The child scope of @parent that holds @addr (an inlined subroutine or a lexical
 * block; a block without addresses of its own is searched through), into *@ret.
 */
static bool child_at(Dwarf_Die *parent, uint64_t addr, Dwarf_Die *ret, int depth)
{
	Dwarf_Die c;

	if (depth > REPORT_DWARF_DEPTH_MAX || dwarf_child(parent, &c) != 0)
		return false;
	do {
		int tag = dwarf_tag(&c);

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
		    tag != DW_TAG_try_block && tag != DW_TAG_catch_block)
			continue;
		if (has_pc_attrs(&c)) {
			if (dwarf_haspc(&c, addr) == 1) {
				*ret = c;
				return true;
			}
		} else if (tag != DW_TAG_inlined_subroutine && child_at(&c, addr, ret, depth + 1)) {
			return true;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* @s interned in d->paths (owned), or NULL when out of memory. */
static const char *path_intern(struct report_dwarf *d, char *s)
{
	size_t i;

	if ((d->npaths + 1) * 2 > d->pathscap) {
		size_t ncap = d->pathscap ? d->pathscap * 2 : 64;
		char **n = calloc(ncap, sizeof(*n));

		if (!n) {
			free(s);
			return NULL;
		}
		for (size_t k = 0; k < d->pathscap; k++) {
			if (!d->paths[k])
				continue;
			for (i = util_hash_str(d->paths[k]) & (ncap - 1); n[i]; i = (i + 1) & (ncap - 1))
				;
			n[i] = d->paths[k];
		}
		free(d->paths);
		d->paths = n;
		d->pathscap = ncap;
	}
	for (i = util_hash_str(s) & (d->pathscap - 1); d->paths[i]; i = (i + 1) & (d->pathscap - 1)) {
		if (strcmp(d->paths[i], s) == 0) {
			free(s);
			return d->paths[i];
		}
	}
	d->npaths++;
	return d->paths[i] = s;
}

/*
 * A source path as a user can open it: one relative to the unit's compilation
 * directory is joined to it ("/src/build" + "../lib/x.c"), as gdb and
 * llvm-symbolizer print it.
 */
static const char *source_path(struct report_dwarf *d, Dwarf_Die *cu, const char *file)
{
	Dwarf_Attribute a;
	const char *dir;
	char *joined;

	if (!file || file[0] == '/' || !dwarf_attr(cu, DW_AT_comp_dir, &a) ||
	    !(dir = dwarf_formstring(&a)) || !*dir)
		return file;
	if (asprintf(&joined, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", file) < 0)
		return file;
	dir = path_intern(d, joined);
	return dir ? dir : file;
}

/* The source file numbered @idx in the line table of unit @cu, or NULL. */
static const char *unit_file(Dwarf_Die *cu, Dwarf_Word idx)
{
	Dwarf_Files *files;
	size_t n;

	if (dwarf_getsrcfiles(cu, &files, &n) != 0 || idx >= n)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

size_t report_dwarf__frames(struct report_dwarf *d, uint64_t addr,
			    struct report_dwarf_frame *out, size_t max)
{
	Dwarf_Die scopes[REPORT_DWARF_DEPTH_MAX + 1];
	const struct dw_range *cr, *fr;
	struct dw_unit *u;
	size_t n = 0, depth = 0;
	Dwarf_Line *ln;

	if (!d || !(cr = ranges_find(&d->cus, addr)) || cr->what >= d->nunits)
		return 0;
	u = &d->units[cr->what];
	if (unit_index(d, u) < 0)
		return 0;
	if (!(fr = ranges_find(&u->fns, addr))) {
		/*
		 * Code of the unit that no function DIE describes (GCC's sanitizer
		 * constructors and destructors, _sub_D_00099_0): the line table still
		 * has its lines, as llvm-symbolizer and addr2line say.  One frame with
		 * no name: the caller names it by its ELF symbol.
		 */
		int l = 0;

		if (max < 1 || !(ln = dwarf_getsrc_die(&u->cu, addr)))
			return 0;
		out[0].name = NULL;
		out[0].file = source_path(d, &u->cu, dwarf_linesrc(ln, NULL, NULL));
		out[0].line = dwarf_lineno(ln, &l) == 0 && l > 0 ? (uint32_t)l : 0;
		return 1;
	}
	if (!dwarf_offdie(d->dw, fr->what, &scopes[0]))
		return 0;
	/* scopes[0] the function, then each inlined subroutine inwards */
	n = 1;
	{
		Dwarf_Die cur = scopes[0], next;

		while (depth++ < REPORT_DWARF_DEPTH_MAX && child_at(&cur, addr, &next, 0)) {
			if (dwarf_tag(&next) == DW_TAG_inlined_subroutine) {
				if (n > REPORT_DWARF_DEPTH_MAX)
					break;
				scopes[n++] = next;
			}
			cur = next;
		}
	}
	for (size_t j = 0; j < n && j < max; j++) {
		Dwarf_Die *s = &scopes[n - 1 - j];

		out[j].name = die_name(s);
		out[j].file = NULL;
		out[j].line = 0;
		if (j == 0) {
			ln = dwarf_getsrc_die(&u->cu, addr);
			if (ln) {
				int l = 0;

				out[j].file = dwarf_linesrc(ln, NULL, NULL);
				if (dwarf_lineno(ln, &l) == 0 && l > 0)
					out[j].line = (uint32_t)l;
			}
		} else {
			/* The line in this function of the call that the level inside it inlined. */
			Dwarf_Die *in = &scopes[n - j];
			Dwarf_Attribute a;
			Dwarf_Word w;

			if (dwarf_attr(in, DW_AT_call_file, &a) && dwarf_formudata(&a, &w) == 0)
				out[j].file = unit_file(&u->cu, w);
			if (dwarf_attr(in, DW_AT_call_line, &a) && dwarf_formudata(&a, &w) == 0 &&
			    w <= UINT32_MAX)
				out[j].line = (uint32_t)w;
		}
		out[j].file = source_path(d, &u->cu, out[j].file);
	}
	return n;
}
