/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-perf-fds.c: the daemon's perf fd budget: the fds all sessions'
 * counters may hold, in all and per uid.
 *
 * PUBLIC INTERFACES (daemon-internal, daemon-int.h)
 *   session_budget_set()         the bounds (main, once, from the fd limit and the config)
 *   session_budget_take()        a session's fds, before its counters open (its worker)
 *   session_budget_give_back()   those fds, once they are closed (its worker)
 *
 * IMPLEMENTATION NOTES
 *   Main sets the bounds (daemon-main.c's fd_limits(): what RLIMIT_NOFILE leaves
 *   once its own fds are kept, or max_perf_fds), so that the sessions' perf fds
 *   can never take the daemon to EMFILE; each worker takes what its counters need
 *   (CPUs x events x threads) before it opens one, a non-administrator's within
 *   user_max_perf_fds of its uid too.  One mutex, held only to count.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>

#include "daemon-ctl.h"
#include "daemon-int.h"
#include "hwpmcd/common.h"

/* ---- the perf fd budget ---- */

static pthread_mutex_t budget_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t budget_max = UINT64_MAX, budget_user_max = UINT64_MAX, budget_total;
static struct {
	uid_t uid;
	uint64_t fds;
} budget_users[DAEMON_SESSIONS_MAX];

void session_budget_set(uint64_t max_fds, uint64_t user_max_fds)
{
	pthread_mutex_lock(&budget_lock);
	budget_max = max_fds;
	budget_user_max = user_max_fds;
	pthread_mutex_unlock(&budget_lock);
}

static uint64_t *budget_slot(uid_t uid, bool make)
{
	for (size_t i = 0; i < DAEMON_SESSIONS_MAX; i++)
		if (budget_users[i].fds && budget_users[i].uid == uid)
			return &budget_users[i].fds;
	for (size_t i = 0; make && i < DAEMON_SESSIONS_MAX; i++) {
		if (!budget_users[i].fds) {
			budget_users[i].uid = uid;
			return &budget_users[i].fds;
		}
	}
	return NULL;
}

/* Take @n perf fds for @s before opening them: 0, or -EMFILE with @err naming the bound. */
int session_budget_take(struct session *s, uint64_t n, char *err, size_t errlen)
{
	uint64_t *slot, mine;
	int r = 0;

	pthread_mutex_lock(&budget_lock);
	slot = budget_slot(s->p.who.uid, false);
	mine = slot ? *slot : 0;
	if (!s->p.who.admin && mine + n > budget_user_max) {
		snprintf(err, errlen, "this session needs %" PRIu64 " perf fds (%zu CPUs x %zu events "
			 "x %" PRIu64 " threads) and uid %u's sessions hold %" PRIu64 " of its %"
			 PRIu64 " (user_max_perf_fds); stop a session or profile fewer threads", n,
			 s->ncpus, s->p.nevents, n / (s->ncpus * s->p.nevents),
			 (unsigned)s->p.who.uid, mine, budget_user_max);
		r = -EMFILE;
	} else if (budget_total + n > budget_max) {
		snprintf(err, errlen, "this session needs %" PRIu64 " perf fds (%zu CPUs x %zu events "
			 "x %" PRIu64 " threads) and the daemon's sessions hold %" PRIu64 " of its "
			 "%" PRIu64 " (max_perf_fds); stop a session or profile fewer threads", n,
			 s->ncpus, s->p.nevents, n / (s->ncpus * s->p.nevents), budget_total,
			 budget_max);
		r = -EMFILE;
	} else if (n) {
		slot = budget_slot(s->p.who.uid, true);
		/* A slot per session at most: there are never more sessions than slots. */
		if (slot)
			*slot += n;
		budget_total += n;
		s->perf_fds = n;
	}
	pthread_mutex_unlock(&budget_lock);
	return r;
}

void session_budget_give_back(struct session *s)
{
	uint64_t *slot;

	if (!s->perf_fds)
		return;
	pthread_mutex_lock(&budget_lock);
	slot = budget_slot(s->p.who.uid, false);
	if (slot)
		*slot -= MIN(*slot, s->perf_fds);
	budget_total -= MIN(budget_total, s->perf_fds);
	pthread_mutex_unlock(&budget_lock);
	s->perf_fds = 0;
}
