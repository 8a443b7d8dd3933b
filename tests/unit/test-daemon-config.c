/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-daemon-config.c: Check suite for src/daemon/daemon-config.c: the
 * defaults, every key with good and bad values, the line rules (comments,
 * blanks, CRLF, white space, NUL bytes, long lines), the "NAME:LINE: "
 * messages and their count, and daemon_config_load() on files.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon-ctl.h"

static char err[8192];

/* Apply @text to @cfg; the number of problems (messages in err). */
static int parse(struct daemon_config *cfg, const char *text)
{
	return daemon_config_parse(cfg, text, strlen(text), "t.conf", err, sizeof(err));
}

static uint32_t field(const struct daemon_config *cfg, size_t off)
{
	uint32_t v;

	memcpy(&v, (const char *)cfg + off, sizeof(v));
	return v;
}

#define OFF(f) offsetof(struct daemon_config, f)

/* What the messages show of a value: control bytes as '?'. */
static void printable(char *dst, size_t size, const char *s)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < size; i++)
		dst[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	dst[i] = '\0';
}

static const struct {
	const char *name;
	size_t off;
	uint32_t lo, hi, good;
	bool pow2, mult8;
} nums[] = {
	{ "ring_pages", OFF(ring_pages), 1, 65536, 512, true, false },
	{ "depth", OFF(depth), 1, 512, 64, false, false },
	{ "stack_bytes", OFF(stack_bytes), 8, 65528, 4096, false, true },
	{ "max_sessions", OFF(max_sessions), 1, 64, 8, false, false },
	{ "unwind_cache_mb", OFF(unwind_cache_mb), 16, 65536, 512, false, false },
	{ "max_clients", OFF(max_clients), 1, 1024, 100, false, false },
	{ "client_idle_timeout", OFF(client_idle_timeout), 0, 86400, 0, false, false },
	{ "max_ring_mb", OFF(max_ring_mb), 1, 1048576, 1000, false, false },
	{ "user_max_sessions", OFF(user_max_sessions), 0, 64, 0, false, false },
	{ "user_max_clients", OFF(user_max_clients), 1, 1024, 3, false, false },
	{ "user_max_freq", OFF(user_max_freq), 0, 1000000, 5000, false, false },
	{ "user_max_ring_pages", OFF(user_max_ring_pages), 1, 65536, 64, true, false },
	{ "user_max_stack_bytes", OFF(user_max_stack_bytes), 8, 65528, 16, false, true },
	{ "user_max_depth", OFF(user_max_depth), 1, 512, 32, false, false },
};

#define NNUMS (sizeof(nums) / sizeof(nums[0]))

START_TEST(test_defaults)
{
	struct daemon_config c;

	memset(&c, 0x5a, sizeof(c));
	daemon_config_defaults(&c);
	ck_assert_str_eq(c.socket_path, "/run/hwpmcd/control");
	ck_assert_str_eq(c.state_dir, "/var/lib/hwpmcd");
	ck_assert_str_eq(c.admin_group, "hwpmc");
	ck_assert_uint_eq(c.socket_mode, 0660);
	ck_assert_uint_eq(c.ring_pages, 256);
	ck_assert_uint_eq(c.depth, 128);
	ck_assert_uint_eq(c.stack_bytes, 65528);
	ck_assert_uint_eq(c.max_sessions, 16);
	ck_assert_uint_eq(c.unwind_cache_mb, 256);
	ck_assert_uint_eq(c.max_clients, 128);
	ck_assert_uint_eq(c.client_idle_timeout, 60);
	ck_assert_uint_eq(c.max_ring_mb, 4096);
	ck_assert_uint_eq(c.user_max_sessions, 4);
	ck_assert_uint_eq(c.user_max_clients, 16);
	ck_assert_uint_eq(c.user_max_freq, 0);
	ck_assert_uint_eq(c.user_max_ring_pages, 1024);
	ck_assert_uint_eq(c.user_max_stack_bytes, 32768);
	ck_assert_uint_eq(c.user_max_depth, 128);
	/* Every default is a value the file could set. */
	for (size_t i = 0; i < NNUMS; i++) {
		uint32_t v = field(&c, nums[i].off);

		ck_assert_uint_ge(v, nums[i].lo);
		ck_assert_uint_le(v, nums[i].hi);
	}
}
END_TEST

START_TEST(test_every_key_good)
{
	struct daemon_config c, d;
	char text[256];

	daemon_config_defaults(&d);
	for (size_t i = 0; i < NNUMS; i++) {
		uint32_t vals[] = { nums[i].lo ? nums[i].lo : 0, nums[i].good, nums[i].hi };

		for (size_t j = 0; j < 3; j++) {
			daemon_config_defaults(&c);
			snprintf(text, sizeof(text), "%s = %u\n", nums[i].name, vals[j]);
			ck_assert_int_eq(parse(&c, text), 0);
			ck_assert_str_eq(err, "");
			ck_assert_uint_eq(field(&c, nums[i].off), vals[j]);
			/* Nothing else changed. */
			memcpy((char *)&c + nums[i].off, (char *)&d + nums[i].off, 4);
			ck_assert_mem_eq(&c, &d, sizeof(c));
		}
	}
	daemon_config_defaults(&c);
	ck_assert_int_eq(parse(&c, "socket = /tmp/h.sock\nstate_dir = /srv/hwpmcd/state\n"
				  "socket_mode = 0600\nadmin_group = perf_users\n"
				  "ring_pages = 0x400\n"),
			 0);
	ck_assert_str_eq(c.socket_path, "/tmp/h.sock");
	ck_assert_str_eq(c.state_dir, "/srv/hwpmcd/state");
	ck_assert_uint_eq(c.socket_mode, 0600);
	ck_assert_str_eq(c.admin_group, "perf_users");
	ck_assert_uint_eq(c.ring_pages, 1024); /* 0x hex is a number too */
}
END_TEST

START_TEST(test_numbers_bad)
{
	struct daemon_config c, d;
	char text[256], want[256];
	const char *junk[] = { "abc", "", "-1", "+1", "1x", "1 2", "1.5", "0x", "1e3",
			       "18446744073709551616", "4294967297" };

	daemon_config_defaults(&d);
	for (size_t i = 0; i < NNUMS; i++) {
		uint64_t out[] = { (uint64_t)nums[i].hi + 1, nums[i].lo ? nums[i].lo - 1u : 0 };

		for (size_t j = 0; j < (nums[i].lo ? 2u : 1u); j++) {
			daemon_config_defaults(&c);
			snprintf(text, sizeof(text), "%s = %llu", nums[i].name,
				 (unsigned long long)out[j]);
			ck_assert_int_eq(parse(&c, text), 1);
			snprintf(want, sizeof(want), "t.conf:1: %s = '%llu' is not a number in %u..%u",
				 nums[i].name, (unsigned long long)out[j], nums[i].lo, nums[i].hi);
			ck_assert_str_eq(err, want);
			ck_assert_mem_eq(&c, &d, sizeof(c));
		}
		for (size_t j = 0; j < sizeof(junk) / sizeof(junk[0]); j++) {
			daemon_config_defaults(&c);
			snprintf(text, sizeof(text), "%s = %s\n", nums[i].name, junk[j]);
			ck_assert_int_eq(parse(&c, text), 1);
			snprintf(want, sizeof(want), "t.conf:1: %s = '%s' is not a number in %u..%u",
				 nums[i].name, junk[j], nums[i].lo, nums[i].hi);
			ck_assert_str_eq(err, want);
			ck_assert_mem_eq(&c, &d, sizeof(c));
		}
	}
}
END_TEST

START_TEST(test_pow2_mult8)
{
	struct daemon_config c, d;

	daemon_config_defaults(&d);
	c = d;
	ck_assert_int_eq(parse(&c, "ring_pages = 3"), 1);
	ck_assert_str_eq(err, "t.conf:1: ring_pages = 3 is not a power of two");
	ck_assert_int_eq(parse(&c, "user_max_ring_pages = 1000"), 1);
	ck_assert_str_eq(err, "t.conf:1: user_max_ring_pages = 1000 is not a power of two");
	ck_assert_int_eq(parse(&c, "stack_bytes = 12"), 1);
	ck_assert_str_eq(err, "t.conf:1: stack_bytes = 12 is not a multiple of 8");
	ck_assert_int_eq(parse(&c, "user_max_stack_bytes = 65527"), 1);
	ck_assert_str_eq(err, "t.conf:1: user_max_stack_bytes = 65527 is not a multiple of 8");
	ck_assert_mem_eq(&c, &d, sizeof(c));
	ck_assert_int_eq(parse(&c, "ring_pages = 1\nuser_max_ring_pages = 65536\n"
				  "stack_bytes = 8\nuser_max_stack_bytes = 65528\n"),
			 0);
	ck_assert_uint_eq(c.ring_pages, 1);
	ck_assert_uint_eq(c.user_max_ring_pages, 65536);
	ck_assert_uint_eq(c.stack_bytes, 8);
	ck_assert_uint_eq(c.user_max_stack_bytes, 65528);
	/* Other numeric keys take any value in range. */
	ck_assert_int_eq(parse(&c, "depth = 3\nmax_clients = 7\n"), 0);
	ck_assert_uint_eq(c.depth, 3);
	ck_assert_uint_eq(c.max_clients, 7);
}
END_TEST

START_TEST(test_mode)
{
	static const struct {
		const char *v;
		unsigned mode;
	} good[] = { { "0660", 0660 }, { "600", 0600 }, { "0", 0 }, { "0777", 0777 },
		     { "0000", 0 }, { "007", 7 } };
	static const char *const bad[] = { "0778", "01000", "-1", "+1", "-0", "0x1ff", "",
					   "abc", "9", "0o660", "66 0", "777777777777777777777777",
					   "\v0644", "\f0644", "\r0644", "0644x" };
	struct daemon_config c;
	char text[128], want[256], shown[64];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		daemon_config_defaults(&c);
		snprintf(text, sizeof(text), "socket_mode = %s", good[i].v);
		ck_assert_int_eq(parse(&c, text), 0);
		ck_assert_uint_eq(c.socket_mode, good[i].mode);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		daemon_config_defaults(&c);
		snprintf(text, sizeof(text), "socket_mode = %s", bad[i]);
		ck_assert_int_eq(parse(&c, text), 1);
		printable(shown, sizeof(shown), bad[i]);
		snprintf(want, sizeof(want),
			 "t.conf:1: socket_mode = '%s' is not an octal mode (0000..0777)", shown);
		ck_assert_str_eq(err, want);
		ck_assert_uint_eq(c.socket_mode, 0660);
	}
}
END_TEST

START_TEST(test_paths)
{
	static const char *const good[] = { "/", "/a/..b", "/a/b..", "/a/.../b", "/a/./b",
					     "/run/x y", "/a/b/" };
	static const char *const bad[] = { "relative/sock", "./x", "", "/a/../b", "/a/..",
					   "/..", "/../x", "~/x" };
	struct daemon_config c;
	char text[1024], want[1024], longp[600];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		daemon_config_defaults(&c);
		snprintf(text, sizeof(text), "socket = %s\nstate_dir = %s", good[i], good[i]);
		ck_assert_int_eq(parse(&c, text), 0);
		ck_assert_str_eq(c.socket_path, good[i]);
		ck_assert_str_eq(c.state_dir, good[i]);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		daemon_config_defaults(&c);
		snprintf(text, sizeof(text), "socket = %s\nstate_dir = %s", bad[i], bad[i]);
		ck_assert_int_eq(parse(&c, text), 2);
		snprintf(want, sizeof(want),
			 "t.conf:1: socket = '%s' must be an absolute path without '..' of under "
			 "108 bytes\nt.conf:2: state_dir = '%s' must be an absolute path without "
			 "'..' of under 512 bytes",
			 bad[i], bad[i]);
		ck_assert_str_eq(err, want);
		ck_assert_str_eq(c.socket_path, "/run/hwpmcd/control");
		ck_assert_str_eq(c.state_dir, "/var/lib/hwpmcd");
	}
	/* The buffers: 107 and 511 characters fit, one more does not. */
	memset(longp, 'a', sizeof(longp));
	longp[0] = '/';
	daemon_config_defaults(&c);
	snprintf(text, sizeof(text), "socket = %.107s\nstate_dir = %.511s\n", longp, longp);
	ck_assert_int_eq(parse(&c, text), 0);
	ck_assert_uint_eq(strlen(c.socket_path), 107);
	ck_assert_uint_eq(strlen(c.state_dir), 511);
	snprintf(text, sizeof(text), "socket = %.108s\nstate_dir = %.512s\n", longp, longp);
	ck_assert_int_eq(parse(&c, text), 2);
	ck_assert_uint_eq(strlen(c.socket_path), 107);
	ck_assert_uint_eq(strlen(c.state_dir), 511);
	ck_assert_ptr_nonnull(strstr(err, "t.conf:1: socket = '/aaa"));
	ck_assert_ptr_nonnull(strstr(err, "\nt.conf:2: state_dir = '/aaa"));
}
END_TEST

START_TEST(test_groups)
{
	static const char *const good[] = { "wheel", "g.r_o-u9", "A1", "_x", ".x", "9" };
	static const char *const bad[] = { "-bad", "a b", "root;rm", "", "gr\xc3\xbcn", "a:b",
					   "a/b", "$x" };
	struct daemon_config c;
	char text[256], want[256], name[80];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		daemon_config_defaults(&c);
		snprintf(text, sizeof(text), "admin_group = %s\n", good[i]);
		ck_assert_int_eq(parse(&c, text), 0);
		ck_assert_str_eq(c.admin_group, good[i]);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		daemon_config_defaults(&c);
		snprintf(text, sizeof(text), "admin_group = %s\n", bad[i]);
		ck_assert_int_eq(parse(&c, text), 1);
		snprintf(want, sizeof(want), "t.conf:1: admin_group = '%s' is not a group name",
			 bad[i]);
		ck_assert_str_eq(err, want);
		ck_assert_str_eq(c.admin_group, "hwpmc");
	}
	memset(name, 'g', sizeof(name));
	snprintf(text, sizeof(text), "admin_group = %.63s\n", name);
	ck_assert_int_eq(parse(&c, text), 0);
	ck_assert_uint_eq(strlen(c.admin_group), 63);
	snprintf(text, sizeof(text), "admin_group = %.64s\n", name);
	ck_assert_int_eq(parse(&c, text), 1);
	ck_assert_uint_eq(strlen(c.admin_group), 63);
	/* Control characters are shown as '?'. */
	ck_assert_int_eq(parse(&c, "admin_group = a\x01" "b\n"), 1);
	ck_assert_str_eq(err, "t.conf:1: admin_group = 'a?b' is not a group name");
}
END_TEST

START_TEST(test_line_errors)
{
	struct daemon_config c, d;

	daemon_config_defaults(&d);
	c = d;
	ck_assert_int_eq(parse(&c, "bogus = 1"), 1);
	ck_assert_str_eq(err, "t.conf:1: unknown key 'bogus' (see hwpmcd.conf(5))");
	ck_assert_int_eq(parse(&c, "Socket = /x"), 1); /* keys are case-sensitive */
	ck_assert_str_eq(err, "t.conf:1: unknown key 'Socket'; did you mean 'socket'? (see hwpmcd.conf(5))");
	ck_assert_int_eq(parse(&c, "ring pages = 4"), 1);
	ck_assert_str_eq(err, "t.conf:1: unknown key 'ring pages'; did you mean 'ring_pages'? (see hwpmcd.conf(5))");
	ck_assert_int_eq(parse(&c, " = 5"), 1);
	ck_assert_str_eq(err, "t.conf:1: unknown key '' (see hwpmcd.conf(5))");
	ck_assert_int_eq(parse(&c, "b\x07gus = 1"), 1);
	ck_assert_str_eq(err, "t.conf:1: unknown key 'b?gus' (see hwpmcd.conf(5))");
	ck_assert_int_eq(parse(&c, "ring_pages 256"), 1);
	ck_assert_str_eq(err, "t.conf:1: expected 'key = value'");
	ck_assert_int_eq(parse(&c, "\n\njust words\n"), 1);
	ck_assert_str_eq(err, "t.conf:3: expected 'key = value'");
	ck_assert_int_eq(parse(&c, "ring_pages == 4"), 1);
	ck_assert_str_eq(err, "t.conf:1: ring_pages = '= 4' is not a number in 1..65536");
	ck_assert_mem_eq(&c, &d, sizeof(c));
	/* The first '=' splits: a path may hold more. */
	ck_assert_int_eq(parse(&c, "socket = /a=b"), 0);
	ck_assert_str_eq(c.socket_path, "/a=b");
}
END_TEST

START_TEST(test_nul_byte)
{
	static const char text[] = "depth = 2\0\ndepth = 3\n#\0comment\nring_pages = 8\0";
	struct daemon_config c;

	daemon_config_defaults(&c);
	ck_assert_int_eq(daemon_config_parse(&c, text, sizeof(text) - 1, "t.conf", err,
					     sizeof(err)),
			 3);
	ck_assert_str_eq(err, "t.conf:1: a NUL byte in the line\nt.conf:3: a NUL byte in the "
			      "line\nt.conf:4: a NUL byte in the line");
	ck_assert_uint_eq(c.depth, 3);
	ck_assert_uint_eq(c.ring_pages, 256);
}
END_TEST

START_TEST(test_long_line)
{
	struct daemon_config c;
	char *text = malloc(4096);
	size_t n;

	ck_assert_ptr_nonnull(text);
	/* A 2000-byte line is refused, whatever it holds; the next line still counts. */
	n = (size_t)sprintf(text, "depth = ");
	memset(text + n, '1', 2000 - n);
	n = 2000;
	n += (size_t)sprintf(text + n, "\nring_pages = 64\n");
	daemon_config_defaults(&c);
	ck_assert_int_eq(daemon_config_parse(&c, text, n, "t.conf", err, sizeof(err)), 1);
	ck_assert_str_eq(err, "t.conf:1: line longer than 1023 bytes");
	ck_assert_uint_eq(c.depth, 128);
	ck_assert_uint_eq(c.ring_pages, 64);
	/* 1023 bytes are a line (a comment here); 1024 are not. */
	text[0] = '#';
	memset(text + 1, 'x', 1022);
	n = 1023;
	n += (size_t)sprintf(text + n, "\ndepth = 7\n");
	daemon_config_defaults(&c);
	ck_assert_int_eq(daemon_config_parse(&c, text, n, "t.conf", err, sizeof(err)), 0);
	ck_assert_uint_eq(c.depth, 7);
	memset(text + 1, 'x', 1023);
	n = 1024;
	n += (size_t)sprintf(text + n, "\ndepth = 9");
	ck_assert_int_eq(daemon_config_parse(&c, text, n, "t.conf", err, sizeof(err)), 1);
	ck_assert_str_eq(err, "t.conf:1: line longer than 1023 bytes");
	ck_assert_uint_eq(c.depth, 9);
	free(text);
}
END_TEST

START_TEST(test_crlf_comments_whitespace)
{
	struct daemon_config c, d;

	daemon_config_defaults(&d);
	c = d;
	ck_assert_int_eq(parse(&c, "# only comments\n\n   # indented\n\t#\n\r\n \t \n"
				  "#ring_pages = 3\n# bogus line\n"),
			 0);
	ck_assert_str_eq(err, "");
	ck_assert_mem_eq(&c, &d, sizeof(c));
	ck_assert_int_eq(parse(&c, ""), 0);
	ck_assert_mem_eq(&c, &d, sizeof(c));
	ck_assert_int_eq(parse(&c, "depth = 32\r\nring_pages = 128\r\n\r\n# x\r\n"
				  "admin_group = staff\r\nsocket = /run/a\r\n"),
			 0);
	ck_assert_uint_eq(c.depth, 32);
	ck_assert_uint_eq(c.ring_pages, 128);
	ck_assert_str_eq(c.admin_group, "staff");
	ck_assert_str_eq(c.socket_path, "/run/a");
	ck_assert_int_eq(parse(&c, "  depth=64\n\tstack_bytes\t=\t4096\t\nmax_clients   =   9   "),
			 0);
	ck_assert_uint_eq(c.depth, 64);
	ck_assert_uint_eq(c.stack_bytes, 4096);
	ck_assert_uint_eq(c.max_clients, 9);
	/* A '#' after a value is part of it (comments are whole lines). */
	ck_assert_int_eq(parse(&c, "depth = 5 # five"), 1);
	ck_assert_str_eq(err, "t.conf:1: depth = '5 # five' is not a number in 1..512");
	ck_assert_uint_eq(c.depth, 64);
}
END_TEST

START_TEST(test_messages)
{
	struct daemon_config c;
	static const char text[] = "# header\n"
				   "ring_pages = 3\n"
				   "depth = 64\n"
				   "bogus = 1\n"
				   "\n"
				   "socket = rel\n"
				   "no equals here\n"
				   "depth = 1000";
	static const char want[] = "my.conf:2: ring_pages = 3 is not a power of two\n"
				   "my.conf:4: unknown key 'bogus' (see hwpmcd.conf(5))\n"
				   "my.conf:6: socket = 'rel' must be an absolute path without '..' "
				   "of under 108 bytes\n"
				   "my.conf:7: expected 'key = value'\n"
				   "my.conf:8: depth = '1000' is not a number in 1..512";
	char small[24];

	daemon_config_defaults(&c);
	ck_assert_int_eq(daemon_config_parse(&c, text, strlen(text), "my.conf", err, sizeof(err)),
			 5);
	ck_assert_str_eq(err, want);
	ck_assert_uint_eq(c.depth, 64); /* a bad line leaves its key as it was */
	/* A short buffer: the same count, a NUL-terminated prefix. */
	memset(small, 'X', sizeof(small));
	daemon_config_defaults(&c);
	ck_assert_int_eq(daemon_config_parse(&c, text, strlen(text), "my.conf", small, 20), 5);
	ck_assert_uint_eq(strlen(small), 19);
	ck_assert_int_eq(strncmp(small, want, 19), 0);
	ck_assert_int_eq(small[20], 'X');
	/* No buffer. */
	daemon_config_defaults(&c);
	ck_assert_int_eq(daemon_config_parse(&c, text, strlen(text), "my.conf", NULL, 0), 5);
	ck_assert_uint_eq(c.depth, 64);
	/* Only the given length counts. */
	daemon_config_defaults(&c);
	ck_assert_int_eq(daemon_config_parse(&c, "depth = 12bogus", 10, "t.conf", err,
					     sizeof(err)),
			 0);
	ck_assert_uint_eq(c.depth, 12);
}
END_TEST

static char tmpdir[64];

static void write_file(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static void setup_dir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-daemon-config.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_load_missing)
{
	struct daemon_config c, d;
	char path[128], want[256];

	setup_dir();
	daemon_config_defaults(&d);
	c = d;
	snprintf(path, sizeof(path), "%s/none.conf", tmpdir);
	strcpy(err, "junk");
	ck_assert_int_eq(daemon_config_load(&c, path, false, err, sizeof(err)), 0);
	ck_assert_str_eq(err, "");
	ck_assert_mem_eq(&c, &d, sizeof(c));
	ck_assert_int_eq(daemon_config_load(&c, path, true, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "%s: %s", path, strerror(ENOENT));
	ck_assert_str_eq(err, want);
	ck_assert_mem_eq(&c, &d, sizeof(c));
	/* A missing directory on the way is as missing. */
	snprintf(path, sizeof(path), "%s/no/such.conf", tmpdir);
	ck_assert_int_eq(daemon_config_load(&c, path, false, err, sizeof(err)), 0);
	remove_dir();
}
END_TEST

START_TEST(test_load_special)
{
	struct daemon_config c, d;
	char path[128], want[256];
	char *big;

	setup_dir();
	daemon_config_defaults(&d);
	c = d;
	/* A directory: read(2) fails, whether or not it must exist. */
	ck_assert_int_eq(daemon_config_load(&c, tmpdir, false, err, sizeof(err)), -EISDIR);
	snprintf(want, sizeof(want), "%s: %s", tmpdir, strerror(EISDIR));
	ck_assert_str_eq(err, want);
	/* Empty. */
	snprintf(path, sizeof(path), "%s/empty.conf", tmpdir);
	write_file(path, "", 0);
	ck_assert_int_eq(daemon_config_load(&c, path, true, err, sizeof(err)), 0);
	ck_assert_str_eq(err, "");
	ck_assert_mem_eq(&c, &d, sizeof(c));
	/* Exactly 1 MiB of comments is fine; one byte more is -EFBIG. */
	big = malloc((1u << 20) + 1);
	ck_assert_ptr_nonnull(big);
	memset(big, '#', (1u << 20) + 1);
	for (size_t i = 100; i < (1u << 20); i += 100)
		big[i] = '\n';
	big[(1u << 20) - 1] = '\n';
	snprintf(path, sizeof(path), "%s/big.conf", tmpdir);
	write_file(path, big, 1u << 20);
	ck_assert_int_eq(daemon_config_load(&c, path, true, err, sizeof(err)), 0);
	write_file(path, big, (1u << 20) + 1);
	ck_assert_int_eq(daemon_config_load(&c, path, true, err, sizeof(err)), -EFBIG);
	snprintf(want, sizeof(want), "%s: larger than 1048576 bytes", path);
	ck_assert_str_eq(err, want);
	ck_assert_mem_eq(&c, &d, sizeof(c));
	free(big);
	remove_dir();
}
END_TEST

START_TEST(test_load_good_and_bad)
{
	static const char good[] = "# test\nsocket = /tmp/x.sock\nring_pages = 64\n"
				   "user_max_freq = 2000\n";
	static const char bad[] = "depth = 100\ndepth = 0\nbogus\n";
	struct daemon_config c;
	char path[128], want[512];

	setup_dir();
	snprintf(path, sizeof(path), "%s/hwpmcd.conf", tmpdir);
	write_file(path, good, strlen(good));
	daemon_config_defaults(&c);
	ck_assert_int_eq(daemon_config_load(&c, path, true, err, sizeof(err)), 0);
	ck_assert_str_eq(err, "");
	ck_assert_str_eq(c.socket_path, "/tmp/x.sock");
	ck_assert_uint_eq(c.ring_pages, 64);
	ck_assert_uint_eq(c.user_max_freq, 2000);
	write_file(path, bad, strlen(bad));
	ck_assert_int_eq(daemon_config_load(&c, path, false, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: depth = '0' is not a number in 1..512\n"
		 "%s:3: expected 'key = value'", path, path);
	ck_assert_str_eq(err, want);
	ck_assert_uint_eq(c.depth, 100); /* the good lines still apply */
	remove_dir();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("daemon-config");
	TCase *tc = tcase_create("config");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_every_key_good);
	tcase_add_test(tc, test_numbers_bad);
	tcase_add_test(tc, test_pow2_mult8);
	tcase_add_test(tc, test_mode);
	tcase_add_test(tc, test_paths);
	tcase_add_test(tc, test_groups);
	tcase_add_test(tc, test_line_errors);
	tcase_add_test(tc, test_nul_byte);
	tcase_add_test(tc, test_long_line);
	tcase_add_test(tc, test_crlf_comments_whitespace);
	tcase_add_test(tc, test_messages);
	tcase_add_test(tc, test_load_missing);
	tcase_add_test(tc, test_load_special);
	tcase_add_test(tc, test_load_good_and_bad);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
