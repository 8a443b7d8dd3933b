/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-daemon-profile.c: Check suite for src/daemon/daemon-profile.c: profile
 * files (defaults, every key, each problem at its line, the start's own checks
 * of events, rate, call graph and scope), a directory of them (bad files left
 * out, the rest kept), sizes and durations, the files' names and retention in a
 * temporary directory.  Events are parsed against tests/data/sysfs/intel.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon-ctl.h"

static char err[8192];
static struct daemon_config cfg;

#define ck_assert_err_has(needle)                                                                  \
	ck_assert_msg(strstr(err, (needle)) != NULL, "error '%s' does not name '%s'", err, (needle))

static int parse(struct daemon_profile *pf, const char *text)
{
	daemon_config_defaults(&cfg);
	daemon_profile_defaults(pf, "web");
	return daemon_profile_parse(pf, text, strlen(text), "web.conf", &cfg, 100000, 127, err,
				    sizeof(err));
}

START_TEST(test_defaults)
{
	struct daemon_profile pf;
	json_t *a;

	ck_assert_int_eq(parse(&pf, ""), 0);
	ck_assert_str_eq(pf.events, "cpu-clock");
	ck_assert_uint_eq(pf.freq, DAEMON_PROFILE_FREQ_DEFAULT);
	ck_assert_str_eq(pf.callgraph, "dwarf");
	ck_assert_str_eq(pf.scope, "all");
	ck_assert(pf.enabled && pf.kallsyms);
	ck_assert(pf.rotate_seconds && pf.rotate_bytes && pf.retain_seconds && pf.retain_bytes);
	a = daemon_profile_args(&pf);
	ck_assert_str_eq(json_string_value(json_object_get(a, "output")), "state");
	ck_assert_int_eq(json_integer_value(json_object_get(a, "freq")), DAEMON_PROFILE_FREQ_DEFAULT);
	ck_assert_str_eq(json_string_value(json_object_get(a, "callgraph")), "dwarf");
	ck_assert_ptr_null(json_object_get(a, "cpus"));
	/* Half a second of 64 KiB snapshots at 49 Hz: 512 pages, not a recording's 2048. */
	ck_assert_int_eq(json_integer_value(json_object_get(a, "ring_pages")), 512);
	ck_assert_uint_eq(pf.unwind_cache_mb, DAEMON_PROFILE_UNWIND_CACHE_MB);
	json_decref(a);
	ck_assert_int_eq(parse(&pf, "freq = 10000\n"), 0);
	a = daemon_profile_args(&pf);
	ck_assert_int_eq(json_integer_value(json_object_get(a, "ring_pages")), 2048);
	json_decref(a);
	ck_assert_int_eq(parse(&pf, "freq = 1\n"), 0);
	a = daemon_profile_args(&pf);
	ck_assert_int_eq(json_integer_value(json_object_get(a, "ring_pages")), 64);
	json_decref(a);
}
END_TEST

/* A unit, cgroup or user scope becomes the start's in-kernel filter. */
START_TEST(test_filter_scopes)
{
	static const struct {
		const char *scope, *key, *value;
	} cases[] = {
		{ "unit:nginx.service", "unit", "nginx.service" },
		{ "cgroup:system.slice/db.service", "cgroup", "system.slice/db.service" },
		{ "uid:root", "uid", NULL },
		{ "uid:1234", "uid", NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct daemon_profile pf;
		char text[300];
		json_t *a, *v;

		snprintf(text, sizeof(text), "scope = %s\n", cases[i].scope);
		ck_assert_int_eq(parse(&pf, text), 0);
		a = daemon_profile_args(&pf);
		v = json_array_get(json_object_get(json_object_get(a, "filter"), cases[i].key), 0);
		ck_assert_ptr_nonnull(v);
		if (cases[i].value)
			ck_assert_str_eq(json_string_value(v), cases[i].value);
		else
			ck_assert_int_eq(json_integer_value(v), i == 2 ? 0 : 1234);
		ck_assert_ptr_null(json_object_get(a, "cpus"));
		json_decref(a);
	}
}
END_TEST

START_TEST(test_every_key)
{
	struct daemon_profile pf;
	json_t *a, *cpus;

	ck_assert_int_eq(parse(&pf, "# a comment\n"
				    "events = cpu-clock,task-clock\n"
				    "period = 100000\n"
				    "callgraph = dwarf,16384\n"
				    "scope = cpus:0-2,5\n"
				    "rotate_seconds = 15min\n"
				    "rotate_bytes = 32M\n"
				    "retain_seconds = 2d\n"
				    "retain_bytes = 1.5G\n"
				    "enabled = no\n"
				    "kallsyms = off\n"
				    "ring_pages = 512\n"
				    "depth = 64\n"
				    "unwind_cache_mb = 64\n"), 0);
	ck_assert_uint_eq(pf.unwind_cache_mb, 64);
	ck_assert_uint_eq(pf.period, 100000);
	ck_assert_uint_eq(pf.rotate_seconds, 900);
	ck_assert_uint_eq(pf.rotate_bytes, 32u << 20);
	ck_assert_uint_eq(pf.retain_seconds, 2 * 86400);
	ck_assert_uint_eq(pf.retain_bytes, 3ull << 29);
	ck_assert(!pf.enabled && !pf.kallsyms);
	ck_assert_int_eq(pf.line[PK_DEPTH], 13);
	a = daemon_profile_args(&pf);
	ck_assert_int_eq(json_integer_value(json_object_get(a, "period")), 100000);
	ck_assert_ptr_null(json_object_get(a, "freq"));
	ck_assert_int_eq(json_integer_value(json_object_get(a, "stack_bytes")), 16384);
	ck_assert_str_eq(json_string_value(json_object_get(a, "kallsyms")), "none");
	cpus = json_object_get(a, "cpus");
	ck_assert_uint_eq(json_array_size(cpus), 4);
	ck_assert_int_eq(json_integer_value(json_array_get(cpus, 3)), 5);
	json_decref(a);
}
END_TEST

START_TEST(test_problems_at_their_lines)
{
	struct daemon_profile pf;

	ck_assert_int_eq(parse(&pf, "freq = 99\nbogus = 1\nfreq = 100\nenabled = maybe\n"
				    "rotate_bytes = 12 parsecs\nretain_seconds = -3\n"
				    "this is no key\ncpu_budget_percent = 101\n"), 7);
	ck_assert_err_has("web.conf:2: unknown key 'bogus' (see hwpmcd.conf(5), PROFILES)");
	ck_assert_err_has("web.conf:3: freq is set again (first at line 1)");
	ck_assert_err_has("web.conf:4: enabled = 'maybe' is not yes or no");
	ck_assert_err_has("web.conf:5: rotate_bytes = '12 parsecs' is not a size");
	ck_assert_err_has("web.conf:6: retain_seconds = '-3' is not a duration");
	ck_assert_err_has("web.conf:7: expected 'key = value'");
	ck_assert_err_has("web.conf:8: cpu_budget_percent = '101' is not a number in 1..100");
	ck_assert_int_eq(parse(&pf, "unwind_cache_mb = 8\n"), 1);
	ck_assert_err_has("web.conf:1: unwind_cache_mb = '8' is not a number in 16..65536");
	/* a typo of a key gets the key it is close to */
	ck_assert_int_eq(parse(&pf, "callgrph = dwarf\nrotate_second = 60\n"), 2);
	ck_assert_err_has("web.conf:1: unknown key 'callgrph'; did you mean 'callgraph'? (see hwpmcd.conf(5), PROFILES)");
	ck_assert_err_has("web.conf:2: unknown key 'rotate_second'; did you mean 'rotate_seconds'?");
}
END_TEST

START_TEST(test_rules_between_keys)
{
	struct daemon_profile pf;

	ck_assert_int_eq(parse(&pf, "freq = 99\nperiod = 1000\n"), 1);
	ck_assert_err_has("web.conf:2: freq (line 1) and period are both set");
	ck_assert_int_eq(parse(&pf, "rotate_seconds = 0\nrotate_bytes = 0\n"), 1);
	ck_assert_err_has("rotate_seconds and rotate_bytes are both 0");
	ck_assert_int_eq(parse(&pf, "retain_seconds = 0\nretain_bytes = 0\n"), 1);
	ck_assert_err_has("web.conf:2: retain_seconds and retain_bytes are both 0");
	ck_assert_int_eq(parse(&pf, "retain_bytes = 10M\n"), 1);
	ck_assert_err_has("web.conf:1: retain_bytes (10485760) is below rotate_bytes (67108864, its "
			  "default)");
	ck_assert_int_eq(parse(&pf, "rotate_bytes = 1K\n"), 1);
	ck_assert_err_has("web.conf:1: rotate_bytes = 1024 is below 65536");
	ck_assert_int_eq(parse(&pf, "\nscope = everything\n"), 1);
	ck_assert_err_has("web.conf:2: scope = 'everything' is not 'all', 'cpus:LIST' (e.g. "
			  "cpus:0-3,6), 'unit:NAME' (a systemd unit), 'cgroup:PATH' or 'uid:USER'");
	ck_assert_int_eq(parse(&pf, "scope = uid:no-such-user-of-hwpmcd\n"), 1);
	ck_assert_err_has("web.conf:1: scope = 'uid:no-such-user-of-hwpmcd': no user of that name "
			  "in /etc/passwd");
	ck_assert_int_eq(parse(&pf, "cpu_budget_percent = 1\n"), 0);
	ck_assert_uint_eq(pf.cpu_budget_percent, 1);
	ck_assert_int_eq(parse(&pf, "period = 100000\ncpu_budget_percent = 1\n"), 1);
	ck_assert_err_has("web.conf:2: cpu_budget_percent adapts the rate of a profile that samples "
			  "by freq, not by period (line 1)");
}
END_TEST

/* push_*: good values kept; each bad one refused at its line; the rest need push_url. */
START_TEST(test_push_keys)
{
	struct daemon_profile pf;

	ck_assert_int_eq(parse(&pf, "push_url = https://pyroscope.example:4040/base/\n"
				    "push_labels = env=prod,host=db-1,_k.x=v.2\n"
				    "push_name = web.api\npush_format = folded\n"), 0);
	ck_assert_str_eq(pf.push_url, "https://pyroscope.example:4040/base/");
	ck_assert_str_eq(pf.push_labels, "env=prod,host=db-1,_k.x=v.2");
	ck_assert_str_eq(pf.push_name, "web.api");
	ck_assert(pf.push_folded);
	ck_assert_int_eq(parse(&pf, "push_url = http://10.0.0.1\npush_format = pprof\n"), 0);
	ck_assert(!pf.push_folded && !pf.push_labels[0] && !pf.push_name[0]);
	/* the URL: a scheme libcurl is allowed, a host, nothing unprintable */
	ck_assert_int_eq(parse(&pf, "push_url = ftp://x\n"), 1);
	ck_assert_err_has("web.conf:1: push_url = 'ftp://x' is not an http:// or https:// URL");
	ck_assert_int_eq(parse(&pf, "push_url = http://\n"), 1);
	ck_assert_int_eq(parse(&pf, "push_url = http:///path\n"), 1);
	ck_assert_int_eq(parse(&pf, "push_url = http://a b\n"), 1);
	ck_assert_int_eq(parse(&pf, "push_url = file:///etc/shadow\n"), 1);
	/* labels: KEY=VALUE, no key twice, no empty part, no characters of the name's syntax */
	ck_assert_int_eq(parse(&pf, "push_url = http://x\npush_labels = env=a,env=b\n"), 1);
	ck_assert_err_has("web.conf:2: push_labels = 'env=a,env=b' is not KEY=VALUE");
	ck_assert_int_eq(parse(&pf, "push_url = http://x\npush_labels = env=\n"), 1);
	ck_assert_int_eq(parse(&pf, "push_url = http://x\npush_labels = a=b,\n"), 1);
	ck_assert_int_eq(parse(&pf, "push_url = http://x\npush_labels = a=b}\n"), 1);
	ck_assert_int_eq(parse(&pf, "push_url = http://x\npush_labels = 1a=b\n"), 1);
	ck_assert_int_eq(parse(&pf, "push_url = http://x\npush_labels = a=b{c=d\n"), 1);
	ck_assert_int_eq(parse(&pf, "push_url = http://x\npush_labels = "
				    "a=1,b=1,c=1,d=1,e=1,f=1,g=1,h=1,i=1,j=1,k=1,l=1,m=1,n=1,o=1,"
				    "p=1\n"), 0);
	ck_assert_int_eq(parse(&pf, "push_url = http://x\npush_labels = "
				    "a=1,b=1,c=1,d=1,e=1,f=1,g=1,h=1,i=1,j=1,k=1,l=1,m=1,n=1,o=1,"
				    "p=1,q=1\n"), 1);
	ck_assert_int_eq(parse(&pf, "push_url = http://x\npush_name = my app\n"), 1);
	ck_assert_err_has("web.conf:2: push_name = 'my app' is not a name");
	ck_assert_int_eq(parse(&pf, "push_url = http://x\npush_format = json\n"), 1);
	ck_assert_err_has("web.conf:2: push_format = 'json' is not pprof or folded");
	ck_assert_int_eq(parse(&pf, "push_labels = a=b\npush_format = folded\n"), 2);
	ck_assert_err_has("web.conf:1: push_labels is set, but push_url is not");
	ck_assert_err_has("web.conf:2: push_format is set, but push_url is not");
	/* jit_maps: on by default */
	ck_assert_int_eq(parse(&pf, "freq = 49\n"), 0);
	ck_assert(pf.jit_maps);
	ck_assert_int_eq(parse(&pf, "jit_maps = no\n"), 0);
	ck_assert(!pf.jit_maps);
	ck_assert_int_eq(parse(&pf, "jit_maps = sometimes\n"), 1);
	ck_assert_err_has("web.conf:1: jit_maps = 'sometimes' is not yes or no");
}
END_TEST

START_TEST(test_start_checks_at_their_lines)
{
	struct daemon_profile pf;

	ck_assert_int_eq(parse(&pf, "\n\nevents = cpuclock\n"), 1);
	ck_assert_err_has("web.conf:3: events: unknown event 'cpuclock'; did you mean 'cpu-clock'?");
	ck_assert_int_eq(parse(&pf, "freq = 200000\n"), 1);
	ck_assert_err_has("web.conf:1: freq: ");
	ck_assert_err_has("100000");
	ck_assert_int_eq(parse(&pf, "# x\ncallgraph = dwarf,12345\n"), 1);
	ck_assert_err_has("web.conf:2: callgraph: 'stack_bytes' = 12345 is not a multiple of 8");
	ck_assert_int_eq(parse(&pf, "callgraph = dwarf,lots\n"), 1);
	ck_assert_err_has("web.conf:1: callgraph: ");
	ck_assert_int_eq(parse(&pf, "callgraph = sideways\n"), 1);
	ck_assert_err_has("web.conf:1: callgraph: ");
	ck_assert_int_eq(parse(&pf, "depth = 9999\n"), 1);
	ck_assert_err_has("web.conf:1: callgraph: 'depth' = 9999 is out of range");
	ck_assert_int_eq(parse(&pf, "scope = cpus:3-1\n"), 1);
	ck_assert_err_has("web.conf:1: scope: ");
	ck_assert_int_eq(parse(&pf, "scope = cpus:\n"), 1);
	ck_assert_err_has("web.conf:1: scope: ");
	/* Found by fuzz-profile: a sign made the range ULONG_MAX..ULONG_MAX, and the loop endless. */
	ck_assert_int_eq(parse(&pf, "scope = cpus: -1\n"), 1);
	ck_assert_err_has("web.conf:1: scope: ");
	ck_assert_int_eq(parse(&pf, "scope = cpus:0-99999999999\n"), 1);
	ck_assert_err_has("web.conf:1: scope: ");
	/* A unit, cgroup or user scope is the start's filter, checked by its parser. */
	ck_assert_int_eq(parse(&pf, "scope = unit:not a unit\n"), 1);
	ck_assert_err_has("web.conf:1: scope: filter: 'unit' values are systemd unit names");
	ck_assert_int_eq(parse(&pf, "scope = cgroup:../etc\n"), 1);
	ck_assert_err_has("web.conf:1: scope: filter: 'cgroup' values are cgroup paths");
	/* Found by fuzz-profile: a name that is not UTF-8 once made no filter, so every process. */
	ck_assert_int_eq(parse(&pf, "scope = unit:x\206\206.service\n"), 1);
	ck_assert_err_has("web.conf:1: scope: filter: 'unit' values are systemd unit names");
}
END_TEST

START_TEST(test_sizes_durations)
{
	uint64_t v;

	ck_assert_int_eq(daemon_parse_size("4096", &v), 0);
	ck_assert_uint_eq(v, 4096);
	ck_assert_int_eq(daemon_parse_size("64K", &v), 0);
	ck_assert_uint_eq(v, 65536);
	ck_assert_int_eq(daemon_parse_size("64KiB", &v), 0);
	ck_assert_uint_eq(v, 65536);
	ck_assert_int_eq(daemon_parse_size("2g", &v), 0);
	ck_assert_uint_eq(v, 2ull << 30);
	ck_assert_int_eq(daemon_parse_size("1T", &v), 0);
	ck_assert_uint_eq(v, 1ull << 40);
	ck_assert_int_eq(daemon_parse_size("", &v), -EINVAL);
	ck_assert_int_eq(daemon_parse_size("K", &v), -EINVAL);
	ck_assert_int_eq(daemon_parse_size("-1", &v), -EINVAL);
	ck_assert_int_eq(daemon_parse_size("1.5", &v), -EINVAL);
	ck_assert_int_eq(daemon_parse_size("10X", &v), -EINVAL);
	ck_assert_int_eq(daemon_parse_size("10KB2", &v), -EINVAL);
	ck_assert_int_eq(daemon_parse_size("99999999T", &v), -ERANGE);
	ck_assert_int_eq(daemon_parse_duration("90", &v), 0);
	ck_assert_uint_eq(v, 90);
	ck_assert_int_eq(daemon_parse_duration("15min", &v), 0);
	ck_assert_uint_eq(v, 900);
	ck_assert_int_eq(daemon_parse_duration("15m", &v), 0);
	ck_assert_uint_eq(v, 900);
	ck_assert_int_eq(daemon_parse_duration("2h", &v), 0);
	ck_assert_uint_eq(v, 7200);
	ck_assert_int_eq(daemon_parse_duration("7d", &v), 0);
	ck_assert_uint_eq(v, 7 * 86400);
	ck_assert_int_eq(daemon_parse_duration("1w", &v), -EINVAL);
	ck_assert_int_eq(daemon_parse_duration("1.5h", &v), -EINVAL);
	ck_assert_int_eq(daemon_parse_duration(" 5", &v), -EINVAL);
	ck_assert_int_eq(daemon_parse_duration("99999999999999999999", &v), -ERANGE);
	ck_assert_int_eq(daemon_parse_duration("999999999999999999d", &v), -ERANGE);
}
END_TEST

START_TEST(test_names)
{
	ck_assert(daemon_profile_name_ok("web"));
	ck_assert(daemon_profile_name_ok("db-1.main_x"));
	ck_assert(!daemon_profile_name_ok(""));
	ck_assert(!daemon_profile_name_ok(".hidden"));
	ck_assert(!daemon_profile_name_ok("-x"));
	ck_assert(!daemon_profile_name_ok("a/b"));
	ck_assert(!daemon_profile_name_ok("a b"));
	ck_assert(!daemon_profile_name_ok("0123456789012345678901234567890123456789012345678901234567890123"));
}
END_TEST

START_TEST(test_budget_spread)
{
	struct daemon_budget_spread s;
	uint64_t charged = 0, c;

	memset(&s, 0, sizeof(s));
	/* A 120 ms push, then nothing: 4 ms a window for 30 windows, then 0. */
	c = daemon_budget_spread(&s, 30, 120000000);
	ck_assert_uint_eq(c, 4000000);
	charged += c;
	for (int i = 1; i < 30; i++) {
		c = daemon_budget_spread(&s, 30, 0);
		ck_assert_uint_eq(c, 4000000);
		charged += c;
	}
	ck_assert_uint_eq(charged, 120000000); /* all of it, once */
	ck_assert_uint_eq(daemon_budget_spread(&s, 30, 0), 0);
	/* A push every 5 windows of 10 ms: 2 ms a window once the horizon is full. */
	memset(&s, 0, sizeof(s));
	for (int i = 0; i < 60; i++)
		c = daemon_budget_spread(&s, 30, i % 5 == 0 ? 10000000 : 0);
	ck_assert_uint_eq(c, 2000000);
	/* The horizon is bounded: 0 acts as 1, above the maximum as the maximum. */
	memset(&s, 0, sizeof(s));
	ck_assert_uint_eq(daemon_budget_spread(&s, 0, 7), 7);
	ck_assert_uint_eq(daemon_budget_spread(&s, 0, 9), 9);
	memset(&s, 0, sizeof(s));
	ck_assert_uint_eq(daemon_budget_spread(&s, 100000, 150 * 3), 3);
}
END_TEST

START_TEST(test_budget_law)
{
	/* Over budget: down in proportion, with a tenth to spare. */
	ck_assert_uint_eq(daemon_budget_next(1000, 1000, 2000, 1000), 450);
	ck_assert_uint_eq(daemon_budget_next(10000, 10000, 358600000, 40000000), 1003);
	/* Never below 1 Hz, never above the configured rate. */
	ck_assert_uint_eq(daemon_budget_next(3, 1000, 1000000, 1), 1);
	ck_assert_uint_eq(daemon_budget_next(1, 1000, 1000000, 1), 1);
	/* Within 70..100% of the budget: no change. */
	ck_assert_uint_eq(daemon_budget_next(500, 1000, 800, 1000), 500);
	ck_assert_uint_eq(daemon_budget_next(500, 1000, 1000, 1000), 500);
	/* Well under: up, at most doubling, at most the configured rate. */
	ck_assert_uint_eq(daemon_budget_next(100, 1000, 100, 1000), 200);
	ck_assert_uint_eq(daemon_budget_next(100, 1000, 600, 1000), 150);
	ck_assert_uint_eq(daemon_budget_next(800, 1000, 10, 1000), 1000);
	ck_assert_uint_eq(daemon_budget_next(1000, 1000, 10, 1000), 1000);
	ck_assert_uint_eq(daemon_budget_next(10, 1000, 0, 1000), 20);
	/* Just over: down by more than the excess (the tenth to spare). */
	ck_assert_uint_eq(daemon_budget_next(1000, 2000, 1040, 1000), 865);
	/* Just under 70%: up. */
	ck_assert_uint_eq(daemon_budget_next(1000, 2000, 699, 1000), 1287);
	/* Degenerate inputs never give 0 or more than the maximum. */
	ck_assert_uint_eq(daemon_budget_next(0, 1000, 5, 10), 1);
	ck_assert_uint_eq(daemon_budget_next(5000, 1000, 100, 1000), 1000);
}
END_TEST

static char tmpdir[] = "/tmp/test-daemon-profile-XXXXXX";

static void put(const char *name, const char *text)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void clear_dir(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/* '%s'/.h*", tmpdir, tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_load_dir)
{
	struct daemon_profile defs[4];
	char path[512];
	size_t n = 99;
	int r;

	daemon_config_defaults(&cfg);
	clear_dir();
	put("a.conf", "freq = 99\n");
	put("b.conf", "freq = 99\nnonsense = 1\n");
	put("c.conf", "enabled = no\n");
	put("c.conf~", "freq = bad\n");	  /* not NAME.conf: an editor's backup */
	put("README", "not a profile\n");
	put(".hidden.conf", "freq = bad\n");
	put("bad name.conf", "\n");
	snprintf(path, sizeof(path), "%s/fifo.conf", tmpdir);
	ck_assert_int_eq(mkfifo(path, 0644), 0); /* must not block the load */
	r = daemon_profile_load_dir(tmpdir, &cfg, 100000, 127, defs, 4, &n, err, sizeof(err));
	ck_assert_int_eq(r, 3);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(defs[0].name, "a");
	ck_assert_str_eq(defs[1].name, "c");
	ck_assert(!defs[1].enabled);
	ck_assert_err_has("b.conf: refused (1 problem):\nb.conf:2: unknown key 'nonsense'");
	ck_assert_err_has("bad name.conf: not a profile name");
	ck_assert_err_has("fifo.conf: not a regular file; refused");
	ck_assert_ptr_null(strstr(err, "hidden"));
	ck_assert_ptr_null(strstr(err, "c.conf~"));
	/* More files than room: the rest are refused, not dropped in silence. */
	clear_dir();
	put("a.conf", "");
	put("b.conf", "");
	put("c.conf", "");
	r = daemon_profile_load_dir(tmpdir, &cfg, 100000, 127, defs, 2, &n, err, sizeof(err));
	ck_assert_int_eq(r, 1);
	ck_assert_uint_eq(n, 2);
	ck_assert_err_has("c.conf: more than 2 profiles; refused");
	/* No directory: no profiles, no problem. */
	r = daemon_profile_load_dir("/nonexistent/profiles.d", &cfg, 100000, 127, defs, 2, &n, err,
				    sizeof(err));
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(test_same)
{
	struct daemon_profile a, b;

	ck_assert_int_eq(parse(&a, "freq = 99\nrotate_seconds = 60\n"), 0);
	ck_assert_int_eq(parse(&b, "\n\nrotate_seconds = 1min\nfreq = 99\n"), 0);
	ck_assert(daemon_profile_same(&a, &b));
	ck_assert_int_eq(parse(&b, "freq = 98\nrotate_seconds = 60\n"), 0);
	ck_assert(!daemon_profile_same(&a, &b));
}
END_TEST

static off_t file_size(const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return stat(path, &st) == 0 ? st.st_size : -1;
}

static void put_sized(const char *name, size_t bytes, time_t mtime)
{
	char path[512];
	struct timespec ts[2] = { { mtime, 0 }, { mtime, 0 } };
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)bytes), 0);
	ck_assert_int_eq(futimens(fd, ts), 0);
	close(fd);
}

START_TEST(test_open_file)
{
	char path[600], want[600];
	time_t t = 1796500800; /* 2026-12-05T20:00:00Z */
	int fd1, fd2;

	clear_dir();
	fd1 = daemon_profile_open_file(tmpdir, "web", t, path, sizeof(path));
	ck_assert_int_ge(fd1, 0);
	snprintf(want, sizeof(want), "%s/web-20261205T200000Z.pmclog", tmpdir);
	ck_assert_str_eq(path, want);
	/* The same second again: a new name, never the old file. */
	fd2 = daemon_profile_open_file(tmpdir, "web", t, path, sizeof(path));
	ck_assert_int_ge(fd2, 0);
	snprintf(want, sizeof(want), "%s/web-20261205T200000Z-1.pmclog", tmpdir);
	ck_assert_str_eq(path, want);
	close(fd1);
	close(fd2);
	/* A planted link is not followed. */
	snprintf(path, sizeof(path), "%s/web-20261205T200001Z.pmclog", tmpdir);
	ck_assert_int_eq(symlink("/etc/passwd", path), 0);
	fd1 = daemon_profile_open_file(tmpdir, "web", t + 1, path, sizeof(path));
	ck_assert_int_ge(fd1, 0);
	snprintf(want, sizeof(want), "%s/web-20261205T200001Z-1.pmclog", tmpdir);
	ck_assert_str_eq(path, want);
	close(fd1);
	ck_assert_int_eq(daemon_profile_open_file("/nonexistent", "web", t, path, sizeof(path)),
			 -ENOENT);
	ck_assert_int_eq(daemon_profile_open_file(tmpdir, "web", t, path, 20), -ENAMETOOLONG);
}
END_TEST

START_TEST(test_retain)
{
	struct daemon_retain ret;
	char cur[600];
	time_t now = 1796508000;

	clear_dir();
	/* Four files of 100 bytes (+ side files), oldest first by name, not by mtime. */
	put_sized("web-20261205T190000Z.pmclog", 100, now - 10);
	put_sized("web-20261205T190000Z.pmclog.kallsyms", 50, now - 10);
	put_sized("web-20261205T190000Z-1.pmclog", 100, now - 20);
	put_sized("web-20261205T190000Z-1.pmclog.vdso", 50, now - 20);
	/* ... and JIT maps beside the first: counted with it, deleted with it. */
	{
		char d[600];

		snprintf(d, sizeof(d), "%s/web-20261205T190000Z.pmclog.jit", tmpdir);
		ck_assert_int_eq(mkdir(d, 0750), 0);
		put_sized("web-20261205T190000Z.pmclog.jit/perf-42.map", 40, now - 10);
		put_sized("web-20261205T190000Z.pmclog.jit/perf-43.map", 60, now - 10);
	}
	put_sized("web-20261205T191000Z.pmclog", 100, now);
	put_sized("web-20261205T192000Z.pmclog", 100, now);
	put_sized("db-20261205T180000Z.pmclog", 1000, now - 99999); /* another profile's */
	put_sized("web-notastamp.pmclog", 1000, now - 99999);	    /* not ours */
	put_sized("web-20261205T170000Z.pmclog.kallsyms", 10, now - 99999); /* a side file alone */
	snprintf(cur, sizeof(cur), "%s/web-20261205T192000Z.pmclog", tmpdir);
	ck_assert_int_eq(daemon_profile_retain(tmpdir, "web", cur, 1000, 0, now, &ret), 0);
	ck_assert_uint_eq(ret.files, 4);
	ck_assert_uint_eq(ret.bytes, 600);
	ck_assert_uint_eq(ret.deleted_files, 0);
	/*
	 * 520 bytes: the JIT maps go (what users' processes wrote never costs the
	 * profile a log: issue 32 finding 7), every log stays.
	 */
	ck_assert_int_eq(daemon_profile_retain(tmpdir, "web", cur, 520, 0, now, &ret), 0);
	ck_assert_uint_eq(ret.deleted_files, 0);
	ck_assert_uint_eq(ret.deleted_jit_bytes, 100);
	ck_assert_uint_eq(ret.files, 4);
	ck_assert_uint_eq(ret.bytes, 500);
	ck_assert_int_eq(file_size("web-20261205T190000Z.pmclog"), 100);
	ck_assert_int_eq(file_size("web-20261205T190000Z.pmclog.jit/perf-42.map"), -1);
	{
		char d[600];
		struct stat st;

		snprintf(d, sizeof(d), "%s/web-20261205T190000Z.pmclog.jit", tmpdir);
		ck_assert_int_eq(stat(d, &st), -1); /* the directory went too */
	}
	/* 300 bytes: the two oldest go (the -N file is younger than the one without). */
	ck_assert_int_eq(daemon_profile_retain(tmpdir, "web", cur, 300, 0, now, &ret), 0);
	ck_assert_uint_eq(ret.deleted_files, 2);
	ck_assert_uint_eq(ret.deleted_bytes, 300);
	ck_assert_uint_eq(ret.files, 2);
	ck_assert_int_eq(file_size("web-20261205T190000Z.pmclog"), -1);
	ck_assert_int_eq(file_size("web-20261205T190000Z.pmclog.kallsyms"), -1);
	ck_assert_int_eq(file_size("web-20261205T190000Z-1.pmclog.vdso"), -1);
	ck_assert_int_eq(file_size("web-20261205T191000Z.pmclog"), 100);
	/* Never the current file, however small the budget. */
	ck_assert_int_eq(daemon_profile_retain(tmpdir, "web", cur, 1, 0, now, &ret), 0);
	ck_assert_uint_eq(ret.files, 1);
	ck_assert_int_eq(file_size("web-20261205T192000Z.pmclog"), 100);
	/* By age: a file last written more than retain_seconds ago. */
	put_sized("web-20261205T150000Z.pmclog", 100, now - 7200);
	put_sized("web-20261205T160000Z.pmclog", 100, now - 600);
	ck_assert_int_eq(daemon_profile_retain(tmpdir, "web", cur, 0, 3600, now, &ret), 0);
	ck_assert_uint_eq(ret.deleted_files, 1);
	ck_assert_int_eq(file_size("web-20261205T150000Z.pmclog"), -1);
	ck_assert_int_eq(file_size("web-20261205T160000Z.pmclog"), 100);
	/* Others' files stay. */
	ck_assert_int_eq(file_size("db-20261205T180000Z.pmclog"), 1000);
	ck_assert_int_eq(file_size("web-notastamp.pmclog"), 1000);
	ck_assert_int_eq(daemon_profile_retain("/nonexistent", "web", NULL, 1, 0, now, &ret),
			 -ENOENT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("daemon-profile");
	TCase *tp = tcase_create("parse");
	TCase *tf = tcase_create("files");
	SRunner *sr;
	int failed;

	setenv("HWPMCD_SYSFS_ROOT", TEST_DATA_DIR "/sysfs/intel", 1);
	setenv("TZ", "UTC", 1);
	if (!mkdtemp(tmpdir))
		return EXIT_FAILURE;
	tcase_add_test(tp, test_defaults);
	tcase_add_test(tp, test_every_key);
	tcase_add_test(tp, test_filter_scopes);
	tcase_add_test(tp, test_problems_at_their_lines);
	tcase_add_test(tp, test_rules_between_keys);
	tcase_add_test(tp, test_push_keys);
	tcase_add_test(tp, test_start_checks_at_their_lines);
	tcase_add_test(tp, test_sizes_durations);
	tcase_add_test(tp, test_names);
	tcase_add_test(tp, test_same);
	tcase_add_test(tp, test_budget_law);
	tcase_add_test(tp, test_budget_spread);
	tcase_add_test(tf, test_load_dir);
	tcase_add_test(tf, test_open_file);
	tcase_add_test(tf, test_retain);
	suite_add_tcase(s, tp);
	suite_add_tcase(s, tf);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
