/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-request.c: request lines and a start's args, validated under the
 * client's limits.
 *
 * PUBLIC INTERFACES (daemon-internal, daemon-ctl.h)
 *   daemon_request_parse(), daemon_request_free(), daemon_start_parse()
 *
 * IMPLEMENTATION NOTES
 *   Everything here is a pure function of its input (and the sysfs tree the
 *   event names are looked up in), so the fuzz harness runs it as the daemon
 *   does.  The rules for clients that are not administrators (docs/security.md):
 *   targets are processes ('pids', or the client's own held command), never CPUs
 *   or the whole system; no detached sessions; events count user mode only (an
 *   event without a modifier is made user-mode and the reply says so; an event
 *   asking for kernel mode, a tracepoint or a breakpoint is refused); frequency,
 *   clock periods, ring pages, stack bytes and depth within the user_* limits.
 *   Defaults above a user limit are lowered to it silently; values asked for
 *   above it are refused with the limit named.  Whether the targets may be
 *   profiled is daemon_auth_target()'s question, asked by main at start.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon-ctl.h"
#include "hwpmcd/common.h"

int daemon_request_parse(const char *line, size_t len, struct daemon_request *rq, char *err,
			 size_t errlen)
{
	json_error_t jerr;
	json_t *req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr), *args = NULL;
	json_int_t id = -1;
	const char *cmd = NULL;

	memset(rq, 0, sizeof(*rq));
	rq->id = -1;
	if (!req) {
		snprintf(err, errlen, "malformed JSON: %s (column %d)", jerr.text, jerr.column);
		return -EPROTO;
	}
	if (json_unpack_ex(req, &jerr, JSON_STRICT, "{s:I, s:s, s?o}", "id", &id, "cmd", &cmd,
			   "args", &args) < 0) {
		json_t *jid = json_is_object(req) ? json_object_get(req, "id") : NULL;

		rq->id = json_is_integer(jid) ? json_integer_value(jid) : -1;
		snprintf(err, errlen, "bad request: %s (a request is {\"id\": N, \"cmd\": NAME, "
			 "\"args\": {...}})", jerr.text);
		json_decref(req);
		return -EINVAL;
	}
	rq->id = id;
	if (args && !json_is_object(args)) {
		snprintf(err, errlen, "'args' must be an object");
		json_decref(req);
		return -EINVAL;
	}
	if (!args) {
		args = json_object();
		if (!args || json_object_set_new(req, "args", args) < 0) {
			json_decref(req);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	rq->root = req;
	rq->cmd = cmd;
	rq->args = args;
	return 0;
}

void daemon_request_free(struct daemon_request *rq)
{
	json_decref(rq->root);
	memset(rq, 0, sizeof(*rq));
	rq->id = -1;
}

static int fail(char *err, size_t errlen, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return r;
}

/* An integer field: 1 if present and in range (*dst set), 0 if absent, -errno. */
static int get_int(json_t *args, const char *key, json_int_t lo, json_int_t hi, json_int_t *dst,
		   char *err, size_t errlen)
{
	json_t *v = json_object_get(args, key);

	if (!v)
		return 0;
	if (!json_is_integer(v))
		return fail(err, errlen, -EINVAL, "'%s' must be an integer", key);
	if (json_integer_value(v) < lo || json_integer_value(v) > hi)
		return fail(err, errlen, -ERANGE, "'%s' = %" JSON_INTEGER_FORMAT " is out of range %"
			    JSON_INTEGER_FORMAT "..%" JSON_INTEGER_FORMAT, key,
			    json_integer_value(v), lo, hi);
	*dst = json_integer_value(v);
	return 1;
}

/* A user limit that a value asked for exceeds: ERANGE naming the config key. */
static int over_limit(char *err, size_t errlen, const struct daemon_config *cfg,
		      const char *what, uint64_t v, uint64_t lim, const char *key)
{
	return fail(err, errlen, -ERANGE, "%s = %" PRIu64 " is above the limit of %" PRIu64
		    " for users outside group '%s' (%s in hwpmcd.conf)", what, v, lim,
		    cfg->admin_group, key);
}

static int parse_events(json_t *args, struct session_params *p, char *err, size_t errlen)
{
	json_t *ev = json_object_get(args, "events"), *v;
	char e[1024];
	size_t i;
	int r;

	if (!ev) {
		r = coll_event_parse_list("cpu-clock", getenv("HWPMCD_SYSFS_ROOT"), p->events,
					  COLL_EVENT_MAX, &p->nevents, e, sizeof(e));
		return r < 0 ? fail(err, errlen, r, "%s", e) : 0;
	}
	if (!json_is_array(ev) || json_array_size(ev) == 0)
		return fail(err, errlen, -EINVAL, "'events' must be a non-empty array of strings");
	json_array_foreach(ev, i, v) {
		if (!json_is_string(v))
			return fail(err, errlen, -EINVAL, "'events' must hold strings");
		if (strlen(json_string_value(v)) != json_string_length(v))
			return fail(err, errlen, -EINVAL, "'events' holds a NUL byte");
		r = coll_event_parse_list(json_string_value(v), getenv("HWPMCD_SYSFS_ROOT"),
					  p->events, COLL_EVENT_MAX, &p->nevents, e, sizeof(e));
		if (r < 0)
			return fail(err, errlen, -EINVAL, "%s", e);
	}
	return 0;
}

static int parse_int_array(json_t *args, const char *key, size_t max, json_int_t lo,
			   json_int_t hi, int *dst32, pid_t *dstpid, size_t *n, char *err,
			   size_t errlen)
{
	json_t *v = json_object_get(args, key), *x;
	size_t i;

	if (!v)
		return 0;
	if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > max)
		return fail(err, errlen, -EINVAL, "'%s' must be a non-empty array of at most %zu %s",
			    key, max, dstpid ? "pids" : "CPU numbers");
	json_array_foreach(v, i, x) {
		if (!json_is_integer(x) || json_integer_value(x) < lo || json_integer_value(x) > hi)
			return fail(err, errlen, -EINVAL, "'%s' holds an invalid %s", key,
				    dstpid ? "pid" : "CPU number");
		if (dstpid)
			dstpid[(*n)++] = (pid_t)json_integer_value(x);
		else
			dst32[(*n)++] = (int)json_integer_value(x);
	}
	return 1;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* @cpus sorted, each CPU once: the new count. */
static size_t cpus_normalize(int *cpus, size_t n)
{
	size_t k = 0;

	qsort(cpus, n, sizeof(*cpus), cmp_int);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || cpus[k - 1] != cpus[i])
			cpus[k++] = cpus[i];
	return k;
}

/* The sampling rate an event asks for, in Hz (0: a non-clock period, unknown). */
static uint64_t event_rate(const struct coll_event_spec *e, const struct coll_config *c)
{
	uint64_t period = e->has_period ? e->period : (!e->has_freq && c->period) ? c->period : 0;
	bool clock = coll_event_is_clock(e);

	if (e->has_freq)
		return e->freq;
	if (!period)
		return c->freq;
	/* Clock events count nanoseconds: a period is a rate. */
	return clock ? (1000000000ull + period - 1) / period : 0;
}

/* What a non-administrator may not ask for, beyond the numbers. */
static int user_rules(const struct daemon_config *cfg, const struct daemon_who *who,
		      struct session_params *p, struct daemon_start *st, char *err, size_t errlen)
{
	if (st->detached)
		return fail(err, errlen, -EPERM, "detached sessions (\"output\": \"state\") are "
			    "for root and members of group '%s'; uid %u may record through its "
			    "own output", cfg->admin_group, (unsigned)who->uid);
	for (size_t i = 0; i < p->nevents; i++) {
		struct coll_event_spec *e = &p->events[i];

		if (!coll_event_own_tasks_only(e, getenv("HWPMCD_SYSFS_ROOT")))
			return fail(err, errlen, -EACCES, "event '%s': only software, hardware, "
				    "cache, raw and CPU-PMU events are open to users outside group "
				    "'%s' (tracepoints, breakpoints, probes and uncore PMUs see "
				    "beyond the user's processes)", e->name, cfg->admin_group);
		if (e->exclude_user && !e->exclude_kernel)
			return fail(err, errlen, -EACCES, "event '%s' counts kernel mode only; "
				    "users outside group '%s' may sample user mode (:u)", e->name,
				    cfg->admin_group);
		if (!e->exclude_kernel) {
			st->user_forced = true;
			e->exclude_kernel = true;
		}
	}
	p->kernel = false;
	return 0;
}

size_t daemon_ring_bytes(uint32_t ring_pages)
{
	long pagesize = sysconf(_SC_PAGESIZE);

	return ((size_t)ring_pages + 1) * (size_t)(pagesize > 0 ? pagesize : 4096);
}

int daemon_start_parse(json_t *args, const struct daemon_config *cfg,
		       const struct daemon_who *who, uint64_t maxrate, uint32_t maxstack,
		       struct session_params *p, struct daemon_start *st, char *err,
		       size_t errlen)
{
	static const char *const known[] = { "events", "cpus", "pids", "command", "freq",
					     "period", "callgraph", "stack_bytes", "depth",
					     "ring_pages", "output", "kallsyms", "filter", "jit_maps",
					     NULL };
	bool admin = who->admin;
	uint64_t ratelim = maxrate;
	const char *key;
	json_t *v;
	json_int_t x;
	int has_depth, has_stack, has_ring, has_freq, has_period, r;

	memset(p, 0, sizeof(*p));
	memset(st, 0, sizeof(*st));
	p->out_fd = p->ks_fd = -1;
	p->who = *who;
	err[0] = '\0';
	if (!json_is_object(args))
		return fail(err, errlen, -EINVAL, "'args' must be an object");
	json_object_foreach(args, key, v) {
		bool ok = false;

		for (size_t i = 0; known[i]; i++)
			ok |= strcmp(known[i], key) == 0;
		if (!ok) {
			char shown[64];

			util_escape(key, strlen(key), shown, sizeof(shown));
			return fail(err, errlen, -EINVAL, "start: unknown field '%s'", shown);
		}
	}
	v = json_object_get(args, "output");
	if (v && json_is_string(v) && strcmp(json_string_value(v), "state") == 0)
		st->detached = true;
	else if (!v || !json_is_string(v) || strcmp(json_string_value(v), "fd") != 0)
		return fail(err, errlen, -EINVAL, "no output configured: pass an fd with the "
			    "request and \"output\": \"fd\" (or \"state\" for a detached "
			    "session); the daemon opens no path a client names");
	v = json_object_get(args, "kallsyms");
	if (v) {
		const char *m = json_is_string(v) ? json_string_value(v) : "";

		if (strcmp(m, "fd") != 0 && strcmp(m, "none") != 0)
			return fail(err, errlen, -EINVAL, "'kallsyms' must be \"fd\" or \"none\"");
		st->ks_fd = strcmp(m, "fd") == 0;
		if (st->ks_fd && st->detached)
			return fail(err, errlen, -EINVAL, "'kallsyms': \"fd\" goes with \"output\": "
				    "\"fd\"; a detached session writes its own next to its log");
	}
	st->ks_want = st->ks_fd || (st->detached && !v);
	v = json_object_get(args, "jit_maps");
	if (v && !json_is_boolean(v))
		return fail(err, errlen, -EINVAL, "'jit_maps' must be true or false");
	if (v && json_is_true(v) && !st->detached)
		return fail(err, errlen, -EINVAL, "'jit_maps' goes with \"output\": \"state\"; "
			    "a recording client saves the maps itself");
	p->no_jit = v && json_is_false(v);

	r = parse_events(args, p, err, errlen);
	if (r < 0)
		return r;
	p->cfg.callgraph = COLL_CG_FP;
	v = json_object_get(args, "callgraph");
	if (v) {
		const char *m = json_is_string(v) ? json_string_value(v) : "";

		if (strcmp(m, "none") == 0)
			p->cfg.callgraph = COLL_CG_NONE;
		else if (strcmp(m, "fp") == 0)
			p->cfg.callgraph = COLL_CG_FP;
		else if (strcmp(m, "dwarf") == 0)
			p->cfg.callgraph = COLL_CG_DWARF;
		else
			return fail(err, errlen, -EINVAL, "'callgraph' must be \"none\", \"fp\" or "
				    "\"dwarf\"");
	}
	r = parse_int_array(args, "cpus", DAEMON_MAX_CPUS, 0, 65535, p->cpus, NULL, &p->ncpus, err,
			    errlen);
	if (r < 0)
		return r;
	/*
	 * A CPU named twice is one CPU: each entry would get a counter and a pinned
	 * ring of its own (1,024 entries of one CPU took all of max_ring_mb).
	 */
	p->ncpus = cpus_normalize(p->cpus, p->ncpus);
	r = parse_int_array(args, "pids", DAEMON_MAX_PIDS, 1, INT32_MAX, NULL, p->pids, &p->npids,
			    err, errlen);
	if (r < 0)
		return r;
	v = json_object_get(args, "command");
	if (v) {
		if (!json_is_boolean(v) || (json_is_true(v) && p->npids != 1))
			return fail(err, errlen, -EINVAL, "'command' is a boolean and needs exactly "
				    "one pid");
		p->command = json_is_true(v);
	}
	if (p->command && st->detached)
		return fail(err, errlen, -EINVAL, "a detached session cannot hold a command");
	p->kernel = true;
	if (!admin) {
		r = user_rules(cfg, who, p, st, err, errlen);
		if (r < 0)
			return r;
		if (cfg->user_max_freq && (!ratelim || cfg->user_max_freq < ratelim))
			ratelim = cfg->user_max_freq;
	}

	p->cfg.depth = admin ? cfg->depth : MIN(cfg->depth, cfg->user_max_depth);
	p->cfg.stack_bytes = admin ? cfg->stack_bytes : MIN(cfg->stack_bytes,
							      cfg->user_max_stack_bytes);
	p->unwind_cache_bytes = (size_t)cfg->unwind_cache_mb << 20;
	p->cfg.ring_pages = admin ? cfg->ring_pages : MIN(cfg->ring_pages, cfg->user_max_ring_pages);
	p->cfg.freq = COLL_FREQ_DEFAULT;
	if ((has_depth = get_int(args, "depth", 1, COLL_DEPTH_MAX, &x, err, errlen)) < 0)
		return has_depth;
	if (has_depth) {
		if (!admin && (uint64_t)x > cfg->user_max_depth)
			return over_limit(err, errlen, cfg, "'depth'", (uint64_t)x,
					  cfg->user_max_depth, "user_max_depth");
		p->cfg.depth = (uint32_t)x;
	}
	if (maxstack && p->cfg.depth > maxstack && p->cfg.callgraph != COLL_CG_DWARF) {
		/*
		 * Only a depth the user asked for deserves a note; the default just fits.
		 * dwarf mode unwinds the user part here, so only its kernel part (which
		 * the collector caps) is bounded by the kernel.
		 */
		if (has_depth)
			st->depth_note = maxstack;
		p->cfg.depth = maxstack;
	}
	if ((has_stack = get_int(args, "stack_bytes", 8, COLL_STACK_MAX, &x, err, errlen)) < 0)
		return has_stack;
	if (has_stack) {
		if (x % 8)
			return fail(err, errlen, -EINVAL, "'stack_bytes' = %" JSON_INTEGER_FORMAT
				    " is not a multiple of 8", x);
		if (!admin && (uint64_t)x > cfg->user_max_stack_bytes)
			return over_limit(err, errlen, cfg, "'stack_bytes'", (uint64_t)x,
					  cfg->user_max_stack_bytes, "user_max_stack_bytes");
		p->cfg.stack_bytes = (uint32_t)x;
	}
	if ((has_ring = get_int(args, "ring_pages", 1, 65536, &x, err, errlen)) < 0)
		return has_ring;
	if (has_ring) {
		if (x & (x - 1))
			return fail(err, errlen, -EINVAL, "'ring_pages' = %" JSON_INTEGER_FORMAT
				    " is not a power of two", x);
		if (!admin && (uint64_t)x > cfg->user_max_ring_pages)
			return over_limit(err, errlen, cfg, "'ring_pages'", (uint64_t)x,
					  cfg->user_max_ring_pages, "user_max_ring_pages");
		p->cfg.ring_pages = (uint32_t)x;
	}
	if (p->cfg.callgraph == COLL_CG_DWARF && !has_ring) {
		/*
		 * A dwarf sample carries its stack snapshot: room for about 128 of them,
		 * 4 MiB for snapshots up to 32 KiB, 8 MiB above (with 64 KiB snapshots,
		 * 4 MiB rings lost samples at 4 kHz on both CPUs of a busy machine, 8 MiB
		 * none).
		 */
		uint32_t want = p->cfg.stack_bytes > 32768 ? 2048 : 1024;

		if (p->cfg.ring_pages < want)
			p->cfg.ring_pages = admin ? want : MIN(want, cfg->user_max_ring_pages);
	}
	if ((has_freq = get_int(args, "freq", 1, INT32_MAX, &x, err, errlen)) < 0)
		return has_freq;
	if (has_freq)
		p->cfg.freq = (uint64_t)x;
	if ((has_period = get_int(args, "period", 1, INT64_MAX, &x, err, errlen)) < 0)
		return has_period;
	if (has_period)
		p->cfg.period = (uint64_t)x;
	if (has_freq && has_period)
		return fail(err, errlen, -EINVAL, "give 'freq' or 'period', not both");
	for (size_t i = 0; i < p->nevents; i++) {
		const struct coll_event_spec *e = &p->events[i];
		uint64_t fq = e->has_freq ? e->freq : (!e->has_period && !p->cfg.period) ? p->cfg.freq : 0;
		uint64_t f = event_rate(e, &p->cfg);

		/* The kernel refuses a freq above its limit; a period it throttles. */
		if (maxrate && fq > maxrate)
			return fail(err, errlen, -ERANGE, "event '%s': %" PRIu64 " Hz is above the "
				    "kernel's limit of %" PRIu64 " Hz "
				    "(kernel.perf_event_max_sample_rate)", e->name, fq, maxrate);
		if (!admin && ratelim && f > ratelim)
			return over_limit(err, errlen, cfg, "the sample rate (Hz)", f, ratelim,
					  "user_max_freq");
	}
	if ((v = json_object_get(args, "filter"))) {
		r = daemon_filter_parse(v, &p->filter, err, errlen);
		if (r < 0)
			return r;
	}
	if (!admin && (json_object_get(args, "cpus") || !p->npids)) {
		r = daemon_filter_owner_rule(&p->filter, cfg, who, err, errlen);
		if (r < 0)
			return r;
	}
	st->ring_bytes = daemon_ring_bytes(p->cfg.ring_pages);
	return 0;
}

/* ---- the in-kernel sample filter ---- */

/* Append " key=value" to the canonical text (cut at its size: status only shows it). */
static void text_add(struct daemon_filter *f, const char *key, const char *value)
{
	size_t n = strlen(f->text);

	snprintf(f->text + n, sizeof(f->text) - n, "%s%s=%s", n ? " " : "", key, value);
}

/* The array @key of @obj into *ret_a (NULL when absent: no values).  0 or -errno. */
static int filter_array(json_t *obj, const char *key, json_t **ret_a, char *err, size_t errlen)
{
	json_t *a = json_object_get(obj, key);

	*ret_a = a;
	if (a && !json_is_array(a))
		return fail(err, errlen, -EINVAL, "filter: '%s' must be an array", key);
	if (a && json_array_size(a) > FILT_VALUES_MAX)
		return fail(err, errlen, -E2BIG, "filter: '%s' lists %zu values, at most %d", key,
			    json_array_size(a), FILT_VALUES_MAX);
	return 0;
}

/* A unit name as systemd writes it: NAME.TYPE, letters, digits and ":_.\@-". */
static bool unit_name_ok(const char *s)
{
	static const char *const types[] = { ".service", ".scope", ".slice", ".socket",
					     ".mount", ".swap", NULL };
	size_t n = strlen(s);
	bool typed = false;

	if (n == 0 || n >= DAEMON_CGROUP_NAME || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || strchr(":_.\\@-", s[i])))
			return false;
	for (size_t i = 0; types[i]; i++)
		typed |= n > strlen(types[i]) && strcmp(s + n - strlen(types[i]), types[i]) == 0;
	return typed;
}

/* A cgroup path: printable, no "." or ".." component, no "//". */
static bool cgroup_path_ok(const char *s)
{
	const char *c = s;
	size_t n = strlen(s);

	if (n == 0 || n >= DAEMON_CGROUP_NAME)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	while (*c) {
		size_t len;

		while (*c == '/')
			c++;
		len = strcspn(c, "/");
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += len;
	}
	return strstr(s, "//") == NULL;
}

int daemon_filter_owner_rule(struct daemon_filter *f, const struct daemon_config *cfg,
			     const struct daemon_who *who, char *err, size_t errlen)
{
	char owner[48];

	if (!f->on || f->spec.nuids != 1 || f->spec.uids[0] != (uint32_t)who->uid)
		return fail(err, errlen, -EPERM, "system-wide and CPU sessions are for root and "
			    "members of group '%s'; uid %u may record all of its own processes "
			    "with a filter that names its uid alone (hwpmc record -u %u), or "
			    "profile some of them (hwpmc record -p PID, or -- COMMAND)",
			    cfg->admin_group, (unsigned)who->uid, (unsigned)who->uid);
	f->spec.owner_only = true;
	f->spec.owner = (uint32_t)who->uid;
	f->spec.owner_gid = (uint32_t)who->gid;
	/* The text says so (status, the log's mark), before any resolved cgroup part. */
	snprintf(owner, sizeof(owner), "%u:%u", (unsigned)who->uid, (unsigned)who->gid);
	text_add(f, "owner", owner);
	f->base_len = strlen(f->text);
	return 0;
}

int daemon_filter_parse(json_t *obj, struct daemon_filter *f, char *err, size_t errlen)
{
	static const char *const known[] = { "pid", "uid", "comm", "cgroup", "unit", NULL };
	const char *key;
	json_t *a, *v;
	size_t i;
	int r;

	memset(f, 0, sizeof(*f));
	if (!json_is_object(obj))
		return fail(err, errlen, -EINVAL, "'filter' must be an object");
	json_object_foreach(obj, key, v) {
		bool ok = false;

		for (size_t k = 0; known[k]; k++)
			ok |= strcmp(known[k], key) == 0;
		if (!ok) {
			char shown[64];

			util_escape(key, strlen(key), shown, sizeof(shown));
			return fail(err, errlen, -EINVAL, "filter: unknown key '%s' (pid, uid, comm, "
				    "cgroup or unit)", shown);
		}
	}
	f->on = true;
	if ((r = filter_array(obj, "pid", &a, err, errlen)) < 0)
		return r;
	json_array_foreach(a, i, v) {
		char num[24];

		if (!json_is_integer(v) || json_integer_value(v) <= 0 ||
		    json_integer_value(v) > INT32_MAX)
			return fail(err, errlen, -EINVAL, "filter: 'pid' values are process "
				    "ids (positive integers)");
		f->spec.tgids[f->spec.ntgids++] = (int32_t)json_integer_value(v);
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		text_add(f, "pid", num);
	}
	if ((r = filter_array(obj, "uid", &a, err, errlen)) < 0)
		return r;
	json_array_foreach(a, i, v) {
		char num[24];

		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) >= UINT32_MAX)
			return fail(err, errlen, -EINVAL, "filter: 'uid' values are user ids "
				    "(integers 0..4294967294)");
		f->spec.uids[f->spec.nuids++] = (uint32_t)json_integer_value(v);
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		text_add(f, "uid", num);
	}
	if ((r = filter_array(obj, "comm", &a, err, errlen)) < 0)
		return r;
	json_array_foreach(a, i, v) {
		const char *s = json_string_value(v);

		if (s && strlen(s) >= FILT_COMM_BYTES)
			/* The hint is the name as the kernel keeps it (no silent cut here). */
			return fail(err, errlen, -EINVAL, "filter: comm '%.64s%s' is longer than "
				    "the %d bytes the kernel keeps of a command name: ask for '%.*s'",
				    s, strlen(s) > 64 ? "..." : "", FILT_COMM_BYTES - 1,
				    FILT_COMM_BYTES - 1, s);
		if (!s || !s[0])
			return fail(err, errlen, -EINVAL, "filter: 'comm' values are command "
				    "names of 1 to %d bytes (the kernel keeps no more)",
				    FILT_COMM_BYTES - 1);
		snprintf(f->spec.comms[f->spec.ncomms++], FILT_COMM_BYTES, "%s", s);
		text_add(f, "comm", s);
	}
	if ((r = filter_array(obj, "cgroup", &a, err, errlen)) < 0)
		return r;
	json_array_foreach(a, i, v) {
		const char *s = json_string_value(v);

		if (!s || !cgroup_path_ok(s))
			return fail(err, errlen, -EINVAL, "filter: 'cgroup' values are cgroup "
				    "paths below the cgroup v2 mount, without '.' or '..' "
				    "(e.g. system.slice/nginx.service)");
		snprintf(f->cgroups[f->ncgroups++], DAEMON_CGROUP_NAME, "%s", s);
	}
	if ((r = filter_array(obj, "unit", &a, err, errlen)) < 0)
		return r;
	if (f->ncgroups + json_array_size(a) > FILT_VALUES_MAX)
		return fail(err, errlen, -E2BIG, "filter: 'cgroup' and 'unit' together list "
			    "more than %d values", FILT_VALUES_MAX);
	json_array_foreach(a, i, v) {
		const char *s = json_string_value(v);

		if (!s || !unit_name_ok(s))
			return fail(err, errlen, -EINVAL, "filter: 'unit' values are systemd "
				    "unit names (NAME.service, .scope, .slice, ...)");
		snprintf(f->cgroups[f->ncgroups + f->nunits++], DAEMON_CGROUP_NAME, "%s", s);
	}
	f->base_len = strlen(f->text);
	return 0;
}
