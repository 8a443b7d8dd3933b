/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-report-time.c: the times `hwpmc report --since/--until` accept, and the
 * UTC ISO-8601 form the report prints times in.
 *
 * PUBLIC INTERFACES
 *   tools_report_parse_time(), tools_report_format_time() (tools-report.h)
 *
 * IMPLEMENTATION NOTES
 *   Three forms: a plain non-negative number is seconds from the start of the
 *   (first) log, as --since/--until always meant; "-N<unit>" is a time before
 *   now by the wall clock; a date and time, or a time of today, is absolute:
 *   UTC with a final 'Z', local time (mktime(), so the TZ rules) without.  The
 *   parser takes "now" as an argument and logs nothing, so that it can be tested
 *   with a fixed clock and the caller words the error once with the option.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools-report.h"

#define NS_PER_S 1000000000ll

/* Parse exactly @n decimal digits at @s into *@ret; false if they are not there. */
static bool digits(const char *s, int n, int *ret)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*ret = v;
	return true;
}

/* "-N<unit>": N (decimals allowed) seconds, minutes, hours or days before @now_ns. */
static int parse_relative(const char *s, int64_t now_ns, int64_t *ret_ns)
{
	static const struct {
		const char *name;
		double seconds;
	} units[] = {
		{ "s", 1 },    { "sec", 1 },	 { "m", 60 },	 { "min", 60 },
		{ "h", 3600 }, { "hour", 3600 }, { "d", 86400 }, { "day", 86400 },
	};
	char *end;
	double x;

	if (s[1] < '0' || s[1] > '9')
		return -EINVAL; /* no sign, blank or "inf" after the '-' */
	errno = 0;
	x = strtod(s + 1, &end);
	if (errno || end == s + 1 || !isfinite(x))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double ns;

		if (strcmp(end, units[i].name) != 0)
			continue;
		ns = x * units[i].seconds * 1e9;
		/* No time before the epoch: a window from 1970 on is everything anyway. */
		if (ns > (double)now_ns)
			return -ERANGE;
		*ret_ns = now_ns - (int64_t)ns;
		return 0;
	}
	return -EINVAL;
}

/*
 * "YYYY-MM-DD[T ]HH:MM[:SS][Z]" or "HH:MM[:SS]" (today): wall-clock ns since the
 * epoch.  Without 'Z' the time is local and a date is needed from @now_ns.
 */
static int parse_absolute(const char *s, int64_t now_ns, int64_t *ret_ns)
{
	struct tm tm;
	time_t now = (time_t)(now_ns / NS_PER_S), t;
	const char *p = s;
	bool utc = false, have_date = false;
	int v;

	memset(&tm, 0, sizeof(tm));
	if (strlen(s) >= 10 && s[4] == '-' && s[7] == '-') {
		if (!digits(s, 4, &v) || v < 1970 || v > 9999)
			return -EINVAL;
		tm.tm_year = v - 1900;
		if (!digits(s + 5, 2, &v) || v < 1 || v > 12)
			return -EINVAL;
		tm.tm_mon = v - 1;
		if (!digits(s + 8, 2, &v) || v < 1 || v > 31)
			return -EINVAL;
		tm.tm_mday = v;
		p = s + 10;
		if (*p != 'T' && *p != ' ')
			return -EINVAL;
		p++;
		have_date = true;
	}
	if (!digits(p, 2, &v) || v > 23 || p[2] != ':')
		return -EINVAL;
	tm.tm_hour = v;
	if (!digits(p + 3, 2, &v) || v > 59)
		return -EINVAL;
	tm.tm_min = v;
	p += 5;
	if (*p == ':') {
		if (!digits(p + 1, 2, &v) || v > 60)
			return -EINVAL;
		tm.tm_sec = v;
		p += 3;
	}
	if (*p == 'Z' && have_date) {
		utc = true;
		p++;
	}
	if (*p)
		return -EINVAL;
	if (!have_date) {
		struct tm today;

		if (!localtime_r(&now, &today))
			return -EINVAL;
		tm.tm_year = today.tm_year;
		tm.tm_mon = today.tm_mon;
		tm.tm_mday = today.tm_mday;
	}
	if (utc) {
		int mday = tm.tm_mday;

		t = timegm(&tm);
		if (tm.tm_mday != mday) /* 2026-02-31 normalised into March */
			return -EINVAL;
	} else {
		int mday = tm.tm_mday;

		tm.tm_isdst = -1;
		t = mktime(&tm);
		if (t == (time_t)-1 || tm.tm_mday != mday)
			return -EINVAL;
	}
	if (t < 0)
		return -EINVAL;
	*ret_ns = (int64_t)t * NS_PER_S;
	return 0;
}

int tools_report_parse_time(const char *s, int64_t now_ns, struct tools_rep_time *ret)
{
	struct tools_rep_time t = { .kind = TOOLS_REP_TIME_NONE };
	int e;

	if (!s || !*s)
		return -EINVAL;
	if (s[0] == '-') {
		e = parse_relative(s, now_ns, &t.wall_ns);
		if (e < 0)
			return e;
		t.kind = TOOLS_REP_TIME_WALL;
	} else if (strchr(s, ':')) {
		e = parse_absolute(s, now_ns, &t.wall_ns);
		if (e < 0)
			return e;
		t.kind = TOOLS_REP_TIME_WALL;
	} else {
		char *end;

		errno = 0;
		t.log_s = strtod(s, &end);
		if (errno || *end || end == s || !isfinite(t.log_s) || t.log_s < 0 || s[0] < '0' ||
		    s[0] > '9')
			return -EINVAL;
		t.kind = TOOLS_REP_TIME_LOG;
	}
	*ret = t;
	return 0;
}

void tools_report_format_time(int64_t ns, char *buf, size_t len)
{
	/* Floor division without overflow: a hostile log may give INT64_MIN. */
	int64_t q = ns / NS_PER_S, rem = ns % NS_PER_S;
	time_t t;
	long ms;

	if (rem < 0) {
		q -= 1;
		rem += NS_PER_S;
	}
	t = (time_t)q;
	ms = (long)(rem / 1000000);
	struct tm tm;
	char b[40];

	if (!gmtime_r(&t, &tm) || !strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%S", &tm)) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, "%s.%03ldZ", b, ms);
}
