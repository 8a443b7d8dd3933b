/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-kallsyms.c: the kernel symbols a session saves beside its log.
 *
 * PUBLIC INTERFACES (daemon-internal, daemon-int.h)
 *   daemon_pcset__init(), __add(), __sort(), __exit()   distinct kernel PCs of a session
 *   daemon_ksyms__parse_take(), __read(), __free()      the text symbols of /proc/kallsyms
 *   daemon_ksyms_probe()                                does it show addresses at all?
 *   daemon_ksyms__write_all()                           the full table, at session start
 *   daemon_ksyms__compact()                             the lines a report needs (pure)
 *   daemon_ksyms_rewrite()                              replace a file's content in place
 *
 * IMPLEMENTATION NOTES
 *   The file is in /proc/kallsyms's own line format ("ADDR TYPE NAME" or
 *   "ADDR TYPE NAME\t[MODULE]"), text symbols only (types t, T, w, W), sorted by
 *   address (aliases keep the order the kernel listed them in), so that any
 *   kallsyms reader reads it.  At session start it holds every text symbol: a
 *   log whose daemon was killed can still be symbolized.  At a normal end it is
 *   rewritten to the groups of lines (all aliases at one address) that hold a
 *   PC the log's CALLCHAIN records carry, or PC - 1 (a return address just past a
 *   call that ends its function belongs to the caller), plus the group right
 *   after each (so the holder's end is known), plus _stext, _text and _etext (the
 *   report checks the boot against the log's kernel MAP_IN).  For every address
 *   a lookup of the greatest start <= PC then gives the same symbol and the same
 *   end in the compact file as in the full one.
 *
 *   The PC set is what the session thread's hot path touches: an open-addressing
 *   table of u64 with linear probing and 0 as the empty slot (never a kernel
 *   PC).  It doubles at half load, so allocations happen only O(log n) times in
 *   a session, never per sample, and it stops at a fixed maximum of distinct
 *   PCs: past it the set is "full", later PCs are only counted, and the
 *   session keeps the full table.
 *
 *   /proc/kallsyms is kernel data and a test's file is anything: a line that is
 *   not "HEX TYPE NAME..." is skipped, lengths are bounded, nothing is assumed
 *   about order.  Nothing here logs; the caller decides.  Every function may
 *   be called from any thread on objects that thread owns.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon-int.h"
#include "hwpmcd/common.h"

#define PCSET_CAP_MIN  4096u
#define KSYMS_FILE_MAX (256u << 20) /* a /proc/kallsyms larger than this is not believed */
#define KSYMS_LINE_MAX 4096u

/* ---- the PC set ---- */

static size_t pc_hash(uint64_t pc, size_t mask)
{
	/* Fibonacci hashing: kernel PCs differ in their low bits, spread them over all. */
	return (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 17) & mask;
}

int daemon_pcset__init(struct daemon_pcset *s, size_t max)
{
	memset(s, 0, sizeof(*s));
	s->max = max;
	s->cap = PCSET_CAP_MIN;
	s->slot = calloc(s->cap, sizeof(*s->slot));
	if (!s->slot) {
		s->cap = 0;
		s->full = true;
		return -ENOMEM;
	}
	return 0;
}

static int pcset_grow(struct daemon_pcset *s)
{
	size_t ncap = s->cap * 2, mask = ncap - 1;
	uint64_t *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++) {
		uint64_t pc = s->slot[i];
		size_t j;

		if (!pc)
			continue;
		for (j = pc_hash(pc, mask); ns[j]; j = (j + 1) & mask)
			;
		ns[j] = pc;
	}
	free(s->slot);
	s->slot = ns;
	s->cap = ncap;
	return 0;
}

int daemon_pcset__add(struct daemon_pcset *s, uint64_t pc)
{
	size_t mask, j;

	if (s->full) {
		s->refused++;
		return -E2BIG;
	}
	if (pc == 0)
		return 0; /* not a kernel PC; 0 marks the empty slot */
	mask = s->cap - 1;
	for (j = pc_hash(pc, mask); s->slot[j]; j = (j + 1) & mask)
		if (s->slot[j] == pc)
			return 0;
	if (s->n >= s->max) {
		s->full = true;
		s->refused++;
		return -E2BIG;
	}
	s->slot[j] = pc;
	s->n++;
	if (2 * s->n > s->cap && pcset_grow(s) < 0) {
		/* Keep what we have, but a set we cannot grow cannot stay exact. */
		s->full = true;
		return -ENOMEM;
	}
	return 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

size_t daemon_pcset__sort(struct daemon_pcset *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->cap; i++)
		if (s->slot[i])
			s->slot[n++] = s->slot[i];
	qsort(s->slot, n, sizeof(*s->slot), cmp_u64);
	/* The slots past n are stale now: the set is a sorted array from here on. */
	s->full = true;
	return n;
}

void daemon_pcset__exit(struct daemon_pcset *s)
{
	free(s->slot);
	s->slot = NULL;
	s->cap = s->n = 0;
}

/* ---- the symbol table ---- */

/*
 * One line (without its newline): its address if it is a text symbol, with the
 * offset of its name.  0 if kept, -1 if not a text symbol or not a valid line.
 */
static int parse_line(const char *l, size_t len, uint64_t *ret_addr, uint32_t *ret_name)
{
	uint64_t a = 0;
	size_t i = 0;
	int h;

	if (len == 0 || len > KSYMS_LINE_MAX)
		return -1;
	for (; i < len && (h = util_hex_digit(l[i])) >= 0; i++) {
		if (i >= 16)
			return -1;
		a = a << 4 | (uint64_t)h;
	}
	if (i == 0 || i + 3 > len || l[i] != ' ' || l[i + 2] != ' ')
		return -1;
	if (!strchr("tTwW", l[i + 1]) || l[i + 1] == '\0')
		return -1;
	if (i + 3 >= len || l[i + 3] == '\t' || l[i + 3] == ' ')
		return -1; /* no name */
	*ret_addr = a;
	*ret_name = (uint32_t)(i + 3);
	return 0;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct daemon_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off; /* the kernel's order among aliases */
}

void daemon_ksyms__free(struct daemon_ksyms *k)
{
	if (!k)
		return;
	free(k->text);
	free(k->sym);
	free(k);
}

int daemon_ksyms__parse_take(char *buf, size_t len, struct daemon_ksyms **ret_k)
{
	struct daemon_ksyms *k = calloc(1, sizeof(*k));
	size_t cap = 0, pos = 0;
	bool nonzero = false, sorted = true;
	uint64_t last = 0;
	int r;

	if (!k) {
		free(buf);
		return -ENOMEM;
	}
	k->text = buf;
	k->text_len = len;
	if (len > KSYMS_FILE_MAX) {
		r = -EFBIG;
		goto err;
	}
	/*
	 * One pass, nothing copied: the lines stay where read() put them (the few
	 * data symbols between them cost less than moving 5 MB), and the sort is
	 * skipped when the kernel listed them in order, as it lists most of them.
	 */
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		uint64_t addr;
		uint32_t name;

		if (parse_line(buf + pos, ll, &addr, &name) == 0) {
			if (k->n == cap) {
				size_t ncap = cap ? 2 * cap : 65536;
				struct daemon_ksym *ns = realloc(k->sym, ncap * sizeof(*ns));

				if (!ns) {
					r = -ENOMEM;
					goto err;
				}
				k->sym = ns;
				cap = ncap;
			}
			k->sym[k->n].addr = addr;
			k->sym[k->n].off = (uint32_t)pos;
			k->sym[k->n].len = (uint16_t)ll;
			k->sym[k->n].name = (uint16_t)name;
			k->n++;
			nonzero |= addr != 0;
			sorted &= addr >= last;
			last = addr;
			k->full_bytes += ll + 1;
		}
		pos += ll + 1;
	}
	if (!nonzero) {
		r = -ENODATA; /* no text symbol, or every address hidden (kptr_restrict) */
		goto err;
	}
	if (!sorted)
		qsort(k->sym, k->n, sizeof(*k->sym), cmp_ksym);
	*ret_k = k;
	return 0;
err:
	daemon_ksyms__free(k);
	return r;
}

int daemon_ksyms_probe(const char *path)
{
	char buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = -ENODATA;
	size_t len = 0, pos = 0;

	if (fd < 0)
		return -errno;
	/* kptr_restrict hides every address or none: the first text symbols tell. */
	while (len < sizeof(buf)) {
		ssize_t n = util_read_some(fd, buf + len, sizeof(buf) - len);

		if (n < 0) {
			close(fd);
			return (int)n;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		uint64_t addr;
		uint32_t name;

		if (!nl)
			break; /* a line cut by our buffer */
		if (parse_line(buf + pos, (size_t)(nl - (buf + pos)), &addr, &name) == 0 && addr) {
			r = 0;
			break;
		}
		pos = (size_t)(nl - buf) + 1;
	}
	return r;
}

int daemon_ksyms__read(const char *path, struct daemon_ksyms **ret_k)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;
	size_t len = 0, cap = 8u << 20; /* /proc/kallsyms is 5 to 12 MB: mostly one read buffer */
	char *buf;

	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *nb;

			if (cap >= KSYMS_FILE_MAX) {
				r = -EFBIG;
				goto err;
			}
			nb = realloc(buf, 2 * cap);
			if (!nb) {
				r = -ENOMEM;
				goto err;
			}
			buf = nb;
			cap *= 2;
		}
		/*
		 * Bounded reads: seq_file hands out a page or so per call anyway, and a
		 * checker that validates the whole buffer per read (valgrind) stays fast.
		 */
		n = util_read_some(fd, buf + len, cap - len < 65536 ? cap - len : 65536);
		if (n < 0) {
			r = (int)n;
			goto err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	return daemon_ksyms__parse_take(buf, len, ret_k);
err:
	free(buf);
	close(fd);
	return r;
}

/* Write the lines of @k that @keep selects (all when NULL) into @out, with newlines. */
static size_t render(const struct daemon_ksyms *k, const bool *keep, char *out)
{
	size_t w = 0;

	for (size_t i = 0; i < k->n; i++) {
		if (keep && !keep[i])
			continue;
		memcpy(out + w, k->text + k->sym[i].off, k->sym[i].len);
		w += k->sym[i].len;
		out[w++] = '\n';
	}
	return w;
}

int daemon_ksyms__write_all(const struct daemon_ksyms *k, int fd)
{
	char *buf = malloc(k->full_bytes ? k->full_bytes : 1);
	size_t len;
	int r;

	if (!buf)
		return -ENOMEM;
	len = render(k, NULL, buf);
	r = util_write_all(fd, buf, len, NULL);
	free(buf);
	return r < 0 ? r : 0;
}

/* The last symbol with start <= @pc, or SIZE_MAX when @pc is below every symbol. */
static size_t holder(const struct daemon_ksyms *k, uint64_t pc)
{
	size_t lo = 0, hi = k->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->sym[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? SIZE_MAX : lo - 1;
}

/* Keep every line at the address of line @i; returns the index past that group. */
static size_t keep_group(const struct daemon_ksyms *k, size_t i, bool *keep)
{
	uint64_t a = k->sym[i].addr;
	size_t j;

	while (i > 0 && k->sym[i - 1].addr == a)
		i--;
	for (j = i; j < k->n && k->sym[j].addr == a; j++)
		keep[j] = true;
	return j;
}

static void keep_pc(const struct daemon_ksyms *k, uint64_t pc, bool *keep)
{
	size_t h = holder(k, pc), next;

	if (h == SIZE_MAX)
		return;
	next = keep_group(k, h, keep);
	if (next < k->n)
		(void)keep_group(k, next, keep);
}

static bool name_is(const struct daemon_ksyms *k, size_t i, const char *name)
{
	const char *n = k->text + k->sym[i].off + k->sym[i].name;
	size_t nl = k->sym[i].len - k->sym[i].name, want = strlen(name);

	return nl >= want && memcmp(n, name, want) == 0 && (nl == want || n[want] == '\t');
}

int daemon_ksyms__compact(const struct daemon_ksyms *k, const uint64_t *pcs, size_t npcs,
			  char **ret_buf, size_t *ret_len, size_t *ret_nsyms)
{
	bool *keep = calloc(k->n ? k->n : 1, sizeof(*keep));
	size_t bytes = 0, nsyms = 0;
	char *out;

	if (!keep)
		return -ENOMEM;
	for (size_t i = 0; i < npcs; i++) {
		keep_pc(k, pcs[i], keep);
		if (pcs[i] > 0)
			keep_pc(k, pcs[i] - 1, keep);
	}
	for (size_t i = 0; i < k->n; i++) {
		if (name_is(k, i, "_stext") || name_is(k, i, "_text") || name_is(k, i, "_etext"))
			keep[i] = true;
		if (keep[i]) {
			bytes += k->sym[i].len + 1;
			nsyms++;
		}
	}
	out = malloc(bytes ? bytes : 1);
	if (!out) {
		free(keep);
		return -ENOMEM;
	}
	*ret_len = render(k, keep, out);
	*ret_buf = out;
	*ret_nsyms = nsyms;
	free(keep);
	return 0;
}

bool daemon_ksyms_rewritable(int fd)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	/* pwrite on an O_APPEND fd appends (Linux): that is not a rewrite. */
	return fl >= 0 && !(fl & O_APPEND) && (fl & O_ACCMODE) != O_RDONLY && fstat(fd, &st) == 0 &&
	       S_ISREG(st.st_mode) && lseek(fd, 0, SEEK_CUR) == 0;
}

int daemon_ksyms_rewrite(int fd, const char *buf, size_t len)
{
	size_t done = 0;
	int r;

	/*
	 * The new content first, then cut the rest: a crash in between leaves the
	 * compact lines followed by the end of the full table, never an empty file.
	 */
	while (done < len) {
		ssize_t n = pwrite(fd, buf + done, len - done, (off_t)done);

		if (n < 0) {
			r = -errno;
			if (r == -EINTR)
				continue;
			return r;
		}
		if (n == 0)
			return -EIO;
		done += (size_t)n;
	}
	if (ftruncate(fd, (off_t)len) < 0)
		return -errno;
	return 0;
}
