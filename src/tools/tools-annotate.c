/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-annotate.c: `hwpmc annotate FUNC [LOG...]` (pmcannotate, perf annotate): a
 * function's instructions with the samples at each, and its source lines.
 *
 * PUBLIC INTERFACES
 *   tools_annotate() (tools-report.h)
 *
 * IMPLEMENTATION NOTES
 *   The report keeps its samples by PC (tools-report-pcs.c): a sample's leaf location
 *   is the exact PC where the thread was (no PC - 1: that is for return addresses),
 *   as a link address in its image, so the samples of an instruction are those whose
 *   leaf location is its address.  The function (each image's copy of that name with
 *   samples, most sampled first) is disassembled from its image's file: its symbol's
 *   [start, start + size) (at most TOOLS_ANN_MAX bytes), read at the file offset of
 *   the PT_LOAD that holds it, by capstone, which is loaded with dlopen() at the first
 *   annotation (as libdw and libseccomp are: no report pays for linking it).  Each
 *   instruction's source line is the innermost of report_model__lines() (DWARF of the
 *   image or its debug file); the source text is printed when the file can be read.
 *   Kernel functions have no code here (no vmlinux): their sampled addresses are
 *   listed.
 */
#include <capstone/capstone.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwpmcd/log.h"
#include "hwpmcd/report-dwarf.h"
#include "hwpmcd/report-sym.h"
#include "tools-report.h"

/* The most bytes of one function disassembled (a hostile symbol size is cut). */
#define TOOLS_ANN_MAX ((size_t)1 << 20)

static struct {
	bool tried, ok;
	cs_err (*open)(cs_arch, cs_mode, csh *);
	size_t (*disasm)(csh, const uint8_t *, size_t, uint64_t, size_t, cs_insn **);
	void (*free)(cs_insn *, size_t);
	cs_err (*close)(csh *);
} cs;

static bool cs_load(void)
{
	void *h;

	if (cs.tried)
		return cs.ok;
	cs.tried = true;
	h = dlopen("libcapstone.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		h = dlopen("libcapstone.so", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return false;
	*(void **)&cs.open = dlsym(h, "cs_open");
	*(void **)&cs.disasm = dlsym(h, "cs_disasm");
	*(void **)&cs.free = dlsym(h, "cs_free");
	*(void **)&cs.close = dlsym(h, "cs_close");
	cs.ok = cs.open && cs.disasm && cs.free && cs.close;
	return cs.ok;
}

/* One sampled address of the function: its samples (weights). */
struct ann_pc {
	uint64_t addr;
	uint64_t w;
};

/* One copy of the function: an image (NULL: the kernel) and the model's function. */
struct ann_fn {
	struct report_image *img;
	uint32_t func;
	uint64_t w;
	struct ann_pc *pc;
	size_t npc, cap;
};

static uint64_t wsamp(uint64_t w)
{
	return w / TOOLS_REP_W_ONE + (w % TOOLS_REP_W_ONE >= TOOLS_REP_W_ONE / 2);
}

static bool name_is(struct tools_report *r, uint32_t f, const char *want)
{
	const struct report_func *fn = &r->m->funcs[f];

	return strcmp(report_model__func_plain_name(r->m, f), want) == 0 ||
	       (fn->name && strcmp(fn->name, want) == 0);
}

static int cmp_pc(const void *a, const void *b)
{
	const struct ann_pc *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_fn(const void *a, const void *b)
{
	const struct ann_fn *x = a, *y = b;

	return x->w > y->w ? -1 : x->w < y->w;
}

/* The copies of @want with leaf samples of event @ev, their PCs summed and sorted. */
static int collect(struct tools_report *r, uint32_t ev, const char *want, struct ann_fn **ret,
		   size_t *ret_n, uint64_t *ret_total)
{
	const struct tools_rep_pcsample *x;
	struct ann_fn *v = NULL;
	size_t n = 0, cap = 0, off = 0;
	uint8_t *match = calloc(r->bypc.nloc + 1, 1); /* per location: 1 not it, 2 it */

	*ret_total = 0;
	if (!match)
		return -ENOMEM;
	while ((x = tools_pcs_next(&r->bypc, &off))) {
		const struct tools_rep_loc *l;
		struct ann_fn *fn = NULL;
		struct ann_pc *p;

		if (x->ev != ev || !x->n)
			continue;
		*ret_total += x->w;
		l = &r->bypc.loc[x->locs[0] - 1];
		if (!match[x->locs[0]])
			match[x->locs[0]] = name_is(r, l->func, want) ? 2 : 1;
		if (match[x->locs[0]] != 2 || l->ret)
			continue;
		for (size_t i = 0; i < n && !fn; i++)
			if (v[i].img == l->img && v[i].func == l->func)
				fn = &v[i];
		if (!fn) {
			struct ann_fn *nv = util_grow(v, &cap, n + 1, sizeof(*nv));

			if (!nv)
				goto nomem;
			v = nv;
			fn = &v[n++];
			memset(fn, 0, sizeof(*fn));
			fn->img = l->img;
			fn->func = l->func;
		}
		fn->w += x->w;
		p = util_grow(fn->pc, &fn->cap, fn->npc + 1, sizeof(*p));
		if (!p)
			goto nomem;
		fn->pc = p;
		fn->pc[fn->npc++] = (struct ann_pc){ l->addr, x->w };
	}
	free(match);
	for (size_t i = 0; i < n; i++) {
		struct ann_fn *fn = &v[i];
		size_t w = 0;

		qsort(fn->pc, fn->npc, sizeof(*fn->pc), cmp_pc);
		for (size_t k = 0; k < fn->npc; k++) {
			if (w && fn->pc[w - 1].addr == fn->pc[k].addr)
				fn->pc[w - 1].w += fn->pc[k].w;
			else
				fn->pc[w++] = fn->pc[k];
		}
		fn->npc = w;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_fn);
	*ret = v;
	*ret_n = n;
	return 0;
nomem:
	free(match);
	for (size_t i = 0; i < n; i++)
		free(v[i].pc);
	free(v);
	return -ENOMEM;
}

/* The bytes of [@start, @start + @size) of @img's file (*@ret, malloc'd), or -errno. */
static int read_code(struct tools_report *r, struct report_image *img, uint64_t start,
		     size_t size, uint8_t **ret)
{
	char path[4096];
	const struct maplog_elf_info *in = &img->info;
	uint64_t off = 0;
	bool found = false;
	uint8_t *buf;
	ssize_t got;
	int fd;

	if (img->info_err)
		return img->info_err < 0 ? img->info_err : -ENOENT;
	for (size_t i = 0; i < in->n_load && !found; i++) {
		const struct maplog_phdr *ph = &in->load[i];

		if (start >= ph->p_vaddr && start - ph->p_vaddr < ph->p_filesz &&
		    size <= ph->p_filesz - (start - ph->p_vaddr)) {
			off = ph->p_offset + (start - ph->p_vaddr);
			found = true;
		}
	}
	if (!found)
		return -ERANGE;
	report_model__image_file(r->m, img, path, sizeof(path));
	if (!path[0])
		return -ENOENT;
	if ((fd = report_open_regular(path, NULL)) < 0)
		return fd;
	buf = malloc(size ? size : 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	got = pread(fd, buf, size, (off_t)off);
	close(fd);
	if (got != (ssize_t)size) {
		free(buf);
		return got < 0 ? -errno : -EIO;
	}
	*ret = buf;
	return 0;
}

/* A source file's lines, read once (the last file asked for is kept). */
struct src {
	char *path;
	char *text;
	char **line;
	size_t nlines;
	bool missing;
};

static const char *src_line(struct src *s, const char *file, uint32_t line)
{
	FILE *f;
	size_t len = 0, cap = 0;

	if (!file || !line)
		return NULL;
	if (!s->path || strcmp(s->path, file) != 0) {
		free(s->path);
		free(s->text);
		free(s->line);
		memset(s, 0, sizeof(*s));
		s->path = strdup(file);
		if (!s->path)
			return NULL;
		f = fopen(file, "re");
		s->missing = !f;
		if (f) {
			/* at most 16 MiB of source: a hostile DWARF names any file */
			char buf[65536];
			size_t n;

			while ((n = fread(buf, 1, sizeof(buf), f)) > 0 && len < ((size_t)16 << 20)) {
				char *t = util_grow(s->text, &cap, len + n + 1, 1);

				if (!t)
					break;
				s->text = t;
				memcpy(s->text + len, buf, n);
				len += n;
			}
			fclose(f);
			if (s->text) {
				size_t lc = 0;

				s->text[len] = '\0';
				for (char *p = s->text; p; p = strchr(p, '\n')) {
					char **nl = util_grow(s->line, &lc, s->nlines + 1, sizeof(*nl));

					if (!nl)
						break;
					s->line = nl;
					if (*p == '\n')
						*p++ = '\0';
					s->line[s->nlines++] = p;
				}
			}
		}
	}
	return !s->missing && line <= s->nlines ? s->line[line - 1] : NULL;
}

/* The innermost source line at @addr of @img: *@file, return the line (0: none). */
static uint32_t line_at(struct tools_report *r, struct report_image *img, uint64_t addr,
			const char **file)
{
	struct report_dwarf_frame fr[16];
	size_t n = img ? report_model__lines(r->m, img, addr, fr, 16) : 0;

	*file = n ? fr[0].file : NULL;
	return n ? fr[0].line : 0;
}

static const char *base_of(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p ? p : "?";
}

/* The sampled addresses of a function with no code to show (kernel, unreadable file). */
static void list_pcs(FILE *out, const struct ann_fn *fn, uint64_t all)
{
	for (size_t k = 0; k < fn->npc; k++)
		fprintf(out, "%7.2f %10" PRIu64 "  %16" PRIx64 "\n",
			fn->w ? 100.0 * (double)fn->pc[k].w / (double)fn->w : 0.0,
			wsamp(fn->pc[k].w), fn->pc[k].addr);
	(void)all;
}

/* One copy annotated as text, or into @arr as JSON when @arr is not NULL. */
static int annotate_one(struct tools_report *r, const char *want, const struct ann_fn *fn,
			uint64_t all, FILE *out, json_t *arr)
{
	const struct report_sym *sym = NULL;
	const char *img = tools_report_func_image(r, fn->func);
	uint8_t *code = NULL;
	cs_insn *insn = NULL;
	size_t ninsn = 0, size = 0;
	uint64_t start = 0;
	csh h = 0;
	int err = 0;
	json_t *jo = NULL, *ji = NULL, *jl = NULL;
	struct src src = { 0 };
	/* per source line of the function: samples (the hottest is marked) */
	struct lsum {
		const char *file;
		uint32_t line;
		uint64_t w;
	} *ls = NULL;
	size_t nls = 0, lscap = 0, hot = 0;
	/* per instruction: its innermost source line and its samples */
	struct iat {
		const char *file;
		uint32_t line;
		uint64_t w;
	} *at = NULL;

	if (fn->img && fn->img->syms && fn->npc)
		sym = report_symtab__lookup(fn->img->syms, fn->pc[0].addr);
	if (sym) {
		start = sym->start;
		size = sym->size ? sym->size : fn->pc[fn->npc - 1].addr - start + 16;
		if (size > TOOLS_ANN_MAX)
			size = TOOLS_ANN_MAX;
	}
	if (arr) {
		jo = json_pack("{s:s, s:s, s:I, s:f}", "function", want, "image", img, "samples",
			       (json_int_t)wsamp(fn->w), "percent",
			       all ? 100.0 * (double)fn->w / (double)all : 0.0);
		ji = json_array();
		jl = json_array();
		if (!jo || !ji || !jl) {
			err = -ENOMEM;
			goto out;
		}
	} else {
		fprintf(out, "\n# %s (%s): %" PRIu64 " samples, %.2f%% of the event's\n", want, img,
			wsamp(fn->w), all ? 100.0 * (double)fn->w / (double)all : 0.0);
	}
	if (!sym) {
		const char *why = !fn->img ? "a kernel function: no code here (no vmlinux)"
					   : "no symbol with an address for it in its image";

		if (arr) {
			json_object_set_new(jo, "note", json_string(why));
			for (size_t k = 0; k < fn->npc; k++)
				json_array_append_new(ji, json_pack("{s:I, s:I}", "address",
								    (json_int_t)fn->pc[k].addr,
								    "samples",
								    (json_int_t)wsamp(fn->pc[k].w)));
		} else {
			fprintf(out, "# %s; its sampled addresses:\n#  share    samples  address\n", why);
			list_pcs(out, fn, all);
		}
		goto done;
	}
	if ((err = read_code(r, fn->img, start, size, &code)) < 0 || !cs_load() ||
	    cs.open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK ||
	    !(ninsn = cs.disasm(h, code, size, start, 0, &insn))) {
		char why[160];

		snprintf(why, sizeof(why), "%s",
			 err < 0 ? strerror(-err)
			 : !cs.ok ? "capstone (libcapstone.so.4) is not installed: apt-get install "
				    "libcapstone4"
				  : "the disassembler read no instruction there");
		err = 0;
		if (arr) {
			json_object_set_new(jo, "note", json_string(why));
		} else {
			fprintf(out, "# no code: %s; its sampled addresses:\n", why);
			list_pcs(out, fn, all);
		}
		goto done;
	}
	/* each instruction's line and samples, once; then the samples per source line */
	if (!(at = calloc(ninsn, sizeof(*at)))) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0, k = 0; i < ninsn; i++) {
		const char *file;
		uint32_t line = line_at(r, fn->img, insn[i].address, &file);
		uint64_t w = 0;
		size_t j;

		while (k < fn->npc && fn->pc[k].addr < insn[i].address)
			k++;
		for (; k < fn->npc && fn->pc[k].addr < insn[i].address + insn[i].size; k++)
			w += fn->pc[k].w;
		at[i] = (struct iat){ file, line, w };
		for (j = 0; j < nls && !(ls[j].line == line && ls[j].file == file); j++)
			;
		if (j == nls) {
			struct lsum *nl = util_grow(ls, &lscap, nls + 1, sizeof(*nl));

			if (!nl) {
				err = -ENOMEM;
				goto out;
			}
			ls = nl;
			ls[nls++] = (struct lsum){ file, line, 0 };
		}
		ls[j].w += w;
	}
	for (size_t j = 1; j < nls; j++)
		if (ls[j].w > ls[hot].w)
			hot = j;
	if (!arr)
		fprintf(out,
			"# 0x%" PRIx64 "..0x%" PRIx64 ", %zu instructions; the hottest line: %s:%" PRIu32
			" (%.2f%% of the function's samples), marked '>>'\n"
			"#  share    samples  address           instruction\n",
			start, start + size, ninsn, base_of(ls[hot].file), ls[hot].line,
			fn->w ? 100.0 * (double)ls[hot].w / (double)fn->w : 0.0);
	{
		const char *lfile = NULL;
		uint32_t lline = 0;

		for (size_t i = 0; i < ninsn; i++) {
			const char *file = at[i].file;
			uint32_t line = at[i].line;
			uint64_t w = at[i].w;
			bool mark = nls && ls[hot].w && file == ls[hot].file && line == ls[hot].line;

			if (arr) {
				json_array_append_new(
					ji, json_pack("{s:I, s:i, s:s++, s:I, s:f, s:s?, s:I}", "address",
						      (json_int_t)insn[i].address, "size", insn[i].size,
						      "text", insn[i].mnemonic,
						      insn[i].op_str[0] ? " " : "", insn[i].op_str,
						      "samples", (json_int_t)wsamp(w), "percent",
						      fn->w ? 100.0 * (double)w / (double)fn->w : 0.0,
						      "file", file, "line", (json_int_t)line));
				continue;
			}
			if (line && (line != lline || file != lfile)) {
				const char *text = src_line(&src, file, line);

				fprintf(out, "%s%28s%s:%" PRIu32 "  %s\n", mark ? ">>" : "  ", "",
					base_of(file), line, text ? text : "");
				lfile = file;
				lline = line;
			}
			fprintf(out, "%s%5.2f %10" PRIu64 "  %16" PRIx64 ":  %s%s%s\n", mark ? ">>" : "  ",
				fn->w ? 100.0 * (double)w / (double)fn->w : 0.0, wsamp(w),
				insn[i].address, insn[i].mnemonic, insn[i].op_str[0] ? " " : "",
				insn[i].op_str);
		}
	}
	for (size_t j = 0; arr && j < nls; j++)
		json_array_append_new(jl, json_pack("{s:s?, s:I, s:I, s:f, s:b}", "file", ls[j].file,
						    "line", (json_int_t)ls[j].line, "samples",
						    (json_int_t)wsamp(ls[j].w), "percent",
						    fn->w ? 100.0 * (double)ls[j].w / (double)fn->w
							  : 0.0,
						    "hottest", j == hot && ls[j].w));
	if (arr) {
		json_object_set_new(jo, "start", json_integer((json_int_t)start));
		json_object_set_new(jo, "size", json_integer((json_int_t)size));
	}
done:
	if (arr) {
		json_object_set_new(jo, "instructions", ji);
		json_object_set_new(jo, "lines", jl);
		json_array_append_new(arr, jo);
		jo = ji = jl = NULL;
	}
out:
	json_decref(jo);
	json_decref(ji);
	json_decref(jl);
	if (insn)
		cs.free(insn, ninsn);
	if (h)
		cs.close(&h);
	free(code);
	free(at);
	free(ls);
	free(src.path);
	free(src.text);
	free(src.line);
	return err;
}

int tools_annotate(struct tools_report *r, const char *want, FILE *out, bool json)
{
	struct tools_rep_event *e = tools_report_single_event(r, "annotate");
	struct ann_fn *v = NULL;
	size_t n = 0;
	uint64_t all = 0;
	json_t *arr = NULL;
	int err;

	if (!e)
		return -EINVAL;
	if ((err = collect(r, (uint32_t)(e - r->ev), want, &v, &n, &all)) < 0)
		return err;
	if (n == 0) {
		log_error("annotate: no sample of %s has '%s' as its leaf function (the raw or "
			  "printed name; 'hwpmc report --top' lists them)",
			  e->name, want);
		free(v);
		return -ENOENT;
	}
	if (json && !(arr = json_array())) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n && err == 0; i++)
		err = annotate_one(r, want, &v[i], all, out, arr);
	if (arr && err == 0) {
		json_t *root = json_pack("{s:s, s:I, s:o}", "event", e->name, "samples",
					 (json_int_t)e->samples, "functions", arr);

		arr = NULL;
		if (!root || json_dumpf(root, out, JSON_INDENT(1) | JSON_SORT_KEYS) < 0 ||
		    fputc('\n', out) == EOF)
			err = -EIO;
		json_decref(root);
	}
out:
	json_decref(arr);
	for (size_t i = 0; i < n; i++)
		free(v[i].pc);
	free(v);
	return err;
}
