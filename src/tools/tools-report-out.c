/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-report-out.c: the outputs of `hwpmc report`: header, top list, call
 * graphs (pmcstat -G style), callers/callees of one function, folded stacks,
 * JSON and the flame graph's tree.
 *
 * PUBLIC INTERFACES
 *   tools_report_print_header(), __print_top(), __print_callgraph(), __print_focus(),
 *   __print_folded(), __print_json(), tools_report_write_flame(),
 *   tools_report_single_event()
 *
 * IMPLEMENTATION NOTES
 *   Every percentage is of the event's kept samples, except inside a call
 *   graph, where a caller's percentage is of its callee's samples (pmcstat -G).
 *   Nothing is dropped silently: entries under --min-percent are summed into one
 *   "N more" line (and a JSON "elided" object), rows beyond --limit are counted.
 *   Sort orders are total (count, then name, then image) so outputs are stable.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hwpmcd/common.h"
#include "hwpmcd/log.h"
#include "tools-flame.h"
#include "tools-int.h"
#include "tools-report.h"


static int cgroup_cmp(const void *a, const void *b)
{
	const struct report_cgroup *x = *(const struct report_cgroup *const *)a;
	const struct report_cgroup *y = *(const struct report_cgroup *const *)b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* The model's cgroups with samples, most first (NULL and 0 when none or out of memory). */
static const struct report_cgroup **cgroups_sorted(const struct tools_report *r, size_t *ret_n)
{
	const struct report_cgroup **v = r->m->ncgroups ? malloc(r->m->ncgroups * sizeof(*v)) : NULL;
	size_t n = 0;

	for (size_t i = 0; v && i < r->m->ncgroups; i++)
		if (r->m->cgroups[i]->samples)
			v[n++] = r->m->cgroups[i];
	if (n > 1)
		qsort(v, n, sizeof(*v), cgroup_cmp);
	*ret_n = n;
	return v;
}

/* "# cgroups: ..." (pmclog-format.md 11.12): where the sampled processes ran, if the log says. */
static void print_cgroups(const struct tools_report *r, FILE *out)
{
	size_t n;
	const struct report_cgroup **v = cgroups_sorted(r, &n);

	if (!r->m->ncgroups) {
		free(v);
		return;
	}
	fprintf(out, "# cgroups: %zu with samples, %zu in the log%s", n, r->m->ncgroups,
		n ? ":" : "");
	for (size_t i = 0; i < n && i < 5; i++)
		fprintf(out, "%s %s %" PRIu64, i ? "," : "", v[i]->path, v[i]->samples);
	fprintf(out, "%s\n", n > 5 ? ", ... (--json lists all; --cgroup filters)" : "");
	free(v);
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* The first and last file read (the only one: both). */
static void files_read(const struct tools_report *r, const struct tools_rep_file **ret_first,
		       const struct tools_rep_file **ret_last)
{
	*ret_first = *ret_last = NULL;
	for (size_t i = 0; i < r->nfiles; i++) {
		if (!r->files[i].read)
			continue;
		if (!*ret_first)
			*ret_first = &r->files[i];
		*ret_last = &r->files[i];
	}
}

/* What the report covers: its files and its samples' span, in one line. */
static void coverage(const struct tools_report *r, char *buf, size_t len)
{
	const struct tools_rep_file *a, *b;
	char lo[40], hi[40];
	int w;

	files_read(r, &a, &b);
	if (!a)
		w = snprintf(buf, len, "no file");
	else if (a == b)
		w = snprintf(buf, len, "1 file (%s)", a->shown);
	else
		w = snprintf(buf, len, "%zu files (%s .. %s)", r->nread, a->shown, b->shown);
	if (w < 0 || (size_t)w >= len)
		return;
	if (!r->have_span) {
		snprintf(buf + w, len - (size_t)w, ", no sample reported");
		return;
	}
	tools_report_format_time(r->span_lo, lo, sizeof(lo));
	tools_report_format_time(r->span_hi, hi, sizeof(hi));
	snprintf(buf + w, len - (size_t)w, ", %" PRIu64 " samples from %s to %s", r->kept, lo, hi);
}

void tools_report_print_coverage(struct tools_report *r, FILE *out)
{
	char cov[2200];

	coverage(r, cov, sizeof(cov));
	fprintf(out, "hwpmc: report of %s\n", cov);
}

/* In a list of @n over time, past 12 the first 6 and the last 6: the entry after @i. */
static size_t elide(FILE *out, size_t i, size_t n)
{
	if (n <= 12 || i != 6)
		return i;
	fprintf(out, " ... %zu more ...", n - 12);
	return n - 6;
}

/*
 * The rate over time of a profile with a CPU budget (pmclog-format.md 11.9): each
 * change as "HZ Hz from TIME"; past 12 changes the first 6 and the last 6.
 */
static void print_rates(const struct tools_report *r, FILE *out)
{
	char t[64];

	if (!r->nrates)
		return;
	fprintf(out, "# rate (set by the profile's CPU budget, %zu value%s):", r->nrates,
		r->nrates == 1 ? "" : "s");
	for (size_t i = 0; i < r->nrates; i++) {
		i = elide(out, i, r->nrates);
		tools_report_format_time(r->rates[i].wall_ns, t, sizeof(t));
		fprintf(out, "%s %" PRIu32 " Hz from %s", i ? "," : "", r->rates[i].hz, t);
	}
	fprintf(out, "\n");
}

/*
 * The in-kernel sample filter over time (pmclog-format.md 11.10): each as "TEXT
 * from TIME" (it holds until the next one); past 12 changes the first 6 and the
 * last 6.
 */
static void print_filters(const struct tools_report *r, FILE *out)
{
	char t[64];

	if (!r->nfilters)
		return;
	fprintf(out, "# filter (in the kernel, %zu value%s):", r->nfilters,
		r->nfilters == 1 ? "" : "s");
	for (size_t i = 0; i < r->nfilters; i++) {
		i = elide(out, i, r->nfilters);
		tools_report_format_time(r->filters[i].wall_ns, t, sizeof(t));
		fprintf(out, "%s '%s' from %s", i ? "," : "", r->filters[i].text, t);
	}
	fprintf(out, "\n");
}

/* An event's sampling period as said: "120 Hz" (a frequency) or "period 100000". */
static void period_text(const struct tools_rep_event *e, double period, char *buf, size_t len)
{
	if (e->by_freq)
		snprintf(buf, len, "%.4g Hz", 1e9 / period);
	else
		snprintf(buf, len, "period %.0f", period);
}

/*
 * The events whose samples had more than one period (pmclog-format.md 11.13): their
 * counts are weighted, in samples of the first period (tools-report.c "Weights").
 */
static void print_weights(const struct tools_report *r, FILE *out)
{
	char lo[32], hi[32], first[32];

	for (size_t i = 0; i < r->nev; i++) {
		const struct tools_rep_event *e = &r->ev[i];

		if (!e->varied)
			continue;
		period_text(e, e->by_freq ? e->period_hi : e->period_lo, lo, sizeof(lo));
		period_text(e, e->by_freq ? e->period_lo : e->period_hi, hi, sizeof(hi));
		period_text(e, e->period0, first, sizeof(first));
		fprintf(out,
			"# %s: %" PRIu64 " samples taken at %s%s%s, counted by their period: "
			"%" PRIu64 " samples at %s\n",
			e->name, e->sampled, lo, strcmp(lo, hi) ? " to " : "", strcmp(lo, hi) ? hi : "",
			e->samples, first);
	}
	if (r->weight_capped)
		fprintf(out,
			"# weights: %" PRIu64 " samples had a period over 2^20 times the first "
			"period or under 2^-20 of it, and count as that bound\n",
			r->weight_capped);
}

/* The rows a printed line of @len bytes takes on a terminal of @cols columns (0: 1). */
static size_t term_rows(size_t len, unsigned cols)
{
	return cols && len ? (len + cols - 1) / cols : 1;
}

/*
 * Print header line @line (no newline) in lines of at most TOOLS_REP_HEADER_COLS
 * columns: broken at the last blank that fits, continued after "#   "; a word longer
 * than a line (a path) is not broken.
 */
static size_t print_wrapped(FILE *out, const char *line, size_t len, unsigned cols)
{
	const char *prefix = "";
	size_t width = TOOLS_REP_HEADER_COLS, lines = 0;

	while (len) {
		size_t n = len;

		if (n > width) {
			/* after a comma if one fits, else at the last blank */
			for (n = width; n > 1 && !(line[n] == ' ' && line[n - 1] == ','); n--)
				;
			if (n <= 1)
				for (n = width; n > 0 && line[n] != ' '; n--)
					;
			if (n == 0)
				for (n = width; n < len && line[n] != ' '; n++)
					;
		}
		fprintf(out, "%s%.*s\n", prefix, (int)n, line);
		lines += term_rows(strlen(prefix) + n, cols);
		while (n < len && line[n] == ' ')
			n++;
		line += n;
		len -= n;
		prefix = "#   ";
		width = TOOLS_REP_HEADER_COLS - 4;
	}
	return lines;
}

/* ", N what" when @n is not 0, appended to @buf (@len bytes). */
static void add_count(char *buf, size_t len, uint64_t n, const char *what)
{
	size_t at = strlen(buf);

	if (n && at < len)
		snprintf(buf + at, len - at, ", %" PRIu64 " %s", n, what);
}

/* The header's samples line in <= 100 columns: the counts that are not 0. */
static void print_samples_short(const struct tools_report *r, FILE *out)
{
	char more[160] = "";

	add_count(more, sizeof(more), r->filtered, "filtered out");
	add_count(more, sizeof(more), r->no_frames, "without frames");
	add_count(more, sizeof(more), r->unannounced, "of no event");
	fprintf(out, "# samples: %" PRIu64 " in the log%s, %" PRIu64 " reported%s; %" PRIu64
		" lost (%.2f%%)\n",
		r->samples, r->nread > 1 ? "s" : "", r->kept, more, r->lost_samples,
		100.0 * tools_report_lost_share(r));
}

/* The header's processes and images line in <= 100 columns. */
static void print_procs_short(const struct tools_report *r, FILE *out)
{
	char more[160] = "";

	add_count(more, sizeof(more), r->m->images_missing, "unreadable");
	add_count(more, sizeof(more), r->m->images_by_id, "found by build id");
	fprintf(out, "# processes: %" PRIu64 " sampled of %zu%s; images: %zu read of %zu%s\n",
		r->sampled_pids, r->m->nprocs_logged, r->nread > 1 ? " (per log)" : "",
		r->m->images_read, r->m->nimages, more);
}

double tools_report_lost_share(const struct tools_report *r)
{
	uint64_t all = r->samples + r->lost_samples;

	return all ? (double)r->lost_samples / (double)all : 0;
}

#define LOSS_ADVICE                                                                         \
	"more than 1% of the samples were lost: the shares lean towards what ran when the " \
	"rings had room; " TOOLS_LOSS_ADVICE

void tools_report_warn_loss(const struct tools_report *r)
{
	if (tools_report_lost_share(r) > TOOLS_LOSS_WARN)
		log_warn("%s: %.1f%% of the samples were lost (%" PRIu64 " of %" PRIu64 "); %s",
			 r->nfiles > 1 ? "these logs" : r->file, 100.0 * tools_report_lost_share(r),
			 r->lost_samples, r->samples + r->lost_samples, LOSS_ADVICE);
}

/*
 * Samples with an [unknown] frame: a frame-pointer chain that ran into code built
 * without frame pointers (record's default for a whole machine; most distributions'
 * code), or JIT code that no perf-PID.map names.
 */
#define UNKNOWN_ADVICE                                                                     \
	"frame-pointer chains (hwpmc record's default with -a) end so in code built "       \
	"without frame pointers, as most distributions' is: record with -g (--call-graph " \
	"dwarf) for complete stacks; JIT code that no perf-PID.map names is [unknown] "      \
	"too (--jit-maps)"

double tools_report_unknown_share(const struct tools_report *r)
{
	return r->kept ? (double)r->unknown_samples / (double)r->kept : 0;
}

void tools_report_warn_unknown(const struct tools_report *r)
{
	if (tools_report_unknown_share(r) > TOOLS_REP_UNKNOWN_WARN)
		log_warn("%s: %.1f%% of the samples have an [unknown] frame; " UNKNOWN_ADVICE,
			 r->nfiles > 1 ? "these logs" : r->file, 100.0 * tools_report_unknown_share(r));
}

static void print_header_lines(struct tools_report *r, FILE *out);

size_t tools_report_print_header(struct tools_report *r, FILE *out, unsigned cols)
{
	char *buf = NULL;
	size_t len = 0, lines = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m) {
		print_header_lines(r, out);
		return 0;
	}
	print_header_lines(r, m);
	if (fclose(m) == 0) {
		for (char *p = buf, *nl; p < buf + len; p = nl + 1) {
			nl = memchr(p, '\n', (size_t)(buf + len - p));
			if (!nl)
				nl = buf + len;
			/* -v: every line whole; else each fits TOOLS_REP_HEADER_COLS */
			if (r->o.verbose) {
				fprintf(out, "%.*s\n", (int)(nl - p), p);
				lines += term_rows((size_t)(nl - p), cols);
			} else {
				lines += print_wrapped(out, p, (size_t)(nl - p), cols);
			}
		}
	}
	free(buf);
	return lines;
}

static void print_header_lines(struct tools_report *r, FILE *out)
{
	char when[64] = "?", cov[2200];
	time_t t = (time_t)r->m->ts_sec;
	struct tm tm;
	double span = r->m->tsc_freq ? (double)(r->last_tsc - r->first_tsc) / (double)r->m->tsc_freq : 0;
	const char *cpu = plog_cpu_name(r->m->cpu_type);
	const struct tools_rep_file *a, *b;
	bool have_init = r->m->have_init;

	files_read(r, &a, &b);
	if (r->nfiles > 1 && a) {
		/* From the first file's INITIALIZE to the last file's latest record. */
		int64_t end = b->start_ns;

		if (b->tsc_freq)
			end += (int64_t)((__int128)(int64_t)(b->end_tsc - b->init_tsc) * 1000000000 /
					 b->tsc_freq);
		t = (time_t)(a->start_ns / 1000000000);
		span = (double)(end - a->start_ns) / 1e9;
		have_init = a->have_head;
		fprintf(out, "# hwpmc report of %zu files, %s .. %s (%s)\n", r->nread, a->shown,
			b->shown, r->status_msg);
	} else {
		char shown[1024];

		fprintf(out, "# hwpmc report of %s (%s)\n",
			util_escape(r->file, strlen(r->file), shown, sizeof(shown)), r->status_msg);
	}
	if (have_init && gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	if (r->o.verbose)
		fprintf(out, "# recorded %s for %.3f s; cpu %s, cpuid '%s'; MAP_IN rule %s (%s)\n",
			when, span, cpu ? cpu : "?", r->m->cpuid, report_map_rule_name(r->m->rule),
			r->m->rule_why);
	else
		fprintf(out, "# recorded %s for %.3f s on a %s CPU\n", when, span,
			cpu ? cpu : "?");
	coverage(r, cov, sizeof(cov));
	fprintf(out, "# covers: %s\n", cov);
	print_rates(r, out);
	print_filters(r, out);
	fprintf(out, "# events:");
	for (size_t i = 0; i < r->nev; i++)
		fprintf(out, "%s %s %" PRIu64 " samples%s", i ? "," : "", r->ev[i].name,
			r->ev[i].samples, r->ev[i].selected ? "" : " (not selected)");
	fprintf(out, "%s\n", r->nev ? "" : " none");
	print_weights(r, out);
	if (r->o.verbose)
		fprintf(out,
			"# samples: %" PRIu64 " in the log%s, %" PRIu64 " reported, %" PRIu64
			" filtered out, %" PRIu64 " without frames after filtering, %" PRIu64
			" of unannounced events; lost: %" PRIu64 " DROPNOTIFY records, %" PRIu64
			" samples (%.2f%%)\n",
			r->samples, r->nread > 1 ? "s read" : "", r->kept, r->filtered, r->no_frames,
			r->unannounced, r->dropnotify, r->lost_samples,
			100.0 * tools_report_lost_share(r));
	else
		print_samples_short(r, out);
	if (tools_report_lost_share(r) > TOOLS_LOSS_WARN)
		fprintf(out, "# warning: %s\n", LOSS_ADVICE);
	if (tools_report_unknown_share(r) > TOOLS_REP_UNKNOWN_WARN)
		fprintf(out, "# warning: %.1f%% of the samples have an [unknown] frame: %s\n",
			100.0 * tools_report_unknown_share(r), UNKNOWN_ADVICE);
	if (r->o.verbose)
		fprintf(out,
			"# processes: %" PRIu64 " sampled, %zu in the log%s; images: %zu, %zu of them "
			"read (the others only of processes without samples), %zu not readable "
			"(%zu of them another build than the log's at the path), %zu found by build "
			"id\n",
			r->sampled_pids, r->m->nprocs_logged, r->nread > 1 ? "s (per log)" : "",
			r->m->nimages, r->m->images_read, r->m->images_missing,
			r->m->images_other_build, r->m->images_by_id);
	else
		print_procs_short(r, out);
	print_cgroups(r, out);
	if (r->o.verbose)
		fprintf(out,
			"# PCs: %" PRIu64 ", %" PRIu64 " in no mapping ([unknown]), %" PRIu64
			" in an image without symbol (image+0xoffset), %" PRIu64 " in the kernel (%" PRIu64
			" without symbol)\n",
			r->pcs, r->m->pcs_unknown, r->m->pcs_nosym, r->pcs_kernel,
			r->m->pcs_kernel_nosym);
	else
		fprintf(out,
			"# PCs: %" PRIu64 ": %" PRIu64 " [unknown], %" PRIu64 " without symbol; %" PRIu64
			" in the kernel, %" PRIu64 " without symbol\n",
			r->pcs, r->m->pcs_unknown, r->m->pcs_nosym, r->pcs_kernel,
			r->m->pcs_kernel_nosym);
	if (r->o.inline_frames || r->o.srcline) {
		/* What DWARF covered, and one image that had none, so that the user can fetch it. */
		const struct report_image *miss = NULL;
		size_t nmiss = 0;

		for (size_t i = 0; i < r->m->ihtcap; i++)
			for (const struct report_image *img = r->m->iht[i]; img; img = img->hnext)
				if (img->dwarf_tried && !img->dwarf && img->pcs > img->pcs_nosym) {
					if (!miss || strcmp(img->shown, miss->shown) < 0)
						miss = img;
					nmiss++;
				}
		if (!r->o.verbose) {
			fprintf(out,
				"# DWARF: %" PRIu64 " of %" PRIu64 " user PCs with a symbol have it; "
				"%zu sampled images have none\n",
				r->m->pcs_dwarf, r->m->pcs_dwarf + r->m->pcs_nodwarf, nmiss);
			if (miss)
				fprintf(out, "#   e.g. %s: install its debug file, build it with -g, "
					"or set $DEBUGINFOD_URLS\n", miss->shown);
		} else {
			fprintf(out,
				"# DWARF (%s): %" PRIu64 " of %" PRIu64 " user addresses with a symbol "
				"have it; %zu sampled images have none%s%s%s; %" PRIu64
				" inline chains cut at %d levels\n",
				r->o.inline_frames && r->o.srcline ? "--inline --srcline"
				: r->o.inline_frames		    ? "--inline"
								    : "--srcline",
				r->m->pcs_dwarf, r->m->pcs_dwarf + r->m->pcs_nodwarf, nmiss,
				miss ? " (e.g. " : "", miss ? miss->shown : "",
				miss ? ": its debug file, -g, or $DEBUGINFOD_URLS)" : "", r->m->inline_cut,
				REPORT_DWARF_DEPTH_MAX);
		}
	}
	if (!r->o.verbose && (r->m->jit_maps || r->m->jit_refused || r->m->pcs_jit)) {
		char more[160] = "";

		add_count(more, sizeof(more), r->m->jit_refused, "not yours or root's");
		add_count(more, sizeof(more), r->m->jit_bad_lines, "malformed lines skipped");
		add_count(more, sizeof(more), r->m->jit_timed, "PCs of reused code named by time");
		fprintf(out, "# JIT: %" PRIu64 " PCs named by %" PRIu64 " perf-PID.map files (%s)%s\n",
			r->m->pcs_jit, r->m->jit_maps,
			r->m->jit_dir_used[0] ? r->m->jit_dir_used : "none", more);
	} else if (r->m->jit_maps || r->m->jit_refused || r->m->pcs_jit)
		fprintf(out,
			"# JIT: %" PRIu64 " PCs named by %" PRIu64 " perf-PID.map files (%s)%s%" PRIu64
			" ignored (not yours or root's), %" PRIu64 " malformed lines skipped; %" PRIu64
			" with the times of their lines (perf-PID.map.times), %" PRIu64
			" PCs of reused code named by the entry of their sample's time\n",
			r->m->pcs_jit, r->m->jit_maps,
			r->m->jit_dir_used[0] ? r->m->jit_dir_used : "none", "; ", r->m->jit_refused,
			r->m->jit_bad_lines, r->m->jit_timed_maps, r->m->jit_timed);
	if (r->m->ksyms_more)
		fprintf(out, "# kernel symbols: %s and %zu more logs' .kallsyms%s%s\n",
			r->m->ksyms_source, r->m->ksyms_more, r->m->ksyms_note[0] ? "; " : "",
			r->m->ksyms_note);
	else
		fprintf(out, "# kernel symbols: %s%s%s\n", r->m->ksyms_source,
			r->m->ksyms_source[0] && r->m->ksyms_note[0] ? "; " : "",
			r->m->ksyms_note);
}

/* Top list ------------------------------------------------------------------ */

struct top_row {
	uint32_t f;
	uint64_t self, total;
};

static struct tools_report *sort_rep; /* qsort has no context argument */

static int cmp_name(uint32_t a, uint32_t b)
{
	int c = strcmp(tools_report_func_name(sort_rep, a), tools_report_func_name(sort_rep, b));

	return c ? c
		 : strcmp(tools_report_func_image(sort_rep, a),
			  tools_report_func_image(sort_rep, b));
}

static int cmp_top(const void *pa, const void *pb)
{
	const struct top_row *a = pa, *b = pb;

	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return cmp_name(a->f, b->f);
}

/* The functions of @e with samples, sorted; the caller frees the array. */
static struct top_row *top_rows(struct tools_report *r, const struct tools_rep_event *e,
				size_t *ret_n)
{
	struct top_row *rows = malloc((e->ncounts + 1) * sizeof(*rows));
	size_t n = 0;

	if (!rows)
		return NULL;
	for (size_t f = 1; f < e->ncounts; f++)
		if (e->total[f])
			rows[n++] = (struct top_row){ (uint32_t)f, e->self[f], e->total[f] };
	sort_rep = r;
	qsort(rows, n, sizeof(*rows), cmp_top);
	*ret_n = n;
	return rows;
}

static int cmp_img_base(const void *a, const void *b)
{
	const struct report_image *x = *(const struct report_image *const *)a;
	const struct report_image *y = *(const struct report_image *const *)b;
	int c = strcmp(x->base, y->base);

	return c ? c : strcmp(x->shown, y->shown);
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (const void *const *)a, y = (uintptr_t) * (const void *const *)b;

	return x < y ? -1 : x > y;
}

/* r->dup_base: the images of the model whose base name another one has too. */
static void find_dup_bases(struct tools_report *r)
{
	const struct report_image **all;
	size_t n = 0;

	r->dup_base_done = true;
	all = malloc((r->m->nimages + 1) * sizeof(*all));
	r->dup_base = malloc((r->m->nimages + 1) * sizeof(*r->dup_base));
	if (!all || !r->dup_base) {
		free(all);
		return; /* then base names only, as before */
	}
	for (size_t i = 0; i < r->m->ihtcap; i++)
		for (const struct report_image *img = r->m->iht[i]; img && n < r->m->nimages;
		     img = img->hnext)
			all[n++] = img;
	qsort(all, n, sizeof(*all), cmp_img_base);
	for (size_t i = 0; i < n; i++)
		if ((i > 0 && strcmp(all[i]->base, all[i - 1]->base) == 0 &&
		     strcmp(all[i]->shown, all[i - 1]->shown)) ||
		    (i + 1 < n && strcmp(all[i]->base, all[i + 1]->base) == 0 &&
		     strcmp(all[i]->shown, all[i + 1]->shown)))
			r->dup_base[r->ndup_base++] = all[i];
	free(all);
	qsort(r->dup_base, r->ndup_base, sizeof(*r->dup_base), cmp_ptr);
}

/*
 * A function's image as the text outputs print it: its base name, or its path with
 * --full-paths or when another image of the log has the same base name (two "app"
 * binaries, a container's and the host's libc: told apart).
 */
static const char *shown_image(struct tools_report *r, uint32_t f,
			       const struct tools_rep_print_opts *po)
{
	const struct report_func *fn = &r->m->funcs[f];

	if (fn->img && !po->full_paths) {
		if (!r->dup_base_done)
			find_dup_bases(r);
		if (!r->ndup_base || !bsearch(&fn->img, r->dup_base, r->ndup_base,
					      sizeof(*r->dup_base), cmp_ptr))
			return fn->img->base;
	}
	return tools_report_func_image(r, f);
}

/* The keys --sort names, as "comm,dso". */
static void sort_keys_text(const struct tools_report *r, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < r->o.sort.n && at < len; k++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", k ? "," : "",
				       tools_sort_key_name(r->o.sort.key[k]));
}

/* A --sort value as the text outputs print it: an image as shown_image() does. */
static const char *sort_shown(struct tools_report *r, const struct tools_rep_print_opts *po,
			      int k, uint32_t v, char *buf, size_t len)
{
	if (k == TOOLS_SORT_DSO && v && v <= r->sortst.nnames)
		return shown_image(r, r->sortst.names[v - 1].func, po);
	return tools_sort_value(r, k, v, buf, len);
}

/* The top list by --sort's keys: a column per key (and the image after sym without dso). */
static void print_top_sorted(struct tools_report *r, FILE *out,
			     const struct tools_rep_print_opts *po, const struct tools_rep_event *e)
{
	const struct tools_rep_sort *so = &r->o.sort;
	bool img = so->has[TOOLS_SORT_SYM] && !so->has[TOOLS_SORT_DSO];
	int w[TOOLS_SORT_MAX] = { 0 };
	size_t n = 0, shown;
	char buf[32];
	uint32_t *rows = tools_sort_rows(r, e, &n);

	if (!rows) {
		log_error("out of memory");
		return;
	}
	shown = po->limit && po->limit < n ? po->limit : n;
	/* each column as wide as its widest value shown (a name at most 40 on a terminal) */
	for (size_t k = 0; k < so->n; k++) {
		w[k] = (int)strlen(tools_sort_key_name(so->key[k]));
		for (size_t j = 0; j < shown; j++) {
			const char *v = sort_shown(r, po, so->key[k], e->rows.row[rows[j]].v[k], buf,
						   sizeof(buf));
			int l = (int)strlen(v);

			w[k] = l > w[k] ? l : w[k];
		}
		if (po->width && w[k] > 40)
			w[k] = 40;
	}
	fprintf(out, "#  self%%  total%%    samples");
	for (size_t k = 0; k < so->n; k++)
		fprintf(out, "  %-*s", k + 1 < so->n || img ? w[k] : 0,
			tools_sort_key_name(so->key[k]));
	fprintf(out, "%s\n", img ? "  image" : "");
	for (size_t j = 0; j < shown; j++) {
		const struct tools_rep_row *x = &e->rows.row[rows[j]];

		fprintf(out, "%7.2f %7.2f %10" PRIu64, pct(x->self, e->samples),
			pct(x->total, e->samples), x->self);
		for (size_t k = 0; k < so->n; k++) {
			const char *v = sort_shown(r, po, so->key[k], x->v[k], buf, sizeof(buf));
			bool last = k + 1 == so->n && !img;
			bool cut = po->width && !last && (int)strlen(v) > w[k];

			if (cut)
				fprintf(out, "  %.*s...", w[k] - 3, v);
			else
				fprintf(out, "  %-*s", last ? 0 : w[k], v);
		}
		if (img) {
			uint32_t f = 0;

			for (size_t k = 0; k < so->n && !f; k++)
				f = tools_sort_value_func(r, so->key[k], x->v[k]);
			fprintf(out, "  %s", f ? shown_image(r, f, po) : "?");
		}
		fputc('\n', out);
	}
	if (shown < n) {
		uint64_t rest = 0;

		for (size_t j = shown; j < n; j++)
			rest += e->rows.row[rows[j]].self;
		fprintf(out,
			"# ... %zu more rows with %" PRIu64 " self samples (%.2f%%); "
			"--limit 0 lists all\n",
			n - shown, rest, pct(rest, e->samples));
	}
	free(rows);
}

void tools_report_print_top(struct tools_report *r, FILE *out,
			    const struct tools_rep_print_opts *po)
{
	for (size_t i = 0; i < r->nev; i++) {
		struct tools_rep_event *e = &r->ev[i];
		size_t n = 0, shown;
		struct top_row *rows;
		int fw = 40;

		if (!e->selected)
			continue;
		if (r->o.sort.generic) {
			char keys[128];

			sort_keys_text(r, keys, sizeof(keys));
			fprintf(out,
				"\n# %s: %" PRIu64 " samples by %s; self: the sample's own %s, "
				"total: %s\n",
				e->name, e->samples, keys, r->o.sort.frames ? "frame" : "keys",
				r->o.sort.frames ? "in its chain" : "the same (keys of the sample)");
			if (e->samples)
				print_top_sorted(r, out, po, e);
			continue;
		}
		fprintf(out,
			"\n# %s: %" PRIu64 " samples; self: in the function, total: in its chain\n",
			e->name, e->samples);
		if (!e->samples)
			continue;
		rows = top_rows(r, e, &n);
		if (!rows) {
			log_error("out of memory");
			return;
		}
		if (po->width > 60)
			fw = (int)po->width - 27 - 20 > 20 ? (int)po->width - 27 - 20 : 20;
		shown = po->limit && po->limit < n ? po->limit : n;
		fprintf(out, "#  self%%  total%%    samples  %-*s  %s\n", fw, "function", "image");
		for (size_t k = 0; k < shown; k++) {
			const char *name = tools_report_func_name(r, rows[k].f);
			/* on a terminal a longer name is cut with "...": the image stays in its column */
			bool cut = po->width && strlen(name) > (size_t)fw;

			fprintf(out, "%7.2f %7.2f %10" PRIu64 "  %-*.*s%s  %s\n",
				pct(rows[k].self, e->samples), pct(rows[k].total, e->samples),
				rows[k].self, cut ? fw - 3 : fw,
				cut ? fw - 3 : po->width ? fw : (int)strlen(name) + fw, name,
				cut ? "..." : "", shown_image(r, rows[k].f, po));
		}
		if (shown < n) {
			uint64_t rest = 0;

			for (size_t k = shown; k < n; k++)
				rest += rows[k].self;
			fprintf(out,
				"# ... %zu more functions with %" PRIu64 " self samples (%.2f%%); "
				"--limit 0 lists all\n",
				n - shown, rest, pct(rest, e->samples));
		}
		free(rows);
	}
}

/* Call graphs --------------------------------------------------------------- */

static struct tools_rep_tree *sort_tree;

static int cmp_nodes(const void *pa, const void *pb)
{
	const struct tools_rep_node *a = &sort_tree->n[*(const uint32_t *)pa];
	const struct tools_rep_node *b = &sort_tree->n[*(const uint32_t *)pb];

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return cmp_name(a->func, b->func);
}

/* The children of @node, sorted by samples; *ret_n of them (caller frees). */
static uint32_t *children(struct tools_report *r, struct tools_rep_tree *t, uint32_t node,
			  size_t *ret_n)
{
	size_t n = 0;
	uint32_t *v;

	for (uint32_t c = t->n[node].child; c; c = t->n[c].sibling)
		n++;
	v = malloc((n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	n = 0;
	for (uint32_t c = t->n[node].child; c; c = t->n[c].sibling)
		v[n++] = c;
	sort_rep = r;
	sort_tree = t;
	qsort(v, n, sizeof(*v), cmp_nodes);
	*ret_n = n;
	return v;
}

/*
 * A call tree below @node, pruned by --depth and --min-percent alike for both layouts:
 * pmcstat -G's (percent of the parent, [samples]) or, with @kids, --children's
 * (total% self% samples of all, the function indented).
 */
static void print_tree(struct tools_report *r, FILE *out, struct tools_rep_tree *t, uint32_t node,
		       unsigned depth, uint64_t total, const struct tools_rep_print_opts *po,
		       bool kids)
{
	size_t n = 0, more = 0;
	uint64_t more_samples = 0;
	uint32_t *v;

	if (!t->n || (po->depth && depth >= po->depth))
		return;
	v = children(r, t, node, &n);
	if (!v)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct tools_rep_node *c = &t->n[v[i]];

		if (pct(c->count, total) < po->min_percent) {
			more++;
			more_samples += c->count;
			continue;
		}
		if (kids)
			fprintf(out, "%7.2f %7.2f %10" PRIu64 "  %*s%s @ %s\n", pct(c->count, total),
				pct(c->self, total), c->count, (int)depth * 2, "",
				tools_report_func_name(r, c->func), shown_image(r, c->func, po));
		else if (depth == 0)
			fprintf(out, "%6.2f%%  [%" PRIu64 "]  %s @ %s\n", pct(c->count, total),
				c->count, tools_report_func_name(r, c->func),
				shown_image(r, c->func, po));
		else
			fprintf(out, "%*s%5.1f%%  [%" PRIu64 "]  %s @ %s\n", (int)depth * 2, "",
				pct(c->count, t->n[node].count), c->count,
				tools_report_func_name(r, c->func), shown_image(r, c->func, po));
		print_tree(r, out, t, v[i], depth + 1, total, po, kids);
	}
	if (more)
		fprintf(out,
			"%*s%*s(%zu more below %.2g%%: %" PRIu64
			" samples; --min-percent 0 shows them)\n",
			kids ? 28 : 0, "", (int)depth * 2, "", more, po->min_percent, more_samples);
	free(v);
}

static void print_graph(struct tools_report *r, FILE *out, struct tools_rep_tree *t, uint32_t node,
			unsigned depth, uint64_t total, const struct tools_rep_print_opts *po)
{
	print_tree(r, out, t, node, depth, total, po, false);
}

void tools_report_print_callgraph(struct tools_report *r, FILE *out,
				  const struct tools_rep_print_opts *po)
{
	for (size_t i = 0; i < r->nev; i++) {
		struct tools_rep_event *e = &r->ev[i];

		if (!e->selected)
			continue;
		fprintf(out, "\n@ %s [%" PRIu64 " samples]\n\n", e->name, e->samples);
		print_graph(r, out, &e->callers, 0, 0, e->samples, po);
	}
}

void tools_report_print_children(struct tools_report *r, FILE *out,
				 const struct tools_rep_print_opts *po)
{
	for (size_t i = 0; i < r->nev; i++) {
		struct tools_rep_event *e = &r->ev[i];

		if (!e->selected)
			continue;
		fprintf(out,
			"\n# %s: %" PRIu64 " samples, caller first from the outermost frames; "
			"total: in the function and what it calls, self: in it\n",
			e->name, e->samples);
		if (!e->samples)
			continue;
		fprintf(out, "# total%%   self%%    samples  function @ image\n");
		print_tree(r, out, &e->children, 0, 0, e->samples, po, true);
	}
}

/*
 * For a --callers/--callees name no sample has: the sampled function whose name is
 * a plausible typo of it, else the one with the most samples whose name contains
 * it (*ret_part).  NULL when neither.
 */
static const char *focus_suggest(struct tools_report *r, const struct tools_rep_event *e,
				 bool *ret_part)
{
	struct util_suggest sg = { NULL, 0 };
	uint32_t part = 0;

	for (size_t f = 1; f < e->ncounts; f++) {
		const char *name;

		if (!e->total[f] || r->m->funcs[f].kind == REPORT_F_COMM)
			continue;
		name = tools_report_func_name(r, (uint32_t)f);
		util_suggest_consider(&sg, r->o.focus, name);
		if (strstr(name, r->o.focus) && (!part || e->total[f] > e->total[part]))
			part = (uint32_t)f;
	}
	*ret_part = !sg.best && part;
	return sg.best ? sg.best : part ? tools_report_func_name(r, part) : NULL;
}

void tools_report_print_focus(struct tools_report *r, FILE *out,
			      const struct tools_rep_print_opts *po)
{
	for (size_t i = 0; i < r->nev; i++) {
		struct tools_rep_event *e = &r->ev[i];

		if (!e->selected)
			continue;
		if (!e->focus_samples) {
			bool part;
			const char *near = focus_suggest(r, e, &part);

			fprintf(out, "\n@ %s: no sample has '%s' in its chain%s%s%s\n", e->name,
				r->o.focus, !near ? "" : part ? "; '" : "; did you mean '",
				near ? near : "",
				!near ? "" : part ? "' contains it (the most sampled function that does)"
					   : "'?");
			continue;
		}
		if (r->o.want_focus_callers) {
			fprintf(out, "\n@ %s: callers of '%s' [%" PRIu64 " samples, %.2f%%]\n\n",
				e->name, r->o.focus, e->focus_samples,
				pct(e->focus_samples, e->samples));
			print_graph(r, out, &e->focus_callers, 0, 0, e->samples, po);
		}
		if (r->o.want_focus_callees) {
			fprintf(out, "\n@ %s: callees of '%s' [%" PRIu64 " samples, %.2f%%]\n\n",
				e->name, r->o.focus, e->focus_samples,
				pct(e->focus_samples, e->samples));
			print_graph(r, out, &e->focus_callees, 0, 0, e->samples, po);
		}
	}
}

struct tools_rep_event *tools_report_single_event(struct tools_report *r, const char *what)
{
	struct tools_rep_event *one = NULL;
	size_t n = 0;

	for (size_t i = 0; i < r->nev; i++) {
		if (r->ev[i].selected && r->ev[i].samples) {
			one = &r->ev[i];
			n++;
		}
	}
	if (n > 1) {
		log_error("%s: the log has samples of %zu events; %s shows one: choose it with "
			  "--event NAME",
			  r->file, n, what);
		return NULL;
	}
	if (!one) {
		for (size_t i = 0; i < r->nev; i++)
			if (r->ev[i].selected)
				return &r->ev[i];
	}
	return one;
}

/* Folded stacks --------------------------------------------------------------- */

static void put_folded_name(FILE *out, const char *s)
{
	/* flamegraph.pl splits frames at ';' and the count at the last blank. */
	for (; *s; s++)
		fputc(*s == ';' ? ':' : *s, out);
}

int tools_report_print_folded(struct tools_report *r, FILE *out)
{
	struct tools_rep_event *e = tools_report_single_event(r, "--folded");
	struct tools_rep_tree *t;
	uint32_t *stack, path[PLOG_CALLCHAIN_DEPTH_MAX + 2];
	size_t sp = 0;

	if (!e)
		return -EINVAL;
	t = &e->callees;
	if (!t->n)
		return -EINVAL; /* not built: the caller did not ask for callees */
	stack = malloc((t->len + 1) * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	for (uint32_t c = t->n[0].child; c; c = t->n[c].sibling)
		stack[sp++] = c;
	while (sp) {
		uint32_t node = stack[--sp];
		size_t depth = 0;

		for (uint32_t c = t->n[node].child; c; c = t->n[c].sibling)
			stack[sp++] = c;
		if (!t->n[node].self)
			continue;
		for (uint32_t x = node; x && depth < sizeof(path) / sizeof(path[0]);
		     x = t->n[x].parent)
			path[depth++] = x;
		for (size_t k = depth; k-- > 0;) {
			put_folded_name(out, tools_report_func_name(r, t->n[path[k]].func));
			if (k)
				fputc(';', out);
		}
		fprintf(out, " %" PRIu64 "\n", t->n[node].self);
	}
	free(stack);
	return ferror(out) ? -EIO : 0;
}

/* Flame graph ----------------------------------------------------------------- */

static enum tools_flame_kind flame_kind(const struct report_func *f)
{
	switch (f->kind) {
	case REPORT_F_KERNEL:
		return TOOLS_FLAME_KERNEL;
	case REPORT_F_COMM:
		return TOOLS_FLAME_PROCESS;
	case REPORT_F_NOSYM:
	case REPORT_F_UNKNOWN:
		return TOOLS_FLAME_UNKNOWN;
	default:
		return TOOLS_FLAME_USER;
	}
}

int tools_report_write_flame(struct tools_report *r, FILE *out)
{
	struct tools_rep_event *e = tools_report_single_event(r, "--flame");
	struct tools_rep_tree *t;
	struct tools_flame_node *nodes;
	struct tools_flame_node **kids;
	size_t *fill;
	char title[160], sub[2300];
	int err;

	if (!e)
		return -EINVAL;
	t = &e->callees;
	if (!t->n)
		return -EINVAL; /* not built: the caller did not ask for callees */
	nodes = calloc(t->len, sizeof(*nodes));
	kids = calloc(t->len + 1, sizeof(*kids));
	fill = calloc(t->len + 1, sizeof(*fill));
	if (!nodes || !kids || !fill) {
		free(nodes);
		free(kids);
		free(fill);
		return -ENOMEM;
	}
	/* Children of node i are kids[start(i) .. start(i) + nchildren(i)). */
	for (size_t i = 1; i < t->len; i++)
		nodes[t->n[i].parent].nchildren++;
	for (size_t i = 0, at = 0; i < t->len; i++) {
		fill[i] = at;
		nodes[i].children = kids + at;
		at += nodes[i].nchildren;
		nodes[i].nchildren = 0;
	}
	for (size_t i = 0; i < t->len; i++) {
		const struct tools_rep_node *n = &t->n[i];

		nodes[i].samples = n->count;
		if (i == 0) {
			nodes[i].name = "all";
			nodes[i].kind = TOOLS_FLAME_PROCESS;
			continue;
		}
		nodes[i].name = tools_report_func_name(r, n->func);
		nodes[i].image = r->m->funcs[n->func].kind == REPORT_F_COMM
					 ? NULL
					 : tools_report_func_image(r, n->func);
		nodes[i].kind = flame_kind(&r->m->funcs[n->func]);
		nodes[n->parent].children[nodes[n->parent].nchildren++] = &nodes[i];
	}
	snprintf(title, sizeof(title), "%s: %" PRIu64 " samples", e->name, e->samples);
	{
		char cov[2200];

		coverage(r, cov, sizeof(cov));
		snprintf(sub, sizeof(sub), "hwpmc report --flame of %s", cov);
	}
	if (r->flame_base) {
		/* hwpmc diff --flame: NEW's widths, coloured by the change of each frame's share */
		struct tools_report *rb = r->flame_base;
		const struct tools_rep_event *eb = NULL;
		uint64_t *bc = calloc(t->len + 1, sizeof(*bc));
		double most = 0;

		for (size_t i = 0; i < rb->nev && !eb; i++)
			if (rb->ev[i].selected && strcmp(rb->ev[i].name, e->name) == 0)
				eb = &rb->ev[i];
		err = !bc ? -ENOMEM
			  : eb && eb->callees.n ? tools_diff_base_counts(rb, &eb->callees, r, t, bc)
						: 0;
		for (size_t i = 0; err == 0 && i < t->len; i++) {
			uint64_t broot = eb && eb->callees.n ? eb->callees.n[0].count : 0;

			nodes[i].diff = true;
			nodes[i].delta = pct(t->n[i].count, t->n[0].count) - pct(bc[i], broot);
			if (i && (nodes[i].delta > most || -nodes[i].delta > most))
				most = nodes[i].delta > 0 ? nodes[i].delta : -nodes[i].delta;
		}
		for (size_t i = 0; err == 0 && i < t->len; i++)
			nodes[i].level = most > 0 ? nodes[i].delta / most : 0;
		free(bc);
		snprintf(title, sizeof(title), "%s: %" PRIu64 " samples against %" PRIu64
			 " of the base: red grew, blue shrank", e->name, e->samples,
			 eb ? eb->samples : 0);
		if (err < 0) {
			free(nodes);
			free(kids);
			free(fill);
			return err;
		}
	}
	err = tools_flame_write(out, &nodes[0], title, sub);
	free(nodes);
	free(kids);
	free(fill);
	return err;
}

/* JSON ------------------------------------------------------------------------ */

/* The first file read's INITIALIZE, in seconds since the epoch. */
static int64_t first_start_s(const struct tools_report *r)
{
	const struct tools_rep_file *a, *b;

	files_read(r, &a, &b);
	return a ? a->start_ns / 1000000000 : 0;
}

static json_t *json_graph(struct tools_report *r, struct tools_rep_tree *t, uint32_t node,
			  unsigned depth, uint64_t total, const struct tools_rep_print_opts *po,
			  const char *key)
{
	json_t *arr = json_array();
	size_t n = 0, more = 0;
	uint64_t more_samples = 0;
	uint32_t *v;

	if (!arr || !t->n || (po->depth && depth >= po->depth))
		return arr;
	v = children(r, t, node, &n);
	if (!v)
		return arr;
	for (size_t i = 0; i < n; i++) {
		const struct tools_rep_node *c = &t->n[v[i]];
		json_t *o;

		if (pct(c->count, total) < po->min_percent) {
			more++;
			more_samples += c->count;
			continue;
		}
		o = json_pack("{s:s, s:s, s:I, s:f}", "function",
			      tools_report_func_name(r, c->func), "image",
			      tools_report_func_image(r, c->func), "samples", (json_int_t)c->count,
			      "percent", pct(c->count, depth ? t->n[node].count : total));
		if (o && strcmp(key, "children") == 0) /* caller first: total and self */
			json_object_set_new(o, "self", json_integer((json_int_t)c->self));
		if (o) {
			json_object_set_new(o, key,
					    json_graph(r, t, v[i], depth + 1, total, po, key));
			json_array_append_new(arr, o);
		}
	}
	if (more)
		json_array_append_new(arr, json_pack("{s:{s:I, s:I}}", "elided", "entries",
						     (json_int_t)more, "samples",
						     (json_int_t)more_samples));
	free(v);
	return arr;
}

/* --sort's top list: per row its keys' values (numbers for pid, tid, cpu) and counts. */
static json_t *json_top_sorted(struct tools_report *r, const struct tools_rep_event *e,
			       const struct tools_rep_print_opts *po)
{
	const struct tools_rep_sort *so = &r->o.sort;
	json_t *top = json_array();
	size_t n = 0;
	uint32_t *rows = tools_sort_rows(r, e, &n);
	char buf[32];

	for (size_t j = 0; rows && top && j < n && (!po->limit || j < po->limit); j++) {
		const struct tools_rep_row *x = &e->rows.row[rows[j]];
		json_t *o = json_pack("{s:I, s:I, s:f, s:f}", "self", (json_int_t)x->self, "total",
				      (json_int_t)x->total, "self_percent", pct(x->self, e->samples),
				      "total_percent", pct(x->total, e->samples));

		for (size_t k = 0; o && k < so->n; k++) {
			int key = so->key[k];
			uint32_t f = tools_sort_value_func(r, key, x->v[k]);

			if (key == TOOLS_SORT_PID || key == TOOLS_SORT_TID)
				json_object_set_new(o, tools_sort_key_name(key),
						    json_integer((int32_t)x->v[k]));
			else if (key == TOOLS_SORT_CPU)
				json_object_set_new(o, "cpu", json_integer(x->v[k]));
			else if (key == TOOLS_SORT_SYM) /* as the default top list names it */
				json_object_set_new(o, "function",
						    json_string(tools_sort_value(r, key, x->v[k], buf,
										 sizeof(buf))));
			else
				json_object_set_new(o, tools_sort_key_name(key),
						    json_string(tools_sort_value(r, key, x->v[k], buf,
										 sizeof(buf))));
			if (f)
				json_object_set_new(o, "image",
						    json_string(tools_report_func_image(r, f)));
		}
		if (o)
			json_array_append_new(top, o);
	}
	free(rows);
	return top;
}

int tools_report_print_json(struct tools_report *r, FILE *out,
			    const struct tools_rep_print_opts *po)
{
	json_t *root, *evs = json_array(), *hdr, *files, *span;
	int err = 0;

	hdr = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
			"s:f, s:I, s:s?}",
			"file", r->file, "status", r->status_msg, "samples", (json_int_t)r->samples,
			"reported", (json_int_t)r->kept, "filtered", (json_int_t)r->filtered,
			"without_frames", (json_int_t)r->no_frames, "lost_dropnotify",
			(json_int_t)r->dropnotify, "processes_sampled", (json_int_t)r->sampled_pids,
			"processes", (json_int_t)r->m->nprocs, "images", (json_int_t)r->m->nimages,
			"images_read", (json_int_t)r->m->images_read,
			"images_unreadable", (json_int_t)r->m->images_missing, "images_other_build",
			(json_int_t)r->m->images_other_build, "images_by_build_id",
			(json_int_t)r->m->images_by_id, "pcs",
			(json_int_t)r->pcs, "pcs_unknown", (json_int_t)r->m->pcs_unknown, "pcs_nosym",
			(json_int_t)r->m->pcs_nosym, "pcs_jit", (json_int_t)r->m->pcs_jit, "duration_s",
			r->m->tsc_freq ? (double)(r->last_tsc - r->first_tsc) / (double)r->m->tsc_freq
				    : 0.0,
			"start_unix_s",
			(json_int_t)(r->nfiles > 1 && r->nread ? first_start_s(r) : r->m->ts_sec),
			"kernel_symbols", r->m->ksyms_source[0] ? r->m->ksyms_source : NULL);
	files = json_array();
	span = json_object();
	if (hdr && files && span) {
		char lo[40], hi[40];

		/* what the lost marks said (pmclog-format.md 11.14), and their share */
		json_object_set_new(hdr, "lost_samples", json_integer((json_int_t)r->lost_samples));
		json_object_set_new(hdr, "lost_percent", json_real(100.0 * tools_report_lost_share(r)));
		/* kept samples with an [unknown] frame (the header warns beyond 5%) */
		json_object_set_new(hdr, "samples_unknown", json_integer((json_int_t)r->unknown_samples));

		for (size_t i = 0; i < r->nfiles; i++)
			if (r->files[i].read)
				json_array_append_new(files, json_string(r->files[i].shown));
		if (r->have_span) {
			tools_report_format_time(r->span_lo, lo, sizeof(lo));
			tools_report_format_time(r->span_hi, hi, sizeof(hi));
			json_object_set_new(span, "start", json_string(lo));
			json_object_set_new(span, "end", json_string(hi));
		} else {
			json_object_set_new(span, "start", json_null());
			json_object_set_new(span, "end", json_null());
		}
		json_object_set_new(hdr, "files_skipped", json_integer((json_int_t)r->nskipped));
		json_object_set_new(hdr, "files", files);
		if (r->m->ncgroups) {
			size_t n;
			const struct report_cgroup **v = cgroups_sorted(r, &n);
			json_t *cgs = json_array();

			for (size_t i = 0; i < n && cgs; i++)
				json_array_append_new(cgs, json_pack("{s:s,s:I}", "path", v[i]->path,
								     "samples",
								     (json_int_t)v[i]->samples));
			free(v);
			if (cgs)
				json_object_set_new(hdr, "cgroups", cgs);
		}
		json_object_set_new(hdr, "time_span", span);
		if (r->nrates) {
			json_t *rates = json_array();
			char t[64];

			for (size_t i = 0; i < r->nrates; i++) {
				tools_report_format_time(r->rates[i].wall_ns, t, sizeof(t));
				json_array_append_new(rates,
						      json_pack("{s:s,s:I}", "time", t, "hz",
								(json_int_t)r->rates[i].hz));
			}
			json_object_set_new(hdr, "rates", rates);
		}
		if (r->nfilters) {
			json_t *filters = json_array();
			char t[64];

			for (size_t i = 0; i < r->nfilters; i++) {
				tools_report_format_time(r->filters[i].wall_ns, t, sizeof(t));
				json_array_append_new(filters,
						      json_pack("{s:s,s:s}", "time", t, "filter",
								r->filters[i].text));
			}
			json_object_set_new(hdr, "filters", filters);
		}
		files = span = NULL;
	}
	json_decref(files);
	json_decref(span);
	root = json_object();
	if (!root || !evs || !hdr) {
		json_decref(root);
		json_decref(evs);
		json_decref(hdr);
		return -ENOMEM;
	}
	json_object_set_new(root, "header", hdr);
	for (size_t i = 0; i < r->nev; i++) {
		struct tools_rep_event *e = &r->ev[i];
		json_t *top = json_array(), *eo;
		struct top_row *rows;
		size_t n = 0;

		if (!e->selected)
			continue;
		if (r->o.sort.generic) {
			json_decref(top);
			top = json_top_sorted(r, e, po);
			rows = NULL;
		} else {
			rows = top_rows(r, e, &n);
		}
		for (size_t k = 0; rows && top && k < n && (!po->limit || k < po->limit); k++)
			json_array_append_new(
				top, json_pack("{s:s, s:s, s:I, s:I, s:f, s:f}", "function",
					       tools_report_func_name(r, rows[k].f), "image",
					       tools_report_func_image(r, rows[k].f), "self",
					       (json_int_t)rows[k].self, "total",
					       (json_int_t)rows[k].total, "self_percent",
					       pct(rows[k].self, e->samples), "total_percent",
					       pct(rows[k].total, e->samples)));
		free(rows);
		eo = json_pack("{s:s, s:I, s:I, s:o}", "event", e->name, "pmcid",
			       (json_int_t)e->pmcid, "samples", (json_int_t)e->samples, "top",
			       top ? top : json_array());
		if (!eo)
			continue;
		/* counts are samples at the first period; sampled is the count taken (11.13) */
		json_object_set_new(eo, "sampled", json_integer((json_int_t)e->sampled));
		if (e->period0 > 0 && e->period_lo > 0)
			json_object_set_new(
				eo, "sampling",
				json_pack("{s:s, s:f, s:f, s:f, s:b}", "by",
					  e->by_freq ? "frequency" : "period", "first",
					  e->by_freq ? 1e9 / e->period0 : e->period0, "low",
					  e->by_freq ? 1e9 / e->period_hi : e->period_lo, "high",
					  e->by_freq ? 1e9 / e->period_lo : e->period_hi, "weighted",
					  e->varied));
		if (r->o.want_callers)
			json_object_set_new(
				eo, "callgraph",
				json_graph(r, &e->callers, 0, 0, e->samples, po, "callers"));
		if (r->o.want_children)
			json_object_set_new(
				eo, "children",
				json_graph(r, &e->children, 0, 0, e->samples, po, "children"));
		if (r->o.sort.generic) {
			json_t *keys = json_array();

			for (size_t k = 0; keys && k < r->o.sort.n; k++)
				json_array_append_new(keys,
						      json_string(tools_sort_key_name(r->o.sort.key[k])));
			json_object_set_new(eo, "sort", keys);
		}
		if (r->o.want_focus) {
			json_object_set_new(eo, "focus", json_string(r->o.focus));
			json_object_set_new(eo, "focus_samples",
					    json_integer((json_int_t)e->focus_samples));
			json_object_set_new(
				eo, "focus_callers",
				json_graph(r, &e->focus_callers, 0, 0, e->samples, po, "callers"));
			json_object_set_new(
				eo, "focus_callees",
				json_graph(r, &e->focus_callees, 0, 0, e->samples, po, "callees"));
		}
		json_array_append_new(evs, eo);
	}
	json_object_set_new(root, "events", evs);
	if (json_dumpf(root, out, JSON_INDENT(1) | JSON_SORT_KEYS) < 0 || fputc('\n', out) == EOF)
		err = -EIO;
	json_decref(root);
	return err;
}
