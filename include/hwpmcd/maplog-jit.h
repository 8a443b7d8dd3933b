/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * maplog-jit.h: keep the JIT symbol maps (perf-PID.map) of a session's processes,
 * so that they can be saved beside the log even when the process (and its /tmp
 * file) is gone by the time anyone reports (module maplog).
 * PUBLIC INTERFACES
 *   struct maplog_jit_opts, struct maplog_jit_stats
 *   struct maplog_jit: maplog_jit__new(), __poll(), __finish(), __stats(), __free()
 * IMPLEMENTATION NOTES
 *   __poll() (call it about once a second) walks /proc: for each process in scope
 *   (a process seen without a map is looked at again 1, 2, 4, 8, then every 16
 *   polls later, so a walk of a busy machine is a readdir and a lookup for most;
 *   __snapshot() and __finish() look at every process)
 *   (the target pids and their descendants, or every process) it looks for
 *   /tmp/perf-NSPID.map inside the process's own root (NSPID: its pid in its own
 *   pid namespace), opened with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)
 *   as O_PATH first, then reopened for reading only if it is a regular file owned
 *   by the process's owner or root (as perf requires: another user could plant a
 *   map for your pid in a shared /tmp), and only while the process is the one whose
 *   start time was read before (pid reuse).  The open fd is kept: the file can be
 *   deleted, and the process exit, without loss.  Once the process has exited, and
 *   for every process at __finish(), the whole file (at most max_map_bytes) is
 *   copied to DIR/perf-PID.map (PID as the log names the process), appended to it
 *   if a process before with that pid saved one.  At most max_open maps are kept
 *   at once and max_bytes copied in all; what is left out is counted.  Whoever
 *   calls this reads only what its own credentials may read (the /proc/PID/root of
 *   a process one may not ptrace is refused by the kernel).  The reads are of
 *   files the profiled processes control: a map on FUSE can make them wait, so
 *   the caller must be a thread that may wait (hwpmc record, not a daemon's main
 *   loop).  One thread uses a maplog_jit.
 */
#ifndef HWPMCD_MAPLOG_JIT_H
#define HWPMCD_MAPLOG_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct maplog_jit_opts {
	const pid_t *pids; /* the targets (their descendants too); NULL/0: every process */
	size_t npids;
	size_t max_open;	/* maps kept open at once; 0: 256 */
	uint64_t max_map_bytes; /* bytes copied of one map; 0: 256 MiB */
	uint64_t max_bytes;	/* bytes copied into one directory in all; 0: 1 GiB */
	/*
	 * For a caller with more rights than the processes' owners (the daemon, root):
	 * by_uid keeps the processes of effective uid @uid only (a user's session;
	 * false: every process in scope); strict_owner takes a map only if owned by its
	 * process's owner (not root's in a non-root process: a file a user could not
	 * read may be root's).
	 */
	bool by_uid;
	uid_t uid;
	bool strict_owner;
};

struct maplog_jit_stats {
	uint64_t saved;	     /* maps written to the directory */
	uint64_t bytes;	     /* bytes written */
	uint64_t refused;    /* maps not owned by their process's owner or root */
	uint64_t over_open;  /* maps not kept: max_open were open */
	uint64_t truncated;  /* maps cut at max_map_bytes or max_bytes */
	uint64_t errors;     /* maps that could not be read or written */
	int last_error;	     /* the errno of the last error (0: none) */
};

struct maplog_jit;

struct util_dir;

/*
 * maplog_jit__new: a collector writing into the private directory @dir (files.h;
 * its fd borrowed: it must stay open until __free() or the next __snapshot()):
 * each map is a file of the caller's (mode 0600) in it, appended to only if it is
 * the caller's regular file (util_file_append()).  0 or -ENOMEM / -EINVAL.
 */
int maplog_jit__new(const struct util_dir *dir, const struct maplog_jit_opts *o,
		    struct maplog_jit **ret_j);

/* maplog_jit__poll: find new maps, save those of processes that exited.  0 or -ENOMEM. */
int maplog_jit__poll(struct maplog_jit *j);

/*
 * maplog_jit__snapshot: copy every map kept, as it is now, into the directory
 * (appended to what a process before with that pid saved there), keep them open,
 * then write into @dir (borrowed; NULL or fd -1: the same one) from now on: a
 * rotated log's file gets the maps as they were at its end.  0 or -ENOMEM.
 */
int maplog_jit__snapshot(struct maplog_jit *j, const struct util_dir *dir);

/* maplog_jit__finish: one last __poll(), then save every map kept.  0 or -ENOMEM. */
int maplog_jit__finish(struct maplog_jit *j);

void maplog_jit__stats(const struct maplog_jit *j, struct maplog_jit_stats *ret);

/* maplog_jit__free: close what is still open (without saving it). */
void maplog_jit__free(struct maplog_jit *j);

#endif /* HWPMCD_MAPLOG_JIT_H */
