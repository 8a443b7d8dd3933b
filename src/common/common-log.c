/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common-log.c: diagnostic logging.
 *
 * PUBLIC INTERFACES
 *   see include/hwpmcd/log.h
 *
 * IMPLEMENTATION NOTES
 *   A message is formatted into a stack buffer and written with one fputs so that
 *   lines from several threads do not interleave.  errno is saved on entry and
 *   restored on exit, so a caller may log between a failure and its use of errno
 *   (STYLE.md still asks to save it first).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hwpmcd/log.h"

static const char *log_progname = "hwpmcd";
static enum log_target log_target = LOG_TARGET_PLAIN;
static int log_level = LOG_PRIO_INFO;
static log_hook_fn log_hook;
static void *log_hook_userdata;

void log_open(const char *progname, enum log_target target)
{
	if (progname)
		log_progname = progname;
	log_target = target;
}

void log_set_level(int prio)
{
	log_level = prio;
}

void log_set_hook(log_hook_fn hook, void *userdata)
{
	log_hook = hook;
	log_hook_userdata = userdata;
}

static void log_emit(int prio, const char *msg)
{
	char line[1200];
	const char *tag = "";

	if (log_hook) {
		log_hook(prio, msg, log_hook_userdata);
		return;
	}
	if (log_target == LOG_TARGET_JOURNAL) {
		snprintf(line, sizeof(line), "<%d>%s\n", prio, msg);
	} else {
		/* Errors read "prog: what" (as err(3)); warnings are marked. */
		if (prio == LOG_PRIO_WARNING)
			tag = "warning: ";
		snprintf(line, sizeof(line), "%s: %s%s\n", log_progname, tag, msg);
	}
	fputs(line, stderr);
}

static void log_vmsg(int prio, const char *suffix, const char *fmt, va_list ap)
{
	char msg[1024];
	int n;

	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n >= 0 && suffix && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s", suffix);
	log_emit(prio, msg);
}

void log_msg(int prio, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (prio <= log_level) {
		va_start(ap, fmt);
		log_vmsg(prio, NULL, fmt, ap);
		va_end(ap);
	}
	errno = saved;
}

int log_msg_errno(int prio, int err, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (prio <= log_level) {
		va_start(ap, fmt);
		log_vmsg(prio, strerror(err < 0 ? -err : err), fmt, ap);
		va_end(ap);
	}
	errno = saved;
	return err;
}
