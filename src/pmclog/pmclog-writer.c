/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pmclog-writer.c: buffered pmclog writer.
 *
 * PUBLIC INTERFACES
 *   plog_writer__new(), __free(), __append(), __append_<type>(), __flush(),
 *   __sync(), __error(), __stats()
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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwpmcd/common.h"
#include "hwpmcd/pmclog.h"

#define WRITER_DEFAULT_BUF 65536
#define WRITER_MAX_PMCIDS 4096

struct plog_writer {
	int fd; /* borrowed */
	uint8_t *buf;
	size_t cap;
	size_t used;
	int error; /* sticky I/O error */
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
	*ret_w = w;
	return 0;
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

int plog_writer__flush(struct plog_writer *w)
{
	size_t written = 0;
	int r;

	if (w->error)
		return w->error;
	if (w->used == 0)
		return 0;
	r = util_write_all(w->fd, w->buf, w->used, &written);
	w->stats.bytes_written += written;
	if (r < 0) {
		size_t whole = whole_records(w->buf, written);
		struct stat st;

		/*
		 * A torn record on disk would end the log early for every reader: cut
		 * a regular file back to the last whole record (pipes cannot be).
		 */
		if (whole != written && fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode)) {
			off_t cur = lseek(w->fd, 0, SEEK_CUR);

			if (cur >= (off_t)(written - whole) &&
			    ftruncate(w->fd, cur - (off_t)(written - whole)) == 0) {
				(void)lseek(w->fd, cur - (off_t)(written - whole), SEEK_SET);
				w->stats.bytes_written -= written - whole;
			}
		}
		w->error = r;
		w->used = 0;
		return r;
	}
	w->used = 0;
	return 0;
}

int plog_writer__sync(struct plog_writer *w)
{
	int r = plog_writer__flush(w);

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

	if (w->cap - w->used < PLOG_RECORD_MAX) {
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
