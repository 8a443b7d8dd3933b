/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-gprof.c: `hwpmc report --gprof DIR`: one gmon.out file per user image, as
 * pmcstat -g writes them, for gprof(1).
 *
 * PUBLIC INTERFACES
 *   tools_report_write_gprof()
 *
 * IMPLEMENTATION NOTES
 *   The gmon.out format of glibc and binutils (gmon_out.h): a 20-byte header
 *   ("gmon", version 1), then tagged records.  The report works per function, so
 *   each function with self samples gets a histogram record of its own covering
 *   its first 4 bytes at its link address, one 4-byte bin holding its samples
 *   (gprof keeps histograms of distinct ranges apart and sums those of one range:
 *   a count above 65535, a bin's limit, is split over several records of the same
 *   range, so nothing is lost); each call edge between two functions of the image
 *   is an arc record (from the caller's start to the callee's start) counting the
 *   samples on that edge.  The profiling rate is 1 per second with the dimension
 *   "samples", so gprof's "seconds" are samples.  Kernel functions and PCs without
 *   an image have no file gprof could read: they are counted and said.  One file
 *   per image, NAME.gmon after the image's base name (NAME.2.gmon ... for a second
 *   image of that name); a list of image -> file and the gprof command goes to
 *   standard error.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwpmcd/common.h"
#include "hwpmcd/files.h"
#include "hwpmcd/log.h"
#include "tools-report.h"

#define GMON_TAG_TIME_HIST 0
#define GMON_TAG_CG_ARC 1
#define GMON_BIN 4 /* bytes of code per histogram bin */

static void put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* One histogram record: [addr, addr + GMON_BIN) with @count (<= 65535) samples. */
static int put_hist(FILE *out, uint64_t addr, uint32_t count)
{
	uint8_t rec[1 + 8 + 8 + 4 + 4 + 15 + 1 + 2] = { GMON_TAG_TIME_HIST };

	put_u64(rec + 1, addr);
	put_u64(rec + 9, addr + GMON_BIN);
	put_u32(rec + 17, 1); /* bins */
	put_u32(rec + 21, 1); /* profiling rate: one sample is one "second" */
	memcpy(rec + 25, "samples", 7);
	rec[40] = 's';
	rec[41] = (uint8_t)count;
	rec[42] = (uint8_t)(count >> 8);
	return fwrite(rec, sizeof(rec), 1, out) == 1 ? 0 : -EIO;
}

static int put_arc(FILE *out, uint64_t from, uint64_t to, uint32_t count)
{
	uint8_t rec[1 + 8 + 8 + 4] = { GMON_TAG_CG_ARC };

	put_u64(rec + 1, from);
	put_u64(rec + 9, to);
	put_u32(rec + 17, count);
	return fwrite(rec, sizeof(rec), 1, out) == 1 ? 0 : -EIO;
}

/*
 * An image with a file: its sampled functions and its arcs (nodes of the callees
 * tree whose parent is in the image too), as ranges of the lists gathered once for
 * all images (a walk over every function and node per image was O(images x
 * functions)).
 */
struct gp_img {
	const struct report_image *img;
	uint32_t first;	  /* its first function with self samples (files are made in that order) */
	size_t nf, fo;	  /* funcs[fo .. fo + nf) */
	size_t na, ao;	  /* arcs[ao .. ao + na): tree node indices */
};

/* The gmon file of image @g: every sampled function and every edge inside it. */
static int write_image(struct tools_report *r, const struct tools_rep_event *e,
		       const struct gp_img *g, const uint32_t *funcs, const uint32_t *arcs,
		       FILE *out)
{
	const struct report_model *m = r->m;
	const struct tools_rep_tree *t = &e->callees;
	static const uint8_t head[20] = { 'g', 'm', 'o', 'n', 1 };
	int k = fwrite(head, sizeof(head), 1, out) == 1 ? 0 : -EIO;

	for (size_t x = g->fo; x < g->fo + g->nf && k == 0; x++) {
		uint32_t f = funcs[x];
		uint64_t n = e->self[f];

		while (n > 0 && k == 0) {
			uint32_t part = n > 65535 ? 65535 : (uint32_t)n;

			k = put_hist(out, m->funcs[f].addr, part);
			n -= part;
		}
	}
	for (size_t x = g->ao; x < g->ao + g->na && k == 0; x++) {
		size_t i = arcs[x];
		uint32_t p = t->n[i].parent;
		uint64_t n = t->n[i].count;

		while (n > 0 && k == 0) {
			uint32_t part = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;

			k = put_arc(out, m->funcs[t->n[p].func].addr, m->funcs[t->n[i].func].addr,
				    part);
			n -= part;
		}
	}
	return k;
}

/*
 * @dir made (files.h: a new directory in a checked one) if it is missing, or an
 * existing one checked as a directory to create files in; opened into @ret.
 */
static int open_gprof_dir(const char *dir, mode_t mode, struct util_dir *ret)
{
	struct util_dir parent;
	const char *name;
	char err[1024];
	int r;

	r = util_dir__open(dir, false, ret, err, sizeof(err));
	if (r != -ENOENT) {
		if (r < 0)
			log_error("--gprof: %s", err);
		return r;
	}
	r = util_dir__open_parent(dir, &parent, &name, err, sizeof(err));
	if (r < 0) {
		log_error("--gprof: %s", err);
		return r;
	}
	/* A directory's mode: the file mode with search where there is read. */
	r = util_dir__make(&parent, name, mode ? mode | (mode & 0444) >> 2 : 0, ret);
	util_dir__close(&parent);
	if (r < 0)
		log_error("--gprof: %s: %s", dir, strerror(-r));
	return r;
}

static int cmp_first(const void *pa, const void *pb)
{
	const struct gp_img *a = pa, *b = pb;

	return a->first < b->first ? -1 : a->first > b->first;
}

/* The index of @img among @v (a hash @ht of @cap slots: index + 1), added if new. */
static size_t img_index(struct gp_img *v, size_t *n, uint32_t *ht, size_t cap,
			const struct report_image *img)
{
	size_t s;

	for (s = util_mix64((uint64_t)(uintptr_t)img) & (cap - 1); ht[s]; s = (s + 1) & (cap - 1))
		if (v[ht[s] - 1].img == img)
			return ht[s] - 1;
	v[*n].img = img;
	v[*n].first = UINT32_MAX;
	ht[s] = (uint32_t)++*n;
	return *n - 1;
}

int tools_report_write_gprof(struct tools_report *r, const char *dir, mode_t mode)
{
	struct util_dir gd = UTIL_DIR_NONE;
	struct tools_rep_event *e = tools_report_single_event(r, "--gprof");
	const struct report_model *m = r->m;
	const struct tools_rep_tree *t;
	struct gp_img *v = NULL;
	uint32_t *ht = NULL, *funcs = NULL, *arcs = NULL, *names = NULL, *fimg = NULL;
	size_t nimg = 0, cap = 16, nnodes, *same = NULL;
	uint64_t other = 0;
	int k;

	if (!e)
		return -EINVAL;
	if (!e->callees.n)
		return -EINVAL; /* not built: the caller did not ask for callees */
	k = open_gprof_dir(dir, mode, &gd);
	if (k < 0)
		return k;
	t = &e->callees;
	nnodes = t->len;
	while (cap < 2 * (size_t)m->nfuncs)
		cap *= 2;
	v = calloc(m->nfuncs + 1, sizeof(*v));
	ht = calloc(cap, sizeof(*ht));
	fimg = calloc(m->nfuncs + 1, sizeof(*fimg)); /* per function: image index + 1, 0: none */
	funcs = calloc(m->nfuncs + 1, sizeof(*funcs));
	arcs = calloc(nnodes + 1, sizeof(*arcs));
	names = calloc(cap, sizeof(*names));
	same = calloc(m->nfuncs + 1, sizeof(*same));
	if (!v || !ht || !fimg || !funcs || !arcs || !names || !same) {
		k = -ENOMEM;
		goto out;
	}
	/* The images, the first sampled function of each, and what has no image. */
	for (uint32_t f = 1; f < m->nfuncs; f++) {
		const struct report_image *img = m->funcs[f].img;
		uint64_t n = f < e->ncounts ? e->self[f] : 0;
		size_t x;

		if (!img) {
			other += m->funcs[f].kind != REPORT_F_COMM ? n : 0;
			continue;
		}
		x = img_index(v, &nimg, ht, cap, img);
		fimg[f] = (uint32_t)x + 1;
		if (n) {
			v[x].nf++;
			if (v[x].first == UINT32_MAX)
				v[x].first = f;
		}
	}
	/* Arcs inside one image, counted, then both lists laid out per image. */
	for (size_t i = 1; i < nnodes; i++) {
		uint32_t p = t->n[i].parent, a = t->n[p].func, b = t->n[i].func;

		if (p && fimg[a] && fimg[a] == fimg[b])
			v[fimg[a] - 1].na++;
	}
	for (size_t x = 0, fo = 0, ao = 0; x < nimg; x++) {
		v[x].fo = fo;
		v[x].ao = ao;
		fo += v[x].nf;
		ao += v[x].na;
		v[x].nf = v[x].na = 0; /* filled again below */
	}
	for (uint32_t f = 1; f < m->nfuncs; f++)
		if (fimg[f] && f < e->ncounts && e->self[f]) {
			struct gp_img *g = &v[fimg[f] - 1];

			funcs[g->fo + g->nf++] = f;
		}
	for (size_t i = 1; i < nnodes; i++) {
		uint32_t p = t->n[i].parent, a = t->n[p].func, b = t->n[i].func;

		if (p && fimg[a] && fimg[a] == fimg[b]) {
			struct gp_img *g = &v[fimg[a] - 1];

			arcs[g->ao + g->na++] = (uint32_t)i;
		}
	}
	/* Files in the order of each image's first sampled function; none without one. */
	qsort(v, nimg, sizeof(*v), cmp_first);
	for (size_t x = 0; x < nimg && k == 0 && v[x].first != UINT32_MAX; x++) {
		const struct report_image *img = v[x].img;
		char path[4096], name[UTIL_TEMP_NAME_MAX], tmp[UTIL_TEMP_NAME_MAX];
		size_t s, nth;
		int fd;
		FILE *out;

		/* NAME.gmon, NAME.2.gmon...: the images of one base name written before it */
		for (s = util_hash_str(img->base) & (cap - 1); names[s]; s = (s + 1) & (cap - 1))
			if (strcmp(v[names[s] - 1].img->base, img->base) == 0)
				break;
		if (!names[s])
			names[s] = (uint32_t)x + 1;
		nth = same[names[s] - 1]++;
		if (nth)
			snprintf(name, sizeof(name), "%.200s.%zu.gmon", img->base, nth + 1);
		else
			snprintf(name, sizeof(name), "%.200s.gmon", img->base);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		/* Written under a temporary name, then in place of an old file of ours. */
		fd = util_file_create_temp(&gd, name, mode, 0, tmp);
		out = fd < 0 ? NULL : fdopen(fd, "we");
		if (!out) {
			k = fd < 0 ? fd : -errno;
			log_error("--gprof: %s: %s", path, util_files_strerror(k));
			if (fd >= 0) {
				close(fd);
				(void)util_file_remove(&gd, tmp);
			}
			break;
		}
		k = write_image(r, e, &v[x], funcs, arcs, out);
		if (fclose(out) != 0 && k == 0)
			k = -EIO;
		if (k == 0)
			k = util_file_commit(&gd, tmp, name);
		if (k < 0) {
			(void)util_file_remove(&gd, tmp);
			log_error("--gprof: %s: %s", path, util_files_strerror(k));
		} else {
			fprintf(stderr, "hwpmc: gprof %s %s\n", img->shown, path);
		}
	}
	if (k == 0 && other)
		fprintf(stderr, "hwpmc: --gprof: %" PRIu64 " samples of the kernel or of no image "
			"have no file gprof could read (--top shows them)\n", other);
out:
	util_dir__close(&gd);
	free(v);
	free(ht);
	free(fimg);
	free(funcs);
	free(arcs);
	free(names);
	free(same);
	return k;
}
