/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pmclog.h: writer and reader of FreeBSD pmclog streams.
 *
 * PUBLIC INTERFACES
 *   struct plog_record      one decoded record (native byte order, borrowed strings)
 *   plog_encode()           validate a record and encode it into bytes
 *   struct plog_writer      buffered writer, one append function per record type
 *   struct plog_reader      incremental, bounds-checked reader
 *   plog_type_name() etc.   names for printing
 *
 * IMPLEMENTATION NOTES
 *   The writer refuses, with a negative errno and without writing anything, every
 *   record that FreeBSD's libpmc would misread (docs/pmclog-format.md 8.4 and 10.1):
 *   records over 4128 bytes, paths of 1024 bytes or more, call chains with 0 or
 *   more than 512 PCs, the MULTIPART flag, MAP_OUT with start >= end, a CALLCHAIN
 *   naming a pmcid that no PMCALLOCATE(DYN) announced, and anything after CLOSELOG.
 *   Such refusals do not poison the writer.  An I/O error (ENOSPC, EPIPE, ...) does:
 *   it is kept and returned by every later call.  In no-wait mode
 *   (plog_writer__set_nowait) an output that takes nothing never blocks the
 *   caller: records wait in a bounded backlog, samples beyond a limit are dropped
 *   and counted (a DROPNOTIFY marks each run), and a stall that outlasts the
 *   limits becomes the sticky -ENOBUFS or -ETIMEDOUT.
 *
 *   The reader copies the bytes it is fed into its own buffer, so the caller may
 *   feed any chunking (down to single bytes) and reuse its buffer at once.  It checks
 *   every length against the type's fixed size and against the bytes present and
 *   never reads past what it was fed.  Every function here is single-threaded per
 *   object: one thread owns a writer or reader at a time.
 */
#ifndef HWPMCD_PMCLOG_H
#define HWPMCD_PMCLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hwpmcd/pmclog-format.h"

/*
 * One decoded record.  Field names follow FreeBSD's pl_* names without the prefix.
 * Strings (path) and the PC array are borrowed: from the caller for plog_encode()
 * and the writer, from the reader until its next __feed, __next or __free call.
 * Fixed-size names are copied and always NUL-terminated.
 */
struct plog_record {
	uint32_t type;	 /* enum plog_type */
	uint32_t length; /* bytes, header included (set by the reader and plog_encode) */
	uint64_t tsc;	 /* header time stamp */
	uint64_t offset; /* stream offset of the first byte (reader only) */
	const uint8_t *raw; /* the record's bytes (reader only), `length` of them */
	union {
		struct {
			uint32_t version;
			uint32_t cpu;
			uint64_t tsc_freq;
			int64_t ts_sec;
			int64_t ts_nsec;
			char cpuid[PLOG_CPUID_LEN];
		} initialize;
		struct {
			uint32_t pmcid;
			uint32_t event;
			uint32_t flags;
			uint64_t rate;
		} pmcallocate;
		struct {
			uint32_t pmcid;
			uint32_t event;
			uint32_t flags;
			/* reader: the name was taken from offset 40 (FreeBSD soft-PMC bug, 5.4) */
			bool name_at_40;
			char evname[PLOG_NAME_MAX];
		} pmcallocatedyn;
		struct {
			uint32_t pmcid;
			int32_t pid;
			const char *path;
		} pmcattach;
		struct {
			uint32_t pmcid;
			int32_t pid;
		} pmcdetach;
		struct {
			uint32_t pmcid;
			int32_t pid;
			int32_t tid;
			uint64_t value;
		} proccsw;
		struct {
			int32_t pid;
			uint32_t pmcid;
			uint64_t base;
			uint64_t dyn;
			const char *path;
		} procexec;
		struct {
			uint32_t pmcid;
			int32_t pid;
			uint64_t value;
		} procexit;
		struct {
			int32_t oldpid;
			int32_t newpid;
		} procfork;
		struct {
			int32_t pid;
		} sysexit;
		struct {
			uint32_t userdata;
		} userdata;
		struct {
			int32_t pid;
			uint64_t start;
			const char *path;
		} map_in;
		struct {
			int32_t pid;
			uint64_t start;
			uint64_t end;
		} map_out;
		struct {
			int32_t pid;
			int32_t tid;
			uint32_t pmcid;
			uint32_t cpuflags;
			uint32_t npc;
			const uint64_t *pc;
		} callchain;
		struct {
			int32_t tid;
			int32_t pid;
			uint32_t flags;
			char name[PLOG_MAXCOMLEN + 1];
		} thr_create;
		struct {
			int32_t tid;
		} thr_exit;
		struct {
			int32_t pid;
			uint32_t flags;
			char name[PLOG_MAXCOMLEN + 1];
		} proc_create;
	} u;
};

/*
 * plog_encode: check @rec against every rule of the format and encode it into
 * @buf (at least PLOG_RECORD_MAX bytes).  Returns the record length (> 0), or
 * -EINVAL (bad type or field: MULTIPART, start >= end, 0 PCs, names with '/' or
 * blanks in PMCALLOCATEDYN, PMCID_INVALID), -ENAMETOOLONG (path >= 1024 bytes,
 * name longer than its field), -E2BIG (more than 512 PCs).  Pure function.
 */
int plog_encode(const struct plog_record *rec, uint8_t *buf);

/* Writer ---------------------------------------------------------------------- */

struct plog_writer;

struct plog_writer_stats {
	uint64_t records[PLOG_TYPE_MAX]; /* appended, by type */
	uint64_t bytes;			 /* appended (buffered or written) */
	uint64_t bytes_written;		 /* handed to write(2) successfully */
	uint64_t refused;		 /* records refused by validation */
	uint64_t dropped;		 /* no-wait mode: samples dropped, the backlog was full */
};

/* plog_writer__append's result for a sample dropped in no-wait mode (not an error). */
#define PLOG_WRITER_DROPPED 1

/*
 * plog_writer__new: a writer on @fd, which stays the caller's (never closed here).
 * Without __set_nowait every write waits until the output took it all.  @bufsize is the buffer (0: 64 KiB; at least
 * PLOG_RECORD_MAX).  Returns 0 or -ENOMEM / -EINVAL.  The caller owns *ret_w and
 * frees it with plog_writer__free().
 */
int plog_writer__new(int fd, size_t bufsize, struct plog_writer **ret_w);

/*
 * plog_writer__set_nowait: never wait for an output that stops taking data (a
 * pipe or socket nobody reads; O_NONBLOCK is not needed and not set).  Records
 * queue in a backlog; while more than @drop_bytes wait, CALLCHAIN records are
 * dropped (stats.dropped, __append returns PLOG_WRITER_DROPPED) and the first of
 * each run of drops queues a DROPNOTIFY; every other record is kept, and a
 * backlog of @max_bytes fails the writer with the sticky -ENOBUFS.  __sync then
 * waits for the output at most @drain_idle_ms without progress and @drain_max_ms
 * in all (else the sticky -ETIMEDOUT).  Regular files are written as without it.
 * Call before the first record.  0, -EINVAL (max_bytes < drop_bytes or below the
 * buffer size, drain_max_ms < drain_idle_ms), or fstat(2)'s error.
 */
int plog_writer__set_nowait(struct plog_writer *w, size_t drop_bytes, size_t max_bytes,
			    int drain_idle_ms, int drain_max_ms);

/*
 * plog_writer__retry: no-wait mode: if an earlier write found the output full,
 * write what it takes now, without waiting (call it now and then, e.g. once per
 * loop of the owning thread).  0 or the sticky error; a no-op otherwise.
 */
int plog_writer__retry(struct plog_writer *w);

/*
 * plog_writer__abandon: give the current stream up (its output failed, e.g. a
 * full disk): what is pending is discarded and the sticky error cleared, so that
 * __restart can begin a new stream.  Returns the bytes discarded.
 */
size_t plog_writer__abandon(struct plog_writer *w);

/*
 * plog_writer__restart: begin a new stream on @fd (the old fd stays the caller's):
 * the next record must be INITIALIZE again and pmcids are announced anew; the
 * statistics go on counting.  Only with nothing pending (after CLOSELOG and
 * __sync): 0, -EBUSY (bytes still pending), the sticky error, or fstat(2)'s.
 */
int plog_writer__restart(struct plog_writer *w, int fd);

/* plog_writer__pending: bytes appended but not yet written (the no-wait backlog). */
size_t plog_writer__pending(const struct plog_writer *w);

/* plog_writer__free: flush (errors ignored; call __flush first to see them), free. NULL ok. */
void plog_writer__free(struct plog_writer *w);

/*
 * plog_writer__append: validate, encode and buffer one record (rec->length is
 * ignored).  The first record must be INITIALIZE (else -EINVAL); nothing may follow
 * CLOSELOG (-ESHUTDOWN); a CALLCHAIN's pmcid must have been announced (-ENOENT).
 * Returns 0, PLOG_WRITER_DROPPED (no-wait mode: a CALLCHAIN dropped, not checked
 * further), a validation error as plog_encode() (the writer stays usable), -ENOMEM
 * (no-wait mode: the backlog could not grow; nothing lost), or the sticky first I/O
 * error.  Writing CLOSELOG flushes the buffer.
 */
int plog_writer__append(struct plog_writer *w, const struct plog_record *rec);

/* One append function per record type; each builds a record and calls __append. */
int plog_writer__append_initialize(struct plog_writer *w, uint64_t tsc, uint32_t cpu,
				   uint64_t tsc_freq, int64_t ts_sec, int64_t ts_nsec,
				   const char *cpuid);
int plog_writer__append_closelog(struct plog_writer *w, uint64_t tsc);
int plog_writer__append_dropnotify(struct plog_writer *w, uint64_t tsc);
int plog_writer__append_pmcallocate(struct plog_writer *w, uint64_t tsc, uint32_t pmcid,
				    uint32_t event, uint32_t flags, uint64_t rate);
int plog_writer__append_pmcallocatedyn(struct plog_writer *w, uint64_t tsc, uint32_t pmcid,
				       uint32_t event, uint32_t flags, const char *evname);
int plog_writer__append_pmcattach(struct plog_writer *w, uint64_t tsc, uint32_t pmcid,
				  int32_t pid, const char *path);
int plog_writer__append_pmcdetach(struct plog_writer *w, uint64_t tsc, uint32_t pmcid,
				  int32_t pid);
int plog_writer__append_proccsw(struct plog_writer *w, uint64_t tsc, uint32_t pmcid, int32_t pid,
				int32_t tid, uint64_t value);
int plog_writer__append_procexec(struct plog_writer *w, uint64_t tsc, int32_t pid, uint32_t pmcid,
				 uint64_t base, uint64_t dyn, const char *path);
int plog_writer__append_procexit(struct plog_writer *w, uint64_t tsc, uint32_t pmcid, int32_t pid,
				 uint64_t value);
int plog_writer__append_procfork(struct plog_writer *w, uint64_t tsc, int32_t oldpid,
				 int32_t newpid);
int plog_writer__append_sysexit(struct plog_writer *w, uint64_t tsc, int32_t pid);
int plog_writer__append_userdata(struct plog_writer *w, uint64_t tsc, uint32_t userdata);
int plog_writer__append_map_in(struct plog_writer *w, uint64_t tsc, int32_t pid, uint64_t start,
			       const char *path);
int plog_writer__append_map_out(struct plog_writer *w, uint64_t tsc, int32_t pid, uint64_t start,
				uint64_t end);
int plog_writer__append_callchain(struct plog_writer *w, uint64_t tsc, int32_t pid, int32_t tid,
				  uint32_t pmcid, uint32_t cpuflags, const uint64_t *pc,
				  uint32_t npc);
int plog_writer__append_thr_create(struct plog_writer *w, uint64_t tsc, int32_t tid, int32_t pid,
				   uint32_t flags, const char *name);
int plog_writer__append_thr_exit(struct plog_writer *w, uint64_t tsc, int32_t tid);
int plog_writer__append_proc_create(struct plog_writer *w, uint64_t tsc, int32_t pid,
				    uint32_t flags, const char *name);

/*
 * plog_writer__flush: write the buffered records with write(2) (EINTR retried);
 * in no-wait mode only what the output takes now (the rest stays queued).
 * Returns 0 or the sticky first I/O error.  If a write stops inside a record of
 * a regular file (a short write on a full disk), the file is truncated back to
 * the last whole record, so what is on disk always reads as a valid prefix.
 */
int plog_writer__flush(struct plog_writer *w);

/*
 * plog_writer__sync: __flush (no-wait mode: the whole backlog, waiting as
 * __set_nowait says, else -ETIMEDOUT), then fdatasync(2) (EINVAL/EROFS from pipes
 * and the like are fine).
 */
int plog_writer__sync(struct plog_writer *w);

/* plog_writer__error: the sticky I/O error (negative errno), or 0. */
int plog_writer__error(const struct plog_writer *w);

/* plog_writer__stats: borrowed, valid while @w lives. */
const struct plog_writer_stats *plog_writer__stats(const struct plog_writer *w);

/* Reader ---------------------------------------------------------------------- */

struct plog_reader;

/* What is wrong with a malformed log; the enum plog_error_kind of plog_reader__error(). */
enum plog_error_kind {
	PLOG_ERR_NONE = 0,
	PLOG_ERR_BAD_MAGIC,    /* bits 31..24 of a header are not 0xEE */
	PLOG_ERR_BAD_LENGTH,   /* length < 16, > 4128, not a multiple of 4, short for its type,
				  or a CALLCHAIN PC area that is not 1..512 whole PCs */
	PLOG_ERR_UNKNOWN_TYPE, /* a type number that the current format does not define */
	PLOG_ERR_BAD_STRING,   /* a path or name without NUL in its field, or a path over 1024 */
	PLOG_ERR_OLD_FORMAT,   /* the stream starts like a V2-era (12-byte header) log */
	PLOG_ERR_MAX
};

struct plog_error {
	enum plog_error_kind kind;
	uint64_t offset; /* stream offset of the offending record */
	char message[192];
};

/* Where the stream stands after plog_reader__next() returned 0. */
enum plog_status {
	PLOG_STATUS_NEED_DATA = 0, /* feed more bytes, or call __finish at end of input */
	PLOG_STATUS_COMPLETE,	   /* CLOSELOG seen: the log is complete */
	PLOG_STATUS_NO_CLOSELOG,   /* input ended on a record boundary without CLOSELOG */
	PLOG_STATUS_TORN,	   /* input ended inside a record (a torn final record) */
	PLOG_STATUS_ERROR,	   /* malformed: see plog_reader__error() */
	PLOG_STATUS_MAX
};

/* Reader flags for plog_reader__new(). */
#define PLOG_READER_SKIP_UNKNOWN 0x1u /* skip unknown types by their length (counted) */

/* plog_reader__new: a reader; the caller owns it.  Returns 0 or -ENOMEM / -EINVAL. */
int plog_reader__new(unsigned flags, struct plog_reader **ret_r);

/* plog_reader__free: free; NULL ok.  Invalidates every borrowed record pointer. */
void plog_reader__free(struct plog_reader *r);

/*
 * plog_reader__feed: append @len bytes (copied).  Invalidates borrowed pointers of
 * the last record.  Bytes after CLOSELOG or after an error are counted, not kept.
 * Returns 0, -ENOMEM (nothing was taken: feed the same bytes again), or -EINVAL
 * after __finish.
 */
int plog_reader__feed(struct plog_reader *r, const void *data, size_t len);

/*
 * plog_reader__space, __commit: __feed() without the copy.  __space makes room
 * for @len bytes at the end of the reader's buffer and returns it in *ret_space
 * (valid until the next call on the reader; it invalidates borrowed pointers as
 * __feed does); the caller writes up to @len bytes there (a read(2)) and
 * __commit()s how many it wrote.  Returns 0, -ENOMEM, or -EINVAL (after __finish,
 * @len 0, or a commit beyond the space).
 */
int plog_reader__space(struct plog_reader *r, size_t len, void **ret_space);
int plog_reader__commit(struct plog_reader *r, size_t len);

/* plog_reader__finish: no more input will come; the status becomes final. */
void plog_reader__finish(struct plog_reader *r);

/*
 * plog_reader__next: decode the next record into *ret_rec.  Returns 1 with a
 * record, 0 when none is available (see plog_reader__status()), or -EPROTO for a
 * malformed log (the reader stays in error; see plog_reader__error()).  *ret_rec
 * is unspecified unless 1 is returned.
 */
int plog_reader__next(struct plog_reader *r, struct plog_record *ret_rec);

enum plog_status plog_reader__status(const struct plog_reader *r);

/* plog_reader__error: the error of a malformed log (borrowed), or NULL. */
const struct plog_error *plog_reader__error(const struct plog_reader *r);

/* Stream offset of the next undecoded byte (the torn record's start once TORN). */
uint64_t plog_reader__offset(const struct plog_reader *r);

/* Bytes fed but not decoded: the torn tail, or bytes after CLOSELOG. */
uint64_t plog_reader__trailing(const struct plog_reader *r);

/* Records skipped under PLOG_READER_SKIP_UNKNOWN. */
uint64_t plog_reader__skipped(const struct plog_reader *r);

/* Names ----------------------------------------------------------------------- */

/* pmcstat -R's name of a record type ("initlog", "map-in", ...), or NULL if unknown. */
const char *plog_type_name(uint32_t type);

/* FreeBSD's symbolic name (CALLCHAIN, MAP_IN, ...), or NULL if unknown. */
const char *plog_type_symbol(uint32_t type);

/* The fixed (minimum) size of a known type, 0 if unknown. */
uint32_t plog_type_min_length(uint32_t type);

/* enum pmc_cputype name ("GENERIC", "INTEL_SKYLAKE", ...), or NULL if unknown. */
const char *plog_cpu_name(uint32_t cpu);

/* Name of a status or error kind, for messages. */
const char *plog_status_name(enum plog_status status);
const char *plog_error_kind_name(enum plog_error_kind kind);

#endif /* HWPMCD_PMCLOG_H */
