/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mklog.c: write the all-types test log to standard output.
 *
 * IMPLEMENTATION NOTES
 *   Regenerates tests/data/all-types.pmclog:
 *     build/tests/mklog > tests/data/all-types.pmclog
 *   The unit suite checks that the committed file is byte for byte what the
 *   writer produces, so the file cannot drift from the code.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fake-logs.h"
#include "hwpmcd/pmclog.h"

int main(void)
{
	struct plog_writer *w = NULL;
	int r;

	if (isatty(STDOUT_FILENO)) {
		fprintf(stderr, "mklog: refusing to write binary data to a terminal\n");
		return 2;
	}
	r = plog_writer__new(STDOUT_FILENO, 0, &w);
	if (r >= 0)
		r = fake_log_all_types(w);
	if (r >= 0)
		r = plog_writer__flush(w);
	plog_writer__free(w);
	if (r < 0) {
		fprintf(stderr, "mklog: %s\n", strerror(-r));
		return 1;
	}
	return 0;
}
