/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz-report.c: libFuzzer harness for `hwpmc report`'s model and outputs.
 *
 * IMPLEMENTATION NOTES
 *   The input is the log, handed to tools_report_load() through a memfd, with
 *   every tree and the --callers/--callees view on; then every output is
 *   written to /dev/null.  Beyond "no crash, no sanitizer report, no leak", two
 *   properties abort on failure: the kept samples of all events add up to the
 *   report's kept count, and each event's callee trees (with and without cgroups)
 *   hold exactly its samples (what --folded prints sums to the samples).  MAP_IN
 *   paths in the input name real files of this machine: they are opened
 *   read-only, and only if regular.
 *   --gprof writes its files into one temporary directory, made at the first input
 *   and removed at exit (names come from images' base names).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hwpmcd/log.h"
#include "tools-report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char gdir[] = "/tmp/fuzz-report-gprof.XXXXXX";

/* At exit (libFuzzer's end of run): the --gprof directory and its files go. */
static void gdir_remove(void)
{
	DIR *d = opendir(gdir);
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			(void)unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	(void)rmdir(gdir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	struct tools_report r;
	struct tools_rep_print_opts po = { .depth = 8, .min_percent = 0.5 };
	char path[64], *paths[1] = { path };
	uint64_t sum = 0;
	int fd;

	if (!null) {
		log_open("fuzz-report", LOG_TARGET_PLAIN);
		log_set_level(LOG_PRIO_ERR - 1); /* quiet: hostile logs warn by design */
		null = fopen("/dev/null", "w");
		if (!null || !mkdtemp(gdir))
			abort();
		atexit(gdir_remove);
	}
	fd = memfd_create("log", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(&r, 0, sizeof(r));
	r.file = path;
	r.paths = paths;
	r.npaths = 1;
	r.o.focus = "main";
	r.o.want_callers = r.o.want_callees = true;
	r.o.want_focus_callers = r.o.want_focus_callees = true;
	r.o.want_cgroups = r.o.want_pcs = true;
	r.o.kallsyms = "/nonexistent"; /* no dependence on this machine's kernel */
	r.o.jit_dir = "/nonexistent";  /* nor on its /tmp/perf-PID.map files */
	r.o.no_debuginfod = true;      /* nor on a network */
	/* Half the inputs also take the DWARF paths (--inline --srcline). */
	r.o.inline_frames = r.o.srcline = size & 1;
	/* and half of them sort by every key (--sort), with --children */
	r.o.want_children = true;
	/* and half of them print every sample as hwpmc script does */
	r.o.script = size & 4 ? null : NULL;
	if ((size & 2) && tools_sort_parse("comm,pid,tid,dso,sym,srcline,cpu,cgroup", &r.o.sort) < 0)
		abort();
	if (tools_report_load(&r) == 0) {
		for (size_t i = 0; i < r.nev; i++) {
			/*
			 * samples are weighted by period (pmclog-format.md 11.13), sampled
			 * counted: the trees hold the weighted ones, and a log of one period
			 * weighs each sample 1.
			 */
			sum += r.ev[i].sampled;
			if (r.ev[i].callees.n[0].count != r.ev[i].samples ||
			    (!r.ev[i].varied && r.ev[i].samples != r.ev[i].sampled))
				abort();
		}
		/* pprof's samples by PC weigh what the events do (unless saturated) */
		for (size_t i = 0; i < r.nev; i++) {
			const struct tools_rep_pcsample *x;
			uint64_t w = 0;
			size_t off = 0;

			while ((x = tools_pcs_next(&r.bypc, &off)))
				if (x->ev == i)
					w = w + x->w < w ? UINT64_MAX : w + x->w;
			if (r.ev[i].wsum != UINT64_MAX && w != r.ev[i].wsum)
				abort();
		}
		if (sum != r.kept)
			abort();
		/* every sample in one row by itself, and in the children tree's root */
		for (size_t i = 0; i < r.nev; i++) {
			uint64_t self = 0;

			for (size_t k = 0; k < r.ev[i].rows.n; k++)
				self += r.ev[i].rows.row[k].self;
			if (r.ev[i].children.n[0].count != r.ev[i].samples ||
			    (r.o.sort.generic && !r.ev[i].varied && self != r.ev[i].samples))
				abort();
		}
		tools_report_print_header(&r, null, 80);
		tools_report_print_top(&r, null, &po);
		tools_report_print_callgraph(&r, null, &po);
		tools_report_print_children(&r, null, &po);
		(void)tools_diff_print(&r, &r, null, &po); /* hwpmc diff of the log with itself */
		tools_report_print_focus(&r, null, &po);
		(void)tools_report_print_json(&r, null, &po);
		(void)tools_report_write_pprof(&r, fileno(null));
		(void)tools_report_write_calltree(&r, null, "fuzz");
		if (r.nev == 1) {
			(void)tools_report_print_folded(&r, null);
			(void)tools_report_write_flame(&r, null);
			/* hwpmc annotate main: its instructions from the image the log names */
			(void)tools_annotate(&r, "main", null, size & 8);
			/* a gmon file per image, into one directory kept for the run */
			(void)tools_report_write_gprof(&r, gdir, 0);
		}
	}
	tools_report_free(&r);
	close(fd);
	return 0;
}
