/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-collector-ring.c: Check suite for the collector's ring decoder.
 *
 * IMPLEMENTATION NOTES
 *   The rings are built in memory with the kernel's layout (a metadata page, then
 *   a power-of-two data area) through coll_cpu__from_buffer(): records that wrap
 *   the end, records whose sizes lie, unknown types.  No perf_event_open.
 */
#include <check.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "collector-int.h"
#include "hwpmcd/collector.h"

#define PAGE 4096
#define DATA 4096

struct ring {
	uint8_t mem[PAGE + DATA] __attribute__((aligned(4096)));
	uint64_t head;
};

/* The struct asks for page alignment, which calloc() does not give. */
static struct ring *ring_new(void)
{
	struct ring *r = aligned_alloc(4096, sizeof(*r));

	ck_assert_ptr_nonnull(r);
	memset(r, 0, sizeof(*r));
	return r;
}

static void put(struct ring *r, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		r->mem[PAGE + ((r->head + i) & (DATA - 1))] = b[i];
	r->head += n;
}

static void put64(struct ring *r, uint64_t v)
{
	put(r, &v, 8);
}

static void publish(struct ring *r)
{
	struct perf_event_mmap_page *pg = (void *)r->mem;

	pg->data_head = r->head;
}

static void hdr(struct ring *r, uint32_t type, uint16_t misc, uint16_t size)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = size };

	put(r, &h, sizeof(h));
}

/* sample_id trailer: TID, TIME, CPU, IDENTIFIER */
static void sample_id(struct ring *r, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	put64(r, (uint64_t)tid << 32 | pid);
	put64(r, time);
	put64(r, cpu);
	put64(r, 77);
}

/* A fp-mode sample: id, ip, pid/tid, time, cpu, period, callchain. */
static void sample(struct ring *r, uint64_t time, uint32_t nr, const uint64_t *chain)
{
	hdr(r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, (uint16_t)(8 + 7 * 8 + nr * 8));
	put64(r, 77);
	put64(r, 0x401000);
	put64(r, (uint64_t)1235 << 32 | 1234);
	put64(r, time);
	put64(r, 1);
	put64(r, 10000);
	put64(r, nr);
	for (uint32_t i = 0; i < nr; i++)
		put64(r, chain[i]);
}

static struct coll_cpu *open_ring(struct ring *r, enum coll_callgraph cg)
{
	static const uint64_t ids[] = { 77 };
	struct coll_cpu *c = NULL;

	ck_assert_int_eq(coll_cpu__from_buffer(r->mem, sizeof(r->mem), PAGE, coll_sample_type(cg),
					       ids, 1, &c),
			 0);
	return c;
}

START_TEST(test_sample_and_markers)
{
	struct ring *r = ring_new();
	const uint64_t chain[] = { (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000010,
				   (uint64_t)PERF_CONTEXT_USER, 0x401000, 0x401234 };
	struct coll_cpu *c = open_ring(r, COLL_CG_FP);
	struct rec rec;
	uint64_t pcs[8];

	sample(r, 500, 5, chain);
	publish(r);
	ck_assert_uint_eq(coll_cpu__snapshot(c), r->head);
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 1);
	ck_assert_int_eq(rec.type, REC_SAMPLE);
	ck_assert_uint_eq(rec.time, 500);
	ck_assert_uint_eq(rec.pid, 1234);
	ck_assert_uint_eq(rec.tid, 1235);
	ck_assert_uint_eq(rec.cpu, 1);
	ck_assert_int_eq(rec.u.sample.mode, REC_MODE_USER);
	ck_assert_int_eq(coll_cpu__event_index(c, rec.u.sample.id), 0);
	ck_assert_int_eq(coll_cpu__event_index(c, 78), -1);
	ck_assert_uint_eq(coll_sample_pcs(&rec.u.sample, pcs, 8), 3);
	ck_assert_uint_eq(pcs[0], 0xffffffff81000010);
	ck_assert_uint_eq(pcs[1], 0x401000);
	ck_assert_uint_eq(pcs[2], 0x401234);
	ck_assert_uint_eq(coll_sample_pcs(&rec.u.sample, pcs, 2), 2); /* the depth cap */
	/* Peeking again without advancing gives the same record. */
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 1);
	coll_cpu__advance(c);
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 0);
	coll_cpu__release(c);
	ck_assert_uint_eq(((struct perf_event_mmap_page *)(void *)r->mem)->data_tail, r->head);

	/* An empty chain: the IP is the only PC. */
	sample(r, 600, 1, (const uint64_t[]){ (uint64_t)PERF_CONTEXT_USER });
	publish(r);
	coll_cpu__snapshot(c);
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 1);
	ck_assert_uint_eq(coll_sample_pcs(&rec.u.sample, pcs, 8), 1);
	ck_assert_uint_eq(pcs[0], 0x401000);

	/* A frame-pointer walk that ends in the null return address: no PC 0. */
	coll_cpu__advance(c);
	sample(r, 700, 4, (const uint64_t[]){ (uint64_t)PERF_CONTEXT_USER, 0x401000, 0x401234, 0 });
	publish(r);
	coll_cpu__snapshot(c);
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 1);
	ck_assert_uint_eq(rec.time, 700);
	ck_assert_uint_eq(coll_sample_pcs(&rec.u.sample, pcs, 8), 2);
	ck_assert_uint_eq(pcs[0], 0x401000);
	ck_assert_uint_eq(pcs[1], 0x401234);
	coll_cpu__free(c);
	free(r);
}
END_TEST

START_TEST(test_wrapped_record)
{
	struct ring *r = ring_new();
	struct coll_cpu *c = open_ring(r, COLL_CG_FP);
	uint64_t chain[20];
	struct rec rec;
	int n = 0;

	for (int i = 0; i < 20; i++)
		chain[i] = 0x400000 + (uint64_t)i;
	/* Fill, consume, and write records until one straddles the ring end. */
	while (r->head + 8 + 7 * 8 + 20 * 8 <= DATA - 40) {
		sample(r, (uint64_t)n, 20, chain);
		n++;
	}
	publish(r);
	coll_cpu__snapshot(c);
	while (coll_cpu__peek(c, &rec) == 1)
		coll_cpu__advance(c);
	coll_cpu__release(c);
	sample(r, 999, 20, chain); /* starts 40 bytes or less before the end */
	publish(r);
	coll_cpu__snapshot(c);
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 1);
	ck_assert_uint_eq(rec.time, 999);
	ck_assert_uint_eq(rec.u.sample.nr_callchain, 20);
	for (int i = 0; i < 20; i++)
		ck_assert_uint_eq(rec.u.sample.callchain[i], 0x400000 + (uint64_t)i);
	ck_assert_uint_eq(coll_cpu__stats(c)->wrapped, 1);
	coll_cpu__advance(c);
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 0);
	coll_cpu__free(c);
	free(r);
}
END_TEST

START_TEST(test_sideband)
{
	struct ring *r = ring_new();
	struct coll_cpu *c = open_ring(r, COLL_CG_FP);
	static const char name[24] = "/usr/lib/libdemo.so";
	struct rec rec;

	/* MMAP2: 8 + 64 + filename + sample_id */
	hdr(r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, 8 + 64 + 24 + 32);
	put64(r, (uint64_t)42 << 32 | 42);
	put64(r, 0x7f0000001000);
	put64(r, 0x2000);
	put64(r, 0x1000);
	put64(r, (uint64_t)1 << 32 | 8); /* maj 8, min 1 */
	put64(r, 123456);
	put64(r, 7);
	put64(r, (uint64_t)2 << 32 | 5); /* prot r-x, flags MAP_PRIVATE */
	put(r, name, sizeof(name));
	sample_id(r, 42, 42, 100, 0);
	/* COMM with exec */
	hdr(r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, 8 + 8 + 16 + 32);
	put64(r, (uint64_t)43 << 32 | 42);
	put(r, "demo\0\0\0\0\0\0\0\0\0\0\0\0", 16);
	sample_id(r, 42, 43, 101, 0);
	/* FORK */
	hdr(r, PERF_RECORD_FORK, 0, 8 + 24 + 32);
	put64(r, (uint64_t)42 << 32 | 50);
	put64(r, (uint64_t)42 << 32 | 50);
	put64(r, 102);
	sample_id(r, 50, 50, 102, 1);
	/* LOST */
	hdr(r, PERF_RECORD_LOST, 0, 8 + 16 + 32);
	put64(r, 77);
	put64(r, 9);
	sample_id(r, 0, 0, 103, 1);
	/* an unknown type (KSYMBOL) is skipped */
	hdr(r, PERF_RECORD_KSYMBOL, 0, 8 + 32);
	sample_id(r, 0, 0, 104, 1);
	/* MMAP2 too short for its type: skipped and counted, the pass goes on */
	hdr(r, PERF_RECORD_MMAP2, 0, 8 + 32);
	sample_id(r, 0, 0, 105, 1);
	/* EXIT */
	hdr(r, PERF_RECORD_EXIT, 0, 8 + 24 + 32);
	put64(r, (uint64_t)42 << 32 | 50);
	put64(r, (uint64_t)50 << 32 | 50);
	put64(r, 106);
	sample_id(r, 50, 50, 106, 1);
	publish(r);

	coll_cpu__snapshot(c);
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 1);
	ck_assert_int_eq(rec.type, REC_MMAP);
	ck_assert_uint_eq(rec.pid, 42);
	ck_assert_uint_eq(rec.time, 100);
	ck_assert_uint_eq(rec.u.mmap.addr, 0x7f0000001000);
	ck_assert_uint_eq(rec.u.mmap.len, 0x2000);
	ck_assert_uint_eq(rec.u.mmap.pgoff, 0x1000);
	ck_assert_uint_eq(rec.u.mmap.dev_major, 8);
	ck_assert_uint_eq(rec.u.mmap.dev_minor, 1);
	ck_assert_uint_eq(rec.u.mmap.inode, 123456);
	ck_assert_uint_eq(rec.u.mmap.prot, 5);
	ck_assert_str_eq(rec.u.mmap.filename, name);
	coll_cpu__advance(c);
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 1);
	ck_assert_int_eq(rec.type, REC_COMM);
	ck_assert(rec.u.comm.exec);
	ck_assert_str_eq(rec.u.comm.comm, "demo");
	ck_assert_uint_eq(rec.tid, 43);
	coll_cpu__advance(c);
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 1);
	ck_assert_int_eq(rec.type, REC_FORK);
	ck_assert_uint_eq(rec.pid, 50);
	ck_assert_uint_eq(rec.u.task.ppid, 42);
	coll_cpu__advance(c);
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 1);
	ck_assert_int_eq(rec.type, REC_LOST);
	ck_assert_uint_eq(rec.u.lost.lost, 9);
	coll_cpu__advance(c);
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 1);
	ck_assert_int_eq(rec.type, REC_EXIT);
	ck_assert_uint_eq(rec.time, 106);
	coll_cpu__advance(c);
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 0);
	ck_assert_uint_eq(coll_cpu__stats(c)->lost, 9);
	ck_assert_uint_eq(coll_cpu__stats(c)->unknown, 1);
	ck_assert_uint_eq(coll_cpu__stats(c)->bad, 1);
	coll_cpu__free(c);
	free(r);
}
END_TEST

START_TEST(test_lying_sizes)
{
	struct ring *r = ring_new();
	struct coll_cpu *c = open_ring(r, COLL_CG_FP);
	struct rec rec;
	const uint64_t chain[] = { 0x401000 };

	/* A size beyond head: the pass is dropped, nothing read past head. */
	sample(r, 1, 1, chain);
	hdr(r, PERF_RECORD_SAMPLE, 0, 4000);
	publish(r);
	coll_cpu__snapshot(c);
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 1);
	coll_cpu__advance(c);
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 0);
	ck_assert_uint_eq(coll_cpu__stats(c)->bad, 1);
	coll_cpu__release(c);
	/* A size under the header, and one that is not a multiple of 8. */
	hdr(r, PERF_RECORD_SAMPLE, 0, 4);
	put64(r, 0);
	publish(r);
	coll_cpu__snapshot(c);
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 0);
	ck_assert_uint_eq(coll_cpu__stats(c)->bad, 2);
	hdr(r, PERF_RECORD_SAMPLE, 0, 20);
	put64(r, 0);
	put64(r, 0);
	publish(r);
	coll_cpu__snapshot(c);
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 0);
	ck_assert_uint_eq(coll_cpu__stats(c)->bad, 3);
	/* A callchain count larger than the record: skipped, counted. */
	hdr(r, PERF_RECORD_SAMPLE, 0, 8 + 7 * 8);
	for (int i = 0; i < 6; i++)
		put64(r, 1);
	put64(r, 1000000);
	sample(r, 2, 1, chain);
	publish(r);
	coll_cpu__snapshot(c);
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 1);
	ck_assert_uint_eq(rec.time, 2);
	ck_assert_uint_eq(coll_cpu__stats(c)->bad, 4);
	coll_cpu__free(c);
	free(r);
}
END_TEST

START_TEST(test_dwarf_sample)
{
	struct ring *r = ring_new();
	struct coll_cpu *c = open_ring(r, COLL_CG_DWARF);
	uint32_t nregs = (uint32_t)__builtin_popcountll(coll_regs_user_mask());
	struct rec rec;
	uint16_t size = (uint16_t)(8 + 7 * 8 + 8 + 8 + nregs * 8 + 8 + 64 + 8);

	ck_assert_uint_eq(nregs, 20); /* 24 registers less DS, ES, FS, GS */
	hdr(r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, size);
	put64(r, 77);
	put64(r, 0x401000);
	put64(r, (uint64_t)7 << 32 | 7);
	put64(r, 9);
	put64(r, 0);
	put64(r, 1);
	put64(r, 1);
	put64(r, 0x401000); /* chain */
	put64(r, 2);	    /* abi 64 */
	for (uint32_t i = 0; i < nregs; i++)
		put64(r, 0x1000 + i);
	put64(r, 64); /* stack size */
	for (int i = 0; i < 8; i++)
		put64(r, 0xabcd0000 + (uint64_t)i);
	put64(r, 1000); /* a dyn_size larger than the copy: clamped */
	publish(r);
	coll_cpu__snapshot(c);
	ck_assert_int_eq(coll_cpu__peek(c, &rec), 1);
	ck_assert_uint_eq(rec.u.sample.regs_abi, 2);
	ck_assert_uint_eq(rec.u.sample.nr_regs, nregs);
	ck_assert_uint_eq(rec.u.sample.regs[7], 0x1007);
	ck_assert_uint_eq(rec.u.sample.stack_size, 64);
	ck_assert_uint_eq(rec.u.sample.stack_dyn_size, 64);
	ck_assert_ptr_nonnull(rec.u.sample.stack);
	coll_cpu__free(c);
	free(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("collector-ring");
	TCase *tc = tcase_create("decode");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_sample_and_markers);
	tcase_add_test(tc, test_wrapped_record);
	tcase_add_test(tc, test_sideband);
	tcase_add_test(tc, test_lying_sizes);
	tcase_add_test(tc, test_dwarf_sample);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
