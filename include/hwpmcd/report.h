/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * report.h: the report model (module report, the project's libpmcstat): what a
 * pmclog says about processes, threads and mapped images, and the function each
 * PC of a sample resolves to.
 *
 * PUBLIC INTERFACES
 *   struct report_image, struct report_func, enum report_func_kind, struct report_where
 *   enum report_map_rule, report_map_rule_name()
 *   struct report_model_opts
 *   struct report_model: report_model__new(), __free(), __record(), __proc(),
 *     __thread_name(), __proc_name(), __resolve(), __resolve_frames(), __locate(),
 *     __lines(), __comm_func(),
 *     __func_name(), __func_plain_name(), __func_image(), __image_file(), __next_log(), __finish();
 *     report_proc__note_sample()
 *   report_pl_start_v()
 *
 * IMPLEMENTATION NOTES
 *   The model is pmcstat's (docs/pmclog-format.md 10.1): per pid a sorted list of
 *   ranges, each an image placed with a load bias, filled by MAP_IN, trimmed by
 *   MAP_OUT, copied by PROCFORK; SYSEXIT makes the process a zombie that the next
 *   record naming the pid replaces.  The kernel is pid -1.  A MAP_IN covers the
 *   executable sections of its image (pi_start..pi_end) placed with bias
 *   start - V, where V is the one rule of pmclog-format.md 11.5 (FreeBSD main's
 *   pmcstat and kernel, and hwpmcd since its logs carry the USERDATA mark of
 *   section 11.8), or, for logs of earlier hwpmcd versions (no mark, cpu type
 *   GENERIC, hwpmcd's PMC ids), the rule those were written with (10.2).  An
 *   image whose file cannot be read still covers [start, start + 256 MiB) as a
 *   fallback range, consulted only where no exact range holds a PC, so its PCs
 *   print as image+0xoffset rather than vanish.  "[vdso]" images are read from
 *   the vDSO file beside the log (FILE.vdso, --vdso).
 *
 *   Each PC resolves to a function, interned once (by image and symbol start, or
 *   kallsyms symbol, or image and address when there is no symbol) and named by
 *   its index; the answer is cached per (process, PC) and the cache invalidated
 *   by any change of the model.  Kernel PCs resolve through the kernel symbol
 *   file (--kallsyms, else FILE.kallsyms beside the log, else /proc/kallsyms if
 *   its _stext matches the log's kernel MAP_IN), else through pid -1 images
 *   (FreeBSD kernels under --symfs), else print as [kernel]+0xaddress.
 *
 *   Images are keyed by path and the build id the log says for the path
 *   (pmclog-format.md 11.11): the file at the path serves only if it is that
 *   build, else the debug directory's .build-id/xx/rest.debug, else the PCs stay
 *   image+0xoffset.  A user process's MAP_INs (and a PROCEXEC's executable) are
 *   placed only when its ranges are needed (its first PC to resolve, a PROCFORK of
 *   it, a MAP_OUT), in log order: the file of an image no sampled process maps is
 *   never opened (images_read counts those that were).  With --inline or --srcline a PC of a user function is looked
 *   up once per (image, link address) in the image's DWARF (report-dwarf.h): the
 *   frames are interned as a chain of functions (inlined ones are
 *   REPORT_F_INLINE, named by DWARF), each with its file and line under
 *   --srcline; there a user function is its image, name, file and line (one
 *   function whether it ran inlined or out of line).  A PC of a process in no image is looked up in the process's JIT
 *   map (perf-PID.map: --jit-maps DIR, LOG.jit/, or /tmp for a log of this boot;
 *   only maps of the reporting user or root), giving REPORT_F_JIT functions
 *   named "[jit]".
 *
 *   A model can read several logs in turn (rotated files, report_model__next_log()):
 *   each log declares its processes, mappings and kernel again, so those are
 *   forgotten between logs, while functions and images stay (the caller's counts
 *   refer to functions by index).  Kernel functions are interned by module name
 *   and address, so the same symbol from two logs' kallsyms files is one function.
 *
 *   One thread uses a model.  Everything read from the log or an image is hostile:
 *   printed names are escaped.
 */
#ifndef HWPMCD_REPORT_H
#define HWPMCD_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hwpmcd/maplog-elf.h"
#include "hwpmcd/pmclog.h"
#include "hwpmcd/report-dwarf.h"
#include "hwpmcd/report-sym.h"

/* PCs at or above this are kernel PCs (the x86-64 kernel half). */
#define REPORT_KERNEL_MIN 0xffff800000000000ull

enum report_func_kind {
	REPORT_F_USER = 0, /* a symbol of a user image */
	REPORT_F_KERNEL,   /* a kernel or module symbol */
	REPORT_F_NOSYM,	   /* in an image, no symbol: image+0xoffset */
	REPORT_F_UNKNOWN,  /* in no mapping: [unknown] */
	REPORT_F_COMM,	   /* a process name (the first level of folded stacks) */
	REPORT_F_INLINE,   /* a function inlined at the PC (--inline; DWARF name, no address) */
	REPORT_F_JIT,	   /* JIT code named by the process's perf-PID.map (name, no address) */
	REPORT_F_CGROUP,   /* a cgroup path (pprof's "cgroup" label, above the process name) */
	REPORT_F_KIND_MAX
};

/*
 * How MAP_IN pl_start places an image (pmclog-format.md 10.2 and 11.5): pmcstat's
 * load bias is pl_start - V, and the rules differ in V.
 */
enum report_map_rule {
	REPORT_RULE_AUTO = 0,  /* decided per log (see report.h's notes) */
	REPORT_RULE_FREEBSD,   /* V = p_vaddr & -p_align of the first PT_LOAD with PF_X, any
				  ELF type (FreeBSD main; hwpmcd logs with the mark) */
	REPORT_RULE_HWPMCD_V1, /* V = 0 for ET_DYN; for ET_EXEC the last PF_X PT_LOAD at
				  file offset 0 (logs of hwpmcd before the mark) */
	REPORT_RULE_MAX
};

/* "auto", "freebsd", "hwpmcd-1"; "?" out of range. */
const char *report_map_rule_name(enum report_map_rule rule);

struct report_image {
	char *path;	  /* as the log names it */
	char *shown;	  /* the path escaped for printing */
	const char *base; /* the last component of shown */
	bool kernel;	  /* announced for pid -1 */
	/* the GNU build id the log says the file has (pmclog-format.md 11.11), if it does */
	uint8_t want_id[MAPLOG_BUILD_ID_MAX];
	size_t want_id_len;
	char *file;	  /* the file read for it when not the path (found by build id) */
	bool info_tried;  /* the file was looked at (at the first sample of a process that
			     maps it, or a fork, MAP_OUT or exec of one) */
	int info_err;	  /* 0: info is valid; else why the file could not be read (-ESTALE:
			     the file at the path is another build, and none was found) */
	struct maplog_elf_info info;
	struct report_symtab *syms; /* loaded at the first PC that needs it */
	bool syms_tried;
	struct report_dwarf *dwarf; /* --inline/--srcline: read at the first PC that needs it */
	bool dwarf_tried;
	uint64_t pcs;	    /* PCs resolved into this image (report_model__finish()) */
	uint64_t pcs_nosym; /* of them without a symbol */
	struct report_image *hnext;
};

struct report_func {
	const char *name;	  /* raw symbol name (borrowed from a symtab) or NULL (NOSYM) */
	char *pretty;		  /* printed name, made on first use */
	struct report_image *img; /* NULL for [unknown], kallsyms and comm functions */
	const char *module;	  /* kallsyms module, or NULL */
	char *module_img;	  /* "[module]", made with the function */
	char *raw;		  /* REPORT_F_COMM, _CGROUP: the name as logged (name points here) */
	char *plain;		  /* the printed name without its source line (--srcline) */
	const char *file;	  /* --srcline: the source file (borrowed from DWARF), or NULL */
	uint32_t line;		  /* --srcline: the line in @file (0: none) */
	uint64_t addr;		  /* symbol start, or the link address of a NOSYM PC */
	enum report_func_kind kind;
	uint64_t pcs; /* PCs resolved to it */
};

struct report_model_opts {
	const char *symfs;    /* root to find images under (NULL: "/") */
	const char *debugdir; /* global debug directory (NULL: /usr/lib/debug) */
	const char *kallsyms; /* kernel symbols file (NULL: beside the log, or /proc) */
	const char *vdso;     /* vDSO image (NULL: FILE.vdso beside the log) */
	const char *log;      /* the log's path ("-" or NULL: none beside it) */
	bool debuginfod;      /* report_sym_opts.debuginfod: ask $DEBUGINFOD_URLS's servers */
	const char *jit_dir;  /* JIT maps (perf-PID.map) of PCs in no image; NULL: LOG.jit/
				 beside the log, else /tmp for a log of this boot */
	bool inline_frames;   /* expand a PC into the functions inlined there (DWARF) */
	bool srcline;	      /* a function per source line: file:line of each frame (DWARF) */
	enum report_map_rule rule;
};

/*
 * A cgroup the logs put processes in (pmclog-format.md 11.12): its path (bytes
 * outside printable ASCII shown as '?') and the samples noted of processes while
 * they were in it (report_proc__note_sample()).
 */
struct report_cgroup {
	char *path;
	uint64_t samples;
};

/* The distinct cgroups a model keeps; marks of more are counted (cgroups_over) and left out. */
#define REPORT_CGROUPS_MAX 65536

struct report_proc;   /* a process of the model (opaque) */
struct report_jithist; /* a JIT map's entries by time (private) */
struct report_thread; /* a thread's name (private) */
struct report_pcc;    /* an entry of the PC cache (private) */

struct report_model {
	struct report_model_opts o;
	/* what INITIALIZE said */
	bool have_init;
	uint32_t cpu_type;
	char cpuid[PLOG_CPUID_LEN];
	uint64_t tsc_freq;
	int64_t ts_sec, ts_nsec;
	/* the MAP_IN rule in force, and why (printed in the report's header) */
	enum report_map_rule rule;
	const char *rule_why;
	bool marked;	       /* the log carries hwpmcd's rule mark (USERDATA) */
	bool rule_fixed;       /* a MAP_IN was placed: the rule can no longer change */
	bool hwpmcd_pmcids;    /* every PMC id so far is of hwpmcd's form */
	uint64_t npmcids;
	/* functions (index 0 unused) */
	struct report_func *funcs;
	size_t nfuncs, funcs_cap;
	uint32_t *fht;
	size_t fhtcap;
	uint32_t unknown_func;
	/* images */
	struct report_image **iht;
	size_t ihtcap, nimages, images_missing;
	size_t images_read; /* of nimages, those looked at (images of sampled processes) */
	size_t images_other_build; /* of the missing: the file at the path is another build */
	size_t images_by_id;	   /* found by build id (the file at the path missing or other) */
	/*
	 * What the symbol tables' debug-file lookups learnt, shared by every image of
	 * the report: a candidate refused or failed once, or debuginfod servers that
	 * failed, cost once (report_debug_memo__new()).
	 */
	struct report_debug_memo *debug_memo;
	/*
	 * Build id marks (pmclog-format.md 11.11): the run being read (bid_state 1: its
	 * length is next, 2: its bytes, 3: complete, for the next MAP_IN), and per path
	 * the last id the log said (path_ids, this log's).
	 */
	int bid_state;
	uint8_t bid[MAPLOG_BUILD_ID_MAX];
	size_t bid_len, bid_got;
	struct report_pathid *path_ids;
	size_t npath_ids, path_ids_cap;
	/*
	 * Cgroup marks (pmclog-format.md 11.12): the run being read (cg_state 1: its
	 * length is next, 2: its bytes), and every cgroup of the logs, in order of
	 * first mention (processes point at them).
	 */
	int cg_state;
	uint8_t *cg_buf; /* 4 + PLOG_CGROUP_PATH_MAX bytes, allocated at the first mark */
	size_t cg_len, cg_got;
	struct report_cgroup **cgroups;
	size_t ncgroups, cgroups_cap;
	uint32_t *cght; /* an open-addressing index of cgroups (index + 1), cghtcap slots */
	size_t cghtcap;
	uint64_t cgroup_marks, cgroups_over;
	/* kernel symbols */
	struct report_symtab *ksyms;
	bool ksyms_tried;
	struct report_symtab **ksyms_old; /* of earlier logs: functions borrow their names */
	size_t nksyms_old;
	/* /proc/kallsyms, read once for every log that falls back to it (ksyms may borrow it) */
	struct report_symtab *ksyms_proc;
	size_t ksyms_more;		  /* kallsyms files loaded after the first */
	char ksyms_source[1100];
	char ksyms_note[256];
	bool have_kslide;
	uint64_t kslide; /* run-time minus link-time address of "vmlinux" */
	/* processes and threads */
	struct report_proc **pht;
	size_t phtcap, nprocs;
	size_t nprocs_logged; /* processes of the logs, earlier ones included */
	struct report_thread **tht;
	size_t thtcap;
	/* PC totals (report_model__finish()) */
	uint64_t pcs_unknown, pcs_nosym, pcs_kernel_nosym;
	/*
	 * the resolution cache: direct-mapped, pcc_size entries (a power of two), grown
	 * (emptied) as it fills: a small report touches little of it
	 */
	struct report_pcc *pcc;
	uint32_t pcc_size, pcc_fills;
	uint32_t gen;
	/*
	 * --inline/--srcline: the frames of each (image, link address) looked up in
	 * DWARF, and the frame lists (chains) of more than one function: chains[id]
	 * is the length n, chains[id + 1 ..] the functions, innermost first.
	 */
	struct report_dwc *dwc;
	size_t ndwc, dwccap;
	uint32_t *chains;
	size_t nchains, chains_cap;
	uint64_t pcs_dwarf, pcs_nodwarf; /* user PCs with a symbol: with / without DWARF lines */
	uint64_t inline_cut;		 /* PCs whose inline chain was cut at the depth limit */
	/*
	 * JIT maps: per pid of the current log its perf-PID.map (NULL: none), read at
	 * its first PC in no image, from jit_dir_used; earlier logs' tables stay in
	 * jit_old (functions borrow their names).
	 */
	struct report_jit *jits;
	size_t njits, jitscap;
	struct report_symtab **jit_old;
	size_t njit_old;
	bool jit_dir_decided;
	char jit_dir_used[1100];
	uint64_t pcs_jit;	     /* PCs named by a JIT map (report_model__finish()) */
	uint64_t jit_maps, jit_refused, jit_bad_lines;
	/*
	 * JIT maps with the times their lines appeared (perf-PID.map.times): the time of
	 * the sample being resolved (report_model__set_time(); 0: unknown), the PCs
	 * named by it among entries that covered them at different times (jit_timed),
	 * and the maps with times (jit_hists, a list kept for the names).
	 */
	int64_t now_ns;
	uint64_t jit_timed, jit_timed_maps;
	bool pcc_skip; /* the last resolution depends on the time: not cached */
	struct report_jithist *jit_hists;
	/* the range trees' spare nodes (report-model.c) and their priority source */
	struct report_rnode *rfree;
	size_t nrfree;
	uint64_t rseed;
};

/*
 * report_model__new: an empty model under @o (copied; its strings are borrowed
 * for the model's life).  0 or -ENOMEM.
 */
int report_model__new(const struct report_model_opts *o, struct report_model **ret_m);
void report_model__free(struct report_model *m);

/*
 * report_model__record: apply one record of the log: INITIALIZE, PMCALLOCATE(DYN)
 * (for the rule), USERDATA (the rule mark), PROC_CREATE, THR_CREATE, MAP_IN,
 * MAP_OUT, PROCEXEC, PROCFORK, SYSEXIT, PROCEXIT; others are ignored.  0 or
 * -ENOMEM.
 */
int report_model__record(struct report_model *m, const struct plog_record *rec);

/* report_model__proc: the process @pid of the model (a zombie too), or NULL. */
struct report_proc *report_model__proc(const struct report_model *m, int32_t pid);

/* The name PROC_CREATE gave @p ("" if none); borrowed. */
const char *report_model__proc_name(const struct report_proc *p);

/*
 * report_proc__note_sample: the caller kept a sample of @p; returns how many it
 * noted for @p before (0: the first), for counting sampled processes.  The
 * process's cgroup, if the log said one, counts it too.
 */
uint64_t report_proc__note_sample(struct report_proc *p);

/* The cgroup the log says @p runs in now, or NULL; borrowed for the model's life. */
const struct report_cgroup *report_model__proc_cgroup(const struct report_proc *p);

/*
 * report_cgroup_under: whether cgroup path @path is @top or below it ("/a/b" is
 * under "/a" and "/a/", not under "/ab"); "/" holds every path.
 */
bool report_cgroup_under(const char *path, const char *top);

/* The name THR_CREATE gave thread @tid, or NULL; borrowed until the next __record(). */
const char *report_model__thread_name(const struct report_model *m, int32_t tid);

/*
 * report_model__resolve: the function of PC @look in process @p, or in the kernel
 * when @p is NULL; @look is the PC itself for the sampled PC of a chain and PC - 1
 * for a return address (the caller decides).  A PC of @p in no range gives the
 * "[unknown]" function.  Counts the PC for the function.  Returns the function's
 * index (>= 1), or 0 when out of memory.
 */
uint32_t report_model__resolve(struct report_model *m, struct report_proc *p, uint64_t look);

/* Where a PC lies (report_model__locate()). */
struct report_where {
	struct report_image *img; /* the image placed there, or NULL (kernel symbol file,
				     JIT map, no mapping) */
	uint64_t addr;		  /* the link address in @img, else the PC itself */
};

/*
 * report_model__locate: where PC @look of process @p (NULL: the kernel) lies, as
 * report_model__resolve() finds its function (call it first, in the same state of
 * the model): the image and link address, for outputs that keep addresses (pprof).
 * 0 or -ENOMEM.
 */
int report_model__locate(struct report_model *m, struct report_proc *p, uint64_t look,
			 struct report_where *ret);

/*
 * report_model__lines: the inline chain and source lines at link address @link of
 * user image @img (report_dwarf__frames(): innermost first, at most @max written,
 * the number of levels returned), from its DWARF or debug file, read at the first
 * call for the image; 0 without DWARF there (or for a kernel image).
 */
size_t report_model__lines(struct report_model *m, struct report_image *img, uint64_t link,
			   struct report_dwarf_frame *out, size_t max);

/*
 * report_model__set_time: the wall-clock time (ns) of the sample whose PCs are
 * resolved next, for JIT code whose addresses the JIT reused (a map's entries by
 * time, perf-PID.map.times); 0: unknown (the last entry covering a PC names it).
 */
void report_model__set_time(struct report_model *m, int64_t ns);

/*
 * report_model__comm_func: the REPORT_F_COMM function naming thread @tid of
 * process @p (pid @pid): the thread's name, else the process's, else "[pid N]"
 * ("[idle]" for pid 0).  0 when out of memory.
 */
uint32_t report_model__comm_func(struct report_model *m, struct report_proc *p, int32_t pid,
				 int32_t tid);

/*
 * report_model__cgroup_func: the REPORT_F_CGROUP function naming @p's cgroup as the
 * log said it last (pmclog-format.md 11.12); 0 when @p is NULL, has no cgroup, or
 * out of memory.
 */
uint32_t report_model__cgroup_func(struct report_model *m, const struct report_proc *p);

/*
 * report_model__resolve_frames: like report_model__resolve(), but with
 * --inline/--srcline: the frames of @look, innermost first, into @out (at most
 * @max, the innermost ones; @max >= 1): the functions inlined at @look (--inline)
 * and the out-of-line function, each with its line (--srcline).  Without those
 * options, or for a PC without DWARF, the one function.  Counts the PC for the
 * out-of-line function, whose index goes to *@ret_func.  Returns the number of
 * frames (> @max: more were cut), or 0 when out of memory.
 */
size_t report_model__resolve_frames(struct report_model *m, struct report_proc *p,
				    uint64_t look, uint32_t *out, size_t max, uint32_t *ret_func);

/*
 * The printed name of function @f (escaped; borrowed until report_model__free()):
 * with --srcline and a known line, "NAME FILE:LINE" (FILE's last component).
 */
const char *report_model__func_name(struct report_model *m, uint32_t f);
/* The printed name of @f without its source line (escaped; borrowed). */
const char *report_model__func_plain_name(struct report_model *m, uint32_t f);
/*
 * report_model__image_file: the file image @img is read from (its debug-free ELF:
 * found by build id, under --symfs, or the vDSO's file) into @out; "" if none.
 */
void report_model__image_file(const struct report_model *m, const struct report_image *img,
			      char *out, size_t outsize);
/* The printed image of function @f ("" for a comm function). */
const char *report_model__func_image(const struct report_model *m, uint32_t f);

/*
 * report_model__next_log: read the next log @log (its path for FILE.kallsyms and
 * FILE.vdso, borrowed for the model's life; "-" or NULL: none) into the same model:
 * forget processes, threads, the kernel's placement, INITIALIZE and the MAP_IN rule
 * of the previous log, keep functions and images.  Kernel symbols are read again
 * for @log (unless --kallsyms gave one file for all).  0 or -ENOMEM.
 */
int report_model__next_log(struct report_model *m, const char *log);

/*
 * report_model__finish: at the end of the log, fold the PCs counted per function
 * into the images' and the model's totals, and say where kernel symbols came
 * from if no kernel PC needed them.
 */
void report_model__finish(struct report_model *m);

/*
 * report_pl_start_v: V of @rule for the image @info (ET_REL: 0), so that the load
 * bias is pl_start - V.  The rule of maplog-elf.h (maplog_pl_start_v()) for
 * REPORT_RULE_FREEBSD.
 */
uint64_t report_pl_start_v(enum report_map_rule rule, const struct maplog_elf_info *info);

#endif /* HWPMCD_REPORT_H */
