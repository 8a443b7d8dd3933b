/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-unwind.c: Check suite for src/unwind (include/hwpmcd/unwind.h).
 *
 * The test unwinds its own stack, as Linux perf's dwarf-unwind test does: a chain
 * of named functions, called from a qsort() comparator so that libc frames sit in
 * the middle, ends in unwt_capture(), which stores the user registers in perf's
 * regs[] order with inline assembly, parses /proc/self/maps (the caller's model at
 * "sample time") and copies 8 KiB of its stack from SP through /proc/self/mem, as
 * the kernel copies a sample's stack (so neither ASan nor memcheck sees the reads
 * of other frames).  The PCs the unwinder returns are symbolized through the test
 * binary's .symtab (libelf) and dladdr(), and the exact sequence of names is
 * asserted.  Under ASan, qsort() is ASan's interceptor, so the frames between the
 * comparator and its caller belong to libasan instead of libc.
 *
 * Signal frames are real: the handler is entered on return from a tgkill system
 * call issued by inline assembly in a named function, once through glibc's
 * __restore_rt (which has CFI) and once through a CFI-less trampoline of our own
 * installed with SA_RESTORER (as musl's is), which the unwinder must recognize by
 * its code.  valgrind gives its client no vDSO, so the vDSO test then checks only
 * that a "[vdso]" mapping has no image.
 *
 * The chain functions carry __attribute__((noipa, optimize("omit-frame-pointer"))):
 * no inlining or cloning (their names stay exact), no frame pointer (only DWARF can
 * unwind them), and each does work after its call (no tail calls).  The test runs
 * in the build's own flags (-O2 or not, sanitizers or not).
 *
 * main() builds tests/unwind-data/unwind-lib.c into a temporary directory with cc:
 * with unwind tables (for the replaced-file and LRU tests), with only
 * .debug_frame and frame pointers (for the frame-pointer fallback), and linked by
 * LLD (for its packed layout).  If cc or ld.lld is missing, those tests fail:
 * scripts/bootstrap installs both.
 */
#include <check.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hwpmcd/log.h"
#include "hwpmcd/unwind.h"
#include "unwind-int.h"
#include "../unwind-data/capture-regs.h"

#if defined(TEST_DATA_DIR)
#define UNWIND_DATA_DIR TEST_DATA_DIR "/../unwind-data"
#else
#define UNWIND_DATA_DIR "tests/unwind-data"
#endif

#define UNWT_FN	    __attribute__((noipa, optimize("omit-frame-pointer")))
#define STACK_BYTES 8192
#define MAPS_MAX    1024
#define PATH_BYTES  512
#define MAXPCS	    128
#define EXTRA_MAX   16

/* ---- the model: /proc/self/maps at capture time ---- */

struct tmaps {
	struct maplog_map m[MAPS_MAX];
	bool exec[MAPS_MAX];
	char path[MAPS_MAX][PATH_BYTES];
	size_t n;
	bool exec_only; /* answer like the collector's model: executable mappings only */
	unsigned long calls;
};

static void maps_load(struct tmaps *t)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[PATH_BYTES + 128];

	t->n = 0;
	if (!f)
		return;
	while (t->n < MAPS_MAX && fgets(line, sizeof(line), f)) {
		uint64_t start, end, off, ino;
		unsigned int maj, min;
		char perms[8];
		int pos = 0;
		char *p, *nl;
		size_t i = t->n;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &start, &end, perms, &off, &maj, &min, &ino, &pos) < 7)
			continue;
		p = line + pos;
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		nl = strstr(p, " (deleted)");
		if (nl && nl[10] == '\0')
			*nl = '\0';
		snprintf(t->path[i], PATH_BYTES, "%s", p);
		t->m[i].start = start;
		t->m[i].end = end;
		t->m[i].pgoff = off;
		t->m[i].dev = makedev(maj, min);
		t->m[i].inode = ino;
		t->m[i].path = t->path[i];
		t->m[i].pid = getpid();
		t->exec[i] = perms[2] == 'x';
		t->n++;
	}
	fclose(f);
}

static const struct maplog_map *tmaps_find(void *ctx, int32_t pid, uint64_t addr)
{
	struct tmaps *t = ctx;

	(void)pid;
	t->calls++;
	for (size_t i = 0; i < t->n; i++) {
		if (addr >= t->m[i].start && addr < t->m[i].end)
			return t->exec_only && !t->exec[i] ? NULL : &t->m[i];
	}
	return NULL;
}

/* An address range of @size bytes that no mapping of the table overlaps (fake files go there). */
static uint64_t tmaps_free_range(const struct tmaps *t, uint64_t size)
{
	for (uint64_t a = 0x100000000000ULL; a < 0x7f0000000000ULL; a += 1ULL << 36) {
		bool clash = false;

		for (size_t i = 0; i < t->n && !clash; i++)
			clash = a < t->m[i].end && t->m[i].start < a + size;
		if (!clash)
			return a;
	}
	ck_abort_msg("no free address range");
	return 0;
}

static const struct maplog_map *tmaps_by_path(const struct tmaps *t, const char *needle)
{
	for (size_t i = 0; i < t->n; i++) {
		if (strstr(t->path[i], needle))
			return &t->m[i];
	}
	return NULL;
}

/* ---- the capture ---- */

struct capture {
	uint64_t regs[UNWIND_NR_REGS];
	uint64_t buf[1 + STACK_BYTES / 8]; /* buf[0] is spare room for a fake callee frame */
	uint64_t dyn;
	struct tmaps maps;
};

static volatile int g_sink;

/*
 * Copy @n bytes of this process's memory at @src through /proc/self/mem, as the
 * kernel copies a sample's stack: no sanitizer sees the reads of other frames'
 * slots, and memcheck takes the copied bytes as defined (they are, to the kernel).
 * Opened per call: after Check's fork(), the file must belong to the child.
 * Returns the bytes copied, short at the end of the mapping.
 */
static uint64_t mem_copy(void *dst, uint64_t src, uint64_t n)
{
	int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	ssize_t got;

	if (fd < 0)
		return 0;
	got = pread(fd, dst, (size_t)n, (off_t)src);
	close(fd);
	return got > 0 ? (uint64_t)got : 0;
}

/*
 * Store the registers in perf's order with CAPTURE_USER_REGS (IP - 1 has IP's CFI
 * row: the vDSO test uses IP as a return address), then the maps and the stack.
 */
UNWT_FN static void unwt_capture(struct capture *c)
{
	uint64_t *r = c->regs;
	uint64_t sp, top = 0;

	CAPTURE_USER_REGS(r);
	sp = r[7];
	maps_load(&c->maps);
	for (size_t i = 0; i < c->maps.n; i++) {
		if (sp >= c->maps.m[i].start && sp < c->maps.m[i].end)
			top = c->maps.m[i].end;
	}
	/* The registers pass through the kernel too (memcheck: some were never written). */
	mem_copy(r, (uint64_t)(uintptr_t)r, sizeof(c->regs));
	c->dyn = mem_copy(c->buf + 1, sp, top - sp < STACK_BYTES ? top - sp : STACK_BYTES);
	g_sink++;
}

UNWT_FN static int unwt_chain_3(struct capture *c)
{
	unwt_capture(c);
	return g_sink + 3;
}

UNWT_FN static int unwt_chain_2(struct capture *c)
{
	return unwt_chain_3(c) + g_sink;
}

UNWT_FN static int unwt_chain_1(struct capture *c)
{
	return unwt_chain_2(c) + g_sink;
}

static struct capture *g_cap;
static int g_cap_pending;

UNWT_FN static int unwt_compare(const void *a, const void *b)
{
	if (g_cap_pending) {
		g_cap_pending = 0;
		g_sink += unwt_chain_1(g_cap);
	}
	return *(const int *)a - *(const int *)b;
}

UNWT_FN static void unwt_run_qsort(struct capture *c)
{
	int arr[2] = { 2, 1 };

	g_cap = c;
	g_cap_pending = 1;
	qsort(arr, 2, sizeof(arr[0]), unwt_compare);
	g_sink += arr[0];
}

static struct capture *capture_new(void)
{
	struct capture *c = calloc(1, sizeof(*c));

	ck_assert_ptr_nonnull(c);
	return c;
}

static void sample_from(struct rec_sample *s, const struct capture *c)
{
	memset(s, 0, sizeof(*s));
	s->mode = REC_MODE_USER;
	s->ip = c->regs[8];
	s->regs_abi = UNWIND_REGS_ABI_64;
	s->nr_regs = UNWIND_NR_REGS;
	memcpy(s->regs, c->regs, sizeof(c->regs));
	s->stack = (const uint8_t *)(c->buf + 1);
	s->stack_size = STACK_BYTES;
	s->stack_dyn_size = c->dyn;
}

/* ---- symbolization ---- */

struct sym {
	uint64_t lo, hi;
	char name[64];
};

static struct sym *g_syms;
static size_t g_nsyms;
static uint64_t g_exe_bias;

static void syms_load(void)
{
	Dl_info di;
	Elf *e;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	int fd;

	if (g_syms)
		return;
	ck_assert(dladdr((void *)(uintptr_t)syms_load, &di) != 0);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(gelf_getehdr(e, &eh));
	g_exe_bias = eh.e_type == ET_DYN ? (uint64_t)(uintptr_t)di.dli_fbase : 0;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || sh.sh_entsize == 0)
			continue;
		d = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		g_syms = calloc(n, sizeof(*g_syms));
		ck_assert_ptr_nonnull(g_syms);
		for (size_t i = 0; d && i < n; i++) {
			GElf_Sym s;
			const char *name;
			char *dot;

			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_shndx == SHN_UNDEF || s.st_value == 0)
				continue;
			name = elf_strptr(e, sh.sh_link, s.st_name);
			if (!name)
				continue;
			g_syms[g_nsyms].lo = s.st_value + g_exe_bias;
			g_syms[g_nsyms].hi = s.st_value + g_exe_bias + (s.st_size ? s.st_size : 1);
			snprintf(g_syms[g_nsyms].name, sizeof(g_syms[0].name), "%s", name);
			/* unwt_x.part.0 and friends: the name before the first dot. */
			dot = strchr(g_syms[g_nsyms].name, '.');
			if (dot && dot != g_syms[g_nsyms].name)
				*dot = '\0';
			g_nsyms++;
		}
		break;
	}
	elf_end(e);
	close(fd);
	ck_assert_uint_gt(g_nsyms, 0);
}

/*
 * The function holding @pc: the test binary's .symtab first, then dladdr() for the
 * test library's unwl_* functions; any other object is named "<basename>", since its
 * exported symbols do not name its internal functions.
 */
static void sym_name(uint64_t pc, char *out, size_t len)
{
	Dl_info di;

	for (size_t i = 0; i < g_nsyms; i++) {
		if (pc >= g_syms[i].lo && pc < g_syms[i].hi) {
			snprintf(out, len, "%s", g_syms[i].name);
			return;
		}
	}
	if (dladdr((void *)(uintptr_t)pc, &di) && di.dli_fname) {
		const char *base = strrchr(di.dli_fname, '/');

		base = base ? base + 1 : di.dli_fname;
		if (di.dli_sname && strncmp(di.dli_sname, "unwl_", 5) == 0)
			snprintf(out, len, "%s", di.dli_sname);
		else
			snprintf(out, len, "<%s>", base);
		return;
	}
	snprintf(out, len, "?%" PRIx64, pc);
}

/* "<libc.so.6>", or under ASan "<libasan.so.8>", whose interceptor is qsort(). */
static void qsort_label(char *out, size_t len)
{
	void *fn;
	uint64_t pc;

	syms_load();
	fn = (void *)(uintptr_t)qsort;
	memcpy(&pc, &fn, sizeof(pc));
	sym_name(pc, out, len);
}

struct names {
	char n[MAXPCS][64];
	int count;
};

/* Return addresses are symbolized at PC - 1: a call can be a function's last instruction. */
static struct names *names_new(void)
{
	struct names *nm = calloc(1, sizeof(*nm));

	ck_assert_ptr_nonnull(nm);
	return nm;
}

static void symbolize(const uint64_t *pcs, int n, struct names *out)
{
	syms_load();
	out->count = n;
	for (int i = 0; i < n; i++) {
		sym_name(i == 0 ? pcs[i] : pcs[i] - 1, out->n[i], sizeof(out->n[i]));
		/* A signal handler returns to a trampoline's first byte: name that one. */
		if (i > 0 && out->n[i][0] == '<')
			sym_name(pcs[i], out->n[i], sizeof(out->n[i]));
	}
}

static void names_print(const char *what, const struct names *nm, enum unwind_outcome o)
{
	fprintf(stderr, "%s: %d frames, %s:", what, nm->count, unwind_outcome_name(o));
	for (int i = 0; i < nm->count; i++)
		fprintf(stderr, " %s", nm->n[i]);
	fprintf(stderr, "\n");
}

/*
 * Assert that @nm starts with the exact names of @want, where "<qsort>+" stands for
 * one or more frames of the object that implements qsort().  Returns the index
 * after the match.
 */
static int names_expect(const struct names *nm, const char *const *want, size_t nwant)
{
	char lib[64];
	int i = 0;

	qsort_label(lib, sizeof(lib));
	for (size_t k = 0; k < nwant; k++) {
		if (strcmp(want[k], "<qsort>+") == 0) {
			ck_assert_msg(i < nm->count && strcmp(nm->n[i], lib) == 0,
				      "frame %d: '%s', want a frame of %s", i,
				      i < nm->count ? nm->n[i] : "(none)", lib);
			while (i < nm->count && strcmp(nm->n[i], lib) == 0)
				i++;
			continue;
		}
		ck_assert_msg(i < nm->count && strcmp(nm->n[i], want[k]) == 0,
			      "frame %d: '%s', want '%s'", i, i < nm->count ? nm->n[i] : "(none)",
			      want[k]);
		i++;
	}
	return i;
}

static struct unwind_ctx *ctx_new(size_t budget, struct tmaps *t)
{
	struct unwind_ctx *u = NULL;

	ck_assert_int_eq(unwind_ctx__new(budget, tmaps_find, t, &u), 0);
	ck_assert_ptr_nonnull(u);
	return u;
}

static int do_unwind(struct unwind_ctx *u, const struct rec_sample *s, uint64_t *pcs, uint32_t max,
		     enum unwind_outcome *o)
{
	int n;

	*o = UNWIND_OUTCOME_MAX;
	n = unwind_ctx__unwind(u, getpid(), s, pcs, max, o);
	ck_assert_int_ge(n, 0);
	ck_assert_int_le(n, (int)max);
	ck_assert_int_lt(*o, UNWIND_OUTCOME_MAX);
	return n;
}

/* The reference: the qsort chain captured once per test process. */
static const char *const self_want[] = {
	"unwt_capture", "unwt_chain_3", "unwt_chain_2",	  "unwt_chain_1",
	"unwt_compare", "<qsort>+",	"unwt_run_qsort",
};

static void check_self_tail(const struct names *nm, int from, enum unwind_outcome o)
{
	/* Past the test function: check's runner, main, libc's start code, _start. */
	if (o == UNWIND_COMPLETE)
		ck_assert_str_eq(nm->n[nm->count - 1], "_start");
	else
		ck_assert_int_eq(o, UNWIND_TRUNCATED);
	for (int i = from; i < nm->count; i++)
		ck_assert_msg(nm->n[i][0] != '?', "frame %d unsymbolized: %s", i, nm->n[i]);
}

START_TEST(test_self_chain)
{
	struct capture *c = capture_new();
	uint64_t pcs[MAXPCS], pcs2[MAXPCS];
	struct rec_sample s;
	enum unwind_outcome o, o2;
	struct unwind_ctx *u;
	struct names *nm = names_new();
	int n, n2, i;

	unwt_run_qsort(c);
	sample_from(&s, c);
	u = ctx_new(0, &c->maps);
	n = do_unwind(u, &s, pcs, MAXPCS, &o);
	symbolize(pcs, n, nm);
	names_print("self", nm, o);
	ck_assert_uint_eq(pcs[0], c->regs[8]);
	i = names_expect(nm, self_want, sizeof(self_want) / sizeof(self_want[0]));
	ck_assert_int_lt(i, n);
	ck_assert_str_eq(nm->n[i], "test_self_chain_fn");
	check_self_tail(nm, i, o);
	/* All of it came from DWARF: no frame-pointer guesses, no evictions. */
	ck_assert_uint_eq(unwind_ctx__stats(u)->fp_steps, 0);
	ck_assert_uint_eq(unwind_ctx__stats(u)->elf_evicted, 0);
	ck_assert_uint_ge(unwind_ctx__stats(u)->elf_opened, 2); /* the test binary and libc */
	ck_assert_uint_eq(unwind_ctx__stats(u)->samples, 1);
	ck_assert_uint_eq(unwind_ctx__stats(u)->outcomes[o], 1);

	/* A model with executable mappings only (the collector's): the same PCs. */
	c->maps.exec_only = true;
	unwind_ctx__flush(u, getpid());
	n2 = do_unwind(u, &s, pcs2, MAXPCS, &o2);
	ck_assert_int_eq(n2, n);
	ck_assert_int_eq(o2, o);
	ck_assert_mem_eq(pcs2, pcs, (size_t)n * sizeof(pcs[0]));
	unwind_ctx__free(u);

	u = ctx_new(0, &c->maps);
	n2 = do_unwind(u, &s, pcs2, MAXPCS, &o2);
	ck_assert_int_eq(n2, n);
	ck_assert_mem_eq(pcs2, pcs, (size_t)n * sizeof(pcs[0]));
	c->maps.exec_only = false;

	/* The caller's depth limit: the first PCs, then UNWIND_DEPTH. */
	n2 = do_unwind(u, &s, pcs2, 3, &o2);
	ck_assert_int_eq(n2, 3);
	ck_assert_int_eq(o2, UNWIND_DEPTH);
	ck_assert_mem_eq(pcs2, pcs, 3 * sizeof(pcs[0]));
	n2 = do_unwind(u, &s, pcs2, 1, &o2);
	ck_assert_int_eq(n2, 1);
	ck_assert_int_eq(o2, UNWIND_DEPTH);
	n2 = do_unwind(u, &s, pcs2, (uint32_t)n, &o2);
	ck_assert_int_eq(n2, n);
	ck_assert_int_eq(o2, o); /* exactly enough room: the walk still ends as before */
	unwind_ctx__free(u);
	free(nm);
	free(c);
}
END_TEST

static void *throughput_run(void *label)
{
	struct capture *c = capture_new();
	uint64_t pcs[MAXPCS], ref[MAXPCS];
	struct rec_sample s;
	enum unwind_outcome o, ro;
	struct unwind_ctx *u;
	struct timespec t0, t1;
	const int rounds = 10000;
	int n, rn = 0;
	double secs;

	unwt_run_qsort(c);
	sample_from(&s, c);
	u = ctx_new(0, &c->maps);
	rn = do_unwind(u, &s, ref, MAXPCS, &ro);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int k = 0; k < rounds; k++) {
		n = unwind_ctx__unwind(u, getpid(), &s, pcs, MAXPCS, &o);
		if (n != rn || o != ro || memcmp(pcs, ref, (size_t)n * sizeof(pcs[0])) != 0)
			ck_abort_msg("round %d: %d frames (%s), want %d (%s)", k, n,
				     unwind_outcome_name(o), rn, unwind_outcome_name(ro));
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(stderr, "throughput: %d unwinds of %d frames in %.3f s: %.0f samples/s (cached%s)\n",
		rounds, rn, secs, rounds / secs, (const char *)label);
	ck_assert_uint_eq(unwind_ctx__stats(u)->outcomes[ro], (uint64_t)rounds + 1);
	unwind_ctx__free(u);
	free(c);
	return NULL;
}

static void *blocked_throughput(void *arg)
{
	(void)arg;
	ck_assert_int_eq(unwind_block_all_signals(), 0);
	return throughput_run(", every signal blocked: no sigprocmask syscalls");
}

START_TEST(test_throughput)
{
	pthread_t t;

	throughput_run("");
	ck_assert_int_eq(pthread_create(&t, NULL, blocked_throughput, NULL), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
}
END_TEST

static bool blocked_now(int sig)
{
	sigset_t now;

	ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, NULL, &now), 0);
	return sigismember(&now, sig) == 1;
}

/* The sigprocmask() shortcut (unwind-sigmask.c) behaves as the real call does. */
static void *sigmask_thread(void *arg)
{
	sigset_t full, usr1, old;

	(void)arg;
	sigfillset(&full);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	ck_assert(!blocked_now(SIGUSR1));
	ck_assert_int_eq(unwind_block_all_signals(), 0);
	ck_assert(blocked_now(SIGUSR1) && blocked_now(SIGTERM));
	/* What libunwind does around its lock: answered from the recorded mask. */
	ck_assert_int_eq(sigprocmask(SIG_SETMASK, &full, &old), 0);
	ck_assert(sigismember(&old, SIGUSR1) == 1 && sigismember(&old, SIGKILL) == 0);
	ck_assert_int_eq(sigprocmask(SIG_SETMASK, &old, NULL), 0);
	ck_assert_int_eq(sigprocmask(SIG_BLOCK, &usr1, &old), 0);
	ck_assert(sigismember(&old, SIGTERM) == 1);
	ck_assert_int_eq(sigprocmask(SIG_SETMASK, NULL, &old), 0);
	ck_assert(sigismember(&old, SIGUSR1) == 1);
	/* A bad request still fails as it should. */
	errno = 0;
	ck_assert_int_eq(sigprocmask(12345, &full, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* Unblocking is real, and ends the shortcut: later calls reach the kernel. */
	ck_assert_int_eq(sigprocmask(SIG_UNBLOCK, &usr1, NULL), 0);
	ck_assert(!blocked_now(SIGUSR1) && blocked_now(SIGTERM));
	ck_assert_int_eq(sigprocmask(SIG_BLOCK, &usr1, &old), 0);
	ck_assert(sigismember(&old, SIGUSR1) == 0);
	ck_assert(blocked_now(SIGUSR1));
	/* A SIG_SETMASK that leaves a signal out unblocks it. */
	ck_assert_int_eq(unwind_block_all_signals(), 0);
	sigdelset(&full, SIGUSR1);
	ck_assert_int_eq(sigprocmask(SIG_SETMASK, &full, NULL), 0);
	ck_assert(!blocked_now(SIGUSR1));
	return NULL;
}

START_TEST(test_sigmask_shortcut)
{
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, sigmask_thread, NULL), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
}
END_TEST

START_TEST(test_truncated_prefix)
{
	struct capture *c = capture_new();
	uint64_t ref[MAXPCS], pcs[MAXPCS];
	struct rec_sample s;
	enum unwind_outcome ro, o;
	struct unwind_ctx *u;
	int rn, last = 1, between = 0;

	unwt_run_qsort(c);
	sample_from(&s, c);
	u = ctx_new(0, &c->maps);
	rn = do_unwind(u, &s, ref, MAXPCS, &ro);
	ck_assert_int_gt(rn, 6);
	/* A snapshot of X bytes that the kernel filled completely: a prefix, then TRUNCATED. */
	for (uint64_t x = 0; x <= c->dyn; x += 8) {
		int n;

		s.stack_size = s.stack_dyn_size = x;
		n = do_unwind(u, &s, pcs, MAXPCS, &o);
		ck_assert_int_ge(n, 1);
		ck_assert_mem_eq(pcs, ref, (size_t)n * sizeof(pcs[0]));
		ck_assert_int_ge(n, last);
		if (n < rn)
			ck_assert_msg(o == UNWIND_TRUNCATED, "x=%" PRIu64 ": %d frames, %s", x, n,
				      unwind_outcome_name(o));
		else
			ck_assert_int_eq(o, ro);
		if (n > 1 && n < rn)
			between++;
		last = n;
	}
	ck_assert_int_eq(last, rn);
	ck_assert_int_gt(between, 0);

	/* dyn_size < stack_size: the kernel reached the end of the stack; a read past it
	 * is no truncation but a read in no mapping. */
	s.stack_size = STACK_BYTES;
	s.stack_dyn_size = 64;
	ck_assert_int_lt(do_unwind(u, &s, pcs, MAXPCS, &o), rn);
	ck_assert_int_eq(o, UNWIND_NO_MAP);
	unwind_ctx__free(u);
	free(c);
}
END_TEST

START_TEST(test_no_regs)
{
	struct capture *c = capture_new();
	uint64_t pcs[8];
	struct rec_sample s;
	enum unwind_outcome o;
	struct unwind_ctx *u;

	unwt_run_qsort(c);
	u = ctx_new(0, &c->maps);
	sample_from(&s, c);
	s.regs_abi = 0;
	ck_assert_int_eq(do_unwind(u, &s, pcs, 8, &o), 0);
	ck_assert_int_eq(o, UNWIND_NO_REGS);
	sample_from(&s, c);
	s.nr_regs = 0;
	ck_assert_int_eq(do_unwind(u, &s, pcs, 8, &o), 0);
	ck_assert_int_eq(o, UNWIND_NO_REGS);
	sample_from(&s, c);
	s.nr_regs = REC_REGS_USER_MAX;
	ck_assert_int_eq(do_unwind(u, &s, pcs, 8, &o), 0);
	ck_assert_int_eq(o, UNWIND_NO_REGS);
	/* A 32-bit task: only the sampled IP. */
	sample_from(&s, c);
	s.regs_abi = 1;
	ck_assert_int_eq(do_unwind(u, &s, pcs, 8, &o), 1);
	ck_assert_int_eq(o, UNWIND_ERROR);
	ck_assert_uint_eq(pcs[0], c->regs[8]);
	/* No room at all. */
	sample_from(&s, c);
	ck_assert_int_eq(do_unwind(u, &s, NULL, 0, &o), 0);
	ck_assert_int_eq(o, UNWIND_DEPTH);
	/* Programming errors. */
	o = UNWIND_OUTCOME_MAX;
	ck_assert_int_eq(unwind_ctx__unwind(NULL, 1, &s, pcs, 8, &o), -EINVAL);
	ck_assert_int_eq(unwind_ctx__unwind(u, 1, NULL, pcs, 8, &o), -EINVAL);
	ck_assert_int_eq(unwind_ctx__unwind(u, 1, &s, NULL, 8, &o), -EINVAL);
	ck_assert_int_eq(unwind_ctx__unwind(u, 1, &s, pcs, 8, NULL), -EINVAL);
	ck_assert_int_eq(o, UNWIND_OUTCOME_MAX);
	ck_assert_int_eq(unwind_ctx__new(0, NULL, NULL, &u), -EINVAL);
	ck_assert_uint_eq(unwind_ctx__stats(u)->outcomes[UNWIND_NO_REGS], 3);
	ck_assert_uint_eq(unwind_ctx__stats(u)->samples, 5);
	ck_assert_str_eq(unwind_outcome_name(UNWIND_REPLACED), "replaced");
	ck_assert_str_eq(unwind_outcome_name(UNWIND_OUTCOME_MAX), "?");
	unwind_ctx__free(u);
	unwind_ctx__free(NULL);
	free(c);
}
END_TEST

START_TEST(test_no_map)
{
	uint64_t base;
	struct capture *c = capture_new();
	uint64_t pcs[8];
	struct rec_sample s;
	enum unwind_outcome o;
	struct unwind_ctx *u;

	unwt_run_qsort(c);
	u = ctx_new(0, &c->maps);
	sample_from(&s, c);
	s.regs[8] = 0x1000; /* no mapping there */
	ck_assert_int_eq(do_unwind(u, &s, pcs, 8, &o), 1);
	ck_assert_int_eq(o, UNWIND_NO_MAP);
	ck_assert_uint_eq(pcs[0], 0x1000);
	s.regs[8] = 0;
	ck_assert_int_eq(do_unwind(u, &s, pcs, 8, &o), 1);
	ck_assert_int_eq(o, UNWIND_NO_MAP);
	/* A mapping whose file does not exist: no info for its PCs, and no crash. */
	base = tmaps_free_range(&c->maps, 0x10000);
	c->maps.m[c->maps.n] = (struct maplog_map){ .start = base,
						    .end = base + 0x10000,
						    .dev = makedev(254, 0),
						    .inode = 12345,
						    .path = "/nonexistent/libgone.so",
						    .pid = getpid() };
	c->maps.n++;
	sample_from(&s, c);
	s.regs[8] = base + 0x1234;
	for (int k = 0; k < 3; k++) {
		ck_assert_int_eq(do_unwind(u, &s, pcs, 8, &o), 1);
		ck_assert_int_eq(o, UNWIND_NO_INFO);
	}
	ck_assert_uint_eq(unwind_ctx__stats(u)->elf_opened, 0);
	unwind_ctx__free(u);
	free(c);
}
END_TEST

static uint64_t xorshift(uint64_t *st)
{
	uint64_t x = *st;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*st = x;
	return x;
}

START_TEST(test_garbage)
{
	struct capture *c = capture_new();
	uint64_t *stack = malloc(STACK_BYTES);
	uint64_t ref[MAXPCS], pcs[MAXPCS], st = 0x9e3779b97f4a7c15ULL;
	struct rec_sample s;
	enum unwind_outcome o;
	struct unwind_ctx *u;
	int rn;

	ck_assert_ptr_nonnull(stack);
	unwt_run_qsort(c);
	u = ctx_new(0, &c->maps);
	sample_from(&s, c);
	rn = do_unwind(u, &s, ref, MAXPCS, &o);

	/* No snapshot at all, or one that says it has bytes it does not. */
	sample_from(&s, c);
	s.stack = NULL;
	ck_assert_int_ge(do_unwind(u, &s, pcs, MAXPCS, &o), 1);
	ck_assert_int_eq(o, UNWIND_TRUNCATED);
	sample_from(&s, c);
	s.stack_dyn_size = 0;
	do_unwind(u, &s, pcs, MAXPCS, &o);
	sample_from(&s, c);
	s.stack_dyn_size = UINT64_MAX; /* more than stack_size: clamped */
	ck_assert_int_eq(do_unwind(u, &s, pcs, MAXPCS, &o), rn);
	/* SP at the top of the address space: the snapshot would wrap. */
	sample_from(&s, c);
	s.regs[7] = UINT64_MAX - 16;
	do_unwind(u, &s, pcs, MAXPCS, &o);

	/* Random registers and stacks salted with plausible return addresses. */
	for (int k = 0; k < 3000; k++) {
		uint64_t sp = c->regs[7];

		sample_from(&s, c);
		for (size_t i = 0; i < STACK_BYTES / 8; i++) {
			uint64_t r = xorshift(&st);

			switch (r % 8) {
			case 0:
				stack[i] = ref[r % (uint64_t)rn];
				break;
			case 1:
				stack[i] = sp + (r >> 8) % STACK_BYTES;
				break;
			case 2:
				stack[i] = c->buf[1 + i];
				break;
			default:
				stack[i] = xorshift(&st);
				break;
			}
		}
		s.stack = (const uint8_t *)stack;
		s.stack_dyn_size = xorshift(&st) % (STACK_BYTES + 1);
		s.stack_size = xorshift(&st) % 2 ? s.stack_dyn_size : STACK_BYTES;
		if (k % 3 == 0)
			s.regs[8] = ref[xorshift(&st) % (uint64_t)rn];
		if (k % 5 == 0)
			s.regs[8] = xorshift(&st);
		if (k % 7 == 0)
			s.regs[7] = xorshift(&st);
		if (k % 11 == 0)
			s.regs[6] = sp + xorshift(&st) % STACK_BYTES;
		do_unwind(u, &s, pcs, 1 + (uint32_t)(xorshift(&st) % MAXPCS), &o);
	}
	unwind_ctx__free(u);
	free(stack);
	free(c);
}
END_TEST

/* ---- files built at run time ---- */

static char g_tmpdir[64];
static char g_lib_eh[PATH_MAX], g_lib_fp[PATH_MAX], g_lib_lld[PATH_MAX];
static bool g_have_libs, g_have_lld;

static int run_cmd(char *const argv[])
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void build_libs(void)
{
	char src[PATH_MAX];
	char *eh[] = { "cc", "-O2",    "-fPIC", "-shared", "-fomit-frame-pointer",
		       "-o", g_lib_eh, src,	NULL };
	char *fp[] = { "cc",
		       "-O2",
		       "-fPIC",
		       "-shared",
		       "-g",
		       "-fno-omit-frame-pointer",
		       "-fno-asynchronous-unwind-tables",
		       "-fno-unwind-tables",
		       "-o",
		       g_lib_fp,
		       src,
		       NULL };
	char *lld[] = { "cc",  "-O2", "-fPIC",     "-shared", "-fomit-frame-pointer", "-fuse-ld=lld",
			"-o", g_lib_lld, src, NULL };

	snprintf(g_tmpdir, sizeof(g_tmpdir), "/tmp/hwpmcd-test-unwind-XXXXXX");
	if (!mkdtemp(g_tmpdir)) {
		perror("mkdtemp");
		abort();
	}
	snprintf(src, sizeof(src), "%s/unwind-lib.c", UNWIND_DATA_DIR);
	snprintf(g_lib_eh, sizeof(g_lib_eh), "%s/lib-eh.so", g_tmpdir);
	snprintf(g_lib_fp, sizeof(g_lib_fp), "%s/lib-fp.so", g_tmpdir);
	snprintf(g_lib_lld, sizeof(g_lib_lld), "%s/lib-lld.so", g_tmpdir);
	if (access(src, R_OK) != 0) {
		fprintf(stderr, "test-unwind: %s not found: library tests skipped\n", src);
		return;
	}
	if (run_cmd(eh) != 0 || run_cmd(fp) != 0) {
		fprintf(stderr, "test-unwind: cannot build %s with cc: library tests skipped\n",
			src);
		return;
	}
	g_have_libs = true;
	if (run_cmd(lld) != 0)
		fprintf(stderr, "test-unwind: cannot link %s with -fuse-ld=lld\n", src);
	else
		g_have_lld = true;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	ssize_t n;

	ck_assert_int_ge(in, 0);
	ck_assert_int_ge(out, 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
}

typedef int (*unwl_cb_fn)(void *arg);
typedef int (*unwl_outer_fn)(unwl_cb_fn cb, void *arg);

UNWT_FN static int unwt_lib_cb(void *arg)
{
	unwt_capture(arg);
	return g_sink + 1;
}

UNWT_FN static int unwt_call_lib(unwl_outer_fn outer, struct capture *c)
{
	return outer(unwt_lib_cb, c) + g_sink;
}

static void *lib_open(const char *path, unwl_outer_fn *ret_outer)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	void *sym;

	ck_assert_msg(h != NULL, "dlopen %s: %s", path, dlerror());
	sym = dlsym(h, "unwl_outer");
	ck_assert_ptr_nonnull(sym);
	memcpy(ret_outer, &sym, sizeof(*ret_outer));
	return h;
}

static const char *const lib_want[] = {
	"unwt_capture", "unwt_lib_cb", "unwl_inner", "unwl_outer", "unwt_call_lib",
};

/*
 * Unwind @s, a capture through one of the test libraries, and check the chain: the
 * library's frames (lib_want), then @self_fn and the test's own tail, with @fp_steps
 * frames stepped by frame pointer.
 */
static void lib_chain_check(struct unwind_ctx *u, const struct rec_sample *s, const char *label,
			    const char *self_fn, uint64_t fp_steps)
{
	struct names *nm = names_new();
	uint64_t pcs[MAXPCS];
	enum unwind_outcome o;
	int n, i;

	n = do_unwind(u, s, pcs, MAXPCS, &o);
	symbolize(pcs, n, nm);
	names_print(label, nm, o);
	i = names_expect(nm, lib_want, sizeof(lib_want) / sizeof(lib_want[0]));
	ck_assert_str_eq(nm->n[i], self_fn);
	check_self_tail(nm, i, o);
	ck_assert_uint_eq(unwind_ctx__stats(u)->fp_steps, fp_steps);
	free(nm);
}

START_TEST(test_replaced)
{
	struct capture *c;
	uint64_t pcs[MAXPCS], ref[MAXPCS];
	char path[128], tmp[128];
	struct unwind_ctx *u, *warm;
	enum unwind_outcome o, ro;
	struct rec_sample s;
	unwl_outer_fn outer;
	struct names *nm;
	struct stat st0, st1;
	void *h;
	int n, rn, i;

	/* scripts/bootstrap installs cc: a missing library is a broken test machine. */
	ck_assert_msg(g_have_libs, "the test libraries could not be built (see stderr)");
	c = capture_new();
	nm = names_new();
	snprintf(path, sizeof(path), "%s/repl.so", g_tmpdir);
	snprintf(tmp, sizeof(tmp), "%s/repl.so.new", g_tmpdir);
	copy_file(g_lib_eh, path);
	h = lib_open(path, &outer);
	unwt_call_lib(outer, c);
	sample_from(&s, c);

	/* While the library is mapped: a full unwind through it; warm caches it. */
	warm = ctx_new(0, &c->maps);
	rn = do_unwind(warm, &s, ref, MAXPCS, &ro);
	symbolize(ref, rn, nm);
	names_print("lib", nm, ro);
	i = names_expect(nm, lib_want, sizeof(lib_want) / sizeof(lib_want[0]));
	ck_assert_str_eq(nm->n[i], "test_replaced_fn");
	ck_assert_int_eq(unwind_ctx__stats(warm)->fp_steps, 0);

	/* The process unmaps it and the file is replaced by another (a new inode). */
	ck_assert_int_eq(stat(path, &st0), 0);
	dlclose(h);
	copy_file(g_lib_fp, tmp);
	ck_assert_int_eq(rename(tmp, path), 0);
	ck_assert_int_eq(stat(path, &st1), 0);
	ck_assert_uint_ne(st0.st_ino, st1.st_ino);

	/* A fresh unwinder finds only the new file: it refuses it after the lib frame. */
	u = ctx_new(0, &c->maps);
	for (int k = 0; k < 2; k++) {
		n = do_unwind(u, &s, pcs, MAXPCS, &o);
		ck_assert_int_eq(o, UNWIND_REPLACED);
		ck_assert_int_eq(n, 3);
		ck_assert_mem_eq(pcs, ref, 3 * sizeof(pcs[0]));
	}
	ck_assert_uint_eq(unwind_ctx__stats(u)->outcomes[UNWIND_REPLACED], 2);
	unwind_ctx__free(u);

	/* The unwinder that cached the old file by identity still unwinds correctly. */
	unwind_ctx__flush(warm, getpid());
	n = do_unwind(warm, &s, pcs, MAXPCS, &o);
	ck_assert_int_eq(o, ro);
	ck_assert_int_eq(n, rn);
	ck_assert_mem_eq(pcs, ref, (size_t)n * sizeof(pcs[0]));
	unwind_ctx__free(warm);
	free(nm);
	free(c);
}
END_TEST

/*
 * One page of a sparse 1 GiB file that is not an ELF image, mapped: only its first
 * chunk is read, no-info for its PCs, and not tried again for another process
 * (issue 13, item 4: an 8 GiB sparse file took the daemon to 9.47 GB, once per pid).
 */
START_TEST(test_huge_file)
{
	struct capture *c = capture_new();
	char path[128];
	uint64_t pcs[8], base;
	struct rec_sample s;
	enum unwind_outcome o;
	struct unwind_ctx *u;
	struct rusage ru0, ru1;
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/huge.so", g_tmpdir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "\177ELF", 4), 4);
	ck_assert_int_eq(ftruncate(fd, (off_t)1 << 30), 0);
	close(fd);
	ck_assert_int_eq(stat(path, &st), 0);
	unwt_run_qsort(c);
	u = ctx_new(0, &c->maps);
	base = tmaps_free_range(&c->maps, 0x10000);
	c->maps.m[c->maps.n] = (struct maplog_map){ .start = base,
						    .end = base + 0x10000,
						    .dev = st.st_dev,
						    .inode = st.st_ino,
						    .path = path,
						    .pid = getpid() };
	c->maps.n++;
	sample_from(&s, c);
	s.regs[8] = base + 0x1234;
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru0), 0);
	for (int k = 0; k < 3; k++) {
		ck_assert_int_eq(do_unwind(u, &s, pcs, 8, &o), 1);
		ck_assert_int_eq(o, UNWIND_NO_INFO);
	}
	/* Not copied: the peak RSS grew by far less than the file (KiB here). */
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru1), 0);
	ck_assert_int_lt(ru1.ru_maxrss - ru0.ru_maxrss, 64 * 1024);
	/* Another process mapping the same file: the refusal holds, nothing is read. */
	c->maps.m[c->maps.n - 1].pid = getppid();
	unwind_ctx__flush(u, getpid());
	ck_assert_int_eq(do_unwind(u, &s, pcs, 8, &o), 1);
	ck_assert_int_eq(o, UNWIND_NO_INFO);
	ck_assert_uint_eq(unwind_ctx__stats(u)->elf_reads, 1);
	ck_assert_uint_eq(unwind_ctx__stats(u)->elf_opened, 0);
	ck_assert_uint_eq(unwind_ctx__stats(u)->elf_bytes, 0);
	unwind_ctx__free(u);
	unlink(path);
	free(c);
}
END_TEST

/*
 * A library of 1 GiB (its own bytes, then a sparse hole), unwound by an unwinder
 * whose budget is 64 KiB: the same PCs as with the default budget, and only the
 * chunks that unwinding read are held (whole files were copied until the soak
 * bench of issue 14 showed a 32 MiB cache evicting a big binary per sample).
 */
START_TEST(test_big_file_small_budget)
{
	struct capture *c;
	uint64_t pcs[MAXPCS], ref[MAXPCS];
	char path[128];
	enum unwind_outcome o, ro;
	struct rec_sample s;
	unwl_outer_fn outer;
	struct unwind_ctx *u, *big;
	const struct unwind_stats *st;
	struct rusage ru0, ru1;
	struct names *nm;
	void *h;
	int n, rn;

	/* scripts/bootstrap installs cc: a missing library is a broken test machine. */
	ck_assert_msg(g_have_libs, "the test libraries could not be built (see stderr)");
	c = capture_new();
	nm = names_new();
	snprintf(path, sizeof(path), "%s/big.so", g_tmpdir);
	copy_file(g_lib_eh, path);
	ck_assert_int_eq(truncate(path, (off_t)1 << 30), 0);
	h = lib_open(path, &outer);
	unwt_call_lib(outer, c);
	sample_from(&s, c);
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru0), 0);

	big = ctx_new(0, &c->maps);
	rn = do_unwind(big, &s, ref, MAXPCS, &ro);
	symbolize(ref, rn, nm);
	names_expect(nm, lib_want, sizeof(lib_want) / sizeof(lib_want[0]));
	ck_assert_int_eq(ro, UNWIND_COMPLETE);
	ck_assert_uint_eq(unwind_ctx__stats(big)->elf_too_big, 0);
	/* A few chunks of each file, not the 1 GiB one (nor this program, nor libc) whole. */
	ck_assert_uint_lt(unwind_ctx__stats(big)->elf_bytes, 1u << 20);
	unwind_ctx__free(big);

	u = ctx_new(64 << 10, &c->maps);
	st = unwind_ctx__stats(u);
	for (int k = 0; k < 3; k++) {
		/* Rounds 2 and 3 begin with no file open: chunks read again reopen them. */
		if (k > 0) {
			unwind_ctx__close_files(u);
			ck_assert_uint_eq(u->nfds, 0);
		}
		unwind_ctx__flush(u, getpid());
		n = do_unwind(u, &s, pcs, MAXPCS, &o);
		ck_assert_int_eq(o, ro);
		ck_assert_int_eq(n, rn);
		ck_assert_mem_eq(pcs, ref, (size_t)n * sizeof(pcs[0]));
		ck_assert_uint_le(st->elf_bytes, (64u << 10) + UNWIND_CHUNK);
	}
	fprintf(stderr, "big file, 64 KiB budget: opened %" PRIu64 " evicted %" PRIu64
			" chunks read %" PRIu64 " dropped %" PRIu64 " held %" PRIu64 " bytes\n",
		st->elf_opened, st->elf_evicted, st->elf_reads, st->elf_dropped, st->elf_bytes);
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru1), 0);
	ck_assert_int_lt(ru1.ru_maxrss - ru0.ru_maxrss, 64 * 1024);
	unwind_ctx__free(u);
	dlclose(h);
	unlink(path);
	free(nm);
	free(c);
}
END_TEST

/*
 * A library truncated in place after the unwinder opened it (its owner can): a
 * chunk it does not hold cannot be read back.  The short read marks the image
 * gone, and walks through it end "replaced" at its frames with the frames before
 * them intact; nothing is read from a mapping of the file (which would raise
 * SIGBUS).  The file truncated is a copy of the library the process runs (with a
 * 1 MiB tail, so that the unwinder holds only a part of it), which the model's
 * mapping names instead: this test process must not lose its own pages.
 */
START_TEST(test_truncated_file)
{
	struct capture *c;
	uint64_t pcs[MAXPCS], ref[MAXPCS], v;
	char run[128], path[128];
	enum unwind_outcome o, ro;
	struct maplog_map *m = NULL;
	struct unwind_image *img;
	struct rec_sample s;
	unwl_outer_fn outer;
	struct unwind_ctx *u;
	struct stat st;
	void *h;
	int n, rn;

	/* scripts/bootstrap installs cc: a missing library is a broken test machine. */
	ck_assert_msg(g_have_libs, "the test libraries could not be built (see stderr)");
	c = capture_new();
	snprintf(run, sizeof(run), "%s/trunc-run.so", g_tmpdir);
	snprintf(path, sizeof(path), "%s/trunc.so", g_tmpdir);
	copy_file(g_lib_eh, run);
	copy_file(g_lib_eh, path);
	ck_assert_int_eq(truncate(path, 1 << 20), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	h = lib_open(run, &outer);
	unwt_call_lib(outer, c);
	sample_from(&s, c);
	for (size_t i = 0; i < c->maps.n; i++) {
		if (strcmp(c->maps.m[i].path, run) == 0 && c->maps.exec[i])
			m = &c->maps.m[i];
	}
	ck_assert_ptr_nonnull(m);
	/* The copy, by a range no map_files link has, so it is found by its path. */
	snprintf(c->maps.path[m - c->maps.m], PATH_BYTES, "%s", path);
	m->path = c->maps.path[m - c->maps.m];
	m->dev = st.st_dev;
	m->inode = st.st_ino;
	m->end += 0x1000;

	u = ctx_new(0, &c->maps);
	rn = do_unwind(u, &s, ref, MAXPCS, &ro);
	ck_assert_int_eq(ro, UNWIND_COMPLETE);
	u->serial++; /* a new "sample", as unwind_ctx__unwind() starts one */
	ck_assert_int_eq(unwind_images_get(u, getpid(), m, &img), 0);
	ck_assert_uint_lt(img->held, 1u << 20);
	ck_assert_int_eq(truncate(path, 4096), 0);
	/* A chunk of the tail, never read: the file ends before it. */
	ck_assert(!unwind_image_read(u, img, (1u << 20) - 8, &v));
	ck_assert(img->gone);
	/* libunwind's cached rules for its PCs go too: the walk must ask for the image. */
	unwind_ctx__flush(u, getpid());
	for (int k = 0; k < 2; k++) {
		n = do_unwind(u, &s, pcs, MAXPCS, &o);
		ck_assert_int_eq(o, UNWIND_REPLACED);
		ck_assert_int_ge(n, 2);
		ck_assert_int_lt(n, rn);
		ck_assert_mem_eq(pcs, ref, (size_t)n * sizeof(pcs[0]));
	}
	ck_assert_uint_eq(unwind_ctx__stats(u)->outcomes[UNWIND_REPLACED], 2);
	unwind_ctx__free(u);
	dlclose(h);
	unlink(path);
	unlink(run);
	free(c);
}
END_TEST

START_TEST(test_lru_budget)
{
	struct capture *ca, *cb;
	uint64_t pcs[MAXPCS], refa[MAXPCS], refb[MAXPCS];
	char a[128], b[128];
	enum unwind_outcome o, roa, rob;
	struct rec_sample sa, sb;
	unwl_outer_fn fa, fb;
	struct unwind_ctx *u, *big;
	const struct unwind_stats *st;
	uint64_t opened;
	struct names *nm;
	void *ha, *hb;
	int n, rna, rnb;

	/* scripts/bootstrap installs cc: a missing library is a broken test machine. */
	ck_assert_msg(g_have_libs, "the test libraries could not be built (see stderr)");
	ca = capture_new();
	cb = capture_new();
	nm = names_new();
	snprintf(a, sizeof(a), "%s/lru-a.so", g_tmpdir);
	snprintf(b, sizeof(b), "%s/lru-b.so", g_tmpdir);
	copy_file(g_lib_eh, a);
	copy_file(g_lib_eh, b);
	ha = lib_open(a, &fa);
	hb = lib_open(b, &fb);
	unwt_call_lib(fa, ca);
	unwt_call_lib(fb, cb);
	sample_from(&sa, ca);
	sample_from(&sb, cb);

	/* References from an unwinder with the default budget. */
	big = ctx_new(0, &cb->maps);
	rna = do_unwind(big, &sa, refa, MAXPCS, &roa);
	rnb = do_unwind(big, &sb, refb, MAXPCS, &rob);
	symbolize(refb, rnb, nm);
	names_expect(nm, lib_want, sizeof(lib_want) / sizeof(lib_want[0]));
	ck_assert_uint_eq(unwind_ctx__stats(big)->elf_evicted, 0);
	unwind_ctx__free(big);

	/* A one-byte budget: each sample's images evict the previous sample's. */
	u = ctx_new(1, &cb->maps);
	st = unwind_ctx__stats(u);
	for (int round = 0; round < 3; round++) {
		opened = st->elf_opened;
		unwind_ctx__flush(u, getpid());
		n = do_unwind(u, &sa, pcs, MAXPCS, &o);
		ck_assert_int_eq(n, rna);
		ck_assert_int_eq(o, roa);
		ck_assert_mem_eq(pcs, refa, (size_t)n * sizeof(pcs[0]));
		ck_assert_uint_gt(st->elf_opened, opened);
		unwind_ctx__flush(u, getpid());
		n = do_unwind(u, &sb, pcs, MAXPCS, &o);
		ck_assert_int_eq(n, rnb);
		ck_assert_int_eq(o, rob);
		ck_assert_mem_eq(pcs, refb, (size_t)n * sizeof(pcs[0]));
	}
	ck_assert_uint_ge(st->elf_evicted, 5);
	/* Only the last sample's images remain mapped. */
	ck_assert_uint_le(st->elf_opened - st->elf_evicted, 4);
	fprintf(stderr, "lru: opened %" PRIu64 " evicted %" PRIu64 " mapped %" PRIu64 " bytes\n",
		st->elf_opened, st->elf_evicted, st->elf_bytes);
	unwind_ctx__free(u);
	dlclose(ha);
	dlclose(hb);
	free(nm);
	free(ca);
	free(cb);
}
END_TEST

START_TEST(test_fp_fallback)
{
	struct capture *c;
	struct unwind_image_info info;
	const struct maplog_map *m;
	struct rec_sample s;
	struct unwind_ctx *u;
	unwl_outer_fn outer;
	void *h;

	/* scripts/bootstrap installs cc: a missing library is a broken test machine. */
	ck_assert_msg(g_have_libs, "the test libraries could not be built (see stderr)");
	c = capture_new();
	h = lib_open(g_lib_fp, &outer);
	unwt_call_lib(outer, c);
	sample_from(&s, c);
	u = ctx_new(0, &c->maps);

	m = tmaps_by_path(&c->maps, "lib-fp.so");
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(unwind_ctx__image_info(u, getpid(), m, &info), 0);
	ck_assert(!info.has_hdr);
	ck_assert(info.has_debug_frame);
	ck_assert_int_eq(info.e_type, ET_DYN);

	/* unwl_inner and unwl_outer were each stepped by their frame pointer. */
	lib_chain_check(u, &s, "fp", "test_fp_fallback_fn", 2);

	unwind_ctx__free(u);
	dlclose(h);
	free(c);
}
END_TEST

/*
 * The first PT_LOAD whose file bytes hold the first page of @path and the PF_X one:
 * the difference of their p_vaddr - p_offset (0 when they are the same segment).
 */
static int64_t lld_skew(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	GElf_Phdr ph, first = { 0 }, text = { 0 };
	size_t n;
	bool have_first = false, have_text = false;

	ck_assert_int_ge(fd, 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(elf_getphdrnum(e, &n), 0);
	for (size_t i = 0; i < n; i++) {
		ck_assert_ptr_nonnull(gelf_getphdr(e, (int)i, &ph));
		if (ph.p_type != PT_LOAD || (ph.p_offset & ~(uint64_t)4095) != 0)
			continue;
		if (!have_first) {
			first = ph;
			have_first = true;
		}
		if ((ph.p_flags & PF_X) && !have_text) {
			text = ph;
			have_text = true;
		}
	}
	elf_end(e);
	close(fd);
	ck_assert(have_first && have_text);
	return (int64_t)((text.p_vaddr - text.p_offset) - (first.p_vaddr - first.p_offset));
}

/*
 * A library linked by LLD, whose packed layout puts the read-only segment (ELF
 * header, .eh_frame_hdr, .eh_frame) and the text segment both in file page 0, a page
 * apart in p_vaddr - p_offset.  The executable mapping is the text's, so its load
 * bias is the text segment's: taking the first segment that holds page 0 put every
 * PC of an LLD-linked PIE or library a page off (found by fuzz-elf's seeds).
 */
START_TEST(test_lld_lib)
{
	struct capture *c;
	struct rec_sample s;
	struct unwind_ctx *u;
	unwl_outer_fn outer;
	void *h;

	/* scripts/bootstrap installs lld: a missing one is a broken test machine. */
	ck_assert_msg(g_have_lld, "the LLD-linked test library could not be built (see stderr)");
	/* The layout this test is about; a linker that stops packing makes it vacuous. */
	ck_assert_msg(lld_skew(g_lib_lld) != 0, "%s: not LLD's packed layout", g_lib_lld);
	c = capture_new();
	h = lib_open(g_lib_lld, &outer);
	unwt_call_lib(outer, c);
	sample_from(&s, c);
	u = ctx_new(0, &c->maps);

	/* The library's frames were unwound by its CFI, found at the right addresses. */
	lib_chain_check(u, &s, "lld", "test_lld_lib_fn", 0);

	unwind_ctx__free(u);
	dlclose(h);
	free(c);
}
END_TEST

/* ---- the vDSO ---- */

static uint64_t vdso_symbol(const char *name)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR), found = 0;
	struct tmaps *t = calloc(1, sizeof(*t));
	const struct maplog_map *m;
	size_t size;
	char *copy;
	Elf *e;
	Elf_Scn *scn = NULL;

	ck_assert_ptr_nonnull(t);
	maps_load(t);
	m = tmaps_by_path(t, "[vdso]");
	ck_assert_ptr_nonnull(m);
	size = (size_t)(m->end - m->start);
	copy = malloc(size);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, (const void *)(uintptr_t)base, size);
	e = elf_memory(copy, size);
	ck_assert_ptr_nonnull(e);
	while (!found && (scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || sh.sh_entsize == 0)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *nm;

			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC)
				continue;
			nm = elf_strptr(e, sh.sh_link, s.st_name);
			if (nm && strcmp(nm, name) == 0) {
				found = s.st_value;
				break;
			}
		}
	}
	elf_end(e);
	free(copy);
	free(t);
	return found;
}

START_TEST(test_vdso)
{
	struct capture *c = capture_new();
	uint64_t ref[MAXPCS], pcs[MAXPCS], entry;
	struct unwind_image_info info;
	const struct maplog_map *m;
	enum unwind_outcome o, ro;
	struct rec_sample s;
	struct unwind_ctx *u;
	int n, rn;

	unwt_run_qsort(c);
	u = ctx_new(0, &c->maps);
	m = tmaps_by_path(&c->maps, "[vdso]");
	if (!m || getauxval(AT_SYSINFO_EHDR) == 0) {
		/* valgrind gives its client no vDSO: a "[vdso]" PC then has no info. */
		uint64_t base = tmaps_free_range(&c->maps, 0x2000);
		struct maplog_map fake = {
			.start = base, .end = base + 0x2000, .path = "[vdso]", .pid = getpid()
		};

		fprintf(stderr, "vdso: this process has none, checking the fallback only\n");
		ck_assert_int_eq(unwind_ctx__image_info(u, getpid(), &fake, &info), -ENODATA);
		unwind_ctx__free(u);
		free(c);
		return;
	}
	/* The daemon's own vDSO image, parsed, serves the mapping at its start. */
	ck_assert_int_eq(unwind_ctx__image_info(u, getpid(), m, &info), 0);
	ck_assert(info.is_vdso);
	ck_assert(info.has_hdr);
	ck_assert_uint_gt(info.fde_count, 0);
	ck_assert_int_eq(info.e_type, ET_DYN);
	ck_assert_uint_eq(info.bias, m->start);
	ck_assert_uint_eq(unwind_ctx__stats(u)->elf_opened, 0); /* not a file */

	/*
	 * A sample taken on the first instruction of __vdso_clock_gettime, called from
	 * unwt_capture's capture point: one more word below SP, the return address.
	 */
	entry = vdso_symbol("__vdso_clock_gettime");
	ck_assert_uint_ne(entry, 0);
	entry += info.bias;
	sample_from(&s, c);
	rn = do_unwind(u, &s, ref, MAXPCS, &ro);
	c->buf[0] = c->regs[8];
	s.regs[7] = c->regs[7] - 8;
	s.regs[8] = entry;
	s.stack = (const uint8_t *)c->buf;
	s.stack_size = STACK_BYTES + 8;
	s.stack_dyn_size = c->dyn + 8;
	n = do_unwind(u, &s, pcs, MAXPCS, &o);
	fprintf(stderr, "vdso: %d frames (%s), reference %d (%s)\n", n, unwind_outcome_name(o), rn,
		unwind_outcome_name(ro));
	ck_assert_uint_eq(pcs[0], entry);
	ck_assert_int_eq(n, rn + 1);
	ck_assert_int_eq(o, ro);
	ck_assert_mem_eq(pcs + 1, ref, (size_t)rn * sizeof(pcs[0]));
	unwind_ctx__free(u);
	free(c);
}
END_TEST

/* ---- signal frames ---- */

static struct capture *g_sig_cap;

UNWT_FN static void unwt_sig_handler(int sig)
{
	(void)sig;
	unwt_capture(g_sig_cap);
	g_sink++;
}

/* The signal arrives on return from this syscall, interrupting this very function. */
UNWT_FN static int unwt_sig_interrupted(int sig)
{
	long ret, nr = SYS_tgkill, pid = getpid(), tid = gettid();

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(pid), "S"(tid), "d"((long)sig)
			 : "rcx", "r11", "memory");
	return (int)ret + g_sink;
}

/*
 * A sigreturn trampoline without CFI, like musl's __restore_rt, preceded by a nop
 * that no FDE covers (so that the PC - 1 lookup of the return address finds none).
 */
__asm__(".text\n"
	".p2align 4\n"
	"nop\n"
	".type unwt_restore_rt, @function\n"
	"unwt_restore_rt:\n"
	".byte 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00\n" /* mov $15, %rax */
	".byte 0x0f, 0x05\n"				   /* syscall */
	"hlt\n"
	".size unwt_restore_rt, .-unwt_restore_rt\n");
void unwt_restore_rt(void);

struct ksigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

#define KSA_RESTORER 0x04000000ul

__attribute__((noinline)) static void signal_case(bool own_restorer, const char *test_fn)
{
	struct capture *c = capture_new();
	uint64_t pcs[MAXPCS];
	const char *const want[] = {
		"unwt_capture",
		"unwt_sig_handler",
		own_restorer ? "unwt_restore_rt" : "<libc.so.6>", /* __restore_rt */
		"unwt_sig_interrupted",
		"signal_case",
		test_fn,
	};
	enum unwind_outcome o;
	struct rec_sample s;
	struct unwind_ctx *u;
	struct names *nm = names_new();
	int n, sig = own_restorer ? SIGUSR1 : SIGALRM;

	g_sig_cap = c;
	if (own_restorer) {
		struct ksigaction ksa = { .handler = unwt_sig_handler,
					  .flags = KSA_RESTORER,
					  .restorer = unwt_restore_rt };

		ck_assert_int_eq(syscall(SYS_rt_sigaction, sig, &ksa, NULL, sizeof(ksa.mask)), 0);
	} else {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = unwt_sig_handler;
		sigemptyset(&sa.sa_mask);
		ck_assert_int_eq(sigaction(sig, &sa, NULL), 0);
	}
	unwt_sig_interrupted(sig);
	signal(sig, SIG_DFL);
	ck_assert_uint_ne(c->regs[8], 0);

	sample_from(&s, c);
	u = ctx_new(0, &c->maps);
	n = do_unwind(u, &s, pcs, MAXPCS, &o);
	symbolize(pcs, n, nm);
	names_print(own_restorer ? "signal (no CFI)" : "signal", nm, o);
	names_expect(nm, want, sizeof(want) / sizeof(want[0]));
	ck_assert(o == UNWIND_COMPLETE || o == UNWIND_TRUNCATED);
	ck_assert_uint_eq(unwind_ctx__stats(u)->fp_steps, 0);
	unwind_ctx__free(u);
	free(nm);
	free(c);
}

START_TEST(test_signal_frame)
{
	signal_case(false, "test_signal_frame_fn");
	g_sink++; /* no tail call: the test function keeps its frame */
}
END_TEST

START_TEST(test_signal_no_cfi)
{
	signal_case(true, "test_signal_no_cfi_fn");
	g_sink++;
}
END_TEST

/* ---- hostile ELF files ---- */

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static uint8_t *read_whole(const char *path, size_t *ret_len)
{
	struct stat st;
	uint8_t *d;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	d = malloc((size_t)st.st_size);
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(read(fd, d, (size_t)st.st_size), st.st_size);
	close(fd);
	*ret_len = (size_t)st.st_size;
	return d;
}

/* File offset and size of the first section called @name, from the raw headers. */
static bool find_section(const uint8_t *d, size_t len, const char *name, size_t *off, size_t *sz)
{
	Elf64_Ehdr eh;
	Elf64_Shdr str;

	memcpy(&eh, d, sizeof(eh));
	if (eh.e_shoff == 0 || eh.e_shstrndx >= eh.e_shnum ||
	    eh.e_shoff + (size_t)eh.e_shnum * sizeof(Elf64_Shdr) > len)
		return false;
	memcpy(&str, d + eh.e_shoff + (size_t)eh.e_shstrndx * sizeof(Elf64_Shdr), sizeof(str));
	for (size_t i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh;

		memcpy(&sh, d + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof(sh));
		if (str.sh_offset + sh.sh_name < len &&
		    strcmp((const char *)d + str.sh_offset + sh.sh_name, name) == 0) {
			*off = sh.sh_offset;
			*sz = sh.sh_size;
			return true;
		}
	}
	return false;
}

START_TEST(test_hostile_elf)
{
	uint64_t base;
	struct capture *c;
	uint64_t pcs[MAXPCS], st = 12345;
	char path[EXTRA_MAX][128];
	enum unwind_outcome o;
	struct unwind_image_info info;
	struct rec_sample s;
	struct unwind_ctx *u;
	uint8_t *lib, *v;
	size_t len, hoff, hsz, eoff, esz;
	int nfiles = 0;

	/* scripts/bootstrap installs cc: a missing library is a broken test machine. */
	ck_assert_msg(g_have_libs, "the test libraries could not be built (see stderr)");
	c = capture_new();
	unwt_run_qsort(c);
	lib = read_whole(g_lib_eh, &len);
	v = malloc(len);
	ck_assert_ptr_nonnull(v);
	ck_assert(find_section(lib, len, ".eh_frame_hdr", &hoff, &hsz));
	ck_assert(find_section(lib, len, ".eh_frame", &eoff, &esz));

	/* 0: random bytes; 1: a cut-off ELF; 2: fde_count too large; 3: a random table;
	 * 4: random .eh_frame; 5: ELF header only; 6: wrong machine; 7: empty file. */
	for (int k = 0; k < 8; k++) {
		size_t n = len;

		memcpy(v, lib, len);
		switch (k) {
		case 0:
			for (size_t i = 0; i < len; i++)
				v[i] = (uint8_t)xorshift(&st);
			break;
		case 1:
			n = 4096 < len ? 4096 : len;
			break;
		case 2:
			v[hoff + 8] = 0xff;
			v[hoff + 9] = 0xff;
			v[hoff + 10] = 0xff;
			v[hoff + 11] = 0x7f;
			break;
		case 3:
			for (size_t i = hoff + 12; i < hoff + hsz; i++)
				v[i] = (uint8_t)xorshift(&st);
			break;
		case 4:
			for (size_t i = eoff; i < eoff + esz; i++)
				v[i] = (uint8_t)xorshift(&st);
			break;
		case 5:
			n = sizeof(Elf64_Ehdr);
			break;
		case 6:
			v[18] = EM_AARCH64;
			break;
		default:
			n = 0;
			break;
		}
		snprintf(path[nfiles], sizeof(path[0]), "%s/hostile-%d.so", g_tmpdir, k);
		write_file(path[nfiles], v, n);
		nfiles++;
	}

	u = ctx_new(0, &c->maps);
	base = tmaps_free_range(&c->maps, (uint64_t)nfiles << 24);
	for (int k = 0; k < nfiles; k++) {
		struct stat sb;
		struct maplog_map *m = &c->maps.m[c->maps.n];
		int r;

		ck_assert_int_eq(stat(path[k], &sb), 0);
		*m = (struct maplog_map){ .start = base + ((uint64_t)k << 24),
					  .end = base + ((uint64_t)k << 24) + 0x100000,
					  .pgoff = 0,
					  .dev = sb.st_dev,
					  .inode = sb.st_ino,
					  .path = path[k],
					  .pid = getpid() };
		c->maps.n++;
		r = unwind_ctx__image_info(u, getpid(), m, &info);
		if (k == 0 || k >= 5)
			ck_assert_int_eq(r, -ENOEXEC);
		if (k == 2) {
			ck_assert_int_eq(r, 0);
			/* The count does not fit the section: the table is built from .eh_frame. */
			ck_assert(info.has_hdr && info.own_table && info.fde_count > 0);
		}
		for (uint64_t off = 0x1000; off < 0x1200; off += 4) {
			sample_from(&s, c);
			s.regs[8] = m->start + off;
			do_unwind(u, &s, pcs, MAXPCS, &o);
		}
	}
	unwind_ctx__free(u);
	free(v);
	free(lib);
	free(c);
}
END_TEST

/* The dynamic linker's entry code has no CFI: a frame there ends the walk, complete. */
START_TEST(test_entry_frame)
{
	struct capture *c = capture_new();
	uint64_t pcs[MAXPCS], base = getauxval(AT_BASE), entry;
	enum unwind_outcome o;
	struct rec_sample s;
	struct unwind_ctx *u;
	Elf64_Ehdr eh;
	int n;

	ck_assert_msg(base != 0, "no AT_BASE: the test runs without a dynamic linker");
	memcpy(&eh, (const void *)(uintptr_t)base, sizeof(eh));
	entry = base + eh.e_entry;
	unwt_run_qsort(c); /* a real capture: registers, stack and this process's maps */
	sample_from(&s, c);
	u = ctx_new(0, &c->maps);
	s.regs[8] = entry + 8; /* after its call of _dl_start */
	n = do_unwind(u, &s, pcs, MAXPCS, &o);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(pcs[0], entry + 8);
	ck_assert_str_eq(unwind_outcome_name(o), "complete");
	ck_assert_uint_eq(unwind_ctx__stats(u)->fp_steps, 0);
	/* Past the entry code the rule does not apply: no unwind info stays no-info. */
	s.regs[8] = entry + 8 + 64 + 1;
	(void)do_unwind(u, &s, pcs, MAXPCS, &o);
	ck_assert_str_ne(unwind_outcome_name(o), "complete");
	unwind_ctx__free(u);
	free(c);
}
END_TEST

/*
 * Two hand-written leaves for the slots-under-SP cases, each called with
 * (regs[20], stack buffer, bytes): they store the registers in perf's order as
 * at label 1 (IP = that label), copy @bytes of the stack from SP without a call
 * (rep movsb), and return.
 *
 * unwt_epi ends like a GCC function with a frame pointer: push rbp / mov rsp,rbp /
 * pop rbp, with no .cfi_restore after the pop, so at its ret the CFI still puts
 * the caller's rbp at CFA-16, 8 bytes under SP, where no snapshot reaches.  Its
 * caller finds its own frame through rbp (CFA = rbp + 16).
 *
 * unwt_redzone saves rbp in the red zone (under SP), then changes rbp: at label 1
 * (not an epilogue) the saved value is not the live register, so the unwinder
 * must not use the live one: the walk stops with "below-sp".
 */
__asm__(".text\n"
	/* the body both leaves share */
	".macro UNWT_STORE_COPY\n"
	"\tmovq %rax, 0(%rdi)\n\tmovq %rbx, 8(%rdi)\n\tmovq %rcx, 16(%rdi)\n"
	"\tmovq %rdx, 24(%rdi)\n\tmovq %rsi, 32(%rdi)\n\tmovq %rdi, 40(%rdi)\n"
	"\tmovq %rbp, 48(%rdi)\n\tmovq %rsp, 56(%rdi)\n\tleaq 1f(%rip), %rax\n"
	"\tmovq %rax, 64(%rdi)\n\tmovq %r8, 96(%rdi)\n\tmovq %r9, 104(%rdi)\n"
	"\tmovq %r10, 112(%rdi)\n\tmovq %r11, 120(%rdi)\n\tmovq %r12, 128(%rdi)\n"
	"\tmovq %r13, 136(%rdi)\n\tmovq %r14, 144(%rdi)\n\tmovq %r15, 152(%rdi)\n"
	"\tmovq %rdx, %rcx\n\tmovq %rsi, %rdi\n\tmovq %rsp, %rsi\n\trep movsb\n"
	".endm\n"
	".globl unwt_epi\n.type unwt_epi, @function\nunwt_epi:\n"
	"\t.cfi_startproc\n"
	"\tpushq %rbp\n\t.cfi_def_cfa_offset 16\n\t.cfi_offset %rbp, -16\n"
	"\tmovq %rsp, %rbp\n\t.cfi_def_cfa_register %rbp\n"
	"\tpopq %rbp\n\t.cfi_def_cfa %rsp, 8\n"
	"\tUNWT_STORE_COPY\n"
	"1:\tret\n"
	"\t.cfi_endproc\n.size unwt_epi, .-unwt_epi\n"
	".globl unwt_redzone\n.type unwt_redzone, @function\nunwt_redzone:\n"
	"\t.cfi_startproc\n"
	"\tmovq %rbp, -8(%rsp)\n\t.cfi_offset %rbp, -16\n"
	"\txorl %ebp, %ebp\n"
	"\tUNWT_STORE_COPY\n"
	"1:\tmovq -8(%rsp), %rbp\n\t.cfi_restore %rbp\n"
	"\tret\n"
	"\t.cfi_endproc\n.size unwt_redzone, .-unwt_redzone\n");

void unwt_epi(uint64_t *regs, void *buf, uint64_t bytes);
void unwt_redzone(uint64_t *regs, void *buf, uint64_t bytes);

#define UNWT_FP_FN __attribute__((noipa, optimize("no-omit-frame-pointer")))

/* How many bytes of the stack above @sp may be copied (the stack mapping's end). */
static uint64_t stack_room(struct capture *c, uint64_t sp)
{
	uint64_t top = 0;

	maps_load(&c->maps);
	for (size_t i = 0; i < c->maps.n; i++)
		if (sp >= c->maps.m[i].start && sp < c->maps.m[i].end)
			top = c->maps.m[i].end;
	/* The leaf's own frame lies below ours: leave room for it. */
	return top - sp < STACK_BYTES - 256 ? top - sp : STACK_BYTES - 256;
}

/* Callers with a frame pointer: their CFA is rbp + 16. */
UNWT_FP_FN static void unwt_epi_caller(struct capture *c, bool redzone)
{
	uint64_t here = (uint64_t)(uintptr_t)__builtin_frame_address(0);
	uint64_t n = stack_room(c, here);

	if (redzone)
		unwt_redzone(c->regs, c->buf + 1, n);
	else
		unwt_epi(c->regs, c->buf + 1, n);
	c->regs[9] = 0x246;
	c->regs[10] = 0x33;
	c->regs[11] = 0x2b;
	c->dyn = n;
	g_sink++;
}

UNWT_FN static void unwt_epi_outer(struct capture *c, bool redzone)
{
	unwt_epi_caller(c, redzone);
	g_sink++;
}

/* A sample in an epilogue, after pop %rbp, before ret: the caller's rbp is the live one. */
START_TEST(test_epilogue)
{
	static const char *const want[] = { "unwt_epi", "unwt_epi_caller", "unwt_epi_outer",
					    "test_epilogue_fn" };
	struct capture *c = capture_new();
	uint64_t pcs[MAXPCS];
	enum unwind_outcome o;
	struct rec_sample s;
	struct unwind_ctx *u;
	struct names *nm = names_new();
	int n;

	unwt_epi_outer(c, false);
	sample_from(&s, c);
	u = ctx_new(0, &c->maps);
	n = do_unwind(u, &s, pcs, MAXPCS, &o);
	symbolize(pcs, n, nm);
	names_print("epilogue", nm, o);
	check_self_tail(nm, names_expect(nm, want, 4), o);
	ck_assert_uint_ge(unwind_ctx__stats(u)->epilogue_regs, 1);
	ck_assert_uint_eq(unwind_ctx__stats(u)->fp_steps, 0);
	unwind_ctx__free(u);

	/* A slot under SP whose register changed since (a red-zone save): no guess. */
	memset(c, 0, sizeof(*c));
	unwt_epi_outer(c, true);
	sample_from(&s, c);
	u = ctx_new(0, &c->maps);
	n = do_unwind(u, &s, pcs, MAXPCS, &o);
	symbolize(pcs, n, nm);
	names_print("red zone", nm, o);
	ck_assert_str_eq(unwind_outcome_name(o), "below-sp");
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(names_expect(nm, (const char *const[]){ "unwt_redzone", "unwt_epi_caller" },
				      2), 2);
	ck_assert_uint_eq(unwind_ctx__stats(u)->epilogue_regs, 0);
	unwind_ctx__free(u);
	free(nm);
	free(c);
}
END_TEST

/* The kernel copied no stack (inside execve() after the address space was replaced). */
START_TEST(test_no_stack)
{
	struct capture *c = capture_new();
	uint64_t pcs[8];
	enum unwind_outcome o;
	struct rec_sample s;
	struct unwind_ctx *u;

	unwt_run_qsort(c);
	sample_from(&s, c);
	s.mode = REC_MODE_KERNEL;
	s.stack_dyn_size = 0;
	u = ctx_new(0, &c->maps);
	ck_assert_int_eq(do_unwind(u, &s, pcs, 8, &o), 1);
	ck_assert_uint_eq(pcs[0], c->regs[8]);
	ck_assert_str_eq(unwind_outcome_name(o), "no-stack");
	/* No snapshot asked for at all is not that: the walk ran out of one. */
	s.stack = NULL;
	s.stack_size = 0;
	ck_assert_int_eq(do_unwind(u, &s, pcs, 8, &o), 1);
	ck_assert_str_eq(unwind_outcome_name(o), "truncated");
	unwind_ctx__free(u);
	free(c);
}
END_TEST

extern void _init(void); /* crti.o's, in this executable's .init: no CFI */

/*
 * A sample in glibc's _init (a library's first instruction run, often the one
 * whose page fault is sampled as a process starts): no CFI, unwound by its known
 * shape.  Called from the capture point: on its first instruction the return
 * address is at SP, after its sub $8,%rsp at SP + 8, on its ret at SP again.
 */
START_TEST(test_crt_stub)
{
	static const struct {
		uint64_t off;	  /* into _init */
		unsigned int pad; /* words between SP and the return address */
	} at[] = { { 0, 0 }, { 4, 1 }, { 0x12, 1 }, { 0x16, 0 } };
	struct capture *c = capture_new();
	uint64_t pcs[MAXPCS], ref[MAXPCS], *st, init = (uint64_t)(uintptr_t)_init;
	enum unwind_outcome o, ro;
	struct rec_sample s;
	struct unwind_ctx *u;
	int n, rn;

	/* The shape the test relies on: sub $8,%rsp at _init, add $8,%rsp; ret at +0x12. */
	ck_assert_mem_eq((const void *)(uintptr_t)init, "\x48\x83\xec\x08", 4);
	ck_assert_mem_eq((const void *)(uintptr_t)(init + 0x12), "\x48\x83\xc4\x08\xc3", 5);
	unwt_run_qsort(c);
	sample_from(&s, c);
	u = ctx_new(0, &c->maps);
	rn = do_unwind(u, &s, ref, MAXPCS, &ro);
	ck_assert_int_gt(rn, 2);
	st = calloc(2 + STACK_BYTES / 8, sizeof(*st));
	ck_assert_ptr_nonnull(st);
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		unsigned int words = at[i].pad + 1;

		memset(st, 0, (2 + STACK_BYTES / 8) * sizeof(*st));
		st[at[i].pad] = c->regs[8]; /* the return address: the capture point */
		memcpy(st + words, c->buf + 1, c->dyn);
		sample_from(&s, c);
		s.regs[7] = c->regs[7] - 8 * words;
		s.regs[8] = init + at[i].off;
		s.stack = (const uint8_t *)st;
		s.stack_size = STACK_BYTES + 8 * words;
		s.stack_dyn_size = c->dyn + 8 * words;
		n = do_unwind(u, &s, pcs, MAXPCS, &o);
		ck_assert_msg(n == rn + 1 && o == ro && pcs[0] == init + at[i].off &&
				      memcmp(pcs + 1, ref, (size_t)rn * sizeof(pcs[0])) == 0,
			      "_init+%#llx: %d frames (%s), reference %d + 1 (%s)",
			      (unsigned long long)at[i].off, n, unwind_outcome_name(o), rn,
			      unwind_outcome_name(ro));
	}
	/* A return address of 0 in its slot is no caller. */
	st[0] = 0;
	s.regs[7] = c->regs[7] - 8;
	s.regs[8] = init;
	s.stack_size = STACK_BYTES + 8;
	s.stack_dyn_size = c->dyn + 8;
	ck_assert_int_eq(do_unwind(u, &s, pcs, MAXPCS, &o), 1);
	ck_assert_str_eq(unwind_outcome_name(o), "no-info");
	free(st);
	unwind_ctx__free(u);
	free(c);
}
END_TEST

/*
 * A stack of zeros (the new address space's, read at the old stack pointer by a
 * sample inside an exec; or a thread's first frame): a return address of 0 ends
 * the walk, and is no frame.
 */
START_TEST(test_zero_return)
{
	struct capture *c = capture_new();
	uint64_t pcs[8];
	enum unwind_outcome o;
	struct rec_sample s;
	struct unwind_ctx *u;

	unwt_run_qsort(c);
	sample_from(&s, c);
	memset(c->buf + 1, 0, c->dyn);
	u = ctx_new(0, &c->maps);
	ck_assert_int_eq(do_unwind(u, &s, pcs, 8, &o), 1);
	ck_assert_uint_eq(pcs[0], c->regs[8]);
	ck_assert_str_eq(unwind_outcome_name(o), "complete");
	unwind_ctx__free(u);
	free(c);
}
END_TEST

static void log_hook(int prio, const char *msg, void *userdata)
{
	(void)userdata;
	if (prio <= LOG_PRIO_ERR) {
		fprintf(stderr, "unexpected error message: %s\n", msg);
		abort();
	}
}

static Suite *unwind_suite(void)
{
	Suite *s = suite_create("unwind");
	TCase *tc;

	tc = tcase_create("self");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_self_chain);
	tcase_add_test(tc, test_throughput);
	tcase_add_test(tc, test_sigmask_shortcut);
	suite_add_tcase(s, tc);

	tc = tcase_create("truncation");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_truncated_prefix);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_no_regs);
	tcase_add_test(tc, test_no_map);
	tcase_add_test(tc, test_garbage);
	tcase_add_test(tc, test_hostile_elf);
	suite_add_tcase(s, tc);

	tc = tcase_create("files");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_replaced);
	tcase_add_test(tc, test_lru_budget);
	tcase_add_test(tc, test_huge_file);
	tcase_add_test(tc, test_big_file_small_budget);
	tcase_add_test(tc, test_truncated_file);
	tcase_add_test(tc, test_fp_fallback);
	tcase_add_test(tc, test_lld_lib);
	tcase_add_test(tc, test_vdso);
	tcase_add_test(tc, test_entry_frame);
	tcase_add_test(tc, test_epilogue);
	tcase_add_test(tc, test_no_stack);
	tcase_add_test(tc, test_zero_return);
	tcase_add_test(tc, test_crt_stub);
	suite_add_tcase(s, tc);

	tc = tcase_create("signal");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_signal_frame);
	tcase_add_test(tc, test_signal_no_cfi);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	log_set_hook(log_hook, NULL);
	build_libs();
	sr = srunner_create(unwind_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (g_tmpdir[0])
		nftw(g_tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(g_syms);
	return failed ? 1 : 0;
}
