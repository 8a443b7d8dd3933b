/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-config.c: hwpmcd.conf: defaults, parsing, loading.
 *
 * PUBLIC INTERFACES (daemon-internal)
 *   daemon_config_defaults(), daemon_config_parse(), daemon_config_load()
 *
 * IMPLEMENTATION NOTES
 *   The file is lines of `key = value`; `#` starts a comment line; blank lines
 *   are skipped.  Every problem (an unknown key, a value out of range, a line
 *   that is not `key = value`, a NUL byte, an over-long line) is reported as
 *   "FILE:LINE: message" and counted: the daemon refuses to start on any, since
 *   a security setting silently left at its default is worse than no start.
 *   The line syntax is daemon_kv_parse()'s, which profile files share
 *   (daemon-profile.c).  The parser works on a buffer, not a FILE, so that the fuzz harness and the
 *   unit test drive exactly the code the daemon runs.  Keys and ranges are in
 *   one table; man/hwpmcd.conf.5 documents the same table.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "daemon-ctl.h"
#include "hwpmcd/common.h"
#include "hwpmcd/ctl-protocol.h"

/* meson's config.h names it from the install prefix; the fuzz harnesses build without it. */
#ifndef HWPMCD_HWPMC_PATH
#define HWPMCD_HWPMC_PATH "/usr/local/bin/hwpmc"
#endif

#define CONFIG_LINE_MAX 1024
#define CONFIG_FILE_MAX (1u << 20)

enum key_kind { K_U32, K_PATH, K_MODE, K_GROUP };

struct key {
	const char *name;
	enum key_kind kind;
	size_t off;	  /* into struct daemon_config */
	uint32_t lo, hi;  /* K_U32 range */
	bool pow2;	  /* K_U32: a power of two (0 allowed only if lo == 0) */
	bool mult8;	  /* K_U32: a multiple of 8 */
	size_t size;	  /* K_PATH/K_GROUP: the buffer */
};

#define U32(n, lo, hi, p2, m8) { #n, K_U32, offsetof(struct daemon_config, n), lo, hi, p2, m8, 0 }
#define STR(n, kind) { #n, kind, offsetof(struct daemon_config, n), 0, 0, false, false, \
		       sizeof(((struct daemon_config *)0)->n) }

static const struct key keys[] = {
	{ "socket", K_PATH, offsetof(struct daemon_config, socket_path), 0, 0, false, false,
	  sizeof(((struct daemon_config *)0)->socket_path) },
	STR(state_dir, K_PATH),
	STR(hwpmc, K_PATH),
	{ "socket_mode", K_MODE, offsetof(struct daemon_config, socket_mode), 0, 0777, false,
	  false, 0 },
	STR(admin_group, K_GROUP),
	U32(ring_pages, 1, 65536, true, false),
	U32(depth, 1, COLL_DEPTH_MAX, false, false),
	U32(stack_bytes, 8, COLL_STACK_MAX, false, true),
	U32(max_sessions, 1, DAEMON_SESSIONS_MAX, false, false),
	U32(unwind_cache_mb, 16, 65536, false, false),
	U32(max_clients, 1, DAEMON_CLIENTS_MAX, false, false),
	U32(client_idle_timeout, 0, 86400, false, false),
	U32(max_ring_mb, 1, 1048576, false, false),
	U32(max_perf_fds, 0, 16777216, false, false),
	U32(user_max_sessions, 0, DAEMON_SESSIONS_MAX, false, false),
	U32(user_max_clients, 1, DAEMON_CLIENTS_MAX, false, false),
	U32(user_max_freq, 0, 1000000, false, false),
	U32(user_max_ring_pages, 1, 65536, true, false),
	U32(user_max_stack_bytes, 8, COLL_STACK_MAX, false, true),
	U32(user_max_depth, 1, COLL_DEPTH_MAX, false, false),
	U32(user_max_perf_fds, 1, 16777216, false, false),
};

void daemon_config_defaults(struct daemon_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->socket_path, sizeof(cfg->socket_path), "%s", CTL_SOCKET_DEFAULT);
	snprintf(cfg->state_dir, sizeof(cfg->state_dir), "%s", "/var/lib/hwpmcd");
	snprintf(cfg->hwpmc, sizeof(cfg->hwpmc), "%s", HWPMCD_HWPMC_PATH);
	snprintf(cfg->admin_group, sizeof(cfg->admin_group), "%s", "hwpmc");
	cfg->socket_mode = 0660;
	cfg->ring_pages = COLL_RING_PAGES_DEFAULT;
	cfg->depth = COLL_DEPTH_DEFAULT;
	cfg->stack_bytes = COLL_STACK_DEFAULT;
	cfg->max_sessions = 16;
	cfg->unwind_cache_mb = (uint32_t)(UNWIND_ELF_BUDGET_DEFAULT >> 20);
	cfg->max_clients = 128;
	cfg->client_idle_timeout = 60;
	cfg->max_ring_mb = 4096;
	cfg->max_perf_fds = 0; /* what RLIMIT_NOFILE leaves (daemon-main.c) */
	cfg->user_max_sessions = 4;
	cfg->user_max_clients = 16;
	cfg->user_max_freq = 0;
	cfg->user_max_ring_pages = 1024;
	cfg->user_max_stack_bytes = 32768;
	cfg->user_max_depth = COLL_DEPTH_DEFAULT;
	cfg->user_max_perf_fds = 4096;
}

void daemon_diag_add(struct daemon_diag *d, const char *name, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	d->count++;
	if (!d->buf || d->len + 1 >= d->size)
		return;
	/* Line 0: the file as a whole. */
	if (line > 0)
		n = snprintf(d->buf + d->len, d->size - d->len, "%s%s:%d: ", d->len ? "\n" : "",
			     name, line);
	else
		n = snprintf(d->buf + d->len, d->size - d->len, "%s%s: ", d->len ? "\n" : "", name);
	if (n > 0)
		d->len = d->len + (size_t)n < d->size ? d->len + (size_t)n : d->size - 1;
	va_start(ap, fmt);
	n = vsnprintf(d->buf + d->len, d->size - d->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		d->len = d->len + (size_t)n < d->size ? d->len + (size_t)n : d->size - 1;
}

#define problem daemon_diag_add
#define diag daemon_diag

/* A printable rendering of @s for a message: control bytes become '?'. */
void daemon_printable(char *dst, size_t size, const char *s)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < size; i++)
		dst[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	dst[i] = '\0';
}

static void set_value(struct daemon_config *cfg, const struct key *k, const char *v,
		      struct diag *d, const char *name, int line)
{
	char *dst = (char *)cfg + k->off;
	char shown[96];
	uint64_t x;

	daemon_printable(shown, sizeof(shown), v);
	switch (k->kind) {
	case K_U32:
		if (util_parse_u64(v, &x) < 0 || x < k->lo || x > k->hi) {
			problem(d, name, line, "%s = '%s' is not a number in %u..%u", k->name, shown,
				k->lo, k->hi);
			return;
		}
		if (k->pow2 && x && (x & (x - 1))) {
			problem(d, name, line, "%s = %llu is not a power of two", k->name,
				(unsigned long long)x);
			return;
		}
		if (k->mult8 && x % 8) {
			problem(d, name, line, "%s = %llu is not a multiple of 8", k->name,
				(unsigned long long)x);
			return;
		}
		memcpy(dst, &(uint32_t){ (uint32_t)x }, sizeof(uint32_t));
		return;
	case K_MODE: {
		char *end;
		unsigned long m;

		/* Digits only: strtoul() would also take a sign and leading \v, \f or \r. */
		errno = 0;
		m = strtoul(v, &end, 8);
		if (*v < '0' || *v > '7' || *end || errno || m > 0777) {
			problem(d, name, line, "%s = '%s' is not an octal mode (0000..0777)", k->name,
				shown);
			return;
		}
		memcpy(dst, &(unsigned){ (unsigned)m }, sizeof(unsigned));
		return;
	}
	case K_PATH:
		if (v[0] != '/' || strlen(v) >= k->size || strstr(v, "/../") ||
		    (strlen(v) >= 3 && strcmp(v + strlen(v) - 3, "/..") == 0)) {
			problem(d, name, line, "%s = '%s' must be an absolute path without '..' "
				"of under %zu bytes", k->name, shown, k->size);
			return;
		}
		snprintf(dst, k->size, "%s", v);
		return;
	case K_GROUP:
		/* POSIX portable names, as useradd(8) takes them. */
		if (!*v || strlen(v) >= k->size || strspn(v, "abcdefghijklmnopqrstuvwxyz"
			"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != strlen(v) || v[0] == '-') {
			problem(d, name, line, "%s = '%s' is not a group name", k->name, shown);
			return;
		}
		snprintf(dst, k->size, "%s", v);
		return;
	}
}

int daemon_kv_parse(const char *text, size_t len, const char *name, daemon_kv_fn fn, void *ctx,
		    struct daemon_diag *d)
{
	size_t pos = 0;
	int line = 0, before = d->count;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		char buf[CONFIG_LINE_MAX], *k, *v, *e, *eq;

		line++;
		if (n >= sizeof(buf)) {
			problem(d, name, line, "line longer than %d bytes", CONFIG_LINE_MAX - 1);
			pos += n + 1;
			continue;
		}
		if (memchr(text + pos, '\0', n)) {
			problem(d, name, line, "a NUL byte in the line");
			pos += n + 1;
			continue;
		}
		memcpy(buf, text + pos, n);
		buf[n] = '\0';
		pos += n + 1;
		if (n && buf[n - 1] == '\r')
			buf[--n] = '\0';
		k = buf + strspn(buf, " \t");
		if (*k == '#' || *k == '\0')
			continue;
		eq = strchr(k, '=');
		if (!eq) {
			problem(d, name, line, "expected 'key = value'");
			continue;
		}
		*eq = '\0';
		v = eq + 1;
		v += strspn(v, " \t");
		for (e = v + strlen(v); e > v && (e[-1] == ' ' || e[-1] == '\t');)
			*--e = '\0';
		for (e = k + strlen(k); e > k && (e[-1] == ' ' || e[-1] == '\t');)
			*--e = '\0';
		fn(ctx, k, v, line, d);
	}
	return d->count - before;
}

struct config_ctx {
	struct daemon_config *cfg;
	const char *name;
};

static void config_kv(void *ctx, const char *k, const char *v, int line, struct daemon_diag *d)
{
	struct config_ctx *c = ctx;
	const struct key *key = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (strcmp(keys[i].name, k) == 0)
			key = &keys[i];
	if (!key) {
		struct util_suggest sg = { NULL, 0 };
		char shown[64];

		for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
			util_suggest_consider(&sg, k, keys[i].name);
		daemon_printable(shown, sizeof(shown), k);
		problem(d, c->name, line, "unknown key '%s'%s%s%s (see hwpmcd.conf(5))", shown,
			sg.best ? "; did you mean '" : "", sg.best ? sg.best : "", sg.best ? "'?" : "");
		return;
	}
	set_value(c->cfg, key, v, d, c->name, line);
}

int daemon_config_parse(struct daemon_config *cfg, const char *text, size_t len,
			const char *name, char *err, size_t errlen)
{
	struct daemon_diag d = { .buf = err, .size = errlen };
	struct config_ctx c = { cfg, name };

	if (err && errlen)
		err[0] = '\0';
	return daemon_kv_parse(text, len, name, config_kv, &c, &d);
}

int daemon_read_file(const char *path, size_t max, char **ret_buf, size_t *ret_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), r = 0;
	struct stat st;
	char *buf;
	ssize_t n = 0, k = 0;

	if (fd < 0)
		return -errno;
	/* A FIFO or a device named in a config directory must not hold up the daemon. */
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))
		st.st_size = 0; /* /dev/null: an empty file, "every default" */
	else if (S_ISDIR(st.st_mode))
		r = -EISDIR;
	else if (!S_ISREG(st.st_mode))
		r = -EINVAL;
	if (r < 0) {
		close(fd);
		return r;
	}
	buf = malloc(max + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while ((size_t)n <= max && (k = util_read_some(fd, buf + n, max + 1 - (size_t)n)) > 0)
		n += k;
	if ((size_t)n <= max && k < 0)
		r = (int)k;
	else if ((size_t)n > max)
		r = -EFBIG;
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	buf[n] = '\0';
	*ret_buf = buf;
	*ret_len = (size_t)n;
	return 0;
}

int daemon_config_load(struct daemon_config *cfg, const char *path, bool must_exist,
		       char *err, size_t errlen)
{
	char *buf = NULL;
	size_t n = 0;
	int r;

	if (err && errlen)
		err[0] = '\0';
	r = daemon_read_file(path, CONFIG_FILE_MAX, &buf, &n);
	if (r == -ENOENT && !must_exist)
		return 0;
	if (r == -EFBIG)
		snprintf(err, errlen, "%s: larger than %u bytes", path, CONFIG_FILE_MAX);
	else if (r == -EINVAL)
		snprintf(err, errlen, "%s: not a regular file", path);
	else if (r < 0)
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
	else if (daemon_config_parse(cfg, buf, n, path, err, errlen) > 0)
		r = -EINVAL;
	free(buf);
	return r;
}
