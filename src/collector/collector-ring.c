/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * collector-ring.c: perf_event_open per CPU, the shared ring, record decoding.
 *
 * PUBLIC INTERFACES
 *   see include/hwpmcd/collector.h
 *
 * IMPLEMENTATION NOTES
 *   Every event of a session uses the same sample_type, so one decoder serves all
 *   records of a ring.  Side-band records carry the sample_id trailer
 *   (sample_id_all): TID, TIME, CPU, IDENTIFIER, in that order, at the end of the
 *   record; IDENTIFIER makes the event id findable at a fixed place for every
 *   record type.  Every size comes from the kernel and is checked against the
 *   record before use: a record whose header.size is smaller than what its type
 *   needs, or larger than the bytes between cursor and head, ends the pass and
 *   the rest of it is dropped and counted as `bad` (a ring we cannot parse cannot
 *   be resynchronised).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hwpmcd/collector.h"
#include "collector-int.h"
#include "hwpmcd/common.h"

/* x86-64 user registers: everything but the segment registers DS, ES, FS, GS (bits 12-15). */
#define COLL_REGS_USER_MASK 0xff0fffull

#define COLL_SAMPLE_TYPE                                                                       \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |        \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

/* The sample_id trailer of side-band records: TID, TIME, CPU, IDENTIFIER. */
#define COLL_SAMPLE_ID_SIZE 32

struct coll_cpu {
	int cpu;
	size_t nfds;
	int *fds;	 /* nevents x max(1, ntids), the ring's owner first */
	uint64_t *ids;	 /* perf id of each fd */
	int *evidx;	 /* event index of each fd */
	uint64_t sample_type;
	uint32_t nr_regs;
	void *base; /* mmap: metadata page + data */
	size_t map_len;
	uint8_t *data;
	uint64_t data_size; /* power of two */
	uint64_t head;	    /* snapshot of data_head */
	uint64_t tail;	    /* data_tail we last stored */
	uint64_t cursor;    /* next record to decode */
	uint64_t peeked_len; /* length of the record decoded at cursor, 0 if none */
	uint8_t *scratch;
	size_t scratch_cap;
	bool borrowed; /* a test ring from coll_cpu__from_buffer(): nothing to close */
	struct coll_cpu_stats stats;
};

uint64_t coll_sample_type(enum coll_callgraph cg)
{
	uint64_t t = COLL_SAMPLE_TYPE;

	if (cg == COLL_CG_NONE)
		t &= ~(uint64_t)PERF_SAMPLE_CALLCHAIN;
	if (cg == COLL_CG_DWARF)
		t |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	return t;
}

uint64_t coll_regs_user_mask(void)
{
	return COLL_REGS_USER_MASK;
}

static long sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
				unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

static int read_sysctl_u64(const char *path, uint64_t *ret)
{
	char buf[64];

	if (util_read_small(path, buf, sizeof(buf)) <= 0)
		return -EIO;
	buf[strcspn(buf, "\n")] = '\0';
	return util_parse_u64(buf, ret);
}

uint64_t coll_max_sample_rate(void)
{
	uint64_t v = 0;

	(void)read_sysctl_u64("/proc/sys/kernel/perf_event_max_sample_rate", &v);
	return v;
}

uint32_t coll_max_stack(void)
{
	uint64_t v = 0;

	(void)read_sysctl_u64("/proc/sys/kernel/perf_event_max_stack", &v);
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

int coll_online_cpus(int *cpus, size_t max, size_t *ret_n)
{
	char buf[4096], *p, *save = NULL;
	size_t n = 0;
	int k = util_read_small("/sys/devices/system/cpu/online", buf, sizeof(buf));

	if (k <= 0)
		return k < 0 ? k : -EIO;
	for (p = strtok_r(buf, ",\n", &save); p; p = strtok_r(NULL, ",\n", &save)) {
		char *dash = strchr(p, '-');
		long lo = strtol(p, NULL, 10), hi = dash ? strtol(dash + 1, NULL, 10) : lo;

		if (lo < 0 || hi < lo || hi > 65535)
			return -EINVAL;
		for (long c = lo; c <= hi; c++) {
			if (n == max)
				return -E2BIG;
			cpus[n++] = (int)c;
		}
	}
	*ret_n = n;
	return 0;
}

static void explain_open_error(int err, const struct coll_event_spec *ev, int cpu, pid_t pid,
			       char *msg, size_t msglen)
{
	uint64_t paranoid = 0;

	switch (-err) {
	case ENOENT:
	case EOPNOTSUPP:
		if (ev->needs_hw_pmu) {
			snprintf(msg, msglen,
				 "event '%s': no hardware PMU is exposed (virtual machine?); "
				 "software events such as cpu-clock work",
				 ev->name);
			return;
		}
		snprintf(msg, msglen, "event '%s': not supported by this kernel (%s)", ev->name,
			 strerror(-err));
		return;
	case EACCES:
	case EPERM:
		(void)read_sysctl_u64("/proc/sys/kernel/perf_event_paranoid", &paranoid);
		snprintf(msg, msglen,
			 "event '%s' on cpu %d: permission denied; needs CAP_PERFMON (or "
			 "CAP_SYS_ADMIN), or kernel.perf_event_paranoid <= %d (it is %" PRIu64 ")",
			 ev->name, cpu, pid == -1 ? 0 : 1, paranoid);
		return;
	case EMFILE:
	case ENFILE:
		snprintf(msg, msglen,
			 "event '%s' on cpu %d: too many open files; raise the limit "
			 "(ulimit -n, or LimitNOFILE= in the unit)",
			 ev->name, cpu);
		return;
	case ESRCH:
		snprintf(msg, msglen, "process %d does not exist (it may have exited)", (int)pid);
		return;
	case EINVAL:
		snprintf(msg, msglen,
			 "event '%s' on cpu %d: the kernel refused its attributes (EINVAL): "
			 "check the period/frequency and modifiers",
			 ev->name, cpu);
		return;
	default:
		snprintf(msg, msglen, "event '%s' on cpu %d: perf_event_open: %s", ev->name, cpu,
			 strerror(-err));
	}
}

static void fill_attr(const struct coll_config *cfg, const struct coll_event_spec *ev,
		      bool sideband, pid_t pid, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = ev->type;
	a->config = ev->config;
	a->config1 = ev->config1;
	a->config2 = ev->config2;
	if (ev->has_period) {
		a->sample_period = ev->period;
	} else if (ev->has_freq) {
		a->freq = 1;
		a->sample_freq = ev->freq;
	} else if (cfg->period) {
		a->sample_period = cfg->period;
	} else {
		a->freq = 1;
		a->sample_freq = cfg->freq ? cfg->freq : COLL_FREQ_DEFAULT;
	}
	a->sample_type = coll_sample_type(cfg->callgraph);
	if (cfg->callgraph == COLL_CG_DWARF) {
		a->sample_regs_user = COLL_REGS_USER_MASK;
		a->sample_stack_user = cfg->stack_bytes ? cfg->stack_bytes : COLL_STACK_DEFAULT;
		a->exclude_callchain_user = 1;
	}
	if (cfg->callgraph != COLL_CG_NONE) {
		uint32_t d = cfg->depth ? cfg->depth : COLL_DEPTH_DEFAULT, kmax = coll_max_stack();

		/* dwarf: the depth bounds kernel + unwound user PCs; the kernel's part is capped. */
		if (cfg->callgraph == COLL_CG_DWARF && kmax && d > kmax)
			d = kmax;
		a->sample_max_stack = (uint16_t)d;
	}
	a->disabled = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->exclude_user = ev->exclude_user;
	a->exclude_kernel = ev->exclude_kernel || cfg->exclude_kernel;
	a->exclude_hv = 1;
	a->watermark = 1;
	if (sideband) {
		/* mmap2 only changes the format: mmap asks for the records. */
		a->mmap = 1;
		a->mmap2 = 1;
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
	}
	if (pid != -1) {
		a->inherit = 1;
		a->enable_on_exec = cfg->enable_on_exec;
	}
}

int coll_cpu__open(const struct coll_config *cfg, int cpu, const pid_t *tids, size_t ntids,
		   char *err, size_t errlen, struct coll_cpu **ret_cpu)
{
	struct coll_cpu *c;
	struct perf_event_attr attr;
	uint64_t pages = cfg->ring_pages ? cfg->ring_pages : COLL_RING_PAGES_DEFAULT;
	long pagesize = sysconf(_SC_PAGESIZE);
	int r;

	err[0] = '\0';
	if (cfg->nevents == 0 || cfg->nevents > COLL_EVENT_MAX) {
		snprintf(err, errlen, "between 1 and %d events are needed", COLL_EVENT_MAX);
		return -EINVAL;
	}
	if (pages & (pages - 1)) {
		snprintf(err, errlen, "ring size of %" PRIu64 " pages is not a power of two", pages);
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->cpu = cpu;
	{
		size_t nt = ntids ? ntids : 1, total = cfg->nevents * nt;

		c->fds = malloc(total * sizeof(*c->fds));
		c->ids = calloc(total, sizeof(*c->ids));
		c->evidx = calloc(total, sizeof(*c->evidx));
		if (!c->fds || !c->ids || !c->evidx) {
			r = -ENOMEM;
			goto fail;
		}
		for (size_t t = 0; t < nt; t++) {
			pid_t pid = ntids ? tids[t] : -1;

			for (size_t i = 0; i < cfg->nevents; i++) {
				long fd;
				size_t k = c->nfds;

				/* The first event of each thread carries that thread's side band. */
				fill_attr(cfg, &cfg->events[i], i == 0, pid, &attr);
				if (k == 0) {
					/* Wake the reader when a quarter of the ring is full. */
					attr.wakeup_watermark =
						(uint32_t)(pages * (uint64_t)pagesize / 4);
					c->sample_type = attr.sample_type;
				}
				fd = sys_perf_event_open(&attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
				if (fd < 0) {
					r = -errno;
					if (r == -ESRCH && ntids > 1 && t > 0)
						continue; /* a thread that exited meanwhile */
					explain_open_error(r, &cfg->events[i], cpu, pid, err, errlen);
					goto fail;
				}
				c->fds[k] = (int)fd;
				c->evidx[k] = (int)i;
				c->nfds++;
				if (ioctl((int)fd, PERF_EVENT_IOC_ID, &c->ids[k]) < 0) {
					r = -errno;
					snprintf(err, errlen, "cpu %d: PERF_EVENT_IOC_ID: %s", cpu,
						 strerror(-r));
					goto fail;
				}
			}
		}
	}

	c->map_len = (size_t)((pages + 1) * (uint64_t)pagesize);
	c->base = mmap(NULL, c->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, c->fds[0], 0);
	if (c->base == MAP_FAILED) {
		r = -errno;
		c->base = NULL;
		if (r == -EPERM || r == -ENOMEM)
			snprintf(err, errlen,
				 "cpu %d: cannot map a ring of %" PRIu64 " KiB: over the locked-memory "
				 "limit (kernel.perf_event_mlock_kb, RLIMIT_MEMLOCK); use fewer ring pages "
				 "or run with CAP_IPC_LOCK",
				 cpu, pages * (uint64_t)pagesize / 1024);
		else
			snprintf(err, errlen, "cpu %d: mmap of the ring: %s", cpu, strerror(-r));
		goto fail;
	}
	{
		struct perf_event_mmap_page *pg = c->base;

		c->data_size = pg->data_size ? pg->data_size : pages * (uint64_t)pagesize;
		c->data = (uint8_t *)c->base + (pg->data_offset ? pg->data_offset : (uint64_t)pagesize);
		if (c->data_size & (c->data_size - 1) ||
		    (uint8_t *)c->data + c->data_size > (uint8_t *)c->base + c->map_len) {
			snprintf(err, errlen, "cpu %d: the kernel's ring layout is unexpected", cpu);
			r = -EPROTO;
			goto fail;
		}
	}
	for (size_t i = 1; i < c->nfds; i++) {
		if (ioctl(c->fds[i], PERF_EVENT_IOC_SET_OUTPUT, c->fds[0]) < 0) {
			r = -errno;
			snprintf(err, errlen, "cpu %d: PERF_EVENT_IOC_SET_OUTPUT: %s", cpu,
				 strerror(-r));
			goto fail;
		}
	}
	if (c->sample_type & PERF_SAMPLE_REGS_USER)
		c->nr_regs = (uint32_t)__builtin_popcountll(COLL_REGS_USER_MASK);
	c->scratch_cap = 65536 + 4096;
	c->scratch = malloc(c->scratch_cap);
	if (!c->scratch) {
		r = -ENOMEM;
		goto fail;
	}
	*ret_cpu = c;
	return 0;
fail:
	coll_cpu__free(c);
	return r;
}

int coll_cpu__from_buffer(void *base, size_t map_len, size_t page_size, uint64_t sample_type,
			  const uint64_t *ids, size_t nids, struct coll_cpu **ret_cpu)
{
	struct coll_cpu *c;
	uint64_t data_size = map_len - page_size;

	if (map_len <= page_size || (data_size & (data_size - 1)))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->borrowed = true;
	c->base = base;
	c->map_len = map_len;
	c->data = (uint8_t *)base + page_size;
	c->data_size = data_size;
	c->sample_type = sample_type;
	if (sample_type & PERF_SAMPLE_REGS_USER)
		c->nr_regs = (uint32_t)__builtin_popcountll(COLL_REGS_USER_MASK);
	c->ids = calloc(nids ? nids : 1, sizeof(*c->ids));
	c->evidx = calloc(nids ? nids : 1, sizeof(*c->evidx));
	c->scratch_cap = 4096;
	c->scratch = malloc(c->scratch_cap);
	if (!c->ids || !c->evidx || !c->scratch) {
		coll_cpu__free(c);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nids; i++) {
		c->ids[i] = ids[i];
		c->evidx[i] = (int)i;
	}
	c->nfds = nids;
	*ret_cpu = c;
	return 0;
}

void coll_cpu__free(struct coll_cpu *c)
{
	if (!c)
		return;
	if (c->borrowed) {
		free(c->ids);
		free(c->evidx);
		free(c->scratch);
		free(c);
		return;
	}
	for (size_t i = 0; c->fds && i < c->nfds; i++) {
		(void)ioctl(c->fds[i], PERF_EVENT_IOC_DISABLE, 0);
		close(c->fds[i]);
	}
	if (c->base)
		munmap(c->base, c->map_len);
	free(c->fds);
	free(c->ids);
	free(c->evidx);
	free(c->scratch);
	free(c);
}

int coll_cpu__set_bpf(struct coll_cpu *c, int prog_fd)
{
	for (size_t i = 0; i < c->nfds; i++) {
		if (ioctl(c->fds[i], PERF_EVENT_IOC_SET_BPF, prog_fd) < 0)
			return -errno;
	}
	return 0;
}

int coll_cpu__set_rate(struct coll_cpu *c, const struct coll_config *cfg, uint64_t value)
{
	size_t per_event = cfg->nevents ? c->nfds / cfg->nevents : 0;

	if (!value || !per_event)
		return -EINVAL;
	for (size_t i = 0; i < c->nfds; i++) {
		const struct coll_event_spec *ev = &cfg->events[i / per_event];
		uint64_t v = value;

		/* An event with its own period= or freq= keeps it. */
		if (ev->has_period || ev->has_freq)
			continue;
		/*
		 * cpu-clock and task-clock turn a frequency into a fixed period of
		 * nanoseconds when they are made (perf_swevent_init_hrtimer() clears
		 * attr.freq), so the kernel reads the value as that period.
		 */
		if (!cfg->period && ev->type == PERF_TYPE_SOFTWARE &&
		    (ev->config == PERF_COUNT_SW_CPU_CLOCK || ev->config == PERF_COUNT_SW_TASK_CLOCK))
			v = 1000000000ull / value ? 1000000000ull / value : 1;
		/* Pairs with the kernel's perf_event_period(): sample_freq for freq events. */
		if (ioctl(c->fds[i], PERF_EVENT_IOC_PERIOD, &v) < 0)
			return -errno;
	}
	return 0;
}

/* A busy loop for @ns of wall time: the iterations it did (the work it got done). */
static uint64_t spin_for(uint64_t ns)
{
	uint64_t start = util_now_ns(CLOCK_MONOTONIC), n = 0;
	volatile uint64_t x = 1;

	do {
		for (int i = 0; i < 1024; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		n += 1024;
	} while (util_now_ns(CLOCK_MONOTONIC) - start < ns);
	return n;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Involuntary context switches of the calling thread so far. */
static long preempted(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nivcsw : -1;
}

int coll_sample_cost(const struct coll_config *cfg, uint64_t freq, uint64_t *ret_ns)
{
	/*
	 * 5 ms windows, short enough that most pass without the thread being
	 * preempted on a busy machine; a window pair during which it was is not
	 * used (its lost work is another program's, not the samples').  The ring
	 * holds every sample of a window (64 KiB stacks at 4 kHz: 1.3 MiB).
	 */
	enum { WANT = 9, TRIES = 80, WINDOW_NS = 5000000, RING_PAGES = 1024 };
	struct coll_event_spec ev = { .name = "task-clock", .type = PERF_TYPE_SOFTWARE,
				      .config = PERF_COUNT_SW_TASK_CLOCK };
	struct coll_config c = *cfg;
	struct perf_event_attr a;
	long page = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)(RING_PAGES + 1) * (size_t)page;
	uint64_t clean[WANT], any[TRIES];
	struct perf_event_mmap_page *meta;
	void *ring;
	int fd, nclean = 0, nany = 0, r = 0;

	c.freq = freq;
	c.period = 0;
	fill_attr(&c, &ev, false, -1, &a);
	a.inherit = 0;
	/* This thread only, on whichever CPU it runs: it is the program sampled. */
	fd = (int)sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		r = -errno;
		close(fd);
		return r;
	}
	meta = ring;
	for (int k = 0; k < TRIES && nclean < WANT; k++) {
		uint64_t off, on, head, tail, samples = 0, cost;
		long cs0 = preempted(), cs1;

		/* The same work with the counter off, then on: what the samples took from it. */
		off = spin_for(WINDOW_NS);
		(void)ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		on = spin_for(WINDOW_NS);
		(void)ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		cs1 = preempted();
		/* Pairs with the kernel's store of data_head after it wrote the records. */
		head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
		tail = meta->data_tail;
		while (tail < head) {
			const struct perf_event_header *h =
				(const void *)((char *)ring + page +
					       (tail % ((uint64_t)RING_PAGES * (uint64_t)page)));

			if (h->size == 0)
				break;
			samples += h->type == PERF_RECORD_SAMPLE;
			tail += h->size;
		}
		/* Pairs with the kernel's read of data_tail: the space is free again. */
		__atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
		if (!samples || !off)
			continue;
		cost = on >= off ? 0 : (off - on) * WINDOW_NS / off / samples;
		any[nany++] = cost;
		if (cs0 >= 0 && cs0 == cs1)
			clean[nclean++] = cost;
	}
	munmap(ring, len);
	close(fd);
	if (nclean >= 3) {
		qsort(clean, (size_t)nclean, sizeof(*clean), u64_cmp);
		*ret_ns = clean[nclean / 2];
		return 0;
	}
	if (!nany)
		return -ENODATA;
	/* Preempted every time (a very busy machine): the median of all, less sure. */
	qsort(any, (size_t)nany, sizeof(*any), u64_cmp);
	*ret_ns = any[nany / 2];
	return 0;
}

int coll_cpu__enable(struct coll_cpu *c)
{
	for (size_t i = 0; i < c->nfds; i++)
		if (ioctl(c->fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0)
			return -errno;
	return 0;
}

int coll_cpu__disable(struct coll_cpu *c)
{
	for (size_t i = 0; i < c->nfds; i++)
		if (ioctl(c->fds[i], PERF_EVENT_IOC_DISABLE, 0) < 0)
			return -errno;
	return 0;
}

int coll_cpu__fd(const struct coll_cpu *c)
{
	return c->fds[0];
}

int coll_cpu__cpu(const struct coll_cpu *c)
{
	return c->cpu;
}

int coll_cpu__event_index(const struct coll_cpu *c, uint64_t id)
{
	for (size_t i = 0; i < c->nfds; i++)
		if (c->ids[i] == id)
			return c->evidx[i];
	return -1;
}

const struct coll_cpu_stats *coll_cpu__stats(const struct coll_cpu *c)
{
	return &c->stats;
}

uint64_t coll_cpu__snapshot(struct coll_cpu *c)
{
	struct perf_event_mmap_page *pg = c->base;

	/* Acquire: pairs with the kernel's release store of data_head after writing records. */
	c->head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	return c->head - c->cursor;
}

uint64_t coll_cpu__room(struct coll_cpu *c)
{
	struct perf_event_mmap_page *pg = c->base;
	/* Acquire: pairs with the kernel's release store of data_head (as in __snapshot). */
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);

	return head - c->tail >= c->data_size ? 0 : c->data_size - (head - c->tail);
}

void coll_cpu__release(struct coll_cpu *c)
{
	struct perf_event_mmap_page *pg = c->base;

	if (c->cursor == c->tail)
		return;
	/*
	 * Release: pairs with the kernel's read of data_tail before it overwrites;
	 * every read of the records before this store is done.
	 */
	__atomic_store_n(&pg->data_tail, c->cursor, __ATOMIC_RELEASE);
	c->tail = c->cursor;
}

void coll_cpu__advance(struct coll_cpu *c)
{
	c->cursor += c->peeked_len;
	c->stats.bytes += c->peeked_len;
	c->peeked_len = 0;
}

/* Give up on the rest of the pass: the ring holds something we cannot parse. */
static int drop_pass(struct coll_cpu *c)
{
	c->stats.bad++;
	c->stats.bytes += c->head - c->cursor;
	c->cursor = c->head;
	c->peeked_len = 0;
	return 0;
}

/* A bounded little reader over one record. */
struct rd {
	const uint8_t *p;
	size_t pos, len;
	bool bad;
};

static uint64_t rd64(struct rd *r)
{
	uint64_t v = 0;

	if (r->len - r->pos < 8 || r->pos > r->len) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p + r->pos, 8);
	r->pos += 8;
	return v;
}

/* Decode the sample_id trailer (TID, TIME, CPU, IDENTIFIER) at the end of @p. */
static bool decode_sample_id(const uint8_t *p, size_t len, size_t body, struct rec *rec,
			     uint64_t *ret_id)
{
	struct rd r = { .p = p, .len = len };
	uint64_t v;

	if (len < body + COLL_SAMPLE_ID_SIZE)
		return false;
	r.pos = len - COLL_SAMPLE_ID_SIZE;
	v = rd64(&r);
	rec->pid = (uint32_t)v;
	rec->tid = (uint32_t)(v >> 32);
	rec->time = rd64(&r);
	rec->cpu = (uint32_t)rd64(&r);
	*ret_id = rd64(&r);
	return !r.bad;
}

static enum rec_mode cpumode(uint16_t misc)
{
	switch (misc & PERF_RECORD_MISC_CPUMODE_MASK) {
	case PERF_RECORD_MISC_KERNEL:
		return REC_MODE_KERNEL;
	case PERF_RECORD_MISC_USER:
		return REC_MODE_USER;
	case PERF_RECORD_MISC_HYPERVISOR:
		return REC_MODE_HYPERVISOR;
	case PERF_RECORD_MISC_GUEST_KERNEL:
	case PERF_RECORD_MISC_GUEST_USER:
		return REC_MODE_GUEST;
	default:
		return REC_MODE_UNKNOWN;
	}
}

static bool decode_sample(struct coll_cpu *c, const uint8_t *p, size_t len, uint16_t misc,
			  struct rec *rec)
{
	struct rd r = { .p = p, .pos = sizeof(struct perf_event_header), .len = len };
	struct rec_sample *s = &rec->u.sample;
	uint64_t v;

	s->id = rd64(&r);
	s->ip = rd64(&r);
	v = rd64(&r);
	rec->pid = (uint32_t)v;
	rec->tid = (uint32_t)(v >> 32);
	rec->time = rd64(&r);
	rec->cpu = (uint32_t)rd64(&r);
	s->period = rd64(&r);
	s->mode = cpumode(misc);
	if (c->sample_type & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr = rd64(&r);

		if (r.bad || nr > (r.len - r.pos) / 8)
			return false;
		s->nr_callchain = (uint32_t)nr;
		s->callchain = (const uint64_t *)(const void *)(p + r.pos);
		r.pos += (size_t)nr * 8;
	}
	if (c->sample_type & PERF_SAMPLE_REGS_USER) {
		s->regs_abi = rd64(&r);
		s->nr_regs = 0;
		if (s->regs_abi) {
			if (r.bad || c->nr_regs > REC_REGS_USER_MAX || c->nr_regs > (r.len - r.pos) / 8)
				return false;
			for (uint32_t i = 0; i < c->nr_regs; i++)
				s->regs[i] = rd64(&r);
			s->nr_regs = c->nr_regs;
		}
	}
	if (c->sample_type & PERF_SAMPLE_STACK_USER) {
		uint64_t size = rd64(&r);

		s->stack_size = 0;
		s->stack_dyn_size = 0;
		s->stack = NULL;
		if (size) {
			if (r.bad || size > r.len - r.pos || r.len - r.pos - size < 8)
				return false;
			s->stack = p + r.pos;
			r.pos += size;
			s->stack_size = size;
			s->stack_dyn_size = rd64(&r);
			/* Only dyn_size bytes are valid; never trust it beyond the copy. */
			if (s->stack_dyn_size > size)
				s->stack_dyn_size = size;
		}
	}
	return !r.bad;
}

int coll_cpu__peek(struct coll_cpu *c, struct rec *ret_rec)
{
	for (;;) {
		struct perf_event_header h;
		uint64_t avail = c->head - c->cursor, off, id = 0;
		const uint8_t *p;
		struct rec rec;
		bool ok = false;

		c->peeked_len = 0;
		if (avail < sizeof(h))
			return avail ? drop_pass(c) : 0;
		if (avail > c->data_size)
			return drop_pass(c); /* a head we cannot believe */
		off = c->cursor & (c->data_size - 1);
		/* The header itself may straddle the ring end. */
		if (off + sizeof(h) <= c->data_size) {
			memcpy(&h, c->data + off, sizeof(h));
		} else {
			size_t first = (size_t)(c->data_size - off);

			memcpy(&h, c->data + off, first);
			memcpy((uint8_t *)&h + first, c->data, sizeof(h) - first);
		}
		if (h.size < sizeof(h) || h.size > avail || h.size % 8)
			return drop_pass(c);
		if (off + h.size <= c->data_size) {
			p = c->data + off;
		} else {
			size_t first = (size_t)(c->data_size - off);

			if (h.size > c->scratch_cap) {
				uint8_t *n = realloc(c->scratch, h.size);

				if (!n)
					return drop_pass(c);
				c->scratch = n;
				c->scratch_cap = h.size;
			}
			memcpy(c->scratch, c->data + off, first);
			memcpy(c->scratch + first, c->data, h.size - first);
			p = c->scratch;
			c->stats.wrapped++;
		}
		c->peeked_len = h.size;

		memset(&rec, 0, sizeof(rec));
		switch (h.type) {
		case PERF_RECORD_SAMPLE:
			rec.type = REC_SAMPLE;
			ok = decode_sample(c, p, h.size, h.misc, &rec);
			break;
		case PERF_RECORD_MMAP2: {
			/* pid, tid, addr, len, pgoff, maj, min, ino, ino_gen, prot, flags: 64 bytes */
			const size_t fixed = sizeof(h) + 64;
			uint32_t pid, tid;

			rec.type = REC_MMAP;
			if (h.size < fixed + COLL_SAMPLE_ID_SIZE ||
			    !decode_sample_id(p, h.size, fixed, &rec, &id))
				break;
			memcpy(&pid, p + 8, 4);
			memcpy(&tid, p + 12, 4);
			memcpy(&rec.u.mmap.addr, p + 16, 8);
			memcpy(&rec.u.mmap.len, p + 24, 8);
			memcpy(&rec.u.mmap.pgoff, p + 32, 8);
			memcpy(&rec.u.mmap.dev_major, p + 40, 4);
			memcpy(&rec.u.mmap.dev_minor, p + 44, 4);
			memcpy(&rec.u.mmap.inode, p + 48, 8);
			memcpy(&rec.u.mmap.inode_generation, p + 56, 8);
			memcpy(&rec.u.mmap.prot, p + 64, 4);
			memcpy(&rec.u.mmap.flags, p + 68, 4);
			rec.pid = pid;
			rec.tid = tid;
			rec.u.mmap.filename = (const char *)(p + fixed);
			ok = memchr(p + fixed, '\0', h.size - fixed - COLL_SAMPLE_ID_SIZE) != NULL;
			break;
		}
		case PERF_RECORD_COMM: {
			const size_t fixed = sizeof(h) + 8;
			uint32_t pid, tid;

			rec.type = REC_COMM;
			if (h.size < fixed + COLL_SAMPLE_ID_SIZE ||
			    !decode_sample_id(p, h.size, fixed, &rec, &id))
				break;
			memcpy(&pid, p + 8, 4);
			memcpy(&tid, p + 12, 4);
			rec.pid = pid;
			rec.tid = tid;
			rec.u.comm.exec = (h.misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
			rec.u.comm.comm = (const char *)(p + fixed);
			ok = memchr(p + fixed, '\0', h.size - fixed - COLL_SAMPLE_ID_SIZE) != NULL;
			break;
		}
		case PERF_RECORD_FORK:
		case PERF_RECORD_EXIT: {
			const size_t fixed = sizeof(h) + 24;
			uint32_t v[4];
			uint64_t t;

			rec.type = h.type == PERF_RECORD_FORK ? REC_FORK : REC_EXIT;
			if (h.size < fixed + COLL_SAMPLE_ID_SIZE ||
			    !decode_sample_id(p, h.size, fixed, &rec, &id))
				break;
			memcpy(v, p + 8, 16);
			memcpy(&t, p + 24, 8);
			rec.pid = v[0];
			rec.u.task.ppid = v[1];
			rec.tid = v[2];
			rec.u.task.ptid = v[3];
			rec.time = t;
			ok = true;
			break;
		}
		case PERF_RECORD_LOST: {
			const size_t fixed = sizeof(h) + 16;

			rec.type = REC_LOST;
			if (h.size < fixed + COLL_SAMPLE_ID_SIZE ||
			    !decode_sample_id(p, h.size, fixed, &rec, &id))
				break;
			memcpy(&rec.u.lost.id, p + 8, 8);
			memcpy(&rec.u.lost.lost, p + 16, 8);
			c->stats.lost += rec.u.lost.lost;
			ok = true;
			break;
		}
		case PERF_RECORD_LOST_SAMPLES: {
			const size_t fixed = sizeof(h) + 8;

			rec.type = REC_LOST;
			if (h.size < fixed + COLL_SAMPLE_ID_SIZE ||
			    !decode_sample_id(p, h.size, fixed, &rec, &id))
				break;
			rec.u.lost.id = id;
			memcpy(&rec.u.lost.lost, p + 8, 8);
			c->stats.lost += rec.u.lost.lost;
			ok = true;
			break;
		}
		case PERF_RECORD_THROTTLE:
		case PERF_RECORD_UNTHROTTLE: {
			const size_t fixed = sizeof(h) + 24;

			rec.type = h.type == PERF_RECORD_THROTTLE ? REC_THROTTLE : REC_UNTHROTTLE;
			if (h.size < fixed + COLL_SAMPLE_ID_SIZE ||
			    !decode_sample_id(p, h.size, fixed, &rec, &id))
				break;
			memcpy(&rec.time, p + 8, 8);
			memcpy(&rec.u.lost.id, p + 16, 8);
			ok = true;
			break;
		}
		default:
			/* KSYMBOL, BPF_EVENT, CGROUP, ... are not used: skip, counted. */
			c->stats.unknown++;
			coll_cpu__advance(c);
			continue;
		}
		if (!ok) {
			/* The header framed it, so only this record is lost, not the pass. */
			c->stats.bad++;
			coll_cpu__advance(c);
			continue;
		}
		c->stats.records[rec.type]++;
		*ret_rec = rec;
		return 1;
	}
}

uint32_t coll_sample_chain(const struct rec_sample *s, uint64_t *pcs, uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->nr_callchain && n < max; i++) {
		uint64_t v = s->callchain[i];

		/* PERF_CONTEXT_* markers sit in the top page of the address space. */
		if (v >= (uint64_t)PERF_CONTEXT_MAX)
			continue;
		/*
		 * Nothing runs in page 0 (mmap_min_addr): such a value is no frame.  The
		 * kernel's frame-pointer walk stores the outermost frame's null return
		 * address (a quarter of a system-wide fp log's chains ended in 0).
		 */
		if (v < COLL_PAGE0_END)
			continue;
		pcs[n++] = v;
	}
	return n;
}

uint64_t coll_sample_user_ip(const struct rec_sample *s)
{
	if (s->mode == REC_MODE_USER)
		return s->ip;
	/* sample_regs_user is COLL_REGS_USER_MASK: IP is perf's register 8, the 9th value. */
	if (s->regs_abi != 0 && s->nr_regs > 8)
		return s->regs[8];
	for (uint32_t i = 0; i + 1 < s->nr_callchain; i++)
		if (s->callchain[i] == (uint64_t)PERF_CONTEXT_USER)
			return s->callchain[i + 1] < (uint64_t)PERF_CONTEXT_MAX ? s->callchain[i + 1] : 0;
	return 0;
}

uint32_t coll_sample_pcs(const struct rec_sample *s, uint64_t *pcs, uint32_t max)
{
	uint32_t n = coll_sample_chain(s, pcs, max);

	if (n == 0 && max > 0 && s->ip)
		pcs[n++] = s->ip;
	return n;
}
