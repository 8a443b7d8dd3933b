/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * report-sym.c: the function symbols of an ELF image (with its separate debug file)
 * or of a kallsyms file, sorted once and looked up by binary search.
 *
 * PUBLIC INTERFACES
 *   report_symtab__open(), report_symtab__kallsyms(), report_symtab__free(),
 *   report_symtab__lookup(), report_symtab__find(), report_symtab__nsyms(),
 *   report_symtab__sym(), report_symtab__info(), report_symtab__source(),
 *   report_symtab__debug_path(), report_sym_source_name(), report_debug_memo__new(),
 *   report_debug_memo__free(), report_debug_memo__stats() (see
 *   include/hwpmcd/report-sym.h); report_file_crc32() (report-int.h)
 *
 * IMPLEMENTATION NOTES
 *   Building goes through a "builder": a growing array of raw entries (start, size,
 *   limit, name offset and length, module offset, binding rank, kind) and a growing
 *   string pool.  The ELF path copies each kept name into that pool, because the file
 *   is closed before we return; the kallsyms path reads the whole file into one
 *   buffer, ends every name in place with a NUL and uses the buffer itself as the
 *   pool, so parsing 120k lines costs no allocation per line.  The builder is then
 *   sorted (by start, then by preference), each run of equal starts becomes one
 *   struct report_sym (with the end of its range beside it, in a struct sym_ent), and
 *   only the kept names (and each distinct module name once per run of equal module
 *   names) are copied into the final pool of the symtab, so the symtab holds no
 *   bytes it does not need.
 *
 *   Aliases: entries with one start keep the preferred name: a typed function
 *   (STT_FUNC, STT_GNU_IFUNC; every kallsyms entry) before a label (below), then
 *   global (and STB_GNU_UNIQUE; kallsyms 'T') before weak ('W', 'w') before local
 *   ('t') before any other binding, then the shorter name, then the smaller in
 *   strcmp() byte order, then no module before a module and the smaller module name.
 *   This is a total order on distinct (name, module) pairs, so the result does not
 *   depend on table order.  The kept entry takes the largest size of its aliases (0
 *   means "unknown", so a known size always wins over it) and the largest limit.
 *
 *   Labels.  Assembly entry points often have no .type: ld.so's _start and
 *   _dl_start_user are STT_NOTYPE, so without labels every process-start call chain
 *   began with "ld-linux-x86-64.so.2+0x1ab77".  An STT_NOTYPE symbol therefore counts
 *   as a function when the section it names is allocated and executable and holds its
 *   value.  That is perf's rule (elf_sym__is_label() and its text-section filter in
 *   dso__load_sym()), except that we test SHF_EXECINSTR where perf tests that the
 *   section's name contains "text": the flag is what makes code code, and it also
 *   admits .init, .fini and .plt.  Like perf we skip hidden and internal labels (in a
 *   linked image those are mostly boundary markers made by the linker, not entry
 *   points; the entry points above keep default visibility) and names starting with
 *   '$' (the mapping symbols of ARM, AArch64 and RISC-V: $a, $d, $t, $x...).  Labels
 *   in data sections (__bss_start, _end, data_start, __GNU_EH_FRAME_HDR) are not code,
 *   and one at its section's end (_etext) would hold nothing, so neither is kept.  A
 *   label with a size is a sized function.
 *
 *   Ranges: a function with a size holds [start, start + size) (saturated at
 *   2^64 - 1).  One of size 0 (a label, an assembly function without .size, every
 *   kallsyms entry) holds from its start to the next function's start (sized or not),
 *   cut at its limit: the end of the executable section that holds it.  The last
 *   function, if it has size 0, holds up to its limit.  This is perf's
 *   symbols__fixup_end(), with the section as the bound perf takes from the map.
 *   Without a known limit (kallsyms, which has no sections; an ELF function whose
 *   section index is reserved, or whose section is not executable or does not hold
 *   it) a function of size 0 holds up to the next start, and the last one 4096 bytes.
 *   A sized function always wins where it covers an address: one of size 0 holds only
 *   what no sized function covers, so a label inside a sized function names nothing
 *   there, but it may hold the gap after that function's end up to the next start.
 *   So the rule is: the sized function with the greatest start <= addr that holds
 *   addr, else the function of size 0 with the greatest start <= addr if its range
 *   holds addr (the ranges of functions of size 0 never overlap each other).  Each
 *   function's own end is computed once when the table is built.  When no function
 *   reaches past the next one's start (the normal case; only a sized function can),
 *   lookup is one binary search over the functions and a check of the found one's
 *   end.  If sized functions overlap or nest, or a function of size 0 lies inside a
 *   sized one, looking at a few predecessors is not enough (50 small functions nested
 *   in a large one would defeat any fixed window), so the symtab is then given an
 *   exact partition of the address space into segments, each naming its function (or
 *   none), built once by a sweep with a stack of open sized functions and the latest
 *   function of size 0, and lookup is a binary search over the segments.  The sweep
 *   is exact: the functions on the stack are in start order, every one above the top
 *   that was popped has ended, so the top is the open sized function with the
 *   greatest start; only when the stack is empty does the latest function of size 0
 *   hold the position, while its range lasts.  The table has at most 2n segments and
 *   exists only for tables with overlaps.
 *
 *   Hostile files.  Every file is opened by report_open_regular(): refused with
 *   -ENOEXEC unless it is a regular file, and never opened for reading otherwise,
 *   so neither a FIFO (blocks) nor a device (acts when opened) is touched.  libelf reads with
 *   ELF_C_READ (pread(2), no SIGBUS on a file truncated under us) and checks
 *   section offsets and sizes against the file size; maplog_elf_info_elf() checks
 *   the header, program and section header tables.  Here, a symbol table must link
 *   to an existing SHT_STRTAB section, have a size that is a whole number of
 *   entries, and every function we keep must have its name offset inside its string
 *   table and a NUL before the table's end: a name outside it makes the table
 *   corrupt (-ENOEXEC), not merely the symbol, because nothing else in such a table
 *   can be trusted either.  Names of symbols we do not keep (objects, undefined
 *   symbols) are not looked at.  Symbols with an empty name are skipped.
 *
 *   Memory.  Building libc's table from its debug file first touched 1.8 MB (446
 *   page faults), and a first touch of a page is the cost here: ~10 us a page on a
 *   VM with paravirtualised page tables, where a report of 80,000 samples took
 *   7 ms for that table alone.  So the sort orders 4-byte indices instead of
 *   copying 56-byte entries, raw entries are 48 bytes, and the blocks about to be
 *   filled are faulted in with one madvise() each (util_prefault()): 180 page
 *   faults, 3 ms less (a program that opens libc's table once: 13.5 ms to 10.5).
 *   Mapping the files (libelf's ELF_C_READ_MMAP) saved another 100 faults but
 *   nothing measurable in a report, and a file a user can cut under the mapping
 *   would be a SIGBUS to guard against: not done.
 *
 *   Separate debug files are optional extras: a candidate that cannot be opened, is
 *   not ELF, is corrupt, has no .symtab or does not match (build id, CRC) is
 *   skipped and the next candidate tried; only -ENOMEM ends the search with an
 *   error.  A corrupt image, in contrast, is -ENOEXEC.  A .gnu_debuglink section
 *   that is malformed (no NUL, no room for the CRC, a name with '/' or "." / "..")
 *   is ignored, so a hostile image cannot make us open files outside the three
 *   directories.
 *
 *   Debug files are hostile too: a user's stripped program may name in its
 *   .gnu_debuglink a sparse file of a terabyte, and the CRC once read all of it
 *   (a 2.8 MB profile took 387 s to report, and every push of it was killed).  So
 *   a candidate is matched by build id before any CRC: when both the image and the
 *   candidate have one, the build ids decide (debug_verdict()); only when one of
 *   them has none is the CRC computed, the gnu_debuglink one (standard reflected
 *   CRC-32, zlib's crc32(), as gdb and binutils compute it, over the whole file in
 *   1 MiB pread(2)s), and only of a regular file whose st_size is at most the cap
 *   (REPORT_DEBUG_CRC_MAX, 2 GiB: holes count, so a sparse file over it is never
 *   read) and within the REPORT_DEBUG_CRC_BUDGET (8 GiB) of all the CRCs of a report
 *   (one memo), so that many images each naming a file under the cap cannot add up
 *   either.  A candidate refused for its size is said once (log_notice) and
 *   counted (report_debug_stats.over_cap).
 *
 *   Failures are remembered for the rest of a report, in the report_debug_memo the
 *   caller passes (opts->memo; the report model has one): a hash table of
 *   candidate paths (of no use to any image: missing, not regular, not ELF, corrupt,
 *   without .symtab; else the file's build id, its CRC once computed, whether it is
 *   over the cap) and of the build ids debuginfod gave nothing usable for, and
 *   whether the debuginfod servers failed at the connection level (then they are
 *   not asked again; see fetch_debuginfod() for what libdebuginfod itself keeps).
 *   What is remembered of a path is what the file is, not a verdict for one image:
 *   another image (another build id, another CRC in its link) decides from it
 *   without opening the file, and gets the result a search without the memo gives
 *   (fuzz-debuglink checks that).  The memo holds at most MEMO_MAX entries and its
 *   mutex only around its own reads and writes, never across I/O.
 *
 *   kallsyms lines are exactly "HEX TYPE NAME" with optional "\t[MODULE]", 1 to 16
 *   hex digits, single spaces, a one-byte type and names of bytes above ' ' (not
 *   DEL); anything else (a blank line, "\r", a NUL, an unbracketed module) is
 *   -EPROTO.  Text symbols with address 0 are dropped (as ELF symbols with value 0
 *   are); if none is left, -ENODATA.  The file is limited to 256 MiB (-E2BIG).
 */
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "hwpmcd/common-open.h"
#include "hwpmcd/common.h"
#include "hwpmcd/log.h"
#include "hwpmcd/maplog-jit.h"
#include "hwpmcd/report-sym.h"
#include "report-int.h"

#define DEFAULT_DEBUGDIR "/usr/lib/debug"
/* The most a last function of size 0 holds. */
#define LAST_SYM_MAX 4096
/* The largest kallsyms file read (a real one is 5 to 20 MiB). */
#define KALLSYMS_MAX_BYTES ((size_t)256 << 20)
#define KALLSYMS_FIRST_BUF ((size_t)1 << 20)
/* Bytes read at a time for a debuglink CRC (pread(2) into one buffer). */
#define CRC_CHUNK ((size_t)1 << 20)
/* The entries a report_debug_memo keeps at most (paths and build ids). */
#define MEMO_MAX	   65536
#define NO_MODULE	   SIZE_MAX
#define NO_SYM		   SIZE_MAX

/* Alias preference, best first. */
enum sym_rank { RANK_GLOBAL = 0, RANK_WEAK, RANK_LOCAL, RANK_OTHER, RANK_MAX };
/* What an entry was in its table; at one address a typed function is preferred to a label. */
enum sym_kind { KIND_FUNC = 0, KIND_LABEL, KIND_MAX };

struct raw_sym {
	uint64_t start;
	uint64_t size;
	uint64_t limit; /* the end of the executable section holding start, or 0: unknown */
	size_t name;	/* offset of the NUL-terminated name in the builder's pool */
	size_t module; /* offset of the module name in the pool, or NO_MODULE */
	uint32_t name_len;
	uint8_t rank;	/* enum sym_rank */
	uint8_t kind;	/* enum sym_kind */
};

struct builder {
	struct raw_sym *v;
	size_t n;
	size_t cap;
	char *pool;
	size_t pool_len;
	size_t pool_cap;
};

/* One piece of the address partition: [start, next segment's start) belongs to idx. */
struct sym_seg {
	uint64_t start;
	size_t idx; /* into ents[], or NO_SYM for a gap */
};

/* One function of a symtab: what callers see, and the end of its own range. */
struct sym_ent {
	struct report_sym sym; /* handed out as &ent->sym */
	uint64_t end;	       /* exclusive; see "Ranges" in the file comment */
};

struct report_symtab {
	struct sym_ent *ents; /* n functions, sorted by strictly increasing start */
	size_t n;
	char *pool;	      /* every name and module string of ents[] */
	struct sym_seg *segs; /* only if functions overlap, else NULL */
	size_t nsegs;
	struct maplog_elf_info info;
	enum report_sym_source source;
	char *debug_path;
};

/* An open image: both are released by elf_file_close(). */
struct elf_file {
	int fd;
	Elf *elf;
	uint64_t size; /* st_size when opened */
	struct maplog_elf_info info;
};

/* The contents of an image's .gnu_debuglink section. */
struct debuglink {
	bool present;
	uint32_t crc;
	char name[NAME_MAX + 1];
};

/* Where to look: the prefixes with trailing slashes removed, and the image's path. */
struct sym_paths {
	const char *symfs;
	int symfs_len;
	const char *debugdir;
	int debugdir_len;
	const char *dir; /* the image's directory as the log names it */
	int dir_len;
	const char *dir_sep; /* "/" between a symfs and a relative directory, else "" */
};

/* ---- builder ------------------------------------------------------------------------ */

static void builder_exit(struct builder *b)
{
	free(b->v);
	free(b->pool);
	memset(b, 0, sizeof(*b));
}

static int builder_push(struct builder *b, uint64_t start, uint64_t size, uint64_t limit,
			size_t name, size_t name_len, size_t module, enum sym_rank rank,
			enum sym_kind kind)
{
	struct raw_sym *s;

	if (name_len > UINT32_MAX)
		return -E2BIG; /* a 4 GiB name: no real table has one */
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		struct raw_sym *v;

		if (cap > SIZE_MAX / sizeof(*v))
			return -ENOMEM;
		v = realloc(b->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		b->v = v;
		b->cap = cap;
	}
	s = &b->v[b->n++];
	s->start = start;
	s->size = size;
	s->limit = limit;
	s->name = name;
	s->name_len = (uint32_t)name_len;
	s->module = module;
	s->rank = (uint8_t)rank;
	s->kind = (uint8_t)kind;
	return 0;
}

/*
 * Room for @n more entries and @bytes more pool bytes at once (a symbol table's
 * counts: growing by doubling copied libc's 10,000 symbols several times).
 * Only a hint: 0, or -ENOMEM.
 */
static int builder_reserve(struct builder *b, size_t n, size_t bytes)
{
	size_t cap, pcap;
	void *p;

	if (__builtin_add_overflow(b->n, n, &cap) || cap > SIZE_MAX / sizeof(*b->v) ||
	    __builtin_add_overflow(b->pool_len, bytes, &pcap))
		return -ENOMEM;
	if (cap > b->cap) {
		p = realloc(b->v, cap * sizeof(*b->v));
		if (!p)
			return -ENOMEM;
		b->v = p;
		b->cap = cap;
		/* About to be filled (file comment: "Memory") */
		util_prefault(b->v + b->n, (cap - b->n) * sizeof(*b->v));
	}
	if (pcap > b->pool_cap) {
		p = realloc(b->pool, pcap);
		if (!p)
			return -ENOMEM;
		b->pool = p;
		b->pool_cap = pcap;
		util_prefault(b->pool + b->pool_len, pcap - b->pool_len);
	}
	return 0;
}

/* Copy @len bytes of @s plus a NUL into the pool; *ret_off is where they went. */
static int builder_add_string(struct builder *b, const char *s, size_t len, size_t *ret_off)
{
	size_t need;

	if (__builtin_add_overflow(b->pool_len, len + 1, &need))
		return -ENOMEM;
	if (need > b->pool_cap) {
		size_t cap = b->pool_cap ? b->pool_cap : 4096;
		char *p;

		while (cap < need) {
			if (cap > SIZE_MAX / 2)
				return -ENOMEM;
			cap *= 2;
		}
		p = realloc(b->pool, cap);
		if (!p)
			return -ENOMEM;
		b->pool = p;
		b->pool_cap = cap;
	}
	memcpy(b->pool + b->pool_len, s, len);
	b->pool[b->pool_len + len] = '\0';
	*ret_off = b->pool_len;
	b->pool_len = need;
	return 0;
}

static int cmp_opt_str(const char *pool, size_t a, size_t b)
{
	if (a == b)
		return 0;
	if (a == NO_MODULE)
		return -1;
	if (b == NO_MODULE)
		return 1;
	return strcmp(pool + a, pool + b);
}

/* Start, then the alias preference of the file comment; the best alias comes first. */
static int cmp_raw(const struct raw_sym *a, const struct raw_sym *b, const char *pool)
{
	int c;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->name_len != b->name_len)
		return a->name_len < b->name_len ? -1 : 1;
	c = strcmp(pool + a->name, pool + b->name);
	if (c != 0)
		return c;
	c = cmp_opt_str(pool, a->module, b->module);
	if (c != 0)
		return c;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return 0;
}

/* cmp_raw() of the entries two indices name (qsort_r on an order). */
static int cmp_order(const void *pa, const void *pb, void *arg)
{
	const struct builder *b = arg;

	return cmp_raw(&b->v[*(const uint32_t *)pa], &b->v[*(const uint32_t *)pb], b->pool);
}

/*
 * The builder's entries in cmp_raw's order, as indices into b->v (*ret_order, the
 * caller frees it): a stable LSD radix sort of the indices by start, over the
 * bytes in which starts differ (a table's starts share their high bytes: 3 or 4
 * passes), then each run of one start (aliases: a few entries) by the whole
 * comparator.  libc's debug file (6,000 functions) took 2 ms in qsort_r with
 * cmp_raw, most of a report's symbol cost.  Indices, not copies of the entries:
 * 8 bytes an entry instead of 88, as each first touch of a page costs (file
 * comment: "Memory").  Returns 0 or -ENOMEM.
 */
static int sort_raw(const struct builder *b, uint32_t **ret_order)
{
	uint32_t *k, *tmp, *swap;
	uint64_t differ = 0;
	size_t n = b->n;

	if (n > UINT32_MAX || n > SIZE_MAX / sizeof(*k) / 2)
		return -ENOMEM;
	k = malloc(2 * (n ? n : 1) * sizeof(*k));
	if (!k)
		return -ENOMEM;
	util_prefault(k, 2 * n * sizeof(*k));
	tmp = k + n;
	for (size_t i = 0; i < n; i++) {
		k[i] = (uint32_t)i;
		differ |= b->v[i].start ^ b->v[0].start;
	}
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t count[256] = { 0 }, sum = 0;

		if (!((differ >> shift) & 0xff))
			continue;
		for (size_t i = 0; i < n; i++)
			count[(b->v[k[i]].start >> shift) & 0xff]++;
		for (size_t d = 0; d < 256; d++) {
			size_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[(b->v[k[i]].start >> shift) & 0xff]++] = k[i];
		swap = k, k = tmp, tmp = swap;
	}
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && b->v[k[j]].start == b->v[k[i]].start; j++)
			;
		if (j - i > 1)
			qsort_r(k + i, j - i, sizeof(*k), cmp_order, (void *)(uintptr_t)b);
	}
	if (k > tmp) {
		/* The result is in the block's second half: to the front. */
		memmove(tmp, k, n * sizeof(*k));
		k = tmp;
	}
	*ret_order = k;
	return 0;
}

/* ---- ranges and lookup -------------------------------------------------------------- */

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

/*
 * The end (exclusive) of the range of t->ents[i] (see "Ranges" in the file comment),
 * whose limit (the end of its executable section, 0 if unknown) is @limit.
 */
static uint64_t range_end(const struct report_symtab *t, size_t i, uint64_t limit)
{
	const struct report_sym *s = &t->ents[i].sym;
	uint64_t next;

	if (s->size > 0)
		return add_sat(s->start, s->size);
	if (i + 1 < t->n) {
		next = t->ents[i + 1].sym.start;
		return limit != 0 && limit < next ? limit : next;
	}
	return limit != 0 ? limit : add_sat(s->start, LAST_SYM_MAX);
}

static void seg_emit(struct sym_seg *segs, size_t *k, uint64_t start, size_t idx)
{
	if (*k > 0 && segs[*k - 1].idx == idx)
		return;
	segs[*k].start = start;
	segs[*k].idx = idx;
	(*k)++;
}

/*
 * If any function reaches past the next one's start, build the segment partition of
 * the file comment.  Only a sized function can (a function of size 0 ends at the next
 * start at the latest).  Sized functions open onto a stack; functions of size 0 are
 * never pushed: the latest one to start is remembered in z, and it holds a position
 * only while the stack is empty and its range lasts.  Each loop turn moves pos to the
 * next start, the end of the top of the stack (popped in the next turn) or the end of
 * z's range, strictly forward; each of those is the start or the end of some function,
 * so there are at most 2n turns and segments.
 */
static int build_segments(struct report_symtab *t)
{
	struct sym_seg *segs;
	size_t *stack;
	size_t sp = 0, k = 0, i = 0, z = NO_SYM;
	uint64_t pos;
	bool overlap = false;

	for (size_t j = 0; j + 1 < t->n; j++) {
		if (t->ents[j].end > t->ents[j + 1].sym.start) {
			overlap = true;
			break;
		}
	}
	if (!overlap)
		return 0;
	if (t->n > (SIZE_MAX / sizeof(*segs) - 1) / 2)
		return -ENOMEM;
	segs = malloc((2 * t->n + 1) * sizeof(*segs));
	stack = malloc(t->n * sizeof(*stack));
	if (!segs || !stack) {
		free(segs);
		free(stack);
		return -ENOMEM;
	}
	pos = t->ents[0].sym.start;
	for (;;) {
		uint64_t next = 0;
		bool have_next = false;
		size_t holder = NO_SYM;

		/* Starts are unique, so at most one function opens here. */
		if (i < t->n && t->ents[i].sym.start == pos) {
			if (t->ents[i].sym.size > 0)
				stack[sp++] = i;
			else
				z = i;
			i++;
		}
		while (sp > 0 && t->ents[stack[sp - 1]].end <= pos)
			sp--;
		if (sp > 0)
			holder = stack[sp - 1];
		else if (z != NO_SYM && pos < t->ents[z].end)
			holder = z;
		seg_emit(segs, &k, pos, holder);
		if (i < t->n) {
			next = t->ents[i].sym.start;
			have_next = true;
		}
		if (sp > 0 && (!have_next || t->ents[stack[sp - 1]].end < next)) {
			next = t->ents[stack[sp - 1]].end;
			have_next = true;
		}
		if (z != NO_SYM && pos < t->ents[z].end && (!have_next || t->ents[z].end < next)) {
			next = t->ents[z].end;
			have_next = true;
		}
		if (!have_next)
			break;
		pos = next;
	}
	free(stack);
	t->segs = segs;
	t->nsegs = k;
	return 0;
}

const struct report_sym *report_symtab__lookup(const struct report_symtab *t, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!t || t->n == 0)
		return NULL;
	if (t->segs) {
		hi = t->nsegs;
		/* lo ends as the number of segments starting at or below addr. */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (t->segs[mid].start <= addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == 0 || t->segs[lo - 1].idx == NO_SYM)
			return NULL;
		return &t->ents[t->segs[lo - 1].idx].sym;
	}
	hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->ents[mid].sym.start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= t->ents[lo - 1].end)
		return NULL;
	return &t->ents[lo - 1].sym;
}

/* ---- building the symtab ------------------------------------------------------------ */

/* Whether module @mod (an offset, or NO_MODULE) differs from the previous kept one. */
static bool new_module(const struct builder *b, size_t mod, size_t prev_mod)
{
	if (mod == NO_MODULE)
		return false;
	return prev_mod == NO_MODULE || strcmp(b->pool + mod, b->pool + prev_mod) != 0;
}

/*
 * Sort and dedupe the builder into t->ents and t->pool (see the file comment), give
 * every function the end of its range, then build the segments if needed.  The
 * builder keeps its memory; the caller frees it.
 */
static int symtab_build(struct report_symtab *t, struct builder *b)
{
	size_t m = 0, bytes = 0, prev_mod = NO_MODULE;
	size_t k = 0, used = 0;
	const char *mod_str = NULL;
	uint32_t *order;
	int err = -ENOMEM;

	if (b->n == 0)
		return 0;
	if (sort_raw(b, &order) < 0)
		return -ENOMEM;
	/* First pass: how many functions and pool bytes the kept entries need. */
	for (size_t i = 0; i < b->n; i++) {
		const struct raw_sym *e = &b->v[order[i]];

		if (i > 0 && e->start == b->v[order[i - 1]].start)
			continue;
		m++;
		bytes += e->name_len + 1;
		if (new_module(b, e->module, prev_mod))
			bytes += strlen(b->pool + e->module) + 1;
		if (e->module != NO_MODULE)
			prev_mod = e->module;
	}
	if (m > SIZE_MAX / sizeof(*t->ents))
		goto out;
	t->ents = malloc(m * sizeof(*t->ents));
	t->pool = malloc(bytes);
	if (!t->ents || !t->pool)
		goto out;
	util_prefault(t->ents, m * sizeof(*t->ents));
	util_prefault(t->pool, bytes);
	/*
	 * Second pass: the same decisions, now copying.  Until the ends are known, an
	 * entry's end field holds its limit.
	 */
	prev_mod = NO_MODULE;
	for (size_t i = 0; i < b->n; i++) {
		const struct raw_sym *r = &b->v[order[i]];
		struct sym_ent *e;
		struct report_sym *s;

		if (i > 0 && r->start == b->v[order[i - 1]].start) {
			/*
			 * An alias: only its size and limit count (the largest known ones win,
			 * so the result does not depend on which alias was kept).
			 */
			e = &t->ents[k - 1];
			if (r->size > e->sym.size)
				e->sym.size = r->size;
			if (r->limit > e->end)
				e->end = r->limit;
			continue;
		}
		e = &t->ents[k++];
		s = &e->sym;
		s->start = r->start;
		s->size = r->size;
		e->end = r->limit;
		memcpy(t->pool + used, b->pool + r->name, r->name_len + 1);
		s->name = t->pool + used;
		used += r->name_len + 1;
		if (new_module(b, r->module, prev_mod)) {
			size_t len = strlen(b->pool + r->module);

			memcpy(t->pool + used, b->pool + r->module, len + 1);
			mod_str = t->pool + used;
			used += len + 1;
		}
		if (r->module != NO_MODULE)
			prev_mod = r->module;
		s->module = r->module != NO_MODULE ? mod_str : NULL;
	}
	t->n = m;
	/* In start order: range_end() reads only the next entry's start, never its end. */
	for (size_t i = 0; i < m; i++)
		t->ents[i].end = range_end(t, i, t->ents[i].end);
	err = build_segments(t);
out:
	free(order);
	return err;
}

/* ---- files -------------------------------------------------------------------------- */

/*
 * Open @path for reading; refuse anything but a regular file without opening it:
 * an open(2) of a device can act (a watchdog device arms the watchdog), and a log
 * or a debuglink may name any path.  util_open_read() does it (common-open.h), so
 * that a confined report's every file comes from its broker.
 */
int report_open_regular(const char *path, uint64_t *ret_size)
{
	return util_open_read(path, UTIL_OPEN_REGULAR, ret_size);
}

static int open_regular(const char *path, int *ret_fd, off_t *ret_size)
{
	uint64_t size;
	int fd = report_open_regular(path, &size);

	if (fd < 0)
		return fd;
	*ret_fd = fd;
	if (ret_size)
		*ret_size = (off_t)size;
	return 0;
}

static void elf_file_close(struct elf_file *f)
{
	if (f->elf)
		(void)elf_end(f->elf);
	f->elf = NULL;
	if (f->fd >= 0)
		(void)close(f->fd);
	f->fd = -1;
}

/* Open @path, begin libelf on it and read its maplog_elf_info.  Closed on failure. */
static int elf_file_open(const char *path, struct elf_file *f)
{
	int r;

	f->elf = NULL;
	f->fd = report_open_regular(path, &f->size);
	if (f->fd < 0)
		return f->fd;
	/* elf_version() only records the version; calling it every time is harmless. */
	if (elf_version(EV_CURRENT) == EV_NONE) {
		r = -ENOTSUP;
		goto err;
	}
	f->elf = elf_begin(f->fd, ELF_C_READ, NULL);
	if (!f->elf) {
		r = -ENOEXEC;
		goto err;
	}
	r = maplog_elf_info_elf(f->elf, &f->info);
	if (r < 0)
		goto err;
	return 0;
err:
	elf_file_close(f);
	return r;
}

/* ---- ELF symbol tables -------------------------------------------------------------- */

static enum sym_rank elf_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return RANK_GLOBAL;
	case STB_WEAK:
		return RANK_WEAK;
	case STB_LOCAL:
		return RANK_LOCAL;
	default:
		return RANK_OTHER;
	}
}

/*
 * The end of the section of @elf that symbol @s names, if that section is allocated,
 * executable and holds s->st_value; else 0.  A section index that is reserved
 * (SHN_ABS, SHN_COMMON, SHN_XINDEX: the real index would be in SHT_SYMTAB_SHNDX) or
 * beyond the @shnum sections gives 0 too: no limit is known.
 */
static uint64_t exec_section_end(Elf *elf, size_t shnum, const GElf_Sym *s)
{
	Elf_Scn *scn;
	GElf_Shdr sh;
	uint64_t end;

	if (s->st_shndx >= SHN_LORESERVE || s->st_shndx >= shnum)
		return 0;
	scn = elf_getscn(elf, s->st_shndx);
	if (!scn || gelf_getshdr(scn, &sh) != &sh)
		return 0;
	if ((sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR))
		return 0;
	end = add_sat(sh.sh_addr, sh.sh_size);
	if (s->st_value < sh.sh_addr || s->st_value >= end)
		return 0;
	return end;
}

/*
 * Add the functions of the symbol table section @scn (header @sh) to @b.  Returns 0,
 * -ENOEXEC for a corrupt table (see the file comment) or -ENOMEM.
 */
static int read_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct builder *b)
{
	Elf_Scn *strscn;
	GElf_Shdr strsh;
	Elf_Data *data, *strdata;
	const char *str;
	size_t shnum, entsize, count, strsize;
	int r;

	if (sh->sh_size == 0)
		return 0;
	if (elf_getshdrnum(elf, &shnum) != 0)
		return -ENOEXEC;
	if (sh->sh_link == SHN_UNDEF || sh->sh_link >= shnum)
		return -ENOEXEC;
	strscn = elf_getscn(elf, sh->sh_link);
	if (!strscn || gelf_getshdr(strscn, &strsh) != &strsh || strsh.sh_type != SHT_STRTAB)
		return -ENOEXEC;
	entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	if (entsize == 0 || sh->sh_size % entsize != 0)
		return -ENOEXEC;
	/* libelf checks sh_offset + sh_size against the file size. */
	data = elf_getdata(scn, NULL);
	if (!data || data->d_type != ELF_T_SYM || !data->d_buf)
		return -ENOEXEC;
	count = data->d_size / entsize;
	if (count > INT_MAX)
		return -ENOEXEC;
	strdata = elf_getdata(strscn, NULL);
	if (strdata && strdata->d_size > 0 && !strdata->d_buf)
		return -ENOEXEC;
	str = strdata ? strdata->d_buf : NULL;
	strsize = strdata ? strdata->d_size : 0;
	/* At most every symbol, and every name once (the sizes of sections we read). */
	if ((r = builder_reserve(b, count, strsize)) < 0)
		return r;

	/* Entry 0 is the null symbol. */
	for (size_t i = 1; i < count; i++) {
		GElf_Sym s;
		const char *name, *nul;
		unsigned char type, vis;
		uint64_t limit = 0;
		bool label;
		size_t off;

		if (gelf_getsym(data, (int)i, &s) != &s)
			return -ENOEXEC;
		type = GELF_ST_TYPE(s.st_info);
		label = type == STT_NOTYPE;
		if (type != STT_FUNC && type != STT_GNU_IFUNC && !label)
			continue;
		if (s.st_shndx == SHN_UNDEF || s.st_value == 0 || s.st_name == 0)
			continue;
		/* Only a function of size 0 and a label need their section (file comment). */
		if (label || s.st_size == 0)
			limit = exec_section_end(elf, shnum, &s);
		if (label) {
			vis = GELF_ST_VISIBILITY(s.st_other);
			if (limit == 0 || vis == STV_HIDDEN || vis == STV_INTERNAL)
				continue;
		}
		if (s.st_name >= strsize)
			return -ENOEXEC;
		name = str + s.st_name;
		nul = memchr(name, '\0', strsize - s.st_name);
		if (!nul)
			return -ENOEXEC;
		if (nul == name)
			continue;
		/* ARM, AArch64 and RISC-V mapping symbols ($a, $d, $t, $x...) name no function. */
		if (label && name[0] == '$')
			continue;
		r = builder_add_string(b, name, (size_t)(nul - name), &off);
		if (r < 0)
			return r;
		r = builder_push(b, s.st_value, s.st_size, limit, off, (size_t)(nul - name),
				 NO_MODULE, elf_rank(GELF_ST_BIND(s.st_info)),
				 label ? KIND_LABEL : KIND_FUNC);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Whether @elf has a section of type @type (SHT_SYMTAB, SHT_DYNSYM) in *ret_found;
 * if @b is not NULL, also add the functions of every such section to it.
 */
static int scan_tables(Elf *elf, uint32_t type, struct builder *b, bool *ret_found)
{
	Elf_Scn *scn = NULL;
	bool found = false;
	int r;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) != &sh)
			return -ENOEXEC;
		if (sh.sh_type != type)
			continue;
		found = true;
		if (b) {
			r = read_symbols(elf, scn, &sh, b);
			if (r < 0)
				return r;
		}
	}
	*ret_found = found;
	return 0;
}

/* Read the image's .gnu_debuglink into @dl; a missing or malformed one leaves it absent. */
static void read_debuglink(Elf *elf, struct debuglink *dl)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *ident;

	dl->present = false;
	ident = elf_getident(elf, NULL);
	if (!ident || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *data;
		const uint8_t *p, *c;
		const char *name;
		size_t len, off;

		if (gelf_getshdr(scn, &sh) != &sh)
			return;
		if (sh.sh_type != SHT_PROGBITS)
			continue;
		/* elf_strptr() checks the offset and the NUL against the section. */
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".gnu_debuglink") != 0)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			return;
		p = data->d_buf;
		c = memchr(p, '\0', data->d_size);
		if (!c)
			return;
		len = (size_t)(c - p);
		if (len == 0 || len > NAME_MAX || memchr(p, '/', len) ||
		    strcmp((const char *)p, ".") == 0 || strcmp((const char *)p, "..") == 0)
			return;
		/* The CRC follows the name, padded to 4 bytes, in the file's byte order. */
		off = (len + 1 + 3) & ~(size_t)3;
		if (off > data->d_size || data->d_size - off < 4)
			return;
		c = p + off;
		if (ident[EI_DATA] == ELFDATA2MSB)
			dl->crc = (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 |
				  (uint32_t)c[2] << 8 | c[3];
		else
			dl->crc = (uint32_t)c[3] << 24 | (uint32_t)c[2] << 16 |
				  (uint32_t)c[1] << 8 | c[0];
		memcpy(dl->name, p, len + 1);
		dl->present = true;
		return;
	}
}

/*
 * See report-int.h.  zlib's crc32() is the reflected polynomial 0xedb88320 of gdb
 * and binutils, over CRC_CHUNK-byte pread(2)s; a file that turns out longer than
 * @max (it grew since its fstat()) is never read further.
 */
int report_file_crc32(int fd, uint64_t max, uint32_t *ret_crc, uint64_t *nread)
{
	uLong crc = crc32(0L, Z_NULL, 0);
	uint64_t off = 0;
	uint8_t *buf;
	int r = 0;

	buf = malloc(CRC_CHUNK);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = pread(fd, buf, CRC_CHUNK, (off_t)off);

		if (n < 0) {
			int e = -errno;

			if (e == -EINTR)
				continue;
			r = e;
			goto out;
		}
		if (n == 0)
			break;
		off += (uint64_t)n;
		*nread += (uint64_t)n;
		if (off > max) {
			r = -EFBIG;
			goto out;
		}
		crc = crc32(crc, buf, (uInt)n);
	}
	*ret_crc = (uint32_t)crc;
out:
	free(buf);
	return r;
}

/* ---- what one report learnt of debug files (report_debug_memo) --------------------- */

enum memo_kind { MEMO_PATH = 0, MEMO_BUILD_ID, MEMO_KIND_MAX };

/* What is known of a debug-file candidate (MEMO_PATH) or a build id (MEMO_BUILD_ID). */
struct cand {
	bool bad;      /* a path of no use to any image; a build id debuginfod gave nothing for */
	bool have_id;  /* the file was opened: id[] and id_len are its build id (0: none) */
	bool over_cap; /* a CRC of it was refused: over the cap or the report's budget */
	bool have_crc;
	uint32_t crc;
	uint8_t id_len;
	uint8_t id[MAPLOG_BUILD_ID_MAX];
};

struct memo_ent {
	struct memo_ent *next;
	uint64_t hash;
	enum memo_kind kind;
	struct cand c;
	char key[]; /* the candidate's path, or the build id in hex */
};

struct report_debug_memo {
	pthread_mutex_t lock; /* guards everything below; never held across I/O */
	struct memo_ent **ht;
	size_t htcap; /* a power of two */
	size_t n;
	uint64_t crc_spent;  /* bytes the CRCs may read, taken before each (the budget) */
	bool servers_failed; /* debuginfod failed at the connection level: not asked again */
	bool budget_said;
	struct report_debug_stats st;
};

int report_debug_memo__new(struct report_debug_memo **ret_memo)
{
	struct report_debug_memo *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->htcap = 256;
	m->ht = calloc(m->htcap, sizeof(*m->ht));
	if (!m->ht) {
		free(m);
		return -ENOMEM;
	}
	(void)pthread_mutex_init(&m->lock, NULL);
	*ret_memo = m;
	return 0;
}

void report_debug_memo__free(struct report_debug_memo *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->htcap; i++) {
		while (m->ht[i]) {
			struct memo_ent *e = m->ht[i];

			m->ht[i] = e->next;
			free(e);
		}
	}
	free(m->ht);
	(void)pthread_mutex_destroy(&m->lock);
	free(m);
}

void report_debug_memo__stats(struct report_debug_memo *m, struct report_debug_stats *ret)
{
	if (!m) {
		memset(ret, 0, sizeof(*ret));
		return;
	}
	pthread_mutex_lock(&m->lock);
	*ret = m->st;
	pthread_mutex_unlock(&m->lock);
}

static uint64_t memo_hash(enum memo_kind kind, const char *key)
{
	return util_mix64(util_hash_str(key) + (uint64_t)kind);
}

/* Under the lock: the entry of (@kind, @key), or NULL. */
static struct memo_ent *memo_find(struct report_debug_memo *m, enum memo_kind kind, const char *key,
				  uint64_t h)
{
	for (struct memo_ent *e = m->ht[h & (m->htcap - 1)]; e; e = e->next)
		if (e->hash == h && e->kind == kind && strcmp(e->key, key) == 0)
			return e;
	return NULL;
}

/* What @m knows of (@kind, @key) into *ret_c: true if anything. */
static bool memo_get(struct report_debug_memo *m, enum memo_kind kind, const char *key,
		     struct cand *ret_c)
{
	uint64_t h;
	struct memo_ent *e;

	if (!m)
		return false;
	h = memo_hash(kind, key);
	pthread_mutex_lock(&m->lock);
	e = memo_find(m, kind, key, h);
	if (e)
		*ret_c = e->c;
	pthread_mutex_unlock(&m->lock);
	return e != NULL;
}

/*
 * Remember @c for (@kind, @key).  Best effort: with MEMO_MAX entries, or without
 * memory, nothing is added (the next image pays the work again, with the same result).
 */
static void memo_put(struct report_debug_memo *m, enum memo_kind kind, const char *key,
		     const struct cand *c)
{
	uint64_t h;
	struct memo_ent *e;
	size_t len;

	if (!m)
		return;
	h = memo_hash(kind, key);
	len = strlen(key);
	pthread_mutex_lock(&m->lock);
	e = memo_find(m, kind, key, h);
	if (e) {
		e->c = *c;
		goto out;
	}
	if (m->n >= MEMO_MAX)
		goto out;
	if (m->n >= m->htcap) {
		/* Load factor 1: rehash into twice the buckets (a failure keeps the old table). */
		size_t ncap = m->htcap * 2;
		struct memo_ent **nht = calloc(ncap, sizeof(*nht));

		if (nht) {
			for (size_t i = 0; i < m->htcap; i++) {
				while (m->ht[i]) {
					struct memo_ent *x = m->ht[i];

					m->ht[i] = x->next;
					x->next = nht[x->hash & (ncap - 1)];
					nht[x->hash & (ncap - 1)] = x;
				}
			}
			free(m->ht);
			m->ht = nht;
			m->htcap = ncap;
		}
	}
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		goto out;
	e->hash = h;
	e->kind = kind;
	e->c = *c;
	memcpy(e->key, key, len + 1);
	e->next = m->ht[h & (m->htcap - 1)];
	m->ht[h & (m->htcap - 1)] = e;
	m->n++;
out:
	pthread_mutex_unlock(&m->lock);
}

/* Counters: @field of the stats += @v. */
#define MEMO_COUNT(m, field, v)                                                                    \
	do {                                                                                       \
		if (m) {                                                                           \
			pthread_mutex_lock(&(m)->lock);                                            \
			(m)->st.field += (v);                                                      \
			pthread_mutex_unlock(&(m)->lock);                                          \
		}                                                                                  \
	} while (0)

/*
 * Take @bytes of the report's CRC budget: true if they fit (always, without a
 * memo).  *ret_first is set when this refusal is the report's first.
 */
static bool memo_budget_take(struct report_debug_memo *m, uint64_t bytes, bool *ret_first)
{
	bool ok;

	*ret_first = false;
	if (!m)
		return true;
	pthread_mutex_lock(&m->lock);
	ok = bytes <= REPORT_DEBUG_CRC_BUDGET - m->crc_spent;
	if (ok) {
		m->crc_spent += bytes;
	} else if (!m->budget_said) {
		m->budget_said = true;
		*ret_first = true;
	}
	pthread_mutex_unlock(&m->lock);
	return ok;
}

/* ---- separate debug files ----------------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static int fmt_path(char *buf, size_t size, const char *fmt,
							  ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* What a debug-file lookup uses besides the paths: opts->memo and the CRC cap. */
struct dbg_ctx {
	struct report_debug_memo *memo;
	uint64_t crc_max;
};

enum dbg_verdict { DBG_NO = 0, DBG_YES, DBG_NEED_CRC, DBG_VERDICT_MAX };

/*
 * Whether a debug file of build id @id (@id_len bytes, 0: none) is the image
 * @img's.  Found by build id (@dl NULL), its id must be the image's.  Found by
 * @dl's name, the build ids decide when both have one: equal ids are one build
 * (its CRC cannot say more), different ones never are (a CRC that matched would
 * be a collision); only when one of them has none can the CRC decide.
 */
static enum dbg_verdict debug_verdict(const uint8_t *id, size_t id_len,
				      const struct maplog_elf_info *img, const struct debuglink *dl)
{
	bool same =
		id_len > 0 && id_len == img->build_id_len && memcmp(id, img->build_id, id_len) == 0;

	if (!dl || (id_len > 0 && img->build_id_len > 0))
		return same ? DBG_YES : DBG_NO;
	return DBG_NEED_CRC;
}

/*
 * The CRC of the open candidate @f (at @dpath) into @c, if it may be computed: a
 * file over the cap, or past the report's budget, is not read at all (st_size, so
 * a sparse file's holes count), and that is said once (@c is remembered).
 * Returns 0 (c->have_crc or c->over_cap set, or neither after a read error) or
 * -ENOMEM.
 */
static int debug_crc(const struct dbg_ctx *dc, const char *dpath, const struct elf_file *f,
		     struct cand *c)
{
	uint64_t nread = 0;
	uint32_t crc;
	bool first;
	int r;

	if (f->size > dc->crc_max) {
		bool mib = dc->crc_max >= (1u << 20) && dc->crc_max % (1u << 20) == 0;

		c->over_cap = true;
		MEMO_COUNT(dc->memo, over_cap, 1);
		log_notice("debug file '%s': %" PRIu64 " bytes, more than the %" PRIu64
			   " %s whose debuglink CRC is checked: not used",
			   dpath, f->size, mib ? dc->crc_max >> 20 : dc->crc_max,
			   mib ? "MiB" : "bytes");
		return 0;
	}
	if (!memo_budget_take(dc->memo, f->size, &first)) {
		c->over_cap = true;
		MEMO_COUNT(dc->memo, over_cap, 1);
		if (first)
			log_notice("debug files: the debuglink CRCs of this report have read their "
				   "%" PRIu64 " MiB: '%s' and any further ones needing a CRC "
				   "not used",
				   REPORT_DEBUG_CRC_BUDGET >> 20, dpath);
		return 0;
	}
	r = report_file_crc32(f->fd, dc->crc_max, &crc, &nread);
	if (dc->memo) {
		pthread_mutex_lock(&dc->memo->lock);
		dc->memo->st.crc_files++;
		dc->memo->st.crc_bytes += nread;
		pthread_mutex_unlock(&dc->memo->lock);
	}
	if (r == -ENOMEM)
		return r;
	if (r == 0) {
		c->have_crc = true;
		c->crc = crc;
	} else {
		c->bad = true; /* unreadable, or it grew past the cap under us */
	}
	return 0;
}

/*
 * Try the debug file @dpath for the image @img, found by build id (@dl NULL) or
 * by @dl's name (see debug_verdict()).  If it is the image's and has a .symtab,
 * its functions are added to @b.  What the file turned out to be is remembered in
 * dc->memo, and what is known there already is not found out again: a path of no
 * use to any image, or whose build id or CRC rules it out for @img, is not
 * opened.  Returns 1 if it was used, 0 if it was skipped (the builder is then as
 * before: a half-read table is forgotten), or -ENOMEM.
 */
static int try_debug_file(const char *dpath, const struct maplog_elf_info *img,
			  const struct debuglink *dl, struct builder *b, const struct dbg_ctx *dc)
{
	struct cand c = { .bad = false };
	struct elf_file f;
	size_t mark_n = b->n, mark_pool = b->pool_len;
	enum dbg_verdict v;
	bool has_symtab = false;
	int r;

	if (memo_get(dc->memo, MEMO_PATH, dpath, &c)) {
		v = c.have_id ? debug_verdict(c.id, c.id_len, img, dl) : DBG_NEED_CRC;
		if (c.bad || v == DBG_NO ||
		    (v == DBG_NEED_CRC && c.have_id &&
		     (c.over_cap || (c.have_crc && c.crc != dl->crc)))) {
			MEMO_COUNT(dc->memo, skipped, 1);
			return 0;
		}
	}
	r = elf_file_open(dpath, &f);
	if (r < 0) {
		if (r == -ENOMEM)
			return r;
		c.bad = true;
		memo_put(dc->memo, MEMO_PATH, dpath, &c);
		return 0;
	}
	MEMO_COUNT(dc->memo, opened, 1);
	if (!c.have_id || c.id_len != f.info.build_id_len ||
	    memcmp(c.id, f.info.build_id, c.id_len) != 0) {
		/* First met, or another file now: nothing known of it holds. */
		c = (struct cand){ .have_id = true, .id_len = (uint8_t)f.info.build_id_len };
		memcpy(c.id, f.info.build_id, f.info.build_id_len);
	}
	v = debug_verdict(c.id, c.id_len, img, dl);
	if (dl && v != DBG_NEED_CRC)
		MEMO_COUNT(dc->memo, by_build_id, 1);
	if (v == DBG_NEED_CRC) {
		if (!c.have_crc && !c.over_cap && !c.bad) {
			r = debug_crc(dc, dpath, &f, &c);
			if (r < 0)
				goto out;
		}
		v = c.have_crc && c.crc == dl->crc ? DBG_YES : DBG_NO;
	}
	r = 0;
	if (v == DBG_YES) {
		r = scan_tables(f.elf, SHT_SYMTAB, b, &has_symtab);
		if (r == 0 && has_symtab) {
			r = 1;
		} else if (r != -ENOMEM) {
			c.bad = true; /* corrupt, or no .symtab: of no use to any image */
			r = 0;
		}
	}
	memo_put(dc->memo, MEMO_PATH, dpath, &c);
out:
	if (r <= 0) {
		b->n = mark_n;
		b->pool_len = mark_pool;
	}
	elf_file_close(&f);
	return r;
}

/*
 * libdebuginfod, loaded on first use (as elfutils' own libdwfl does): it brings
 * libcurl and some thirty libraries more, whose loading would cost every report
 * (and every other hwpmc command) milliseconds at start-up when no server is set.
 */
static struct {
	bool tried;
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
	void (*end)(debuginfod_client *);
} dbgd;

static bool debuginfod_load(void)
{
	void *h;

	if (dbgd.tried)
		return dbgd.begin != NULL;
	dbgd.tried = true;
	h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		log_warn("DEBUGINFOD_URLS is set, but libdebuginfod cannot be loaded (%s): "
			 "no debug files from servers",
			 dlerror());
		return false;
	}
	*(void **)&dbgd.begin = dlsym(h, "debuginfod_begin");
	*(void **)&dbgd.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	*(void **)&dbgd.end = dlsym(h, "debuginfod_end");
	if (!dbgd.begin || !dbgd.find_debuginfo || !dbgd.end) {
		log_warn("libdebuginfod.so.1 lacks its functions: no debug files from servers");
		dbgd.begin = NULL;
		return false;
	}
	return true; /* the library stays loaded for the process's life */
}

/*
 * Whether libdebuginfod's error @err says the servers could not be reached at
 * all (libdebuginfod 0.188 maps curl's "could not connect" and a failed TLS
 * verification to -ECONNREFUSED, "could not resolve" to -EHOSTUNREACH, a send or
 * receive error to -ECONNRESET, its timeout to -ETIME; -ENOSYS is a library
 * built without servers), as opposed to an answer about this build id (-ENOENT:
 * not found, -EFBIG: too large, ...).  The first kind holds for every build id.
 */
static bool servers_unreachable(int err)
{
	switch (err) {
	case -ECONNREFUSED:
	case -ECONNRESET:
	case -ECONNABORTED:
	case -EHOSTUNREACH:
	case -EHOSTDOWN:
	case -ENETUNREACH:
	case -ENETDOWN:
	case -ETIME:
	case -ETIMEDOUT:
	case -ENOSYS:
		return true;
	default:
		return false;
	}
}

/*
 * Ask the debuginfod servers of $DEBUGINFOD_URLS for the debug file of @img's build
 * id (the image @path, for the message).  1 with *ret_path (malloc'ed, the client
 * cache's copy) if one was used, 0 if none (no servers, not found, no symbols in
 * it), or -ENOMEM.
 *
 * libdebuginfod keeps what it downloaded in its client cache, and a "not found"
 * (an empty file there, for its cache_miss_s, 600 s by default) when it can write
 * its cache; it remembers nothing of a server it could not reach, and retries
 * each failed query ($DEBUGINFOD_RETRY_LIMIT, 2 more by default).  So with a
 * memo, after a connection-level failure the servers are not asked again for the
 * rest of the report (said once), and a build id they gave nothing usable for
 * is not asked again either (it saves a client and a cache look-up, and the
 * network where the cache is not writable).  libdebuginfod asks every server of
 * the list at once and gives one error: the list is remembered as one.
 */
static int fetch_debuginfod(const char *path, const struct maplog_elf_info *img, struct builder *b,
			    const struct dbg_ctx *dc, char **ret_path)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	char hex[2 * MAPLOG_BUILD_ID_MAX + 1];
	struct report_debug_memo *m = dc->memo;
	struct cand c = { .bad = true };
	debuginfod_client *cl;
	char *got = NULL;
	bool skip = false, first = false;
	int fd, r;

	if (!urls || !*urls || img->build_id_len < 2)
		return 0;
	for (size_t i = 0; i < img->build_id_len; i++)
		(void)snprintf(hex + 2 * i, 3, "%02x", img->build_id[i]);
	if (m) {
		pthread_mutex_lock(&m->lock);
		skip = m->servers_failed ||
		       memo_find(m, MEMO_BUILD_ID, hex, memo_hash(MEMO_BUILD_ID, hex)) != NULL;
		if (skip)
			m->st.debuginfod_skipped++;
		pthread_mutex_unlock(&m->lock);
	}
	if (skip || !debuginfod_load())
		return 0;
	cl = dbgd.begin();
	if (!cl)
		return 0;
	/* A download can take a while: say what is awaited (cached afterwards). */
	log_notice("asking debuginfod (%s) for the debug file of %s, build id %s", urls, path, hex);
	MEMO_COUNT(m, debuginfod_asked, 1);
	fd = dbgd.find_debuginfo(cl, img->build_id, (int)img->build_id_len, &got);
	dbgd.end(cl);
	if (fd < 0 && servers_unreachable(fd)) {
		if (m) {
			pthread_mutex_lock(&m->lock);
			first = !m->servers_failed;
			m->servers_failed = true;
			pthread_mutex_unlock(&m->lock);
		}
		if (!m || first)
			log_notice("debuginfod: no debug file for build id %s: '%s': %s%s", hex,
				   urls, strerror(-fd),
				   m ? "; the servers are not asked again in this report" : "");
		return 0;
	}
	if (fd < 0) {
		log_notice("debuginfod: no debug file for build id %s: %s", hex, strerror(-fd));
		if (fd != -ENOMEM)
			memo_put(m, MEMO_BUILD_ID, hex, &c);
		return 0;
	}
	close(fd);
	r = try_debug_file(got, img, NULL, b, dc);
	if (r > 0) {
		*ret_path = got;
	} else {
		free(got);
		if (r == 0)
			memo_put(m, MEMO_BUILD_ID, hex, &c); /* the server's file is no use */
	}
	return r;
}

/*
 * Look for the separate debug file in gdb's order (see report-sym.h), then from
 * debuginfod (@debuginfod).  Returns 1 with *ret_source and *ret_path (malloc'ed)
 * set if one was used, 0 if none, or -ENOMEM.
 */
static int find_debug(const struct sym_paths *sp, const struct maplog_elf_info *img,
		      const struct debuglink *dl, struct builder *b, bool debuginfod,
		      const struct dbg_ctx *dc, const char *path,
		      enum report_sym_source *ret_source, char **ret_path)
{
	char p[PATH_MAX];
	int r;

	if (img->build_id_len >= 2) {
		char hex[2 * MAPLOG_BUILD_ID_MAX + 1];

		for (size_t i = 0; i < img->build_id_len; i++)
			(void)snprintf(hex + 2 * i, 3, "%02x", img->build_id[i]);
		if (fmt_path(p, sizeof(p), "%.*s%.*s/.build-id/%.2s/%s.debug", sp->symfs_len,
			     sp->symfs, sp->debugdir_len, sp->debugdir, hex, hex + 2) == 0) {
			r = try_debug_file(p, img, NULL, b, dc);
			if (r < 0)
				return r;
			if (r > 0) {
				*ret_source = REPORT_SYM_DEBUG_BUILDID;
				goto found;
			}
		}
	}
	/* The image's directory, its .debug/, then <debugdir>/<image directory>/. */
	for (int i = 0; i < 3 && dl->present; i++) {
		if (i == 0)
			r = fmt_path(p, sizeof(p), "%.*s%s%.*s/%s", sp->symfs_len, sp->symfs,
				     sp->dir_sep, sp->dir_len, sp->dir, dl->name);
		else if (i == 1)
			r = fmt_path(p, sizeof(p), "%.*s%s%.*s/.debug/%s", sp->symfs_len, sp->symfs,
				     sp->dir_sep, sp->dir_len, sp->dir, dl->name);
		else
			r = fmt_path(p, sizeof(p), "%.*s%.*s%s%.*s/%s", sp->symfs_len, sp->symfs,
				     sp->debugdir_len, sp->debugdir, sp->dir[0] == '/' ? "" : "/",
				     sp->dir_len, sp->dir, dl->name);
		if (r < 0)
			continue;
		r = try_debug_file(p, img, dl, b, dc);
		if (r < 0)
			return r;
		if (r > 0) {
			*ret_source = REPORT_SYM_DEBUG_LINK;
			goto found;
		}
	}
	if (!debuginfod)
		return 0;
	r = fetch_debuginfod(path, img, b, dc, ret_path);
	if (r > 0)
		*ret_source = REPORT_SYM_DEBUGINFOD;
	return r;
found:
	*ret_path = strdup(p);
	if (!*ret_path)
		return -ENOMEM;
	return 1;
}

static int trimmed_len(const char *s)
{
	size_t n = strlen(s);

	while (n > 0 && s[n - 1] == '/')
		n--;
	return n > INT_MAX ? INT_MAX : (int)n;
}

int report_symtab__open(const char *path, const struct report_sym_opts *opts,
			struct report_symtab **ret_t)
{
	struct report_symtab *t = NULL;
	struct builder b = { 0 };
	struct elf_file f = { .fd = -1 };
	struct debuglink dl = { .present = false };
	struct sym_paths sp;
	struct dbg_ctx dc;
	enum report_sym_source source;
	char ipath[PATH_MAX];
	char *dpath = NULL;
	const char *slash;
	bool has_symtab, has_dynsym;
	int r;

	if (!path || !*path || !ret_t)
		return -EINVAL;
	sp.symfs = opts && opts->symfs ? opts->symfs : "";
	sp.symfs_len = trimmed_len(sp.symfs);
	sp.debugdir = opts && opts->debugdir ? opts->debugdir : DEFAULT_DEBUGDIR;
	sp.debugdir_len = trimmed_len(sp.debugdir);
	dc.memo = opts ? opts->memo : NULL;
	dc.crc_max = opts && opts->crc_max ? opts->crc_max : REPORT_DEBUG_CRC_MAX;
	slash = strrchr(path, '/');
	if (slash) {
		sp.dir = path;
		sp.dir_len = (int)(slash - path > INT_MAX ? INT_MAX : slash - path);
	} else {
		sp.dir = ".";
		sp.dir_len = 1;
	}
	/* A relative path under a symfs still goes below it. */
	sp.dir_sep = sp.symfs_len > 0 && path[0] != '/' ? "/" : "";
	r = fmt_path(ipath, sizeof(ipath), "%.*s%s%s", sp.symfs_len, sp.symfs, sp.dir_sep, path);
	if (r < 0)
		return r;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	r = elf_file_open(ipath, &f);
	if (r < 0)
		goto err;
	t->info = f.info;
	r = scan_tables(f.elf, SHT_DYNSYM, &b, &has_dynsym);
	if (r < 0)
		goto err;
	r = scan_tables(f.elf, SHT_SYMTAB, &b, &has_symtab);
	if (r < 0)
		goto err;
	if (!has_symtab)
		read_debuglink(f.elf, &dl);
	/* The search below opens one file at a time; the image is done with. */
	elf_file_close(&f);
	if (has_symtab) {
		source = REPORT_SYM_SYMTAB;
	} else {
		r = find_debug(&sp, &t->info, &dl, &b, opts && opts->debuginfod, &dc, path, &source,
			       &dpath);
		if (r < 0)
			goto err;
		if (r == 0)
			source = REPORT_SYM_DYNSYM;
	}
	r = symtab_build(t, &b);
	if (r < 0)
		goto err;
	if (t->n == 0) {
		source = REPORT_SYM_NONE;
		free(dpath);
		dpath = NULL;
	}
	t->source = source;
	t->debug_path = dpath;
	builder_exit(&b);
	*ret_t = t;
	return 0;
err:
	elf_file_close(&f);
	builder_exit(&b);
	free(dpath);
	report_symtab__free(t);
	return r;
}

/* ---- kallsyms ----------------------------------------------------------------------- */

/* Read all of @fd (whose fstat size is @hint, 0 for /proc files) into a NUL-ended buffer. */
static int read_all(int fd, off_t hint, char **ret_buf, size_t *ret_len)
{
	size_t cap, len = 0;
	char *buf;
	int r;

	if (hint < 0 || (uint64_t)hint >= KALLSYMS_MAX_BYTES)
		return hint < 0 ? -EINVAL : -E2BIG;
	cap = hint > 0 ? (size_t)hint + 1 : KALLSYMS_FIRST_BUF;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len == cap - 1) {
			char *nb;
			char probe;

			/* Full: the usual case for a file of known size is that it ends here. */
			n = read(fd, &probe, 1);
			if (n < 0) {
				r = -errno;
				if (r == -EINTR)
					continue;
				goto err;
			}
			if (n == 0)
				break;
			if (cap > KALLSYMS_MAX_BYTES) {
				r = -E2BIG;
				goto err;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				r = -ENOMEM;
				goto err;
			}
			buf = nb;
			cap *= 2;
			buf[len++] = probe;
			continue;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0) {
			r = -errno;
			if (r == -EINTR)
				continue;
			goto err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*ret_buf = buf;
	*ret_len = len;
	return 0;
err:
	free(buf);
	return r;
}

/* A byte of a name, module or type: printable or not ASCII, but no space or control. */
static bool name_byte(char c)
{
	unsigned char u = (unsigned char)c;

	return u > ' ' && u != 0x7f;
}

/*
 * Parse the kallsyms text @buf (@len bytes, buf[len] == '\0') into @b, whose pool it
 * is: names and modules are ended in place with NULs.  Returns 0, -EPROTO for a
 * malformed line, -ENODATA if no text symbol has a non-zero address, or -ENOMEM.
 */
static int parse_kallsyms(char *buf, size_t len, struct builder *b)
{
	char *p = buf;
	char *end = buf + len;
	size_t kept = 0;
	int r;

	while (p < end) {
		uint64_t addr = 0;
		size_t module = NO_MODULE;
		char *name;
		int digits = 0, v;
		char type;

		while (p < end && (v = util_hex_digit((unsigned char)*p)) >= 0) {
			if (++digits > 16)
				return -EPROTO;
			addr = addr << 4 | (uint64_t)v;
			p++;
		}
		if (digits == 0 || p == end || *p != ' ')
			return -EPROTO;
		p++;
		if (p == end || !name_byte(*p))
			return -EPROTO;
		type = *p++;
		if (p == end || *p != ' ')
			return -EPROTO;
		p++;
		name = p;
		while (p < end && name_byte(*p))
			p++;
		if (p == name)
			return -EPROTO;
		if (p < end && *p == '\t') {
			char *mod;

			*p++ = '\0';
			if (p == end || *p != '[')
				return -EPROTO;
			mod = ++p;
			while (p < end && name_byte(*p) && *p != ']')
				p++;
			if (p == mod || p == end || *p != ']')
				return -EPROTO;
			*p++ = '\0';
			module = (size_t)(mod - buf);
		}
		if (p < end) {
			if (*p != '\n')
				return -EPROTO;
			/* Ends the name, unless the module's ']' already did. */
			*p++ = '\0';
		}
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (addr == 0)
			continue;
		/* No sections: limit 0, so each one holds up to the next (file comment). */
		r = builder_push(b, addr, 0, 0, (size_t)(name - buf), strlen(name), module,
				 type == 'T'   ? RANK_GLOBAL
				 : type == 't' ? RANK_LOCAL
					       : RANK_WEAK,
				 KIND_FUNC);
		if (r < 0)
			return r;
		kept++;
	}
	return kept > 0 ? 0 : -ENODATA;
}

/*
 * A symtab from a text file (kallsyms, a JIT map): read whole (regular files only;
 * with @owner_check only one of the caller's real uid or of root, else -EPERM),
 * the buffer handed to the builder as its pool, parsed by @parse (which may count
 * skipped lines in *@ret_bad), built.
 */
static int symtab_from_text(const char *path, bool owner_check,
			    int (*parse)(char *buf, size_t len, struct builder *b, size_t *ret_bad),
			    size_t *ret_bad, enum report_sym_source source,
			    struct report_symtab **ret_t)
{
	struct report_symtab *t = NULL;
	struct builder b = { 0 };
	struct stat st;
	off_t size = 0;
	char *buf = NULL;
	size_t len = 0;
	int fd = -1;
	int r;

	if (!path || !ret_t)
		return -EINVAL;
	r = open_regular(path, &fd, &size);
	if (r < 0)
		return r;
	if (owner_check && (fstat(fd, &st) < 0 || (st.st_uid != getuid() && st.st_uid != 0))) {
		(void)close(fd);
		return -EPERM;
	}
	r = read_all(fd, size, &buf, &len);
	(void)close(fd);
	if (r < 0)
		return r;
	/* The file buffer is the pool: the builder owns and frees it from here on. */
	b.pool = buf;
	b.pool_len = len + 1;
	b.pool_cap = len + 1;
	r = parse(buf, len, &b, ret_bad);
	if (r < 0)
		goto err;
	t = calloc(1, sizeof(*t));
	if (!t) {
		r = -ENOMEM;
		goto err;
	}
	r = symtab_build(t, &b);
	if (r < 0)
		goto err;
	t->source = source;
	builder_exit(&b);
	*ret_t = t;
	return 0;
err:
	builder_exit(&b);
	report_symtab__free(t);
	return r;
}

static int parse_kallsyms_text(char *buf, size_t len, struct builder *b, size_t *ret_bad)
{
	(void)ret_bad; /* a malformed kallsyms line refuses the file */
	return parse_kallsyms(buf, len, b);
}

int report_symtab__kallsyms(const char *path, struct report_symtab **ret_t)
{
	return symtab_from_text(path, false, parse_kallsyms_text, NULL, REPORT_SYM_KALLSYMS, ret_t);
}

/* ---- JIT maps (perf-PID.map) -------------------------------------------------------- */

static int parse_perfmap(char *buf, size_t len, struct builder *b, size_t *ret_bad)
{
	char *p = buf, *end = buf + len;
	size_t kept = 0, bad = 0;
	int r;

	while (p < end) {
		char *eol = memchr(p, '\n', (size_t)(end - p)), *name;
		uint64_t start, size;

		size_t off;

		if (!eol)
			eol = end;
		*eol = '\0'; /* a name is the rest of its line, spaces and all */
		/* The copier's own parser (maplog-jit.h): what is saved is what is read. */
		if (!maplog_jit_parse_line(p, (size_t)(eol - p), &start, &size, &off)) {
			bad++;
		} else {
			name = p + off;
			r = builder_push(b, start, size, 0, (size_t)(name - buf), strlen(name), NO_MODULE,
					 RANK_GLOBAL, KIND_FUNC);
			if (r < 0)
				return r;
			kept++;
		}
		p = eol + 1;
	}
	if (ret_bad)
		*ret_bad = bad;
	return kept > 0 ? 0 : -ENODATA;
}

int report_symtab__perfmap(const char *path, bool owner_check, size_t *ret_bad,
			   struct report_symtab **ret_t)
{
	if (ret_bad)
		*ret_bad = 0;
	return symtab_from_text(path, owner_check, parse_perfmap, ret_bad, REPORT_SYM_PERFMAP,
				ret_t);
}

/* ---- accessors ---------------------------------------------------------------------- */

void report_symtab__free(struct report_symtab *t)
{
	if (!t)
		return;
	free(t->ents);
	free(t->pool);
	free(t->segs);
	free(t->debug_path);
	free(t);
}

const struct report_sym *report_symtab__find(const struct report_symtab *t, const char *name)
{
	if (!t || !name)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->ents[i].sym.name, name) == 0)
			return &t->ents[i].sym;
	return NULL;
}

size_t report_symtab__nsyms(const struct report_symtab *t)
{
	return t ? t->n : 0;
}

const struct report_sym *report_symtab__sym(const struct report_symtab *t, size_t i)
{
	if (!t || i >= t->n)
		return NULL;
	return &t->ents[i].sym;
}

const struct maplog_elf_info *report_symtab__info(const struct report_symtab *t)
{
	return t ? &t->info : NULL;
}

enum report_sym_source report_symtab__source(const struct report_symtab *t)
{
	return t ? t->source : REPORT_SYM_NONE;
}

const char *report_symtab__debug_path(const struct report_symtab *t)
{
	return t ? t->debug_path : NULL;
}

const char *report_sym_source_name(enum report_sym_source s)
{
	static const char *const names[REPORT_SYM_SOURCE_MAX] = {
		[REPORT_SYM_SYMTAB] = "symtab",
		[REPORT_SYM_DEBUG_BUILDID] = "debug-buildid",
		[REPORT_SYM_DEBUG_LINK] = "debuglink",
		[REPORT_SYM_DEBUGINFOD] = "debuginfod",
		[REPORT_SYM_DYNSYM] = "dynsym",
		[REPORT_SYM_NONE] = "none",
		[REPORT_SYM_KALLSYMS] = "kallsyms",
		[REPORT_SYM_PERFMAP] = "perf-map",
	};

	if ((unsigned)s >= REPORT_SYM_SOURCE_MAX)
		return "unknown";
	return names[s];
}
