/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-report.h: the model and aggregates of `hwpmc report` (private to src/tools).
 * PUBLIC INTERFACES
 *   struct tools_report        one report: options, the log's processes and images,
 *                              the functions seen and, per event, counts and call trees
 *   tools_report_load()        read a log and aggregate it (tools-report.c)
 *   tools_report_print_*()     the outputs (tools-report-out.c)
 *   tools_report_func_name()   a function's printed name (demangled, or image+0xoffset)
 * IMPLEMENTATION NOTES
 *   The model (processes, images, symbols, functions) is the report module's
 *   (include/hwpmcd/report.h); this is what hwpmc report does with it.  Functions
 *   are the model's, referred to by index.  A call tree is an array of nodes
 *   (first child / next sibling, found by a hash of (parent, function)); node 0 is
 *   the root.  The "callers" tree starts at the leaf function (pmcstat -G), the
 *   "callees" tree at the process name (folded stacks and flame graphs).
 */
#ifndef HWPMCD_TOOLS_REPORT_H
#define HWPMCD_TOOLS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hwpmcd/pmclog.h"
#include "hwpmcd/report.h"

#define TOOLS_REP_KERNEL_MIN REPORT_KERNEL_MIN

struct tools_rep_node {
	uint32_t func, parent, child, sibling; /* indices (node 0 is the root, func 0 unused) */
	uint64_t count;			       /* samples through this node */
	uint64_t self;			       /* samples that end here */
};

struct tools_rep_tree {
	struct tools_rep_node *n;
	size_t len, cap;
	uint32_t *ht; /* node index + 1 per slot, keyed by (parent, func) */
	size_t htcap;
};

struct tools_rep_event {
	uint32_t pmcid;
	char name[PLOG_NAME_MAX];
	bool selected;	  /* by --event (all when none is given) */
	uint64_t samples; /* kept samples */
	uint64_t *self, *total;
	size_t ncounts;
	struct tools_rep_tree callers, callees, focus_callers, focus_callees;
	uint64_t focus_samples;
};

struct tools_rep_opts {
	const char *symfs, *kallsyms, *debugdir, *vdso;
	enum report_map_rule rule;
	/* filters (NULL/0: everything) */
	int32_t *pids, *tids;
	size_t npids, ntids;
	char **comms;
	size_t ncomms;
	uint8_t *cpus; /* bitmap of 65536 CPUs, or NULL */
	char **events;
	size_t nevents;
	double since, until; /* seconds from the first record; until < 0: none */
	bool kernel_only, user_only;
	const char *focus; /* --callers/--callees FUNCTION */
	bool want_callers, want_callees, want_focus;
	bool want_focus_callers, want_focus_callees;
};

struct tools_report {
	struct tools_rep_opts o;
	const char *file;
	struct report_model *m; /* processes, images, functions (include/hwpmcd/report.h) */
	/* the log */
	uint64_t first_tsc, last_tsc;
	enum plog_status status;
	char status_msg[256];
	uint64_t records, dropnotify, unannounced, proc_creates;
	/* events */
	struct tools_rep_event *ev;
	size_t nev;
	/* per function (indices of the model's): matches --callers/--callees; 0 unknown yet */
	uint8_t *focus;
	size_t focus_cap;
	/* sample counts */
	uint64_t samples, kept, filtered, no_frames, sampled_pids;
	uint64_t pcs, pcs_kernel;
	/* scratch */
	uint32_t *chain;
	uint32_t *stamp; /* per func: the last sample that counted it (totals) */
	size_t stamp_cap;
	uint64_t sample_no;
};

/*
 * tools_report_load: read @r->file ("-": stdin) and aggregate it under @r->o.  Returns 0
 * (also for a torn or malformed log: what could be read is reported and
 * r->status says why it ended), or a negative errno with a message logged
 * (the file cannot be opened, out of memory).
 */
int tools_report_load(struct tools_report *r);
void tools_report_free(struct tools_report *r);

/* The printed name of function @f (borrowed from @r until tools_report_free()). */
const char *tools_report_func_name(struct tools_report *r, uint32_t f);
/* The printed image of function @f ("" for none). */
const char *tools_report_func_image(const struct tools_report *r, uint32_t f);

struct tools_rep_print_opts {
	unsigned depth;	    /* call graph depth (0: unlimited) */
	double min_percent; /* call graph entries below this share are summed up */
	size_t limit;	    /* --top rows per event (0: all) */
	unsigned width;	    /* columns of the terminal (0: unlimited) */
	bool full_paths;    /* print image paths, not base names */
};

int tools_report_main(int argc, char **argv);
void tools_report_usage(FILE *out);

void tools_report_print_header(struct tools_report *r, FILE *out);
void tools_report_print_top(struct tools_report *r, FILE *out,
			    const struct tools_rep_print_opts *po);
void tools_report_print_callgraph(struct tools_report *r, FILE *out,
				  const struct tools_rep_print_opts *po);
void tools_report_print_focus(struct tools_report *r, FILE *out,
			      const struct tools_rep_print_opts *po);
int tools_report_print_folded(struct tools_report *r, FILE *out);
int tools_report_print_json(struct tools_report *r, FILE *out,
			    const struct tools_rep_print_opts *po);
int tools_report_write_flame(struct tools_report *r, FILE *out);
/* The single selected event for folded/flame output, or NULL with a message logged. */
struct tools_rep_event *tools_report_single_event(struct tools_report *r, const char *what);

#endif /* HWPMCD_TOOLS_REPORT_H */
