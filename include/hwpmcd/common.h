/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common.h: small helpers shared by every module (module common).
 *
 * PUBLIC INTERFACES
 *   util_mix64(), util_hash_str(), util_grow(), util_index_*(),
 *   util_write_all(), util_read_some(), util_escape(), util_parse_u64(),
 *   util_own_fd_name(), util_openat2(), util_edit_distance(), util_suggest_consider(),
 *   ARRAY_SIZE(), little-endian load/store helpers.
 *
 * IMPLEMENTATION NOTES
 *   The little-endian helpers go through memcpy, so they are correct for any
 *   alignment (pmclog records start at any 4-byte offset) and any host order.
 *   Every function is thread-safe (no shared state).
 */
#ifndef HWPMCD_COMMON_H
#define HWPMCD_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif

/* util_hex_digit: the value of hexadecimal digit @c (either case), or -1. */
static inline int util_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static inline uint32_t util_le32(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static inline uint64_t util_le64(const void *p)
{
	return (uint64_t)util_le32(p) | (uint64_t)util_le32((const uint8_t *)p + 4) << 32;
}

static inline void util_put_le32(void *p, uint32_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}

static inline void util_put_le64(void *p, uint64_t v)
{
	util_put_le32(p, (uint32_t)v);
	util_put_le32((uint8_t *)p + 4, (uint32_t)(v >> 32));
}

/*
 * util_write_all: write all @len bytes to @fd, retrying EINTR and short writes.
 * Returns 0, or a negative errno with *ret_written (if not NULL) set to the bytes
 * written before the error.
 */
/* util_mix64: a 64-bit finalizer (murmur3's): spreads the bits of @x for hash tables. */
static inline uint64_t util_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* util_hash_str: FNV-1a of the NUL-terminated @s. */
static inline uint64_t util_hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

/*
 * util_grow: make the array @p of *@cap elements of @elem bytes hold at least
 * @need, doubling from 16.  Returns the (possibly moved) array with *@cap
 * updated, or NULL (out of memory; @p and *@cap unchanged, still valid).
 */
void *util_grow(void *p, size_t *cap, size_t need, size_t elem);

/*
 * util_index: an open-addressing index of entries kept elsewhere (an array, an
 * arena): a slot holds an entry's id (>= 1, the caller's numbering) or 0.  A lookup
 * probes from util_index_first() with util_index_next() until the slot holds a
 * matching entry or is empty (where a new id goes).  The table a hash table needs
 * beside its entries, grown and rehashed in one place.
 */
struct util_index {
	uint32_t *slot;
	size_t cap; /* a power of two, or 0 (no table yet) */
};

/*
 * util_index_reserve: room for @n entries at a load of at most one half: when
 * needed the table doubles (from @min slots, a power of two), every id put back
 * at @hash(@ctx, id).  0, or -ENOMEM with the index unchanged.
 */
int util_index_reserve(struct util_index *x, size_t n, size_t min,
		       uint64_t (*hash)(const void *ctx, uint32_t id), const void *ctx);
/* util_index_clear: every slot empty, the table kept. */
void util_index_clear(struct util_index *x);
void util_index_free(struct util_index *x);

static inline size_t util_index_first(const struct util_index *x, uint64_t hash)
{
	return (size_t)hash & (x->cap - 1);
}

static inline size_t util_index_next(const struct util_index *x, size_t s)
{
	return (s + 1) & (x->cap - 1);
}

/*
 * util_prefault: fault in the whole pages of [@p, @p + @len) for writing, in one
 * system call (MADV_POPULATE_WRITE, Linux 5.14), for memory about to be filled:
 * a first touch costs a page fault per 4 KiB page, ~10 us each on a VM with
 * paravirtualised page tables (measured: 0.3-1 us a page populated), ~0.5 us on
 * bare metal.  Below UTIL_PREFAULT_MIN bytes, and where the kernel refuses, a no-op.
 */
#define UTIL_PREFAULT_MIN (64u << 10)
void util_prefault(void *p, size_t len);

int util_write_all(int fd, const void *buf, size_t len, size_t *ret_written);

/* util_ns: a timespec (or a clock's reading: util_now_ns) in nanoseconds. */
static inline uint64_t util_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

uint64_t util_now_ns(clockid_t clk);
/* util_mono_ms: CLOCK_MONOTONIC in milliseconds (deadlines and poll timeouts). */
int64_t util_mono_ms(void);

/* util_read_some: read(2) retrying EINTR.  Returns bytes read (0 at EOF) or -errno. */
ssize_t util_read_some(int fd, void *buf, size_t len);

/*
 * util_read_small: one read(2) of at most @size - 1 bytes of the file at @path
 * (small /proc and /sys files), NUL-terminated in @buf.  Returns the byte count
 * or a negative errno.
 */
int util_read_small(const char *path, char *buf, size_t size);

/*
 * util_escape: copy @len bytes of @s into @out (@outsize bytes, NUL-terminated,
 * truncated with "..." if too small) with backslash, double quote and every byte
 * outside printable ASCII written as \\, \", \n, \t or \xNN.  Returns @out.
 */
char *util_escape(const char *s, size_t len, char *out, size_t outsize);

/*
 * util_edit_distance: the Levenshtein distance of @a and @b, ignoring ASCII case;
 * UINT_MAX when either is longer than UTIL_SUGGEST_LEN_MAX bytes.
 */
#define UTIL_SUGGEST_LEN_MAX 255
unsigned int util_edit_distance(const char *a, const char *b);

/*
 * A "did you mean" for a name the user gave: util_suggest_consider() keeps @cand in
 * @s if it is the closest to @word so far and close enough to be a plausible typo
 * (at most 2 edits, and at most a third of @cand).  Start with { NULL, 0 }.
 */
struct util_suggest {
	const char *best;
	unsigned int dist;
};
void util_suggest_consider(struct util_suggest *s, const char *word, const char *cand);

/* util_parse_u64: whole-string unsigned decimal or 0x-hex.  0 or -EINVAL/-ERANGE. */
int util_parse_u64(const char *s, uint64_t *ret_v);

/*
 * util_own_fd_name: the caller's own descriptor that @path names (/dev/stdout,
 * /dev/stderr, /dev/fd/N, /proc/self/fd/N), which util_output_open() (files.h) duplicates
 * instead of opening anything, or -1 for any other path.  Whether it is open is
 * not looked at.
 */
int util_own_fd_name(const char *path);

struct open_how;
/*
 * util_openat2: openat2(2) of @path below @dfd with @how: the fd, or -1 with errno.
 * A kernel without it (or valgrind, which knows no such call and says so at every
 * one) answers ENOSYS once; from then on the call is not made (ENOSYS at once),
 * and the caller takes its own way without it.
 */
int util_openat2(int dfd, const char *path, struct open_how *how);

#endif /* HWPMCD_COMMON_H */
