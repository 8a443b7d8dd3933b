/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-report-sym.c: Check suite for src/report/report-sym.c (function symbols of ELF
 * images and kallsyms files).
 *
 * The ELF cases use this executable itself: it defines non-inlined functions and
 * aliases, which must be found at their link-time addresses (run-time address minus
 * the load bias that dl_iterate_phdr() reports).  main() makes, in a temporary
 * directory, copies with objcopy: without DWARF (small, fast to mutate), a debug file
 * (--only-keep-debug), a stripped image (--strip-all) and stripped images with a
 * .gnu_debuglink; the tests lay them out under fake debug directories and symfs roots.
 * If objcopy is not installed those cases are skipped with a message on stderr; if it
 * is installed and fails, that is a test failure.  Hand-made ELF files give exact
 * control over overlapping functions, aliases and corrupt tables.  Hostile inputs are
 * mutated with a seeded PRNG, so every failure is reproducible.  The debug-file cases
 * judge the bounds on hostile debug files (build ids before CRCs, the CRC cap, a
 * sparse file of a terabyte) by what was read and decided (/proc/self/io, the memo's
 * counters), never by time; the debuginfod ones use a file:// server and a port that
 * refuses connections, nothing outside the machine.
 */
#include <arpa/inet.h>
#include <check.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwpmcd/common.h"
#include "hwpmcd/maplog-elf.h"
#include "hwpmcd/report-dwarf.h"
#include "hwpmcd/report-sym.h"
#include "report-int.h"

/*
 * For loops over thousands of entries: Check records every passing ck_assert() with a
 * write(2) to its parent, which made a 100k-entry table take seconds to check.
 */
#define REQUIRE(cond, ...)                                                                         \
	do {                                                                                       \
		if (!(cond))                                                                       \
			ck_abort_msg(__VA_ARGS__);                                                 \
	} while (0)

/* ---- functions of this executable that the ELF cases look up ----------------------- */

static volatile int sym_sink;

int sym_test_alpha(int x);
int sym_test_beta(int x);
int sym_test_gamma(int x);
int sym_dd_global_long_name(int x);
int sym_dd_w(int x);
int sym_dd2_zzzz(int x);
int sym_dd2_ab(int x);
int sym_dd2_aa(int x);
int sym_dd3_weak_long(int x);

__attribute__((noinline)) int sym_test_alpha(int x)
{
	sym_sink += x;
	return x * 3 + 1;
}

__attribute__((noinline)) int sym_test_beta(int x)
{
	sym_sink ^= x;
	return x - 11;
}

/* Larger, so that "inside" is well inside. */
__attribute__((noinline)) int sym_test_gamma(int x)
{
	int acc = 0;

	for (int i = 0; i < x; i++) {
		acc += (i * x) ^ sym_sink;
		sym_sink = acc;
		if (acc & 0x100)
			acc = acc * 7 - i;
	}
	return acc;
}

/* Group 1: a global wins over a shorter weak and a shorter local alias. */
__attribute__((noinline)) int sym_dd_global_long_name(int x)
{
	sym_sink = x + 7;
	return x + 7;
}
int sym_dd_w(int x) __attribute__((weak, alias("sym_dd_global_long_name")));
static int sym_dd_l(int x) __attribute__((alias("sym_dd_global_long_name"), used));

/* Group 2: three globals; the shorter wins, then the first in byte order. */
__attribute__((noinline)) int sym_dd2_zzzz(int x)
{
	sym_sink = x * 5;
	return x ^ 0x5a;
}
int sym_dd2_ab(int x) __attribute__((alias("sym_dd2_zzzz")));
int sym_dd2_aa(int x) __attribute__((alias("sym_dd2_zzzz")));

/* Group 3: a weak alias wins over the shorter local function it aliases. */
__attribute__((noinline, used)) static int sym_dd3_l(int x)
{
	sym_sink = x - 3;
	return x * 9;
}
int sym_dd3_weak_long(int x) __attribute__((weak, alias("sym_dd3_l")));

/* ---- helpers --------------------------------------------------------------------------- */

/* Short enough that every path made from it fits in PATH_MAX. */
static char tmpdir[256];
static char exe_path[PATH_MAX];

enum prep_state { PREP_NONE = 0, PREP_OK, PREP_SKIPPED, PREP_FAILED, PREP_STATE_MAX };

static enum prep_state prep;
static char prep_why[2 * PATH_MAX];
/* The build id of the test files, in hex. */
static char bid_hex[2 * MAPLOG_BUILD_ID_MAX + 1];

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rng(void)
{
	/* xorshift64: deterministic, so a failure is reproducible. */
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

__attribute__((format(printf, 2, 3))) static void tpath(char buf[PATH_MAX], const char *fmt, ...)
{
	char rel[PATH_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	ck_assert(n > 0 && (size_t)n < sizeof(rel));
	n = snprintf(buf, PATH_MAX, "%s/%s", tmpdir, rel);
	ck_assert(n > 0 && n < PATH_MAX);
}

static bool slurp(const char *path, uint8_t **ret_buf, size_t *ret_len)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || !(buf = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return false;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (got != (size_t)st.st_size) {
		free(buf);
		return false;
	}
	*ret_buf = buf;
	*ret_len = got;
	return true;
}

static bool write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	bool ok;

	if (fd < 0)
		return false;
	ok = util_write_all(fd, buf, len, NULL) == 0;
	return close(fd) == 0 && ok;
}

static void put_file(const char *path, const void *buf, size_t len)
{
	ck_assert_msg(write_file(path, buf, len), "cannot write '%s'", path);
}

static bool copy_file(const char *from, const char *to)
{
	uint8_t *buf;
	size_t len;
	bool ok;

	if (!slurp(from, &buf, &len))
		return false;
	ok = write_file(to, buf, len);
	free(buf);
	return ok;
}

/* mkdir -p of the directory part of @path (everything before the last '/'). */
static bool mkdir_parents(const char *path)
{
	char buf[PATH_MAX];
	char *slash;

	if (strlen(path) >= sizeof(buf))
		return false;
	strcpy(buf, path);
	slash = strrchr(buf, '/');
	if (!slash)
		return true;
	*slash = '\0';
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return false;
		*p = '/';
	}
	return mkdir(buf, 0755) == 0 || errno == EEXIST;
}

/* Copy @from to @to, creating @to's directories. */
static void place(const char *from, const char *to)
{
	ck_assert_msg(mkdir_parents(to), "cannot create the directories of '%s'", to);
	ck_assert_msg(copy_file(from, to), "cannot copy '%s' to '%s'", from, to);
}

static bool have_tool(const char *name)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		if (n > 0 &&
		    snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, name) < (int)sizeof(buf) &&
		    access(buf, X_OK) == 0)
			return true;
		path += n;
		if (*path == ':')
			path++;
	}
	return false;
}

/* Run "objcopy @opt @in @out" (@opt may be NULL), stderr to a log; true if it exits 0. */
static bool objcopy(const char *opt, const char *in, const char *out)
{
	char a0[] = "objcopy";
	char a1[PATH_MAX + 64], a2[PATH_MAX], a3[PATH_MAX];
	char *argv[5] = { a0, a1, a2, a3, NULL };
	char log[PATH_MAX + 16];
	pid_t pid;
	int status;

	if (snprintf(a1, sizeof(a1), "%s", opt) >= (int)sizeof(a1) ||
	    snprintf(a2, sizeof(a2), "%s", in) >= (int)sizeof(a2) ||
	    snprintf(a3, sizeof(a3), "%s", out) >= (int)sizeof(a3))
		return false;
	(void)snprintf(log, sizeof(log), "%s/objcopy.log", tmpdir);
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * The test files, in tmpdir: small (no DWARF, with .symtab), prog.debug (its debug
 * file), stripped (no .symtab), linked (stripped + debuglink to prog.debug),
 * fl/prog.debug / fl/linked-flip (a debug file whose build id differs, and an image
 * linked to it by name and CRC), nb/prog.debug / nb/linked (a debug file without a
 * build id, its GNU note's type changed, and an image linked to it: only the CRC
 * can match those) and stripped-flip (stripped with another build id).
 */
static void prepare(void)
{
	char small[PATH_MAX], dbg[PATH_MAX], stripped[PATH_MAX], linked[PATH_MAX];
	char opt[PATH_MAX + 64], flip[PATH_MAX], lflip[PATH_MAX], dir[PATH_MAX];
	char nbdir[PATH_MAX], nbdbg[PATH_MAX], nblinked[PATH_MAX], sflip[PATH_MAX];
	struct maplog_elf_info info;
	uint8_t *buf, *at;
	size_t len;
	int fd;

	if (!have_tool("objcopy")) {
		prep = PREP_SKIPPED;
		(void)snprintf(prep_why, sizeof(prep_why), "objcopy is not installed");
		return;
	}
	prep = PREP_FAILED;
#define STEP(ok, ...)                                                                              \
	do {                                                                                       \
		if (!(ok)) {                                                                       \
			(void)snprintf(prep_why, sizeof(prep_why), __VA_ARGS__);                   \
			return;                                                                    \
		}                                                                                  \
	} while (0)
	(void)snprintf(small, sizeof(small), "%s/small", tmpdir);
	(void)snprintf(dbg, sizeof(dbg), "%s/prog.debug", tmpdir);
	(void)snprintf(stripped, sizeof(stripped), "%s/stripped", tmpdir);
	(void)snprintf(linked, sizeof(linked), "%s/linked", tmpdir);
	(void)snprintf(dir, sizeof(dir), "%s/fl", tmpdir);
	(void)snprintf(flip, sizeof(flip), "%s/fl/prog.debug", tmpdir);
	(void)snprintf(lflip, sizeof(lflip), "%s/fl/linked-flip", tmpdir);
	(void)snprintf(nbdir, sizeof(nbdir), "%s/nb", tmpdir);
	(void)snprintf(nbdbg, sizeof(nbdbg), "%s/nb/prog.debug", tmpdir);
	(void)snprintf(nblinked, sizeof(nblinked), "%s/nb/linked", tmpdir);
	(void)snprintf(sflip, sizeof(sflip), "%s/stripped-flip", tmpdir);
	STEP(objcopy("--strip-debug", exe_path, small), "objcopy --strip-debug failed");
	STEP(objcopy("--only-keep-debug", small, dbg), "objcopy --only-keep-debug failed");
	STEP(objcopy("--strip-all", small, stripped), "objcopy --strip-all failed");
	(void)snprintf(opt, sizeof(opt), "--add-gnu-debuglink=%s", dbg);
	STEP(objcopy(opt, stripped, linked), "objcopy --add-gnu-debuglink failed");

	fd = open(stripped, O_RDONLY | O_CLOEXEC);
	STEP(fd >= 0 && maplog_elf_info_fd(fd, &info) == 0, "cannot read '%s'", stripped);
	close(fd);
	STEP(info.build_id_len >= 2, "the test executable has no build id (link with --build-id)");
	for (size_t i = 0; i < info.build_id_len; i++)
		(void)snprintf(bid_hex + 2 * i, 3, "%02x", info.build_id[i]);

	/* The debug file with its build id changed in its last byte. */
	STEP(slurp(dbg, &buf, &len), "cannot read '%s'", dbg);
	at = memmem(buf, len, info.build_id, info.build_id_len);
	STEP(at != NULL, "no build id bytes in '%s'", dbg);
	at[info.build_id_len - 1] ^= 0xff;
	STEP(mkdir(dir, 0755) == 0 && write_file(flip, buf, len), "cannot write '%s'", flip);
	free(buf);
	(void)snprintf(opt, sizeof(opt), "--add-gnu-debuglink=%s", flip);
	STEP(objcopy(opt, stripped, lflip), "objcopy --add-gnu-debuglink (flip) failed");

	/* The debug file without a build id: its note (namesz, descsz, type, "GNU") retyped. */
	STEP(slurp(dbg, &buf, &len), "cannot read '%s'", dbg);
	at = memmem(buf, len, info.build_id, info.build_id_len);
	STEP(at != NULL && at - buf >= 16 && memcmp(at - 4, "GNU", 4) == 0 &&
		     util_le32(at - 8) == NT_GNU_BUILD_ID,
	     "no GNU build id note in '%s'", dbg);
	util_put_le32(at - 8, 0x7fff);
	STEP(mkdir(nbdir, 0755) == 0 && write_file(nbdbg, buf, len), "cannot write '%s'", nbdbg);
	free(buf);
	(void)snprintf(opt, sizeof(opt), "--add-gnu-debuglink=%s", nbdbg);
	STEP(objcopy(opt, stripped, nblinked), "objcopy --add-gnu-debuglink (no build id) failed");
	fd = open(nbdbg, O_RDONLY | O_CLOEXEC);
	STEP(fd >= 0 && maplog_elf_info_fd(fd, &info) == 0 && info.build_id_len == 0,
	     "'%s' still has a build id", nbdbg);
	close(fd);

	/* The stripped image with another build id (its last byte changed). */
	fd = open(stripped, O_RDONLY | O_CLOEXEC);
	STEP(fd >= 0 && maplog_elf_info_fd(fd, &info) == 0, "cannot read '%s'", stripped);
	close(fd);
	STEP(slurp(stripped, &buf, &len), "cannot read '%s'", stripped);
	at = memmem(buf, len, info.build_id, info.build_id_len);
	STEP(at != NULL, "no build id bytes in '%s'", stripped);
	at[info.build_id_len - 1] ^= 0xff;
	STEP(write_file(sflip, buf, len), "cannot write '%s'", sflip);
	free(buf);
#undef STEP
	prep = PREP_OK;
}

/* Whether the objcopy-made files exist; a failure to make them fails the test. */
static bool need_files(void)
{
	if (prep == PREP_SKIPPED) {
		fprintf(stderr, "test-report-sym: skipping a case: %s\n", prep_why);
		return false;
	}
	ck_assert_msg(prep == PREP_OK, "cannot make the test files: %s", prep_why);
	return true;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	(void)remove(p);
	return 0;
}

static void rm_tree(const char *dir)
{
	(void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	/* The first object is the executable; dlpi_addr is its load bias. */
	*(uint64_t *)arg = info->dlpi_addr;
	return 1;
}

static uint64_t load_bias(void)
{
	uint64_t bias = 0;

	ck_assert_int_eq(dl_iterate_phdr(first_object, &bias), 1);
	return bias;
}

static uint64_t link_addr(int (*fn)(int))
{
	return (uint64_t)(uintptr_t)fn - load_bias();
}

static struct report_symtab *open_ok(const char *path, const struct report_sym_opts *opts)
{
	struct report_symtab *t = NULL;
	int r = report_symtab__open(path, opts, &t);

	ck_assert_msg(r == 0, "cannot open '%s': %d", path, r);
	ck_assert_ptr_nonnull(t);
	return t;
}

/*
 * The invariants of every table: strictly increasing starts, non-empty names, and
 * each function found at its own start (the greatest start <= it, which holds it),
 * unless it has size 0 and a sized function covers its start: that one wins.
 */
static void check_table(const struct report_symtab *t, bool kallsyms)
{
	size_t n = report_symtab__nsyms(t);

	for (size_t i = 0; i < n; i++) {
		const struct report_sym *s = report_symtab__sym(t, i);

		REQUIRE(s != NULL, "entry %zu missing", i);
		REQUIRE(s->name != NULL && s->name[0] != '\0', "entry %zu: no name", i);
		if (!kallsyms)
			REQUIRE(s->module == NULL, "entry %zu: a module in an ELF table", i);
		else
			REQUIRE(s->size == 0, "entry %zu: kallsyms size %llu", i,
				(unsigned long long)s->size);
		if (i > 0)
			REQUIRE(s->start > report_symtab__sym(t, i - 1)->start,
				"entry %zu: start %#llx not above the previous one", i,
				(unsigned long long)s->start);
		if (s->start != UINT64_MAX) {
			const struct report_sym *f = report_symtab__lookup(t, s->start);

			REQUIRE(f == s || (s->size == 0 && f != NULL && f->size > 0 &&
					   f->start < s->start && s->start - f->start < f->size),
				"entry %zu '%s' not found at its start (found '%s')", i, s->name,
				f ? f->name : "(none)");
		}
	}
	ck_assert_ptr_null(report_symtab__sym(t, n));
	ck_assert_ptr_nonnull(report_symtab__info(t));
}

/* The two tables hold the same functions. */
static void check_same(const struct report_symtab *a, const struct report_symtab *b)
{
	ck_assert_uint_eq(report_symtab__nsyms(a), report_symtab__nsyms(b));
	for (size_t i = 0; i < report_symtab__nsyms(a); i++) {
		const struct report_sym *x = report_symtab__sym(a, i);
		const struct report_sym *y = report_symtab__sym(b, i);

		REQUIRE(x->start == y->start && x->size == y->size && strcmp(x->name, y->name) == 0,
			"entry %zu differs: '%s' %#llx+%llu, '%s' %#llx+%llu", i, x->name,
			(unsigned long long)x->start, (unsigned long long)x->size, y->name,
			(unsigned long long)y->start, (unsigned long long)y->size);
	}
}

/* Look up @fn by its run-time address and check name, start and the function's ends. */
static void check_fn(const struct report_symtab *t, int (*fn)(int), const char *name)
{
	uint64_t a = link_addr(fn);
	const struct report_sym *s = report_symtab__lookup(t, a);

	ck_assert_msg(s != NULL, "'%s' not found at %#llx", name, (unsigned long long)a);
	ck_assert_str_eq(s->name, name);
	ck_assert_uint_eq(s->start, a);
	ck_assert_ptr_null(s->module);
	ck_assert_uint_gt(s->size, 0);
	ck_assert_ptr_eq(report_symtab__lookup(t, a + s->size / 2), s);
	ck_assert_ptr_eq(report_symtab__lookup(t, a + s->size - 1), s);
	ck_assert_ptr_ne(report_symtab__lookup(t, a + s->size), s);
	ck_assert_ptr_ne(report_symtab__lookup(t, a - 1), s);
}

static void check_self_names(const struct report_symtab *t)
{
	check_fn(t, sym_test_alpha, "sym_test_alpha");
	check_fn(t, sym_test_beta, "sym_test_beta");
	check_fn(t, sym_test_gamma, "sym_test_gamma");
	check_fn(t, sym_dd_global_long_name, "sym_dd_global_long_name");
	check_fn(t, sym_dd2_zzzz, "sym_dd2_aa");
	check_fn(t, sym_dd3_weak_long, "sym_dd3_weak_long");
}

/* ---- the executable itself ----------------------------------------------------------- */

START_TEST(test_self_symtab)
{
	struct report_symtab *t = open_ok(exe_path, NULL);
	const struct maplog_elf_info *info = report_symtab__info(t);
	const struct report_sym *s;

	ck_assert_int_eq(report_symtab__source(t), REPORT_SYM_SYMTAB);
	ck_assert_ptr_null(report_symtab__debug_path(t));
	ck_assert_uint_gt(info->build_id_len, 0);
	ck_assert(info->has_exec_section);
	ck_assert_uint_gt(report_symtab__nsyms(t), 10);
	check_table(t, false);
	check_self_names(t);
	/* Aliases that lost are gone; __find() sees only the kept names. */
	s = report_symtab__find(t, "sym_test_beta");
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->start, link_addr(sym_test_beta));
	ck_assert_ptr_null(report_symtab__find(t, "sym_dd_w"));
	ck_assert_ptr_null(report_symtab__find(t, "sym_dd_l"));
	ck_assert_ptr_null(report_symtab__find(t, "sym_dd2_ab"));
	ck_assert_ptr_null(report_symtab__find(t, "sym_dd2_zzzz"));
	ck_assert_ptr_null(report_symtab__find(t, "sym_dd3_l"));
	ck_assert_ptr_null(report_symtab__find(t, "no_such_function_here"));
	/* Keep the functions called, so nothing about them is left to the optimizer. */
	ck_assert_int_eq(sym_test_alpha(2) + sym_test_beta(20) + sym_dd_w(0) + sym_dd2_ab(0) +
				 sym_dd3_weak_long(1) - sym_test_gamma(0),
			 7 + 9 + 7 + 0x5a + 9);
	report_symtab__free(t);
}
END_TEST

START_TEST(test_self_proc_and_small)
{
	char small[PATH_MAX];
	struct report_symtab *a, *b;

	/* /proc/self/exe names the same file through a symlink. */
	a = open_ok("/proc/self/exe", NULL);
	b = open_ok(exe_path, NULL);
	check_same(a, b);
	report_symtab__free(a);
	if (need_files()) {
		/* --strip-debug keeps .symtab: the same functions without DWARF. */
		tpath(small, "small");
		a = open_ok(small, NULL);
		ck_assert_int_eq(report_symtab__source(a), REPORT_SYM_SYMTAB);
		check_same(a, b);
		report_symtab__free(a);
	}
	report_symtab__free(b);
}
END_TEST

/* ---- real files: functions of size 0 ------------------------------------------------ */

/*
 * The entry point of the 64-bit ELF file @path and the range [*ret_start, *ret_end) of
 * its section named @sec (if @sec is not NULL).  False if the file cannot be read, is
 * not a 64-bit ELF file of this byte order, or has no such section.
 */
static bool elf64_facts(const char *path, const char *sec, uint64_t *ret_entry, uint64_t *ret_start,
			uint64_t *ret_end)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, strsh;
	uint8_t *buf;
	size_t len;
	bool found = false;

	if (!slurp(path, &buf, &len))
		return false;
	if (len < sizeof(eh))
		goto out;
	memcpy(&eh, buf, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] !=
		    (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB))
		goto out;
	*ret_entry = eh.e_entry;
	if (!sec) {
		found = true;
		goto out;
	}
	if (eh.e_shoff > len || eh.e_shstrndx >= eh.e_shnum ||
	    (size_t)eh.e_shnum * sizeof(sh) > len - eh.e_shoff)
		goto out;
	memcpy(&strsh, buf + eh.e_shoff + (size_t)eh.e_shstrndx * sizeof(sh), sizeof(sh));
	if (strsh.sh_offset > len || strsh.sh_size > len - strsh.sh_offset)
		goto out;
	for (size_t i = 1; i < eh.e_shnum && !found; i++) {
		memcpy(&sh, buf + eh.e_shoff + i * sizeof(sh), sizeof(sh));
		if (sh.sh_name >= strsh.sh_size ||
		    strnlen((const char *)buf + strsh.sh_offset + sh.sh_name,
			    strsh.sh_size - sh.sh_name) != strlen(sec) ||
		    memcmp(buf + strsh.sh_offset + sh.sh_name, sec, strlen(sec)) != 0)
			continue;
		*ret_start = sh.sh_addr;
		*ret_end = sh.sh_addr + sh.sh_size;
		found = true;
	}
out:
	free(buf);
	return found;
}

/*
 * Whether the 64-bit ELF file @path has a defined symbol @name in a .symtab or .dynsym;
 * its value in *ret_value.  Read here without libelf, so that the test does not take
 * the symbol's presence from the code under test.
 */
static bool elf64_find_sym(const char *path, const char *name, uint64_t *ret_value)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, strsh;
	Elf64_Sym sym;
	uint8_t *buf;
	size_t len, nlen = strlen(name);
	bool found = false;

	if (!slurp(path, &buf, &len))
		return false;
	if (len < sizeof(eh))
		goto out;
	memcpy(&eh, buf, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shoff > len || (size_t)eh.e_shnum * sizeof(sh) > len - eh.e_shoff)
		goto out;
	for (size_t i = 1; i < eh.e_shnum && !found; i++) {
		memcpy(&sh, buf + eh.e_shoff + i * sizeof(sh), sizeof(sh));
		if ((sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    sh.sh_link >= eh.e_shnum || sh.sh_offset > len ||
		    sh.sh_size > len - sh.sh_offset)
			continue;
		memcpy(&strsh, buf + eh.e_shoff + (size_t)sh.sh_link * sizeof(sh), sizeof(sh));
		if (strsh.sh_offset > len || strsh.sh_size > len - strsh.sh_offset)
			continue;
		for (size_t k = 1; k < sh.sh_size / sizeof(sym) && !found; k++) {
			memcpy(&sym, buf + sh.sh_offset + k * sizeof(sym), sizeof(sym));
			if (sym.st_shndx == SHN_UNDEF || sym.st_name >= strsh.sh_size ||
			    strsh.sh_size - sym.st_name <= nlen ||
			    memcmp(buf + strsh.sh_offset + sym.st_name, name, nlen + 1) != 0)
				continue;
			*ret_value = sym.st_value;
			found = true;
		}
	}
out:
	free(buf);
	return found;
}

/*
 * The system's ld.so: its _start is an STT_NOTYPE label of size 0 (in .symtab of its
 * debug file, or of ld.so itself if it is not stripped), at e_entry.  The PC a few
 * bytes after it (e_entry + 7 is where every process-start call chain begins: the
 * return address of "call _dl_start", minus 1) must resolve to it.  Skipped only if
 * neither ld.so nor the debug file report-sym chose has a _start symbol.
 */
START_TEST(test_ldso_start)
{
	static const char ldso[] = "/lib64/ld-linux-x86-64.so.2";
	struct report_symtab *t;
	const struct report_sym *s, *u;
	const char *dpath;
	uint64_t entry = 0, start = 0;

	if (access(ldso, R_OK) != 0) {
		fprintf(stderr, "test-report-sym: skipping a case: no readable '%s'\n", ldso);
		return;
	}
	ck_assert_msg(elf64_facts(ldso, NULL, &entry, NULL, NULL), "'%s' is not 64-bit ELF", ldso);
	t = open_ok(ldso, NULL);
	check_table(t, false);
	dpath = report_symtab__debug_path(t);
	if (!elf64_find_sym(ldso, "_start", &start) &&
	    !(dpath && elf64_find_sym(dpath, "_start", &start))) {
		fprintf(stderr,
			"test-report-sym: skipping a case: '%s' has no _start symbol (source %s; "
			"is its debug file installed?)\n",
			ldso, report_sym_source_name(report_symtab__source(t)));
		report_symtab__free(t);
		return;
	}
	ck_assert_uint_eq(start, entry);
	s = report_symtab__lookup(t, entry + 7);
	ck_assert_msg(s != NULL, "%s: nothing at e_entry + 7 (%#llx)", ldso,
		      (unsigned long long)(entry + 7));
	ck_assert_str_eq(s->name, "_start");
	ck_assert_uint_eq(s->start, entry);
	ck_assert_ptr_eq(report_symtab__lookup(t, entry), s);
	ck_assert_ptr_eq(report_symtab__lookup(t, entry + 4), s);
	ck_assert_ptr_eq(report_symtab__find(t, "_start"), s);
	/* glibc's _dl_start_user follows _start directly: _start ends there. */
	u = report_symtab__find(t, "_dl_start_user");
	if (u && u->start > entry) {
		ck_assert_ptr_eq(report_symtab__lookup(t, u->start - 1), s);
		ck_assert_ptr_eq(report_symtab__lookup(t, u->start), u);
		ck_assert_ptr_eq(report_symtab__lookup(t, u->start + 1), u);
	}
	report_symtab__free(t);
}
END_TEST

/*
 * This executable's _init (crti.o's, STT_FUNC of size 0 in .init) holds .init and not
 * past it: the .plt that usually follows is not _init's.
 */
START_TEST(test_self_init)
{
	struct report_symtab *t = open_ok(exe_path, NULL);
	const struct report_sym *s = report_symtab__find(t, "_init");
	uint64_t entry, start = 0, end = 0;

	if (!s || s->size != 0 || !elf64_facts(exe_path, ".init", &entry, &start, &end) ||
	    s->start < start || s->start >= end) {
		fprintf(stderr, "test-report-sym: skipping a case: no _init of size 0 in .init\n");
		report_symtab__free(t);
		return;
	}
	ck_assert_ptr_eq(report_symtab__lookup(t, s->start), s);
	ck_assert_ptr_eq(report_symtab__lookup(t, end - 1), s);
	ck_assert_ptr_ne(report_symtab__lookup(t, end), s);
	report_symtab__free(t);
}
END_TEST

/* ---- separate debug files ------------------------------------------------------------- */

static void bid_path(char buf[PATH_MAX], const char *debugdir_rel)
{
	tpath(buf, "%s/.build-id/%.2s/%s.debug", debugdir_rel, bid_hex, bid_hex + 2);
}

/* Open @img with @opts and check the source, the debug path and the names. */
static void check_debug_opts(const char *img, const struct report_sym_opts *opts,
			     enum report_sym_source want, const char *want_path)
{
	char small[PATH_MAX];
	struct report_symtab *t, *ref;

	t = open_ok(img, opts);
	ck_assert_msg(report_symtab__source(t) == want, "'%s': source %s, not %s", img,
		      report_sym_source_name(report_symtab__source(t)),
		      report_sym_source_name(want));
	if (want_path)
		ck_assert_str_eq(report_symtab__debug_path(t), want_path);
	else
		ck_assert_ptr_null(report_symtab__debug_path(t));
	check_table(t, false);
	if (want == REPORT_SYM_DEBUG_BUILDID || want == REPORT_SYM_DEBUG_LINK) {
		tpath(small, "small");
		ref = open_ok(small, NULL);
		check_same(t, ref);
		check_self_names(t);
		/* __info() describes the image, not the debug file. */
		ck_assert_uint_eq(report_symtab__info(t)->build_id_len,
				  report_symtab__info(ref)->build_id_len);
		ck_assert_mem_eq(report_symtab__info(t)->build_id,
				 report_symtab__info(ref)->build_id,
				 report_symtab__info(ref)->build_id_len);
		report_symtab__free(ref);
	} else {
		/* A stripped executable exports no functions, or only a few. */
		ck_assert_ptr_null(report_symtab__find(t, "sym_test_alpha"));
		ck_assert_uint_eq(report_symtab__nsyms(t) == 0,
				  report_symtab__source(t) == REPORT_SYM_NONE);
	}
	report_symtab__free(t);
}

/* Open @img with @debugdir and check the source, the debug path and the names. */
static void check_debug(const char *img, const char *debugdir, enum report_sym_source want,
			const char *want_path)
{
	struct report_sym_opts opts = { .debugdir = debugdir };

	check_debug_opts(img, &opts, want, want_path);
}

static struct report_debug_memo *memo_ok(void)
{
	struct report_debug_memo *m = NULL;

	ck_assert_int_eq(report_debug_memo__new(&m), 0);
	ck_assert_ptr_nonnull(m);
	return m;
}

static struct report_debug_stats memo_stats(struct report_debug_memo *m)
{
	struct report_debug_stats st;

	report_debug_memo__stats(m, &st);
	return st;
}

static bool fallback(enum report_sym_source s)
{
	return s == REPORT_SYM_DYNSYM || s == REPORT_SYM_NONE;
}

/* The source a stripped image without usable debug file gets (DYNSYM or NONE). */
static enum report_sym_source stripped_source(void)
{
	char img[PATH_MAX], empty[PATH_MAX];
	struct report_sym_opts opts;
	struct report_symtab *t;
	enum report_sym_source s;

	tpath(img, "stripped");
	tpath(empty, "empty");
	ck_assert(mkdir(empty, 0755) == 0 || errno == EEXIST);
	opts = (struct report_sym_opts){ .debugdir = empty };
	t = open_ok(img, &opts);
	s = report_symtab__source(t);
	ck_assert(fallback(s));
	ck_assert_ptr_null(report_symtab__debug_path(t));
	report_symtab__free(t);
	return s;
}

START_TEST(test_debug_buildid)
{
	char img[PATH_MAX], dbg[PATH_MAX], dd[PATH_MAX], bp[PATH_MAX];

	if (!need_files())
		return;
	tpath(img, "stripped");
	tpath(dbg, "prog.debug");
	tpath(dd, "bid");
	bid_path(bp, "bid");
	place(dbg, bp);
	check_debug(img, dd, REPORT_SYM_DEBUG_BUILDID, bp);
	/* A trailing slash on the debug directory changes nothing. */
	tpath(dd, "bid/");
	check_debug(img, dd, REPORT_SYM_DEBUG_BUILDID, bp);
	/* Without it: the fallback. */
	(void)stripped_source();
}
END_TEST

START_TEST(test_debug_link)
{
	char img[PATH_MAX], dbg[PATH_MAX], linked[PATH_MAX], dd[PATH_MAX], p[PATH_MAX];
	char dir3[PATH_MAX];

	if (!need_files())
		return;
	tpath(dbg, "prog.debug");
	tpath(linked, "linked");
	tpath(dd, "empty");
	ck_assert(mkdir(dd, 0755) == 0 || errno == EEXIST);

	/* 1: in the image's directory. */
	tpath(img, "l1/linked");
	place(linked, img);
	tpath(p, "l1/prog.debug");
	place(dbg, p);
	check_debug(img, dd, REPORT_SYM_DEBUG_LINK, p);

	/* 2: in its .debug/ subdirectory. */
	tpath(img, "l2/linked");
	place(linked, img);
	tpath(p, "l2/.debug/prog.debug");
	place(dbg, p);
	check_debug(img, dd, REPORT_SYM_DEBUG_LINK, p);

	/* 3: under the debug directory, at the image's directory. */
	tpath(img, "l3/linked");
	place(linked, img);
	tpath(dir3, "gdbg");
	ck_assert_int_lt(snprintf(p, sizeof(p), "%s%s/l3/prog.debug", dir3, tmpdir), PATH_MAX);
	place(dbg, p);
	check_debug(img, dir3, REPORT_SYM_DEBUG_LINK, p);

	/* The image's directory comes before .debug/. */
	tpath(img, "l2/linked");
	tpath(p, "l2/prog.debug");
	place(dbg, p);
	check_debug(img, dd, REPORT_SYM_DEBUG_LINK, p);
}
END_TEST

START_TEST(test_debug_order)
{
	char img[PATH_MAX], dbg[PATH_MAX], linked[PATH_MAX], dd[PATH_MAX], p[PATH_MAX];
	char bp[PATH_MAX];

	if (!need_files())
		return;
	tpath(dbg, "prog.debug");
	tpath(linked, "linked");

	/* Both a build-id file and a debuglink file: the build id comes first. */
	tpath(img, "both/linked");
	place(linked, img);
	tpath(p, "both/prog.debug");
	place(dbg, p);
	tpath(dd, "bothdbg");
	bid_path(bp, "bothdbg");
	place(dbg, bp);
	check_debug(img, dd, REPORT_SYM_DEBUG_BUILDID, bp);

	/* A build-id file that is not ELF is skipped; the debuglink then works. */
	put_file(bp, "garbage\n", 8);
	check_debug(img, dd, REPORT_SYM_DEBUG_LINK, p);
	/* So is a FIFO there, without blocking. */
	ck_assert_int_eq(unlink(bp), 0);
	ck_assert_int_eq(mkfifo(bp, 0600), 0);
	alarm(20);
	check_debug(img, dd, REPORT_SYM_DEBUG_LINK, p);
	alarm(0);
}
END_TEST

START_TEST(test_debug_mismatch)
{
	char img[PATH_MAX], dbg[PATH_MAX], linked[PATH_MAX], dd[PATH_MAX], p[PATH_MAX];
	char bp[PATH_MAX], flip[PATH_MAX];
	enum report_sym_source fb;
	uint8_t *buf;
	size_t len;

	if (!need_files())
		return;
	fb = stripped_source();
	tpath(dbg, "prog.debug");
	tpath(linked, "linked");
	tpath(flip, "fl/prog.debug");
	tpath(dd, "empty");

	/* A build-id file whose build id differs. */
	tpath(img, "stripped");
	tpath(dd, "badbid");
	bid_path(bp, "badbid");
	place(flip, bp);
	check_debug(img, dd, fb, NULL);

	/*
	 * A debuglink file without a build id whose CRC differs (one byte more at the
	 * end): only the CRC can decide, and it says no.
	 */
	tpath(dd, "empty");
	tpath(img, "crcnb/linked");
	tpath(p, "nb/linked");
	place(p, img);
	tpath(p, "nb/prog.debug");
	ck_assert(slurp(p, &buf, &len));
	buf = realloc(buf, len + 1);
	ck_assert_ptr_nonnull(buf);
	buf[len] = 0;
	tpath(p, "crcnb/prog.debug");
	put_file(p, buf, len + 1);
	free(buf);
	check_debug(img, dd, fb, NULL);
	/* ... and with the right file the link works (its CRC matches). */
	tpath(bp, "nb/prog.debug");
	place(bp, p);
	check_debug(img, dd, REPORT_SYM_DEBUG_LINK, p);

	/*
	 * The same with build ids, equal: the build ids decide, so the file with one
	 * byte more (another CRC) is the image's all the same (test_debug_bid_equal).
	 */
	tpath(img, "crc/linked");
	place(linked, img);
	ck_assert(slurp(dbg, &buf, &len));
	buf = realloc(buf, len + 1);
	ck_assert_ptr_nonnull(buf);
	buf[len] = 0;
	tpath(p, "crc/prog.debug");
	put_file(p, buf, len + 1);
	free(buf);
	check_debug(img, dd, REPORT_SYM_DEBUG_LINK, p);
	place(dbg, p);
	check_debug(img, dd, REPORT_SYM_DEBUG_LINK, p);

	/* The CRC matches, but both have build ids and they differ. */
	tpath(img, "fl/linked-flip");
	check_debug(img, dd, fb, NULL);
	/* A build-id file of the image's own id is found first and used. */
	tpath(dd, "bid2");
	bid_path(bp, "bid2");
	place(dbg, bp);
	check_debug(img, dd, REPORT_SYM_DEBUG_BUILDID, bp);
}
END_TEST

START_TEST(test_symfs)
{
	char root[PATH_MAX], p[PATH_MAX], bp[PATH_MAX], small[PATH_MAX];
	struct report_sym_opts opts;
	struct report_symtab *t;
	char rootslash[PATH_MAX + 1];

	if (!need_files())
		return;
	tpath(root, "root");
	tpath(small, "small");
	tpath(p, "stripped");
	place(p, strcat(strcpy(bp, root), "/usr/bin/prog"));
	tpath(p, "linked");
	place(p, strcat(strcpy(bp, root), "/usr/bin/lnk"));
	place(small, strcat(strcpy(bp, root), "/usr/bin/full"));
	tpath(p, "prog.debug");
	ck_assert_int_lt(snprintf(bp, sizeof(bp), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root,
				  bid_hex, bid_hex + 2),
			 PATH_MAX);
	place(p, bp);

	/* The default debug directory, under the symfs root. */
	opts = (struct report_sym_opts){ .symfs = root };
	t = open_ok("/usr/bin/prog", &opts);
	ck_assert_int_eq(report_symtab__source(t), REPORT_SYM_DEBUG_BUILDID);
	ck_assert_str_eq(report_symtab__debug_path(t), bp);
	check_self_names(t);
	report_symtab__free(t);
	/* A trailing slash on the root. */
	(void)snprintf(rootslash, sizeof(rootslash), "%s/", root);
	opts.symfs = rootslash;
	t = open_ok("/usr/bin/prog", &opts);
	ck_assert_int_eq(report_symtab__source(t), REPORT_SYM_DEBUG_BUILDID);
	ck_assert_str_eq(report_symtab__debug_path(t), bp);
	report_symtab__free(t);
	/* An image with its own .symtab. */
	opts.symfs = root;
	t = open_ok("/usr/bin/full", &opts);
	ck_assert_int_eq(report_symtab__source(t), REPORT_SYM_SYMTAB);
	check_self_names(t);
	report_symtab__free(t);
	/* A debuglink under <symfs><debugdir>/<image directory>/. */
	tpath(p, "prog.debug");
	ck_assert_int_lt(snprintf(bp, sizeof(bp), "%s/dbg2/usr/bin/prog.debug", root), PATH_MAX);
	place(p, bp);
	opts.debugdir = "/dbg2";
	t = open_ok("/usr/bin/lnk", &opts);
	ck_assert_int_eq(report_symtab__source(t), REPORT_SYM_DEBUG_LINK);
	ck_assert_str_eq(report_symtab__debug_path(t), bp);
	check_self_names(t);
	report_symtab__free(t);
	/* The image is looked up under the root only. */
	ck_assert_int_eq(report_symtab__open(small, &opts, &t), -ENOENT);
	/* "/" and "" are the real root. */
	opts = (struct report_sym_opts){ .symfs = "/" };
	t = open_ok(small, &opts);
	ck_assert_int_eq(report_symtab__source(t), REPORT_SYM_SYMTAB);
	report_symtab__free(t);
	opts.symfs = "";
	t = open_ok(small, &opts);
	report_symtab__free(t);
}
END_TEST

/* ---- debug files: build ids before CRCs, the CRC cap, what a report remembers -------- */

/* The bytes this process has read so far (rchar of /proc/self/io: read(2), pread(2)...). */
static uint64_t bytes_read(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	unsigned long long v = 0;
	char line[128];
	bool found = false;

	ck_assert_ptr_nonnull(f);
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "rchar: %llu", &v) == 1;
	fclose(f);
	ck_assert_msg(found, "no rchar in /proc/self/io");
	return v;
}

/* The CRC that objcopy wrote into the .gnu_debuglink of the 64-bit ELF file @path. */
static uint32_t debuglink_crc_of(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, strsh;
	uint8_t *buf;
	size_t len;
	uint32_t crc = 0;
	bool found = false;

	ck_assert(slurp(path, &buf, &len));
	ck_assert_uint_ge(len, sizeof(eh));
	memcpy(&eh, buf, sizeof(eh));
	ck_assert(eh.e_shoff <= len && eh.e_shstrndx < eh.e_shnum &&
		  (size_t)eh.e_shnum * sizeof(sh) <= len - eh.e_shoff);
	memcpy(&strsh, buf + eh.e_shoff + (size_t)eh.e_shstrndx * sizeof(sh), sizeof(sh));
	ck_assert(strsh.sh_offset <= len && strsh.sh_size <= len - strsh.sh_offset);
	for (size_t i = 1; i < eh.e_shnum && !found; i++) {
		size_t name_len;

		memcpy(&sh, buf + eh.e_shoff + i * sizeof(sh), sizeof(sh));
		if (sh.sh_name >= strsh.sh_size ||
		    strnlen((const char *)buf + strsh.sh_offset + sh.sh_name,
			    strsh.sh_size - sh.sh_name) != strlen(".gnu_debuglink") ||
		    memcmp(buf + strsh.sh_offset + sh.sh_name, ".gnu_debuglink", 14) != 0)
			continue;
		ck_assert(sh.sh_offset <= len && sh.sh_size <= len - sh.sh_offset);
		name_len = strnlen((const char *)buf + sh.sh_offset, sh.sh_size);
		/* The name, its NUL, padding to 4 bytes, then the CRC (little-endian here). */
		ck_assert_uint_ge(sh.sh_size, ((name_len + 1 + 3) & ~(size_t)3) + 4);
		crc = util_le32(buf + sh.sh_offset + ((name_len + 1 + 3) & ~(size_t)3));
		found = true;
	}
	free(buf);
	ck_assert_msg(found, "no .gnu_debuglink in '%s'", path);
	return crc;
}

/* Bit by bit, the textbook reflected CRC-32: what zlib's table-driven crc32() must equal. */
static uint32_t crc32_bitwise(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
	}
	return c ^ 0xffffffffu;
}

static uint32_t crc_of_file(const char *path, uint64_t max, int want_r, uint64_t *ret_read)
{
	uint32_t crc = 0xdeadbeef;
	uint64_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(report_file_crc32(fd, max, &crc, &n), want_r);
	close(fd);
	*ret_read = n;
	return crc;
}

/* The debuglink CRC (zlib's crc32()) against known values, and its size bound. */
START_TEST(test_crc_known)
{
	char p[PATH_MAX];
	uint8_t *big;
	uint64_t n;
	size_t len = ((size_t)3 << 20) + 5; /* more than one read (1 MiB) */

	/* The CRC-32 check value: "123456789" gives 0xcbf43926. */
	tpath(p, "crc-check");
	put_file(p, "123456789", 9);
	ck_assert_uint_eq(crc_of_file(p, 1 << 20, 0, &n), 0xcbf43926u);
	ck_assert_uint_eq(n, 9);
	ck_assert_uint_eq(crc32_bitwise((const uint8_t *)"123456789", 9), 0xcbf43926u);
	/* Exactly at the limit is read; one byte past it is -EFBIG. */
	ck_assert_uint_eq(crc_of_file(p, 9, 0, &n), 0xcbf43926u);
	(void)crc_of_file(p, 8, -EFBIG, &n);
	/* An empty file: 0. */
	tpath(p, "crc-empty");
	put_file(p, "", 0);
	ck_assert_uint_eq(crc_of_file(p, 1 << 20, 0, &n), 0);
	ck_assert_uint_eq(n, 0);
	/* Several reads: the same as bit by bit. */
	big = malloc(len);
	ck_assert_ptr_nonnull(big);
	for (size_t i = 0; i < len; i++)
		big[i] = (uint8_t)rng();
	tpath(p, "crc-big");
	put_file(p, big, len);
	ck_assert_uint_eq(crc_of_file(p, len, 0, &n), crc32_bitwise(big, len));
	ck_assert_uint_eq(n, len);
	free(big);
	/* And what objcopy (binutils' own CRC) wrote into a .gnu_debuglink. */
	if (!need_files())
		return;
	tpath(p, "nb/prog.debug");
	{
		char img[PATH_MAX];

		tpath(img, "nb/linked");
		ck_assert_uint_eq(crc_of_file(p, UINT64_MAX, 0, &n), debuglink_crc_of(img));
	}
}
END_TEST

/*
 * Both have a build id and they are equal: the debuglink candidate is the image's,
 * without a CRC (this one's CRC differs from the link's: one byte more).
 */
START_TEST(test_debug_bid_equal)
{
	char img[PATH_MAX], dbg[PATH_MAX], dd[PATH_MAX], p[PATH_MAX];
	struct report_debug_memo *m;
	struct report_debug_stats st;
	struct report_sym_opts opts;
	uint8_t *buf;
	size_t len;

	if (!need_files())
		return;
	m = memo_ok();
	tpath(dd, "empty");
	ck_assert(mkdir(dd, 0755) == 0 || errno == EEXIST);
	tpath(img, "beq/linked");
	tpath(p, "linked");
	place(p, img);
	tpath(dbg, "prog.debug");
	ck_assert(slurp(dbg, &buf, &len));
	buf = realloc(buf, len + 1);
	ck_assert_ptr_nonnull(buf);
	buf[len] = 0;
	tpath(p, "beq/prog.debug");
	put_file(p, buf, len + 1);
	free(buf);
	opts = (struct report_sym_opts){ .debugdir = dd, .memo = m };
	check_debug_opts(img, &opts, REPORT_SYM_DEBUG_LINK, p);
	st = memo_stats(m);
	ck_assert_uint_eq(st.by_build_id, 1);
	ck_assert_uint_eq(st.crc_files, 0);
	ck_assert_uint_eq(st.crc_bytes, 0);
	ck_assert_uint_eq(st.opened, 1);
	/* A second image of the same build there: the file is used again, still no CRC. */
	tpath(img, "beq/linked2");
	tpath(p, "linked");
	place(p, img);
	tpath(p, "beq/prog.debug");
	check_debug_opts(img, &opts, REPORT_SYM_DEBUG_LINK, p);
	st = memo_stats(m);
	ck_assert_uint_eq(st.crc_files, 0);
	ck_assert_uint_eq(st.opened, 2);
	report_debug_memo__free(m);
}
END_TEST

/*
 * Both have a build id and they differ: refused without a CRC, though the CRC would
 * match; a second image there does not even open the file again.
 */
START_TEST(test_debug_bid_differs)
{
	char img[PATH_MAX], dd[PATH_MAX], p[PATH_MAX];
	struct report_debug_memo *m;
	struct report_debug_stats st;
	struct report_sym_opts opts;
	enum report_sym_source fb;

	if (!need_files())
		return;
	fb = stripped_source();
	m = memo_ok();
	tpath(dd, "empty");
	opts = (struct report_sym_opts){ .debugdir = dd, .memo = m };
	tpath(img, "fl/linked-flip");
	/* The link's CRC is the file's: only the build ids tell them apart. */
	tpath(p, "fl/prog.debug");
	{
		uint64_t n;

		ck_assert_uint_eq(crc_of_file(p, UINT64_MAX, 0, &n), debuglink_crc_of(img));
	}
	check_debug_opts(img, &opts, fb, NULL);
	st = memo_stats(m);
	ck_assert_uint_eq(st.by_build_id, 1);
	ck_assert_uint_eq(st.crc_files, 0);
	ck_assert_uint_eq(st.crc_bytes, 0);
	ck_assert_uint_eq(st.opened, 1);
	ck_assert_uint_eq(st.skipped, 0);
	/* Again: none of the 4 candidates (build-id path, 3 debuglink places) is opened. */
	check_debug_opts(img, &opts, fb, NULL);
	st = memo_stats(m);
	ck_assert_uint_eq(st.opened, 1);
	ck_assert_uint_eq(st.skipped, 4);
	ck_assert_uint_eq(st.crc_files, 0);
	report_debug_memo__free(m);
}
END_TEST

/*
 * A debuglink naming a sparse file of a terabyte (what a hostile image can do): it
 * needs a CRC (it has no build id), and it is over the cap, so it is never read:
 * the report goes on with .dynsym.  Judged by the bytes read and what was decided,
 * not by time (before, every byte of it was read for the CRC).
 */
START_TEST(test_debug_sparse)
{
	static const uint64_t sizes[] = { (uint64_t)1 << 40, (uint64_t)16 << 30,
					  REPORT_DEBUG_CRC_MAX + 1 };
	char img[PATH_MAX], img2[PATH_MAX], dd[PATH_MAX], p[PATH_MAX], dbg[PATH_MAX];
	struct report_debug_memo *m;
	struct report_debug_stats st;
	struct report_sym_opts opts;
	enum report_sym_source fb;
	struct stat sb;
	uint64_t before, size = 0;

	if (!need_files())
		return;
	fb = stripped_source();
	tpath(dd, "empty");
	tpath(p, "nb/linked");
	tpath(img, "sparse/linked");
	tpath(img2, "sparse/linked2");
	place(p, img);
	place(p, img2);
	tpath(p, "nb/prog.debug");
	tpath(dbg, "sparse/prog.debug");
	place(p, dbg);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && !size; i++)
		if (truncate(dbg, (off_t)sizes[i]) == 0)
			size = sizes[i];
	ck_assert_msg(size > 0, "cannot make '%s' sparse", dbg);
	ck_assert_int_eq(stat(dbg, &sb), 0);
	ck_assert_uint_eq((uint64_t)sb.st_size, size);
	if (size != sizes[0])
		fprintf(stderr, "test-report-sym: the sparse debug file is %" PRIu64 " bytes\n",
			size);

	m = memo_ok();
	opts = (struct report_sym_opts){ .debugdir = dd, .memo = m };
	before = bytes_read();
	check_debug_opts(img, &opts, fb, NULL);
	st = memo_stats(m);
	ck_assert_uint_eq(st.opened, 1);
	ck_assert_uint_eq(st.over_cap, 1);
	ck_assert_uint_eq(st.crc_files, 0);
	ck_assert_uint_eq(st.crc_bytes, 0);
	/* Another image with that link, in the same report: the file is not opened again. */
	check_debug_opts(img2, &opts, fb, NULL);
	st = memo_stats(m);
	ck_assert_uint_eq(st.opened, 1);
	ck_assert_uint_eq(st.over_cap, 1);
	ck_assert_uint_ge(st.skipped, 1);
	ck_assert_uint_eq(st.crc_files, 0);
	/* Without a memo, the cap alone: not read either. */
	opts.memo = NULL;
	check_debug_opts(img, &opts, fb, NULL);
	/* The images (some 100 KiB each, read a few times) and headers, nothing like the file. */
	ck_assert_uint_lt(bytes_read() - before, (uint64_t)64 << 20);
	report_debug_memo__free(m);
}
END_TEST

/* The cap is opts->crc_max (at most: a file of exactly that size is read) and the memo
 * keeps a CRC: two images linked to one file cost one CRC. */
START_TEST(test_debug_crc_cap)
{
	char img[PATH_MAX], img2[PATH_MAX], dd[PATH_MAX], p[PATH_MAX], dbg[PATH_MAX];
	struct report_debug_memo *m;
	struct report_debug_stats st;
	struct report_sym_opts opts;
	enum report_sym_source fb;
	struct stat sb;

	if (!need_files())
		return;
	fb = stripped_source();
	tpath(dd, "empty");
	tpath(p, "nb/linked");
	tpath(img, "cap/linked");
	tpath(img2, "cap/linked2");
	place(p, img);
	place(p, img2);
	tpath(p, "nb/prog.debug");
	tpath(dbg, "cap/prog.debug");
	place(p, dbg);
	ck_assert_int_eq(stat(dbg, &sb), 0);

	/* One byte under its size: not read, not used. */
	m = memo_ok();
	opts = (struct report_sym_opts){ .debugdir = dd,
					 .memo = m,
					 .crc_max = (uint64_t)sb.st_size - 1 };
	check_debug_opts(img, &opts, fb, NULL);
	st = memo_stats(m);
	ck_assert_uint_eq(st.over_cap, 1);
	ck_assert_uint_eq(st.crc_files, 0);
	report_debug_memo__free(m);

	/* Exactly its size: read once, for both images. */
	m = memo_ok();
	opts = (struct report_sym_opts){ .debugdir = dd,
					 .memo = m,
					 .crc_max = (uint64_t)sb.st_size };
	check_debug_opts(img, &opts, REPORT_SYM_DEBUG_LINK, dbg);
	check_debug_opts(img2, &opts, REPORT_SYM_DEBUG_LINK, dbg);
	st = memo_stats(m);
	ck_assert_uint_eq(st.over_cap, 0);
	ck_assert_uint_eq(st.crc_files, 1);
	ck_assert_uint_eq(st.crc_bytes, (uint64_t)sb.st_size);
	ck_assert_uint_eq(st.by_build_id, 0);
	report_debug_memo__free(m);
}
END_TEST

/* A TCP port on 127.0.0.1 that refuses connections: bound, never listened on. */
static int refusing_port(int *ret_fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	*ret_fd = fd;
	return ntohs(a.sin_port);
}

/* Open @img with debuginfod on and @m (no local debug file): its source. */
static enum report_sym_source open_di(const char *img, struct report_debug_memo *m)
{
	char dd[PATH_MAX];
	struct report_sym_opts opts;
	struct report_symtab *t;
	enum report_sym_source s;

	tpath(dd, "empty");
	opts = (struct report_sym_opts){ .debugdir = dd, .debuginfod = true, .memo = m };
	t = open_ok(img, &opts);
	s = report_symtab__source(t);
	report_symtab__free(t);
	return s;
}

/*
 * debuginfod failures cost once per report: servers that cannot be reached are
 * not asked again for another build id, a build id they had nothing for is not
 * asked again.  Local only: a file:// server (libdebuginfod reads those like
 * http ones) and a port that refuses connections.
 */
START_TEST(test_debuginfod_memo)
{
	char img[PATH_MAX], img2[PATH_MAX], srv[PATH_MAX], p[PATH_MAX], url[PATH_MAX + 16];
	struct report_debug_memo *m;
	struct report_debug_stats st;
	enum report_sym_source fb;
	void *h;
	int sfd, port;

	if (!need_files())
		return;
	h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "test-report-sym: skipping a case: no libdebuginfod.so.1\n");
		return;
	}
	dlclose(h);
	fb = stripped_source();
	tpath(img, "stripped");
	tpath(img2, "stripped-flip");
	ck_assert_int_eq(setenv("DEBUGINFOD_RETRY_LIMIT", "0", 1), 0);
	ck_assert_int_eq(setenv("DEBUGINFOD_TIMEOUT", "10", 1), 0);

	/* Not found: that build id is not asked again; another one is. */
	tpath(srv, "di-none");
	ck_assert(mkdir(srv, 0755) == 0 || errno == EEXIST);
	(void)snprintf(url, sizeof(url), "file://%s", srv);
	ck_assert_int_eq(setenv("DEBUGINFOD_URLS", url, 1), 0);
	tpath(p, "di-cache1");
	ck_assert_int_eq(setenv("DEBUGINFOD_CACHE_PATH", p, 1), 0);
	m = memo_ok();
	ck_assert_int_eq(open_di(img, m), fb);
	ck_assert_int_eq(open_di(img, m), fb);
	st = memo_stats(m);
	ck_assert_uint_eq(st.debuginfod_asked, 1);
	ck_assert_uint_eq(st.debuginfod_skipped, 1);
	ck_assert_int_eq(open_di(img2, m), fb);
	st = memo_stats(m);
	ck_assert_uint_eq(st.debuginfod_asked, 2);
	report_debug_memo__free(m);

	/* Unreachable: asked once, then not for any build id (a fresh cache: no answer in it). */
	port = refusing_port(&sfd);
	(void)snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	ck_assert_int_eq(setenv("DEBUGINFOD_URLS", url, 1), 0);
	tpath(p, "di-cache2");
	ck_assert_int_eq(setenv("DEBUGINFOD_CACHE_PATH", p, 1), 0);
	m = memo_ok();
	ck_assert_int_eq(open_di(img, m), fb);
	ck_assert_int_eq(open_di(img2, m), fb);
	ck_assert_int_eq(open_di(img, m), fb);
	st = memo_stats(m);
	ck_assert_uint_eq(st.debuginfod_asked, 1);
	ck_assert_uint_eq(st.debuginfod_skipped, 2);
	report_debug_memo__free(m);
	close(sfd);

	/* Found: the server's file is used (and the memo changes nothing there). */
	tpath(srv, "di-srv");
	{
		char dbg[PATH_MAX], at[PATH_MAX];

		tpath(dbg, "prog.debug");
		tpath(at, "di-srv/buildid/%s/debuginfo", bid_hex);
		place(dbg, at);
	}
	(void)snprintf(url, sizeof(url), "file://%s", srv);
	ck_assert_int_eq(setenv("DEBUGINFOD_URLS", url, 1), 0);
	m = memo_ok();
	ck_assert_int_eq(open_di(img, m), REPORT_SYM_DEBUGINFOD);
	st = memo_stats(m);
	ck_assert_uint_eq(st.debuginfod_asked, 1);
	report_debug_memo__free(m);

	(void)unsetenv("DEBUGINFOD_URLS");
	(void)unsetenv("DEBUGINFOD_CACHE_PATH");
	(void)unsetenv("DEBUGINFOD_RETRY_LIMIT");
	(void)unsetenv("DEBUGINFOD_TIMEOUT");
}
END_TEST

/* ---- opening errors -------------------------------------------------------------------- */

START_TEST(test_open_errors)
{
	struct report_symtab *t, *const sentinel = (struct report_symtab *)&rng_state;
	char p[PATH_MAX];
	uint8_t junk[256];

	t = sentinel;
	tpath(p, "no-such-file");
	ck_assert_int_eq(report_symtab__open(p, NULL, &t), -ENOENT);
	tpath(p, "no-such-dir/file");
	ck_assert_int_eq(report_symtab__open(p, NULL, &t), -ENOENT);
	ck_assert_int_eq(report_symtab__open(NULL, NULL, &t), -EINVAL);
	ck_assert_int_eq(report_symtab__open("", NULL, &t), -EINVAL);
	/* A directory, a FIFO (without blocking: nobody ever writes to it), /dev/null. */
	ck_assert_int_eq(report_symtab__open(tmpdir, NULL, &t), -ENOEXEC);
	tpath(p, "fifo");
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	alarm(20);
	ck_assert_int_eq(report_symtab__open(p, NULL, &t), -ENOEXEC);
	ck_assert_int_eq(report_symtab__kallsyms(p, &t), -ENOEXEC);
	alarm(0);
	ck_assert_int_eq(report_symtab__open("/dev/null", NULL, &t), -ENOEXEC);
	/* Not ELF. */
	tpath(p, "empty-file");
	put_file(p, "", 0);
	ck_assert_int_eq(report_symtab__open(p, NULL, &t), -ENOEXEC);
	tpath(p, "text-file");
	put_file(p, "#!/bin/sh\necho hello\n", 21);
	ck_assert_int_eq(report_symtab__open(p, NULL, &t), -ENOEXEC);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)rng();
	put_file(p, junk, sizeof(junk));
	ck_assert_int_eq(report_symtab__open(p, NULL, &t), -ENOEXEC);
	/* Too long a path. */
	{
		static char longp[PATH_MAX + 16];

		memset(longp, 'a', sizeof(longp) - 1);
		longp[0] = '/';
		ck_assert_int_eq(report_symtab__open(longp, NULL, &t), -ENAMETOOLONG);
	}
	/* Unreadable (root reads everything, so only as another user). */
	if (geteuid() != 0 && need_files()) {
		char q[PATH_MAX];

		tpath(p, "small");
		tpath(q, "unreadable");
		place(p, q);
		ck_assert_int_eq(chmod(q, 0), 0);
		ck_assert_int_eq(report_symtab__open(q, NULL, &t), -EACCES);
	}
	/* Outputs are written only on success. */
	ck_assert_ptr_eq(t, sentinel);
}
END_TEST

START_TEST(test_api)
{
	ck_assert_str_eq(report_sym_source_name(REPORT_SYM_SYMTAB), "symtab");
	ck_assert_str_eq(report_sym_source_name(REPORT_SYM_DEBUG_BUILDID), "debug-buildid");
	ck_assert_str_eq(report_sym_source_name(REPORT_SYM_DEBUG_LINK), "debuglink");
	ck_assert_str_eq(report_sym_source_name(REPORT_SYM_DYNSYM), "dynsym");
	ck_assert_str_eq(report_sym_source_name(REPORT_SYM_NONE), "none");
	ck_assert_str_eq(report_sym_source_name(REPORT_SYM_KALLSYMS), "kallsyms");
	ck_assert_str_eq(report_sym_source_name(REPORT_SYM_SOURCE_MAX), "unknown");
	ck_assert_str_eq(report_sym_source_name((enum report_sym_source)99), "unknown");
	report_symtab__free(NULL);
	ck_assert_ptr_null(report_symtab__lookup(NULL, 0x1000));
	ck_assert_ptr_null(report_symtab__find(NULL, "x"));
	ck_assert_ptr_null(report_symtab__sym(NULL, 0));
	ck_assert_uint_eq(report_symtab__nsyms(NULL), 0);
	ck_assert_ptr_null(report_symtab__debug_path(NULL));
}
END_TEST

/* ---- hand-made ELF files --------------------------------------------------------------- */

struct tsym {
	const char *name;
	uint64_t value;
	uint64_t size;
	unsigned char type; /* STT_* */
	unsigned char bind; /* STB_* */
	unsigned char vis;  /* STV_* (st_other) */
	bool undef;	    /* st_shndx SHN_UNDEF instead of .text */
	bool dyn;	    /* in .dynsym instead of .symtab */
	unsigned sec;	    /* st_shndx if not 0 (SEC_INIT, SEC_DATA, SHN_ABS); 0: .text */
};

#define FN(nm, val, sz)                                                                            \
	{                                                                                          \
		.name = (nm), .value = (val), .size = (sz), .type = STT_FUNC, .bind = STB_GLOBAL   \
	}

#define LABEL(nm, val)                                                                             \
	{                                                                                          \
		.name = (nm), .value = (val), .type = STT_NOTYPE, .bind = STB_LOCAL                \
	}

enum {
	SEC_NULL,
	SEC_TEXT,
	SEC_STRTAB,
	SEC_SYMTAB,
	SEC_DYNSYM,
	SEC_SHSTRTAB,
	SEC_INIT,
	SEC_DATA,
	SEC_NUM
};

/* Where the synthetic sections are: .init and .text are executable, .data is not. */
#define TEXT_START 0x1000ull
#define TEXT_END   0x101000ull
#define INIT_START 0x800ull
#define INIT_END   0x900ull
#define DATA_START 0x400000ull
#define DATA_END   0x401000ull

/*
 * A 64-bit native-order ET_DYN file: .text and .init (executable, NOBITS), .data
 * (NOBITS), .strtab, .symtab, .dynsym.
 */
struct synth {
	uint8_t *buf;
	size_t len;
	size_t shoff;	   /* section header table */
	size_t symtab_off; /* .symtab entries (entry 0 is the null symbol) */
	size_t strtab_off;
	size_t strtab_size;
	size_t nsymtab; /* entries in .symtab, null symbol included */
};

static size_t align8(size_t x)
{
	return (x + 7) & ~(size_t)7;
}

static void synth_build(struct synth *e, const struct tsym *syms, size_t n, bool with_symtab)
{
	static const char shstr[] = "\0.text\0.strtab\0.symtab\0.dynsym\0.shstrtab\0.init\0.data";
	const size_t shname[SEC_NUM] = { 0, 1, 7, 15, 23, 31, 41, 47 };
	size_t strsize = 1, nsym = 1, ndyn = 1, off, shstr_off, dynsym_off, k;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;
	uint8_t *b;

	for (size_t i = 0; i < n; i++) {
		strsize += strlen(syms[i].name) + 1;
		if (syms[i].dyn)
			ndyn++;
		else
			nsym++;
	}
	e->strtab_off = sizeof(eh);
	e->strtab_size = strsize;
	shstr_off = e->strtab_off + strsize;
	e->symtab_off = align8(shstr_off + sizeof(shstr));
	dynsym_off = e->symtab_off + nsym * sizeof(Elf64_Sym);
	e->shoff = align8(dynsym_off + ndyn * sizeof(Elf64_Sym));
	e->len = e->shoff + SEC_NUM * sizeof(*sh);
	e->nsymtab = nsym;
	b = calloc(1, e->len);
	ck_assert_ptr_nonnull(b);
	e->buf = b;

	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_shoff = e->shoff;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = SEC_NUM;
	eh.e_shstrndx = SEC_SHSTRTAB;
	memcpy(b, &eh, sizeof(eh));
	memcpy(b + shstr_off, shstr, sizeof(shstr));

	/* Names, and symbols in their table; the null symbols stay zero. */
	off = 1;
	k = 1;
	for (size_t i = 0, kd = 1; i < n; i++) {
		Elf64_Sym s;

		memset(&s, 0, sizeof(s));
		memcpy(b + e->strtab_off + off, syms[i].name, strlen(syms[i].name) + 1);
		s.st_name = syms[i].name[0] ? (uint32_t)off : 0;
		off += strlen(syms[i].name) + 1;
		s.st_info = (unsigned char)ELF64_ST_INFO(syms[i].bind, syms[i].type);
		s.st_other = syms[i].vis;
		s.st_shndx = syms[i].undef ? SHN_UNDEF
			     : syms[i].sec ? (uint16_t)syms[i].sec
					   : SEC_TEXT;
		s.st_value = syms[i].value;
		s.st_size = syms[i].size;
		if (syms[i].dyn)
			memcpy(b + dynsym_off + kd++ * sizeof(s), &s, sizeof(s));
		else
			memcpy(b + e->symtab_off + k++ * sizeof(s), &s, sizeof(s));
	}

	/*
	 * Written in place (calloc'ed, e->shoff is 8-aligned): GCC 12 at -O2 dropped the
	 * field stores to a stack copy that was then memcpy'd here.
	 */
	sh = (Elf64_Shdr *)(void *)(b + e->shoff);
	for (int i = 0; i < SEC_NUM; i++)
		sh[i].sh_name = (uint32_t)shname[i];
	sh[SEC_TEXT].sh_type = SHT_NOBITS;
	sh[SEC_TEXT].sh_flags = SHF_ALLOC | SHF_EXECINSTR;
	sh[SEC_TEXT].sh_addr = TEXT_START;
	sh[SEC_TEXT].sh_size = TEXT_END - TEXT_START;
	sh[SEC_TEXT].sh_addralign = 16;
	sh[SEC_INIT].sh_type = SHT_NOBITS;
	sh[SEC_INIT].sh_flags = SHF_ALLOC | SHF_EXECINSTR;
	sh[SEC_INIT].sh_addr = INIT_START;
	sh[SEC_INIT].sh_size = INIT_END - INIT_START;
	sh[SEC_INIT].sh_addralign = 16;
	sh[SEC_DATA].sh_type = SHT_NOBITS;
	sh[SEC_DATA].sh_flags = SHF_ALLOC | SHF_WRITE;
	sh[SEC_DATA].sh_addr = DATA_START;
	sh[SEC_DATA].sh_size = DATA_END - DATA_START;
	sh[SEC_DATA].sh_addralign = 16;
	sh[SEC_STRTAB].sh_type = SHT_STRTAB;
	sh[SEC_STRTAB].sh_offset = e->strtab_off;
	sh[SEC_STRTAB].sh_size = strsize;
	sh[SEC_STRTAB].sh_addralign = 1;
	sh[SEC_SYMTAB].sh_type = with_symtab ? SHT_SYMTAB : SHT_PROGBITS;
	sh[SEC_SYMTAB].sh_offset = e->symtab_off;
	sh[SEC_SYMTAB].sh_size = nsym * sizeof(Elf64_Sym);
	sh[SEC_SYMTAB].sh_link = SEC_STRTAB;
	sh[SEC_SYMTAB].sh_entsize = sizeof(Elf64_Sym);
	sh[SEC_SYMTAB].sh_addralign = 8;
	sh[SEC_DYNSYM].sh_type = SHT_DYNSYM;
	sh[SEC_DYNSYM].sh_offset = dynsym_off;
	sh[SEC_DYNSYM].sh_size = ndyn * sizeof(Elf64_Sym);
	sh[SEC_DYNSYM].sh_link = SEC_STRTAB;
	sh[SEC_DYNSYM].sh_entsize = sizeof(Elf64_Sym);
	sh[SEC_DYNSYM].sh_addralign = 8;
	sh[SEC_SHSTRTAB].sh_type = SHT_STRTAB;
	sh[SEC_SHSTRTAB].sh_offset = shstr_off;
	sh[SEC_SHSTRTAB].sh_size = sizeof(shstr);
	sh[SEC_SHSTRTAB].sh_addralign = 1;
}

static Elf64_Shdr *synth_shdr(struct synth *e, int i)
{
	return (Elf64_Shdr *)(void *)(e->buf + e->shoff + (size_t)i * sizeof(Elf64_Shdr));
}

static Elf64_Sym *synth_sym(struct synth *e, size_t i)
{
	return (Elf64_Sym *)(void *)(e->buf + e->symtab_off + i * sizeof(Elf64_Sym));
}

/* Write @e to tmpdir/@name and open it; returns the result, *ret_t on success. */
static int synth_open(const struct synth *e, const char *name, struct report_symtab **ret_t)
{
	char p[PATH_MAX];

	tpath(p, "%s", name);
	put_file(p, e->buf, e->len);
	return report_symtab__open(p, NULL, ret_t);
}

static struct report_symtab *synth_table(const struct tsym *syms, size_t n, bool with_symtab)
{
	struct report_symtab *t = NULL;
	struct synth e;

	synth_build(&e, syms, n, with_symtab);
	ck_assert_int_eq(synth_open(&e, "synth", &t), 0);
	free(e.buf);
	check_table(t, false);
	return t;
}

static void expect_at(const struct report_symtab *t, uint64_t addr, const char *name)
{
	const struct report_sym *s = report_symtab__lookup(t, addr);

	if (!name) {
		REQUIRE(s == NULL, "%#llx: '%s', expected nothing", (unsigned long long)addr,
			s ? s->name : "");
		return;
	}
	REQUIRE(s != NULL, "%#llx: nothing, expected '%s'", (unsigned long long)addr, name);
	REQUIRE(strcmp(s->name, name) == 0, "%#llx: '%s', expected '%s'", (unsigned long long)addr,
		s->name, name);
}

START_TEST(test_synth_filter)
{
	const struct tsym syms[] = {
		{ .name = "obj", .value = 0x1000, .size = 8, .type = STT_OBJECT },
		/* A label in a data section is no function. */
		{ .name = "notype",
		  .value = DATA_START + 0x100,
		  .type = STT_NOTYPE,
		  .sec = SEC_DATA },
		{ .name = "undef_fn", .value = 0x1200, .type = STT_FUNC, .undef = true },
		{ .name = "zero_fn", .value = 0, .size = 16, .type = STT_FUNC },
		{ .name = "", .value = 0x1300, .size = 16, .type = STT_FUNC },
		{ .name = "ifunc", .value = 0x1400, .size = 0x20, .type = STT_GNU_IFUNC },
		FN("f_sized", 0x2000, 0x10),
		{ .name = "f_zero", .value = 0x3000, .type = STT_FUNC, .bind = STB_LOCAL },
		{ .name = "f_dyn", .value = 0x4000, .size = 0x100, .type = STT_FUNC, .dyn = true },
		FN("f_last0", 0x8000, 0),
	};
	struct report_symtab *t = synth_table(syms, ARRAY_SIZE(syms), true);

	ck_assert_int_eq(report_symtab__source(t), REPORT_SYM_SYMTAB);
	ck_assert_uint_eq(report_symtab__nsyms(t), 5);
	ck_assert_uint_eq(report_symtab__info(t)->e_type, ET_DYN);
	expect_at(t, 0, NULL);
	expect_at(t, 0x13ff, NULL);
	expect_at(t, 0x1400, "ifunc");
	expect_at(t, 0x141f, "ifunc");
	expect_at(t, 0x1420, NULL);
	expect_at(t, 0x200f, "f_sized");
	expect_at(t, 0x2010, NULL);
	/* Size 0: up to the next function. */
	expect_at(t, 0x3000, "f_zero");
	expect_at(t, 0x3fff, "f_zero");
	expect_at(t, 0x4000, "f_dyn");
	expect_at(t, 0x40ff, "f_dyn");
	expect_at(t, 0x4100, NULL);
	/* The last one, of size 0: up to the end of its section. */
	expect_at(t, 0x8000, "f_last0");
	expect_at(t, 0x9000, "f_last0");
	expect_at(t, TEXT_END - 1, "f_last0");
	expect_at(t, TEXT_END, NULL);
	expect_at(t, DATA_START + 0x100, NULL);
	expect_at(t, UINT64_MAX, NULL);
	ck_assert_uint_eq(report_symtab__find(t, "f_sized")->size, 0x10);
	ck_assert_uint_eq(report_symtab__find(t, "f_zero")->size, 0);
	ck_assert_ptr_null(report_symtab__find(t, "obj"));
	ck_assert_ptr_null(report_symtab__find(t, "undef_fn"));
	report_symtab__free(t);

	/* No .symtab and no debug file: .dynsym alone. */
	t = synth_table(syms, ARRAY_SIZE(syms), false);
	ck_assert_int_eq(report_symtab__source(t), REPORT_SYM_DYNSYM);
	ck_assert_ptr_null(report_symtab__debug_path(t));
	ck_assert_uint_eq(report_symtab__nsyms(t), 1);
	expect_at(t, 0x4080, "f_dyn");
	expect_at(t, 0x3000, NULL);
	report_symtab__free(t);

	/* No functions at all. */
	t = synth_table(syms, 5, true);
	ck_assert_int_eq(report_symtab__source(t), REPORT_SYM_NONE);
	ck_assert_uint_eq(report_symtab__nsyms(t), 0);
	ck_assert_ptr_null(report_symtab__sym(t, 0));
	ck_assert_ptr_null(report_symtab__find(t, "obj"));
	expect_at(t, 0x1000, NULL);
	report_symtab__free(t);
	t = synth_table(NULL, 0, false);
	ck_assert_int_eq(report_symtab__source(t), REPORT_SYM_NONE);
	report_symtab__free(t);
}
END_TEST

START_TEST(test_synth_edges)
{
	/*
	 * Outside .text, which their st_shndx names: no section end is known, so size 0
	 * holds up to the next start, and the last one 4096 bytes.
	 */
	const struct tsym syms[] = {
		FN("low", 1, 0),
		FN("top", 0xfffffffffffff000ull, 0x2000), /* wraps: saturated at 2^64 - 1 */
	};
	const struct tsym last0[] = {
		FN("a", 0x1000, 0x10),
		FN("z", 0xfffffffffffffff0ull, 0), /* last, size 0: saturated too */
	};
	struct report_symtab *t = synth_table(syms, ARRAY_SIZE(syms), true);

	expect_at(t, 0, NULL);
	expect_at(t, 1, "low");
	expect_at(t, 0xffffffffffffefffull, "low");
	expect_at(t, 0xfffffffffffff000ull, "top");
	expect_at(t, UINT64_MAX - 1, "top");
	expect_at(t, UINT64_MAX, NULL);
	report_symtab__free(t);
	t = synth_table(last0, ARRAY_SIZE(last0), true);
	expect_at(t, 0xfffffffffffffff0ull, "z");
	expect_at(t, UINT64_MAX - 1, "z");
	expect_at(t, 0x1010, NULL);
	report_symtab__free(t);
}
END_TEST

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The end of the executable synthetic section that holds @s, or 0 (none, or not it). */
static uint64_t tsym_limit(const struct tsym *s)
{
	unsigned sec = s->sec ? s->sec : SEC_TEXT;

	if (sec == SEC_TEXT && s->value >= TEXT_START && s->value < TEXT_END)
		return TEXT_END;
	if (sec == SEC_INIT && s->value >= INIT_START && s->value < INIT_END)
		return INIT_END;
	return 0;
}

/*
 * The reference rule, by brute force over @syms (unique values, any order, every one
 * a function): the sized function with the greatest start <= addr that holds addr;
 * else the function of size 0 with the greatest start <= addr, if addr is below both
 * the next start and the end of its executable section (with no section known: the
 * next start, and 4096 bytes for the last one).
 */
static const char *brute_lookup(const struct tsym *syms, size_t n, uint64_t addr)
{
	const struct tsym *best = NULL, *z = NULL;
	uint64_t next = UINT64_MAX, limit, end;
	bool have = false;

	for (size_t i = 0; i < n; i++) {
		if (syms[i].value > addr)
			continue;
		if (syms[i].size > 0) {
			if (addr < add_sat(syms[i].value, syms[i].size) &&
			    (!best || syms[i].value > best->value))
				best = &syms[i];
		} else if (!z || syms[i].value > z->value) {
			z = &syms[i];
		}
	}
	if (best)
		return best->name;
	if (!z)
		return NULL;
	for (size_t j = 0; j < n; j++) {
		if (syms[j].value > z->value && syms[j].value <= next) {
			next = syms[j].value;
			have = true;
		}
	}
	limit = tsym_limit(z);
	if (limit)
		end = have && next < limit ? next : limit;
	else
		end = have ? next : add_sat(z->value, 4096);
	return addr < end ? z->name : NULL;
}

static void check_against_brute(const struct report_symtab *t, const struct tsym *syms, size_t n,
				uint64_t addr)
{
	expect_at(t, addr, brute_lookup(syms, n, addr));
}

START_TEST(test_synth_overlap)
{
	static struct tsym syms[80];
	static char names[80][16];
	size_t n = 0;
	struct report_symtab *t;

#define ADD(nm, v, sz)                                                                             \
	do {                                                                                       \
		syms[n] = (struct tsym)FN(nm, v, sz);                                              \
		n++;                                                                               \
	} while (0)
	/* Nested: A holds B and C and D, and the gaps between them. */
	ADD("A", 0x1000, 0x100);
	ADD("B", 0x1010, 0x10);
	ADD("C", 0x1030, 0x10);
	ADD("D", 0x1040, 0x10);
	/* Deeper: E holds F holds G and H. */
	ADD("E", 0x2000, 0x1000);
	ADD("F", 0x2100, 0xe00);
	ADD("G", 0x2200, 0x100);
	ADD("H", 0x2400, 0x100);
	/* Crossing: X and Y overlap without nesting. */
	ADD("X", 0x4000, 0x100);
	ADD("Y", 0x4080, 0x180);
	/*
	 * Size 0 after sized ones, and a size-0 label inside a sized function: the sized
	 * one wins where it reaches, the label holds the gap after it.
	 */
	ADD("Z0", 0x5000, 0);
	ADD("W", 0x5100, 0x10);
	ADD("BIG", 0x6000, 0x100);
	ADD("L0", 0x6080, 0);
	ADD("after", 0x6200, 0x10);
	/* Two of size 0 inside nested sized ones, the second also after the inner's end. */
	ADD("OUT", 0x7000, 0x200);
	ADD("IN", 0x7040, 0x40);
	ADD("L1", 0x7050, 0);
	ADD("L2", 0x7100, 0);
	/* 50 small functions inside one large one: no fixed window of predecessors works. */
	ADD("HUGE", 0x10000, 0x10000);
	for (int k = 0; k < 50; k++) {
		(void)snprintf(names[k], sizeof(names[k]), "in%02d", k);
		ADD(names[k], 0x10000 + 0x100 * (uint64_t)k + 0x10, 0x10);
	}
	ADD("last0", 0x30000, 0);
#undef ADD
	t = synth_table(syms, n, true);
	ck_assert_uint_eq(report_symtab__nsyms(t), n);
	expect_at(t, 0xfff, NULL);
	expect_at(t, 0x1000, "A");
	expect_at(t, 0x1015, "B");
	expect_at(t, 0x1020, "A");
	expect_at(t, 0x1035, "C");
	expect_at(t, 0x1040, "D");
	expect_at(t, 0x1050, "A");
	expect_at(t, 0x10ff, "A");
	expect_at(t, 0x1100, NULL);
	expect_at(t, 0x2250, "G");
	expect_at(t, 0x2350, "F");
	expect_at(t, 0x2450, "H");
	expect_at(t, 0x2eff, "F");
	expect_at(t, 0x2f00, "E");
	expect_at(t, 0x2fff, "E");
	expect_at(t, 0x3000, NULL);
	expect_at(t, 0x4050, "X");
	expect_at(t, 0x40f0, "Y");
	expect_at(t, 0x4150, "Y");
	expect_at(t, 0x4200, NULL);
	expect_at(t, 0x50ff, "Z0");
	expect_at(t, 0x5100, "W");
	expect_at(t, 0x5110, NULL);
	expect_at(t, 0x6050, "BIG");
	expect_at(t, 0x6080, "BIG");
	expect_at(t, 0x60ff, "BIG");
	expect_at(t, 0x6100, "L0");
	expect_at(t, 0x61ff, "L0");
	expect_at(t, 0x6200, "after");
	expect_at(t, 0x7050, "IN");
	expect_at(t, 0x7080, "OUT");
	expect_at(t, 0x7100, "OUT");
	expect_at(t, 0x71ff, "OUT");
	/* L1 is covered everywhere; L2 holds from OUT's end to the next start. */
	ck_assert_ptr_nonnull(report_symtab__find(t, "L1"));
	expect_at(t, 0x7200, "L2");
	expect_at(t, 0xffff, "L2");
	expect_at(t, 0x10000, "HUGE");
	expect_at(t, 0x10000 + 0x100 * 49 + 0x80, "HUGE");
	expect_at(t, 0x10000 + 0x100 * 49 + 0x18, "in49");
	expect_at(t, 0x1ffff, "HUGE");
	expect_at(t, 0x20000, NULL);
	/* The last one, of size 0, holds up to the end of .text. */
	expect_at(t, 0x30fff, "last0");
	expect_at(t, 0x31000, "last0");
	expect_at(t, TEXT_END - 1, "last0");
	expect_at(t, TEXT_END, NULL);
	/* Every boundary and its neighbours, against the brute-force rule. */
	for (size_t i = 0; i < n; i++) {
		for (int d = -1; d <= 1; d++) {
			check_against_brute(t, syms, n, syms[i].value + (uint64_t)d);
			check_against_brute(t, syms, n, syms[i].value + syms[i].size + (uint64_t)d);
		}
	}
	report_symtab__free(t);
}
END_TEST

/*
 * Random tables with overlaps, sizes 0 and labels, against the brute-force rule; one
 * function in 8 is in .init, so that size 0 there ends at .init's end, not at the
 * next start in .text.
 */
START_TEST(test_synth_random)
{
	enum { NSYM = 200 };
	static struct tsym syms[NSYM];
	static char names[NSYM][16];
	struct report_symtab *t;

	for (int round = 0; round < 5; round++) {
		size_t n = 0;

		while (n < NSYM) {
			bool init = rng() % 8 == 0;
			uint64_t v = init ? INIT_START + (rng() % 0x40) * 4
					  : TEXT_START + (rng() % 0x4000) * 4;
			uint64_t r = rng() % 8;
			bool dup = false;

			for (size_t j = 0; j < n; j++)
				dup |= syms[j].value == v;
			if (dup)
				continue;
			(void)snprintf(names[n], sizeof(names[n]), "r%zu", n);
			syms[n] = (struct tsym)FN(names[n], v,
						  r < 3	  ? 0
						  : r < 6 ? rng() % 0x80 + 1
							  : rng() % 0x4000 + 1);
			/* Small in .init, so that the gap up to .text stays mostly open. */
			if (init) {
				syms[n].sec = SEC_INIT;
				syms[n].size = syms[n].size ? rng() % 0x10 + 1 : 0;
			}
			if (rng() % 3 == 0) {
				syms[n].type = STT_NOTYPE;
				syms[n].bind = STB_LOCAL;
			}
			syms[n].dyn = (rng() & 3) == 0;
			n++;
		}
		t = synth_table(syms, n, true);
		ck_assert_uint_eq(report_symtab__nsyms(t), n);
		for (size_t i = 0; i < n; i++) {
			for (int d = -1; d <= 1; d++) {
				check_against_brute(t, syms, n, syms[i].value + (uint64_t)d);
				check_against_brute(t, syms, n,
						    syms[i].value + syms[i].size + (uint64_t)d);
			}
		}
		for (int d = -1; d <= 1; d++) {
			check_against_brute(t, syms, n, INIT_END + (uint64_t)d);
			check_against_brute(t, syms, n, TEXT_END + (uint64_t)d);
		}
		for (int k = 0; k < 2000; k++)
			check_against_brute(t, syms, n, INIT_START + rng() % 0x14800);
		report_symtab__free(t);
	}
}
END_TEST

/*
 * Size 0 (perf's symbols__fixup_end, bounded by the section): a label and a function of
 * size 0, each followed by a gap and a sized function; the last one of .init, whose
 * range ends with .init although the next function starts much later; a label and a
 * function of size 0 inside sized functions, which win there.
 */
START_TEST(test_synth_size0)
{
	const struct tsym syms[] = {
		/* .init [0x800, 0x900): a label, a gap, a sized function, a last size 0. */
		{ .name = "_start", .value = 0x800, .type = STT_NOTYPE, .sec = SEC_INIT },
		{ .name = "init_fn",
		  .value = 0x840,
		  .size = 0x20,
		  .type = STT_FUNC,
		  .sec = SEC_INIT },
		{ .name = "_init",
		  .value = 0x8c0,
		  .type = STT_FUNC,
		  .bind = STB_GLOBAL,
		  .vis = STV_HIDDEN,
		  .sec = SEC_INIT },
		/* .text: a function of size 0, a gap, a sized one. */
		{ .name = "asm_entry", .value = 0x1000, .type = STT_FUNC, .bind = STB_GLOBAL },
		FN("c_fn", 0x1100, 0x40),
		/* A label and a function of size 0 inside a sized function. */
		FN("outer", 0x2000, 0x100),
		LABEL("inner_label", 0x2010),
		{ .name = "inner_fn0", .value = 0x2080, .type = STT_FUNC, .bind = STB_LOCAL },
		FN("next_fn", 0x2200, 0x10),
		/* A label with a size is a sized function. */
		{ .name = "sized_label", .value = 0x3000, .size = 0x20, .type = STT_NOTYPE },
		FN("far", 0x5000, 0x10),
	};
	struct report_symtab *t = synth_table(syms, ARRAY_SIZE(syms), true);

	ck_assert_uint_eq(report_symtab__nsyms(t), ARRAY_SIZE(syms));
	/* The label, up to the sized function after the gap. */
	expect_at(t, 0x7ff, NULL);
	expect_at(t, 0x800, "_start");
	expect_at(t, 0x807, "_start");
	expect_at(t, 0x83f, "_start");
	expect_at(t, 0x840, "init_fn");
	expect_at(t, 0x85f, "init_fn");
	/* After a sized function, nothing until the next start. */
	expect_at(t, 0x860, NULL);
	expect_at(t, 0x8bf, NULL);
	/* The last function of .init: up to .init's end, not to asm_entry's start. */
	expect_at(t, 0x8c0, "_init");
	expect_at(t, INIT_END - 1, "_init");
	expect_at(t, INIT_END, NULL);
	expect_at(t, 0xfff, NULL);
	/* A function of size 0, the gap, the sized one. */
	expect_at(t, 0x1000, "asm_entry");
	expect_at(t, 0x10ff, "asm_entry");
	expect_at(t, 0x1100, "c_fn");
	expect_at(t, 0x113f, "c_fn");
	expect_at(t, 0x1140, NULL);
	/* Inside outer, outer wins; after its end, the latest of size 0 up to next_fn. */
	expect_at(t, 0x2000, "outer");
	expect_at(t, 0x2010, "outer");
	expect_at(t, 0x2050, "outer");
	expect_at(t, 0x2080, "outer");
	expect_at(t, 0x20ff, "outer");
	expect_at(t, 0x2100, "inner_fn0");
	expect_at(t, 0x21ff, "inner_fn0");
	expect_at(t, 0x2200, "next_fn");
	expect_at(t, 0x2210, NULL);
	ck_assert_uint_eq(report_symtab__find(t, "inner_label")->size, 0);
	ck_assert_uint_eq(report_symtab__find(t, "_start")->size, 0);
	expect_at(t, 0x301f, "sized_label");
	expect_at(t, 0x3020, NULL);
	/* The last one of all is sized: nothing after it. */
	expect_at(t, 0x5010, NULL);
	expect_at(t, TEXT_END - 1, NULL);
	report_symtab__free(t);
}
END_TEST

/*
 * Which labels are functions: visible STT_NOTYPE symbols in an executable section
 * that holds them, not mapping symbols; a typed function wins over a label alias.
 */
START_TEST(test_synth_labels)
{
	const struct tsym syms[] = {
		LABEL("kept", 0x1000),
		{ .name = "hidden", .value = 0x1100, .type = STT_NOTYPE, .vis = STV_HIDDEN },
		{ .name = "internal", .value = 0x1200, .type = STT_NOTYPE, .vis = STV_INTERNAL },
		{ .name = "protected",
		  .value = 0x1300,
		  .type = STT_NOTYPE,
		  .bind = STB_GLOBAL,
		  .vis = STV_PROTECTED },
		LABEL("$x", 0x1400),
		LABEL("$d.1", 0x1500),
		{ .name = "in_data",
		  .value = DATA_START + 0x10,
		  .type = STT_NOTYPE,
		  .sec = SEC_DATA },
		{ .name = "abs", .value = 0x1600, .type = STT_NOTYPE, .sec = SHN_ABS },
		/* At the end of .init (as _etext is at the end of .text): outside it. */
		{ .name = "_einit", .value = INIT_END, .type = STT_NOTYPE, .sec = SEC_INIT },
		/* Named .init but below it: not held by its section. */
		{ .name = "stray", .value = 0x700, .type = STT_NOTYPE, .sec = SEC_INIT },
		{ .name = "dyn_label",
		  .value = 0x1700,
		  .type = STT_NOTYPE,
		  .bind = STB_GLOBAL,
		  .dyn = true },
		/* Aliases: the typed local function beats the shorter global label. */
		{ .name = "a", .value = 0x1800, .type = STT_NOTYPE, .bind = STB_GLOBAL },
		{ .name = "typed_fn",
		  .value = 0x1800,
		  .size = 0x10,
		  .type = STT_FUNC,
		  .bind = STB_LOCAL },
		/* A label alias of a function of size 0: the function's name. */
		{ .name = "lab", .value = 0x1900, .type = STT_NOTYPE, .bind = STB_GLOBAL },
		{ .name = "zero_fn", .value = 0x1900, .type = STT_FUNC, .bind = STB_LOCAL },
		FN("end_fn", 0x1a00, 0x10),
	};
	struct sym_expect {
		uint64_t addr;
		const char *name;
	};
	static const struct sym_expect want[] = {
		{ 0x1000, "kept" },	 { 0x12ff, "kept" },	  { 0x1300, "protected" },
		{ 0x16ff, "protected" }, { 0x1700, "dyn_label" }, { 0x17ff, "dyn_label" },
		{ 0x1800, "typed_fn" },	 { 0x180f, "typed_fn" },  { 0x1810, NULL },
		{ 0x1900, "zero_fn" },	 { 0x19ff, "zero_fn" },	  { 0x1a00, "end_fn" },
		{ 0x700, NULL },	 { INIT_END, NULL },	  { DATA_START + 0x10, NULL },
	};
	struct report_symtab *t = synth_table(syms, ARRAY_SIZE(syms), true);

	/* kept, protected, dyn_label, typed_fn, zero_fn, end_fn. */
	ck_assert_uint_eq(report_symtab__nsyms(t), 6);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		expect_at(t, want[i].addr, want[i].name);
	ck_assert_ptr_null(report_symtab__find(t, "hidden"));
	ck_assert_ptr_null(report_symtab__find(t, "internal"));
	ck_assert_ptr_null(report_symtab__find(t, "$x"));
	ck_assert_ptr_null(report_symtab__find(t, "$d.1"));
	ck_assert_ptr_null(report_symtab__find(t, "in_data"));
	ck_assert_ptr_null(report_symtab__find(t, "abs"));
	ck_assert_ptr_null(report_symtab__find(t, "_einit"));
	ck_assert_ptr_null(report_symtab__find(t, "stray"));
	ck_assert_ptr_null(report_symtab__find(t, "a"));
	ck_assert_ptr_null(report_symtab__find(t, "lab"));
	/* The label's size 0 does not shrink the typed alias's size. */
	ck_assert_uint_eq(report_symtab__find(t, "typed_fn")->size, 0x10);
	report_symtab__free(t);
}
END_TEST

START_TEST(test_synth_dedupe)
{
	const struct tsym base[] = {
		/* Group 1: global beats the shorter weak and local. */
		{ .name = "gl_long",
		  .value = 0x2000,
		  .size = 0,
		  .type = STT_FUNC,
		  .bind = STB_GLOBAL },
		{ .name = "wk", .value = 0x2000, .size = 0x40, .type = STT_FUNC, .bind = STB_WEAK },
		{ .name = "lc", .value = 0x2000, .type = STT_FUNC, .bind = STB_LOCAL, .dyn = true },
		/* Group 2: globals: the shortest, then the smaller in byte order. */
		{ .name = "bb", .value = 0x3000, .size = 8, .type = STT_FUNC, .bind = STB_GLOBAL },
		{ .name = "abc", .value = 0x3000, .size = 8, .type = STT_FUNC, .bind = STB_GLOBAL },
		{ .name = "ab",
		  .value = 0x3000,
		  .size = 8,
		  .type = STT_FUNC,
		  .bind = STB_GLOBAL,
		  .dyn = true },
		{ .name = "aB",
		  .value = 0x3000,
		  .size = 8,
		  .type = STT_GNU_IFUNC,
		  .bind = STB_GLOBAL },
		/* Group 3: weak beats the shorter local. */
		{ .name = "w_long",
		  .value = 0x4000,
		  .size = 8,
		  .type = STT_FUNC,
		  .bind = STB_WEAK },
		{ .name = "l", .value = 0x4000, .size = 8, .type = STT_FUNC, .bind = STB_LOCAL },
		/* Group 4: one name in both tables. */
		{ .name = "same",
		  .value = 0x5000,
		  .size = 8,
		  .type = STT_FUNC,
		  .bind = STB_GLOBAL },
		{ .name = "same",
		  .value = 0x5000,
		  .size = 8,
		  .type = STT_FUNC,
		  .bind = STB_GLOBAL,
		  .dyn = true },
		/* Group 6: STB_GNU_UNIQUE counts as global. */
		{ .name = "uq_long",
		  .value = 0x7000,
		  .size = 8,
		  .type = STT_FUNC,
		  .bind = STB_GNU_UNIQUE },
		{ .name = "w", .value = 0x7000, .size = 8, .type = STT_FUNC, .bind = STB_WEAK },
		/* Group 5: local beats an unusual binding (STB_LOPROC; 10 is STB_GNU_UNIQUE). */
		{ .name = "os_bind",
		  .value = 0x6000,
		  .size = 8,
		  .type = STT_FUNC,
		  .bind = STB_LOPROC },
		{ .name = "local_long",
		  .value = 0x6000,
		  .size = 8,
		  .type = STT_FUNC,
		  .bind = STB_LOCAL },
	};
	struct tsym syms[ARRAY_SIZE(base)];
	const size_t n = ARRAY_SIZE(base);

	/* Every rotation, and every rotation reversed: the result is the same. */
	for (size_t rot = 0; rot < 2 * n; rot++) {
		struct report_symtab *t;
		const struct report_sym *s;

		for (size_t i = 0; i < n; i++) {
			size_t j = (i + rot) % n;

			syms[rot < n ? i : n - 1 - i] = base[j];
		}
		t = synth_table(syms, n, true);
		ck_assert_uint_eq(report_symtab__nsyms(t), 6);
		s = report_symtab__lookup(t, 0x2000);
		ck_assert_str_eq(s->name, "gl_long");
		/* The largest size of the aliases is kept. */
		ck_assert_uint_eq(s->size, 0x40);
		expect_at(t, 0x203f, "gl_long");
		expect_at(t, 0x2040, NULL);
		expect_at(t, 0x3000, "aB");
		expect_at(t, 0x4000, "w_long");
		expect_at(t, 0x5000, "same");
		expect_at(t, 0x6000, "local_long");
		expect_at(t, 0x7000, "uq_long");
		ck_assert_ptr_null(report_symtab__find(t, "wk"));
		ck_assert_ptr_null(report_symtab__find(t, "ab"));
		report_symtab__free(t);
	}
}
END_TEST

START_TEST(test_synth_hostile)
{
	const struct tsym syms[] = {
		FN("one", 0x1000, 0x10),
		{ .name = "obj", .value = 0x1800, .size = 8, .type = STT_OBJECT },
		FN("two", 0x2000, 0x10),
		FN("three", 0x3000, 0x10),
	};
	struct report_symtab *t = NULL;
	struct synth e;

#define FRESH() synth_build(&e, syms, ARRAY_SIZE(syms), true)
#define EXPECT(want)                                                                               \
	do {                                                                                       \
		ck_assert_int_eq(synth_open(&e, "hostile", &t), (want));                           \
		if ((want) == 0) {                                                                 \
			check_table(t, false);                                                     \
			report_symtab__free(t);                                                    \
		}                                                                                  \
		free(e.buf);                                                                       \
	} while (0)
	FRESH();
	EXPECT(0);
	/* A function's name outside its string table. */
	FRESH();
	synth_sym(&e, 3)->st_name = (uint32_t)e.strtab_size + 5;
	EXPECT(-ENOEXEC);
	FRESH();
	synth_sym(&e, 3)->st_name = (uint32_t)e.strtab_size;
	EXPECT(-ENOEXEC);
	/* ... but an object's bad name is never looked at. */
	FRESH();
	synth_sym(&e, 2)->st_name = 0xffffff;
	EXPECT(0);
	/* The string table does not end with a NUL (the last name runs off its end). */
	FRESH();
	e.buf[e.strtab_off + e.strtab_size - 1] = 'x';
	EXPECT(-ENOEXEC);
	/* Links to no section, section 0, and a section that is not a string table. */
	FRESH();
	synth_shdr(&e, SEC_SYMTAB)->sh_link = 99;
	EXPECT(-ENOEXEC);
	FRESH();
	synth_shdr(&e, SEC_SYMTAB)->sh_link = 0;
	EXPECT(-ENOEXEC);
	FRESH();
	synth_shdr(&e, SEC_SYMTAB)->sh_link = SEC_TEXT;
	EXPECT(-ENOEXEC);
	FRESH();
	synth_shdr(&e, SEC_DYNSYM)->sh_link = SEC_SYMTAB;
	EXPECT(-ENOEXEC);
	/* A table beyond the end of the file, or larger than it. */
	FRESH();
	synth_shdr(&e, SEC_SYMTAB)->sh_offset = e.len + 100;
	EXPECT(-ENOEXEC);
	FRESH();
	synth_shdr(&e, SEC_SYMTAB)->sh_offset = UINT64_MAX - 8;
	EXPECT(-ENOEXEC);
	FRESH();
	synth_shdr(&e, SEC_DYNSYM)->sh_size = UINT64_MAX / 2;
	EXPECT(-ENOEXEC);
	FRESH();
	synth_shdr(&e, SEC_STRTAB)->sh_size = e.len * 2;
	EXPECT(-ENOEXEC);
	/* Not a whole number of entries. */
	FRESH();
	synth_shdr(&e, SEC_SYMTAB)->sh_size += 5;
	EXPECT(-ENOEXEC);
	/* More sections than the file holds. */
	FRESH();
	((Elf64_Ehdr *)(void *)e.buf)->e_shnum = 200;
	EXPECT(-ENOEXEC);
	/* A string table of size 0: every name is outside it. */
	FRESH();
	synth_shdr(&e, SEC_STRTAB)->sh_size = 0;
	EXPECT(-ENOEXEC);
	/* An empty symbol table is no table of functions. */
	FRESH();
	synth_shdr(&e, SEC_SYMTAB)->sh_size = 0;
	ck_assert_int_eq(synth_open(&e, "hostile", &t), 0);
	ck_assert_int_eq(report_symtab__source(t), REPORT_SYM_NONE);
	report_symtab__free(t);
	free(e.buf);
	/* A huge symbol size is saturated, not wrapped. */
	FRESH();
	synth_sym(&e, 1)->st_size = UINT64_MAX;
	ck_assert_int_eq(synth_open(&e, "hostile", &t), 0);
	expect_at(t, 0x2000, "two");
	expect_at(t, 0x2010, "one");
	expect_at(t, UINT64_MAX - 1, "one");
	report_symtab__free(t);
	free(e.buf);
#undef EXPECT
#undef FRESH
}
END_TEST

/* ---- hostile copies of a real file ----------------------------------------------------- */

struct layout {
	size_t shoff, shend;
	size_t symtab_off, symtab_size;
	size_t strtab_off, strtab_size;
};

/* Where the section header table, .symtab and its .strtab are in the 64-bit file @buf. */
static void find_layout(const uint8_t *buf, size_t len, struct layout *l)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, str;

	ck_assert_uint_ge(len, sizeof(eh));
	memcpy(&eh, buf, sizeof(eh));
	ck_assert_uint_eq(eh.e_ident[EI_CLASS], ELFCLASS64);
	l->shoff = eh.e_shoff;
	l->shend = eh.e_shoff + (size_t)eh.e_shnum * sizeof(sh);
	ck_assert_uint_le(l->shend, len);
	l->symtab_size = 0;
	for (size_t i = 0; i < eh.e_shnum; i++) {
		memcpy(&sh, buf + l->shoff + i * sizeof(sh), sizeof(sh));
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		ck_assert_uint_lt(sh.sh_link, eh.e_shnum);
		memcpy(&str, buf + l->shoff + sh.sh_link * sizeof(sh), sizeof(sh));
		l->symtab_off = sh.sh_offset;
		l->symtab_size = sh.sh_size;
		l->strtab_off = str.sh_offset;
		l->strtab_size = str.sh_size;
	}
	ck_assert_uint_gt(l->symtab_size, 0);
	ck_assert_uint_le(l->symtab_off + l->symtab_size, len);
	ck_assert_uint_le(l->strtab_off + l->strtab_size, len);
}

static int probe(const char *path)
{
	struct report_symtab *t = NULL;
	int r = report_symtab__open(path, NULL, &t);

	REQUIRE(r <= 0, "positive result %d", r);
	if (r == 0) {
		check_table(t, false);
		report_symtab__free(t);
	}
	return r;
}

START_TEST(test_hostile_truncated)
{
	char small[PATH_MAX], p[PATH_MAX];
	struct layout l;
	uint8_t *buf;
	size_t len;
	int fd;

	if (!need_files())
		return;
	tpath(small, "small");
	tpath(p, "truncated");
	ck_assert(slurp(small, &buf, &len));
	find_layout(buf, len, &l);
	put_file(p, buf, len);
	ck_assert_int_eq(probe(p), 0);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	/*
	 * Shrink the file: every 61st length, every length in the section header table
	 * and within 16 bytes of the ends of .symtab and .strtab.
	 */
	for (size_t n = len; n-- > 0;) {
		bool near = (n >= l.shoff && n <= l.shend) ||
			    (n + 16 >= l.symtab_off && n <= l.symtab_off + 16) ||
			    (n + 16 >= l.symtab_off + l.symtab_size &&
			     n <= l.symtab_off + l.symtab_size + 16) ||
			    (n + 16 >= l.strtab_off && n <= l.strtab_off + 16) ||
			    (n + 16 >= l.strtab_off + l.strtab_size &&
			     n <= l.strtab_off + l.strtab_size + 16);
		int r;

		if (!near && n % 61 != 0)
			continue;
		ck_assert_int_eq(ftruncate(fd, (off_t)n), 0);
		r = probe(p);
		/* A cut section header table is corrupt, not a smaller table. */
		if (n < l.shend)
			REQUIRE(r == -ENOEXEC, "length %zu: %d", n, r);
	}
	close(fd);
	free(buf);
}
END_TEST

/* Flip 1 to 8 random bytes of @buf, mostly in the regions of @l. */
static void mutate(uint8_t *buf, size_t len, const struct layout *l)
{
	size_t nflip = 1 + rng() % 8;

	for (size_t k = 0; k < nflip; k++) {
		uint64_t pick = rng() % 100;
		size_t at;

		if (pick < 10)
			at = rng() % 64;
		else if (pick < 35)
			at = l->shoff + rng() % (l->shend - l->shoff);
		else if (pick < 70)
			at = l->symtab_off + rng() % l->symtab_size;
		else if (pick < 95)
			at = l->strtab_off + rng() % l->strtab_size;
		else
			at = rng() % len;
		/* Sometimes a plausible-looking value, mostly noise. */
		buf[at] = (rng() & 3) == 0 ? (uint8_t)(buf[at] ^ (1u << (rng() % 8)))
					   : (uint8_t)rng();
	}
}

START_TEST(test_hostile_mutated)
{
	char small[PATH_MAX], p[PATH_MAX];
	struct layout l;
	uint8_t *buf, *mut;
	size_t len;
	int ok = 0, bad = 0;

	if (!need_files())
		return;
	tpath(small, "small");
	tpath(p, "mutated");
	ck_assert(slurp(small, &buf, &len));
	find_layout(buf, len, &l);
	mut = malloc(len);
	ck_assert_ptr_nonnull(mut);
	for (int iter = 0; iter < 400; iter++) {
		memcpy(mut, buf, len);
		mutate(mut, len, &l);
		put_file(p, mut, len);
		if (probe(p) == 0)
			ok++;
		else
			bad++;
	}
	/* Both outcomes happen, or the mutations do not reach the tables. */
	ck_assert_int_gt(ok, 0);
	ck_assert_int_gt(bad, 0);
	free(mut);
	free(buf);
}
END_TEST

/* A corrupt debug file never fails the open of a sound image: it is skipped. */
START_TEST(test_hostile_debug)
{
	char dbg[PATH_MAX], img[PATH_MAX], dd[PATH_MAX], bp[PATH_MAX];
	struct report_sym_opts opts;
	struct layout l;
	uint8_t *buf, *mut;
	size_t len;
	int used = 0, skipped = 0;

	if (!need_files())
		return;
	tpath(dbg, "prog.debug");
	tpath(img, "stripped");
	tpath(dd, "hbid");
	bid_path(bp, "hbid");
	place(dbg, bp);
	opts = (struct report_sym_opts){ .debugdir = dd };
	ck_assert(slurp(dbg, &buf, &len));
	find_layout(buf, len, &l);
	mut = malloc(len);
	ck_assert_ptr_nonnull(mut);
	for (int iter = 0; iter < 150; iter++) {
		struct report_symtab *t = NULL;
		size_t cut;

		memcpy(mut, buf, len);
		mutate(mut, len, &l);
		/* Every 5th one is also truncated. */
		cut = iter % 5 == 0 ? rng() % len : len;
		put_file(bp, mut, cut);
		ck_assert_int_eq(report_symtab__open(img, &opts, &t), 0);
		check_table(t, false);
		if (report_symtab__source(t) == REPORT_SYM_DEBUG_BUILDID) {
			ck_assert_str_eq(report_symtab__debug_path(t), bp);
			used++;
		} else {
			ck_assert(fallback(report_symtab__source(t)));
			ck_assert_ptr_null(report_symtab__debug_path(t));
			skipped++;
		}
		report_symtab__free(t);
	}
	ck_assert_int_gt(used, 0);
	ck_assert_int_gt(skipped, 0);
	free(mut);
	free(buf);
}
END_TEST

START_TEST(test_hostile_garbage)
{
	uint8_t junk[8192];
	char p[PATH_MAX];

	tpath(p, "garbage");
	memcpy(junk, ELFMAG, SELFMAG);
	for (int iter = 0; iter < 100; iter++) {
		for (size_t i = SELFMAG; i < sizeof(junk); i++)
			junk[i] = (uint8_t)rng();
		junk[EI_CLASS] = (uint8_t)(1 + iter % 2);
		junk[EI_DATA] = (uint8_t)(1 + (iter / 2) % 2);
		junk[EI_VERSION] = EV_CURRENT;
		put_file(p, junk, 52 + (size_t)iter * 81);
		(void)probe(p);
	}
}
END_TEST

/* ---- kallsyms ------------------------------------------------------------------------- */

static int kallsyms_text(const char *text, size_t len, struct report_symtab **ret_t)
{
	char p[PATH_MAX];

	tpath(p, "kallsyms");
	put_file(p, text, len);
	return report_symtab__kallsyms(p, ret_t);
}

static struct report_symtab *kallsyms_ok(const char *text)
{
	struct report_symtab *t = NULL;
	int r = kallsyms_text(text, strlen(text), &t);

	ck_assert_msg(r == 0, "kallsyms: %d for:\n%s", r, text);
	check_table(t, true);
	return t;
}

static const char kallsyms_small[] = "ffffffff81000000 T startup_64\n"
				     "ffffffff81000000 T _stext\n"
				     "ffffffff81000000 t _head\n"
				     "ffffffff81000100 t secondary\n"
				     "ffffffff81000200 D some_data\n"
				     "ffffffff81000300 W weakfn\n"
				     "ffffffff81000400 T last_kernel\n"
				     "0000000000000000 A fixed_percpu_data\n"
				     "ffffffffc0001000 t mod_a_fn\t[ext4]\n"
				     "ffffffffc0001080 T mod_a_fn2\t[ext4]\n"
				     "ffffffffc0000800 b mod_bss\t[ext4]\n"
				     "ffffffffc0002000 t mod_b_fn\t[xfs]\n";

static void check_kallsyms_small(const struct report_symtab *t)
{
	static const struct maplog_elf_info zero;
	const struct report_sym *s, *s2;

	ck_assert_int_eq(report_symtab__source(t), REPORT_SYM_KALLSYMS);
	ck_assert_ptr_null(report_symtab__debug_path(t));
	ck_assert_mem_eq(report_symtab__info(t), &zero, sizeof(zero));
	ck_assert_uint_eq(report_symtab__nsyms(t), 7);
	expect_at(t, 0xffffffff80ffffffull, NULL);
	expect_at(t, 0xffffffff81000000ull, "_stext");
	expect_at(t, 0xffffffff810000ffull, "_stext");
	expect_at(t, 0xffffffff81000100ull, "secondary");
	/* Data symbols are not functions: secondary extends over some_data. */
	expect_at(t, 0xffffffff81000250ull, "secondary");
	expect_at(t, 0xffffffff81000300ull, "weakfn");
	/* The last kernel function extends to the first module function. */
	expect_at(t, 0xffffffffbfffffffull, "last_kernel");
	s = report_symtab__lookup(t, 0xffffffffc0001000ull);
	ck_assert_str_eq(s->name, "mod_a_fn");
	ck_assert_str_eq(s->module, "ext4");
	s2 = report_symtab__lookup(t, 0xffffffffc00010ffull);
	ck_assert_str_eq(s2->name, "mod_a_fn2");
	ck_assert_str_eq(s2->module, "ext4");
	/* One copy of a module name per run of functions of that module. */
	ck_assert_ptr_eq(s->module, s2->module);
	s = report_symtab__lookup(t, 0xffffffffc0002000ull + 4095);
	ck_assert_str_eq(s->name, "mod_b_fn");
	ck_assert_str_eq(s->module, "xfs");
	expect_at(t, 0xffffffffc0002000ull + 4096, NULL);
	ck_assert_ptr_null(report_symtab__lookup(t, UINT64_MAX));
	ck_assert_ptr_null(report_symtab__find(t, "_head"));
	ck_assert_ptr_null(report_symtab__find(t, "startup_64"));
	ck_assert_ptr_null(report_symtab__find(t, "some_data"));
	ck_assert_ptr_null(report_symtab__find(t, "mod_bss"));
	ck_assert_ptr_null(report_symtab__find(t, "last_kernel")->module);
	ck_assert_str_eq(report_symtab__find(t, "mod_a_fn2")->module, "ext4");
}

/*
 * Names demangled as perf and pprof print them: C++ as c++filt does; Rust's two
 * manglings (v0 "_R..." and legacy "_ZN...17h<hash>E", symbols of a real rustc
 * 1.95 build) without the crate disambiguators and the hash; C names and
 * malformed ones left alone (NULL).
 */
START_TEST(test_demangle)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "_ZN3foo3barEi", "foo::bar(int)" },
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi",
		  "std::vector<int, std::allocator<int> >::push_back(int const&)" },
		{ "_RNvCskK7mfDs1mzF_1m4main", "m::main" },
		{ "_RINvCskK7mfDs1mzF_1m7genericmEB2_", "m::generic::<u32>" },
		{ "_RNvMNtCskK7mfDs1mzF_1m5outerNtB2_5Thing4spin", "<m::outer::Thing>::spin" },
		{ "_ZN1m5outer5Thing4spin17h699616a1186e801eE", "m::outer::Thing::spin" },
		{ "_ZN1m4main17h4009bc0cd8b193aaE", "m::main" },
		/* a C++ name that looks like legacy Rust but for its hash: C++ */
		{ "_ZN1m4main4hxyzE", "m::main::hxyz" },
	};
	static const char *const left[] = { "main", "_start", "__libc_start_main", "_R", "_Rx",
					    "_Z", "_ZN", "foo__bar", NULL };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char *got = report_demangle(cases[i].in);

		ck_assert_msg(got && strcmp(got, cases[i].want) == 0, "%s: %s, not %s", cases[i].in,
			      got ? got : "(not demangled)", cases[i].want);
		free(got);
	}
	for (i = 0; left[i]; i++) {
		char *got = report_demangle(left[i]);

		ck_assert_msg(!got, "%s: demangled as %s", left[i], got);
	}
	ck_assert_ptr_null(report_demangle(NULL));
}
END_TEST

START_TEST(test_kallsyms_basic)
{
	struct report_symtab *t;
	char text[sizeof(kallsyms_small)];

	t = kallsyms_ok(kallsyms_small);
	check_kallsyms_small(t);
	report_symtab__free(t);
	/* Without the final newline. */
	memcpy(text, kallsyms_small, sizeof(kallsyms_small));
	text[strlen(text) - 1] = '\0';
	t = kallsyms_ok(text);
	check_kallsyms_small(t);
	report_symtab__free(t);
	/* 32-bit addresses, upper-case hex, a zero-address text symbol among real ones. */
	t = kallsyms_ok("c1000000 T start\n"
			"C10000A0 t Other\n"
			"00000000 T hidden\n");
	ck_assert_uint_eq(report_symtab__nsyms(t), 2);
	expect_at(t, 0xc10000a0, "Other");
	expect_at(t, 0xc100009f, "start");
	ck_assert_ptr_null(report_symtab__find(t, "hidden"));
	report_symtab__free(t);
	/* Names of bytes outside ASCII, and names that look like modules. */
	t = kallsyms_ok("ffffffff81000000 T caf\xc3\xa9\n"
			"ffffffff81000010 T [weird]\t[mod.x-1]\n");
	ck_assert_str_eq(report_symtab__sym(t, 0)->name, "caf\xc3\xa9");
	ck_assert_str_eq(report_symtab__sym(t, 1)->name, "[weird]");
	ck_assert_str_eq(report_symtab__sym(t, 1)->module, "mod.x-1");
	report_symtab__free(t);
}
END_TEST

START_TEST(test_kallsyms_dedupe)
{
	static const char *const group[] = {
		"ffffffff81000000 T bbb\n",
		"ffffffff81000000 W aa\n",
		"ffffffff81000000 t a\n",
		"ffffffff81000000 T bba\n",
	};
	static const int perm[][4] = {
		{ 0, 1, 2, 3 }, { 3, 2, 1, 0 }, { 1, 0, 3, 2 }, { 2, 3, 0, 1 }, { 1, 3, 2, 0 },
	};

	for (size_t k = 0; k < ARRAY_SIZE(perm); k++) {
		char text[512];
		struct report_symtab *t;

		text[0] = '\0';
		for (int i = 0; i < 4; i++)
			strcat(text, group[perm[k][i]]);
		strcat(text, "ffffffff81000100 W zz\n"
			     "ffffffff81000100 t y\n"
			     "ffffffff81000200 T ab\n"
			     "ffffffff81000200 T aa\t[m]\n"
			     "ffffffff81000200 T aa\n"
			     "ffffffff81000200 T abc\n");
		t = kallsyms_ok(text);
		ck_assert_uint_eq(report_symtab__nsyms(t), 3);
		ck_assert_str_eq(report_symtab__sym(t, 0)->name, "bba");
		ck_assert_str_eq(report_symtab__sym(t, 1)->name, "zz");
		ck_assert_str_eq(report_symtab__sym(t, 2)->name, "aa");
		ck_assert_ptr_null(report_symtab__sym(t, 2)->module);
		report_symtab__free(t);
	}
}
END_TEST

START_TEST(test_kallsyms_errors)
{
	static const char *const bad[] = {
		"zzzz T a\n",
		"ffff  T a\n",
		"ffff T  a\n",
		"ffff T\n",
		"ffff T \n",
		"ffff TT a\n",
		"ffff T a\t[mod\n",
		"ffff T a\t[]\n",
		"ffff T a\t\n",
		"ffff T a b\n",
		"ffff T a\tmod\n",
		"ffff T a\t[mod]x\n",
		"ffff T a\t[mod] \n",
		"ffff T a \n",
		"11111111111111111 T a\n",
		"\n",
		"ffff T a\r\n",
		" ffff T a\n",
		"0xffff T a\n",
		"ffff\n",
		"ffff",
		"ffff T a\t[m]\t[n]\n",
		"ffff \x01 a\n",
		"-fff T a\n",
	};
	static const char good[] = "ffffffff81000000 T good\n";
	struct report_symtab *t, *const sentinel = (struct report_symtab *)&rng_state;
	char text[256], p[PATH_MAX];

	t = sentinel;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		/* Alone, after a good line, and before one. */
		(void)snprintf(text, sizeof(text), "%s", bad[i]);
		ck_assert_msg(kallsyms_text(text, strlen(text), &t) == -EPROTO, "accepted '%s'",
			      bad[i]);
		(void)snprintf(text, sizeof(text), "%s%s", good, bad[i]);
		ck_assert_msg(kallsyms_text(text, strlen(text), &t) == -EPROTO, "accepted '%s'",
			      bad[i]);
		(void)snprintf(text, sizeof(text), "%s%s%s", good, bad[i], good);
		ck_assert_msg(kallsyms_text(text, strlen(text), &t) == -EPROTO, "accepted '%s'",
			      bad[i]);
	}
	/* A NUL inside a name. */
	{
		static const char nul[] = "ffffffff81000000 T go\0od\n";

		ck_assert_int_eq(kallsyms_text(nul, sizeof(nul) - 1, &t), -EPROTO);
	}
	/* kptr_restrict: every address is 0. */
	ck_assert_int_eq(kallsyms_text("0000000000000000 T a\n0000000000000000 t b\n"
				       "0000000000000000 D c\n",
				       3 * 21, &t),
			 -ENODATA);
	ck_assert_int_eq(kallsyms_text("", 0, &t), -ENODATA);
	ck_assert_int_eq(kallsyms_text("ffffffff81000000 D data\nffffffff81000100 b bss\n", 47, &t),
			 -ENODATA);
	tpath(p, "no-such-kallsyms");
	ck_assert_int_eq(report_symtab__kallsyms(p, &t), -ENOENT);
	ck_assert_int_eq(report_symtab__kallsyms(tmpdir, &t), -ENOEXEC);
	ck_assert_int_eq(report_symtab__kallsyms(NULL, &t), -EINVAL);
	ck_assert_ptr_eq(t, sentinel);
}
END_TEST

/* A file of kallsyms' size: 120k lines, about 5 MB; every 10th line a data symbol. */
START_TEST(test_kallsyms_large)
{
	enum { NLINES = 120000 };
	const uint64_t base = 0xffffffff81000000ull;
	const uint64_t mbase = 0xffffffffc0000000ull;
	char p[PATH_MAX];
	struct report_symtab *t;
	FILE *f;
	size_t ntext = 0;

	tpath(p, "kallsyms-large");
	f = fopen(p, "we");
	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < NLINES; i++) {
		/* Lines come in pairs in swapped order: the file need not be sorted. */
		size_t j = i ^ 1;
		bool mod = j >= NLINES - 20000;
		uint64_t a = mod ? mbase + (j - (NLINES - 20000)) * 0x40 : base + j * 0x40;
		char type = j % 10 == 5 ? 'D' : j % 3 ? 't' : 'T';

		if (mod)
			fprintf(f, "%016llx %c a_rather_long_function_name_%06zu\t[module_%zu]\n",
				(unsigned long long)a, type, j, (j / 1000) % 7);
		else
			fprintf(f, "%016llx %c a_rather_long_function_name_%06zu\n",
				(unsigned long long)a, type, j);
		if (type != 'D')
			ntext++;
	}
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(report_symtab__kallsyms(p, &t), 0);
	ck_assert_uint_eq(report_symtab__nsyms(t), ntext);
	check_table(t, true);
	for (int k = 0; k < 5000; k++) {
		size_t j = rng() % NLINES;
		bool mod = j >= NLINES - 20000;
		uint64_t a = (mod ? mbase + (j - (NLINES - 20000)) * 0x40 : base + j * 0x40) + 0x3f;
		const struct report_sym *s = report_symtab__lookup(t, a);
		char want[64];

		/* A data symbol's range belongs to the function before it. */
		(void)snprintf(want, sizeof(want), "a_rather_long_function_name_%06zu",
			       j % 10 == 5 ? j - 1 : j);
		REQUIRE(s != NULL && strcmp(s->name, want) == 0, "%#llx: '%s', expected '%s'",
			(unsigned long long)a, s ? s->name : "(none)", want);
		if (mod) {
			char wmod[32];

			(void)snprintf(wmod, sizeof(wmod), "module_%zu",
				       ((j % 10 == 5 ? j - 1 : j) / 1000) % 7);
			REQUIRE(s->module && strcmp(s->module, wmod) == 0, "%s: module '%s'", want,
				s->module ? s->module : "(none)");
		} else {
			REQUIRE(s->module == NULL, "%s: module '%s'", want, s->module);
		}
	}
	report_symtab__free(t);
	ck_assert_int_eq(unlink(p), 0);
}
END_TEST

START_TEST(test_kallsyms_proc)
{
	struct report_symtab *t = NULL;
	int r = report_symtab__kallsyms("/proc/kallsyms", &t);

	/* Unprivileged, kptr_restrict zeroes every address; without /proc, no file. */
	ck_assert_msg(r == 0 || r == -ENODATA || r == -ENOENT || r == -EACCES, "/proc/kallsyms: %d",
		      r);
	if (r == 0) {
		ck_assert_uint_gt(report_symtab__nsyms(t), 100);
		check_table(t, true);
		report_symtab__free(t);
	}
}
END_TEST

/* ---- DWARF (report-dwarf.c): inline chains and lines ------------------------------- */

static volatile int dw_sink;
static unsigned dw_line_probe, dw_line_mid;

__attribute__((noinline)) static void *dw_probe(void)
{
	dw_sink++;
	return __builtin_return_address(0);
}

/* Exists only inlined into dw_outer(): the return address of dw_probe() is in it. */
static inline __attribute__((always_inline)) void *dw_mid(void)
{
	dw_line_probe = __LINE__ + 1;
	void *ra = dw_probe();

	dw_sink++;
	return ra;
}

__attribute__((noinline)) static void *dw_outer(void)
{
	dw_line_mid = __LINE__ + 1;
	void *ra = dw_mid();

	dw_sink++;
	return ra;
}

static int dw_bias_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uint64_t *)arg = info->dlpi_addr; /* the first object is the program */
	return 1;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && strcmp(s + a - b, tail) == 0;
}

START_TEST(test_dwarf_inline)
{
	struct report_dwarf *d = NULL;
	struct report_dwarf_frame fr[4];
	uint64_t bias = 0, link;
	size_t units, indexed;
	void *ra = dw_outer();

	(void)dl_iterate_phdr(dw_bias_cb, &bias);
	link = (uint64_t)(uintptr_t)ra - 1 - bias; /* the call instruction, in link addresses */
	ck_assert_int_eq(report_dwarf__open(exe_path, &d), 0);
	report_dwarf__stats(d, &units, &indexed);
	ck_assert_uint_ge(units, 1);
	ck_assert_uint_eq(indexed, 0);
	ck_assert_uint_eq(report_dwarf__frames(d, link, fr, 4), 2);
	ck_assert_str_eq(fr[0].name, "dw_mid");
	ck_assert_uint_eq(fr[0].line, dw_line_probe);
	ck_assert_str_eq(fr[1].name, "dw_outer");
	ck_assert_uint_eq(fr[1].line, dw_line_mid);
	for (int i = 0; i < 2; i++)
		ck_assert_msg(fr[i].file && fr[i].file[0] == '/' &&
			      ends_with(fr[i].file, "test-report-sym.c"),
			      "frame %d file '%s'", i, fr[i].file ? fr[i].file : "(null)");
	/* Only the unit of the address had its functions indexed. */
	report_dwarf__stats(d, &units, &indexed);
	ck_assert_uint_eq(indexed, 1);
	/* Room for one: the innermost is written, the count says there are two. */
	memset(fr, 0, sizeof(fr));
	ck_assert_uint_eq(report_dwarf__frames(d, link, fr, 1), 2);
	ck_assert_str_eq(fr[0].name, "dw_mid");
	ck_assert_ptr_null(fr[1].name);
	/* dw_probe itself: one frame, no inlining. */
	ck_assert_uint_eq(report_dwarf__frames(d, (uint64_t)(uintptr_t)dw_probe - bias, fr, 4), 1);
	ck_assert_str_eq(fr[0].name, "dw_probe");
	/* An address of no unit. */
	ck_assert_uint_eq(report_dwarf__frames(d, 0, fr, 4), 0);
	ck_assert_uint_eq(report_dwarf__frames(NULL, link, fr, 4), 0);
	report_dwarf__free(d);
	report_dwarf__free(NULL);
}
END_TEST

START_TEST(test_dwarf_errors)
{
	struct report_dwarf *d = (struct report_dwarf *)&dw_line_mid; /* must become NULL */
	char p[PATH_MAX];

	tpath(p, "no-such-file");
	ck_assert_int_eq(report_dwarf__open(p, &d), -ENOENT);
	ck_assert_ptr_null(d);
	/* A FIFO is never opened (nobody writes to it: it would block), nor /dev/zero. */
	tpath(p, "dw-fifo");
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	alarm(20);
	ck_assert_int_eq(report_dwarf__open(p, &d), -ENOEXEC);
	alarm(0);
	ck_assert_int_eq(report_dwarf__open("/dev/zero", &d), -ENOEXEC);
	ck_assert_int_eq(report_dwarf__open(tmpdir, &d), -ENOEXEC);
	tpath(p, "dw-text");
	put_file(p, "#!/bin/sh\necho hello\n", 21);
	ck_assert_int_eq(report_dwarf__open(p, &d), -ENOEXEC);
	/* ELF without DWARF. */
	if (have_tool("objcopy")) {
		tpath(p, "dw-nodwarf");
		ck_assert(objcopy("--strip-debug", exe_path, p));
		ck_assert_int_eq(report_dwarf__open(p, &d), -ENODATA);
		ck_assert_ptr_null(d);
	}
}
END_TEST

/* ---- JIT maps (perf-PID.map) ---------------------------------------------------------- */

START_TEST(test_perfmap)
{
	static const char map[] = "7f0000001000 100 JS:*hot /a.js:1\n"
				  "junk\n"
				  "0x7f0000002000 0x20 LazyCompile:~with spaces /b.js:2\n"
				  "7f0000003000 0 zero-size\n"
				  "7f0000004000 10";
	struct report_symtab *t = NULL;
	const struct report_sym *s;
	char p[PATH_MAX];
	size_t bad = 99;

	tpath(p, "perf-1.map");
	put_file(p, map, sizeof(map) - 1);
	ck_assert_int_eq(report_symtab__perfmap(p, true, &bad, &t), 0);
	ck_assert_uint_eq(bad, 3); /* junk, the size-0 line and the cut-off last line */
	ck_assert_uint_eq(report_symtab__nsyms(t), 2);
	ck_assert_int_eq(report_symtab__source(t), REPORT_SYM_PERFMAP);
	s = report_symtab__lookup(t, 0x7f00000010ff);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "JS:*hot /a.js:1");
	s = report_symtab__lookup(t, 0x7f0000002010);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "LazyCompile:~with spaces /b.js:2");
	ck_assert_ptr_null(report_symtab__lookup(t, 0x7f0000001100)); /* past its size */
	ck_assert_ptr_null(report_symtab__lookup(t, 0x7f0000002020));
	report_symtab__free(t);
	/* Nothing usable; not a regular file; missing. */
	tpath(p, "perf-2.map");
	put_file(p, "x y z\n", 6);
	ck_assert_int_eq(report_symtab__perfmap(p, true, NULL, &t), -ENODATA);
	tpath(p, "perf-3.map");
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	alarm(20);
	ck_assert_int_eq(report_symtab__perfmap(p, true, NULL, &t), -ENOEXEC);
	alarm(0);
	tpath(p, "perf-4.map");
	ck_assert_int_eq(report_symtab__perfmap(p, true, NULL, &t), -ENOENT);
	/* Owned by another user: refused with the check, read without it (root only). */
	if (geteuid() == 0) {
		tpath(p, "perf-1.map");
		ck_assert_int_eq(chown(p, 65534, 65534), 0);
		ck_assert_int_eq(report_symtab__perfmap(p, true, NULL, &t), -EPERM);
		ck_assert_int_eq(report_symtab__perfmap(p, false, NULL, &t), 0);
		report_symtab__free(t);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("report-sym");
	TCase *tc_self = tcase_create("self");
	TCase *tc_debug = tcase_create("debug-files");
	TCase *tc_open = tcase_create("open");
	TCase *tc_synth = tcase_create("synthetic-elf");
	TCase *tc_hostile = tcase_create("hostile");
	TCase *tc_kall = tcase_create("kallsyms");
	TCase *tc_dwarf = tcase_create("dwarf-and-jit-maps");
	SRunner *sr;
	ssize_t n;
	int failed;

	n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
	if (n <= 0) {
		perror("test-report-sym: /proc/self/exe");
		return 1;
	}
	exe_path[n] = '\0';
	(void)snprintf(tmpdir, sizeof(tmpdir), "%s/test-report-sym-XXXXXX",
		       getenv("TMPDIR") && strlen(getenv("TMPDIR")) < 128 ? getenv("TMPDIR")
									  : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("test-report-sym: mkdtemp");
		return 1;
	}

	tcase_add_test(tc_self, test_self_symtab);
	tcase_add_test(tc_self, test_self_proc_and_small);
	tcase_add_test(tc_self, test_self_init);
	tcase_add_test(tc_self, test_ldso_start);
	suite_add_tcase(s, tc_self);

	tcase_add_test(tc_debug, test_debug_buildid);
	tcase_add_test(tc_debug, test_debug_link);
	tcase_add_test(tc_debug, test_debug_order);
	tcase_add_test(tc_debug, test_debug_mismatch);
	tcase_add_test(tc_debug, test_symfs);
	tcase_add_test(tc_debug, test_crc_known);
	tcase_add_test(tc_debug, test_debug_bid_equal);
	tcase_add_test(tc_debug, test_debug_bid_differs);
	tcase_add_test(tc_debug, test_debug_sparse);
	tcase_add_test(tc_debug, test_debug_crc_cap);
	tcase_add_test(tc_debug, test_debuginfod_memo);
	tcase_set_timeout(tc_debug, 60);
	suite_add_tcase(s, tc_debug);

	tcase_add_test(tc_dwarf, test_dwarf_inline);
	tcase_add_test(tc_dwarf, test_perfmap);
	tcase_add_test(tc_dwarf, test_dwarf_errors);
	suite_add_tcase(s, tc_dwarf);

	tcase_add_test(tc_open, test_open_errors);
	tcase_add_test(tc_open, test_api);
	suite_add_tcase(s, tc_open);

	tcase_add_test(tc_synth, test_synth_filter);
	tcase_add_test(tc_synth, test_synth_edges);
	tcase_add_test(tc_synth, test_synth_overlap);
	tcase_add_test(tc_synth, test_synth_random);
	tcase_add_test(tc_synth, test_synth_size0);
	tcase_add_test(tc_synth, test_synth_labels);
	tcase_add_test(tc_synth, test_synth_dedupe);
	tcase_add_test(tc_synth, test_synth_hostile);
	tcase_set_timeout(tc_synth, 60);
	suite_add_tcase(s, tc_synth);

	tcase_add_test(tc_hostile, test_hostile_truncated);
	tcase_add_test(tc_hostile, test_hostile_mutated);
	tcase_add_test(tc_hostile, test_hostile_debug);
	tcase_add_test(tc_hostile, test_hostile_garbage);
	tcase_set_timeout(tc_hostile, 120);
	suite_add_tcase(s, tc_hostile);

	tcase_add_test(tc_kall, test_demangle);
	tcase_add_test(tc_kall, test_kallsyms_basic);
	tcase_add_test(tc_kall, test_kallsyms_dedupe);
	tcase_add_test(tc_kall, test_kallsyms_errors);
	tcase_add_test(tc_kall, test_kallsyms_large);
	tcase_add_test(tc_kall, test_kallsyms_proc);
	tcase_set_timeout(tc_kall, 60);
	suite_add_tcase(s, tc_kall);

	/* The objcopy-made files are made once, before any test runs, and removed at the end. */
	prepare();
	if (prep != PREP_OK)
		fprintf(stderr, "test-report-sym: %s\n", prep_why);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	rm_tree(tmpdir);
	return failed ? 1 : 0;
}
