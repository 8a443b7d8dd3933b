/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-daemon-ctl.c: Check suite for src/daemon/daemon-request.c and
 * daemon-auth.c: request lines, a start's args for administrators and users
 * (defaults, every field's values, ranges and types, the user rules and limits,
 * defaults lowered to user limits), who is an administrator, and whom a user may
 * profile, against a fake /proc tree and the real one.  Events are parsed against
 * tests/data/sysfs/intel (PMUs cpu, software, tracepoint, uncore_imc_0).
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon-ctl.h"

static char err[4096];

#define ck_assert_err_has(needle)                                                                  \
	ck_assert_msg(strstr(err, (needle)) != NULL, "error '%s' does not name '%s'", err, (needle))

/* ---- daemon_request_parse ---- */

static int req(const char *line, struct daemon_request *rq)
{
	return daemon_request_parse(line, strlen(line), rq, err, sizeof(err));
}

START_TEST(test_request_good)
{
	struct daemon_request rq;

	ck_assert_int_eq(req("{\"id\": 1, \"cmd\": \"hello\"}", &rq), 0);
	ck_assert_int_eq(rq.id, 1);
	ck_assert_str_eq(rq.cmd, "hello");
	ck_assert_ptr_nonnull(rq.root);
	ck_assert(json_is_object(rq.args));
	ck_assert_uint_eq(json_object_size(rq.args), 0);
	/* The empty args belong to root. */
	ck_assert_ptr_eq(json_object_get(rq.root, "args"), rq.args);
	daemon_request_free(&rq);
	ck_assert_ptr_null(rq.root);
	ck_assert_ptr_null(rq.cmd);
	ck_assert_ptr_null(rq.args);
	ck_assert_int_eq(rq.id, -1);

	ck_assert_int_eq(req("{\"cmd\": \"start\", \"args\": {\"output\": \"fd\", \"freq\": 99},"
			     " \"id\": 123456789012}",
			     &rq),
			 0);
	ck_assert_int_eq(rq.id, 123456789012LL);
	ck_assert_str_eq(rq.cmd, "start");
	ck_assert_uint_eq(json_object_size(rq.args), 2);
	ck_assert_str_eq(json_string_value(json_object_get(rq.args, "output")), "fd");
	ck_assert_int_eq(json_integer_value(json_object_get(rq.args, "freq")), 99);
	daemon_request_free(&rq);

	/* Only @len bytes count. */
	{
		static const char line[] = "{\"id\": 2, \"cmd\": \"status\"}garbage";

		ck_assert_int_eq(
			daemon_request_parse(line, strlen(line) - 7, &rq, err, sizeof(err)), 0);
		ck_assert_int_eq(rq.id, 2);
		ck_assert_str_eq(rq.cmd, "status");
		daemon_request_free(&rq);
		ck_assert_int_eq(daemon_request_parse(line, strlen(line), &rq, err, sizeof(err)),
				 -EPROTO);
	}
	/* A negative id is the client's business. */
	ck_assert_int_eq(req("{\"id\": -7, \"cmd\": \"x\", \"args\": {}}", &rq), 0);
	ck_assert_int_eq(rq.id, -7);
	daemon_request_free(&rq);
}
END_TEST

START_TEST(test_request_not_json)
{
	struct daemon_request rq;
	/* A top level that is neither object nor array is not decoded either. */
	static const char *const bad[] = { "",
					   "not json",
					   "{",
					   "{\"id\": 1, \"cmd\": \"x\"",
					   "{\"id\": 1, \"cmd\": \"x\"} {}",
					   "\xff\xfe",
					   "42",
					   "\"id\"",
					   "null",
					   "true" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&rq, 0x5a, sizeof(rq));
		err[0] = '\0';
		ck_assert_int_eq(req(bad[i], &rq), -EPROTO);
		ck_assert_int_eq(rq.id, -1);
		ck_assert_ptr_null(rq.root);
		ck_assert_err_has("malformed JSON");
	}
	/* A NUL byte inside the length is not JSON either. */
	ck_assert_int_eq(
		daemon_request_parse("{\"id\": 1,\0 \"cmd\": \"x\"}", 22, &rq, err, sizeof(err)),
		-EPROTO);
	ck_assert_int_eq(rq.id, -1);
	/* And an escaped NUL in a string is refused by the decoder. */
	ck_assert_int_eq(req("{\"id\": 1, \"cmd\": \"he\\u0000llo\"}", &rq), -EPROTO);
	ck_assert_int_eq(rq.id, -1);
}
END_TEST

START_TEST(test_request_bad_shape)
{
	static const struct {
		const char *line;
		json_int_t id;
	} cases[] = {
		{ "[1, 2]", -1 },
		{ "[{\"id\": 1, \"cmd\": \"x\"}]", -1 },
		{ "{}", -1 },
		{ "{\"cmd\": \"hello\"}", -1 },		       /* no id */
		{ "{\"id\": 3}", 3 },			       /* no cmd */
		{ "{\"id\": \"1\", \"cmd\": \"hello\"}", -1 }, /* id not an integer */
		{ "{\"id\": 1.5, \"cmd\": \"hello\"}", -1 },
		{ "{\"id\": true, \"cmd\": \"hello\"}", -1 },
		{ "{\"id\": null, \"cmd\": \"hello\"}", -1 },
		{ "{\"id\": 4, \"cmd\": 7}", 4 }, /* cmd not a string */
		{ "{\"id\": 5, \"cmd\": null}", 5 },
		{ "{\"id\": 6, \"cmd\": \"x\", \"extra\": 1}", 6 }, /* JSON_STRICT */
		{ "{\"id\": 7, \"cmd\": \"x\", \"args\": {}, \"ARGS\": {}}", 7 },
	};
	struct daemon_request rq;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&rq, 0x5a, sizeof(rq));
		err[0] = '\0';
		ck_assert_msg(req(cases[i].line, &rq) == -EINVAL, "%s", cases[i].line);
		ck_assert_msg(rq.id == cases[i].id, "%s: id %lld", cases[i].line, (long long)rq.id);
		ck_assert_ptr_null(rq.root);
		ck_assert_ptr_null(rq.args);
		ck_assert_err_has("bad request");
	}
}
END_TEST

START_TEST(test_request_duplicates_and_args)
{
	struct daemon_request rq;

	/* Duplicate keys are refused by the decoder (JSON_REJECT_DUPLICATES). */
	ck_assert_int_eq(req("{\"id\": 1, \"id\": 2, \"cmd\": \"x\"}", &rq), -EPROTO);
	ck_assert_int_eq(rq.id, -1);
	ck_assert_err_has("duplicate");
	ck_assert_int_eq(req("{\"id\": 1, \"cmd\": \"x\", \"cmd\": \"y\"}", &rq), -EPROTO);
	/* Also inside args. */
	ck_assert_int_eq(req("{\"id\": 1, \"cmd\": \"start\", \"args\": {\"freq\": 1, "
			     "\"freq\": 2}}",
			     &rq),
			 -EPROTO);

	/* args that is not an object: EINVAL with the id kept. */
	ck_assert_int_eq(req("{\"id\": 8, \"cmd\": \"x\", \"args\": [1]}", &rq), -EINVAL);
	ck_assert_int_eq(rq.id, 8);
	ck_assert_ptr_null(rq.root);
	ck_assert_str_eq(err, "'args' must be an object");
	ck_assert_int_eq(req("{\"id\": 9, \"cmd\": \"x\", \"args\": \"a\"}", &rq), -EINVAL);
	ck_assert_int_eq(rq.id, 9);
	ck_assert_int_eq(req("{\"id\": 10, \"cmd\": \"x\", \"args\": 0}", &rq), -EINVAL);
	ck_assert_int_eq(rq.id, 10);
	/* null is not an absent args. */
	ck_assert_int_eq(req("{\"id\": 11, \"cmd\": \"x\", \"args\": null}", &rq), -EINVAL);
	ck_assert_int_eq(rq.id, 11);
	ck_assert_str_eq(err, "'args' must be an object");
}
END_TEST

START_TEST(test_request_free_twice)
{
	struct daemon_request rq;

	ck_assert_int_eq(req("{\"id\": 1, \"cmd\": \"x\", \"args\": {\"a\": [1, 2, {}]}}", &rq), 0);
	daemon_request_free(&rq);
	/* Freed: a second free is harmless (root is NULL). */
	daemon_request_free(&rq);
	ck_assert_int_eq(rq.id, -1);
}
END_TEST

/* ---- daemon_start_parse ---- */

static struct daemon_config cfg;
static struct session_params p;
static struct daemon_start st;
static uint64_t maxrate;
static uint32_t maxstack;

static void start_setup(void)
{
	daemon_config_defaults(&cfg);
	maxrate = 100000;
	maxstack = 127;
	err[0] = '\0';
}

/* Parse the args @text ('' as "", for readability) as @admin or as uid 1000. */
static int start(bool admin, const char *text)
{
	static const struct daemon_who root = { 0, 0, 1, true };
	static const struct daemon_who user = { 1000, 1000, 4242, false };
	char buf[8192];
	json_error_t je;
	json_t *a;
	size_t i;
	int r;

	ck_assert_uint_lt(strlen(text), sizeof(buf));
	for (i = 0; text[i]; i++)
		buf[i] = text[i] == '\'' ? '"' : text[i];
	buf[i] = '\0';
	/* JSON_ALLOW_NUL: daemon_start_parse must stand args of any origin (the fuzzer's). */
	a = json_loads(buf, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	ck_assert_msg(a != NULL, "test JSON '%s': %s", buf, je.text);
	memset(&p, 0x5a, sizeof(p));
	memset(&st, 0x5a, sizeof(st));
	strcpy(err, "junk");
	r = daemon_start_parse(a, &cfg, admin ? &root : &user, maxrate, maxstack, &p, &st, err,
			       sizeof(err));
	json_decref(a);
	if (r == 0)
		ck_assert_msg(err[0] == '\0', "success with error '%s'", err);
	else
		ck_assert_msg(err[0] != '\0' && strcmp(err, "junk") != 0, "%s: no error", text);
	return r;
}

#define ADMIN(text) start(true, text)
#define USER(text)  start(false, text)

/* Both as admin and (with a pid) as a user. */
#define BOTH_FAIL(errno_, admin_text, user_text, needle)                                           \
	do {                                                                                       \
		ck_assert_int_eq(ADMIN(admin_text), errno_);                                       \
		ck_assert_err_has(needle);                                                         \
		ck_assert_int_eq(USER(user_text), errno_);                                         \
		ck_assert_err_has(needle);                                                         \
	} while (0)

START_TEST(test_start_defaults_admin)
{
	ck_assert_int_eq(ADMIN("{'output': 'fd'}"), 0);
	ck_assert_uint_eq(p.nevents, 1);
	ck_assert_str_eq(p.events[0].name, "cpu-clock");
	ck_assert_uint_eq(p.events[0].type, PERF_TYPE_SOFTWARE);
	ck_assert_uint_eq(p.events[0].config, PERF_COUNT_SW_CPU_CLOCK);
	ck_assert(!p.events[0].exclude_kernel);
	ck_assert(!p.events[0].exclude_user);
	ck_assert_int_eq(p.cfg.callgraph, COLL_CG_FP);
	ck_assert_uint_eq(p.cfg.depth, 127); /* 128 capped at maxstack, no note */
	ck_assert_uint_eq(st.depth_note, 0);
	ck_assert_uint_eq(p.cfg.stack_bytes, COLL_STACK_DEFAULT);
	ck_assert_uint_eq(p.cfg.ring_pages, COLL_RING_PAGES_DEFAULT);
	ck_assert_uint_eq(p.cfg.freq, COLL_FREQ_DEFAULT);
	ck_assert_uint_eq(p.cfg.period, 0);
	ck_assert_uint_eq(p.ncpus, 0);
	ck_assert_uint_eq(p.npids, 0);
	ck_assert(!p.command);
	ck_assert(p.kernel);
	ck_assert_int_eq(p.out_fd, -1);
	ck_assert_int_eq(p.ks_fd, -1);
	ck_assert(p.who.admin); /* who asked, for the worker's checks */
	ck_assert_uint_eq(p.unwind_cache_bytes, (size_t)cfg.unwind_cache_mb << 20);
	ck_assert(!st.detached);
	ck_assert(!st.ks_fd);
	ck_assert(!st.ks_want);
	ck_assert(!st.user_forced);
	ck_assert_uint_eq(st.ring_bytes, (COLL_RING_PAGES_DEFAULT + 1) * 4096);

	/* The default depth without a kernel limit, or below it. */
	maxstack = 0;
	ck_assert_int_eq(ADMIN("{'output': 'fd'}"), 0);
	ck_assert_uint_eq(p.cfg.depth, COLL_DEPTH_DEFAULT);
	maxstack = 200;
	ck_assert_int_eq(ADMIN("{'output': 'fd'}"), 0);
	ck_assert_uint_eq(p.cfg.depth, COLL_DEPTH_DEFAULT);
	ck_assert_uint_eq(st.depth_note, 0);
}
END_TEST

START_TEST(test_start_not_object_unknown_field)
{
	json_t *a = json_array();

	ck_assert_int_eq(daemon_start_parse(a, &cfg, &(struct daemon_who){ 0, 0, 1, true }, maxrate,
					    maxstack, &p, &st, err, sizeof(err)),
			 -EINVAL);
	ck_assert_err_has("'args' must be an object");
	ck_assert_int_eq(p.out_fd, -1);
	json_decref(a);

	BOTH_FAIL(-EINVAL, "{'output': 'fd', 'bogus': 1}",
		  "{'output': 'fd', 'pids': [42], "
		  "'bogus': 1}",
		  "unknown field 'bogus'");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'Events': ['cpu-clock']}"), -EINVAL);
	ck_assert_err_has("'Events'");
	/* The name is shown escaped. */
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'bo\\ngus\\u0001': 1}"), -EINVAL);
	ck_assert_err_has("'bo\\ngus\\x01'");
	/* Checked before anything else: even without output. */
	ck_assert_int_eq(ADMIN("{'x': 1}"), -EINVAL);
	ck_assert_err_has("unknown field 'x'");
}
END_TEST

START_TEST(test_start_output)
{
	BOTH_FAIL(-EINVAL, "{}", "{'pids': [42]}", "no output configured");
	BOTH_FAIL(-EINVAL, "{'output': '/tmp/log'}", "{'output': '/tmp/log', 'pids': [42]}",
		  "no output configured");
	ck_assert_int_eq(ADMIN("{'output': 1}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': null}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'FD'}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': ['fd']}"), -EINVAL);
	ck_assert_err_has("the daemon opens no path a client names");

	ck_assert_int_eq(ADMIN("{'output': 'state'}"), 0);
	ck_assert(st.detached);
	ck_assert(st.ks_want); /* a detached session writes its kallsyms by default */
	ck_assert(!st.ks_fd);
	ck_assert(p.kernel);
	ck_assert_int_eq(ADMIN("{'output': 'state', 'pids': [42]}"), 0);
	ck_assert(st.detached);

	ck_assert_int_eq(USER("{'output': 'state', 'pids': [42]}"), -EPERM);
	ck_assert_err_has("detached sessions");
	ck_assert_err_has("'hwpmc'");
	ck_assert_err_has("uid 1000");
	ck_assert_int_eq(USER("{'output': 'state'}"), -EPERM);
}
END_TEST

START_TEST(test_start_kallsyms)
{
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'kallsyms': 'fd'}"), 0);
	ck_assert(st.ks_fd);
	ck_assert(st.ks_want);
	ck_assert_int_eq(p.ks_fd, -1); /* the fd itself is the caller's business */
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'kallsyms': 'none'}"), 0);
	ck_assert(!st.ks_fd);
	ck_assert(!st.ks_want);
	ck_assert_int_eq(ADMIN("{'output': 'state', 'kallsyms': 'none'}"), 0);
	ck_assert(st.detached);
	ck_assert(!st.ks_fd);
	ck_assert(!st.ks_want);
	ck_assert_int_eq(ADMIN("{'output': 'state', 'kallsyms': 'fd'}"), -EINVAL);
	ck_assert_err_has("a detached session writes its own");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'kallsyms': 'yes'}"), -EINVAL);
	ck_assert_err_has("'kallsyms' must be \"fd\" or \"none\"");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'kallsyms': true}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'kallsyms': ''}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'kallsyms': null}"), -EINVAL);
	/* A user may pass one too (the session decides whether it gets symbols). */
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], 'kallsyms': 'fd'}"), 0);
	ck_assert(st.ks_fd);
	ck_assert(st.ks_want);
}
END_TEST

/* "jit_maps": a detached session's JIT maps, on unless false; a client saves its own. */
START_TEST(test_start_jit_maps)
{
	ck_assert_int_eq(ADMIN("{'output': 'state'}"), 0);
	ck_assert(!p.no_jit);
	ck_assert_int_eq(ADMIN("{'output': 'state', 'jit_maps': false}"), 0);
	ck_assert(p.no_jit);
	ck_assert_int_eq(ADMIN("{'output': 'state', 'jit_maps': true}"), 0);
	ck_assert(!p.no_jit);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'jit_maps': false}"), 0);
	ck_assert(p.no_jit);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'jit_maps': true}"), -EINVAL);
	ck_assert_err_has("a recording client saves the maps itself");
	ck_assert_int_eq(ADMIN("{'output': 'state', 'jit_maps': 'yes'}"), -EINVAL);
	ck_assert_err_has("'jit_maps' must be true or false");
}
END_TEST

START_TEST(test_start_events)
{
	char big[4096];
	size_t o;

	ck_assert_int_eq(ADMIN("{'output': 'fd', 'events': ['task-clock', "
			       "'cpu-clock:u,instructions', 'cpu/cpu-cycles/']}"),
			 0);
	ck_assert_uint_eq(p.nevents, 4);
	ck_assert_uint_eq(p.events[0].config, PERF_COUNT_SW_TASK_CLOCK);
	ck_assert_str_eq(p.events[1].name, "cpu-clock:u");
	ck_assert_uint_eq(p.events[1].config, PERF_COUNT_SW_CPU_CLOCK);
	ck_assert(p.events[1].exclude_kernel);
	ck_assert_uint_eq(p.events[2].type, PERF_TYPE_HARDWARE);
	ck_assert_uint_eq(p.events[3].type, 4); /* the fake cpu PMU */
	ck_assert_uint_eq(p.events[3].config, 0x3c);
	/* Administrators may use any PMU. */
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'events': ['uncore_imc_0/cas_count_read/', "
			       "'tracepoint/config=1/', 'cpu-clock:k']}"),
			 0);
	ck_assert_uint_eq(p.nevents, 3);
	ck_assert_uint_eq(p.events[0].type, 17);
	ck_assert_uint_eq(p.events[1].type, PERF_TYPE_TRACEPOINT);
	ck_assert(p.events[2].exclude_user);
	ck_assert(!st.user_forced);

	BOTH_FAIL(-EINVAL, "{'output': 'fd', 'events': []}",
		  "{'output': 'fd', 'pids': [42], 'events': []}", "non-empty array of strings");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'events': 'cpu-clock'}"), -EINVAL);
	ck_assert_err_has("non-empty array of strings");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'events': {}}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'events': null}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'events': ['cpu-clock', 1]}"), -EINVAL);
	ck_assert_err_has("'events' must hold strings");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'events': [null]}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'events': [['cpu-clock']]}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'events': ['cpu-clock\\u0000,task-clock']}"),
			 -EINVAL);
	ck_assert_err_has("NUL byte");
	/* The collector's messages, as EINVAL whatever its errno. */
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'events': ['cpuclock']}"), -EINVAL);
	ck_assert_err_has("cpuclock");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'events': ['nosuchpmu/event=1/']}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'events': ['']}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'events': ['cpu-clock,']}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'events': ['cpu/nosuchterm=1/']}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'events': ['cpu-clock/period=1,freq=1/']}"),
			 -EINVAL);

	/* COLL_EVENT_MAX events in all, across the strings. */
	o = (size_t)snprintf(big, sizeof(big), "{'output': 'fd', 'events': [");
	for (int i = 0; i < COLL_EVENT_MAX; i++)
		o += (size_t)snprintf(big + o, sizeof(big) - o, "%s'cpu-clock'", i ? ", " : "");
	snprintf(big + o, sizeof(big) - o, "]}");
	ck_assert_int_eq(ADMIN(big), 0);
	ck_assert_uint_eq(p.nevents, COLL_EVENT_MAX);
	snprintf(big + o, sizeof(big) - o, ", 'task-clock']}");
	ck_assert_int_eq(ADMIN(big), -EINVAL);
}
END_TEST

START_TEST(test_start_callgraph)
{
	static const struct {
		const char *name;
		enum coll_callgraph cg;
	} good[] = { { "none", COLL_CG_NONE }, { "fp", COLL_CG_FP }, { "dwarf", COLL_CG_DWARF } };
	char text[128];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(text, sizeof(text), "{'output': 'fd', 'callgraph': '%s'}", good[i].name);
		ck_assert_int_eq(ADMIN(text), 0);
		ck_assert_int_eq(p.cfg.callgraph, good[i].cg);
		snprintf(text, sizeof(text), "{'output': 'fd', 'pids': [1], 'callgraph': '%s'}",
			 good[i].name);
		ck_assert_int_eq(USER(text), 0);
		ck_assert_int_eq(p.cfg.callgraph, good[i].cg);
	}
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'callgraph': 'lbr'}"), -EINVAL);
	ck_assert_err_has("'callgraph' must be");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'callgraph': 'FP'}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'callgraph': 1}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'callgraph': null}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'callgraph': ''}"), -EINVAL);
}
END_TEST

/* A start with the array @key holding @n numbers first, first + 1, ... */
static int start_array(bool admin, const char *key, size_t n, long long first)
{
	static char text[16384];
	size_t o = (size_t)snprintf(text, sizeof(text), "{'output': 'fd', %s'%s': [",
				    strcmp(key, "pids") ? "'pids': [1], " : "", key);

	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%lld", i ? "," : "",
				      first + (long long)i);
	snprintf(text + o, sizeof(text) - o, "]}");
	return start(admin, text);
}

START_TEST(test_start_cpus_pids)
{
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'cpus': [0, 3, 65535]}"), 0);
	ck_assert_uint_eq(p.ncpus, 3);
	ck_assert_int_eq(p.cpus[0], 0);
	ck_assert_int_eq(p.cpus[1], 3);
	ck_assert_int_eq(p.cpus[2], 65535);
	/* A CPU named twice, or out of order, is one CPU (issue 32 finding 6). */
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'cpus': [3, 0, 3, 3, 0]}"), 0);
	ck_assert_uint_eq(p.ncpus, 2);
	ck_assert_int_eq(p.cpus[0], 0);
	ck_assert_int_eq(p.cpus[1], 3);
	{
		static char text[16384];
		size_t o = (size_t)snprintf(text, sizeof(text), "{'output': 'fd', 'pids': [1], "
					    "'cpus': [");

		for (int i = 0; i < DAEMON_MAX_CPUS; i++)
			o += (size_t)snprintf(text + o, sizeof(text) - o, "%s0", i ? "," : "");
		snprintf(text + o, sizeof(text) - o, "]}");
		ck_assert_int_eq(start(true, text), 0);
		ck_assert_uint_eq(p.ncpus, 1);
	}
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'cpus': []}"), -EINVAL);
	ck_assert_err_has("'cpus' must be a non-empty array of at most 1024 CPU numbers");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'cpus': 0}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'cpus': [-1]}"), -EINVAL);
	ck_assert_err_has("'cpus' holds an invalid CPU number");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'cpus': [65536]}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'cpus': ['0']}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'cpus': [1.0]}"), -EINVAL);
	ck_assert_int_eq(start_array(true, "cpus", DAEMON_MAX_CPUS, 0), 0);
	ck_assert_uint_eq(p.ncpus, DAEMON_MAX_CPUS);
	ck_assert_int_eq(p.cpus[DAEMON_MAX_CPUS - 1], DAEMON_MAX_CPUS - 1);
	ck_assert_int_eq(start_array(true, "cpus", DAEMON_MAX_CPUS + 1, 0), -EINVAL);

	ck_assert_int_eq(ADMIN("{'output': 'fd', 'pids': [1, 42, 2147483647]}"), 0);
	ck_assert_uint_eq(p.npids, 3);
	ck_assert_int_eq(p.pids[0], 1);
	ck_assert_int_eq(p.pids[1], 42);
	ck_assert_int_eq(p.pids[2], 2147483647);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'pids': [0]}"), -EINVAL);
	ck_assert_err_has("'pids' holds an invalid pid");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'pids': [-1]}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'pids': [2147483648]}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'pids': ['42']}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'pids': []}"), -EINVAL);
	ck_assert_err_has("at most 256 pids");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'pids': 42}"), -EINVAL);
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [0]}"), -EINVAL);
	ck_assert_int_eq(start_array(true, "pids", DAEMON_MAX_PIDS, 1), 0);
	ck_assert_uint_eq(p.npids, DAEMON_MAX_PIDS);
	ck_assert_int_eq(start_array(false, "pids", DAEMON_MAX_PIDS, 1), 0);
	ck_assert_int_eq(start_array(true, "pids", DAEMON_MAX_PIDS + 1, 1), -EINVAL);
}
END_TEST

START_TEST(test_start_command)
{
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'pids': [42], 'command': true}"), 0);
	ck_assert(p.command);
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], 'command': true}"), 0);
	ck_assert(p.command);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'pids': [42], 'command': false}"), 0);
	ck_assert(!p.command);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'command': false}"), 0);
	ck_assert(!p.command);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'command': true}"), -EINVAL);
	ck_assert_err_has("exactly one pid");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'pids': [42, 43], 'command': true}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'pids': [42], 'command': 1}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'pids': [42], 'command': 'yes'}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'pids': [42], 'command': null}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'state', 'pids': [42], 'command': true}"), -EINVAL);
	ck_assert_err_has("a detached session cannot hold a command");
	ck_assert_int_eq(ADMIN("{'output': 'state', 'pids': [42], 'command': false}"), 0);
}
END_TEST

/* The in-kernel filter's fields: parsed into the spec, the canonical text, refusals. */
START_TEST(test_start_filter)
{
	char many[600] = "{'output': 'fd', 'filter': {'uid': [";

	ck_assert_int_eq(ADMIN("{'output': 'fd'}"), 0);
	ck_assert(!p.filter.on);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': {}}"), 0);
	ck_assert(p.filter.on);
	ck_assert_uint_eq(p.filter.spec.ntgids + p.filter.spec.nuids + p.filter.spec.ncomms + p.filter.ncgroups, 0);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': {'pid': [42, 7], 'uid': [0, 1000], "
			       "'comm': ['nginx'], 'cgroup': ['/a/b'], 'unit': ['x.service']}}"), 0);
	ck_assert_uint_eq(p.filter.spec.ntgids, 2);
	ck_assert_int_eq(p.filter.spec.tgids[1], 7);
	ck_assert_uint_eq(p.filter.spec.nuids, 2);
	ck_assert_uint_eq(p.filter.spec.uids[1], 1000);
	ck_assert_str_eq(p.filter.spec.comms[0], "nginx");
	ck_assert_uint_eq(p.filter.ncgroups, 1);
	ck_assert_uint_eq(p.filter.nunits, 1);
	ck_assert_str_eq(p.filter.cgroups[1], "x.service");
	ck_assert_str_eq(p.filter.text, "pid=42 pid=7 uid=0 uid=1000 comm=nginx");
	/* Users may narrow their own sessions too. */
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], 'filter': {'comm': ['a']}}"), 0);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': []}"), -EINVAL);
	ck_assert_err_has("'filter' must be an object");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': {'gid': [1]}}"), -EINVAL);
	ck_assert_err_has("unknown key 'gid'");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': {'pid': 42}}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': {'pid': [0]}}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': {'pid': ['1']}}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': {'uid': [-1]}}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': {'uid': [4294967295]}}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': {'comm': ['']}}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': {'comm': ['sixteen-bytes-xx']}}"), -EINVAL);
	ck_assert_err_has("the 15 bytes the kernel keeps of a command name: ask for 'sixteen-bytes-x'");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': {'cgroup': ['a/../b']}}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': {'cgroup': ['./a']}}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': {'cgroup': ['a//b']}}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': {'cgroup': ['']}}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': {'unit': ['x']}}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': {'unit': ['a b.service']}}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': {'unit': ['../x.service']}}"), -EINVAL);
	for (int i = 0; i < FILT_VALUES_MAX + 1; i++)
		strcat(many, i ? ", 1" : "1");
	strcat(many, "]}}");
	ck_assert_int_eq(ADMIN(many), -E2BIG);
	ck_assert_err_has("at most 64");
}
END_TEST

/* The integer fields: bounds, types, and the extra rules. */
START_TEST(test_start_integers)
{
	static const struct {
		const char *key;
		long long lo, hi;
	} f[] = {
		{ "depth", 1, COLL_DEPTH_MAX },
		{ "stack_bytes", 8, COLL_STACK_MAX },
		{ "ring_pages", 1, 65536 },
		{ "freq", 1, 100000 },
		{ "period", 1, 9223372036854775807LL },
	};
	static const char *const not_int[] = { "'1'", "1.0", "true", "null", "[1]", "{}" };
	char text[256];

	maxstack = 0;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		snprintf(text, sizeof(text), "{'output': 'fd', '%s': %lld}", f[i].key, f[i].lo);
		ck_assert_msg(ADMIN(text) == 0, "%s: %s", text, err);
		snprintf(text, sizeof(text), "{'output': 'fd', '%s': %lld}", f[i].key, f[i].hi);
		ck_assert_msg(ADMIN(text) == 0, "%s: %s", text, err);
		snprintf(text, sizeof(text), "{'output': 'fd', '%s': %lld}", f[i].key, f[i].lo - 1);
		ck_assert_msg(ADMIN(text) == -ERANGE, "%s: %s", text, err);
		ck_assert_err_has("is out of range");
		ck_assert_err_has(f[i].key);
		snprintf(text, sizeof(text), "{'output': 'fd', '%s': -5}", f[i].key);
		ck_assert_msg(ADMIN(text) == -ERANGE, "%s: %s", text, err);
		if (f[i].hi < 9223372036854775807LL) {
			snprintf(text, sizeof(text), "{'output': 'fd', '%s': %lld}", f[i].key,
				 f[i].hi + 1);
			ck_assert_msg(ADMIN(text) == -ERANGE, "%s: %s", text, err);
		}
		for (size_t j = 0; j < sizeof(not_int) / sizeof(not_int[0]); j++) {
			snprintf(text, sizeof(text), "{'output': 'fd', '%s': %s}", f[i].key,
				 not_int[j]);
			ck_assert_msg(ADMIN(text) == -EINVAL, "%s: %s", text, err);
			ck_assert_err_has("must be an integer");
		}
	}
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'depth': 0}"), -ERANGE);
	ck_assert_str_eq(err, "'depth' = 0 is out of range 1..512");

	/* The values land where they belong. */
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'depth': 300, 'stack_bytes': 16, "
			       "'ring_pages': 64, 'freq': 4000}"),
			 0);
	ck_assert_uint_eq(p.cfg.depth, 300);
	ck_assert_uint_eq(p.cfg.stack_bytes, 16);
	ck_assert_uint_eq(p.cfg.ring_pages, 64);
	ck_assert_uint_eq(p.cfg.freq, 4000);
	ck_assert_uint_eq(p.cfg.period, 0);
	ck_assert_uint_eq(st.ring_bytes, 65 * 4096);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'period': 12345}"), 0);
	ck_assert_uint_eq(p.cfg.period, 12345);
	ck_assert_uint_eq(p.cfg.freq, COLL_FREQ_DEFAULT);

	/* stack_bytes: a multiple of 8; ring_pages: a power of two. */
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'stack_bytes': 12}"), -EINVAL);
	ck_assert_str_eq(err, "'stack_bytes' = 12 is not a multiple of 8");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'stack_bytes': 65527}"), -EINVAL);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'stack_bytes': 7}"), -ERANGE);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'stack_bytes': 65536}"), -ERANGE);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'ring_pages': 3}"), -EINVAL);
	ck_assert_str_eq(err, "'ring_pages' = 3 is not a power of two");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'ring_pages': 65535}"), -EINVAL);
	for (unsigned k = 0; k <= 16; k++) {
		snprintf(text, sizeof(text), "{'output': 'fd', 'ring_pages': %u}", 1u << k);
		ck_assert_msg(ADMIN(text) == 0, "%s: %s", text, err);
		ck_assert_uint_eq(p.cfg.ring_pages, 1u << k);
		ck_assert_uint_eq(st.ring_bytes, ((size_t)(1u << k) + 1) * 4096);
	}

	/* freq and period together. */
	BOTH_FAIL(-EINVAL, "{'output': 'fd', 'freq': 100, 'period': 100}",
		  "{'output': 'fd', 'pids': [1], 'freq': 100, 'period': 10000000}",
		  "'freq' or 'period', not both");

	/* freq's own range without a kernel limit. */
	maxrate = 0;
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'freq': 2147483647}"), 0);
	ck_assert_uint_eq(p.cfg.freq, 2147483647u);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'freq': 2147483648}"), -ERANGE);
	ck_assert_err_has("'freq' = 2147483648 is out of range 1..2147483647");
}
END_TEST

START_TEST(test_start_depth_cap)
{
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'depth': 200}"), 0);
	ck_assert_uint_eq(p.cfg.depth, 127);
	ck_assert_uint_eq(st.depth_note, 127);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'depth': 127}"), 0);
	ck_assert_uint_eq(p.cfg.depth, 127);
	ck_assert_uint_eq(st.depth_note, 0);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'depth': 100}"), 0);
	ck_assert_uint_eq(p.cfg.depth, 100);
	ck_assert_uint_eq(st.depth_note, 0);
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'depth': 128}"), 0);
	ck_assert_uint_eq(p.cfg.depth, 127);
	ck_assert_uint_eq(st.depth_note, 127);
	/* dwarf mode unwinds the user part itself: not capped. */
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'callgraph': 'dwarf', 'depth': 200}"), 0);
	ck_assert_uint_eq(p.cfg.depth, 200);
	ck_assert_uint_eq(st.depth_note, 0);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'callgraph': 'dwarf'}"), 0);
	ck_assert_uint_eq(p.cfg.depth, COLL_DEPTH_DEFAULT);
	/* none and fp are capped alike. */
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'callgraph': 'none', 'depth': 512}"), 0);
	ck_assert_uint_eq(p.cfg.depth, 127);
	ck_assert_uint_eq(st.depth_note, 127);
	/* Unknown kernel limit: as asked. */
	maxstack = 0;
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'depth': 512}"), 0);
	ck_assert_uint_eq(p.cfg.depth, 512);
	ck_assert_uint_eq(st.depth_note, 0);
}
END_TEST

START_TEST(test_start_kernel_rate_limit)
{
	/* The kernel refuses a freq above perf_event_max_sample_rate: so does the daemon. */
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'freq': 100000}"), 0);
	BOTH_FAIL(-ERANGE, "{'output': 'fd', 'freq': 100001}",
		  "{'output': 'fd', 'pids': [1], 'freq': 100001}",
		  "event 'cpu-clock': 100001 Hz is above the kernel's limit of 100000 Hz");
	BOTH_FAIL(-ERANGE, "{'output': 'fd', 'events': ['cpu-clock/freq=200000/']}",
		  "{'output': 'fd', 'pids': [1], 'events': ['cpu-clock/freq=200000/']}",
		  "kernel.perf_event_max_sample_rate");
	/* The session freq is checked only against the events that use it. */
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'freq': 200000, "
			       "'events': ['cpu-clock/period=1000000/']}"),
			 0);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'freq': 200000, "
			       "'events': ['cpu-clock/period=1000000/', 'task-clock']}"),
			 -ERANGE);
	ck_assert_err_has("event 'task-clock': 200000 Hz");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'events': ['cpu-clock/period=1000000/', "
			       "'task-clock/freq=100000/']}"),
			 0);
	/* A period is throttled, not refused, by the kernel: an admin may ask for it. */
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'period': 1}"), 0);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'events': ['cpu-clock/period=1/']}"), 0);
	/* Unknown kernel limit: no check. */
	maxrate = 0;
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'freq': 1000000}"), 0);
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'freq': 1000000}"), 0);
}
END_TEST

START_TEST(test_start_user_defaults)
{
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42]}"), 0);
	ck_assert_uint_eq(p.npids, 1);
	ck_assert_int_eq(p.pids[0], 42);
	ck_assert_uint_eq(p.nevents, 1);
	ck_assert_str_eq(p.events[0].name, "cpu-clock");
	ck_assert(st.user_forced);
	ck_assert(p.events[0].exclude_kernel);
	ck_assert(!p.events[0].exclude_user);
	ck_assert(!p.kernel);
	ck_assert(!st.detached);
	ck_assert(!st.ks_want);
	ck_assert_int_eq(p.cfg.callgraph, COLL_CG_FP);
	ck_assert_uint_eq(p.cfg.depth, 127);
	ck_assert_uint_eq(st.depth_note, 0);
	/* The default snapshot (the kernel's largest) is lowered to the user's limit. */
	ck_assert_uint_gt(COLL_STACK_DEFAULT, cfg.user_max_stack_bytes);
	ck_assert_uint_eq(p.cfg.stack_bytes, cfg.user_max_stack_bytes);
	ck_assert_uint_eq(p.cfg.ring_pages, COLL_RING_PAGES_DEFAULT);
	ck_assert_uint_eq(p.cfg.freq, COLL_FREQ_DEFAULT);
	ck_assert_uint_eq(st.ring_bytes, (COLL_RING_PAGES_DEFAULT + 1) * 4096);
	ck_assert_int_eq(p.out_fd, -1);
	ck_assert_int_eq(p.ks_fd, -1);

	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], 'events': ['cpu-clock']}"), 0);
	ck_assert(st.user_forced);
	ck_assert(p.events[0].exclude_kernel);
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], 'events': ['cpu-clock:u']}"), 0);
	ck_assert(!st.user_forced);
	ck_assert(p.events[0].exclude_kernel);
	ck_assert(!p.kernel);
	/* One event without a modifier is enough for the note; every one is forced. */
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], "
			      "'events': ['cpu-clock:u', 'task-clock,instructions']}"),
			 0);
	ck_assert(st.user_forced);
	ck_assert_uint_eq(p.nevents, 3);
	for (size_t i = 0; i < p.nevents; i++)
		ck_assert(p.events[i].exclude_kernel);
	/* An administrator's events are left alone. */
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'pids': [42], 'events': ['cpu-clock']}"), 0);
	ck_assert(!st.user_forced);
	ck_assert(!p.events[0].exclude_kernel);
	ck_assert(p.kernel);
}
END_TEST

START_TEST(test_start_user_targets)
{
	ck_assert_int_eq(USER("{'output': 'fd'}"), -EPERM);
	ck_assert_err_has("system-wide and CPU sessions are for root and members of group "
			  "'hwpmc'; uid 1000");
	ck_assert_int_eq(USER("{'output': 'fd', 'cpus': [0]}"), -EPERM);
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], 'cpus': [0]}"), -EPERM);
	ck_assert_err_has("system-wide and CPU sessions");
	/* The group named is the configured one. */
	snprintf(cfg.admin_group, sizeof(cfg.admin_group), "perfusers");
	ck_assert_int_eq(USER("{'output': 'fd'}"), -EPERM);
	ck_assert_err_has("'perfusers'");
	/* Administrators may do both. */
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'pids': [42], 'cpus': [0]}"), 0);
}
END_TEST

/*
 * A user's own system-wide session: only with a filter naming the user's uid alone,
 * which then carries the owner check (what the user could ptrace) and says so.
 */
START_TEST(test_start_user_all_mine)
{
	ck_assert_int_eq(USER("{'output': 'fd', 'filter': {'uid': [1000]}}"), 0);
	ck_assert(p.filter.on && p.filter.spec.owner_only);
	ck_assert_uint_eq(p.filter.spec.owner, 1000);
	ck_assert_uint_eq(p.filter.spec.owner_gid, 1000);
	ck_assert_str_eq(p.filter.text, "uid=1000 owner=1000:1000");
	ck_assert_uint_eq(p.filter.base_len, strlen(p.filter.text));
	ck_assert(!p.kernel);
	ck_assert(st.user_forced && p.events[0].exclude_kernel);
	/* Other kinds may narrow it; CPUs too. */
	ck_assert_int_eq(USER("{'output': 'fd', 'cpus': [0], 'filter': {'uid': [1000], "
			      "'comm': ['make']}}"), 0);
	ck_assert(p.filter.spec.owner_only);
	/* Never another uid, two uids, no uid, or no filter. */
	ck_assert_int_eq(USER("{'output': 'fd', 'filter': {'uid': [0]}}"), -EPERM);
	ck_assert_err_has("may record all of its own processes with a filter that names its "
			  "uid alone (hwpmc record -u 1000)");
	ck_assert_int_eq(USER("{'output': 'fd', 'filter': {'uid': [1000, 1001]}}"), -EPERM);
	ck_assert_int_eq(USER("{'output': 'fd', 'filter': {'comm': ['make']}}"), -EPERM);
	ck_assert_int_eq(USER("{'output': 'fd', 'filter': {}}"), -EPERM);
	ck_assert_int_eq(USER("{'output': 'state', 'filter': {'uid': [1000]}}"), -EPERM);
	/* A user's per-process session and an administrator's keep their filter as asked. */
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], 'filter': {'uid': [0]}}"), 0);
	ck_assert(!p.filter.spec.owner_only);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'filter': {'uid': [1000]}}"), 0);
	ck_assert(!p.filter.spec.owner_only);
	ck_assert_str_eq(p.filter.text, "uid=1000");
}
END_TEST

START_TEST(test_start_user_events)
{
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], 'events': ['cpu-clock:k']}"),
			 -EACCES);
	ck_assert_err_has("event 'cpu-clock:k' counts kernel mode only");
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], "
			      "'events': ['cpu-clock:u', 'task-clock:k']}"),
			 -EACCES);
	ck_assert_err_has("'task-clock:k'");
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], 'events': ['cpu/cpu-cycles/k']}"),
			 -EACCES);
	ck_assert_err_has("kernel mode only");
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], "
			      "'events': ['tracepoint/config=1/']}"),
			 -EACCES);
	ck_assert_err_has("only software, hardware, cache, raw and CPU-PMU events");
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], "
			      "'events': ['tracepoint/config=1/u']}"),
			 -EACCES);
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], "
			      "'events': ['uncore_imc_0/cas_count_read/']}"),
			 -EACCES);
	ck_assert_err_has("uncore PMUs");
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], "
			      "'events': ['uncore_imc_0/event=0x04,umask=0x03/u']}"),
			 -EACCES);
	/* The CPU's core PMU, generic hardware, cache and raw events are the user's own. */
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], 'events': ['cpu/cpu-cycles/']}"), 0);
	ck_assert(st.user_forced);
	ck_assert(p.events[0].exclude_kernel);
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], "
			      "'events': ['cpu/event=0xc0,umask=0x1/u', 'cpu/instructions/']}"),
			 0);
	ck_assert_uint_eq(p.nevents, 2);
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], 'events': ['cpu/mem-loads/u']}"), 0);
	ck_assert(!st.user_forced);
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [42], "
			      "'events': ['instructions', 'r01c2', 'cycles:u']}"),
			 0);
	ck_assert_uint_eq(p.nevents, 3);
	ck_assert(st.user_forced);
}
END_TEST

START_TEST(test_start_user_freq_limit)
{
	cfg.user_max_freq = 2000;
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'freq': 2000}"), 0);
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1]}"), 0); /* 1000 Hz default */
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'freq': 2001}"), -ERANGE);
	ck_assert_err_has("the sample rate (Hz) = 2001 is above the limit of 2000 for users "
			  "outside group 'hwpmc' (user_max_freq in hwpmcd.conf)");
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], "
			      "'events': ['cpu-clock/freq=3000/']}"),
			 -ERANGE);
	ck_assert_err_has("user_max_freq");
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], "
			      "'events': ['task-clock', 'cpu-clock/freq=3000/']}"),
			 -ERANGE);
	/* An event's own freq replaces the session's. */
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'freq': 100, "
			      "'events': ['cpu-clock/freq=2000/']}"),
			 0);
	/* Clock periods are rates (ns): 100000 ns is 10 kHz. */
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], "
			      "'events': ['cpu-clock/period=100000/']}"),
			 -ERANGE);
	ck_assert_err_has("user_max_freq");
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'period': 100000}"), -ERANGE);
	ck_assert_err_has("= 10000 is above the limit of 2000");
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'period': 100000, "
			      "'events': ['task-clock']}"),
			 -ERANGE);
	/* Rounded up: 499999 ns is just over 2000 Hz, 500000 ns exactly. */
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'period': 499999}"), -ERANGE);
	ck_assert_err_has("= 2001 is above");
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'period': 500000}"), 0);
	ck_assert_uint_eq(p.cfg.period, 500000);
	/* A period of a non-clock event is no rate: allowed. */
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'period': 10, "
			      "'events': ['instructions']}"),
			 0);
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], "
			      "'events': ['cpu/cpu-cycles,period=10/']}"),
			 0);
	/* Administrators are not bound by user_max_freq. */
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'freq': 3000}"), 0);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'events': ['cpu-clock/period=100000/']}"), 0);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'period': 100000}"), 0);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'pids': [1], 'period': 100000}"), 0);

	/* user_max_freq 0: the kernel's limit bounds users' clock periods too. */
	cfg.user_max_freq = 0;
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'period': 100000}"), 0);
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'period': 10000}"), 0);
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'period': 9999}"), -ERANGE);
	ck_assert_err_has("= 100011 is above the limit of 100000");
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'period': 9999}"), 0);
	/* A user limit above the kernel's: the kernel's counts. */
	cfg.user_max_freq = 500000;
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'period': 9999}"), -ERANGE);
	ck_assert_err_has("above the limit of 100000");
	/* No kernel limit known: user_max_freq alone. */
	maxrate = 0;
	cfg.user_max_freq = 2000;
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'freq': 2001}"), -ERANGE);
	ck_assert_err_has("user_max_freq");
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'freq': 2000}"), 0);
}
END_TEST

START_TEST(test_start_user_size_limits)
{
	/* Asked above the limit: refused, the key named. */
	cfg.user_max_depth = 64;
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'depth': 65}"), -ERANGE);
	ck_assert_err_has("'depth' = 65 is above the limit of 64");
	ck_assert_err_has("(user_max_depth in hwpmcd.conf)");
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'depth': 64}"), 0);
	ck_assert_uint_eq(p.cfg.depth, 64);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'depth': 65}"), 0);
	ck_assert_uint_eq(p.cfg.depth, 65);

	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'stack_bytes': 32776}"), -ERANGE);
	ck_assert_err_has("'stack_bytes' = 32776 is above the limit of 32768");
	ck_assert_err_has("user_max_stack_bytes");
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'stack_bytes': 32768}"), 0);
	ck_assert_uint_eq(p.cfg.stack_bytes, 32768);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'stack_bytes': 65528}"), 0);
	/* The type and range are checked first. */
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'stack_bytes': 32780}"), -EINVAL);

	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'ring_pages': 2048}"), -ERANGE);
	ck_assert_err_has("'ring_pages' = 2048 is above the limit of 1024");
	ck_assert_err_has("user_max_ring_pages");
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'ring_pages': 1024}"), 0);
	ck_assert_uint_eq(p.cfg.ring_pages, 1024);
	ck_assert_uint_eq(st.ring_bytes, 1025 * 4096);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'ring_pages': 65536}"), 0);
	ck_assert_uint_eq(st.ring_bytes, (size_t)65537 * 4096);
}
END_TEST

START_TEST(test_start_user_defaults_lowered)
{
	cfg.ring_pages = 4096;
	cfg.user_max_ring_pages = 512;
	cfg.depth = 512;
	cfg.user_max_depth = 100;
	cfg.stack_bytes = 65528;
	cfg.user_max_stack_bytes = 4096;
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1]}"), 0);
	ck_assert_uint_eq(p.cfg.ring_pages, 512);
	ck_assert_uint_eq(p.cfg.depth, 100);
	ck_assert_uint_eq(st.depth_note, 0);
	ck_assert_uint_eq(p.cfg.stack_bytes, 4096);
	ck_assert_uint_eq(st.ring_bytes, 513 * 4096);
	ck_assert_int_eq(ADMIN("{'output': 'fd'}"), 0);
	ck_assert_uint_eq(p.cfg.ring_pages, 4096);
	ck_assert_uint_eq(p.cfg.depth, 127); /* the kernel's cap, silently */
	ck_assert_uint_eq(st.depth_note, 0);
	ck_assert_uint_eq(p.cfg.stack_bytes, 65528);
	ck_assert_uint_eq(st.ring_bytes, 4097 * 4096);
	/* A default below the user limit stays. */
	daemon_config_defaults(&cfg);
	cfg.ring_pages = 8;
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1]}"), 0);
	ck_assert_uint_eq(p.cfg.ring_pages, 8);
}
END_TEST

START_TEST(test_start_dwarf_ring)
{
	/*
	 * dwarf mode: a default ring for about 128 stack snapshots: 2048 pages (8 MiB)
	 * for the default 64 KiB, 1024 (4 MiB) for snapshots up to 32 KiB.
	 */
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'callgraph': 'dwarf'}"), 0);
	ck_assert_uint_eq(p.cfg.ring_pages, 2048);
	ck_assert_uint_eq(st.ring_bytes, 2049 * 4096);
	ck_assert_uint_eq(p.cfg.stack_bytes, COLL_STACK_DEFAULT);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'callgraph': 'dwarf', 'stack_bytes': 32768}"), 0);
	ck_assert_uint_eq(p.cfg.ring_pages, 1024);
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'callgraph': 'dwarf'}"), 0);
	ck_assert_uint_eq(p.cfg.stack_bytes, 32768); /* user_max_stack_bytes */
	ck_assert_uint_eq(p.cfg.ring_pages, 1024); /* user_max_ring_pages 1024 by default */
	cfg.user_max_ring_pages = 512;
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'callgraph': 'dwarf'}"), 0);
	ck_assert_uint_eq(p.cfg.ring_pages, 512);
	ck_assert_uint_eq(st.ring_bytes, 513 * 4096);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'callgraph': 'dwarf'}"), 0);
	ck_assert_uint_eq(p.cfg.ring_pages, 2048);
	/* Asked for: as asked. */
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'callgraph': 'dwarf', 'ring_pages': 8}"), 0);
	ck_assert_uint_eq(p.cfg.ring_pages, 8);
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'callgraph': 'dwarf', "
			      "'ring_pages': 16}"),
			 0);
	ck_assert_uint_eq(p.cfg.ring_pages, 16);
	/* A configured default above that stays. */
	cfg.ring_pages = 4096;
	cfg.user_max_ring_pages = 4096;
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'callgraph': 'dwarf'}"), 0);
	ck_assert_uint_eq(p.cfg.ring_pages, 4096);
	ck_assert_int_eq(USER("{'output': 'fd', 'pids': [1], 'callgraph': 'dwarf'}"), 0);
	ck_assert_uint_eq(p.cfg.ring_pages, 4096);
	/* Other modes keep the configured default. */
	cfg.ring_pages = 64;
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'callgraph': 'none'}"), 0);
	ck_assert_uint_eq(p.cfg.ring_pages, 64);
	ck_assert_int_eq(ADMIN("{'output': 'fd', 'callgraph': 'dwarf'}"), 0);
	ck_assert_uint_eq(p.cfg.ring_pages, 2048);
}
END_TEST

/* ---- daemon_auth_admin ---- */

START_TEST(test_auth_admin)
{
	const gid_t groups[] = { 10, 20, 30 };

	ck_assert(daemon_auth_admin(0, 0, NULL, 0, 100));
	ck_assert(daemon_auth_admin(0, 5, groups, 3, (gid_t)-1));
	ck_assert(daemon_auth_admin(1000, 100, NULL, 0, 100));	 /* primary group */
	ck_assert(daemon_auth_admin(1000, 1000, groups, 3, 20)); /* supplementary */
	ck_assert(daemon_auth_admin(1000, 1000, groups, 3, 30));
	ck_assert(!daemon_auth_admin(1000, 1000, groups, 3, 40));
	ck_assert(!daemon_auth_admin(1000, 1000, groups, 2, 30)); /* only ngroups count */
	ck_assert(!daemon_auth_admin(1000, 1000, NULL, 0, 100));
	/* (gid_t)-1: no admin group, only root, whatever the client's groups say. */
	ck_assert(!daemon_auth_admin(1000, (gid_t)-1, NULL, 0, (gid_t)-1));
	ck_assert(!daemon_auth_admin(1000, 1000, (const gid_t[]){ (gid_t)-1 }, 1, (gid_t)-1));
	ck_assert(!daemon_auth_admin(1000, 0, groups, 3, (gid_t)-1));
	/* gid 0 as the admin group is a group like any other. */
	ck_assert(daemon_auth_admin(1000, 0, NULL, 0, 0));
}
END_TEST

/* ---- daemon_auth_target ---- */

/*
 * One fake /proc for the auth tests (an unchecked fixture, so that it is removed
 * even when a test fails); every test uses pids of its own.
 */
static char procdir[64];
static uid_t tuid; /* the test user: 4321 as root, else our own */
static gid_t tgid;
static bool as_root;

static void proc_setup(void)
{
	snprintf(procdir, sizeof(procdir), "/tmp/test-daemon-ctl.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(procdir));
	as_root = geteuid() == 0;
	tuid = as_root ? 4321 : geteuid();
	tgid = as_root ? 4322 : getegid();
	err[0] = '\0';
}

static void proc_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", procdir);
	ck_assert_int_eq(system(cmd), 0);
}

static void mkdir_p(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", procdir, rel);
	ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s", path);
}

/* Write @rel (under procdir) with @text, owned by @owner (as root only). */
static void write_status(const char *rel, const char *text, uid_t owner)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", procdir, rel);
	unlink(path); /* read-only once written: replace it */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	ck_assert_msg(fd >= 0, "open %s", path);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	if (as_root)
		ck_assert_int_eq(chown(path, owner, tgid), 0);
}

/* A status text with the Uid: and Gid: lines of @u and @g (real, effective, saved, fs). */
static const char *status_text(char *buf, size_t size, const unsigned long u[4],
			       const unsigned long g[4])
{
	snprintf(buf, size,
		 "Name:\tdemo\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t100\n"
		 "Pid:\t100\nPPid:\t1\nTracerPid:\t0\nUid:\t%lu\t%lu\t%lu\t%lu\n"
		 "Gid:\t%lu\t%lu\t%lu\t%lu\nFDSize:\t64\nGroups:\t27 100\n",
		 u[0], u[1], u[2], u[3], g[0], g[1], g[2], g[3]);
	return buf;
}

/* Process @pid with threads @tids[@n] (the first is usually @pid), all with ids @u/@g. */
static void make_proc(pid_t pid, const pid_t *tids, size_t n, const unsigned long u[4],
		      const unsigned long g[4], uid_t owner)
{
	char rel[128], text[512];

	snprintf(rel, sizeof(rel), "%d", (int)pid);
	mkdir_p(rel);
	snprintf(rel, sizeof(rel), "%d/task", (int)pid);
	mkdir_p(rel);
	snprintf(rel, sizeof(rel), "%d/status", (int)pid);
	write_status(rel, status_text(text, sizeof(text), u, g), owner);
	for (size_t i = 0; i < n; i++) {
		snprintf(rel, sizeof(rel), "%d/task/%d", (int)pid, (int)tids[i]);
		mkdir_p(rel);
		snprintf(rel, sizeof(rel), "%d/task/%d/status", (int)pid, (int)tids[i]);
		write_status(rel, status_text(text, sizeof(text), u, g), owner);
	}
}

#define IDS(a, b, c, d) ((const unsigned long[4]){ (a), (b), (c), (d) })
#define MINE		IDS(tuid, tuid, tuid, tuid)
#define MYG		IDS(tgid, tgid, tgid, tgid)

static int target(pid_t pid)
{
	struct daemon_who who = { tuid, tgid, 4242, false };

	strcpy(err, "junk");
	return daemon_auth_target(procdir, &who, pid, err, sizeof(err));
}

START_TEST(test_target_match)
{
	make_proc(100, (pid_t[]){ 100, 101, 102 }, 3, MINE, MYG, tuid);
	ck_assert_int_eq(target(100), 0);
	ck_assert_str_eq(err, "");
	/* The fs ids (the fourth) do not count. */
	make_proc(110, (pid_t[]){ 110 }, 1, IDS(tuid, tuid, tuid, 0), IDS(tgid, tgid, tgid, 0),
		  tuid);
	ck_assert_int_eq(target(110), 0);
	/* Entries of task/ that are not numbers are skipped. */
	mkdir_p("100/task/.hidden");
	mkdir_p("100/task/xyz");
	ck_assert_int_eq(target(100), 0);
}
END_TEST

START_TEST(test_target_uid_differs)
{
	make_proc(200, (pid_t[]){ 200 }, 1, IDS(tuid, 0, tuid, tuid), MYG, tuid);
	ck_assert_int_eq(target(200), -EACCES);
	ck_assert_err_has("process 200 belongs to uid 0");
	ck_assert_err_has("may profile only its own processes");
	make_proc(201, (pid_t[]){ 201 }, 1, IDS(0, tuid, tuid, tuid), MYG, tuid); /* real */
	ck_assert_int_eq(target(201), -EACCES);
	ck_assert_err_has("belongs to uid");
	ck_assert_err_has("(real 0,");
	make_proc(202, (pid_t[]){ 202 }, 1, IDS(tuid, tuid, 0, tuid), MYG, tuid); /* saved */
	ck_assert_int_eq(target(202), -EACCES);
	ck_assert_err_has("belongs to uid");
	ck_assert_err_has("saved 0)");
}
END_TEST

START_TEST(test_target_gid_differs)
{
	make_proc(300, (pid_t[]){ 300 }, 1, MINE, IDS(tgid, 0, tgid, tgid), tuid);
	ck_assert_int_eq(target(300), -EACCES);
	ck_assert_err_has("process 300 runs with gid 0");
	ck_assert_err_has("setgid");
	make_proc(301, (pid_t[]){ 301 }, 1, MINE, IDS(0, tgid, tgid, tgid), tuid);
	ck_assert_int_eq(target(301), -EACCES);
	ck_assert_err_has("gid");
	make_proc(302, (pid_t[]){ 302 }, 1, MINE, IDS(tgid, tgid, 0, tgid), tuid);
	ck_assert_int_eq(target(302), -EACCES);
	ck_assert_err_has("gid");
}
END_TEST

START_TEST(test_target_not_dumpable)
{
	char path[256];

	if (!as_root)
		return; /* needs chown(2) */
	/* Ids match but the status files belong to root: not dumpable. */
	make_proc(400, (pid_t[]){ 400 }, 1, MINE, MYG, 0);
	ck_assert_int_eq(target(400), -EACCES);
	ck_assert_err_has("process 400 is not dumpable");
	/* Only one thread's: the same. */
	make_proc(401, (pid_t[]){ 401, 402 }, 2, MINE, MYG, tuid);
	ck_assert_int_eq(target(401), 0);
	snprintf(path, sizeof(path), "%s/401/task/402/status", procdir);
	ck_assert_int_eq(chown(path, 0, 0), 0);
	ck_assert_int_eq(target(401), -EACCES);
	ck_assert_err_has("not dumpable");
	/* Another owner than root counts too. */
	make_proc(403, (pid_t[]){ 403 }, 1, MINE, MYG, tuid + 1);
	ck_assert_int_eq(target(403), -EACCES);
}
END_TEST

START_TEST(test_target_thread_differs)
{
	char text[512];

	make_proc(500, (pid_t[]){ 500, 501, 502 }, 3, MINE, MYG, tuid);
	ck_assert_int_eq(target(500), 0);
	/* A thread that called setresuid(2) by itself. */
	write_status("500/task/502/status",
		     status_text(text, sizeof(text), IDS(tuid, 0, tuid, tuid), MYG), tuid);
	ck_assert_int_eq(target(500), -EACCES);
	ck_assert_err_has("process 500 belongs to uid 0");
	write_status("500/task/502/status",
		     status_text(text, sizeof(text), MINE, IDS(tgid, tgid, 7, tgid)), tuid);
	ck_assert_int_eq(target(500), -EACCES);
	ck_assert_err_has("gid");
	write_status("500/task/502/status", "Name:\tthread\n", tuid);
	ck_assert_int_eq(target(500), -EACCES);
	ck_assert_err_has("cannot read its credentials");
}
END_TEST

START_TEST(test_target_missing)
{
	char text[512];

	ck_assert_int_eq(target(600), -ESRCH);
	ck_assert_str_eq(err, "process 600 does not exist");
	ck_assert_int_eq(target(0), -ESRCH);
	ck_assert_err_has("does not exist");
	ck_assert_int_eq(target(-1), -ESRCH);
	ck_assert_err_has("process -1 does not exist");
	ck_assert_int_eq(target(-2147483647 - 1), -ESRCH);
	/* A pid dir without status (exited meanwhile). */
	mkdir_p("601");
	ck_assert_int_eq(target(601), -ESRCH);
	ck_assert_str_eq(err, "process 601 does not exist");
	/* Without task/ (as /proc/PID/ of a zombie being reaped). */
	write_status("601/status", status_text(text, sizeof(text), MINE, MYG), tuid);
	ck_assert_int_eq(target(601), -ESRCH);
	ck_assert_err_has("does not exist");
	/* With a task/ whose every thread vanished. */
	mkdir_p("601/task");
	ck_assert_int_eq(target(601), -ESRCH);
	mkdir_p("601/task/601");
	ck_assert_int_eq(target(601), -ESRCH);
	/* The procroot itself missing. */
	{
		struct daemon_who who = { tuid, tgid, 1, false };

		ck_assert_int_eq(daemon_auth_target("/nonexistent/proc", &who, 1, err, sizeof(err)),
				 -ESRCH);
	}
}
END_TEST

START_TEST(test_target_bad_status)
{
	char text[512];

	make_proc(700, (pid_t[]){ 700 }, 1, MINE, MYG, tuid);
	/* No Uid: line. */
	snprintf(text, sizeof(text), "Name:\tdemo\nGid:\t%u\t%u\t%u\t%u\n", (unsigned)tgid,
		 (unsigned)tgid, (unsigned)tgid, (unsigned)tgid);
	write_status("700/status", text, tuid);
	ck_assert_int_eq(target(700), -EACCES);
	ck_assert_str_eq(err, "process 700: cannot read its credentials");
	/* No Gid: line. */
	snprintf(text, sizeof(text), "Name:\tdemo\nUid:\t%u\t%u\t%u\t%u\n", (unsigned)tuid,
		 (unsigned)tuid, (unsigned)tuid, (unsigned)tuid);
	write_status("700/status", text, tuid);
	ck_assert_int_eq(target(700), -EACCES);
	ck_assert_err_has("cannot read its credentials");
	/* A short Uid: line. */
	snprintf(text, sizeof(text), "Uid:\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\n", (unsigned)tuid,
		 (unsigned)tuid, (unsigned)tuid, (unsigned)tgid, (unsigned)tgid, (unsigned)tgid,
		 (unsigned)tgid);
	write_status("700/status", text, tuid);
	ck_assert_int_eq(target(700), -EACCES);
	/* Empty. */
	write_status("700/status", "", tuid);
	ck_assert_int_eq(target(700), -EACCES);
	/* "Uid:" only at the start of a line counts. */
	snprintf(text, sizeof(text), "Name:\tUid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\n",
		 (unsigned)tuid, (unsigned)tuid, (unsigned)tuid, (unsigned)tuid, (unsigned)tgid,
		 (unsigned)tgid, (unsigned)tgid, (unsigned)tgid);
	write_status("700/status", text, tuid);
	ck_assert_int_eq(target(700), -EACCES);
	/* Good again. */
	write_status("700/status", status_text(text, sizeof(text), MINE, MYG), tuid);
	ck_assert_int_eq(target(700), 0);
}
END_TEST

START_TEST(test_target_vanished_thread)
{
	char text[512];

	make_proc(800, (pid_t[]){ 800, 801 }, 2, MINE, MYG, tuid);
	/* A thread that exited between readdir and open: its dir without status. */
	mkdir_p("800/task/802");
	mkdir_p("800/task/799");
	ck_assert_int_eq(target(800), 0);
	ck_assert_str_eq(err, "");
	/* The skipped ones do not hide a bad thread among the rest. */
	write_status("800/task/801/status",
		     status_text(text, sizeof(text), IDS(tuid, tuid, 1, tuid), MYG), tuid);
	ck_assert_int_eq(target(800), -EACCES);
	ck_assert_err_has("belongs to uid");
}
END_TEST

/*
 * daemon_auth_tids: a tid that got a counter but is no longer a thread of its
 * target, while a task of that id exists, was reused (issue 13, item 2).
 */
/*
 * daemon_auth_open_as: the kernel's own check of a user's access, bound to what
 * the fd reads (issue 32, finding 2).  Needs root (to be another uid's file system
 * ids and to make a process of another uid); skipped otherwise.
 */
START_TEST(test_auth_open_as)
{
	struct daemon_who who = { .uid = 65534, .gid = 65534 };
	char path[64], b[16];
	int go[2], ready[2], fd;
	pid_t child;
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	/* Zeroed: valgrind marks only the first of the two words capget(2) fills as written. */
	struct __user_cap_data_struct before[2] = { { 0 } }, after[2] = { { 0 } };

	if (geteuid() != 0)
		return;
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(ready), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		char c;

		if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(1);
		(void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0); /* as after an exec of its own */
		(void)!write(ready[1], "r", 1);
		if (read(go[0], &c, 1) == 1)
			(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		(void)!write(ready[1], "r", 1);
		pause();
		_exit(0);
	}
	ck_assert_int_eq(read(ready[0], b, 1), 1);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)child);
	ck_assert_int_eq(syscall(SYS_capget, &h, before), 0);
	/* The user's own dumpable process: its maps, read through the fd. */
	fd = daemon_auth_open_as(&who, path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_gt(read(fd, b, sizeof(b)), 0);
	close(fd);
	/* Another user's: refused by the kernel. */
	who.uid = 65533;
	ck_assert_int_eq(daemon_auth_open_as(&who, path, O_RDONLY), -EACCES);
	/* The thread is root again, with every capability it had. */
	ck_assert_int_eq((int)syscall(SYS_setfsuid, -1), 0);
	ck_assert_int_eq((int)syscall(SYS_setfsgid, -1), 0);
	h.pid = 0;
	ck_assert_int_eq(syscall(SYS_capget, &h, after), 0);
	ck_assert_mem_eq(before, after, sizeof(before));
	/* Its own process, no longer dumpable (as after a setuid exec): refused. */
	who.uid = 65534;
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	ck_assert_int_eq(read(ready[0], b, 1), 1);
	ck_assert_int_eq(daemon_auth_open_as(&who, path, O_RDONLY), -EACCES);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
}
END_TEST

START_TEST(test_auth_tids)
{
	const pid_t tids[] = { 700, 701, 702 }, owners[] = { 700, 700, 700 };

	mkdir_p("700");
	mkdir_p("700/task");
	mkdir_p("700/task/700");
	mkdir_p("700/task/701");
	/* 702 exited and no task has its id: a dead counter, fine. */
	ck_assert_int_eq(daemon_auth_tids(procdir, tids, owners, NULL, 3, err, sizeof(err)), 0);
	/* 702 now names another task (a process of its own): refused. */
	mkdir_p("702");
	ck_assert_int_eq(daemon_auth_tids(procdir, tids, owners, NULL, 3, err, sizeof(err)), -EAGAIN);
	ck_assert_err_has("thread 702 of process 700 exited during the start");
	/* Still a thread of its process: fine, whatever else exists. */
	mkdir_p("700/task/702");
	ck_assert_int_eq(daemon_auth_tids(procdir, tids, owners, NULL, 3, err, sizeof(err)), 0);
	ck_assert_int_eq(daemon_auth_tids(procdir, tids, owners, NULL, 0, err, sizeof(err)), 0);
	/* The real /proc: our own thread. */
	{
		pid_t me = getpid();

		ck_assert_int_eq(daemon_auth_tids("/proc", &me, &me, NULL, 1, err, sizeof(err)), 0);
	}
	/*
	 * The pidfds: 702 is a thread of 700 again, but its pidfd's task has exited
	 * since before the counters were opened (a second reuse of the id): refused.
	 * A pidfd whose task lives, or none (-1), passes.
	 */
	{
		int pidfds[3] = { -1, -1, -1 }, status, e;
		pid_t child = fork();

		ck_assert_int_ge(child, 0);
		if (child == 0)
			_exit(0);

		pidfds[2] = (int)syscall(SYS_pidfd_open, child, 0);
		e = errno;
		ck_assert_int_eq(waitpid(child, &status, 0), child);
		if (pidfds[2] < 0 && e == ENOSYS)
			return; /* valgrind 3.19 has no pidfd_open: the daemon passes -1s then */
		ck_assert_int_ge(pidfds[2], 0);
		pidfds[0] = (int)syscall(SYS_pidfd_open, getpid(), 0);
		ck_assert_int_ge(pidfds[0], 0);
		ck_assert_int_eq(daemon_auth_tids(procdir, tids, owners, pidfds, 3, err, sizeof(err)),
				 -EAGAIN);
		ck_assert_err_has("thread 702 of process 700 exited during the start");
		close(pidfds[2]);
		pidfds[2] = -1;
		ck_assert_int_eq(daemon_auth_tids(procdir, tids, owners, pidfds, 3, err, sizeof(err)),
				 0);
		close(pidfds[0]);
	}
}
END_TEST

START_TEST(test_target_real_proc)
{
	struct daemon_who me = { getuid(), getgid(), getpid(), false };
	struct daemon_who other = { 12345, 12345, getpid(), false };

	/* Ourselves, as ourselves (as root: uid 0, files owned by root). */
	if (getuid() == geteuid() && getgid() == getegid()) {
		ck_assert_msg(daemon_auth_target("/proc", &me, getpid(), err, sizeof(err)) == 0,
			      "%s", err);
		ck_assert_str_eq(err, "");
	}
	ck_assert_int_eq(daemon_auth_target("/proc", &other, getpid(), err, sizeof(err)), -EACCES);
	ck_assert_err_has("belongs to uid");
	/* init is not uid 12345's. */
	ck_assert_int_eq(daemon_auth_target("/proc", &other, 1, err, sizeof(err)), -EACCES);
	/* A pid beyond pid_max. */
	ck_assert_int_eq(daemon_auth_target("/proc", &me, 2147483647, err, sizeof(err)), -ESRCH);
	ck_assert_err_has("does not exist");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("daemon-ctl");
	TCase *tr = tcase_create("request");
	TCase *ts = tcase_create("start");
	TCase *ta = tcase_create("auth");
	SRunner *sr;
	int failed;

	/* Events are parsed against the fake sysfs tree (cpu, software, tracepoint, uncore). */
	setenv("HWPMCD_SYSFS_ROOT", TEST_DATA_DIR "/sysfs/intel", 1);

	tcase_add_test(tr, test_request_good);
	tcase_add_test(tr, test_request_not_json);
	tcase_add_test(tr, test_request_bad_shape);
	tcase_add_test(tr, test_request_duplicates_and_args);
	tcase_add_test(tr, test_request_free_twice);
	suite_add_tcase(s, tr);

	tcase_set_timeout(ts, 60);
	tcase_add_checked_fixture(ts, start_setup, NULL);
	tcase_add_test(ts, test_start_defaults_admin);
	tcase_add_test(ts, test_start_not_object_unknown_field);
	tcase_add_test(ts, test_start_output);
	tcase_add_test(ts, test_start_kallsyms);
	tcase_add_test(ts, test_start_jit_maps);
	tcase_add_test(ts, test_start_events);
	tcase_add_test(ts, test_start_callgraph);
	tcase_add_test(ts, test_start_cpus_pids);
	tcase_add_test(ts, test_start_command);
	tcase_add_test(ts, test_start_filter);
	tcase_add_test(ts, test_start_integers);
	tcase_add_test(ts, test_start_depth_cap);
	tcase_add_test(ts, test_start_kernel_rate_limit);
	tcase_add_test(ts, test_start_user_defaults);
	tcase_add_test(ts, test_start_user_targets);
	tcase_add_test(ts, test_start_user_all_mine);
	tcase_add_test(ts, test_start_user_events);
	tcase_add_test(ts, test_start_user_freq_limit);
	tcase_add_test(ts, test_start_user_size_limits);
	tcase_add_test(ts, test_start_user_defaults_lowered);
	tcase_add_test(ts, test_start_dwarf_ring);
	suite_add_tcase(s, ts);

	tcase_add_unchecked_fixture(ta, proc_setup, proc_teardown);
	tcase_add_test(ta, test_auth_admin);
	tcase_add_test(ta, test_target_match);
	tcase_add_test(ta, test_target_uid_differs);
	tcase_add_test(ta, test_target_gid_differs);
	tcase_add_test(ta, test_target_not_dumpable);
	tcase_add_test(ta, test_target_thread_differs);
	tcase_add_test(ta, test_target_missing);
	tcase_add_test(ta, test_target_bad_status);
	tcase_add_test(ta, test_target_vanished_thread);
	tcase_add_test(ta, test_target_real_proc);
	tcase_add_test(ta, test_auth_tids);
	tcase_add_test(ta, test_auth_open_as);
	suite_add_tcase(s, ta);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
