/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-report-main.c: `hwpmc report [OPTIONS] [PATH...|-]`, the command line.
 *
 * PUBLIC INTERFACES
 *   tools_report_main(), tools_report_usage()
 *
 * IMPLEMENTATION NOTES
 *   Options are parsed into struct tools_rep_opts, the log is read once (tools_report_load()),
 *   then each requested output is printed from the aggregates.  Only the trees
 *   an output needs are built.  Bad arguments are refused before the log is
 *   read, each with the option and the value in the message.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hwpmcd/common.h"
#include "hwpmcd/files.h"
#include "hwpmcd/log.h"
#include "hwpmcd/report-dwarf.h"
#include "tools-int.h"
#include "tools-report.h"

void tools_annotate_usage(FILE *out)
{
	fprintf(out,
		"usage: hwpmc annotate FUNCTION [OPTIONS] [PATH...|-]   (no PATH: ./hwpmc.pmclog)\n"
		"\n"
		"FUNCTION's instructions with the samples at each (pmcannotate, perf annotate):\n"
		"each image's copy of it with samples where it was the leaf, most sampled\n"
		"first, disassembled from the image's file (capstone), each instruction's\n"
		"share of the function's samples and count, its source line and the line's\n"
		"text from DWARF where the image or its debug file has it; the hottest line\n"
		"is marked '>>'.  A sample counts at its exact PC, where the thread was.  A\n"
		"kernel function has no code here: its sampled addresses are listed.\n"
		"\n"
		"Options:\n"
		"  --json         the instructions (address, size, text, samples, percent,\n"
		"                 file, line) and the lines' samples as JSON\n"
		"  --stdio        the text (the default)\n"
		"and the filters and symbol options of 'hwpmc report' (--pid, --comm, --cpu,\n"
		"--event, --since, --until, --symfs, --debug-dir, --kallsyms...); one event\n"
		"(--event when the log has several).\n"
		"\n"
		"Examples:\n"
		"  hwpmc annotate c_leaf demo.pmclog\n"
		"  hwpmc annotate --json --comm myprog parse_line all.pmclog | jq .functions[0].lines\n");
}

void tools_diff_usage(FILE *out)
{
	fprintf(out,
		"usage: hwpmc diff [OPTIONS] BASE NEW\n"
		"\n"
		"What changed from profile BASE to profile NEW (perf diff, pprof -diff_base):\n"
		"each a log, a directory of rotated logs (a profile's) or '-' (BASE only).\n"
		"Per event both have, per function (or per --sort KEYS tuple), its self and\n"
		"total shares of each profile's samples and the deltas, NEW - BASE in\n"
		"percentage points, the largest change of self first: a function that grew\n"
		"is +, one that shrank -.  Shares, not counts: profiles of different lengths\n"
		"or rates compare.\n"
		"\n"
		"Options:\n"
		"  --sort KEYS    compare tuples of keys, as 'hwpmc report --sort' (comm, pid,\n"
		"                 tid, dso, sym, srcline, cpu, cgroup): --sort dso: per library\n"
		"  --json         the rows as JSON: key fields, counts, shares and deltas\n"
		"  --limit N      rows per event (default: what fits the terminal; 0: all)\n"
		"and the filters and symbol options of 'hwpmc report' (--pid, --comm, --cpu,\n"
		"--event, --since, --until, --kernel, --user, --inline, --srcline, --symfs,\n"
		"--kallsyms...), applied to both; 'hwpmc report --help' explains them.\n"
		"\n"
		"Examples:\n"
		"  hwpmc diff before.pmclog after.pmclog\n"
		"  hwpmc diff --sort dso --comm nginx monday/ tuesday/\n");
}

void tools_script_usage(FILE *out)
{
	fprintf(out,
		"usage: hwpmc script [OPTIONS] [PATH...|-]   (no PATH: ./hwpmc.pmclog)\n"
		"\n"
		"Every sample of the logs, as read, in the text layout of 'perf script', for\n"
		"the tools that read it (speedscope, Firefox Profiler, FlameGraph's\n"
		"stackcollapse-perf.pl).  A block per sample: a line\n"
		"\n"
		"  COMM PID/TID [CPU] SECONDS.MICROS:     PERIOD EVENT:\n"
		"\n"
		"(the time is the wall clock's; the period the event's at the sample, in ns\n"
		"for a clock sampled by frequency), then a line per PC, leaf first:\n"
		"\n"
		"        <TAB>ADDRESS FUNCTION+0xOFFSET (IMAGE)\n"
		"\n"
		"and a blank line.  What the samples cover goes to standard error.\n"
		"\n"
		"Options: the filters and symbol options of 'hwpmc report' (--pid, --tid,\n"
		"--comm, --cgroup, --cpu, --event, --since, --until, --kernel, --user,\n"
		"--symfs, --kallsyms, --debug-dir, --no-debuginfod, --jit-maps, --vdso,\n"
		"--map-rule, --confine); 'hwpmc report --help' explains them.\n"
		"\n"
		"Examples:\n"
		"  hwpmc script all.pmclog > all.perf             # speedscope all.perf\n"
		"  hwpmc script --comm myprog all.pmclog | stackcollapse-perf.pl | flamegraph.pl\n"
		"  hwpmc script --since -5min --pid 1234 profiles/web/\n");
}

void tools_report_usage(FILE *out)
{
	fprintf(out,
		"usage: hwpmc report [OPTIONS] [PATH...|-]   (no PATH: ./hwpmc.pmclog)\n"
		"\n"
		"Symbolize pmclogs (written by hwpmcd or by FreeBSD's hwpmc) and print where\n"
		"the samples are.  PCs resolve through the log's MAP_IN records and the ELF\n"
		"files they name (.symtab, .dynsym, debug files by build id or debuglink);\n"
		"kernel PCs through FILE.kallsyms (saved by 'hwpmc record'), --kallsyms, or\n"
		"/proc/kallsyms when the log is of this boot.  '-' reads standard input.\n"
		"Several files, or a directory (its *.pmclog files), are read as one profile\n"
		"in the order of their INITIALIZE times; each file resolves its PCs by its own\n"
		"mappings and FILE.kallsyms, and events are merged by name.\n"
		"\n"
		"Outputs (default --top; text outputs can be combined):\n"
		"  --top              functions by self samples, with self%%, total%% (anywhere\n"
		"                     in the chain), samples and image, per event\n"
		"  --callgraph        pmcstat -G style: leaf functions, their callers indented\n"
		"  --children         top-down (perf --children, pprof -tree): from the\n"
		"                     outermost frames, callers first, each function's total\n"
		"                     (it and what it calls) and self, sorted by total"
		"  --callers FUNC     who calls FUNC (by name, raw or demangled)\n"
		"  --callees FUNC     what FUNC calls\n"
		"  --folded           folded stacks 'comm;outer;...;leaf COUNT' (flamegraph.pl,\n"
		"                     inferno, speedscope); alone on standard output\n"
		"  --flame FILE.svg   write an interactive SVG flame graph (hover, click to zoom,\n"
		"                     Ctrl-F to search; FILE.svg#s=REGEX searches on load)\n"
		"  --pprof FILE.pb.gz write a gzip-compressed pprof profile (go tool pprof,\n"
		"                     Pyroscope, speedscope): a location per PC with its source\n"
		"                     lines and inline frames (pprof -list, -disasm), samples\n"
		"                     and cpu time, labels comm, pid, tid and cgroup\n"
		"  --pprof-no-lines   no DWARF in it: each location names its function only\n"
		"                     (what an always-on profile pushes: no image's DWARF read)\n"
		"  --calltree FILE    write the callgrind format (KCachegrind, callgrind_annotate;\n"
		"                     pmcstat -F): self costs and call edges per function\n"
		"  --gprof DIR        write a gmon.out file per image into DIR (pmcstat -g), for\n"
		"                     'gprof IMAGE DIR/IMAGE.gmon'; one event\n"
		"  --json             the top list and call graph as JSON; alone on standard "
		"output\n"
		"\n"
		"Shaping:\n"
		"  --sort KEYS        the top list (and --json) by these keys, in the order\n"
		"                     given (perf --sort): comm (thread name), pid, tid, dso\n"
		"                     (image), sym (the default), srcline (FILE:LINE from\n"
		"                     DWARF, as --srcline), cpu, cgroup; e.g. comm,dso.\n"
		"                     Total: samples with the row anywhere in the chain;\n"
		"                     with cpu, --pprof labels each sample's cpu too"
		"  --depth N          call graph depth (default 16, as pmcstat -z; 0: unlimited)\n"
		"  --min-percent P    call graph entries under P%% of the samples are summed into\n"
		"                     one line (default 0.5; 0 shows all)\n"
		"  --limit N          --top rows per event (default: what fits the terminal's\n"
		"                     height with the header on a terminal, all otherwise; 0: all)\n"
		"  --full-paths       print image paths, not file names\n"
		"  -v, --verbose      the header's every count and detail (the MAP_IN rule, the\n"
		"                     cpuid, DROPNOTIFY records...); by default its lines fit\n"
		"                     100 columns and show what is not zero\n"
		"\n"
		"Filters (samples that pass all of them are reported):\n"
		"  --pid LIST, --tid LIST   process / thread ids, comma-separated\n"
		"  --comm LIST              process or thread names\n"
		"  --cgroup LIST            cgroup v2 paths: processes in one of them or below\n"
		"                           (/system.slice/nginx.service, a container's\n"
		"                           /system.slice/docker-ID.scope; the header lists them)\n"
		"  --cpu LIST               CPUs, e.g. 0,2-3\n"
		"  --event LIST             event names (hwpmc report --top lists them)\n"
		"  --since T, --until T     seconds from the start of the (first) log (1.5),\n"
		"                           a time before now (-30s, -15m, -10min, -2h, -1d),\n"
		"                           a UTC time (2026-12-05T20:15:00Z), a local one\n"
		"                           ('2026-12-05 20:15[:00]') or today's (20:15)\n"
		"  --kernel                 kernel-mode samples, kernel frames only\n"
		"  --user                   user frames only (kernel-only samples are counted\n"
		"                           as 'without frames')\n"
		"\n"
		"Symbols:\n"
		"  --symfs DIR        find images (and debug files) under DIR, like pmcstat -r\n"
		"  --kallsyms FILE    kernel symbols of the recording machine\n"
		"  --debug-dir DIR    global debug directory (default /usr/lib/debug)\n"
		"  --no-debuginfod    never ask the debuginfod servers of $DEBUGINFOD_URLS for\n"
		"                     the debug file of an image without local symbols (by\n"
		"                     build id; asked by default when the variable is set)\n"
		"  --inline           show the functions the compiler inlined at each PC as\n"
		"                     frames of their own, inner first (DWARF of the image or\n"
		"                     its debug file; perf report --inline)\n"
		"  --srcline          a function per source line: 'NAME FILE:LINE' (for an\n"
		"                     outer frame the line of the call)\n"
		"  --jit-maps DIR     JIT code (PCs in no image) named by DIR/perf-PID.map, as\n"
		"                     V8 (node --perf-basic-prof), the JVM's perf-map-agent and\n"
		"                     python -X perf write them (default: LOG.jit/ beside the\n"
		"                     log, else /tmp for a log of this boot); only maps owned\n"
		"                     by you or root are read\n"
		"  --vdso FILE        the vDSO image of the recording machine (default: the\n"
		"                     FILE.vdso hwpmc record writes beside the log)\n"
		"  --confine          before reading anything, keep no privilege but reading\n"
		"                     files: as root, become user nobody; keep only the\n"
		"                     capability CAP_DAC_READ_SEARCH; no new privileges;\n"
		"                     Landlock and a seccomp filter allow only the system\n"
		"                     calls a report makes: no network (so no debuginfod),\n"
		"                     exec, process, thread, signal to another process, nor\n"
		"                     a file opened for writing (file outputs name a\n"
		"                     descriptor: --pprof /dev/stdout)\n"
		"  --broker-fd N      with --confine, as hwpmcd's pushes run it on users' ELF\n"
		"                     files: open no file, ask each from the daemon over the\n"
		"                     socket N; as nobody, with no capability at all\n"
		"  --map-rule R       how MAP_IN starts place images: auto (default), freebsd\n"
		"                     (FreeBSD main's rule: pl_start - V is the load bias, V the\n"
		"                     first executable segment's p_vaddr & -p_align; hwpmcd's\n"
		"                     logs say so, FreeBSD's follow it) or hwpmcd-1 (logs of\n"
		"                     hwpmcd before that: V = 0 for shared objects and PIEs)\n"
		"\n"
		"Examples:\n"
		"  hwpmc report demo.pmclog\n"
		"  hwpmc report --callgraph --comm hwpmc-demo demo.pmclog\n"
		"  hwpmc report --sort comm,dso demo.pmclog     # which process, which library\n"
		"  hwpmc report --children --depth 6 demo.pmclog # top-down, from main\n"
		"  hwpmc report --folded demo.pmclog | flamegraph.pl > demo.svg\n"
		"  hwpmc report --flame demo.svg --since 1 --until 3 demo.pmclog\n"
		"  hwpmc report --top --inline --srcline demo.pmclog\n"
		"  hwpmc report --since -10min profiles/web/\n");
}

static int parse_ids(const char *opt, const char *s, int32_t **v, size_t *n)
{
	char *copy = strdup(s), *save = NULL, *tok;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long x;
		int32_t *nv;

		errno = 0;
		x = strtol(tok, &end, 10);
		if (errno || *end || end == tok || x < -1 || x > INT32_MAX) {
			log_error("%s: '%s' is not a process or thread id", opt, tok);
			free(copy);
			return -EINVAL;
		}
		nv = realloc(*v, (*n + 1) * sizeof(*nv));
		if (!nv) {
			free(copy);
			return -ENOMEM;
		}
		*v = nv;
		(*v)[(*n)++] = (int32_t)x;
	}
	free(copy);
	if (*n == 0) {
		log_error("%s: empty list", opt);
		return -EINVAL;
	}
	return 0;
}

static int parse_names(const char *opt, const char *s, char ***v, size_t *n)
{
	char *copy = strdup(s), *save = NULL, *tok;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

		if (!nv || !(tok = strdup(tok))) {
			if (nv)
				*v = nv;
			free(copy);
			return -ENOMEM;
		}
		*v = nv;
		(*v)[(*n)++] = tok;
	}
	free(copy);
	if (*n == 0) {
		log_error("%s: empty list", opt);
		return -EINVAL;
	}
	return 0;
}

static int parse_cpus(const char *s, uint8_t **bits)
{
	char *copy = strdup(s), *save = NULL, *tok;

	if (!copy)
		return -ENOMEM;
	if (!*bits && !(*bits = calloc(65536 / 8, 1))) {
		free(copy);
		return -ENOMEM;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end, *end2;
		unsigned long a, b;

		errno = 0;
		a = strtoul(tok, &end, 10);
		b = a;
		if (*end == '-')
			b = strtoul(end + 1, &end2, 10), end = end2;
		if (errno || *end || end == tok || !isdigit((unsigned char)tok[0]) || a > b ||
		    b > 65535) {
			log_error("--cpu: '%s' is not a CPU or range (0..65535, like 0,2-3)", tok);
			free(copy);
			return -EINVAL;
		}
		for (unsigned long c = a; c <= b; c++)
			(*bits)[c / 8] |= (uint8_t)(1u << (c % 8));
	}
	free(copy);
	return 0;
}

static int parse_double(const char *opt, const char *s, double *ret)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(s, &end);
	if (errno || *end || end == s || x < 0 || x != x) {
		log_error("%s: '%s' is not a non-negative number", opt, s);
		return -EINVAL;
	}
	*ret = x;
	return 0;
}

static int parse_time(const char *opt, const char *s, struct tools_rep_time *ret)
{
	struct timespec now;
	int e;

	clock_gettime(CLOCK_REALTIME, &now);
	e = tools_report_parse_time(s, (int64_t)now.tv_sec * 1000000000ll + now.tv_nsec, ret);
	if (e == -ERANGE) {
		log_error("%s: '%s' is before 1970", opt, s);
		return e;
	}
	if (e < 0)
		log_error("%s: '%s' is not a time: give seconds from the start of the log (1.5), "
			  "a time before now (-30s, -15m or -10min, -2h, -1d), a UTC date and time "
			  "(2026-12-05T20:15:00Z), a local one ('2026-12-05 20:15[:00]') or a "
			  "local time of today (20:15[:00])",
			  opt, s);
	return e;
}

static int parse_uint(const char *opt, const char *s, unsigned long max, unsigned long *ret)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(s, &end, 10);
	if (errno || *end || end == s || s[0] == '-' || x > max) {
		log_error("%s: '%s' is not a whole number from 0 to %lu", opt, s, max);
		return -EINVAL;
	}
	*ret = x;
	return 0;
}

enum {
	OPT_TOP = 256,
	OPT_CALLGRAPH,
	OPT_CALLERS,
	OPT_CALLEES,
	OPT_FOLDED,
	OPT_FLAME,
	OPT_PPROF,
	OPT_PPROF_NO_LINES,
	OPT_CALLTREE,
	OPT_GPROF,
	OPT_MODE,
	OPT_JSON,
	OPT_DEPTH,
	OPT_MINPCT,
	OPT_LIMIT,
	OPT_FULL,
	OPT_PID,
	OPT_TID,
	OPT_COMM,
	OPT_CGROUP,
	OPT_CPU,
	OPT_EVENT,
	OPT_SINCE,
	OPT_UNTIL,
	OPT_KERNEL,
	OPT_USER,
	OPT_SYMFS,
	OPT_KALLSYMS,
	OPT_DEBUGDIR,
	OPT_NO_DEBUGINFOD,
	OPT_INLINE,
	OPT_SRCLINE,
	OPT_JIT_MAPS,
	OPT_RULE,
	OPT_VDSO,
	OPT_CONFINE,
	OPT_BROKER_FD,
	OPT_CHILDREN,
	OPT_SORT,
	OPT_STDIO
};

static void free_opts(struct tools_rep_opts *o)
{
	free(o->pids);
	free(o->tids);
	for (size_t i = 0; i < o->ncomms; i++)
		free(o->comms[i]);
	free(o->comms);
	for (size_t i = 0; i < o->ncgroups; i++)
		free(o->cgroups[i]);
	free(o->cgroups);
	for (size_t i = 0; i < o->nevents; i++)
		free(o->events[i]);
	free(o->events);
	free(o->cpus);
}

/*
 * The file output @what (OPT_FLAME, OPT_PPROF or OPT_CALLTREE) of @r into @path,
 * made by files.h's util_output_open() (mode @mode): a new file under a temporary
 * name, in place of the old one only once written whole.  0, or -errno with a
 * message logged.
 */
static int write_output(struct tools_report *r, int what, const char *path, mode_t mode)
{
	static const char *const opt[] = { "--flame", "--pprof", "--calltree" };
	static const char *const done[] = { "the flame graph", "the pprof profile",
					    "the callgrind file" };
	int k = what == OPT_FLAME ? 0 : what == OPT_PPROF ? 1 : 2, e;
	struct util_output o;
	char err[1024];
	FILE *f;

	e = util_output_open(path, mode, &o, err, sizeof(err));
	if (e < 0) {
		log_error("%s: %s", opt[k], err);
		return e;
	}
	f = fdopen(o.fd, "we");
	if (!f) {
		e = -errno;
		log_error("%s: %s: %s", opt[k], path, strerror(-e));
		util_output__abandon(&o);
		return e;
	}
	o.fd = -1; /* @f's now */
	if (k == 0)
		e = tools_report_write_flame(r, f);
	else if (k == 1)
		e = tools_report_write_pprof(r, fileno(f)); /* nothing buffered in @f */
	else
		e = tools_report_write_calltree(r, f, r->file);
	if (fclose(f) != 0 && e == 0)
		e = -EIO;
	if (e == 0 && (e = util_output__commit(&o)) < 0) {
		log_error("%s: %s: %s", opt[k], path, util_files_strerror(e));
		util_output__abandon(&o);
		return e;
	}
	if (e < 0) {
		/* A flame graph's EINVAL (not one event) was said already. */
		if (e != -EINVAL || k != 0)
			log_error("%s: %s: %s", opt[k], path, strerror(-e));
		util_output__abandon(&o);
		return e;
	}
	util_output__close(&o);
	fprintf(stderr, "hwpmc: wrote %s %s\n", done[k], path);
	return 0;
}

/*
 * The report's heap on transparent huge pages.  Nearly all a report's memory is
 * touched once, for the first time, and each first touch of a 4 KiB page is a page
 * fault: ~10 us on a VM with paravirtualised page tables (measured here), where a
 * 2 MiB page costs ~100 us, 0.2 us per 4 KiB.  So every block comes from the brk heap
 * (below 32 MiB: no mmap'd chunk per large block, unmapped at free and faulted in
 * again at the next), the heap grows 64 MiB at a time (address space; only what is
 * touched is memory) and is advised MADV_HUGEPAGE, which THP's default "madvise" mode
 * needs (a no-op with THP off).  An 80k-sample report took 10 ms less (18.5 ms of
 * reading to 8.5).  glibc's glibc.malloc.hugetlb tunable does the same but is read
 * only at exec.  HWPMC_HUGEPAGES=0 keeps malloc's defaults.
 *
 * heap_head is volatile: it is only ever written, and GCC drops a malloc() whose
 * result nothing reads, which it did here, so the report's first 2 MiB block (up to
 * 2 MiB of it, wherever ASLR put the heap's start) was filled with small pages:
 * libc's symbol table alone then cost ~300 page faults, 3.5-4 ms of an 11 ms load.
 */
static void *volatile heap_head;

static void heap_setup(void)
{
	const uintptr_t huge = (uintptr_t)2 << 20;
	const char *env = getenv("HWPMC_HUGEPAGES");
	uintptr_t lo, hi, edge;
	size_t heap;
	void *big, *p;

	if (env && strcmp(env, "0") == 0)
		return;
	if (!mallopt(M_MMAP_THRESHOLD, 32 << 20) || !mallopt(M_TRIM_THRESHOLD, 256 << 20) ||
	    !mallopt(M_TOP_PAD, 64 << 20))
		return;
	big = malloc(256 << 10); /* more than the heap's top: it grows, by M_TOP_PAD more */
	if (!big)
		return;
	hi = (uintptr_t)sbrk(0);
	heap = mallinfo2().arena; /* the main arena's bytes: the heap, ending at the break */
	free(big);
	if (hi == (uintptr_t)-1 || heap < (64 << 20) || heap > hi)
		return; /* not malloc's brk heap (a sanitizer's or valgrind's allocator) */
	lo = (hi - heap + 4095) & ~(uintptr_t)4095;
	if (madvise((void *)lo, hi - lo, MADV_HUGEPAGE) != 0)
		return;
	/*
	 * Where a page was touched before the advice, its 2 MiB has a page table of small
	 * pages for good: the heap's start, and the header malloc wrote above the big
	 * block (which was where this one is: the heap's top).  A block up to the next
	 * 2 MiB boundary above them, never touched, keeps the report on huge pages.
	 */
	if ((p = malloc(64))) {
		uintptr_t at = (uintptr_t)p;

		free(p);
		edge = (at + (256 << 10) + 128 + huge - 1) & ~(huge - 1);
		heap_head = malloc(edge - at - 4096);
	}
}

int tools_report_main(int argc, char **argv)
{
	static char *default_paths[] = { (char *)TOOLS_DEFAULT_LOG, NULL };
	static const struct option longopts[] = {
		{ "top", no_argument, NULL, OPT_TOP },
		{ "callgraph", no_argument, NULL, OPT_CALLGRAPH },
		{ "children", no_argument, NULL, OPT_CHILDREN },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "callers", required_argument, NULL, OPT_CALLERS },
		{ "callees", required_argument, NULL, OPT_CALLEES },
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "flame", required_argument, NULL, OPT_FLAME },
		{ "pprof", required_argument, NULL, OPT_PPROF },
		{ "pprof-no-lines", no_argument, NULL, OPT_PPROF_NO_LINES },
		{ "calltree", required_argument, NULL, OPT_CALLTREE },
		{ "gprof", required_argument, NULL, OPT_GPROF },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "stdio", no_argument, NULL, OPT_STDIO },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "min-percent", required_argument, NULL, OPT_MINPCT },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "full-paths", no_argument, NULL, OPT_FULL },
		{ "verbose", no_argument, NULL, 'v' },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "event", required_argument, NULL, OPT_EVENT },
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "until", required_argument, NULL, OPT_UNTIL },
		{ "kernel", no_argument, NULL, OPT_KERNEL },
		{ "user", no_argument, NULL, OPT_USER },
		{ "symfs", required_argument, NULL, OPT_SYMFS },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "debug-dir", required_argument, NULL, OPT_DEBUGDIR },
		{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD },
		{ "inline", no_argument, NULL, OPT_INLINE },
		{ "srcline", no_argument, NULL, OPT_SRCLINE },
		{ "jit-maps", required_argument, NULL, OPT_JIT_MAPS },
		{ "map-rule", required_argument, NULL, OPT_RULE },
		{ "vdso", required_argument, NULL, OPT_VDSO },
		{ "confine", no_argument, NULL, OPT_CONFINE },
		{ "broker-fd", required_argument, NULL, OPT_BROKER_FD },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tools_report r;
	struct tools_rep_print_opts po = { .depth = 16, .min_percent = 0.5 };
	bool top = false, graph = false, folded = false, json = false, limit_set = false;
	bool kids = false;
	const char *sort = NULL;
	/* hwpmc script: this command line, every sample onto standard output */
	bool script = argc > 0 && strcmp(argv[0], "script") == 0;
	/* hwpmc diff BASE NEW: two reports of these options, compared */
	bool diff = argc > 0 && strcmp(argv[0], "diff") == 0;
	/* hwpmc annotate FUNC [PATH...]: one function's instructions */
	bool annotate = argc > 0 && strcmp(argv[0], "annotate") == 0;
	const char *ann_func = NULL;
	struct tools_report rb;
	size_t rows = 0; /* the terminal's, when standard output is one */
	bool confined = false;
	int broker_fd = -1;
	const char *flame = NULL, *pprof = NULL, *calltree = NULL, *gprof = NULL, *callers = NULL, *callees = NULL;
	unsigned long x;
	mode_t mode = 0;
	int c, e = 0, rc = TOOLS_EXIT_USAGE;

	heap_setup();
	memset(&r, 0, sizeof(r));
	memset(&rb, 0, sizeof(rb));
	optind = 1;
	while ((c = getopt_long(argc, argv, "hv", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_TOP:
			top = true;
			break;
		case OPT_CALLGRAPH:
			graph = true;
			break;
		case OPT_CHILDREN:
			kids = true;
			break;
		case OPT_STDIO: /* perf annotate's name for the text output, the default */
			break;
		case OPT_SORT:
			sort = optarg;
			e = tools_sort_parse(optarg, &r.o.sort);
			/* a key per source line: the model keeps a function per line (--srcline) */
			r.o.srcline |= r.o.sort.has[TOOLS_SORT_SRCLINE];
			break;
		case OPT_CALLERS:
			callers = optarg;
			break;
		case OPT_CALLEES:
			callees = optarg;
			break;
		case OPT_FOLDED:
			folded = true;
			break;
		case OPT_FLAME:
			flame = optarg;
			break;
		case OPT_PPROF:
			pprof = optarg;
			break;
		case OPT_PPROF_NO_LINES:
			r.o.pprof_no_lines = true;
			break;
		case OPT_CALLTREE:
			calltree = optarg;
			break;
		case OPT_GPROF:
			gprof = optarg;
			break;
		case OPT_MODE:
			if (util_parse_mode(optarg, &mode) < 0) {
				log_error("report: --mode '%s' must be an octal mode such as 0644 (the "
					  "owner's read and write bits set)", optarg);
				e = -EINVAL;
			}
			break;
		case OPT_JSON:
			json = true;
			break;
		case 'v':
			r.o.verbose = true;
			break;
		case OPT_DEPTH:
			e = parse_uint("--depth", optarg, PLOG_CALLCHAIN_DEPTH_MAX + 1, &x);
			po.depth = (unsigned)x;
			break;
		case OPT_MINPCT:
			e = parse_double("--min-percent", optarg, &po.min_percent);
			if (!e && po.min_percent > 100) {
				log_error("--min-percent: '%s' is more than 100", optarg);
				e = -EINVAL;
			}
			break;
		case OPT_LIMIT:
			e = parse_uint("--limit", optarg, 1000000000ul, &x);
			po.limit = x;
			limit_set = true;
			break;
		case OPT_FULL:
			po.full_paths = true;
			break;
		case OPT_PID:
			e = parse_ids("--pid", optarg, &r.o.pids, &r.o.npids);
			break;
		case OPT_TID:
			e = parse_ids("--tid", optarg, &r.o.tids, &r.o.ntids);
			break;
		case OPT_COMM:
			e = parse_names("--comm", optarg, &r.o.comms, &r.o.ncomms);
			break;
		case OPT_CGROUP:
			e = parse_names("--cgroup", optarg, &r.o.cgroups, &r.o.ncgroups);
			for (size_t i = 0; e == 0 && i < r.o.ncgroups; i++) {
				if (r.o.cgroups[i][0] != '/') {
					log_error("--cgroup: '%s' is not a cgroup path: they begin with "
						  "'/' (the header's '# cgroups:' line lists the log's)",
						  r.o.cgroups[i]);
					e = -EINVAL;
				}
			}
			break;
		case OPT_EVENT:
			e = parse_names("--event", optarg, &r.o.events, &r.o.nevents);
			break;
		case OPT_CPU:
			e = parse_cpus(optarg, &r.o.cpus);
			break;
		case OPT_SINCE:
			e = parse_time("--since", optarg, &r.o.since);
			r.o.since_arg = optarg;
			break;
		case OPT_UNTIL:
			e = parse_time("--until", optarg, &r.o.until);
			r.o.until_arg = optarg;
			break;
		case OPT_KERNEL:
			r.o.kernel_only = true;
			break;
		case OPT_USER:
			r.o.user_only = true;
			break;
		case OPT_SYMFS:
			r.o.symfs = optarg;
			break;
		case OPT_KALLSYMS:
			r.o.kallsyms = optarg;
			break;
		case OPT_DEBUGDIR:
			r.o.debugdir = optarg;
			break;
		case OPT_NO_DEBUGINFOD:
			r.o.no_debuginfod = true;
			break;
		case OPT_CONFINE:
			confined = true;
			r.o.no_debuginfod = true; /* no socket under its filter */
			break;
		case OPT_BROKER_FD:
			e = parse_uint("--broker-fd", optarg, 1 << 20, &x);
			broker_fd = (int)x;
			break;
		case OPT_INLINE:
			r.o.inline_frames = true;
			break;
		case OPT_SRCLINE:
			r.o.srcline = true;
			break;
		case OPT_JIT_MAPS:
			r.o.jit_dir = optarg;
			break;
		case OPT_VDSO:
			r.o.vdso = optarg;
			break;
		case OPT_RULE:
			if (strcmp(optarg, "auto") == 0)
				r.o.rule = REPORT_RULE_AUTO;
			else if (strcmp(optarg, "freebsd") == 0 || strcmp(optarg, "first-exec") == 0)
				r.o.rule = REPORT_RULE_FREEBSD;
			else if (strcmp(optarg, "hwpmcd-1") == 0 || strcmp(optarg, "bias-v") == 0)
				r.o.rule = REPORT_RULE_HWPMCD_V1;
			else {
				log_error("--map-rule: '%s' is not auto, freebsd or hwpmcd-1", optarg);
				e = -EINVAL;
			}
			break;
		case 'h':
			if (annotate)
				tools_annotate_usage(stdout);
			else if (diff)
				tools_diff_usage(stdout);
			else if (script)
				tools_script_usage(stdout);
			else
				tools_report_usage(stdout);
			rc = TOOLS_EXIT_OK;
			goto out;
		default:
			fprintf(stderr, "'hwpmc %s --help' explains the options\n",
				annotate ? "annotate"
				: diff	 ? "diff"
				: script ? "script"
					 : "report");
			goto out;
		}
		if (e < 0)
			goto out;
	}
	if (broker_fd >= 0) {
		struct stat st;
		int type = 0;
		socklen_t tl = sizeof(type);

		/* hwpmcd's: a socket pair's end, SOCK_SEQPACKET (common-open.h). */
		if (!confined) {
			log_error("report: --broker-fd goes with --confine (hwpmcd's push runs both)");
			goto out;
		}
		if (fstat(broker_fd, &st) < 0 || !S_ISSOCK(st.st_mode) ||
		    getsockopt(broker_fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 ||
		    type != SOCK_SEQPACKET) {
			log_error("report: --broker-fd %d: not a SOCK_SEQPACKET socket", broker_fd);
			goto out;
		}
	}
	if (confined) {
		/* Its filter refuses opening a file for writing: outputs go to descriptors. */
		const char *opt = NULL, *path = NULL;

		if (flame && util_own_fd_name(flame) < 0)
			opt = "--flame", path = flame;
		else if (pprof && util_own_fd_name(pprof) < 0)
			opt = "--pprof", path = pprof;
		else if (calltree && util_own_fd_name(calltree) < 0)
			opt = "--calltree", path = calltree;
		if (opt) {
			log_error("report: --confine writes no file (%s %s): name a descriptor "
				  "instead, /dev/stdout or /dev/fd/N, and redirect it",
				  opt, path);
			goto out;
		}
		if (gprof) {
			log_error("report: --confine writes no file, and --gprof writes a directory "
				  "of them: run it without --confine");
			goto out;
		}
		/* libdw maps code: loaded now, for the filter refuses that afterwards. */
		if (r.o.inline_frames || r.o.srcline || pprof) /* pprof: every PC's lines */
			(void)report_dwarf_load();
		if ((e = tools_confine(broker_fd)) < 0) {
			log_error("report: --confine: %s", strerror(-e));
			goto out;
		}
	}
	if (annotate) {
		if (optind == argc) {
			log_error("annotate: name the function to annotate (as 'hwpmc report --top' "
				  "prints it, or its raw symbol)");
			fprintf(stderr, "'hwpmc annotate --help' explains the options\n");
			goto out;
		}
		ann_func = argv[optind++];
		if (top || graph || kids || folded || flame || pprof || calltree || gprof || callers ||
		    callees || sort) {
			log_error("annotate: prints one function's instructions (--json: as JSON); the "
				  "other outputs are 'hwpmc report''s");
			goto out;
		}
	}
	if (diff && argc - optind != 2) {
		log_error("diff: give two profiles, BASE and NEW (each a log, a directory of them "
			  "or '-'); %d given",
			  argc - optind);
		fprintf(stderr, "'hwpmc diff --help' explains the options\n");
		goto out;
	}
	if (diff && (top || graph || kids || folded || pprof || calltree || gprof || callers ||
		     callees)) {
		log_error("diff: compares the top lists (--json, --flame); the other outputs are "
			  "'hwpmc report''s, of one profile");
		goto out;
	}
	if (optind == argc) {
		/* No path: what `hwpmc record` writes by default, as perf report reads perf.data. */
		struct stat dst;

		if (broker_fd >= 0 || stat(TOOLS_DEFAULT_LOG, &dst) != 0) {
			log_error("report: no log file given (FILE, DIRECTORY or '-'), and no %s "
				  "here (what 'hwpmc record' writes by default)",
				  TOOLS_DEFAULT_LOG);
			fprintf(stderr, "'hwpmc report --help' explains the options\n");
			goto out;
		}
		argv = default_paths;
		argc = 1;
		optind = 0;
	}
	for (int i = optind; i < argc && argc - optind > 1; i++) {
		if (strcmp(argv[i], "-") == 0 && !(diff && i == optind)) {
			log_error("report: '-' (standard input) is read alone, not with other logs");
			goto out;
		}
	}
	if (r.o.kernel_only && r.o.user_only) {
		log_error("report: --kernel and --user exclude each other");
		goto out;
	}
	if (callers && callees && strcmp(callers, callees) != 0) {
		log_error("report: --callers and --callees name different functions ('%s', '%s'); "
			  "one function per run",
			  callers, callees);
		goto out;
	}
	if (r.o.since.kind == r.o.until.kind && r.o.since.kind != TOOLS_REP_TIME_NONE &&
	    (r.o.since.kind == TOOLS_REP_TIME_LOG ? r.o.until.log_s < r.o.since.log_s
						  : r.o.until.wall_ns < r.o.since.wall_ns)) {
		log_error("report: --until %s is before --since %s", r.o.until_arg, r.o.since_arg);
		goto out;
	}
	/* --json carries the top list, the call graph and with --children that tree */
	if ((folded || json) &&
	    (top || graph || callers || callees || (folded && (json || kids)))) {
		log_error(
			"report: %s writes standard output alone; run the other outputs separately",
			folded ? "--folded" : "--json");
		goto out;
	}
	if (gprof && r.o.inline_frames) {
		log_error("report: --gprof writes a histogram by address, and inlined functions "
			  "have none of their own; drop --inline (--srcline works)");
		goto out;
	}
	if (script && (top || graph || kids || folded || json || flame || pprof || calltree ||
		       gprof || callers || callees || sort)) {
		log_error("script: writes the samples alone, one block each; the aggregate "
			  "outputs and --sort are 'hwpmc report''s");
		goto out;
	}
	if (!script && !diff && !annotate && !graph && !kids && !folded && !json && !flame &&
	    !pprof && !calltree && !gprof && !callers && !callees)
		top = true;
	if (script) {
		/* a sample is a few lines: written a megabyte at a time */
		setvbuf(stdout, NULL, _IOFBF, (size_t)1 << 20);
		r.o.script = stdout;
	}
	if (sort && !top && !json && !pprof && !diff) {
		log_error("report: --sort %s orders the top list (--top, --json; --pprof labels by "
			  "cpu): add one of them",
			  sort);
		goto out;
	}

	if (json && !callers && !callees)
		graph = true; /* the JSON carries the top list and the call graph */
	r.paths = argv + optind;
	r.npaths = (size_t)(argc - optind);
	r.file = argv[optind];
	if (diff) { /* r is NEW, rb BASE: the same options, each its own model */
		rb.paths = argv + optind;
		rb.npaths = 1;
		rb.file = argv[optind];
		r.paths = argv + optind + 1;
		r.npaths = 1;
		r.file = argv[optind + 1];
	}
	r.o.focus = callers ? callers : callees;
	r.o.want_focus_callers = callers != NULL;
	r.o.want_focus_callees = callees != NULL;
	r.o.want_callers = graph;
	r.o.want_callees = folded || flame || pprof || calltree || gprof;
	r.o.want_cgroups = pprof || r.o.sort.has[TOOLS_SORT_CGROUP]; /* pprof's "cgroup" label */
	r.o.want_children = kids;
	r.o.want_pcs = pprof || annotate; /* a location per PC */
	if (isatty(STDOUT_FILENO)) {
		struct winsize ws;

		if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col) {
			po.width = ws.ws_col;
			rows = ws.ws_row;
		}
	}
	rc = TOOLS_EXIT_FAIL;
	if (diff) {
		rb.o = r.o; /* shared: freed once, with r's */
		if ((e = tools_report_load(&rb)) < 0)
			goto out;
	}
	e = tools_report_load(&r);
	if (e < 0)
		goto out;
	if (diff)
		r.flame_base = &rb; /* --flame: NEW's graph coloured against BASE */
	for (size_t i = 0; i < r.o.nevents; i++) {
		bool found = false;
		char have[512] = "";

		for (size_t k = 0; k < r.nev; k++) {
			found |= strcmp(r.ev[k].name, r.o.events[i]) == 0;
			snprintf(have + strlen(have), sizeof(have) - strlen(have), "%s%s",
				 k ? ", " : "", r.ev[k].name);
		}
		if (!found) {
			log_error("--event: no event named '%s' in %s (it has: %s)", r.o.events[i],
				  r.file, r.nev ? have : "none");
			goto out;
		}
	}
	tools_report_warn_loss(&r);
	tools_report_warn_unknown(&r);
	if ((flame && write_output(&r, OPT_FLAME, flame, mode) < 0) ||
	    (pprof && write_output(&r, OPT_PPROF, pprof, mode) < 0) ||
	    (calltree && write_output(&r, OPT_CALLTREE, calltree, mode) < 0) ||
	    (gprof && tools_report_write_gprof(&r, gprof, mode) < 0))
		goto out;
	if (annotate) {
		e = tools_annotate(&r, ann_func, stdout, json);
		tools_report_print_coverage(&r, stderr);
	} else if (diff) {
		tools_report_warn_loss(&rb);
		tools_report_warn_unknown(&rb);
		if (rows && !limit_set)
			po.limit = rows > 16 ? rows - 6 : 10;
		e = json ? tools_diff_json(&rb, &r, stdout, &po) : tools_diff_print(&rb, &r, stdout, &po);
		/* what each profile covers, BASE first, on stderr */
		tools_report_print_coverage(&rb, stderr);
		tools_report_print_coverage(&r, stderr);
	} else if (script) {
		/* standard output is the samples alone: what they cover goes to stderr */
		tools_report_print_coverage(&r, stderr);
	} else if (json) {
		e = tools_report_print_json(&r, stdout, &po);
	} else if (folded) {
		e = tools_report_print_folded(&r, stdout);
		/* Standard output stays pure folded stacks: what they cover goes to stderr. */
		if (e == 0)
			tools_report_print_coverage(&r, stderr);
	} else if (top || graph || kids || callers || callees) {
		size_t lines = tools_report_print_header(&r, stdout, po.width);

		/*
		 * A top list on a terminal fits its height with the header: per event a
		 * blank, a title, the column heads and the "... more" line, and the prompt.
		 */
		if (rows && !limit_set) {
			size_t nev = 0, room;

			for (size_t i = 0; i < r.nev; i++)
				nev += r.ev[i].selected;
			room = rows > lines + 1 + 4 * (nev ? nev : 1) ? rows - lines - 1 - 4 * nev : 0;
			po.limit = room / (nev ? nev : 1) > 3 ? room / (nev ? nev : 1) : 3;
		}
		if (top)
			tools_report_print_top(&r, stdout, &po);
		if (graph)
			tools_report_print_callgraph(&r, stdout, &po);
		if (kids)
			tools_report_print_children(&r, stdout, &po);
		if (callers || callees)
			tools_report_print_focus(&r, stdout, &po);
	}
	if (e < 0)
		goto out;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		log_error("report: writing standard output: %s", strerror(errno));
		goto out;
	}
	rc = r.status == PLOG_STATUS_ERROR ? TOOLS_EXIT_FAIL : TOOLS_EXIT_OK;
out:
	tools_report_free(&rb);
	tools_report_free(&r);
	free_opts(&r.o);
	return rc;
}
