/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fake-logs.h: synthetic pmclog streams for the tests.
 *
 * PUBLIC INTERFACES
 *   fake_log_all_types()  a small, plausible log holding every record type
 *   fake_hex_load()       parse a hex dump in the layout of pmclog-format.md 12
 *   fake_file_load()      read a whole file
 *
 * IMPLEMENTATION NOTES
 *   tests/data/all-types.pmclog is exactly what fake_log_all_types() writes; a
 *   unit test checks that, and tests/mklog regenerates the file.
 */
#ifndef HWPMCD_FAKE_LOGS_H
#define HWPMCD_FAKE_LOGS_H

#include <stddef.h>
#include <stdint.h>

struct plog_writer;

/* Append the all-types log (CLOSELOG included) to @w.  Returns 0 or a negative errno. */
int fake_log_all_types(struct plog_writer *w);

/*
 * fake_hex_load: read "OFFSET: xx xx ...  comment" lines ('#' lines are comments;
 * the bytes end at the first double space).  Returns the byte count, or -errno.
 * *ret_buf is malloc'ed (the caller frees it).
 */
int fake_hex_load(const char *path, uint8_t **ret_buf);

/* fake_file_load: the whole file, malloc'ed.  Returns the size or -errno. */
int fake_file_load(const char *path, uint8_t **ret_buf);

#endif
