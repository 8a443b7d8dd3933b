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
 *   Functions are interned once (struct tools_rep_func, by image and start address) and
 *   everything else refers to them by index.  A call tree is an array of nodes
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

#include "hwpmcd/maplog-elf.h"
#include "hwpmcd/report-sym.h"
#include "hwpmcd/pmclog.h"

#define TOOLS_REP_KERNEL_MIN 0xffff800000000000ull

enum tools_rep_func_kind {
	TOOLS_REP_F_USER = 0, /* a symbol of a user image */
	TOOLS_REP_F_KERNEL,   /* a kernel or module symbol */
	TOOLS_REP_F_NOSYM,    /* in an image, no symbol: image+0xoffset */
	TOOLS_REP_F_UNKNOWN,  /* in no mapping: [unknown] */
	TOOLS_REP_F_COMM,     /* a process name (the first level of folded stacks) */
	TOOLS_REP_F_KIND_MAX
};

struct tools_rep_image {
	char *path;	  /* as the log names it */
	char *shown;	  /* the path escaped for printing */
	const char *base; /* the last component of shown */
	bool kernel;	  /* announced for pid -1 */
	int info_err;	  /* 0: info is valid; else why the file could not be read */
	struct maplog_elf_info info;
	struct report_symtab *syms; /* loaded at the first PC that needs it */
	bool syms_tried;
	uint64_t pcs;	    /* PCs resolved into this image */
	uint64_t pcs_nosym; /* of them without a symbol */
	struct tools_rep_image *hnext;
};

struct tools_rep_func {
	const char *name;	     /* raw symbol name (borrowed from a symtab) or NULL (NOSYM) */
	char *pretty;		     /* printed name, made on first use */
	struct tools_rep_image *img; /* NULL for [unknown], kallsyms and comm functions */
	const char *module;	     /* kallsyms module, or NULL */
	char *module_img;	     /* "[module]", made with the function */
	char *raw;		     /* TOOLS_REP_F_COMM: the name as logged (name points here) */
	uint64_t addr;		     /* symbol start, or the link address of a NOSYM PC */
	enum tools_rep_func_kind kind;
	uint64_t pcs;		/* PCs resolved to it */
	bool focus; /* matches --callers/--callees */
};

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

enum tools_rep_map_rule {
	TOOLS_REP_RULE_AUTO = 0,  /* hwpmcd logs (cpu GENERIC): bias + V; others: first-exec */
	TOOLS_REP_RULE_BIAS_V,	  /* pl_start = load bias + V (pmclog-format.md 10.2, pmcstat) */
	TOOLS_REP_RULE_FIRST_EXEC /* pl_start = start of the first executable mapping (FreeBSD's
				     kernel) */
};

/* One entry of the PC resolution cache (tools-report.c, resolve_pc()). */
#define TOOLS_REP_PCC_SIZE 16384
struct tools_rep_pcc {
	uint64_t pc;
	uintptr_t key; /* the process (1: the kernel) */
	uint32_t gen;  /* the model generation it was resolved in */
	uint32_t func; /* 0: empty */
};

struct tools_rep_opts {
	const char *symfs, *kallsyms, *debugdir;
	enum tools_rep_map_rule rule;
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
	/* the log */
	bool have_init;
	uint32_t cpu_type;
	char cpuid[PLOG_CPUID_LEN];
	uint64_t tsc_freq, first_tsc, last_tsc;
	int64_t ts_sec, ts_nsec;
	enum plog_status status;
	char status_msg[256];
	uint64_t records, dropnotify, unannounced, proc_creates;
	enum tools_rep_map_rule rule; /* the one in force */
	/* events */
	struct tools_rep_event *ev;
	size_t nev;
	/* functions (index 0 unused) */
	struct tools_rep_func *funcs;
	size_t nfuncs, funcs_cap;
	uint32_t *fht; /* func index per slot, keyed by (img/module, addr, kind) */
	size_t fhtcap;
	uint32_t unknown_func;
	/* images */
	struct tools_rep_image **iht;
	size_t ihtcap, nimages, images_missing;
	/* kernel symbols */
	struct report_symtab *ksyms;
	bool ksyms_tried;
	char ksyms_source[1100];
	char ksyms_note[256];
	bool have_kslide;
	uint64_t kslide; /* MAP_IN start of "vmlinux" */
	/* processes */
	struct tools_rep_proc **pht;
	size_t phtcap, nprocs;
	struct tools_rep_thread **tht;
	size_t thtcap;
	/* sample counts */
	uint64_t samples, kept, filtered, no_frames, sampled_pids;
	uint64_t pcs, pcs_unknown, pcs_nosym, pcs_kernel, pcs_kernel_nosym;
	/* scratch */
	struct tools_rep_pcc *pcc;
	uint32_t model_gen;
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
