/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz-ctl.c: libFuzzer harness for the daemon's control requests: the input
 * is one request line for daemon_request_parse(); a "start" then goes through
 * daemon_start_parse() as an administrator (uid 0) and as a user (uid 1000),
 * with the default config, a kernel limit of 100000 Hz and 127 frames, and the
 * events looked up in the fake sysfs tree FUZZ_SYSFS_ROOT.
 *
 * IMPLEMENTATION NOTES
 *   Beyond "no crash, no sanitizer report, no leak", these abort on failure:
 *   1. request: 0 gives a root, a NUL-terminated cmd and an object args; an
 *      error is -EPROTO/-EINVAL with nothing to free and a non-empty,
 *      NUL-terminated message that stays inside its buffer;
 *      daemon_request_free() leaves id -1 and no root.
 *   2. start, either caller: the fds are -1 whatever the result; a failure has a
 *      negative errno and a message; a success has every value in its
 *      documented range (depth 1..512 and at most 127 unless dwarf, stack_bytes
 *      8..65528 and a multiple of 8, ring_pages a power of two in 1..65536,
 *      1..COLL_EVENT_MAX events with printable NUL-terminated names, pids and
 *      CPUs in range, no event freq above the kernel's limit, a command only
 *      with one pid and not detached, a kallsyms fd only when not detached,
 *      ring_bytes = (pages + 1) * 4096).  The args are not modified, and the
 *      same call twice gives the same result.
 *   3. start, the user: never more than the administrator (an admin failure
 *      is a user failure); on success: no kernel, every event user mode only
 *      and of a type users may open (software, hardware, cache, raw or the
 *      core PMU "cpu": no tracepoint, breakpoint or uncore PMU), a pid target
 *      and no CPUs or else (all of its own processes) a filter of its uid alone
 *      with the owner check, not detached,
 *      ring_pages, stack_bytes and depth within the user_* limits, and every
 *      event's sample rate at most the kernel's limit.
 *   4. daemon_auth_admin() on ids taken from the input is root or the group.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon-ctl.h"
#include "hwpmcd/log.h"

#define MAXRATE 100000u
#define MAXSTACK 127u
#define ERRLEN 512
#define CANARY 0xa5

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                      \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "fuzz-ctl: invariant failed at line %d: %s\n",   \
				__LINE__, #cond);                                        \
			abort();                                                         \
		}                                                                        \
	} while (0)

static struct daemon_config cfg;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_open("fuzz-ctl", LOG_TARGET_PLAIN);
	log_set_level(LOG_PRIO_ERR - 1);
	if (setenv("HWPMCD_SYSFS_ROOT", FUZZ_SYSFS_ROOT, 1) < 0)
		abort();
	daemon_config_defaults(&cfg);
	return 0;
}

/* A message: NUL-terminated within ERRLEN, non-empty, the canary after it intact. */
static void check_err(const char *err)
{
	CHECK(memchr(err, '\0', ERRLEN) != NULL);
	CHECK(err[0] != '\0');
	for (size_t i = ERRLEN; i < ERRLEN + 16; i++)
		CHECK((uint8_t)err[i] == CANARY);
}

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

static bool is_clock(const struct coll_event_spec *e)
{
	return e->type == PERF_TYPE_SOFTWARE &&
	       (e->config == PERF_COUNT_SW_CPU_CLOCK || e->config == PERF_COUNT_SW_TASK_CLOCK);
}

/* The checks for any caller's success. */
static void check_params(const struct session_params *p, const struct daemon_start *st)
{
	CHECK(p->out_fd == -1 && p->ks_fd == -1);
	CHECK(p->cfg.callgraph == COLL_CG_NONE || p->cfg.callgraph == COLL_CG_FP ||
	      p->cfg.callgraph == COLL_CG_DWARF);
	CHECK(p->cfg.depth >= 1 && p->cfg.depth <= COLL_DEPTH_MAX);
	if (p->cfg.callgraph != COLL_CG_DWARF)
		CHECK(p->cfg.depth <= MAXSTACK);
	CHECK(st->depth_note == 0 || st->depth_note == MAXSTACK);
	CHECK(p->cfg.stack_bytes >= 8 && p->cfg.stack_bytes <= COLL_STACK_MAX);
	CHECK(p->cfg.stack_bytes % 8 == 0);
	CHECK(is_pow2(p->cfg.ring_pages) && p->cfg.ring_pages <= 65536);
	CHECK(st->ring_bytes == ((size_t)p->cfg.ring_pages + 1) * 4096);
	CHECK(p->cfg.freq >= 1 && p->cfg.freq <= INT32_MAX);
	CHECK(p->cfg.period <= INT64_MAX);
	CHECK(p->nevents >= 1 && p->nevents <= COLL_EVENT_MAX);
	for (size_t i = 0; i < p->nevents; i++) {
		const struct coll_event_spec *e = &p->events[i];
		const char *nul = memchr(e->name, '\0', sizeof(e->name));

		CHECK(nul && nul > e->name);
		for (const char *c = e->name; c < nul; c++)
			CHECK(*c > ' ' && *c <= '~' && *c != '/');
		CHECK(!(e->exclude_user && e->exclude_kernel));
		CHECK(!(e->has_period && e->has_freq));
		/* The kernel refuses a freq above its limit: it must have been refused here. */
		if (e->has_freq)
			CHECK(e->freq <= MAXRATE);
		else if (!e->has_period && !p->cfg.period)
			CHECK(p->cfg.freq <= MAXRATE);
	}
	CHECK(p->npids <= DAEMON_MAX_PIDS);
	for (size_t i = 0; i < p->npids; i++)
		CHECK(p->pids[i] >= 1);
	CHECK(p->ncpus <= DAEMON_MAX_CPUS);
	for (size_t i = 0; i < p->ncpus; i++)
		CHECK(p->cpus[i] >= 0 && p->cpus[i] <= 65535);
	if (p->command)
		CHECK(p->npids == 1 && !st->detached);
	if (st->ks_fd)
		CHECK(!st->detached && st->ks_want);
}

/* The checks for a user's success. */
static void check_user(const struct session_params *p, const struct daemon_start *st)
{
	CHECK(!p->kernel);
	CHECK(!st->detached);
	if (p->npids == 0 || p->ncpus) {
		/* All of the user's own processes: the owner check on the user alone. */
		CHECK(p->filter.on && p->filter.spec.owner_only);
		CHECK(p->filter.spec.owner == 1000 && p->filter.spec.owner_gid == 1000);
		CHECK(p->filter.spec.nuids == 1 && p->filter.spec.uids[0] == 1000);
	}
	CHECK(p->cfg.ring_pages <= cfg.user_max_ring_pages);
	CHECK(p->cfg.stack_bytes <= cfg.user_max_stack_bytes);
	CHECK(p->cfg.depth <= cfg.user_max_depth);
	for (size_t i = 0; i < p->nevents; i++) {
		const struct coll_event_spec *e = &p->events[i];
		uint64_t period = e->has_period ? e->period
				  : !e->has_freq && p->cfg.period ? p->cfg.period : 0;
		uint64_t rate;

		CHECK(e->exclude_kernel && !e->exclude_user);
		/* Software, hardware, cache, raw, or the core PMU "cpu" (type 4 in the tree). */
		CHECK(e->type == PERF_TYPE_SOFTWARE || e->type == PERF_TYPE_HARDWARE ||
		      e->type == PERF_TYPE_HW_CACHE || e->type == PERF_TYPE_RAW);
		/* user_max_freq is 0 by default: the kernel's limit is the user's. */
		if (e->has_freq)
			rate = e->freq;
		else if (!period)
			rate = p->cfg.freq;
		else if (is_clock(e))
			rate = (1000000000ull + period - 1) / period;
		else
			rate = 0;
		CHECK(rate <= MAXRATE);
	}
}

static int start(json_t *args, const struct daemon_who *who, struct session_params *p,
		 struct daemon_start *st)
{
	static struct session_params again;
	static char err[ERRLEN + 16];
	struct daemon_start st2;
	json_t *copy = json_deep_copy(args);
	int r, r2;

	if (!copy)
		abort();
	memset(err, CANARY, sizeof(err));
	r = daemon_start_parse(args, &cfg, who, MAXRATE, MAXSTACK, p, st, err, ERRLEN);
	CHECK(p->out_fd == -1 && p->ks_fd == -1);
	CHECK(r <= 0);
	if (r < 0) {
		check_err(err);
		CHECK(r == -EINVAL || r == -ERANGE || r == -EPERM || r == -EACCES ||
		      r == -ENOENT || r == -ENAMETOOLONG || r == -E2BIG);
	} else {
		CHECK(memchr(err, '\0', ERRLEN) != NULL);
		check_params(p, st);
	}
	CHECK(json_equal(args, copy));
	json_decref(copy);
	/* Pure: the same call gives the same result. */
	r2 = daemon_start_parse(args, &cfg, who, MAXRATE, MAXSTACK, &again, &st2, err, ERRLEN);
	CHECK(r2 == r);
	if (r == 0) {
		CHECK(memcmp(&st2, st, sizeof(st2)) == 0);
		CHECK(again.nevents == p->nevents && again.npids == p->npids &&
		      again.ncpus == p->ncpus && again.kernel == p->kernel &&
		      again.command == p->command);
		CHECK(memcmp(&again.cfg, &p->cfg, sizeof(p->cfg)) == 0);
		CHECK(memcmp(again.events, p->events, p->nevents * sizeof(p->events[0])) == 0);
		CHECK(memcmp(again.pids, p->pids, p->npids * sizeof(p->pids[0])) == 0);
		CHECK(memcmp(again.cpus, p->cpus, p->ncpus * sizeof(p->cpus[0])) == 0);
	}
	return r;
}

static void check_auth(const uint8_t *data, size_t size)
{
	gid_t groups[4];
	uint32_t w[7] = { 0 };
	bool want;

	memcpy(w, data, size < sizeof(w) ? size : sizeof(w));
	/* Small ids, so that the fuzzer finds matches. */
	for (size_t i = 0; i < 7; i++)
		w[i] = w[i] & 0x80000000u ? (uint32_t)-1 : w[i] % 4;
	for (size_t i = 0; i < 4; i++)
		groups[i] = w[3 + i];
	want = w[0] == 0 || (w[2] != (uint32_t)-1 && (w[1] == w[2] || groups[0] == w[2] ||
						      groups[1] == w[2]));
	CHECK(daemon_auth_admin(w[0], w[1], groups, 2, w[2]) == want);
	CHECK(daemon_auth_admin(w[0], w[1], NULL, 0, w[2]) ==
	      (w[0] == 0 || (w[2] != (uint32_t)-1 && w[1] == w[2])));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct session_params pa, pu;
	static char err[ERRLEN + 16];
	const struct daemon_who admin = { 0, 0, 1, true }, user = { 1000, 1000, 2, false };
	struct daemon_request rq;
	struct daemon_start sta, stu;
	int r, ra, ru;

	check_auth(data, size);
	memset(err, CANARY, sizeof(err));
	r = daemon_request_parse((const char *)data, size, &rq, err, ERRLEN);
	if (r < 0) {
		CHECK(r == -EPROTO || r == -EINVAL);
		CHECK(rq.root == NULL && rq.cmd == NULL && rq.args == NULL);
		check_err(err);
		return 0;
	}
	CHECK(r == 0);
	CHECK(rq.root && rq.cmd && json_is_object(rq.args));
	CHECK(json_object_get(rq.root, "args") == rq.args);
	CHECK(json_is_string(json_object_get(rq.root, "cmd")) &&
	      strcmp(json_string_value(json_object_get(rq.root, "cmd")), rq.cmd) == 0);
	CHECK(json_integer_value(json_object_get(rq.root, "id")) == rq.id);
	CHECK(json_object_size(rq.root) <= 3);
	if (strcmp(rq.cmd, "start") == 0) {
		ra = start(rq.args, &admin, &pa, &sta);
		ru = start(rq.args, &user, &pu, &stu);
		if (ra < 0)
			CHECK(ru < 0);
		if (ru == 0)
			check_user(&pu, &stu);
		if (ra == 0)
			CHECK(pa.kernel);
	}
	daemon_request_free(&rq);
	CHECK(rq.root == NULL && rq.id == -1);
	return 0;
}
