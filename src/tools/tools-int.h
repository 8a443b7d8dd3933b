/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-int.h: private to src/tools (the hwpmc subcommands).
 *
 * IMPLEMENTATION NOTES
 *   Each subcommand is a tools_<name>_main(argc, argv) with argv[0] the command
 *   name; it returns the process exit status: 0 success, 1 failure (a malformed
 *   log, an I/O error), 2 usage error.
 */
#ifndef HWPMCD_TOOLS_INT_H
#define HWPMCD_TOOLS_INT_H

#include <stdbool.h>
#include <stdio.h>

#define TOOLS_EXIT_OK 0
#define TOOLS_EXIT_FAIL 1
#define TOOLS_EXIT_USAGE 2

/*
 * A log is read(2) 64 KiB at a time, into the reader's own buffer
 * (plog_reader__space), by `dump` and `report` alike: the kernel's copy lands in
 * cache and the records are decoded from there; with 1 MiB reads it went out to
 * memory and back (6 MB: 4.1-4.7 ms of reads to 1.4-1.6 here; dd shows the same),
 * more than the 90 system calls saved.
 */
#define TOOLS_LOG_READ_CHUNK (64u << 10)
/*
 * Beyond this share of its samples lost (pmclog-format.md 11.14), a recording and a
 * report warn, with TOOLS_LOSS_ADVICE: one rule and one advice for both.
 */
#define TOOLS_LOSS_WARN 0.01
#define TOOLS_LOSS_ADVICE                                                                  \
	"sample less (a lower -F, a profile's cpu_budget_percent), give each CPU a larger " \
	"ring (--ring-pages), or take smaller samples (--call-graph fp, or dwarf,BYTES "    \
	"with fewer than 65528 bytes)"

/* What `hwpmc record` writes and `hwpmc report` reads when given no path. */
#define TOOLS_DEFAULT_LOG "hwpmc.pmclog"

int tools_dump_main(int argc, char **argv);
void tools_dump_usage(FILE *out);
int tools_record_main(int argc, char **argv);
void tools_record_usage(FILE *out);
void tools_start_usage(FILE *out);
int tools_status_main(int argc, char **argv);
void tools_status_usage(FILE *out);
int tools_stop_main(int argc, char **argv);
void tools_stop_usage(FILE *out);
int tools_filter_main(int argc, char **argv);
void tools_filter_usage(FILE *out);
int tools_profiles_main(int argc, char **argv);
void tools_profiles_usage(FILE *out);
int tools_events_main(int argc, char **argv);
void tools_events_usage(FILE *out);

/*
 * tools_confine: keep no privilege but reading files, then allow only the system
 * calls a report makes (tools-confine.c).  @broker_fd: the socket of hwpmcd's
 * broker, from which every util_open_read() then asks its file (it calls
 * util_open_use_broker()), or -1 by hand (files opened read-only by the report
 * itself).  0 or -errno (said on stderr).
 */
int tools_confine(int broker_fd);

/*
 * tools_confine_landlock: the Landlock layer of tools_confine() alone (no new
 * privileges must be set): no file written, made or removed, no TCP, no signal
 * or abstract socket out of the sandbox, and with @no_paths no path read either.
 * 0 with *ret_abi the ABI used, or -ENOSYS / -EOPNOTSUPP (none), -EPERM (refused
 * by a sandbox), another -errno.
 */
int tools_confine_landlock(bool no_paths, int *ret_abi);

#endif /* HWPMCD_TOOLS_INT_H */
