/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-report-script.c: `hwpmc script`, every kept sample as a block in the text
 * layout of `perf script`, for the tools that read it (speedscope, Firefox
 * Profiler's import, FlameGraph's stackcollapse-perf.pl).
 *
 * PUBLIC INTERFACES
 *   tools_script_sample() (tools-report.h)
 *
 * IMPLEMENTATION NOTES
 *   A block is a header line
 *       COMM PID/TID [CPU] SECONDS.MICROS: PERIOD EVENT:
 *   (as perf prints it with a call chain: COMM unpadded, PID in 5 columns, TID left in
 *   5, PERIOD in 10; the time the wall clock's, PERIOD the event's
 *   period at the sample: ns for a clock sampled by frequency), then a line per PC,
 *   leaf first,
 *       <TAB>ADDRESS FUNCTION+0xOFFSET (IMAGE)
 *   with the offset from the function's start in its image (none for a PC without a
 *   symbol, whose name says image+0xoffset, nor for JIT and [unknown] code), and a
 *   blank line.  Kernel PCs come first, as the log has them; --user/--kernel keep
 *   theirs only.  Samples are printed as read, after the report's filters, each
 *   resolved on its own (the report's cache of samples alike counts; here every
 *   sample is a line of output anyway).  Names are the report's, escaped.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "hwpmcd/common.h"
#include "tools-report.h"

static int frame(struct tools_report *r, FILE *out, struct report_proc *p, uint64_t pc,
		 uint64_t look)
{
	uint32_t f = report_model__resolve(r->m, p, look);
	const struct report_func *fn;
	struct report_where wh;
	const char *img;

	if (!f || report_model__locate(r->m, p, look, &wh) < 0)
		return -ENOMEM;
	fn = &r->m->funcs[f];
	img = tools_report_func_image(r, f);
	if (!img[0])
		img = "[unknown]";
	if (((fn->kind == REPORT_F_USER && wh.img) || fn->kind == REPORT_F_KERNEL) &&
	    wh.addr + (look != pc) >= fn->addr)
		fprintf(out, "\t%16" PRIx64 " %s+0x%" PRIx64 " (%s)\n", pc,
			report_model__func_plain_name(r->m, f), wh.addr + (look != pc) - fn->addr,
			img);
	else
		fprintf(out, "\t%16" PRIx64 " %s (%s)\n", pc, report_model__func_plain_name(r->m, f),
			img);
	return 0;
}

int tools_script_sample(struct tools_report *r, const struct plog_record *c,
			const struct tools_rep_event *e, struct report_proc *p, bool user_mode,
			int64_t ns)
{
	FILE *out = r->o.script;
	int32_t pid = c->u.callchain.pid, tid = c->u.callchain.tid;
	uint32_t cf = report_model__comm_func(r->m, p, pid, tid);
	size_t k = 0, npc = c->u.callchain.npc, first;
	uint64_t s = ns > 0 ? (uint64_t)ns : 0;
	int err;

	if (!cf)
		return -ENOMEM;
	if (r->o.user_only && !user_mode) {
		/* a sample of the kernel alone has no frame to print under --user */
		while (k < npc && c->u.callchain.pc[k] >= TOOLS_REP_KERNEL_MIN)
			k++;
		if (k == npc)
			return 0;
		k = 0;
	}
	/* perf script's with a call chain: the name unpadded (the importers' patterns want it) */
	fprintf(out, "%s %5" PRId32 "/%-5" PRId32 " [%03" PRIu32 "] %" PRIu64 ".%06" PRIu64 ": %10" PRIu64
		     " %s: \n",
		tools_report_func_name(r, cf), pid, tid, PLOG_CC_CPU(c->u.callchain.cpuflags),
		s / 1000000000, s % 1000000000 / 1000,
		e->period > 0 && e->period < 1e19 ? (uint64_t)(e->period + 0.5) : 1, e->name);
	if (!user_mode) {
		for (; k < npc && c->u.callchain.pc[k] >= TOOLS_REP_KERNEL_MIN; k++) {
			uint64_t pc = c->u.callchain.pc[k];

			/* a return address is looked up at the call (PC - 1), as the report does */
			if (!r->o.user_only && (err = frame(r, out, NULL, pc, k ? pc - 1 : pc)) < 0)
				return err;
		}
	}
	for (first = k; k < npc && !r->o.kernel_only; k++) {
		uint64_t pc = c->u.callchain.pc[k];

		if (!p) {
			fprintf(out, "\t%16" PRIx64 " [unknown] ([unknown])\n", pc);
			continue;
		}
		if ((err = frame(r, out, p, pc, k == first ? pc : pc - 1)) < 0)
			return err;
	}
	if (fputc('\n', out) == EOF)
		return -EIO;
	return 0;
}
