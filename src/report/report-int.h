/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * report-int.h: what the files of module report share (private), and its unit test.
 * PUBLIC INTERFACES (module-internal)
 *   report_file_crc32()
 */
#ifndef HWPMCD_REPORT_INT_H
#define HWPMCD_REPORT_INT_H

#include <stdint.h>

/*
 * report_file_crc32 (report-sym.c): the .gnu_debuglink CRC-32 of the whole file
 * open on @fd (zlib's crc32(), read with pread(2) from offset 0 to the end).  A file
 * longer than @max bytes is -EFBIG, read no further than that.  The bytes read are
 * added to *@nread whatever the result.  Returns 0 with *ret_crc, -EFBIG, a
 * pread(2) error or -ENOMEM.  Any thread.
 */
int report_file_crc32(int fd, uint64_t max, uint32_t *ret_crc, uint64_t *nread);

#endif /* HWPMCD_REPORT_INT_H */
