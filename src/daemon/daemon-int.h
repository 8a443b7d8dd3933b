/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-int.h: private to src/daemon.
 *
 * IMPLEMENTATION NOTES
 *   A session is created and freed by the main thread; between session__launch()
 *   and session__reap() one worker thread owns its collectors, maplog, unwinder,
 *   fds and writer (main reads only the writer's statistics).  The only shared
 *   state is the stop eventfd (main -> worker), the done eventfd (worker ->
 *   main), the state, started and error words (release/acquire), and counters
 *   the worker writes with relaxed atomic stores and main reads with relaxed
 *   loads (statistics, not control).  Main never waits for a worker: the
 *   worker's end is an event of the main loop (docs/security.md, "the main loop
 *   never blocks").
 *   The stop eventfd is never read: the worker and the kallsyms thread both poll
 *   it, so neither can be held up by an output that stopped taking data once
 *   main asks the session to stop (SESSION_BACKLOG_* and SESSION_DRAIN_*).
 *
 *   Main's own files (daemon-main.c, daemon-reply.c, daemon-clientfd.c,
 *   daemon-cmd.c, daemon-profile-run.c) share its state through the daemon_
 *   globals declared at the end: main's alone, but for the closer threads'
 *   writes to daemon_closer_efd.
 */
#ifndef HWPMCD_DAEMON_INT_H
#define HWPMCD_DAEMON_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hwpmcd/collector.h"
#include "hwpmcd/filter.h"
#include "hwpmcd/maplog.h"
#include "hwpmcd/pmclog.h"
#include "hwpmcd/unwind.h"

#define DAEMON_MAX_CPUS 1024
#define DAEMON_MAX_PIDS 256

/* Kernel PCs: the upper half of the x86-64 address space (pmclog-format.md 11.3). */
#define DAEMON_KERNEL_PC_MIN 0xffff800000000000ull
/* Distinct kernel PCs a session collects for its compact kernel symbols (64 MiB of set). */
#define DAEMON_KSYMS_PCS_MAX (4u << 20)

/*
 * The distinct kernel PCs of a session: an open-addressing set of u64 owned by
 * the session thread (see daemon-kallsyms.c).  Embedded; __init/__exit.
 */
struct daemon_pcset {
	uint64_t *slot;	  /* cap slots, 0 = empty */
	size_t cap;	  /* a power of two */
	size_t n;	  /* distinct PCs held */
	size_t max;	  /* most PCs it may hold */
	bool full;	  /* a PC did not fit (or memory ran out): the set is incomplete */
	uint64_t refused; /* PCs not collected because the set was full */
};

/* daemon_pcset__init: an empty set for at most @max PCs.  0, or -ENOMEM (then full). */
int daemon_pcset__init(struct daemon_pcset *s, size_t max);
/*
 * daemon_pcset__add: add @pc (0 is ignored).  1 if new, 0 if known, -E2BIG when the
 * set is full (the PC is counted in refused), -ENOMEM when growing failed (the PC
 * is kept, the set marked full).  No allocation except when the set doubles.
 */
int daemon_pcset__add(struct daemon_pcset *s, uint64_t pc);
/*
 * daemon_pcset__sort: move the PCs to slot[0..n) in ascending order and return n.
 * Afterwards the set is only that array (it refuses further adds).
 */
size_t daemon_pcset__sort(struct daemon_pcset *s);
void daemon_pcset__exit(struct daemon_pcset *s);

/* One text symbol: its line is text[off, off + len), its name starts at off + name. */
struct daemon_ksym {
	uint64_t addr;
	uint32_t off;
	uint16_t len;
	uint16_t name;
};

/*
 * The text symbols (t, T, w, W) of one read of /proc/kallsyms, sorted by address
 * (aliases in the kernel's order), lines kept verbatim.  Immutable once built;
 * one owner (the session thread that reads it).
 */
struct daemon_ksyms {
	char *text;	      /* the file as read; sym[] points into it */
	size_t text_len;
	struct daemon_ksym *sym;
	size_t n;
	size_t full_bytes; /* the size of the full file (lines with newlines) */
};

/*
 * daemon_ksyms__parse_take: build a table from the kallsyms-format text @buf
 * (@len bytes, malloc'ed; consumed even on failure).  Lines that are not
 * "HEX TYPE NAME[\t[MODULE]]" with a text type are skipped.  0, or -ENODATA (no
 * text symbol with a non-zero address: kptr_restrict hides them), -EFBIG, -ENOMEM.
 */
int daemon_ksyms__parse_take(char *buf, size_t len, struct daemon_ksyms **ret_k);
/* daemon_ksyms__read: the same from the file @path; also open(2)/read(2) errors. */
int daemon_ksyms__read(const char *path, struct daemon_ksyms **ret_k);
/*
 * daemon_ksyms_probe: whether the kallsyms file @path shows addresses, from its
 * first 64 KiB (cheap enough for the main thread): 0 if a text symbol there has a
 * non-zero address, -ENODATA if none has, or an open(2)/read(2) error.
 */
int daemon_ksyms_probe(const char *path);
void daemon_ksyms__free(struct daemon_ksyms *k);
/* daemon_ksyms__write_all: every line, in order, to @fd with write(2).  0 or -errno. */
int daemon_ksyms__write_all(const struct daemon_ksyms *k, int fd);
/*
 * daemon_ksyms__compact: the lines a report of PCs @pcs (@npcs, any order) needs:
 * for each PC and PC - 1, every line at the address of its holder (the greatest
 * start <= it) and every line at the next greater address; plus _stext, _text and
 * _etext.  In address order, newline-terminated, in a new malloc'ed *ret_buf.  A
 * pure function: 0, or -ENOMEM.
 */
int daemon_ksyms__compact(const struct daemon_ksyms *k, const uint64_t *pcs, size_t npcs,
			  char **ret_buf, size_t *ret_len, size_t *ret_nsyms);
/* daemon_ksyms_rewritable: @fd is a writable regular file at offset 0 without O_APPEND. */
bool daemon_ksyms_rewritable(int fd);
/* daemon_ksyms_rewrite: make the file @fd hold exactly @buf (pwrite at 0, ftruncate). */
int daemon_ksyms_rewrite(int fd, const char *buf, size_t len);

/* What became of a session's kernel symbols file. */
enum session_ks_state {
	SESSION_KS_NONE = 0, /* none asked for, or skipped (ks_note says why) */
	SESSION_KS_FULL,     /* every text symbol (written at start; kept at the end) */
	SESSION_KS_COMPACT,  /* rewritten to what the log's PCs need */
	SESSION_KS_ERROR,    /* writing it failed (ks_note) */
	SESSION_KS_STATE_MAX
};

enum session_state {
	SESSION_STARTING = 0,
	SESSION_RUNNING,
	SESSION_STOPPING,
	SESSION_DONE,
	SESSION_ERROR,
	SESSION_STATE_MAX
};

/* Who sent a request: SO_PEERCRED of the connection, and the decision made from it. */
struct daemon_who {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	bool admin; /* root or a member of admin_group */
};

/* A cgroup or unit name a filter lists, as given (resolved to an id by main). */
#define DAEMON_CGROUP_NAME 256

/*
 * A session's in-kernel sample filter ("filter" in the start args): pids, uids and
 * command names go into @spec as parsed; cgroups and units are resolved to cgroup
 * ids by daemon_filter_resolve() (main, before the session starts).
 */
struct daemon_filter {
	bool on; /* the start asked for one (possibly empty: keeps everything) */
	struct filt_spec spec;
	char cgroups[FILT_VALUES_MAX][DAEMON_CGROUP_NAME]; /* cgroup paths, then units */
	uint32_t ncgroups, nunits;			      /* cgroups[ncgroups..+nunits): units */
	char text[2048]; /* canonical, for the log and status: "uid=1000 unit=x.service" */
	size_t base_len; /* text's length before the resolved cgroups and units */
	/*
	 * A profile's scope: a cgroup or unit that is not there (yet, or any more)
	 * matches nothing until it appears, rather than refusing the start; the
	 * session resolves it again while it runs (a restarted unit's cgroup is new).
	 */
	bool missing_ok;
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
	bool no_jit;  /* a detached session: do not save JIT maps ("jit_maps": false) */
	size_t unwind_cache_bytes; /* dwarf: the unwinder's ELF cache budget (0: default) */
	struct daemon_filter filter;
	int out_fd;   /* owned by the session once started */
	int ks_fd;    /* the kernel symbols file, -1: none; owned by the session once started */
	/*
	 * Who asked for the session.  A non-administrator's session (!who.admin)
	 * is authorized again by its worker: once the counters are open and before
	 * anything is enabled, scanned or written, the listed pids and every thread
	 * that got a counter are asked again (daemon_auth_target, daemon_auth_tids),
	 * so a pid reused or a process whose credentials changed since main's first
	 * check is refused before a byte of it is logged; and every process the
	 * start-time scan finds in scope (a listed pid or a descendant) enters the
	 * log only if the client could profile it itself (a setuid child of its
	 * shell is left out).  Its perf fds count against user_max_perf_fds.
	 */
	struct daemon_who who;
};

/*
 * A session's output backlog (plog_writer__set_nowait): beyond DROP bytes that the
 * output has not taken, samples are dropped (counted in lost and dropped); MAX
 * bytes of records that cannot be dropped end the session (ENOBUFS).  At the end
 * the worker waits for the output while it takes data, giving up (ETIMEDOUT) after
 * DRAIN_IDLE_MS without progress or DRAIN_MAX_MS in all.  See docs/protocol.md.
 */
#define SESSION_BACKLOG_DROP (4u << 20)
#define SESSION_BACKLOG_MAX (32u << 20)
#define SESSION_DRAIN_IDLE_MS 1000
#define SESSION_DRAIN_MAX_MS 10000
/* A stop's reply waits this long for the worker's end (its drain, plus closing). */
#define SESSION_STOP_REPLY_MS (SESSION_DRAIN_MAX_MS + 5000)

struct session_stats {
	uint64_t samples;
	uint64_t lost;	  /* samples the kernel lost plus those dropped (below) */
	uint64_t dropped; /* samples dropped because the output did not take them */
	uint64_t throttled;
	uint64_t no_pcs;    /* samples without a single PC (dropped, as 11.3 says) */
	uint64_t reordered; /* records older than one already written: time stamp raised */
	uint64_t unknown_id;
	uint64_t cpu_ns; /* CPU time of the session: its setup in main plus its thread */
	/* dwarf mode: the unwinder's counters, published after every merge round */
	uint64_t unwound; /* samples given to the unwinder */
	uint64_t unwind[UNWIND_OUTCOME_MAX];
	uint64_t fp_steps, epilogue_regs, own_tables, elf_opened, elf_evicted, elf_bytes, elf_too_big;
	uint64_t fp_frameless, fp_refused;
	uint64_t elf_reads, elf_dropped;
	/* the in-kernel filter: samples it let through and dropped (all CPUs) */
	uint64_t filt_kept, filt_dropped;
	/* gated: rounds that began with a ring short of room (a loss not yet reported) */
	uint64_t loss_suspected;
};

/* Per-CPU counters the worker publishes after every merge round (relaxed atomics). */
struct session_cpu_stats {
	uint64_t samples, lost, throttled, bad, wrapped;
};

/*
 * The daemon's perf fds (session_budget_set()): a session's worker takes what its
 * counters need (CPUs x events x threads) before it opens one, and gives them back
 * once they are closed; a non-administrator also within the per-uid bound.
 */
void session_budget_set(uint64_t max_fds, uint64_t user_max_fds);

#define DAEMON_PROFILE_NAME_MAX 64
#define DAEMON_PROFILES_MAX 32 /* profile files the daemon runs at once */
#define DAEMON_PROFILES_DIR_DEFAULT "/etc/hwpmcd/profiles.d"
#define DAEMON_PROFILE_FREQ_DEFAULT 49 /* Hz: off the beat of 10 ms timers, as other agents */
#define DAEMON_PROFILE_ROTATE_BYTES_MIN (64u << 10)
#define DAEMON_PUSH_URL_MAX 512
#define DAEMON_PUSH_LABELS_MAX 512
/*
 * An always-on profile's unwinder keeps at most this many MiB of ELF images
 * (a recording session's default is 256): hot images stay, cold ones are read
 * again when a sample needs them, and the daemon stays small for a day.
 */
#define DAEMON_PROFILE_UNWIND_CACHE_MB 32

enum profile_key {
	PK_EVENTS = 0,
	PK_FREQ,
	PK_PERIOD,
	PK_CALLGRAPH,
	PK_SCOPE,
	PK_ROTATE_SECONDS,
	PK_ROTATE_BYTES,
	PK_RETAIN_SECONDS,
	PK_RETAIN_BYTES,
	PK_CPU_BUDGET,
	PK_ENABLED,
	PK_KALLSYMS,
	PK_RING_PAGES,
	PK_DEPTH,
	PK_UNWIND_CACHE,
	PK_PUSH_URL,
	PK_PUSH_LABELS,
	PK_PUSH_NAME,
	PK_PUSH_FORMAT,
	PK_JIT_MAPS,
	PK_MAX
};

/* One profile file, parsed (hwpmcd.conf(5), PROFILES).  0 means "not set" where it can. */
struct daemon_profile {
	char name[DAEMON_PROFILE_NAME_MAX]; /* the file's name without ".conf" */
	char events[512];		    /* comma-separated, perf's spelling */
	uint32_t freq, period;		    /* period wins when set */
	char callgraph[32];		    /* none | fp | dwarf[,BYTES] */
	char scope[256];		    /* all | cpus:LIST | unit:NAME | cgroup:PATH | uid:USER */
	int64_t scope_uid;		    /* uid:USER as a number (-1: no such user, or no uid scope) */
	uint64_t rotate_seconds, rotate_bytes; /* 0: not by that */
	uint64_t retain_seconds, retain_bytes; /* 0: not by that */
	uint32_t cpu_budget_percent;	    /* 0: none; else the rate adapts (freq only) */
	uint32_t ring_pages, depth;	    /* 0: the profile's defaults (daemon_profile_args) */
	uint32_t unwind_cache_mb;	    /* dwarf: the unwinder's ELF images, MiB */
	bool enabled, kallsyms;
	bool jit_maps; /* each file gets FILE.jit/ (perf-PID.map of its JIT processes) */
	/* push_*: each closed file is sent to a profiling backend (daemon-push.c) */
	char push_url[DAEMON_PUSH_URL_MAX];	  /* http(s)://HOST[:PORT][/PATH]; "": none */
	char push_labels[DAEMON_PUSH_LABELS_MAX]; /* "k=v,k=v" */
	char push_name[DAEMON_PROFILE_NAME_MAX];  /* the application's name (default: NAME) */
	bool push_folded;			  /* push_format = folded (default pprof) */
	int line[PK_MAX]; /* where each key was set (0: not set) */
};

/* The most windows a cost is spread over (daemon_budget_spread()): 300 s of 2-s windows. */
#define DAEMON_BUDGET_SPREAD_MAX 150

/* The last windows' costs of a bursty cost (daemon-ctl.h, daemon_budget_spread()). */
struct daemon_budget_spread {
	uint64_t win[DAEMON_BUDGET_SPREAD_MAX];
	size_t at;
	uint64_t sum;
};

/*
 * An always-on profile's part of its session (daemon-profile.c has the files'
 * names and retention): the worker rotates the log into a new file of the
 * profile's directory, deletes what retention says, and pauses on a full disk
 * (samples are then counted, not written, and the model kept up to date) until
 * there is room again.  Main reads the atomics and, under lock, path and note.
 */
struct session_profile {
	struct daemon_profile def; /* a copy; daemon-ctl.h */
	char dir[600];		   /* STATE_DIR/profiles/NAME */
	bool kallsyms;		   /* each file gets FILE.kallsyms (main decided it can) */
	pthread_mutex_t lock;	   /* path and note: held only to copy them */
	char path[700];		   /* the file being written, "" while paused */
	char note[256];		   /* why it is paused, or the last retention error */
	/* written by the worker (atomic stores), read by main */
	bool paused;
	uint64_t files;		/* files begun */
	uint64_t rotations;
	uint64_t pauses;
	uint64_t paused_samples; /* samples taken while paused: counted, not written */
	uint64_t disk_bytes, disk_files, deleted_files; /* as of the last retention pass */
	/* the CPU budget (def.cpu_budget_percent): written by the worker, read by main */
	uint64_t rate_hz;	  /* the events' rate now (the default events') */
	uint64_t cost_ns;	  /* measured cost of one sample to the program sampled */
	uint64_t used_ppm;	  /* share of the machine of the last window, parts per million */
	uint64_t side_ppm;	  /* of it, the JIT-map thread's and the pushes' (spread) */
	uint64_t rate_changes;
	/* the worker's own */
	uint64_t file_rate_hz; /* rate_hz as the file being written began (its rate mark) */
	uint64_t budget_t0, budget_cpu0, budget_samples0; /* the window's start */
	uint64_t budget_jit0, budget_push0;		   /* JIT thread and push CPU then */
	struct daemon_budget_spread push_spread;	   /* pushes' CPU over the last windows */
	uint64_t file_t0;	/* CLOCK_MONOTONIC of the current file's head */
	time_t file_wall0;	/* the wall clock its name was stamped with */
	uint64_t file_bytes0;	/* the writer's byte count at that head */
	uint64_t file_samples0; /* the session's samples at that head */
	int64_t next_retain_ms, next_check_ms;
};

/* The budget loop's window: the rate changes at most this often. */
#define PROFILE_BUDGET_WINDOW_MS 2000
/* A paused profile looks for room this often, and retention runs at least this often. */
#define PROFILE_CHECK_EVERY_MS 1000
#define PROFILE_RETAIN_EVERY_MS 10000

/* The free bytes a paused profile waits for: a file's worth, at least 1 and at most 16 MiB. */
static inline uint64_t profile_resume_free(const struct session_profile *pf)
{
	uint64_t b = pf->def.rotate_bytes ? pf->def.rotate_bytes : (16u << 20);

	return b < (1u << 20) ? (1u << 20) : b > (16u << 20) ? (16u << 20) : b;
}

struct session {
	int id;
	struct session_profile *prof; /* an always-on profile's session, else NULL; owned */
	uid_t uid;
	/*
	 * Main's bookkeeping, never touched by the worker: the client that started
	 * it (NULL for a detached session, or once that client went away), the
	 * clients waiting for the start's and the stop's replies, and when the stop
	 * was asked for (the deadline of its reply).
	 */
	void *owner;
	void *start_client;
	int64_t start_id;
	bool start_replied;
	bool orphan;   /* its client went away: freed without a word once the worker ends */
	bool detached; /* "output": "state" */
	bool ended;    /* its worker ended by itself and was reaped: listed until stopped */
	bool ks_want;  /* kernel symbols were asked for (the start's reply says what came of it) */
	void *stop_client;
	int64_t stop_id;
	uint64_t stop_ns;
	char path[720]; /* a detached session's log in the state directory */
	struct session_params p;
	/* The CPUs, chosen by main at session__new(); cstats[i] is cpus[i]'s. */
	int *cpus;
	size_t ncpus;
	/* The worker's, from its start to its end (main reads none of them). */
	struct session_jit *jit; /* a detached session's JIT maps (daemon-jit.c), or NULL */
	size_t ncoll;
	struct coll_cpu **coll;
	struct maplog *ml;
	struct unwind_ctx *uw; /* dwarf mode only */
	struct filt *filt;     /* the in-kernel sample filter (p.filter.on), made by the worker */
	/*
	 * A user's own system-wide session (!p.who.admin, no pids): the filter keeps
	 * only the user's ptrace-able tasks' samples, and the maplog is gated
	 * (maplog__gate()): a process enters the log only with such a sample.  After a
	 * loss the model is forgotten and, at most once a second, scanned again.
	 */
	bool gated;
	bool gate_rescan;
	uint64_t drop_run; /* samples the writer dropped since its DROPNOTIFY, not yet said */
	uint64_t gate_rescan_ns; /* CLOCK_MONOTONIC of the last scan */
	/*
	 * Gated: a ring was found with less room than the largest record the session
	 * makes (max_rec) just before its tail was given back: records may have been
	 * lost since, which the kernel says only with a later LOST record; the next
	 * round forgets the model before it emits anything (merge_round()).
	 */
	bool loss_suspect;
	uint64_t max_rec;
	/*
	 * A filter changed by main while the session runs (the filter command):
	 * filt_lock guards s->filt against the worker's teardown, p.filter against
	 * the worker's reads of its text (a profile's rotated heads), and the mark
	 * main leaves for the worker to write (filt_mark_pending, its time and text).
	 */
	pthread_mutex_t filt_lock;
	int filt_mark_pending;
	uint64_t filt_mark_t;
	char filt_mark[sizeof(((struct daemon_filter *)0)->text)];
	uint32_t filt_gen;	/* under filt_lock: main's replacements of p.filter */
	/*
	 * A filter request naming cgroups or units: main leaves the parsed filter
	 * here (filt_req, owned by the session), the worker looks them up (reading
	 * directories is never main's work) and sets it, then leaves the result
	 * (filt_req_done, _r, _err) and wakes main (done_efd), which answers the
	 * client that asked (filt_req_client, NULL once it went away).  Under filt_lock.
	 */
	struct daemon_filter *filt_req;
	void *filt_req_client;
	int64_t filt_req_id;
	bool filt_req_done;
	int filt_req_r;
	char filt_req_err[512];
	int64_t filt_follow_ms; /* the worker's: when it looks up the filter's cgroups again */
	uint64_t perf_fds;     /* taken from the budget, given back at the end */
	struct session_cpu_stats *cstats; /* ncpus of them */
	/* Created by main, freed by main; its stats are read by main (relaxed). */
	struct plog_writer *w;
	uint32_t pmcids[COLL_EVENT_MAX];
	pthread_t thread;
	bool thread_started;
	int stop_efd;  /* main -> worker */
	/*
	 * worker -> main: written once the counters are open and the log's head is
	 * out (started, release) or the start failed, and again when the worker has
	 * finished (state done or error, release).  Main reads the state after it.
	 */
	int done_efd;
	bool started;  /* atomic: the start succeeded */
	int start_error; /* the start failed with this (negative errno), error_msg says why */
	int state;     /* enum session_state, atomic */
	int error;     /* first error (negative errno), atomic */
	char error_msg[1024];
	/* Filled by the worker before its final state store (release), for status. */
	struct maplog_stats ml_stats;
	uint64_t last_tsc;
	uint64_t start_ns;
	uint64_t end_ns;
	struct session_stats stats; /* written by the worker (atomic stores) */
	uint32_t depth_note;	    /* depth capped at perf_event_max_stack, 0 if not */
	bool user_forced;	    /* a non-administrator's events made user-mode only */
	/*
	 * Kernel symbols.  pcs and ks_collect belong to the worker; ks and the ks_
	 * results are written by the kallsyms thread until the worker joins it in
	 * session_ks_finish(), then by the worker before its final state store
	 * (release), and read by main only once the state is done or error
	 * (acquire); ks_path and ks_skip are main's.
	 */
	struct daemon_ksyms *ks;
	struct daemon_pcset pcs;
	bool ks_collect;		 /* the hot path adds kernel PCs to pcs */
	/* writes the full table (session_ks_start()); joined by session_ks_finish() */
	pthread_t ks_thread;
	bool ks_thread_started;
	bool ks_rewritable;		 /* ks_fd was a regular file at offset 0 at the start */
	char ks_path[740];		 /* a detached session's kallsyms file */
	char ks_skip[160];		 /* why the session has none ("": it has or none asked) */
	size_t ks_full_syms, ks_full_bytes;
	int ks_state;			 /* enum session_ks_state */
	size_t ks_syms, ks_bytes, ks_pcs; /* what the file holds at the end; distinct PCs */
	uint64_t ks_refused;		 /* kernel PCs not collected (the set was full) */
	char ks_note[200];		 /* why the full table was kept, or the error */
};

/*
 * session__new (main): the session of @p (its fds are the session's from now on,
 * even on failure: p->out_fd and p->ks_fd become -1) on the CPUs @cpus (@ncpus):
 * memory and two eventfds, nothing opened yet.  0 or -errno.
 */
int session__new(struct session_params *p, int id, const int *cpus, size_t ncpus,
		 struct session **ret_s);
/*
 * session__launch (main): start the worker.  It opens the counters, authorizes
 * (session_params.who), writes the log head, the scan and the kernel's MAP_INs,
 * then sets started and writes done_efd; on failure it sets start_error and
 * error_msg, closes everything and ends (state error).  Everything whose cost
 * grows with the request (threads x events x CPUs fds, the /proc scan, the
 * teardown, the close of the client's fds) happens there, never on main.
 * 0, or -errno if the thread could not be made (then session__free() it).
 */
int session__launch(struct session *s);
/* session__request_stop (main): ask the worker to drain and end; returns at once.  Idempotent. */
void session__request_stop(struct session *s);
/*
 * session__reap (main): true once the worker has ended (it was joined here, which
 * then takes no time) or was never launched; false while it runs.
 */
bool session__reap(struct session *s);
/* session__free (main): only a reaped (or never launched) session.  NULL accepted. */
void session__free(struct session *s);
const char *session_state_name(int state);
const char *session_ks_state_name(int ks_state);

/* Read the per-type record counts and bytes of the writer (after the worker is joined, or racy). */
uint64_t session__bytes(const struct session *s);

/*
 * The worker's parts, in the files of their concern: the worker thread alone
 * calls them, on the session it runs.
 */

/*
 * session_paused: a profile paused on a full disk writes nothing: its model is
 * kept up to date (the next file replays it), its samples are counted
 * (paused_samples).
 */
static inline bool session_paused(const struct session *s)
{
	return s->prof && s->prof->paused;
}

/* ---- daemon-session.c ---- */

/* session_stamp: a time stamp for a file's boundary: now, never before the last record. */
uint64_t session_stamp(struct session *s);
/* session_write_head: the log head at @t0 (INITIALIZE, the marks, the events).  0 or -errno. */
int session_write_head(struct session *s, uint64_t t0);
/*
 * session_write_lost (worker): the samples lost since the last lost mark (s->drop_run:
 * the kernel's at a DROPNOTIFY, the writer's drops) as lost marks at @t
 * (pmclog-format.md 11.14); nothing when none.  0 or -errno.
 */
int session_write_lost(struct session *s, uint64_t t);
/* session_filter_follow: the filter's cgroups and units looked up again.  0 or a write error. */
int session_filter_follow(struct session *s);

/* ---- daemon-session-ks.c: the kernel symbols file ---- */

/* session_ks_start: the thread that writes the full table; kernel PCs collected meanwhile. */
void session_ks_start(struct session *s);
/* session_ks_join: that thread joined (its ks_ results are the worker's from now on). */
void session_ks_join(struct session *s);
/* session_ks_finish: after CLOSELOG (@r: the session's result): the compact or the full table. */
void session_ks_finish(struct session *s, int r);

/* ---- daemon-profile-rotate.c: an always-on profile's files ---- */

/* session_profile_tick: after each merge round (@r its result).  0, or an error that ends it. */
int session_profile_tick(struct session *s, int r);
/* session_profile_finish: the end of a profile's session (@r: its last round's result). */
int session_profile_finish(struct session *s, int r);

/* ---- daemon-profile-budget.c: an always-on profile's CPU budget ---- */

/* session_profile_budget_start: a sample's cost and the first rate.  0, or -errno with @err. */
int session_profile_budget_start(struct session *s, char *err, size_t errlen);
/* session_profile_budget: once a window, the rate the budget allows.  0 or a write error. */
int session_profile_budget(struct session *s);

/* ---- daemon-perf-fds.c: the perf fd budget (session_budget_set()) ---- */

/*
 * session_budget_take: @n perf fds for the counters of @s, before they are
 * opened: 0, or -EMFILE with @err naming the bound (the daemon's, or its uid's).
 */
int session_budget_take(struct session *s, uint64_t n, char *err, size_t errlen);
/* session_budget_give_back: the fds @s took, once its counters are closed.  Idempotent. */
void session_budget_give_back(struct session *s);

/* ---- daemon-jit.c: a detached session's JIT maps (perf-PID.map) beside its log ---- */

struct session_jit;
struct maplog_jit_stats;

/*
 * session_jit__start (a detached session's worker, once started): a thread that
 * keeps the JIT maps of the session's processes (@pids, @npids: the targets and
 * their descendants; none: every process, or only those of @only_uid when >= 0)
 * and saves them into LOG.jit/ beside the log at @log (made 0750; removed at the
 * end if nothing went in).  0 or -errno.
 */
int session_jit__start(const char *log, const pid_t *pids, size_t npids, int64_t only_uid,
		       struct session_jit **ret);
/*
 * session_jit__rotate (the worker, after a profile's file was closed and @log
 * begun): the maps as they are now go into the closed file's directory, what
 * comes next into @log's.  Returns at once: the thread does the copying.
 */
void session_jit__rotate(struct session_jit *sj, const char *log);
/*
 * session_jit__closed (the worker, as a profile with push_url closed the file at
 * @path): its push (daemon_push_enqueue()) is queued once its maps were copied
 * beside it (at the rotation or the end that follows), so that the profile sent
 * names its JIT frames.  With no @sj (no JIT maps), queued at once.
 */
void session_jit__closed(struct session_jit *sj, const struct daemon_profile *def,
			 const char *path, int64_t from, int64_t until, uint32_t rate_hz);
/*
 * session_jit__stop (the worker, at its end): the last maps saved, the thread
 * joined; @ret_st (may be NULL) gets what it did.  A thread stuck in a read (a map
 * on FUSE) is waited for DAEMON_JIT_STOP_MS, then left to end and free itself.
 * NULL accepted.
 */
void session_jit__stop(struct session_jit *sj, struct maplog_jit_stats *ret_st);
/* session_jit__cpu_ns (any thread): the CPU @sj's thread has taken so far, in ns (NULL: 0). */
uint64_t session_jit__cpu_ns(struct session_jit *sj);

#define DAEMON_JIT_POLL_MS 1000
#define DAEMON_JIT_STOP_MS 5000

/* ---- daemon-push.c: profiles' closed files sent to a profiling backend ---- */

#define DAEMON_PUSH_QUEUE_MAX 32	 /* files waiting to be sent, of all profiles */
#define DAEMON_PUSH_QUEUE_PROFILE_MAX 8 /* of one profile: beyond, its oldest is dropped */
#define DAEMON_PUSH_ATTEMPTS 6		 /* tries of one file: 1, 2, 4, 8, 16 s apart */
#define DAEMON_PUSH_BODY_MAX (32u << 20) /* the largest profile sent */
#define DAEMON_PUSH_HELD_MAX (64u << 20) /* profiles kept for their retries, in all */
#define DAEMON_PUSH_REPORT_TIMEOUT_S 300 /* `hwpmc report` of one file */
#define DAEMON_PUSH_HTTP_TIMEOUT_S 60	 /* one request, connection included */
#define DAEMON_PUSH_DRAIN_S 10		 /* at shutdown: what is queued gets this long */

struct json_t;

/*
 * daemon_push_start (main, before any session): the push thread, idle until a
 * file is queued; @hwpmc is the `hwpmc` binary that turns a file into the profile
 * sent.  0 or -errno.
 */
int daemon_push_start(const char *hwpmc);
/* daemon_push_stop (main, after the sessions ended): drain for a while, then end.  Idempotent. */
void daemon_push_stop(void);
/*
 * daemon_push_enqueue (a profile's worker, after the file at @path was closed):
 * queue it for @def's push_url with its wall-clock span [@from, @until] (Unix
 * seconds) and the rate its report's counts are in (@rate_hz: the rate the file
 * began with, pmclog-format.md 11.13; 0: by period).  Never blocks: a full queue
 * drops the profile's oldest file (counted).
 */
void daemon_push_enqueue(const struct daemon_profile *def, const char *path, int64_t from,
			 int64_t until, uint32_t rate_hz);
/* daemon_push_status (main): profile @name's counters as a JSON object (new reference). */
struct json_t *daemon_push_status(const char *name);
/*
 * daemon_push_cpu_ns (any thread): the CPU the pushes of profile @name have taken so
 * far (the report children's and the push thread's), in ns; 0 for none.
 */
uint64_t daemon_push_cpu_ns(const char *name);
/*
 * daemon_push_check (main, a profile with push_url): whether the daemon can reach
 * the network at all (an AF_INET socket; the service's sandbox denies it unless
 * opened for the push, hwpmcd.conf(5)).  0, or -errno with @msg said.
 */
int daemon_push_check(const char *url, char *msg, size_t size);

/* ---- daemon-main.c: the main loop and its clients (main's) ---- */

#define DAEMON_CLIENT_MAX_FDS 8

/* A connection to the control socket: main's, from its accept to its end. */
struct daemon_client {
	int fd;
	struct daemon_who who; /* SO_PEERCRED (+ SO_PEERGROUPS for the admin decision) */
	char *buf;
	size_t len;
	bool discarding; /* skipping the rest of an oversized line */
	int fds[DAEMON_CLIENT_MAX_FDS];
	size_t nfds;
	uint64_t last_ns; /* CLOCK_MONOTONIC of its last complete request (idle timeout) */
	/*
	 * Fairness: one request per client per turn of the loop; a client with more
	 * complete lines in its buffer is ready, and the loop does not sleep.
	 */
	bool ready;
	bool paused; /* not read: its uid's fds wait to be closed (CLOSING_USER_MAX) */
	struct daemon_client *next;
};

static inline bool daemon_is_admin(const struct daemon_client *c)
{
	return c->who.admin;
}

struct daemon_config;
struct daemon_start;

/*
 * Main's state, shared by its files and touched by the main thread alone (STYLE.md
 * 7): the configuration (daemon-ctl.h), the epoll fd, the sessions (running,
 * stopping, or ended and still listed; DAEMON_SESSIONS_MAX) and the next one's id.
 */
extern struct daemon_config daemon_cfg;
extern int daemon_epfd;
extern struct session *daemon_sessions[];
extern size_t daemon_nsessions;
extern int daemon_next_session_id;
extern bool daemon_shutting_down; /* SIGTERM: every session is being closed */

/* daemon_mono_ns: CLOCK_MONOTONIC, in ns. */
uint64_t daemon_mono_ns(void);
/* daemon_client_rearm: the clients paused while their uid's fds closed are read again. */
void daemon_client_rearm(void);

/* ---- daemon-reply.c: lines to clients, sent without blocking (main's) ---- */

/* daemon_send_line: @msg (consumed; NULL sends nothing) as one line to @fd, never waiting. */
void daemon_send_line(int fd, json_t *msg);
/* daemon_client_send: the same to client @c. */
void daemon_client_send(struct daemon_client *c, json_t *msg);
/* daemon_reply_ok: {"id": @id, "ok": true}, a new reference for the caller to fill. */
json_t *daemon_reply_ok(json_int_t id);
/* daemon_reply_error: an error reply to @c, its message made from @fmt. */
void daemon_reply_error(struct daemon_client *c, json_int_t id, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* daemon_errno_name: "EINVAL" for -EINVAL; "EIO" for an errno the table does not name. */
const char *daemon_errno_name(int err);
/* daemon_error_json: {"id", "ok": false, "error": {"errno", "message"}}; @id < 0: "id": null. */
json_t *daemon_error_json(json_int_t id, int err, const char *msg);

/* ---- daemon-clientfd.c: the fds clients send (main's, and its closer threads') ---- */

extern int daemon_closer_efd; /* a closer thread -> main: one close returned */

/*
 * daemon_check_output_fd: whether @fd may be a session's @what ("log",
 * "kallsyms") output: open for writing, a regular file, a pipe, a socket or a
 * memory device, not on FUSE.  0, or -EBADF or -EINVAL with @err saying why.
 */
int daemon_check_output_fd(int fd, const char *what, char *err, size_t errlen);
/* daemon_fd_release: close @fd that client @uid gave, on a closer thread (never on main). */
void daemon_fd_release(int fd, uid_t uid);
/* daemon_client_drop_fds: release the fds @c sent that no request took. */
void daemon_client_drop_fds(struct daemon_client *c);
/* daemon_closing_over: @uid's CLOSING_USER_MAX closers are busy and more of its fds wait. */
bool daemon_closing_over(uid_t uid);
/* daemon_closer_event: daemon_closer_efd woke main: more closers where fds wait, rearm clients. */
void daemon_closer_event(void);

/* ---- daemon-cmd.c: requests, commands, the sessions' list (main's) ---- */

extern json_t *daemon_events_cache; /* the events reply, for EVENTS_CACHE_NS */

/* daemon_handle_line: one request of @c (@len bytes, no newline): its reply, or a wait for one. */
void daemon_handle_line(struct daemon_client *c, const char *line, size_t len);
/* daemon_state_dir_check: the state directory made or found safe (0750, ours).  0 or -errno. */
int daemon_state_dir_check(char *err, size_t errlen);
/* daemon_write_vdso_beside: LOG.vdso beside a log of the state directory, best effort. */
void daemon_write_vdso_beside(const char *log);
/*
 * daemon_vdso_publish: save this kernel's vDSO image as STATE/vdso/BUILDID/
 * linux-vdso.so.1 and name every [vdso] MAP_IN by it (pmclog-format.md 11.15), at
 * start-up; best effort (else the MAP_INs say "[vdso]").
 */
void daemon_vdso_publish(void);
/*
 * session_admit: a new session of @p (a client's or a profile's) against the
 * daemon's limits: its filter's cgroups resolved, the session count, the ring
 * memory; the CPUs it will count on in @cpus.  0, or -errno with @err.
 */
int session_admit(struct session_params *p, const struct daemon_start *st, int *cpus,
		  size_t *ret_ncpus, char *err, size_t errlen);
/* session_register: a launched session joins the list; main hears its done_efd. */
void session_register(struct session *s);
/* session_remove: the session leaves the list (its profile's slot hears) and is freed. */
void session_remove(struct session *s);
/* session_json: @s's status (a new reference). */
json_t *session_json(struct session *s);
/* session_tell_end: the stop's reply and the owner's end event; with @remove, then removed. */
void session_tell_end(struct session *s, const char *reason, bool remove);
/* session_event: @s's done_efd woke main: the start's reply, or its end. */
void session_event(struct session *s);
/* daemon_sessions_check_stops: the stops not answered SESSION_STOP_REPLY_MS after they came. */
void daemon_sessions_check_stops(uint64_t now);

/* ---- daemon-profile-run.c: the always-on profiles the daemon runs (main's) ---- */

extern char daemon_profiles_dir[512]; /* DAEMON_PROFILES_DIR_DEFAULT, or --profiles-dir */

/*
 * daemon_profiles_load: (re)load daemon_profiles_dir: new and changed profiles
 * start (a changed one once its old session has ended), removed, disabled and
 * changed ones stop.  The number of files refused (logged, and kept for status).
 */
int daemon_profiles_load(void);
/* daemon_profiles_start_pending: start the profiles no session of their name holds up now. */
void daemon_profiles_start_pending(void);
/* daemon_profile_session_gone: profile session @s leaves the list: its slot says why. */
void daemon_profile_session_gone(struct session *s);
/* daemon_cmd_profiles: the `profiles` command (administrators only). */
void daemon_cmd_profiles(struct daemon_client *c, json_int_t id, json_t *args);

/* ---- daemon-broker.c: the files a push's confined report may read (a process of its own) ---- */

#define DAEMON_BROKER_REQUESTS_MAX 16384 /* files one report may ask for (then EACCES) */
#define DAEMON_BROKER_IMAGES_MAX 65536	  /* distinct images of a log it serves */
#define DAEMON_BROKER_END_MS 5000	  /* after the report ended, for its broker */
#define DAEMON_BROKER_FD 3		  /* `hwpmcd --push-broker FILE`'s socket */

struct daemon_broker;

/*
 * daemon_broker__new: the policy of a push of the log at @log (the path the
 * report is given): the images its MAP_IN and PROCEXEC records name (the log is
 * read here), and the FUSE mounts of the mount namespace.  0 with *ret_b (the
 * caller's), or -errno.
 */
int daemon_broker__new(const char *log, struct daemon_broker **ret_b);
/* daemon_broker__free: NULL ok. */
void daemon_broker__free(struct daemon_broker *b);
/*
 * daemon_broker__open: @path opened for reading if the policy allows it
 * (daemon-broker.c says which paths, and how they are opened): the fd (O_RDONLY |
 * O_NONBLOCK | O_NOCTTY | O_CLOEXEC, the caller's), -EACCES (refused), -ENOEXEC
 * (not a regular file, or an image that is not ELF), or what open(2) says
 * (-ENOENT...).
 */
int daemon_broker__open(struct daemon_broker *b, const char *path);
/*
 * daemon_broker__serve: answer the requests on @sock (common-open.h), one at a
 * time, at most DAEMON_BROKER_REQUESTS_MAX (then EACCES), until the other end
 * closes; the requests answered and refused (EACCES) into *ret_served and
 * *ret_refused.
 */
void daemon_broker__serve(struct daemon_broker *b, int sock, unsigned *ret_served,
			  unsigned *ret_refused);
/*
 * daemon_broker_main: `hwpmcd --push-broker FILE` (started by the push thread,
 * its socket as DAEMON_BROKER_FD): keep CAP_DAC_READ_SEARCH alone, no new
 * privileges, then serve FILE's policy.  The process's exit status.
 */
int daemon_broker_main(const char *log);

#endif /* HWPMCD_DAEMON_INT_H */
