/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common-util.c: fd and string helpers.
 *
 * PUBLIC INTERFACES
 *   see include/hwpmcd/common.h
 *
 * IMPLEMENTATION NOTES
 *   util_escape() is what every tool uses to print strings that came from a log
 *   file or /proc: such strings are hostile and may hold control characters or
 *   invalid UTF-8, which must reach neither a terminal nor a JSON encoder raw.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hwpmcd/common.h"

int util_write_all(int fd, const void *buf, size_t len, size_t *ret_written)
{
	const uint8_t *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, p + done, len - done);

		if (n < 0) {
			int err = -errno;

			if (err == -EINTR)
				continue;
			if (ret_written)
				*ret_written = done;
			return err;
		}
		if (n == 0) {
			/* write(2) returns 0 only for len 0; treat it as a full device. */
			if (ret_written)
				*ret_written = done;
			return -ENOSPC;
		}
		done += (size_t)n;
	}
	if (ret_written)
		*ret_written = done;
	return 0;
}

ssize_t util_read_some(int fd, void *buf, size_t len)
{
	for (;;) {
		ssize_t n = read(fd, buf, len);

		if (n >= 0)
			return n;
		if (errno != EINTR)
			return -errno;
	}
}

int util_read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = util_read_some(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return (int)n;
}

char *util_escape(const char *s, size_t len, char *out, size_t outsize)
{
	size_t o = 0;

	if (outsize == 0)
		return out;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char tmp[5];
		size_t n;

		if (c == '\\' || c == '"') {
			tmp[0] = '\\';
			tmp[1] = (char)c;
			n = 2;
		} else if (c == '\n') {
			memcpy(tmp, "\\n", 2);
			n = 2;
		} else if (c == '\t') {
			memcpy(tmp, "\\t", 2);
			n = 2;
		} else if (c < 0x20 || c > 0x7e) {
			snprintf(tmp, sizeof(tmp), "\\x%02x", c);
			n = 4;
		} else {
			tmp[0] = (char)c;
			n = 1;
		}
		if (o + n + 4 > outsize) {
			/* Leave room for "..." and the NUL. */
			if (o + 4 <= outsize) {
				memcpy(out + o, "...", 3);
				o += 3;
			}
			break;
		}
		memcpy(out + o, tmp, n);
		o += n;
	}
	out[o] = '\0';
	return out;
}

int util_parse_u64(const char *s, uint64_t *ret_v)
{
	unsigned long long v;
	const char *digits = s;
	int base = 10;
	char *end;

	/* Decimal, or hex with 0x: a leading 0 never means octal here. */
	if (!s)
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		digits = s + 2;
		base = 16;
	}
	if (!*digits || !((*digits >= '0' && *digits <= '9') ||
			  (base == 16 && ((*digits >= 'a' && *digits <= 'f') ||
					  (*digits >= 'A' && *digits <= 'F')))))
		return -EINVAL;
	errno = 0;
	v = strtoull(digits, &end, base);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || *end)
		return -EINVAL;
	*ret_v = v;
	return 0;
}

void *util_grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	q = realloc(p, n * elem);
	if (!q)
		return NULL;
	*cap = n;
	return q;
}

int util_index_reserve(struct util_index *x, size_t n, size_t min,
		       uint64_t (*hash)(const void *ctx, uint32_t id), const void *ctx)
{
	size_t cap = x->cap ? x->cap : min > 1 ? min : 16;
	uint32_t *slot;

	while (n > cap / 2)
		cap *= 2;
	if (cap == x->cap)
		return 0;
	slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < x->cap; i++) {
		size_t s;

		if (!x->slot[i])
			continue;
		for (s = (size_t)hash(ctx, x->slot[i]) & (cap - 1); slot[s]; s = (s + 1) & (cap - 1))
			;
		slot[s] = x->slot[i];
	}
	free(x->slot);
	x->slot = slot;
	x->cap = cap;
	return 0;
}

void util_index_clear(struct util_index *x)
{
	if (x->slot)
		memset(x->slot, 0, x->cap * sizeof(*x->slot));
}

void util_index_free(struct util_index *x)
{
	free(x->slot);
	x->slot = NULL;
	x->cap = 0;
}

void util_prefault(void *p, size_t len)
{
	const uintptr_t page = 4096;
	uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t hi = ((uintptr_t)p + len) & ~(page - 1);

	if (p && len >= UTIL_PREFAULT_MIN && hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE); /* a hint: errors ignored */
}

/* Those names are links nobody else can plant. */
int util_own_fd_name(const char *path)
{
	const char *n = NULL;
	char *end;
	long v;

	if (strcmp(path, "/dev/stdout") == 0)
		return 1;
	if (strcmp(path, "/dev/stderr") == 0)
		return 2;
	if (strncmp(path, "/dev/fd/", 8) == 0)
		n = path + 8;
	else if (strncmp(path, "/proc/self/fd/", 14) == 0)
		n = path + 14;
	if (!n || *n < '0' || *n > '9')
		return -1;
	errno = 0;
	v = strtol(n, &end, 10);
	return *end || errno || v > 1 << 20 ? -1 : (int)v;
}

int util_openat2(int dfd, const char *path, struct open_how *how)
{
	static atomic_bool none; /* ENOSYS seen: every thread skips the call from then on */
	long fd;

	if (atomic_load_explicit(&none, memory_order_relaxed)) {
		errno = ENOSYS;
		return -1;
	}
	fd = syscall(SYS_openat2, dfd, path, how, sizeof(*how));
	if (fd < 0 && errno == ENOSYS)
		atomic_store_explicit(&none, true, memory_order_relaxed);
	return (int)fd;
}

uint64_t util_now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return util_ns(&ts);
}

int64_t util_mono_ms(void)
{
	return (int64_t)(util_now_ns(CLOCK_MONOTONIC) / 1000000);
}

unsigned int util_edit_distance(const char *a, const char *b)
{
	unsigned int row[UTIL_SUGGEST_LEN_MAX + 2];
	size_t la = strlen(a), lb = strlen(b);

	if (la > UTIL_SUGGEST_LEN_MAX || lb > UTIL_SUGGEST_LEN_MAX)
		return UINT_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned int)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned int diag = row[0];

		row[0] = (unsigned int)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned int up = row[j];
			unsigned int best = diag + (tolower((unsigned char)a[i - 1]) !=
						    tolower((unsigned char)b[j - 1]));

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

void util_suggest_consider(struct util_suggest *s, const char *word, const char *cand)
{
	unsigned int d;

	if (!cand || strcmp(word, cand) == 0)
		return;
	d = util_edit_distance(word, cand);
	if (d > 2 || (size_t)d * 3 > strlen(cand))
		return;
	if (!s->best || d < s->dist) {
		s->best = cand;
		s->dist = d;
	}
}
