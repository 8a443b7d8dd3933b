/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fake-logs.c: synthetic pmclog streams for the tests.
 *
 * PUBLIC INTERFACES
 *   see fake-logs.h
 *
 * IMPLEMENTATION NOTES
 *   The all-types log tells a small story a reader can check by eye: a process
 *   "demo" (pid 4242) is sampled in user and kernel mode, forks pid 4243, which
 *   execs /usr/bin/true and exits.  It uses every one of the 19 current record
 *   types once or more, with the 12.2 CALLCHAIN example among them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake-logs.h"
#include "hwpmcd/common.h"
#include "hwpmcd/pmclog.h"

#define TRY(x)                         \
	do {                           \
		int r_ = (x);          \
		if (r_ < 0)            \
			return r_;     \
	} while (0)

int fake_log_all_types(struct plog_writer *w)
{
	const uint32_t clk = PLOG_PMCID_SOFT_ANYCPU(0), tsc = PLOG_PMCID_SOFT_ANYCPU(1);
	static const uint64_t user_pcs[] = { 0x555555555149, 0x7ffff7da9d90, 0x555555555075 };
	static const uint64_t merged_pcs[] = { 0xffffffff81a0c2d1, 0xffffffff81002b3c,
					       0x7ffff7e8a1b2, 0x555555555075 };

	TRY(plog_writer__append_initialize(w, 1000, PLOG_CPU_GENERIC, 1000000000, 1700000000,
					   123456789, "GenuineIntel-6-55-4"));
	TRY(plog_writer__append_pmcallocatedyn(w, 1001, clk, 0,
					       PLOG_F_CALLCHAIN | PLOG_F_USERCALLCHAIN |
						       PLOG_F_NEEDS_LOGFILE,
					       "cpu-clock"));
	/* The TSC: a code every FreeBSD libpmc names (its reader fails on others). */
	TRY(plog_writer__append_pmcallocate(w, 1001, tsc, PLOG_EV_TSC_TSC, 0, 0));
	TRY(plog_writer__append_proc_create(w, 1002, 2, PLOG_P_KPROC, "kthreadd"));
	TRY(plog_writer__append_thr_create(w, 1002, 2, 2, PLOG_P_KPROC, "kthreadd"));
	TRY(plog_writer__append_proc_create(w, 1002, 4242, 0, "demo"));
	TRY(plog_writer__append_thr_create(w, 1002, 100123, 4242, 0, "demo"));
	TRY(plog_writer__append_map_in(w, 1004, PLOG_PID_KERNEL, 0, "vmlinux"));
	TRY(plog_writer__append_map_in(w, 1004, PLOG_PID_KERNEL, 0xffffffffc0a00000, "ext4.ko"));
	TRY(plog_writer__append_map_in(w, 1005, 4242, 0x555555554000, "/usr/bin/demo"));
	TRY(plog_writer__append_map_in(w, 1005, 4242, 0x7ffff7d80000,
				       "/usr/lib/x86_64-linux-gnu/libc.so.6"));
	TRY(plog_writer__append_pmcattach(w, 1006, clk, 4242, "/usr/bin/demo"));
	TRY(plog_writer__append_callchain(w, 1007, 4242, 100123, clk,
					  PLOG_CC_CPUFLAGS(3, PLOG_CC_F_USERSPACE), user_pcs, 3));
	TRY(plog_writer__append_callchain(w, 1008, 4242, 100123, clk, PLOG_CC_CPUFLAGS(1, 0),
					  merged_pcs, 4));
	TRY(plog_writer__append_proccsw(w, 1009, tsc, 4242, 100123, 12345));
	TRY(plog_writer__append_procfork(w, 1010, 4242, 4243));
	TRY(plog_writer__append_proc_create(w, 1010, 4243, 0, "demo"));
	TRY(plog_writer__append_thr_create(w, 1010, 4243, 4243, 0, "demo"));
	TRY(plog_writer__append_procexec(w, 1011, 4243, PLOG_PMCID_INVALID, 0x7ffff7fc3000,
					 0x555555554000, "/usr/bin/true"));
	TRY(plog_writer__append_map_out(w, 1011, 4243, 0, UINT64_MAX));
	TRY(plog_writer__append_userdata(w, 1012, 0xdeadbeef));
	TRY(plog_writer__append_dropnotify(w, 1013));
	TRY(plog_writer__append_procexit(w, 1014, tsc, 4243, 99));
	TRY(plog_writer__append_thr_exit(w, 1014, 4243));
	TRY(plog_writer__append_sysexit(w, 1014, 4243));
	TRY(plog_writer__append_pmcdetach(w, 1015, clk, 4242));
	TRY(plog_writer__append_closelog(w, 1016));
	return 0;
}

int fake_hex_load(const char *path, uint8_t **ret_buf)
{
	FILE *f = fopen(path, "re");
	char line[512];
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':');

		if (line[0] == '#' || !p)
			continue;
		p++;
		/* Bytes are " xx" groups; the comment starts after two spaces. */
		while (p[0] == ' ' && p[1] != ' ' && util_hex_digit(p[1]) >= 0 && util_hex_digit(p[2]) >= 0 &&
		       (p[3] == ' ' || p[3] == '\n' || p[3] == '\0')) {
			if (n == cap) {
				uint8_t *nb = realloc(buf, cap ? 2 * cap : 256);

				if (!nb) {
					free(buf);
					fclose(f);
					return -ENOMEM;
				}
				buf = nb;
				cap = cap ? 2 * cap : 256;
			}
			buf[n++] = (uint8_t)(util_hex_digit(p[1]) << 4 | util_hex_digit(p[2]));
			p += 3;
		}
	}
	fclose(f);
	*ret_buf = buf;
	return (int)n;
}

int fake_file_load(const char *path, uint8_t **ret_buf)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t k;

		if (cap - n < 4096) {
			uint8_t *nb = realloc(buf, cap + 65536);

			if (!nb) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = nb;
			cap += 65536;
		}
		k = read(fd, buf + n, cap - n);
		if (k < 0) {
			int err = -errno;

			free(buf);
			close(fd);
			return err;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	*ret_buf = buf;
	return (int)n;
}
