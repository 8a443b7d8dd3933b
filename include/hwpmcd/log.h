/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * log.h: diagnostic logging (module common).
 *
 * PUBLIC INTERFACES
 *   log_open(), log_set_level(), log_set_hook(), log_error(), log_warn(),
 *   log_notice(), log_info(), log_debug() and their _errno variants.
 *
 * IMPLEMENTATION NOTES
 *   OpenBSD-style API.  Output goes to stderr: with LOG_TARGET_JOURNAL each line
 *   starts with a "<N>" syslog priority prefix that journald understands; with
 *   LOG_TARGET_PLAIN (CLI tools, --foreground) it starts with "PROGNAME: ".  The
 *   functions preserve errno.  The _errno variants take a negative errno, append
 *   ": strerror" and return that negative errno.  The state is process-global and
 *   written by log_open()/log_set_*() only before threads start; the log functions
 *   themselves may be called from any thread (one fprintf per line).
 */
#ifndef HWPMCD_LOG_H
#define HWPMCD_LOG_H

#define LOG_PRIO_ERR 3
#define LOG_PRIO_WARNING 4
#define LOG_PRIO_NOTICE 5
#define LOG_PRIO_INFO 6
#define LOG_PRIO_DEBUG 7

enum log_target {
	LOG_TARGET_PLAIN = 0,
	LOG_TARGET_JOURNAL,
	LOG_TARGET_MAX
};

/* Called for every message at or above the level instead of printing; for tests. */
typedef void (*log_hook_fn)(int prio, const char *msg, void *userdata);

/* log_open: set the program name (borrowed, must outlive logging) and the target. */
void log_open(const char *progname, enum log_target target);

/* log_set_level: print messages of priority <= @prio (default LOG_PRIO_INFO). */
void log_set_level(int prio);

/* log_set_hook: route messages to @hook (NULL: back to stderr). */
void log_set_hook(log_hook_fn hook, void *userdata);

void log_msg(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* log_msg_errno: log "<fmt>: strerror(-err)" and return @err (a negative errno). */
int log_msg_errno(int prio, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define log_error(...) log_msg(LOG_PRIO_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_PRIO_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_PRIO_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_PRIO_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_PRIO_DEBUG, __VA_ARGS__)
#define log_error_errno(err, ...) log_msg_errno(LOG_PRIO_ERR, (err), __VA_ARGS__)
#define log_warn_errno(err, ...) log_msg_errno(LOG_PRIO_WARNING, (err), __VA_ARGS__)
#define log_notice_errno(err, ...) log_msg_errno(LOG_PRIO_NOTICE, (err), __VA_ARGS__)
#define log_info_errno(err, ...) log_msg_errno(LOG_PRIO_INFO, (err), __VA_ARGS__)
#define log_debug_errno(err, ...) log_msg_errno(LOG_PRIO_DEBUG, (err), __VA_ARGS__)

#endif /* HWPMCD_LOG_H */
