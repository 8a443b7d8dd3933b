/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz-config.c: libFuzzer harness for hwpmcd.conf parsing: the input is the
 * text of a config file, applied by daemon_config_parse() to the defaults.
 *
 * IMPLEMENTATION NOTES
 *   Beyond "no crash, no sanitizer report", these abort on failure:
 *   1. Whatever the input, every field is valid afterwards: the numbers in the
 *      ranges of man/hwpmcd.conf.5 (this file has its own copy of the table),
 *      powers of two and multiples of 8 where the table says so, the mode at
 *      most 0777, socket and state_dir absolute, NUL-terminated and without
 *      '..' components, admin_group a portable group name.
 *   2. The messages: "fuzz.conf:LINE: " each, one per problem (the return
 *      value), joined by '\n', line numbers increasing and within the text.
 *      A short buffer gets a NUL-terminated prefix of the same text and nothing
 *      written past it; no buffer at all the same count.
 *   3. Parsing is deterministic and idempotent: the same text on the defaults
 *      again gives the same struct and messages, and on its own result the same
 *      struct.  A text of only comments and blank lines changes nothing.
 *   4. Round trip: the result written back as "key = value" lines (CRLF ends)
 *      parses on the defaults without a problem into the same settings (not
 *      the same bytes: a string field keeps what a longer earlier value left
 *      after its NUL).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon-ctl.h"

#define NAME "fuzz.conf"
#define CANARY 0xa5

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "fuzz-config: invariant failed at line %d: %s\n",  \
				__LINE__, #cond);                                          \
			abort();                                                           \
		}                                                                          \
	} while (0)

#define OFF(f) offsetof(struct daemon_config, f)

/* The numeric keys, as man/hwpmcd.conf.5 documents them. */
static const struct {
	const char *name;
	size_t off;
	uint32_t lo, hi;
	bool pow2, mult8;
} nums[] = {
	{ "ring_pages", OFF(ring_pages), 1, 65536, true, false },
	{ "depth", OFF(depth), 1, 512, false, false },
	{ "stack_bytes", OFF(stack_bytes), 8, 65528, false, true },
	{ "max_sessions", OFF(max_sessions), 1, 64, false, false },
	{ "unwind_cache_mb", OFF(unwind_cache_mb), 16, 65536, false, false },
	{ "max_clients", OFF(max_clients), 1, 1024, false, false },
	{ "client_idle_timeout", OFF(client_idle_timeout), 0, 86400, false, false },
	{ "max_ring_mb", OFF(max_ring_mb), 1, 1048576, false, false },
	{ "user_max_sessions", OFF(user_max_sessions), 0, 64, false, false },
	{ "user_max_clients", OFF(user_max_clients), 1, 1024, false, false },
	{ "user_max_freq", OFF(user_max_freq), 0, 1000000, false, false },
	{ "user_max_ring_pages", OFF(user_max_ring_pages), 1, 65536, true, false },
	{ "user_max_stack_bytes", OFF(user_max_stack_bytes), 8, 65528, false, true },
	{ "user_max_depth", OFF(user_max_depth), 1, 512, false, false },
};

static uint32_t get(const struct daemon_config *c, size_t off)
{
	uint32_t v;

	memcpy(&v, (const char *)c + off, sizeof(v));
	return v;
}

static void check_path(const char *p, size_t size)
{
	size_t n;

	CHECK(memchr(p, '\0', size) != NULL);
	n = strlen(p);
	CHECK(p[0] == '/');
	CHECK(!strstr(p, "/../"));
	CHECK(!(n >= 3 && strcmp(p + n - 3, "/..") == 0));
}

static void check_valid(const struct daemon_config *c)
{
	size_t n;

	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		uint32_t v = get(c, nums[i].off);

		CHECK(v >= nums[i].lo && v <= nums[i].hi);
		if (nums[i].pow2)
			CHECK(v && !(v & (v - 1)));
		if (nums[i].mult8)
			CHECK(v % 8 == 0);
	}
	CHECK(c->socket_mode <= 0777);
	check_path(c->socket_path, sizeof(c->socket_path));
	check_path(c->state_dir, sizeof(c->state_dir));
	CHECK(memchr(c->admin_group, '\0', sizeof(c->admin_group)) != NULL);
	n = strlen(c->admin_group);
	CHECK(n > 0 && c->admin_group[0] != '-');
	CHECK(strspn(c->admin_group, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				     "0123456789._-") == n);
}

/* The messages: @count lines "fuzz.conf:N: ...", N increasing and at most @lines. */
static void check_messages(const char *err, int count, int lines)
{
	const char *p = err;
	int seen = 0;
	long last = 0;

	if (count == 0) {
		CHECK(err[0] == '\0');
		return;
	}
	while (p) {
		const char *nl = strchr(p, '\n');
		char *end;
		long line;

		CHECK(strncmp(p, NAME ":", strlen(NAME ":")) == 0);
		line = strtol(p + strlen(NAME ":"), &end, 10);
		CHECK(line > last && line <= lines);
		CHECK(end[0] == ':' && end[1] == ' ' && end[2] != '\0' && end[2] != '\n');
		last = line;
		seen++;
		p = nl ? nl + 1 : NULL;
	}
	CHECK(seen == count);
}

/* Lines as the parser counts them: a final line without '\n' counts, "" has none. */
static int count_lines(const uint8_t *d, size_t n)
{
	int lines = 0;

	for (size_t i = 0; i < n; i++)
		lines += d[i] == '\n';
	return lines + (n && d[n - 1] != '\n');
}

/* Only comments and blank lines (as hwpmcd.conf(5) defines them). */
static bool only_comments(const uint8_t *d, size_t size)
{
	size_t pos = 0;

	while (pos < size) {
		const uint8_t *nl = memchr(d + pos, '\n', size - pos);
		size_t n = nl ? (size_t)(nl - (d + pos)) : size - pos, i = 0;

		if (n >= 1024 || memchr(d + pos, '\0', n))
			return false;
		if (n && d[pos + n - 1] == '\r')
			n--;
		while (i < n && (d[pos + i] == ' ' || d[pos + i] == '\t'))
			i++;
		if (i < n && d[pos + i] != '#')
			return false;
		pos += (nl ? (size_t)(nl - (d + pos)) : size - pos) + 1;
	}
	return true;
}

/* The same settings (the bytes after a string's NUL may differ: stale from longer values). */
static bool same_settings(const struct daemon_config *x, const struct daemon_config *y)
{
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (get(x, nums[i].off) != get(y, nums[i].off))
			return false;
	return x->socket_mode == y->socket_mode && !strcmp(x->socket_path, y->socket_path) &&
	       !strcmp(x->state_dir, y->state_dir) && !strcmp(x->admin_group, y->admin_group);
}

static size_t serialize(const struct daemon_config *c, char *buf, size_t size)
{
	size_t n = 0;

	n += (size_t)snprintf(buf + n, size - n, "socket = %s\r\nstate_dir=%s\r\n"
			      "socket_mode\t=\t%o\r\n  admin_group = %s  \r\n", c->socket_path,
			      c->state_dir, c->socket_mode, c->admin_group);
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		n += (size_t)snprintf(buf + n, size - n, "%s = %u\r\n", nums[i].name,
				      get(c, nums[i].off));
	CHECK(n < size);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char err[1 << 20], err2[1 << 20], text[4096];
	char small[80];
	struct daemon_config defaults, a, b, c;
	const char *t = (const char *)data;
	int lines = count_lines(data, size), r, r2;
	size_t errlen = (size_t)lines * 400 + 1, smalllen, n;

	if (errlen > sizeof(err))
		return 0; /* -max_len keeps inputs far below this */
	daemon_config_defaults(&defaults);
	check_valid(&defaults);

	a = defaults;
	r = daemon_config_parse(&a, t, size, NAME, err, errlen);
	CHECK(r >= 0 && r <= lines);
	CHECK(memchr(err, '\0', errlen) != NULL);
	check_messages(err, r, lines);
	check_valid(&a);

	/* Deterministic, with or without room for the messages. */
	b = defaults;
	r2 = daemon_config_parse(&b, t, size, NAME, err2, errlen);
	CHECK(r2 == r && memcmp(&a, &b, sizeof(a)) == 0 && strcmp(err, err2) == 0);
	b = defaults;
	CHECK(daemon_config_parse(&b, t, size, NAME, NULL, 0) == r);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	smalllen = size ? data[0] % 64 : 0;
	memset(small, CANARY, sizeof(small));
	b = defaults;
	CHECK(daemon_config_parse(&b, t, size, NAME, small, smalllen) == r);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	if (smalllen) {
		CHECK(memchr(small, '\0', smalllen) != NULL);
		CHECK(strncmp(small, err, strlen(small)) == 0);
	}
	for (size_t i = smalllen; i < sizeof(small); i++)
		CHECK((uint8_t)small[i] == CANARY);

	/* Idempotent: the text again on its own result changes nothing. */
	b = a;
	CHECK(daemon_config_parse(&b, t, size, NAME, NULL, 0) == r);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);

	if (only_comments(data, size)) {
		CHECK(r == 0);
		CHECK(memcmp(&a, &defaults, sizeof(a)) == 0);
	}

	/* Round trip through the file format. */
	n = serialize(&a, text, sizeof(text));
	c = defaults;
	r2 = daemon_config_parse(&c, text, n, NAME, err2, sizeof(err2));
	if (r2 != 0)
		fprintf(stderr, "round trip: %s\n", err2);
	CHECK(r2 == 0);
	CHECK(same_settings(&a, &c));
	return 0;
}
