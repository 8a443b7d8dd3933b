/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz-event.c: libFuzzer harness for the event-spec parser: the input (up to
 * its first NUL) is one -e argument for coll_event_parse_list(), looked up in
 * the fake sysfs trees FUZZ_SYSFS_DIR/intel and FUZZ_SYSFS_DIR/amd, and a
 * hostile one built in /tmp at start (after tests/unit/test-collector-event.c's:
 * malformed, over-long, binary, FIFO and directory format, alias and type
 * files; aliases naming aliases; types out of range).
 *
 * IMPLEMENTATION NOTES
 *   Beyond "no crash, no sanitizer report, no leak", these abort on failure,
 *   for each tree:
 *   1. A success appends 1..COLL_EVENT_MAX specs, returns their number and
 *      touches nothing past them; each has a name of 1..63 printable characters
 *      without '/' or white space, NUL-terminated, not both :u and :k, a period
 *      or a freq (not both) in 1..2^63-1 when given, and needs_hw_pmu unless it
 *      is a software, tracepoint or breakpoint event.
 *   2. A failure is a negative errno with *n and the specs untouched and a
 *      non-empty, NUL-terminated message inside its buffer.
 *   3. The same list gives the same result again, with no error buffer, and
 *      with a short one (a NUL-terminated prefix of the message, nothing
 *      written past it).
 *   4. All or nothing: appended after its own result the list succeeds again
 *      with the same specs exactly when both fit, and fails with -E2BIG and
 *      nothing changed otherwise.
 *   5. The list is its elements: splitting it at the commas outside slashes
 *      and parsing each with coll_event_parse() gives the same specs.
 *   6. Without a '/' no sysfs tree is consulted for a success: both trees give
 *      the same specs.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hwpmcd/collector-event.h"
#include "hwpmcd/log.h"

#define ERRLEN 1024
#define CANARY 0xa5
#define NSPECS (2 * COLL_EVENT_MAX + 1)
#define EV_BIG 4097 /* one byte over what the parser reads of a sysfs file */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                       \
	do {                                                                              \
		if (!(cond)) {                                                            \
			fprintf(stderr, "fuzz-event: invariant failed at line %d: %s\n",  \
				__LINE__, #cond);                                         \
			abort();                                                          \
		}                                                                         \
	} while (0)

#define NTREES 3

static const char *trees[NTREES] = { FUZZ_SYSFS_DIR "/intel", FUZZ_SYSFS_DIR "/amd", NULL };
static char hostile[64];

/* The hostile tree's files: PMU "p" (type 8) with malformed format and alias files. */
static const char *const hostile_files[][2] = {
	{ "p/type", "8\n" },
	{ "p/format/event", "config:0-7\n" },
	{ "p/format/umask", "config:8-15\n" },
	{ "p/format/split", "config1:0-3,8-11,60-63\n" },
	{ "p/format/e2", "config2:0-63\n" },
	{ "p/format/bit", "config:63\n" },
	{ "p/format/reg", "config3:0-7\n" },
	{ "p/format/nobits", "config:\n" },
	{ "p/format/down", "config:8-3\n" },
	{ "p/format/high", "config:64\n" },
	{ "p/format/overlap", "config:0-7,4-9\n" },
	{ "p/format/junk", "config:1x\n" },
	{ "p/format/nocolon", "nocolon\n" },
	{ "p/format/ctl", "config:0-7\x1b[2J\n" },
	{ "p/format/two", "config:0-7\nconfig:8-15\n" },
	{ "p/format/huge", "config:1234567-3\n" },
	{ "p/events/good", " event = 0x1 , umask=0x2 \n" },
	{ "p/events/withperiod", "event=0x3,period=1000\n" },
	{ "p/events/withfreq", "freq=10,split=0xfff\n" },
	{ "p/events/unknown", "event=1,bogus=2\n" },
	{ "p/events/nested", "good\n" },
	{ "p/events/empty", "\n" },
	{ "p/events/emptyterm", "event=1,,umask=1\n" },
	{ "p/events/novalue", "event=\n" },
	{ "p/events/badvalue", "event=zz\n" },
	{ "p/events/wide", "event=0x100\n" },
	{ "p/events/badname", "ev/nt=1\n" },
	{ "p/events/binary", "event=\xff\n" },
	{ "p/events/cfg", "config=0xffffffffffffffff,config1=1,config2=2\n" },
	{ "p/events/good.scale", "2.5\n" },
	{ "notype/format/event", "config:0-7\n" },
	{ "badtype/type", "four\n" },
	{ "widetype/type", "4294967296\n" },
	{ "maxtype/type", "4294967295\n" },
	{ "breakpoint/type", "5\n" },
	{ "breakpoint/format/event", "config:0-63\n" },
	{ "not-a-dir", "x\n" },
};

static void put(const char *rel, const char *text, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s", hostile, rel);
	for (char *p = path + strlen(hostile) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			abort();
		*p = '/';
	}
	f = fopen(path, "w");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0)
		abort();
}

static void remove_hostile(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", hostile);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz-event: cannot remove %s\n", hostile);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char big[EV_BIG];
	char path[256];

	(void)argc;
	(void)argv;
	log_open("fuzz-event", LOG_TARGET_PLAIN);
	log_set_level(LOG_PRIO_ERR - 1);
	snprintf(hostile, sizeof(hostile), "/tmp/fuzz-event.XXXXXX");
	if (!mkdtemp(hostile))
		abort();
	atexit(remove_hostile);
	for (size_t i = 0; i < sizeof(hostile_files) / sizeof(hostile_files[0]); i++)
		put(hostile_files[i][0], hostile_files[i][1], strlen(hostile_files[i][1]));
	/* One byte over what is read of a file, a FIFO and a directory where files go. */
	memset(big, 'a', sizeof(big));
	memcpy(big, "event=1,", 8);
	put("p/events/toolong", big, sizeof(big));
	memcpy(big, "config:0-7", 10);
	put("p/format/toolong", big, sizeof(big));
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/p/format/fifo", hostile);
	if (mkfifo(path, 0644) < 0)
		abort();
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/p/events/efifo", hostile);
	if (mkfifo(path, 0644) < 0)
		abort();
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/p/format/dir", hostile);
	if (mkdir(path, 0755) < 0)
		abort();
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/fifotype", hostile);
	if (mkdir(path, 0755) < 0)
		abort();
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/fifotype/type", hostile);
	if (mkfifo(path, 0644) < 0)
		abort();
	trees[2] = hostile;
	return 0;
}

static bool same_spec(const struct coll_event_spec *a, const struct coll_event_spec *b)
{
	return strcmp(a->name, b->name) == 0 && a->type == b->type && a->config == b->config &&
	       a->config1 == b->config1 && a->config2 == b->config2 &&
	       a->exclude_user == b->exclude_user && a->exclude_kernel == b->exclude_kernel &&
	       a->has_period == b->has_period && a->period == b->period &&
	       a->has_freq == b->has_freq && a->freq == b->freq &&
	       a->needs_hw_pmu == b->needs_hw_pmu;
}

static void check_spec(const struct coll_event_spec *e)
{
	const char *nul = memchr(e->name, '\0', sizeof(e->name));

	CHECK(nul && nul > e->name && nul - e->name <= 63);
	for (const char *c = e->name; c < nul; c++)
		CHECK(*c > ' ' && *c <= '~' && *c != '/');
	CHECK(!(e->exclude_user && e->exclude_kernel));
	CHECK(!(e->has_period && e->has_freq));
	if (e->has_period)
		CHECK(e->period >= 1 && e->period <= INT64_MAX);
	else
		CHECK(e->period == 0);
	if (e->has_freq)
		CHECK(e->freq >= 1 && e->freq <= INT64_MAX);
	else
		CHECK(e->freq == 0);
	/* The fake trees: software is type 1, tracepoint 2, like the kernel's. */
	CHECK(e->needs_hw_pmu == (e->type != PERF_TYPE_SOFTWARE && e->type != PERF_TYPE_TRACEPOINT &&
				  e->type != PERF_TYPE_BREAKPOINT));
}

static void check_err(const char *err, size_t errlen, size_t bufsize)
{
	CHECK(memchr(err, '\0', errlen) != NULL);
	CHECK(err[0] != '\0');
	for (size_t i = errlen; i < bufsize; i++)
		CHECK((uint8_t)err[i] == CANARY);
}

static bool untouched(const struct coll_event_spec *s, size_t from, size_t to)
{
	const uint8_t *b = (const uint8_t *)(s + from);

	for (size_t i = 0; i < (to - from) * sizeof(*s); i++)
		if (b[i] != CANARY)
			return false;
	return true;
}

/* Check 5: the elements one by one, split as the list parser documents. */
static void check_elements(const char *list, const char *root, const struct coll_event_spec *specs,
			   size_t n)
{
	static char elem[COLL_EVENT_SPEC_MAX + 2];
	struct coll_event_spec one;
	const char *from = list, *p;
	bool in_slash = false;
	size_t i = 0;

	for (p = list;; p++) {
		if (*p == '/') {
			in_slash = !in_slash;
		} else if (*p == '\0' || (*p == ',' && !in_slash)) {
			size_t len = (size_t)(p - from);

			CHECK(len < sizeof(elem) - 1);
			memcpy(elem, from, len);
			elem[len] = '\0';
			CHECK(i < n);
			CHECK(coll_event_parse(elem, root, &one, NULL, 0) == 0);
			CHECK(same_spec(&one, &specs[i]));
			i++;
			from = p + 1;
		}
		if (*p == '\0')
			break;
	}
	CHECK(i == n);
}

static int run(const char *list, const char *root, struct coll_event_spec *specs)
{
	static struct coll_event_spec again[NSPECS];
	static char err[ERRLEN + 16], err2[ERRLEN + 16];
	size_t n = 0, n2 = 0, shortlen;
	int r, r2;

	memset(specs, CANARY, NSPECS * sizeof(*specs));
	memset(err, CANARY, sizeof(err));
	r = coll_event_parse_list(list, root, specs, COLL_EVENT_MAX, &n, err, ERRLEN);
	CHECK(r != 0);
	if (r > 0) {
		CHECK((size_t)r == n && n <= COLL_EVENT_MAX);
		CHECK(memchr(err, '\0', ERRLEN) != NULL);
		for (size_t i = 0; i < n; i++)
			check_spec(&specs[i]);
		CHECK(untouched(specs, n, NSPECS));
	} else {
		CHECK(n == 0);
		CHECK(untouched(specs, 0, NSPECS));
		check_err(err, ERRLEN, sizeof(err));
	}

	/* Deterministic; the message is the same in a short buffer, cut. */
	memset(again, CANARY, sizeof(again));
	r2 = coll_event_parse_list(list, root, again, COLL_EVENT_MAX, &n2, NULL, 0);
	CHECK(r2 == r && n2 == n);
	for (size_t i = 0; i < n; i++)
		CHECK(same_spec(&again[i], &specs[i]));
	shortlen = strlen(list) % 48;
	memset(err2, CANARY, sizeof(err2));
	n2 = 0;
	r2 = coll_event_parse_list(list, root, again, COLL_EVENT_MAX, &n2, err2, shortlen);
	CHECK(r2 == r && n2 == n);
	for (size_t i = shortlen; i < sizeof(err2); i++)
		CHECK((uint8_t)err2[i] == CANARY);
	if (shortlen) {
		CHECK(memchr(err2, '\0', shortlen) != NULL);
		if (r < 0)
			CHECK(strncmp(err2, err, strlen(err2)) == 0);
	}
	if (r < 0)
		return r;

	/* All or nothing, appending after the first result. */
	n2 = n;
	memset(err2, CANARY, sizeof(err2));
	r2 = coll_event_parse_list(list, root, specs, COLL_EVENT_MAX, &n2, err2, ERRLEN);
	if (2 * n <= COLL_EVENT_MAX) {
		CHECK(r2 == r && n2 == 2 * n);
		for (size_t i = 0; i < n; i++)
			CHECK(same_spec(&specs[n + i], &specs[i]));
		CHECK(untouched(specs, 2 * n, NSPECS));
	} else {
		CHECK(r2 == -E2BIG && n2 == n);
		CHECK(untouched(specs, n, NSPECS));
		check_err(err2, ERRLEN, sizeof(err2));
	}
	/* More already given than max: refused. */
	n2 = 3;
	CHECK(coll_event_parse_list(list, root, again, 2, &n2, NULL, 0) == -EINVAL && n2 == 3);

	check_elements(list, root, specs, n);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct coll_event_spec specs[NTREES][NSPECS];
	char *list = malloc(size + 1);
	int r[NTREES];

	if (!list)
		abort();
	memcpy(list, data, size);
	list[size] = '\0';
	for (size_t t = 0; t < NTREES; t++)
		r[t] = run(list, trees[t], specs[t]);
	for (size_t t = 1; t < NTREES && !strchr(list, '/'); t++) {
		CHECK((r[0] > 0) == (r[t] > 0));
		if (r[0] <= 0)
			continue;
		CHECK(r[t] == r[0]);
		for (int i = 0; i < r[0]; i++)
			CHECK(same_spec(&specs[0][i], &specs[t][i]));
	}
	free(list);
	return 0;
}
