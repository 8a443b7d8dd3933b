/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-ctl.h: private to src/daemon: configuration, request parsing and
 * authorization - the parts of the control path that take untrusted input and
 * decide, kept free of sockets and sessions so that unit tests and the fuzz
 * harnesses (tests/fuzz/fuzz-ctl.c, fuzz-config.c) drive the daemon's own code.
 *
 * IMPLEMENTATION NOTES
 *   daemon-config.c parses hwpmcd.conf, daemon-request.c turns a request line
 *   and a start's args into session parameters under the client's limits,
 *   daemon-auth.c decides who is an administrator and whom a user may profile.
 *   All three are single-threaded (main) and own nothing after they return
 *   except what they document.
 */
#ifndef HWPMCD_DAEMON_CTL_H
#define HWPMCD_DAEMON_CTL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "daemon-int.h"

#define DAEMON_SESSIONS_MAX 64 /* the most max_sessions may be */
#define DAEMON_CLIENTS_MAX 1024

/* hwpmcd.conf (man/hwpmcd.conf.5).  Limits named user_* apply to non-administrators. */
struct daemon_config {
	char socket_path[108];
	char state_dir[512];
	char hwpmc[512]; /* the hwpmc binary: turns a profile's file into what push_url gets */
	unsigned socket_mode;
	char admin_group[64];
	uint32_t ring_pages;
	uint32_t depth;
	uint32_t stack_bytes;
	uint32_t max_sessions;	      /* global */
	uint32_t unwind_cache_mb;     /* dwarf mode: ELF images mapped per session, MiB */
	uint32_t max_clients;	      /* global concurrent connections */
	uint32_t client_idle_timeout; /* s; 0: never */
	uint32_t max_ring_mb;	      /* ring memory of all sessions */
	uint32_t max_perf_fds;	      /* perf fds of all sessions; 0: what RLIMIT_NOFILE leaves */
	uint32_t user_max_sessions;
	uint32_t user_max_clients;
	uint32_t user_max_freq; /* Hz; 0: the kernel's perf_event_max_sample_rate */
	uint32_t user_max_ring_pages;
	uint32_t user_max_stack_bytes;
	uint32_t user_max_depth;
	uint32_t user_max_perf_fds; /* perf fds of one uid's sessions */
};

void daemon_config_defaults(struct daemon_config *cfg);
/*
 * daemon_config_parse: apply the config text @text (@len bytes, any bytes) to
 * @cfg.  Each problem is appended to @err as "NAME:LINE: message" (lines joined
 * by '\n', truncated to @errlen); a bad line leaves its key unchanged.  Returns
 * the number of problems (0: the whole text was good).
 */
int daemon_config_parse(struct daemon_config *cfg, const char *text, size_t len,
			const char *name, char *err, size_t errlen);
/*
 * daemon_config_load: the same for the file @path.  0; 0 when it does not exist
 * and !@must_exist; -EINVAL when it had problems (@err lists them); or the
 * open/read error (-EFBIG above 1 MiB).
 */
int daemon_config_load(struct daemon_config *cfg, const char *path, bool must_exist,
		       char *err, size_t errlen);

/* Problems found in a text, as "NAME:LINE: message" lines joined by '\n' into buf. */
struct daemon_diag {
	char *buf; /* NULL: only counted */
	size_t size, len;
	int count;
};

/* daemon_diag_add: count a problem and append its line (truncated to the buffer). */
void daemon_diag_add(struct daemon_diag *d, const char *name, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* daemon_printable: @s for a message, control bytes as '?', NUL-terminated in @dst. */
void daemon_printable(char *dst, size_t size, const char *s);

/* One `key = value` line; @key and @value are trimmed and NUL-terminated. */
typedef void (*daemon_kv_fn)(void *ctx, const char *key, const char *value, int line,
			     struct daemon_diag *d);
/*
 * daemon_kv_parse: the `key = value` lines of @text (@len bytes, any bytes): '#'
 * starts a comment line, blank lines are skipped; a line that is not `key =
 * value`, holds a NUL byte or is longer than 1023 bytes is a problem of @d;
 * every other line goes to @fn.  Returns the problems added to @d (by it and @fn).
 */
int daemon_kv_parse(const char *text, size_t len, const char *name, daemon_kv_fn fn, void *ctx,
		    struct daemon_diag *d);
/*
 * daemon_read_file: the whole regular file @path (opened O_NONBLOCK, so that a
 * FIFO cannot hold us up; /dev/null reads as empty) into a new malloc'ed NUL-terminated *ret_buf of
 * *ret_len bytes.  0, -EISDIR, -EINVAL (another kind of file), -EFBIG (over @max bytes), or
 * open(2)/read(2)'s error.
 */
int daemon_read_file(const char *path, size_t max, char **ret_buf, size_t *ret_len);

/* One parsed request line; root owns args and cmd (json_decref(root)). */
struct daemon_request {
	json_t *root;
	json_int_t id; /* -1: none could be read */
	const char *cmd;
	json_t *args; /* an object (empty when the request had none); borrowed from root */
};

/*
 * daemon_request_parse: @line (@len bytes, no newline) as {"id", "cmd", "args"}.
 * 0 with *rq filled; -EPROTO (not JSON) or -EINVAL (another shape; rq->id is the
 * id if it could be read) with @err set and nothing to free.
 */
int daemon_request_parse(const char *line, size_t len, struct daemon_request *rq, char *err,
			 size_t errlen);
void daemon_request_free(struct daemon_request *rq);

/* What a start asked for beyond session_params. */
struct daemon_start {
	bool detached;	   /* "output": "state" */
	bool ks_fd;	   /* "kallsyms": "fd": a second fd comes */
	bool ks_want;	   /* kernel symbols asked for (an fd, or a detached session's file) */
	bool user_forced;  /* a non-administrator's events were made user-mode only */
	uint32_t depth_note; /* depth capped at perf_event_max_stack, 0 if not */
	size_t ring_bytes;   /* ring memory per CPU (pages + the header page) */
};

/* daemon_ring_bytes: the memory of one CPU's ring of @ring_pages (+ its header page). */
size_t daemon_ring_bytes(uint32_t ring_pages);

/*
 * daemon_start_parse: validate the args of a start from @who under @cfg and the
 * kernel's limits (@maxrate Hz, @maxstack frames; 0: unknown) into @p (zeroed
 * here, fds -1) and @st.  Pure: no files, no fds (events are parsed against
 * $HWPMCD_SYSFS_ROOT or /sys).  0, or -errno with @err: EINVAL/ERANGE for bad
 * values, EPERM/EACCES for what @who may not ask for.
 */
int daemon_start_parse(json_t *args, const struct daemon_config *cfg,
		       const struct daemon_who *who, uint64_t maxrate, uint32_t maxstack,
		       struct session_params *p, struct daemon_start *st, char *err,
		       size_t errlen);

/*
 * daemon_filter_parse: the "filter" object of a start or a filter request into @f
 * (zeroed here): {"pid": [..], "uid": [..], "comm": [..], "cgroup": [..], "unit":
 * [..]}, each optional, at most FILT_VALUES_MAX values each.  Pure.  0, or -errno
 * with @err.
 */
int daemon_filter_parse(json_t *obj, struct daemon_filter *f, char *err, size_t errlen);

/*
 * daemon_filter_owner_rule: the only filter under which a non-administrator @who
 * may have a system-wide or CPU session, checked at its start and at each run-time
 * change: it names @who's uid alone (other kinds may narrow it further).  It then
 * gets the owner check (filt_spec.owner_only: only tasks @who could ptrace) and
 * "owner=UID:GID" in its text.  0, or -EPERM with @err saying what is allowed.
 */
int daemon_filter_owner_rule(struct daemon_filter *f, const struct daemon_config *cfg,
			     const struct daemon_who *who, char *err, size_t errlen);

/*
 * daemon_filter_resolve: the cgroup ids of @f's cgroups and units, under the cgroup
 * v2 hierarchy mounted at @root: a cgroup is a path below it (leading '/' or
 * not), a unit the directory of that name, looked for under system.slice, then
 * anywhere at most 4 levels deep (one walk of the tree serves every unit of every
 * lookup for a second, shared by the threads).  Each must be a cgroup v2 directory
 * (@check_fs: statfs says so).  Fills f->spec.cgroups and f->text (its resolved
 * part replaced: a profile's filter is resolved again and again).  0, or -errno
 * with @err (ENOENT: no such cgroup or unit, unless f->missing_ok, where id 0,
 * which matches nothing, stands in for it and the text says "(not running)").
 */
int daemon_filter_resolve(struct daemon_filter *f, const char *root, bool check_fs, char *err,
			  size_t errlen);
/*
 * daemon_filter_lookup: daemon_filter_resolve() under the cgroup v2 hierarchy this
 * machine has mounted (-EOPNOTSUPP with @err if none).  It reads directories: a
 * session's worker calls it, never main.
 */
int daemon_filter_lookup(struct daemon_filter *f, char *err, size_t errlen);

/*
 * daemon_cgroup2_root: where cgroup v2 is mounted, from @mounts (/proc/self/mounts):
 * /sys/fs/cgroup, or /sys/fs/cgroup/unified in the hybrid layout.  0 or -ENOENT.
 */
int daemon_cgroup2_root(const char *mounts, char *buf, size_t len);

/*
 * daemon_auth_admin: whether a client of @uid with primary group @gid and
 * supplementary groups @groups[@ngroups] is an administrator: uid 0, or a member
 * of the group @admin_gid ((gid_t)-1: no such group, so only root).
 */
bool daemon_auth_admin(uid_t uid, gid_t gid, const gid_t *groups, size_t ngroups,
		       gid_t admin_gid);
/*
 * daemon_auth_target: may the non-administrator @who profile process @pid, as
 * perf_event_open(2) would let it (ptrace read access with real credentials)?
 * Every thread must have real, effective and saved uid == @who->uid and gids ==
 * @who->gid, and the process must be dumpable (its /proc/PID/status is then
 * owned by its uid; a non-dumpable or setuid-exec'ed one's by root).  @procroot is
 * "/proc" (a test may pass another tree).  0; -ESRCH (no such process) or
 * -EACCES with @err saying which rule failed.
 */
int daemon_auth_target(const char *procroot, const struct daemon_who *who, pid_t pid,
		       char *err, size_t errlen);

/*
 * daemon_auth_tids: once the counters of a non-administrator's session exist, each
 * of the @n thread ids @tids that got one must still be a thread of the process it
 * was listed under (@owners[i]): a tid that exited between the listing and the open
 * may have been reused by another task (a setuid program the user started into the
 * freed id), whose counter would then be the user's.  @pidfds (NULL, or @n pidfds
 * of those threads opened before the counters, -1 for none) close the last gap:
 * a tid whose pidfd's task has exited may have been reused twice, by another task
 * and then by a thread of the same process, and is refused too.  A tid with no
 * task at all holds a dead counter and passes.  @procroot as for
 * daemon_auth_target.  0, or -EAGAIN with @err naming the thread.
 */
int daemon_auth_tids(const char *procroot, const pid_t *tids, const pid_t *owners,
		     const int *pidfds, size_t n, char *err, size_t errlen);

/*
 * daemon_auth_open_as: open(2) @path (@flags; O_CLOEXEC added) with the calling
 * thread's file system ids set to @who's and no effective capability, then put
 * them back: the kernel's own checks are then @who's.  For /proc/PID/maps that is
 * ptrace_may_access(PTRACE_MODE_READ_FSCREDS), made while it holds the process's
 * exec_update_lock and takes hold of the address space the fd will read, so no
 * exec can come between the check and what is read (maplog.h, ops->open_maps).
 * The daemon must be uid 0 with CAP_SETUID and CAP_SETGID (hwpmcd.service).  The
 * fd, or -errno (-EACCES: refused; -EPERM: the ids could not be changed).
 * Changes only the calling thread's credentials, for the length of the call.
 */
int daemon_auth_open_as(const struct daemon_who *who, const char *path, int flags);

/* ---- always-on profiles (daemon-profile.c) ---- */

/* What retention found and did in a profile's directory. */
struct daemon_retain {
	uint64_t files, bytes;		   /* what is left, side files included */
	uint64_t deleted_files, deleted_bytes;
	uint64_t deleted_jit_bytes; /* FILE.jit/ deleted alone, to keep the logs */
};

/* daemon_profile_name_ok: letters, digits, '_', '.', '-'; 1..63 bytes; not starting '.' or '-'. */
bool daemon_profile_name_ok(const char *name);
/* daemon_profile_defaults: a profile @name with every default (man hwpmcd.conf.5). */
void daemon_profile_defaults(struct daemon_profile *pf, const char *name);
/*
 * daemon_profile_parse: apply the text of the profile file @fname (@len bytes)
 * to @pf (from daemon_profile_defaults()), then check it whole: the keys against
 * each other, and what it asks the collector for through daemon_start_parse()
 * under @cfg, @maxrate and @maxstack as for root.  Each problem is a line
 * "FNAME:LINE: message" in @err.  Returns the number of problems.  Pure but for
 * the sysfs reads of the event parser.
 */
int daemon_profile_parse(struct daemon_profile *pf, const char *text, size_t len,
			 const char *fname, const struct daemon_config *cfg, uint64_t maxrate,
			 uint32_t maxstack, char *err, size_t errlen);
/* daemon_profile_args: the start arguments of @pf ("output": "state"); a new reference. */
json_t *daemon_profile_args(const struct daemon_profile *pf);
/*
 * daemon_profile_load_dir: every NAME.conf of @dir, in name order, into @defs (at
 * most @max; *ret_n of them).  A file with problems is left out and its problems
 * are appended to @err; a missing directory is no profile.  Returns the number
 * of problems (0: every file was good).
 */
int daemon_profile_load_dir(const char *dir, const struct daemon_config *cfg, uint64_t maxrate,
			    uint32_t maxstack, struct daemon_profile *defs, size_t max,
			    size_t *ret_n, char *err, size_t errlen);
/* daemon_profile_same: @a and @b ask for the same (where their keys stand aside). */
bool daemon_profile_same(const struct daemon_profile *a, const struct daemon_profile *b);
/*
 * daemon_profile_open_file: create DIR/NAME-YYYYmmddTHHMMSSZ.pmclog for the UTC
 * time @when (O_EXCL|O_NOFOLLOW, 0640; "-N" before ".pmclog" if that name is
 * taken) and put its path in @ret_path.  The fd, or -errno.
 */
int daemon_profile_open_file(const char *dir, const char *name, time_t when, char *ret_path,
			     size_t pathlen);
/*
 * daemon_profile_retain: in @dir, while the files of profile @name total more
 * than @retain_bytes (side files and FILE.jit/ included), delete the oldest
 * files' FILE.jit/ of JIT maps first, then the oldest files (with their
 * .kallsyms, .vdso and .jit/); and every file last written more than
 * @retain_seconds before @now (0: no such bound); never @current (the file being
 * written).  *ret says what is left and what went.  0 or -errno (what was deleted
 * before an error stays counted).
 */
int daemon_profile_retain(const char *dir, const char *name, const char *current,
			  uint64_t retain_bytes, uint64_t retain_seconds, time_t now,
			  struct daemon_retain *ret);
/*
 * daemon_budget_next: the budget loop's control law.  The profile's rate is @cur
 * (at most @max, at least 1); in the last window it used @used_ns of the
 * machine's CPU (the daemon's work plus what its samples cost the programs) of
 * @budget_ns allowed.  Over budget: down in proportion (times 0.9); under 70%
 * of it: up in proportion (times 0.9), at most doubling; in between, no change.
 * Returns the new rate, 1..@max.  Pure.
 */
uint64_t daemon_budget_next(uint64_t cur, uint64_t max, uint64_t used_ns, uint64_t budget_ns);

/*
 * A cost that comes in bursts (a profile's push: one report per rotated file),
 * spread evenly over the @len (1..DAEMON_BUDGET_SPREAD_MAX) windows after it, so
 * that the rate does not drop at each burst and climb back after it.  @s holds
 * the last windows' costs (zeroed at first).  Takes this window's @cost_ns; returns
 * what this window is charged: the sum of the last @len windows' costs over @len
 * (each cost is charged in full, a @len-th a window).  Pure but for @s
 * (daemon-int.h).
 */
uint64_t daemon_budget_spread(struct daemon_budget_spread *s, size_t len, uint64_t cost_ns);
/* daemon_parse_size: "4096", "64K", "64KiB", "1.5G" (binary).  0, -EINVAL or -ERANGE. */
int daemon_parse_size(const char *s, uint64_t *ret);
/* daemon_parse_duration: "90", "90s", "15min", "15m", "2h", "7d" in seconds. 0 or -EINVAL/-ERANGE. */
int daemon_parse_duration(const char *s, uint64_t *ret);

#endif /* HWPMCD_DAEMON_CTL_H */
