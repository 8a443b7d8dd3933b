// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * filter.bpf.c: the in-kernel sample filter, a BPF program of type perf_event.
 *
 * PUBLIC INTERFACES
 *   hwpmcd_filter   attached to every counter of a session (PERF_EVENT_IOC_SET_BPF):
 *                   returns 0 to drop a sample before the kernel writes it (and
 *                   its stack snapshot) to the ring
 *   maps            cfg, tgids, uids, cgroups, comms, counts (filter-bpf.c fills
 *                   them; include/hwpmcd/filter.h describes the semantics)
 *
 * IMPLEMENTATION NOTES
 *   Runs in the overflow handler, in the context of the interrupted task: the
 *   bpf_get_current_*() helpers describe the sampled task.  Every key is tagged
 *   with a generation (0 or 1); cfg.gen says which one is live.  User space fills
 *   the other generation and then flips cfg.gen with one aligned 32-bit store, so a
 *   sample sees either the old filter or the new one, never a mix.  Keys present
 *   AND across kinds, OR within one kind.  A cgroup matches when it is the task's
 *   cgroup or one of its ancestors (bpf_get_current_ancestor_cgroup_id(), level 0
 *   being the root), so a unit's or a container's sub-cgroups count as inside.
 *   counts[0] counts kept samples, counts[1] dropped ones, per CPU.
 *   Licensed BSD-2-Clause OR GPL-2.0: the kernel gives GPL-only helpers only to
 *   GPL-compatible programs.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

#include "filter-bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct filt_bpf_cfg);
} cfg SEC(".maps");

/* The values of one kind, tagged with their generation: a set (the value is unused). */
#define FILT_SET(name, key_type)                                                                   \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_HASH);                                                   \
		__uint(max_entries, 2 * FILT_MAX_VALUES);                                          \
		__type(key, key_type);                                                             \
		__type(value, __u8);                                                               \
	} name SEC(".maps")

FILT_SET(tgids, struct filt_bpf_key32);
FILT_SET(uids, struct filt_bpf_key32);
FILT_SET(cgroups, struct filt_bpf_key64);
FILT_SET(comms, struct filt_bpf_keycomm);

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static __always_inline int in_cgroups(__u32 gen)
{
	for (int level = 0; level < FILT_CGROUP_LEVELS; level++) {
		struct filt_bpf_key64 k = { .gen = gen };

		k.v = bpf_get_current_ancestor_cgroup_id(level);
		if (k.v == 0)
			return 0; /* deeper than the task's own cgroup */
		if (bpf_map_lookup_elem(&cgroups, &k))
			return 1;
	}
	return 0;
}

SEC("perf_event")
int hwpmcd_filter(struct bpf_perf_event_data *ctx)
{
	struct filt_bpf_cfg *c;
	__u32 zero = 0, gen, flags, idx;
	__u64 *n;
	int keep = 1;

	(void)ctx;
	c = bpf_map_lookup_elem(&cfg, &zero);
	if (!c)
		return 1;
	gen = c->gen & 1;
	flags = gen ? c->flags[1] : c->flags[0];
	if (flags & FILT_F_TGID) {
		struct filt_bpf_key32 k = { .gen = gen, .v = bpf_get_current_pid_tgid() >> 32 };

		keep = bpf_map_lookup_elem(&tgids, &k) != 0;
	}
	if (keep && (flags & FILT_F_UID)) {
		struct filt_bpf_key32 k = { .gen = gen, .v = (__u32)bpf_get_current_uid_gid() };

		keep = bpf_map_lookup_elem(&uids, &k) != 0;
	}
	if (keep && (flags & FILT_F_COMM)) {
		struct filt_bpf_keycomm k = { .gen = gen };

		bpf_get_current_comm(k.comm, sizeof(k.comm));
		keep = bpf_map_lookup_elem(&comms, &k) != 0;
	}
	if (keep && (flags & FILT_F_CGROUP))
		keep = in_cgroups(gen);
	idx = keep ? 0 : 1;
	n = bpf_map_lookup_elem(&counts, &idx);
	if (n)
		(*n)++;
	return keep;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
