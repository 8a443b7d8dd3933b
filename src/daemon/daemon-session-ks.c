/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-session-ks.c: a session's kernel symbols file: the full table written
 * by a thread of the session's as it starts, the compact one at its end.
 *
 * PUBLIC INTERFACES (daemon-internal, daemon-int.h)
 *   session_ks_start()        the worker's first act: the kallsyms thread
 *   session_ks_join()         that thread joined: its ks_ results are the worker's
 *   session_ks_finish()       after CLOSELOG: the compact table, or the full one kept
 *   session_ks_state_name()   enum session_ks_state for status
 *
 * IMPLEMENTATION NOTES
 *   Kernel symbols (docs/protocol.md, start's "kallsyms"): main only probes
 *   that /proc/kallsyms shows addresses; a short-lived thread of the session
 *   reads it and writes the full table (60 ms for 120k symbols here, seconds
 *   under valgrind: neither the main loop nor the worker may wait for it, since
 *   the worker must open a new process's images while the process lives, and the
 *   fd may be a pipe).  The worker adds the kernel PCs of every CALLCHAIN it
 *   writes to its PC set (the leading PCs >= DAEMON_KERNEL_PC_MIN: kernel frames come first),
 *   and after CLOSELOG rewrites the file in place to the compact table
 *   (daemon-kallsyms.c), unless the session failed, the set overflowed, or the
 *   fd is not a regular file it can rewrite: then the full table stays.  The
 *   join must not hang on a kallsyms reader that stopped reading: an fd that is
 *   not a regular file gets the table rendered into a memfd and copied out with
 *   poll(2) on it and on the stop eventfd (ks_copy_out()), waiting for a slow
 *   reader while the session runs but at most SESSION_DRAIN_IDLE_MS without
 *   progress once it is stopped (the kallsyms state is then "error").
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon-int.h"
#include "hwpmcd/common.h"

const char *session_ks_state_name(int ks_state)
{
	static const char *const names[SESSION_KS_STATE_MAX] = {
		[SESSION_KS_NONE] = "none", [SESSION_KS_FULL] = "full",
		[SESSION_KS_COMPACT] = "compact", [SESSION_KS_ERROR] = "error",
	};

	return (unsigned)ks_state < SESSION_KS_STATE_MAX ? names[ks_state] : "unknown";
}

/*
 * Copy @len bytes of @src (a memfd) to the kernel symbols fd, a pipe, socket or
 * device whose reader may be slow or stalled.  Waits as long as the session
 * runs, but once it is being stopped (stop_efd readable: the worker polls it and
 * never reads it) gives up after SESSION_DRAIN_IDLE_MS without progress, so that
 * session_ks_finish()'s join, and with it session__stop(), cannot hang.  Never sets
 * O_NONBLOCK on the client's fd: a pipe gets at most PIPE_BUF bytes per write
 * after POLLOUT, a socket send(MSG_DONTWAIT).  0, -ETIMEDOUT, or a write error.
 */
static int ks_copy_out(struct session *s, int src, size_t len, mode_t mode)
{
	static const size_t chunk_max = 65536;
	char *buf = malloc(chunk_max);
	size_t off = 0, have = 0, at = 0; /* buf[at, have) is read, not yet written */
	bool stopping = false;
	int64_t progress = util_mono_ms();
	int r = 0;

	if (!buf)
		return -ENOMEM;
	while (off < len) {
		struct pollfd pfd[2] = { { .fd = s->p.ks_fd, .events = POLLOUT },
					 { .fd = s->stop_efd, .events = POLLIN } };
		int64_t wait = -1;
		size_t want;
		ssize_t n;
		int k;

		if (at == have) {
			n = pread(src, buf, len - off < chunk_max ? len - off : chunk_max, (off_t)off);
			if (n <= 0) {
				r = n < 0 ? -errno : -EIO;
				break;
			}
			at = 0;
			have = (size_t)n;
		}
		if (stopping) {
			wait = progress + SESSION_DRAIN_IDLE_MS - util_mono_ms();
			if (wait <= 0) {
				r = -ETIMEDOUT;
				break;
			}
		}
		k = poll(pfd, 2, (int)wait);
		if (k < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
		if (k <= 0)
			continue;
		if (pfd[1].revents & POLLIN)
			stopping = true;
		if (!(pfd[0].revents & (POLLOUT | POLLERR | POLLHUP)))
			continue;
		want = have - at;
		if (S_ISFIFO(mode) && want > PIPE_BUF)
			want = PIPE_BUF;
		n = S_ISSOCK(mode) ? send(s->p.ks_fd, buf + at, want, MSG_DONTWAIT | MSG_NOSIGNAL)
				   : write(s->p.ks_fd, buf + at, want);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
				continue;
			r = -errno;
			break;
		}
		if (n == 0) {
			r = -ENOSPC;
			break;
		}
		at += (size_t)n;
		off += (size_t)n;
		progress = util_mono_ms();
	}
	free(buf);
	return r;
}

/*
 * The full table into the kernel symbols fd.  A regular file is written
 * directly; anything else gets the table rendered into a memfd first and copied
 * out by ks_copy_out(), which a stalled reader cannot hold up past the stop.
 */
static int ks_write_full(struct session *s)
{
	struct stat st;
	int mfd, r;

	if (fstat(s->p.ks_fd, &st) < 0)
		return -errno;
	if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		return daemon_ksyms__write_all(s->ks, s->p.ks_fd);
	mfd = memfd_create("hwpmcd-kallsyms", MFD_CLOEXEC);
	if (mfd < 0)
		return -errno;
	r = daemon_ksyms__write_all(s->ks, mfd);
	if (r == 0) {
		off_t len = lseek(mfd, 0, SEEK_CUR);

		r = len < 0 ? -errno : ks_copy_out(s, mfd, (size_t)len, st.st_mode);
	}
	close(mfd);
	return r;
}

/* The full table, read and written on the kallsyms thread (session_ks_start()). */
static void ks_begin(struct session *s)
{
	int r;

	if (s->p.ks_fd < 0 && !s->prof)
		return;
	r = daemon_ksyms__read("/proc/kallsyms", &s->ks);
	if (r < 0) {
		s->ks_state = SESSION_KS_ERROR;
		snprintf(s->ks_note, sizeof(s->ks_note), "reading /proc/kallsyms: %s",
			 r == -ENODATA ? "no text symbol with an address" : strerror(-r));
		return;
	}
	s->ks_full_syms = s->ks->n;
	s->ks_full_bytes = s->ks->full_bytes;
	if (s->prof) {
		/* A profile keeps the table: each file gets its compact one as it closes. */
		s->ks_state = SESSION_KS_FULL;
		return;
	}
	/* Asked before the write moves the offset: can the end rewrite it in place? */
	s->ks_rewritable = daemon_ksyms_rewritable(s->p.ks_fd);
	r = ks_write_full(s);
	if (r < 0) {
		s->ks_state = SESSION_KS_ERROR;
		if (r == -ETIMEDOUT)
			snprintf(s->ks_note, sizeof(s->ks_note),
				 "writing the kernel symbols: their reader took nothing for %d s "
				 "at the end of the session; the table is incomplete",
				 SESSION_DRAIN_IDLE_MS / 1000);
		else
			snprintf(s->ks_note, sizeof(s->ks_note), "writing the kernel symbols: %s",
				 strerror(-r));
		daemon_ksyms__free(s->ks);
		s->ks = NULL;
		return;
	}
	s->ks_state = SESSION_KS_FULL;
	s->ks_syms = s->ks->n;
	s->ks_bytes = s->ks->full_bytes;
}

static void *ks_thread_main(void *arg)
{
	ks_begin(arg);
	return NULL;
}

/*
 * The worker's first act: start the thread that writes the full table (so that
 * even a killed session has one), and collect kernel PCs meanwhile.  If no thread
 * can be made, the worker writes the table itself.
 */
void session_ks_start(struct session *s)
{
	if (s->prof && s->prof->kallsyms) {
		if (daemon_pcset__init(&s->pcs, DAEMON_KSYMS_PCS_MAX) < 0)
			return;
	} else if (s->p.ks_fd < 0) {
		return;
	}
	s->ks_collect = true;
	s->ks_thread_started = pthread_create(&s->ks_thread, NULL, ks_thread_main, s) == 0;
	if (!s->ks_thread_started)
		ks_begin(s);
}

/*
 * After CLOSELOG (@r: the session's result): the compact table if the session
 * ended well, else the full one stays.  Sets the ks_ results for status.
 */
void session_ks_join(struct session *s)
{
	if (s->ks_thread_started) {
		/* Its ks_ results are ours to read once it is joined. */
		(void)pthread_join(s->ks_thread, NULL);
		s->ks_thread_started = false;
	}
}

/* The end of one kallsyms file (ks_fd, kept open): compact if @r is 0, then synced. */
static void ks_close_file(struct session *s, int r)
{
	char *buf = NULL;
	size_t len = 0, nsyms = 0, npcs;
	int k;

	if (s->ks_state != SESSION_KS_FULL)
		return;
	s->ks_pcs = s->pcs.n;
	s->ks_refused = s->pcs.refused;
	if (r < 0) {
		snprintf(s->ks_note, sizeof(s->ks_note), "the session failed: the full table was kept");
	} else if (s->pcs.full) {
		snprintf(s->ks_note, sizeof(s->ks_note), "more than %zu distinct kernel PCs (%" PRIu64
			 " not collected): the full table was kept", s->pcs.max, s->pcs.refused);
	} else if (!s->ks_rewritable) {
		snprintf(s->ks_note, sizeof(s->ks_note),
			 "not a regular file at offset 0: the full table was kept");
	} else {
		npcs = daemon_pcset__sort(&s->pcs);
		k = daemon_ksyms__compact(s->ks, s->pcs.slot, npcs, &buf, &len, &nsyms);
		if (k == 0)
			k = daemon_ksyms_rewrite(s->p.ks_fd, buf, len);
		if (k < 0) {
			/* A failed pwrite or ftruncate may have left anything: say so. */
			s->ks_state = SESSION_KS_ERROR;
			snprintf(s->ks_note, sizeof(s->ks_note), "rewriting the kernel symbols: %s",
				 strerror(-k));
		} else {
			s->ks_state = SESSION_KS_COMPACT;
			s->ks_syms = nsyms;
			s->ks_bytes = len;
		}
		free(buf);
	}
	if (fdatasync(s->p.ks_fd) < 0 && errno != EINVAL && errno != EROFS &&
	    s->ks_state != SESSION_KS_ERROR) {
		k = -errno;
		s->ks_state = SESSION_KS_ERROR;
		snprintf(s->ks_note, sizeof(s->ks_note), "syncing the kernel symbols: %s",
			 strerror(-k));
	}
}

void session_ks_finish(struct session *s, int r)
{
	s->ks_collect = false;
	session_ks_join(s);
	ks_close_file(s, r);
	/* The table and the set are done with: give their memory back now. */
	daemon_ksyms__free(s->ks);
	s->ks = NULL;
	daemon_pcset__exit(&s->pcs);
}
