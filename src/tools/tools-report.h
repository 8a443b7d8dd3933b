/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-report.h: the model and aggregates of `hwpmc report` (private to src/tools).
 * PUBLIC INTERFACES
 *   struct tools_report        one report: options, the log's processes and images,
 *                              the functions seen and, per event, counts and call trees
 *   tools_report_load()        read a log and aggregate it (tools-report.c)
 *   tools_report_print_*()     the outputs (tools-report-out.c)
 *   tools_report_func_name()   a function's printed name (demangled, or image+0xoffset)
 *   tools_report_parse_time()  a --since/--until argument (tools-report-time.c)
 *   tools_pcs_*()              the samples by PC, for --pprof (tools-report-pcs.c)
 *   tools_report_format_time() wall-clock ns as UTC ISO-8601
 * IMPLEMENTATION NOTES
 *   The model (processes, images, symbols, functions) is the report module's
 *   (include/hwpmcd/report.h); this is what hwpmc report does with it.  Functions
 *   are the model's, referred to by index.  A call tree is an array of nodes
 *   (first child / next sibling, found by a hash of (parent, function)); node 0 is
 *   the root.  The "callers" tree starts at the leaf function (pmcstat -G), the
 *   "callees" tree at the process name (folded stacks and flame graphs); --pprof
 *   keeps the samples by PC instead (tools-report-pcs.c).  Samples alike are resolved once and
 *   counted together at a flush (tools-report.c, "Samples"; struct tools_rep_samples).
 */
#ifndef HWPMCD_TOOLS_REPORT_H
#define HWPMCD_TOOLS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <stdio.h>

#include "hwpmcd/common.h"
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

/*
 * --sort KEYS (tools-report-sort.c): the top list by a tuple of keys.  A row is
 * the tuple's values (tools_sort_value() prints one) with its self and total
 * weights; the sample's keys are one value for all its frames, the frame's keys
 * (dso, sym, srcline) one per frame.
 */
enum tools_sort_key {
	TOOLS_SORT_COMM = 1,
	TOOLS_SORT_PID,
	TOOLS_SORT_TID,
	TOOLS_SORT_DSO,
	TOOLS_SORT_SYM,
	TOOLS_SORT_SRCLINE,
	TOOLS_SORT_CPU,
	TOOLS_SORT_CGROUP,
	TOOLS_SORT_NKEYS
};
#define TOOLS_SORT_MAX (TOOLS_SORT_NKEYS - 1)

struct tools_rep_sort {
	uint8_t key[TOOLS_SORT_MAX]; /* in the order given */
	size_t n;		     /* 0: not given (sym) */
	bool has[TOOLS_SORT_NKEYS];
	bool frames;  /* a key of the frame (dso, sym, srcline): totals are not self */
	bool generic; /* not sym alone: rows (else the per-function top list) */
};

struct tools_rep_row {
	uint64_t hash;
	uint64_t self, total; /* weighted as the report's counts */
	uint64_t stamp;	      /* the last sample that counted it in total */
	uint32_t v[TOOLS_SORT_MAX];
};

struct tools_rep_rows {
	struct tools_rep_row *row;
	size_t n, cap;
	struct util_index idx; /* row index + 1 */
};

/* Interned names of dso, srcline and (under srcline) sym values; memo per function. */
struct tools_rep_sortname {
	char *s;
	size_t len;
	uint64_t hash;
	uint32_t func; /* the first function seen with it */
};

struct tools_rep_sortstate {
	struct tools_rep_sortname *names; /* id k is names[k - 1] */
	size_t nnames, namecap;
	struct util_index nidx; /* name id */
	uint32_t *memo[3]; /* per function: its dso, sym and srcline value (0: not yet) */
	size_t memocap;
};

/* A sample counted into the rows: its keys and frames (innermost first). */
struct tools_sort_sample {
	int32_t pid, tid;
	uint32_t cpu, comm, cgroup; /* comm, cgroup: the model's functions (0: none) */
	const uint32_t *ids;
	size_t n;
	uint64_t w;  /* its weight */
	uint64_t no; /* a number no other sample has (totals count a row once per sample) */
};

struct tools_rep_event {
	uint32_t pmcid; /* in the first file that announced it */
	size_t file_no; /* the file (index + 1) whose PMC id maps to it last */
	char name[PLOG_NAME_MAX];
	bool selected;	  /* by --event (all when none is given) */
	/*
	 * kept samples, weighted by their period (pmclog-format.md 11.13) once the log
	 * is read: samples at the event's first period.  Until then, and in sampled, a
	 * count.  Every count below is weighted alike (TOOLS_REP_W_ONE a sample at the
	 * first period while reading, then divided).
	 */
	uint64_t samples;
	uint64_t sampled; /* kept samples, counted */
	uint64_t wsum;	  /* their weights, while reading */
	/* how it samples: the period now and the first (ns for a frequency; 0: unknown) */
	double period, period0;
	bool by_freq;	  /* period is 10^9 / a frequency */
	bool follows_rate; /* the rate marks (11.9) set its frequency */
	bool marked;	   /* the file being read said how it samples (11.13) */
	uint32_t legacy_hz; /* not marked: the rate mark it follows (an earlier hwpmcd) */
	bool varied;	   /* its kept samples did not all have the first period */
	bool capped;	   /* wcur is out of range (TOOLS_REP_W_MAX) */
	uint64_t wcur;	   /* the weight of a sample now: TOOLS_REP_W_ONE * period / period0 */
	double period_lo, period_hi; /* of its kept samples */
	uint64_t *self, *total;
	size_t ncounts;
	struct tools_rep_tree callers, callees, focus_callers, focus_callees;
	struct tools_rep_tree children; /* --children: caller first from the outermost frames */
	struct tools_rep_rows rows;	/* --sort KEYS (generic) */
	uint64_t focus_samples;
};

/* A sample of an event's first period, in its counts while a log is read. */
#define TOOLS_REP_W_ONE ((uint64_t)1 << 20)

/*
 * The samples by PC (tools-report-pcs.c), for --pprof: a location is a distinct
 * code address of the kept samples; a PC sample the samples alike by their
 * locations, process, thread, thread name and cgroup.
 */
struct tools_rep_loc {
	struct report_image *img; /* the image it lies in, or NULL (kernel symbol file, JIT
				     map, no mapping) */
	uint64_t addr;		  /* the address looked up: the link address in img, else the
				     PC (PC - 1 for a return address) */
	uint32_t func;		  /* the out-of-line function there (the model's) */
	uint32_t key_func;	  /* func for a PC in no image, else 0 (part of the key) */
	bool ret;		  /* a return address: the PC is addr + 1 */
};

struct tools_rep_pcsample {
	uint64_t hash;
	uint64_t w; /* weighted as the report's counts (TOOLS_REP_W_ONE a sample) */
	int32_t pid, tid;
	uint32_t ev, comm, cgroup; /* the event's index; the thread's name and the cgroup
				      (the model's functions; cgroup 0: none) */
	int32_t cpu;		   /* with --sort cpu, the CPU (a label), else -1 */
	uint32_t n;
	uint32_t locs[]; /* location ids, leaf first */
};

struct tools_rep_pcs {
	struct tools_rep_loc *loc; /* id k is loc[k - 1] */
	size_t nloc, loccap;
	struct util_index lidx; /* location ids */
	uint8_t *arena; /* the PC samples, in the order first seen */
	size_t len, cap;
	struct util_index sidx; /* a PC sample's arena offset / 8 + 1 */
	size_t n;
};

/* The id (>= 1) of the location of @addr in @img (@func its function), 0 out of memory. */
uint32_t tools_pcs_loc(struct tools_rep_pcs *t, struct report_image *img, uint64_t addr,
		       uint32_t func, bool ret);
/* Add weight @w to the PC sample of these locations (leaf first) and labels (@cpu -1: none).  0 or -errno. */
int tools_pcs_add(struct tools_rep_pcs *t, uint32_t ev, int32_t pid, int32_t tid, uint32_t comm,
		  uint32_t cg, int32_t cpu, const uint32_t *locs, uint32_t n, uint64_t w);
/* The PC sample at *@off (start at 0), advancing it; NULL after the last. */
const struct tools_rep_pcsample *tools_pcs_next(const struct tools_rep_pcs *t, size_t *off);
void tools_pcs_free(struct tools_rep_pcs *t);

/* Parse --sort @arg into @s: 0, or -EINVAL with a message logged. */
int tools_sort_parse(const char *arg, struct tools_rep_sort *s);
const char *tools_sort_key_name(enum tools_sort_key k);

/* A --since/--until time. */
enum tools_rep_time_kind {
	TOOLS_REP_TIME_NONE = 0,
	TOOLS_REP_TIME_LOG,  /* log_s: seconds from the start of the (first) log */
	TOOLS_REP_TIME_WALL, /* wall_ns: wall clock, ns since the epoch (UTC) */
	TOOLS_REP_TIME_MAX
};

struct tools_rep_time {
	enum tools_rep_time_kind kind;
	double log_s;
	int64_t wall_ns;
};

/*
 * tools_report_parse_time: parse @s: seconds from the start of the log ("1.5"), a
 * time before @now_ns ("-10min", "-15m", "-2h", "-30s", "-1d"), a date and time
 * ("2026-12-05T20:15:00Z" UTC; "2026-12-05 20:15[:00]" local) or a time of today
 * ("20:15[:00]", local).  0 with *@ret set, or -EINVAL / -ERANGE; logs nothing.
 */
int tools_report_parse_time(const char *s, int64_t now_ns, struct tools_rep_time *ret);
/* tools_report_format_time: @ns (wall clock) as "YYYY-MM-DDTHH:MM:SS.mmmZ" into @buf. */
void tools_report_format_time(int64_t ns, char *buf, size_t len);

/* One file of the profile. */
struct tools_rep_file {
	const char *path;  /* borrowed from the arguments, or owned (paths_owned) */
	const char *shown; /* the path as printed: util_escape()d (owned) */
	bool have_head;	  /* its INITIALIZE was read */
	int64_t start_ns; /* the wall clock of INITIALIZE's time stamp */
	uint64_t init_tsc, tsc_freq;
	bool have_end;	/* the file ends with CLOSELOG, at end_ns */
	int64_t end_ns;
	uint64_t end_tsc; /* the latest time stamp read */
	bool skipped;	  /* outside the time window, not read */
	bool read;
	enum plog_status status;
	uint64_t samples;
};

struct tools_rep_opts {
	const char *symfs, *kallsyms, *debugdir, *vdso, *jit_dir;
	bool no_debuginfod; /* never ask $DEBUGINFOD_URLS's servers for debug files */
	bool inline_frames; /* --inline: the functions inlined at each PC are frames too */
	bool srcline;	    /* --srcline: functions per source line */
	enum report_map_rule rule;
	/* filters (NULL/0: everything) */
	int32_t *pids, *tids;
	size_t npids, ntids;
	char **comms;
	size_t ncomms;
	char **cgroups; /* --cgroup: paths; a process's cgroup is one of them or below */
	size_t ncgroups;
	uint8_t *cpus; /* bitmap of 65536 CPUs, or NULL */
	char **events;
	size_t nevents;
	struct tools_rep_time since, until; /* kind NONE: no bound */
	const char *since_arg, *until_arg;  /* as given, for messages */
	bool kernel_only, user_only;
	const char *focus; /* --callers/--callees FUNCTION */
	bool want_callers, want_callees, want_focus;
	bool want_focus_callers, want_focus_callees;
	bool want_cgroups; /* --pprof: each sample's cgroup (REPORT_F_CGROUP), a label */
	bool want_pcs;	   /* --pprof: the samples by PC (pcs) */
	bool pprof_no_lines; /* --pprof-no-lines: locations without DWARF lines */
	bool verbose;	   /* -v: the header's every count and detail (else <= 100 columns) */
	bool want_children; /* --children: the caller-first tree without process names */
	struct tools_rep_sort sort; /* --sort KEYS */
	FILE *script;		    /* hwpmc script: every kept sample onto it (perf script's layout) */
};

/* The longest filter text a report keeps (the daemon writes at most 2047 bytes). */
#define TOOLS_REP_FILTER_TEXT 4096

struct tools_report {
	struct tools_rep_opts o;
	const char *file;    /* the file being read (then the last one read), for messages */
	char *const *paths;  /* the arguments: files, directories or "-" (borrowed) */
	size_t npaths;
	struct tools_rep_file *files; /* in time order */
	size_t nfiles, nread, nskipped;
	char **owned; /* paths found in directories */
	size_t nowned;
	size_t cur;   /* the file being read */
	/* PMC id -> event, for the file being read */
	struct {
		uint32_t pmcid, ev;
	} *pmcmap;
	size_t npmcmap;
	/*
	 * The sampling rate a profile's CPU budget set (pmclog-format.md 11.9): each
	 * change (and each file's starting rate) at its wall-clock time, in the
	 * order read; rate_next: the next USERDATA is a rate.
	 */
	struct tools_rep_rate {
		int64_t wall_ns;
		uint32_t hz;
	} *rates;
	size_t nrates, rates_cap;
	bool rate_next;
	uint32_t file_rate_hz; /* the rate the file being read said last (0: none) */
	bool lost_next;	       /* the next USERDATA is a lost mark's count (11.14) */
	uint64_t lost_samples; /* what the lost marks said */
	/* a sampling mark (11.13) being read: samp_state words of it so far */
	int samp_state;
	uint32_t samp_word[4];
	uint64_t weight_capped; /* samples whose weight was out of range (TOOLS_REP_W_MAX) */
	/*
	 * The in-kernel sample filter (pmclog-format.md 11.10): each change (and each
	 * file's starting filter that differs from the last) at its wall-clock time.
	 * A mark is read word by word: filt_state 1 wants its length, 2 its text.
	 */
	struct tools_rep_filter {
		int64_t wall_ns;
		char *text;
	} *filters;
	size_t nfilters, filters_cap;
	int filt_state;
	uint32_t filt_len, filt_got;
	int64_t filt_ns;
	char filt_buf[TOOLS_REP_FILTER_TEXT];
	/* the reported samples' wall-clock span */
	bool have_span;
	int64_t span_lo, span_hi;
	uint64_t in_window; /* samples inside --since/--until (before the other filters) */
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
	uint64_t unknown_samples; /* kept samples with an [unknown] frame (counted) */
	uint64_t pcs, pcs_kernel;
	/*
	 * Samples alike (tools-report.c "Samples"): each distinct one of an epoch (a run
	 * of samples with no other record between them) resolved once, with its count.
	 * arena: the entries in the order first seen; ht: an entry's offset / 8 + 1.
	 */
	struct tools_rep_samples {
		uint8_t *arena;
		size_t len, cap;
		uint32_t *ht;
		size_t htcap, n;
		uint64_t epoch;
		uint64_t flushes;
	} sc;
	struct tools_rep_pcs bypc; /* want_pcs: the samples by PC */
	struct tools_rep_sortstate sortst; /* --sort's names */
	struct tools_report *flame_base;   /* hwpmc diff --flame: BASE, the colours' reference */
	uint64_t sort_no;		   /* samples counted into --sort's rows */
	/* scratch */
	uint32_t *chain; /* a sample's functions: chain_cap entries */
	uint32_t locs[PLOG_CALLCHAIN_DEPTH_MAX + 1]; /* want_pcs: a sample's locations */
	size_t chain_cap;
	uint32_t *stamp; /* per func: the last sample that counted it (totals) */
	/* images whose base name another image of the model has: sorted, printed whole */
	const struct report_image **dup_base;
	size_t ndup_base;
	bool dup_base_done;
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

/*
 * The header; returns the lines it printed (after wrapping), or with @cols the rows
 * they take on a terminal of @cols columns.
 */
size_t tools_report_print_header(struct tools_report *r, FILE *out, unsigned cols);
/* The columns a header line fits unless -v (tools_report_print_header()). */
#define TOOLS_REP_HEADER_COLS 100
/* The share of the samples taken that were lost: lost marks / (samples + lost). */
double tools_report_lost_share(const struct tools_report *r);
/* A warning with advice when more than TOOLS_LOSS_WARN (tools-int.h) of the samples were lost. */
void tools_report_warn_loss(const struct tools_report *r);
/* Beyond this share of samples with an [unknown] frame a report says why that may be. */
#define TOOLS_REP_UNKNOWN_WARN 0.05
/* That share: kept samples with a frame in no mapping, counted. */
double tools_report_unknown_share(const struct tools_report *r);
/* The warning, on stderr, when the share is beyond TOOLS_REP_UNKNOWN_WARN. */
void tools_report_warn_unknown(const struct tools_report *r);
/* One line naming the files read and the reported samples' span (for --folded, on stderr). */
void tools_report_print_coverage(struct tools_report *r, FILE *out);
void tools_report_print_top(struct tools_report *r, FILE *out,
			    const struct tools_rep_print_opts *po);
void tools_report_print_callgraph(struct tools_report *r, FILE *out,
				  const struct tools_rep_print_opts *po);
/* --children: per event the caller-first tree, total and self per node. */
void tools_report_print_children(struct tools_report *r, FILE *out,
				 const struct tools_rep_print_opts *po);
/* Count sample @s into event @e's rows (--sort).  0 or -ENOMEM. */
int tools_sort_count(struct tools_report *r, struct tools_rep_event *e,
		     const struct tools_sort_sample *s);
/* The indices of @e's rows with samples, sorted by self, total, then keys (caller frees). */
uint32_t *tools_sort_rows(struct tools_report *r, const struct tools_rep_event *e, size_t *ret_n);
/* Value @v of key @k as printed (@buf holds numbers). */
const char *tools_sort_value(struct tools_report *r, int k, uint32_t v, char *buf, size_t len);
/* The function a sym value stands for (its image), else 0. */
uint32_t tools_sort_value_func(const struct tools_report *r, int k, uint32_t v);
void tools_sort_rows_free(struct tools_rep_rows *t);
/*
 * tools_script_sample: sample @c of event @e (process @p, NULL if unknown), at wall
 * clock @ns, as a block of perf script's layout onto r->o.script
 * (tools-report-script.c).  0 or -errno.
 */
int tools_script_sample(struct tools_report *r, const struct plog_record *c,
			const struct tools_rep_event *e, struct report_proc *p, bool user_mode,
			int64_t ns);
/* `hwpmc script --help`. */
void tools_script_usage(FILE *out);
/*
 * tools_diff_print, tools_diff_json: `hwpmc diff`: per event both reports have, the
 * rows (functions, or --sort's tuples) of base @rb and new @rn with their shares and
 * the deltas, largest change first (tools-report-diff.c).  0 or -errno.
 */
int tools_diff_print(struct tools_report *rb, struct tools_report *rn, FILE *out,
		     const struct tools_rep_print_opts *po);
int tools_diff_json(struct tools_report *rb, struct tools_report *rn, FILE *out,
		    const struct tools_rep_print_opts *po);
/*
 * tools_diff_base_counts: for each node i of NEW's callees tree @nt (report @rn),
 * the samples of the node of BASE's tree @bt (report @rb) at the same path of
 * names and images into @out[i], 0 where BASE has no such path.  0 or -ENOMEM.
 */
int tools_diff_base_counts(struct tools_report *rb, const struct tools_rep_tree *bt,
			   struct tools_report *rn, const struct tools_rep_tree *nt, uint64_t *out);
/*
 * tools_annotate: `hwpmc annotate`: each image's copy of function @want with leaf
 * samples, its instructions with their samples and source lines, onto @out as text
 * or JSON (tools-annotate.c; needs the samples by PC, want_pcs).  0, -ENOENT (no
 * sample there: said), or -errno.
 */
int tools_annotate(struct tools_report *r, const char *want, FILE *out, bool json);
/* `hwpmc annotate --help`. */
void tools_annotate_usage(FILE *out);
/* `hwpmc diff --help`. */
void tools_diff_usage(FILE *out);
void tools_sort_free(struct tools_rep_sortstate *st);
void tools_report_print_focus(struct tools_report *r, FILE *out,
			      const struct tools_rep_print_opts *po);
int tools_report_print_folded(struct tools_report *r, FILE *out);
int tools_report_print_json(struct tools_report *r, FILE *out,
			    const struct tools_rep_print_opts *po);
int tools_report_write_flame(struct tools_report *r, FILE *out);
/*
 * tools_report_write_pprof: the selected events' call stacks (the callees trees)
 * as a gzip-compressed pprof profile onto @fd (tools-pprof.c).  0 or -errno.
 */
int tools_report_write_pprof(struct tools_report *r, int fd);
/*
 * tools_report_write_calltree: the selected events' functions, self costs and call
 * edges in the callgrind format onto @out (KCachegrind; tools-calltree.c); @cmd
 * names the log.  0 or -errno.
 */
int tools_report_write_calltree(struct tools_report *r, FILE *out, const char *cmd);
/*
 * tools_report_write_gprof: a gmon.out file per user image with samples into @dir
 * (made if missing), for gprof (tools-gprof.c).  0, or -errno with a message logged.
 */
int tools_report_write_gprof(struct tools_report *r, const char *dir, mode_t mode);
/* The single selected event for folded/flame output, or NULL with a message logged. */
struct tools_rep_event *tools_report_single_event(struct tools_report *r, const char *what);

#endif /* HWPMCD_TOOLS_REPORT_H */
