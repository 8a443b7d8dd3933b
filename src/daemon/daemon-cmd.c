/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-cmd.c: what clients ask for: a request line's dispatch, the commands
 * (start, stop, filter, status, events), the sessions' list with its admission
 * and the status of each, and the replies that wait for a session's worker.
 *
 * PUBLIC INTERFACES (daemon-internal, daemon-int.h)
 *   daemon_handle_line()                       one request line of a client
 *   session_admit(), session_register()        a new session, a client's or a profile's
 *   session_remove(), session_json()           the list, and a session's status
 *   session_event(), session_tell_end(),       the worker's start and end: the replies
 *   daemon_sessions_check_stops()              and events that waited for them
 *   daemon_state_dir_check(), daemon_write_vdso_beside(), daemon_vdso_publish()
 *                          the state directory's files
 *   daemon_events_cache                        the events reply (freed by main at exit)
 *
 * IMPLEMENTATION NOTES
 *   Main's alone.  A start's args are validated under the client's limits by
 *   daemon_start_parse() (daemon-request.c), and a non-admin's targets are
 *   checked before the counters open and again, through
 *   session_params.authorize, before anything is enabled or logged
 *   (docs/security.md).  A start's and a stop's replies wait for the worker: it
 *   writes done_efd once its counters are open and the log's head is out, and
 *   again when it has ended (session_event()); a stop's reply that waits longer
 *   than SESSION_STOP_REPLY_MS is an error, the session stays listed.
 *
 *   Kernel symbols: a start with "kallsyms": "fd" brings a second fd (fds in
 *   order: log, kallsyms); a detached session gets <log>.kallsyms of ours.  Main
 *   decides here whether the session can have kernel samples and whether
 *   /proc/kallsyms shows addresses (a 64 KiB probe), and hands the fd to the
 *   session (daemon-session-ks.c reads the table, writes it and compacts it).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon-ctl.h"
#include "daemon-int.h"
#include "hwpmcd/common-open.h"
#include "hwpmcd/common.h"
#include "hwpmcd/files.h"
#include "hwpmcd/maplog-elf.h"
#include "hwpmcd/ctl-protocol.h"
#include "hwpmcd/log.h"

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
		json_object_set_new(u, "fp_frameless", json_integer(UL(fp_frameless)));
		json_object_set_new(u, "fp_refused", json_integer(UL(fp_refused)));
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

		/* The worker replaces it when a unit's cgroup changes (session_filter_follow()). */
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
		json_object_set_new(st, "remapped", json_integer((json_int_t)ms->remapped));
		json_object_set_new(st, "remap_overlap", json_integer((json_int_t)ms->remap_overlap));
		json_object_set_new(st, "path_too_long",
				    json_integer((json_int_t)ms->path_too_long));
		json_object_set_new(st, "scan_refused", json_integer((json_int_t)ms->scan_refused));
		if (s->gated) {
			json_object_set_new(st, "unvouched", json_integer((json_int_t)ms->unvouched));
			json_object_set_new(st, "loss_suspected", json_integer((json_int_t)__atomic_load_n(
							&s->stats.loss_suspected, __ATOMIC_RELAXED)));
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
	char path[sizeof(daemon_cfg.state_dir) + 128], err[512];
	int fd, r;

	if (snprintf(path, sizeof(path), "%s.vdso", log) >= (int)sizeof(path))
		return;
	fd = util_file_new(path, 0, err, sizeof(err));
	if (fd < 0) {
		log_warn("%s: no vDSO image beside the log, ignoring", err);
		return;
	}
	r = maplog_vdso_write(fd);
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r < 0) {
		(void)unlink(path); /* in the daemon's own directory: nobody else's name */
		if (r != -ENOENT)
			log_warn_errno(r, "'%s': cannot save the vDSO image, ignoring", path);
	}
}

/* Whether the regular file @path holds exactly the @size bytes at @img. */
static bool file_holds(const char *path, const void *img, size_t size)
{
	uint64_t fsize;
	int fd = util_open_read(path, UTIL_OPEN_REGULAR, &fsize);
	uint8_t *buf;
	bool same = false;

	if (fd < 0)
		return false;
	buf = fsize == size ? malloc(size + 1) : NULL;
	if (buf && read(fd, buf, size + 1) == (ssize_t)size)
		same = memcmp(buf, img, size) == 0;
	free(buf);
	close(fd);
	return same;
}

/*
 * The vDSO for readers that open every MAP_IN's path as a file, as FreeBSD's
 * pmcstat does (pmclog-format.md 11.15): this kernel's vDSO image saved as
 * STATE/vdso/BUILDID/linux-vdso.so.1 (kept while it is the same; mode 0600 in the
 * 0750 state directory: root's readers and an analyst's copy of the images open
 * it, others read LOG.vdso, found by the build id the MAP_IN is marked with).
 * Best effort: without a vDSO (valgrind), a build id or the state directory, the
 * MAP_INs say "[vdso]" as before.
 */
void daemon_vdso_publish(void)
{
	char hex[2 * MAPLOG_BUILD_ID_MAX + 1], dir[sizeof(daemon_cfg.state_dir) + 64],
		path[sizeof(dir) + 64], tmp[UTIL_TEMP_NAME_MAX], err[512];
	static const char name[] = "linux-vdso.so.1";
	struct maplog_elf_info in;
	struct util_dir d;
	const void *img;
	size_t size;
	int fd, r;

	if (maplog_vdso_self(&img, &size) < 0 || maplog_elf_info_mem(img, size, &in) < 0 ||
	    !in.build_id_len)
		return;
	for (size_t i = 0; i < in.build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", in.build_id[i]);
	snprintf(dir, sizeof(dir), "%s/vdso", daemon_cfg.state_dir);
	if (util_dir_ensure(daemon_cfg.state_dir, 0750, NULL, err, sizeof(err)) < 0 ||
	    util_dir_ensure(dir, 0750, NULL, err, sizeof(err)) < 0 ||
	    (snprintf(dir, sizeof(dir), "%s/vdso/%s", daemon_cfg.state_dir, hex),
	     util_dir_ensure(dir, 0750, &d, err, sizeof(err))) < 0) {
		log_warn("%s: the vDSO's MAP_INs say [vdso]", err);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!file_holds(path, img, size)) {
		fd = util_file_create_temp(&d, name, 0, 0, tmp);
		r = fd < 0 ? fd : util_write_all(fd, img, size, NULL);
		if (fd >= 0 && close(fd) < 0 && r == 0)
			r = -errno;
		if (r == 0)
			r = util_file_commit(&d, tmp, name);
		if (r < 0) {
			if (fd >= 0)
				(void)util_file_remove(&d, tmp);
			util_dir__close(&d);
			log_warn_errno(r, "'%s': cannot save the vDSO image: its MAP_INs say [vdso]",
				       path);
			return;
		}
	}
	util_dir__close(&d);
	if ((r = maplog_vdso_set_path(path, in.build_id, in.build_id_len)) < 0)
		log_warn_errno(r, "'%s': the vDSO's MAP_INs say [vdso]", path);
}

/*
 * The state directory, made if missing (0750): it must be a directory of ours
 * that nobody else may write (files.h's private directory), or a user could
 * plant a link or a file where a detached session writes; its files are made
 * new in it (util_file_new()).
 */
int daemon_state_dir_check(char *err, size_t errlen)
{
	int r = util_dir_ensure(daemon_cfg.state_dir, 0750, NULL, err, errlen);

	return r == -EPERM ? -EACCES : r;
}

/*
 * What every new session is admitted against, a client's or a profile's: the
 * daemon's session count, its CPUs (online ones; a request's list is sorted and
 * each CPU once, daemon_start_parse()), and its ring memory with this session's
 * rings on top of every running one's.  Its filter's cgroups and units are looked
 * up by its worker (daemon_filter_lookup()), never here.  Sets @cpus/@ret_ncpus to
 * the CPUs it will count on.  0, or -errno with @err.  Work bounded by the CPUs.
 */
int session_admit(struct session_params *p, const struct daemon_start *st,
			 int *cpus, size_t *ret_ncpus, char *err, size_t errlen)
{
	int online[DAEMON_MAX_CPUS];
	size_t ncpus = 0, nonline = 0;
	int r;

	if (daemon_nsessions >= daemon_cfg.max_sessions) {
		snprintf(err, errlen, "the daemon runs %zu sessions, its maximum (max_sessions)",
			 daemon_nsessions);
		return -EBUSY;
	}
	if ((r = coll_online_cpus(online, DAEMON_MAX_CPUS, &nonline)) < 0) {
		snprintf(err, errlen, "cannot read the online CPUs: %s", strerror(-r));
		return r;
	}
	if (p->ncpus) {
		for (size_t i = 0, k = 0; i < p->ncpus; i++) {
			while (k < nonline && online[k] < p->cpus[i])
				k++;
			if (k == nonline || online[k] != p->cpus[i]) {
				snprintf(err, errlen, "cpu %d is not online (%zu CPUs are, %d to %d)",
					 p->cpus[i], nonline, nonline ? online[0] : -1,
					 nonline ? online[nonline - 1] : -1);
				return -EINVAL;
			}
		}
		memcpy(cpus, p->cpus, p->ncpus * sizeof(*cpus));
		ncpus = p->ncpus;
	} else {
		memcpy(cpus, online, nonline * sizeof(*cpus));
		ncpus = nonline;
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
		p->out_fd = util_file_new(path, 0, err, sizeof(err));
		if (p->out_fd < 0) {
			daemon_reply_error(c, id, p->out_fd, "the state directory: %s", err);
			p->out_fd = -1;
			goto out;
		}
		made_log = true;
		daemon_write_vdso_beside(path);
		if (st.ks_want && !ks_skip[0]) {
			snprintf(ks_path, sizeof(ks_path), "%s.kallsyms", path);
			p->ks_fd = util_file_new(ks_path, 0, err, sizeof(err));
			if (p->ks_fd < 0) {
				daemon_reply_error(c, id, p->ks_fd, "the state directory: %s", err);
				p->ks_fd = -1;
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
	if (r < 0) {
		daemon_reply_error(c, id, r, "%s", err);
		free(f);
		return;
	}
	if (f->ncgroups + f->nunits) {
		/* Its cgroups and units are looked up by the worker: the answer comes later. */
		pthread_mutex_lock(&s->filt_lock);
		if (!s->filt_req) {
			s->filt_req = f;
			s->filt_req_client = c;
			s->filt_req_id = id;
			s->filt_req_done = false;
			f = NULL;
		}
		pthread_mutex_unlock(&s->filt_lock);
		if (f) {
			daemon_reply_error(c, id, -EBUSY, "session %d: a filter change is under way; "
					   "try again once it is answered", s->id);
			free(f);
		}
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

/* ---- a request ---- */

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

/* ---- the replies that wait for a worker ---- */

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
/*
 * The worker's answer to a filter request (cmd_filter()), to the client that
 * asked if it is still here; with @ended, a request it did not get to is
 * refused.  Main's.
 */
static void filter_answer(struct session *s, bool ended)
{
	struct daemon_client *c;
	struct daemon_filter *f;
	int64_t id;
	int r;
	char err[sizeof(s->filt_req_err)];

	pthread_mutex_lock(&s->filt_lock);
	f = s->filt_req;
	if (!f || (!s->filt_req_done && !ended)) {
		pthread_mutex_unlock(&s->filt_lock);
		return;
	}
	c = s->filt_req_client;
	id = s->filt_req_id;
	r = s->filt_req_done ? s->filt_req_r : -ESHUTDOWN;
	snprintf(err, sizeof(err), "%s", s->filt_req_done ? s->filt_req_err : "the session ended");
	s->filt_req = NULL;
	s->filt_req_client = NULL;
	s->filt_req_done = false;
	pthread_mutex_unlock(&s->filt_lock);
	if (r == 0) {
		log_info("session %d: filter now '%s'", s->id, f->text);
		if (c) {
			json_t *rep = daemon_reply_ok(id);

			json_object_set_new(rep, "filter", json_string(f->text));
			daemon_client_send(c, rep);
		}
	} else if (c) {
		daemon_reply_error(c, id, r, "%s", err);
	}
	free(f);
}

void session_event(struct session *s)
{
	uint64_t v;
	bool started;
	int state;

	(void)!read(s->done_efd, &v, sizeof(v));
	filter_answer(s, false);
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
	filter_answer(s, true); /* a request the worker did not get to */
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
