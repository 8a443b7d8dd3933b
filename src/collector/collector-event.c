/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * collector-event.c: event specs (-e) and the sysfs PMU listing.
 *
 * PUBLIC INTERFACES
 *   see include/hwpmcd/collector-event.h
 *
 * IMPLEMENTATION NOTES
 *   A spec is resolved in a fixed order: generic name (cycles, cpu-clock, ...),
 *   raw code (rHEX), then, only in the slash form, a PMU directory.  The slash
 *   form of a generic name or raw code (cpu-clock/period=100000/) takes only the
 *   period and freq terms.  A PMU term is, in this order: period or freq; config,
 *   config1 or config2 (the whole register, as perf allows); a file under format/;
 *   and, without a value, a file under events/ (an alias), whose terms are
 *   applied in place, so that a later explicit term overrides them.  Applying a
 *   format field first clears its bits, which is what makes the override work.
 *   Alias files may not name other aliases: there is no recursion to bound.
 *
 *   sysfs is hostile input.  Every file is opened O_NONBLOCK (a FIFO planted in
 *   the tree cannot hang us), must be a regular file, and is read up to 4096
 *   bytes; longer files, bytes outside printable ASCII and malformed contents are
 *   errors that name the file.  User-given names are checked against
 *   [A-Za-z0-9_.-] before they become path components, so no spec can make us
 *   open anything outside the PMU's directory.  Directory listings are bounded.
 *
 *   The log name is built from the spec as given ("cpu.event=0x3c.umask=0x1"),
 *   without period and freq, which are sampling settings and not part of what is
 *   counted.  When it would not fit PMCALLOCATEDYN's 63 characters, the name is
 *   built from the resulting config values instead, which always fits.
 *
 *   Errors are written to the caller's buffer, never logged; the listing, which
 *   has no error buffer, skips unusable entries and says so at debug level.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwpmcd/collector-event.h"
#include "hwpmcd/common.h"
#include "hwpmcd/log.h"

#define EV_FILE_MAX 4096 /* bytes we read from one sysfs file */
#define EV_NAME_MAX 63	 /* PMU, term and alias names */
#define EV_DIR_MAX 4096	 /* entries we take from one sysfs directory */
#define EV_SYSFS_DEFAULT "/sys"
#define EV_DEVICES "bus/event_source/devices"
#define EV_MODS_HINT "supported modifiers: u (user only), k (kernel only)"
#define EV_LIST_HINT "('hwpmc events' lists them)"

struct ev_generic {
	const char *name; /* perf's canonical spelling, used in the log */
	const char *alias;
	uint32_t type;
	uint64_t config;
};

static const struct ev_generic ev_generic[] = {
	{ "cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-instructions", "branches", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
};

static const char *const ev_generic_names[] = {
	"cycles",
	"instructions",
	"cache-references",
	"cache-misses",
	"branch-instructions",
	"branch-misses",
	"bus-cycles",
	"ref-cycles",
	"cpu-clock",
	"task-clock",
	"page-faults",
	"context-switches",
	"cpu-migrations",
	"minor-faults",
	"major-faults",
	NULL,
};

_Static_assert(ARRAY_SIZE(ev_generic_names) == ARRAY_SIZE(ev_generic) + 1,
	       "ev_generic_names must list every ev_generic entry");

/* Terms every PMU takes besides its format fields, in the order we list them. */
static const char *const ev_builtin_terms[] = { "period", "freq", "config", "config1", "config2" };

/* The message buffer of one call; len never exceeds cap - 1. */
struct ev_msg {
	char *buf;
	size_t cap;
	size_t len;
};

struct ev_ctx {
	const char *root;
	const char *spec; /* the trimmed spec, for messages */
	int devfd;	  /* <root>/bus/event_source/devices, -1 until opened */
	struct ev_msg msg;
};

/* One parsed format file: the value's bits go low to high across the ranges. */
struct ev_field {
	int reg; /* 0: config, 1: config1, 2: config2 */
	unsigned int nranges;
	uint8_t lo[64];
	uint8_t hi[64];
	unsigned int width;
};

/* A sorted, heap-allocated list of directory entry names. */
struct ev_names {
	char **v;
	size_t n;
};

enum ev_kind { EV_KIND_DIR = 0, EV_KIND_FILE, EV_KIND_MAX };

/* State of one PMU event while its terms are applied. */
struct ev_pmu {
	struct ev_ctx *c;
	const char *name;
	int fd; /* the PMU's directory */
	uint64_t regs[3];
	struct coll_event_spec *out; /* for period and freq */
};

static void msg_vadd(struct ev_msg *m, const char *fmt, va_list ap)
{
	int n;

	if (m->cap == 0 || m->len + 1 >= m->cap)
		return;
	n = vsnprintf(m->buf + m->len, m->cap - m->len, fmt, ap);
	if (n < 0)
		return;
	m->len += (size_t)n;
	if (m->len > m->cap - 1)
		m->len = m->cap - 1;
}

static void msg_add(struct ev_msg *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void msg_add(struct ev_msg *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_vadd(m, fmt, ap);
	va_end(ap);
}

/* Start the message afresh and return @code, so that callers can `return fail(...)`. */
static int fail(struct ev_msg *m, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct ev_msg *m, int code, const char *fmt, ...)
{
	va_list ap;

	m->len = 0;
	if (m->cap)
		m->buf[0] = '\0';
	va_start(ap, fmt);
	msg_vadd(m, fmt, ap);
	va_end(ap);
	return code;
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The number of hex digits that make up all of @s, or 0 if some character is not one. */
static size_t all_hex(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!is_hex(s[n]))
			return 0;
	return n;
}

static bool is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* A name we accept as a path component: [A-Za-z0-9_.-], 1..63, no leading dot. */
static bool name_valid(const char *s)
{
	size_t n = 0;

	if (s[0] == '\0' || s[0] == '.')
		return false;
	for (; s[n]; n++) {
		char c = s[n];

		if (n >= EV_NAME_MAX)
			return false;
		if (!is_letter(c) && !is_digit(c) && c != '_' && c != '-' && c != '.')
			return false;
	}
	return true;
}

static int check_name(struct ev_msg *m, const char *ctx, const char *what, const char *name)
{
	const char *sep = *ctx ? ": " : "";

	if (strlen(name) > EV_NAME_MAX)
		return fail(m, -ENAMETOOLONG, "%s%s%s name '%.40s...' is longer than %d characters",
			    ctx, sep, what, name, EV_NAME_MAX);
	if (!name_valid(name))
		return fail(
			m, -EINVAL,
			"%s%sbad %s name '%s': use letters, digits, '_', '-' and '.' (not first)",
			ctx, sep, what, name);
	return 0;
}

/* The companion files perf keeps next to aliases; they are not aliases themselves. */
static bool is_companion(const char *name)
{
	static const char *const sfx[] = { ".scale", ".unit", ".per-pkg", ".snapshot" };
	size_t n = strlen(name);

	for (size_t i = 0; i < ARRAY_SIZE(sfx); i++) {
		size_t k = strlen(sfx[i]);

		if (n > k && strcmp(name + n - k, sfx[i]) == 0)
			return true;
	}
	return false;
}

/* Trim white space at both ends, in place. */
static char *trim(char *s)
{
	size_t n;

	while (is_blank(*s))
		s++;
	n = strlen(s);
	while (n > 0 && is_blank(s[n - 1]))
		s[--n] = '\0';
	return s;
}

/*
 * Read the sysfs attribute @atfd/@rel into @buf (EV_FILE_MAX + 1 bytes), blanks at
 * both ends stripped.  Returns its length, an open/read errno, or one of three
 * codes that attr_problem() explains: -EINVAL (not a regular file), -EFBIG (over
 * EV_FILE_MAX bytes), -EILSEQ (a byte outside printable ASCII).
 */
static int read_attr(int atfd, const char *rel, char *buf)
{
	struct stat st;
	size_t len = 0, start = 0;
	int fd, r = 0;

	fd = openat(atfd, rel, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		goto out;
	}
	/* sysfs reports 4096 as every file's size: read to EOF, one byte past the bound. */
	while (len <= EV_FILE_MAX) {
		ssize_t n = util_read_some(fd, buf + len, EV_FILE_MAX + 1 - len);

		if (n < 0) {
			r = (int)n;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > EV_FILE_MAX) {
		r = -EFBIG;
		goto out;
	}
	while (len > 0 && is_blank(buf[len - 1]))
		len--;
	while (start < len && is_blank(buf[start]))
		start++;
	len -= start;
	memmove(buf, buf + start, len);
	buf[len] = '\0';
	for (size_t i = 0; i < len; i++) {
		if (buf[i] < ' ' || buf[i] > '~') {
			r = -EILSEQ;
			goto out;
		}
	}
	r = (int)len;
out:
	close(fd);
	return r;
}

static const char *attr_problem(int r)
{
	switch (r) {
	case -EINVAL:
		return "not a regular file";
	case -EFBIG:
		return "larger than 4096 bytes";
	case -EILSEQ:
		return "holds bytes that are not printable ASCII";
	default:
		return strerror(-r);
	}
}

/* The errno we return for a read_attr() failure: content problems are -EINVAL. */
static int attr_errno(int r)
{
	return r == -EFBIG || r == -EILSEQ ? -EINVAL : r;
}

/* Parse one decimal number of a format file's bit range; at most two digits fit. */
static bool parse_bit(const char **p, unsigned int *ret_bit)
{
	unsigned int v = 0;
	const char *s = *p;

	if (!is_digit(*s))
		return false;
	for (; is_digit(*s); s++) {
		v = v * 10 + (unsigned int)(*s - '0');
		if (v > 999)
			return false;
	}
	*p = s;
	*ret_bit = v;
	return true;
}

/*
 * parse_format: "configN:lo-hi[,lo-hi...]" (a range may be a single bit).  Returns
 * 0, or -EINVAL with the reason in @why.
 */
static int parse_format(const char *s, struct ev_field *f, char *why, size_t whylen)
{
	const char *colon = strchr(s, ':');
	const char *p;
	uint64_t used = 0;
	size_t reglen;

	memset(f, 0, sizeof(*f));
	if (!colon) {
		snprintf(why, whylen, "expected configN:BITS");
		return -EINVAL;
	}
	reglen = (size_t)(colon - s);
	if (reglen == 6 && strncmp(s, "config", 6) == 0) {
		f->reg = 0;
	} else if (reglen == 7 && strncmp(s, "config1", 7) == 0) {
		f->reg = 1;
	} else if (reglen == 7 && strncmp(s, "config2", 7) == 0) {
		f->reg = 2;
	} else {
		snprintf(why, whylen,
			 "unknown register '%.*s' (expected config, config1 or config2)",
			 (int)(reglen > 16 ? 16 : reglen), s);
		return -EINVAL;
	}
	p = colon + 1;
	if (*p == '\0') {
		snprintf(why, whylen, "no bit ranges after ':'");
		return -EINVAL;
	}
	for (;;) {
		unsigned int lo, hi;
		uint64_t mask;

		if (!parse_bit(&p, &lo)) {
			snprintf(why, whylen, "bad bit range at '%.16s'", p);
			return -EINVAL;
		}
		hi = lo;
		if (*p == '-') {
			p++;
			if (!parse_bit(&p, &hi)) {
				snprintf(why, whylen, "bad bit range at '%.16s'", p);
				return -EINVAL;
			}
		}
		if (hi > 63) {
			snprintf(why, whylen, "bit %u is above 63", hi);
			return -EINVAL;
		}
		if (hi < lo) {
			snprintf(why, whylen, "range %u-%u ends below its start", lo, hi);
			return -EINVAL;
		}
		mask = (hi - lo == 63 ? UINT64_MAX : ((UINT64_C(1) << (hi - lo + 1)) - 1)) << lo;
		if (used & mask) {
			snprintf(why, whylen, "bit ranges overlap at %u-%u", lo, hi);
			return -EINVAL;
		}
		used |= mask;
		/* Non-overlapping ranges in 64 bits: nranges cannot pass 64. */
		f->lo[f->nranges] = (uint8_t)lo;
		f->hi[f->nranges] = (uint8_t)hi;
		f->nranges++;
		f->width += hi - lo + 1;
		if (*p == '\0')
			return 0;
		if (*p != ',') {
			snprintf(why, whylen, "unexpected '%c' after bit range %u-%u", *p, lo, hi);
			return -EINVAL;
		}
		p++;
	}
}

static uint64_t field_max(const struct ev_field *f)
{
	return f->width >= 64 ? UINT64_MAX : (UINT64_C(1) << f->width) - 1;
}

static bool field_fits(const struct ev_field *f, uint64_t v)
{
	return (v & ~field_max(f)) == 0;
}

/* Scatter @v's bits, low to high, across the field's ranges; clear them first. */
static void field_apply(const struct ev_field *f, uint64_t v, uint64_t *regs)
{
	unsigned int shift = 0;

	for (unsigned int i = 0; i < f->nranges; i++) {
		unsigned int n = (unsigned int)(f->hi[i] - f->lo[i]) + 1;
		uint64_t mask = n == 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
		uint64_t bits = shift < 64 ? (v >> shift) & mask : 0;

		regs[f->reg] &= ~(mask << f->lo[i]);
		regs[f->reg] |= bits << f->lo[i];
		shift += n;
	}
}

static int cmp_names(const void *a, const void *b)
{
	const char *const *pa = a;
	const char *const *pb = b;

	return strcmp(*pa, *pb);
}

static void names_free(struct ev_names *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/*
 * list_names: the valid names of the directories (EV_KIND_DIR, symlinks followed:
 * sysfs PMUs are links) or regular files under @atfd/@sub, sorted, at most
 * EV_DIR_MAX.  Returns 0, or -ENOMEM or the error opening the directory.
 */
static int list_names(int atfd, const char *sub, enum ev_kind kind, bool skip_companions,
		      struct ev_names *ret)
{
	struct ev_names l = { NULL, 0 };
	size_t cap = 0;
	struct dirent *de;
	DIR *d;
	int fd, r = 0;

	fd = openat(atfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	while ((de = readdir(d)) && l.n < EV_DIR_MAX) {
		struct stat st;

		if (!name_valid(de->d_name) || (skip_companions && is_companion(de->d_name)))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, 0) < 0)
			continue;
		if (kind == EV_KIND_DIR ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
			continue;
		if (l.n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **nv = realloc(l.v, ncap * sizeof(*nv));

			if (!nv) {
				r = -ENOMEM;
				goto err;
			}
			l.v = nv;
			cap = ncap;
		}
		l.v[l.n] = strdup(de->d_name);
		if (!l.v[l.n]) {
			r = -ENOMEM;
			goto err;
		}
		l.n++;
	}
	closedir(d);
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), cmp_names);
	*ret = l;
	return 0;
err:
	closedir(d);
	names_free(&l);
	return r;
}

static void suggest_generic(struct util_suggest *s, const char *word)
{
	for (size_t i = 0; i < ARRAY_SIZE(ev_generic); i++) {
		util_suggest_consider(s, word, ev_generic[i].name);
		util_suggest_consider(s, word, ev_generic[i].alias);
	}
}

static const struct ev_generic *generic_lookup(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(ev_generic); i++) {
		const struct ev_generic *g = &ev_generic[i];

		if (strcmp(name, g->name) == 0 || (g->alias && strcmp(name, g->alias) == 0))
			return g;
	}
	return NULL;
}

static int open_devices(const char *root, int *ret_fd)
{
	char path[PATH_MAX];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, EV_DEVICES) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*ret_fd = fd;
	return 0;
}

/* The devices directory of @c, opened on first use; a negative errno if it cannot be. */
static int ctx_devices(struct ev_ctx *c)
{
	int r;

	if (c->devfd >= 0)
		return c->devfd;
	r = open_devices(c->root, &c->devfd);
	return r < 0 ? r : c->devfd;
}

static int parse_value(struct ev_msg *m, const char *ctx, const char *key, const char *val,
		       uint64_t *ret_v)
{
	int r = util_parse_u64(val, ret_v);

	if (r == -ERANGE)
		return fail(m, -ERANGE, "%s: value %s of '%s' does not fit in 64 bits", ctx, val,
			    key);
	if (r < 0)
		return fail(m, -EINVAL,
			    "%s: bad value '%s' for '%s'; expected a decimal or 0x-hex number", ctx,
			    val, key);
	return 0;
}

/* period=N or freq=N.  Returns 1 if @key was one of them, 0 if not, or a negative errno. */
static int special_term(struct ev_msg *m, const char *ctx, const char *key, const char *val,
			struct coll_event_spec *out)
{
	bool is_period = strcmp(key, "period") == 0;
	uint64_t v;
	int r;

	if (!is_period && strcmp(key, "freq") != 0)
		return 0;
	if (!val)
		return fail(m, -EINVAL, "%s: '%s' needs a value, as in %s=%s", ctx, key, key,
			    is_period ? "100000" : "1000");
	r = parse_value(m, ctx, key, val, &v);
	if (r < 0)
		return r;
	if (v == 0)
		return fail(m, -EINVAL, "%s: %s=%s is not allowed; the %s must be at least 1", ctx,
			    key, val, is_period ? "period" : "frequency");
	/* The kernel refuses a sample_period with bit 63 set; the union shares it with freq. */
	if (v > (uint64_t)INT64_MAX)
		return fail(m, -ERANGE, "%s: %s %s is too large (at most 9223372036854775807)", ctx,
			    key, val);
	if (is_period) {
		out->has_period = true;
		out->period = v;
	} else {
		out->has_freq = true;
		out->freq = v;
	}
	return 1;
}

static int builtin_reg(const char *key)
{
	if (strcmp(key, "config") == 0)
		return 0;
	if (strcmp(key, "config1") == 0)
		return 1;
	if (strcmp(key, "config2") == 0)
		return 2;
	return -1;
}

/* The "unknown term" error of a PMU, listing what it does take. */
static int unknown_term(struct ev_pmu *p, const char *key, bool bare)
{
	struct ev_msg *m = &p->c->msg;
	struct ev_names fmts = { NULL, 0 }, aliases = { NULL, 0 };
	struct util_suggest sg = { NULL, 0 };
	int code = bare ? -ENOENT : -EINVAL;
	bool first = true;

	/* Listing failures only make the message less helpful; the error stands. */
	(void)list_names(p->fd, "format", EV_KIND_FILE, false, &fmts);
	if (bare)
		(void)list_names(p->fd, "events", EV_KIND_FILE, true, &aliases);
	fail(m, code, "%s: unknown %s '%s'; valid terms: ", p->name,
	     bare ? "term or alias" : "term", key);
	for (size_t i = 0; i < fmts.n; i++) {
		if (builtin_reg(fmts.v[i]) >= 0 || !strcmp(fmts.v[i], "period") ||
		    !strcmp(fmts.v[i], "freq"))
			continue;
		msg_add(m, "%s%s", first ? "" : ", ", fmts.v[i]);
		first = false;
		util_suggest_consider(&sg, key, fmts.v[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(ev_builtin_terms); i++) {
		msg_add(m, "%s%s", first ? "" : ", ", ev_builtin_terms[i]);
		first = false;
		util_suggest_consider(&sg, key, ev_builtin_terms[i]);
	}
	for (size_t i = 0; i < aliases.n; i++)
		util_suggest_consider(&sg, key, aliases.v[i]);
	if (sg.best)
		msg_add(m, "; did you mean '%s'?", sg.best);
	if (bare)
		msg_add(m, " ('hwpmc events' lists the aliases)");
	names_free(&fmts);
	names_free(&aliases);
	return code;
}

static int pmu_term(struct ev_pmu *p, const char *key, const char *val, const char *alias);

/* Apply the terms of the alias file events/@alias, whose contents are in @buf. */
static int expand_alias(struct ev_pmu *p, const char *alias, char *buf)
{
	struct ev_msg *m = &p->c->msg;
	char *t, *next;
	int r;

	if (*buf == '\0')
		return fail(m, -EINVAL, "%s: alias file 'events/%s' is empty", p->name, alias);
	for (t = buf; t; t = next) {
		char *comma = strchr(t, ','), *eq, *key, *val = NULL;

		next = comma ? comma + 1 : NULL;
		if (comma)
			*comma = '\0';
		eq = strchr(t, '=');
		if (eq) {
			*eq = '\0';
			val = trim(eq + 1);
		}
		key = trim(t);
		if (*key == '\0')
			return fail(m, -EINVAL, "%s: alias file 'events/%s' has an empty term",
				    p->name, alias);
		if (val && *val == '\0')
			return fail(m, -EINVAL,
				    "%s: alias file 'events/%s' has no value after '%s='", p->name,
				    alias, key);
		r = pmu_term(p, key, val, alias);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * pmu_term: apply one term, @val NULL when it came without "=value".  @alias is
 * the alias file it came from, or NULL for a term the user wrote.
 */
static int pmu_term(struct ev_pmu *p, const char *key, const char *val, const char *alias)
{
	struct ev_msg *m = &p->c->msg;
	char ctx[EV_NAME_MAX * 2 + 32];
	char rel[EV_NAME_MAX + 16];
	char buf[EV_FILE_MAX + 1];
	char why[128];
	struct ev_field f;
	struct stat st;
	uint64_t v = 1;
	int r, reg;

	if (alias)
		snprintf(ctx, sizeof(ctx), "%s: alias file 'events/%s'", p->name, alias);
	else
		snprintf(ctx, sizeof(ctx), "%s", p->name);
	r = check_name(m, ctx, "term", key);
	if (r < 0)
		return r;
	r = special_term(m, ctx, key, val, p->out);
	if (r)
		return r < 0 ? r : 0;
	reg = builtin_reg(key);
	if (reg >= 0) {
		if (val) {
			r = parse_value(m, ctx, key, val, &v);
			if (r < 0)
				return r;
		}
		p->regs[reg] = v;
		return 0;
	}

	snprintf(rel, sizeof(rel), "format/%s", key);
	r = read_attr(p->fd, rel, buf);
	if (r >= 0) {
		if (parse_format(buf, &f, why, sizeof(why)) < 0)
			return fail(m, -EINVAL,
				    "%s: malformed format file 'format/%s' ('%.64s'): %s", p->name,
				    key, buf, why);
		if (val) {
			r = parse_value(m, ctx, key, val, &v);
			if (r < 0)
				return r;
		}
		if (!field_fits(&f, v))
			return fail(m, -ERANGE,
				    "%s: value %s of '%s' does not fit its %u-bit field %s (at "
				    "most 0x%" PRIx64 ")",
				    ctx, val ? val : "1", key, f.width, buf, field_max(&f));
		field_apply(&f, v, p->regs);
		return 0;
	}
	if (r != -ENOENT && r != -ENOTDIR)
		return fail(m, attr_errno(r), "%s: cannot read 'format/%s': %s", p->name, key,
			    attr_problem(r));
	if (alias)
		return fail(m, -EINVAL, "%s: unknown term '%s' (aliases cannot name aliases)", ctx,
			    key);

	/* Not a format field: an alias, if it came without a value. */
	snprintf(rel, sizeof(rel), "events/%s", key);
	if (val) {
		if (!is_companion(key) && fstatat(p->fd, rel, &st, 0) == 0 && S_ISREG(st.st_mode))
			return fail(m, -EINVAL, "%s: '%s' is an event alias and takes no value",
				    p->name, key);
		return unknown_term(p, key, false);
	}
	r = is_companion(key) ? -ENOENT : read_attr(p->fd, rel, buf);
	if (r == -ENOENT || r == -ENOTDIR)
		return unknown_term(p, key, true);
	if (r < 0)
		return fail(m, attr_errno(r), "%s: cannot read alias file 'events/%s': %s", p->name,
			    key, attr_problem(r));
	return expand_alias(p, key, buf);
}

static int unknown_pmu(struct ev_ctx *c, const char *name)
{
	struct ev_msg *m = &c->msg;
	struct ev_names pmus = { NULL, 0 };
	struct util_suggest sg = { NULL, 0 };
	int r;

	r = list_names(c->devfd, ".", EV_KIND_DIR, false, &pmus);
	fail(m, -ENOENT, "unknown PMU '%s'; ", name);
	if (r < 0) {
		msg_add(m, "cannot list the PMUs: %s", strerror(-r));
	} else if (pmus.n == 0) {
		msg_add(m, "there are no PMUs in '%s/%s'", c->root, EV_DEVICES);
	} else {
		msg_add(m, "PMUs here: ");
		for (size_t i = 0; i < pmus.n; i++)
			msg_add(m, "%s%s", i ? ", " : "", pmus.v[i]);
	}
	suggest_generic(&sg, name);
	if (sg.best)
		msg_add(m, "; did you mean the event '%s'?", sg.best);
	names_free(&pmus);
	return -ENOENT;
}

/* Resolve @prefix as a PMU and apply @terms; the log name so far goes to @base. */
static int parse_pmu(struct ev_ctx *c, const char *prefix, char *terms, struct coll_event_spec *out,
		     char *base, size_t basesize)
{
	struct ev_msg *m = &c->msg;
	struct ev_pmu p = { c, prefix, -1, { 0, 0, 0 }, out };
	char buf[EV_FILE_MAX + 1];
	size_t blen;
	uint64_t type;
	char *t, *next;
	int devfd, r;

	r = check_name(m, "", "PMU", prefix);
	if (r < 0)
		return r;
	devfd = ctx_devices(c);
	if (devfd == -ENAMETOOLONG)
		return fail(m, -ENAMETOOLONG, "sysfs root '%.64s' is too long", c->root);
	if (devfd < 0)
		return fail(m, devfd == -ENOENT ? -ENOENT : devfd,
			    "unknown PMU '%s'; cannot open '%s/%s': %s", prefix, c->root,
			    EV_DEVICES, strerror(-devfd));
	p.fd = openat(devfd, prefix, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p.fd < 0) {
		r = -errno;
		if (r == -ENOENT || r == -ENOTDIR)
			return unknown_pmu(c, prefix);
		return fail(m, r, "PMU '%s': cannot open its directory: %s", prefix, strerror(-r));
	}
	r = read_attr(p.fd, "type", buf);
	if (r == -ENOENT) {
		r = fail(m, -ENOENT, "PMU '%s' has no 'type' file", prefix);
		goto out;
	}
	if (r < 0) {
		r = fail(m, attr_errno(r), "PMU '%s': cannot read its 'type' file: %s", prefix,
			 attr_problem(r));
		goto out;
	}
	if (util_parse_u64(buf, &type) < 0 || type > UINT32_MAX) {
		r = fail(m, -EINVAL,
			 "PMU '%s': malformed 'type' file ('%.32s'): expected a number up to "
			 "4294967295",
			 prefix, buf);
		goto out;
	}
	out->type = (uint32_t)type;
	blen = (size_t)snprintf(base, basesize, "%s", prefix);

	for (t = terms; t; t = next) {
		char *comma = strchr(t, ','), *eq, *val = NULL;
		size_t keylen;

		next = comma ? comma + 1 : NULL;
		if (comma)
			*comma = '\0';
		if (*t == '\0') {
			r = fail(m, -EINVAL, "%s: empty term in '%s'", prefix, c->spec);
			goto out;
		}
		eq = strchr(t, '=');
		keylen = eq ? (size_t)(eq - t) : strlen(t);
		/* The name shows what is counted: every term but period and freq, as given. */
		if (!((keylen == 6 && strncmp(t, "period", 6) == 0) ||
		      (keylen == 4 && strncmp(t, "freq", 4) == 0)) &&
		    blen < basesize)
			blen += (size_t)snprintf(base + blen, basesize - blen, ".%s", t);
		if (eq) {
			*eq = '\0';
			val = eq + 1;
			if (*t == '\0') {
				r = fail(m, -EINVAL, "%s: missing term name before '=%s'", prefix,
					 val);
				goto out;
			}
			if (*val == '\0') {
				r = fail(m, -EINVAL, "%s: missing value after '%s='", prefix, t);
				goto out;
			}
		}
		r = pmu_term(&p, t, val, NULL);
		if (r < 0)
			goto out;
	}
	out->config = p.regs[0];
	out->config1 = p.regs[1];
	out->config2 = p.regs[2];
	out->needs_hw_pmu = strcmp(prefix, "software") != 0 && strcmp(prefix, "tracepoint") != 0 &&
			    strcmp(prefix, "breakpoint") != 0;
	r = 0;
out:
	close(p.fd);
	return r;
}

/* The slash form of a generic name or raw code: only period and freq. */
static int parse_plain_terms(struct ev_ctx *c, const char *ctx, char *terms,
			     struct coll_event_spec *out)
{
	struct ev_msg *m = &c->msg;
	char *t, *next;
	int r;

	for (t = terms; t; t = next) {
		char *comma = strchr(t, ','), *eq, *val = NULL;

		next = comma ? comma + 1 : NULL;
		if (comma)
			*comma = '\0';
		if (*t == '\0')
			return fail(m, -EINVAL, "%s: empty term in '%s'", ctx, c->spec);
		eq = strchr(t, '=');
		if (eq) {
			*eq = '\0';
			val = eq + 1;
			if (*val == '\0')
				return fail(m, -EINVAL, "%s: missing value after '%s='", ctx, t);
		}
		r = special_term(m, ctx, t, val, out);
		if (r < 0)
			return r;
		if (r == 0)
			return fail(m, -EINVAL,
				    "%s: unknown term '%s'; valid terms: period, freq (other terms "
				    "need a PMU, as in 'cpu/event=0x3c/')",
				    ctx, t);
	}
	return 0;
}

/* A bare name that is no generic event or raw code: explain as well as we can. */
static int unknown_event(struct ev_ctx *c, const char *name)
{
	struct ev_msg *m = &c->msg;
	struct util_suggest sg = { NULL, 0 };
	struct ev_names pmus = { NULL, 0 };
	struct stat st;
	int devfd = name_valid(name) ? ctx_devices(c) : -EINVAL;

	if (devfd >= 0) {
		if (fstatat(devfd, name, &st, 0) == 0 && S_ISDIR(st.st_mode))
			return fail(
				m, -EINVAL,
				"'%s' is a PMU, not an event; write '%s/event=...,umask=.../' or "
				"'%s/ALIAS/' %s",
				name, name, name, EV_LIST_HINT);
		/* An alias of some PMU, written without its PMU (perf would search them all). */
		if (list_names(devfd, ".", EV_KIND_DIR, false, &pmus) == 0) {
			for (size_t i = 0; i < pmus.n; i++) {
				char rel[2 * EV_NAME_MAX + 16];

				snprintf(rel, sizeof(rel), "%s/events/%s", pmus.v[i], name);
				if (!is_companion(name) && fstatat(devfd, rel, &st, 0) == 0 &&
				    S_ISREG(st.st_mode)) {
					fail(m, -ENOENT,
					     "unknown event '%s'; did you mean '%s/%s/'? %s", name,
					     pmus.v[i], name, EV_LIST_HINT);
					names_free(&pmus);
					return -ENOENT;
				}
			}
			names_free(&pmus);
		}
	}
	suggest_generic(&sg, name);
	if (sg.best)
		return fail(m, -ENOENT, "unknown event '%s'; did you mean '%s'? %s", name, sg.best,
			    EV_LIST_HINT);
	if (name[0] == 'r')
		return fail(m, -EINVAL,
			    "bad raw event '%s': 'r' must be followed by 1 to 16 hex digits, as in "
			    "'r01c2'",
			    name);
	return fail(m, -ENOENT, "unknown event '%s' %s", name, EV_LIST_HINT);
}

static int parse_mods(struct ev_ctx *c, const char *mods, bool *ret_u, bool *ret_k)
{
	struct ev_msg *m = &c->msg;
	bool u = false, k = false;

	for (const char *p = mods; *p; p++) {
		switch (*p) {
		case 'u':
			u = true;
			break;
		case 'k':
			k = true;
			break;
		case 'p':
		case 'P':
			return fail(
				m, -EINVAL,
				"event '%s': modifier '%c' (precise sampling) is not supported; "
				"%s",
				c->spec, *p, EV_MODS_HINT);
		default:
			if (*p != '\0' && strchr("hHGIWSDeb", *p))
				return fail(m, -EINVAL,
					    "event '%s': perf's modifier '%c' is not supported; %s",
					    c->spec, *p, EV_MODS_HINT);
			if (is_letter(*p))
				return fail(m, -EINVAL, "event '%s': unknown modifier '%c'; %s",
					    c->spec, *p, EV_MODS_HINT);
			return fail(m, -EINVAL, "event '%s': unexpected '%c' in the modifiers '%s'",
				    c->spec, *p, mods);
		}
	}
	*ret_u = u;
	*ret_k = k;
	return 0;
}

/* A name PMCALLOCATEDYN takes: 1..63 printable characters, no '/' and no blanks. */
static bool log_name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > COLL_EVENT_NAME_MAX - 1)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~' || s[i] == '/')
			return false;
	return true;
}

/* "<pmu>.0x<config>[.0x<config1>[.0x<config2>]]<suffix>", the PMU name cut to fit. */
static void fallback_name(char *out, const char *pmu, const struct coll_event_spec *ev,
			  const char *suffix)
{
	char tail[96];
	size_t n, room;

	n = (size_t)snprintf(tail, sizeof(tail), ".0x%" PRIx64, ev->config);
	if (ev->config1 || ev->config2)
		n += (size_t)snprintf(tail + n, sizeof(tail) - n, ".0x%" PRIx64, ev->config1);
	if (ev->config2)
		n += (size_t)snprintf(tail + n, sizeof(tail) - n, ".0x%" PRIx64, ev->config2);
	n += (size_t)snprintf(tail + n, sizeof(tail) - n, "%s", suffix);
	/* At most 3 * 19 + 2 = 59 characters: the PMU name keeps at least 4. */
	room = COLL_EVENT_NAME_MAX - 1 - n;
	if (strlen(pmu) < room)
		room = strlen(pmu);
	memcpy(out, pmu, room);
	memcpy(out + room, tail, n + 1);
}

static int parse_spec(struct ev_ctx *c, char *s, struct coll_event_spec *out)
{
	struct ev_msg *m = &c->msg;
	char base[COLL_EVENT_SPEC_MAX + 2];
	const struct ev_generic *g;
	char *slash, *prefix, *terms = NULL, *mods;
	const char *suffix;
	size_t ndigits, blen;
	bool u = false, k = false, is_pmu = false;
	int r;

	memset(out, 0, sizeof(*out));
	slash = strchr(s, '/');
	if (slash) {
		char *end;

		*slash = '\0';
		prefix = s;
		terms = slash + 1;
		end = strchr(terms, '/');
		if (!end)
			return fail(m, -EINVAL,
				    "event '%s': missing the closing '/' of the term list",
				    c->spec);
		*end = '\0';
		mods = end + 1;
		if (strchr(mods, '/'))
			return fail(m, -EINVAL, "event '%s': unexpected '/' after the term list",
				    c->spec);
		if (*mods == ':' && *++mods == '\0')
			return fail(m, -EINVAL, "event '%s': empty modifier after ':'", c->spec);
		if (*prefix == '\0')
			return fail(m, -EINVAL,
				    "event '%s': missing the PMU or event name before '/'",
				    c->spec);
		if (*terms == '\0')
			return fail(m, -EINVAL, "event '%s': empty term list between the slashes",
				    c->spec);
	} else {
		char *colon = strchr(s, ':');

		mods = colon ? colon + 1 : s + strlen(s);
		if (colon) {
			*colon = '\0';
			if (*mods == '\0')
				return fail(m, -EINVAL, "event '%s': empty modifier after ':'",
					    c->spec);
		}
		prefix = s;
		if (*prefix == '\0')
			return fail(m, -EINVAL, "event '%s': missing the event name before ':'",
				    c->spec);
	}

	ndigits = strlen(prefix) - 1;
	g = generic_lookup(prefix);
	if (g) {
		out->type = g->type;
		out->config = g->config;
		out->needs_hw_pmu = g->type != PERF_TYPE_SOFTWARE;
		snprintf(base, sizeof(base), "%s", g->name);
	} else if (prefix[0] == 'r' && ndigits > 0 && all_hex(prefix + 1) == ndigits) {
		if (ndigits > 16)
			return fail(m, -ERANGE, "raw event '%s' has %zu hex digits; at most 16 fit",
				    prefix, ndigits);
		out->type = PERF_TYPE_RAW;
		out->config = strtoull(prefix + 1, NULL, 16);
		out->needs_hw_pmu = true;
		for (size_t i = 0; i <= ndigits; i++)
			base[i] = lower(prefix[i]);
		base[ndigits + 1] = '\0';
	} else if (terms) {
		r = parse_pmu(c, prefix, terms, out, base, sizeof(base));
		if (r < 0)
			return r;
		is_pmu = true;
	} else {
		return unknown_event(c, prefix);
	}
	if (terms && !is_pmu) {
		r = parse_plain_terms(c, base, terms, out);
		if (r < 0)
			return r;
	}

	r = parse_mods(c, mods, &u, &k);
	if (r < 0)
		return r;
	/* :u counts user mode only, :k kernel mode only; both letters exclude nothing. */
	out->exclude_kernel = u && !k;
	out->exclude_user = k && !u;
	suffix = out->exclude_kernel ? ":u" : out->exclude_user ? ":k" : "";
	if (out->has_period && out->has_freq)
		return fail(m, -EINVAL, "event '%s': give period or freq, not both", c->spec);

	blen = strlen(base);
	if (blen + strlen(suffix) < sizeof(out->name)) {
		memcpy(out->name, base, blen);
		memcpy(out->name + blen, suffix, strlen(suffix) + 1);
		if (log_name_valid(out->name))
			return 0;
	}
	fallback_name(out->name, is_pmu ? prefix : "event", out, suffix);
	return 0;
}

int coll_event_parse(const char *spec, const char *sysfs_root, struct coll_event_spec *ret_spec,
		     char *err, size_t errlen)
{
	struct ev_ctx c = {
		sysfs_root ? sysfs_root : EV_SYSFS_DEFAULT, "", -1, { err, err ? errlen : 0, 0 }
	};
	struct coll_event_spec out;
	char orig[COLL_EVENT_SPEC_MAX + 1];
	char work[COLL_EVENT_SPEC_MAX + 1];
	char esc[128];
	const char *start;
	size_t len;
	int r;

	if (c.msg.cap)
		err[0] = '\0';
	if (!spec || !ret_spec)
		return fail(&c.msg, -EINVAL, "no event given");
	start = spec;
	while (is_blank(*start))
		start++;
	len = strlen(start);
	while (len > 0 && is_blank(start[len - 1]))
		len--;
	if (len == 0)
		return fail(&c.msg, -EINVAL, "empty event");
	if (len > COLL_EVENT_SPEC_MAX)
		return fail(&c.msg, -ENAMETOOLONG, "event '%s' is longer than %d characters",
			    util_escape(start, 40, esc, 48), COLL_EVENT_SPEC_MAX);
	for (size_t i = 0; i < len; i++) {
		if (start[i] <= ' ' || start[i] > '~')
			return fail(
				&c.msg, -EINVAL,
				"event '%s': white space or a non-printable character at offset "
				"%zu",
				util_escape(start, len, esc, sizeof(esc)), i);
	}
	memcpy(orig, start, len);
	orig[len] = '\0';
	memcpy(work, orig, len + 1);
	c.spec = orig;
	r = parse_spec(&c, work, &out);
	if (c.devfd >= 0)
		close(c.devfd);
	if (r < 0)
		return r;
	*ret_spec = out;
	return 0;
}

int coll_event_parse_list(const char *list, const char *sysfs_root, struct coll_event_spec *specs,
			  size_t max, size_t *inout_n, char *err, size_t errlen)
{
	struct ev_msg m = { err, err ? errlen : 0, 0 };
	struct coll_event_spec *tmp;
	char elem[COLL_EVENT_SPEC_MAX + 1];
	char esc[96];
	size_t limit = max < COLL_EVENT_MAX ? max : COLL_EVENT_MAX;
	size_t count = 0, i = 0;
	const char *p, *from;
	bool in_slash = false;
	int r;

	if (m.cap)
		err[0] = '\0';
	if (!list || !specs || !inout_n)
		return fail(&m, -EINVAL, "no event list given");
	if (*inout_n > max)
		return fail(&m, -EINVAL, "%zu events already given, more than room for %zu",
			    *inout_n, max);

	for (p = list; is_blank(*p); p++)
		;
	if (*p == '\0')
		return fail(&m, -EINVAL, "empty event list");

	/* First pass: count and find empty elements, so that nothing is parsed in vain. */
	for (p = from = list;; p++) {
		if (*p == '/') {
			in_slash = !in_slash;
		} else if (*p == '\0' || (*p == ',' && !in_slash)) {
			const char *q = from;

			while (q < p && is_blank(*q))
				q++;
			if (q == p)
				return fail(&m, -EINVAL,
					    "empty event in the list '%s' (a stray comma?)",
					    util_escape(list, strlen(list), esc, sizeof(esc)));
			count++;
			from = p + 1;
		}
		if (*p == '\0')
			break;
	}
	if (*inout_n + count > limit)
		return fail(&m, -E2BIG, "too many events: %zu in all, at most %zu",
			    *inout_n + count, limit);
	tmp = calloc(count, sizeof(*tmp));
	if (!tmp)
		return fail(&m, -ENOMEM, "out of memory");

	in_slash = false;
	for (p = from = list;; p++) {
		if (*p == '/') {
			in_slash = !in_slash;
		} else if (*p == '\0' || (*p == ',' && !in_slash)) {
			size_t n = (size_t)(p - from);

			if (n >= sizeof(elem)) {
				r = fail(&m, -ENAMETOOLONG,
					 "event %zu of the list is longer than %d characters",
					 i + 1, COLL_EVENT_SPEC_MAX);
				goto out;
			}
			memcpy(elem, from, n);
			elem[n] = '\0';
			r = coll_event_parse(elem, sysfs_root, &tmp[i], err, errlen);
			if (r < 0)
				goto out;
			i++;
			from = p + 1;
		}
		if (*p == '\0')
			break;
	}
	memcpy(specs + *inout_n, tmp, count * sizeof(*tmp));
	*inout_n += count;
	r = (int)count;
out:
	free(tmp);
	return r;
}

const char *const *coll_event_generic_names(void)
{
	return ev_generic_names;
}

/* Fill pmu->formats from format/; unusable files are skipped.  0 or -ENOMEM. */
static int load_formats(int fd, struct coll_pmu *pmu)
{
	struct ev_names names = { NULL, 0 };
	char buf[EV_FILE_MAX + 1];
	char rel[EV_NAME_MAX + 16];
	char why[128];
	struct ev_field f;
	int r;

	r = list_names(fd, "format", EV_KIND_FILE, false, &names);
	if (r == -ENOMEM)
		return r;
	if (r < 0 || names.n == 0)
		return 0;
	pmu->formats = calloc(names.n, sizeof(*pmu->formats));
	if (!pmu->formats) {
		names_free(&names);
		return -ENOMEM;
	}
	for (size_t i = 0; i < names.n; i++) {
		struct coll_pmu_format *pf = &pmu->formats[pmu->nformats];

		snprintf(rel, sizeof(rel), "format/%s", names.v[i]);
		r = read_attr(fd, rel, buf);
		if (r < 0 || r >= (int)sizeof(pf->spec) ||
		    parse_format(buf, &f, why, sizeof(why))) {
			log_debug("pmu %s: format file '%s' is unusable, skipping", pmu->name, rel);
			continue;
		}
		snprintf(pf->name, sizeof(pf->name), "%s", names.v[i]);
		memcpy(pf->spec, buf, (size_t)r + 1);
		pmu->nformats++;
	}
	names_free(&names);
	return 0;
}

/* Fill pmu->aliases from events/; unusable files are skipped.  0 or -ENOMEM. */
static int load_aliases(int fd, struct coll_pmu *pmu)
{
	struct ev_names names = { NULL, 0 };
	char buf[EV_FILE_MAX + 1];
	char rel[EV_NAME_MAX + 16];
	int r;

	r = list_names(fd, "events", EV_KIND_FILE, true, &names);
	if (r == -ENOMEM)
		return r;
	if (r < 0 || names.n == 0)
		return 0;
	pmu->aliases = calloc(names.n, sizeof(*pmu->aliases));
	if (!pmu->aliases) {
		names_free(&names);
		return -ENOMEM;
	}
	for (size_t i = 0; i < names.n; i++) {
		struct coll_pmu_alias *pa = &pmu->aliases[pmu->naliases];

		snprintf(rel, sizeof(rel), "events/%s", names.v[i]);
		r = read_attr(fd, rel, buf);
		if (r <= 0 || r >= (int)sizeof(pa->terms)) {
			log_debug("pmu %s: alias file '%s' is unusable, skipping", pmu->name, rel);
			continue;
		}
		snprintf(pa->name, sizeof(pa->name), "%s", names.v[i]);
		memcpy(pa->terms, buf, (size_t)r + 1);
		pmu->naliases++;
	}
	names_free(&names);
	return 0;
}

/* Load the PMU @name into *pmu.  Returns 0, 1 if it is skipped, or -ENOMEM. */
static int load_pmu(int devfd, const char *name, struct coll_pmu *pmu)
{
	char buf[EV_FILE_MAX + 1];
	uint64_t type;
	int fd, r;

	fd = openat(devfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		log_debug("pmu %s: cannot open its directory, skipping", name);
		return 1;
	}
	r = read_attr(fd, "type", buf);
	if (r < 0 || util_parse_u64(buf, &type) < 0 || type > UINT32_MAX) {
		log_debug("pmu %s: no valid 'type' file, skipping", name);
		r = 1;
		goto out;
	}
	snprintf(pmu->name, sizeof(pmu->name), "%s", name);
	pmu->type = (uint32_t)type;
	r = load_formats(fd, pmu);
	if (r < 0)
		goto out;
	r = load_aliases(fd, pmu);
out:
	close(fd);
	return r;
}

int coll_pmu_list(const char *sysfs_root, struct coll_pmu **ret_pmus, size_t *ret_n)
{
	struct ev_names names = { NULL, 0 };
	struct coll_pmu *pmus = NULL;
	size_t n = 0;
	int devfd = -1, r;

	r = open_devices(sysfs_root ? sysfs_root : EV_SYSFS_DEFAULT, &devfd);
	if (r < 0)
		return r;
	r = list_names(devfd, ".", EV_KIND_DIR, false, &names);
	if (r < 0)
		goto out;
	if (names.n) {
		pmus = calloc(names.n, sizeof(*pmus));
		if (!pmus) {
			r = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < names.n; i++) {
		r = load_pmu(devfd, names.v[i], &pmus[n]);
		if (r < 0) {
			/* pmus[n] may be half-built; the rest is zero from calloc. */
			coll_pmu_list_free(pmus, n + 1);
			pmus = NULL;
			goto out;
		}
		if (r == 0)
			n++;
	}
	if (n == 0) {
		free(pmus);
		pmus = NULL;
	}
	*ret_pmus = pmus;
	*ret_n = n;
	r = 0;
out:
	names_free(&names);
	close(devfd);
	return r;
}

void coll_pmu_list_free(struct coll_pmu *pmus, size_t n)
{
	if (!pmus)
		return;
	for (size_t i = 0; i < n; i++) {
		free(pmus[i].formats);
		free(pmus[i].aliases);
	}
	free(pmus);
}

bool coll_event_is_clock(const struct coll_event_spec *e)
{
	return e->type == PERF_TYPE_SOFTWARE && (e->config == PERF_COUNT_SW_CPU_CLOCK ||
						 e->config == PERF_COUNT_SW_TASK_CLOCK);
}

bool coll_event_own_tasks_only(const struct coll_event_spec *e, const char *sysfs_root)
{
	static const char *const core[] = { "cpu", "cpu_core", "cpu_atom" };
	char path[512], buf[32];
	uint64_t t;

	if (e->type == PERF_TYPE_SOFTWARE || e->type == PERF_TYPE_HARDWARE ||
	    e->type == PERF_TYPE_HW_CACHE || e->type == PERF_TYPE_RAW)
		return true;
	if (e->type < PERF_TYPE_MAX)
		return false;
	for (size_t i = 0; i < sizeof(core) / sizeof(core[0]); i++) {
		char *nl;

		snprintf(path, sizeof(path), "%s/" EV_DEVICES "/%s/type",
			 sysfs_root && *sysfs_root ? sysfs_root : "/sys", core[i]);
		if (util_read_small(path, buf, sizeof(buf)) < 0)
			continue;
		if ((nl = strchr(buf, '\n')))
			*nl = '\0';
		if (util_parse_u64(buf, &t) == 0 && t == e->type)
			return true;
	}
	return false;
}
