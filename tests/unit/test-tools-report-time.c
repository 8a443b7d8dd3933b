/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tools-report-time.c: Check suite for src/tools/tools-report-time.c, the
 * times `hwpmc report --since/--until` accept and the UTC form it prints.
 *
 * "Now" is a fixed argument and TZ is set (UTC, then a zone with an offset and
 * daylight saving time), so nothing depends on the machine's clock or zone.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hwpmcd/log.h"
#include "tools-report.h"

#define S 1000000000ll
/* 2026-12-05T20:15:00Z */
#define T0 (1796501700ll * S)

static void set_tz(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

static struct tools_rep_time parse_ok(const char *s, int64_t now)
{
	struct tools_rep_time t;
	int e = tools_report_parse_time(s, now, &t);

	ck_assert_msg(e == 0, "'%s': %d", s, e);
	return t;
}

static int64_t wall_ok(const char *s, int64_t now)
{
	struct tools_rep_time t = parse_ok(s, now);

	ck_assert_msg(t.kind == TOOLS_REP_TIME_WALL, "'%s': kind %d", s, (int)t.kind);
	return t.wall_ns;
}

START_TEST(test_epoch_constant)
{
	struct tm tm = { .tm_year = 126, .tm_mon = 11, .tm_mday = 5, .tm_hour = 20, .tm_min = 15 };

	ck_assert_int_eq((int64_t)timegm(&tm) * S, T0);
}
END_TEST

START_TEST(test_plain_seconds)
{
	struct tools_rep_time t = parse_ok("1.5", T0);

	ck_assert_int_eq(t.kind, TOOLS_REP_TIME_LOG);
	ck_assert_double_eq(t.log_s, 1.5);
	t = parse_ok("0", T0);
	ck_assert_int_eq(t.kind, TOOLS_REP_TIME_LOG);
	ck_assert_double_eq(t.log_s, 0);
	t = parse_ok("3600", T0);
	ck_assert_double_eq(t.log_s, 3600);
}
END_TEST

START_TEST(test_relative)
{
	ck_assert_int_eq(wall_ok("-30s", T0), T0 - 30 * S);
	ck_assert_int_eq(wall_ok("-30sec", T0), T0 - 30 * S);
	ck_assert_int_eq(wall_ok("-15m", T0), T0 - 15 * 60 * S);
	ck_assert_int_eq(wall_ok("-10min", T0), T0 - 10 * 60 * S);
	ck_assert_int_eq(wall_ok("-2h", T0), T0 - 2 * 3600 * S);
	ck_assert_int_eq(wall_ok("-1d", T0), T0 - 86400 * S);
	ck_assert_int_eq(wall_ok("-1.5h", T0), T0 - 5400 * S);
	ck_assert_int_eq(wall_ok("-0s", T0), T0);
}
END_TEST

START_TEST(test_absolute_utc)
{
	set_tz("UTC");
	ck_assert_int_eq(wall_ok("2026-12-05T20:15:00Z", 0), T0);
	ck_assert_int_eq(wall_ok("2026-12-05T20:15Z", 0), T0);
	ck_assert_int_eq(wall_ok("2026-12-05T20:15:07Z", 0), T0 + 7 * S);
	/* Without Z: local time, here UTC. */
	ck_assert_int_eq(wall_ok("2026-12-05 20:15:00", 0), T0);
	ck_assert_int_eq(wall_ok("2026-12-05 20:15", 0), T0);
	ck_assert_int_eq(wall_ok("2026-12-05T20:15", 0), T0);
	/* A time of today: the date of "now". */
	ck_assert_int_eq(wall_ok("20:15", T0 + 3 * 3600 * S), T0);
	ck_assert_int_eq(wall_ok("08:00:30", T0), T0 - (12 * 3600 + 15 * 60 - 30) * S);
}
END_TEST

START_TEST(test_absolute_local)
{
	/* Central Europe: UTC+1 in December, UTC+2 in July. */
	set_tz("CET-1CEST,M3.5.0,M10.5.0/3");
	ck_assert_int_eq(wall_ok("2026-12-05 21:15:00", 0), T0);
	ck_assert_int_eq(wall_ok("2026-12-05T20:15:00Z", 0), T0);
	ck_assert_int_eq(wall_ok("21:15", T0), T0);
	ck_assert_int_eq(wall_ok("2026-07-01 02:00", 0), wall_ok("2026-07-01T00:00Z", 0));
	set_tz("UTC");
}
END_TEST

START_TEST(test_bad)
{
	static const char *const bad[] = {
		"",
		"abc",
		"-5", /* a relative time needs a unit */
		"-10",
		"-min",
		"--5m",
		"-5 m",
		"-5x",
		"-5mins",
		"-infh",
		"-nanm",
		"1.5s", /* plain seconds take no unit */
		"+5",
		"inf",
		"nan",
		"1e999",
		" 1",
		"2026-12-05", /* a date needs a time */
		"2026-12-05T",
		"2026-12-05T20",
		"2026-13-05T20:15Z",
		"2026-12-32T20:15Z",
		"2026-02-31T20:15Z", /* normalised into March: refused */
		"2026-12-05T24:00Z",
		"2026-12-05T20:60Z",
		"2026-12-05T20:15:61Z",
		"2026-12-05X20:15",
		"2026-12-05T20:15:00ZZ",
		"2026-12-05T20:15:00+02:00",
		"1969-12-31T23:59Z",
		"20:15Z", /* Z needs a date */
		"2:15",
		"20:5",
		"25:00",
		"20:15:",
		"20:15 ",
		"x20:15",
	};

	set_tz("UTC");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tools_rep_time t = { .kind = TOOLS_REP_TIME_MAX };
		int e = tools_report_parse_time(bad[i], T0, &t);

		ck_assert_msg(e == -EINVAL, "'%s' accepted (%d)", bad[i], e);
		ck_assert_msg(t.kind == TOOLS_REP_TIME_MAX, "'%s': result written on failure",
			      bad[i]);
	}
	ck_assert_int_eq(tools_report_parse_time(NULL, T0, &(struct tools_rep_time){ 0 }), -EINVAL);
}
END_TEST

START_TEST(test_before_epoch)
{
	struct tools_rep_time t;

	ck_assert_int_eq(tools_report_parse_time("-1d", 3600 * S, &t), -ERANGE);
	ck_assert_int_eq(tools_report_parse_time("-100000000d", T0, &t), -ERANGE);
	ck_assert_int_eq(wall_ok("-1h", 3600 * S), 0);
}
END_TEST

START_TEST(test_format)
{
	char b[40];

	tools_report_format_time(T0, b, sizeof(b));
	ck_assert_str_eq(b, "2026-12-05T20:15:00.000Z");
	tools_report_format_time(T0 + 1234567890, b, sizeof(b));
	ck_assert_str_eq(b, "2026-12-05T20:15:01.234Z");
	tools_report_format_time(0, b, sizeof(b));
	ck_assert_str_eq(b, "1970-01-01T00:00:00.000Z");
	tools_report_format_time(-1, b, sizeof(b));
	ck_assert_str_eq(b, "1969-12-31T23:59:59.999Z");
	tools_report_format_time(T0, b, 8); /* truncated, still terminated */
	ck_assert_str_eq(b, "2026-12");
}
END_TEST

static void log_hook(int prio, const char *msg, void *userdata)
{
	(void)userdata;
	if (prio <= LOG_PRIO_ERR) {
		fprintf(stderr, "unexpected error message: %s\n", msg);
		abort();
	}
}

static Suite *time_suite(void)
{
	Suite *s = suite_create("tools-report-time");
	TCase *tc;

	tc = tcase_create("parse");
	tcase_add_test(tc, test_epoch_constant);
	tcase_add_test(tc, test_plain_seconds);
	tcase_add_test(tc, test_relative);
	tcase_add_test(tc, test_absolute_utc);
	tcase_add_test(tc, test_absolute_local);
	suite_add_tcase(s, tc);

	tc = tcase_create("bad");
	tcase_add_test(tc, test_bad);
	tcase_add_test(tc, test_before_epoch);
	suite_add_tcase(s, tc);

	tc = tcase_create("format");
	tcase_add_test(tc, test_format);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	log_set_hook(log_hook, NULL);
	set_tz("UTC");
	sr = srunner_create(time_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
