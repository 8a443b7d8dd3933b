/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * collector-event.h: parsing of perf-style event specs (-e) and the PMU listing.
 *
 * PUBLIC INTERFACES
 *   struct coll_event_spec    one parsed event: perf_event_attr fields plus a log name
 *   coll_event_parse()        parse one event spec
 *   coll_event_parse_list()   parse a comma-separated -e argument, appending
 *   coll_event_generic_names() the generic hardware and software event names
 *   struct coll_pmu           one sysfs PMU with its format fields and event aliases
 *   coll_pmu_list(), coll_pmu_list_free()
 *
 * IMPLEMENTATION NOTES
 *   The spellings are perf's: generic names (cycles, cpu-clock, ...), raw codes
 *   (r01c2), and the PMU syntax pmu/term=value,term,.../ whose terms are the files
 *   under <sysfs>/bus/event_source/devices/<pmu>/format and events.  Modifiers :u
 *   and :k (also written right after the closing slash) select user or kernel only.
 *   Everything read from sysfs is treated as hostile: files are read with a bound,
 *   and a malformed format or alias file is an error naming the file.
 *
 *   The structs here are plain value types; every function is thread-safe (no
 *   shared state), may block on file-system reads, and so belongs in the main
 *   thread or a tool, never on a sample path.  Nothing here calls perf_event_open.
 */
#ifndef HWPMCD_COLLECTOR_EVENT_H
#define HWPMCD_COLLECTOR_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COLL_EVENT_MAX 64	 /* events per session, across every -e */
#define COLL_EVENT_NAME_MAX 64	 /* the name field, NUL included (PMCALLOCATEDYN's) */
#define COLL_EVENT_SPEC_MAX 1023 /* longest single event spec accepted, in characters */

struct coll_event_spec {
	/*
	 * The event's name for the log (PMCALLOCATEDYN): 1 to 63 printable ASCII
	 * characters, never '/' or white space, always NUL-terminated.
	 */
	char name[COLL_EVENT_NAME_MAX];
	uint32_t type; /* perf_event_attr.type */
	uint64_t config;
	uint64_t config1;
	uint64_t config2;
	bool exclude_user;   /* :k */
	bool exclude_kernel; /* :u */
	bool has_period;     /* period=N was given */
	uint64_t period;     /* 1 .. 2^63-1 */
	bool has_freq;	     /* freq=N was given */
	uint64_t freq;	     /* 1 .. 2^63-1 */
	/*
	 * The event needs a hardware PMU: PERF_TYPE_HARDWARE, HW_CACHE, RAW, or any
	 * sysfs PMU other than software, tracepoint and breakpoint.
	 */
	bool needs_hw_pmu;
};

/*
 * coll_event_parse: parse the single event @spec.  @sysfs_root is the directory
 * that holds bus/event_source/devices (NULL: "/sys"); generic names and raw codes
 * never touch it.  Leading and trailing white space of @spec is ignored.
 *
 * Returns 0 with *ret_spec filled, or a negative errno with *ret_spec untouched:
 * -EINVAL (bad syntax, bad value, unknown term or modifier, period and freq
 * together, period=0, a malformed sysfs file), -ENOENT (unknown event, PMU or
 * alias; a PMU without a readable type file), -ERANGE (a value too wide for its
 * field or for 64 bits, a raw code over 16 hex digits), -ENAMETOOLONG (spec over
 * COLL_EVENT_SPEC_MAX characters, PMU or term name over 63, sysfs path too long),
 * or another errno from reading sysfs.  On failure a message for the user that
 * names the problem (lowercase, no final period) is written to @err; @err may be
 * NULL when @errlen is 0, and is otherwise always NUL-terminated, truncated if
 * short (256 bytes is plenty for everything but long PMU or term lists).
 * Borrows its arguments for the call only.  Any thread.
 */
int coll_event_parse(const char *spec, const char *sysfs_root, struct coll_event_spec *ret_spec,
		     char *err, size_t errlen);

/*
 * coll_event_parse_list: parse the comma-separated events of one -e argument
 * @list (commas between a PMU's slashes do not split) and append them to
 * @specs[*inout_n ...].  Call it once per -e to accumulate.  At most
 * min(@max, COLL_EVENT_MAX) events fit in all.
 *
 * Returns the number of events appended (> 0) with *inout_n advanced, or a
 * negative errno with @specs and *inout_n untouched (all or nothing): anything
 * coll_event_parse() returns, -EINVAL for an empty list or empty element (a
 * stray comma) or *inout_n > @max, -E2BIG when the events would not fit, -ENOMEM.
 * @err as for coll_event_parse().  Any thread.
 */
int coll_event_parse_list(const char *list, const char *sysfs_root, struct coll_event_spec *specs,
			  size_t max, size_t *inout_n, char *err, size_t errlen);

/*
 * coll_event_generic_names: the canonical generic hardware names, then the
 * software names, in a static NULL-terminated array (the aliases cpu-cycles,
 * branches, faults, cs and migrations are accepted but not listed).  Never NULL.
 */
const char *const *coll_event_generic_names(void);

struct coll_pmu_format {
	char name[64]; /* "event" */
	char spec[64]; /* "config:0-7,32-35", validated */
};

struct coll_pmu_alias {
	char name[64];	 /* "cpu-cycles" */
	char terms[256]; /* "event=0x3c", as in the file, trailing white space stripped */
};

struct coll_pmu {
	char name[64]; /* "cpu" */
	uint32_t type;
	size_t nformats;
	struct coll_pmu_format *formats; /* sorted by name */
	size_t naliases;
	struct coll_pmu_alias *aliases; /* sorted by name */
};

/*
 * coll_pmu_list: every PMU under <@sysfs_root>/bus/event_source/devices (NULL:
 * "/sys"), sorted by name, with its format fields and event aliases.  Entries
 * that cannot be used are skipped rather than failing the listing: a PMU without
 * a readable, valid type file; format files that do not parse or do not fit;
 * alias files that are unreadable or do not fit (and the .scale, .unit,
 * .per-pkg and .snapshot companions of aliases).  Returns 0 with *ret_pmus (NULL
 * when *ret_n is 0; heap, owned by the caller, freed with coll_pmu_list_free())
 * and *ret_n, or a negative errno (-ENOENT or another error opening the devices
 * directory, -ENAMETOOLONG, -ENOMEM).  Any thread.
 */
int coll_pmu_list(const char *sysfs_root, struct coll_pmu **ret_pmus, size_t *ret_n);

/* coll_pmu_list_free: free what coll_pmu_list() returned.  NULL ok.  Any thread. */
void coll_pmu_list_free(struct coll_pmu *pmus, size_t n);

/* coll_event_is_clock: @e is cpu-clock or task-clock (a period is nanoseconds). */
bool coll_event_is_clock(const struct coll_event_spec *e);

/*
 * coll_event_own_tasks_only: @e counts only what the tasks it is attached to do:
 * a software, hardware, cache or raw event, or an event of the CPU's core PMU
 * (cpu, cpu_core, cpu_atom under <@sysfs_root>/bus/event_source/devices, NULL:
 * "/sys", matched by type).  Tracepoints, breakpoints, k/uprobes, msr and uncore
 * PMUs are not (they see beyond those tasks).  Any thread.
 */
bool coll_event_own_tasks_only(const struct coll_event_spec *e, const char *sysfs_root);

#endif /* HWPMCD_COLLECTOR_EVENT_H */
