/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-collector-event.c: Check suite for the event-spec parser and the PMU
 * listing of src/collector (collector-event.c).
 *
 * The sysfs trees under tests/data/sysfs (an Intel-like and an AMD-like machine)
 * cover the well-formed cases.  The hostile ones (malformed format files, huge
 * files, FIFOs, PMUs without a type) are built at run time in a private
 * directory under /tmp and removed afterwards.  Nothing here opens a perf event.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* nftw, mkdtemp */
#endif
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwpmcd/collector-event.h"

#ifndef TEST_DATA_DIR
#error "TEST_DATA_DIR must name the tests/data directory"
#endif

#define INTEL TEST_DATA_DIR "/sysfs/intel"
#define AMD TEST_DATA_DIR "/sysfs/amd"
#define NOROOT TEST_DATA_DIR "/sysfs/does-not-exist"
#define EV_BIG 10000

static char err[2048];

/* A name PMCALLOCATEDYN takes (the rule of pmclog-encode.c's check_evname). */
static int log_name_ok(const char *s)
{
	size_t n = strnlen(s, COLL_EVENT_NAME_MAX);

	if (n == 0 || n >= COLL_EVENT_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= ' ' || c > '~' || c == '/')
			return 0;
	}
	return 1;
}

/* Parse @spec; on success also check that the name is one the log takes. */
static int parse(const char *spec, const char *root, struct coll_event_spec *ret)
{
	int r;

	memset(err, 'X', sizeof(err));
	r = coll_event_parse(spec, root, ret, err, sizeof(err));
	ck_assert_msg(memchr(err, '\0', sizeof(err)) != NULL, "err not terminated for '%s'", spec);
	if (r == 0) {
		ck_assert_msg(err[0] == '\0', "message on success for '%s': %s", spec, err);
		ck_assert_msg(log_name_ok(ret->name), "bad log name '%s' for '%s'", ret->name,
			      spec);
	} else {
		ck_assert_msg(err[0] != '\0', "no message for '%s'", spec);
	}
	return r;
}

/* Assert that @spec fails with @code and a message containing @frag, spec untouched. */
#define ck_assert_parse_fails(spec, root, code, frag)                                              \
	do {                                                                                       \
		struct coll_event_spec s_, ref_;                                                   \
		int r_;                                                                            \
		memset(&s_, 0xa5, sizeof(s_));                                                     \
		memcpy(&ref_, &s_, sizeof(s_));                                                    \
		r_ = parse((spec), (root), &s_);                                                   \
		ck_assert_msg(r_ == (code), "'%s': got %d (%s), want %d", (spec), r_, err,         \
			      (code));                                                             \
		ck_assert_msg(strstr(err, (frag)) != NULL, "'%s': message '%s' lacks '%s'",        \
			      (spec), err, (frag));                                                \
		ck_assert_msg(memcmp(&s_, &ref_, sizeof(s_)) == 0, "'%s': spec written", (spec));  \
	} while (0)

#define ck_assert_err_eq(spec, root, code, msg)                                                    \
	do {                                                                                       \
		ck_assert_parse_fails((spec), (root), (code), (msg));                              \
		ck_assert_str_eq(err, (msg));                                                      \
	} while (0)

/* ---------------------------------------------------------------- generic names */

struct generic_case {
	const char *spec;
	const char *name;
	uint32_t type;
	uint64_t config;
};

static const struct generic_case generic_cases[] = {
	{ "cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", "cache-references", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-instructions", "branch-instructions", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branches", "branch-instructions", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "ref-cycles", "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "cpu-clock", "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", "context-switches", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
};

START_TEST(test_generic_names)
{
	for (size_t i = 0; i < sizeof(generic_cases) / sizeof(generic_cases[0]); i++) {
		const struct generic_case *g = &generic_cases[i];
		struct coll_event_spec s;

		/* A root without sysfs: generic names never look there. */
		ck_assert_int_eq(parse(g->spec, NOROOT, &s), 0);
		ck_assert_str_eq(s.name, g->name);
		ck_assert_uint_eq(s.type, g->type);
		ck_assert_uint_eq(s.config, g->config);
		ck_assert_uint_eq(s.config1, 0);
		ck_assert_uint_eq(s.config2, 0);
		ck_assert(!s.exclude_user && !s.exclude_kernel);
		ck_assert(!s.has_period && !s.has_freq);
		ck_assert_int_eq(s.needs_hw_pmu, g->type == PERF_TYPE_HARDWARE);
	}
}
END_TEST

START_TEST(test_generic_list)
{
	static const char *const want[] = {
		"cycles",	  "instructions",	 "cache-references",
		"cache-misses",	  "branch-instructions", "branch-misses",
		"bus-cycles",	  "ref-cycles",		 "cpu-clock",
		"task-clock",	  "page-faults",	 "context-switches",
		"cpu-migrations", "minor-faults",	 "major-faults",
	};
	const char *const *names = coll_event_generic_names();
	size_t i;

	ck_assert_ptr_nonnull(names);
	for (i = 0; names[i]; i++) {
		struct coll_event_spec s;

		ck_assert_uint_lt(i, sizeof(want) / sizeof(want[0]));
		ck_assert_str_eq(names[i], want[i]);
		/* Every listed name parses, to itself. */
		ck_assert_int_eq(parse(names[i], NULL, &s), 0);
		ck_assert_str_eq(s.name, names[i]);
	}
	ck_assert_uint_eq(i, sizeof(want) / sizeof(want[0]));
}
END_TEST

START_TEST(test_generic_unknown)
{
	ck_assert_err_eq(
		"cpuclock", NOROOT, -ENOENT,
		"unknown event 'cpuclock'; did you mean 'cpu-clock'? ('hwpmc events' lists "
		"them)");
	ck_assert_err_eq(
		"Cycles", NOROOT, -ENOENT,
		"unknown event 'Cycles'; did you mean 'cycles'? ('hwpmc events' lists them)");
	ck_assert_err_eq(
		"instrutions", NOROOT, -ENOENT,
		"unknown event 'instrutions'; did you mean 'instructions'? ('hwpmc events' "
		"lists them)");
	ck_assert_err_eq("brnches", NOROOT, -ENOENT,
			 "unknown event 'brnches'; did you mean 'branches'? ('hwpmc events' lists "
			 "them)");
	ck_assert_err_eq(
		"ref-cycle", NOROOT, -ENOENT,
		"unknown event 'ref-cycle'; did you mean 'ref-cycles'? ('hwpmc events' lists "
		"them)");
	/* Far from everything: no guess. */
	ck_assert_err_eq("zzzzzz", NOROOT, -ENOENT,
			 "unknown event 'zzzzzz' ('hwpmc events' lists them)");
	ck_assert_err_eq("cx", NOROOT, -ENOENT, "unknown event 'cx' ('hwpmc events' lists them)");
	/* A sysfs alias written without its PMU, and a PMU written as an event. */
	ck_assert_err_eq(
		"mem-loads", INTEL, -ENOENT,
		"unknown event 'mem-loads'; did you mean 'cpu/mem-loads/'? ('hwpmc events' "
		"lists them)");
	ck_assert_err_eq(
		"cas_count_read", INTEL, -ENOENT,
		"unknown event 'cas_count_read'; did you mean 'uncore_imc_0/cas_count_read/'? "
		"('hwpmc events' lists them)");
	ck_assert_err_eq("cpu", INTEL, -EINVAL,
			 "'cpu' is a PMU, not an event; write 'cpu/event=...,umask=.../' or "
			 "'cpu/ALIAS/' ('hwpmc events' lists them)");
	/* Names are case-sensitive, as perf's are for the canonical spellings. */
	ck_assert_parse_fails("CYCLES", NOROOT, -ENOENT, "did you mean 'cycles'?");
}
END_TEST

/* ---------------------------------------------------------------- raw codes */

START_TEST(test_raw)
{
	struct coll_event_spec s;

	ck_assert_int_eq(parse("r01c2", NULL, &s), 0);
	ck_assert_uint_eq(s.type, PERF_TYPE_RAW);
	ck_assert_uint_eq(s.config, 0x1c2);
	ck_assert_str_eq(s.name, "r01c2");
	ck_assert(s.needs_hw_pmu);

	ck_assert_int_eq(parse("r1A2B3C4D", NULL, &s), 0);
	ck_assert_uint_eq(s.config, 0x1a2b3c4d);
	ck_assert_str_eq(s.name, "r1a2b3c4d");

	ck_assert_int_eq(parse("r0", NULL, &s), 0);
	ck_assert_uint_eq(s.config, 0);
	ck_assert_str_eq(s.name, "r0");

	ck_assert_int_eq(parse("rFFFFFFFFFFFFFFFF", NULL, &s), 0);
	ck_assert_uint_eq(s.config, UINT64_MAX);
	ck_assert_str_eq(s.name, "rffffffffffffffff");

	ck_assert_int_eq(parse("r01c2:u", NULL, &s), 0);
	ck_assert_str_eq(s.name, "r01c2:u");
	ck_assert(s.exclude_kernel && !s.exclude_user);

	ck_assert_int_eq(parse("r01c2/period=5000/k", NULL, &s), 0);
	ck_assert_str_eq(s.name, "r01c2:k");
	ck_assert_uint_eq(s.config, 0x1c2);
	ck_assert(s.has_period);
	ck_assert_uint_eq(s.period, 5000);
	ck_assert(s.exclude_user && !s.exclude_kernel);
}
END_TEST

START_TEST(test_raw_errors)
{
	ck_assert_err_eq("r", NOROOT, -EINVAL,
			 "bad raw event 'r': 'r' must be followed by 1 to 16 hex digits, as in "
			 "'r01c2'");
	ck_assert_err_eq("rxyz", NOROOT, -EINVAL,
			 "bad raw event 'rxyz': 'r' must be followed by 1 to 16 hex digits, as in "
			 "'r01c2'");
	ck_assert_err_eq(
		"r0x1c2", NOROOT, -EINVAL,
		"bad raw event 'r0x1c2': 'r' must be followed by 1 to 16 hex digits, as in "
		"'r01c2'");
	ck_assert_err_eq("r12g", NOROOT, -EINVAL,
			 "bad raw event 'r12g': 'r' must be followed by 1 to 16 hex digits, as in "
			 "'r01c2'");
	ck_assert_err_eq("r12345678901234567", NULL, -ERANGE,
			 "raw event 'r12345678901234567' has 17 hex digits; at most 16 fit");
	ck_assert_err_eq("r12345678901234567/period=1/", NULL, -ERANGE,
			 "raw event 'r12345678901234567' has 17 hex digits; at most 16 fit");
	ck_assert_err_eq(
		"r01c2/event=1/", NULL, -EINVAL,
		"r01c2: unknown term 'event'; valid terms: period, freq (other terms need a "
		"PMU, as in 'cpu/event=0x3c/')");
}
END_TEST

/* ---------------------------------------------------------------- modifiers */

START_TEST(test_modifiers)
{
	struct coll_event_spec s;

	ck_assert_int_eq(parse("cycles:u", NULL, &s), 0);
	ck_assert(s.exclude_kernel && !s.exclude_user);
	ck_assert_str_eq(s.name, "cycles:u");
	ck_assert_int_eq(parse("cpu-cycles:k", NULL, &s), 0);
	ck_assert(!s.exclude_kernel && s.exclude_user);
	ck_assert_str_eq(s.name, "cycles:k");
	ck_assert_int_eq(parse("cycles:uk", NULL, &s), 0);
	ck_assert(!s.exclude_kernel && !s.exclude_user);
	ck_assert_str_eq(s.name, "cycles");
	ck_assert_int_eq(parse("cycles:ku", NULL, &s), 0);
	ck_assert(!s.exclude_kernel && !s.exclude_user);
	ck_assert_str_eq(s.name, "cycles");
	ck_assert_int_eq(parse("cs:uu", NULL, &s), 0);
	ck_assert_str_eq(s.name, "context-switches:u");

	/* After the closing slash, with or without ':'. */
	ck_assert_int_eq(parse("cpu/event=0x3c/u", INTEL, &s), 0);
	ck_assert(s.exclude_kernel && !s.exclude_user);
	ck_assert_str_eq(s.name, "cpu.event=0x3c:u");
	ck_assert_int_eq(parse("cpu/event=0x3c/:u", INTEL, &s), 0);
	ck_assert(s.exclude_kernel && !s.exclude_user);
	ck_assert_str_eq(s.name, "cpu.event=0x3c:u");
	ck_assert_int_eq(parse("cpu/event=0x3c/k", INTEL, &s), 0);
	ck_assert(!s.exclude_kernel && s.exclude_user);
	ck_assert_str_eq(s.name, "cpu.event=0x3c:k");
	ck_assert_int_eq(parse("cpu/event=0x3c/:uk", INTEL, &s), 0);
	ck_assert(!s.exclude_kernel && !s.exclude_user);
	ck_assert_str_eq(s.name, "cpu.event=0x3c");
	ck_assert_int_eq(parse("cpu-clock/period=100000/:k", NULL, &s), 0);
	ck_assert(s.exclude_user);
	ck_assert_str_eq(s.name, "cpu-clock:k");
}
END_TEST

START_TEST(test_modifier_errors)
{
	ck_assert_err_eq("cycles:p", NULL, -EINVAL,
			 "event 'cycles:p': modifier 'p' (precise sampling) is not supported; "
			 "supported modifiers: u (user only), k (kernel only)");
	ck_assert_parse_fails("cycles:upp", NULL, -EINVAL, "modifier 'p' (precise sampling)");
	ck_assert_parse_fails("cpu/event=0x3c/P", INTEL, -EINVAL,
			      "modifier 'P' (precise sampling)");
	ck_assert_err_eq("cycles:h", NULL, -EINVAL,
			 "event 'cycles:h': perf's modifier 'h' is not supported; supported "
			 "modifiers: u (user only), k (kernel only)");
	ck_assert_parse_fails("cycles:G", NULL, -EINVAL, "perf's modifier 'G' is not supported");
	ck_assert_err_eq(
		"cycles:z", NULL, -EINVAL,
		"event 'cycles:z': unknown modifier 'z'; supported modifiers: u (user only), "
		"k (kernel only)");
	ck_assert_parse_fails("cpu/event=0x3c/:x", INTEL, -EINVAL, "unknown modifier 'x'");
	ck_assert_err_eq("cycles:", NULL, -EINVAL, "event 'cycles:': empty modifier after ':'");
	ck_assert_err_eq("cpu/event=0x3c/:", INTEL, -EINVAL,
			 "event 'cpu/event=0x3c/:': empty modifier after ':'");
	ck_assert_err_eq("cycles:u:k", NULL, -EINVAL,
			 "event 'cycles:u:k': unexpected ':' in the modifiers 'u:k'");
	ck_assert_err_eq("cycles:u1", NULL, -EINVAL,
			 "event 'cycles:u1': unexpected '1' in the modifiers 'u1'");
	ck_assert_err_eq(":u", NULL, -EINVAL, "event ':u': missing the event name before ':'");
}
END_TEST

/* ---------------------------------------------------------------- period and freq */

START_TEST(test_period_freq)
{
	struct coll_event_spec s;

	ck_assert_int_eq(parse("cpu-clock/period=100000/", NULL, &s), 0);
	ck_assert_uint_eq(s.type, PERF_TYPE_SOFTWARE);
	ck_assert_uint_eq(s.config, PERF_COUNT_SW_CPU_CLOCK);
	ck_assert(s.has_period && !s.has_freq);
	ck_assert_uint_eq(s.period, 100000);
	ck_assert_str_eq(s.name, "cpu-clock");

	ck_assert_int_eq(parse("cycles/freq=0x3e8/", NULL, &s), 0);
	ck_assert(s.has_freq && !s.has_period);
	ck_assert_uint_eq(s.freq, 1000);
	ck_assert_str_eq(s.name, "cycles");

	ck_assert_int_eq(parse("cpu/event=0x3c,period=2000003/", INTEL, &s), 0);
	ck_assert(s.has_period);
	ck_assert_uint_eq(s.period, 2000003);
	ck_assert_uint_eq(s.config, 0x3c);
	ck_assert_str_eq(s.name, "cpu.event=0x3c"); /* period is not part of the name */

	ck_assert_int_eq(parse("cpu/freq=4000,cpu-cycles/u", INTEL, &s), 0);
	ck_assert(s.has_freq);
	ck_assert_uint_eq(s.freq, 4000);
	ck_assert_str_eq(s.name, "cpu.cpu-cycles:u");

	/* The largest period the kernel takes. */
	ck_assert_int_eq(parse("cpu-clock/period=9223372036854775807/", NULL, &s), 0);
	ck_assert_uint_eq(s.period, INT64_MAX);
	/* A later value wins. */
	ck_assert_int_eq(parse("cpu-clock/period=10,period=20/", NULL, &s), 0);
	ck_assert_uint_eq(s.period, 20);
}
END_TEST

START_TEST(test_period_freq_errors)
{
	ck_assert_err_eq("cpu-clock/period=1,freq=2/", NULL, -EINVAL,
			 "event 'cpu-clock/period=1,freq=2/': give period or freq, not both");
	ck_assert_err_eq(
		"cpu/event=0x3c,freq=10,period=10/", INTEL, -EINVAL,
		"event 'cpu/event=0x3c,freq=10,period=10/': give period or freq, not both");
	ck_assert_err_eq("cpu-clock/period=0/", NULL, -EINVAL,
			 "cpu-clock: period=0 is not allowed; the period must be at least 1");
	ck_assert_err_eq("cycles/freq=0/", NULL, -EINVAL,
			 "cycles: freq=0 is not allowed; the frequency must be at least 1");
	ck_assert_err_eq("cpu/event=1,freq=0x0/", INTEL, -EINVAL,
			 "cpu: freq=0x0 is not allowed; the frequency must be at least 1");
	ck_assert_err_eq("cpu-clock/period/", NULL, -EINVAL,
			 "cpu-clock: 'period' needs a value, as in period=100000");
	ck_assert_err_eq("cpu/freq/", INTEL, -EINVAL, "cpu: 'freq' needs a value, as in freq=1000");
	ck_assert_err_eq("cpu-clock/period=9223372036854775808/", NULL, -ERANGE,
			 "cpu-clock: period 9223372036854775808 is too large (at most "
			 "9223372036854775807)");
	ck_assert_err_eq(
		"cpu-clock/period=99999999999999999999/", NULL, -ERANGE,
		"cpu-clock: value 99999999999999999999 of 'period' does not fit in 64 bits");
	ck_assert_err_eq(
		"cpu-clock/period=1k/", NULL, -EINVAL,
		"cpu-clock: bad value '1k' for 'period'; expected a decimal or 0x-hex number");
	ck_assert_err_eq(
		"cpu-clock/period=-1/", NULL, -EINVAL,
		"cpu-clock: bad value '-1' for 'period'; expected a decimal or 0x-hex number");
	ck_assert_err_eq("cpu-clock/period=/", NULL, -EINVAL,
			 "cpu-clock: missing value after 'period='");
	ck_assert_err_eq(
		"cpu-clock/event=1/", NULL, -EINVAL,
		"cpu-clock: unknown term 'event'; valid terms: period, freq (other terms need "
		"a PMU, as in 'cpu/event=0x3c/')");
	ck_assert_err_eq("cpu-clock/period=1,,freq=1/", NULL, -EINVAL,
			 "cpu-clock: empty term in 'cpu-clock/period=1,,freq=1/'");
}
END_TEST

/* ---------------------------------------------------------------- PMUs: Intel tree */

START_TEST(test_pmu_intel)
{
	struct coll_event_spec s;

	ck_assert_int_eq(parse("cpu/event=0x3c,umask=0x1/", INTEL, &s), 0);
	ck_assert_uint_eq(s.type, 4);
	ck_assert_uint_eq(s.config, 0x13c);
	ck_assert_uint_eq(s.config1, 0);
	ck_assert_uint_eq(s.config2, 0);
	ck_assert(s.needs_hw_pmu);
	ck_assert(!s.exclude_user && !s.exclude_kernel && !s.has_period && !s.has_freq);
	ck_assert_str_eq(s.name, "cpu.event=0x3c.umask=0x1");

	/* Decimal values; the name keeps the spelling given. */
	ck_assert_int_eq(parse("cpu/event=60,umask=1/", INTEL, &s), 0);
	ck_assert_uint_eq(s.config, 0x13c);
	ck_assert_str_eq(s.name, "cpu.event=60.umask=1");

	/* Single-bit terms: bare means 1. */
	ck_assert_int_eq(parse("cpu/event=0x3c,edge/", INTEL, &s), 0);
	ck_assert_uint_eq(s.config, 0x3c | 1u << 18);
	ck_assert_str_eq(s.name, "cpu.event=0x3c.edge");
	ck_assert_int_eq(parse("cpu/event=0x3c,any,inv=1,cmask=0xff/", INTEL, &s), 0);
	ck_assert_uint_eq(s.config, 0x3c | 1u << 21 | 1u << 23 | 0xffull << 24);
	ck_assert_int_eq(parse("cpu/edge=0/", INTEL, &s), 0);
	ck_assert_uint_eq(s.config, 0);

	/* config1 fields, overlapping each other as on real hardware. */
	ck_assert_int_eq(parse("cpu/event=0xcd,umask=0x1,ldlat=0xffff/", INTEL, &s), 0);
	ck_assert_uint_eq(s.config, 0x1cd);
	ck_assert_uint_eq(s.config1, 0xffff);
	ck_assert_int_eq(parse("cpu/event=0xc6,frontend=0xabcdef/", INTEL, &s), 0);
	ck_assert_uint_eq(s.config, 0xc6);
	ck_assert_uint_eq(s.config1, 0xabcdef);

	/* The whole registers, then a field over them; later terms override. */
	ck_assert_int_eq(parse("cpu/config=0x1234,config1=5,config2=0x6/", INTEL, &s), 0);
	ck_assert_uint_eq(s.config, 0x1234);
	ck_assert_uint_eq(s.config1, 5);
	ck_assert_uint_eq(s.config2, 6);
	ck_assert_str_eq(s.name, "cpu.config=0x1234.config1=5.config2=0x6");
	ck_assert_int_eq(parse("cpu/config=0xffff,umask=0x1/", INTEL, &s), 0);
	ck_assert_uint_eq(s.config, 0x1ff);
	ck_assert_int_eq(parse("cpu/event=0x3c,event=0xc0/", INTEL, &s), 0);
	ck_assert_uint_eq(s.config, 0xc0);

	/* A second PMU of the same tree. */
	ck_assert_int_eq(parse("uncore_imc_0/event=0x4,umask=0x3/", INTEL, &s), 0);
	ck_assert_uint_eq(s.type, 17);
	ck_assert_uint_eq(s.config, 0x304);
	ck_assert(s.needs_hw_pmu);
	ck_assert_str_eq(s.name, "uncore_imc_0.event=0x4.umask=0x3");
}
END_TEST

START_TEST(test_pmu_alias)
{
	struct coll_event_spec s;

	/* The whole thing is an alias. */
	ck_assert_int_eq(parse("cpu/cpu-cycles/", INTEL, &s), 0);
	ck_assert_uint_eq(s.type, 4);
	ck_assert_uint_eq(s.config, 0x3c);
	ck_assert_str_eq(s.name, "cpu.cpu-cycles");
	ck_assert_int_eq(parse("cpu/branch-misses/u", INTEL, &s), 0);
	ck_assert_uint_eq(s.config, 0xc5);
	ck_assert_str_eq(s.name, "cpu.branch-misses:u");

	/* Expansion with override: ldlat=3 from the alias, then 5 from the user. */
	ck_assert_int_eq(parse("cpu/mem-loads/", INTEL, &s), 0);
	ck_assert_uint_eq(s.config, 0x1cd);
	ck_assert_uint_eq(s.config1, 3);
	ck_assert_int_eq(parse("cpu/mem-loads,ldlat=5/", INTEL, &s), 0);
	ck_assert_uint_eq(s.config, 0x1cd);
	ck_assert_uint_eq(s.config1, 5);
	ck_assert_str_eq(s.name, "cpu.mem-loads.ldlat=5");
	ck_assert_int_eq(parse("cpu/mem-loads,umask=0x2,edge/k", INTEL, &s), 0);
	ck_assert_uint_eq(s.config, 0x2cd | 1u << 18);
	ck_assert_uint_eq(s.config1, 3);
	ck_assert_str_eq(s.name, "cpu.mem-loads.umask=0x2.edge:k");
	/* A term before the alias is overridden by the alias. */
	ck_assert_int_eq(parse("cpu/ldlat=5,mem-loads/", INTEL, &s), 0);
	ck_assert_uint_eq(s.config1, 3);

	ck_assert_int_eq(parse("uncore_imc_0/cas_count_read/", INTEL, &s), 0);
	ck_assert_uint_eq(s.type, 17);
	ck_assert_uint_eq(s.config, 0x304);
	ck_assert_str_eq(s.name, "uncore_imc_0.cas_count_read");

	/* Companion files are not aliases. */
	ck_assert_parse_fails("uncore_imc_0/cas_count_read.scale/", INTEL, -ENOENT,
			      "uncore_imc_0: unknown term or alias 'cas_count_read.scale'");
	ck_assert_err_eq("cpu/mem-loads=1/", INTEL, -EINVAL,
			 "cpu: 'mem-loads' is an event alias and takes no value");
}
END_TEST

START_TEST(test_pmu_amd_split_field)
{
	struct coll_event_spec s;

	/* event 0x160: bits 0-7 (0x60) to config 0-7, bits 8-11 (0x1) to config 32-35. */
	ck_assert_int_eq(parse("cpu/event=0x160,umask=0xff/", AMD, &s), 0);
	ck_assert_uint_eq(s.type, 4);
	ck_assert_uint_eq(s.config, 0x100000060ull | 0xffull << 8);
	ck_assert_uint_eq(s.config, 0x10000ff60ull);
	ck_assert_str_eq(s.name, "cpu.event=0x160.umask=0xff");

	ck_assert_int_eq(parse("cpu/l2_request_g1/", AMD, &s), 0);
	ck_assert_uint_eq(s.config, 0x10000ff60ull);
	ck_assert_str_eq(s.name, "cpu.l2_request_g1");

	ck_assert_int_eq(parse("cpu/event=0xfff/", AMD, &s), 0);
	ck_assert_uint_eq(s.config, 0xf000000ffull);
	ck_assert_int_eq(parse("cpu/event=0x76/", AMD, &s), 0);
	ck_assert_uint_eq(s.config, 0x76);
	ck_assert_int_eq(parse("cpu/cpu-cycles/", AMD, &s), 0);
	ck_assert_uint_eq(s.config, 0x76);
	/* An override of a split field clears both parts. */
	ck_assert_int_eq(parse("cpu/l2_request_g1,event=0x2/", AMD, &s), 0);
	ck_assert_uint_eq(s.config, 0xff02);
	ck_assert_int_eq(parse("cpu/event=0x160,cmask=0x3,inv,edge/", AMD, &s), 0);
	ck_assert_uint_eq(s.config, 0x100000060ull | 3u << 24 | 1u << 23 | 1u << 18);

	ck_assert_err_eq("cpu/event=0x1000/", AMD, -ERANGE,
			 "cpu: value 0x1000 of 'event' does not fit its 12-bit field "
			 "config:0-7,32-35 (at most 0xfff)");
	/* On Intel the same event does not fit. */
	ck_assert_err_eq("cpu/event=0x160/", INTEL, -ERANGE,
			 "cpu: value 0x160 of 'event' does not fit its 8-bit field config:0-7 (at "
			 "most 0xff)");
}
END_TEST

START_TEST(test_pmu_range_errors)
{
	struct coll_event_spec s;

	ck_assert_err_eq("cpu/umask=0x1ff/", INTEL, -ERANGE,
			 "cpu: value 0x1ff of 'umask' does not fit its 8-bit field config:8-15 (at "
			 "most 0xff)");
	ck_assert_err_eq(
		"cpu/event=0x3c,umask=256/", INTEL, -ERANGE,
		"cpu: value 256 of 'umask' does not fit its 8-bit field config:8-15 (at most "
		"0xff)");
	ck_assert_err_eq(
		"cpu/any=2/", INTEL, -ERANGE,
		"cpu: value 2 of 'any' does not fit its 1-bit field config:21 (at most 0x1)");
	ck_assert_err_eq(
		"cpu/ldlat=0x10000/", INTEL, -ERANGE,
		"cpu: value 0x10000 of 'ldlat' does not fit its 16-bit field config1:0-15 (at "
		"most 0xffff)");
	ck_assert_err_eq("cpu/event=0x1ffffffffffffffff/", INTEL, -ERANGE,
			 "cpu: value 0x1ffffffffffffffff of 'event' does not fit in 64 bits");
	ck_assert_err_eq("cpu/config=0x10000000000000000/", INTEL, -ERANGE,
			 "cpu: value 0x10000000000000000 of 'config' does not fit in 64 bits");
	/* The largest values that do fit. */
	ck_assert_int_eq(parse("cpu/umask=0xff,ldlat=65535,frontend=0xffffff/", INTEL, &s), 0);
	ck_assert_uint_eq(s.config, 0xff00);
	ck_assert_uint_eq(s.config1, 0xffffff);
	ck_assert_int_eq(parse("cpu/config2=0xffffffffffffffff/", INTEL, &s), 0);
	ck_assert_uint_eq(s.config2, UINT64_MAX);
}
END_TEST

START_TEST(test_pmu_unknown)
{
	ck_assert_err_eq("cpx/event=0x3c/", INTEL, -ENOENT,
			 "unknown PMU 'cpx'; PMUs here: cpu, software, tracepoint, uncore_imc_0");
	ck_assert_err_eq("uncore_imc_1/event=1/", AMD, -ENOENT,
			 "unknown PMU 'uncore_imc_1'; PMUs here: cpu, software, tracepoint");
	/* A typo of a generic name written with terms gets both hints. */
	ck_assert_err_eq(
		"cpu-clok/period=1000/", INTEL, -ENOENT,
		"unknown PMU 'cpu-clok'; PMUs here: cpu, software, tracepoint, uncore_imc_0; "
		"did you mean the event 'cpu-clock'?");
	ck_assert_err_eq("cpu/event=1/", NOROOT, -ENOENT,
			 "unknown PMU 'cpu'; cannot open '" NOROOT
			 "/bus/event_source/devices': No such file or directory");
}
END_TEST

START_TEST(test_pmu_unknown_term)
{
	ck_assert_err_eq(
		"cpu/evnt=0x3c/", INTEL, -EINVAL,
		"cpu: unknown term 'evnt'; valid terms: any, cmask, edge, event, frontend, "
		"inv, ldlat, umask, period, freq, config, config1, config2; did you mean "
		"'event'?");
	ck_assert_err_eq(
		"cpu/evnt/", INTEL, -ENOENT,
		"cpu: unknown term or alias 'evnt'; valid terms: any, cmask, edge, event, "
		"frontend, inv, ldlat, umask, period, freq, config, config1, config2; did you "
		"mean 'event'? ('hwpmc events' lists the aliases)");
	ck_assert_err_eq(
		"cpu/cpu-cyles/", INTEL, -ENOENT,
		"cpu: unknown term or alias 'cpu-cyles'; valid terms: any, cmask, edge, "
		"event, frontend, inv, ldlat, umask, period, freq, config, config1, config2; "
		"did you mean 'cpu-cycles'? ('hwpmc events' lists the aliases)");
	ck_assert_err_eq(
		"uncore_imc_0/foo=1/", INTEL, -EINVAL,
		"uncore_imc_0: unknown term 'foo'; valid terms: event, umask, period, freq, "
		"config, config1, config2");
	/* A PMU without format/ takes the built-in terms only. */
	ck_assert_err_eq(
		"software/event=1/", INTEL, -EINVAL,
		"software: unknown term 'event'; valid terms: period, freq, config, config1, "
		"config2");
	ck_assert_parse_fails(
		"cpu/event=1,bogus/", AMD, -ENOENT,
		"cpu: unknown term or alias 'bogus'; valid terms: cmask, edge, event, "
		"inv, umask, period");
}
END_TEST

START_TEST(test_pmu_syntax_errors)
{
	ck_assert_err_eq("cpu/event=0x3c", INTEL, -EINVAL,
			 "event 'cpu/event=0x3c': missing the closing '/' of the term list");
	ck_assert_err_eq("cpu/event=1/umask=1/", INTEL, -EINVAL,
			 "event 'cpu/event=1/umask=1/': unexpected '/' after the term list");
	ck_assert_err_eq("cpu//", INTEL, -EINVAL,
			 "event 'cpu//': empty term list between the slashes");
	ck_assert_err_eq("/event=1/", INTEL, -EINVAL,
			 "event '/event=1/': missing the PMU or event name before '/'");
	ck_assert_err_eq("cpu/event=0x3c,/", INTEL, -EINVAL,
			 "cpu: empty term in 'cpu/event=0x3c,/'");
	ck_assert_err_eq("cpu/,event=1/", INTEL, -EINVAL, "cpu: empty term in 'cpu/,event=1/'");
	ck_assert_err_eq("cpu/event=,umask=1/", INTEL, -EINVAL,
			 "cpu: missing value after 'event='");
	ck_assert_err_eq("cpu/=1/", INTEL, -EINVAL, "cpu: missing term name before '=1'");
	ck_assert_err_eq("cpu/event=zz/", INTEL, -EINVAL,
			 "cpu: bad value 'zz' for 'event'; expected a decimal or 0x-hex number");
	ck_assert_err_eq("cpu/event=0x/", INTEL, -EINVAL,
			 "cpu: bad value '0x' for 'event'; expected a decimal or 0x-hex number");
	ck_assert_err_eq("cpu/event=1=2/", INTEL, -EINVAL,
			 "cpu: bad value '1=2' for 'event'; expected a decimal or 0x-hex number");
	/* Names that could climb out of the PMU directory never reach the file system. */
	ck_assert_err_eq(
		"cpu/../", INTEL, -EINVAL,
		"cpu: bad term name '..': use letters, digits, '_', '-' and '.' (not first)");
	ck_assert_err_eq("cpu/.hidden/", INTEL, -EINVAL,
			 "cpu: bad term name '.hidden': use letters, digits, '_', '-' and '.' (not "
			 "first)");
	ck_assert_err_eq("cpu/ev$nt=1/", INTEL, -EINVAL,
			 "cpu: bad term name 'ev$nt': use letters, digits, '_', '-' and '.' (not "
			 "first)");
	ck_assert_err_eq("../event=1/", INTEL, -EINVAL,
			 "bad PMU name '..': use letters, digits, '_', '-' and '.' (not first)");
	ck_assert_err_eq("cpu:u/event=1/", INTEL, -EINVAL,
			 "bad PMU name 'cpu:u': use letters, digits, '_', '-' and '.' (not first)");
	ck_assert_err_eq(
		"cpu/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=1/", INTEL,
		-ENAMETOOLONG,
		"cpu: term name 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' is longer than "
		"63 characters");
	ck_assert_err_eq(
		"pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/event=1/", INTEL,
		-ENAMETOOLONG,
		"PMU name 'pppppppppppppppppppppppppppppppppppppppp...' is longer than 63 "
		"characters");
}
END_TEST

START_TEST(test_pmu_needs_hw)
{
	struct coll_event_spec s;

	ck_assert_int_eq(parse("software/config=0/", INTEL, &s), 0);
	ck_assert_uint_eq(s.type, 1);
	ck_assert_uint_eq(s.config, 0);
	ck_assert(!s.needs_hw_pmu);
	ck_assert_str_eq(s.name, "software.config=0");
	ck_assert_int_eq(parse("tracepoint/config=0x123/", AMD, &s), 0);
	ck_assert_uint_eq(s.type, 2);
	ck_assert_uint_eq(s.config, 0x123);
	ck_assert(!s.needs_hw_pmu);
	ck_assert_int_eq(parse("cpu/event=0x76/", AMD, &s), 0);
	ck_assert(s.needs_hw_pmu);
	ck_assert_int_eq(parse("uncore_imc_0/event=1/", INTEL, &s), 0);
	ck_assert(s.needs_hw_pmu);
}
END_TEST

/* ---------------------------------------------------------------- spec-level checks */

START_TEST(test_spec_text)
{
	struct coll_event_spec s, ref;
	char big[COLL_EVENT_SPEC_MAX + 2];
	char msg[16];
	int r;

	/* Blanks around the spec are ignored, inside it they are not. */
	ck_assert_int_eq(parse("  cycles:u\t\n", NULL, &s), 0);
	ck_assert_str_eq(s.name, "cycles:u");
	ck_assert_err_eq("cy cles", NULL, -EINVAL,
			 "event 'cy cles': white space or a non-printable character at offset 2");
	ck_assert_err_eq(
		"cpu/event=1,\tumask=1/", INTEL, -EINVAL,
		"event 'cpu/event=1,\\tumask=1/': white space or a non-printable character at "
		"offset 12");
	ck_assert_err_eq(
		"cyc\x01les", NULL, -EINVAL,
		"event 'cyc\\x01les': white space or a non-printable character at offset 3");
	ck_assert_err_eq(
		"cycl\xc3\xa9s", NULL, -EINVAL,
		"event 'cycl\\xc3\\xa9s': white space or a non-printable character at offset 4");
	ck_assert_err_eq("", NULL, -EINVAL, "empty event");
	ck_assert_err_eq(" \t ", NULL, -EINVAL, "empty event");
	ck_assert_int_eq(coll_event_parse(NULL, NULL, &s, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "no event given");
	ck_assert_int_eq(coll_event_parse("cycles", NULL, NULL, err, sizeof(err)), -EINVAL);

	/* The length limit. */
	memset(big, 'a', sizeof(big));
	big[COLL_EVENT_SPEC_MAX + 1] = '\0';
	ck_assert_parse_fails(big, NULL, -ENAMETOOLONG, "is longer than 1023 characters");
	big[COLL_EVENT_SPEC_MAX] = '\0';
	ck_assert_parse_fails(big, NULL, -ENOENT, "unknown event 'aaaa");

	/* The error buffer: optional, always terminated, truncated when short. */
	ck_assert_int_eq(coll_event_parse("bogus", NOROOT, &s, NULL, 0), -ENOENT);
	memset(msg, 'X', sizeof(msg));
	ck_assert_int_eq(coll_event_parse("bogus", NOROOT, &s, msg, sizeof(msg)), -ENOENT);
	ck_assert_str_eq(msg, "unknown event '");
	memset(msg, 'X', sizeof(msg));
	ck_assert_int_eq(coll_event_parse("bogus", NOROOT, &s, msg, 1), -ENOENT);
	ck_assert_int_eq(msg[0], '\0');
	ck_assert_int_eq(msg[1], 'X');
	/* Success clears a stale message and leaves nothing behind. */
	strcpy(msg, "stale");
	ck_assert_int_eq(coll_event_parse("cycles", NULL, &s, msg, sizeof(msg)), 0);
	ck_assert_str_eq(msg, "");

	/* Failure leaves *ret_spec alone, even late (after the PMU was resolved). */
	memset(&s, 0x5a, sizeof(s));
	memcpy(&ref, &s, sizeof(s));
	r = coll_event_parse("cpu/event=0x3c,umask=0x1/z", INTEL, &s, err, sizeof(err));
	ck_assert_int_eq(r, -EINVAL);
	ck_assert_mem_eq(&s, &ref, sizeof(s));
}
END_TEST

START_TEST(test_names_always_valid)
{
	static const char *const specs[] = {
		"cycles",
		"cs:u",
		"r01c2:k",
		"cpu-clock/period=1/",
		"cpu/event=0x3c/",
		"cpu/mem-loads,ldlat=5/u",
		"cpu/cpu-cycles/:k",
		"uncore_imc_0/cas_count_read/",
		"software/config=0/",
		"cpu/edge,any,inv/",
		"cpu/event=0x3c,umask=0x1,edge,inv,cmask=0x1,any,ldlat=0x3,frontend=0x1/u",
		"cpu/"
		"config=0xffffffffffffffff,config1=0xffffffffffffffff,config2=0xffffffffffffffff/u",
	};
	struct coll_event_spec s;
	char spec[256], want[64];

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		ck_assert_int_eq(parse(specs[i], INTEL, &s), 0); /* parse() checks each name */

	/* Too long for the log: the name comes from the config values. */
	ck_assert_int_eq(
		parse("cpu/event=0x3c,umask=0x1,edge,inv,cmask=0x1,any,ldlat=0x3,frontend=0x1/u",
		      INTEL, &s),
		0);
	ck_assert_uint_eq(s.config, 0x1a4013c);
	ck_assert_uint_eq(s.config1, 0x1);
	ck_assert_str_eq(s.name, "cpu.0x1a4013c.0x1:u");
	ck_assert_int_eq(parse("cpu/config=0xffffffffffffffff,config1=0xffffffffffffffff,"
			       "config2=0xffffffffffffffff/u",
			       INTEL, &s),
			 0);
	ck_assert_str_eq(s.name, "cpu.0xffffffffffffffff.0xffffffffffffffff.0xffffffffffffffff:u");
	ck_assert_uint_eq(strlen(s.name), 62);

	/* The boundary: 63 characters stay as given, 64 fall back. */
	snprintf(spec, sizeof(spec), "cpu/event=0x%049d3c/", 0);
	ck_assert_int_eq(parse(spec, INTEL, &s), 0);
	snprintf(want, sizeof(want), "cpu.event=0x%049d3c", 0);
	ck_assert_uint_eq(strlen(want), 63);
	ck_assert_str_eq(s.name, want);
	snprintf(spec, sizeof(spec), "cpu/event=0x%050d3c/", 0);
	ck_assert_int_eq(parse(spec, INTEL, &s), 0);
	ck_assert_str_eq(s.name, "cpu.0x3c");
	/* The modifier suffix counts. */
	snprintf(spec, sizeof(spec), "cpu/event=0x%047d3c/u", 0);
	ck_assert_int_eq(parse(spec, INTEL, &s), 0);
	snprintf(want, sizeof(want), "cpu.event=0x%047d3c:u", 0);
	ck_assert_str_eq(s.name, want);
	snprintf(spec, sizeof(spec), "cpu/event=0x%048d3c/u", 0);
	ck_assert_int_eq(parse(spec, INTEL, &s), 0);
	ck_assert_str_eq(s.name, "cpu.0x3c:u");
	/* config2 without config1 keeps the positions. */
	snprintf(spec, sizeof(spec), "cpu/event=0x%050d3c,config2=7/", 0);
	ck_assert_int_eq(parse(spec, INTEL, &s), 0);
	ck_assert_str_eq(s.name, "cpu.0x3c.0x0.0x7");
}
END_TEST

/* ---------------------------------------------------------------- lists */

START_TEST(test_list_split)
{
	struct coll_event_spec specs[COLL_EVENT_MAX];
	size_t n = 0;

	ck_assert_int_eq(coll_event_parse_list("cpu-clock,cpu/event=0x3c,umask=1/,r01c2", INTEL,
					       specs, COLL_EVENT_MAX, &n, err, sizeof(err)),
			 3);
	ck_assert_str_eq(err, "");
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(specs[0].name, "cpu-clock");
	ck_assert_uint_eq(specs[0].type, PERF_TYPE_SOFTWARE);
	ck_assert_str_eq(specs[1].name, "cpu.event=0x3c.umask=1");
	ck_assert_uint_eq(specs[1].type, 4);
	ck_assert_uint_eq(specs[1].config, 0x13c);
	ck_assert_str_eq(specs[2].name, "r01c2");
	ck_assert_uint_eq(specs[2].type, PERF_TYPE_RAW);

	/* Repeated -e append; modifiers after the slash and blanks after commas. */
	ck_assert_int_eq(coll_event_parse_list("cpu/mem-loads,ldlat=5/u, cycles:k ,cpu-clock/"
					       "period=1,freq=1/",
					       INTEL, specs, COLL_EVENT_MAX, &n, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "event 'cpu-clock/period=1,freq=1/': give period or freq, not both");
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(coll_event_parse_list("cpu/mem-loads,ldlat=5/u, cycles:k ,cs", INTEL,
					       specs, COLL_EVENT_MAX, &n, err, sizeof(err)),
			 3);
	ck_assert_uint_eq(n, 6);
	ck_assert_str_eq(specs[3].name, "cpu.mem-loads.ldlat=5:u");
	ck_assert_uint_eq(specs[3].config1, 5);
	ck_assert_str_eq(specs[4].name, "cycles:k");
	ck_assert_str_eq(specs[5].name, "context-switches");
	/* The earlier events are untouched. */
	ck_assert_str_eq(specs[0].name, "cpu-clock");
	ck_assert_str_eq(specs[2].name, "r01c2");

	ck_assert_int_eq(coll_event_parse_list("cpu/event=0x160,umask=0xff/", AMD, specs,
					       COLL_EVENT_MAX, &n, err, sizeof(err)),
			 1);
	ck_assert_uint_eq(n, 7);
	ck_assert_uint_eq(specs[6].config, 0x10000ff60ull);
}
END_TEST

START_TEST(test_list_errors)
{
	struct coll_event_spec specs[4], ref[4];
	size_t n = 1;

	memset(specs, 0x77, sizeof(specs));
	memcpy(ref, specs, sizeof(specs));
	ck_assert_int_eq(coll_event_parse_list("", NULL, specs, 4, &n, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "empty event list");
	ck_assert_int_eq(coll_event_parse_list("  ", NULL, specs, 4, &n, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "empty event list");
	ck_assert_int_eq(coll_event_parse_list("cycles,", NULL, specs, 4, &n, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "empty event in the list 'cycles,' (a stray comma?)");
	ck_assert_int_eq(coll_event_parse_list(",cycles", NULL, specs, 4, &n, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "empty event in the list ',cycles' (a stray comma?)");
	ck_assert_int_eq(coll_event_parse_list("cycles, ,cs", NULL, specs, 4, &n, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "empty event in the list 'cycles, ,cs' (a stray comma?)");
	/* A bad event anywhere: nothing is appended. */
	ck_assert_int_eq(coll_event_parse_list("cycles,instructions,bogus", NOROOT, specs, 4, &n,
					       err, sizeof(err)),
			 -ENOENT);
	ck_assert_str_eq(err, "unknown event 'bogus' ('hwpmc events' lists them)");
	/* An unclosed PMU term list swallows the rest of the list, and says so. */
	ck_assert_int_eq(
		coll_event_parse_list("cpu/event=1,cycles", INTEL, specs, 4, &n, err, sizeof(err)),
		-EINVAL);
	ck_assert_str_eq(err,
			 "event 'cpu/event=1,cycles': missing the closing '/' of the term list");
	ck_assert_uint_eq(n, 1);
	ck_assert_mem_eq(specs, ref, sizeof(specs));

	/* Arguments. */
	ck_assert_int_eq(coll_event_parse_list(NULL, NULL, specs, 4, &n, err, sizeof(err)),
			 -EINVAL);
	n = 5;
	ck_assert_int_eq(coll_event_parse_list("cycles", NULL, specs, 4, &n, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "5 events already given, more than room for 4");
	ck_assert_uint_eq(n, 5);
}
END_TEST

START_TEST(test_list_limits)
{
	struct coll_event_spec *specs = calloc(COLL_EVENT_MAX + 8, sizeof(*specs));
	char list[COLL_EVENT_MAX * 8 + 16] = "";
	size_t n = 0;

	ck_assert_ptr_nonnull(specs);
	/* 64 events in one -e. */
	for (int i = 0; i < COLL_EVENT_MAX; i++)
		strcat(list, i ? ",cycles" : "cycles");
	ck_assert_int_eq(
		coll_event_parse_list(list, NULL, specs, COLL_EVENT_MAX + 8, &n, err, sizeof(err)),
		COLL_EVENT_MAX);
	ck_assert_uint_eq(n, COLL_EVENT_MAX);
	/* One more, in a later -e: too many, even though the array has room. */
	ck_assert_int_eq(
		coll_event_parse_list("cs", NULL, specs, COLL_EVENT_MAX + 8, &n, err, sizeof(err)),
		-E2BIG);
	ck_assert_str_eq(err, "too many events: 65 in all, at most 64");
	ck_assert_uint_eq(n, COLL_EVENT_MAX);

	/* 65 at once. */
	n = 0;
	strcat(list, ",cs");
	ck_assert_int_eq(
		coll_event_parse_list(list, NULL, specs, COLL_EVENT_MAX + 8, &n, err, sizeof(err)),
		-E2BIG);
	ck_assert_str_eq(err, "too many events: 65 in all, at most 64");
	ck_assert_uint_eq(n, 0);

	/* A smaller array is the limit; nothing is appended. */
	n = 1;
	ck_assert_int_eq(
		coll_event_parse_list("cycles,cs,r1", NULL, specs, 3, &n, err, sizeof(err)),
		-E2BIG);
	ck_assert_str_eq(err, "too many events: 4 in all, at most 3");
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(coll_event_parse_list("cycles,cs", NULL, specs, 3, &n, err, sizeof(err)),
			 2);
	ck_assert_uint_eq(n, 3);
	free(specs);
}
END_TEST

START_TEST(test_list_long_element)
{
	struct coll_event_spec specs[2];
	char *list = malloc(COLL_EVENT_SPEC_MAX + 16);
	size_t n = 0;

	ck_assert_ptr_nonnull(list);
	strcpy(list, "cycles,");
	memset(list + 7, 'a', COLL_EVENT_SPEC_MAX + 1);
	list[7 + COLL_EVENT_SPEC_MAX + 1] = '\0';
	ck_assert_int_eq(coll_event_parse_list(list, NULL, specs, 2, &n, err, sizeof(err)),
			 -ENAMETOOLONG);
	ck_assert_str_eq(err, "event 2 of the list is longer than 1023 characters");
	ck_assert_uint_eq(n, 0);
	free(list);
}
END_TEST

/* ---------------------------------------------------------------- PMU listing */

static const struct coll_pmu *find_pmu(const struct coll_pmu *pmus, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(pmus[i].name, name) == 0)
			return &pmus[i];
	return NULL;
}

START_TEST(test_pmu_list_intel)
{
	static const char *const fmt_names[] = { "any",	     "cmask", "edge",  "event",
						 "frontend", "inv",   "ldlat", "umask" };
	static const char *const fmt_specs[] = { "config:21",	 "config:24-31", "config:18",
						 "config:0-7",	 "config1:0-23", "config:23",
						 "config1:0-15", "config:8-15" };
	struct coll_pmu *pmus = NULL;
	const struct coll_pmu *cpu, *imc;
	size_t n = 0;

	ck_assert_int_eq(coll_pmu_list(INTEL, &pmus, &n), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(pmus[0].name, "cpu");
	ck_assert_str_eq(pmus[1].name, "software");
	ck_assert_str_eq(pmus[2].name, "tracepoint");
	ck_assert_str_eq(pmus[3].name, "uncore_imc_0");
	ck_assert_uint_eq(pmus[0].type, 4);
	ck_assert_uint_eq(pmus[1].type, 1);
	ck_assert_uint_eq(pmus[2].type, 2);
	ck_assert_uint_eq(pmus[3].type, 17);

	cpu = &pmus[0];
	ck_assert_uint_eq(cpu->nformats, 8);
	for (size_t i = 0; i < 8; i++) {
		ck_assert_str_eq(cpu->formats[i].name, fmt_names[i]);
		ck_assert_str_eq(cpu->formats[i].spec, fmt_specs[i]);
	}
	ck_assert_uint_eq(cpu->naliases, 4);
	ck_assert_str_eq(cpu->aliases[0].name, "branch-misses");
	ck_assert_str_eq(cpu->aliases[0].terms, "event=0xc5");
	ck_assert_str_eq(cpu->aliases[1].name, "cpu-cycles");
	ck_assert_str_eq(cpu->aliases[1].terms, "event=0x3c");
	ck_assert_str_eq(cpu->aliases[2].name, "instructions");
	ck_assert_str_eq(cpu->aliases[2].terms, "event=0xc0");
	ck_assert_str_eq(cpu->aliases[3].name, "mem-loads");
	ck_assert_str_eq(cpu->aliases[3].terms, "event=0xcd,umask=0x1,ldlat=3");

	ck_assert_uint_eq(pmus[1].nformats, 0);
	ck_assert_ptr_null(pmus[1].formats);
	ck_assert_uint_eq(pmus[1].naliases, 0);
	ck_assert_ptr_null(pmus[1].aliases);

	/* .scale and .unit companions are not listed as aliases. */
	imc = find_pmu(pmus, n, "uncore_imc_0");
	ck_assert_ptr_nonnull(imc);
	ck_assert_uint_eq(imc->nformats, 2);
	ck_assert_str_eq(imc->formats[0].name, "event");
	ck_assert_str_eq(imc->formats[1].name, "umask");
	ck_assert_str_eq(imc->formats[1].spec, "config:8-15");
	ck_assert_uint_eq(imc->naliases, 1);
	ck_assert_str_eq(imc->aliases[0].name, "cas_count_read");
	ck_assert_str_eq(imc->aliases[0].terms, "event=0x04,umask=0x03");

	/* Every listed alias parses as pmu/alias/. */
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < pmus[i].naliases; j++) {
			struct coll_event_spec s;
			char spec[160];

			snprintf(spec, sizeof(spec), "%s/%s/", pmus[i].name,
				 pmus[i].aliases[j].name);
			ck_assert_int_eq(parse(spec, INTEL, &s), 0);
			ck_assert_uint_eq(s.type, pmus[i].type);
		}
	}
	coll_pmu_list_free(pmus, n);
}
END_TEST

START_TEST(test_pmu_list_amd)
{
	struct coll_pmu *pmus = NULL;
	size_t n = 0;

	ck_assert_int_eq(coll_pmu_list(AMD, &pmus, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(pmus[0].name, "cpu");
	ck_assert_str_eq(pmus[1].name, "software");
	ck_assert_str_eq(pmus[2].name, "tracepoint");
	ck_assert_uint_eq(pmus[0].type, 4);
	ck_assert_uint_eq(pmus[0].nformats, 5);
	ck_assert_str_eq(pmus[0].formats[0].name, "cmask");
	ck_assert_str_eq(pmus[0].formats[2].name, "event");
	ck_assert_str_eq(pmus[0].formats[2].spec, "config:0-7,32-35");
	ck_assert_str_eq(pmus[0].formats[4].name, "umask");
	ck_assert_uint_eq(pmus[0].naliases, 3);
	ck_assert_str_eq(pmus[0].aliases[0].name, "cpu-cycles");
	ck_assert_str_eq(pmus[0].aliases[0].terms, "event=0x76");
	ck_assert_str_eq(pmus[0].aliases[1].name, "instructions");
	ck_assert_str_eq(pmus[0].aliases[2].name, "l2_request_g1");
	ck_assert_str_eq(pmus[0].aliases[2].terms, "event=0x160,umask=0xff");
	coll_pmu_list_free(pmus, n);

	ck_assert_int_eq(coll_pmu_list(NOROOT, &pmus, &n), -ENOENT);
	coll_pmu_list_free(NULL, 0);
}
END_TEST

/* ---------------------------------------------------------------- hostile sysfs */

/*
 * The private root is made and removed by unchecked fixtures, which run in the
 * parent even when a forked test fails, so nothing is left behind in /tmp; each
 * test starts from an empty tree (checked setup).
 */
static char tmproot[64];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void tree_create(void)
{
	snprintf(tmproot, sizeof(tmproot), "/tmp/hwpmcd-test-event-XXXXXX");
	if (!mkdtemp(tmproot)) {
		perror("mkdtemp");
		abort();
	}
}

static void tree_reset(void)
{
	char bus[96];

	snprintf(bus, sizeof(bus), "%s/bus", tmproot);
	(void)nftw(bus, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void tree_remove(void)
{
	(void)nftw(tmproot, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Make the directories of <tmproot>/bus/event_source/devices/@rel; returns the full path. */
static const char *tree_path(const char *rel, int mkparents)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s", tmproot, rel);
	if (mkparents) {
		for (char *p = path + strlen(tmproot) + 1; *p; p++) {
			if (*p != '/')
				continue;
			*p = '\0';
			ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
			*p = '/';
		}
	}
	return path;
}

static void put_bytes(const char *rel, const char *data, size_t len)
{
	FILE *f = fopen(tree_path(rel, 1), "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

static void put(const char *rel, const char *text)
{
	put_bytes(rel, text, strlen(text));
}

/* A PMU "p" with a sane event field and a broken field @name of @content. */
static void put_pmu_p(void)
{
	put("p/type", "8\n");
	put("p/format/event", "config:0-7\n");
	put("p/format/e1", "config1:0-63\n");
	put("p/format/e2", "config2:0-63\n");
}

START_TEST(test_hostile_formats)
{
	static const struct {
		const char *content;
		const char *why;
	} bad[] = {
		{ "config:15-8", "range 15-8 ends below its start" },
		{ "config:0-64", "bit 64 is above 63" },
		{ "config:64", "bit 64 is above 63" },
		{ "config3:0-7",
		  "unknown register 'config3' (expected config, config1 or config2)" },
		{ "cfg:0-7", "unknown register 'cfg' (expected config, config1 or config2)" },
		{ "config0-7", "expected configN:BITS" },
		{ "config:", "no bit ranges after ':'" },
		{ "config:0-7,4-9", "bit ranges overlap at 4-9" },
		{ "config:a-b", "bad bit range at 'a-b'" },
		{ "config:0-", "bad bit range at ''" },
		{ "config:0-7,", "bad bit range at ''" },
		{ "config:0-7;", "unexpected ';' after bit range 0-7" },
		{ "config:0 -7", "unexpected ' ' after bit range 0-0" },
		{ "config:99999", "bad bit range at '99999'" },
	};
	struct coll_event_spec s;
	char want[256];

	put_pmu_p();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char content[64];

		snprintf(content, sizeof(content), "%s\n", bad[i].content);
		put("p/format/f", content);
		snprintf(want, sizeof(want), "p: malformed format file 'format/f' ('%s'): %s",
			 bad[i].content, bad[i].why);
		ck_assert_err_eq("p/f=1/", tmproot, -EINVAL, want);
		/* The listing skips the broken field and keeps the others. */
		{
			struct coll_pmu *pmus = NULL;
			size_t n = 0;

			ck_assert_int_eq(coll_pmu_list(tmproot, &pmus, &n), 0);
			ck_assert_uint_eq(n, 1);
			ck_assert_uint_eq(pmus[0].nformats, 3);
			ck_assert_str_eq(pmus[0].formats[0].name, "e1");
			ck_assert_str_eq(pmus[0].formats[1].name, "e2");
			ck_assert_str_eq(pmus[0].formats[2].name, "event");
			coll_pmu_list_free(pmus, n);
		}
	}
	/* The sane fields still work, and a full 64-bit field takes every value. */
	ck_assert_int_eq(parse("p/event=0xff,e1=0xffffffffffffffff/", tmproot, &s), 0);
	ck_assert_uint_eq(s.type, 8);
	ck_assert_uint_eq(s.config, 0xff);
	ck_assert_uint_eq(s.config1, UINT64_MAX);
	/* Multiple ranges, given out of order, scatter low to high in the order written. */
	put("p/format/f", "config:60-63,0-3\n");
	ck_assert_int_eq(parse("p/f=0xa5/", tmproot, &s), 0);
	ck_assert_uint_eq(s.config, 0x5000000000000000ull | 0xa);
	put("p/format/f", "config2:63,0\n");
	ck_assert_int_eq(parse("p/f=3/", tmproot, &s), 0);
	ck_assert_uint_eq(s.config2, 0x8000000000000001ull);
	ck_assert_err_eq(
		"p/f=4/", tmproot, -ERANGE,
		"p: value 4 of 'f' does not fit its 2-bit field config2:63,0 (at most 0x3)");
}
END_TEST

START_TEST(test_hostile_files)
{
	struct coll_event_spec s;
	struct coll_pmu *pmus = NULL;
	char *big = malloc(EV_BIG);
	size_t n = 0;

	ck_assert_ptr_nonnull(big);
	put_pmu_p();

	/* 4096 bytes with the padding stripped is fine; 4097 is too many. */
	memset(big, ' ', EV_BIG);
	memcpy(big, "config:8-15", 11);
	big[4095] = '\n';
	put_bytes("p/format/pad", big, 4096);
	ck_assert_int_eq(parse("p/pad=0x12/", tmproot, &s), 0);
	ck_assert_uint_eq(s.config, 0x1200);
	put_bytes("p/format/big", big, 4097);
	ck_assert_err_eq("p/big=1/", tmproot, -EINVAL,
			 "p: cannot read 'format/big': larger than 4096 bytes");
	put_bytes("p/format/huge", big, EV_BIG);
	ck_assert_err_eq("p/huge=1/", tmproot, -EINVAL,
			 "p: cannot read 'format/huge': larger than 4096 bytes");

	/* Bytes that are not printable ASCII. */
	put_bytes("p/format/nul", "config:0\0-7\n", 12);
	ck_assert_err_eq("p/nul=1/", tmproot, -EINVAL,
			 "p: cannot read 'format/nul': holds bytes that are not printable ASCII");
	put("p/format/ctl", "config:0-7\x1b[2J\n");
	ck_assert_err_eq("p/ctl=1/", tmproot, -EINVAL,
			 "p: cannot read 'format/ctl': holds bytes that are not printable ASCII");
	put("p/format/two", "config:0-7\nconfig:8-15\n");
	ck_assert_err_eq("p/two=1/", tmproot, -EINVAL,
			 "p: cannot read 'format/two': holds bytes that are not printable ASCII");

	/* A FIFO must not hang us, a directory is no format file. */
	ck_assert_int_eq(mkfifo(tree_path("p/format/fifo", 0), 0644), 0);
	ck_assert_err_eq("p/fifo=1/", tmproot, -EINVAL,
			 "p: cannot read 'format/fifo': not a regular file");
	ck_assert_int_eq(mkdir(tree_path("p/format/dir", 0), 0755), 0);
	ck_assert_err_eq("p/dir=1/", tmproot, -EINVAL,
			 "p: cannot read 'format/dir': not a regular file");
	ck_assert_int_eq(mkfifo(tree_path("p/events/efifo", 1), 0644), 0);
	ck_assert_err_eq("p/efifo/", tmproot, -EINVAL,
			 "p: cannot read alias file 'events/efifo': not a regular file");

	/* The listing skips all of them and the FIFO alias. */
	ck_assert_int_eq(coll_pmu_list(tmproot, &pmus, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(pmus[0].nformats, 4);
	ck_assert_str_eq(pmus[0].formats[0].name, "e1");
	ck_assert_str_eq(pmus[0].formats[1].name, "e2");
	ck_assert_str_eq(pmus[0].formats[2].name, "event");
	ck_assert_str_eq(pmus[0].formats[3].name, "pad");
	ck_assert_str_eq(pmus[0].formats[3].spec, "config:8-15");
	ck_assert_uint_eq(pmus[0].naliases, 0);
	coll_pmu_list_free(pmus, n);
	free(big);
}
END_TEST

START_TEST(test_hostile_types)
{
	struct coll_pmu *pmus = NULL;
	struct coll_event_spec s;
	size_t n = 0;

	put_pmu_p();
	put("notype/format/event", "config:0-7\n");
	put("badtype/type", "four\n");
	put("widetype/type", "4294967296\n");
	put("maxtype/type", "4294967295\n");
	put("breakpoint/type", "5\n");
	put("not-a-dir", "x\n");

	ck_assert_err_eq("notype/event=1/", tmproot, -ENOENT, "PMU 'notype' has no 'type' file");
	ck_assert_err_eq("badtype/config=1/", tmproot, -EINVAL,
			 "PMU 'badtype': malformed 'type' file ('four'): expected a number up to "
			 "4294967295");
	ck_assert_err_eq(
		"widetype/config=1/", tmproot, -EINVAL,
		"PMU 'widetype': malformed 'type' file ('4294967296'): expected a number up "
		"to 4294967295");
	ck_assert_int_eq(parse("maxtype/config=1/", tmproot, &s), 0);
	ck_assert_uint_eq(s.type, UINT32_MAX);
	ck_assert(s.needs_hw_pmu);
	ck_assert_int_eq(parse("breakpoint/config=1/", tmproot, &s), 0);
	ck_assert_uint_eq(s.type, 5);
	ck_assert(!s.needs_hw_pmu);
	ck_assert_err_eq("nope/config=1/", tmproot, -ENOENT,
			 "unknown PMU 'nope'; PMUs here: badtype, breakpoint, maxtype, notype, p, "
			 "widetype");
	ck_assert_parse_fails("not-a-dir/config=1/", tmproot, -ENOENT, "unknown PMU 'not-a-dir'");

	/* The listing keeps only the PMUs with a valid type. */
	ck_assert_int_eq(coll_pmu_list(tmproot, &pmus, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(pmus[0].name, "breakpoint");
	ck_assert_str_eq(pmus[1].name, "maxtype");
	ck_assert_str_eq(pmus[2].name, "p");
	coll_pmu_list_free(pmus, n);
}
END_TEST

START_TEST(test_hostile_aliases)
{
	struct coll_event_spec s;
	struct coll_pmu *pmus = NULL;
	char big[300];
	size_t n = 0;

	put_pmu_p();
	put("p/format/umask", "config:8-15\n");
	put("p/events/good", " event = 0x1 , umask=0x2 \n");
	put("p/events/withperiod", "event=0x3,period=1000\n");
	put("p/events/unknown", "event=1,bogus=2\n");
	put("p/events/nested", "good\n");
	put("p/events/empty", "\n");
	put("p/events/emptyterm", "event=1,,umask=1\n");
	put("p/events/novalue", "event=\n");
	put("p/events/badvalue", "event=zz\n");
	put("p/events/wide", "event=0x100\n");
	put("p/events/badname", "ev/nt=1\n");
	memset(big, 'e', sizeof(big));
	memcpy(big, "event=1,", 8);
	big[sizeof(big) - 1] = '\0';
	put("p/events/toolong", big);

	ck_assert_int_eq(parse("p/good/", tmproot, &s), 0);
	ck_assert_uint_eq(s.config, 0x201);
	ck_assert_int_eq(parse("p/withperiod/", tmproot, &s), 0);
	ck_assert_uint_eq(s.config, 0x3);
	ck_assert(s.has_period);
	ck_assert_uint_eq(s.period, 1000);
	ck_assert_err_eq(
		"p/unknown/", tmproot, -EINVAL,
		"p: alias file 'events/unknown': unknown term 'bogus' (aliases cannot name "
		"aliases)");
	ck_assert_err_eq("p/nested/", tmproot, -EINVAL,
			 "p: alias file 'events/nested': unknown term 'good' (aliases cannot name "
			 "aliases)");
	ck_assert_err_eq("p/empty/", tmproot, -EINVAL, "p: alias file 'events/empty' is empty");
	ck_assert_err_eq("p/emptyterm/", tmproot, -EINVAL,
			 "p: alias file 'events/emptyterm' has an empty term");
	ck_assert_err_eq("p/novalue/", tmproot, -EINVAL,
			 "p: alias file 'events/novalue' has no value after 'event='");
	ck_assert_err_eq("p/badvalue/", tmproot, -EINVAL,
			 "p: alias file 'events/badvalue': bad value 'zz' for 'event'; expected a "
			 "decimal or 0x-hex number");
	ck_assert_err_eq(
		"p/wide/", tmproot, -ERANGE,
		"p: alias file 'events/wide': value 0x100 of 'event' does not fit its 8-bit "
		"field config:0-7 (at most 0xff)");
	ck_assert_err_eq(
		"p/badname/", tmproot, -EINVAL,
		"p: alias file 'events/badname': bad term name 'ev/nt': use letters, digits, "
		"'_', '-' and '.' (not first)");
	ck_assert_parse_fails("p/toolong/", tmproot, -ENAMETOOLONG,
			      "p: alias file 'events/toolong': term name 'eeee");

	/* The listing keeps what fits, whether or not it parses; empty and long ones go. */
	ck_assert_int_eq(coll_pmu_list(tmproot, &pmus, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(pmus[0].naliases, 9);
	ck_assert_str_eq(pmus[0].aliases[0].name, "badname");
	ck_assert_str_eq(pmus[0].aliases[3].name, "good");
	ck_assert_str_eq(pmus[0].aliases[3].terms, "event = 0x1 , umask=0x2");
	ck_assert_str_eq(pmus[0].aliases[8].name, "withperiod");
	coll_pmu_list_free(pmus, n);
}
END_TEST

START_TEST(test_hostile_long_pmu_name)
{
	char pmu[61], rel[128], spec[160], want[64];
	struct coll_event_spec s;

	memset(pmu, 'q', 60);
	pmu[60] = '\0';
	snprintf(rel, sizeof(rel), "%s/type", pmu);
	put(rel, "9\n");
	snprintf(rel, sizeof(rel), "%s/format/e1", pmu);
	put(rel, "config1:0-63\n");
	snprintf(rel, sizeof(rel), "%s/format/e2", pmu);
	put(rel, "config2:0-63\n");

	/* "<pmu>.e1=1" is 65 characters: the fallback cuts the PMU name to fit. */
	snprintf(spec, sizeof(spec), "%s/e1=1/", pmu);
	ck_assert_int_eq(parse(spec, tmproot, &s), 0);
	ck_assert_uint_eq(s.type, 9);
	ck_assert_uint_eq(s.config1, 1);
	snprintf(want, sizeof(want), "%.55s.0x0.0x1", pmu);
	ck_assert_str_eq(s.name, want);
	ck_assert_uint_eq(strlen(s.name), 63);

	snprintf(spec, sizeof(spec), "%s/e1=0xffffffffffffffff,e2=0xffffffffffffffff/k", pmu);
	ck_assert_int_eq(parse(spec, tmproot, &s), 0);
	snprintf(want, sizeof(want), "%.19s.0x0.0xffffffffffffffff.0xffffffffffffffff:k", pmu);
	ck_assert_str_eq(s.name, want);
	ck_assert_uint_eq(strlen(s.name), 63);
	/* The longest tail of all leaves four characters of the PMU name. */
	snprintf(spec, sizeof(spec),
		 "%s/config=0xffffffffffffffff,e1=0xffffffffffffffff,e2=0xffffffffffffffff/k", pmu);
	ck_assert_int_eq(parse(spec, tmproot, &s), 0);
	snprintf(want, sizeof(want),
		 "%.4s.0xffffffffffffffff.0xffffffffffffffff.0xffffffffffffffff:k", pmu);
	ck_assert_str_eq(s.name, want);
	ck_assert_uint_eq(strlen(s.name), 63);
}
END_TEST

START_TEST(test_hostile_empty_root)
{
	static struct coll_pmu sentinel;
	struct coll_pmu *pmus = &sentinel;
	size_t n = 99;
	char want[256];

	(void)tree_path("x", 1); /* makes bus/event_source/devices, empty */
	ck_assert_int_eq(coll_pmu_list(tmproot, &pmus, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(pmus);
	snprintf(want, sizeof(want),
		 "unknown PMU 'cpu'; there are no PMUs in '%s/bus/event_source/devices'", tmproot);
	ck_assert_err_eq("cpu/event=1/", tmproot, -ENOENT, want);
	ck_assert_err_eq("mem-loads", tmproot, -ENOENT,
			 "unknown event 'mem-loads' ('hwpmc events' lists them)");
}
END_TEST

static Suite *collector_event_suite(void)
{
	Suite *s = suite_create("collector-event");
	TCase *tc;

	tc = tcase_create("generic");
	tcase_add_test(tc, test_generic_names);
	tcase_add_test(tc, test_generic_list);
	tcase_add_test(tc, test_generic_unknown);
	suite_add_tcase(s, tc);

	tc = tcase_create("raw");
	tcase_add_test(tc, test_raw);
	tcase_add_test(tc, test_raw_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("modifiers");
	tcase_add_test(tc, test_modifiers);
	tcase_add_test(tc, test_modifier_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("period-freq");
	tcase_add_test(tc, test_period_freq);
	tcase_add_test(tc, test_period_freq_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("pmu");
	tcase_add_test(tc, test_pmu_intel);
	tcase_add_test(tc, test_pmu_alias);
	tcase_add_test(tc, test_pmu_amd_split_field);
	tcase_add_test(tc, test_pmu_range_errors);
	tcase_add_test(tc, test_pmu_unknown);
	tcase_add_test(tc, test_pmu_unknown_term);
	tcase_add_test(tc, test_pmu_syntax_errors);
	tcase_add_test(tc, test_pmu_needs_hw);
	suite_add_tcase(s, tc);

	tc = tcase_create("spec");
	tcase_add_test(tc, test_spec_text);
	tcase_add_test(tc, test_names_always_valid);
	suite_add_tcase(s, tc);

	tc = tcase_create("list");
	tcase_add_test(tc, test_list_split);
	tcase_add_test(tc, test_list_errors);
	tcase_add_test(tc, test_list_limits);
	tcase_add_test(tc, test_list_long_element);
	suite_add_tcase(s, tc);

	tc = tcase_create("pmu-list");
	tcase_add_test(tc, test_pmu_list_intel);
	tcase_add_test(tc, test_pmu_list_amd);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile-sysfs");
	tcase_add_unchecked_fixture(tc, tree_create, tree_remove);
	tcase_add_checked_fixture(tc, tree_reset, NULL);
	tcase_add_test(tc, test_hostile_formats);
	tcase_add_test(tc, test_hostile_files);
	tcase_add_test(tc, test_hostile_types);
	tcase_add_test(tc, test_hostile_aliases);
	tcase_add_test(tc, test_hostile_long_pmu_name);
	tcase_add_test(tc, test_hostile_empty_root);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(collector_event_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
