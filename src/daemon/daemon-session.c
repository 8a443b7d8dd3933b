/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-session.c: one recording session: collectors, time-ordered merge, log.
 *
 * PUBLIC INTERFACES (daemon-internal, daemon-int.h)
 *   session__new(), session__launch(), session__request_stop(), session__reap(),
 *   session__free(), session_state_name(), session__bytes()
 *   session_stamp(), session_write_head(),     for the worker's parts in other files
 *   session_filter_follow()
 *
 * IMPLEMENTATION NOTES
 *   Start (main thread): open every CPU's counters (so errors reach the client),
 *   write INITIALIZE, the USERDATA mark of the MAP_IN rule and one PMCALLOCATEDYN
 *   per event, take T0 = now, enable the
 *   counters, then write the /proc scan and the kernel's MAP_INs with time stamp
 *   T0.  Every ring record is younger than T0, so the log's time stamps never go
 *   backwards; MMAP2 records that repeat what the scan saw are deduplicated by
 *   maplog.
 *
 *   The worker thread (one per session) runs the merge.  Each round takes W =
 *   now, snapshots every ring's head, and repeatedly emits the oldest record
 *   with time <= W among the rings' next records; records younger than W stay in
 *   their ring (the tail is not moved past them) for the next round, so nothing
 *   is copied.  Each ring is in time order, so this is a k-way merge, and since a
 *   record that shows up later was written after W was taken, the output is in
 *   non-decreasing time order.  The rare record that is older than one already
 *   written (an NMI racing a side-band record) gets the newer time stamp and is
 *   counted as `reordered`.  This deviates from STYLE.md 7 (one collector thread
 *   per CPU feeding SPSC queues): one thread reading rings in place is cheaper
 *   at this scale and copies nothing; docs/DESIGN.md says so.
 *
 *   Stop: the counters are disabled, the rings drained with W = infinity,
 *   CLOSELOG written and the log fdatasync'ed.  A write error (ENOSPC, EPIPE)
 *   ends the session in state "error" with the error kept for status.
 *
 *   A stalled output (a pipe or socket whose reader stopped reading) must not
 *   stop the worker, or session__stop(), which main calls on `stop` and when a
 *   client goes away, would wait for it forever with the whole daemon.  So the
 *   writer is in no-wait mode (plog_writer__set_nowait, SESSION_BACKLOG_* in
 *   daemon-int.h): it only writes what the output takes without waiting, the
 *   worker keeps draining the rings (the kernel is never throttled by a slow
 *   reader), the records queue in a backlog, and beyond SESSION_BACKLOG_DROP
 *   bytes samples are dropped and counted as lost (and dropped), with a
 *   DROPNOTIFY in the log where each run of drops began; bookkeeping records are
 *   never dropped, and SESSION_BACKLOG_MAX of them ends the session (ENOBUFS).
 *   A full output is tried again once per merge round.  At the end the worker
 *   waits for the output while it takes data, but gives up after
 *   SESSION_DRAIN_IDLE_MS without progress (ETIMEDOUT: the log lacks its tail
 *   and CLOSELOG), so a stop returns within about a second even then.
 *
 *   Kernel symbols: the worker adds the kernel PCs of every CALLCHAIN it writes
 *   to its PC set (collect_kernel_pcs()); the file, and the thread that writes
 *   its full table, are daemon-session-ks.c's.
 *
 *   The worker's other parts are in the files of their concern: an always-on
 *   profile's files (daemon-profile-rotate.c) and CPU budget
 *   (daemon-profile-budget.c), called after each merge round, and the perf fd
 *   budget its setup takes from (daemon-perf-fds.c).
 */
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "daemon-ctl.h"
#include "daemon-int.h"
#include "hwpmcd/common.h"
#include "hwpmcd/log.h"
#include "hwpmcd/maplog-jit.h"
#include "hwpmcd/unwind.h"

#define ST_ADD(s, f, n) __atomic_fetch_add(&(s)->stats.f, (n), __ATOMIC_RELAXED)

const char *session_state_name(int state)
{
	static const char *const names[SESSION_STATE_MAX] = {
		[SESSION_STARTING] = "starting", [SESSION_RUNNING] = "running",
		[SESSION_STOPPING] = "stopping", [SESSION_DONE] = "done",
		[SESSION_ERROR] = "error",
	};

	return (unsigned)state < SESSION_STATE_MAX ? names[state] : "unknown";
}

static void set_state(struct session *s, int st)
{
	__atomic_store_n(&s->state, st, __ATOMIC_RELEASE);
}

/* The first error of the session, with a message for status that says what failed. */
static void set_error(struct session *s, int err, size_t pending)
{
	int zero = 0;

	if (!__atomic_compare_exchange_n(&s->error, &zero, err, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return;
	if (err == -ENOBUFS)
		snprintf(s->error_msg, sizeof(s->error_msg),
			 "output stalled: it took nothing while %u MiB of records that cannot be "
			 "dropped waited for it", SESSION_BACKLOG_MAX >> 20);
	else if (err == -ETIMEDOUT)
		snprintf(s->error_msg, sizeof(s->error_msg),
			 "output stalled: at the end it took nothing for %d s (%zu bytes of the "
			 "log's tail and CLOSELOG were not written)", SESSION_DRAIN_IDLE_MS / 1000,
			 pending);
	else if (err == -EPIPE)
		snprintf(s->error_msg, sizeof(s->error_msg),
			 "writing the log: %s (its reader went away)", strerror(-err));
	else
		snprintf(s->error_msg, sizeof(s->error_msg), "writing the log: %s", strerror(-err));
}

uint64_t session__bytes(const struct session *s)
{
	return s->w ? __atomic_load_n(&plog_writer__stats(s->w)->bytes, __ATOMIC_RELAXED) : 0;
}

/* maplog callbacks: bookkeeping into the log. */
static int ml_proc_create(void *ctx, uint64_t t, int32_t pid, uint32_t flags, const char *name)
{
	struct session *s = ctx;

	if (session_paused(s))
		return 0;
	return plog_writer__append_proc_create(s->w, t, pid, flags, name);
}

static int ml_thr_create(void *ctx, uint64_t t, int32_t tid, int32_t pid, uint32_t flags,
			 const char *name)
{
	struct session *s = ctx;

	if (session_paused(s))
		return 0;
	return plog_writer__append_thr_create(s->w, t, tid, pid, flags, name);
}

static int ml_map_in(void *ctx, uint64_t t, int32_t pid, uint64_t start, const char *path)
{
	struct session *s = ctx;

	if (session_paused(s))
		return 0;
	if (pid == MAPLOG_PID_KERNEL && !s->p.kernel)
		return 0;
	return plog_writer__append_map_in(s->w, t, pid, start, path);
}

/*
 * A mark of hwpmcd's that carries bytes (pmclog-format.md 11.10, 11.11): the word
 * @mark, the length @n, then the @n bytes four to a word, little-endian,
 * zero-padded; all at time @t.
 */
static int write_bytes_mark(struct session *s, uint64_t t, uint32_t mark, const void *bytes,
			    size_t n)
{
	const uint8_t *p = bytes;
	int r = plog_writer__append_userdata(s->w, t, mark);

	if (r == 0)
		r = plog_writer__append_userdata(s->w, t, (uint32_t)n);
	for (size_t i = 0; r == 0 && i < n; i += 4) {
		uint8_t b[4] = { 0 };

		memcpy(b, p + i, n - i < 4 ? n - i : 4);
		r = plog_writer__append_userdata(s->w, t, (uint32_t)b[0] | (uint32_t)b[1] << 8 |
								  (uint32_t)b[2] << 16 |
								  (uint32_t)b[3] << 24);
	}
	return r;
}

/* The build id of the next MAP_IN's file (pmclog-format.md 11.11). */
static int ml_build_id(void *ctx, uint64_t t, const uint8_t *id, size_t len)
{
	struct session *s = ctx;

	if (session_paused(s))
		return 0;
	return write_bytes_mark(s, t, PLOG_USERDATA_HWPMCD_BUILDID, id, len);
}

/* The cgroup of @pid from @t on (pmclog-format.md 11.12). */
static int ml_cgroup(void *ctx, uint64_t t, int32_t pid, const char *path)
{
	struct session *s = ctx;
	uint8_t b[4 + PLOG_CGROUP_PATH_MAX];
	size_t n = strlen(path);

	if (session_paused(s) || n > PLOG_CGROUP_PATH_MAX)
		return 0;
	b[0] = (uint8_t)pid;
	b[1] = (uint8_t)((uint32_t)pid >> 8);
	b[2] = (uint8_t)((uint32_t)pid >> 16);
	b[3] = (uint8_t)((uint32_t)pid >> 24);
	memcpy(b + 4, path, n);
	return write_bytes_mark(s, t, PLOG_USERDATA_HWPMCD_CGROUP, b, 4 + n);
}

static int ml_map_out(void *ctx, uint64_t t, int32_t pid, uint64_t start, uint64_t end)
{
	struct session *s = ctx;

	if (session_paused(s))
		return 0;
	return plog_writer__append_map_out(s->w, t, pid, start, end);
}

static int ml_procfork(void *ctx, uint64_t t, int32_t oldpid, int32_t newpid)
{
	struct session *s = ctx;

	if (session_paused(s))
		return 0;
	return plog_writer__append_procfork(s->w, t, oldpid, newpid);
}

static int ml_sysexit(void *ctx, uint64_t t, int32_t pid)
{
	struct session *s = ctx;

	if (session_paused(s))
		return 0;
	return plog_writer__append_sysexit(s->w, t, pid);
}

static int ml_thr_exit(void *ctx, uint64_t t, int32_t tid)
{
	struct session *s = ctx;

	if (session_paused(s))
		return 0;
	return plog_writer__append_thr_exit(s->w, t, tid);
}

static void ml_maps_changed(void *ctx, int32_t pid)
{
	struct session *s = ctx;

	if (s->uw)
		unwind_ctx__flush(s->uw, pid);
}

/* The unwinder's view of a process: the session's maplog, as of this record. */
static const struct maplog_map *uw_find_map(void *ctx, int32_t pid, uint64_t addr)
{
	struct session *s = ctx;

	return maplog__find_map(s->ml, pid, addr);
}

/*
 * A process the start-time scan finds (a listed pid or a descendant of one) enters
 * a non-administrator's log only if that user may profile it.  A gated session's
 * scan asks of every process: that most are someone else's is no news.
 */
static bool ml_may_scan(void *ctx, int32_t pid)
{
	struct session *s = ctx;
	char err[256];
	int r;

	if (s->p.who.admin)
		return true;
	r = daemon_auth_target("/proc", &s->p.who, pid, err, sizeof(err));
	if (r < 0 && r != -ESRCH && !s->gated)
		log_info("uid %u: process %d left out of the log: %s", (unsigned)s->p.who.uid,
			 (int)pid, err);
	return r == 0;
}

/*
 * The proof that what a scan reads of @pid is the user's (maplog.h, open_maps):
 * /proc/PID/maps opened with the user's credentials, so that the kernel's ptrace
 * check and its hold on the address space are one step.  An administrator's
 * sessions may see every process: a plain open.
 */
static int ml_open_maps(void *ctx, int32_t pid)
{
	struct session *s = ctx;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (s->p.who.admin) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	return daemon_auth_open_as(&s->p.who, path, O_RDONLY);
}

static const struct maplog_ops session_maplog_ops = {
	.proc_create = ml_proc_create,
	.thr_create = ml_thr_create,
	.map_in = ml_map_in,
	.map_out = ml_map_out,
	.procfork = ml_procfork,
	.sysexit = ml_sysexit,
	.thr_exit = ml_thr_exit,
	.maps_changed = ml_maps_changed,
	.may_scan = ml_may_scan,
	.open_maps = ml_open_maps,
	.build_id = ml_build_id,
	.cgroup = ml_cgroup,
};

/*
 * The PCs of a dwarf-mode sample: the kernel's callchain (kernel PCs only, as
 * exclude_callchain_user is set), then the user frames unwound from the sample's
 * registers and stack snapshot, for user-mode samples and for kernel-mode
 * samples of user threads alike (pmclog-format.md 11.3).
 */
static uint32_t dwarf_pcs(struct session *s, const struct rec *r, uint64_t *pcs, uint32_t max,
			  bool in_exec)
{
	const struct rec_sample *sm = &r->u.sample;
	struct rec_sample bare;
	enum unwind_outcome o;
	uint32_t n = coll_sample_chain(sm, pcs, max);
	int k;

	if (in_exec && sm->stack) {
		/* Inside an exec: the snapshot is the new address space's (maplog.h). */
		bare = *sm;
		bare.stack_dyn_size = 0;
		sm = &bare;
	}
	if ((int32_t)r->pid > 0 && n < max && sm->regs_abi != 0) {
		k = unwind_ctx__unwind(s->uw, (int32_t)r->pid, sm, pcs + n, max - n, &o);
		if (k > 0)
			n += (uint32_t)k;
	}
	if (n == 0 && max > 0 && sm->ip)
		pcs[n++] = sm->ip;
	return n;
}

/*
 * A sample inside an exec, after the old address space went (maplog__sample()
 * returned 1): its chain keeps the kernel's frames and the user IP; user frames
 * past it were read from the new address space.
 */
static uint32_t cut_after_user_ip(const uint64_t *pcs, uint32_t npc)
{
	for (uint32_t i = 0; i < npc; i++)
		if (pcs[i] < DAEMON_KERNEL_PC_MIN)
			return i + 1;
	return npc;
}

/* The unwinder's counters, for status (relaxed stores, as the other statistics). */
static void publish_unwind(struct session *s)
{
	const struct unwind_stats *us;

	if (!s->uw)
		return;
	us = unwind_ctx__stats(s->uw);
	__atomic_store_n(&s->stats.unwound, us->samples, __ATOMIC_RELAXED);
	for (int i = 0; i < UNWIND_OUTCOME_MAX; i++)
		__atomic_store_n(&s->stats.unwind[i], us->outcomes[i], __ATOMIC_RELAXED);
	__atomic_store_n(&s->stats.fp_steps, us->fp_steps, __ATOMIC_RELAXED);
	__atomic_store_n(&s->stats.fp_frameless, us->fp_frameless, __ATOMIC_RELAXED);
	__atomic_store_n(&s->stats.fp_refused, us->fp_refused, __ATOMIC_RELAXED);
	__atomic_store_n(&s->stats.epilogue_regs, us->epilogue_regs, __ATOMIC_RELAXED);
	__atomic_store_n(&s->stats.own_tables, us->own_tables, __ATOMIC_RELAXED);
	__atomic_store_n(&s->stats.elf_opened, us->elf_opened, __ATOMIC_RELAXED);
	__atomic_store_n(&s->stats.elf_evicted, us->elf_evicted, __ATOMIC_RELAXED);
	__atomic_store_n(&s->stats.elf_bytes, us->elf_bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&s->stats.elf_too_big, us->elf_too_big, __ATOMIC_RELAXED);
	__atomic_store_n(&s->stats.elf_reads, us->elf_reads, __ATOMIC_RELAXED);
	__atomic_store_n(&s->stats.elf_dropped, us->elf_dropped, __ATOMIC_RELAXED);
}

/* The filter's counts, for status. */
static void publish_filter(struct session *s)
{
	struct filt_stats fs;

	if (!s->filt || filt__stats(s->filt, &fs) < 0)
		return;
	__atomic_store_n(&s->stats.filt_kept, fs.kept, __ATOMIC_RELAXED);
	__atomic_store_n(&s->stats.filt_dropped, fs.dropped, __ATOMIC_RELAXED);
}

/*
 * The hot path's part of the kernel symbols: the leading kernel PCs of a chain
 * that was written.  No allocation but the set's rare doubling; a full set only
 * counts (daemon_pcset__add).
 */
static inline void collect_kernel_pcs(struct session *s, const uint64_t *pcs, uint32_t npc)
{
	for (uint32_t i = 0; i < npc && pcs[i] >= DAEMON_KERNEL_PC_MIN; i++)
		(void)daemon_pcset__add(&s->pcs, pcs[i]);
}

/* One record of the merge, in time order.  Returns 0 or a write error. */
static int emit(struct session *s, struct coll_cpu *c, struct rec *r)
{
	uint64_t pcs[PLOG_CALLCHAIN_DEPTH_MAX];
	uint64_t taken = r->time; /* before the merge's order moves it */
	uint64_t uip;
	uint32_t npc, flags;
	bool in_exec;
	int ev, k;

	if (r->time < s->last_tsc) {
		ST_ADD(s, reordered, 1);
		r->time = s->last_tsc;
	}
	s->last_tsc = r->time;
	switch (r->type) {
	case REC_SAMPLE:
		ev = coll_cpu__event_index(c, r->u.sample.id);
		if (ev < 0) {
			ST_ADD(s, unknown_id, 1);
			return 0;
		}
		uip = coll_sample_user_ip(&r->u.sample);
		/*
		 * A process first met in a sample (its PROCFORK lost with other
		 * records): into the model and the log, if it is still the sample's
		 * (not in a gated model: maplog__vouch() shows processes there).
		 */
		k = maplog__adopt(s->ml, r->time, (int32_t)r->pid, uip);
		if (k < 0)
			return k;
		/* A sample that shows a new image running ends its exec (maplog.h). */
		k = maplog__sample(s->ml, r->time, (int32_t)r->pid, r->u.sample.mode == REC_MODE_USER,
				   uip);
		if (k < 0)
			return k;
		in_exec = k == 1;
		if (session_paused(s)) {
			/* not written: lost, as status, 'hwpmc profiles' and the end line count it */
			__atomic_fetch_add(&s->prof->paused_samples, 1, __ATOMIC_RELAXED);
			ST_ADD(s, lost, 1);
			return 0;
		}
		/*
		 * Gated: the kernel kept this sample, so its process may now be shown;
		 * if the model's process is not the sample's, nothing of it is used.
		 */
		k = s->gated ? maplog__vouch(s->ml, (int32_t)r->pid, taken, r->time) : 1;
		if (k < 0)
			return k;
		if (s->uw && k)
			npc = dwarf_pcs(s, r, pcs, s->p.cfg.depth, in_exec);
		else
			npc = coll_sample_pcs(&r->u.sample, pcs,
					      s->p.cfg.callgraph == COLL_CG_NONE || s->uw
						      ? 1 /* an unvouched dwarf sample: its PC only */
						      : s->p.cfg.depth);
		if (in_exec)
			npc = cut_after_user_ip(pcs, npc);
		if (npc == 0) {
			ST_ADD(s, no_pcs, 1);
			return 0;
		}
		flags = r->u.sample.mode == REC_MODE_USER ? PLOG_CC_F_USERSPACE : 0;
		k = plog_writer__append_callchain(s->w, r->time, (int32_t)r->pid, (int32_t)r->tid,
						  s->pmcids[ev], PLOG_CC_CPUFLAGS(r->cpu, flags), pcs,
						  npc);
		if (k == PLOG_WRITER_DROPPED) {
			/* The output is behind by SESSION_BACKLOG_DROP: a loss, not an error. */
			ST_ADD(s, lost, 1);
			ST_ADD(s, dropped, 1);
			s->drop_run++;
			return 0;
		}
		/* the run of drops is over: how many it lost (11.14), bookkeeping is never dropped */
		if (k == 0 && s->drop_run)
			k = session_write_lost(s, r->time);
		if (k == 0) {
			ST_ADD(s, samples, 1);
			if (s->ks_collect)
				collect_kernel_pcs(s, pcs, npc);
		}
		return k;
	case REC_LOST:
		ST_ADD(s, lost, r->u.lost.lost);
		if (s->gated) {
			/* Side-band records may be gone: no process is known to be what it was. */
			k = maplog__forget_all(s->ml, r->time);
			if (k < 0)
				return k;
			s->gate_rescan = true;
		}
		if (session_paused(s))
			return 0;
		k = plog_writer__append_dropnotify(s->w, r->time);
		s->drop_run += r->u.lost.lost;
		return k == 0 ? session_write_lost(s, r->time) : k;
	case REC_THROTTLE:
		ST_ADD(s, throttled, 1);
		return 0;
	case REC_UNTHROTTLE:
		return 0;
	default:
		return maplog__record(s->ml, r);
	}
}

/* The filter in effect from @t (pmclog-format.md 11.10): its text in USERDATA words. */
static int write_filter_mark(struct session *s, uint64_t t, const char *text)
{
	return write_bytes_mark(s, t, PLOG_USERDATA_HWPMCD_FILTER, text, strlen(text));
}

/* How often a filter's cgroups and units are looked up again (session_filter_follow()). */
#define FILTER_FOLLOW_EVERY_MS 2000

/*
 * A filter that names cgroups or units follows them: each is looked up again, and
 * a new cgroup id (a unit restarted, or started after the session; a cgroup made
 * again) replaces the old one in the kernel's maps, with a mark in the log.  One
 * that is gone matches nothing until it is back.  On the worker, every
 * FILTER_FOLLOW_EVERY_MS and before a profile's new file; a lookup is bounded
 * (daemon_filter_resolve()).  Returns 0 or a write error.
 */
int session_filter_follow(struct session *s)
{
	struct daemon_filter *f;
	char root[512], err[256];
	uint32_t gen;
	bool changed = false;
	int r;

	s->filt_follow_ms = util_mono_ms() + FILTER_FOLLOW_EVERY_MS;
	if (!s->filt)
		return 0;
	/* A filter of pids, uids or names only has nothing to look up: no copy, no read. */
	pthread_mutex_lock(&s->filt_lock);
	r = (int)(s->p.filter.ncgroups + s->p.filter.nunits);
	pthread_mutex_unlock(&s->filt_lock);
	if (r == 0 || daemon_cgroup2_root("/proc/self/mounts", root, sizeof(root)) < 0 ||
	    !(f = malloc(sizeof(*f))))
		return 0;
	pthread_mutex_lock(&s->filt_lock);
	*f = s->p.filter;
	gen = s->filt_gen;
	pthread_mutex_unlock(&s->filt_lock);
	f->missing_ok = true;
	r = daemon_filter_resolve(f, root, true, err, sizeof(err));
	if (r < 0) {
		/* (Several cgroups of a unit's name now ...): the filter stays as it was. */
		log_debug("session %d: filter: %s", s->id, err);
		free(f);
		return 0;
	}
	pthread_mutex_lock(&s->filt_lock);
	/* The same text may stand for a new id: a unit restarted in a directory of its name. */
	if (gen == s->filt_gen && (strcmp(f->text, s->p.filter.text) != 0 ||
				   memcmp(f->spec.cgroups, s->p.filter.spec.cgroups,
					  sizeof(f->spec.cgroups)) != 0) &&
	    filt__set(s->filt, &f->spec) == 0) {
		s->p.filter = *f;
		changed = true;
	}
	pthread_mutex_unlock(&s->filt_lock);
	r = 0;
	if (changed) {
		log_info("session %d: filter now '%s' (its cgroups looked up again)", s->id, f->text);
		r = write_filter_mark(s, session_stamp(s), f->text);
	}
	free(f);
	return r;
}

/*
 * A filter request main left (cmd_filter()): its cgroups and units looked up here,
 * the filter set in the kernel's maps, the answer left for main, which is woken.
 */
static void filter_request(struct session *s)
{
	struct daemon_filter f;
	char err[sizeof(s->filt_req_err)] = "";
	uint64_t one = 1;
	int r;

	pthread_mutex_lock(&s->filt_lock);
	if (!s->filt_req || s->filt_req_done) {
		pthread_mutex_unlock(&s->filt_lock);
		return;
	}
	f = *s->filt_req;
	pthread_mutex_unlock(&s->filt_lock);
	r = daemon_filter_lookup(&f, err, sizeof(err));
	pthread_mutex_lock(&s->filt_lock);
	if (r == 0) {
		r = s->filt ? filt__set(s->filt, &f.spec) : -EAGAIN;
		if (r < 0)
			snprintf(err, sizeof(err), "filter: the kernel's maps refused the change: %s "
				 "(the previous filter holds)", strerror(-r));
	}
	if (r == 0) {
		s->p.filter = f;
		*s->filt_req = f; /* its text, for main's answer */
		s->filt_gen++;	  /* a follow's lookup begun before is stale */
		snprintf(s->filt_mark, sizeof(s->filt_mark), "%s", f.text);
		s->filt_mark_t = util_now_ns(CLOCK_MONOTONIC);
		__atomic_store_n(&s->filt_mark_pending, 1, __ATOMIC_RELEASE);
	}
	s->filt_req_r = r;
	snprintf(s->filt_req_err, sizeof(s->filt_req_err), "%s", err);
	s->filt_req_done = true;
	pthread_mutex_unlock(&s->filt_lock);
	(void)!write(s->done_efd, &one, sizeof(one));
}

/*
 * Gated, after a loss: the user's live processes into the model again (the start's
 * scan, asking ml_may_scan of each), at most once a second; what the rings still
 * hold from before the scan no longer applies to them.  0 or a write error.
 */
static int gate_rescan(struct session *s)
{
	uint64_t now = util_now_ns(CLOCK_MONOTONIC);

	if (now - s->gate_rescan_ns < 1000000000ull)
		return 0;
	s->gate_rescan = false;
	s->gate_rescan_ns = now;
	return maplog__scan_procs(s->ml, now, NULL, 0, false);
}

/* One merge round up to @w_limit.  Returns 0 or a write error. */
static int merge_round(struct session *s, uint64_t w_limit)
{
	struct rec heads[DAEMON_MAX_CPUS];
	bool have[DAEMON_MAX_CPUS];
	int r = 0;

	for (size_t i = 0; i < s->ncoll; i++) {
		(void)coll_cpu__snapshot(s->coll[i]);
		have[i] = coll_cpu__peek(s->coll[i], &heads[i]) == 1;
		if (s->gated && coll_cpu__room(s->coll[i]) < s->max_rec)
			s->loss_suspect = true;
	}
	if (s->loss_suspect) {
		/*
		 * A ring short of room may be losing side-band records now, or lost some
		 * since its last release, and the kernel's LOST record comes only later,
		 * after records of other CPUs from that time: those must not vouch through
		 * a model that may lack what was lost.  So the model is forgotten before
		 * this round emits anything, as at a LOST record, and scanned again.  A
		 * ring filled only after the snapshot loses records younger than w_limit,
		 * which the next round sees (the check before each release).
		 */
		s->loss_suspect = false;
		ST_ADD(s, loss_suspected, 1);
		r = maplog__forget_all(s->ml, s->last_tsc);
		if (r < 0)
			return r;
		s->gate_rescan = true;
	}
	for (;;) {
		size_t best = SIZE_MAX;

		for (size_t i = 0; i < s->ncoll; i++)
			if (have[i] && heads[i].time <= w_limit &&
			    (best == SIZE_MAX || heads[i].time < heads[best].time))
				best = i;
		if (best == SIZE_MAX)
			break;
		r = emit(s, s->coll[best], &heads[best]);
		coll_cpu__advance(s->coll[best]);
		if (r < 0)
			break;
		have[best] = coll_cpu__peek(s->coll[best], &heads[best]) == 1;
	}
	for (size_t i = 0; i < s->ncoll; i++) {
		const struct coll_cpu_stats *cs = coll_cpu__stats(s->coll[i]);
		struct session_cpu_stats *o = &s->cstats[i];

		if (s->gated && coll_cpu__room(s->coll[i]) < s->max_rec)
			s->loss_suspect = true; /* full at some moment since its last release */
		coll_cpu__release(s->coll[i]);
		/* Published for status while the session runs; read with relaxed loads. */
		__atomic_store_n(&o->samples, cs->records[REC_SAMPLE], __ATOMIC_RELAXED);
		__atomic_store_n(&o->lost, cs->lost, __ATOMIC_RELAXED);
		__atomic_store_n(&o->throttled, cs->records[REC_THROTTLE], __ATOMIC_RELAXED);
		__atomic_store_n(&o->bad, cs->bad, __ATOMIC_RELAXED);
		__atomic_store_n(&o->wrapped, cs->wrapped, __ATOMIC_RELAXED);
	}
	publish_unwind(s);
	publish_filter(s);
	if (r == 0 && __atomic_load_n(&s->filt_mark_pending, __ATOMIC_ACQUIRE)) {
		/* A filter main changed: the log says so, at the time it took effect. */
		char text[sizeof(s->filt_mark)];
		uint64_t t;

		pthread_mutex_lock(&s->filt_lock);
		snprintf(text, sizeof(text), "%s", s->filt_mark);
		t = s->filt_mark_t;
		__atomic_store_n(&s->filt_mark_pending, 0, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&s->filt_lock);
		r = write_filter_mark(s, t, text);
	}
	if (r == 0 && util_mono_ms() >= s->filt_follow_ms)
		r = session_filter_follow(s);
	/* No ELF file stays open between rounds (an unmount would fail on it). */
	unwind_ctx__close_files(s->uw);
	return r;
}

/* A time stamp for a file's boundary (CLOSELOG, a rotation): now, never before the last record. */
uint64_t session_stamp(struct session *s)
{
	uint64_t t = util_now_ns(CLOCK_MONOTONIC);

	if (t < s->last_tsc)
		t = s->last_tsc;
	s->last_tsc = t;
	return t;
}

static int session_setup(struct session *s, char *err, size_t errlen);
static void session_teardown(struct session *s);
static void jit_start(struct session *s);
static void jit_stop(struct session *s);

static void *session_worker(void *arg)
{
	struct session *s = arg;
	struct epoll_event evs[64];
	int ep = epoll_create1(EPOLL_CLOEXEC), r = 0;
	bool stop = false;
	uint64_t one = 1;
	size_t pending = 0;

	uint64_t cpu0;

	/* Signals go to the main thread's signalfd; blocking them all here makes unwinding cheap. */
	(void)unwind_block_all_signals();
	cpu0 = util_now_ns(CLOCK_THREAD_CPUTIME_ID);
	r = session_setup(s, s->error_msg, sizeof(s->error_msg));
	if (r < 0) {
		s->start_error = r;
		__atomic_store_n(&s->error, r, __ATOMIC_RELEASE);
		if (ep >= 0)
			close(ep);
		session_teardown(s);
		s->end_ns = util_now_ns(CLOCK_MONOTONIC);
		set_state(s, SESSION_ERROR);
		(void)!write(s->done_efd, &one, sizeof(one));
		return NULL;
	}
	__atomic_store_n(&s->stats.cpu_ns, util_now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0, __ATOMIC_RELAXED);
	if (s->prof) {
		/* The first file is main's (its path is set); the worker opens the next ones. */
		s->prof->file_t0 = s->last_tsc;
		s->prof->file_bytes0 = 0;
		s->prof->file_samples0 = 0;
		__atomic_store_n(&s->prof->files, 1, __ATOMIC_RELAXED);
		s->prof->next_retain_ms = 0;
	}
	{
		/* Running, unless a stop came during the start (then it stays stopping). */
		int st = SESSION_STARTING;

		(void)__atomic_compare_exchange_n(&s->state, &st, SESSION_RUNNING, false,
						  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	}
	/* Pairs with main's acquire load of started when done_efd wakes it. */
	__atomic_store_n(&s->started, true, __ATOMIC_RELEASE);
	(void)!write(s->done_efd, &one, sizeof(one));
	session_ks_start(s); /* its thread inherits the blocked mask */
	jit_start(s);
	if (ep < 0) {
		set_error(s, -errno, 0);
	} else {
		struct epoll_event e = { .events = EPOLLIN, .data.u64 = UINT64_MAX };

		(void)epoll_ctl(ep, EPOLL_CTL_ADD, s->stop_efd, &e);
		/*
		 * Edge-triggered: the ring fd of a per-process session reports EPOLLHUP
		 * for good once its task (and every task that inherited its counters)
		 * has exited, and level-triggered that would wake this loop without end
		 * (~17,000 empty rounds a second).  An edge comes with every wakeup of
		 * the ring (the watermark), which is what the loop needs; a hung-up fd
		 * cannot be dropped instead, as the other threads' counters of that CPU
		 * still write into its ring and wake it.  Each round drains every
		 * ring, so no edge can be missed for good.
		 */
		e.events = EPOLLIN | EPOLLET;
		for (size_t i = 0; i < s->ncoll; i++) {
			e.data.u64 = i;
			(void)epoll_ctl(ep, EPOLL_CTL_ADD, coll_cpu__fd(s->coll[i]), &e);
		}
	}
	while (ep >= 0 && !stop && r == 0) {
		int n = epoll_wait(ep, evs, 64, 100);

		for (int i = 0; i < n; i++)
			if (evs[i].data.u64 == UINT64_MAX)
				stop = true;
		r = merge_round(s, util_now_ns(CLOCK_MONOTONIC));
		if (r == 0 && s->gate_rescan)
			r = gate_rescan(s);
		filter_request(s);
		/* An output that was full gets another chance once per round, never a wait. */
		if (r == 0 && !session_paused(s))
			r = plog_writer__retry(s->w);
		/* A profile rotates, retains, pauses on a full disk and resumes here. */
		if (s->prof)
			r = session_profile_tick(s, r);
		if (r == 0 && s->prof && s->prof->def.cpu_budget_percent)
			r = session_profile_budget(s);
		/* The worker's CPU so far, for status while it runs. */
		__atomic_store_n(&s->stats.cpu_ns, util_now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0,
				 __ATOMIC_RELAXED);
	}
	/* Drain: nothing new can arrive once the counters are disabled. */
	for (size_t i = 0; i < s->ncoll; i++)
		(void)coll_cpu__disable(s->coll[i]);
	if (r == 0)
		r = merge_round(s, UINT64_MAX);
	if (s->prof) {
		r = session_profile_finish(s, r);
		if (r < 0 && r != -ESHUTDOWN)
			set_error(s, r, 0);
	} else {
		if (r == 0)
			r = session_write_lost(s, session_stamp(s));
		if (r == 0)
			r = plog_writer__append_closelog(s->w, session_stamp(s));
		if (r == 0) {
			/* Waits for a slow reader while it reads, at most SESSION_DRAIN_*_MS. */
			pending = plog_writer__pending(s->w);
			r = plog_writer__sync(s->w);
		}
		if (r < 0 && r != -ESHUTDOWN)
			set_error(s, r, pending);
		session_ks_finish(s, r);
	}
	jit_stop(s);
	if (ep >= 0)
		close(ep);
	session_teardown(s);
	__atomic_store_n(&s->stats.cpu_ns, util_now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0, __ATOMIC_RELAXED);
	s->end_ns = util_now_ns(CLOCK_MONOTONIC);
	set_state(s, __atomic_load_n(&s->error, __ATOMIC_ACQUIRE) ? SESSION_ERROR : SESSION_DONE);
	(void)!write(s->done_efd, &one, sizeof(one));
	return NULL;
}

static void cpuid_string(char *out, size_t outsize)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[256], vendor[64] = "", *v;
	int family = -1, model = -1, stepping = -1;

	snprintf(out, outsize, "Linux-generic");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		v = strchr(line, ':');
		if (!v)
			continue;
		v++;
		if (strncmp(line, "vendor_id", 9) == 0 && !vendor[0])
			sscanf(v, " %63s", vendor);
		else if (strncmp(line, "cpu family", 10) == 0 && family < 0)
			family = atoi(v);
		else if (strncmp(line, "model\t", 6) == 0 && model < 0)
			model = atoi(v);
		else if (strncmp(line, "stepping", 8) == 0 && stepping < 0)
			stepping = atoi(v);
		if (line[0] == '\n')
			break;
	}
	fclose(f);
	if (vendor[0] && family >= 0 && model >= 0)
		snprintf(out, outsize, "%s-%d-%02X-%X", vendor, family, model,
			 stepping < 0 ? 0 : stepping);
}

/*
 * Every thread of the chosen processes, for per-thread counters with inheritance,
 * and (*ret_owner, same length) the process each was listed under.
 */
static int list_tids(const pid_t *pids, size_t npids, pid_t **ret, pid_t **ret_owner,
		     size_t *ret_n, pid_t *ret_missing)
{
	pid_t *t = NULL, *o = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < npids; i++) {
		char path[64];
		size_t before = n;
		DIR *d;
		struct dirent *de;

		snprintf(path, sizeof(path), "/proc/%d/task", (int)pids[i]);
		d = opendir(path);
		if (!d) {
			*ret_missing = pids[i];
			goto fail_srch;
		}
		while ((de = readdir(d))) {
			int tid = atoi(de->d_name);

			if (tid <= 0)
				continue;
			if (n == cap) {
				size_t nc = cap ? 2 * cap : 64;
				pid_t *nt = realloc(t, nc * sizeof(*nt)), *no;

				if (nt)
					t = nt;
				no = nt ? realloc(o, nc * sizeof(*no)) : NULL;
				if (!no) {
					closedir(d);
					free(t);
					free(o);
					return -ENOMEM;
				}
				o = no;
				cap = nc;
			}
			t[n] = tid;
			o[n++] = pids[i];
		}
		closedir(d);
		if (n == before) {
			*ret_missing = pids[i];
			goto fail_srch;
		}
	}
	*ret = t;
	*ret_owner = o;
	*ret_n = n;
	return 0;
fail_srch:
	free(t);
	free(o);
	return -ESRCH;
}

/*
 * A detached session's (and a profile's) JIT maps, kept by a thread of their own
 * (daemon-jit.c); a recording client keeps its own.  An administrator's session
 * looks at every process in scope, a user's at the user's processes only.
 */
static void jit_start(struct session *s)
{
	int r;

	if (!s->path[0] || s->p.no_jit || (s->prof && !s->prof->def.jit_maps))
		return;
	r = session_jit__start(s->prof ? s->prof->path : s->path, s->p.pids, s->p.npids,
			       s->p.who.admin ? -1 : (int64_t)s->p.who.uid, &s->jit);
	if (r < 0)
		log_warn_errno(r, "session %d: JIT maps will not be saved beside '%s'", s->id,
			       s->path);
}

/* ", N WHAT" into @buf, or "" when @n is 0. */
static const char *jit_part(char *buf, size_t size, uint64_t n, const char *what)
{
	if (!n)
		return "";
	snprintf(buf, size, ", %" PRIu64 "%s", n, what);
	return buf;
}

static void jit_stop(struct session *s)
{
	struct maplog_jit_stats st = { 0 };
	char b[6][96];

	if (!s->jit)
		return;
	session_jit__stop(s->jit, &st);
	s->jit = NULL;
	if (!(st.saved || st.refused || st.errors || st.truncated || st.over_open ||
	      st.over_quota || st.bad_lines))
		return;
	/* What happened only: a "0 errors" would read as an error to whoever greps for one. */
	log_info("session %d: JIT maps: %" PRIu64 " saved (%" PRIu64 " bytes)%s%s%s%s%s%s", s->id,
		 st.saved, st.bytes, jit_part(b[0], sizeof(b[0]), st.refused,
					       " refused (not owned by their process's owner)"),
		 jit_part(b[1], sizeof(b[1]), st.truncated, " cut"),
		 jit_part(b[2], sizeof(b[2]), st.over_open, " not kept (too many open)"),
		 jit_part(b[3], sizeof(b[3]), st.over_quota, " not copied (their owner's quota spent)"),
		 jit_part(b[4], sizeof(b[4]), st.bad_lines, " lines left out (not START SIZE NAME)"),
		 jit_part(b[5], sizeof(b[5]), st.errors, " could not be copied"));
}

/* ---- lifecycle ---- */

int session__new(struct session_params *p, int id, const int *cpus, size_t ncpus,
		 struct session **ret_s)
{
	struct session *s = calloc(1, sizeof(*s));
	int r;

	if (!s) {
		if (p->out_fd >= 0)
			close(p->out_fd);
		if (p->ks_fd >= 0)
			close(p->ks_fd);
		p->out_fd = p->ks_fd = -1;
		return -ENOMEM;
	}
	s->id = id;
	pthread_mutex_init(&s->filt_lock, NULL);
	s->uid = p->who.uid;
	s->start_ns = util_now_ns(CLOCK_MONOTONIC); /* status's "seconds" count from the request */
	s->stop_efd = s->done_efd = -1;
	s->p = *p;
	p->out_fd = -1; /* ours now, even on failure */
	p->ks_fd = -1;
	s->p.cfg.events = s->p.events;
	s->p.cfg.nevents = s->p.nevents;
	s->p.cfg.enable_on_exec = s->p.command;
	s->p.cfg.exclude_kernel = !s->p.kernel;
	s->cpus = calloc(ncpus ? ncpus : 1, sizeof(*s->cpus));
	s->cstats = calloc(ncpus ? ncpus : 1, sizeof(*s->cstats));
	s->coll = calloc(ncpus ? ncpus : 1, sizeof(*s->coll));
	if (!s->cpus || !s->cstats || !s->coll) {
		r = -ENOMEM;
		goto fail;
	}
	memcpy(s->cpus, cpus, ncpus * sizeof(*cpus));
	s->ncpus = ncpus;
	s->stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->done_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->stop_efd < 0 || s->done_efd < 0) {
		r = -errno;
		goto fail;
	}
	/* The writer is main's object (its statistics are read for status); its fd is not. */
	r = plog_writer__new(s->p.out_fd, 0, &s->w);
	if (r == 0)
		r = plog_writer__set_nowait(s->w, SESSION_BACKLOG_DROP, SESSION_BACKLOG_MAX,
					    SESSION_DRAIN_IDLE_MS, SESSION_DRAIN_MAX_MS);
	if (r < 0)
		goto fail;
	if (s->p.ks_fd >= 0) {
		r = daemon_pcset__init(&s->pcs, DAEMON_KSYMS_PCS_MAX);
		if (r < 0)
			goto fail;
	}
	set_state(s, SESSION_STARTING);
	*ret_s = s;
	return 0;
fail:
	session__free(s);
	return r;
}

/*
 * Non-administrators: a pidfd for each thread that gets a counter, opened before
 * the counters.  While the task behind a pidfd lives its tid names it and no
 * other, so a pidfd still alive once the counters are open and the tid checked
 * (daemon_auth_tids) proves the counter went to the task that was checked.
 * Kernels without PIDFD_THREAD (before 6.9) get -1s: the /proc check alone.
 */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
static int *open_pidfds(const pid_t *tids, size_t n)
{
	int *fds = malloc((n ? n : 1) * sizeof(*fds));

	for (size_t i = 0; fds && i < n; i++) {
		long fd = syscall(SYS_pidfd_open, tids[i], PIDFD_THREAD);

		fds[i] = fd < 0 ? -1 : (int)fd;
		if (fd < 0 && errno == EINVAL) {
			/* This kernel has no thread pidfds: none for any. */
			for (size_t j = i + 1; j < n; j++)
				fds[j] = -1;
			break;
		}
	}
	return fds;
}

static void close_pidfds(int *fds, size_t n)
{
	for (size_t i = 0; fds && i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
}

int session_write_lost(struct session *s, uint64_t t)
{
	int r = 0;

	while (r == 0 && s->drop_run) {
		uint32_t n = s->drop_run > UINT32_MAX ? UINT32_MAX : (uint32_t)s->drop_run;

		r = plog_writer__append_userdata(s->w, t, PLOG_USERDATA_HWPMCD_LOST);
		if (r == 0)
			r = plog_writer__append_userdata(s->w, t, n);
		if (r == 0)
			s->drop_run -= n;
	}
	return r;
}

/*
 * How event @i samples (pmclog-format.md 11.13), after its PMCALLOCATEDYN: its own
 * period= or freq=, else the session's period, else its frequency: a budgeted
 * profile's rate now, which the rate marks (11.9) change from then on.
 */
static int write_sampling_mark(struct session *s, uint64_t t, size_t i, uint64_t rate_hz)
{
	const struct coll_event_spec *e = &s->p.events[i];
	uint32_t kind = PLOG_SAMPLING_FREQ;
	uint64_t v;
	int r;

	if (e->has_period) {
		kind = PLOG_SAMPLING_PERIOD;
		v = e->period;
	} else if (e->has_freq) {
		v = e->freq;
	} else if (s->p.cfg.period) {
		kind = PLOG_SAMPLING_PERIOD;
		v = s->p.cfg.period;
	} else if (s->prof && s->prof->def.cpu_budget_percent) {
		kind |= PLOG_SAMPLING_F_RATE;
		v = rate_hz;
	} else {
		v = s->p.cfg.freq;
	}
	r = plog_writer__append_userdata(s->w, t, PLOG_USERDATA_HWPMCD_SAMPLING);
	if (r == 0)
		r = plog_writer__append_userdata(s->w, t, s->pmcids[i]);
	if (r == 0)
		r = plog_writer__append_userdata(s->w, t, kind);
	if (r == 0)
		r = plog_writer__append_userdata(s->w, t, (uint32_t)v);
	if (r == 0)
		r = plog_writer__append_userdata(s->w, t, (uint32_t)(v >> 32));
	return r;
}

/*
 * The log head at @t0 (CLOCK_MONOTONIC): INITIALIZE, the USERDATA marks of the
 * MAP_IN rule, of a budgeted profile's rate and of the filter, and one
 * PMCALLOCATEDYN per event with its sampling mark (pmclog-format.md 11.1, 11.8-11.10,
 * 11.13).  The wall-clock
 * time of INITIALIZE is that of @t0, so that a reader can place every record of
 * the log in real time.
 */
int session_write_head(struct session *s, uint64_t t0)
{
	char cpuid[64];
	struct timespec wall;
	uint64_t now, at;
	/* the rate the head's rate mark and sampling marks say: one reading */
	uint64_t hz = s->prof ? __atomic_load_n(&s->prof->rate_hz, __ATOMIC_RELAXED) : 0;
	int r;

	clock_gettime(CLOCK_REALTIME, &wall);
	now = util_now_ns(CLOCK_MONOTONIC);
	at = util_ns(&wall);
	at -= now > t0 ? now - t0 : 0;
	cpuid_string(cpuid, sizeof(cpuid));
	r = plog_writer__append_initialize(s->w, t0, PLOG_CPU_GENERIC, 1000000000,
					   (int64_t)(at / 1000000000ull),
					   (int64_t)(at % 1000000000ull), cpuid);
	/* Which MAP_IN rule this log follows (pmclog-format.md 11.8): readers skip USERDATA. */
	if (r == 0)
		r = plog_writer__append_userdata(s->w, t0, PLOG_USERDATA_HWPMCD_RULE_FREEBSD);
	/* A budgeted profile's file says at which rate it begins (pmclog-format.md 11.9). */
	if (s->prof)
		s->prof->file_rate_hz = hz;
	if (r == 0 && s->prof && s->prof->def.cpu_budget_percent)
		r = plog_writer__append_userdata(s->w, t0, PLOG_USERDATA_HWPMCD_RATE);
	if (r == 0 && s->prof && s->prof->def.cpu_budget_percent)
		r = plog_writer__append_userdata(s->w, t0, (uint32_t)hz);
	if (r == 0 && s->p.filter.on) {
		char text[sizeof(s->p.filter.text)];

		pthread_mutex_lock(&s->filt_lock);
		snprintf(text, sizeof(text), "%s", s->p.filter.text);
		pthread_mutex_unlock(&s->filt_lock);
		r = write_filter_mark(s, t0, text);
	}
	for (size_t i = 0; r == 0 && i < s->p.nevents; i++) {
		uint32_t flags = PLOG_F_NEEDS_LOGFILE;

		if (s->p.cfg.callgraph != COLL_CG_NONE)
			flags |= PLOG_F_CALLCHAIN;
		if (s->p.cfg.callgraph == COLL_CG_DWARF)
			flags |= PLOG_F_USERCALLCHAIN;
		if (s->p.npids)
			flags |= PLOG_F_DESCENDANTS;
		s->pmcids[i] = PLOG_PMCID_SOFT_ANYCPU(i);
		r = plog_writer__append_pmcallocatedyn(s->w, t0, s->pmcids[i], (uint32_t)i, flags,
						       s->p.events[i].name);
		if (r == 0)
			r = write_sampling_mark(s, t0, i, hz);
	}
	return r;
}

/*
 * The start, on the worker: counters, authorization, the filter, the log head,
 * enable, the scan and the kernel's MAP_INs.  0, or -errno with @err.
 */
static int session_setup(struct session *s, char *err, size_t errlen)
{
	size_t ntids = 0;
	pid_t *tids = NULL, *owners = NULL;
	int *pidfds = NULL;
	uint64_t t0, need;
	int r;

	err[0] = '\0';
	if (s->p.filter.on && s->p.filter.ncgroups + s->p.filter.nunits) {
		/* Its cgroups and units, looked up here (directories: never main's work). */
		struct daemon_filter *f = malloc(sizeof(*f));

		if (!f) {
			r = -ENOMEM;
			goto fail;
		}
		pthread_mutex_lock(&s->filt_lock);
		*f = s->p.filter;
		pthread_mutex_unlock(&s->filt_lock);
		r = daemon_filter_lookup(f, err, errlen);
		if (r == 0) {
			pthread_mutex_lock(&s->filt_lock);
			s->p.filter = *f;
			pthread_mutex_unlock(&s->filt_lock);
		}
		free(f);
		if (r < 0)
			goto fail;
	}
	if (s->p.npids) {
		pid_t missing = 0;

		r = list_tids(s->p.pids, s->p.npids, &tids, &owners, &ntids, &missing);
		if (r == -ESRCH) {
			snprintf(err, errlen, "process %d does not exist (it may have exited)",
				 (int)missing);
			goto fail;
		}
		if (r < 0) {
			snprintf(err, errlen, "listing the target threads: %s", strerror(-r));
			goto fail;
		}
	}
	need = (uint64_t)s->ncpus * s->p.nevents * (ntids ? ntids : 1);
	r = session_budget_take(s, need, err, errlen);
	if (r < 0)
		goto fail;
	if (!s->p.who.admin && ntids) {
		pidfds = open_pidfds(tids, ntids);
		if (!pidfds) {
			r = -ENOMEM;
			goto fail;
		}
	}
	for (size_t i = 0; i < s->ncpus; i++) {
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != SESSION_STARTING) {
			/* Stopped (or its client gone) while it started: no use opening the rest. */
			snprintf(err, errlen, "stopped while it started");
			r = -ECANCELED;
			goto fail;
		}
		r = coll_cpu__open(&s->p.cfg, s->cpus[i], tids, ntids, err, errlen, &s->coll[i]);
		if (r < 0)
			goto fail;
		s->ncoll++;
	}
	if (!s->p.who.admin) {
		r = daemon_auth_tids("/proc", tids, owners, pidfds, ntids, err, errlen);
		for (size_t i = 0; r == 0 && i < s->p.npids; i++) {
			r = daemon_auth_target("/proc", &s->p.who, s->p.pids[i], err, errlen);
			if (r < 0)
				log_warn("uid %u: target %d changed during the start: %s",
					 (unsigned)s->p.who.uid, (int)s->p.pids[i], err);
		}
		if (r < 0)
			goto fail;
	}
	close_pidfds(pidfds, ntids);
	free(tids);
	free(owners);
	tids = owners = NULL;
	pidfds = NULL;

	if (s->p.filter.on) {
		/* Before anything is enabled: no sample reaches a ring unfiltered. */
		r = filt__new(&s->filt, err, errlen);
		for (size_t i = 0; r == 0 && i < s->ncoll; i++) {
			r = coll_cpu__set_bpf(s->coll[i], filt__prog_fd(s->filt));
			if (r < 0)
				snprintf(err, errlen, "attaching the BPF sample filter to cpu %d's "
					 "counters: %s", coll_cpu__cpu(s->coll[i]), strerror(-r));
		}
		if (r == 0 && (r = filt__set(s->filt, &s->p.filter.spec)) < 0)
			snprintf(err, errlen, "setting the BPF sample filter: %s", strerror(-r));
		if (r < 0)
			goto fail;
	}
	r = maplog__new(&session_maplog_ops, s, &s->ml);
	if (r < 0)
		goto fail;
	s->gated = !s->p.who.admin && !s->p.npids;
	/* The largest sample: its stack snapshot, call chain, registers and headers. */
	s->max_rec = (uint64_t)s->p.cfg.stack_bytes + 8ull * (s->p.cfg.depth + 8) + 4096;
	if (s->gated) {
		if (!s->p.filter.spec.owner_only || s->p.kernel) {
			/* main's rule (daemon_filter_owner_rule) did not run: never record so. */
			snprintf(err, errlen, "a user's system-wide session without the owner check");
			r = -EPERM;
			goto fail;
		}
		maplog__gate(s->ml);
		s->gate_rescan_ns = util_now_ns(CLOCK_MONOTONIC);
	}
	if (s->p.cfg.callgraph == COLL_CG_DWARF) {
		r = unwind_ctx__new(s->p.unwind_cache_bytes, uw_find_map, s, &s->uw);
		if (r < 0)
			goto fail;
	}

	if (s->prof && s->prof->def.cpu_budget_percent) {
		r = session_profile_budget_start(s, err, errlen);
		if (r < 0)
			goto fail;
	}
	t0 = util_now_ns(CLOCK_MONOTONIC);
	r = session_write_head(s, t0);
	if (r < 0) {
		snprintf(err, errlen, "writing the log head: %s", strerror(-r));
		goto fail;
	}
	/* Arm first, then scan: what changes during the scan is in the rings. */
	if (!s->p.command) {
		for (size_t i = 0; i < s->ncoll; i++) {
			r = coll_cpu__enable(s->coll[i]);
			if (r < 0) {
				snprintf(err, errlen, "cpu %d: enable: %s", coll_cpu__cpu(s->coll[i]),
					 strerror(-r));
				goto fail;
			}
		}
	}
	if (s->p.kernel) {
		r = maplog__scan_kernel(s->ml, t0, NULL, NULL);
		if (r < 0)
			goto fail_write;
	}
	r = maplog__scan_procs(s->ml, t0, s->p.pids, s->p.npids, true);
	if (r < 0)
		goto fail_write;
	s->last_tsc = t0;
	r = plog_writer__flush(s->w);
	if (r < 0)
		goto fail_write;
	return 0;

fail_write:
	snprintf(err, errlen, "writing the process and mapping records: %s", strerror(-r));
fail:
	close_pidfds(pidfds, ntids);
	free(tids);
	free(owners);
	if (!err[0])
		snprintf(err, errlen, "%s", strerror(-r));
	return r;
}

/*
 * The worker's last act: everything whose cost grows with the session (its fds,
 * rings, images, process model) is closed and freed here, and the outputs the
 * client gave are closed here, where a close that takes its time holds up no
 * one but this session.  Only the writer (its statistics) stays for main.
 */
static void session_teardown(struct session *s)
{
	for (size_t i = 0; i < s->ncoll; i++) {
		coll_cpu__free(s->coll[i]);
		s->coll[i] = NULL;
	}
	s->ncoll = 0;
	session_budget_give_back(s);
	unwind_ctx__free(s->uw);
	s->uw = NULL;
	pthread_mutex_lock(&s->filt_lock);
	filt__free(s->filt);
	s->filt = NULL;
	pthread_mutex_unlock(&s->filt_lock);
	if (s->ml)
		s->ml_stats = *maplog__stats(s->ml);
	maplog__free(s->ml);
	s->ml = NULL;
	daemon_ksyms__free(s->ks);
	s->ks = NULL;
	daemon_pcset__exit(&s->pcs);
	if (s->p.out_fd >= 0)
		close(s->p.out_fd);
	if (s->p.ks_fd >= 0)
		close(s->p.ks_fd);
	s->p.out_fd = s->p.ks_fd = -1;
}

int session__launch(struct session *s)
{
	int r = -pthread_create(&s->thread, NULL, session_worker, s);

	if (r < 0)
		return r;
	s->thread_started = true;
	return 0;
}

void session__request_stop(struct session *s)
{
	uint64_t one = 1;
	int st = SESSION_RUNNING;

	if (!__atomic_compare_exchange_n(&s->state, &st, SESSION_STOPPING, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		st = SESSION_STARTING;
		(void)__atomic_compare_exchange_n(&s->state, &st, SESSION_STOPPING, false,
						  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	}
	if (s->stop_efd >= 0)
		(void)!write(s->stop_efd, &one, sizeof(one));
}

bool session__reap(struct session *s)
{
	int st;

	if (!s->thread_started)
		return true;
	/* Pairs with the worker's final set_state() (release), after its teardown. */
	st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
	if (st != SESSION_DONE && st != SESSION_ERROR)
		return false;
	pthread_join(s->thread, NULL); /* it has returned or is returning */
	s->thread_started = false;
	return true;
}

void session__free(struct session *s)
{
	if (!s)
		return;
	/* Never with a live worker: main frees only what session__reap() gave back. */
	session_teardown(s);
	free(s->filt_req); /* a filter request nobody was answered for (main's answer frees it) */
	pthread_mutex_destroy(&s->filt_lock);
	if (s->prof) {
		pthread_mutex_destroy(&s->prof->lock);
		free(s->prof);
	}
	free(s->coll);
	free(s->cpus);
	free(s->cstats);
	plog_writer__free(s->w);
	if (s->stop_efd >= 0)
		close(s->stop_efd);
	if (s->done_efd >= 0)
		close(s->done_efd);
	free(s);
}
