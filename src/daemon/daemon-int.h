/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-int.h: private to src/daemon.
 *
 * IMPLEMENTATION NOTES
 *   A session is created and destroyed by the main thread; between
 *   session__start() and session__stop() one worker thread owns its collectors,
 *   maplog and writer.  The only shared state is the stop eventfd (main -> worker),
 *   the done eventfd (worker -> main), and counters the worker writes with relaxed
 *   atomic stores and main reads with relaxed loads (statistics, not control).
 */
#ifndef HWPMCD_DAEMON_INT_H
#define HWPMCD_DAEMON_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hwpmcd/collector.h"
#include "hwpmcd/maplog.h"
#include "hwpmcd/pmclog.h"
#include "hwpmcd/unwind.h"

#define DAEMON_MAX_CPUS 1024
#define DAEMON_MAX_PIDS 256

enum session_state {
	SESSION_STARTING = 0,
	SESSION_RUNNING,
	SESSION_STOPPING,
	SESSION_DONE,
	SESSION_ERROR,
	SESSION_STATE_MAX
};

struct session_params {
	struct coll_event_spec events[COLL_EVENT_MAX];
	size_t nevents;
	struct coll_config cfg;
	int cpus[DAEMON_MAX_CPUS]; /* explicit -C list */
	size_t ncpus;		   /* 0: every online CPU */
	pid_t pids[DAEMON_MAX_PIDS];
	size_t npids; /* 0: system-wide */
	bool command; /* the pid is a command held until we are armed (enable_on_exec) */
	bool kernel;  /* kernel samples, kernel MAP_INs allowed */
	size_t unwind_cache_bytes; /* dwarf: the unwinder's ELF cache budget (0: default) */
	int out_fd;   /* owned by the session once started */
};

struct session_stats {
	uint64_t samples;
	uint64_t lost;
	uint64_t throttled;
	uint64_t no_pcs;    /* samples without a single PC (dropped, as 11.3 says) */
	uint64_t reordered; /* records older than one already written: time stamp raised */
	uint64_t unknown_id;
	uint64_t cpu_ns; /* CPU time of the session: its setup in main plus its thread */
	/* dwarf mode: the unwinder's counters, published after every merge round */
	uint64_t unwound; /* samples given to the unwinder */
	uint64_t unwind[UNWIND_OUTCOME_MAX];
	uint64_t fp_steps, own_tables, elf_opened, elf_evicted, elf_bytes;
};

/* Per-CPU counters the worker publishes after every merge round (relaxed atomics). */
struct session_cpu_stats {
	uint64_t samples, lost, throttled, bad, wrapped;
};

struct session {
	int id;
	uid_t uid;
	void *owner; /* the client that started it, NULL for a detached session */
	char path[640]; /* a detached session's log in the state directory */
	struct session_params p;
	size_t ncoll;
	struct coll_cpu **coll;
	struct session_cpu_stats *cstats; /* ncoll of them */
	struct plog_writer *w;
	struct maplog *ml;
	struct unwind_ctx *uw; /* dwarf mode only; the worker's */
	uint32_t pmcids[COLL_EVENT_MAX];
	pthread_t thread;
	bool thread_started;
	int stop_efd;  /* main -> worker */
	int done_efd;  /* worker -> main: the worker has finished */
	int state;     /* enum session_state, atomic */
	int error;     /* first error (negative errno), atomic */
	char error_msg[256];
	uint64_t last_tsc;
	uint64_t start_ns;
	uint64_t end_ns;
	struct session_stats stats; /* written by the worker (atomic stores) */
	uint32_t depth_note;	    /* depth capped at perf_event_max_stack, 0 if not */
};

/* session__start: open everything, write the log head, start the worker. 0 or -errno + @err. */
int session__start(struct session_params *p, int id, char *err, size_t errlen,
		   struct session **ret_s);
/* session__stop: ask the worker to drain, write CLOSELOG, and join it.  Idempotent. */
void session__stop(struct session *s);
void session__free(struct session *s);
const char *session_state_name(int state);

/* Read the per-type record counts and bytes of the writer (after the worker is joined, or racy). */
uint64_t session__bytes(const struct session *s);

#endif /* HWPMCD_DAEMON_INT_H */
