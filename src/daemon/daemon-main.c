/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-main.c: hwpmcd: main loop, control socket, clients, configuration.
 *
 * IMPLEMENTATION NOTES
 *   One epoll loop in the main thread serves the listening socket, every client,
 *   the signalfd (SIGTERM/SIGINT end the daemon; every session is closed with
 *   CLOSELOG first) and each session's done eventfd (a session that ended by
 *   itself, e.g. on ENOSPC, is reported to its client with an event line).
 *   Requests are NDJSON lines of at most CTL_MESSAGE_MAX bytes; a longer line
 *   gets an error reply and is skipped to its newline, the connection lives on.
 *   Output fds arrive with SCM_RIGHTS and wait in the client's fd queue until the
 *   `start` request that consumes them; the daemon never opens a client-named
 *   path.  Until the authorization of issue 6 lands, only root may start
 *   sessions; other users are refused with EPERM.
 *
 *   Kernel symbols: a start with "kallsyms": "fd" brings a second fd (fds in
 *   order: log, kallsyms); a detached session gets <log>.kallsyms of ours.  Main
 *   decides here whether the session can have kernel samples and whether
 *   /proc/kallsyms shows addresses (a 64 KiB probe), and hands the fd to the
 *   session (daemon-session.c reads the table, writes it and compacts it).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "daemon-int.h"
#include "hwpmcd/common.h"
#include "hwpmcd/ctl-protocol.h"
#include "hwpmcd/log.h"

#define MAX_CLIENTS 128
#define MAX_SESSIONS_DEFAULT 16
#define CLIENT_MAX_FDS 8

struct client {
	int fd;
	uid_t uid;
	gid_t gid;
	pid_t pid;
	char *buf;
	size_t len;
	bool discarding; /* skipping the rest of an oversized line */
	int fds[CLIENT_MAX_FDS];
	size_t nfds;
	struct client *next;
};

struct daemon_config {
	char socket_path[108];
	char state_dir[512];
	unsigned socket_mode;
	uint32_t ring_pages;
	uint32_t depth;
	uint32_t stack_bytes;
	uint32_t max_sessions;
	uint32_t unwind_cache_mb; /* dwarf mode: ELF images mapped per session, MiB */
};

static struct daemon_config cfg = {
	.socket_path = CTL_SOCKET_DEFAULT,
	.state_dir = "/var/lib/hwpmcd",
	.socket_mode = 0660,
	.ring_pages = COLL_RING_PAGES_DEFAULT,
	.depth = COLL_DEPTH_DEFAULT,
	.stack_bytes = COLL_STACK_DEFAULT,
	.max_sessions = MAX_SESSIONS_DEFAULT,
	.unwind_cache_mb = (uint32_t)(UNWIND_ELF_BUDGET_DEFAULT >> 20),
};

static int epfd = -1;
static int listen_fd = -1;
static bool listen_owned; /* we created the socket file (not socket activation) */
static struct client *clients;
static size_t nclients;
static struct session *sessions[64];
static size_t nsessions;
static int next_session_id = 1;
static bool arg_foreground;
static const char *arg_config;
static const char *arg_socket;
static const char *arg_state_dir;

/* epoll tags: pointers to these mark what an event is for. */
static char tag_listen, tag_signal;

/* ---- sd_notify (a tiny fallback; libsystemd is optional) ---- */

static void notify(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n;
	int fd;

	if (!path || !*path || (path[0] != '/' && path[0] != '@'))
		return;
	n = strlen(path);
	if (n >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, n);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	(void)sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n));
	close(fd);
}

/* ---- configuration ---- */

static void config_u32(const char *file, int line, const char *key, const char *val,
		       uint32_t *dst, uint32_t lo, uint32_t hi, bool pow2)
{
	uint64_t v;

	if (util_parse_u64(val, &v) < 0 || v < lo || v > hi || (pow2 && (v & (v - 1)))) {
		log_warn("%s:%d: %s = '%s' is out of range (%u..%u%s); using the default %u", file,
			 line, key, val, lo, hi, pow2 ? ", a power of two" : "", *dst);
		return;
	}
	*dst = (uint32_t)v;
}

static int config_load(const char *path, bool must_exist)
{
	FILE *f = fopen(path, "re");
	char line[512];
	int n = 0;

	if (!f) {
		if (!must_exist && errno == ENOENT)
			return 0;
		return log_error_errno(-errno, "config '%s'", path);
	}
	while (fgets(line, sizeof(line), f)) {
		char *k = line, *v, *e;

		n++;
		k += strspn(k, " \t");
		if (*k == '#' || *k == '\n' || *k == '\0')
			continue;
		v = strchr(k, '=');
		if (!v) {
			log_warn("%s:%d: expected 'key = value', ignoring", path, n);
			continue;
		}
		*v++ = '\0';
		for (e = v + strlen(v); e > v && (e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\t');)
			*--e = '\0';
		v += strspn(v, " \t");
		for (e = k + strlen(k); e > k && (e[-1] == ' ' || e[-1] == '\t');)
			*--e = '\0';
		if (strcmp(k, "ring_pages") == 0)
			config_u32(path, n, k, v, &cfg.ring_pages, 1, 65536, true);
		else if (strcmp(k, "depth") == 0)
			config_u32(path, n, k, v, &cfg.depth, 1, COLL_DEPTH_MAX, false);
		else if (strcmp(k, "stack_bytes") == 0)
			config_u32(path, n, k, v, &cfg.stack_bytes, 8, COLL_STACK_MAX, false);
		else if (strcmp(k, "max_sessions") == 0)
			config_u32(path, n, k, v, &cfg.max_sessions, 1, 64, false);
		else if (strcmp(k, "unwind_cache_mb") == 0)
			config_u32(path, n, k, v, &cfg.unwind_cache_mb, 16, 65536, false);
		else if (strcmp(k, "socket") == 0) {
			if (strlen(v) >= sizeof(cfg.socket_path) || v[0] != '/')
				log_warn("%s:%d: socket '%s' must be an absolute path under %zu bytes, "
					 "ignoring", path, n, v, sizeof(cfg.socket_path));
			else
				snprintf(cfg.socket_path, sizeof(cfg.socket_path), "%s", v);
		} else if (strcmp(k, "state_dir") == 0) {
			if (strlen(v) >= sizeof(cfg.state_dir) - 64 || v[0] != '/')
				log_warn("%s:%d: state_dir '%s' must be an absolute path, ignoring", path,
					 n, v);
			else
				snprintf(cfg.state_dir, sizeof(cfg.state_dir), "%s", v);
		} else if (strcmp(k, "socket_mode") == 0) {
			char *end;
			unsigned long m = strtoul(v, &end, 8);

			if (*end || m > 0777)
				log_warn("%s:%d: socket_mode '%s' is not an octal mode, ignoring", path,
					 n, v);
			else
				cfg.socket_mode = (unsigned)m;
		} else
			log_warn("%s:%d: unknown key '%s', ignoring", path, n, k);
	}
	fclose(f);
	if (cfg.stack_bytes % 8) {
		log_warn("%s: stack_bytes %u is not a multiple of 8; using %u", path, cfg.stack_bytes,
			 cfg.stack_bytes & ~7u);
		cfg.stack_bytes &= ~7u;
	}
	return 0;
}

/* ---- replies ---- */

static void client_send(struct client *c, json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	size_t n;

	json_decref(msg);
	if (!s)
		return;
	n = strlen(s);
	s[n] = '\n';
	/* A client that does not read its replies may lose them, never block us. */
	(void)send(c->fd, s, n + 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	free(s);
}

static json_t *reply_ok(json_int_t id)
{
	json_t *r = json_object();

	json_object_set_new(r, "id", json_integer(id));
	json_object_set_new(r, "ok", json_true());
	return r;
}

static void reply_error(struct client *c, json_int_t id, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static const char *errno_name(int err)
{
	switch (-err) {
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case ESRCH: return "ESRCH";
	case E2BIG: return "E2BIG";
	case EMFILE: return "EMFILE";
	case ENOMEM: return "ENOMEM";
	case EBUSY: return "EBUSY";
	case ERANGE: return "ERANGE";
	case EPROTO: return "EPROTO";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOSPC: return "ENOSPC";
	case EPIPE: return "EPIPE";
	case EBADF: return "EBADF";
	case EMSGSIZE: return "EMSGSIZE";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	default: return "EIO";
	}
}

static void reply_error(struct client *c, json_int_t id, int err, const char *fmt, ...)
{
	json_t *r = json_object(), *e = json_object();
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (id >= 0)
		json_object_set_new(r, "id", json_integer(id));
	else
		json_object_set_new(r, "id", json_null());
	json_object_set_new(r, "ok", json_false());
	json_object_set_new(e, "errno", json_string(errno_name(err)));
	json_object_set_new(e, "message", json_string(msg));
	json_object_set_new(r, "error", e);
	client_send(c, r);
}

/* ---- sessions ---- */

static struct session *session_find(int id)
{
	for (size_t i = 0; i < nsessions; i++)
		if (sessions[i]->id == id)
			return sessions[i];
	return NULL;
}

/*
 * The kernel symbols file of @s: what it held at start, and once the session has
 * ended (@state done or error: the worker's ks_ results are final) what it holds.
 */
static json_t *session_ks_json(const struct session *s, int state)
{
	json_t *k = json_object();
	bool ended = state == SESSION_DONE || state == SESSION_ERROR;

	if (s->ks_skip[0]) {
		json_object_set_new(k, "state", json_string("none"));
		json_object_set_new(k, "note", json_string(s->ks_skip));
		return k;
	}
	json_object_set_new(k, "state", json_string(ended ? session_ks_state_name(s->ks_state)
							  : "pending"));
	if (!ended)
		return k;
	json_object_set_new(k, "full_symbols", json_integer((json_int_t)s->ks_full_syms));
	json_object_set_new(k, "full_bytes", json_integer((json_int_t)s->ks_full_bytes));
	json_object_set_new(k, "symbols", json_integer((json_int_t)s->ks_syms));
	json_object_set_new(k, "bytes", json_integer((json_int_t)s->ks_bytes));
	json_object_set_new(k, "pcs", json_integer((json_int_t)s->ks_pcs));
	if (s->ks_refused)
		json_object_set_new(k, "pcs_not_collected", json_integer((json_int_t)s->ks_refused));
	if (s->ks_note[0])
		json_object_set_new(k, "note", json_string(s->ks_note));
	return k;
}

static json_t *session_json(struct session *s)
{
	json_t *o = json_object(), *st = json_object(), *types = json_object(), *cpus = json_array();
	int state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
	uint64_t end = s->end_ns ? s->end_ns : 0;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (!end)
		end = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	json_object_set_new(o, "session", json_integer(s->id));
	json_object_set_new(o, "uid", json_integer(s->uid));
	json_object_set_new(o, "state", json_string(session_state_name(state)));
	json_object_set_new(o, "detached", json_boolean(s->owner == NULL));
	if (s->path[0])
		json_object_set_new(o, "path", json_string(s->path));
	if (__atomic_load_n(&s->error, __ATOMIC_ACQUIRE))
		json_object_set_new(o, "error", json_pack("{s:s,s:s}", "errno",
							  errno_name(s->error), "message",
							  s->error_msg));
	json_object_set_new(o, "seconds", json_real((double)(end - s->start_ns) / 1e9));
#define ST(f) json_object_set_new(st, #f, json_integer((json_int_t)__atomic_load_n(&s->stats.f, __ATOMIC_RELAXED)))
	ST(samples);
	ST(lost);
	ST(throttled);
	ST(no_pcs);
	ST(reordered);
	ST(unknown_id);
#undef ST
	json_object_set_new(st, "cpu_seconds",
			    json_real((double)__atomic_load_n(&s->stats.cpu_ns, __ATOMIC_RELAXED) / 1e9));
	json_object_set_new(st, "bytes", json_integer((json_int_t)session__bytes(s)));
	if (s->uw) {
		/* Samples by why their user unwinding stopped, and the ELF cache. */
		json_t *u = json_object();

#define UL(f) (json_int_t) __atomic_load_n(&s->stats.f, __ATOMIC_RELAXED)
		json_object_set_new(u, "samples", json_integer(UL(unwound)));
		for (int i = 0; i < UNWIND_OUTCOME_MAX; i++)
			json_object_set_new(u, unwind_outcome_name((enum unwind_outcome)i),
					    json_integer(UL(unwind[i])));
		json_object_set_new(u, "fp_steps", json_integer(UL(fp_steps)));
		json_object_set_new(u, "own_tables", json_integer(UL(own_tables)));
		json_object_set_new(u, "elf_opened", json_integer(UL(elf_opened)));
		json_object_set_new(u, "elf_evicted", json_integer(UL(elf_evicted)));
		json_object_set_new(u, "elf_bytes", json_integer(UL(elf_bytes)));
#undef UL
		json_object_set_new(st, "unwind", u);
	}
	if (state == SESSION_DONE || state == SESSION_ERROR) {
		const struct plog_writer_stats *ws = plog_writer__stats(s->w);
		const struct maplog_stats *ms = maplog__stats(s->ml);

		for (uint32_t t = 0; t < PLOG_TYPE_MAX; t++)
			if (ws->records[t])
				json_object_set_new(types, plog_type_name(t),
						    json_integer((json_int_t)ws->records[t]));
		json_object_set_new(st, "elf_fallback", json_integer((json_int_t)ms->elf_fallback));
		json_object_set_new(st, "anon_exec", json_integer((json_int_t)ms->anon_exec));
		json_object_set_new(st, "path_too_long",
				    json_integer((json_int_t)ms->path_too_long));
	}
	for (size_t i = 0; i < s->ncoll; i++) {
		const struct session_cpu_stats *cs = &s->cstats[i];

#define L(f) (json_int_t) __atomic_load_n(&cs->f, __ATOMIC_RELAXED)
		json_array_append_new(cpus, json_pack("{s:i,s:I,s:I,s:I,s:I,s:I}", "cpu",
						      coll_cpu__cpu(s->coll[i]), "samples",
						      L(samples), "lost", L(lost), "throttled",
						      L(throttled), "bad", L(bad), "wrapped",
						      L(wrapped)));
#undef L
	}
	json_object_set_new(o, "stats", st);
	json_object_set_new(o, "records", types);
	json_object_set_new(o, "cpus", cpus);
	json_object_set_new(o, "ncpus", json_integer((json_int_t)s->ncoll));
	if (s->depth_note)
		json_object_set_new(o, "note", json_sprintf("call chain depth capped at %u "
							     "(kernel.perf_event_max_stack)",
							     s->depth_note));
	if (s->ks_skip[0] || s->ks_path[0] || s->p.ks_fd >= 0)
		json_object_set_new(o, "kallsyms", session_ks_json(s, state));
	if (s->ks_path[0])
		json_object_set_new(o, "kallsyms_path", json_string(s->ks_path));
	return o;
}

static void session_remove(struct session *s)
{
	for (size_t i = 0; i < nsessions; i++) {
		if (sessions[i] == s) {
			(void)epoll_ctl(epfd, EPOLL_CTL_DEL, s->done_efd, NULL);
			sessions[i] = sessions[--nsessions];
			break;
		}
	}
	session__free(s);
}

/* ---- commands ---- */

static bool is_admin(const struct client *c)
{
	return c->uid == 0;
}

static int get_int(json_t *args, const char *key, json_int_t lo, json_int_t hi, json_int_t *dst,
		   struct client *c, json_int_t id)
{
	json_t *v = json_object_get(args, key);

	if (!v)
		return 0;
	if (!json_is_integer(v)) {
		reply_error(c, id, -EINVAL, "'%s' must be an integer", key);
		return -EINVAL;
	}
	if (json_integer_value(v) < lo || json_integer_value(v) > hi) {
		reply_error(c, id, -ERANGE, "'%s' = %" JSON_INTEGER_FORMAT " is out of range %"
			    JSON_INTEGER_FORMAT "..%" JSON_INTEGER_FORMAT, key,
			    json_integer_value(v), lo, hi);
		return -ERANGE;
	}
	*dst = json_integer_value(v);
	return 1;
}

static void cmd_start(struct client *c, json_int_t id, json_t *args)
{
	static const char *const known[] = { "events", "cpus", "pids", "command", "freq",
					     "period", "callgraph", "stack_bytes", "depth",
					     "ring_pages", "output", "kallsyms", NULL };
	struct session_params *p = calloc(1, sizeof(*p));
	struct session *s = NULL;
	const char *key;
	json_t *v, *ev;
	json_int_t x;
	size_t i;
	char err[1024];
	uint64_t maxrate = coll_max_sample_rate();
	uint32_t maxstack = coll_max_stack(), depth_note = 0;
	bool detached = false;
	int has_depth, has_stack_bytes, has_ring_pages, has_freq, has_period; /* get_int() > 0 */
	char path[sizeof(cfg.state_dir) + 64] = "";
	char ks_path[sizeof(path) + 16] = "", ks_skip[160] = "";
	bool ks_fd = false, ks_want = false, all_user = true, started = false;
	bool made_log = false, made_ks = false; /* files we created in the state directory */
	int r;

	if (!p) {
		reply_error(c, id, -ENOMEM, "out of memory");
		return;
	}
	p->out_fd = -1;
	p->ks_fd = -1;
	if (!is_admin(c)) {
		reply_error(c, id, -EPERM, "only root may record until per-user authorization lands");
		goto out;
	}
	json_object_foreach(args, key, v) {
		bool ok = false;

		for (i = 0; known[i]; i++)
			ok |= strcmp(known[i], key) == 0;
		if (!ok) {
			reply_error(c, id, -EINVAL, "start: unknown field '%s'", key);
			goto out;
		}
	}
	if (nsessions >= cfg.max_sessions) {
		reply_error(c, id, -EBUSY, "the daemon runs %zu sessions, its maximum (max_sessions)",
			    nsessions);
		goto out;
	}
	v = json_object_get(args, "output");
	if (v && json_is_string(v) && strcmp(json_string_value(v), "state") == 0) {
		/* A detached session: a file of ours, in our state directory. */
		detached = true;
	} else if (!v || !json_is_string(v) || strcmp(json_string_value(v), "fd") != 0) {
		reply_error(c, id, -EINVAL, "no output configured: pass an fd with the request "
			    "and \"output\": \"fd\" (or \"state\" for a detached session)");
		goto out;
	} else if (c->nfds == 0) {
		reply_error(c, id, -EBADF, "no output configured: no fd came with the request");
		goto out;
	}
	v = json_object_get(args, "kallsyms");
	if (v) {
		const char *m = json_is_string(v) ? json_string_value(v) : "";

		if (strcmp(m, "fd") != 0 && strcmp(m, "none") != 0) {
			reply_error(c, id, -EINVAL, "'kallsyms' must be \"fd\" or \"none\"");
			goto out;
		}
		ks_fd = strcmp(m, "fd") == 0;
		if (ks_fd && detached) {
			reply_error(c, id, -EINVAL, "'kallsyms': \"fd\" goes with \"output\": \"fd\"; "
				    "a detached session writes its own next to its log");
			goto out;
		}
	}
	ks_want = ks_fd || (detached && !v);
	if (ks_fd && c->nfds < 2) {
		/* Drop what came: a retry must not take a stale log fd for its kallsyms. */
		reply_error(c, id, -EBADF, "'kallsyms': \"fd\" needs a second fd with the request "
			    "(fds in order: log, kallsyms), but only %zu came", c->nfds);
		for (i = 0; i < c->nfds; i++)
			close(c->fds[i]);
		c->nfds = 0;
		goto out;
	}
	ev = json_object_get(args, "events");
	if (!ev)
		ev = json_pack("[s]", "cpu-clock");
	else
		json_incref(ev);
	if (!json_is_array(ev) || json_array_size(ev) == 0) {
		json_decref(ev);
		reply_error(c, id, -EINVAL, "'events' must be a non-empty array of strings");
		goto out;
	}
	json_array_foreach(ev, i, v) {
		if (!json_is_string(v) ||
		    coll_event_parse_list(json_string_value(v), getenv("HWPMCD_SYSFS_ROOT"),
					  p->events, COLL_EVENT_MAX, &p->nevents, err,
					  sizeof(err)) < 0) {
			json_decref(ev);
			reply_error(c, id, -EINVAL, "%s",
				    json_is_string(v) ? err : "'events' must hold strings");
			goto out;
		}
	}
	json_decref(ev);

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
		else {
			reply_error(c, id, -EINVAL, "'callgraph' must be \"none\", \"fp\" or \"dwarf\"");
			goto out;
		}
	}
	p->cfg.depth = cfg.depth;
	p->cfg.stack_bytes = cfg.stack_bytes;
	p->unwind_cache_bytes = (size_t)cfg.unwind_cache_mb << 20;
	p->cfg.ring_pages = cfg.ring_pages;
	p->cfg.freq = COLL_FREQ_DEFAULT;
	has_depth = get_int(args, "depth", 1, COLL_DEPTH_MAX, &x, c, id);
	if (has_depth < 0)
		goto out;
	if (has_depth)
		p->cfg.depth = (uint32_t)x;
	if (maxstack && p->cfg.depth > maxstack && p->cfg.callgraph != COLL_CG_DWARF) {
		/*
		 * Only a depth the user asked for deserves a note; the default just fits.
		 * dwarf mode unwinds the user part here, so only its kernel part (which
		 * the collector caps) is bounded by the kernel.
		 */
		if (has_depth)
			depth_note = maxstack;
		p->cfg.depth = maxstack;
	}
	has_stack_bytes = get_int(args, "stack_bytes", 8, COLL_STACK_MAX, &x, c, id);
	if (has_stack_bytes < 0)
		goto out;
	if (has_stack_bytes) {
		if (x % 8) {
			reply_error(c, id, -EINVAL, "'stack_bytes' = %" JSON_INTEGER_FORMAT
				    " is not a multiple of 8", x);
			goto out;
		}
		p->cfg.stack_bytes = (uint32_t)x;
	}
	has_ring_pages = get_int(args, "ring_pages", 1, 65536, &x, c, id);
	if (has_ring_pages < 0)
		goto out;
	if (has_ring_pages) {
		if (x & (x - 1)) {
			reply_error(c, id, -EINVAL, "'ring_pages' = %" JSON_INTEGER_FORMAT
				    " is not a power of two", x);
			goto out;
		}
		p->cfg.ring_pages = (uint32_t)x;
	}
	if (p->cfg.callgraph == COLL_CG_DWARF && !has_ring_pages &&
	    p->cfg.ring_pages < 1024) {
		/* A dwarf sample carries its stack snapshot: give the ring room for it (4 MiB). */
		p->cfg.ring_pages = 1024;
	}
	has_freq = get_int(args, "freq", 1, INT32_MAX, &x, c, id);
	if (has_freq < 0)
		goto out;
	if (has_freq)
		p->cfg.freq = (uint64_t)x;
	has_period = get_int(args, "period", 1, INT64_MAX, &x, c, id);
	if (has_period < 0)
		goto out;
	if (has_period)
		p->cfg.period = (uint64_t)x;
	if (has_freq && has_period) {
		reply_error(c, id, -EINVAL, "give 'freq' or 'period', not both");
		goto out;
	}
	for (i = 0; i < p->nevents; i++) {
		uint64_t f = p->events[i].has_freq ? p->events[i].freq
			     : (!p->events[i].has_period && !p->cfg.period) ? p->cfg.freq : 0;

		if (maxrate && f > maxrate) {
			reply_error(c, id, -ERANGE, "event '%s': %" PRIu64 " Hz is above the kernel's "
				    "limit of %" PRIu64 " Hz (kernel.perf_event_max_sample_rate)",
				    p->events[i].name, f, maxrate);
			goto out;
		}
	}
	v = json_object_get(args, "cpus");
	if (v) {
		if (!json_is_array(v) || json_array_size(v) == 0 ||
		    json_array_size(v) > DAEMON_MAX_CPUS) {
			reply_error(c, id, -EINVAL, "'cpus' must be a non-empty array of CPU numbers");
			goto out;
		}
		json_array_foreach(v, i, ev) {
			if (!json_is_integer(ev) || json_integer_value(ev) < 0 ||
			    json_integer_value(ev) > 65535) {
				reply_error(c, id, -EINVAL, "'cpus' holds an invalid CPU number");
				goto out;
			}
			p->cpus[p->ncpus++] = (int)json_integer_value(ev);
		}
	}
	v = json_object_get(args, "pids");
	if (v) {
		if (!json_is_array(v) || json_array_size(v) == 0 ||
		    json_array_size(v) > DAEMON_MAX_PIDS) {
			reply_error(c, id, -EINVAL, "'pids' must be a non-empty array of at most %d pids",
				    DAEMON_MAX_PIDS);
			goto out;
		}
		json_array_foreach(v, i, ev) {
			if (!json_is_integer(ev) || json_integer_value(ev) <= 0 ||
			    json_integer_value(ev) > INT32_MAX) {
				reply_error(c, id, -EINVAL, "'pids' holds an invalid pid");
				goto out;
			}
			p->pids[p->npids++] = (pid_t)json_integer_value(ev);
		}
	}
	v = json_object_get(args, "command");
	if (v) {
		if (!json_is_boolean(v) || (json_is_true(v) && p->npids != 1)) {
			reply_error(c, id, -EINVAL, "'command' is a boolean and needs exactly one pid");
			goto out;
		}
		p->command = json_is_true(v);
	}
	p->kernel = true;
	if (ks_want) {
		/* No kernel samples, no kernel symbols: say why instead of writing them. */
		for (i = 0; i < p->nevents; i++)
			all_user &= p->events[i].exclude_kernel;
		if (!p->kernel)
			snprintf(ks_skip, sizeof(ks_skip), "the session samples user mode only");
		else if (all_user)
			snprintf(ks_skip, sizeof(ks_skip),
				 "every event excludes the kernel (:u): no kernel samples");
		else if ((r = daemon_ksyms_probe("/proc/kallsyms")) == -ENODATA)
			snprintf(ks_skip, sizeof(ks_skip), "/proc/kallsyms shows zero addresses "
				 "(kernel.kptr_restrict, or the daemon lacks CAP_SYSLOG)");
		else if (r < 0)
			snprintf(ks_skip, sizeof(ks_skip), "cannot read /proc/kallsyms: %s",
				 strerror(-r));
	}
	if (detached) {
		time_t now = time(NULL);
		struct tm tm;

		if (p->command) {
			reply_error(c, id, -EINVAL, "a detached session cannot hold a command");
			goto out;
		}
		gmtime_r(&now, &tm);
		(void)mkdir(cfg.state_dir, 0750);
		snprintf(path, sizeof(path), "%s/session-%d-%04d%02d%02dT%02d%02d%02dZ.pmclog",
			 cfg.state_dir, next_session_id, tm.tm_year + 1900, tm.tm_mon + 1,
			 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
		p->out_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0640);
		if (p->out_fd < 0) {
			r = -errno;
			reply_error(c, id, r, "cannot create '%s' in the state directory: %s", path,
				    strerror(-r));
			goto out;
		}
		made_log = true;
		if (ks_want && !ks_skip[0]) {
			snprintf(ks_path, sizeof(ks_path), "%s.kallsyms", path);
			p->ks_fd = open(ks_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
					0640);
			if (p->ks_fd < 0) {
				r = -errno;
				reply_error(c, id, r, "cannot create '%s' in the state directory: %s",
					    ks_path, strerror(-r));
				goto out;
			}
			made_ks = true;
		}
	} else {
		size_t take = ks_fd ? 2 : 1;

		p->out_fd = c->fds[0];
		if (ks_fd)
			p->ks_fd = c->fds[1];
		memmove(c->fds, c->fds + take, (c->nfds - take) * sizeof(int));
		c->nfds -= take;
		if (ks_skip[0] && p->ks_fd >= 0) {
			/* Skipped: the client removes its empty file when the reply says so. */
			close(p->ks_fd);
			p->ks_fd = -1;
		}
	}

	r = session__start(p, next_session_id, err, sizeof(err), &s);
	if (r < 0) {
		reply_error(c, id, r, "%s", err);
		goto out;
	}
	started = true; /* the files in the state directory are the session's now */
	next_session_id++;
	s->uid = c->uid;
	s->owner = detached ? NULL : c; /* a detached session outlives its client */
	snprintf(s->path, sizeof(s->path), "%s", path);
	snprintf(s->ks_path, sizeof(s->ks_path), "%s", ks_path);
	snprintf(s->ks_skip, sizeof(s->ks_skip), "%s", ks_skip);
	s->depth_note = depth_note;
	sessions[nsessions++] = s;
	{
		struct epoll_event e = { .events = EPOLLIN, .data.ptr = s };

		(void)epoll_ctl(epfd, EPOLL_CTL_ADD, s->done_efd, &e);
	}
	log_info("session %d: started by uid %u: %zu events on %zu cpus%s", s->id, c->uid,
		 p->nevents, s->ncoll, p->npids ? " (per process)" : "");
	{
		json_t *rep = reply_ok(id);

		json_object_set_new(rep, "session", json_integer(s->id));
		json_object_set_new(rep, "ncpus", json_integer((json_int_t)s->ncoll));
		if (detached)
			json_object_set_new(rep, "path", json_string(path));
		if (depth_note)
			json_object_set_new(rep, "note",
					    json_sprintf("call chain depth capped at %u "
							 "(kernel.perf_event_max_stack)", depth_note));
		if (ks_want) {
			json_object_set_new(rep, "kallsyms", json_boolean(!ks_skip[0]));
			if (ks_skip[0])
				json_object_set_new(rep, "kallsyms_reason", json_string(ks_skip));
			if (ks_path[0])
				json_object_set_new(rep, "kallsyms_path", json_string(ks_path));
		}
		client_send(c, rep);
	}
out:
	if (!started) {
		/* The session did not start: leave no empty files of ours behind. */
		if (made_log)
			(void)unlink(path);
		if (made_ks)
			(void)unlink(ks_path);
	}
	if (p->ks_fd >= 0)
		close(p->ks_fd);
	if (p->out_fd >= 0)
		close(p->out_fd);
	free(p);
}

static void cmd_stop(struct client *c, json_int_t id, json_t *args)
{
	json_t *v = json_object_get(args, "session"), *rep;
	struct session *s;

	if (json_object_size(args) != 1 || !json_is_integer(v)) {
		reply_error(c, id, -EINVAL, "stop: needs exactly {\"session\": ID}");
		return;
	}
	s = session_find((int)json_integer_value(v));
	if (!s || (!is_admin(c) && s->uid != c->uid)) {
		reply_error(c, id, -ENOENT, "no session %" JSON_INTEGER_FORMAT, json_integer_value(v));
		return;
	}
	session__stop(s);
	rep = reply_ok(id);
	json_object_set_new(rep, "status", session_json(s));
	log_info("session %d: stopped: %" PRIu64 " samples, %" PRIu64 " lost", s->id,
		 s->stats.samples, s->stats.lost);
	session_remove(s);
	client_send(c, rep);
}

static void cmd_status(struct client *c, json_int_t id, json_t *args)
{
	json_t *v = json_object_get(args, "session"), *rep, *arr = json_array();

	if (json_object_size(args) > (v ? 1u : 0u) || (v && !json_is_integer(v))) {
		json_decref(arr);
		reply_error(c, id, -EINVAL, "status: takes only an optional {\"session\": ID}");
		return;
	}
	for (size_t i = 0; i < nsessions; i++) {
		struct session *s = sessions[i];

		if (v && s->id != json_integer_value(v))
			continue;
		if (!is_admin(c) && s->uid != c->uid)
			continue;
		json_array_append_new(arr, session_json(s));
	}
	if (v && json_array_size(arr) == 0) {
		json_decref(arr);
		reply_error(c, id, -ENOENT, "no session %" JSON_INTEGER_FORMAT, json_integer_value(v));
		return;
	}
	rep = reply_ok(id);
	json_object_set_new(rep, "sessions", arr);
	client_send(c, rep);
}

static void cmd_events(struct client *c, json_int_t id)
{
	struct coll_pmu *pmus = NULL;
	size_t n = 0;
	json_t *rep = reply_ok(id), *gen = json_array(), *arr = json_array();
	const char *const *g = coll_event_generic_names();

	for (; g && *g; g++)
		json_array_append_new(gen, json_string(*g));
	if (coll_pmu_list(getenv("HWPMCD_SYSFS_ROOT"), &pmus, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			json_t *o = json_object(), *f = json_object(), *a = json_object();

			for (size_t j = 0; j < pmus[i].nformats; j++)
				json_object_set_new(f, pmus[i].formats[j].name,
						    json_string(pmus[i].formats[j].spec));
			for (size_t j = 0; j < pmus[i].naliases; j++)
				json_object_set_new(a, pmus[i].aliases[j].name,
						    json_string(pmus[i].aliases[j].terms));
			json_object_set_new(o, "name", json_string(pmus[i].name));
			json_object_set_new(o, "type", json_integer(pmus[i].type));
			json_object_set_new(o, "formats", f);
			json_object_set_new(o, "aliases", a);
			json_array_append_new(arr, o);
		}
		coll_pmu_list_free(pmus, n);
	}
	json_object_set_new(rep, "generic", gen);
	json_object_set_new(rep, "pmus", arr);
	json_object_set_new(rep, "max_sample_rate", json_integer((json_int_t)coll_max_sample_rate()));
	client_send(c, rep);
}

static void handle_line(struct client *c, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *req = json_loadb(line, len, 0, &jerr), *args = NULL;
	json_int_t id = -1;
	const char *cmd = NULL;

	if (!req) {
		reply_error(c, -1, -EPROTO, "malformed JSON: %s (column %d)", jerr.text, jerr.column);
		return;
	}
	if (json_unpack_ex(req, &jerr, JSON_STRICT, "{s:I, s:s, s?o}", "id", &id, "cmd", &cmd,
			   "args", &args) < 0) {
		json_t *jid = json_object_get(req, "id");

		reply_error(c, json_is_integer(jid) ? json_integer_value(jid) : -1, -EINVAL,
			    "bad request: %s (a request is {\"id\": N, \"cmd\": NAME, \"args\": {...}})",
			    jerr.text);
		json_decref(req);
		return;
	}
	if (args && !json_is_object(args)) {
		reply_error(c, id, -EINVAL, "'args' must be an object");
	} else {
		json_t *empty = json_object();

		if (!args)
			args = empty;
		if (strcmp(cmd, CTL_CMD_HELLO) == 0) {
			json_t *rep = reply_ok(id);

			json_object_set_new(rep, "version", json_integer(CTL_PROTOCOL_VERSION));
			json_object_set_new(rep, "daemon", json_string("hwpmcd " HWPMCD_VERSION));
			json_object_set_new(rep, "commands",
					    json_pack("[ssssss]", CTL_CMD_HELLO, CTL_CMD_EVENTS,
						      CTL_CMD_START, CTL_CMD_STOP, CTL_CMD_STATUS,
						      CTL_CMD_SESSIONS));
			json_object_set_new(rep, "max_sample_rate",
					    json_integer((json_int_t)coll_max_sample_rate()));
			json_object_set_new(rep, "max_stack", json_integer(coll_max_stack()));
			client_send(c, rep);
		} else if (strcmp(cmd, CTL_CMD_START) == 0) {
			cmd_start(c, id, args);
		} else if (strcmp(cmd, CTL_CMD_STOP) == 0) {
			cmd_stop(c, id, args);
		} else if (strcmp(cmd, CTL_CMD_STATUS) == 0 || strcmp(cmd, CTL_CMD_SESSIONS) == 0) {
			cmd_status(c, id, args);
		} else if (strcmp(cmd, CTL_CMD_EVENTS) == 0) {
			cmd_events(c, id);
		} else {
			reply_error(c, id, -EINVAL, "unknown command '%s'", cmd);
		}
		json_decref(empty);
	}
	json_decref(req);
}

/* ---- clients ---- */

static void client_free(struct client *c)
{
	struct client **pp;

	/* Its sessions end with it: each log gets its CLOSELOG. */
	for (size_t i = 0; i < nsessions;) {
		if (sessions[i]->owner == c) {
			log_info("session %d: its client went away; closing the session",
				 sessions[i]->id);
			session_remove(sessions[i]);
		} else {
			i++;
		}
	}
	for (pp = &clients; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	for (size_t i = 0; i < c->nfds; i++)
		close(c->fds[i]);
	(void)epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->buf);
	free(c);
	nclients--;
}

static void client_accept(void)
{
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct client *c;
	struct epoll_event e = { .events = EPOLLIN };

	if (fd < 0)
		return;
	if (nclients >= MAX_CLIENTS || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		static const char msg[] = "{\"id\":null,\"ok\":false,\"error\":{\"errno\":\"EBUSY\","
					  "\"message\":\"too many clients\"}}\n";

		(void)send(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->buf = malloc(CTL_MESSAGE_MAX + 1))) {
		free(c);
		close(fd);
		return;
	}
	c->fd = fd;
	c->uid = cred.uid;
	c->gid = cred.gid;
	c->pid = cred.pid;
	c->next = clients;
	clients = c;
	nclients++;
	e.data.ptr = c;
	(void)epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e);
}

static void client_read(struct client *c)
{
	char cbuf[CMSG_SPACE(sizeof(int) * CLIENT_MAX_FDS)];
	struct iovec iov = { .iov_base = c->buf + c->len, .iov_len = CTL_MESSAGE_MAX - c->len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	ssize_t n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	struct cmsghdr *cm;
	char *nl;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	for (cm = CMSG_FIRSTHDR(&mh); n > 0 && cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			int *fds = (int *)(void *)CMSG_DATA(cm);

			for (size_t i = 0; i < k; i++) {
				if (c->nfds < CLIENT_MAX_FDS)
					c->fds[c->nfds++] = fds[i];
				else
					close(fds[i]);
			}
		}
	}
	if (n <= 0) {
		client_free(c);
		return;
	}
	c->len += (size_t)n;
	while ((nl = memchr(c->buf, '\n', c->len))) {
		size_t line = (size_t)(nl - c->buf);

		if (c->discarding)
			c->discarding = false;
		else if (line > 0)
			handle_line(c, c->buf, line);
		/* handle_line may not free the client: clients are freed only on read EOF. */
		memmove(c->buf, nl + 1, c->len - line - 1);
		c->len -= line + 1;
	}
	if (c->len == CTL_MESSAGE_MAX) {
		if (!c->discarding)
			reply_error(c, -1, -EMSGSIZE, "message longer than %d bytes; skipped",
				    CTL_MESSAGE_MAX);
		c->discarding = true;
		c->len = 0;
	}
}

static void session_done(struct session *s)
{
	uint64_t v;
	struct client *c;

	(void)!read(s->done_efd, &v, sizeof(v));
	(void)epoll_ctl(epfd, EPOLL_CTL_DEL, s->done_efd, NULL);
	session__stop(s); /* joins the finished worker */
	log_info("session %d: ended: %s%s%s", s->id,
		 session_state_name(__atomic_load_n(&s->state, __ATOMIC_ACQUIRE)),
		 s->error ? ": " : "", s->error ? s->error_msg : "");
	for (c = clients; c; c = c->next) {
		if (c == s->owner) {
			json_t *ev = json_pack("{s:s,s:o}", "event", CTL_EVENT_SESSION_END, "status",
					       session_json(s));

			client_send(c, ev);
		}
	}
}

/* ---- setup ---- */

static int setup_socket(void)
{
	const char *lfds = getenv("LISTEN_FDS"), *lpid = getenv("LISTEN_PID");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, r;

	if (lfds && lpid && atoi(lpid) == (int)getpid() && atoi(lfds) >= 1) {
		struct stat st;
		int acc = 0;
		socklen_t alen = sizeof(acc);

		/* Socket activation: the socket is fd 3 (SD_LISTEN_FDS_START). */
		fd = 3;
		if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) ||
		    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &alen) < 0 || !acc)
			return log_error_errno(-ENOTSOCK, "LISTEN_FDS=%s: fd 3 is not a listening "
					       "socket", lfds);
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
		(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		unsetenv("LISTEN_FDS");
		unsetenv("LISTEN_PID");
		unsetenv("LISTEN_FDNAMES");
		listen_fd = fd;
		return 0;
	}
	if (strlen(cfg.socket_path) >= sizeof(sa.sun_path))
		return log_error_errno(-ENAMETOOLONG, "socket path '%s'", cfg.socket_path);
	memcpy(sa.sun_path, cfg.socket_path, strlen(cfg.socket_path));
	{
		char dir[sizeof(cfg.socket_path)], *slash;

		snprintf(dir, sizeof(dir), "%s", cfg.socket_path);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			(void)mkdir(dir, 0755);
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return log_error_errno(-errno, "socket");
	(void)unlink(cfg.socket_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(fd);
		return log_error_errno(r, "bind '%s'", cfg.socket_path);
	}
	(void)chmod(cfg.socket_path, cfg.socket_mode);
	if (listen(fd, 64) < 0) {
		r = -errno;
		close(fd);
		return log_error_errno(r, "listen");
	}
	listen_fd = fd;
	listen_owned = true;
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hwpmcd [--socket PATH] [--config FILE] [--state-dir DIR] [--foreground]\n"
		"\n"
		"The hwpmcd profiling daemon: samples CPUs or processes with perf_event_open\n"
		"for its clients ('hwpmc record', 'hwpmc status', ...) and writes FreeBSD\n"
		"pmclog streams to the fds they pass.  It runs as root, normally under\n"
		"systemd (socket activation supported).\n"
		"\n"
		"  --socket PATH   control socket (default %s, or 'socket' in the config)\n"
		"  --config FILE   configuration (default /etc/hwpmcd/hwpmcd.conf, optional)\n"
		"  --state-dir DIR where detached sessions ('hwpmc start') write (default\n"
		"                  /var/lib/hwpmcd, or 'state_dir' in the config)\n"
		"  --foreground    plain log lines on stderr instead of journald priorities\n"
		"  -h, --help      this text;  --version  the version\n",
		CTL_SOCKET_DEFAULT);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "config", required_argument, NULL, 'c' },
		{ "state-dir", required_argument, NULL, 'D' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct epoll_event e;
	sigset_t mask;
	int opt, sfd, r;
	bool running = true;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 's': arg_socket = optarg; break;
		case 'c': arg_config = optarg; break;
		case 'D': arg_state_dir = optarg; break;
		case 'f': arg_foreground = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("hwpmcd %s\n", HWPMCD_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	log_open("hwpmcd", arg_foreground || isatty(STDERR_FILENO) ? LOG_TARGET_PLAIN
								     : LOG_TARGET_JOURNAL);
	if (config_load(arg_config ? arg_config : "/etc/hwpmcd/hwpmcd.conf", arg_config != NULL) < 0)
		return 1;
	if (arg_socket) {
		if (strlen(arg_socket) >= sizeof(cfg.socket_path)) {
			log_error("--socket '%s' is too long", arg_socket);
			return 2;
		}
		snprintf(cfg.socket_path, sizeof(cfg.socket_path), "%s", arg_socket);
	}
	if (arg_state_dir) {
		if (arg_state_dir[0] != '/' || strlen(arg_state_dir) >= sizeof(cfg.state_dir) - 64) {
			log_error("--state-dir '%s' must be an absolute path", arg_state_dir);
			return 2;
		}
		snprintf(cfg.state_dir, sizeof(cfg.state_dir), "%s", arg_state_dir);
	}
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	/* Blocked before any thread starts, so only the signalfd sees them. */
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || epfd < 0) {
		log_error("signalfd/epoll: %s", strerror(errno));
		return 1;
	}
	if (setup_socket() < 0)
		return 1;
	e.events = EPOLLIN;
	e.data.ptr = &tag_listen;
	epoll_ctl(epfd, EPOLL_CTL_ADD, listen_fd, &e);
	e.data.ptr = &tag_signal;
	epoll_ctl(epfd, EPOLL_CTL_ADD, sfd, &e);
	log_info("listening on %s", listen_owned ? cfg.socket_path : "the socket systemd passed");
	notify("READY=1\nSTATUS=listening");

	while (running) {
		struct epoll_event evs[32];
		int n = epoll_wait(epfd, evs, 32, -1);

		if (n < 0 && errno != EINTR) {
			log_error("epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			void *ptr = evs[i].data.ptr;
			bool is_session = false;

			if (ptr == &tag_listen) {
				client_accept();
				continue;
			}
			if (ptr == &tag_signal) {
				struct signalfd_siginfo si;

				while (read(sfd, &si, sizeof(si)) == sizeof(si))
					if (si.ssi_signo != SIGHUP)
						running = false;
				continue;
			}
			for (size_t k = 0; k < nsessions; k++)
				is_session |= (void *)sessions[k] == ptr;
			if (is_session) {
				session_done(ptr);
				continue;
			}
			/* A client: it may have been freed by an earlier event of this batch. */
			for (struct client *c = clients; c; c = c->next) {
				if ((void *)c == ptr) {
					client_read(c);
					break;
				}
			}
		}
	}
	notify("STOPPING=1\nSTATUS=closing sessions");
	log_info("shutting down: closing %zu sessions", nsessions);
	while (nsessions) {
		/* Close the log, tell its client, then forget it. */
		session__stop(sessions[0]);
		for (struct client *c = clients; c; c = c->next)
			if (c == sessions[0]->owner)
				client_send(c, json_pack("{s:s,s:s,s:o}", "event", CTL_EVENT_SESSION_END,
							 "reason", "the daemon is shutting down",
							 "status", session_json(sessions[0])));
		session_remove(sessions[0]);
	}
	while (clients)
		client_free(clients);
	if (listen_owned)
		(void)unlink(cfg.socket_path);
	close(listen_fd);
	close(sfd);
	close(epfd);
	r = 0;
	return r;
}
