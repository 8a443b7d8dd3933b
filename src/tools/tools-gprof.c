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

/* The gmon file of image @img: every sampled function and every edge inside it. */
static int write_image(struct tools_report *r, const struct tools_rep_event *e,
		       const struct report_image *img, FILE *out)
{
	const struct report_model *m = r->m;
	const struct tools_rep_tree *t = &e->callees;
	static const uint8_t head[20] = { 'g', 'm', 'o', 'n', 1 };
	int k = fwrite(head, sizeof(head), 1, out) == 1 ? 0 : -EIO;

	for (uint32_t f = 1; f < m->nfuncs && k == 0; f++) {
		uint64_t n = f < e->ncounts ? e->self[f] : 0;

		if (m->funcs[f].img != img)
			continue;
		while (n > 0 && k == 0) {
			uint32_t part = n > 65535 ? 65535 : (uint32_t)n;

			k = put_hist(out, m->funcs[f].addr, part);
			n -= part;
		}
	}
	/* Arcs: each node of the callees tree whose parent is in the image too. */
	for (size_t i = 1; i < t->len && k == 0 && t->n; i++) {
		uint32_t p = t->n[i].parent;
		uint64_t n = t->n[i].count;

		if (!p || m->funcs[t->n[p].func].img != img || m->funcs[t->n[i].func].img != img)
			continue;
		while (n > 0 && k == 0) {
			uint32_t part = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;

			k = put_arc(out, m->funcs[t->n[p].func].addr, m->funcs[t->n[i].func].addr,
				    part);
			n -= part;
		}
	}
	return k;
}

/* Make @dir if it is missing; an existing one must be a directory (not a link). */
static int make_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0755) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (lstat(dir, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int tools_report_write_gprof(struct tools_report *r, const char *dir)
{
	struct tools_rep_event *e = tools_report_single_event(r, "--gprof");
	const struct report_model *m = r->m;
	const struct report_image **done = NULL;
	size_t ndone = 0;
	uint64_t other = 0;
	int k;

	if (!e)
		return -EINVAL;
	if (!e->callees.n)
		return -EINVAL; /* not built: the caller did not ask for callees */
	k = make_dir(dir);
	if (k < 0) {
		log_error("--gprof: %s: %s", dir, strerror(-k));
		return k;
	}
	done = calloc(m->nfuncs ? m->nfuncs : 1, sizeof(*done));
	if (!done)
		return -ENOMEM;
	for (uint32_t f = 1; f < m->nfuncs && k == 0; f++) {
		const struct report_image *img = m->funcs[f].img;
		uint64_t n = f < e->ncounts ? e->self[f] : 0;
		char path[4096];
		size_t same = 0;
		bool seen = false, made;
		int fd;
		FILE *out;

		if (!img) {
			other += m->funcs[f].kind != REPORT_F_COMM ? n : 0;
			continue;
		}
		for (size_t i = 0; i < ndone; i++) {
			seen |= done[i] == img;
			same += strcmp(done[i]->base, img->base) == 0;
		}
		if (seen || !n)
			continue; /* an image gets its file at its first sampled function */
		done[ndone++] = img;
		if (same)
			snprintf(path, sizeof(path), "%s/%s.%zu.gmon", dir, img->base, same + 1);
		else
			snprintf(path, sizeof(path), "%s/%s.gmon", dir, img->base);
		fd = util_open_output(path, 0644, &made);
		out = fd < 0 ? NULL : fdopen(fd, "we");
		if (!out) {
			k = fd < 0 ? fd : -errno;
			log_error("--gprof: %s: %s", path,
				  fd < 0 ? util_output_strerror(fd) : strerror(-k));
			if (fd >= 0)
				close(fd);
			break;
		}
		k = write_image(r, e, img, out);
		if (fclose(out) != 0 && k == 0)
			k = -EIO;
		if (k < 0)
			log_error("--gprof: %s: %s", path, strerror(-k));
		else
			fprintf(stderr, "hwpmc: gprof %s %s\n", img->shown, path);
	}
	if (k == 0 && other)
		fprintf(stderr, "hwpmc: --gprof: %" PRIu64 " samples of the kernel or of no image "
			"have no file gprof could read (--top shows them)\n", other);
	free(done);
	return k;
}
