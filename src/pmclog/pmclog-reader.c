/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pmclog-reader.c: incremental, bounds-checked pmclog reader.
 *
 * PUBLIC INTERFACES
 *   plog_reader__new(), __free(), __feed(), __finish(), __next(), __status(),
 *   __error(), __offset(), __trailing(), __skipped()
 *
 * IMPLEMENTATION NOTES
 *   The reader is a small state machine over an owned byte buffer [start, end):
 *   __feed appends (compacting or growing first), __next decodes whole records
 *   from the front.  The header word is checked as soon as its 4 bytes are
 *   present (magic, length bounds, type, fixed size, CALLCHAIN PC area, path
 *   field limit), before waiting for the rest of the record, so a corrupt log is
 *   reported as corrupt even when it also ends early.  The body is decoded only
 *   when all `length` bytes are present; every string must have its NUL inside
 *   its field.  Nothing is ever read at or beyond `end`.
 *
 *   Differences from FreeBSD's libpmc, all on the safe side (pmclog-format.md
 *   8.4): lengths under 16, over 4128 or not a multiple of 4 are errors; so are
 *   records shorter than their type's fixed size, CALLCHAIN PC areas that are not
 *   whole PCs, and strings without NUL.  CLOSELOG is returned as a record (the
 *   caller may print it) and ends the stream; later bytes are only counted.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwpmcd/common.h"
#include "hwpmcd/pmclog.h"
#include "pmclog-int.h"

#define READER_MIN_BUF 65536

struct plog_reader {
	unsigned flags;
	uint8_t *buf;
	size_t cap;
	size_t start;	/* first undecoded byte */
	size_t end;	/* one past the last byte fed */
	uint64_t base;	/* stream offset of buf[0] */
	uint64_t trailing; /* bytes fed after CLOSELOG or after an error */
	uint64_t skipped;
	uint64_t nrecords;
	bool finished;
	bool closed;	/* CLOSELOG seen */
	enum plog_status status;
	struct plog_error error;
	/* per type (0: an unknown one), copied from pmclog-encode.c's table at __new() */
	uint32_t min_len[PLOG_TYPE_MAX], str_at[PLOG_TYPE_MAX];
	uint64_t pcs[PLOG_CALLCHAIN_DEPTH_MAX];
};

int plog_reader__new(unsigned flags, struct plog_reader **ret_r)
{
	struct plog_reader *r;

	if (flags & ~PLOG_READER_SKIP_UNKNOWN)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->flags = flags;
	r->status = PLOG_STATUS_NEED_DATA;
	/* Looked up per record (three calls into pmclog-encode.c were a fifth of a read). */
	for (uint32_t t = 0; t < PLOG_TYPE_MAX; t++) {
		r->min_len[t] = plog_type_symbol(t) ? plog_type_min_length(t) : 0;
		r->str_at[t] = plog_type_string_offset(t);
	}
	*ret_r = r;
	return 0;
}

void plog_reader__free(struct plog_reader *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r);
}

/* Room for @len more bytes after r->end: compact, then grow.  0 or -ENOMEM. */
static int reserve(struct plog_reader *r, size_t len)
{
	size_t live = r->end - r->start;

	if (r->start > 0 && r->cap - r->end < len) {
		/* Compact: move the undecoded bytes to the front. */
		memmove(r->buf, r->buf + r->start, live);
		r->base += r->start;
		r->start = 0;
		r->end = live;
	}
	if (r->cap - r->end < len) {
		size_t want = r->cap ? r->cap : READER_MIN_BUF;
		uint8_t *nb;

		while (want - r->end < len) {
			if (want > SIZE_MAX / 2)
				return -ENOMEM;
			want *= 2;
		}
		nb = realloc(r->buf, want);
		if (!nb)
			return -ENOMEM;
		r->buf = nb;
		r->cap = want;
	}
	return 0;
}

int plog_reader__feed(struct plog_reader *r, const void *data, size_t len)
{
	int e;

	if (r->finished)
		return -EINVAL;
	if (len == 0)
		return 0;
	if (r->closed || r->status == PLOG_STATUS_ERROR) {
		r->trailing += len;
		return 0;
	}
	e = reserve(r, len);
	if (e < 0)
		return e;
	memcpy(r->buf + r->end, data, len);
	r->end += len;
	return 0;
}

int plog_reader__space(struct plog_reader *r, size_t len, void **ret_space)
{
	int e;

	if (r->finished || len == 0 || !ret_space)
		return -EINVAL;
	e = reserve(r, len);
	if (e < 0)
		return e;
	*ret_space = r->buf + r->end;
	return 0;
}

int plog_reader__commit(struct plog_reader *r, size_t len)
{
	if (r->finished || len > r->cap - r->end)
		return -EINVAL;
	if (r->closed || r->status == PLOG_STATUS_ERROR)
		r->trailing += len; /* as __feed(): counted, not kept */
	else
		r->end += len;
	return 0;
}

void plog_reader__finish(struct plog_reader *r)
{
	r->finished = true;
}

enum plog_status plog_reader__status(const struct plog_reader *r)
{
	return r->status;
}

const struct plog_error *plog_reader__error(const struct plog_reader *r)
{
	return r->status == PLOG_STATUS_ERROR ? &r->error : NULL;
}

uint64_t plog_reader__offset(const struct plog_reader *r)
{
	return r->base + r->start;
}

uint64_t plog_reader__trailing(const struct plog_reader *r)
{
	if (r->closed || r->status == PLOG_STATUS_ERROR)
		return r->trailing + (r->end - r->start);
	if (r->status == PLOG_STATUS_TORN)
		return r->end - r->start;
	return 0;
}

uint64_t plog_reader__skipped(const struct plog_reader *r)
{
	return r->skipped;
}

__attribute__((format(printf, 3, 4))) static int fail(struct plog_reader *r,
						       enum plog_error_kind kind,
						       const char *fmt, ...)
{
	va_list ap;

	r->status = PLOG_STATUS_ERROR;
	r->error.kind = kind;
	r->error.offset = r->base + r->start;
	va_start(ap, fmt);
	vsnprintf(r->error.message, sizeof(r->error.message), fmt, ap);
	va_end(ap);
	return -EPROTO;
}

/* True if [p, p+n) holds a NUL. */
static bool has_nul(const uint8_t *p, size_t n)
{
	return memchr(p, '\0', n) != NULL;
}

/* A non-empty printable ASCII string with its NUL inside [p, p+n). */
static bool printable_string(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n && p[i]; i++)
		if (p[i] < 0x20 || p[i] > 0x7e)
			return false;
	return i > 0 && i < n;
}

static void copy_fixed(char *dst, const uint8_t *src, size_t field)
{
	/* The caller checked that a NUL lies inside the field. */
	memcpy(dst, src, field);
	dst[field - 1] = '\0';
}

/*
 * Check what the 4-byte header word alone tells.  Returns 0 if the record may be
 * decoded once complete, 1 if it is an unknown type to skip, or -EPROTO.
 */
static int check_header(struct plog_reader *r, uint32_t h)
{
	uint32_t magic = PLOG_HEADER_MAGIC(h), type = PLOG_HEADER_TYPE(h);
	uint32_t len = PLOG_HEADER_LENGTH(h), min, soff;

	if (magic != PLOG_MAGIC)
		return fail(r, PLOG_ERR_BAD_MAGIC,
			    "bad magic 0x%02x (expected 0xee): not a pmclog record", magic);
	/* `14 00 02 ee` first: a V2-era INITIALIZE (FreeBSD 11 and older). */
	if (r->nrecords == 0 && r->base + r->start == 0 && type == 2 && len == 20)
		return fail(r, PLOG_ERR_OLD_FORMAT,
			    "this looks like a FreeBSD 11 or older log (12-byte record headers), "
			    "which is not supported; only the FreeBSD 12+ format is");
	if (len < PLOG_HEADER_SIZE)
		return fail(r, PLOG_ERR_BAD_LENGTH,
			    "record length %u is shorter than the 16-byte header", len);
	if (len > PLOG_RECORD_MAX)
		return fail(r, PLOG_ERR_BAD_LENGTH,
			    "record length %u exceeds the format's maximum of %u", len,
			    PLOG_RECORD_MAX);
	if (len % 4)
		return fail(r, PLOG_ERR_BAD_LENGTH, "record length %u is not a multiple of 4",
			    len);
	min = type < PLOG_TYPE_MAX ? r->min_len[type] : 0;
	if (!min) {
		if (r->flags & PLOG_READER_SKIP_UNKNOWN)
			return 1;
		return fail(r, PLOG_ERR_UNKNOWN_TYPE, "unknown record type %u (length %u)", type,
			    len);
	}
	if (len < min)
		return fail(r, PLOG_ERR_BAD_LENGTH,
			    "%s record of %u bytes is shorter than its fixed size of %u",
			    plog_type_symbol(type), len, min);
	if (type == PLOG_TYPE_CALLCHAIN && (len - sizeof(struct plog_fmt_callchain)) % 8)
		return fail(r, PLOG_ERR_BAD_LENGTH,
			    "CALLCHAIN record of %u bytes does not hold a whole number of PCs",
			    len);
	soff = r->str_at[type];
	if (soff && len - soff > PLOG_PATH_MAX)
		return fail(r, PLOG_ERR_BAD_STRING,
			    "%s path field of %u bytes exceeds the %u-byte limit",
			    plog_type_symbol(type), len - soff, PLOG_PATH_MAX);
	return 0;
}

#define G32(s, f) util_le32(p + offsetof(struct s, f))
#define G64(s, f) util_le64(p + offsetof(struct s, f))
#define GI32(s, f) ((int32_t)util_le32(p + offsetof(struct s, f)))

static int decode_path(struct plog_reader *r, const uint8_t *p, uint32_t len, uint32_t type,
		       const char **ret_path)
{
	uint32_t soff = r->str_at[type];

	if (!has_nul(p + soff, len - soff))
		return fail(r, PLOG_ERR_BAD_STRING, "%s path is not NUL-terminated inside the record",
			    plog_type_symbol(type));
	*ret_path = (const char *)(p + soff);
	return 0;
}

static int decode_body(struct plog_reader *r, const uint8_t *p, uint32_t type, uint32_t len,
		       struct plog_record *rec)
{
	switch (type) {
	case PLOG_TYPE_CLOSELOG:
	case PLOG_TYPE_DROPNOTIFY:
		return 0;
	case PLOG_TYPE_INITIALIZE: {
		const uint8_t *cpuid = p + offsetof(struct plog_fmt_initialize, pl_cpuid);

		if (!has_nul(cpuid, PLOG_CPUID_LEN))
			return fail(r, PLOG_ERR_BAD_STRING,
				    "INITIALIZE cpuid is not NUL-terminated in its %u bytes",
				    PLOG_CPUID_LEN);
		rec->u.initialize.version = G32(plog_fmt_initialize, pl_version);
		rec->u.initialize.cpu = G32(plog_fmt_initialize, pl_cpu);
		rec->u.initialize.tsc_freq = G64(plog_fmt_initialize, pl_tsc_freq);
		rec->u.initialize.ts_sec = (int64_t)G64(plog_fmt_initialize, pl_ts_sec);
		rec->u.initialize.ts_nsec = (int64_t)G64(plog_fmt_initialize, pl_ts_nsec);
		copy_fixed(rec->u.initialize.cpuid, cpuid, PLOG_CPUID_LEN);
		return 0;
	}
	case PLOG_TYPE_PMCALLOCATE:
		rec->u.pmcallocate.pmcid = G32(plog_fmt_pmcallocate, pl_pmcid);
		rec->u.pmcallocate.event = G32(plog_fmt_pmcallocate, pl_event);
		rec->u.pmcallocate.flags = G32(plog_fmt_pmcallocate, pl_flags);
		rec->u.pmcallocate.rate = G64(plog_fmt_pmcallocate, pl_rate);
		return 0;
	case PLOG_TYPE_PMCALLOCATEDYN: {
		const uint8_t *n32 = p + offsetof(struct plog_fmt_pmcallocatedyn, pl_evname);
		const uint8_t *n40 = n32 + 8;

		rec->u.pmcallocatedyn.pmcid = G32(plog_fmt_pmcallocatedyn, pl_pmcid);
		rec->u.pmcallocatedyn.event = G32(plog_fmt_pmcallocatedyn, pl_event);
		rec->u.pmcallocatedyn.flags = G32(plog_fmt_pmcallocatedyn, pl_flags);
		rec->u.pmcallocatedyn.name_at_40 = false;
		/*
		 * FreeBSD's kernel writes soft-PMC names at offset 40 after a 64-bit
		 * rate (pmclog-format.md 5.4).  Take the name from there when offset
		 * 32 holds no printable name but offset 40 does, inside the record.
		 */
		if (!printable_string(n32, PLOG_NAME_MAX) &&
		    printable_string(n40, len - offsetof(struct plog_fmt_pmcallocatedyn, pl_evname) - 8)) {
			size_t n = strnlen((const char *)n40, PLOG_NAME_MAX - 1);

			memcpy(rec->u.pmcallocatedyn.evname, n40, n);
			rec->u.pmcallocatedyn.evname[n] = '\0';
			rec->u.pmcallocatedyn.name_at_40 = true;
			return 0;
		}
		if (!has_nul(n32, PLOG_NAME_MAX))
			return fail(r, PLOG_ERR_BAD_STRING,
				    "PMCALLOCATEDYN event name is not NUL-terminated in its %u bytes",
				    PLOG_NAME_MAX);
		copy_fixed(rec->u.pmcallocatedyn.evname, n32, PLOG_NAME_MAX);
		return 0;
	}
	case PLOG_TYPE_PMCATTACH:
		rec->u.pmcattach.pmcid = G32(plog_fmt_pmcattach, pl_pmcid);
		rec->u.pmcattach.pid = GI32(plog_fmt_pmcattach, pl_pid);
		return decode_path(r, p, len, type, &rec->u.pmcattach.path);
	case PLOG_TYPE_PMCDETACH:
		rec->u.pmcdetach.pmcid = G32(plog_fmt_pmcdetach, pl_pmcid);
		rec->u.pmcdetach.pid = GI32(plog_fmt_pmcdetach, pl_pid);
		return 0;
	case PLOG_TYPE_PROCCSW:
		rec->u.proccsw.value = G64(plog_fmt_proccsw, pl_value);
		rec->u.proccsw.pmcid = G32(plog_fmt_proccsw, pl_pmcid);
		rec->u.proccsw.pid = GI32(plog_fmt_proccsw, pl_pid);
		rec->u.proccsw.tid = GI32(plog_fmt_proccsw, pl_tid);
		return 0;
	case PLOG_TYPE_PROCEXEC:
		rec->u.procexec.pid = GI32(plog_fmt_procexec, pl_pid);
		rec->u.procexec.pmcid = G32(plog_fmt_procexec, pl_pmcid);
		rec->u.procexec.base = G64(plog_fmt_procexec, pl_base);
		rec->u.procexec.dyn = G64(plog_fmt_procexec, pl_dyn);
		return decode_path(r, p, len, type, &rec->u.procexec.path);
	case PLOG_TYPE_PROCEXIT:
		rec->u.procexit.pmcid = G32(plog_fmt_procexit, pl_pmcid);
		rec->u.procexit.pid = GI32(plog_fmt_procexit, pl_pid);
		rec->u.procexit.value = G64(plog_fmt_procexit, pl_value);
		return 0;
	case PLOG_TYPE_PROCFORK:
		rec->u.procfork.oldpid = GI32(plog_fmt_procfork, pl_oldpid);
		rec->u.procfork.newpid = GI32(plog_fmt_procfork, pl_newpid);
		return 0;
	case PLOG_TYPE_SYSEXIT:
		rec->u.sysexit.pid = GI32(plog_fmt_sysexit, pl_pid);
		return 0;
	case PLOG_TYPE_USERDATA:
		rec->u.userdata.userdata = G32(plog_fmt_userdata, pl_userdata);
		return 0;
	case PLOG_TYPE_MAP_IN:
		rec->u.map_in.pid = GI32(plog_fmt_map_in, pl_pid);
		rec->u.map_in.start = G64(plog_fmt_map_in, pl_start);
		return decode_path(r, p, len, type, &rec->u.map_in.path);
	case PLOG_TYPE_MAP_OUT:
		rec->u.map_out.pid = GI32(plog_fmt_map_out, pl_pid);
		rec->u.map_out.start = G64(plog_fmt_map_out, pl_start);
		rec->u.map_out.end = G64(plog_fmt_map_out, pl_end);
		return 0;
	case PLOG_TYPE_CALLCHAIN: {
		uint32_t npc = (len - (uint32_t)sizeof(struct plog_fmt_callchain)) / 8;
		const uint8_t *pc = p + offsetof(struct plog_fmt_callchain, pl_pc);

		/* check_header() bounded len, so 1 <= npc <= 512. */
		rec->u.callchain.pid = GI32(plog_fmt_callchain, pl_pid);
		rec->u.callchain.tid = GI32(plog_fmt_callchain, pl_tid);
		rec->u.callchain.pmcid = G32(plog_fmt_callchain, pl_pmcid);
		rec->u.callchain.cpuflags = G32(plog_fmt_callchain, pl_cpuflags);
		for (uint32_t i = 0; i < npc; i++)
			r->pcs[i] = util_le64(pc + 8 * i);
		rec->u.callchain.npc = npc;
		rec->u.callchain.pc = r->pcs;
		return 0;
	}
	case PLOG_TYPE_THR_CREATE: {
		const uint8_t *name = p + offsetof(struct plog_fmt_thr_create, pl_tdname);

		if (!has_nul(name, PLOG_MAXCOMLEN + 1))
			return fail(r, PLOG_ERR_BAD_STRING,
				    "THR_CREATE thread name is not NUL-terminated in its %u bytes",
				    PLOG_MAXCOMLEN + 1);
		rec->u.thr_create.tid = GI32(plog_fmt_thr_create, pl_tid);
		rec->u.thr_create.pid = GI32(plog_fmt_thr_create, pl_pid);
		rec->u.thr_create.flags = G32(plog_fmt_thr_create, pl_flags);
		copy_fixed(rec->u.thr_create.name, name, PLOG_MAXCOMLEN + 1);
		return 0;
	}
	case PLOG_TYPE_THR_EXIT:
		rec->u.thr_exit.tid = GI32(plog_fmt_thr_exit, pl_tid);
		return 0;
	case PLOG_TYPE_PROC_CREATE: {
		const uint8_t *name = p + offsetof(struct plog_fmt_proc_create, pl_pcomm);

		if (!has_nul(name, PLOG_MAXCOMLEN + 1))
			return fail(r, PLOG_ERR_BAD_STRING,
				    "PROC_CREATE command name is not NUL-terminated in its %u bytes",
				    PLOG_MAXCOMLEN + 1);
		rec->u.proc_create.pid = GI32(plog_fmt_proc_create, pl_pid);
		rec->u.proc_create.flags = G32(plog_fmt_proc_create, pl_flags);
		copy_fixed(rec->u.proc_create.name, name, PLOG_MAXCOMLEN + 1);
		return 0;
	}
	default:
		/* check_header() let only known types through. */
		return fail(r, PLOG_ERR_UNKNOWN_TYPE, "unknown record type %u", type);
	}
}

#undef G32
#undef G64
#undef GI32

int plog_reader__next(struct plog_reader *r, struct plog_record *ret_rec)
{
	for (;;) {
		struct plog_record *rec;
		size_t avail;
		const uint8_t *p;
		uint32_t h, len;
		int k;

		if (r->status == PLOG_STATUS_ERROR)
			return -EPROTO;
		if (r->closed) {
			r->status = PLOG_STATUS_COMPLETE;
			return 0;
		}
		avail = r->end - r->start;
		if (avail < 4) {
			if (r->finished)
				r->status = avail ? PLOG_STATUS_TORN : PLOG_STATUS_NO_CLOSELOG;
			else
				r->status = PLOG_STATUS_NEED_DATA;
			return 0;
		}
		p = r->buf + r->start;
		h = util_le32(p);
		k = check_header(r, h);
		if (k < 0)
			return k;
		len = PLOG_HEADER_LENGTH(h);
		if (avail < len) {
			r->status = r->finished ? PLOG_STATUS_TORN : PLOG_STATUS_NEED_DATA;
			return 0;
		}
		if (k == 1) {
			/* Unknown type skipped on request; the length was checked. */
			r->skipped++;
			r->start += len;
			r->nrecords++;
			continue;
		}

		/* Into the caller's record (left unspecified on an error): no copy. */
		rec = ret_rec;
		memset(rec, 0, sizeof(*rec));
		rec->type = PLOG_HEADER_TYPE(h);
		rec->length = len;
		rec->tsc = util_le64(p + offsetof(struct plog_fmt_header, pl_tsc));
		rec->offset = r->base + r->start;
		rec->raw = p;
		k = decode_body(r, p, rec->type, len, rec);
		if (k < 0)
			return k;
		r->start += len;
		r->nrecords++;
		if (rec->type == PLOG_TYPE_CLOSELOG)
			r->closed = true;
		r->status = r->closed ? PLOG_STATUS_COMPLETE : PLOG_STATUS_NEED_DATA;
		return 1;
	}
}
