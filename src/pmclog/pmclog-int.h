/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pmclog-int.h: private to src/pmclog.
 *
 * IMPLEMENTATION NOTES
 *   Shared between the encoder and the reader so that both use one table of
 *   fixed sizes and string offsets.
 */
#ifndef HWPMCD_PMCLOG_INT_H
#define HWPMCD_PMCLOG_INT_H

#include <stdint.h>

/* Offset of the trailing path of a path-carrying type, 0 for other types. */
uint32_t plog_type_string_offset(uint32_t type);

#endif /* HWPMCD_PMCLOG_INT_H */
