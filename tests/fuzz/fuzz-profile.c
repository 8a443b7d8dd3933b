/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz-profile.c: libFuzzer harness for profile files (daemon-profile.c): the
 * input is the text of profiles.d/fuzz.conf, parsed onto the defaults.
 *
 * IMPLEMENTATION NOTES
 *   Beyond "no crash, no sanitizer report", these abort on failure:
 *   1. The messages: one "fuzz.conf:LINE: " line per problem (the return value),
 *      each LINE within the text.
 *   2. A profile with no problem is one the daemon can run: its start arguments
 *      pass daemon_start_parse() as root, it rotates and retains by something,
 *      retain_bytes (if set) is at least rotate_bytes, freq and period are not
 *      both set, the scope is all or cpus:, a budget only with freq, and its
 *      strings are NUL-terminated.
 *   3. Parsing is deterministic: the same text again gives the same profile
 *      and the same messages.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon-ctl.h"

#define NAME "fuzz.conf"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "fuzz-profile: invariant failed at line %d: %s\n", \
				__LINE__, #cond);                                          \
			abort();                                                           \
		}                                                                          \
	} while (0)

static char err1[16384], err2[16384];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct daemon_config cfg;
	struct daemon_profile a, b;
	const char *text = (const char *)data;
	int n1, n2, lines = 1, count = 0;

	if (size > 16384)
		return 0;
	setenv("HWPMCD_SYSFS_ROOT", FUZZ_SYSFS_ROOT, 1);
	daemon_config_defaults(&cfg);
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	daemon_profile_defaults(&a, "fuzz");
	n1 = daemon_profile_parse(&a, text, size, NAME, &cfg, 100000, 127, err1, sizeof(err1));
	daemon_profile_defaults(&b, "fuzz");
	n2 = daemon_profile_parse(&b, text, size, NAME, &cfg, 100000, 127, err2, sizeof(err2));
	CHECK(n1 == n2 && strcmp(err1, err2) == 0);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	for (const char *p = err1; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		int line = 0;

		CHECK(strncmp(p, NAME, strlen(NAME)) == 0);
		if (p[strlen(NAME)] == ':')
			line = atoi(p + strlen(NAME) + 1);
		CHECK(line >= 0 && line <= lines);
		count++;
	}
	CHECK(count == n1 || strlen(err1) >= sizeof(err1) - 2);
	if (n1 == 0) {
		json_t *args = daemon_profile_args(&a);
		struct session_params *p = calloc(1, sizeof(*p));
		struct daemon_start st;
		const struct daemon_who root = { .admin = true };
		char msg[512];

		CHECK(args && p);
		CHECK(daemon_start_parse(args, &cfg, &root, 100000, 127, p, &st, msg, sizeof(msg)) == 0);
		CHECK(a.rotate_seconds || a.rotate_bytes);
		CHECK(a.retain_seconds || a.retain_bytes);
		CHECK(!a.retain_bytes || !a.rotate_bytes || a.retain_bytes >= a.rotate_bytes);
		CHECK(!(a.line[PK_FREQ] && a.line[PK_PERIOD]));
		CHECK(!strcmp(a.scope, "all") || !strncmp(a.scope, "cpus:", 5) ||
		      !strncmp(a.scope, "unit:", 5) || !strncmp(a.scope, "cgroup:", 7) ||
		      !strncmp(a.scope, "uid:", 4));
		/* A unit, cgroup or user scope is an in-kernel filter, never "everything". */
		CHECK(p->filter.on == (!strncmp(a.scope, "unit:", 5) ||
				       !strncmp(a.scope, "cgroup:", 7) || !strncmp(a.scope, "uid:", 4)));
		CHECK(!p->filter.on ||
		      p->filter.spec.nuids + p->filter.ncgroups + p->filter.nunits == 1);
		CHECK(a.cpu_budget_percent <= 100 && !(a.cpu_budget_percent && a.period));
		CHECK(memchr(a.events, 0, sizeof(a.events)) && memchr(a.callgraph, 0, sizeof(a.callgraph)));
		json_decref(args);
		free(p);
	}
	return 0;
}
