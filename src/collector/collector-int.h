/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * collector-int.h: private to src/collector and its tests.
 *
 * IMPLEMENTATION NOTES
 *   coll_cpu__from_buffer() wraps a ring that the caller built in memory (a
 *   metadata page followed by a power-of-two data area, as the kernel lays it
 *   out), so the decoder can be tested with wrapped, truncated and hostile
 *   records without perf_event_open.  Such a coll_cpu owns nothing but its
 *   scratch buffer: __free neither closes fds nor unmaps the buffer.
 */
#ifndef HWPMCD_COLLECTOR_INT_H
#define HWPMCD_COLLECTOR_INT_H

#include <stddef.h>
#include <stdint.h>

#include "hwpmcd/collector.h"

/* The sample_type and user register mask the collector asks the kernel for. */
uint64_t coll_sample_type(enum coll_callgraph cg);
uint64_t coll_regs_user_mask(void);

int coll_cpu__from_buffer(void *base, size_t map_len, size_t page_size, uint64_t sample_type,
			  const uint64_t *ids, size_t nids, struct coll_cpu **ret_cpu);

#endif /* HWPMCD_COLLECTOR_INT_H */
