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

#include "daemon-int.h"

#define DAEMON_SESSIONS_MAX 64 /* the most max_sessions may be */
#define DAEMON_CLIENTS_MAX 1024

/* hwpmcd.conf (man/hwpmcd.conf.5).  Limits named user_* apply to non-administrators. */
struct daemon_config {
	char socket_path[108];
	char state_dir[512];
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

#endif /* HWPMCD_DAEMON_CTL_H */
