/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-jit.c: the JIT symbol maps (perf-PID.map) of a detached session's and a
 * profile's processes, saved beside its log by a thread of its own.
 *
 * PUBLIC INTERFACES (daemon-internal, daemon-int.h)
 *   session_jit__start(), session_jit__rotate(), session_jit__stop()
 *
 * IMPLEMENTATION NOTES
 *   `hwpmc record` saves the maps of its session itself, as its user.  A detached
 *   session (`hwpmc start`) or an always-on profile has no client to do it, so
 *   the daemon does, with maplog-jit (the same code) on a thread per session: it
 *   reads files the profiled processes control, and a map on FUSE may make a read
 *   wait, which the worker (the sampling path) must never do.  As root it is
 *   stricter than a client: a map is taken only if owned by its process's owner
 *   (strict_owner: never root's file in a user's process), and a user's
 *   system-wide session looks only at that user's processes (only_uid).  The
 *   thread polls every DAEMON_JIT_POLL_MS; at a profile's rotation it copies the
 *   maps it keeps into the closed file's FILE.jit/ and goes on into the new one's
 *   (each file reads alone); at the end it saves them all.  A thread that does
 *   not end within DAEMON_JIT_STOP_MS of the stop (stuck in a read) is left to
 *   end and free itself; the session goes on ending.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon-int.h"
#include "hwpmcd/common.h"
#include "hwpmcd/files.h"
#include "hwpmcd/log.h"
#include "hwpmcd/maplog-jit.h"

struct session_jit {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thr;
	bool stop, done, abandoned;
	char next[800]; /* a rotation's new log ("": none pending) */
	/* A closed file's push (daemon-push.c), queued once its maps are beside it. */
	struct daemon_profile *push_def;
	char push_path[800];
	int64_t push_from, push_until;
	uint32_t push_rate;
	bool push_pending;
	uint64_t cpu_ns; /* the thread's CPU after its last round (atomic) */
	/* the thread's own */
	struct maplog_jit *j;
	struct util_dir parent, jdir;  /* the current log's directory, and LOG.jit in it */
	char name[256];		       /* LOG.jit's name in parent */
	char dir[808];		       /* LOG.jit of the current log, for messages */
	struct maplog_jit_stats st; /* a copy, under lock */
};

/* LOG.jit, made (0700, files.h) and opened as @ret_dir; -errno. */
static int dir_open(const char *log, struct util_dir *ret_parent, struct util_dir *ret_dir,
		    char *name, size_t name_size, char *dir, size_t size)
{
	char err[512];
	const char *base;
	int r;

	if ((size_t)snprintf(dir, size, "%s.jit", log) >= size)
		return -ENAMETOOLONG;
	r = util_dir__open_parent(log, ret_parent, &base, err, sizeof(err));
	if (r < 0)
		return r;
	snprintf(name, name_size, "%s.jit", base);
	r = util_dir__make(ret_parent, name, 0, ret_dir);
	if (r < 0)
		util_dir__close(ret_parent);
	return r;
}

/* LOG.jit closed, and removed if nothing went in. */
static void dir_close(struct util_dir *parent, struct util_dir *dir, const char *name)
{
	util_dir__close(dir);
	if (parent->fd >= 0)
		(void)unlinkat(parent->fd, name, AT_REMOVEDIR); /* ENOTEMPTY: it holds maps */
	util_dir__close(parent);
}

/* The closed file's push, if one waits (lock held by the caller or none needed). */
static void push_flush(struct session_jit *sj)
{
	if (!sj->push_pending)
		return;
	sj->push_pending = false;
	daemon_push_enqueue(sj->push_def, sj->push_path, sj->push_from, sj->push_until,
			    sj->push_rate);
}

static void sj_free(struct session_jit *sj)
{
	free(sj->push_def);
	maplog_jit__free(sj->j);
	dir_close(&sj->parent, &sj->jdir, sj->name);
	pthread_cond_destroy(&sj->cond);
	pthread_mutex_destroy(&sj->lock);
	free(sj);
}

static void *jit_main(void *arg)
{
	struct session_jit *sj = arg;
	bool abandoned;

	pthread_mutex_lock(&sj->lock);
	for (;;) {
		char next[sizeof(sj->next)];
		bool stop;

		if (!sj->stop && !sj->next[0]) {
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += DAEMON_JIT_POLL_MS / 1000;
			ts.tv_nsec += (DAEMON_JIT_POLL_MS % 1000) * 1000000l;
			if (ts.tv_nsec >= 1000000000l) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000l;
			}
			pthread_cond_timedwait(&sj->cond, &sj->lock, &ts);
		}
		stop = sj->stop;
		snprintf(next, sizeof(next), "%s", sj->next);
		sj->next[0] = '\0';
		pthread_mutex_unlock(&sj->lock);
		if (next[0]) {
			char dir[sizeof(sj->dir)], name[sizeof(sj->name)];
			struct util_dir parent = UTIL_DIR_NONE, nd = UTIL_DIR_NONE;
			int fd = dir_open(next, &parent, &nd, name, sizeof(name), dir, sizeof(dir));

			/* What the closed file's processes had goes with it; then the new file. */
			(void)maplog_jit__snapshot(sj->j, fd >= 0 ? &nd : NULL);
			if (fd >= 0) {
				dir_close(&sj->parent, &sj->jdir, sj->name);
				pthread_mutex_lock(&sj->lock); /* session_jit__stop() reads the name */
				sj->parent = parent;
				sj->jdir = nd;
				snprintf(sj->name, sizeof(sj->name), "%s", name);
				snprintf(sj->dir, sizeof(sj->dir), "%s", dir);
				pthread_mutex_unlock(&sj->lock);
			} else {
				log_warn_errno(fd, "'%s.jit': cannot make it; JIT maps go on into '%s'",
					       next, sj->dir);
			}
		} else if (stop) {
			(void)maplog_jit__finish(sj->j);
		} else {
			(void)maplog_jit__poll(sj->j);
		}
		__atomic_store_n(&sj->cpu_ns, util_now_ns(CLOCK_THREAD_CPUTIME_ID), __ATOMIC_RELAXED);
		pthread_mutex_lock(&sj->lock);
		maplog_jit__stats(sj->j, &sj->st);
		if (next[0] || stop)
			push_flush(sj); /* the closed file has its maps now */
		if (stop && !next[0])
			break;
	}
	sj->done = true;
	abandoned = sj->abandoned;
	pthread_cond_broadcast(&sj->cond);
	pthread_mutex_unlock(&sj->lock);
	if (abandoned)
		sj_free(sj); /* nobody waits for it any more */
	return NULL;
}

int session_jit__start(const char *log, const pid_t *pids, size_t npids, int64_t only_uid,
		       struct session_jit **ret)
{
	struct maplog_jit_opts o = { .pids = pids, .npids = npids, .by_uid = only_uid >= 0,
				     .uid = only_uid >= 0 ? (uid_t)only_uid : 0,
				     .strict_owner = true };
	struct session_jit *sj = calloc(1, sizeof(*sj));
	pthread_condattr_t ca;
	int r;

	*ret = NULL;
	if (!sj)
		return -ENOMEM;
	r = dir_open(log, &sj->parent, &sj->jdir, sj->name, sizeof(sj->name), sj->dir,
		     sizeof(sj->dir));
	if (r < 0) {
		free(sj);
		return r;
	}
	r = maplog_jit__new(&sj->jdir, &o, &sj->j);
	if (r < 0) {
		dir_close(&sj->parent, &sj->jdir, sj->name);
		free(sj);
		return r;
	}
	pthread_mutex_init(&sj->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sj->cond, &ca);
	pthread_condattr_destroy(&ca);
	r = pthread_create(&sj->thr, NULL, jit_main, sj);
	if (r != 0) {
		sj_free(sj);
		return -r;
	}
	(void)pthread_setname_np(sj->thr, "hwpmcd-jit");
	*ret = sj;
	return 0;
}

void session_jit__rotate(struct session_jit *sj, const char *log)
{
	if (!sj)
		return;
	pthread_mutex_lock(&sj->lock);
	if (sj->next[0])
		log_warn("JIT maps: a rotation to '%s' came before the one to '%s' was done; the "
			 "file between gets none", log, sj->next);
	snprintf(sj->next, sizeof(sj->next), "%s", log);
	pthread_cond_signal(&sj->cond);
	pthread_mutex_unlock(&sj->lock);
}

void session_jit__closed(struct session_jit *sj, const struct daemon_profile *def,
			 const char *path, int64_t from, int64_t until, uint32_t rate_hz)
{
	if (!def->push_url[0])
		return;
	if (!sj) {
		daemon_push_enqueue(def, path, from, until, rate_hz);
		return;
	}
	pthread_mutex_lock(&sj->lock);
	if (!sj->push_def)
		sj->push_def = malloc(sizeof(*sj->push_def));
	if (sj->push_pending || !sj->push_def) {
		/* A second file closed before the first's maps were copied: send the first now. */
		if (sj->push_pending)
			push_flush(sj);
		if (!sj->push_def) {
			pthread_mutex_unlock(&sj->lock);
			daemon_push_enqueue(def, path, from, until, rate_hz);
			return;
		}
	}
	*sj->push_def = *def;
	snprintf(sj->push_path, sizeof(sj->push_path), "%s", path);
	sj->push_from = from;
	sj->push_until = until;
	sj->push_rate = rate_hz;
	sj->push_pending = true;
	pthread_mutex_unlock(&sj->lock);
}

void session_jit__stop(struct session_jit *sj, struct maplog_jit_stats *ret_st)
{
	struct timespec ts;
	char dir[sizeof(sj->dir)];
	pthread_t thr;
	bool done;

	if (!sj)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += DAEMON_JIT_STOP_MS / 1000;
	pthread_mutex_lock(&sj->lock);
	sj->stop = true;
	pthread_cond_signal(&sj->cond);
	while (!sj->done && pthread_cond_timedwait(&sj->cond, &sj->lock, &ts) != ETIMEDOUT)
		;
	done = sj->done;
	if (ret_st)
		*ret_st = sj->st;
	/* Once abandoned, the thread may free @sj at any time: nothing of it is read after. */
	thr = sj->thr;
	snprintf(dir, sizeof(dir), "%s", sj->dir);
	if (!done)
		sj->abandoned = true;
	pthread_mutex_unlock(&sj->lock);
	if (done) {
		pthread_join(thr, NULL);
		sj_free(sj);
	} else {
		log_warn("JIT maps of '%s': a read has not returned in %d s (a map on a stuck "
			 "file system?): the session ends without waiting for it", dir,
			 DAEMON_JIT_STOP_MS / 1000);
		pthread_detach(thr);
	}
}

uint64_t session_jit__cpu_ns(struct session_jit *sj)
{
	return sj ? __atomic_load_n(&sj->cpu_ns, __ATOMIC_RELAXED) : 0;
}
