/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-profile.c: always-on profiles: their drop-in files, their start
 * arguments, and the files they rotate and retain.
 *
 * PUBLIC INTERFACES (daemon-internal, daemon-ctl.h)
 *   daemon_profile_name_ok(), daemon_profile_defaults(), daemon_profile_parse(),
 *   daemon_profile_args(), daemon_profile_load_dir(), daemon_profile_same(),
 *   daemon_profile_open_file(), daemon_profile_retain(), daemon_parse_size(),
 *   daemon_parse_duration(), daemon_budget_next(), daemon_budget_spread()
 *
 * IMPLEMENTATION NOTES
 *   A profile is one file /etc/hwpmcd/profiles.d/NAME.conf of `key = value`
 *   lines (daemon_kv_parse(), as hwpmcd.conf).  What a profile asks the
 *   collector for is checked by the very code that checks a client's `start`
 *   (daemon_start_parse(), as root): its keys are turned into start arguments
 *   one group at a time (events; then the rate; then the call graph; then the
 *   scope), so that a problem is reported at the line of the key that caused
 *   it.  Every problem names "NAME.conf:LINE"; a file with any problem is
 *   refused as a whole and the other profiles go on.
 *
 *   Files: a profile writes under STATE_DIR/profiles/NAME/ files named
 *   NAME-YYYYmmddTHHMMSSZ.pmclog after the UTC time of their first record
 *   (NAME-...Z-N.pmclog when a second file starts within the same second),
 *   each with its side files FILE.kallsyms and FILE.vdso, and the directory
 *   FILE.jit/ of JIT maps (perf-PID.map) if any was saved.  Retention orders
 *   them by that time (and N), never by mtime, and counts a file's bytes with
 *   its side files'; it deletes only regular files of that name pattern and
 *   never the file being written.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon-ctl.h"
#include "hwpmcd/common.h"
#include "hwpmcd/files.h"

#define PROFILE_FILE_MAX (64u << 10)

static const char *const key_names[PK_MAX] = {
	[PK_EVENTS] = "events",
	[PK_FREQ] = "freq",
	[PK_PERIOD] = "period",
	[PK_CALLGRAPH] = "callgraph",
	[PK_SCOPE] = "scope",
	[PK_ROTATE_SECONDS] = "rotate_seconds",
	[PK_ROTATE_BYTES] = "rotate_bytes",
	[PK_RETAIN_SECONDS] = "retain_seconds",
	[PK_RETAIN_BYTES] = "retain_bytes",
	[PK_CPU_BUDGET] = "cpu_budget_percent",
	[PK_ENABLED] = "enabled",
	[PK_KALLSYMS] = "kallsyms",
	[PK_RING_PAGES] = "ring_pages",
	[PK_DEPTH] = "depth",
	[PK_UNWIND_CACHE] = "unwind_cache_mb",
	[PK_PUSH_URL] = "push_url",
	[PK_PUSH_LABELS] = "push_labels",
	[PK_PUSH_NAME] = "push_name",
	[PK_PUSH_FORMAT] = "push_format",
	[PK_JIT_MAPS] = "jit_maps",
};

bool daemon_profile_name_ok(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && n < DAEMON_PROFILE_NAME_MAX && name[0] != '.' && name[0] != '-' &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

void daemon_profile_defaults(struct daemon_profile *pf, const char *name)
{
	memset(pf, 0, sizeof(*pf));
	snprintf(pf->name, sizeof(pf->name), "%s", name);
	snprintf(pf->events, sizeof(pf->events), "cpu-clock");
	pf->freq = DAEMON_PROFILE_FREQ_DEFAULT;
	snprintf(pf->callgraph, sizeof(pf->callgraph), "dwarf");
	snprintf(pf->scope, sizeof(pf->scope), "all");
	pf->rotate_seconds = 600;
	pf->rotate_bytes = 64ull << 20;
	pf->retain_seconds = 86400;
	pf->retain_bytes = 1ull << 30;
	pf->enabled = true;
	pf->kallsyms = true;
	pf->jit_maps = true;
	pf->unwind_cache_mb = DAEMON_PROFILE_UNWIND_CACHE_MB;
}

/* "123", "64K", "64KiB", "1.5G"... (binary units).  0 or -EINVAL/-ERANGE. */
int daemon_parse_size(const char *s, uint64_t *ret)
{
	static const char units[] = "KMGT";
	char *end;
	double v;
	int shift = 0;
	const char *u;

	if (!*s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return -EINVAL;
	if (*end) {
		u = strchr(units, *end >= 'a' ? *end - 32 : *end);
		if (!u || !*u)
			return -EINVAL;
		shift = 10 * (int)(u - units + 1);
		end++;
		if (strcmp(end, "") && strcmp(end, "B") && strcmp(end, "iB"))
			return -EINVAL;
	} else if (strchr(s, '.')) {
		return -EINVAL; /* a fraction of a byte */
	}
	v *= (double)(1ull << shift);
	if (v >= 18446744073709551615.0)
		return -ERANGE;
	*ret = (uint64_t)v;
	return 0;
}

/* "90", "90s", "15min", "15m", "2h", "7d".  Seconds: 0 or -EINVAL/-ERANGE. */
int daemon_parse_duration(const char *s, uint64_t *ret)
{
	static const struct {
		const char *sfx;
		uint64_t mul;
	} units[] = { { "", 1 },     { "s", 1 },     { "sec", 1 },     { "m", 60 },
		      { "min", 60 }, { "h", 3600 },  { "hour", 3600 }, { "d", 86400 },
		      { "day", 86400 } };
	char *end;
	unsigned long long v;

	if (!*s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(end, units[i].sfx) == 0) {
			if (v > UINT64_MAX / units[i].mul)
				return -ERANGE;
			*ret = v * units[i].mul;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_bool(const char *v, bool *ret)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "on"))
		*ret = true;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "off"))
		*ret = false;
	else
		return -EINVAL;
	return 0;
}

/* push_url: http:// or https://, a host, printable ASCII with no space; the rest is libcurl's. */
static bool push_url_ok(const char *v)
{
	const char *host = !strncmp(v, "http://", 7) ? v + 7 : !strncmp(v, "https://", 8) ? v + 8
											  : NULL;

	if (!host || !*host || *host == '/' || *host == ':')
		return false;
	for (const char *c = v; *c; c++)
		if (*c <= ' ' || *c >= 0x7f)
			return false;
	return true;
}

/* A name or label part: [A-Za-z_][A-Za-z0-9_.-]* (label values may start with any of those). */
static bool push_word_ok(const char *b, const char *e, bool first_alpha)
{
	if (b == e)
		return false;
	if (first_alpha && !(*b == '_' || (*b >= 'a' && *b <= 'z') || (*b >= 'A' && *b <= 'Z')))
		return false;
	for (; b < e; b++)
		if (!(*b == '_' || *b == '.' || *b == '-' || (*b >= 'a' && *b <= 'z') ||
		      (*b >= 'A' && *b <= 'Z') || (*b >= '0' && *b <= '9')))
			return false;
	return true;
}

/* push_labels: "k=v[,k=v]...", at most 16, no key twice. */
static bool push_labels_ok(const char *v)
{
	const char *keys[16];
	size_t klen[16], n = 0;

	for (const char *p = v; *p;) {
		const char *comma = strchr(p, ','), *end = comma ? comma : p + strlen(p);
		const char *eq = memchr(p, '=', (size_t)(end - p));

		if (!eq || n == ARRAY_SIZE(keys) || !push_word_ok(p, eq, true) ||
		    !push_word_ok(eq + 1, end, false))
			return false;
		for (size_t i = 0; i < n; i++)
			if (klen[i] == (size_t)(eq - p) && !memcmp(keys[i], p, klen[i]))
				return false;
		keys[n] = p;
		klen[n++] = (size_t)(eq - p);
		if (!comma)
			break;
		p = comma + 1;
		if (!*p)
			return false;
	}
	return true;
}

struct profile_ctx {
	struct daemon_profile *pf;
	const char *fname;
};

static void profile_kv(void *ctx, const char *k, const char *v, int line, struct daemon_diag *d)
{
	struct profile_ctx *c = ctx;
	struct daemon_profile *pf = c->pf;
	char shown[96];
	uint64_t x;
	int key = -1;

	for (int i = 0; i < PK_MAX; i++)
		if (strcmp(key_names[i], k) == 0)
			key = i;
	if (key < 0) {
		struct util_suggest sg = { NULL, 0 };

		for (int i = 0; i < PK_MAX; i++)
			util_suggest_consider(&sg, k, key_names[i]);
		daemon_printable(shown, sizeof(shown), k);
		daemon_diag_add(d, c->fname, line,
				"unknown key '%s'%s%s%s (see hwpmcd.conf(5), PROFILES)", shown,
				sg.best ? "; did you mean '" : "", sg.best ? sg.best : "",
				sg.best ? "'?" : "");
		return;
	}
	daemon_printable(shown, sizeof(shown), v);
	if (pf->line[key]) {
		daemon_diag_add(d, c->fname, line, "%s is set again (first at line %d)", k,
				pf->line[key]);
		return;
	}
	pf->line[key] = line;
	switch (key) {
	case PK_EVENTS:
	case PK_CALLGRAPH:
	case PK_SCOPE: {
		char *dst = key == PK_EVENTS ? pf->events : key == PK_CALLGRAPH ? pf->callgraph
										  : pf->scope;
		size_t size = key == PK_EVENTS ? sizeof(pf->events)
				 : key == PK_CALLGRAPH ? sizeof(pf->callgraph) : sizeof(pf->scope);

		if (!*v || strlen(v) >= size) {
			daemon_diag_add(d, c->fname, line, "%s = '%s' must be 1..%zu bytes", k, shown,
					size - 1);
			return;
		}
		snprintf(dst, size, "%s", v);
		return;
	}
	case PK_FREQ:
	case PK_PERIOD:
	case PK_RING_PAGES:
	case PK_DEPTH:
	case PK_CPU_BUDGET:
	case PK_UNWIND_CACHE: {
		uint32_t lo = key == PK_UNWIND_CACHE ? 16 : 1;
		uint32_t hi = key == PK_CPU_BUDGET ? 100 : key == PK_UNWIND_CACHE ? 65536 : UINT32_MAX;

		if (util_parse_u64(v, &x) < 0 || x < lo || x > hi) {
			daemon_diag_add(d, c->fname, line, "%s = '%s' is not a number in %u..%u", k,
					shown, lo, hi);
			return;
		}
		if (key == PK_UNWIND_CACHE) {
			pf->unwind_cache_mb = (uint32_t)x;
			return;
		}
	}
		if (key == PK_FREQ)
			pf->freq = (uint32_t)x;
		else if (key == PK_PERIOD)
			pf->period = (uint32_t)x;
		else if (key == PK_RING_PAGES)
			pf->ring_pages = (uint32_t)x;
		else if (key == PK_DEPTH)
			pf->depth = (uint32_t)x;
		else
			pf->cpu_budget_percent = (uint32_t)x;
		return;
	case PK_ROTATE_SECONDS:
	case PK_RETAIN_SECONDS:
		if (daemon_parse_duration(v, &x) < 0 || x > 10ull * 365 * 86400) {
			daemon_diag_add(d, c->fname, line, "%s = '%s' is not a duration (seconds, or "
					"a number with s, min, h or d; at most 10 years)", k, shown);
			return;
		}
		*(key == PK_ROTATE_SECONDS ? &pf->rotate_seconds : &pf->retain_seconds) = x;
		return;
	case PK_ROTATE_BYTES:
	case PK_RETAIN_BYTES:
		if (daemon_parse_size(v, &x) < 0) {
			daemon_diag_add(d, c->fname, line, "%s = '%s' is not a size (bytes, or a "
					"number with K, M, G or T)", k, shown);
			return;
		}
		*(key == PK_ROTATE_BYTES ? &pf->rotate_bytes : &pf->retain_bytes) = x;
		return;
	case PK_PUSH_URL:
		if (strlen(v) >= sizeof(pf->push_url) || !push_url_ok(v)) {
			daemon_diag_add(d, c->fname, line, "push_url = '%s' is not an http:// or "
					"https:// URL of at most %zu bytes (a Pyroscope server, "
					"e.g. http://pyroscope:4040)", shown, sizeof(pf->push_url) - 1);
			return;
		}
		snprintf(pf->push_url, sizeof(pf->push_url), "%s", v);
		return;
	case PK_PUSH_LABELS:
		if (strlen(v) >= sizeof(pf->push_labels) || !push_labels_ok(v)) {
			daemon_diag_add(d, c->fname, line, "push_labels = '%s' is not KEY=VALUE[,...] "
					"(at most 16; keys [A-Za-z_][A-Za-z0-9_.-]*, values "
					"[A-Za-z0-9_.-]+, each key once; at most %zu bytes)", shown,
					sizeof(pf->push_labels) - 1);
			return;
		}
		snprintf(pf->push_labels, sizeof(pf->push_labels), "%s", v);
		return;
	case PK_PUSH_NAME:
		if (strlen(v) >= sizeof(pf->push_name) || !push_word_ok(v, v + strlen(v), true)) {
			daemon_diag_add(d, c->fname, line, "push_name = '%s' is not a name "
					"[A-Za-z_][A-Za-z0-9_.-]* of at most %zu bytes", shown,
					sizeof(pf->push_name) - 1);
			return;
		}
		snprintf(pf->push_name, sizeof(pf->push_name), "%s", v);
		return;
	case PK_PUSH_FORMAT:
		if (strcmp(v, "pprof") != 0 && strcmp(v, "folded") != 0) {
			daemon_diag_add(d, c->fname, line, "push_format = '%s' is not pprof or folded",
					shown);
			return;
		}
		pf->push_folded = !strcmp(v, "folded");
		return;
	case PK_ENABLED:
	case PK_KALLSYMS:
	case PK_JIT_MAPS:
		if (parse_bool(v, key == PK_ENABLED ? &pf->enabled : key == PK_KALLSYMS ? &pf->kallsyms
								 : &pf->jit_maps) < 0)
			daemon_diag_add(d, c->fname, line, "%s = '%s' is not yes or no", k, shown);
		return;
	}
}

/*
 * A dwarf profile's ring per CPU when none is given: half a second of snapshots
 * at the configured rate (64 KiB stacks and the rest of a sample), a power of
 * two from 64 to 2048 pages.  A recording session's dwarf default is 2048 pages
 * (8 MiB) for 4 kHz; a profile at 49 Hz needs 512.
 */
static uint32_t dwarf_ring_pages(uint32_t freq)
{
	uint64_t want = (uint64_t)freq * (65536 + 2048) / 2 / 4096;
	uint32_t pages = 64;

	while (pages < want && pages < 2048)
		pages *= 2;
	return pages;
}

/*
 * The uid of scope = uid:USER: a number, or a name of /etc/passwd (read as a file:
 * a directory service's lookup could block the daemon's main loop).  -1: none.
 */
static int64_t scope_user(const char *user)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	uint64_t n;
	int64_t uid = -1;
	FILE *fp;

	if (util_parse_u64(user, &n) == 0)
		return n < UINT32_MAX ? (int64_t)n : -1;
	fp = fopen("/etc/passwd", "re");
	if (!fp)
		return -1;
	while (fgetpwent_r(fp, &pw, buf, sizeof(buf), &res) == 0 && res)
		if (strcmp(pw.pw_name, user) == 0) {
			uid = pw.pw_uid;
			break;
		}
	fclose(fp);
	return uid;
}

/* Is @scope kept by the in-kernel sample filter (a unit, a cgroup, a user)? */
static bool scope_is_filter(const char *scope)
{
	return !strncmp(scope, "unit:", 5) || !strncmp(scope, "cgroup:", 7) ||
	       !strncmp(scope, "uid:", 4);
}

/*
 * The start's "filter" of a unit, cgroup or user scope.  A name that is not UTF-8
 * (or no such user) becomes "", which the start's parser refuses: such a scope
 * never falls back to every process.  NULL: out of memory.
 */
static json_t *scope_filter(const struct daemon_profile *pf)
{
	const char *key = "uid";
	json_t *v;

	if (!strncmp(pf->scope, "unit:", 5)) {
		key = "unit";
		v = json_string(pf->scope + 5);
	} else if (!strncmp(pf->scope, "cgroup:", 7)) {
		key = "cgroup";
		v = json_string(pf->scope + 7);
	} else {
		v = pf->scope_uid >= 0 ? json_integer((json_int_t)pf->scope_uid) : NULL;
	}
	return json_pack("{s:[o]}", key, v ? v : json_string(""));
}

/* @pf's start arguments, the groups up to @upto (PK_EVENTS..PK_SCOPE). */
static json_t *args_upto(const struct daemon_profile *pf, int upto)
{
	json_t *a = json_pack("{s:s,s:[s]}", "output", "state", "events", pf->events);

	if (!a)
		return NULL;
	if (upto >= PK_FREQ) {
		if (pf->period)
			json_object_set_new(a, "period", json_integer(pf->period));
		else
			json_object_set_new(a, "freq", json_integer(pf->freq));
	}
	if (upto >= PK_CALLGRAPH) {
		const char *comma = strchr(pf->callgraph, ',');
		char mode[32];

		snprintf(mode, sizeof(mode), "%.*s",
			 (int)(comma ? (size_t)(comma - pf->callgraph) : strlen(pf->callgraph)),
			 pf->callgraph);
		json_object_set_new(a, "callgraph", json_string(mode));
		if (comma) {
			uint64_t b;

			/* Not a number: the start's parser says so, at this line. */
			json_object_set_new(a, "stack_bytes", util_parse_u64(comma + 1, &b) == 0
								     ? json_integer((json_int_t)b)
								     : json_string(comma + 1));
		}
		if (pf->depth)
			json_object_set_new(a, "depth", json_integer(pf->depth));
		if (pf->ring_pages)
			json_object_set_new(a, "ring_pages", json_integer(pf->ring_pages));
		else if (!strcmp(mode, "dwarf") && !pf->period)
			json_object_set_new(a, "ring_pages", json_integer(dwarf_ring_pages(pf->freq)));
	}
	if (upto >= PK_SCOPE && strncmp(pf->scope, "cpus:", 5) == 0) {
		json_t *cpus = json_array();
		const char *p = pf->scope + 5;

		/* "0-3,5": the start takes a list of numbers. */
		while (*p) {
			char *end;
			unsigned long lo = strtoul(p, &end, 10), hi = lo;
			/* Digits only (strtoul takes signs and spaces), and never past the CPUs. */
			bool bad = end == p || *p < '0' || *p > '9';

			if (!bad && *end == '-') {
				const char *q = end + 1;

				hi = strtoul(q, &end, 10);
				bad = end == q || *q < '0' || *q > '9';
			}
			if (bad || (*end && *end != ',') || hi < lo || hi >= DAEMON_MAX_CPUS) {
				json_array_append_new(cpus, json_string(p));
				break;
			}
			for (unsigned long c = lo; c <= hi; c++)
				json_array_append_new(cpus, json_integer((json_int_t)c));
			p = *end ? end + 1 : end;
		}
		json_object_set_new(a, "cpus", cpus);
	}
	if (upto >= PK_SCOPE && scope_is_filter(pf->scope)) {
		json_t *fo = scope_filter(pf);

		if (!fo) {
			json_decref(a);
			return NULL;
		}
		json_object_set_new(a, "filter", fo);
	}
	if (upto >= PK_SCOPE && !pf->kallsyms)
		json_object_set_new(a, "kallsyms", json_string("none"));
	return a;
}

json_t *daemon_profile_args(const struct daemon_profile *pf)
{
	return args_upto(pf, PK_SCOPE);
}

int daemon_profile_parse(struct daemon_profile *pf, const char *text, size_t len,
			 const char *fname, const struct daemon_config *cfg, uint64_t maxrate,
			 uint32_t maxstack, char *err, size_t errlen)
{
	static const int groups[] = { PK_EVENTS, PK_FREQ, PK_CALLGRAPH, PK_SCOPE };
	struct daemon_diag d = { .buf = err, .size = errlen };
	struct profile_ctx c = { pf, fname };
	const struct daemon_who root = { .uid = 0, .gid = 0, .pid = 0, .admin = true };
	char shown[96];

	if (err && errlen)
		err[0] = '\0';
	(void)daemon_kv_parse(text, len, fname, profile_kv, &c, &d);
	if (pf->line[PK_FREQ] && pf->line[PK_PERIOD])
		daemon_diag_add(&d, fname, pf->line[PK_PERIOD], "freq (line %d) and period are "
				"both set; a profile samples by one of them", pf->line[PK_FREQ]);
	daemon_printable(shown, sizeof(shown), pf->scope);
	pf->scope_uid = -1;
	if (!strncmp(pf->scope, "uid:", 4)) {
		pf->scope_uid = scope_user(pf->scope + 4);
		if (pf->scope_uid < 0)
			daemon_diag_add(&d, fname, pf->line[PK_SCOPE], "scope = '%s': no user of that "
					"name in /etc/passwd (a user of a directory service is "
					"given by number: uid:1234)", shown);
	} else if (strcmp(pf->scope, "all") != 0 && strncmp(pf->scope, "cpus:", 5) != 0 &&
		   !scope_is_filter(pf->scope)) {
		daemon_diag_add(&d, fname, pf->line[PK_SCOPE], "scope = '%s' is not 'all', "
				"'cpus:LIST' (e.g. cpus:0-3,6), 'unit:NAME' (a systemd unit), "
				"'cgroup:PATH' or 'uid:USER'", shown);
	}
	if (pf->cpu_budget_percent && pf->period)
		daemon_diag_add(&d, fname, pf->line[PK_CPU_BUDGET], "cpu_budget_percent adapts "
				"the rate of a profile that samples by freq, not by period (line %d)",
				pf->line[PK_PERIOD]);
	if (!pf->rotate_seconds && !pf->rotate_bytes)
		daemon_diag_add(&d, fname, pf->line[PK_ROTATE_SECONDS] ? pf->line[PK_ROTATE_SECONDS]
				: pf->line[PK_ROTATE_BYTES], "rotate_seconds and rotate_bytes "
				"are both 0: a file would grow without end");
	if (pf->rotate_bytes && pf->rotate_bytes < DAEMON_PROFILE_ROTATE_BYTES_MIN)
		daemon_diag_add(&d, fname, pf->line[PK_ROTATE_BYTES], "rotate_bytes = %" PRIu64
				" is below %u (a file's head alone may take that)", pf->rotate_bytes,
				DAEMON_PROFILE_ROTATE_BYTES_MIN);
	if (!pf->retain_seconds && !pf->retain_bytes)
		daemon_diag_add(&d, fname, pf->line[PK_RETAIN_BYTES] ? pf->line[PK_RETAIN_BYTES]
				: pf->line[PK_RETAIN_SECONDS], "retain_seconds and retain_bytes "
				"are both 0: the profile would fill the disk");
	if (pf->retain_bytes && pf->rotate_bytes && pf->retain_bytes < pf->rotate_bytes)
		daemon_diag_add(&d, fname, pf->line[PK_RETAIN_BYTES], "retain_bytes (%" PRIu64
				") is below rotate_bytes (%" PRIu64 "%s): not even one whole file "
				"would be kept", pf->retain_bytes, pf->rotate_bytes,
				pf->line[PK_ROTATE_BYTES] ? "" : ", its default");
	if (!pf->push_url[0]) {
		static const int push_keys[] = { PK_PUSH_LABELS, PK_PUSH_NAME, PK_PUSH_FORMAT };

		for (size_t i = 0; i < ARRAY_SIZE(push_keys); i++)
			if (pf->line[push_keys[i]])
				daemon_diag_add(&d, fname, pf->line[push_keys[i]], "%s is set, but "
						"push_url is not: nothing would be pushed",
						key_names[push_keys[i]]);
	}
	/* What the collector is asked for: the start's own checks, key group by key group. */
	for (size_t i = 0; i < ARRAY_SIZE(groups); i++) {
		json_t *a;
		struct session_params *p;
		struct daemon_start st;
		char msg[512];
		int line = pf->line[groups[i]], r;

		if (groups[i] == PK_SCOPE && !strncmp(pf->scope, "uid:", 4) && pf->scope_uid < 0)
			break; /* said above: no such user */
		a = args_upto(pf, groups[i]);
		p = calloc(1, sizeof(*p));
		if (groups[i] == PK_FREQ && pf->period)
			line = pf->line[PK_PERIOD];
		if (groups[i] == PK_CALLGRAPH && !line)
			line = pf->line[PK_DEPTH] ? pf->line[PK_DEPTH] : pf->line[PK_RING_PAGES];
		if (!a || !p) {
			json_decref(a);
			free(p);
			daemon_diag_add(&d, fname, 0, "out of memory");
			break;
		}
		r = daemon_start_parse(a, cfg, &root, maxrate, maxstack, p, &st, msg, sizeof(msg));
		json_decref(a);
		free(p);
		if (r < 0) {
			daemon_diag_add(&d, fname, line, "%s: %s", key_names[groups[i]], msg);
			break;
		}
	}
	return d.count;
}

bool daemon_profile_same(const struct daemon_profile *a, const struct daemon_profile *b)
{
	struct daemon_profile x = *a, y = *b;

	/* Where a key stands in its file does not change the profile. */
	memset(x.line, 0, sizeof(x.line));
	memset(y.line, 0, sizeof(y.line));
	return memcmp(&x, &y, sizeof(x)) == 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int daemon_profile_load_dir(const char *dir, const struct daemon_config *cfg, uint64_t maxrate,
			    uint32_t maxstack, struct daemon_profile *defs, size_t max,
			    size_t *ret_n, char *err, size_t errlen)
{
	struct daemon_diag d = { .buf = err, .size = errlen };
	char **names = NULL;
	size_t n = 0, cap = 0, ndefs = 0;
	DIR *dp;
	struct dirent *de;

	if (err && errlen)
		err[0] = '\0';
	*ret_n = 0;
	dp = opendir(dir);
	if (!dp) {
		int r = -errno;

		if (r == -ENOENT)
			return 0; /* no profiles */
		daemon_diag_add(&d, dir, 0, "cannot read the profiles directory: %s", strerror(-r));
		return d.count;
	}
	while ((de = readdir(dp))) {
		size_t len = strlen(de->d_name);
		char **nn;

		/* NAME.conf only: editors' backups and packaging leftovers are not profiles. */
		if (len <= 5 || strcmp(de->d_name + len - 5, ".conf") != 0 || de->d_name[0] == '.')
			continue;
		if (n == cap) {
			nn = realloc(names, (cap ? 2 * cap : 16) * sizeof(*names));
			if (!nn)
				break;
			names = nn;
			cap = cap ? 2 * cap : 16;
		}
		names[n] = strdup(de->d_name);
		if (names[n])
			n++;
	}
	closedir(dp);
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		char name[DAEMON_PROFILE_NAME_MAX + 8], path[1024], msg[2048];
		size_t len = strlen(names[i]) - 5;
		char *buf = NULL;
		size_t blen = 0;
		int r;

		snprintf(name, sizeof(name), "%.*s", (int)(len < sizeof(name) ? len : sizeof(name) - 1),
			 names[i]);
		if (len >= DAEMON_PROFILE_NAME_MAX || !daemon_profile_name_ok(name)) {
			daemon_printable(msg, 96, names[i]);
			daemon_diag_add(&d, msg, 0, "not a profile name (letters, digits, '_', '.', "
					"'-'; under %d bytes, not starting with '.' or '-'); refused",
					DAEMON_PROFILE_NAME_MAX);
			continue;
		}
		if (ndefs == max) {
			daemon_diag_add(&d, names[i], 0, "more than %zu profiles; refused", max);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		r = daemon_read_file(path, PROFILE_FILE_MAX, &buf, &blen);
		if (r < 0) {
			daemon_diag_add(&d, names[i], 0, "%s; refused", r == -EFBIG ? "larger than 64 KiB"
					: r == -EINVAL ? "not a regular file" : strerror(-r));
			continue;
		}
		daemon_profile_defaults(&defs[ndefs], name);
		r = daemon_profile_parse(&defs[ndefs], buf, blen, names[i], cfg, maxrate, maxstack,
					 msg, sizeof(msg));
		free(buf);
		if (r > 0) {
			/* Its own lines, each "NAME.conf:LINE: ...", then one verdict. */
			daemon_diag_add(&d, names[i], 0, "refused (%d problem%s):\n%s", r,
					r == 1 ? "" : "s", msg);
			continue;
		}
		ndefs++;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	*ret_n = ndefs;
	return d.count;
}

int daemon_profile_open_file(const char *dir, const char *name, time_t when, char *ret_path,
			     size_t pathlen)
{
	struct tm tm;
	char err[512];
	int fd = -1;

	gmtime_r(&when, &tm);
	for (int k = 0; k < 100; k++) {
		char sfx[8] = "";
		int n;

		if (k)
			snprintf(sfx, sizeof(sfx), "-%d", k);
		n = snprintf(ret_path, pathlen, "%s/%s-%04d%02d%02dT%02d%02d%02dZ%s.pmclog", dir, name,
			     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			     tm.tm_sec, sfx);
		if (n < 0 || (size_t)n >= pathlen)
			return -ENAMETOOLONG;
		fd = util_file_new(ret_path, 0, err, sizeof(err));
		if (fd != -EEXIST)
			break;
	}
	return fd;
}

/* One file of a profile's directory. */
struct retained {
	char name[DAEMON_PROFILE_NAME_MAX + 40];
	uint64_t stamp; /* YYYYmmddHHMMSS as a number, then N: orders files by start */
	uint64_t bytes; /* the file and its side files, FILE.jit/ included */
	uint64_t jit;	/* ... of which FILE.jit/ */
	time_t mtime;
};

/* @fname is NAME-YYYYmmddTHHMMSSZ[-N].pmclog: its order key, or 0 if it is not. */
static uint64_t stamp_of(const char *fname, const char *name)
{
	size_t nl = strlen(name);
	const char *p = fname + nl + 1, *end;
	uint64_t v = 0, k = 0;

	if (strncmp(fname, name, nl) != 0 || fname[nl] != '-')
		return 0;
	for (int i = 0; i < 15; i++) {
		if (i == 8) {
			if (p[i] != 'T')
				return 0;
			continue;
		}
		if (p[i] < '0' || p[i] > '9')
			return 0;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	if (p[15] != 'Z')
		return 0;
	end = p + 16;
	if (*end == '-') {
		end++;
		if (*end < '1' || *end > '9')
			return 0;
		while (*end >= '0' && *end <= '9' && k < 100)
			k = k * 10 + (uint64_t)(*end++ - '0');
	}
	if (strcmp(end, ".pmclog") != 0)
		return 0;
	return v * 1000 + k;
}

static int retained_cmp(const void *a, const void *b)
{
	const struct retained *x = a, *y = b;

	return x->stamp < y->stamp ? -1 : x->stamp > y->stamp;
}

/* The regular file @name in @dfd: its size, 0 if there is none. */
static uint64_t size_at(int dfd, const char *name, time_t *ret_mtime)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return 0;
	if (ret_mtime)
		*ret_mtime = st.st_mtime;
	return (uint64_t)st.st_size;
}

/*
 * FILE.jit/ in @dfd (a profile's JIT maps, daemon-jit.c): the bytes of its
 * perf-PID.map files; with @remove, they and the directory are deleted.
 */
static uint64_t jit_dir(int dfd, const char *file, bool remove)
{
	char name[320];
	uint64_t bytes = 0;
	DIR *dp;
	struct dirent *de;
	int fd;

	if ((size_t)snprintf(name, sizeof(name), "%s.jit", file) >= sizeof(name))
		return 0;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		return 0;
	}
	while ((de = readdir(dp))) {
		if (strncmp(de->d_name, "perf-", 5) != 0)
			continue;
		bytes += size_at(fd, de->d_name, NULL);
		if (remove)
			(void)unlinkat(fd, de->d_name, 0);
	}
	closedir(dp);
	if (remove)
		(void)unlinkat(dfd, name, AT_REMOVEDIR);
	return bytes;
}

int daemon_profile_retain(const char *dir, const char *name, const char *current,
			  uint64_t retain_bytes, uint64_t retain_seconds, time_t now,
			  struct daemon_retain *ret)
{
	struct retained *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	const char *cur = current ? strrchr(current, '/') : NULL;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW), r = 0;
	DIR *dp;
	struct dirent *de;

	memset(ret, 0, sizeof(*ret));
	cur = cur ? cur + 1 : current;
	if (dfd < 0)
		return -errno;
	dp = fdopendir(dfd);
	if (!dp) {
		r = -errno;
		close(dfd);
		return r;
	}
	while ((de = readdir(dp))) {
		uint64_t stamp = stamp_of(de->d_name, name);
		char side[sizeof(v->name) + 16];
		struct retained *x;

		if (!stamp || strlen(de->d_name) >= sizeof(v->name))
			continue;
		if (n == cap) {
			struct retained *nv = realloc(v, (cap ? 2 * cap : 32) * sizeof(*v));

			if (!nv) {
				r = -ENOMEM;
				break;
			}
			v = nv;
			cap = cap ? 2 * cap : 32;
		}
		x = &v[n];
		snprintf(x->name, sizeof(x->name), "%s", de->d_name);
		x->stamp = stamp;
		x->mtime = now;
		x->bytes = size_at(dfd, x->name, &x->mtime);
		snprintf(side, sizeof(side), "%s.kallsyms", x->name);
		x->bytes += size_at(dfd, side, NULL);
		snprintf(side, sizeof(side), "%s.vdso", x->name);
		x->bytes += size_at(dfd, side, NULL);
		x->jit = jit_dir(dfd, x->name, false);
		x->bytes += x->jit;
		total += x->bytes;
		n++;
	}
	if (n)
		qsort(v, n, sizeof(*v), retained_cmp);
	/*
	 * Over the budget, the JIT maps go first, oldest first: their bytes are what
	 * users' processes wrote (daemon-jit.c), and must never cost the profile its
	 * history of samples; a log goes only when the logs alone are over it.
	 */
	for (size_t i = 0; retain_bytes && total > retain_bytes && i < n; i++) {
		if (!v[i].jit || (cur && strcmp(v[i].name, cur) == 0))
			continue;
		(void)jit_dir(dfd, v[i].name, true);
		total -= v[i].jit;
		v[i].bytes -= v[i].jit;
		ret->deleted_jit_bytes += v[i].jit;
		v[i].jit = 0;
	}
	/* Oldest first, while over the budget; never the file being written. */
	for (size_t i = 0; r == 0 && i < n; i++) {
		bool old = retain_seconds && v[i].mtime + (time_t)retain_seconds < now;
		bool big = retain_bytes && total > retain_bytes;
		char side[sizeof(v->name) + 16];

		if (cur && strcmp(v[i].name, cur) == 0)
			continue;
		if (!old && !big)
			continue;
		if (unlinkat(dfd, v[i].name, 0) < 0 && errno != ENOENT) {
			r = -errno;
			break;
		}
		snprintf(side, sizeof(side), "%s.kallsyms", v[i].name);
		(void)unlinkat(dfd, side, 0);
		snprintf(side, sizeof(side), "%s.vdso", v[i].name);
		(void)unlinkat(dfd, side, 0);
		(void)jit_dir(dfd, v[i].name, true);
		total -= v[i].bytes;
		ret->deleted_files++;
		ret->deleted_bytes += v[i].bytes;
		v[i].stamp = 0;
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].stamp)
			ret->files++;
	ret->bytes = total;
	free(v);
	closedir(dp);
	return r;
}

uint64_t daemon_budget_spread(struct daemon_budget_spread *s, size_t len, uint64_t cost_ns)
{
	if (len < 1)
		len = 1;
	if (len > DAEMON_BUDGET_SPREAD_MAX)
		len = DAEMON_BUDGET_SPREAD_MAX;
	if (s->at >= len)
		s->at = 0;
	s->sum -= s->win[s->at];
	s->win[s->at] = cost_ns;
	s->sum += cost_ns;
	s->at = (s->at + 1) % len;
	return s->sum / len;
}

uint64_t daemon_budget_next(uint64_t cur, uint64_t max, uint64_t used_ns, uint64_t budget_ns)
{
	double want;
	uint64_t next;

	if (!cur || !max || !budget_ns)
		return cur ? cur : 1;
	if (used_ns > budget_ns) {
		/* Over: down in proportion, with a tenth to spare. */
		want = (double)cur * (double)budget_ns / (double)used_ns * 0.9;
	} else if (used_ns * 10 < budget_ns * 7 && cur < max) {
		/* Well under: up in proportion, at most doubling per window. */
		double f = used_ns ? (double)budget_ns / (double)used_ns * 0.9 : 2.0;

		want = (double)cur * (f > 2.0 ? 2.0 : f);
	} else {
		return cur > max ? max : cur;
	}
	/* Between 70% and 100% of the budget nothing changes: no record for noise. */
	next = want < 1.0 ? 1 : want > (double)max ? max : (uint64_t)want;
	return next;
}
