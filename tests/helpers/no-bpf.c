/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * no-bpf: run a command in a world without bpf(2), as on a kernel built without
 * CONFIG_BPF_SYSCALL: a seccomp filter makes every bpf() call fail with ENOSYS
 * (or the errno named by NO_BPF_ERRNO: EPERM is what a locked-down kernel or a
 * container's seccomp profile gives).  The test of the daemon's fallback where BPF
 * is unavailable (tests/integration/test-filter.sh).  NO_BPF_NR=N refuses system
 * call N instead: 317, seccomp(2), which hwpmcd.service's SystemCallFilter= does
 * not allow (tests/integration/test-report-offline.sh: --confine under the unit).
 * usage: no-bpf CMD [ARG...]
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *en = getenv("NO_BPF_ERRNO");
	const char *nr_env = getenv("NO_BPF_NR");
	unsigned int err = en && strcmp(en, "EPERM") == 0 ? EPERM : ENOSYS;
	unsigned int nr = nr_env ? (unsigned int)strtoul(nr_env, NULL, 10) : __NR_bpf;
	struct sock_filter prog[] = {
		/* Another architecture's calls would mean other numbers: kill. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { .len = sizeof(prog) / sizeof(prog[0]), .filter = prog };

	if (argc < 2) {
		fprintf(stderr, "usage: no-bpf CMD [ARG...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp) < 0) {
		fprintf(stderr, "no-bpf: cannot install the seccomp filter: %s\n", strerror(errno));
		return 1;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "no-bpf: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
