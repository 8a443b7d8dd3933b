/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * maplog-jit.h: keep the JIT symbol maps (perf-PID.map) of a session's processes,
 * so that they can be saved beside the log even when the process (and its /tmp
 * file) is gone by the time anyone reports (module maplog).
 * PUBLIC INTERFACES
 *   struct maplog_jit_opts, struct maplog_jit_stats
 *   struct maplog_jit: maplog_jit__new(), __poll(), __snapshot(), __finish(), __stats(),
 *   __free(); maplog_jit_parse_line(), maplog_jit_copy()
 * IMPLEMENTATION NOTES
 *   __poll() (call it about once a second) walks /proc: for each process in scope
 *   (a process seen without a map is looked at again 1, 2, 4, 8, then every 16
 *   polls later, so a walk of a busy machine is a readdir and a lookup for most;
 *   a target of a recording, or its descendant, at every poll until it has one;
 *   __snapshot() and __finish() look at every process)
 *   (the target pids and their descendants, or every process) it looks for
 *   /tmp/perf-NSPID.map inside the process's own root (NSPID: its pid in its own
 *   pid namespace), opened with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)
 *   as O_PATH first, then reopened for reading only if it is a regular file owned
 *   by the process's owner or root (as perf requires: another user could plant a
 *   map for your pid in a shared /tmp), and only while the process is the one whose
 *   start time was read before (pid reuse).  The open fd is kept: the file can be
 *   deleted, and the process exit, without loss.  Once the process has exited, and
 *   for every process at __finish(), the file's well-formed lines (at most
 *   max_map_bytes; only its data is read, never a sparse file's holes) are
 *   copied to DIR/perf-PID.map (PID as the log names the process), appended to it
 *   if a process before with that pid saved one; what one owner's processes make
 *   it write into one directory is bounded by max_user_bytes.  At most max_open maps are kept
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
#include <string.h>
#include <sys/types.h>

#include "hwpmcd/common.h"

struct maplog_jit_opts {
	const pid_t *pids; /* the targets (their descendants too); NULL/0: every process */
	size_t npids;
	size_t max_open;	/* maps kept open at once; 0: 256 */
	uint64_t max_map_bytes; /* bytes copied of one map; 0: 256 MiB */
	uint64_t max_bytes;	/* bytes copied into one directory in all; 0: 1 GiB */
	uint64_t max_user_bytes; /* ... of the maps of one owner's processes; 0: 64 MiB */
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
	uint64_t truncated;  /* maps cut at max_map_bytes, max_bytes or max_user_bytes */
	uint64_t over_quota; /* maps not copied: their owner's max_user_bytes was spent */
	uint64_t bad_lines;  /* lines left out: not "START SIZE NAME" (a sparse file's zeros) */
	uint64_t errors;     /* maps that could not be read or written */
	int last_error;	     /* the errno of the last error (0: none) */
};

struct maplog_jit;

/* What maplog_jit_copy() did. */
struct maplog_jit_copied {
	uint64_t written;   /* bytes of whole lines written */
	uint64_t read;	    /* bytes of data read (holes are not read) */
	uint64_t bad_lines; /* lines left out (maplog_jit_parse_line() refused them) */
	bool truncated;	    /* stopped at the room, or after reading 2 x room + 1 MiB */
};

/*
 * maplog_jit_copy: the well-formed lines of the map open on @in (read with pread
 * from offset 0; only its data: SEEK_DATA/SEEK_HOLE skip a sparse file's holes,
 * which end the line they cut) to @out, each ending in '\n', at most @room bytes
 * of whole lines; reading stops after 2 x @room + 1 MiB of data.  0 with *@ret,
 * or -errno (of the read or write; *@ret says what was done before).
 */
int maplog_jit_copy(int in, int out, uint64_t room, struct maplog_jit_copied *ret);

/* When a map's bytes below @size were there: the wall clock @ns (CLOCK_REALTIME). */
struct maplog_jit_growth {
	uint64_t size;
	int64_t ns;
};

/*
 * maplog_jit_copy_timed: maplog_jit_copy(), and for each line written the time it
 * appeared onto @tout (-1: none), one decimal wall-clock ns per line: that of the
 * first of @grow (@ngrow, by size) whose size reaches the line's end, else now.
 * The times' bytes count in @room and in ret->written as the lines' do (what a
 * process makes its recorder write is bounded alike).  A failed write of the times
 * stops them alone.
 */
int maplog_jit_copy_timed(int in, int out, int tout, const struct maplog_jit_growth *grow,
			  size_t ngrow, uint64_t room, struct maplog_jit_copied *ret);

/* The longest line of a map that is kept (perf's own maps' names are far shorter). */
#define MAPLOG_JIT_LINE_MAX 4096

/*
 * maplog_jit_parse_line: one line of a perf-PID.map, @len bytes without its newline:
 * "START SIZE NAME", START and SIZE hexadecimal (an optional 0x, at most 16 digits)
 * each followed by one space, NAME the rest of the line, not empty.  true with the
 * fields (the name at offset *@ret_name); false for anything else: a line over
 * MAPLOG_JIT_LINE_MAX, one with a NUL byte (a sparse file's holes), SIZE 0, a range
 * that wraps.  Shared by the copier and the report (report-sym.c), so that what is
 * saved is what is read.
 */
static inline bool maplog_jit_parse_line(const char *line, size_t len, uint64_t *ret_start,
					 uint64_t *ret_size, size_t *ret_name)
{
	const char *p = line, *end = line + len;
	uint64_t v[2];

	if (len > MAPLOG_JIT_LINE_MAX || memchr(line, '\0', len))
		return false;
	for (int k = 0; k < 2; k++) {
		int digits = 0, d;

		v[k] = 0;
		if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
			p += 2;
		while (p < end && (d = util_hex_digit((unsigned char)*p)) >= 0) {
			if (++digits > 16)
				return false;
			v[k] = v[k] << 4 | (uint64_t)d;
			p++;
		}
		if (digits == 0 || p == end || *p != ' ')
			return false;
		p++;
	}
	if (p == end || v[1] == 0 || v[0] + v[1] < v[0])
		return false;
	*ret_start = v[0];
	*ret_size = v[1];
	*ret_name = (size_t)(p - line);
	return true;
}


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
