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
 *   `start` request that consumes them (fds no request took are closed); the
 *   daemon never opens a client-named path.  Every client is judged once, at
 *   accept, from SO_PEERCRED + SO_PEERGROUPS (admin or not, daemon-auth.c); a
 *   start's args are validated under that client's limits by
 *   daemon_start_parse() (daemon-request.c), and a non-admin's targets are
 *   checked before the counters open and again, through
 *   session_params.authorize, before anything is enabled or logged
 *   (docs/security.md).  The loop wakes at least every second (or at half the
 *   watchdog interval) to send WATCHDOG=1 and to drop idle clients.

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
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <time.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "daemon-ctl.h"
#include "daemon-int.h"
#include "hwpmcd/common.h"
#include "hwpmcd/ctl-protocol.h"
#include "hwpmcd/log.h"

#define HWPMCD_CONFIG_DEFAULT "/etc/hwpmcd/hwpmcd.conf"

struct daemon_config daemon_cfg;
int daemon_epfd = -1;
static int listen_fd = -1;
/*
 * accept4() failed for want of fds or memory: the listening socket is disarmed
 * until then (daemon_mono_ns), or the level-triggered loop would retry it without pause.
 */
static uint64_t accept_paused_until;
static uint64_t accept_warned_at;
#define ACCEPT_PAUSE_NS 200000000ull
bool daemon_shutting_down; /* SIGTERM: every session is being closed */
static bool listen_owned; /* we created the socket file (not socket activation) */
static struct daemon_client *clients;
static size_t nclients;
struct session *daemon_sessions[DAEMON_SESSIONS_MAX];
size_t daemon_nsessions;
int daemon_next_session_id = 1;
static bool arg_foreground;
static bool arg_check_config;
static const char *arg_config;
static const char *arg_socket;
static const char *arg_state_dir;
static const char *arg_profiles_dir;

/*
 * Always-on profiles (daemon-profile.c): one slot per profile file of the last
 * load, with the session that runs it.  A slot whose profile changed waits
 * (pending) until the session of its old definition has ended, so that two
 * sessions never write one directory.
 */
struct profile_slot {
	struct daemon_profile def;
	struct session *s; /* its session (running, stopping or ended), or NULL */
	bool pending;	   /* to start once no session of this name is left */
	bool kept_old;	   /* its file was refused on reload: the old definition runs on */
	char problem[1024]; /* why it is not running */
};
static struct profile_slot pslots[DAEMON_PROFILES_MAX];
static size_t npslots;
char daemon_profiles_dir[512] = DAEMON_PROFILES_DIR_DEFAULT;
static char profiles_problems[8192]; /* the last load's refused files */

/* epoll tags: pointers to these mark what an event is for. */
static char tag_listen, tag_signal, tag_closer;

/* ---- systemd: notification, watchdog, the journal (libsystemd) ---- */

static void notify(const char *msg)
{
	/* No $NOTIFY_SOCKET: not under systemd (or a test's harness), nothing to do. */
	(void)sd_notify(0, msg);
}

/* $WATCHDOG_USEC when it is meant for us ($WATCHDOG_PID unset or ours), else 0. */
static uint64_t watchdog_usec(void)
{
	uint64_t usec = 0;

	return sd_watchdog_enabled(0, &usec) > 0 ? usec : 0;
}

/*
 * Under systemd ($JOURNAL_STREAM names our stderr) every log line goes to the
 * journal with structured fields: PRIORITY, and from the context that starts a
 * message (STYLE.md 6) HWPMCD_SESSION for "session N: ...", HWPMCD_PROFILE for
 * "profile NAME: ..." and HWPMCD_UID for "uid N: ...", so that
 * `journalctl HWPMCD_PROFILE=web` shows one profile's story.  A journal that
 * refuses the entry gets the line on stderr as before.
 */
static void journal_hook(int prio, const char *msg, void *userdata)
{
	char field[96] = "";
	const char *rest;
	unsigned long v;
	int n = 0, r;

	(void)userdata;
	if (sscanf(msg, "session %lu:%n", &v, &n) == 1 && n > 0)
		snprintf(field, sizeof(field), "HWPMCD_SESSION=%lu", v);
	else if (strncmp(msg, "profile ", 8) == 0 && (rest = strchr(msg + 8, ':')) &&
		 rest - (msg + 8) < DAEMON_PROFILE_NAME_MAX && !memchr(msg + 8, ' ', (size_t)(rest - (msg + 8))))
		snprintf(field, sizeof(field), "HWPMCD_PROFILE=%.*s", (int)(rest - (msg + 8)), msg + 8);
	else if (sscanf(msg, "uid %lu:%n", &v, &n) == 1 && n > 0)
		snprintf(field, sizeof(field), "HWPMCD_UID=%lu", v);
	if (field[0])
		r = sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", prio, "%s", field,
				    "SYSLOG_IDENTIFIER=hwpmcd", NULL);
	else
		r = sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", prio,
				    "SYSLOG_IDENTIFIER=hwpmcd", NULL);
	if (r < 0)
		fprintf(stderr, "<%d>%s\n", prio, msg);
}

/* Is our stderr the journal's stream ($JOURNAL_STREAM = "DEV:INODE")? */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
	       (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/* ---- the loop's clock ---- */

uint64_t daemon_mono_ns(void)
{
	return util_now_ns(CLOCK_MONOTONIC);
}

/* ---- sessions ---- */

static struct session *session_find(int id)
{
	for (size_t i = 0; i < daemon_nsessions; i++)
		if (daemon_sessions[i]->id == id)
			return daemon_sessions[i];
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

/* What a client should know about how its session differs from what it asked. */
static const char *session_note(const struct session *s, char *buf, size_t size)
{
	int n = 0;

	buf[0] = '\0';
	if (s->depth_note)
		n = snprintf(buf, size, "call chain depth capped at %u (kernel.perf_event_max_stack)",
			     s->depth_note);
	if (s->user_forced && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "%suser mode only: uid %u is not in group '%s', "
			 "so its events exclude the kernel", n ? "; " : "", (unsigned)s->uid,
			 daemon_cfg.admin_group);
	return buf;
}

/* What a profile's worker says of its files (daemon-int.h, struct session_profile). */
static json_t *profile_run_json(struct session *s)
{
	struct session_profile *pf = s->prof;
	json_t *o = json_object();
	char path[sizeof(pf->path)], note[sizeof(pf->note)];

	pthread_mutex_lock(&pf->lock);
	snprintf(path, sizeof(path), "%s", pf->path);
	snprintf(note, sizeof(note), "%s", pf->note);
	pthread_mutex_unlock(&pf->lock);
#define PL(f) json_integer((json_int_t)__atomic_load_n(&pf->f, __ATOMIC_RELAXED))
	json_object_set_new(o, "name", json_string(pf->def.name));
	json_object_set_new(o, "dir", json_string(pf->dir));
	json_object_set_new(o, "file", json_string(path));
	json_object_set_new(o, "paused", json_boolean(__atomic_load_n(&pf->paused,
								      __ATOMIC_RELAXED)));
	json_object_set_new(o, "files", PL(files));
	json_object_set_new(o, "rotations", PL(rotations));
	json_object_set_new(o, "pauses", PL(pauses));
	json_object_set_new(o, "paused_samples", PL(paused_samples));
	json_object_set_new(o, "disk_bytes", PL(disk_bytes));
	json_object_set_new(o, "disk_files", PL(disk_files));
	json_object_set_new(o, "deleted_files", PL(deleted_files));
	if (note[0])
		json_object_set_new(o, "note", json_string(note));
	if (pf->def.push_url[0]) {
		json_t *pu = daemon_push_status(pf->def.name);

		if (pu) {
			json_object_set_new(pu, "url", json_string(pf->def.push_url));
			json_object_set_new(pu, "format", json_string(pf->def.push_folded ? "folded"
										  : "pprof"));
			json_object_set_new(o, "push", pu);
		}
	}
	if (pf->def.cpu_budget_percent) {
		json_t *b = json_object();

		json_object_set_new(b, "percent", json_integer(pf->def.cpu_budget_percent));
		json_object_set_new(b, "rate_hz", PL(rate_hz));
		json_object_set_new(b, "max_hz", json_integer((json_int_t)s->p.cfg.freq));
		json_object_set_new(b, "sample_cost_ns", PL(cost_ns));
		json_object_set_new(b, "used_percent",
				    json_real((double)__atomic_load_n(&pf->used_ppm,
								      __ATOMIC_RELAXED) / 1e4));
		json_object_set_new(b, "side_percent",
				    json_real((double)__atomic_load_n(&pf->side_ppm,
								      __ATOMIC_RELAXED) / 1e4));
		json_object_set_new(b, "rate_changes", PL(rate_changes));
		json_object_set_new(o, "budget", b);
	}
#undef PL
	return o;
}

json_t *session_json(struct session *s)
{
	json_t *o = json_object(), *st = json_object(), *types = json_object(), *cpus = json_array();
	int state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
	uint64_t end =
		state == SESSION_DONE || state == SESSION_ERROR ? s->end_ns : daemon_mono_ns();
	json_object_set_new(o, "session", json_integer(s->id));
	json_object_set_new(o, "uid", json_integer(s->uid));
	json_object_set_new(o, "state", json_string(session_state_name(state)));
	json_object_set_new(o, "detached", json_boolean(s->detached));
	if (s->path[0])
		json_object_set_new(o, "path", json_string(s->path));
	if (__atomic_load_n(&s->error, __ATOMIC_ACQUIRE))
		json_object_set_new(o, "error", json_pack("{s:s,s:s}", "errno",
							  daemon_errno_name(s->error), "message",
							  s->error_msg));
	json_object_set_new(o, "seconds", json_real(s->start_ns && end > s->start_ns
						    ? (double)(end - s->start_ns) / 1e9 : 0.0));
#define ST(f) json_object_set_new(st, #f, json_integer((json_int_t)__atomic_load_n(&s->stats.f, __ATOMIC_RELAXED)))
	ST(samples);
	ST(lost);
	ST(throttled);
	ST(no_pcs);
	ST(reordered);
	ST(unknown_id);
	ST(dropped);
#undef ST
	json_object_set_new(st, "cpu_seconds",
			    json_real((double)__atomic_load_n(&s->stats.cpu_ns, __ATOMIC_RELAXED) / 1e9));
	json_object_set_new(st, "bytes", json_integer((json_int_t)session__bytes(s)));
	if (s->p.cfg.callgraph == COLL_CG_DWARF) {
		/* Samples by why their user unwinding stopped, and the ELF cache. */
		json_t *u = json_object();

#define UL(f) (json_int_t) __atomic_load_n(&s->stats.f, __ATOMIC_RELAXED)
		json_object_set_new(u, "samples", json_integer(UL(unwound)));
		for (int i = 0; i < UNWIND_OUTCOME_MAX; i++)
			json_object_set_new(u, unwind_outcome_name((enum unwind_outcome)i),
					    json_integer(UL(unwind[i])));
		json_object_set_new(u, "fp_steps", json_integer(UL(fp_steps)));
		json_object_set_new(u, "epilogue_regs", json_integer(UL(epilogue_regs)));
		json_object_set_new(u, "own_tables", json_integer(UL(own_tables)));
		json_object_set_new(u, "elf_opened", json_integer(UL(elf_opened)));
		json_object_set_new(u, "elf_evicted", json_integer(UL(elf_evicted)));
		json_object_set_new(u, "elf_bytes", json_integer(UL(elf_bytes)));
		json_object_set_new(u, "elf_too_big", json_integer(UL(elf_too_big)));
		json_object_set_new(u, "elf_reads", json_integer(UL(elf_reads)));
		json_object_set_new(u, "elf_dropped", json_integer(UL(elf_dropped)));
#undef UL
		json_object_set_new(st, "unwind", u);
	}
	if (s->p.filter.on) {
		json_t *fo = json_object();

		/* The worker replaces it when a unit's cgroup changes (filter_follow()). */
		pthread_mutex_lock(&s->filt_lock);
		json_object_set_new(fo, "text", json_string(s->p.filter.text));
		pthread_mutex_unlock(&s->filt_lock);
		json_object_set_new(fo, "kept", json_integer((json_int_t)__atomic_load_n(
							&s->stats.filt_kept, __ATOMIC_RELAXED)));
		json_object_set_new(fo, "dropped", json_integer((json_int_t)__atomic_load_n(
							   &s->stats.filt_dropped, __ATOMIC_RELAXED)));
		json_object_set_new(st, "filter", fo);
	}
	if (state == SESSION_DONE || state == SESSION_ERROR) {
		const struct plog_writer_stats *ws = plog_writer__stats(s->w);
		const struct maplog_stats *ms = &s->ml_stats;

		for (uint32_t t = 0; t < PLOG_TYPE_MAX; t++)
			if (ws->records[t])
				json_object_set_new(types, plog_type_name(t),
						    json_integer((json_int_t)ws->records[t]));
		json_object_set_new(st, "elf_fallback", json_integer((json_int_t)ms->elf_fallback));
		json_object_set_new(st, "anon_exec", json_integer((json_int_t)ms->anon_exec));
		json_object_set_new(st, "path_too_long",
				    json_integer((json_int_t)ms->path_too_long));
		json_object_set_new(st, "scan_refused", json_integer((json_int_t)ms->scan_refused));
		if (s->gated) {
			json_object_set_new(st, "unvouched", json_integer((json_int_t)ms->unvouched));
		} else {
			json_object_set_new(st, "adopted", json_integer((json_int_t)ms->adopted));
			json_object_set_new(st, "adopt_refused",
					    json_integer((json_int_t)ms->adopt_refused));
			json_object_set_new(st, "adopt_deferred",
					    json_integer((json_int_t)ms->adopt_deferred));
		}
	}
	for (size_t i = 0; i < s->ncpus; i++) {
		const struct session_cpu_stats *cs = &s->cstats[i];

#define L(f) (json_int_t) __atomic_load_n(&cs->f, __ATOMIC_RELAXED)
		json_array_append_new(cpus, json_pack("{s:i,s:I,s:I,s:I,s:I,s:I}", "cpu",
						      s->cpus[i], "samples",
						      L(samples), "lost", L(lost), "throttled",
						      L(throttled), "bad", L(bad), "wrapped",
						      L(wrapped)));
#undef L
	}
	json_object_set_new(o, "stats", st);
	json_object_set_new(o, "records", types);
	json_object_set_new(o, "cpus", cpus);
	json_object_set_new(o, "ncpus", json_integer((json_int_t)s->ncpus));
	if (s->depth_note || s->user_forced) {
		char note[256];

		json_object_set_new(o, "note", json_string(session_note(s, note, sizeof(note))));
	}
	if (s->ks_want || s->ks_skip[0] || s->ks_path[0])
		json_object_set_new(o, "kallsyms", session_ks_json(s, state));
	if (s->ks_path[0])
		json_object_set_new(o, "kallsyms_path", json_string(s->ks_path));
	if (s->prof)
		json_object_set_new(o, "profile", profile_run_json(s));
	return o;
}

void session_remove(struct session *s)
{
	if (s->prof)
		daemon_profile_session_gone(s);
	for (size_t i = 0; i < daemon_nsessions; i++) {
		if (daemon_sessions[i] == s) {
			(void)epoll_ctl(daemon_epfd, EPOLL_CTL_DEL, s->done_efd, NULL);
			daemon_sessions[i] = daemon_sessions[--daemon_nsessions];
			break;
		}
	}
	session__free(s);
}

/* ---- commands ---- */

/* Sessions of @uid, and the ring memory of every session, for the limits. */
static size_t sessions_of(uid_t uid)
{
	size_t n = 0;

	for (size_t i = 0; i < daemon_nsessions; i++)
		n += daemon_sessions[i]->uid == uid;
	return n;
}

static uint64_t ring_bytes_all(void)
{
	uint64_t b = 0;

	for (size_t i = 0; i < daemon_nsessions; i++)
		b += (uint64_t)daemon_sessions[i]->ncpus * daemon_ring_bytes(daemon_sessions[i]->p.cfg.ring_pages);
	return b;
}

/*
 * The kernel's vDSO image beside a detached session's log (LOG.vdso), for the
 * report to name "[vdso]" functions: 8 KiB into the daemon's own directory, best
 * effort (a failure is logged; the log is complete without it).
 */
void daemon_write_vdso_beside(const char *log)
{
	char path[sizeof(daemon_cfg.state_dir) + 128];
	int r;

	if (snprintf(path, sizeof(path), "%s.vdso", log) >= (int)sizeof(path))
		return;
	r = maplog_vdso_save(path, false, 0640);
	if (r < 0 && r != -ENOENT)
		log_warn_errno(r, "'%s': cannot save the vDSO image, ignoring", path);
}

/*
 * The state directory, made if missing (0750): it must be a real directory of
 * ours that nobody else may write, or a user could plant a link or a file
 * where a detached session writes (the files are also opened O_EXCL|O_NOFOLLOW).
 */

int daemon_state_dir_check(char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(daemon_cfg.state_dir, 0750) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot make the state directory '%s': %s",
			 daemon_cfg.state_dir, strerror(errno));
		return -errno;
	}
	if (lstat(daemon_cfg.state_dir, &st) < 0) {
		snprintf(err, errlen, "state directory '%s': %s", daemon_cfg.state_dir,
			 strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(err, errlen, "the state directory '%s' is %s; refusing to write there "
			 "(it must be a directory of uid %u that only it may write)",
			 daemon_cfg.state_dir,
			 !S_ISDIR(st.st_mode) ? "not a directory" : st.st_uid != geteuid()
			 ? "owned by another user" : "writable by group or others",
			 (unsigned)geteuid());
		return -EACCES;
	}
	return 0;
}

/*
 * A filter's cgroups and units as cgroup ids (a start's or a filter request's):
 * bounded lookups below the cgroup v2 mount.  0, or -errno with @err.
 */
static int filter_resolve(struct daemon_filter *f, char *err, size_t errlen)
{
	char root[512];

	if (f->ncgroups + f->nunits == 0)
		return 0;
	if (daemon_cgroup2_root("/proc/self/mounts", root, sizeof(root)) < 0) {
		snprintf(err, errlen, "filter: no cgroup v2 hierarchy is mounted here, so cgroups "
			 "and units cannot be filtered on");
		return -EOPNOTSUPP;
	}
	return daemon_filter_resolve(f, root, true, err, errlen);
}

/*
 * What every new session is admitted against, a client's or a profile's: its
 * filter's cgroups must exist (resolved here), the daemon's session count, and its
 * ring memory with this session's rings on top of every running one's.  Sets
 * @cpus/@ret_ncpus to the CPUs it will count on.  0, or -errno with @err.
 */
int session_admit(struct session_params *p, const struct daemon_start *st,
			 int *cpus, size_t *ret_ncpus, char *err, size_t errlen)
{
	size_t ncpus = 0;
	int r;

	if ((r = filter_resolve(&p->filter, err, errlen)) < 0)
		return r;
	if (daemon_nsessions >= daemon_cfg.max_sessions) {
		snprintf(err, errlen, "the daemon runs %zu sessions, its maximum (max_sessions)",
			 daemon_nsessions);
		return -EBUSY;
	}
	if (p->ncpus) {
		memcpy(cpus, p->cpus, p->ncpus * sizeof(*cpus));
		ncpus = p->ncpus;
	} else if ((r = coll_online_cpus(cpus, DAEMON_MAX_CPUS, &ncpus)) < 0) {
		snprintf(err, errlen, "cannot read the online CPUs: %s", strerror(-r));
		return r;
	}
	if (ring_bytes_all() + ncpus * st->ring_bytes > ((uint64_t)daemon_cfg.max_ring_mb << 20)) {
		snprintf(err, errlen, "the rings of this session (%zu CPUs x %zu KiB) would take "
			 "the daemon's ring memory above %u MiB (max_ring_mb); ask for fewer "
			 "ring_pages or stop a session", ncpus, st->ring_bytes >> 10,
			 daemon_cfg.max_ring_mb);
		return -ENOMEM;
	}
	*ret_ncpus = ncpus;
	return 0;
}

/* A launched session joins the list, and main hears when its worker is done. */
void session_register(struct session *s)
{
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = s };

	daemon_next_session_id++;
	daemon_sessions[daemon_nsessions++] = s;
	(void)epoll_ctl(daemon_epfd, EPOLL_CTL_ADD, s->done_efd, &e);
}

static void cmd_start(struct daemon_client *c, json_int_t id, json_t *args)
{
	struct session_params *p = calloc(1, sizeof(*p));
	struct daemon_start st;
	struct session *s = NULL;
	size_t i, ncpus = 0;
	char err[1024];
	char path[sizeof(daemon_cfg.state_dir) + 64] = "";
	char ks_path[sizeof(path) + 16] = "", ks_skip[160] = "";
	bool all_user = true, started = false;
	bool made_log = false, made_ks = false; /* files we created in the state directory */
	int r, cpus[DAEMON_MAX_CPUS];

	if (!p) {
		daemon_reply_error(c, id, -ENOMEM, "out of memory");
		daemon_client_drop_fds(c);
		return;
	}
	r = daemon_start_parse(args, &daemon_cfg, &c->who, coll_max_sample_rate(), coll_max_stack(),
			       p, &st, err, sizeof(err));
	if (r < 0) {
		daemon_reply_error(c, id, r, "%s", err);
		goto out;
	}
	if (daemon_nsessions < daemon_cfg.max_sessions && !daemon_is_admin(c) &&
	    sessions_of(c->who.uid) >= daemon_cfg.user_max_sessions) {
		daemon_reply_error(c, id, -EBUSY,
				   "uid %u runs %zu sessions, the most for users outside "
				   "group '%s' (user_max_sessions)",
				   (unsigned)c->who.uid, sessions_of(c->who.uid),
				   daemon_cfg.admin_group);
		goto out;
	}
	r = session_admit(p, &st, cpus, &ncpus, err, sizeof(err));
	if (r < 0) {
		daemon_reply_error(c, id, r, "%s", err);
		goto out;
	}
	if (!st.detached && c->nfds == 0) {
		daemon_reply_error(c, id, -EBADF,
				   "no output configured: no fd came with the request");
		goto out;
	}
	if (st.ks_fd && c->nfds < 2) {
		daemon_reply_error(c, id, -EBADF,
				   "'kallsyms': \"fd\" needs a second fd with the request "
				   "(fds in order: log, kallsyms), but only %zu came",
				   c->nfds);
		goto out;
	}
	if (!st.detached && ((r = daemon_check_output_fd(c->fds[0], "log", err, sizeof(err))) < 0 ||
			     (st.ks_fd && (r = daemon_check_output_fd(c->fds[1], "kallsyms", err,
							      sizeof(err))) < 0))) {
		daemon_reply_error(c, id, r, "%s", err);
		goto out;
	}
	if (!daemon_is_admin(c)) {
		for (i = 0; i < p->npids; i++) {
			r = daemon_auth_target("/proc", &c->who, p->pids[i], err, sizeof(err));
			if (r < 0) {
				daemon_reply_error(c, id, r, "%s", err);
				goto out;
			}
		}
	}
	if (st.ks_want) {
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
	if (st.detached) {
		time_t now = time(NULL);
		struct tm tm;

		gmtime_r(&now, &tm);
		r = daemon_state_dir_check(err, sizeof(err));
		if (r < 0) {
			daemon_reply_error(c, id, r, "%s", err);
			goto out;
		}
		snprintf(path, sizeof(path), "%s/session-%d-%04d%02d%02dT%02d%02d%02dZ.pmclog",
			 daemon_cfg.state_dir, daemon_next_session_id, tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
		p->out_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0640);
		if (p->out_fd < 0) {
			r = -errno;
			daemon_reply_error(c, id, r,
					   "cannot create '%s' in the state directory: %s", path,
					   strerror(-r));
			goto out;
		}
		made_log = true;
		daemon_write_vdso_beside(path);
		if (st.ks_want && !ks_skip[0]) {
			snprintf(ks_path, sizeof(ks_path), "%s.kallsyms", path);
			p->ks_fd = open(ks_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
					0640);
			if (p->ks_fd < 0) {
				r = -errno;
				daemon_reply_error(c, id, r, "cannot create '%s' in the state directory: %s",
						   ks_path, strerror(-r));
				goto out;
			}
			made_ks = true;
		}
	} else {
		size_t take = st.ks_fd ? 2 : 1;

		p->out_fd = c->fds[0];
		if (st.ks_fd)
			p->ks_fd = c->fds[1];
		memmove(c->fds, c->fds + take, (c->nfds - take) * sizeof(int));
		c->nfds -= take;
		if (ks_skip[0] && p->ks_fd >= 0) {
			/* Skipped: the client removes its empty file when the reply says so. */
			daemon_fd_release(p->ks_fd, c->who.uid);
			p->ks_fd = -1;
		}
	}

	r = session__new(p, daemon_next_session_id, cpus, ncpus, &s);
	if (r == 0) {
		r = session__launch(s);
		if (r < 0) {
			session__free(s);
			s = NULL;
		}
	}
	if (r < 0) {
		daemon_reply_error(c, id, r, "cannot start the session: %s", strerror(-r));
		goto out;
	}
	/*
	 * The worker opens the counters, checks the targets again and writes the
	 * log's head; the reply goes out when it says how that went (session_event).
	 */
	started = true; /* the files in the state directory are the session's now */
	s->owner = st.detached ? NULL : c; /* a detached session outlives its client */
	s->detached = st.detached;
	s->ks_want = st.ks_want;
	s->start_client = c;
	s->start_id = id;
	snprintf(s->path, sizeof(s->path), "%s", path);
	snprintf(s->ks_path, sizeof(s->ks_path), "%s", ks_path);
	snprintf(s->ks_skip, sizeof(s->ks_skip), "%s", ks_skip);
	s->depth_note = st.depth_note;
	s->user_forced = st.user_forced;
	session_register(s);
	log_info("session %d: starting for uid %u: %zu events on %zu cpus%s%s", s->id,
		 (unsigned)c->who.uid, s->p.nevents, s->ncpus, s->p.npids ? " (per process)" : "",
		 st.user_forced ? ", user mode only" : "");
out:
	if (!started) {
		/* The session did not start: leave no empty files of ours behind. */
		if (made_log)
			(void)unlink(path);
		if (made_ks)
			(void)unlink(ks_path);
		daemon_client_drop_fds(c);
	}
	if (p->ks_fd >= 0)
		daemon_fd_release(p->ks_fd, c->who.uid);
	if (p->out_fd >= 0)
		daemon_fd_release(p->out_fd, c->who.uid);
	free(p);
}

/* The reply to a start whose worker has opened its counters and written the log's head. */
static json_t *start_reply(struct session *s)
{
	json_t *rep = daemon_reply_ok(s->start_id);
	char note[512];

	json_object_set_new(rep, "session", json_integer(s->id));
	json_object_set_new(rep, "ncpus", json_integer((json_int_t)s->ncpus));
	if (s->detached)
		json_object_set_new(rep, "path", json_string(s->path));
	if (s->depth_note || s->user_forced)
		json_object_set_new(rep, "note", json_string(session_note(s, note, sizeof(note))));
	if (s->ks_want) {
		json_object_set_new(rep, "kallsyms", json_boolean(!s->ks_skip[0]));
		if (s->ks_skip[0])
			json_object_set_new(rep, "kallsyms_reason", json_string(s->ks_skip));
		if (s->ks_path[0])
			json_object_set_new(rep, "kallsyms_path", json_string(s->ks_path));
	}
	return rep;
}

static void cmd_stop(struct daemon_client *c, json_int_t id, json_t *args)
{
	json_t *v = json_object_get(args, "session");
	struct session *s;

	if (json_object_size(args) != 1 || !json_is_integer(v)) {
		daemon_reply_error(c, id, -EINVAL, "stop: needs exactly {\"session\": ID}");
		return;
	}
	s = session_find((int)json_integer_value(v));
	if (!s || (!daemon_is_admin(c) && s->uid != c->who.uid)) {
		daemon_reply_error(c, id, -ENOENT, "no session %" JSON_INTEGER_FORMAT, json_integer_value(v));
		return;
	}
	if (s->stop_client) {
		daemon_reply_error(c, id, -EALREADY,
				   "session %d is being stopped by another request; its "
				   "status follows when it has ended",
				   s->id);
		return;
	}
	/* The reply, with the final status, goes out when the worker has ended (session_event). */
	s->stop_client = c;
	s->stop_id = id;
	s->stop_ns = daemon_mono_ns();
	if (s->ended) {
		session_tell_end(s, s->owner ? "stopped by another client" : NULL, true);
		return;
	}
	session__request_stop(s);
}

/*
 * Replace a running session's in-kernel filter (its owner, or an administrator):
 * atomically for the samples the kernel takes from now on, without stopping the
 * counters.  The work is bounded: at most FILT_VALUES_MAX values of each kind, a
 * bounded cgroup lookup, a map update per value.
 */
static void cmd_filter(struct daemon_client *c, json_int_t id, json_t *args)
{
	json_t *v = json_object_get(args, "session"), *fo = json_object_get(args, "filter");
	struct daemon_filter *f = NULL;
	struct session *s;
	char err[1024];
	int r;

	if (json_object_size(args) != 2 || !json_is_integer(v) || !fo) {
		daemon_reply_error(c, id, -EINVAL,
				   "filter: needs exactly {\"session\": ID, \"filter\": "
				   "{...}}");
		return;
	}
	s = session_find((int)json_integer_value(v));
	if (!s || (!daemon_is_admin(c) && s->uid != c->who.uid)) {
		daemon_reply_error(c, id, -ENOENT, "no session %" JSON_INTEGER_FORMAT, json_integer_value(v));
		return;
	}
	if (!s->p.filter.on) {
		daemon_reply_error(c, id, -EOPNOTSUPP,
				   "session %d was started without a filter; start it "
				   "with one (any filter option; hwpmc filter can then widen it to "
				   "everything with --clear)",
				   s->id);
		return;
	}
	if (!__atomic_load_n(&s->started, __ATOMIC_ACQUIRE) || s->ended) {
		daemon_reply_error(c, id, -EAGAIN, "session %d is not running", s->id);
		return;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		daemon_reply_error(c, id, -ENOMEM, "out of memory");
		return;
	}
	r = daemon_filter_parse(fo, f, err, sizeof(err));
	/* A user's own system-wide session keeps the owner rule, whoever changes it. */
	if (r == 0 && !s->p.who.admin && !s->p.npids)
		r = daemon_filter_owner_rule(f, &daemon_cfg, &s->p.who, err, sizeof(err));
	if (r == 0)
		r = filter_resolve(f, err, sizeof(err));
	if (r < 0) {
		daemon_reply_error(c, id, r, "%s", err);
		free(f);
		return;
	}
	pthread_mutex_lock(&s->filt_lock);
	r = s->filt ? filt__set(s->filt, &f->spec) : -EAGAIN;
	if (r == 0) {
		s->p.filter = *f;
		s->filt_gen++; /* a cgroup lookup the worker began before is stale */
		snprintf(s->filt_mark, sizeof(s->filt_mark), "%s", f->text);
		s->filt_mark_t = daemon_mono_ns();
		__atomic_store_n(&s->filt_mark_pending, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&s->filt_lock);
	if (r < 0) {
		daemon_reply_error(c, id, r,
				   "filter: the kernel's maps refused the change: %s (the "
				   "previous filter holds)",
				   strerror(-r));
	} else {
		json_t *rep = daemon_reply_ok(id);

		json_object_set_new(rep, "filter", json_string(f->text));
		daemon_client_send(c, rep);
		log_info("session %d: filter now '%s' (uid %u)", s->id, f->text,
			 (unsigned)c->who.uid);
	}
	free(f);
}

static void cmd_status(struct daemon_client *c, json_int_t id, json_t *args)
{
	json_t *v = json_object_get(args, "session"), *rep, *arr = json_array();

	if (json_object_size(args) > (v ? 1u : 0u) || (v && !json_is_integer(v))) {
		json_decref(arr);
		daemon_reply_error(c, id, -EINVAL,
				   "status: takes only an optional {\"session\": ID}");
		return;
	}
	for (size_t i = 0; i < daemon_nsessions; i++) {
		struct session *s = daemon_sessions[i];

		if (v && s->id != json_integer_value(v))
			continue;
		if (!daemon_is_admin(c) && s->uid != c->who.uid)
			continue;
		json_array_append_new(arr, session_json(s));
	}
	if (v && json_array_size(arr) == 0) {
		json_decref(arr);
		daemon_reply_error(c, id, -ENOENT, "no session %" JSON_INTEGER_FORMAT, json_integer_value(v));
		return;
	}
	rep = daemon_reply_ok(id);
	json_object_set_new(rep, "sessions", arr);
	daemon_client_send(c, rep);
}

/*
 * The events reply: the PMUs of sysfs (on a large machine thousands of files),
 * read at most once per EVENTS_CACHE_NS however often clients ask.
 */
#define EVENTS_CACHE_NS 10000000000ull
json_t *daemon_events_cache;
static uint64_t events_cache_ns;

static json_t *events_json(void)
{
	struct coll_pmu *pmus = NULL;
	size_t n = 0;
	json_t *rep = json_object(), *gen = json_array(), *arr = json_array();
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
	return rep;
}

static void cmd_events(struct daemon_client *c, json_int_t id)
{
	json_t *rep = daemon_reply_ok(id);
	uint64_t now = daemon_mono_ns();

	if (!daemon_events_cache || now - events_cache_ns >= EVENTS_CACHE_NS) {
		json_decref(daemon_events_cache);
		daemon_events_cache = events_json();
		events_cache_ns = now;
	}
	json_object_update(rep, daemon_events_cache);
	daemon_client_send(c, rep);
}

/* ---- always-on profiles ---- */

/* @path, made if missing (0750): a directory of ours that nobody else may write. */
static int own_dir(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(path, 0750) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot make '%s': %s", path, strerror(errno));
		return -errno;
	}
	if (lstat(path, &st) < 0) {
		snprintf(err, errlen, "'%s': %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(err, errlen, "'%s' is %s; refusing to write there", path,
			 !S_ISDIR(st.st_mode) ? "not a directory" : st.st_uid != geteuid()
			 ? "owned by another user" : "writable by group or others");
		return -EACCES;
	}
	return 0;
}

/* Is a session of profile @name still there (running, stopping, or ended and listed)? */
static struct session *profile_session_of(const char *name)
{
	for (size_t i = 0; i < daemon_nsessions; i++)
		if (daemon_sessions[i]->prof &&
		    strcmp(daemon_sessions[i]->prof->def.name, name) == 0)
			return daemon_sessions[i];
	return NULL;
}

/*
 * Start the session of profile slot @ps: its definition through the start's own
 * checks (as root), the budgets every session counts against, its directory
 * STATE_DIR/profiles/NAME, its first file; the worker does the rest, as for a
 * detached session.  0, or -errno with @err.
 */
static int profile_start(struct profile_slot *ps, char *err, size_t errlen)
{
	const struct daemon_who root = { .uid = 0, .gid = 0, .pid = 0, .admin = true };
	struct session_params *p = calloc(1, sizeof(*p));
	json_t *args = daemon_profile_args(&ps->def);
	struct daemon_start st;
	struct session *s = NULL;
	struct session_profile *pf = calloc(1, sizeof(*pf));
	char dir[sizeof(pf->dir)], path[sizeof(pf->path)];
	int cpus[DAEMON_MAX_CPUS], fd = -1, r;
	size_t ncpus = 0;
	bool all_user = true;
	time_t wall0;

	if (!p || !args || !pf) {
		snprintf(err, errlen, "out of memory");
		r = -ENOMEM;
		goto out;
	}
	r = daemon_start_parse(args, &daemon_cfg, &root, coll_max_sample_rate(), coll_max_stack(),
			       p, &st, err, errlen);
	if (r < 0)
		goto out;
	p->unwind_cache_bytes = (size_t)ps->def.unwind_cache_mb << 20;
	/* A unit that is not running yet (or restarts) is waited for, not refused. */
	p->filter.missing_ok = true;
	if ((r = session_admit(p, &st, cpus, &ncpus, err, errlen)) < 0)
		goto out;
	if ((r = daemon_state_dir_check(err, errlen)) < 0)
		goto out;
	snprintf(dir, sizeof(dir), "%.511s/profiles", daemon_cfg.state_dir);
	if ((r = own_dir(dir, err, errlen)) < 0)
		goto out;
	snprintf(dir, sizeof(dir), "%.511s/profiles/%.63s", daemon_cfg.state_dir, ps->def.name);
	if ((r = own_dir(dir, err, errlen)) < 0)
		goto out;
	for (size_t i = 0; i < p->nevents; i++)
		all_user &= p->events[i].exclude_kernel;
	if (ps->def.push_url[0] && (r = daemon_push_check(ps->def.push_url, err, errlen)) < 0)
		goto out;
	wall0 = time(NULL);
	fd = daemon_profile_open_file(dir, ps->def.name, wall0, path, sizeof(path));
	if (fd < 0) {
		r = fd;
		snprintf(err, errlen, "cannot create a file in '%s': %s", dir, strerror(-r));
		goto out;
	}
	daemon_write_vdso_beside(path);
	p->out_fd = fd;
	p->ks_fd = -1;
	fd = -1;
	r = session__new(p, daemon_next_session_id, cpus, ncpus, &s);
	if (r < 0) {
		snprintf(err, errlen, "cannot start the session: %s", strerror(-r));
		(void)unlink(path);
		goto out;
	}
	pf->def = ps->def;
	snprintf(pf->dir, sizeof(pf->dir), "%s", dir);
	snprintf(pf->path, sizeof(pf->path), "%s", path);
	pf->file_wall0 = wall0;
	pf->kallsyms = ps->def.kallsyms && p->kernel && !all_user &&
		       daemon_ksyms_probe("/proc/kallsyms") == 0;
	pthread_mutex_init(&pf->lock, NULL);
	s->prof = pf;
	pf = NULL;
	s->detached = true;
	s->owner = NULL;
	s->start_client = NULL;
	snprintf(s->path, sizeof(s->path), "%s", path);
	r = session__launch(s);
	if (r < 0) {
		snprintf(err, errlen, "cannot start the session: %s", strerror(-r));
		(void)unlink(path);
		session__free(s);
		goto out;
	}
	session_register(s);
	ps->s = s;
	ps->problem[0] = '\0';
	log_info("profile %s: session %d starting: %zu events on %zu cpus, writing '%s'",
		 ps->def.name, s->id, s->p.nevents, s->ncpus, dir);
out:
	if (fd >= 0)
		close(fd);
	free(pf);
	free(p);
	json_decref(args);
	return r;
}

/* A profile's session leaves the list: its slot hears why, if it did not start. */
void daemon_profile_session_gone(struct session *s)
{
	for (size_t i = 0; i < npslots; i++) {
		struct profile_slot *ps = &pslots[i];

		if (ps->s != s)
			continue;
		ps->s = NULL;
		if (!__atomic_load_n(&s->started, __ATOMIC_ACQUIRE))
			snprintf(ps->problem, sizeof(ps->problem), "did not start: %.900s", s->error_msg);
		else if (__atomic_load_n(&s->error, __ATOMIC_ACQUIRE))
			snprintf(ps->problem, sizeof(ps->problem), "ended: %.900s", s->error_msg);
		else
			snprintf(ps->problem, sizeof(ps->problem), "stopped (session %d); 'hwpmc "
				 "profiles reload' starts it again", s->id);
	}
}

void daemon_profiles_start_pending(void)
{
	char err[1024];

	for (size_t i = 0; i < npslots; i++) {
		struct profile_slot *ps = &pslots[i];

		if (!ps->pending || !ps->def.enabled || profile_session_of(ps->def.name))
			continue;
		ps->pending = false;
		if (profile_start(ps, err, sizeof(err)) < 0) {
			snprintf(ps->problem, sizeof(ps->problem), "did not start: %.900s", err);
			log_error("profile %s: did not start: %s", ps->def.name, err);
		}
	}
}

/* Each line of @text (problems, "\n"-joined) as its own log line. */
static void log_lines(int prio_error, const char *prefix, const char *text)
{
	char *copy = strdup(text);

	for (char *l = copy, *nl; l && *l; l = nl) {
		nl = strchr(l, '\n');
		if (nl)
			*nl++ = '\0';
		if (prio_error)
			log_error("%s%s", prefix, l);
		else
			log_warn("%s%s", prefix, l);
	}
	free(copy);
}

/*
 * (Re)load the profiles directory: a new or changed enabled profile starts (a
 * changed one once its old session has ended), a removed, disabled or changed
 * one is stopped, an unchanged running one runs on, and a file refused on
 * reload leaves its running profile on its previous definition.  Returns the
 * number of refused files (their problems in profiles_problems).
 */
int daemon_profiles_load(void)
{
	struct daemon_profile *defs = calloc(DAEMON_PROFILES_MAX, sizeof(*defs));
	struct profile_slot *next = calloc(DAEMON_PROFILES_MAX, sizeof(*next));
	size_t n = 0, nn = 0;
	bool *taken = calloc(DAEMON_PROFILES_MAX, sizeof(*taken));
	int problems;

	if (!defs || !next || !taken) {
		free(defs);
		free(next);
		free(taken);
		snprintf(profiles_problems, sizeof(profiles_problems), "out of memory");
		return 1;
	}
	problems = daemon_profile_load_dir(daemon_profiles_dir, &daemon_cfg, coll_max_sample_rate(),
					   coll_max_stack(), defs, DAEMON_PROFILES_MAX, &n,
					   profiles_problems, sizeof(profiles_problems));
	if (problems)
		log_lines(1, "profiles: ", profiles_problems);
	for (size_t i = 0; i < npslots; i++) {
		struct profile_slot *old = &pslots[i];
		bool running = old->s && !old->s->ended &&
			       __atomic_load_n(&old->s->state, __ATOMIC_ACQUIRE) <= SESSION_RUNNING;
		size_t j;
		char path[sizeof(daemon_profiles_dir) + DAEMON_PROFILE_NAME_MAX + 8];

		for (j = 0; j < n; j++)
			if (strcmp(defs[j].name, old->def.name) == 0)
				break;
		snprintf(path, sizeof(path), "%.511s/%.63s.conf", daemon_profiles_dir,
			 old->def.name);
		if (j == n && running && access(path, F_OK) == 0 && nn < DAEMON_PROFILES_MAX) {
			/* Its file is there but was refused: the running definition stays. */
			next[nn] = *old;
			next[nn].kept_old = true;
			snprintf(next[nn].problem, sizeof(next[nn].problem), "%.63s.conf was refused on "
				 "reload; the previous definition runs on", old->def.name);
			nn++;
			continue;
		}
		if (j < n && !taken[j] && running && defs[j].enabled &&
		    daemon_profile_same(&defs[j], &old->def) && nn < DAEMON_PROFILES_MAX) {
			next[nn] = *old;
			next[nn].def = defs[j]; /* the lines may have moved */
			next[nn].kept_old = false;
			next[nn].problem[0] = '\0';
			taken[j] = true;
			nn++;
			continue;
		}
		if (old->s && !old->s->ended && running) {
			log_info("profile %s: %s: stopping session %d", old->def.name,
				 j == n ? "removed" : !defs[j].enabled ? "disabled" : "changed",
				 old->s->id);
			old->s->orphan = true; /* freed without a word once its worker ends */
			session__request_stop(old->s);
		} else if (old->s && old->s->ended) {
			/* Ended by itself earlier and still listed: its slot goes, so does it. */
			struct session *gone = old->s;

			old->s = NULL;
			session_tell_end(gone, NULL, true);
		}
	}
	for (size_t j = 0; j < n; j++) {
		bool dup = false;

		if (taken[j])
			continue;
		for (size_t k = 0; k < nn; k++)
			dup |= strcmp(next[k].def.name, defs[j].name) == 0;
		if (dup || nn == DAEMON_PROFILES_MAX)
			continue;
		memset(&next[nn], 0, sizeof(next[nn]));
		next[nn].def = defs[j];
		next[nn].pending = defs[j].enabled;
		if (!defs[j].enabled)
			snprintf(next[nn].problem, sizeof(next[nn].problem), "enabled = no");
		nn++;
	}
	memcpy(pslots, next, nn * sizeof(*next));
	npslots = nn;
	free(defs);
	free(next);
	free(taken);
	log_info("profiles: %zu loaded from '%s'%s", n, daemon_profiles_dir,
		 problems ? " (some files were refused)" : "");
	daemon_profiles_start_pending();
	return problems;
}

static const char *profile_state(const struct profile_slot *ps)
{
	int st;

	if (!ps->s)
		return !ps->def.enabled ? "disabled" : ps->pending ? "waiting" : "stopped";
	if (ps->s->ended)
		return "error";
	st = __atomic_load_n(&ps->s->state, __ATOMIC_ACQUIRE);
	if (st == SESSION_RUNNING && __atomic_load_n(&ps->s->prof->paused, __ATOMIC_RELAXED))
		return "paused";
	return session_state_name(st);
}

/* `profiles`: the list; `{"reload": true}` first reloads the directory.  Administrators only. */
void daemon_cmd_profiles(struct daemon_client *c, json_int_t id, json_t *args)
{
	json_t *v = json_object_get(args, "reload"), *rep, *arr;
	int nproblems = 0;

	if (json_object_size(args) > (v ? 1u : 0u) || (v && !json_is_boolean(v))) {
		daemon_reply_error(c, id, -EINVAL,
				   "profiles: takes only an optional {\"reload\": true}");
		return;
	}
	if (!daemon_is_admin(c)) {
		daemon_reply_error(c, id, -EPERM,
				   "profiles are the administrators' (root or group '%s')",
				   daemon_cfg.admin_group);
		return;
	}
	if (v && json_is_true(v)) {
		log_info("profiles: reload asked for by uid %u", (unsigned)c->who.uid);
		nproblems = daemon_profiles_load();
	}
	rep = daemon_reply_ok(id);
	arr = json_array();
	for (size_t i = 0; i < npslots; i++) {
		struct profile_slot *ps = &pslots[i];
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(ps->def.name));
		json_object_set_new(o, "state", json_string(profile_state(ps)));
		json_object_set_new(o, "enabled", json_boolean(ps->def.enabled));
		json_object_set_new(o, "events", json_string(ps->def.events));
		if (ps->def.period)
			json_object_set_new(o, "period", json_integer(ps->def.period));
		else
			json_object_set_new(o, "freq", json_integer(ps->def.freq));
		json_object_set_new(o, "callgraph", json_string(ps->def.callgraph));
		json_object_set_new(o, "scope", json_string(ps->def.scope));
		json_object_set_new(o, "rotate_seconds", json_integer((json_int_t)ps->def.rotate_seconds));
		json_object_set_new(o, "rotate_bytes", json_integer((json_int_t)ps->def.rotate_bytes));
		json_object_set_new(o, "retain_seconds", json_integer((json_int_t)ps->def.retain_seconds));
		json_object_set_new(o, "retain_bytes", json_integer((json_int_t)ps->def.retain_bytes));
		if (ps->problem[0])
			json_object_set_new(o, "note", json_string(ps->problem));
		if (ps->s)
			json_object_set_new(o, "status", session_json(ps->s));
		json_array_append_new(arr, o);
	}
	json_object_set_new(rep, "dir", json_string(daemon_profiles_dir));
	json_object_set_new(rep, "profiles", arr);
	if (profiles_problems[0])
		json_object_set_new(rep, "problems", json_string(profiles_problems));
	if (v && json_is_true(v))
		json_object_set_new(rep, "refused", json_integer(nproblems));
	daemon_client_send(c, rep);
}

void daemon_handle_line(struct daemon_client *c, const char *line, size_t len)
{
	struct daemon_request rq;
	char err[512];
	int r = daemon_request_parse(line, len, &rq, err, sizeof(err));
	const char *cmd = rq.cmd;

	if (r < 0) {
		daemon_reply_error(c, rq.id, r, "%s", err);
		return;
	}
	if (strcmp(cmd, CTL_CMD_HELLO) == 0) {
		json_t *rep = daemon_reply_ok(rq.id);

		json_object_set_new(rep, "version", json_integer(CTL_PROTOCOL_VERSION));
		json_object_set_new(rep, "daemon", json_string("hwpmcd " HWPMCD_VERSION));
		json_object_set_new(rep, "commands",
				    json_pack("[ssssssss]", CTL_CMD_HELLO, CTL_CMD_EVENTS,
					      CTL_CMD_START, CTL_CMD_STOP, CTL_CMD_STATUS,
					      CTL_CMD_SESSIONS, CTL_CMD_PROFILES, CTL_CMD_FILTER));
		json_object_set_new(rep, "max_sample_rate",
				    json_integer((json_int_t)coll_max_sample_rate()));
		json_object_set_new(rep, "max_stack", json_integer(coll_max_stack()));
		json_object_set_new(rep, "uid", json_integer((json_int_t)c->who.uid));
		json_object_set_new(rep, "admin", json_boolean(c->who.admin));
		daemon_client_send(c, rep);
	} else if (strcmp(cmd, CTL_CMD_START) == 0) {
		cmd_start(c, rq.id, rq.args);
	} else if (strcmp(cmd, CTL_CMD_STOP) == 0) {
		cmd_stop(c, rq.id, rq.args);
	} else if (strcmp(cmd, CTL_CMD_STATUS) == 0 || strcmp(cmd, CTL_CMD_SESSIONS) == 0) {
		cmd_status(c, rq.id, rq.args);
	} else if (strcmp(cmd, CTL_CMD_EVENTS) == 0) {
		cmd_events(c, rq.id);
	} else if (strcmp(cmd, CTL_CMD_PROFILES) == 0) {
		daemon_cmd_profiles(c, rq.id, rq.args);
	} else if (strcmp(cmd, CTL_CMD_FILTER) == 0) {
		cmd_filter(c, rq.id, rq.args);
	} else {
		char shown[64];

		daemon_reply_error(c, rq.id, -EINVAL, "unknown command '%s'",
				   util_escape(cmd, strlen(cmd), shown, sizeof(shown)));
	}
	daemon_request_free(&rq);
}

/* ---- clients ---- */

static void client_free(struct daemon_client *c)
{
	struct daemon_client **pp;

	/*
	 * Its sessions end with it (each log gets its CLOSELOG, on the worker); no
	 * reply or event is owed to it any more.
	 */
	for (size_t i = 0; i < daemon_nsessions; i++) {
		struct session *s = daemon_sessions[i];

		if (s->owner == c && s->ended) {
			session_remove(s);
			i--;
			continue;
		}
		if (s->owner == c) {
			log_info("session %d: its client went away; closing the session", s->id);
			s->owner = NULL;
			s->orphan = true;
			session__request_stop(s);
		}
		if (s->start_client == c)
			s->start_client = NULL;
		if (s->stop_client == c)
			s->stop_client = NULL;
	}
	for (pp = &clients; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	for (size_t i = 0; i < c->nfds; i++)
		daemon_fd_release(c->fds[i], c->who.uid);
	(void)epoll_ctl(daemon_epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->buf);
	free(c);
	nclients--;
}

/* The admin group's gid now ((gid_t)-1 if it does not exist: then only root). */
static gid_t admin_gid(void)
{
	struct group gr, *res = NULL;
	char buf[16384];

	if (getgrnam_r(daemon_cfg.admin_group, &gr, buf, sizeof(buf), &res) != 0 || !res)
		return (gid_t)-1;
	return res->gr_gid;
}

/* A refusal for a connection we do not keep: one error line, then close. */
static void refuse_connection(int fd, int err, const char *msg)
{
	daemon_send_line(fd, daemon_error_json(-1, err, msg));
	close(fd);
}

static void client_accept(void)
{
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct ucred cred;
	socklen_t len = sizeof(cred);
	gid_t groups[256];
	socklen_t glen = sizeof(groups);
	size_t ngroups = 0, mine = 0;
	struct daemon_client *c;
	struct epoll_event e = { .events = EPOLLIN };
	char msg[256];
	bool admin;

	if (fd < 0) {
		int err = errno;

		if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
			struct epoll_event off = { .events = 0, .data.ptr = &tag_listen };
			uint64_t now = daemon_mono_ns();

			(void)epoll_ctl(daemon_epfd, EPOLL_CTL_MOD, listen_fd, &off);
			accept_paused_until = now + ACCEPT_PAUSE_NS;
			if (!accept_warned_at || now - accept_warned_at >= 10000000000ull) {
				log_warn("cannot accept connections: %s; pausing accept for 0.2 s at a "
					 "time until fds or memory are free again", strerror(err));
				accept_warned_at = now;
			}
		}
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		refuse_connection(fd, -EPROTO, "cannot read the peer's credentials");
		return;
	}
	/* The groups the client had when it connected: what it is, not what it could be. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &glen) == 0)
		ngroups = glen / sizeof(gid_t);
	admin = daemon_auth_admin(cred.uid, cred.gid, groups, ngroups, admin_gid());
	for (c = clients; c; c = c->next)
		mine += c->who.uid == cred.uid;
	if (nclients >= daemon_cfg.max_clients) {
		snprintf(msg, sizeof(msg), "too many clients: the daemon serves %zu, its maximum "
			 "(max_clients)", nclients);
		refuse_connection(fd, -EBUSY, msg);
		return;
	}
	if (!admin && mine >= daemon_cfg.user_max_clients) {
		snprintf(msg, sizeof(msg), "too many clients of uid %u: %zu connections, the most for "
			 "users outside group '%s' (user_max_clients)", (unsigned)cred.uid, mine,
			 daemon_cfg.admin_group);
		refuse_connection(fd, -EBUSY, msg);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->buf = malloc(CTL_MESSAGE_MAX + 1))) {
		free(c);
		refuse_connection(fd, -ENOMEM, "out of memory");
		return;
	}
	c->fd = fd;
	c->who.uid = cred.uid;
	c->who.gid = cred.gid;
	c->who.pid = cred.pid;
	c->who.admin = admin;
	c->last_ns = daemon_mono_ns();
	c->next = clients;
	clients = c;
	nclients++;
	e.data.ptr = c;
	(void)epoll_ctl(daemon_epfd, EPOLL_CTL_ADD, fd, &e);
}

/*
 * Clients that own no session and sent no complete request for
 * client_idle_timeout seconds are disconnected (a slow-loris guard: each holds
 * a 64 KiB buffer and a slot of max_clients).
 */
static void clients_expire(uint64_t now)
{
	struct daemon_client *c, *next;

	if (!daemon_cfg.client_idle_timeout)
		return;
	for (c = clients; c; c = next) {
		bool owns = false;

		next = c->next;
		for (size_t i = 0; i < daemon_nsessions; i++)
			owns |= daemon_sessions[i]->owner == c;
		if (!owns &&
		    now - c->last_ns > (uint64_t)daemon_cfg.client_idle_timeout * 1000000000ull) {
			log_info("uid %u (pid %d): idle for %u s; disconnecting", (unsigned)c->who.uid,
				 (int)c->who.pid, daemon_cfg.client_idle_timeout);
			daemon_client_send(c,
					   json_pack("{s:s,s:s}", "event", "disconnect", "reason",
						     "idle for client_idle_timeout seconds"));
			client_free(c);
		}
	}
}

static bool client_has_line(const struct daemon_client *c)
{
	return memchr(c->buf, '\n', c->len) != NULL;
}

/* Reading a paused client again once its uid's closes are under the bound. */
void daemon_client_rearm(void)
{
	for (struct daemon_client *c = clients; c; c = c->next) {
		struct epoll_event e = { .events = EPOLLIN, .data.ptr = c };

		if (c->paused && !daemon_closing_over(c->who.uid)) {
			c->paused = false;
			(void)epoll_ctl(daemon_epfd, EPOLL_CTL_MOD, c->fd, &e);
		}
	}
}

/*
 * Input from @c, or (when it has a complete line already) none; then at most one
 * request handled.  May free @c (EOF).
 */
static void client_read(struct daemon_client *c)
{
	char cbuf[CMSG_SPACE(sizeof(int) * DAEMON_CLIENT_MAX_FDS)];
	struct iovec iov = { .iov_base = c->buf + c->len, .iov_len = CTL_MESSAGE_MAX - c->len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	ssize_t n;
	char *nl;

	if (!client_has_line(c)) {
		if (daemon_closing_over(c->who.uid)) {
			/* Its fds wait to be closed: take no more until they are. */
			struct epoll_event off = { .events = 0, .data.ptr = c };

			c->paused = true;
			(void)epoll_ctl(daemon_epfd, EPOLL_CTL_MOD, c->fd, &off);
			return;
		}
		n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		for (cm = CMSG_FIRSTHDR(&mh); n > 0 && cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
				size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
				int *fds = (int *)(void *)CMSG_DATA(cm);

				for (size_t i = 0; i < k; i++) {
					if (c->nfds < DAEMON_CLIENT_MAX_FDS)
						c->fds[c->nfds++] = fds[i];
					else
						daemon_fd_release(fds[i], c->who.uid);
				}
			}
		}
		if (n <= 0) {
			client_free(c);
			return;
		}
		c->len += (size_t)n;
	}
	if ((nl = memchr(c->buf, '\n', c->len))) {
		size_t line = (size_t)(nl - c->buf);

		c->last_ns = daemon_mono_ns();
		if (c->discarding)
			c->discarding = false;
		else if (line > 0)
			daemon_handle_line(c, c->buf, line);
		/*
		 * daemon_handle_line may not free the client: clients are freed only on
		 * read EOF.
		 */
		memmove(c->buf, nl + 1, c->len - line - 1);
		c->len -= line + 1;
	}
	if (c->len == 0 && c->nfds) {
		/* fds that came with requests that did not take them (protocol.md) */
		daemon_client_drop_fds(c);
	}
	if (c->len == CTL_MESSAGE_MAX && !client_has_line(c)) {
		if (!c->discarding)
			daemon_reply_error(c, -1, -EMSGSIZE,
					   "message longer than %d bytes; skipped",
					   CTL_MESSAGE_MAX);
		c->discarding = true;
		c->len = 0;
	}
	c->ready = client_has_line(c);
}

/* The session's status to the client that asked to stop it, and the end to its owner. */
/*
 * With @remove, the session is forgotten (its fds closed) before the lines go out:
 * a client that has its reply holds nothing of the daemon's any more.
 */
void session_tell_end(struct session *s, const char *reason, bool remove)
{
	struct daemon_client *stopper = s->stop_client, *owner = s->owner;
	json_t *rep = NULL, *ev = NULL;

	if (stopper) {
		rep = daemon_reply_ok(s->stop_id);
		json_object_set_new(rep, "status", session_json(s));
	}
	if (owner && owner != stopper) {
		ev = json_pack("{s:s,s:o}", "event", CTL_EVENT_SESSION_END, "status",
			       session_json(s));
		if (reason)
			json_object_set_new(ev, "reason", json_string(reason));
	} else {
		owner = NULL;
	}
	if (remove)
		session_remove(s);
	if (stopper)
		daemon_client_send(stopper, rep);
	if (owner)
		daemon_client_send(owner, ev);
	if (remove && !daemon_shutting_down)
		daemon_profiles_start_pending();
}

/*
 * The worker wrote done_efd: its start went well (the start's reply) or not (an
 * error reply), or it has ended (the stop's reply, the owner's event), then the
 * session is forgotten.  Both may come with one wakeup.
 */
void session_event(struct session *s)
{
	uint64_t v;
	bool started;
	int state;

	(void)!read(s->done_efd, &v, sizeof(v));
	/* Pair with the worker's release stores of started and of its final state. */
	started = __atomic_load_n(&s->started, __ATOMIC_ACQUIRE);
	state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
	if (started && !s->start_replied) {
		s->start_replied = true;
		log_info("session %d: started: %zu events on %zu cpus", s->id, s->p.nevents,
			 s->ncpus);
		if (s->start_client)
			daemon_client_send(s->start_client, start_reply(s));
	}
	if ((state != SESSION_DONE && state != SESSION_ERROR) || !session__reap(s))
		return;
	if (!started) {
		struct daemon_client *sc = s->start_client;
		json_t *e =
			sc ? daemon_error_json(s->start_id, s->start_error, s->error_msg) : NULL;

		log_info("session %d: did not start: %s", s->id, s->error_msg);
		s->owner = NULL; /* it never was the owner's: no end event */
		/* The files it would have written in the state directory. */
		if (s->path[0]) {
			char vdso[sizeof(s->path) + 8];

			(void)unlink(s->path);
			snprintf(vdso, sizeof(vdso), "%s.vdso", s->path);
			(void)unlink(vdso);
		}
		if (s->ks_path[0])
			(void)unlink(s->ks_path);
		session_tell_end(s, NULL, true); /* a stop asked for meanwhile gets its status */
		if (sc)
			daemon_client_send(sc, e);
		return;
	} else {
		log_info("session %d: ended: %s%s%s: %" PRIu64 " samples, %" PRIu64 " lost", s->id,
			 session_state_name(state), s->error ? ": " : "", s->error ? s->error_msg : "",
			 s->stats.samples, s->stats.lost);
	}
	if (started && !s->stop_client && !s->orphan && !daemon_shutting_down) {
		/*
		 * It ended by itself (a write error, its targets gone): its owner hears
		 * now, and it stays listed, ended, for status, until it is stopped or
		 * its client goes away.
		 */
		s->ended = true;
		session_tell_end(s, NULL, false);
		return;
	}
	session_tell_end(s, daemon_shutting_down ? "the daemon is shutting down"
			 : s->stop_client && s->owner ? "stopped by another client" : NULL, true);
}

/*
 * A stop whose worker has not ended SESSION_STOP_REPLY_MS after it was asked for
 * (an output whose close takes its time): the stopper hears so, and the session
 * stays listed, "stopping", counted against its uid, until its worker ends.
 */
void daemon_sessions_check_stops(uint64_t now)
{
	for (size_t i = 0; i < daemon_nsessions; i++) {
		struct session *s = daemon_sessions[i];

		if (!s->stop_client || now - s->stop_ns < SESSION_STOP_REPLY_MS * 1000000ull)
			continue;
		daemon_reply_error(s->stop_client, s->stop_id, -ETIMEDOUT,
				   "session %d has not ended %d s after the stop (its output or "
				   "its counters are still being closed); it stays listed as "
				   "stopping, and counts against uid %u's sessions, until it has",
				   s->id, SESSION_STOP_REPLY_MS / 1000, (unsigned)s->uid);
		log_warn("session %d: not ended %d s after its stop", s->id,
			 SESSION_STOP_REPLY_MS / 1000);
		s->stop_client = NULL;
	}
}

/* ---- setup ---- */

/*
 * The fd budget: the soft RLIMIT_NOFILE raised to the hard one, then 256 fds,
 * nine per client (its socket and DAEMON_CLIENT_MAX_FDS) kept for main and
 * UNWIND_FDS_MAX per session for its unwinder's ELF files, so that the
 * sessions' perf fds can never take the daemon to EMFILE.
 */
static void fd_limits(void)
{
	struct rlimit rl;
	uint64_t keep = 256 + (uint64_t)daemon_cfg.max_clients * (DAEMON_CLIENT_MAX_FDS + 1) +
			(uint64_t)daemon_cfg.max_sessions * UNWIND_FDS_MAX,
		 avail = 0;
	uint64_t max = daemon_cfg.max_perf_fds;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
			(void)getrlimit(RLIMIT_NOFILE, &rl);
		}
		avail = rl.rlim_cur > keep ? rl.rlim_cur - keep : 0;
	}
	if (!max) {
		max = avail;
	} else if (max > avail) {
		log_warn("max_perf_fds = %" PRIu64 " is more than the fd limit leaves (%" PRIu64
			 "); using %" PRIu64, max, avail, avail);
		max = avail;
	}
	if (!max)
		log_warn("the fd limit (RLIMIT_NOFILE) leaves no fds for sessions; raise it "
			 "(LimitNOFILE=) or lower max_clients");
	session_budget_set(max, daemon_cfg.user_max_perf_fds);
	log_info("perf fds: at most %" PRIu64 " for all sessions, %u per user", max,
		 daemon_cfg.user_max_perf_fds);
}

static int setup_socket(void)
{
	char tmp[sizeof(daemon_cfg.socket_path) + 24];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, r, n;

	/* Socket activation: $LISTEN_FDS/$LISTEN_PID for us (unset here, not inherited). */
	n = sd_listen_fds(1);
	if (n < 0)
		return log_error_errno(n, "socket activation ($LISTEN_FDS)");
	if (n > 0) {
		fd = SD_LISTEN_FDS_START;
		if (n > 1)
			log_warn("socket activation passed %d fds; using the first, ignoring the "
				 "rest", n);
		if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0)
			return log_error_errno(-ENOTSOCK, "LISTEN_FDS=%d: fd %d is not a listening "
					       "socket (AF_UNIX, SOCK_STREAM)", n, fd);
		(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		listen_fd = fd;
		return 0;
	}
	/*
	 * Bound under a temporary name, given its mode, group and backlog, and only
	 * then renamed into place: a client that sees the path can connect (no
	 * ECONNREFUSED window while the group is looked up) and can never find it
	 * with a mode wider than configured.
	 */
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", daemon_cfg.socket_path, (int)getpid());
	if (strlen(tmp) >= sizeof(sa.sun_path))
		return log_error_errno(-ENAMETOOLONG, "socket path '%s'", daemon_cfg.socket_path);
	memcpy(sa.sun_path, tmp, strlen(tmp));
	{
		char dir[sizeof(daemon_cfg.socket_path)], *slash;

		snprintf(dir, sizeof(dir), "%s", daemon_cfg.socket_path);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			(void)mkdir(dir, 0755);
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return log_error_errno(-errno, "socket");
	(void)unlink(tmp);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(fd);
		return log_error_errno(r, "bind '%s'", tmp);
	}
	(void)chmod(tmp, daemon_cfg.socket_mode);
	{
		/* The admin group may connect through a 0660 socket (as hwpmcd.socket's SocketGroup). */
		gid_t g = admin_gid();

		if (g != (gid_t)-1 && chown(tmp, (uid_t)-1, g) < 0)
			log_warn("cannot give the socket '%s' to group '%s': %s",
				 daemon_cfg.socket_path, daemon_cfg.admin_group, strerror(errno));
	}
	if (listen(fd, SOMAXCONN) < 0 || rename(tmp, daemon_cfg.socket_path) < 0) {
		r = -errno;
		(void)unlink(tmp);
		close(fd);
		return log_error_errno(r, "listen on '%s'", daemon_cfg.socket_path);
	}
	listen_fd = fd;
	listen_owned = true;
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hwpmcd [--socket PATH] [--config FILE] [--state-dir DIR]\n"
		"              [--profiles-dir DIR] [--foreground] [--check-config]\n"
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
		"  --profiles-dir DIR  always-on profiles, one NAME.conf each (default\n"
		"                  %s); each writes rotated logs under\n"
		"                  STATE_DIR/profiles/NAME/ (hwpmcd.conf(5), PROFILES); SIGHUP\n"
		"                  or 'hwpmc profiles reload' reads them again\n"
		"  --foreground    plain log lines on stderr instead of journald priorities\n"
		"  --check-config  read the configuration and every profile, print their\n"
		"                  problems, and exit (0: all good; the daemon refuses to start\n"
		"                  on a bad configuration, and runs every good profile)\n"
		"  -h, --help      this text;  --version  the version\n",
		CTL_SOCKET_DEFAULT, DAEMON_PROFILES_DIR_DEFAULT);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "config", required_argument, NULL, 'c' },
		{ "state-dir", required_argument, NULL, 'D' },
		{ "profiles-dir", required_argument, NULL, 'P' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct epoll_event e;
	sigset_t mask;
	int opt, sfd, r, tick_ms;
	bool running = true;
	uint64_t wd_usec, wd_last = 0, idle_last = 0;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 's': arg_socket = optarg; break;
		case 'c': arg_config = optarg; break;
		case 'D': arg_state_dir = optarg; break;
		case 'P': arg_profiles_dir = optarg; break;
		case 'f': arg_foreground = true; break;
		case 'C': arg_check_config = true; break;
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
	if (!arg_foreground && stderr_is_journal())
		log_set_hook(journal_hook, NULL);
	daemon_config_defaults(&daemon_cfg);
	{
		char err[4096];
		const char *path = arg_config ? arg_config : HWPMCD_CONFIG_DEFAULT;

		r = daemon_config_load(&daemon_cfg, path, arg_config != NULL, err, sizeof(err));
		if (r < 0) {
			/* Every problem, one per line; a half-applied security config is no start. */
			for (char *l = err, *nl; l && *l; l = nl) {
				nl = strchr(l, '\n');
				if (nl)
					*nl++ = '\0';
				log_error("config: %s", l);
			}
			log_error("config '%s' has problems; not starting (see hwpmcd.conf(5))", path);
			return 1;
		}
		if (arg_profiles_dir) {
			if (arg_profiles_dir[0] != '/' ||
			    strlen(arg_profiles_dir) >= sizeof(daemon_profiles_dir) - 80) {
				log_error("--profiles-dir '%s' must be an absolute path of under "
					  "%zu bytes",
					  arg_profiles_dir, sizeof(daemon_profiles_dir) - 80);
				return 2;
			}
			snprintf(daemon_profiles_dir, sizeof(daemon_profiles_dir), "%s",
				 arg_profiles_dir);
		}
		if (arg_check_config) {
			struct daemon_profile *defs = calloc(DAEMON_PROFILES_MAX, sizeof(*defs));
			size_t n = 0;
			int k;

			printf("%s: ok\n", path);
			if (!defs)
				return 1;
			k = daemon_profile_load_dir(daemon_profiles_dir, &daemon_cfg,
						    coll_max_sample_rate(), coll_max_stack(), defs,
						    DAEMON_PROFILES_MAX, &n, err, sizeof(err));
			for (size_t i = 0; i < n; i++)
				printf("%s/%s.conf: ok%s\n", daemon_profiles_dir, defs[i].name,
				       defs[i].enabled ? "" : " (enabled = no)");
			if (k)
				fprintf(stderr, "%s\n", err);
			free(defs);
			return k ? 1 : 0;
		}
	}
	if (arg_socket) {
		if (strlen(arg_socket) >= sizeof(daemon_cfg.socket_path)) {
			log_error("--socket '%s' is too long", arg_socket);
			return 2;
		}
		snprintf(daemon_cfg.socket_path, sizeof(daemon_cfg.socket_path), "%s", arg_socket);
	}
	if (arg_state_dir) {
		if (arg_state_dir[0] != '/' || strlen(arg_state_dir) >= sizeof(daemon_cfg.state_dir) - 64) {
			log_error("--state-dir '%s' must be an absolute path", arg_state_dir);
			return 2;
		}
		snprintf(daemon_cfg.state_dir, sizeof(daemon_cfg.state_dir), "%s", arg_state_dir);
	}
	/* First, so that a passed socket is still fd 3 (no fd of ours has taken it). */
	if (setup_socket() < 0)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	/* Blocked before any thread starts, so only the signalfd sees them. */
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	daemon_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || daemon_epfd < 0) {
		log_error("signalfd/epoll: %s", strerror(errno));
		return 1;
	}
	e.events = EPOLLIN;
	e.data.ptr = &tag_listen;
	epoll_ctl(daemon_epfd, EPOLL_CTL_ADD, listen_fd, &e);
	e.data.ptr = &tag_signal;
	epoll_ctl(daemon_epfd, EPOLL_CTL_ADD, sfd, &e);
	daemon_closer_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (daemon_closer_efd < 0) {
		log_error("eventfd: %s", strerror(errno));
		return 1;
	}
	e.data.ptr = &tag_closer;
	epoll_ctl(daemon_epfd, EPOLL_CTL_ADD, daemon_closer_efd, &e);
	fd_limits();
	log_info("listening on %s",
		 listen_owned ? daemon_cfg.socket_path : "the socket systemd passed");
	notify("READY=1\nSTATUS=listening");
	/* Profiles' push_url: the thread idles until a file is queued. */
	if ((r = daemon_push_start(daemon_cfg.hwpmc)) < 0)
		log_warn("push: cannot start its thread (%s): profiles' push_url is not served",
			 strerror(-r));
	/* The always-on profiles: a bad file is logged and left out, the rest run. */
	(void)daemon_profiles_load();
	wd_usec = watchdog_usec();
	tick_ms = wd_usec ? (int)MIN((uint64_t)1000, wd_usec / 2000) : 1000;
	if (tick_ms < 1)
		tick_ms = 1;

	while (running) {
		struct epoll_event evs[32];
		int wait_ms = tick_ms, n;
		uint64_t now = daemon_mono_ns();

		if (accept_paused_until) {
			if (now >= accept_paused_until) {
				struct epoll_event on = { .events = EPOLLIN, .data.ptr = &tag_listen };

				(void)epoll_ctl(daemon_epfd, EPOLL_CTL_MOD, listen_fd, &on);
				accept_paused_until = 0;
			} else {
				wait_ms = (int)MIN((uint64_t)tick_ms,
						   (accept_paused_until - now) / 1000000 + 1);
			}
		}
		for (struct daemon_client *c = clients; c; c = c->next)
			if (c->ready)
				wait_ms = 0;
		n = epoll_wait(daemon_epfd, evs, 32, wait_ms);
		now = daemon_mono_ns();

		if (wd_usec && now - wd_last >= wd_usec * 500) {
			/* Half the interval: the loop is alive (a stuck session stop is not). */
			notify("WATCHDOG=1");
			wd_last = now;
		}
		if (now - idle_last >= 1000000000ull) {
			clients_expire(now);
			daemon_sessions_check_stops(now);
			idle_last = now;
		}

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
			if (ptr == &tag_closer) {
				daemon_closer_event();
				continue;
			}
			if (ptr == &tag_signal) {
				struct signalfd_siginfo si;

				while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo != SIGHUP) {
						running = false;
					} else if (running) {
						log_info("profiles: SIGHUP: reloading '%s'",
							 daemon_profiles_dir);
						(void)daemon_profiles_load();
					}
				}
				continue;
			}
			for (size_t k = 0; k < daemon_nsessions; k++)
				is_session |= (void *)daemon_sessions[k] == ptr;
			if (is_session) {
				session_event(ptr);
				continue;
			}
			/* A client: it may have been freed by an earlier event of this batch. */
			for (struct daemon_client *c = clients; c; c = c->next) {
				if ((void *)c == ptr) {
					c->ready = false; /* its one request of this turn */
					client_read(c);
					break;
				}
			}
		}
		/* The clients with more requests waiting: one each, round after round. */
		for (struct daemon_client *c = clients, *next; c; c = next) {
			next = c->next;
			if (c->ready && !c->paused)
				client_read(c);
		}
	}
	notify("STOPPING=1\nSTATUS=closing sessions");
	log_info("shutting down: closing %zu sessions", daemon_nsessions);
	daemon_shutting_down = true;
	for (size_t i = 0; i < daemon_nsessions; i++) {
		if (daemon_sessions[i]->ended) {
			/* Ended by itself before: its owner hears of the shutdown, nothing waits. */
			session_tell_end(daemon_sessions[i--], "the daemon is shutting down", true);
			continue;
		}
		session__request_stop(daemon_sessions[i]);
	}
	{
		/* Every worker drains and ends by itself; one that cannot is left behind. */
		uint64_t deadline = daemon_mono_ns() + SESSION_STOP_REPLY_MS * 1000000ull;

		while (daemon_nsessions && daemon_mono_ns() < deadline) {
			struct epoll_event evs[32];
			int n = epoll_wait(daemon_epfd, evs, 32, 100);

			for (int i = 0; i < n; i++)
				for (size_t k = 0; k < daemon_nsessions; k++)
					if ((void *)daemon_sessions[k] == evs[i].data.ptr) {
						session_event(daemon_sessions[k]);
						break;
					}
		}
		for (size_t i = 0; i < daemon_nsessions; i++)
			log_warn("session %d: its worker has not ended; exiting without it",
				 daemon_sessions[i]->id);
	}
	/* The profiles' last files are queued now: sent within DAEMON_PUSH_DRAIN_S. */
	daemon_push_stop();
	while (clients)
		client_free(clients);
	if (listen_owned)
		(void)unlink(daemon_cfg.socket_path);
	close(listen_fd);
	close(sfd);
	close(daemon_epfd);
	json_decref(daemon_events_cache);
	r = 0;
	return r;
}
