/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-pmclog.c: Check suite for src/pmclog (encoder, writer, reader).
 *
 * IMPLEMENTATION NOTES
 *   The golden byte images come from docs/pmclog-format.md section 12
 *   (tests/data/spec-*.hex) and were checked there against FreeBSD's own reader.
 *   parse() runs the reader over a buffer fed in a given chunking and records,
 *   for every record, its offset, type and a hash of a canonical rendering of
 *   every decoded field; it also checks that rec.raw is exactly the input bytes
 *   at rec.offset, so a reader that read from anywhere else would fail here.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake-logs.h"
#include "hwpmcd/common.h"
#include "hwpmcd/pmclog.h"

/*
 * Check records the location of every ck_assert with a write(2); in the loops
 * that parse thousands of variants, check plainly and report only failures.
 */
#define REQUIRE(c)                                                             \
	do {                                                                   \
		if (!(c))                                                      \
			ck_abort_msg("%s:%d: requirement failed: %s", __FILE__, __LINE__, #c); \
	} while (0)

#define MAXREC 128 /* the test logs hold at most 1212 / 16 records */

struct parsed {
	size_t n;
	uint64_t offset[MAXREC];
	uint32_t type[MAXREC];
	uint64_t hash[MAXREC];
	enum plog_status status;
	enum plog_error_kind err_kind;
	uint64_t err_offset;
	uint64_t end_offset;
	uint64_t trailing;
};

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* A canonical text of every decoded field, hashed. */
static uint64_t canon_hash(const struct plog_record *rec)
{
	char s[8192];
	int n = 0;

	n += snprintf(s + n, sizeof(s) - (size_t)n, "%u %u %" PRIu64 " %" PRIu64 ";", rec->type,
		      rec->length, rec->tsc, rec->offset);
	switch (rec->type) {
	case PLOG_TYPE_INITIALIZE:
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%x %x %" PRIu64 " %" PRId64 " %" PRId64 " %s",
			      rec->u.initialize.version, rec->u.initialize.cpu,
			      rec->u.initialize.tsc_freq, rec->u.initialize.ts_sec,
			      rec->u.initialize.ts_nsec, rec->u.initialize.cpuid);
		break;
	case PLOG_TYPE_PMCALLOCATE:
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%x %x %x %" PRIu64,
			      rec->u.pmcallocate.pmcid, rec->u.pmcallocate.event,
			      rec->u.pmcallocate.flags, rec->u.pmcallocate.rate);
		break;
	case PLOG_TYPE_PMCALLOCATEDYN:
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%x %x %x %d %s",
			      rec->u.pmcallocatedyn.pmcid, rec->u.pmcallocatedyn.event,
			      rec->u.pmcallocatedyn.flags, rec->u.pmcallocatedyn.name_at_40,
			      rec->u.pmcallocatedyn.evname);
		break;
	case PLOG_TYPE_PMCATTACH:
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%x %d %s", rec->u.pmcattach.pmcid,
			      rec->u.pmcattach.pid, rec->u.pmcattach.path);
		break;
	case PLOG_TYPE_PMCDETACH:
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%x %d", rec->u.pmcdetach.pmcid,
			      rec->u.pmcdetach.pid);
		break;
	case PLOG_TYPE_PROCCSW:
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%x %d %d %" PRIu64, rec->u.proccsw.pmcid,
			      rec->u.proccsw.pid, rec->u.proccsw.tid, rec->u.proccsw.value);
		break;
	case PLOG_TYPE_PROCEXEC:
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%d %x %" PRIx64 " %" PRIx64 " %s",
			      rec->u.procexec.pid, rec->u.procexec.pmcid, rec->u.procexec.base,
			      rec->u.procexec.dyn, rec->u.procexec.path);
		break;
	case PLOG_TYPE_PROCEXIT:
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%x %d %" PRIu64, rec->u.procexit.pmcid,
			      rec->u.procexit.pid, rec->u.procexit.value);
		break;
	case PLOG_TYPE_PROCFORK:
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%d %d", rec->u.procfork.oldpid,
			      rec->u.procfork.newpid);
		break;
	case PLOG_TYPE_SYSEXIT:
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%d", rec->u.sysexit.pid);
		break;
	case PLOG_TYPE_USERDATA:
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%x", rec->u.userdata.userdata);
		break;
	case PLOG_TYPE_MAP_IN:
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%d %" PRIx64 " %s", rec->u.map_in.pid,
			      rec->u.map_in.start, rec->u.map_in.path);
		break;
	case PLOG_TYPE_MAP_OUT:
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%d %" PRIx64 " %" PRIx64,
			      rec->u.map_out.pid, rec->u.map_out.start, rec->u.map_out.end);
		break;
	case PLOG_TYPE_CALLCHAIN:
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%d %d %x %x %u", rec->u.callchain.pid,
			      rec->u.callchain.tid, rec->u.callchain.pmcid, rec->u.callchain.cpuflags,
			      rec->u.callchain.npc);
		return fnv(rec->u.callchain.pc, 8 * rec->u.callchain.npc, fnv(s, (size_t)n, 14695981039346656037ull));
	case PLOG_TYPE_THR_CREATE:
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%d %d %x %s", rec->u.thr_create.tid,
			      rec->u.thr_create.pid, rec->u.thr_create.flags, rec->u.thr_create.name);
		break;
	case PLOG_TYPE_THR_EXIT:
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%d", rec->u.thr_exit.tid);
		break;
	case PLOG_TYPE_PROC_CREATE:
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%d %x %s", rec->u.proc_create.pid,
			      rec->u.proc_create.flags, rec->u.proc_create.name);
		break;
	default:
		break;
	}
	if (n > (int)sizeof(s))
		n = (int)sizeof(s);
	return fnv(s, (size_t)n, 14695981039346656037ull);
}

/* Drain the reader into @p; returns 0 or -EPROTO. */
static int drain(struct plog_reader *r, const uint8_t *in, size_t inlen, struct parsed *p)
{
	struct plog_record rec;
	int k;

	while ((k = plog_reader__next(r, &rec)) > 0) {
		REQUIRE((p->n) < (MAXREC));
		/* The record's bytes are exactly the input at its offset. */
		REQUIRE((rec.offset + rec.length) <= (inlen));
		REQUIRE(memcmp(rec.raw, in + rec.offset, rec.length) == 0);
		p->offset[p->n] = rec.offset;
		p->type[p->n] = rec.type;
		p->hash[p->n] = canon_hash(&rec);
		p->n++;
	}
	return k;
}

/*
 * parse: feed @in in chunks of @chunk bytes (0: whole), or, with @sizes, in the
 * successive sizes of that array (cycled).
 */
/* parse() hands the bytes over by plog_reader__space/__commit (a read into the reader) when set. */
static bool g_in_place;

static void parse(const uint8_t *in, size_t inlen, size_t chunk, unsigned flags, struct parsed *p)
{
	struct plog_reader *r = NULL;
	size_t pos = 0;
	int k = 0;
	void *space;

	memset(p, 0, sizeof(*p));
	REQUIRE(plog_reader__new(flags, &r) == 0);
	if (chunk == 0)
		chunk = inlen ? inlen : 1;
	while (pos < inlen) {
		size_t n = inlen - pos < chunk ? inlen - pos : chunk;

		if (g_in_place) {
			/* Room for more than is written, as a read(2) of a short file gives. */
			REQUIRE(plog_reader__space(r, n + 7, &space) == 0);
			memcpy(space, in + pos, n);
			REQUIRE(plog_reader__commit(r, n) == 0);
		} else {
			REQUIRE(plog_reader__feed(r, in + pos, n) == 0);
		}
		pos += n;
		/* After an error the bytes still go in: the reader counts them as trailing. */
		k = drain(r, in, inlen, p);
	}
	plog_reader__finish(r);
	REQUIRE(plog_reader__feed(r, "x", 1) == -EINVAL);
	REQUIRE(plog_reader__space(r, 1, &space) == -EINVAL);
	REQUIRE(plog_reader__commit(r, 0) == -EINVAL);
	k = drain(r, in, inlen, p);
	p->status = plog_reader__status(r);
	REQUIRE((p->status) != (PLOG_STATUS_NEED_DATA));
	if (k < 0) {
		const struct plog_error *e = plog_reader__error(r);

		REQUIRE((k) == (-EPROTO));
		REQUIRE((p->status) == (PLOG_STATUS_ERROR));
		REQUIRE((e) != NULL);
		REQUIRE((e->offset) < (inlen));
		REQUIRE(e->message[0] != '\0');
		p->err_kind = e->kind;
		p->err_offset = e->offset;
	} else {
		REQUIRE((plog_reader__error(r)) == NULL);
	}
	p->end_offset = plog_reader__offset(r);
	p->trailing = plog_reader__trailing(r);
	plog_reader__free(r);
}

static void assert_same(const struct parsed *a, const struct parsed *b)
{
	REQUIRE((a->n) == (b->n));
	for (size_t i = 0; i < a->n; i++) {
		REQUIRE((a->offset[i]) == (b->offset[i]));
		REQUIRE((a->type[i]) == (b->type[i]));
		REQUIRE((a->hash[i]) == (b->hash[i]));
	}
	REQUIRE((a->status) == (b->status));
	REQUIRE((a->err_kind) == (b->err_kind));
	REQUIRE((a->err_offset) == (b->err_offset));
	REQUIRE((a->end_offset) == (b->end_offset));
	REQUIRE((a->trailing) == (b->trailing));
}

/* The all-types log, written by the writer into memory. */
static size_t make_all_types(uint8_t **ret)
{
	int fd = memfd_create("all-types", MFD_CLOEXEC);
	struct plog_writer *w = NULL;
	struct stat st;
	uint8_t *buf;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(plog_writer__new(fd, 0, &w), 0);
	ck_assert_int_eq(fake_log_all_types(w), 0);
	ck_assert_int_eq(plog_writer__sync(w), 0);
	plog_writer__free(w);
	ck_assert_int_eq(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	*ret = buf;
	return (size_t)st.st_size;
}

static size_t load_hex(const char *name, uint8_t **ret)
{
	char path[1024];
	int n;

	snprintf(path, sizeof(path), "%s/%s", TEST_DATA_DIR, name);
	n = fake_hex_load(path, ret);
	ck_assert_int_gt(n, 0);
	return (size_t)n;
}

/* ---- golden images of pmclog-format.md section 12 ---- */

START_TEST(test_golden_initialize)
{
	struct plog_record rec = { .type = PLOG_TYPE_INITIALIZE, .tsc = 1000 };
	uint8_t out[PLOG_RECORD_MAX], *gold;
	size_t n = load_hex("spec-12.1-initialize.hex", &gold);
	struct plog_reader *r;
	struct plog_record got;

	ck_assert_uint_eq(n, 112);
	rec.u.initialize.version = PLOG_VERSION;
	rec.u.initialize.cpu = PLOG_CPU_GENERIC;
	rec.u.initialize.tsc_freq = 1000000000;
	rec.u.initialize.ts_sec = 1700000000;
	rec.u.initialize.ts_nsec = 123456789;
	strcpy(rec.u.initialize.cpuid, "GenuineIntel-6-55-4");
	ck_assert_int_eq(plog_encode(&rec, out), 112);
	ck_assert_mem_eq(out, gold, 112);

	ck_assert_int_eq(plog_reader__new(0, &r), 0);
	ck_assert_int_eq(plog_reader__feed(r, gold, n), 0);
	ck_assert_int_eq(plog_reader__next(r, &got), 1);
	ck_assert_uint_eq(got.type, PLOG_TYPE_INITIALIZE);
	ck_assert_uint_eq(got.length, 112);
	ck_assert_uint_eq(got.tsc, 1000);
	ck_assert_uint_eq(got.offset, 0);
	ck_assert_uint_eq(got.u.initialize.version, 0x0A000000);
	ck_assert_uint_eq(got.u.initialize.cpu, 0x400);
	ck_assert_uint_eq(got.u.initialize.tsc_freq, 1000000000);
	ck_assert_int_eq(got.u.initialize.ts_sec, 1700000000);
	ck_assert_int_eq(got.u.initialize.ts_nsec, 123456789);
	ck_assert_str_eq(got.u.initialize.cpuid, "GenuineIntel-6-55-4");
	ck_assert_int_eq(plog_reader__next(r, &got), 0);
	ck_assert_int_eq(plog_reader__status(r), PLOG_STATUS_NEED_DATA);
	plog_reader__finish(r);
	ck_assert_int_eq(plog_reader__next(r, &got), 0);
	ck_assert_int_eq(plog_reader__status(r), PLOG_STATUS_NO_CLOSELOG);
	plog_reader__free(r);
	free(gold);
}
END_TEST

START_TEST(test_golden_callchain)
{
	static const uint64_t pcs[] = { 0x555555555149, 0x7ffff7da9d90, 0x555555555075 };
	struct plog_record rec = { .type = PLOG_TYPE_CALLCHAIN, .tsc = 1007 };
	uint8_t out[PLOG_RECORD_MAX], *gold;
	size_t n = load_hex("spec-12.2-callchain.hex", &gold);
	struct plog_reader *r;
	struct plog_record got;

	ck_assert_uint_eq(n, 56);
	rec.u.callchain.pid = 4242;
	rec.u.callchain.tid = 100123;
	rec.u.callchain.pmcid = 0xFFF00F00;
	rec.u.callchain.cpuflags = PLOG_CC_CPUFLAGS(3, PLOG_CC_F_USERSPACE);
	rec.u.callchain.pc = pcs;
	rec.u.callchain.npc = 3;
	ck_assert_int_eq(plog_encode(&rec, out), 56);
	ck_assert_mem_eq(out, gold, 56);

	ck_assert_int_eq(plog_reader__new(0, &r), 0);
	ck_assert_int_eq(plog_reader__feed(r, gold, n), 0);
	ck_assert_int_eq(plog_reader__next(r, &got), 1);
	ck_assert_uint_eq(got.type, PLOG_TYPE_CALLCHAIN);
	ck_assert_uint_eq(got.tsc, 1007);
	ck_assert_int_eq(got.u.callchain.pid, 4242);
	ck_assert_int_eq(got.u.callchain.tid, 100123);
	ck_assert_uint_eq(got.u.callchain.pmcid, 0xFFF00F00);
	ck_assert_uint_eq(PLOG_CC_CPU(got.u.callchain.cpuflags), 3);
	ck_assert_uint_eq(PLOG_CC_FLAGS(got.u.callchain.cpuflags), PLOG_CC_F_USERSPACE);
	ck_assert_uint_eq(got.u.callchain.npc, 3);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(got.u.callchain.pc[i], pcs[i]);
	plog_reader__free(r);
	free(gold);
}
END_TEST

START_TEST(test_golden_map_in_kernel)
{
	struct plog_record rec = { .type = PLOG_TYPE_MAP_IN, .tsc = 1004 };
	uint8_t out[PLOG_RECORD_MAX], *gold;
	size_t n = load_hex("spec-12.3-map-in-kernel.hex", &gold);
	struct plog_reader *r;
	struct plog_record got;

	ck_assert_uint_eq(n, 40);
	rec.u.map_in.pid = PLOG_PID_KERNEL;
	rec.u.map_in.start = 0xffffffff81000000;
	rec.u.map_in.path = "vmlinux";
	ck_assert_int_eq(plog_encode(&rec, out), 40);
	ck_assert_mem_eq(out, gold, 40);

	ck_assert_int_eq(plog_reader__new(0, &r), 0);
	ck_assert_int_eq(plog_reader__feed(r, gold, n), 0);
	ck_assert_int_eq(plog_reader__next(r, &got), 1);
	ck_assert_int_eq(got.u.map_in.pid, -1);
	ck_assert_uint_eq(got.u.map_in.start, 0xffffffff81000000);
	ck_assert_str_eq(got.u.map_in.path, "vmlinux");
	plog_reader__free(r);
	free(gold);
}
END_TEST

START_TEST(test_golden_v2_refused)
{
	uint8_t *gold;
	size_t n = load_hex("spec-12.4-v2-callchain.hex", &gold);
	struct parsed p;

	ck_assert_uint_eq(n, 68);
	parse(gold, n, 0, 0, &p);
	ck_assert_uint_eq(p.n, 0);
	ck_assert_int_eq(p.status, PLOG_STATUS_ERROR);
	ck_assert_int_eq(p.err_kind, PLOG_ERR_OLD_FORMAT);
	ck_assert_uint_eq(p.err_offset, 0);
	free(gold);
}
END_TEST

/* ---- encoder refusals ---- */

static int enc(const struct plog_record *rec)
{
	uint8_t buf[PLOG_RECORD_MAX];

	return plog_encode(rec, buf);
}

START_TEST(test_encode_limits)
{
	static uint64_t pcs[PLOG_CALLCHAIN_DEPTH_MAX + 1];
	struct plog_record rec;
	char path[PLOG_PATH_MAX + 8];

	for (size_t i = 0; i < ARRAY_SIZE(pcs); i++)
		pcs[i] = 0x400000 + i;

	/* Call chains: 1..512 PCs, no MULTIPART, no undefined flag bits. */
	memset(&rec, 0, sizeof(rec));
	rec.type = PLOG_TYPE_CALLCHAIN;
	rec.u.callchain.pmcid = 0xFFF00F00;
	rec.u.callchain.pc = pcs;
	rec.u.callchain.npc = 0;
	ck_assert_int_eq(enc(&rec), -EINVAL);
	rec.u.callchain.npc = 1;
	ck_assert_int_eq(enc(&rec), 40);
	rec.u.callchain.npc = PLOG_CALLCHAIN_DEPTH_MAX;
	ck_assert_int_eq(enc(&rec), PLOG_RECORD_MAX);
	rec.u.callchain.npc = PLOG_CALLCHAIN_DEPTH_MAX + 1;
	ck_assert_int_eq(enc(&rec), -E2BIG);
	rec.u.callchain.npc = 3;
	rec.u.callchain.cpuflags = PLOG_CC_CPUFLAGS(1, PLOG_CC_F_MULTIPART);
	ck_assert_int_eq(enc(&rec), -EINVAL);
	rec.u.callchain.cpuflags = PLOG_CC_CPUFLAGS(1, 0x8);
	ck_assert_int_eq(enc(&rec), -EINVAL);
	rec.u.callchain.cpuflags = PLOG_CC_CPUFLAGS(65535, PLOG_CC_F_USERSPACE);
	ck_assert_int_eq(enc(&rec), 56);
	rec.u.callchain.pmcid = PLOG_PMCID_INVALID;
	ck_assert_int_eq(enc(&rec), -EINVAL);
	rec.u.callchain.pmcid = 1;
	rec.u.callchain.pc = NULL;
	ck_assert_int_eq(enc(&rec), -EINVAL);

	/* Paths: at most 1023 characters; never empty. */
	memset(&rec, 0, sizeof(rec));
	rec.type = PLOG_TYPE_MAP_IN;
	memset(path, 'a', sizeof(path));
	path[0] = '/';
	path[1023] = '\0';
	rec.u.map_in.path = path;
	ck_assert_int_eq(enc(&rec), 32 + 1024);
	path[1023] = 'a';
	path[1024] = '\0';
	ck_assert_int_eq(enc(&rec), -ENAMETOOLONG);
	rec.u.map_in.path = "";
	ck_assert_int_eq(enc(&rec), -EINVAL);
	rec.u.map_in.path = NULL;
	ck_assert_int_eq(enc(&rec), -EINVAL);
	rec.type = PLOG_TYPE_PROCEXEC;
	rec.u.procexec.path = path;
	ck_assert_int_eq(enc(&rec), -ENAMETOOLONG);
	rec.type = PLOG_TYPE_PMCATTACH;
	rec.u.pmcattach.path = path;
	ck_assert_int_eq(enc(&rec), -ENAMETOOLONG);
	rec.u.pmcattach.path = "/x";
	ck_assert_int_eq(enc(&rec), 28);

	/* Lengths are rounded up to 4 with zero padding. */
	rec.type = PLOG_TYPE_MAP_IN;
	rec.u.map_in.path = "/ab";
	ck_assert_int_eq(enc(&rec), 36);
	rec.u.map_in.path = "/abc";
	ck_assert_int_eq(enc(&rec), 40);

	/* MAP_OUT start < end (pmcstat asserts). */
	memset(&rec, 0, sizeof(rec));
	rec.type = PLOG_TYPE_MAP_OUT;
	rec.u.map_out.start = 10;
	rec.u.map_out.end = 10;
	ck_assert_int_eq(enc(&rec), -EINVAL);
	rec.u.map_out.end = 11;
	ck_assert_int_eq(enc(&rec), 40);

	/* Event names: 1..63 printable characters, no '/' or blanks. */
	memset(&rec, 0, sizeof(rec));
	rec.type = PLOG_TYPE_PMCALLOCATEDYN;
	strcpy(rec.u.pmcallocatedyn.evname, "cpu-clock:u");
	ck_assert_int_eq(enc(&rec), 96);
	strcpy(rec.u.pmcallocatedyn.evname, "cpu/event=1/");
	ck_assert_int_eq(enc(&rec), -EINVAL);
	strcpy(rec.u.pmcallocatedyn.evname, "cpu clock");
	ck_assert_int_eq(enc(&rec), -EINVAL);
	strcpy(rec.u.pmcallocatedyn.evname, "");
	ck_assert_int_eq(enc(&rec), -EINVAL);
	memset(rec.u.pmcallocatedyn.evname, 'x', PLOG_NAME_MAX);
	ck_assert_int_eq(enc(&rec), -ENAMETOOLONG);
	strcpy(rec.u.pmcallocatedyn.evname, "ok");
	rec.u.pmcallocatedyn.pmcid = PLOG_PMCID_INVALID;
	ck_assert_int_eq(enc(&rec), -EINVAL);

	/* Fixed-size names must hold their NUL. */
	memset(&rec, 0, sizeof(rec));
	rec.type = PLOG_TYPE_PROC_CREATE;
	memset(rec.u.proc_create.name, 'n', sizeof(rec.u.proc_create.name));
	ck_assert_int_eq(enc(&rec), -ENAMETOOLONG);
	rec.type = PLOG_TYPE_THR_CREATE;
	memset(rec.u.thr_create.name, 'n', sizeof(rec.u.thr_create.name));
	ck_assert_int_eq(enc(&rec), -ENAMETOOLONG);
	rec.type = PLOG_TYPE_INITIALIZE;
	memset(rec.u.initialize.cpuid, 'c', sizeof(rec.u.initialize.cpuid));
	ck_assert_int_eq(enc(&rec), -ENAMETOOLONG);
	rec.u.initialize.cpuid[63] = '\0';
	rec.u.initialize.ts_nsec = 1000000000;
	ck_assert_int_eq(enc(&rec), -EINVAL);

	/* Types 0 and 4 and 21+ do not exist. */
	memset(&rec, 0, sizeof(rec));
	for (uint32_t t = 0; t < 300; t++) {
		rec.type = t;
		if (t == 0 || t == 4 || t >= PLOG_TYPE_MAX)
			ck_assert_int_eq(enc(&rec), -EINVAL);
	}
}
END_TEST

/* ---- writer ---- */

START_TEST(test_writer_all_types_file)
{
	char path[1024];
	uint8_t *mine, *committed;
	size_t n = make_all_types(&mine);
	int m;

	snprintf(path, sizeof(path), "%s/all-types.pmclog", TEST_DATA_DIR);
	m = fake_file_load(path, &committed);
	ck_assert_int_eq(m, (int)n);
	/* Regenerate with: build/tests/mklog > tests/data/all-types.pmclog */
	ck_assert_mem_eq(mine, committed, n);
	free(mine);
	free(committed);
}
END_TEST

/*
 * FreeBSD's reader fails on a PMCALLOCATE whose pl_event its libpmc cannot name
 * (pmclog-format.md 5.3, 8.2) and stops parsing there: the committed logs carry
 * only codes every libpmc names (the TSC), or PMC_F_EV_PMU codes.
 */
START_TEST(test_fixture_freebsd_events)
{
	char path[1024];
	uint8_t *buf;
	struct plog_reader *r;
	struct plog_record rec;
	int n, k, seen = 0;

	snprintf(path, sizeof(path), "%s/all-types.pmclog", TEST_DATA_DIR);
	n = fake_file_load(path, &buf);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(plog_reader__new(0, &r), 0);
	ck_assert_int_eq(plog_reader__feed(r, buf, (size_t)n), 0);
	plog_reader__finish(r);
	while ((k = plog_reader__next(r, &rec)) > 0) {
		if (rec.type != PLOG_TYPE_PMCALLOCATE)
			continue;
		seen++;
		ck_assert_msg(rec.u.pmcallocate.event == PLOG_EV_TSC_TSC ||
				      (rec.u.pmcallocate.flags & PLOG_F_EV_PMU),
			      "PMCALLOCATE event 0x%x without PMC_F_EV_PMU: FreeBSD's reader stops",
			      rec.u.pmcallocate.event);
	}
	ck_assert_int_eq(k, 0);
	ck_assert_int_eq(plog_reader__status(r), PLOG_STATUS_COMPLETE);
	ck_assert_int_ge(seen, 1);
	plog_reader__free(r);
	free(buf);
}
END_TEST

START_TEST(test_writer_stream_rules)
{
	int fd = memfd_create("rules", MFD_CLOEXEC);
	struct plog_writer *w;
	static const uint64_t pc = 0x1000;
	const struct plog_writer_stats *st;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(plog_writer__new(fd, 100, &w), -EINVAL); /* buffer < 4128 */
	ck_assert_int_eq(plog_writer__new(-1, 0, &w), -EINVAL);
	ck_assert_int_eq(plog_writer__new(fd, PLOG_RECORD_MAX, &w), 0);
	/* The first record must be INITIALIZE. */
	ck_assert_int_eq(plog_writer__append_closelog(w, 0), -EINVAL);
	ck_assert_int_eq(plog_writer__append_initialize(w, 0, PLOG_CPU_GENERIC, 1000000000, 0, 0,
							"GenuineIntel-6-55-4"),
			 0);
	/* A CALLCHAIN must name an announced pmcid. */
	ck_assert_int_eq(plog_writer__append_callchain(w, 1, 1, 1, 0xFFF00F00, 0, &pc, 1), -ENOENT);
	ck_assert_int_eq(plog_writer__append_pmcallocatedyn(w, 1, 0xFFF00F00, 0, 0, "cpu-clock"), 0);
	ck_assert_int_eq(plog_writer__append_callchain(w, 1, 1, 1, 0xFFF00F00, 0, &pc, 1), 0);
	ck_assert_int_eq(plog_writer__append_pmcallocate(w, 1, 0x100, 1, 0, 1000), 0);
	ck_assert_int_eq(plog_writer__append_callchain(w, 1, 1, 1, 0x100, 0, &pc, 1), 0);
	ck_assert_int_eq(plog_writer__append_callchain(w, 1, 1, 1, 0xFFF00F00, 0, &pc, 1), 0);
	/* Refusals do not poison the writer. */
	ck_assert_int_eq(plog_writer__append_map_out(w, 2, 1, 5, 5), -EINVAL);
	ck_assert_int_eq(plog_writer__append_callchain(w, 1, 1, 1, 0xFFF00F00, 0, &pc, 0), -EINVAL);
	ck_assert_int_eq(plog_writer__append_pmcallocatedyn(w, 1, 0xFFF00F01, 0, 0,
							    "a-name-that-is-much-longer-than-sixty-three-characters-in-all-xx"),
			 -ENAMETOOLONG);
	ck_assert_int_eq(plog_writer__error(w), 0);
	/* Long comm names are truncated to 19 characters, as FreeBSD's kernel does. */
	ck_assert_int_eq(plog_writer__append_proc_create(w, 3, 7, 0, "a-rather-long-process-name"), 0);
	ck_assert_int_eq(plog_writer__append_closelog(w, 4), 0);
	ck_assert_int_eq(plog_writer__append_dropnotify(w, 5), -ESHUTDOWN);
	st = plog_writer__stats(w);
	ck_assert_uint_eq(st->records[PLOG_TYPE_CALLCHAIN], 3);
	ck_assert_uint_eq(st->records[PLOG_TYPE_CLOSELOG], 1);
	ck_assert_uint_eq(st->refused, 6);
	ck_assert_uint_eq(st->bytes, 112 + 96 + 3 * 40 + 40 + 44 + 16);
	/* CLOSELOG flushed everything. */
	ck_assert_uint_eq(st->bytes_written, st->bytes);
	ck_assert_int_eq(lseek(fd, 0, SEEK_END), (off_t)st->bytes);
	plog_writer__free(w);

	{
		uint8_t buf[1024];
		struct parsed p;
		struct plog_reader *r;
		struct plog_record rec;

		ck_assert_int_eq(pread(fd, buf, sizeof(buf), 0), 428);
		parse(buf, 428, 0, 0, &p);
		ck_assert_int_eq(p.status, PLOG_STATUS_COMPLETE);
		ck_assert_uint_eq(p.n, 8);
		ck_assert_int_eq(plog_reader__new(0, &r), 0);
		ck_assert_int_eq(plog_reader__feed(r, buf + 112 + 96 + 160, 44), 0);
		ck_assert_int_eq(plog_reader__next(r, &rec), 1);
		ck_assert_uint_eq(rec.type, PLOG_TYPE_PROC_CREATE);
		ck_assert_str_eq(rec.u.proc_create.name, "a-rather-long-proce");
		plog_reader__free(r);
	}
	close(fd);
}
END_TEST

/* Two streams of one writer, as a rotated log makes: each file reads alone. */
START_TEST(test_writer_restart)
{
	int a = memfd_create("first", MFD_CLOEXEC), b = memfd_create("second", MFD_CLOEXEC);
	int full = open("/dev/full", O_WRONLY | O_CLOEXEC);
	static const uint64_t pc = 0x1000;
	struct plog_writer *w;
	uint8_t buf[1024];
	struct parsed p;
	ssize_t n;

	ck_assert_int_ge(a, 0);
	ck_assert_int_ge(b, 0);
	ck_assert_int_ge(full, 0);
	ck_assert_int_eq(plog_writer__new(a, 0, &w), 0);
	ck_assert_int_eq(plog_writer__append_initialize(w, 0, PLOG_CPU_GENERIC, 1000000000, 0, 0,
							""), 0);
	ck_assert_int_eq(plog_writer__append_pmcallocatedyn(w, 1, 0xFFF00F00, 0, 0, "cpu-clock"), 0);
	ck_assert_int_eq(plog_writer__append_callchain(w, 2, 1, 1, 0xFFF00F00, 0, &pc, 1), 0);
	/* Buffered bytes of the first stream: not yet. */
	ck_assert_int_eq(plog_writer__restart(w, b), -EBUSY);
	ck_assert_int_eq(plog_writer__append_closelog(w, 3), 0);
	ck_assert_int_eq(plog_writer__sync(w), 0);
	ck_assert_int_eq(plog_writer__restart(w, -1), -EINVAL);
	ck_assert_int_eq(plog_writer__restart(w, b), 0);
	/* A new stream: INITIALIZE first, and the pmcid must be announced again. */
	ck_assert_int_eq(plog_writer__append_callchain(w, 4, 1, 1, 0xFFF00F00, 0, &pc, 1), -EINVAL);
	ck_assert_int_eq(plog_writer__append_initialize(w, 4, PLOG_CPU_GENERIC, 1000000000, 0, 0,
							""), 0);
	ck_assert_int_eq(plog_writer__append_callchain(w, 4, 1, 1, 0xFFF00F00, 0, &pc, 1), -ENOENT);
	ck_assert_int_eq(plog_writer__append_pmcallocatedyn(w, 4, 0xFFF00F00, 0, 0, "cpu-clock"), 0);
	ck_assert_int_eq(plog_writer__append_callchain(w, 5, 1, 1, 0xFFF00F00, 0, &pc, 1), 0);
	ck_assert_int_eq(plog_writer__append_closelog(w, 6), 0);
	/* The statistics span both streams. */
	ck_assert_uint_eq(plog_writer__stats(w)->records[PLOG_TYPE_CALLCHAIN], 2);
	ck_assert_uint_eq(plog_writer__stats(w)->records[PLOG_TYPE_INITIALIZE], 2);
	for (int fd = a; fd >= 0; fd = fd == a ? b : -1) {
		n = pread(fd, buf, sizeof(buf), 0);
		ck_assert_int_eq(n, 112 + 96 + 40 + 16);
		parse(buf, (size_t)n, 0, 0, &p);
		ck_assert_int_eq(p.status, PLOG_STATUS_COMPLETE);
		ck_assert_uint_eq(p.n, 4);
		ck_assert_uint_eq(p.type[0], PLOG_TYPE_INITIALIZE);
	}

	/* A failed output (a full disk): abandoned, then a new stream elsewhere. */
	ck_assert_int_eq(ftruncate(a, 0), 0);
	ck_assert_int_eq(lseek(a, 0, SEEK_SET), 0);
	ck_assert_int_eq(plog_writer__restart(w, full), 0);
	ck_assert_int_eq(plog_writer__append_initialize(w, 7, PLOG_CPU_GENERIC, 1000000000, 0, 0,
							""), 0);
	ck_assert_uint_eq(plog_writer__abandon(w), 112); /* buffered, never written */
	ck_assert_int_eq(plog_writer__restart(w, full), 0);
	ck_assert_int_eq(plog_writer__append_initialize(w, 7, PLOG_CPU_GENERIC, 1000000000, 0, 0,
							""), 0);
	ck_assert_int_eq(plog_writer__flush(w), -ENOSPC);
	ck_assert_int_eq(plog_writer__restart(w, a), -ENOSPC); /* the sticky error */
	ck_assert_uint_eq(plog_writer__abandon(w), 0); /* the failed write dropped the backlog */
	ck_assert_int_eq(plog_writer__error(w), 0);
	ck_assert_int_eq(plog_writer__append_dropnotify(w, 8), -ESHUTDOWN);
	ck_assert_int_eq(plog_writer__restart(w, a), 0);
	ck_assert_int_eq(plog_writer__append_initialize(w, 8, PLOG_CPU_GENERIC, 1000000000, 0, 0,
							""), 0);
	ck_assert_int_eq(plog_writer__append_closelog(w, 9), 0);
	n = pread(a, buf, sizeof(buf), 0);
	ck_assert_int_eq(n, 112 + 16);
	parse(buf, (size_t)n, 0, 0, &p);
	ck_assert_int_eq(p.status, PLOG_STATUS_COMPLETE);
	plog_writer__free(w);
	close(a);
	close(b);
	close(full);
}
END_TEST

START_TEST(test_writer_enospc_sticky)
{
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	struct plog_writer *w;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(plog_writer__new(fd, 0, &w), 0);
	ck_assert_int_eq(plog_writer__append_initialize(w, 0, PLOG_CPU_GENERIC, 1000000000, 0, 0,
							""),
			 0);
	ck_assert_int_eq(plog_writer__flush(w), -ENOSPC);
	ck_assert_int_eq(plog_writer__error(w), -ENOSPC);
	/* Every later call reports the first error. */
	ck_assert_int_eq(plog_writer__append_dropnotify(w, 1), -ENOSPC);
	ck_assert_int_eq(plog_writer__append_closelog(w, 1), -ENOSPC);
	ck_assert_int_eq(plog_writer__sync(w), -ENOSPC);
	ck_assert_int_eq(plog_writer__flush(w), -ENOSPC);
	plog_writer__free(w);
	close(fd);
}
END_TEST

START_TEST(test_writer_epipe)
{
	int p[2];
	struct plog_writer *w;

	signal(SIGPIPE, SIG_IGN);
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_eq(plog_writer__new(p[1], 0, &w), 0);
	ck_assert_int_eq(plog_writer__append_initialize(w, 0, PLOG_CPU_GENERIC, 1000000000, 0, 0,
							"x"),
			 0);
	/* fdatasync on a pipe is EINVAL, which is not an error for a log on a pipe. */
	ck_assert_int_eq(plog_writer__sync(w), 0);
	close(p[0]);
	ck_assert_int_eq(plog_writer__append_dropnotify(w, 1), 0);
	ck_assert_int_eq(plog_writer__flush(w), -EPIPE);
	ck_assert_int_eq(plog_writer__append_dropnotify(w, 2), -EPIPE);
	plog_writer__free(w);
	close(p[1]);
}
END_TEST

/*
 * A file size limit makes write(2) stop inside a buffer, in the middle of a
 * record, as a full disk does; the file must be cut back to whole records.
 */
START_TEST(test_writer_short_write_truncates)
{
	char path[] = "/tmp/hwpmcd-test-XXXXXX";
	int fd = mkstemp(path);
	struct rlimit rl = { .rlim_cur = 1000, .rlim_max = RLIM_INFINITY };
	struct plog_writer *w;
	static const uint64_t pcs[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	int r = 0, i;
	uint8_t buf[2048];
	ssize_t n;
	struct parsed p;

	ck_assert_int_ge(fd, 0);
	unlink(path);
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &rl), 0);
	rl.rlim_cur = 1000;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	ck_assert_int_eq(plog_writer__new(fd, 0, &w), 0);
	ck_assert_int_eq(plog_writer__append_initialize(w, 0, PLOG_CPU_GENERIC, 1000000000, 0, 0,
							"x"),
			 0);
	ck_assert_int_eq(plog_writer__append_pmcallocatedyn(w, 0, 7, 0, 0, "cpu-clock"), 0);
	/* 20 CALLCHAINs of 96 bytes: 208 + 1920 bytes, well past the 1000-byte limit. */
	for (i = 0; i < 20 && r == 0; i++)
		r = plog_writer__append_callchain(w, (uint64_t)i, 1, 1, 7, 0, pcs, 8);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(plog_writer__flush(w), -EFBIG);
	plog_writer__free(w);
	rl.rlim_cur = rl.rlim_max;
	(void)setrlimit(RLIMIT_FSIZE, &rl);

	n = pread(fd, buf, sizeof(buf), 0);
	/* 1000 bytes were written; 208 + 8 * 96 = 976 of them are whole records. */
	ck_assert_int_eq(n, 976);
	parse(buf, (size_t)n, 0, 0, &p);
	ck_assert_int_eq(p.status, PLOG_STATUS_NO_CLOSELOG);
	ck_assert_uint_eq(p.n, 10);
	close(fd);
}
END_TEST

/* ---- no-wait mode (a stalled output never blocks the writer) ---- */

/* What a whole log holds: records by type, and whether time stamps never go back. */
struct scanned {
	uint64_t types[PLOG_TYPE_MAX];
	uint64_t first_drop;	 /* record index of the first DROPNOTIFY, UINT64_MAX: none */
	uint64_t last_cc_before; /* CALLCHAINs before the first DROPNOTIFY */
	uint64_t records;
	bool ordered;
	enum plog_status status;
};

static void scan_log(const uint8_t *buf, size_t n, struct scanned *sc)
{
	struct plog_reader *r;
	struct plog_record rec;
	uint64_t last = 0;

	memset(sc, 0, sizeof(*sc));
	sc->first_drop = UINT64_MAX;
	sc->ordered = true;
	ck_assert_int_eq(plog_reader__new(0, &r), 0);
	ck_assert_int_eq(plog_reader__feed(r, buf, n), 0);
	plog_reader__finish(r);
	while (plog_reader__next(r, &rec) == 1) {
		REQUIRE(rec.type < PLOG_TYPE_MAX);
		sc->types[rec.type]++;
		if (rec.type == PLOG_TYPE_DROPNOTIFY && sc->first_drop == UINT64_MAX) {
			sc->first_drop = sc->records;
			sc->last_cc_before = sc->types[PLOG_TYPE_CALLCHAIN];
		}
		sc->ordered &= rec.tsc >= last;
		last = rec.tsc;
		sc->records++;
	}
	sc->status = plog_reader__status(r);
	plog_reader__free(r);
}

/* Read what is in @fd now (non-blocking) onto the end of *buf. */
static void read_available(int fd, uint8_t **buf, size_t *len, size_t *cap)
{
	for (;;) {
		ssize_t n;

		if (*cap - *len < 65536) {
			*cap = *cap * 2 + 65536;
			*buf = realloc(*buf, *cap);
			ck_assert_ptr_nonnull(*buf);
		}
		n = read(fd, *buf + *len, *cap - *len);
		if (n <= 0)
			return;
		*len += (size_t)n;
	}
}

static const uint64_t nowait_pcs[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

/*
 * A pipe nobody reads: 20000 samples (1.9 MB) never block; beyond the drop limit
 * they are dropped and counted, one DROPNOTIFY marks the run, bookkeeping records
 * are still taken; once the reader reads, the rest drains and the log is whole.
 */
static void nowait_stream(int wfd, int rfd)
{
	struct plog_writer *w;
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	uint64_t ok = 0, dropped = 0, t = 0;
	struct scanned sc;
	int r, i;

	ck_assert_int_eq(plog_writer__new(wfd, 8192, &w), 0);
	ck_assert_int_eq(plog_writer__set_nowait(w, 1024, 100, 10, 10), -EINVAL);
	ck_assert_int_eq(plog_writer__set_nowait(w, 262144, 1 << 20, 200, 2000), 0);
	ck_assert_int_eq(plog_writer__append_initialize(w, t, PLOG_CPU_GENERIC, 1000000000, 0, 0,
							"x"), 0);
	ck_assert_int_eq(plog_writer__append_pmcallocatedyn(w, t, 7, 0, 0, "cpu-clock"), 0);
	for (i = 0; i < 20000; i++) {
		r = plog_writer__append_callchain(w, ++t, 1, 1, 7, 0, nowait_pcs, 8);
		REQUIRE(r == 0 || r == PLOG_WRITER_DROPPED);
		ok += r == 0;
		dropped += r == PLOG_WRITER_DROPPED;
		if (i % 1000 == 0)
			REQUIRE(plog_writer__retry(w) == 0);
	}
	ck_assert_uint_gt(dropped, 0);
	ck_assert_uint_eq(plog_writer__stats(w)->dropped, dropped);
	/* Drops are capped by the limit: the backlog holds about 256 KiB, not 1.9 MB. */
	ck_assert_uint_le(plog_writer__pending(w), 262144 + PLOG_RECORD_MAX);
	/* Bookkeeping is never dropped. */
	ck_assert_int_eq(plog_writer__append_map_in(w, ++t, 1, 0x1000, "/bin/x"), 0);
	ck_assert_int_eq(plog_writer__append_sysexit(w, ++t, 1), 0);
	/* The reader wakes up: what it takes is whole records of one stream. */
	while (plog_writer__pending(w) > 0) {
		read_available(rfd, &buf, &len, &cap);
		ck_assert_int_eq(plog_writer__flush(w), 0);
	}
	r = plog_writer__append_callchain(w, ++t, 1, 1, 7, 0, nowait_pcs, 8);
	ck_assert_int_eq(r, 0);
	ok++;
	ck_assert_int_eq(plog_writer__append_closelog(w, ++t), 0);
	while (plog_writer__pending(w) > 0) {
		read_available(rfd, &buf, &len, &cap);
		ck_assert_int_eq(plog_writer__flush(w), 0);
	}
	ck_assert_int_eq(plog_writer__sync(w), 0);
	read_available(rfd, &buf, &len, &cap);
	ck_assert_uint_eq(plog_writer__stats(w)->bytes_written, len);
	plog_writer__free(w);

	scan_log(buf, len, &sc);
	ck_assert_int_eq(sc.status, PLOG_STATUS_COMPLETE);
	ck_assert(sc.ordered);
	ck_assert_uint_eq(sc.types[PLOG_TYPE_CALLCHAIN], ok);
	ck_assert_uint_eq(sc.types[PLOG_TYPE_DROPNOTIFY], 1); /* one run of drops */
	ck_assert_uint_gt(sc.last_cc_before, 0);
	ck_assert_uint_eq(sc.types[PLOG_TYPE_MAP_IN], 1);
	ck_assert_uint_eq(sc.types[PLOG_TYPE_SYSEXIT], 1);
	free(buf);
}

START_TEST(test_writer_nowait_pipe)
{
	int p[2];

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_eq(fcntl(p[0], F_SETFL, O_NONBLOCK), 0); /* the test's read end only */
	nowait_stream(p[1], p[0]);
	/* The writer left the write end's flags alone (they are the client's). */
	ck_assert_int_eq(fcntl(p[1], F_GETFL) & O_NONBLOCK, 0);
	close(p[0]);
	close(p[1]);
}
END_TEST

START_TEST(test_writer_nowait_socket)
{
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	ck_assert_int_eq(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	nowait_stream(sv[1], sv[0]);
	ck_assert_int_eq(fcntl(sv[1], F_GETFL) & O_NONBLOCK, 0);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

/*
 * Records larger than PIPE_BUF (a CALLCHAIN of 512 PCs is 4128 bytes) go through a
 * pipe in pieces; mixed with small ones, read in between, the stream stays whole.
 */
START_TEST(test_writer_nowait_pipe_big)
{
	static uint64_t pcs[PLOG_CALLCHAIN_DEPTH_MAX];
	int p[2];
	struct plog_writer *w;
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	struct scanned sc;
	uint64_t t = 0;
	int i;

	for (i = 0; i < PLOG_CALLCHAIN_DEPTH_MAX; i++)
		pcs[i] = 0x1000 + (uint64_t)i;
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_eq(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	ck_assert_int_eq(plog_writer__new(p[1], 0, &w), 0);
	ck_assert_int_eq(plog_writer__set_nowait(w, 8 << 20, 8 << 20, 100, 1000), 0);
	ck_assert_int_eq(plog_writer__append_initialize(w, 0, PLOG_CPU_GENERIC, 1000000000, 0, 0,
							"x"), 0);
	ck_assert_int_eq(plog_writer__append_pmcallocatedyn(w, 0, 7, 0, 0, "cpu-clock"), 0);
	for (i = 0; i < 600; i++) {
		uint32_t npc = i % 3 == 0 ? PLOG_CALLCHAIN_DEPTH_MAX : (uint32_t)(i % 17 + 1);

		REQUIRE(plog_writer__append_callchain(w, ++t, 1, 1, 7, 0, pcs, npc) == 0);
		if (i % 50 == 0) {
			read_available(p[0], &buf, &len, &cap);
			REQUIRE(plog_writer__flush(w) == 0);
		}
	}
	ck_assert_int_eq(plog_writer__append_closelog(w, ++t), 0);
	while (plog_writer__pending(w) > 0) {
		read_available(p[0], &buf, &len, &cap);
		ck_assert_int_eq(plog_writer__flush(w), 0);
	}
	read_available(p[0], &buf, &len, &cap);
	plog_writer__free(w);
	scan_log(buf, len, &sc);
	ck_assert_int_eq(sc.status, PLOG_STATUS_COMPLETE);
	ck_assert_uint_eq(sc.types[PLOG_TYPE_CALLCHAIN], 600);
	ck_assert(sc.ordered);
	free(buf);
	close(p[0]);
	close(p[1]);
}
END_TEST

/* A reader that never reads: __sync gives up after the idle time, stickily. */
START_TEST(test_writer_nowait_timeout)
{
	int p[2];
	struct plog_writer *w;
	uint64_t t = 0;
	int i, r = 0;

	signal(SIGPIPE, SIG_IGN);
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_eq(plog_writer__new(p[1], 0, &w), 0);
	ck_assert_int_eq(plog_writer__set_nowait(w, 1 << 20, 4 << 20, 50, 100), 0);
	ck_assert_int_eq(plog_writer__append_initialize(w, 0, PLOG_CPU_GENERIC, 1000000000, 0, 0,
							"x"), 0);
	ck_assert_int_eq(plog_writer__append_pmcallocatedyn(w, 0, 7, 0, 0, "cpu-clock"), 0);
	for (i = 0; i < 2000 && r == 0; i++)
		r = plog_writer__append_callchain(w, ++t, 1, 1, 7, 0, nowait_pcs, 8);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(plog_writer__append_closelog(w, ++t), 0);
	ck_assert_uint_gt(plog_writer__pending(w), 0);
	ck_assert_int_eq(plog_writer__sync(w), -ETIMEDOUT);
	ck_assert_int_eq(plog_writer__error(w), -ETIMEDOUT);
	ck_assert_int_eq(plog_writer__flush(w), -ETIMEDOUT);
	/* The pipe holds a prefix of the log: whatever fit, at most a torn tail. */
	close(p[1]);
	{
		static uint8_t buf[1 << 17];
		ssize_t n = read(p[0], buf, sizeof(buf));
		struct scanned sc;

		ck_assert_int_gt(n, 0);
		scan_log(buf, (size_t)n, &sc);
		ck_assert(sc.status == PLOG_STATUS_NO_CLOSELOG || sc.status == PLOG_STATUS_TORN);
		ck_assert_uint_gt(sc.types[PLOG_TYPE_CALLCHAIN], 0);
	}
	plog_writer__free(w);
	close(p[0]);
}
END_TEST

/* Bookkeeping that cannot be dropped, beyond max_bytes: the sticky -ENOBUFS. */
START_TEST(test_writer_nowait_enobufs)
{
	int p[2];
	struct plog_writer *w;
	char path[1000];
	uint64_t t = 0;
	int i, r = 0;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_eq(plog_writer__new(p[1], 0, &w), 0);
	ck_assert_int_eq(plog_writer__set_nowait(w, 65536, 262144, 10, 10), 0);
	ck_assert_int_eq(plog_writer__append_initialize(w, 0, PLOG_CPU_GENERIC, 1000000000, 0, 0,
							"x"), 0);
	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	/* 64 KiB fit in the pipe, 256 KiB in the backlog: about 330 MAP_INs of 1024 bytes. */
	for (i = 0; i < 1000 && r == 0; i++)
		r = plog_writer__append_map_in(w, ++t, 1, 0x1000 * (uint64_t)(i + 1), path);
	ck_assert_int_eq(r, -ENOBUFS);
	ck_assert_int_gt(i, 300);
	ck_assert_int_lt(i, 400);
	ck_assert_int_eq(plog_writer__append_sysexit(w, ++t, 1), -ENOBUFS);
	plog_writer__free(w);
	close(p[0]);
	close(p[1]);
}
END_TEST

/* A regular file in no-wait mode is written as before: nothing dropped, all there. */
START_TEST(test_writer_nowait_file)
{
	int fd = memfd_create("nowait", MFD_CLOEXEC);
	struct plog_writer *w;
	uint64_t t = 0;
	uint8_t *buf;
	struct stat st;
	struct scanned sc;
	int i;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(plog_writer__new(fd, 0, &w), 0);
	ck_assert_int_eq(plog_writer__set_nowait(w, 65536, 1 << 20, 10, 10), 0);
	ck_assert_int_eq(plog_writer__append_initialize(w, 0, PLOG_CPU_GENERIC, 1000000000, 0, 0,
							"x"), 0);
	ck_assert_int_eq(plog_writer__append_pmcallocatedyn(w, 0, 7, 0, 0, "cpu-clock"), 0);
	for (i = 0; i < 20000; i++)
		REQUIRE(plog_writer__append_callchain(w, ++t, 1, 1, 7, 0, nowait_pcs, 8) == 0);
	ck_assert_int_eq(plog_writer__append_closelog(w, ++t), 0);
	ck_assert_int_eq(plog_writer__sync(w), 0);
	ck_assert_uint_eq(plog_writer__stats(w)->dropped, 0);
	plog_writer__free(w);
	ck_assert_int_eq(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
	scan_log(buf, (size_t)st.st_size, &sc);
	ck_assert_int_eq(sc.status, PLOG_STATUS_COMPLETE);
	ck_assert_uint_eq(sc.types[PLOG_TYPE_CALLCHAIN], 20000);
	ck_assert_uint_eq(sc.types[PLOG_TYPE_DROPNOTIFY], 0);
	free(buf);
	close(fd);
}
END_TEST

/* ---- round trips ---- */

START_TEST(test_roundtrip_all_types)
{
	uint8_t *log;
	size_t n = make_all_types(&log);
	struct plog_reader *r;
	struct plog_record rec;
	bool seen[PLOG_TYPE_MAX] = { false };
	int k, types = 0;

	ck_assert_int_eq(plog_reader__new(0, &r), 0);
	ck_assert_int_eq(plog_reader__feed(r, log, n), 0);
	plog_reader__finish(r);
	while ((k = plog_reader__next(r, &rec)) > 0) {
		uint8_t again[PLOG_RECORD_MAX];

		/* Decoding then encoding gives back the very same bytes. */
		ck_assert_int_eq(plog_encode(&rec, again), (int)rec.length);
		ck_assert_mem_eq(again, rec.raw, rec.length);
		if (!seen[rec.type])
			types++;
		seen[rec.type] = true;
	}
	ck_assert_int_eq(k, 0);
	ck_assert_int_eq(plog_reader__status(r), PLOG_STATUS_COMPLETE);
	ck_assert_uint_eq(plog_reader__offset(r), n);
	ck_assert_uint_eq(plog_reader__trailing(r), 0);
	ck_assert_int_eq(types, 19);
	plog_reader__free(r);
	free(log);
}
END_TEST

START_TEST(test_roundtrip_extremes)
{
	static uint64_t pcs[PLOG_CALLCHAIN_DEPTH_MAX];
	char path[PLOG_PATH_MAX];
	struct plog_record recs[6], got;
	uint8_t buf[6 * PLOG_RECORD_MAX];
	size_t n = 0;
	struct plog_reader *r;

	for (size_t i = 0; i < ARRAY_SIZE(pcs); i++)
		pcs[i] = UINT64_MAX - i;
	memset(path, 'p', sizeof(path));
	path[0] = '/';
	path[PLOG_PATH_MAX - 1] = '\0';
	memset(recs, 0, sizeof(recs));
	recs[0].type = PLOG_TYPE_CALLCHAIN;
	recs[0].tsc = UINT64_MAX;
	recs[0].u.callchain.pid = INT32_MIN;
	recs[0].u.callchain.tid = INT32_MAX;
	recs[0].u.callchain.pmcid = 0xFFFFFFFE;
	recs[0].u.callchain.cpuflags = PLOG_CC_CPUFLAGS(0xFFFF, PLOG_CC_F_USERSPACE);
	recs[0].u.callchain.pc = pcs;
	recs[0].u.callchain.npc = PLOG_CALLCHAIN_DEPTH_MAX;
	recs[1].type = PLOG_TYPE_MAP_IN;
	recs[1].u.map_in.pid = -1;
	recs[1].u.map_in.start = UINT64_MAX;
	recs[1].u.map_in.path = path;
	recs[2].type = PLOG_TYPE_PROCEXEC;
	recs[2].u.procexec.path = path;
	recs[2].u.procexec.base = 1;
	recs[2].u.procexec.dyn = UINT64_MAX;
	recs[3].type = PLOG_TYPE_THR_CREATE;
	strcpy(recs[3].u.thr_create.name, "nineteen-characters");
	recs[3].u.thr_create.name[19] = '\0';
	recs[4].type = PLOG_TYPE_INITIALIZE;
	memset(recs[4].u.initialize.cpuid, 'c', 63);
	recs[4].u.initialize.ts_sec = INT64_MIN;
	recs[4].u.initialize.ts_nsec = 999999999;
	recs[5].type = PLOG_TYPE_PMCALLOCATEDYN;
	memset(recs[5].u.pmcallocatedyn.evname, 'e', 63);

	for (int i = 0; i < 6; i++) {
		int len = plog_encode(&recs[i], buf + n);

		ck_assert_int_gt(len, 0);
		n += (size_t)len;
	}
	ck_assert_int_eq(plog_reader__new(0, &r), 0);
	ck_assert_int_eq(plog_reader__feed(r, buf, n), 0);
	ck_assert_int_eq(plog_reader__next(r, &got), 1);
	ck_assert_uint_eq(got.length, PLOG_RECORD_MAX);
	ck_assert_uint_eq(got.tsc, UINT64_MAX);
	ck_assert_int_eq(got.u.callchain.pid, INT32_MIN);
	ck_assert_int_eq(got.u.callchain.tid, INT32_MAX);
	ck_assert_uint_eq(got.u.callchain.npc, 512);
	ck_assert_uint_eq(PLOG_CC_CPU(got.u.callchain.cpuflags), 0xFFFF);
	ck_assert_mem_eq(got.u.callchain.pc, pcs, sizeof(pcs));
	ck_assert_int_eq(plog_reader__next(r, &got), 1);
	ck_assert_uint_eq(got.length, 32 + 1024);
	ck_assert_str_eq(got.u.map_in.path, path);
	ck_assert_uint_eq(got.u.map_in.start, UINT64_MAX);
	ck_assert_int_eq(plog_reader__next(r, &got), 1);
	ck_assert_str_eq(got.u.procexec.path, path);
	ck_assert_uint_eq(got.u.procexec.dyn, UINT64_MAX);
	ck_assert_int_eq(plog_reader__next(r, &got), 1);
	ck_assert_str_eq(got.u.thr_create.name, "nineteen-characters");
	ck_assert_int_eq(plog_reader__next(r, &got), 1);
	ck_assert_uint_eq(strlen(got.u.initialize.cpuid), 63);
	ck_assert_int_eq(got.u.initialize.ts_sec, INT64_MIN);
	ck_assert_int_eq(plog_reader__next(r, &got), 1);
	ck_assert_uint_eq(strlen(got.u.pmcallocatedyn.evname), 63);
	ck_assert_int_eq(plog_reader__next(r, &got), 0);
	plog_reader__free(r);
}
END_TEST

/* ---- reader: chunking, prefixes, corruption ---- */

START_TEST(test_reader_chunkings_equal)
{
	uint8_t *log;
	size_t n = make_all_types(&log);
	struct parsed whole, piece;
	static const size_t chunks[] = { 1, 2, 3, 4, 5, 7, 13, 16, 17, 31, 64, 100, 4096 };

	parse(log, n, 0, 0, &whole);
	ck_assert_int_eq(whole.status, PLOG_STATUS_COMPLETE);
	ck_assert_uint_eq(whole.n, 27);
	for (size_t i = 0; i < ARRAY_SIZE(chunks); i++) {
		parse(log, n, chunks[i], 0, &piece);
		assert_same(&whole, &piece);
		/* Read into the reader's own buffer: the same records. */
		g_in_place = true;
		parse(log, n, chunks[i], 0, &piece);
		g_in_place = false;
		assert_same(&whole, &piece);
	}
	free(log);
}
END_TEST

/* plog_reader__space/__commit: a commit beyond the space is refused; space 0 is no space. */
START_TEST(test_reader_space_bounds)
{
	struct plog_reader *r = NULL;
	void *space;

	ck_assert_int_eq(plog_reader__new(0, &r), 0);
	ck_assert_int_eq(plog_reader__space(r, 0, &space), -EINVAL);
	ck_assert_int_eq(plog_reader__space(r, 100, &space), 0);
	ck_assert_int_eq(plog_reader__commit(r, SIZE_MAX), -EINVAL);
	ck_assert_int_eq(plog_reader__status(r), PLOG_STATUS_NEED_DATA);
	plog_reader__free(r);
}
END_TEST

START_TEST(test_reader_every_prefix)
{
	uint8_t *log;
	size_t n = make_all_types(&log);
	struct parsed whole, p;

	parse(log, n, 0, 0, &whole);
	for (size_t len = 0; len <= n; len++) {
		size_t whole_recs = 0;
		bool boundary = len == 0;

		/* The records that fit entirely in the prefix. */
		for (size_t i = 0; i < whole.n; i++) {
			size_t end = i + 1 < whole.n ? whole.offset[i + 1] : n;

			if (end <= len)
				whole_recs++;
			if (end == len)
				boundary = true;
		}
		parse(log, len, 0, 0, &p);
		REQUIRE((p.n) == (whole_recs));
		for (size_t i = 0; i < p.n; i++)
			REQUIRE((p.hash[i]) == (whole.hash[i]));
		if (len == n)
			REQUIRE((p.status) == (PLOG_STATUS_COMPLETE));
		else if (boundary)
			REQUIRE((p.status) == (PLOG_STATUS_NO_CLOSELOG));
		else {
			REQUIRE((p.status) == (PLOG_STATUS_TORN));
			REQUIRE((p.end_offset) == (whole.offset[whole_recs]));
			REQUIRE((p.trailing) == (len - whole.offset[whole_recs]));
		}
		/* The same prefix one byte at a time gives the same result. */
		if (len % 7 == 0) {
			struct parsed q;

			parse(log, len, 1, 0, &q);
			assert_same(&p, &q);
		}
	}
	free(log);
}
END_TEST

START_TEST(test_reader_every_corruption)
{
	uint8_t *log, *bad;
	size_t n = make_all_types(&log);
	struct parsed whole, p, q;
	static const uint8_t xors[] = { 0x01, 0x80, 0xff };
	size_t errors = 0, valid = 0;

	parse(log, n, 0, 0, &whole);
	bad = malloc(n);
	REQUIRE((bad) != NULL);
	for (size_t pos = 0; pos < n; pos++) {
		size_t rec = 0;

		while (rec + 1 < whole.n && whole.offset[rec + 1] <= pos)
			rec++;
		for (size_t v = 0; v < ARRAY_SIZE(xors) + 1; v++) {
			memcpy(bad, log, n);
			if (v < ARRAY_SIZE(xors))
				bad[pos] ^= xors[v];
			else
				bad[pos] = 0;
			if (bad[pos] == log[pos])
				continue;
			parse(bad, n, 0, 0, &p);
			/* Every record before the damaged one decodes as before. */
			REQUIRE((p.n) >= (p.status == PLOG_STATUS_ERROR ? 0 : 1));
			for (size_t i = 0; i < rec && i < p.n; i++)
				REQUIRE((p.hash[i]) == (whole.hash[i]));
			if (p.status == PLOG_STATUS_ERROR) {
				REQUIRE((p.n) >= (rec));
				REQUIRE(p.err_kind > PLOG_ERR_NONE && p.err_kind < PLOG_ERR_MAX);
				REQUIRE((p.err_offset) >= (whole.offset[rec]));
				errors++;
			} else {
				valid++;
			}
			/* Fed in odd pieces, the damaged log reads the same. */
			if ((pos + v) % 5 == 0) {
				parse(bad, n, 3, 0, &q);
				assert_same(&p, &q);
			}
		}
	}
	/* Both outcomes occur: damage to fields parses, damage to headers does not. */
	REQUIRE((errors) > (100));
	REQUIRE((valid) > (100));
	free(bad);
	free(log);
}
END_TEST

/* Build a stream: a valid INITIALIZE and then @extra bytes. */
static size_t with_init(const void *extra, size_t len, uint8_t *out)
{
	struct plog_record init = { .type = PLOG_TYPE_INITIALIZE };
	int n = plog_encode(&init, out);

	ck_assert_int_eq(n, 112);
	memcpy(out + n, extra, len);
	return (size_t)n + len;
}

/*
 * The record @rec (@len bytes) after a valid INITIALIZE must give @kind at offset
 * 112.  Errors visible in the header word must be reported even when the stream
 * ends right after it; errors inside the body need the body (else: torn).
 */
static void expect_error(const uint8_t *rec, size_t len, enum plog_error_kind kind)
{
	uint8_t buf[8192];
	size_t n = with_init(rec, len, buf);
	struct parsed p;
	bool in_header = kind != PLOG_ERR_BAD_STRING || len > PLOG_PATH_MAX; /* the path case */

	parse(buf, n, 0, 0, &p);
	ck_assert_uint_eq(p.n, 1);
	ck_assert_int_eq(p.status, PLOG_STATUS_ERROR);
	ck_assert_int_eq(p.err_kind, kind);
	ck_assert_uint_eq(p.err_offset, 112);
	parse(buf, 112 + 4, 0, 0, &p);
	ck_assert_uint_eq(p.n, 1);
	if (in_header) {
		ck_assert_int_eq(p.status, PLOG_STATUS_ERROR);
		ck_assert_int_eq(p.err_kind, kind);
	} else {
		ck_assert_int_eq(p.status, PLOG_STATUS_TORN);
	}
}

static void hdr(uint8_t *b, uint32_t type, uint32_t len)
{
	memset(b, 0, len < 4200 ? len : 4200);
	util_put_le32(b, PLOG_HEADER(type, len));
}

START_TEST(test_reader_error_kinds)
{
	uint8_t b[8192];
	struct parsed p;
	size_t n;

	/* Bad magic. */
	hdr(b, PLOG_TYPE_DROPNOTIFY, 16);
	b[3] = 0xEF;
	expect_error(b, 16, PLOG_ERR_BAD_MAGIC);
	/* Bad magic is reported even for a stream that then ends early. */
	n = with_init(b, 4, b + 4096);
	parse(b + 4096, n, 0, 0, &p);
	ck_assert_int_eq(p.err_kind, PLOG_ERR_BAD_MAGIC);

	/* Lengths: 0, under 16, over 4128, not a multiple of 4, short for the type. */
	hdr(b, PLOG_TYPE_DROPNOTIFY, 0);
	expect_error(b, 16, PLOG_ERR_BAD_LENGTH);
	hdr(b, PLOG_TYPE_DROPNOTIFY, 12);
	expect_error(b, 16, PLOG_ERR_BAD_LENGTH);
	hdr(b, PLOG_TYPE_CALLCHAIN, 4136);
	expect_error(b, 4136, PLOG_ERR_BAD_LENGTH);
	hdr(b, PLOG_TYPE_DROPNOTIFY, 18);
	expect_error(b, 20, PLOG_ERR_BAD_LENGTH);
	hdr(b, PLOG_TYPE_CALLCHAIN, 24); /* libpmc underflows its PC count here */
	expect_error(b, 24, PLOG_ERR_BAD_LENGTH);
	hdr(b, PLOG_TYPE_CALLCHAIN, 32); /* zero PCs */
	expect_error(b, 32, PLOG_ERR_BAD_LENGTH);
	hdr(b, PLOG_TYPE_CALLCHAIN, 44); /* 1.5 PCs */
	expect_error(b, 44, PLOG_ERR_BAD_LENGTH);
	hdr(b, PLOG_TYPE_INITIALIZE, 108);
	expect_error(b, 108, PLOG_ERR_BAD_LENGTH);
	hdr(b, PLOG_TYPE_PROC_CREATE, 40);
	expect_error(b, 40, PLOG_ERR_BAD_LENGTH);
	hdr(b, PLOG_TYPE_MAP_IN, 32); /* no room for the path's NUL */
	expect_error(b, 32, PLOG_ERR_BAD_LENGTH);

	/* Unknown types: 0, 4 and 21.. */
	hdr(b, 0, 16);
	expect_error(b, 16, PLOG_ERR_UNKNOWN_TYPE);
	hdr(b, 4, 16);
	expect_error(b, 16, PLOG_ERR_UNKNOWN_TYPE);
	hdr(b, 200, 16);
	expect_error(b, 16, PLOG_ERR_UNKNOWN_TYPE);

	/* Strings without NUL, paths over 1024. */
	hdr(b, PLOG_TYPE_MAP_IN, 40);
	memset(b + 32, 'a', 8);
	expect_error(b, 40, PLOG_ERR_BAD_STRING);
	hdr(b, PLOG_TYPE_MAP_IN, 32 + 1028);
	memset(b + 32, 'a', 1027);
	expect_error(b, 32 + 1028, PLOG_ERR_BAD_STRING);
	hdr(b, PLOG_TYPE_PMCATTACH, 28);
	memset(b + 24, 'a', 4);
	expect_error(b, 28, PLOG_ERR_BAD_STRING);
	hdr(b, PLOG_TYPE_PROCEXEC, 44);
	memset(b + 40, 'a', 4);
	expect_error(b, 44, PLOG_ERR_BAD_STRING);
	hdr(b, PLOG_TYPE_PROC_CREATE, 44);
	memset(b + 24, 'a', 20);
	expect_error(b, 44, PLOG_ERR_BAD_STRING);
	hdr(b, PLOG_TYPE_THR_CREATE, 52);
	memset(b + 32, 'a', 20);
	expect_error(b, 52, PLOG_ERR_BAD_STRING);
	hdr(b, PLOG_TYPE_PMCALLOCATEDYN, 96);
	memset(b + 32, 'a', 64);
	expect_error(b, 96, PLOG_ERR_BAD_STRING);
	hdr(b, PLOG_TYPE_INITIALIZE, 112);
	memset(b + 48, 'a', 64);
	expect_error(b, 112, PLOG_ERR_BAD_STRING);

	/* Once in error, the reader stays in error. */
	{
		struct plog_reader *r;
		struct plog_record rec;

		hdr(b, 0, 16);
		ck_assert_int_eq(plog_reader__new(0, &r), 0);
		ck_assert_int_eq(plog_reader__feed(r, b, 16), 0);
		ck_assert_int_eq(plog_reader__next(r, &rec), -EPROTO);
		ck_assert_int_eq(plog_reader__feed(r, b, 16), 0);
		ck_assert_int_eq(plog_reader__next(r, &rec), -EPROTO);
		ck_assert_str_eq(plog_error_kind_name(plog_reader__error(r)->kind), "unknown type");
		ck_assert_uint_eq(plog_reader__trailing(r), 32);
		plog_reader__free(r);
	}
	ck_assert_int_eq(plog_reader__new(0x80, &(struct plog_reader *){ NULL }), -EINVAL);
}
END_TEST

START_TEST(test_reader_after_closelog_and_lenient)
{
	uint8_t b[8192], *log;
	size_t n = make_all_types(&log), m;
	struct parsed p;

	/* Bytes after CLOSELOG are counted, never decoded. */
	memcpy(b, log, n);
	memset(b + n, 0xAA, 10);
	parse(b, n + 10, 0, 0, &p);
	ck_assert_int_eq(p.status, PLOG_STATUS_COMPLETE);
	ck_assert_uint_eq(p.n, 27);
	ck_assert_uint_eq(p.trailing, 10);
	ck_assert_uint_eq(p.end_offset, n);
	parse(b, n + 10, 1, 0, &p);
	ck_assert_uint_eq(p.trailing, 10);
	g_in_place = true;
	parse(b, n + 10, 3, 0, &p);
	g_in_place = false;
	ck_assert_uint_eq(p.n, 27);
	ck_assert_uint_eq(p.trailing, 10);

	/* --lenient: unknown types are skipped by their (checked) length. */
	hdr(b, 99, 24);
	hdr(b + 24, PLOG_TYPE_DROPNOTIFY, 16);
	m = with_init(b, 40, b + 200);
	parse(b + 200, m, 0, PLOG_READER_SKIP_UNKNOWN, &p);
	ck_assert_int_eq(p.status, PLOG_STATUS_NO_CLOSELOG);
	ck_assert_uint_eq(p.n, 2);
	ck_assert_uint_eq(p.type[1], PLOG_TYPE_DROPNOTIFY);
	/* ... but a bad length of an unknown type is still an error. */
	hdr(b, 99, 4200);
	m = with_init(b, 16, b + 4400);
	parse(b + 4400, m, 0, PLOG_READER_SKIP_UNKNOWN, &p);
	ck_assert_int_eq(p.err_kind, PLOG_ERR_BAD_LENGTH);
	free(log);
}
END_TEST

/* FreeBSD's soft PMCs put the name at offset 40 (pmclog-format.md 5.4). */
START_TEST(test_reader_allocatedyn_offset_40)
{
	uint8_t b[96];
	struct plog_reader *r;
	struct plog_record rec;

	hdr(b, PLOG_TYPE_PMCALLOCATEDYN, 96);
	util_put_le32(b + 16, 0x00000F00);
	util_put_le64(b + 32, 1000); /* the rate the kernel writes */
	memcpy(b + 40, "SOFT-CLOCK.HARD", 16);
	ck_assert_int_eq(plog_reader__new(0, &r), 0);
	ck_assert_int_eq(plog_reader__feed(r, b, 96), 0);
	ck_assert_int_eq(plog_reader__next(r, &rec), 1);
	ck_assert(rec.u.pmcallocatedyn.name_at_40);
	ck_assert_str_eq(rec.u.pmcallocatedyn.evname, "SOFT-CLOCK.HARD");
	plog_reader__free(r);

	/* A normal record keeps its name at 32. */
	hdr(b, PLOG_TYPE_PMCALLOCATEDYN, 96);
	memcpy(b + 32, "cpu-clock", 10);
	memcpy(b + 42, "zzz", 4);
	ck_assert_int_eq(plog_reader__new(0, &r), 0);
	ck_assert_int_eq(plog_reader__feed(r, b, 96), 0);
	ck_assert_int_eq(plog_reader__next(r, &rec), 1);
	ck_assert(!rec.u.pmcallocatedyn.name_at_40);
	ck_assert_str_eq(rec.u.pmcallocatedyn.evname, "cpu-clock");
	plog_reader__free(r);
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(plog_type_name(PLOG_TYPE_MAP_IN), "map-in");
	ck_assert_str_eq(plog_type_symbol(PLOG_TYPE_CALLCHAIN), "CALLCHAIN");
	ck_assert_ptr_null(plog_type_name(0));
	ck_assert_ptr_null(plog_type_name(4));
	ck_assert_ptr_null(plog_type_name(PLOG_TYPE_MAX));
	ck_assert_str_eq(plog_cpu_name(0x400), "GENERIC");
	ck_assert_ptr_null(plog_cpu_name(0x12345));
	ck_assert_uint_eq(plog_type_min_length(PLOG_TYPE_THR_CREATE), 52);
	ck_assert_uint_eq(plog_type_min_length(PLOG_TYPE_CALLCHAIN), 40);
	ck_assert_str_eq(plog_status_name(PLOG_STATUS_TORN), "torn final record");
	ck_assert_str_eq(plog_error_kind_name(PLOG_ERR_MAX), "unknown error");
}
END_TEST

static Suite *pmclog_suite(void)
{
	Suite *s = suite_create("pmclog");
	TCase *tc;

	tc = tcase_create("golden");
	tcase_add_test(tc, test_golden_initialize);
	tcase_add_test(tc, test_golden_callchain);
	tcase_add_test(tc, test_golden_map_in_kernel);
	tcase_add_test(tc, test_golden_v2_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("encode");
	tcase_add_test(tc, test_encode_limits);
	tcase_add_test(tc, test_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("writer");
	tcase_add_test(tc, test_writer_all_types_file);
	tcase_add_test(tc, test_fixture_freebsd_events);
	tcase_add_test(tc, test_writer_stream_rules);
	tcase_add_test(tc, test_writer_restart);
	tcase_add_test(tc, test_writer_enospc_sticky);
	tcase_add_test(tc, test_writer_epipe);
	tcase_add_test(tc, test_writer_short_write_truncates);
	suite_add_tcase(s, tc);

	tc = tcase_create("writer-nowait");
	tcase_add_test(tc, test_writer_nowait_pipe);
	tcase_add_test(tc, test_writer_nowait_socket);
	tcase_add_test(tc, test_writer_nowait_pipe_big);
	tcase_add_test(tc, test_writer_nowait_timeout);
	tcase_add_test(tc, test_writer_nowait_enobufs);
	tcase_add_test(tc, test_writer_nowait_file);
	suite_add_tcase(s, tc);

	tc = tcase_create("roundtrip");
	tcase_add_test(tc, test_roundtrip_all_types);
	tcase_add_test(tc, test_roundtrip_extremes);
	suite_add_tcase(s, tc);

	tc = tcase_create("reader");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_reader_chunkings_equal);
	tcase_add_test(tc, test_reader_space_bounds);
	tcase_add_test(tc, test_reader_every_prefix);
	tcase_add_test(tc, test_reader_every_corruption);
	tcase_add_test(tc, test_reader_error_kinds);
	tcase_add_test(tc, test_reader_after_closelog_and_lenient);
	tcase_add_test(tc, test_reader_allocatedyn_offset_40);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(pmclog_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
