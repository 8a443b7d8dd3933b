/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * filter-bpf.h: the layout the BPF filter program (filter.bpf.c) and its loader
 * (filter.c) share: map keys and the configuration word.
 *
 * PUBLIC INTERFACES
 *   struct filt_bpf_cfg, struct filt_bpf_key32, struct filt_bpf_key64,
 *   struct filt_bpf_keycomm, FILT_F_*, FILT_MAX_VALUES, FILT_CGROUP_LEVELS
 *
 * IMPLEMENTATION NOTES
 *   Compiled by both the BPF target and the host compiler: only fixed-width
 *   kernel types (linux/types.h), no padding in keys (hash keys compare bytes).
 */
#ifndef HWPMCD_FILTER_BPF_H
#define HWPMCD_FILTER_BPF_H

#include <linux/types.h>

/* Values one key kind may list (and so the live plus the next generation: twice). */
#define FILT_MAX_VALUES 64
/* Cgroup levels looked at, the root being level 0 (systemd nests units 3 to 5 deep). */
#define FILT_CGROUP_LEVELS 32

#define FILT_F_TGID   0x1u
#define FILT_F_UID    0x2u
#define FILT_F_COMM   0x4u
#define FILT_F_CGROUP 0x8u
#define FILT_F_OWNER  0x10u /* real/effective/saved uid owner[gen], gids owner_gid[gen], dumpable */

struct filt_bpf_cfg {
	__u32 gen;	/* the live generation: 0 or 1 */
	__u32 flags[2]; /* FILT_F_* of each generation: which kinds are listed */
	__u32 owner[2]; /* FILT_F_OWNER: the uid of each generation */
	__u32 owner_gid[2]; /* and its gid */
};

struct filt_bpf_key32 {
	__u32 gen;
	__u32 v; /* a tgid or a uid */
};

struct filt_bpf_key64 {
	__u32 gen;
	__u32 pad; /* 0 */
	__u64 v;   /* a cgroup id */
};

struct filt_bpf_keycomm {
	__u32 gen;
	char comm[16]; /* TASK_COMM_LEN, NUL-padded */
};

#endif /* HWPMCD_FILTER_BPF_H */
