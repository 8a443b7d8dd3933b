/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-profile-rotate.c: an always-on profile's files, on its session's
 * worker: rotation into a new file, retention, a pause on a full disk and the
 * resume, and the last file at the end.
 *
 * PUBLIC INTERFACES (daemon-internal, daemon-int.h)
 *   session_profile_tick()     after each merge round: rotate, retain, pause or resume
 *   session_profile_finish()   at the end: the last file closed, retention once more
 *
 * IMPLEMENTATION NOTES
 *   The worker's alone, but for what main reads for status: the path and the
 *   note (under the profile's lock) and the counters (relaxed atomics).  One
 *   file is closed (CLOSELOG, synced, its FILE.kallsyms, then queued for its
 *   push) and the next begun between two merge rounds, at one time stamp, so no
 *   record is lost between them; the new file reads alone (its head, the model
 *   replayed, the kernel's MAP_INs, its vDSO image).  The files' names and the
 *   retention rules are daemon-profile.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "daemon-ctl.h"
#include "daemon-int.h"
#include "hwpmcd/common.h"
#include "hwpmcd/files.h"
#include "hwpmcd/log.h"

/* ---- always-on profiles: rotation, retention, a full disk ---- */

/* A copy of the profile's current file path (written by the worker, read by main). */
static void profile_path(struct session_profile *pf, char *buf, size_t len)
{
	pthread_mutex_lock(&pf->lock);
	snprintf(buf, len, "%s", pf->path);
	pthread_mutex_unlock(&pf->lock);
}

static void profile_set_path(struct session_profile *pf, const char *path)
{
	pthread_mutex_lock(&pf->lock);
	snprintf(pf->path, sizeof(pf->path), "%s", path);
	pthread_mutex_unlock(&pf->lock);
}

static void profile_set_note(struct session_profile *pf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void profile_set_note(struct session_profile *pf, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&pf->lock);
	va_start(ap, fmt);
	vsnprintf(pf->note, sizeof(pf->note), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&pf->lock);
}

/*
 * The compact kernel symbols of the file that just closed, as FILE.kallsyms: the
 * symbols its CALLCHAINs' kernel PCs need; then the PC set starts afresh for
 * the next file.  Best effort: the log reads without it (the report falls back
 * to /proc/kallsyms of the same boot).
 */
static void profile_ks_write(struct session *s, const char *log)
{
	char path[sizeof(s->prof->path) + 16], err[512], *buf = NULL;
	size_t len = 0, nsyms = 0, npcs;
	int fd, r;

	if (!s->prof->kallsyms)
		return;
	session_ks_join(s);
	if (s->ks && !s->pcs.full) {
		npcs = daemon_pcset__sort(&s->pcs);
		r = daemon_ksyms__compact(s->ks, s->pcs.slot, npcs, &buf, &len, &nsyms);
	} else {
		/* No table (kptr_restrict), or too many PCs: the full table, if there is one. */
		r = s->ks ? 0 : -ENODATA;
	}
	snprintf(path, sizeof(path), "%s.kallsyms", log);
	fd = r < 0 ? -1 : util_file_new(path, 0, err, sizeof(err));
	if (fd >= 0) {
		if (buf)
			r = util_write_all(fd, buf, len, NULL);
		else
			r = daemon_ksyms__write_all(s->ks, fd);
		if (r < 0 || fdatasync(fd) < 0) {
			/* A torn table would name PCs wrongly: none is better. */
			(void)unlink(path);
		}
		close(fd);
	}
	free(buf);
	daemon_pcset__exit(&s->pcs);
	(void)daemon_pcset__init(&s->pcs, DAEMON_KSYMS_PCS_MAX);
}

/* The end of the current file at @t: CLOSELOG, synced, its kernel symbols, closed. */
static int profile_close_file(struct session *s, uint64_t t)
{
	char path[sizeof(s->prof->path)];
	int r = session_write_lost(s, t); /* the file's own: the next one starts at none */

	if (r == 0)
		r = plog_writer__append_closelog(s->w, t);
	if (r == 0)
		r = plog_writer__sync(s->w);
	if (r < 0)
		return r;
	profile_path(s->prof, path, sizeof(path));
	profile_ks_write(s, path);
	close(s->p.out_fd);
	s->p.out_fd = -1;
	/* Whole, synced and with its .kallsyms: it may go to the profile's push_url. */
	{
		/*
		 * A budget moves the rate: the report weights each sample by its period,
		 * in samples at the rate the file began with (pmclog-format.md 11.13), so
		 * that is the rate that turns its counts into seconds.
		 */
		uint64_t hz = s->prof->file_rate_hz;

		session_jit__closed(s->jit, &s->prof->def, path, (int64_t)s->prof->file_wall0,
				    (int64_t)time(NULL),
				    s->prof->def.period ? 0
				    : s->prof->def.cpu_budget_percent && hz ? (uint32_t)hz
				    : s->prof->def.freq);
	}
	return 0;
}

/*
 * A new file at @t that reads alone: INITIALIZE and the rest of the head, every
 * live process and its mappings from the model, the kernel's MAP_INs (as
 * hwpmc's pmc_log_all_process_mappings at a log's start), and its vDSO image.
 * Records after @t go to it; none is lost between the files, as the worker
 * writes both between two merge rounds.
 */
static int profile_open_next(struct session *s, uint64_t t)
{
	struct session_profile *pf = s->prof;
	char path[sizeof(pf->path)];
	time_t wall0 = time(NULL);
	int fd, r;

	fd = daemon_profile_open_file(pf->dir, pf->def.name, wall0, path, sizeof(path));
	if (fd < 0)
		return fd;
	pf->file_wall0 = wall0;
	r = plog_writer__restart(s->w, fd);
	if (r < 0) {
		close(fd);
		(void)unlink(path);
		return r;
	}
	s->p.out_fd = fd;
	profile_set_path(pf, path);
	pf->file_t0 = t;
	pf->file_bytes0 = plog_writer__stats(s->w)->bytes;
	pf->file_samples0 = s->stats.samples;
	__atomic_fetch_add(&pf->files, 1, __ATOMIC_RELAXED);
	r = session_write_head(s, t);
	if (r == 0)
		r = maplog__replay(s->ml, t);
	if (r == 0 && s->p.kernel)
		r = maplog__scan_kernel(s->ml, t, NULL, NULL);
	if (r == 0)
		r = plog_writer__flush(s->w);
	if (r == 0)
		daemon_write_vdso_beside(path);
	if (r == 0)
		session_jit__rotate(s->jit, path);
	return r;
}

/* Retention, and what is on disk now for status. */
static void profile_retain(struct session *s)
{
	struct session_profile *pf = s->prof;
	struct daemon_retain ret;
	char cur[sizeof(pf->path)];
	int r;

	profile_path(pf, cur, sizeof(cur));
	r = daemon_profile_retain(pf->dir, pf->def.name, cur[0] ? cur : NULL, pf->def.retain_bytes,
				  pf->def.retain_seconds, time(NULL), &ret);
	__atomic_store_n(&pf->disk_bytes, ret.bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&pf->disk_files, ret.files, __ATOMIC_RELAXED);
	__atomic_fetch_add(&pf->deleted_files, ret.deleted_files, __ATOMIC_RELAXED);
	if (ret.deleted_files)
		log_info("profile %s: retention deleted %" PRIu64 " files (%" PRIu64 " bytes)",
			 pf->def.name, ret.deleted_files, ret.deleted_bytes);
	if (r < 0)
		log_warn_errno(r, "profile %s: retention in '%s' failed, ignoring", pf->def.name,
			       pf->dir);
	pf->next_retain_ms = util_mono_ms() + PROFILE_RETAIN_EVERY_MS;
}

/*
 * The disk is full (@r: ENOSPC or EDQUOT): the file keeps what was written (the
 * writer cuts it back to its last whole record), the rest is given up, and
 * nothing more is written until there is room; sampling and the model go on.
 */
static void profile_pause(struct session *s, int r)
{
	struct session_profile *pf = s->prof;
	size_t lost = plog_writer__abandon(s->w);

	if (s->p.out_fd >= 0)
		close(s->p.out_fd);
	s->p.out_fd = -1;
	if (s->stats.samples == pf->file_samples0 && pf->path[0]) {
		/* Only (part of) a head: a file without a sample is of no use to anyone. */
		char side[sizeof(pf->path) + 8];

		(void)unlink(pf->path);
		snprintf(side, sizeof(side), "%s.vdso", pf->path);
		(void)unlink(side);
	}
	profile_set_path(pf, "");
	profile_set_note(pf, "paused: %s in '%s' (%zu bytes not written); resumes when %" PRIu64
			 " bytes are free", strerror(-r), pf->dir, lost, profile_resume_free(pf));
	__atomic_store_n(&pf->paused, true, __ATOMIC_RELAXED);
	__atomic_fetch_add(&pf->pauses, 1, __ATOMIC_RELAXED);
	if (s->ks_collect) {
		daemon_pcset__exit(&s->pcs);
		(void)daemon_pcset__init(&s->pcs, DAEMON_KSYMS_PCS_MAX);
	}
	log_warn("profile %s: %s in '%s': paused, its samples are counted but not written "
		 "until %" PRIu64 " bytes are free", pf->def.name, strerror(-r), pf->dir,
		 profile_resume_free(pf));
	pf->next_check_ms = util_mono_ms() + PROFILE_CHECK_EVERY_MS;
}

static bool disk_full(int r)
{
	return r == -ENOSPC || r == -EDQUOT;
}

/* After each merge round (@r its result): rotate, retain, pause or resume.  0 or an error. */
int session_profile_tick(struct session *s, int r)
{
	struct session_profile *pf = s->prof;
	int64_t now = util_mono_ms();
	uint64_t t;

	if (disk_full(r) && !pf->paused) {
		profile_pause(s, r);
		return 0;
	}
	if (r < 0)
		return r;
	if (pf->paused) {
		struct statvfs sv;

		if (now < pf->next_check_ms)
			return 0;
		pf->next_check_ms = now + PROFILE_CHECK_EVERY_MS;
		profile_retain(s);
		if (statvfs(pf->dir, &sv) < 0 ||
		    (uint64_t)sv.f_bavail * sv.f_frsize < profile_resume_free(pf))
			return 0;
		r = profile_open_next(s, session_stamp(s));
		if (disk_full(r)) {
			/* Not room enough for a head after all: wait for more. */
			char path[sizeof(pf->path)];

			profile_path(pf, path, sizeof(path));
			(void)plog_writer__abandon(s->w);
			close(s->p.out_fd);
			s->p.out_fd = -1;
			(void)unlink(path);
			profile_set_path(pf, "");
			return 0;
		}
		if (r < 0)
			return r;
		__atomic_store_n(&pf->paused, false, __ATOMIC_RELAXED);
		profile_set_note(pf, "%s", "");
		log_notice("profile %s: resumed: writing '%s'", pf->def.name, pf->path);
		return 0;
	}
	if ((pf->def.rotate_seconds &&
	     util_now_ns(CLOCK_MONOTONIC) - pf->file_t0 >= pf->def.rotate_seconds * 1000000000ull) ||
	    (pf->def.rotate_bytes &&
	     plog_writer__stats(s->w)->bytes - pf->file_bytes0 >= pf->def.rotate_bytes)) {
		/* The new file's head names the cgroups that are the unit's now. */
		r = session_filter_follow(s);
		t = session_stamp(s);
		if (r == 0)
			r = profile_close_file(s, t);
		if (r == 0)
			r = profile_open_next(s, t);
		if (disk_full(r)) {
			profile_pause(s, r);
			return 0;
		}
		if (r < 0)
			return r;
		__atomic_fetch_add(&pf->rotations, 1, __ATOMIC_RELAXED);
		profile_retain(s);
	} else if (now >= pf->next_retain_ms) {
		profile_retain(s);
	}
	return 0;
}

/* The end of a profile's session (@r: how its last round went): its last file closed. */
int session_profile_finish(struct session *s, int r)
{
	struct session_profile *pf = s->prof;

	if (disk_full(r) && !pf->paused)
		profile_pause(s, r);
	else if (r == 0 && !pf->paused)
		r = profile_close_file(s, session_stamp(s));
	if (disk_full(r)) {
		profile_pause(s, r);
		r = 0;
	}
	s->ks_collect = false;
	session_ks_join(s);
	daemon_ksyms__free(s->ks);
	s->ks = NULL;
	daemon_pcset__exit(&s->pcs);
	profile_retain(s);
	return pf->paused ? 0 : r;
}
