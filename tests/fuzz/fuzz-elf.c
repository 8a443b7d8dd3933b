/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz-elf.c: libFuzzer harness for the code the daemon runs on ELF files that
 * users own: maplog's ELF facts and MAP_IN rule (maplog-elf.c) and the unwinder's
 * image parsing and libunwind walk (src/unwind) over a hostile stack snapshot.
 *
 * IMPLEMENTATION NOTES
 *   The input is an ELF file.  Its last TRAILER_BYTES may be a struct trailer,
 *   as the seeds that tests/fuzz/elf-seeds.sh builds end with: the registers and
 *   load bias of a sample the seed program took of itself, and before it the
 *   bytes of the stack snapshot.  Any input is read that way; for a mutated or
 *   short one these are just more hostile bytes (the ELF parsers never see the
 *   trailer as anything but trailing bytes of the file).
 *
 *   1. maplog: maplog_elf_info_mem() on the bytes and maplog_elf_info_fd() on a
 *      memfd holding them must agree (result and every field); a success must
 *      have its fields in range (type, PT_LOAD count, build id length, exec range,
 *      V).  maplog_elf_info_pl_start() is then applied to each PT_LOAD (its page,
 *      biases 0 and 0x555555554000, exec and not, pages of 4 and 64 KiB) and to
 *      addresses from the trailer; a success must satisfy the rule (ET_EXEC bias
 *      0, page-aligned bias, pl_start = bias + V), and maplog_elf_pl_start() on
 *      the memfd must give the same answer.
 *   2. unwind: the bytes are written to one file in a private temporary directory
 *      (the unwinder opens files by path, without following symbolic links, and
 *      checks their dev/inode against the mapping's), and a new unwind_ctx per
 *      input (its image cache is keyed by dev/inode, which a rewritten file keeps,
 *      and libunwind's cache by IP) unwinds synthetic samples with one executable
 *      mapping of that file: the first PF_X PT_LOAD where an ET_EXEC runs, or for
 *      an ET_DYN at the trailer's bias (else 0x555555554000); then the whole file
 *      from offset 0 at a second base.  IPs: the trailer's, the entry point, the
 *      first executable section, each folded into the mapping.  Invariants: 0 <=
 *      count <= max, outcome < UNWIND_OUTCOME_MAX, pcs[0] is the sampled IP, at
 *      least that PC when there are registers and room, UNWIND_DEPTH exactly at
 *      max, a second unwind of the same sample with a smaller max gives a prefix,
 *      a 32-bit sample gives just its IP, the stats add up, one file is opened at
 *      most once per context.
 *   Whatever fails aborts, so that libFuzzer keeps the input.  The stack
 *   snapshot is a heap copy of exactly its bytes, so that ASan sees a read past
 *   it.  With FUZZ_ELF_VERBOSE set, each unwind's PCs go to stderr (to check that
 *   the seeds unwind as they should: fuzz-elf SEED).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwpmcd/maplog-elf.h"
#include "hwpmcd/maplog.h"
#include "hwpmcd/unwind.h"

/* perf's regs[] order (unwind.h): AX BX CX DX SI DI BP SP IP FLAGS CS SS R8..R15 */
#define REG_BP 6
#define REG_SP 7
#define REG_IP 8

#define PAGE	      4096u
#define STACK_MAX     (64u << 10)
#define MAXPCS	      64
#define DYN_BIAS      0x555555554000ULL /* where an ET_DYN goes without a trailer bias */
#define FILE_BASE     0x7f0000000000ULL /* the whole-file mapping of an ET_DYN */
#define DEFAULT_SP    0x7ffc00000000ULL
#define USER_TOP      0x800000000000ULL
#define PID_NATURAL   1000
#define PID_WHOLEFILE 1001

/*
 * The tail of a seed (tests/fuzz/elf-seed.c writes it): the sampled registers in
 * perf's order, the object's run-time minus link-time address, and the length of
 * the stack snapshot stored right before this struct.  flags bits 0-7: words the
 * "kernel" could not copy (0: the snapshot is as large as requested); bits 0-1
 * and 8-13 also pick exec and a page size shift for two pl_start checks; bits
 * 16-18: the smaller max of the second unwind, minus 1.
 */
struct trailer {
	uint64_t regs[UNWIND_NR_REGS];
	uint64_t bias;
	uint32_t stack_len;
	uint32_t flags;
};
#define TRAILER_BYTES sizeof(struct trailer)
_Static_assert(TRAILER_BYTES == 176, "elf-seed.c writes 176 bytes");

struct fz_find {
	struct maplog_map map;
};

static char file_path[PATH_MAX];
static char dir_path[PATH_MAX];
static int file_fd = -1;
static int mem_fd = -1;
static struct stat file_st;
static bool verbose; /* FUZZ_ELF_VERBOSE set: each unwind's PCs on stderr (seed checks) */

static void cleanup(void)
{
	if (file_path[0])
		(void)unlink(file_path);
	if (dir_path[0])
		(void)rmdir(dir_path);
}

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");
	char tmpl[PATH_MAX];

	snprintf(tmpl, sizeof(tmpl), "%s/fuzz-elf.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	/* The unwinder follows no symbolic link on the way: use the resolved path. */
	if (!mkdtemp(tmpl) || !realpath(tmpl, dir_path))
		abort();
	snprintf(file_path, sizeof(file_path), "%s/image", dir_path);
	atexit(cleanup);
	verbose = getenv("FUZZ_ELF_VERBOSE") != NULL;
	file_fd = open(file_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	mem_fd = memfd_create("elf", MFD_CLOEXEC);
	if (file_fd < 0 || mem_fd < 0 || fstat(file_fd, &file_st) < 0)
		abort();
}

static void put_bytes(int fd, const uint8_t *data, size_t size)
{
	if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
}

static uint64_t page_down(uint64_t x)
{
	return x & ~(uint64_t)(PAGE - 1);
}

/* ---- 1. maplog-elf.c ---- */

static bool info_equal(const struct maplog_elf_info *a, const struct maplog_elf_info *b)
{
	if (a->e_type != b->e_type || a->v != b->v || a->has_exec_section != b->has_exec_section ||
	    a->exec_start != b->exec_start || a->exec_end != b->exec_end ||
	    a->n_load != b->n_load || a->build_id_len != b->build_id_len)
		return false;
	if (a->n_load > MAPLOG_ELF_MAX_LOADS || a->build_id_len > MAPLOG_BUILD_ID_MAX)
		return false;
	for (size_t i = 0; i < a->n_load; i++) {
		const struct maplog_phdr *x = &a->load[i], *y = &b->load[i];

		if (x->p_type != y->p_type || x->p_flags != y->p_flags ||
		    x->p_offset != y->p_offset || x->p_vaddr != y->p_vaddr ||
		    x->p_filesz != y->p_filesz || x->p_memsz != y->p_memsz ||
		    x->p_align != y->p_align)
			return false;
	}
	return memcmp(a->build_id, b->build_id, a->build_id_len) == 0;
}

static void check_info(const struct maplog_elf_info *info)
{
	if (info->e_type != ET_EXEC && info->e_type != ET_DYN && info->e_type != ET_REL)
		abort();
	if (info->n_load > MAPLOG_ELF_MAX_LOADS || info->build_id_len > MAPLOG_BUILD_ID_MAX)
		abort();
	if (!info->has_exec_section && (info->exec_start || info->exec_end))
		abort();
	if (info->has_exec_section && info->exec_start > info->exec_end)
		abort();
	for (size_t i = 0; i < info->n_load; i++) {
		if (info->load[i].p_type != PT_LOAD)
			abort();
	}
	if (info->v != maplog_pl_start_v(info->e_type, info->load, info->n_load))
		abort();
}

/* The rule once through the cached info, and (@with_fd) once through the file. */
static void check_pl_start(const struct maplog_elf_info *info, uint64_t addr, uint64_t pgoff,
			   uint64_t pagesize, bool exec, bool with_fd)
{
	uint64_t pl = 0, bias = 0, pl2 = 0, bias2 = 0;
	int r, r2;

	r = maplog_elf_info_pl_start(info, addr, pgoff, pagesize, exec, &pl, &bias);
	if (r == 0) {
		if (info->e_type == ET_EXEC && bias != 0)
			abort();
		if (bias & (pagesize - 1))
			abort();
		if (pl != bias + info->v)
			abort();
	} else if (r != -EINVAL && r != -ENOENT && r != -ENOEXEC) {
		abort();
	}
	if (!with_fd)
		return;
	r2 = maplog_elf_pl_start(mem_fd, addr, pgoff, pagesize, exec, &pl2, &bias2);
	if (r2 != r || (r == 0 && (pl2 != pl || bias2 != bias)))
		abort();
}

static void fuzz_maplog(const uint8_t *data, size_t size, const struct trailer *t,
			struct maplog_elf_info *ret_info, bool *ret_ok)
{
	static const uint64_t pagesizes[] = { PAGE, 16 * PAGE };
	static const uint64_t biases[] = { 0, DYN_BIAS };
	struct maplog_elf_info a, b;
	unsigned int fd_checks = 0;
	int ra, rb;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	ra = maplog_elf_info_mem(data, size, &a);
	rb = maplog_elf_info_fd(mem_fd, &b);
	if (ra != 0 && ra != -ENOEXEC && ra != -E2BIG && ra != -ENOMEM)
		abort();
	if (ra != rb || (ra == 0 && !info_equal(&a, &b)))
		abort();
	*ret_ok = ra == 0;
	if (ra != 0) {
		uint64_t pl, bias;
		int r;

		/* The rule reads only the program headers: it may work where info did not. */
		r = maplog_elf_pl_start(mem_fd, page_down(t->regs[REG_IP]), page_down(t->bias),
					PAGE, true, &pl, &bias);
		if (r != 0 && r != -EINVAL && r != -ENOENT && r != -ENOEXEC && r != -E2BIG)
			abort();
		return;
	}
	check_info(&a);
	for (size_t i = 0; i < a.n_load && i < 4; i++) {
		const struct maplog_phdr *p = &a.load[i];

		for (size_t k = 0; k < sizeof(pagesizes) / sizeof(pagesizes[0]); k++) {
			uint64_t ps = pagesizes[k];

			for (size_t j = 0; j < sizeof(biases) / sizeof(biases[0]); j++) {
				uint64_t addr = (p->p_vaddr + biases[j]) & ~(ps - 1);
				uint64_t pgoff = p->p_offset & ~(ps - 1);

				check_pl_start(&a, addr, pgoff, ps, true, fd_checks < 4);
				check_pl_start(&a, addr, pgoff, ps, false, fd_checks < 4);
				fd_checks++;
			}
		}
	}
	/* Hostile addresses: from the trailer, aligned or not. */
	check_pl_start(&a, t->regs[REG_IP], t->regs[REG_SP], PAGE, true, false);
	check_pl_start(&a, page_down(t->regs[REG_IP]), page_down(t->regs[REG_BP]), PAGE,
		       t->flags & 1, true);
	check_pl_start(&a, page_down(t->bias), 0, (uint64_t)1 << (t->flags >> 8 & 63), t->flags & 2,
		       false);
	*ret_info = a;
}

/* ---- 2. src/unwind ---- */

static const struct maplog_map *fz_find_map(void *ctx, int32_t pid, uint64_t addr)
{
	const struct fz_find *f = ctx;

	(void)pid;
	if (addr >= f->map.start && addr < f->map.end)
		return &f->map;
	return NULL;
}

/* The mapping of the file bytes [offset, offset + len) at @runtime (page-widened). */
static void set_map(struct maplog_map *m, uint64_t runtime, uint64_t offset, uint64_t len)
{
	uint64_t start = page_down(runtime), end;

	/* Room for one page above start: the top page of the address space is left out. */
	if (start > UINT64_MAX - 2 * (uint64_t)PAGE + 1)
		start = UINT64_MAX - 2 * (uint64_t)PAGE + 1;
	if (__builtin_add_overflow(runtime, len, &end) ||
	    __builtin_add_overflow(end, PAGE - 1, &end))
		end = start + PAGE;
	end = page_down(end);
	if (end <= start)
		end = start + PAGE;
	m->start = start;
	m->end = end;
	m->pgoff = page_down(offset);
}

static uint64_t fold(const struct maplog_map *m, uint64_t ip)
{
	if (ip >= m->start && ip < m->end)
		return ip;
	return m->start + (ip - m->start) % (m->end - m->start);
}

static void check_stats(const struct unwind_ctx *u, uint64_t calls, size_t size)
{
	const struct unwind_stats *st = unwind_ctx__stats(u);
	uint64_t sum = 0;

	for (unsigned int i = 0; i < UNWIND_OUTCOME_MAX; i++)
		sum += st->outcomes[i];
	if (st->samples != calls || sum != calls)
		abort();
	/* One file: parsed at most once per context, however many samples use it. */
	if (st->elf_opened > 1 || st->elf_evicted != 0 || st->elf_bytes > size)
		abort();
}

static void unwind_one(struct unwind_ctx *u, int32_t pid, const struct rec_sample *s,
		       uint32_t small_max, uint64_t *calls)
{
	uint64_t pcs[MAXPCS], pcs2[MAXPCS];
	enum unwind_outcome o = UNWIND_OUTCOME_MAX, o2 = UNWIND_OUTCOME_MAX;
	int n, n2;

	n = unwind_ctx__unwind(u, pid, s, pcs, MAXPCS, &o);
	(*calls)++;
	if (verbose) {
		fprintf(stderr, "fuzz-elf: pid %d ip %#llx: %d pcs, %s:", (int)pid,
			(unsigned long long)s->regs[REG_IP], n, unwind_outcome_name(o));
		for (int i = 0; i < n && i < MAXPCS; i++)
			fprintf(stderr, " %#llx", (unsigned long long)pcs[i]);
		fprintf(stderr, "\n");
	}
	if (n < 0 || n > MAXPCS || (unsigned int)o >= UNWIND_OUTCOME_MAX)
		abort();
	if (strcmp(unwind_outcome_name(o), "?") == 0)
		abort();
	/* 64-bit registers and room for PCs: at least the sampled IP. */
	if (n < 1 || pcs[0] != s->regs[REG_IP])
		abort();
	if (o == UNWIND_NO_REGS || (o == UNWIND_DEPTH && n != MAXPCS))
		abort();
	/* Fewer frames allowed: the same walk, cut at small_max (libunwind's cache warm now). */
	n2 = unwind_ctx__unwind(u, pid, s, pcs2, small_max, &o2);
	(*calls)++;
	if (verbose) {
		fprintf(stderr, "fuzz-elf:   again with max %u: %d pcs, %s:", small_max, n2,
			unwind_outcome_name(o2));
		for (int i = 0; i < n2 && i < MAXPCS; i++)
			fprintf(stderr, " %#llx", (unsigned long long)pcs2[i]);
		fprintf(stderr, "\n");
	}
	if (n2 < 0 || (uint32_t)n2 > small_max || (unsigned int)o2 >= UNWIND_OUTCOME_MAX)
		abort();
	if (n2 > n || memcmp(pcs, pcs2, (size_t)n2 * sizeof(pcs[0])) != 0)
		abort();
	if ((uint32_t)n > small_max) {
		if ((uint32_t)n2 != small_max || o2 != UNWIND_DEPTH)
			abort();
	} else if ((uint32_t)n == small_max) {
		/* The walk stops at max before its next step (always so for max 1). */
		if (n2 != n || (o2 != o && o2 != UNWIND_DEPTH))
			abort();
	} else if (n2 != n || o2 != o) {
		abort();
	}
}

static uint64_t elf_entry(const uint8_t *data, size_t size)
{
	Elf64_Ehdr eh;

	if (size < sizeof(eh))
		return 0;
	memcpy(&eh, data, sizeof(eh));
	return eh.e_entry;
}

static void fuzz_unwind(const uint8_t *data, size_t size, const struct trailer *t,
			const uint8_t *stack, uint64_t stack_len,
			const struct maplog_elf_info *info, bool info_ok)
{
	struct fz_find f;
	struct unwind_ctx *u = NULL;
	struct rec_sample s;
	const struct maplog_phdr *x = NULL;
	uint64_t calls = 0, bias, ips[3], missing;
	uint16_t e_type = size >= 18 ? (uint16_t)(data[16] | data[17] << 8) : 0;
	uint32_t small_max = 1 + (t->flags >> 16 & 7);
	int r;

	memset(&f, 0, sizeof(f));
	r = unwind_ctx__new(0, fz_find_map, &f, &u);
	if (r < 0)
		abort();
	f.map.dev = (uint64_t)file_st.st_dev;
	f.map.inode = (uint64_t)file_st.st_ino;
	f.map.path = file_path;
	f.map.pid = (int32_t)getpid(); /* opened through our own /proc/PID/root */

	memset(&s, 0, sizeof(s));
	s.regs_abi = UNWIND_REGS_ABI_64;
	s.nr_regs = UNWIND_NR_REGS;
	memcpy(s.regs, t->regs, sizeof(t->regs));
	if (stack_len == 0 && s.regs[REG_SP] == 0)
		s.regs[REG_SP] = DEFAULT_SP;
	missing = (uint64_t)(t->flags & 0xff) * 8;
	s.stack = stack_len ? stack : NULL;
	s.stack_size = stack_len;
	s.stack_dyn_size = stack_len > missing ? stack_len - missing : 0;

	/* 1: the first executable PT_LOAD where the loader would put it. */
	if (info_ok) {
		for (size_t i = 0; i < info->n_load; i++) {
			if (info->load[i].p_flags & PF_X) {
				x = &info->load[i];
				break;
			}
		}
		if (!x && info->n_load)
			x = &info->load[0];
	}
	if (e_type == ET_EXEC)
		bias = 0;
	else if (t->bias && t->bias < USER_TOP && !(t->bias & (PAGE - 1)))
		bias = t->bias;
	else
		bias = DYN_BIAS;
	if (x)
		set_map(&f.map, x->p_vaddr + bias, x->p_offset, x->p_filesz);
	else
		set_map(&f.map, 0x400000 + bias, 0, size);
	ips[0] = t->regs[REG_IP];
	ips[1] = elf_entry(data, size) + bias;
	ips[2] = info_ok && info->has_exec_section ? info->exec_start + bias : ips[1] + 1;
	for (size_t i = 0; i < 3; i++) {
		s.regs[REG_IP] = fold(&f.map, ips[i]);
		unwind_one(u, PID_NATURAL, &s, small_max, &calls);
	}

	/* A 32-bit task: the sampled IP and UNWIND_ERROR, nothing read. */
	{
		uint64_t pcs[2];
		enum unwind_outcome o;
		struct rec_sample s32 = s;

		s32.regs_abi = 1;
		if (unwind_ctx__unwind(u, PID_NATURAL, &s32, pcs, 2, &o) != 1 ||
		    o != UNWIND_ERROR || pcs[0] != s32.regs[REG_IP])
			abort();
		calls++;
	}

	/* 2: the whole file from offset 0 (one mapping over every segment, LLD-like). */
	if (e_type == ET_EXEC) {
		set_map(&f.map, x ? x->p_vaddr - x->p_offset : 0x400000, 0, size);
		s.regs[REG_IP] = fold(&f.map, ips[0]);
	} else {
		set_map(&f.map, FILE_BASE, 0, size);
		s.regs[REG_IP] = fold(&f.map, ips[0] - bias + FILE_BASE);
	}
	unwind_one(u, PID_WHOLEFILE, &s, small_max, &calls);

	check_stats(u, calls, size);
	unwind_ctx__free(u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trailer t;
	struct maplog_elf_info info;
	uint8_t *stack = NULL;
	uint64_t stack_len = 0;
	bool info_ok = false;

	if (file_fd < 0)
		setup();
	memset(&t, 0, sizeof(t));
	memset(&info, 0, sizeof(info));
	if (size >= TRAILER_BYTES) {
		size_t room = size - TRAILER_BYTES;

		memcpy(&t, data + room, TRAILER_BYTES);
		stack_len = t.stack_len < room ? t.stack_len : room;
		if (stack_len > STACK_MAX)
			stack_len = STACK_MAX;
		/* Exactly the snapshot's bytes on the heap: ASan sees any read past them. */
		if (stack_len) {
			stack = malloc(stack_len);
			if (!stack)
				abort();
			memcpy(stack, data + room - stack_len, stack_len);
		}
	}
	put_bytes(mem_fd, data, size);
	put_bytes(file_fd, data, size);

	fuzz_maplog(data, size, &t, &info, &info_ok);
	fuzz_unwind(data, size, &t, stack, stack_len, &info, info_ok);
	free(stack);
	return 0;
}
