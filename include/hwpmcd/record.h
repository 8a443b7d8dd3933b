/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * record.h: neutral decoded kernel records (owned by the collector, no code).
 *
 * PUBLIC INTERFACES
 *   struct rec, enum rec_type and one struct per record kind.
 *
 * IMPLEMENTATION NOTES
 *   These are views: pointers (callchain, regs, stack, filename) point into the
 *   collector's ring or its per-CPU scratch buffer and stay valid only until the
 *   collector releases the record (the end of the coll_record_fn callback that
 *   received it).  No perf ABI type leaks out: the collector translates.
 */
#ifndef HWPMCD_RECORD_H
#define HWPMCD_RECORD_H

#include <stdbool.h>
#include <stdint.h>

enum rec_type {
	REC_SAMPLE = 0,
	REC_MMAP,     /* an mmap with its file identity (PERF_RECORD_MMAP2) */
	REC_COMM,     /* a rename, or an exec when comm.exec */
	REC_FORK,     /* a new process (pid != ppid) or thread */
	REC_EXIT,     /* a thread or process exit */
	REC_LOST,     /* the kernel dropped records: the ring was full */
	REC_THROTTLE, /* the kernel throttled an event (too many interrupts) */
	REC_UNTHROTTLE,
	REC_TYPE_MAX
};

/* Sample CPU mode (PERF_RECORD_MISC_CPUMODE_MASK values, translated). */
enum rec_mode {
	REC_MODE_UNKNOWN = 0,
	REC_MODE_KERNEL,
	REC_MODE_USER,
	REC_MODE_HYPERVISOR,
	REC_MODE_GUEST,
	REC_MODE_MAX
};

#define REC_REGS_USER_MAX 24

struct rec_sample {
	uint64_t id;	 /* perf event id: tells which event fired */
	uint64_t ip;
	uint64_t period;
	enum rec_mode mode;
	uint32_t nr_callchain;	  /* entries, context markers included */
	const uint64_t *callchain; /* 8-byte aligned: ring records and scratch are */
	uint64_t regs_abi;	  /* 0: no user registers (kernel thread) */
	uint32_t nr_regs;
	uint64_t regs[REC_REGS_USER_MAX]; /* in the order of the sample_regs_user mask bits */
	uint64_t stack_size;	  /* requested bytes present in the record */
	uint64_t stack_dyn_size;  /* of which valid (only these may be read) */
	const uint8_t *stack;
};

struct rec_mmap {
	uint64_t addr, len, pgoff;
	uint32_t dev_major, dev_minor;
	uint64_t inode, inode_generation;
	uint32_t prot, flags;
	const char *filename; /* NUL-terminated inside the record */
};

struct rec_comm {
	bool exec;
	const char *comm; /* NUL-terminated, at most 15 characters on Linux */
};

struct rec_task {
	uint32_t ppid, ptid;
};

struct rec_lost {
	uint64_t id;
	uint64_t lost;
};

struct rec {
	enum rec_type type;
	uint64_t time; /* CLOCK_MONOTONIC nanoseconds */
	uint32_t cpu;
	uint32_t pid, tid;
	union {
		struct rec_sample sample;
		struct rec_mmap mmap;
		struct rec_comm comm;
		struct rec_task task;
		struct rec_lost lost;
	} u;
};

#endif /* HWPMCD_RECORD_H */
