/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * filter.h: the in-kernel sample filter of a session (a BPF perf_event program).
 *
 * PUBLIC INTERFACES
 *   struct filt_spec   which samples to keep: by thread group, uid, command name,
 *                      cgroup (with its descendants), and tasks one user may ptrace
 *                      (owner_only: the basis of an unprivileged user's "all my
 *                      processes" session, which the daemon does not offer yet)
 *   struct filt        one loaded filter program and its maps (one per session)
 *   filt__new(), __free(), __set(), __prog_fd(), __stats(), filt_spec_kinds()
 *
 * IMPLEMENTATION NOTES
 *   The program (src/filter/filter.bpf.c, built with clang and turned into a libbpf
 *   skeleton by bpftool at build time) runs in the counter's overflow handler and
 *   returns 0 for a sample to drop, before the kernel copies it, or its stack
 *   snapshot, to the ring.  The caller attaches filt__prog_fd() to every counter
 *   (PERF_EVENT_IOC_SET_BPF: coll_cpu__set_bpf()).  Kinds listed AND together,
 *   values of one kind OR; an empty spec keeps everything.  filt__set() replaces the
 *   whole filter atomically while the counters run (see filter.c).  Built without
 *   BPF (no clang, bpftool or libbpf at build time) filt__new() fails with
 *   -EOPNOTSUPP and says so.
 */
#ifndef HWPMCD_FILTER_H
#define HWPMCD_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Values one kind may list. */
#define FILT_VALUES_MAX 64
/* A command name as the kernel keeps it (TASK_COMM_LEN), NUL included. */
#define FILT_COMM_BYTES 16

struct filt_spec {
	int32_t tgids[FILT_VALUES_MAX]; /* processes (thread group ids) */
	uint32_t ntgids;
	uint32_t uids[FILT_VALUES_MAX]; /* the task's real uid */
	uint32_t nuids;
	char comms[FILT_VALUES_MAX][FILT_COMM_BYTES]; /* exact, NUL-padded */
	uint32_t ncomms;
	uint64_t cgroups[FILT_VALUES_MAX]; /* cgroup v2 ids: the task's cgroup or an ancestor */
	uint32_t ncgroups;
	/*
	 * Only tasks @owner could ptrace (read mode): real, effective and saved uid
	 * all @owner, real, effective and saved gid all @owner_gid, and a dumpable mm (not a setuid program, not one that made
	 * itself non-dumpable, not a kernel thread).  Checked per sample.
	 */
	bool owner_only;
	uint32_t owner;
	uint32_t owner_gid;
};

struct filt_stats {
	uint64_t kept, dropped; /* samples the program let through or dropped, all CPUs */
};

struct filt;

/*
 * filt__new: load a filter program that keeps every sample.  Returns 0 with
 * *ret_f, -EOPNOTSUPP (built without BPF, or a system without bpf(2)), or the
 * kernel's refusal (-EPERM without CAP_BPF/CAP_PERFMON or under a policy that
 * forbids bpf(2), -EINVAL ...) with a sentence in @err.
 */
int filt__new(struct filt **ret_f, char *err, size_t errlen);

/* filt__free: unload (the counters it is attached to keep it until they close). */
void filt__free(struct filt *f);

/* filt__prog_fd: the program's fd, for PERF_EVENT_IOC_SET_BPF. */
int filt__prog_fd(const struct filt *f);

/*
 * filt__set: make @s the filter, atomically for every sample the counters take
 * (each sees the old filter or the new one).  Returns 0 or -errno (-EINVAL: a kind
 * with more than FILT_VALUES_MAX values); on error the old filter stays.
 */
int filt__set(struct filt *f, const struct filt_spec *s);

/* filt__stats: samples kept and dropped since filt__new(), summed over CPUs. */
int filt__stats(const struct filt *f, struct filt_stats *ret);

/* filt_spec_kinds: how many kinds @s lists (0: it keeps everything). */
unsigned int filt_spec_kinds(const struct filt_spec *s);

#endif /* HWPMCD_FILTER_H */
