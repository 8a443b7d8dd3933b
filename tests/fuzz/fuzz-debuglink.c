/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz-debuglink.c: libFuzzer harness for the search of an image's separate debug
 * file (report-sym.c: find_debug(), try_debug_file(), the build id and CRC
 * decisions, the CRC cap, the report_debug_memo), where hwpmc report meets files
 * that the users whose programs were profiled wrote.
 *
 * IMPLEMENTATION NOTES
 *   The input is a header, an image and a debug file:
 *     byte 0      where the debug file goes (bits 0-1): 0 the global debug
 *                 directory's .build-id/xx/rest.debug for the image's build id (as
 *                 maplog_elf_info_mem() reads it; without one, the image's
 *                 directory instead), 1 the image's directory, 2 its .debug/, 3 the
 *                 debug directory under the image's directory; bit 2: also a second
 *                 image, a copy in the same directory; bit 3: the debug file is
 *                 made longer, sparse, to one byte over the CRC cap (only with a
 *                 cap of at most 1 MiB); bits 4-7: the CRC cap, 0 the default
 *                 (REPORT_DEBUG_CRC_MAX) else 2^(6 + n) bytes
 *     bytes 1-4   the image's length L (little-endian, cut to what follows)
 *     then        L bytes of image, the rest the debug file
 *   The image is written as DIR/img/prog, the debug file as prog.debug in the
 *   chosen place (the seeds' debuglinks name prog.debug), in a private temporary
 *   directory made at the first input and removed at exit; every file is removed
 *   again after each input.  The image is opened three times, and its copy
 *   (bit 2) once more: without a memo, then twice with one memo (debuginfod off:
 *   no network).  Besides "no crash, no sanitizer report, no leak": each open
 *   must give the same result (return value, source, number of functions, debug
 *   path: a memo saves work, never changes a result), and every table its
 *   invariants (strictly increasing starts, each function found at its start,
 *   or inside a sized one that covers it).  Whatever fails aborts.  With
 *   FUZZ_DEBUGLINK_VERBOSE set, each input's result and the memo's counters go to
 *   stderr (to check what the seeds reach: fuzz-debuglink SEED...).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwpmcd/log.h"
#include "hwpmcd/maplog-elf.h"
#include "hwpmcd/report-sym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HDR_LEN	      5
#define SPARSE_MAX    ((uint64_t)1 << 20) /* the largest cap a sparse tail is made for */
#define PLACE_BUILDID 0

static char top[PATH_MAX];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	(void)remove(p);
	return 0;
}

static void cleanup(void)
{
	if (top[0])
		(void)nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");
	char tmpl[PATH_MAX];

	log_open("fuzz-debuglink", LOG_TARGET_PLAIN);
	log_set_level(LOG_PRIO_ERR - 1); /* quiet: a cap or a corrupt file is a notice */
	snprintf(tmpl, sizeof(tmpl), "%s/fuzz-debuglink.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpl) || !realpath(tmpl, top))
		abort();
	atexit(cleanup);
}

/* mkdir -p of the directories of @path (below top, which exists). */
static void mkdirs(const char *path)
{
	char buf[PATH_MAX];

	if (strlen(path) >= sizeof(buf))
		abort();
	strcpy(buf, path);
	for (char *p = buf + strlen(top) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			abort();
		*p = '/';
	}
}

static void put(const char *path, const uint8_t *p, size_t n, uint64_t extend_to)
{
	int fd;

	mkdirs(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || (n > 0 && write(fd, p, n) != (ssize_t)n))
		abort();
	if (extend_to > n && ftruncate(fd, (off_t)extend_to) < 0)
		abort();
	close(fd);
}

/* The invariants of every table (tests/unit/test-report-sym.c, check_table()). */
static void check_table(const struct report_symtab *t)
{
	size_t n = report_symtab__nsyms(t);

	for (size_t i = 0; i < n; i++) {
		const struct report_sym *s = report_symtab__sym(t, i), *f;

		if (!s || !s->name || !s->name[0] || s->module)
			abort();
		if (i > 0 && s->start <= report_symtab__sym(t, i - 1)->start)
			abort();
		if (s->start == UINT64_MAX)
			continue;
		f = report_symtab__lookup(t, s->start);
		if (f != s && !(s->size == 0 && f && f->size > 0 && f->start < s->start &&
				s->start - f->start < f->size))
			abort();
	}
	if (report_symtab__sym(t, n) || !report_symtab__info(t))
		abort();
}

struct result {
	int r;
	enum report_sym_source source;
	size_t n;
	char debug_path[PATH_MAX];
};

static void open_one(const char *img, const struct report_sym_opts *opts, struct result *res)
{
	struct report_symtab *t = NULL;
	const char *dp;

	memset(res, 0, sizeof(*res));
	res->r = report_symtab__open(img, opts, &t);
	if (res->r < 0) {
		if (t)
			abort(); /* written only on success */
		return;
	}
	check_table(t);
	res->source = report_symtab__source(t);
	res->n = report_symtab__nsyms(t);
	dp = report_symtab__debug_path(t);
	if (dp)
		snprintf(res->debug_path, sizeof(res->debug_path), "%s", dp);
	report_symtab__free(t);
}

static void same(const struct result *a, const struct result *b)
{
	if (a->r != b->r || a->source != b->source || a->n != b->n ||
	    strcmp(a->debug_path, b->debug_path) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char img[PATH_MAX], img2[PATH_MAX], dbg[PATH_MAX], dd[PATH_MAX];
	struct report_debug_memo *memo = NULL;
	struct report_sym_opts opts;
	struct maplog_elf_info info;
	struct result base, m1, m2, c1;
	uint64_t crc_max = 0, extend_to = 0;
	const uint8_t *ip, *dp;
	size_t il, dl;
	unsigned place;
	bool copy;

	if (!top[0])
		setup();
	if (size < HDR_LEN)
		return 0;
	place = data[0] & 3;
	copy = data[0] & 4;
	if (data[0] >> 4)
		crc_max = (uint64_t)1 << (6 + (data[0] >> 4));
	il = (size_t)data[1] | (size_t)data[2] << 8 | (size_t)data[3] << 16 | (size_t)data[4] << 24;
	ip = data + HDR_LEN;
	if (il > size - HDR_LEN)
		il = size - HDR_LEN;
	dp = ip + il;
	dl = size - HDR_LEN - il;
	if ((data[0] & 8) && crc_max && crc_max <= SPARSE_MAX)
		extend_to = crc_max + 1;

	snprintf(img, sizeof(img), "%s/root/img/prog", top);
	snprintf(img2, sizeof(img2), "%s/root/img/prog2", top);
	snprintf(dd, sizeof(dd), "%s/debug", top);
	if (place == PLACE_BUILDID && maplog_elf_info_mem(ip, il, &info) == 0 &&
	    info.build_id_len >= 2) {
		char hex[2 * MAPLOG_BUILD_ID_MAX + 1];

		for (size_t i = 0; i < info.build_id_len; i++)
			snprintf(hex + 2 * i, 3, "%02x", info.build_id[i]);
		snprintf(dbg, sizeof(dbg), "%s/.build-id/%.2s/%s.debug", dd, hex, hex + 2);
	} else if (place <= 1) {
		snprintf(dbg, sizeof(dbg), "%s/root/img/prog.debug", top);
	} else if (place == 2) {
		snprintf(dbg, sizeof(dbg), "%s/root/img/.debug/prog.debug", top);
	} else {
		snprintf(dbg, sizeof(dbg), "%s%s/root/img/prog.debug", dd, top);
	}
	put(img, ip, il, 0);
	put(dbg, dp, dl, extend_to);
	if (copy)
		put(img2, ip, il, 0);

	opts = (struct report_sym_opts){ .debugdir = dd, .crc_max = crc_max };
	open_one(img, &opts, &base);
	if (report_debug_memo__new(&memo) < 0)
		abort();
	opts.memo = memo;
	open_one(img, &opts, &m1);
	open_one(img, &opts, &m2);
	same(&base, &m1);
	same(&base, &m2);
	if (copy) {
		/* The copy's own path differs, its debug file is the same one. */
		open_one(img2, &opts, &c1);
		if (c1.r != base.r || c1.source != base.source || c1.n != base.n)
			abort();
	}
	if (getenv("FUZZ_DEBUGLINK_VERBOSE")) {
		struct report_debug_stats st;

		report_debug_memo__stats(memo, &st);
		fprintf(stderr,
			"r %d source %s functions %zu debug '%s'; memo: opened %llu skipped %llu "
			"by build id %llu crc %llu (%llu bytes) over cap %llu\n",
			base.r, report_sym_source_name(base.source), base.n, base.debug_path,
			(unsigned long long)st.opened, (unsigned long long)st.skipped,
			(unsigned long long)st.by_build_id, (unsigned long long)st.crc_files,
			(unsigned long long)st.crc_bytes, (unsigned long long)st.over_cap);
	}
	report_debug_memo__free(memo);

	(void)unlink(img);
	(void)unlink(img2);
	(void)unlink(dbg);
	return 0;
}
