/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-profile-budget.c: an always-on profile's CPU budget
 * (cpu_budget_percent), on its session's worker: the sampling rate that keeps
 * what the profile costs the machine within the budget.
 *
 * PUBLIC INTERFACES (daemon-internal, daemon-int.h)
 *   session_profile_budget_start()   before the counters are enabled: what a sample
 *                                    costs, and the rate to begin at
 *   session_profile_budget()         once a window: the cost measured, the rate set
 *
 * IMPLEMENTATION NOTES
 *   The worker's alone; main reads the rate, the cost and the shares for status
 *   (relaxed atomics).  The arithmetic (daemon_budget_next(),
 *   daemon_budget_spread()) is daemon-profile.c's and pure; here are the
 *   measures and the counters' rate.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon-ctl.h"
#include "daemon-int.h"
#include "hwpmcd/common.h"
#include "hwpmcd/log.h"

/* ---- a profile's CPU budget ---- */

/* Samples the kernel took for the session so far, written or lost: each cost a program. */
static uint64_t samples_taken(const struct session *s)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->ncpus; i++)
		n += __atomic_load_n(&s->cstats[i].samples, __ATOMIC_RELAXED) +
		     __atomic_load_n(&s->cstats[i].lost, __ATOMIC_RELAXED);
	return n;
}

/*
 * Before the counters are enabled: what one sample costs the program it
 * interrupts, measured on this thread (coll_sample_cost()), and the loop's
 * first window.  0, or -errno with @err.
 */
int session_profile_budget_start(struct session *s, char *err, size_t errlen)
{
	struct session_profile *pf = s->prof;
	uint64_t max = coll_max_sample_rate(), cost = 0;
	int r = coll_sample_cost(&s->p.cfg, max && max < 4000 ? max : 4000, &cost);

	if (r < 0) {
		snprintf(err, errlen, "cpu_budget_percent: cannot measure what a sample costs: %s",
			 strerror(-r));
		return r;
	}
	pf->cost_ns = cost;
	/*
	 * Begin where the budget would land if the daemon's work per sample were as
	 * much again as the program's: no window of the configured rate first, whose
	 * rings would overflow.  The loop corrects it from the first window on.
	 */
	{
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		double per_s = (double)pf->def.cpu_budget_percent / 100.0 * 1e9 *
			       (double)(ncpu > 0 ? ncpu : 1) / (2.0 * (double)(cost ? cost : 1000)) /
			       (double)(s->ncpus ? s->ncpus : 1);
		uint64_t start = per_s < 1 ? 1 : per_s > (double)s->p.cfg.freq ? s->p.cfg.freq
									 : (uint64_t)per_s;

		pf->rate_hz = start;
		for (size_t i = 0; i < s->ncoll && start != s->p.cfg.freq; i++) {
			r = coll_cpu__set_rate(s->coll[i], &s->p.cfg, start);
			if (r < 0) {
				snprintf(err, errlen, "cpu_budget_percent: cannot set the rate to %" PRIu64
					 " Hz: %s", start, strerror(-r));
				return r;
			}
		}
	}
	pf->budget_t0 = util_now_ns(CLOCK_MONOTONIC);
	pf->budget_cpu0 = util_now_ns(CLOCK_THREAD_CPUTIME_ID);
	pf->budget_samples0 = 0;
	pf->budget_jit0 = session_jit__cpu_ns(s->jit);
	/* a profile name's pushes before this session (a reload) are not its cost */
	pf->budget_push0 = pf->def.push_url[0] ? daemon_push_cpu_ns(pf->def.name) : 0;
	memset(&pf->push_spread, 0, sizeof(pf->push_spread));
	log_info("profile %s: a sample costs the program it interrupts %" PRIu64 " ns (measured); "
		 "budget %u%% of the machine: starting at %" PRIu64 " Hz", pf->def.name, cost,
		 pf->def.cpu_budget_percent, pf->rate_hz);
	return 0;
}

/*
 * Once a window: what the profile cost the machine (this worker's CPU, the samples
 * the kernel took times what one costs, its JIT-map thread's CPU and, spread over
 * max(60 s, rotate_seconds) up to 300 s, what its pushes took: the report
 * children that make the profiles and the push thread that sends them), against
 * cpu_budget_percent of every online CPU; the rate follows daemon_budget_next(),
 * and each change is in the log (USERDATA, pmclog-format.md 11.9), the journal and
 * status.  0 or a write error.
 */
int session_profile_budget(struct session *s)
{
	struct session_profile *pf = s->prof;
	uint64_t now = util_now_ns(CLOCK_MONOTONIC), cpu, taken, used, budget, win, next, jit, push,
		 side;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	double machine;
	size_t spread;
	int r = 0;

	win = now - pf->budget_t0;
	if (win < PROFILE_BUDGET_WINDOW_MS * 1000000ull)
		return 0;
	cpu = util_now_ns(CLOCK_THREAD_CPUTIME_ID);
	taken = samples_taken(s);
	jit = session_jit__cpu_ns(s->jit);
	push = pf->def.push_url[0] ? daemon_push_cpu_ns(pf->def.name) : 0;
	spread = (size_t)((pf->def.rotate_seconds > 60 ? pf->def.rotate_seconds : 60) * 1000 /
			  PROFILE_BUDGET_WINDOW_MS);
	side = (jit >= pf->budget_jit0 ? jit - pf->budget_jit0 : jit) +
	       daemon_budget_spread(&pf->push_spread, spread,
				    push >= pf->budget_push0 ? push - pf->budget_push0 : 0);
	used = (cpu - pf->budget_cpu0) + (taken - pf->budget_samples0) * pf->cost_ns + side;
	machine = (double)(ncpu > 0 ? ncpu : 1) * (double)win; /* CPU-ns of the window */
	budget = (uint64_t)((double)pf->def.cpu_budget_percent / 100.0 * machine);
	__atomic_store_n(&pf->used_ppm, (uint64_t)((double)used * 1e6 / machine), __ATOMIC_RELAXED);
	__atomic_store_n(&pf->side_ppm, (uint64_t)((double)side * 1e6 / machine), __ATOMIC_RELAXED);
	next = daemon_budget_next(pf->rate_hz, s->p.cfg.freq, used, budget);
	if (next != pf->rate_hz) {
		for (size_t i = 0; i < s->ncoll && r == 0; i++)
			r = coll_cpu__set_rate(s->coll[i], &s->p.cfg, next);
		if (r < 0) {
			log_warn_errno(r, "profile %s: cannot set the rate to %" PRIu64 " Hz, ignoring",
				       pf->def.name, next);
			r = 0;
		} else {
			log_info("profile %s: rate %" PRIu64 " -> %" PRIu64 " Hz: the last %.1f s used "
				 "%.2f%% of the machine (budget %u%%)", pf->def.name, pf->rate_hz,
				 next, (double)win / 1e9, (double)pf->used_ppm / 1e4,
				 pf->def.cpu_budget_percent);
			__atomic_store_n(&pf->rate_hz, next, __ATOMIC_RELAXED);
			__atomic_fetch_add(&pf->rate_changes, 1, __ATOMIC_RELAXED);
			if (!session_paused(s)) {
				uint64_t t = session_stamp(s);

				r = plog_writer__append_userdata(s->w, t, PLOG_USERDATA_HWPMCD_RATE);
				if (r == 0)
					r = plog_writer__append_userdata(s->w, t, (uint32_t)next);
			}
		}
	}
	pf->budget_t0 = now;
	pf->budget_cpu0 = cpu;
	pf->budget_samples0 = taken;
	pf->budget_jit0 = jit;
	pf->budget_push0 = push;
	return r;
}
