/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * collector.h: per-CPU perf_event_open counters and their ring buffer.
 *
 * PUBLIC INTERFACES
 *   struct coll_config     what to sample and how (events, call graph, ring size)
 *   struct coll_cpu        the perf fds of one CPU and their shared ring
 *   coll_cpu__open(), __free(), __enable(), __disable(), __fd(), __snapshot(),
 *   __peek(), __advance(), __release(), __event_index(), __stats(), __set_bpf()
 *   coll_max_sample_rate(), coll_max_stack()
 *
 * IMPLEMENTATION NOTES
 *   One ring per CPU is shared by all events of that CPU (PERF_EVENT_IOC_SET_OUTPUT)
 *   and PERF_SAMPLE_IDENTIFIER tells the events apart.  Reading is a pass:
 *   __snapshot loads data_head once, __peek decodes the record at the cursor as a
 *   view into the ring (a record that wraps the ring end is copied into the
 *   per-CPU scratch buffer, which only grows), __advance moves the cursor, and
 *   __release stores data_tail = cursor, giving the bytes back to the kernel.  A
 *   view stays valid until __advance.  Records the caller has not advanced past
 *   stay in the ring for the next pass: that is how the time-ordered merge holds
 *   back records that may not go out yet without copying them.
 *   A coll_cpu is used by one thread at a time (it may be handed to another).
 */
#ifndef HWPMCD_COLLECTOR_H
#define HWPMCD_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hwpmcd/collector-event.h"
#include "hwpmcd/record.h"

enum coll_callgraph {
	COLL_CG_NONE = 0,
	COLL_CG_FP,    /* the kernel walks kernel and user stacks by frame pointers */
	COLL_CG_DWARF, /* kernel chain from the kernel; user regs + stack snapshot for unwinding */
	COLL_CG_MAX
};

#define COLL_DEPTH_DEFAULT 128
#define COLL_DEPTH_MAX 512
/*
 * dwarf mode's default stack snapshot: the largest the kernel allows.  Samples are
 * unwound before they are written, so the snapshot costs no disk; the kernel copies
 * only the stack in use (dyn_size), so it costs the sampled program little more than
 * 8 KiB did; and 8 KiB left programs with large frames truncated (share of samples
 * unwound to _start at 8 KiB / 16 KiB / 64 KiB: bzip2 54% / 100% / 100%, frames of
 * 5.5 + 5 KB 0% / 100% / 100%, cc1 96% / 95% / 99.5%; no loss at 4 or 10 kHz on both
 * CPUs with the 4 MiB dwarf rings; bench/unwind-bench.sh measures it).
 */
#define COLL_STACK_DEFAULT 65528
#define COLL_STACK_MAX 65528
#define COLL_RING_PAGES_DEFAULT 256 /* 1 MiB per CPU */
#define COLL_FREQ_DEFAULT 1000

struct coll_config {
	const struct coll_event_spec *events; /* borrowed for the call */
	size_t nevents;
	enum coll_callgraph callgraph;
	uint32_t depth;	      /* 1..512, capped at perf_event_max_stack by the caller */
	uint32_t stack_bytes; /* dwarf mode: multiple of 8, 8..65528 */
	uint32_t ring_pages;  /* data pages per CPU ring, a power of two */
	uint64_t freq;	      /* default frequency for events without period/freq */
	uint64_t period;      /* if non-zero: default period instead of freq */
	bool enable_on_exec;  /* per-process `-- CMD`: start counting at exec */
	bool exclude_kernel;  /* forced for unprivileged users */
};

struct coll_cpu_stats {
	uint64_t records[REC_TYPE_MAX];
	uint64_t lost;	     /* samples the kernel reported lost (sum of LOST records) */
	uint64_t bad;	     /* records with impossible sizes (the rest of the pass dropped) */
	uint64_t unknown;    /* record types we do not use, skipped */
	uint64_t wrapped;    /* records copied to scratch because they wrapped */
	uint64_t bytes;	     /* ring bytes consumed */
};

struct coll_cpu;

/*
 * coll_cpu__open: open every event of @cfg on @cpu for every thread of @tids
 * (@ntids 0: every process, system-wide; else those threads with inheritance to
 * their new threads and children; threads that exited meanwhile are skipped), share one
 * ring of cfg->ring_pages pages, and leave the events disabled.  The first event
 * also carries the side band (mmap2, comm with exec, fork/exit).  Returns 0 or a
 * negative errno with a message for the user in @err.  The caller owns *ret_cpu.
 * Main thread (it may then hand the object to a worker thread).
 */
int coll_cpu__open(const struct coll_config *cfg, int cpu, const pid_t *tids, size_t ntids,
		   char *err, size_t errlen, struct coll_cpu **ret_cpu);

/* coll_cpu__free: disable, close and unmap.  NULL ok. */
void coll_cpu__free(struct coll_cpu *c);

int coll_cpu__enable(struct coll_cpu *c);
int coll_cpu__disable(struct coll_cpu *c);

/*
 * coll_cpu__set_rate: the sampling rate of @c's events that use @cfg's default
 * (no period= or freq= of their own) becomes @value: samples per second when
 * @cfg samples by frequency, else the period.  Takes effect at once, counters
 * running (PERF_EVENT_IOC_PERIOD).  0, -EINVAL, or ioctl(2)'s error (EINVAL
 * above kernel.perf_event_max_sample_rate).  The owner thread of @c only.
 */
int coll_cpu__set_rate(struct coll_cpu *c, const struct coll_config *cfg, uint64_t value);

/*
 * coll_cpu__set_bpf: attach the BPF perf_event program @prog_fd to every counter
 * of @c (PERF_EVENT_IOC_SET_BPF): it decides, in the overflow handler, whether a
 * sample reaches the ring.  0 or ioctl(2)'s error (EEXIST: one is attached
 * already).  Before the counters are enabled; main or owner thread.
 */
int coll_cpu__set_bpf(struct coll_cpu *c, int prog_fd);

/*
 * coll_sample_cost: what one sample of @cfg's kind (its call graph mode and stack
 * snapshot) costs the program it interrupts, measured on the calling thread: a
 * busy loop's work in 5 ms windows with a task-clock counter of the same sample
 * type at @freq Hz off, then on; the median of (work lost / samples) over nine
 * window pairs in which the thread was not preempted (of at most 80 pairs:
 * 0.1 to 0.8 s of the caller's CPU, a 4 MiB ring for that time).  0 with
 * *ret_ns, -ENODATA (no sample came), or perf_event_open(2)/mmap(2)'s error.
 */
int coll_sample_cost(const struct coll_config *cfg, uint64_t freq, uint64_t *ret_ns);

/* The fd to poll for readable data (the ring's owner fd); owned by @c. */
int coll_cpu__fd(const struct coll_cpu *c);
int coll_cpu__cpu(const struct coll_cpu *c);

/* Load data_head (acquire): the end of this pass.  Returns the bytes available. */
uint64_t coll_cpu__snapshot(struct coll_cpu *c);

/*
 * coll_cpu__room: the bytes the kernel may still write into the ring now (data_head
 * loaded again, against the data_tail last stored): a record larger than this is
 * lost, and so, once the room is under the largest record the session makes, the
 * ring may be losing records already (the kernel says so only later, with a LOST
 * record written once there is room again).  Space only comes back at
 * __release(), so a ring whose room is short at any moment is still short just
 * before the next __release().
 */
uint64_t coll_cpu__room(struct coll_cpu *c);

/*
 * coll_cpu__peek: decode the record at the cursor into *ret_rec (a view valid
 * until __advance).  Returns 1, or 0 at the end of the pass.  Records of types
 * we do not use and malformed records are skipped and counted, never returned.
 */
int coll_cpu__peek(struct coll_cpu *c, struct rec *ret_rec);
void coll_cpu__advance(struct coll_cpu *c);

/* Store data_tail = cursor (release): every advanced record goes back to the kernel. */
void coll_cpu__release(struct coll_cpu *c);

/* Index into cfg->events of the event with perf id @id, or -1. */
int coll_cpu__event_index(const struct coll_cpu *c, uint64_t id);

const struct coll_cpu_stats *coll_cpu__stats(const struct coll_cpu *c);

/* Values below this are no PC (page 0, never mapped): dropped from call chains. */
#define COLL_PAGE0_END 4096

/*
 * coll_sample_pcs: the sample's call chain without PERF_CONTEXT_* markers and
 * without values in page 0 (the null return address that ends a frame-pointer
 * walk), kernel part first, innermost first, at most @max; the IP alone if the
 * chain is empty.  Returns the PC count.
 */
uint32_t coll_sample_pcs(const struct rec_sample *s, uint64_t *pcs, uint32_t max);

/* coll_sample_chain: the same without the IP fallback (0 PCs for an empty chain). */
uint32_t coll_sample_chain(const struct rec_sample *s, uint64_t *pcs, uint32_t max);

/*
 * coll_sample_user_ip: the user-mode PC at which the sampled thread was stopped:
 * the IP of a user-mode sample, else the IP of its user registers (dwarf mode),
 * else the first user entry of its call chain (fp mode), else 0 (unknown: a kernel
 * thread, or a kernel-mode sample of a session without call chains).  Any thread.
 */
uint64_t coll_sample_user_ip(const struct rec_sample *s);

/* /proc/sys/kernel/perf_event_max_sample_rate and perf_event_max_stack, or 0 if unreadable. */
uint64_t coll_max_sample_rate(void);
uint32_t coll_max_stack(void);

/* The online CPUs from /sys/devices/system/cpu/online: count written to *ret_n. */
int coll_online_cpus(int *cpus, size_t max, size_t *ret_n);

#endif /* HWPMCD_COLLECTOR_H */
