/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pmclog-writer.c: buffered pmclog writer.
 *
 * PUBLIC INTERFACES
 *   plog_writer__new(), __free(), __append(), __append_<type>(), __flush(),
 *   __sync(), __error(), __stats(), __set_nowait(), __retry(), __pending()
 *
 * IMPLEMENTATION NOTES
 *   Records are encoded straight into the buffer, which only ever holds whole
 *   records, and the buffer is handed to write(2) as a unit.  A process that dies
 *   between two writes therefore leaves a file that ends on a record boundary.
 *   A short write (a disk filling up in the middle of a buffer) could leave a torn
 *   record; for regular files the writer then truncates the file back to the last
 *   whole record it wrote, so the file on disk is always a readable prefix.
 *
 *   The first I/O error is sticky: the unwritten buffer is dropped and every later
 *   call returns the same error, so a caller sees ENOSPC or EPIPE once and for all
 *   and cannot produce a log with a hole in the middle.
 *
 *   The writer remembers which pmcids were announced (PMCALLOCATE/PMCALLOCATEDYN):
 *   pmcstat aborts on a CALLCHAIN whose pmcid it has not seen.  The lookup checks
 *   the last pmcid first, which is the common case on the sample path.
 *
 *   No-wait mode (__set_nowait, the daemon's sessions): an output that stops
 *   taking data (a pipe or socket nobody reads) must never block the writer's
 *   thread.  The buffer becomes a backlog, buf[head, used), that grows (doubling)
 *   while the output is full, and a write is only attempted when it cannot
 *   block, chosen by the kind of fd (fstat at __set_nowait):
 *   - regular files and block devices: a plain write(2) of everything (they are
 *     always writable; a slow disk is slow, not stalled);
 *   - pipes and FIFOs: poll(POLLOUT, 0), then a write of at most PIPE_BUF bytes
 *     (whole records where they fit).  POLLOUT on a pipe means a free pipe
 *     buffer, and a write of at most PIPE_BUF bytes then never waits (unless
 *     another writer of the same pipe fills it in between).  The fd's
 *     O_NONBLOCK flag is not touched: it lives in the open file description,
 *     which the client shares; reopening /proc/self/fd/N would give a pipe a
 *     description of its own but a regular file a second offset, and it fails
 *     for sockets;
 *   - sockets: send(MSG_DONTWAIT), which is non-blocking for this call only;
 *   - anything else (character devices): poll(POLLOUT, 0), then write(2).
 *   EAGAIN (a client that made its fd non-blocking) counts as "full".  Once an
 *   attempt finds the output full the writer stops trying until __retry or
 *   __flush, so a full pipe costs one poll per merge round, not one per record.
 *   While more than drop_bytes wait, CALLCHAIN records (samples) are dropped and
 *   counted (stats.dropped, return PLOG_WRITER_DROPPED); the first drop of a run
 *   appends a DROPNOTIFY (data was lost here, pmclog-format.md 5.2), which is
 *   queued like every other bookkeeping record: records later samples depend on
 *   (MAP_IN, PROC_CREATE, ...) are never dropped.  If the backlog reaches
 *   max_bytes even so, the writer fails with the sticky -ENOBUFS.  __sync drains
 *   the backlog, waiting in poll(2) while the output takes data, and gives up
 *   with the sticky -ETIMEDOUT after drain_idle_ms without progress or
 *   drain_max_ms in all.  A pipe or socket may then end inside a record (a torn
 *   tail for its reader); a regular file never does.  When the backlog is empty
 *   again the buffer shrinks back to its initial size.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hwpmcd/common.h"
#include "hwpmcd/pmclog.h"

#define WRITER_DEFAULT_BUF 65536
#define WRITER_MAX_PMCIDS 4096

/* How a no-wait writer writes to its fd (see IMPLEMENTATION NOTES). */
enum writer_fd_kind {
	WRITER_FD_FILE = 0, /* regular file or block device: always writable */
	WRITER_FD_PIPE,	    /* pipe or FIFO: poll, then at most PIPE_BUF bytes */
	WRITER_FD_SOCKET,   /* socket: send(MSG_DONTWAIT) */
	WRITER_FD_OTHER,    /* character device and the rest: poll, then write */
	WRITER_FD_KIND_MAX
};

struct plog_writer {
	int fd; /* borrowed */
	uint8_t *buf;
	size_t cap;
	size_t head; /* buf[head, used) is not written yet (head > 0 only in no-wait mode) */
	size_t torn; /* no-wait mode: bytes at head that finish a record already partly written */
	size_t used;
	size_t init_cap; /* the buffer size asked for at __new; no-wait mode writes from here */
	int error; /* sticky I/O error */
	/* no-wait mode (__set_nowait) */
	bool nowait;
	bool blocked;  /* the last attempt found the output full: wait for __retry/__flush */
	bool dropping; /* in a run of dropped samples: its DROPNOTIFY is queued */
	enum writer_fd_kind kind;
	size_t drop_bytes, max_bytes;
	int drain_idle_ms, drain_max_ms;
	bool started;
	bool closed;
	uint32_t *pmcids;
	size_t npmcids;
	size_t cap_pmcids;
	uint32_t last_pmcid;
	bool have_last;
	struct plog_writer_stats stats;
};

int plog_writer__new(int fd, size_t bufsize, struct plog_writer **ret_w)
{
	struct plog_writer *w;

	if (fd < 0)
		return -EINVAL;
	if (bufsize == 0)
		bufsize = WRITER_DEFAULT_BUF;
	if (bufsize < PLOG_RECORD_MAX)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->buf = malloc(bufsize);
	if (!w->buf) {
		free(w);
		return -ENOMEM;
	}
	w->fd = fd;
	w->cap = bufsize;
	w->init_cap = bufsize;
	*ret_w = w;
	return 0;
}

int plog_writer__set_nowait(struct plog_writer *w, size_t drop_bytes, size_t max_bytes,
			    int drain_idle_ms, int drain_max_ms)
{
	struct stat st;

	if (max_bytes < drop_bytes || max_bytes < w->init_cap || drain_idle_ms < 0 ||
	    drain_max_ms < drain_idle_ms)
		return -EINVAL;
	if (fstat(w->fd, &st) < 0)
		return -errno;
	if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		w->kind = WRITER_FD_FILE;
	else if (S_ISFIFO(st.st_mode))
		w->kind = WRITER_FD_PIPE;
	else if (S_ISSOCK(st.st_mode))
		w->kind = WRITER_FD_SOCKET;
	else
		w->kind = WRITER_FD_OTHER;
	w->nowait = true;
	w->drop_bytes = drop_bytes;
	w->max_bytes = max_bytes;
	w->drain_idle_ms = drain_idle_ms;
	w->drain_max_ms = drain_max_ms;
	return 0;
}

size_t plog_writer__abandon(struct plog_writer *w)
{
	size_t n = w->used - w->head;

	w->head = w->used = w->torn = 0;
	w->error = 0;
	w->closed = true;
	return n;
}

int plog_writer__restart(struct plog_writer *w, int fd)
{
	struct stat st;

	if (fd < 0)
		return -EINVAL;
	if (w->error)
		return w->error;
	if (w->used != w->head)
		return -EBUSY;
	if (w->nowait) {
		if (fstat(fd, &st) < 0)
			return -errno;
		w->kind = S_ISREG(st.st_mode) || S_ISBLK(st.st_mode) ? WRITER_FD_FILE
			  : S_ISFIFO(st.st_mode)		      ? WRITER_FD_PIPE
			  : S_ISSOCK(st.st_mode)		      ? WRITER_FD_SOCKET
								      : WRITER_FD_OTHER;
	}
	/* A new stream: INITIALIZE first again, and every pmcid announced anew. */
	w->fd = fd;
	w->head = w->used = w->torn = 0;
	w->blocked = w->dropping = false;
	w->started = w->closed = false;
	w->npmcids = 0;
	w->have_last = false;
	return 0;
}

size_t plog_writer__pending(const struct plog_writer *w)
{
	return w->used - w->head;
}

void plog_writer__free(struct plog_writer *w)
{
	if (!w)
		return;
	(void)plog_writer__flush(w);
	free(w->pmcids);
	free(w->buf);
	free(w);
}

int plog_writer__error(const struct plog_writer *w)
{
	return w->error;
}

const struct plog_writer_stats *plog_writer__stats(const struct plog_writer *w)
{
	return &w->stats;
}

/* Length of the whole records in buf[0, n): walks the headers we wrote. */
static size_t whole_records(const uint8_t *buf, size_t n)
{
	size_t pos = 0;

	while (n - pos >= PLOG_HEADER_SIZE) {
		uint32_t len = PLOG_HEADER_LENGTH(util_le32(buf + pos));

		if (len == 0 || len > n - pos)
			break;
		pos += len;
	}
	return pos;
}

/*
 * A write error of the whole-buffer path: cut a regular file back to the last
 * whole record (a torn record on disk would end the log early for every reader;
 * pipes cannot be cut), make the error sticky and drop the backlog.
 */
static int write_failed(struct plog_writer *w, const uint8_t *from, size_t written, int r)
{
	size_t whole = whole_records(from, written);
	struct stat st;

	if (whole != written && fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		off_t cur = lseek(w->fd, 0, SEEK_CUR);

		if (cur >= (off_t)(written - whole) &&
		    ftruncate(w->fd, cur - (off_t)(written - whole)) == 0) {
			(void)lseek(w->fd, cur - (off_t)(written - whole), SEEK_SET);
			w->stats.bytes_written -= written - whole;
		}
	}
	w->error = r;
	w->head = w->used = w->torn = 0;
	return r;
}

/* The backlog is written: start again at the front, and give back what a stall grew. */
static void backlog_empty(struct plog_writer *w)
{
	w->head = w->used = w->torn = 0;
	w->dropping = false;
	if (w->cap > w->init_cap) {
		uint8_t *n = realloc(w->buf, w->init_cap);

		if (n) {
			w->buf = n;
			w->cap = w->init_cap;
		}
	}
}

/*
 * How much of the backlog one pipe write takes: the rest of a torn record and the
 * whole records after it up to PIPE_BUF; PIPE_BUF when even one does not fit (a
 * record may be up to 4128 bytes).
 */
static size_t pipe_chunk(const struct plog_writer *w)
{
	size_t n = w->used - w->head, whole;

	if (n <= PIPE_BUF)
		return n;
	if (w->torn >= PIPE_BUF)
		return PIPE_BUF;
	whole = w->torn + whole_records(w->buf + w->head + w->torn, PIPE_BUF - w->torn);
	return whole ? whole : PIPE_BUF;
}

/* @n more bytes were written: move head, and note where the next record boundary is. */
static void advance(struct plog_writer *w, size_t n)
{
	size_t pos = w->head + w->torn, end = w->head + n;

	w->head = end;
	if (pos >= end) {
		w->torn = pos - end;
		return;
	}
	/* The records from the boundary on are whole, as we encoded them (never length 0). */
	while (pos < end) {
		uint32_t len = PLOG_HEADER_LENGTH(util_le32(w->buf + pos));

		if (len < PLOG_HEADER_SIZE) {
			pos = end; /* cannot happen; a chunk size is all that depends on it */
			break;
		}
		pos += len;
	}
	w->torn = pos - end;
}

/*
 * No-wait mode: write what the output takes now.  0 (the backlog may remain, with
 * w->blocked set) or the sticky error.
 */
static int write_some(struct plog_writer *w)
{
	w->blocked = false;
	while (w->used > w->head) {
		size_t len = w->used - w->head, written = 0;
		struct pollfd pfd = { .fd = w->fd, .events = POLLOUT };
		ssize_t n;
		int r;

		switch (w->kind) {
		case WRITER_FD_FILE:
			r = util_write_all(w->fd, w->buf + w->head, len, &written);
			w->stats.bytes_written += written;
			if (r < 0)
				return write_failed(w, w->buf + w->head, written, r);
			n = (ssize_t)written;
			break;
		case WRITER_FD_SOCKET:
			n = send(w->fd, w->buf + w->head, len, MSG_DONTWAIT | MSG_NOSIGNAL);
			break;
		default:
			r = poll(&pfd, 1, 0);
			if (r < 0 && errno == EINTR)
				continue;
			if (r == 0) {
				w->blocked = true;
				return 0;
			}
			/* POLLERR (no reader left) falls through to the write's EPIPE. */
			n = write(w->fd, w->buf + w->head, w->kind == WRITER_FD_PIPE ? pipe_chunk(w)
									      : len);
			break;
		}
		if (n < 0) {
			r = -errno;
			if (r == -EINTR)
				continue;
			if (r == -EAGAIN || r == -EWOULDBLOCK) {
				w->blocked = true;
				return 0;
			}
			w->error = r;
			w->head = w->used = w->torn = 0;
			return r;
		}
		if (n == 0) {
			w->error = -ENOSPC; /* as util_write_all: a device that takes nothing is full */
			w->head = w->used = w->torn = 0;
			return w->error;
		}
		if (w->kind != WRITER_FD_FILE)
			w->stats.bytes_written += (uint64_t)n;
		advance(w, (size_t)n);
	}
	backlog_empty(w);
	return 0;
}

int plog_writer__flush(struct plog_writer *w)
{
	size_t written = 0;
	int r;

	if (w->error)
		return w->error;
	if (w->nowait)
		return write_some(w);
	if (w->used == 0)
		return 0;
	r = util_write_all(w->fd, w->buf, w->used, &written);
	w->stats.bytes_written += written;
	if (r < 0)
		return write_failed(w, w->buf, written, r);
	w->used = 0;
	return 0;
}

int plog_writer__retry(struct plog_writer *w)
{
	if (w->error)
		return w->error;
	if (!w->nowait || !w->blocked)
		return 0;
	return write_some(w);
}

/*
 * No-wait mode's end: write the whole backlog, waiting in poll(2) while the output
 * takes data.  -ETIMEDOUT (sticky) after drain_idle_ms without progress or
 * drain_max_ms in all.
 */
static int drain(struct plog_writer *w)
{
	int64_t start = util_mono_ms(), progress = start;

	for (;;) {
		size_t before = w->used - w->head;
		struct pollfd pfd = { .fd = w->fd, .events = POLLOUT };
		int64_t now, wait;
		int r = write_some(w);

		if (r < 0 || w->used == w->head)
			return r;
		now = util_mono_ms();
		if (w->used - w->head < before)
			progress = now;
		wait = progress + w->drain_idle_ms - now;
		if (start + w->drain_max_ms - now < wait)
			wait = start + w->drain_max_ms - now;
		if (wait <= 0) {
			w->error = -ETIMEDOUT;
			w->head = w->used = w->torn = 0;
			return w->error;
		}
		/* A socket or pipe wakes us when it has room; EINTR just loops. */
		(void)poll(&pfd, 1, (int)wait);
	}
}

int plog_writer__sync(struct plog_writer *w)
{
	int r = w->error ? w->error : w->nowait ? drain(w) : plog_writer__flush(w);

	if (r < 0)
		return r;
	if (fdatasync(w->fd) < 0) {
		r = -errno;
		/* Pipes, sockets and terminals cannot be synced; that is not an error. */
		if (r == -EINVAL || r == -EROFS)
			return 0;
		w->error = r;
		return r;
	}
	return 0;
}

static bool pmcid_known(struct plog_writer *w, uint32_t pmcid)
{
	if (w->have_last && w->last_pmcid == pmcid)
		return true;
	for (size_t i = 0; i < w->npmcids; i++) {
		if (w->pmcids[i] == pmcid) {
			w->last_pmcid = pmcid;
			w->have_last = true;
			return true;
		}
	}
	return false;
}

static int pmcid_add(struct plog_writer *w, uint32_t pmcid)
{
	if (pmcid_known(w, pmcid))
		return 0;
	if (w->npmcids == w->cap_pmcids) {
		size_t ncap = w->cap_pmcids ? 2 * w->cap_pmcids : 16;
		uint32_t *n;

		if (ncap > WRITER_MAX_PMCIDS)
			return -E2BIG;
		n = realloc(w->pmcids, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		w->pmcids = n;
		w->cap_pmcids = ncap;
	}
	w->pmcids[w->npmcids++] = pmcid;
	return 0;
}

/*
 * No-wait mode: room for one more record at buf[used].  Writes first when a
 * buffer's worth waits and the output was not found full; else moves the backlog
 * to the front (when that frees at least as much as it copies) or doubles the
 * buffer, up to max_bytes of backlog.  0, or the sticky error (-ENOBUFS: the
 * output has not taken max_bytes of records that may not be dropped).
 */
static int nowait_room(struct plog_writer *w)
{
	size_t pending = w->used - w->head, ncap;
	uint8_t *n;
	int r;

	if (!w->blocked && pending > w->init_cap - PLOG_RECORD_MAX) {
		r = write_some(w);
		if (r < 0)
			return r;
		pending = w->used - w->head;
	}
	if (w->cap - w->used >= PLOG_RECORD_MAX)
		return 0;
	if (w->head > 0 && (w->head >= pending || w->cap >= w->max_bytes)) {
		/* head and torn are relative to each other: the move keeps them valid. */
		memmove(w->buf, w->buf + w->head, pending);
		w->head = 0;
		w->used = pending;
		if (w->cap - w->used >= PLOG_RECORD_MAX)
			return 0;
	}
	if (pending >= w->max_bytes) {
		w->error = -ENOBUFS;
		w->head = w->used = w->torn = 0;
		return w->error;
	}
	ncap = w->cap * 2 < w->max_bytes + PLOG_RECORD_MAX ? w->cap * 2
							    : w->max_bytes + PLOG_RECORD_MAX;
	n = realloc(w->buf, ncap);
	if (!n)
		return -ENOMEM; /* not sticky: nothing was lost, a later call may succeed */
	w->buf = n;
	w->cap = ncap;
	return 0;
}

/*
 * No-wait mode, backlog over drop_bytes: count the sample instead of queueing it;
 * the first of a run queues a DROPNOTIFY at its time stamp.  PLOG_WRITER_DROPPED.
 */
static int drop_sample(struct plog_writer *w, const struct plog_record *rec)
{
	struct plog_record dn = { .type = PLOG_TYPE_DROPNOTIFY, .tsc = rec->tsc };
	int len;

	w->stats.dropped++;
	if (w->dropping)
		return PLOG_WRITER_DROPPED;
	/* nowait_room() left room for one record of any size. */
	len = plog_encode(&dn, w->buf + w->used);
	if (len > 0) {
		w->used += (size_t)len;
		w->stats.records[PLOG_TYPE_DROPNOTIFY]++;
		w->stats.bytes += (uint64_t)len;
		w->dropping = true;
	}
	return PLOG_WRITER_DROPPED;
}

int plog_writer__append(struct plog_writer *w, const struct plog_record *rec)
{
	uint32_t pmcid = PLOG_PMCID_INVALID;
	int len, r;

	if (w->error)
		return w->error;
	if (w->closed) {
		w->stats.refused++;
		return -ESHUTDOWN;
	}
	if (!w->started && rec->type != PLOG_TYPE_INITIALIZE)
		goto refuse_inval;
	if (rec->type == PLOG_TYPE_CALLCHAIN && !pmcid_known(w, rec->u.callchain.pmcid)) {
		w->stats.refused++;
		return -ENOENT;
	}
	if (rec->type == PLOG_TYPE_PMCALLOCATE)
		pmcid = rec->u.pmcallocate.pmcid;
	else if (rec->type == PLOG_TYPE_PMCALLOCATEDYN)
		pmcid = rec->u.pmcallocatedyn.pmcid;

	if (w->nowait) {
		r = nowait_room(w);
		if (r < 0)
			return r;
		if (rec->type == PLOG_TYPE_CALLCHAIN && w->used - w->head >= w->drop_bytes)
			return drop_sample(w, rec);
	} else if (w->cap - w->used < PLOG_RECORD_MAX) {
		r = plog_writer__flush(w);
		if (r < 0)
			return r;
	}
	len = plog_encode(rec, w->buf + w->used);
	if (len < 0) {
		w->stats.refused++;
		return len;
	}
	if (pmcid != PLOG_PMCID_INVALID) {
		r = pmcid_add(w, pmcid);
		if (r < 0) {
			w->stats.refused++;
			return r; /* the encoded bytes are not committed */
		}
	}
	w->used += (size_t)len;
	w->started = true;
	if (rec->type == PLOG_TYPE_CALLCHAIN)
		w->dropping = false; /* a later drop starts a new run, with its own DROPNOTIFY */
	w->stats.records[rec->type]++;
	w->stats.bytes += (uint64_t)len;
	if (rec->type == PLOG_TYPE_CLOSELOG) {
		w->closed = true;
		return plog_writer__flush(w);
	}
	return 0;

refuse_inval:
	w->stats.refused++;
	return -EINVAL;
}

/* Copy a name into a fixed field, truncating as FreeBSD's kernel (strlcpy) does. */
static void set_name(char *dst, size_t field, const char *src)
{
	size_t n = src ? strnlen(src, field - 1) : 0;

	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

int plog_writer__append_initialize(struct plog_writer *w, uint64_t tsc, uint32_t cpu,
				   uint64_t tsc_freq, int64_t ts_sec, int64_t ts_nsec,
				   const char *cpuid)
{
	struct plog_record rec = { .type = PLOG_TYPE_INITIALIZE, .tsc = tsc };

	if (!cpuid || strnlen(cpuid, PLOG_CPUID_LEN) >= PLOG_CPUID_LEN) {
		w->stats.refused++;
		return cpuid ? -ENAMETOOLONG : -EINVAL;
	}
	rec.u.initialize.version = PLOG_VERSION;
	rec.u.initialize.cpu = cpu;
	rec.u.initialize.tsc_freq = tsc_freq;
	rec.u.initialize.ts_sec = ts_sec;
	rec.u.initialize.ts_nsec = ts_nsec;
	memcpy(rec.u.initialize.cpuid, cpuid, strlen(cpuid) + 1);
	return plog_writer__append(w, &rec);
}

int plog_writer__append_closelog(struct plog_writer *w, uint64_t tsc)
{
	struct plog_record rec = { .type = PLOG_TYPE_CLOSELOG, .tsc = tsc };

	return plog_writer__append(w, &rec);
}

int plog_writer__append_dropnotify(struct plog_writer *w, uint64_t tsc)
{
	struct plog_record rec = { .type = PLOG_TYPE_DROPNOTIFY, .tsc = tsc };

	return plog_writer__append(w, &rec);
}

int plog_writer__append_pmcallocate(struct plog_writer *w, uint64_t tsc, uint32_t pmcid,
				    uint32_t event, uint32_t flags, uint64_t rate)
{
	struct plog_record rec = { .type = PLOG_TYPE_PMCALLOCATE, .tsc = tsc };

	rec.u.pmcallocate.pmcid = pmcid;
	rec.u.pmcallocate.event = event;
	rec.u.pmcallocate.flags = flags;
	rec.u.pmcallocate.rate = rate;
	return plog_writer__append(w, &rec);
}

int plog_writer__append_pmcallocatedyn(struct plog_writer *w, uint64_t tsc, uint32_t pmcid,
				       uint32_t event, uint32_t flags, const char *evname)
{
	struct plog_record rec = { .type = PLOG_TYPE_PMCALLOCATEDYN, .tsc = tsc };

	/* Unlike comm names, an event name is never truncated: it would change its meaning. */
	if (!evname || strnlen(evname, PLOG_NAME_MAX) >= PLOG_NAME_MAX) {
		w->stats.refused++;
		return evname ? -ENAMETOOLONG : -EINVAL;
	}
	rec.u.pmcallocatedyn.pmcid = pmcid;
	rec.u.pmcallocatedyn.event = event;
	rec.u.pmcallocatedyn.flags = flags;
	memcpy(rec.u.pmcallocatedyn.evname, evname, strlen(evname) + 1);
	return plog_writer__append(w, &rec);
}

int plog_writer__append_pmcattach(struct plog_writer *w, uint64_t tsc, uint32_t pmcid,
				  int32_t pid, const char *path)
{
	struct plog_record rec = { .type = PLOG_TYPE_PMCATTACH, .tsc = tsc };

	rec.u.pmcattach.pmcid = pmcid;
	rec.u.pmcattach.pid = pid;
	rec.u.pmcattach.path = path;
	return plog_writer__append(w, &rec);
}

int plog_writer__append_pmcdetach(struct plog_writer *w, uint64_t tsc, uint32_t pmcid,
				  int32_t pid)
{
	struct plog_record rec = { .type = PLOG_TYPE_PMCDETACH, .tsc = tsc };

	rec.u.pmcdetach.pmcid = pmcid;
	rec.u.pmcdetach.pid = pid;
	return plog_writer__append(w, &rec);
}

int plog_writer__append_proccsw(struct plog_writer *w, uint64_t tsc, uint32_t pmcid, int32_t pid,
				int32_t tid, uint64_t value)
{
	struct plog_record rec = { .type = PLOG_TYPE_PROCCSW, .tsc = tsc };

	rec.u.proccsw.pmcid = pmcid;
	rec.u.proccsw.pid = pid;
	rec.u.proccsw.tid = tid;
	rec.u.proccsw.value = value;
	return plog_writer__append(w, &rec);
}

int plog_writer__append_procexec(struct plog_writer *w, uint64_t tsc, int32_t pid, uint32_t pmcid,
				 uint64_t base, uint64_t dyn, const char *path)
{
	struct plog_record rec = { .type = PLOG_TYPE_PROCEXEC, .tsc = tsc };

	rec.u.procexec.pid = pid;
	rec.u.procexec.pmcid = pmcid;
	rec.u.procexec.base = base;
	rec.u.procexec.dyn = dyn;
	rec.u.procexec.path = path;
	return plog_writer__append(w, &rec);
}

int plog_writer__append_procexit(struct plog_writer *w, uint64_t tsc, uint32_t pmcid, int32_t pid,
				 uint64_t value)
{
	struct plog_record rec = { .type = PLOG_TYPE_PROCEXIT, .tsc = tsc };

	rec.u.procexit.pmcid = pmcid;
	rec.u.procexit.pid = pid;
	rec.u.procexit.value = value;
	return plog_writer__append(w, &rec);
}

int plog_writer__append_procfork(struct plog_writer *w, uint64_t tsc, int32_t oldpid,
				 int32_t newpid)
{
	struct plog_record rec = { .type = PLOG_TYPE_PROCFORK, .tsc = tsc };

	rec.u.procfork.oldpid = oldpid;
	rec.u.procfork.newpid = newpid;
	return plog_writer__append(w, &rec);
}

int plog_writer__append_sysexit(struct plog_writer *w, uint64_t tsc, int32_t pid)
{
	struct plog_record rec = { .type = PLOG_TYPE_SYSEXIT, .tsc = tsc };

	rec.u.sysexit.pid = pid;
	return plog_writer__append(w, &rec);
}

int plog_writer__append_userdata(struct plog_writer *w, uint64_t tsc, uint32_t userdata)
{
	struct plog_record rec = { .type = PLOG_TYPE_USERDATA, .tsc = tsc };

	rec.u.userdata.userdata = userdata;
	return plog_writer__append(w, &rec);
}

int plog_writer__append_map_in(struct plog_writer *w, uint64_t tsc, int32_t pid, uint64_t start,
			       const char *path)
{
	struct plog_record rec = { .type = PLOG_TYPE_MAP_IN, .tsc = tsc };

	rec.u.map_in.pid = pid;
	rec.u.map_in.start = start;
	rec.u.map_in.path = path;
	return plog_writer__append(w, &rec);
}

int plog_writer__append_map_out(struct plog_writer *w, uint64_t tsc, int32_t pid, uint64_t start,
				uint64_t end)
{
	struct plog_record rec = { .type = PLOG_TYPE_MAP_OUT, .tsc = tsc };

	rec.u.map_out.pid = pid;
	rec.u.map_out.start = start;
	rec.u.map_out.end = end;
	return plog_writer__append(w, &rec);
}

int plog_writer__append_callchain(struct plog_writer *w, uint64_t tsc, int32_t pid, int32_t tid,
				  uint32_t pmcid, uint32_t cpuflags, const uint64_t *pc,
				  uint32_t npc)
{
	struct plog_record rec = { .type = PLOG_TYPE_CALLCHAIN, .tsc = tsc };

	rec.u.callchain.pid = pid;
	rec.u.callchain.tid = tid;
	rec.u.callchain.pmcid = pmcid;
	rec.u.callchain.cpuflags = cpuflags;
	rec.u.callchain.pc = pc;
	rec.u.callchain.npc = npc;
	return plog_writer__append(w, &rec);
}

int plog_writer__append_thr_create(struct plog_writer *w, uint64_t tsc, int32_t tid, int32_t pid,
				   uint32_t flags, const char *name)
{
	struct plog_record rec = { .type = PLOG_TYPE_THR_CREATE, .tsc = tsc };

	rec.u.thr_create.tid = tid;
	rec.u.thr_create.pid = pid;
	rec.u.thr_create.flags = flags;
	set_name(rec.u.thr_create.name, sizeof(rec.u.thr_create.name), name);
	return plog_writer__append(w, &rec);
}

int plog_writer__append_thr_exit(struct plog_writer *w, uint64_t tsc, int32_t tid)
{
	struct plog_record rec = { .type = PLOG_TYPE_THR_EXIT, .tsc = tsc };

	rec.u.thr_exit.tid = tid;
	return plog_writer__append(w, &rec);
}

int plog_writer__append_proc_create(struct plog_writer *w, uint64_t tsc, int32_t pid,
				    uint32_t flags, const char *name)
{
	struct plog_record rec = { .type = PLOG_TYPE_PROC_CREATE, .tsc = tsc };

	rec.u.proc_create.pid = pid;
	rec.u.proc_create.flags = flags;
	set_name(rec.u.proc_create.name, sizeof(rec.u.proc_create.name), name);
	return plog_writer__append(w, &rec);
}
